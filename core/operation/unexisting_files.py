"""remove-unexisting-files: drop manifest entries whose data file is gone (Java's
``remove_unexisting_files`` procedure, ``ListUnexistingFiles``).

For every live data file of the latest snapshot (all levels, ``_EXTERNAL_PATH`` honoured) the
file's existence is checked; missing ones are committed as DELETE entries of their (partition,
bucket), which Java labels OVERWRITE. Extra files (file indexes), changelog files and index
files are not checked, as in Java. Unlike Java's batch scan we check the postponed files of a
postpone-bucket table too: a missing one would break their compaction just the same. Unlike
Java, a removed file's deletion vector goes too (the bucket's DV index is rewritten without
it, as a compaction does), so no index entry names a file the snapshot no longer has; for
bucket-unaware deletion-vector tables that is refused (exit 1) until supported.

The rows of a removed file are lost for readers of the new snapshot; older snapshots still
name the file. Fails closed: a manifest that cannot be read, or a file whose existence cannot
be told, stops the run (UnsafeRefused) before anything is written. The commit re-checks that
each removed file is still live (CommitConflict otherwise).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import NotFound, NotYetSupported, PaimonError, UnsafeRefused
from ..io import paths
from ..manifest.index_manifest import DELETION_VECTORS_INDEX
from ..mergetree.commit_message import CommitMessage
from ..mergetree.dv_maintainer import DvMaintainer
from ..mergetree.file_writer import partition_dir_of
from ..utils.interrupt import discard
from ..utils.rows import Rows
from ..utils.workers import map_ordered
from .commit import FileStoreCommit
from .row_tracking import is_data_evolution
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable

PLAN_COLUMNS = ["path", "partition", "bucket", "level", "rows", "bytes", "deletion_vector"]
_CHECK_THREADS = 16


@dataclass(frozen=True)
class UnexistingFile:
    entry: ManifestEntry
    path: str
    partition: str
    has_dv: bool = False

    def as_row(self, table_path: str) -> dict[str, Any]:
        f = self.entry.file
        return {"path": paths.table_relative(self.path, table_path), "partition": self.partition, "bucket": self.entry.bucket, "level": f.level,
                "rows": f.row_count, "bytes": f.file_size, "deletion_vector": self.has_dv}


@dataclass
class UnexistingFilesPlan:
    """The live files of snapshot ``snapshot_id`` that do not exist."""

    table_path: str
    snapshot_id: int | None
    checked: int = 0
    missing: list[UnexistingFile] = field(default_factory=list)
    # the DV maintainers of the buckets whose missing files have deletion vectors
    dv_buckets: dict[tuple[bytes, int], DvMaintainer] = field(default_factory=dict, repr=False)

    @property
    def rows_lost(self) -> int:
        return sum(m.entry.file.row_count for m in self.missing)

    def rows(self) -> Rows:
        return Rows(PLAN_COLUMNS, [m.as_row(self.table_path) for m in self.missing])


@dataclass
class UnexistingFilesResult:
    plan: UnexistingFilesPlan
    snapshot_id: int | None = None
    warnings: list[str] = field(default_factory=list)


def plan_remove_unexisting_files(table: FileStoreTable) -> UnexistingFilesPlan:
    """Check every live data file of the latest snapshot; nothing is written."""
    FileStoreCommit(table)  # refuse, before any I/O, tables we cannot commit to
    if is_data_evolution(table.options):
        # a lost partial-column file does not lose rows: their columns silently revert to an
        # older file's values (or null), which no report of "rows removed" would describe
        raise NotYetSupported("remove-unexisting-files: data-evolution tables (data-evolution.enabled) are not "
                              "supported: dropping a partial-column file would revert column values")
    latest = table.snapshot_manager.latest_snapshot()
    plan = UnexistingFilesPlan(table.path, None if latest is None else latest.id)
    if latest is None:
        return plan
    try:
        entries = FileStoreScan(table).plan(latest)
    except NotYetSupported:
        raise
    except (PaimonError, OSError) as e:
        raise UnsafeRefused(f"remove-unexisting-files: cannot read the manifests of snapshot {latest.id} "
                            f"({e}); nothing changed") from e
    schema = table.schema

    def located(e: ManifestEntry) -> tuple[ManifestEntry, str, str]:
        part = partition_dir_of(schema, e.partition)
        return e, paths.data_file_path(table.data_root, part, e.bucket, e.file.file_name, e.file.external_path), part

    files = [located(e) for e in entries]
    plan.checked = len(files)
    exists = _exists_all(table, [p for _, p, _ in files])
    plan.missing = [UnexistingFile(e, p, part or "(none)") for (e, p, part), ok in zip(files, exists, strict=True)
                    if not ok]
    if plan.missing and table.options.deletion_vectors_enabled:
        _plan_deletion_vectors(table, latest, plan)
    return plan


def _plan_deletion_vectors(table: FileStoreTable, latest: Snapshot, plan: UnexistingFilesPlan) -> None:
    """Mark the missing files that have a deletion vector and load their buckets' vectors."""
    try:
        index = [ie for ie in FileStoreScan(table).index_entries(latest)
                 if ie.index_file.index_type == DELETION_VECTORS_INDEX]
        by_bucket: dict[tuple[bytes, int], list[Any]] = {}
        for ie in index:
            by_bucket.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
        for i, m in enumerate(plan.missing):
            key = (m.entry.partition, m.entry.bucket)
            if key not in plan.dv_buckets and key in by_bucket:
                plan.dv_buckets[key] = DvMaintainer(table, key[0], key[1], by_bucket[key])
            if key in plan.dv_buckets and plan.dv_buckets[key].vector_of(m.entry.file.file_name) is not None:
                plan.missing[i] = UnexistingFile(m.entry, m.path, m.partition, has_dv=True)
    except (PaimonError, OSError) as e:
        raise UnsafeRefused(f"remove-unexisting-files: cannot read the deletion vectors of snapshot {latest.id} "
                            f"({e}); nothing changed") from e
    with_dv = [m for m in plan.missing if m.has_dv]
    if with_dv and table.schema.bucket == -1:
        raise NotYetSupported(f"remove-unexisting-files: {with_dv[0].path} has a deletion vector in a bucket-unaware "
                              "deletion-vector table; removing such files is not supported yet")


def _exists_all(table: FileStoreTable, file_paths: list[str]) -> list[bool]:
    file_io = table.file_io

    def exists(path: str) -> bool:
        # not FileIO.exists, which answers False on a permission error: only "no such file"
        # may count as missing
        try:
            file_io.file_size(path)
            return True
        except NotFound:
            return False
        except Exception as e:
            raise UnsafeRefused(f"remove-unexisting-files: cannot tell whether {path} exists ({e}); "
                                "nothing changed") from e

    if file_io.is_local or len(file_paths) <= 1:
        return [exists(p) for p in file_paths]
    return map_ordered(exists, file_paths, min(_CHECK_THREADS, len(file_paths)), "paimon-exists")


def remove_unexisting_files(
    table: FileStoreTable, plan: UnexistingFilesPlan, after_commit: Callable[[], list[str]] | None = None
) -> UnexistingFilesResult:
    """Commit the plan's missing files as DELETE entries (one OVERWRITE snapshot)."""
    result = UnexistingFilesResult(plan)
    if not plan.missing:
        return result
    messages: dict[tuple[bytes, int], CommitMessage] = {}
    for m in plan.missing:
        e = m.entry
        msg = messages.setdefault((e.partition, e.bucket), CommitMessage(e.partition, e.bucket, e.total_buckets))
        msg.deleted_files.append(e.file)
    commit = FileStoreCommit(table)
    written: list[str] = []
    try:
        for key, maintainer in plan.dv_buckets.items():
            for m in plan.missing:
                if m.has_dv and (m.entry.partition, m.entry.bucket) == key:
                    maintainer.remove(m.entry.file.file_name)
            new, deleted, index_paths = maintainer.write()
            written += index_paths
            messages[key].new_index_files += new
            messages[key].deleted_index_files += deleted
        snapshot = commit.commit(list(messages.values()), "APPEND")
    except BaseException:
        if not commit.may_have_published():
            discard(table.file_io, written)
        raise
    result.snapshot_id = None if snapshot is None else snapshot.id
    if after_commit is not None:
        result.warnings = after_commit()
    return result
