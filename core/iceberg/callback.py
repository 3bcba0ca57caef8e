"""The Iceberg side of commits, expiration, rollback and tags (Java ``IcebergCommitCallback``).

After snapshot ``N`` is published, ``vN.metadata.json`` is written:

* **with a base** (``v(N-1)`` describes snapshot ``N-1``): the commit's delta is applied to the
  base's manifests. Files a commit adds go into new manifests; a manifest holding a file the
  commit deletes is rewritten with that entry DELETED and the others EXISTING; the rest are
  reused. Small manifests are compacted (``metadata.iceberg.compaction.*``), Iceberg snapshots
  past Paimon's retention (``snapshot.num-retained.*``, ``snapshot.time-retained``) expire with
  their manifest lists, and old metadata versions go (``metadata.iceberg.delete-after-commit.enabled``,
  ``metadata.iceberg.previous-versions-max``).
* **without a base** (first commit, a gap, a base from another timeline): the metadata is built
  afresh from the snapshot's live files and every older version is removed.

Only files Iceberg readers can read as they are go in (:mod:`.data_files` says which); the
versions, the hint and new file names are :mod:`.metadata_files`'. Deletion vectors are not
published (Java does only for Iceberg format version 3, which the feature gate refuses).

Where we go beyond Java 2.0, Java's later fixes lead: the summary names the Paimon snapshot
(``paimon-commit-identity``) so metadata a rollback abandoned is recognised and rebuilt instead
of trusted; only the head commit moves ``version-hint.text``; a rollback, a fast-forward and an
expiration bring the metadata onto the remaining snapshots at once instead of at the next commit;
a base in Paimon 0.9's layout (``["null", record]`` manifests Iceberg readers reject) is rebuilt.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from ..data import binary_row
from ..errors import CorruptMetadata, MissingMetadata, PaimonError
from ..io import paths
from ..io.fileio import join
from ..manifest.manifest import DataFileMeta, FileKind, ManifestEntry
from ..refs.snapshot import Snapshot
from ..schema.iceberg_options import iceberg_options
from ..schema.table_schema import TableSchema
from .data_files import add_to_iceberg, file_format, live_entries, raw_convertible
from .manifest import (
    ADDED,
    CONTENT_DATA,
    DELETED,
    EXISTING,
    IcebergDataFile,
    IcebergManifestEntry,
    IcebergManifestFileMeta,
    may_contain,
)
from .metadata import COMMIT_IDENTITY, FORMAT_VERSION, IcebergMetadata, IcebergSnapshot
from .metadata_files import IcebergMetadataFiles
from .types import (
    NAME_MAPPING,
    NESTED,
    canonical,
    has_bounds,
    highest_field_id,
    iceberg_schema,
    last_partition_id,
    name_mapping,
    partition_spec,
    to_bound,
)

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexManifestEntry
    from ..table.file_store_table import FileStoreTable

APPEND, OVERWRITE, REPLACE = "append", "overwrite", "replace"


def commit_identity(s: Snapshot) -> str:
    """What tells one Paimon snapshot from another with the same id (Java 2.1+'s rule)."""
    if s.uuid:
        return s.uuid
    user = "null" if s.commit_user is None else s.commit_user
    return f"{user}:{s.commit_identifier}:{s.time_millis}"


@dataclass
class _Metrics:
    added_files: int = 0
    added_records: int = 0
    added_size: int = 0
    deleted_files: int = 0
    deleted_records: int = 0
    deleted_size: int = 0
    changed_partitions: int = 0
    total_files: int = 0
    total_records: int = 0
    total_size: int = 0
    total_delete_files: int = 0
    total_position_deletes: int = 0

    def summary(self, operation: str, snapshot: Snapshot) -> dict[str, str]:
        s: dict[str, int] = {
            "added-data-files": self.added_files, "added-records": self.added_records,
            "added-files-size": self.added_size, "deleted-data-files": self.deleted_files,
            "deleted-records": self.deleted_records, "removed-files-size": self.deleted_size,
            "changed-partition-count": self.changed_partitions, "total-records": self.total_records,
            "total-data-files": self.total_files, "total-files-size": self.total_size,
            "total-delete-files": self.total_delete_files, "total-position-deletes": self.total_position_deletes,
            "total-equality-deletes": 0,
        }
        out = {"operation": operation, **{k: str(max(0, v)) for k, v in s.items()}}
        for k, v in (snapshot.properties or {}).items():
            if v is not None:
                out[k] = v
        out[COMMIT_IDENTITY] = commit_identity(snapshot)
        return out


@dataclass
class _Change:
    partition: bytes
    file: DataFileMeta
    bucket: int



class IcebergCommitCallback:
    """Writes the Iceberg metadata of each snapshot a commit publishes (one table, main branch)."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.opts = iceberg_options(table.schema.options)
        self.files = IcebergMetadataFiles(table, self.opts)
        self.schema = table.schema
        self.options = table.options
        self.partition_types = list(table.schema.logical_partition_type.fields)
        self.target_size = self.options.manifest_target_file_size
        self._schemas: dict[int, TableSchema] = {}
        self._iceberg_schemas: dict[int, dict[str, Any]] = {}

    # -- the callback ----------------------------------------------------------------------

    def call(self, snapshot: Snapshot, delta: Sequence[ManifestEntry],
             index: Sequence[IndexManifestEntry] = ()) -> None:
        """After ``snapshot`` was published with ``delta`` (its data-file entries)."""
        del index  # deletion vectors are published only for Iceberg format version 3 (refused by the gate)
        sm = self.table.snapshot_manager
        current = sm.try_snapshot(snapshot.id)
        if current is None or commit_identity(current) != commit_identity(snapshot):
            return  # rolled back (or replaced) meanwhile: nothing of ours to describe
        sid = snapshot.id
        files = self.files
        if sid == 1:
            # a table dropped and created again starts over (its old metadata may be elsewhere)
            for name in self.file_io.list_names(files.dir):
                files.delete(join(files.dir, name))
        abandoned: IcebergMetadata | None = None
        existing_ok = True
        try:
            existing = files.read(sid)
        except (CorruptMetadata, PaimonError):
            existing, existing_ok = None, False
        if existing is not None and self._describes(existing, snapshot, strict=True):
            if sm.latest_snapshot_id() == sid and files.hint() != sid:
                files.write_hint(sid)
            return
        if existing is not None or not existing_ok:
            if sm.latest_snapshot_id() != sid:
                return  # another timeline's leftover: only the head commit replaces it
            abandoned = existing
        base = self._base(sid)
        if base is not None:
            self._with_base(snapshot, delta, base)
        else:
            inherit = abandoned or self._base_identity(sid)
            self._without_base(snapshot, inherit)

    @property
    def file_io(self) -> Any:
        return self.table.file_io

    # -- bases ---------------------------------------------------------------------------

    @staticmethod
    def _describes(metadata: IcebergMetadata, snapshot: Snapshot, strict: bool = False) -> bool:
        """Whether a metadata version was built from this very Paimon snapshot. A version
        without an identity (Java before 2.1) is trusted as Java trusts it, except right after
        we published the snapshot (``strict``): no one else can have described it yet, so such
        a version is a leftover of a timeline a rollback abandoned."""
        cur = metadata.current_snapshot
        if cur is None or cur.snapshot_id != snapshot.id:
            return False
        identity = cur.summary.get(COMMIT_IDENTITY)
        return identity == commit_identity(snapshot) if identity is not None or strict else True

    def _base(self, sid: int) -> IcebergMetadata | None:
        """``v(sid-1)`` when it can be extended: readable, describing the live snapshot ``sid-1``,
        of our format version, and not in Paimon 0.9's layout."""
        if sid <= 1:
            return None
        base = self.files.try_read(sid - 1)
        if base is None or base.format_version != FORMAT_VERSION or base.current_snapshot is None:
            return None
        prev = self.table.snapshot_manager.try_snapshot(sid - 1)
        if prev is not None and not self._describes(base, prev):
            return None
        try:
            if self.files.manifests.legacy_list(base.current_snapshot.manifest_list):
                return None
        except (CorruptMetadata, MissingMetadata):
            return None  # a base whose list is unreadable or gone is rebuilt, never extended
        return base

    def _base_identity(self, sid: int) -> IcebergMetadata | None:
        return self.files.try_read(sid - 1) if sid > 1 else None

    # -- schemas ---------------------------------------------------------------------------

    def _table_schema(self, schema_id: int) -> TableSchema:
        s = self._schemas.get(schema_id)
        if s is None:
            s = self.schema if schema_id == self.schema.id else self.table.schema_manager.schema(schema_id)
            self._schemas[schema_id] = s
        return s

    def _iceberg_schema(self, schema_id: int) -> dict[str, Any]:
        s = self._iceberg_schemas.get(schema_id)
        if s is None:
            s = self._iceberg_schemas[schema_id] = iceberg_schema(self._table_schema(schema_id))
        return s

    def _properties(self, base: dict[str, str], schema_id: int) -> dict[str, str]:
        mapping = name_mapping([self._table_schema(i) for i in range(schema_id + 1)])
        return {**base, NAME_MAPPING: json.dumps(mapping, separators=(",", ":"), ensure_ascii=False)}

    def _latest_schema_id(self) -> int:
        latest = self.table.schema_manager.latest()
        return self.schema.id if latest is None else latest.id

    # -- data files ------------------------------------------------------------------------

    def _path(self, partition: bytes, bucket: int, f: DataFileMeta) -> str:
        part_dir = paths.partition_dir_of(self.schema, partition)
        return self.file_io.absolute(paths.data_file_path(self.table.data_root, part_dir, bucket, f.file_name,
                                                          f.external_path))

    def _partition(self, partition: bytes) -> tuple[Any, ...]:
        if not self.partition_types:
            return ()
        values = binary_row.deserialize(partition, [f.type for f in self.partition_types])
        return tuple(canonical(f.type, v) for f, v in zip(self.partition_types, values, strict=True))

    def _data_file(self, partition: bytes, bucket: int, f: DataFileMeta, path: str | None = None) -> IcebergDataFile:
        """Java ``IcebergDataFileMeta.create``: bounds and null counts from the file's own value
        stats, keyed by field id (nested columns have none; an unknown null count is omitted)."""
        schema = self._table_schema(f.schema_id)
        fields = list(schema.fields)
        if f.value_stats_cols is None:
            index = {fl.name: i for i, fl in enumerate(fields)}
            stats_fields = fields
        else:
            index = {name: i for i, name in enumerate(f.value_stats_cols)}
            by_name = {fl.name: fl for fl in fields}
            stats_fields = [by_name[n] for n in f.value_stats_cols if n in by_name]
        nulls: dict[int, int] = {}
        lower: dict[int, bytes] = {}
        upper: dict[int, bytes] = {}
        vs = f.value_stats
        mins: list[Any] = []
        maxs: list[Any] = []
        if len(stats_fields) == len(index) and index:
            types = [fl.type.copy(nullable=True) for fl in stats_fields]
            try:
                mins = binary_row.deserialize(vs.min_values, types)
                maxs = binary_row.deserialize(vs.max_values, types)
            except PaimonError:
                mins = maxs = []
        counts = list(vs.null_counts or [])
        for fl in fields:
            i = index.get(fl.name)
            if i is None:
                continue
            count = counts[i] if i < len(counts) else None
            if count is not None:
                nulls[fl.id] = int(count)
            if isinstance(fl.type, NESTED) or not has_bounds(fl.type) or i >= len(mins):
                continue
            lo, hi = mins[i], maxs[i]
            if lo is not None and hi is not None:
                lower[fl.id] = to_bound(fl.type, canonical(fl.type, lo))
                upper[fl.id] = to_bound(fl.type, canonical(fl.type, hi))
        return IcebergDataFile(
            file_path=path or self._path(partition, bucket, f), file_format=file_format(f.file_name),
            partition=self._partition(partition), record_count=f.row_count, file_size_in_bytes=f.file_size,
            null_value_counts=nulls, lower_bounds=lower, upper_bounds=upper,
        )


    # -- a fresh build -----------------------------------------------------------------------

    def _without_base(self, snapshot: Snapshot, inherit: IcebergMetadata | None) -> None:
        sid = snapshot.id
        selected = raw_convertible(self.schema, self.options, live_entries(self.table, snapshot))
        entries = [IcebergManifestEntry(ADDED, sid, sid, sid, self._data_file(e.partition, e.bucket, e.file))
                   for e in selected]
        m = _Metrics()
        m.added_files = len(entries)
        m.added_records = sum(e.file.record_count for e in entries)
        m.added_size = sum(e.file.file_size_in_bytes for e in entries)
        m.changed_partitions = len({e.partition for e in selected})
        m.total_files, m.total_records, m.total_size = m.added_files, m.added_records, m.added_size
        written: list[str] = []
        try:
            metas = self.files.manifests.write_manifests(entries, sid, CONTENT_DATA, self.files.new_manifest_path,
                                                         self.target_size, written)
            list_path = self.files.new_list_path()
            self.files.manifests.write_list(list_path, metas)
            written.append(list_path)
            schema_id = self._latest_schema_id()
            schemas = [self._iceberg_schema(i) for i in range(schema_id + 1)]
            spec = partition_spec(self._table_schema(schema_id))
            last_column = max(highest_field_id(s) for s in schemas)
            if inherit is not None:
                last_column = max(last_column, inherit.last_column_id)
            snap = IcebergSnapshot(sid, sid, None if sid == 1 else sid - 1, snapshot.time_millis,
                                   m.summary(APPEND, snapshot), list_path, snapshot.schema_id)
            metadata = IcebergMetadata(
                format_version=FORMAT_VERSION,
                table_uuid=inherit.table_uuid if inherit is not None else str(uuid.uuid4()),
                location=self.files.location, last_sequence_number=sid, last_updated_ms=_now(),
                last_column_id=last_column, schemas=schemas, current_schema_id=schema_id, partition_specs=[spec],
                default_spec_id=0, last_partition_id=last_partition_id(spec), snapshots=[snap],
                current_snapshot_id=sid, properties=self._properties({}, schema_id), refs=self._refs({sid}),
            )
            versions = self._publish(metadata, sid, written)
        except BaseException:
            for p in written:
                self.files.delete(p)
            raise
        if self.table.snapshot_manager.latest_snapshot_id() == sid:
            self._expire_all_before(sid, versions)

    # -- an incremental commit ---------------------------------------------------------------

    def _collect(self, delta: Sequence[ManifestEntry]) -> tuple[dict[str, _Change], dict[str, _Change], bool]:
        """Java ``collectFileChanges``: (removed, added, add-only) by file path; a file deleted and
        added again (a level upgrade) counts as added when Iceberg takes it."""
        removed: dict[str, _Change] = {}
        added: dict[str, _Change] = {}
        add_only = True
        for e in delta:
            path = self._path(e.partition, e.bucket, e.file)
            if e.kind == FileKind.ADD:
                if add_to_iceberg(self.schema, self.options, e.file):
                    removed.pop(path, None)
                    added[path] = _Change(e.partition, e.file, e.bucket)
            else:
                add_only = False
                added.pop(path, None)
                removed[path] = _Change(e.partition, e.file, e.bucket)
        return removed, added, add_only

    def _new_manifests(self, added: dict[str, _Change], sid: int, written: list[str]) -> list[IcebergManifestFileMeta]:
        entries = [IcebergManifestEntry(ADDED, sid, sid, sid, self._data_file(c.partition, c.bucket, c.file, path))
                   for path, c in added.items()]
        return self.files.manifests.write_manifests(entries, sid, CONTENT_DATA, self.files.new_manifest_path,
                                                     self.target_size, written)

    def _with_deletes(self, removed: dict[str, _Change], added: dict[str, _Change],
                      base: list[IcebergManifestFileMeta], snapshot: Snapshot,
                      written: list[str]) -> tuple[list[IcebergManifestFileMeta], str]:
        sid = snapshot.id
        operation = APPEND
        changed = {self._partition(c.partition) for c in (*removed.values(), *added.values())}
        out: list[IcebergManifestFileMeta] = []
        for meta in base:
            if self.partition_types and not any(may_contain(meta, self.partition_types, p) for p in changed):
                out.append(meta)
                continue
            entries = self.files.manifests.read_entries(meta)
            reuse = True
            for e in entries:
                if not e.live:
                    continue
                if e.file.file_path in added:
                    added.pop(e.file.file_path)  # already there (a level upgrade): no duplicate
                elif e.file.file_path in removed:
                    reuse = False
            if reuse:
                out.append(meta)
                continue
            operation = REPLACE if snapshot.commit_kind == "COMPACT" else OVERWRITE
            rewritten = [
                replace(e, status=DELETED, snapshot_id=sid) if e.file.file_path in removed else replace(e, status=EXISTING)
                for e in entries if e.live]
            out.extend(self.files.manifests.write_manifests(rewritten, sid, CONTENT_DATA, self.files.new_manifest_path,
                                                            self.target_size, written))
        out.extend(self._new_manifests(added, sid, written))
        return out, operation


    def _compact(self, metas: list[IcebergManifestFileMeta], sid: int,
                 written: list[str]) -> list[IcebergManifestFileMeta]:
        """Java ``compactMetadataIfNeeded``: small manifests (under 2/3 of the target size) merge
        once there are ``compaction.min.file-num`` of them totalling the target size, or
        ``compaction.max.file-num`` of them whatever their size."""
        target = self.target_size
        small = [m for m in metas if m.manifest_length < target * 2 // 3]
        if len(small) < self.opts.compaction_min_file_num:
            return metas
        if len(small) < self.opts.compaction_max_file_num and sum(m.manifest_length for m in small) < target:
            return metas
        result = [m for m in metas if m.manifest_length >= target * 2 // 3]
        entries: list[IcebergManifestEntry] = []
        for meta in small:
            for e in self.files.manifests.read_entries(meta):
                if e.file_sequence_number == sid or e.snapshot_id == sid or e.status == EXISTING:
                    entries.append(e)
                elif e.status == ADDED:
                    entries.append(replace(e, status=EXISTING))
                # an older DELETED entry is dropped
            if meta.sequence_number == sid:
                self.files.delete(meta.manifest_path)  # written by this commit: nothing else names it
                if meta.manifest_path in written:
                    written.remove(meta.manifest_path)
        result.extend(self.files.manifests.write_manifests(entries, sid, CONTENT_DATA, self.files.new_manifest_path,
                                                           target, written))
        return result

    def _with_base(self, snapshot: Snapshot, delta: Sequence[ManifestEntry], base: IcebergMetadata) -> None:
        sid = snapshot.id
        base_snap = base.current_snapshot
        assert base_snap is not None
        written: list[str] = []
        try:
            base_metas = self.files.manifests.read_list(base_snap.manifest_list)
            data_metas = [m for m in base_metas if m.content == CONTENT_DATA]
            removed, added, add_only = self._collect(delta)
            changed = {c.partition for c in (*removed.values(), *added.values())}
            if add_only:
                new_data = data_metas + self._new_manifests(added, sid, written)
                operation = APPEND
            else:
                new_data, operation = self._with_deletes(removed, added, data_metas, snapshot, written)
            new_data = self._compact(new_data, sid, written)
            list_path = self.files.new_list_path()
            self.files.manifests.write_list(list_path, new_data)
            written.append(list_path)

            m = _Metrics()
            m.added_files = len(added)
            m.added_records = sum(c.file.row_count for c in added.values())
            m.added_size = sum(c.file.file_size for c in added.values())
            m.deleted_files = len(removed)
            m.deleted_records = sum(c.file.row_count for c in removed.values())
            m.deleted_size = sum(c.file.file_size for c in removed.values())
            m.changed_partitions = len(changed)
            m.total_records = _summary_long(base_snap, "total-records", lambda: sum(x.live_rows for x in data_metas))
            m.total_records += m.added_records - m.deleted_records
            m.total_files = _summary_long(base_snap, "total-data-files", lambda: sum(x.live_files for x in data_metas))
            m.total_files += m.added_files - m.deleted_files
            m.total_size = _summary_long(base_snap, "total-files-size", lambda: self._live_size(data_metas))
            m.total_size += m.added_size - m.deleted_size

            schema_id = self._latest_schema_id()
            schemas = list(base.schemas)
            known = {int(s.get("schema-id", -1)) for s in schemas}
            if schema_id > base.current_schema_id:
                schemas += [self._iceberg_schema(i) for i in range(base.current_schema_id + 1, schema_id + 1)
                            if i not in known]
            snapshots = [*base.snapshots, IcebergSnapshot(sid, sid, sid - 1, snapshot.time_millis,
                                                          m.summary(operation, snapshot), list_path,
                                                          snapshot.schema_id)]
            keep_from = len(snapshots) - 1
            for i in range(len(snapshots) - 1):
                if not self._should_expire(snapshots[i], sid):
                    keep_from = i
                    break
            expired, snapshots = snapshots[:keep_from], snapshots[keep_from:]
            metadata = IcebergMetadata(
                format_version=base.format_version, table_uuid=base.table_uuid, location=base.location,
                last_sequence_number=sid, last_updated_ms=_now(),
                last_column_id=max(base.last_column_id, highest_field_id(self._iceberg_schema(schema_id))),
                schemas=schemas, current_schema_id=schema_id, partition_specs=base.partition_specs,
                default_spec_id=base.default_spec_id, last_partition_id=base.last_partition_id, snapshots=snapshots,
                current_snapshot_id=sid, properties=self._properties(base.properties, schema_id),
                refs=self._refs({s.snapshot_id for s in snapshots}),
            )
            versions = self._publish(metadata, sid, written)
        except BaseException:
            for p in written:
                self.files.delete(p)
            raise
        if self.table.snapshot_manager.latest_snapshot_id() != sid:
            return  # a later commit already moved on: its callback cleans up
        self._delete_old_versions(sid, versions)
        for i, s in enumerate(expired):
            nxt = expired[i + 1] if i + 1 < len(expired) else snapshots[0]
            self._expire_list(s.manifest_list, nxt.manifest_list)

    def _live_size(self, metas: list[IcebergManifestFileMeta]) -> int:
        return sum(e.file.file_size_in_bytes for m in metas for e in self.files.manifests.read_entries(m) if e.live)

    def _should_expire(self, s: IcebergSnapshot, sid: int) -> bool:
        """Paimon's snapshot retention, applied to Iceberg snapshots (Java ``shouldExpire``)."""
        if s.snapshot_id > sid - self.options.snapshot_num_retained_min:
            return False
        if s.snapshot_id <= sid - self.options.snapshot_num_retained_max:
            return True
        return s.timestamp_ms < _now() - self.options.snapshot_time_retained_millis

    # -- publishing and cleaning -------------------------------------------------------------

    def _publish(self, metadata: IcebergMetadata, sid: int, written: list[str]) -> list[int]:
        """Write ``vN.metadata.json`` (replacing an abandoned one), then the hint if this
        snapshot is still the head; returns the versions up to N that remain."""
        path = self.files.metadata_path(sid)
        data = metadata.to_json().encode("utf-8")
        if not self.file_io.try_write_atomic(path, data):
            # an abandoned version with this number (a rollback, or a drop and re-create): replace it
            self.file_io.write_bytes(path, data)
        written.clear()  # published: the files belong to the metadata now
        versions = self.files.versions()
        if self.table.snapshot_manager.latest_snapshot_id() == sid:
            self.files.write_hint(sid)
            self._retire_above(sid, versions)
        return [v for v in versions if v <= sid]

    def _retire_above(self, sid: int, versions: list[int]) -> None:
        """Versions above the head (a rollback's leftovers) would shadow it for readers that probe
        past the hint: delete them and the files only they name."""
        above = [v for v in versions if v > sid]
        if not above:
            return
        keep: set[str] = set()
        for v in [v for v in versions if v <= sid]:
            md = self.files.try_read(v)
            if md is not None:
                keep |= self.files.referenced(md)
        for v in above:
            md = self.files.try_read(v)
            self.files.delete(self.files.metadata_path(v))
            if md is not None:
                for p in sorted(self.files.referenced(md) - keep):
                    self.files.delete(p)

    def _delete_old_versions(self, sid: int, versions: list[int]) -> None:
        """``metadata.iceberg.delete-after-commit.enabled``: keep ``previous-versions-max`` older versions."""
        if not self.opts.delete_after_commit:
            return
        earliest = sid - self.opts.previous_versions_max
        if earliest <= 0:
            return
        for v in versions:
            if v < earliest:
                self.files.delete(self.files.metadata_path(v))

    def _expire_list(self, expired: str, following: str) -> None:
        """Java ``expireManifestList``: an expired snapshot's list and the manifests the
        following snapshot no longer names."""
        try:
            in_use = {m.manifest_path for m in self.files.manifests.read_list(following)}
            for m in self.files.manifests.read_list(expired):
                if m.manifest_path not in in_use:
                    self.files.delete(m.manifest_path)
        except MissingMetadata:
            return
        self.files.delete(expired)

    def _expire_all_before(self, sid: int, versions: list[int]) -> None:
        """After a fresh build: every older version's lists and manifests go (none is shared
        with the new version), then the versions themselves as ``delete-after-commit`` says."""
        seen: set[str] = set()
        for v in versions:
            if v >= sid:
                continue
            md = self.files.try_read(v)
            if md is None:
                continue
            named = self.files.referenced(md)
            for p in sorted(named - seen):
                self.files.delete(p)
            seen |= named
        self._delete_old_versions(sid, versions)

    def _refs(self, snapshot_ids: set[int]) -> dict[str, int]:
        """Tags that point at an Iceberg snapshot of the metadata (Java: a ref to a missing
        snapshot makes every Iceberg read fail)."""
        return {t.name: t.snapshot.id for t in self.table.tag_manager.tags() if t.snapshot.id in snapshot_ids}


def _now() -> int:
    return int(time.time() * 1000)



def _summary_long(s: IcebergSnapshot, key: str, fallback: Callable[[], int]) -> int:
    try:
        return int(s.summary[key])
    except (KeyError, ValueError):
        return fallback()



# ---------------------------------------------------------------------------------------
# keeping the metadata on the Paimon snapshots that remain
# ---------------------------------------------------------------------------------------


def _enabled(table: FileStoreTable) -> bool:
    return table.branch is None and iceberg_options(table.schema.options).enabled


def resync(table: FileStoreTable) -> None:
    """After a rollback or a fast-forward: the metadata describes the latest snapshot again,
    at once (Java leaves the abandoned versions until the next commit notices them).

    A version that still describes the latest snapshot only gets its tags refreshed; otherwise
    the version is built afresh from the snapshot's files, keeping the table uuid, and every
    version above it goes with the files only it names."""
    if not _enabled(table):
        return
    latest = table.snapshot_manager.latest_snapshot()
    if latest is None:
        return
    cb = IcebergCommitCallback(table)
    files = cb.files
    current = files.try_read(latest.id)
    if current is not None and cb._describes(current, latest):
        _write_refs(cb, current, latest.id)
        files.write_hint(latest.id)
        cb._retire_above(latest.id, files.versions())
        return
    inherit = current
    if inherit is None:
        above = [v for v in files.versions() if v > latest.id]
        inherit = files.try_read(above[-1]) if above else None
    cb._without_base(latest, inherit)


def sync_tags(table: FileStoreTable) -> None:
    """After tags changed: the latest version's refs are the tags whose snapshot it lists
    (Java's tag callback rewrites the latest version in place the same way). A failure leaves
    the tags as they are and is reported; the next commit writes the refs again."""
    if not _enabled(table):
        return
    latest = table.snapshot_manager.latest_snapshot_id()
    if latest is None:
        return
    cb = IcebergCommitCallback(table)
    md = cb.files.try_read(latest)
    if md is None:
        return
    try:
        _write_refs(cb, md, latest)
    except Exception as e:
        raise PaimonError(f"{table.identifier}: the tags changed, but the Iceberg refs could not be written ({e}); "
                          "the next commit writes them") from e


def _write_refs(cb: IcebergCommitCallback, md: IcebergMetadata, version: int) -> None:
    refs = cb._refs({s.snapshot_id for s in md.snapshots})
    if refs != md.refs:
        md.refs = refs
        cb.files.rewrite(version, md)


@dataclass
class IcebergExpiry:
    """What expiring Paimon snapshots below ``first_retained`` does to the Iceberg side."""

    first_retained: int | None = None
    version: int | None = None  # the version rewritten in place (None: nothing to do)
    snapshots: list[int] = field(default_factory=list)  # Iceberg snapshots dropped from it
    files: list[str] = field(default_factory=list)  # manifest lists, manifests and old versions deleted

    def note(self) -> str | None:
        if self.version is None:
            return None
        return (f"Iceberg metadata: v{self.version}.metadata.json drops snapshots "
                f"{', '.join(map(str, self.snapshots))}; {len(self.files)} Iceberg metadata files go")


def plan_iceberg_expiry(table: FileStoreTable, first_retained: int | None) -> IcebergExpiry:
    """Iceberg snapshots whose Paimon snapshot expires leave the latest version (their data
    files are about to go), with the lists, manifests and older versions only they need (reads only)."""
    out = IcebergExpiry(first_retained)
    if first_retained is None or not _enabled(table):
        return out
    latest = table.snapshot_manager.latest_snapshot_id()
    if latest is None:
        return out
    cb = IcebergCommitCallback(table)
    files = cb.files
    md = files.try_read(latest)
    if md is None:
        return out
    gone = [s for s in md.snapshots if s.snapshot_id < first_retained]
    older = {v: files.try_read(v) for v in files.versions() if v < latest}
    stale_versions = [v for v, old in older.items() if old is None or old.current_snapshot_id < first_retained]
    if not gone and not stale_versions:
        return out  # the common case after a commit: its callback already expired them
    keep = files.referenced(replace(md, snapshots=[s for s in md.snapshots if s.snapshot_id >= first_retained]))
    for v, old in older.items():
        if v not in stale_versions and old is not None:
            cur = old.current_snapshot
            keep |= files.referenced(replace(old, snapshots=[cur] if cur is not None else []))
    drop: set[str] = set()
    for s in gone:
        drop |= files.referenced(replace(md, snapshots=[s]))
    for v in stale_versions:
        old = older[v]
        if old is not None:
            drop |= files.referenced(old)
    out.version = latest
    out.snapshots = [s.snapshot_id for s in gone]
    out.files = sorted(drop - keep) + [files.metadata_path(v) for v in stale_versions]
    return out


def apply_iceberg_expiry(table: FileStoreTable, expiry: IcebergExpiry) -> None:
    """Rewrite the version without the dropped snapshots first (readers never meet a snapshot
    whose files are gone), then delete what only those snapshots named."""
    if expiry.first_retained is None or not _enabled(table):
        return
    if table.snapshot_manager.latest_snapshot_id() != expiry.version:
        # a commit since planning wrote a newer version (still listing the expiring snapshots)
        expiry = plan_iceberg_expiry(table, expiry.first_retained)
    if expiry.version is None:
        return
    cb = IcebergCommitCallback(table)
    md = cb.files.try_read(expiry.version)
    if md is None:
        return
    dropped = set(expiry.snapshots)
    if dropped:
        md.snapshots = [s for s in md.snapshots if s.snapshot_id not in dropped]
        md.refs = cb._refs({s.snapshot_id for s in md.snapshots})
        cb.files.rewrite(expiry.version, md)
        # rewritten in place: the Iceberg catalog's pointer stays right (Java does not re-register either)
    for p in expiry.files:
        cb.files.delete(p)


__all__ = [
    "IcebergCommitCallback", "IcebergExpiry", "apply_iceberg_expiry", "commit_identity", "plan_iceberg_expiry",
    "resync", "sync_tags",
]
