"""Rescale: rewrite partitions of a fixed-bucket table into another bucket number.

Why: a fixed-bucket partition keeps the bucket number its files were written with (the
manifest entries' ``_TOTAL_BUCKETS``) until it is rewritten; ``alter --set bucket=N`` changes
only the schema. Writing into such a partition would hash keys into the new layout while
the old rows stay in the old one -- two rows per key -- so ``write`` and ``compact`` refuse
it (:func:`core.operation.bucket_layout.check_bucket_layout`, Java's ``AbstractFileStoreWrite``
check) until the partition is rescaled. Java's way out is INSERT OVERWRITE or the ``rescale`` procedure (Flink action /
Spark procedure); :func:`rescale` is that procedure:

* :func:`plan_rescale` (metadata only) picks the selected partitions whose live files have
  another bucket number than the target -- ``bucket_num``, else the table's ``bucket``
  option -- and refuses what it cannot rewrite safely (a partition holding files of
  several layouts; postpone-bucket files);
* the target: Java's procedure writes through a copy of the table with ``bucket=N`` and
  leaves the schema alone, so every later write into a rescaled partition would be refused
  (table option and partition layout differ). Here ``bucket_num`` also sets the option, in
  one schema change committed BEFORE the data is rewritten: a rewrite that fails then leaves
  old partitions that writes refuse with the rescale command to run again, never a
  partition whose layout the option contradicts silently;
* :func:`execute_rescale` reads the merged rows of every level of the partitions at ONE
  snapshot (level 0 included: Java's batch scan hides level 0 of deletion-vector and
  first-row tables, and an INSERT OVERWRITE from it would lose rows not compacted yet) and
  writes them as INSERT OVERWRITE does -- fresh ``+I`` records, sequence numbers from 0, no
  changelog (Java's overwrite commits none) -- through :class:`core.operation.write.TableWrite`, one
  old bucket at a time, so memory stays bounded by a few buckets (the reader decodes ahead)
  plus the write buffer.
  Primary-key buckets are then fully compacted (one sorted run on the top level; deletion-
  vector and first-row readers never see level 0), and everything is committed as ONE
  OVERWRITE snapshot pinned to the snapshot read (shared with sort compaction,
  :func:`core.compact.sort.commit_partition_rewrite`): a concurrent commit into those
  partitions fails it with CommitConflict (exit 5) and every file written is deleted again.

Postpone-bucket tables (``bucket = -2``) have no bucket number of their own: each partition
keeps the one its real-bucket files were given (:mod:`core.operation.postpone`). As Java's
``RescaleAction`` does for them, ``bucket_num`` is required, the table's option stays -2, the
rows visible in real buckets are rewritten through a copy of the table with ``bucket = N``,
and the staged files of the postpone bucket are neither read nor deleted (Java's overwrite
through a real-bucket table keeps bucket -2): a later ``compact`` moves them into the
partition's new layout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CommitConflict, InvalidInput, PaimonError
from ..io import paths
from ..mergetree.commit_message import CommitMessage
from ..operation.commit import FileStoreCommit
from ..operation.partition_spec import parse_partition_specs, partition_filter, partition_label, selected_entries
from ..operation.read import TableRead
from ..operation.scan import FileStoreScan
from ..operation.write import TableWrite, check_writable
from ..table.catalog_environment import commit_schema_changes
from ..table.file_store_table import FileStoreTable
from ..utils.rows import Rows
from .local import UnitsFailed, delete_written, run_local
from .plan import pick_bucket_unit
from .sort import commit_partition_rewrite

if TYPE_CHECKING:
    from ..manifest.manifest import DataFileMeta, ManifestEntry
    from ..refs.snapshot import Snapshot

PLAN_COLUMNS = ["partition", "current_buckets", "new_buckets", "files", "rows", "bytes"]
RESULT_COLUMNS = ["snapshot_id", "commit_kind", "bucket_num", "partitions", "files_in", "files_out", "rows_in",
                  "rows_out", "bytes_in", "bytes_out", "seconds"]


# ---------------------------------------------------------------------------------------
# Plan
# ---------------------------------------------------------------------------------------


@dataclass
class PartitionRescale:
    """One partition to rewrite."""

    partition: bytes
    label: str  # k=v,k2=v2 ("" for an unpartitioned table)
    current_buckets: int  # the _TOTAL_BUCKETS of its live files
    entries: list[ManifestEntry] = field(default_factory=list, repr=False)

    @property
    def files(self) -> int:
        return len(self.entries)

    @property
    def rows(self) -> int:
        """Records in the files (before merging: what is read)."""
        return sum(e.file.row_count for e in self.entries)

    @property
    def bytes(self) -> int:
        return sum(e.file.file_size for e in self.entries)


@dataclass
class RescalePlan:
    """What a rescale of ``base_snapshot`` rewrites (``partitions``) and into how many buckets."""

    base_snapshot: Snapshot | None
    bucket_option: int  # the table's ``bucket`` option now
    new_buckets: int
    partitions: list[PartitionRescale] = field(default_factory=list)
    unchanged: int = 0  # selected partitions already written with ``new_buckets``

    @property
    def sets_option(self) -> bool:
        """A postpone table keeps bucket = -2: only its partitions get the new number."""
        return self.bucket_option not in (self.new_buckets, paths.POSTPONE_BUCKET)

    def rows(self) -> Rows:
        return Rows(PLAN_COLUMNS, [
            {"partition": p.label, "current_buckets": p.current_buckets, "new_buckets": self.new_buckets,
             "files": p.files, "rows": p.rows, "bytes": p.bytes} for p in self.partitions
        ])


def check_rescalable(table: FileStoreTable, bucket_num: int | None) -> int:
    """The target bucket number, or the reason this table cannot be rescaled."""
    schema = table.schema
    bucket = schema.bucket
    if bucket == paths.POSTPONE_BUCKET and bucket_num is None:
        raise InvalidInput(
            f"rescale: {table.identifier} has bucket = -2 (postpone bucket): give the partitions' new bucket "
            "number with --bucket-num"
        )
    if bucket <= 0 and bucket != paths.POSTPONE_BUCKET:
        kind = "dynamic bucket" if schema.primary_keys else "bucket-unaware append table"
        raise InvalidInput(
            f"rescale: {table.identifier} has bucket = {bucket} ({kind}); rescale applies to fixed-bucket "
            "tables (bucket > 0)"
        )
    if bucket_num is not None and bucket_num < 1:
        raise InvalidInput(f"--bucket-num {bucket_num}: must be a positive bucket count")
    target = bucket if bucket_num is None else bucket_num
    new_schema = schema.copy(options={**schema.options, "bucket": str(target)})
    check_writable(new_schema, new_schema.core_options)  # what the rewrite cannot write, refused up front
    return target


def plan_rescale(
    table: FileStoreTable,
    partitions: Sequence[str] | None = None,
    bucket_num: int | None = None,
    snapshot: Snapshot | None = None,
) -> RescalePlan:
    """The partitions of ``snapshot`` (default: latest) to rewrite into ``bucket_num`` buckets
    (default: the table's option). ``partitions``: ``--partition`` strings as ``compact``
    takes them (``k=v,k2=v2;k=v3``); without them every partition is considered."""
    target = check_rescalable(table, bucket_num)
    specs = parse_partition_specs(list(partitions), table.schema) if partitions else None
    selected = partition_filter(table.schema, specs, None)
    if snapshot is None:
        snapshot = table.snapshot_manager.latest_snapshot()
    plan = RescalePlan(snapshot, table.schema.bucket, target)
    groups: dict[bytes, list[ManifestEntry]] = {}
    for e in selected_entries(table, snapshot, selected):
        groups.setdefault(e.partition, []).append(e)
    for partition in sorted(groups):
        entries = groups[partition]
        label = partition_label(table.schema, partition)
        where = f"partition {label}" if label else str(table.identifier)
        # staged rows of a postpone table stay where they are (Java reads real buckets only)
        entries = [e for e in entries if e.bucket != paths.POSTPONE_BUCKET]
        if not entries:
            continue
        totals = sorted({e.total_buckets for e in entries})
        if len(totals) > 1:
            raise InvalidInput(
                f"rescale: {where} holds files of {' and '.join(map(str, totals))} buckets (a write bypassed the "
                "bucket-number check); their rows cannot be merged by key -- rewrite the partition with "
                "`paimon-cli write --overwrite`"
            )
        if totals[0] == target:
            plan.unchanged += 1
            continue
        plan.partitions.append(PartitionRescale(partition, label, totals[0], entries))
    return plan


# ---------------------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------------------


@dataclass
class RescaleResult:
    """What ``rescale`` did (or, with ``dry_run``, would do)."""

    plan: RescalePlan
    dry_run: bool = False
    schema_id: int | None = None  # the schema that set the new bucket option (None: unchanged)
    snapshot_id: int | None = None
    commit_kind: str | None = None
    files_out: int = 0
    rows_out: int = 0
    bytes_out: int = 0
    seconds: float = 0.0

    def as_row(self) -> dict[str, Any]:
        p = self.plan
        return {
            "snapshot_id": self.snapshot_id, "commit_kind": self.commit_kind, "bucket_num": p.new_buckets,
            "partitions": len(p.partitions), "files_in": sum(x.files for x in p.partitions),
            "files_out": self.files_out, "rows_in": sum(x.rows for x in p.partitions), "rows_out": self.rows_out,
            "bytes_in": sum(x.bytes for x in p.partitions), "bytes_out": self.bytes_out,
            "seconds": round(self.seconds, 3),
        }


def rescale(
    table: FileStoreTable,
    partitions: Sequence[str] | None = None,
    bucket_num: int | None = None,
    *,
    dry_run: bool = False,
    commit_user: str | None = None,
    before_commit: Callable[[], None] | None = None,
) -> RescaleResult:
    """Set the bucket option when ``bucket_num`` changes it, then rewrite the partitions that
    need it (see the module docstring). ``before_commit`` is a test hook run after the files
    are written, before the commit."""
    started = time.monotonic()
    plan = plan_rescale(table, partitions, bucket_num)  # refusals before anything changes
    result = RescaleResult(plan, dry_run=dry_run)
    if dry_run:
        result.seconds = time.monotonic() - started
        return result
    if plan.sets_option:
        from ..schema.schema_change import SetOption

        schema = commit_schema_changes(table, [SetOption("bucket", str(plan.new_buckets))])
        result.schema_id = schema.id
        table = table.with_schema(schema)
    reader = TableRead(table, all_levels=True)  # pinned to the snapshot it resolves now
    target = _rewrite_table(table, plan.new_buckets)
    snap = reader.snapshot
    if snap is None:
        plan.partitions = []
    elif plan.base_snapshot is None or snap.id != plan.base_snapshot.id:  # a commit landed meanwhile
        plan = plan_rescale(table, partitions, plan.new_buckets, snap)
        plan.bucket_option = result.plan.bucket_option
        result.plan = plan
    if plan.partitions:
        execute_rescale(target, plan, reader, result, commit_user, before_commit)
    result.seconds = time.monotonic() - started
    return result


def _rewrite_table(table: FileStoreTable, buckets: int) -> FileStoreTable:
    """The table the rows are rewritten through: a postpone table's copy with ``bucket = N``
    (never committed as a schema, as Java's rescale), else the table itself."""
    if table.schema.bucket != paths.POSTPONE_BUCKET:
        return table
    schema = table.schema.copy(options={**table.schema.options, "bucket": str(buckets)})
    return table.with_schema(schema)


def execute_rescale(
    table: FileStoreTable,
    plan: RescalePlan,
    reader: Any,
    result: RescaleResult,
    commit_user: str | None = None,
    before_commit: Callable[[], None] | None = None,
) -> None:
    """Rewrite ``plan.partitions`` of ``table`` (whose option is the new bucket number) from
    ``reader`` (a :class:`core.operation.read.TableRead` of ``plan.base_snapshot`` over all levels) and
    commit ONE OVERWRITE; on any failure before the snapshot is published, every file
    written is deleted again."""
    base = plan.base_snapshot
    assert base is not None and reader.snapshot is not None and reader.snapshot.id == base.id
    if table.schema.bucket != plan.new_buckets:
        raise InvalidInput(f"rescale: the table's bucket option is {table.schema.bucket}, not {plan.new_buckets}")
    chosen = {p.partition for p in plan.partitions}
    read_plan = reader.plan()
    read_plan.splits = [s for s in read_plan.splits if s.partition in chosen]

    tw = TableWrite(table, overwrite=True)  # INSERT OVERWRITE: fresh sequence numbers from 0
    tw.changelog_input = False  # Java's overwrite commits no changelog
    commit = FileStoreCommit(table, commit_user)
    compacted: list[Any] = []
    try:
        for batch in reader.iter_batches():  # one old bucket at a time
            tw.write_arrow(batch)
        messages = tw.prepare_commit()
        strays = {m.partition for m in messages} - chosen
        if strays:  # e.g. a default value filled into a NULL partition column by the read
            raise PaimonError(
                f"rescale: rows of the rewritten partitions would land in {len(strays)} other partition(s); "
                "nothing was committed"
            )
        messages, compacted, obsolete = _compact_buckets(table, messages)
        messages += _emptied_partitions(table, plan, base, {m.partition for m in messages})
        if before_commit is not None:
            before_commit()
        snap = commit_partition_rewrite(commit, messages, base, chosen)
    except BaseException as e:
        if isinstance(e, CommitConflict) or not commit.may_have_published():
            delete_written(table, compacted)
            tw.abort()
        raise
    commit.abort(obsolete)  # level-0 files the compaction replaced, compaction changelog: never committed
    result.snapshot_id = snap.id if snap is not None else None
    result.commit_kind = snap.commit_kind if snap is not None else None
    for m in messages:
        result.files_out += len(m.new_files)
        result.rows_out += sum(f.row_count for f in m.new_files)
        result.bytes_out += sum(f.file_size for f in m.new_files)


def _compact_buckets(
    table: FileStoreTable, messages: list[CommitMessage]
) -> tuple[list[CommitMessage], list[Any], list[CommitMessage]]:
    """Primary-key buckets fully compacted to the top level before the commit:
    (messages to commit, UnitResults, messages of files written but not to commit)."""
    if not table.schema.primary_keys:
        return messages, [], []
    units = [u for u in (pick_bucket_unit(table, m.partition, m.bucket, m.total_buckets, m.new_files, (), full=True)
                         for m in messages if m.new_files) if u is not None]
    try:
        results = run_local(table, units) if units else []
    except UnitsFailed as failed:
        delete_written(table, failed.results)
        raise failed.error from None
    by_bucket = {(r.unit.partition, r.unit.bucket): r for r in results}
    out: list[CommitMessage] = []
    obsolete: list[CommitMessage] = []
    for m in messages:
        r = by_bucket.get((m.partition, m.bucket))
        if r is None:
            out.append(m)
            continue
        replaced = {f.file_name for f in r.before}
        kept = {f.file_name for f in r.after}
        new_files: list[DataFileMeta] = [f for f in m.new_files if f.file_name not in replaced] + list(r.after)
        out.append(CommitMessage(m.partition, m.bucket, m.total_buckets, new_files=new_files,
                                 new_index_files=[*m.new_index_files, *r.new_index_files]))
        gone = [f for f in r.before if f.file_name not in kept]
        if gone or r.changelog:
            obsolete.append(CommitMessage(m.partition, m.bucket, m.total_buckets, new_files=gone,
                                          changelog_files=list(r.changelog)))
    return out, results, obsolete


def _emptied_partitions(
    table: FileStoreTable, plan: RescalePlan, base: Snapshot, written: set[bytes]
) -> list[CommitMessage]:
    """Partitions whose merged view is empty (every row deleted) get no new files: the dynamic
    overwrite would not touch them, so their files and index files are deleted explicitly."""
    empty = [p for p in plan.partitions if p.partition not in written]
    if not empty:
        return []
    wanted = {p.partition for p in empty}
    index: dict[tuple[bytes, int], list[Any]] = {}
    for ie in FileStoreScan(table).index_entries(base):
        if ie.partition in wanted:
            index.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    out = []
    for p in empty:
        by_bucket: dict[int, list[DataFileMeta]] = {}
        for e in p.entries:
            by_bucket.setdefault(e.bucket, []).append(e.file)
        for bucket, files in sorted(by_bucket.items()):
            out.append(CommitMessage(p.partition, bucket, p.current_buckets, deleted_files=files,
                                     deleted_index_files=index.pop((p.partition, bucket), [])))
        for (part, bucket), index_files in sorted(index.items()):
            if part == p.partition:  # index files of buckets without data files
                out.append(CommitMessage(part, bucket, p.current_buckets, deleted_index_files=index_files))
    return out


def describe(result: RescaleResult, identifier: str) -> str:
    """The one-line summary ``rescale`` prints on stderr."""
    p = result.plan
    n = len(p.partitions)
    what = f"{n} partition(s) of {identifier}" if n != 1 or p.partitions[0].label else identifier
    dry = result.dry_run
    parts = []
    if dry and p.sets_option:
        parts.append(f"would set bucket={p.new_buckets} (now {p.bucket_option})")
    elif result.schema_id is not None:
        parts.append(f"set bucket={p.new_buckets} (schema {result.schema_id})")
    if n and dry:
        parts.append(f"would rewrite {what} into {p.new_buckets} buckets")
    elif n:
        parts.append(f"rewrote {what} into {p.new_buckets} buckets: snapshot {result.snapshot_id}")
    elif p.base_snapshot is None:
        parts.append(f"{identifier} has no data to rewrite")
    else:
        parts.append(f"nothing to rewrite: every selected partition of {identifier} has {p.new_buckets} buckets")
    return "; ".join(parts) + (" (dry run, nothing changed)" if dry else "")


__all__ = [
    "PLAN_COLUMNS",
    "RESULT_COLUMNS",
    "PartitionRescale",
    "RescalePlan",
    "RescaleResult",
    "describe",
    "execute_rescale",
    "plan_rescale",
    "rescale",
]
