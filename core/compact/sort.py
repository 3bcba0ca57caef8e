"""Sort compaction of bucket-unaware append tables (``--order-strategy order|zorder|hilbert``).

Why: an append table is read by scanning files whose min/max stats overlap the filter. Sorting
the rows of a partition by the filtered columns (or by a space-filling curve over several of
them) makes those ranges narrow, so far more files are skipped. Paimon's sort-compact
(Flink ``SortCompactAction`` / Spark ``CompactProcedure`` with ``order_strategy``) reads the
selected partitions, sorts every row by a key (:mod:`.sort_keys`) and writes them back as an
OVERWRITE of those partitions. This module does the same; a partition bigger than the sort
budget (half of ``write-buffer-size``) is sorted externally (:mod:`.external_sort`).

Row-tracking tables keep every row's ``_ROW_ID`` and ``_SEQUENCE_NUMBER``: the rows are read
with them and the output stores both as columns, as the small-file compaction's output does
(:func:`.append.output_writer`). Java's sort compaction writes the sorted rows as new appends
instead, which the commit numbers afresh from ``nextRowId``; we keep the ids, which is what
row tracking is for. Data-evolution tables are refused, as Java refuses them.

The commit is an OVERWRITE of the rewritten partitions pinned to the snapshot that was read
(``FileStoreCommit.commit(..., base_snapshot_id=...)``): if anything was appended to them
meanwhile the commit fails with CommitConflict (exit 5) instead of losing those rows
(apache/paimon#4802), and the files written are deleted again.

Entry point for the compaction job (``paimon-cli compact --order-strategy ... --order-by ...``)::

    sort_compact(table, strategy, order_by, *, partitions=None, where=None, partition_filter=None,
                 base_snapshot=None, commit_user=None, plan_only=False, progress=None,
                 before_commit=None) -> SortCompactResult

``partitions`` is the ``--partition`` spec list (each dict ANDed, the list ORed, values as
the user typed them) or ``where`` a ``--where`` on partition columns (not both; matched by
:func:`core.operation.partition_spec.partition_filter`); ``partition_filter`` is an extra
predicate over serialized partition rows, ANDed. ``base_snapshot`` defaults to the latest snapshot.
``plan_only`` returns the result with the partitions/files that WOULD be rewritten and writes
nothing. ``progress(partition_index, partitions_total, rows_done)`` is called as partitions
finish. ``before_commit`` is a test hook run after the files are written, before the commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CommitConflict, InvalidInput, NotYetSupported
from ..manifest.index_manifest import DELETION_VECTORS_INDEX
from ..mergetree.commit_message import CommitMessage
from ..mergetree.file_writer import RollingFileWriter, written_index_note
from ..operation import partition_spec
from ..operation.commit import FileStoreCommit
from ..operation.row_tracking import is_data_evolution
from ..operation.scan import FileStoreScan
from .append import bucket_dv_vectors, dv_index_by_partition, output_writer, read_file_tables
from .external_sort import sort_stream
from .sort_keys import SortSpec, make_sort_spec

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexFileMeta
    from ..manifest.manifest import ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable


# ---------------------------------------------------------------------------------------
# The sort-compact job
# ---------------------------------------------------------------------------------------


@dataclass
class SortCompactResult:
    """What a sort compaction did (or, with ``plan_only``, would do)."""

    strategy: str
    order_by: list[str]
    base_snapshot_id: int | None
    snapshot_id: int | None = None
    partitions: list[str] = field(default_factory=list)
    files_in: int = 0
    files_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    rows_in: int = 0
    rows_out: int = 0
    seconds: float = 0.0
    plan_only: bool = False
    commit_kind: str | None = None
    index_note: str | None = None  # the written .index files outweigh their data files

    @property
    def units(self) -> int:
        """One unit per rewritten partition (the job's summary counts units)."""
        return len(self.partitions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy, "order_by": list(self.order_by), "base_snapshot_id": self.base_snapshot_id,
            "snapshot_id": self.snapshot_id, "partitions": list(self.partitions), "files_in": self.files_in,
            "files_out": self.files_out, "bytes_in": self.bytes_in, "bytes_out": self.bytes_out,
            "rows_in": self.rows_in, "rows_out": self.rows_out, "seconds": round(self.seconds, 3),
            "plan_only": self.plan_only,
        }


def check_sortable_table(table: FileStoreTable) -> None:
    if table.schema.primary_keys:
        raise InvalidInput(
            f"--order-strategy: {table.identifier} has a primary key; sort compaction is for "
            "bucket-unaware append tables (bucket = -1)"
        )
    if table.schema.bucket != -1:
        raise InvalidInput(
            f"--order-strategy: {table.identifier} has bucket={table.schema.bucket}; sort compaction "
            "supports only bucket-unaware append tables (bucket = -1), as Paimon"
        )
    if is_data_evolution(table.options):  # Java: "Data Evolution table cannot be sorted!"
        raise NotYetSupported("sort compaction of data-evolution tables is not supported (Java refuses it too)")


def sort_compact(
    table: FileStoreTable,
    strategy: str,
    order_by: Sequence[str],
    *,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    where: str | None = None,
    partition_filter: Callable[[bytes], bool] | None = None,
    base_snapshot: Snapshot | None = None,
    commit_user: str | None = None,
    plan_only: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    before_commit: Callable[[], None] | None = None,
) -> SortCompactResult:
    """Rewrite the selected partitions sorted by ``order_by``; one OVERWRITE snapshot pinned
    to ``base_snapshot`` (see the module docstring)."""
    started = time.monotonic()
    check_sortable_table(table)
    spec = make_sort_spec(table, strategy, order_by)
    selected = partition_spec.partition_filter(table.schema, partitions, where, command="compact")
    snapshot = base_snapshot if base_snapshot is not None else table.snapshot_manager.latest_snapshot()
    result = SortCompactResult(spec.strategy, [f.name for f in spec.fields],
                               snapshot.id if snapshot is not None else None, plan_only=plan_only)
    entries = partition_spec.selected_entries(table, snapshot, selected)
    if partition_filter is not None:
        entries = [e for e in entries if partition_filter(e.partition)]
    if snapshot is None:
        result.seconds = time.monotonic() - started
        return result
    groups: dict[bytes, list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault(e.partition, []).append(e)
    index_by_part = dv_index_by_partition(table, snapshot)
    for p, es in groups.items():
        result.partitions.append(partition_spec.partition_label(table.schema, p))
        result.files_in += len(es)
        result.bytes_in += sum(e.file.file_size for e in es)
        result.rows_in += sum(e.file.row_count for e in es)
    if not plan_only and groups:
        snap = _rewrite_and_commit(table, spec, snapshot, groups, index_by_part, result, commit_user, progress,
                                   before_commit)
        result.snapshot_id = snap.id if snap is not None else None
        result.commit_kind = snap.commit_kind if snap is not None else None
    result.seconds = time.monotonic() - started
    return result


def _rewrite_and_commit(
    table: FileStoreTable,
    spec: SortSpec,
    snapshot: Snapshot,
    groups: dict[bytes, list[ManifestEntry]],
    index_by_part: dict[bytes, list[IndexFileMeta]],
    result: SortCompactResult,
    commit_user: str | None,
    progress: Callable[[int, int, int], None] | None,
    before_commit: Callable[[], None] | None,
) -> Snapshot | None:
    """Sort and rewrite every partition of ``groups``, then commit them as one OVERWRITE; on
    failure every file written is deleted again (unless the snapshot may be published)."""
    # half the write buffer: the sort briefly holds the buffered rows and their sorted copy
    budget = max((table.options.get_memory_bytes("write-buffer-size") or (256 << 20)) // 2, 1 << 16)
    messages: list[CommitMessage] = []
    writers: list[RollingFileWriter] = []
    commit = FileStoreCommit(table, commit_user)
    try:
        for i, (p, es) in enumerate(groups.items()):
            messages.append(_rewrite_partition(table, spec, p, es, index_by_part.get(p, []), budget, writers,
                                               result))
            if progress is not None:
                progress(i + 1, len(groups), result.rows_out)
        if before_commit is not None:
            before_commit()
        snap = commit_partition_rewrite(commit, messages, snapshot, set(groups))
        result.index_note = written_index_note(table.options.options, [f for m in messages for f in m.new_files])
        return snap
    except BaseException as e:
        if isinstance(e, CommitConflict) or not commit.may_have_published():
            for w in writers:
                w.abort()
        raise


def _rewrite_partition(
    table: FileStoreTable,
    spec: SortSpec,
    partition: bytes,
    entries: list[ManifestEntry],
    index_files: list[IndexFileMeta],
    budget: int,
    writers: list[RollingFileWriter],
    result: SortCompactResult,
) -> CommitMessage:
    """One partition's rows (deletion vectors applied) sorted into new files."""
    bucket, total_buckets = entries[0].bucket, entries[0].total_buckets
    vectors = bucket_dv_vectors(table, partition, bucket, index_files) if index_files else {}
    files = sorted((e.file for e in entries), key=lambda f: f.min_sequence_number)
    out = output_writer(table, partition, bucket, seq_start=0)
    writers.append(out)
    tables = read_file_tables(table, partition, bucket, files, vectors)
    for piece in sort_stream(tables, spec, budget):
        out.write(spec.strip(piece))
    new_files = out.close()
    result.files_out += len(new_files)
    result.bytes_out += sum(f.file_size for f in new_files)
    result.rows_out += sum(f.row_count for f in new_files)
    if new_files:
        return CommitMessage(partition, bucket, total_buckets, new_files=new_files)
    # every row was deleted: drop the partition's files and vectors explicitly
    return CommitMessage(partition, bucket, total_buckets, deleted_files=files, deleted_index_files=list(index_files))


def commit_partition_rewrite(
    commit: FileStoreCommit, messages: Sequence[CommitMessage], base: Snapshot, partitions: set[bytes]
) -> Snapshot | None:
    """ONE OVERWRITE snapshot replacing whole ``partitions`` (read at ``base``) with the new
    files of ``messages``; a partition left without rows needs explicit ``deleted_files``.

    Pinned to ``base``: rows appended to those partitions meanwhile, or deletion vectors
    added by a non-COMPACT commit, fail it with CommitConflict instead of being lost."""
    _check_no_new_deletion_vectors(commit.table, base, partitions)
    if any(m.new_files for m in messages):
        return commit.commit(messages, "OVERWRITE", overwrite={}, dynamic=True, base_snapshot_id=base.id)
    return commit.commit(messages, "OVERWRITE")


def _check_no_new_deletion_vectors(table: FileStoreTable, base: Snapshot, partitions: set[bytes]) -> None:
    """CommitConflict if a non-COMPACT snapshot after ``base`` added deletion vectors in the
    rewritten partitions: the sorted files were made without them, so committing would bring
    rows deleted meanwhile back. (The commit's pin only looks at added data files.)"""
    if not table.options.deletion_vectors_enabled:
        return
    sm = table.snapshot_manager
    latest = sm.latest_snapshot()
    if latest is None or latest.id <= base.id:
        return

    def names(snap: Snapshot) -> set[str]:
        return {ie.index_file.file_name for ie in FileStoreScan(table).index_entries(snap)
                if ie.index_file.index_type == DELETION_VECTORS_INDEX and ie.partition in partitions}

    prev = names(base)
    prev_manifest = base.index_manifest
    for sid in range(base.id + 1, latest.id + 1):
        snap = sm.snapshot(sid)
        if snap.index_manifest == prev_manifest:
            continue
        cur = names(snap)
        if snap.commit_kind != "COMPACT" and cur - prev:
            raise CommitConflict(
                f"snapshot {sid} ({snap.commit_kind}) added deletion vectors to partitions being sorted after "
                f"base snapshot {base.id}; committing would bring deleted rows back, give up committing"
            )
        prev, prev_manifest = cur, snap.index_manifest


__all__ = [
    "SortCompactResult",
    "check_sortable_table",
    "commit_partition_rewrite",
    "sort_compact",
]
