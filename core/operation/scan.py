"""FileStoreScan: a snapshot to its live data files, index files and changelog files.

A snapshot's data files are its base manifest list plus its delta manifest list, read in
order and merged by file identifier: an ADD registers a file, a later DELETE of the same
identifier removes it (level upgrades and index rewrites are DELETE then ADD of the same
name). What remains as ADD is live.

Live is not visible: a postpone-bucket table (``bucket = -2``) first writes into the
postpone bucket (``bucket-postpone/``), and Java's batch scan of such a table reads only
real buckets (``onlyReadRealBuckets``) until compaction moves those rows into one. Reads,
row counts and the file-level system tables go through :meth:`FileStoreScan.batch_plan`;
maintenance (expire, orphans, rollback, tags, commit conflicts, partition drops) uses
:meth:`FileStoreScan.plan`, since snapshots reference the postponed files all the same.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..io import paths
from ..manifest.columnar import (
    ENTRY_SCHEMA,
    IDENTIFIER,
    entries_from_table,
    iter_manifest_tables,
    merge_live,
)
from ..manifest.expire_file_entry import merge_entries
from ..manifest.index_manifest import IndexManifestEntry, IndexManifestFile
from ..manifest.manifest import ManifestEntry, ManifestFile, ManifestFileMeta, ManifestList
from ..refs.snapshot import Snapshot
from ..schema.table_schema import TableSchema
from ..table.file_store_table import FileStoreTable, TimeTravel

if TYPE_CHECKING:
    import pyarrow as pa



@dataclass(frozen=True)
class ScanFilter:
    """Optional restrictions on what a scan returns."""

    partition: Callable[[bytes], bool] | None = None
    bucket: int | None = None
    level: int | None = None


class FileStoreScan:
    """Reads manifests of one table (shared files resolve against the table root)."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.file_io = table.file_io
        self.manifest_dir = paths.manifest_dir(table.path)

    # -- manifest lists -----------------------------------------------------------------

    def _manifest_list(self) -> ManifestList:
        return ManifestList(self.file_io, self.manifest_dir)

    def _manifest_file(self) -> ManifestFile:
        return ManifestFile(self.file_io, self.manifest_dir, self.table.schema.logical_partition_type)

    def data_manifests(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        """Base then delta manifests of a snapshot (the order matters for merging)."""
        ml = self._manifest_list()
        return list(ml.read(snapshot.base_manifest_list)) + list(ml.read(snapshot.delta_manifest_list))

    def delta_manifests(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        return list(self._manifest_list().read(snapshot.delta_manifest_list))

    def changelog_manifests(self, snapshot: Snapshot) -> list[ManifestFileMeta]:
        if not snapshot.changelog_manifest_list:
            return []
        return list(self._manifest_list().read(snapshot.changelog_manifest_list))

    def read_entries(self, manifests: list[ManifestFileMeta]) -> list[ManifestEntry]:
        """All entries of the manifests, in manifest order (fetched ahead on object stores)."""
        tables = iter_manifest_tables(self.file_io, self.manifest_dir, manifests)
        return [e for t in tables for e in entries_from_table(t)]

    # -- plans --------------------------------------------------------------------------

    def entry_tables(self, snapshot: Snapshot, scan_filter: ScanFilter | None = None,
                     columns: list[str] | None = None) -> Iterator[pa.Table]:
        """The snapshot's data manifests as tables, in order, filtered, unmerged (``merge_live``
        of them is :meth:`plan_table`).

        Bucket, level and partition are part of the identifier ADDs and DELETEs cancel on, so
        an entry filtered out never cancels one kept; manifests whose bucket/level range
        misses the filter are not read at all.
        """
        metas = [m for m in self.data_manifests(snapshot) if _may_match(m, scan_filter)]
        for t in iter_manifest_tables(self.file_io, self.manifest_dir, metas, columns):
            yield _filter_table(t, scan_filter)

    def plan_table(self, snapshot: Snapshot | None, scan_filter: ScanFilter | None = None,
                   columns: Sequence[str] | None = None) -> pa.Table:
        """Live data files of the snapshot as an Arrow table (``columnar.ENTRY_SCHEMA`` rows,
        ``columns`` only if given), in ``plan``'s order, merged vectorised."""
        wanted = list(ENTRY_SCHEMA.names if columns is None else columns)
        if snapshot is None:
            return ENTRY_SCHEMA.empty_table().select(wanted)
        read = None if columns is None else list(dict.fromkeys([*wanted, "_KIND", *IDENTIFIER]))
        return merge_live(self.entry_tables(snapshot, scan_filter, read)).select(wanted)

    def plan(self, snapshot: Snapshot | None, scan_filter: ScanFilter | None = None) -> list[ManifestEntry]:
        """Live data files of the snapshot (empty for an empty table).

        Objects are built manifest by manifest and merged as they come: holding the whole
        table and the objects at once would cost ~40 % more memory at a million files.
        """
        if snapshot is None:
            return []
        return merge_entries(e for t in self.entry_tables(snapshot, scan_filter) for e in entries_from_table(t))

    def batch_plan(self, snapshot: Snapshot | None) -> list[ManifestEntry]:
        """The live files a batch read sees (the postponed files of a postpone table left out)."""
        return split_postponed(self.table.schema, self.plan(snapshot))[0]

    def batch_plan_at(self, at: TimeTravel | None) -> tuple[Snapshot | None, list[ManifestEntry]]:
        """The snapshot of ``at`` (latest by default) and the live files a batch read of it sees."""
        snapshot = self.table.resolve_snapshot(at)
        return snapshot, self.batch_plan(snapshot)

    def delta(self, snapshot: Snapshot) -> list[ManifestEntry]:
        """The entries one snapshot committed (ADD and DELETE, unmerged)."""
        return self.read_entries(self.delta_manifests(snapshot))

    def changelog(self, snapshot: Snapshot) -> list[ManifestEntry]:
        return self.read_entries(self.changelog_manifests(snapshot))

    def index_entries(self, snapshot: Snapshot | None) -> list[IndexManifestEntry]:
        """Live index files (the index manifest is a full listing, not a delta)."""
        if snapshot is None:
            return []
        return IndexManifestFile(self.file_io, self.manifest_dir).live_entries(snapshot.index_manifest)


def is_postpone_table(schema: TableSchema) -> bool:
    """``bucket = -2``: Java's POSTPONE_MODE (its batch scans skip the postpone bucket)."""
    return schema.bucket == paths.POSTPONE_BUCKET


def split_postponed(
    schema: TableSchema, entries: list[ManifestEntry]
) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
    """(real-bucket entries, postpone-bucket entries) of a postpone table; all real otherwise.

    Java's ``BucketFilter`` drops every bucket < 0 once the table is in postpone mode; works
    on merged and raw (ADD/DELETE) entries alike.
    """
    if not is_postpone_table(schema):
        return entries, []
    real: list[ManifestEntry] = []
    postponed: list[ManifestEntry] = []
    for e in entries:
        (postponed if e.bucket < 0 else real).append(e)
    return real, postponed


def _may_match(m: ManifestFileMeta, f: ScanFilter | None) -> bool:
    """False when the manifest list's bucket/level range proves no entry passes ``f``."""
    if f is None:
        return True
    for value, lo, hi in ((f.bucket, m.min_bucket, m.max_bucket), (f.level, m.min_level, m.max_level)):
        if value is not None and lo is not None and hi is not None and not lo <= value <= hi:
            return False
    return True


def _filter_table(table: pa.Table, f: ScanFilter | None) -> pa.Table:
    """The rows passing ``f``; the partition predicate runs once per distinct partition."""
    if f is None or (f.bucket is None and f.level is None and f.partition is None) or table.num_rows == 0:
        return table
    import pyarrow as pa
    import pyarrow.compute as pc

    masks = []
    if f.bucket is not None:
        masks.append(pc.equal(table.column("_BUCKET"), f.bucket))
    if f.level is not None:
        masks.append(pc.equal(table.column("_LEVEL"), f.level))
    if f.partition is not None:
        pred, parts = f.partition, table.column("_PARTITION")
        accepted = [p for p in pc.unique(parts).to_pylist() if pred(p)]
        masks.append(pc.is_in(parts, value_set=pa.array(accepted, parts.type)))
    mask = masks[0]
    for m in masks[1:]:
        mask = pc.and_(mask, m)
    return table.filter(mask)
