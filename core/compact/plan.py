"""Planning a compaction job: which buckets to compact, read from metadata only.

:func:`plan_compaction` reads the latest snapshot once (the *base*), keeps the partitions the
user selected (``--partition`` specs or a ``--where`` on partition columns), asks the table's
planner for units -- the merge-tree strategy per bucket for primary-key tables
(:func:`core.mergetree.compact_strategy.pick_unit`), the append planner for append tables
(:func:`core.compact.append.plan_append_units`; partitions already expired are skipped
with ``compaction.skip-expired-partitions``) -- and applies the ``--max-bytes`` /
``--max-buckets`` budgets, neediest buckets first. The plan's rows are what ``compact --plan``
prints.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotYetSupported
from ..io import paths
from ..manifest.index_manifest import DELETION_VECTORS_INDEX
from ..mergetree import file_writer
from ..mergetree.compact_strategy import pick_unit
from ..mergetree.compact_unit import APPEND, MERGE_TREE, CompactUnit
from ..mergetree.levels import Levels, key_function
from ..operation.bucket_layout import check_entries_layout
from ..operation.partition_entries import last_file_creation_times
from ..operation.partition_expire import expired_partitions_to_skip
from ..operation.partition_spec import parse_partition_specs, partition_filter, partition_label, selected_entries
from ..operation.row_tracking import check_row_tracking_table, is_data_evolution
from ..operation.scan import FileStoreScan
from .postpone import PostponedPartition, plan_postponed

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexFileMeta
    from ..manifest.manifest import DataFileMeta, ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable



@dataclass
class PlanRow:
    """One bucket (or append bin) of a plan, as ``compact --plan`` prints it."""

    partition: str
    bucket: int
    sorted_runs: int
    levels: str
    files: int
    bytes_to_rewrite: int
    output_level: int | None
    files_after: int
    reason: str

    def as_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class CompactPlan:
    """Units to run, planned from ``base_snapshot`` (None: the table has no snapshot)."""

    base_snapshot: Snapshot | None
    units: list[CompactUnit] = field(default_factory=list)
    rows: list[PlanRow] = field(default_factory=list)  # units first, then deferred ones
    deferred: list[CompactUnit] = field(default_factory=list)  # over --max-bytes / --max-buckets
    # postpone tables: staged files to move into real buckets (core.compact.postpone)
    postponed: list[PostponedPartition] = field(default_factory=list)
    busy_partitions: int = 0  # left out by --partition-idle-time: new files within the idle time

    @property
    def bytes_in(self) -> int:
        return sum(u.bytes_in for u in self.units)

    @property
    def files_in(self) -> int:
        return sum(len(u.files) for u in self.units)


def sorted_runs_of(files: Sequence[DataFileMeta]) -> int:
    """Sorted runs of a bucket: one per level-0 file plus one per non-empty level >= 1."""
    return sum(1 for f in files if f.level == 0) + len({f.level for f in files if f.level > 0})


def levels_label(files: Sequence[DataFileMeta]) -> str:
    """``L0:3 L5:1`` -- file counts per level."""
    counts: dict[int, int] = {}
    for f in files:
        counts[f.level] = counts.get(f.level, 0) + 1
    return " ".join(f"L{lv}:{n}" for lv, n in sorted(counts.items()))


def plan_compaction(
    table: FileStoreTable,
    *,
    full: bool = False,
    partitions: Sequence[str] | Sequence[Mapping[str, str]] | None = None,
    where: str | None = None,
    max_bytes: int | None = None,
    max_buckets: int | None = None,
    partition_idle_millis: int | None = None,
) -> CompactPlan:
    """Units for the latest snapshot (no I/O beyond metadata).

    ``partitions``: ``--partition`` strings (``k=v,k2=v2;k=v3``) or already parsed specs;
    ``partition_idle_millis``: only partitions whose newest file is at least that old.
    """
    schema = table.schema
    specs = _partition_specs(schema, partitions)
    if max_bytes is not None and max_bytes <= 0:
        raise InvalidInput(f"--max-bytes {max_bytes}: must be positive")
    if max_buckets is not None and max_buckets <= 0:
        raise InvalidInput(f"--max-buckets {max_buckets}: must be positive")
    pfilter = partition_filter(schema, specs, where, command="compact")
    _check_compactable(table)
    if schema.bucket == paths.POSTPONE_BUCKET and pfilter is not None:
        # Java's Flink and Spark postpone compactions refuse both (checkArgument / assert)
        raise NotYetSupported("compact --partition/--where: a postpone-bucket table (bucket = -2) is compacted "
                              "as a whole, as Java's postpone compaction does")
    if schema.bucket == paths.POSTPONE_BUCKET and partition_idle_millis is not None:
        # Java's postpone compaction ignores partition_idle_time: refuse rather than compact busy partitions
        raise NotYetSupported("compact --partition-idle-time: a postpone-bucket table (bucket = -2) is compacted "
                              "as a whole, as Java's postpone compaction does")

    base = table.snapshot_manager.latest_snapshot()
    plan = CompactPlan(base)
    # the partition filter runs on the manifests' Arrow tables, before any entry object is built
    all_entries = selected_entries(table, base, pfilter)
    if base is None:
        return plan
    entries = all_entries
    skipped = expired_partitions_to_skip(table, entries)
    if skipped:
        entries = [e for e in entries if e.partition not in skipped]
    if partition_idle_millis is not None:
        entries = _idle_only(plan, table, base, entries, partition_idle_millis)
    if schema.bucket == paths.POSTPONE_BUCKET:
        entries = _plan_postponed(plan, table, entries, all_entries, max_bytes, max_buckets)
    if not entries:
        return plan
    check_entries_layout(table, entries, "compact")  # Java's compaction writer refuses these too

    by_bucket: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        by_bucket.setdefault((e.partition, e.bucket), []).append(e)
    if schema.primary_keys:
        candidates = _plan_merge_tree(table, base, by_bucket, full)
    elif is_data_evolution(table.options):
        from .data_evolution import plan_data_evolution_units  # each table kind's planner loads for it only

        candidates = plan_data_evolution_units(table, entries)
    else:
        from .append import plan_append_units

        candidates = list(plan_append_units(table, entries, full, snapshot=base))
    _apply_budget(plan, candidates, max_bytes, max_buckets)
    target = table.options.target_file_size(bool(schema.primary_keys))
    plan.rows += [_plan_row(schema, u, target, by_bucket, None) for u in plan.units]
    for u in plan.deferred:
        why = "--max-buckets" if max_buckets is not None and len(plan.units) >= max_buckets else "--max-bytes"
        plan.rows.append(_plan_row(schema, u, target, by_bucket, f"deferred by {why} budget"))
    return plan


def _plan_postponed(plan: CompactPlan, table: FileStoreTable, entries: list[ManifestEntry],
                    all_entries: list[ManifestEntry], max_bytes: int | None,
                    max_buckets: int | None) -> list[ManifestEntry]:
    """Postpone tables: the staged files go into ``plan.postponed``; returns the real-bucket
    entries left to the ordinary planner (partitions with staged files excluded: the replay
    compacts the buckets it writes there)."""
    plan.postponed = plan_postponed(table, entries, all_entries)
    if not plan.postponed:
        return [e for e in entries if e.bucket != paths.POSTPONE_BUCKET]
    if max_bytes is not None or max_buckets is not None:
        raise NotYetSupported("compact --max-bytes/--max-buckets: a postpone-bucket compaction moves every staged "
                              "file at once, as Java's does")
    target = table.options.target_file_size(True)
    for p in plan.postponed:
        plan.rows.append(PlanRow(
            partition=partition_label(table.schema, p.partition), bucket=paths.POSTPONE_BUCKET,
            sorted_runs=len(p.files), levels=levels_label(p.files), files=len(p.files), bytes_to_rewrite=p.bytes,
            output_level=0, files_after=p.buckets * max(1, math.ceil(p.bytes / max(target, 1) / p.buckets)),
            reason=f"postpone: {p.rows} staged row(s) into {p.buckets} bucket(s)"))
    staged = {p.partition for p in plan.postponed}
    return [e for e in entries if e.bucket != paths.POSTPONE_BUCKET and e.partition not in staged]


def _idle_only(plan: CompactPlan, table: FileStoreTable, base: Snapshot, entries: list[ManifestEntry],
               idle_millis: int) -> list[ManifestEntry]:
    """The entries of partitions that received no new file for ``idle_millis``: Java's
    ``PartitionEntry.lastFileCreationTime`` (newest ``_CREATION_TIME`` over the snapshot's
    entries, deleted ones too) at or before now minus the idle time. Both sides are wall
    clocks, as Java compares them after mapping each through the same zone; a partition
    whose files carry no creation time cannot be shown idle and is left alone."""
    cutoff = file_writer.creation_time_millis() - idle_millis
    last = last_file_creation_times(table, base)
    idle = {p for p, t in last.items() if t is not None and t <= cutoff}
    plan.busy_partitions = len({e.partition for e in entries} - idle)
    return [e for e in entries if e.partition in idle]


def _partition_specs(
    schema: TableSchema, partitions: Sequence[str] | Sequence[Mapping[str, str]] | None
) -> list[dict[str, str]] | None:
    """``--partition`` strings parsed, or given specs checked the same way."""
    if not partitions:
        return None
    if all(isinstance(p, str) for p in partitions):
        return parse_partition_specs(list(partitions), schema)  # type: ignore[arg-type]
    specs = [dict(p) for p in partitions]  # type: ignore[arg-type]
    parse_partition_specs([",".join(f"{k}={v}" for k, v in s.items()) for s in specs], schema)
    return specs


def _apply_budget(
    plan: CompactPlan, candidates: list[CompactUnit], max_bytes: int | None, max_buckets: int | None
) -> None:
    """Neediest first (most sorted runs -- files for append --, then most bytes) into
    ``plan.units`` while the budgets allow, the rest into ``plan.deferred``."""

    def need(u: CompactUnit) -> tuple[int, int]:
        runs = sorted_runs_of(u.bucket_files or u.files) if u.kind == MERGE_TREE else len(u.files)
        return (-runs, -u.bytes_in)

    candidates.sort(key=need)
    budget = max_bytes
    for u in candidates:
        if max_buckets is not None and len(plan.units) >= max_buckets:
            plan.deferred.append(u)
        elif budget is not None and u.bytes_in > budget:
            plan.deferred.append(u)
        else:
            plan.units.append(u)
            if budget is not None:
                budget -= u.bytes_in


def _check_compactable(table: FileStoreTable) -> None:
    check_row_tracking_table(table.schema, table.options, "compact")  # compaction keeps every row's id
    if is_data_evolution(table.options):
        from .data_evolution import check_data_evolution_compactable

        check_data_evolution_compactable(table)


def dv_index_files(table: FileStoreTable, snapshot: Snapshot) -> dict[tuple[bytes, int], tuple[IndexFileMeta, ...]]:
    """The live deletion-vector index files of ``snapshot`` per (partition, bucket)."""
    out: dict[tuple[bytes, int], list[IndexFileMeta]] = {}
    for ie in FileStoreScan(table).index_entries(snapshot):
        if ie.index_file.index_type == DELETION_VECTORS_INDEX:
            out.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    return {k: tuple(v) for k, v in out.items()}


def _plan_merge_tree(
    table: FileStoreTable,
    base: Snapshot,
    by_bucket: Mapping[tuple[bytes, int], list[ManifestEntry]],
    full: bool,
) -> list[CompactUnit]:
    index = dv_index_files(table, base)
    units = []
    for (partition, bucket), group in sorted(by_bucket.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        files = [e.file for e in group]
        unit = pick_bucket_unit(table, partition, bucket, group[0].total_buckets, files,
                                index.get((partition, bucket), ()), full)
        if unit is not None:
            units.append(unit)
    return units


def pick_bucket_unit(
    table: FileStoreTable,
    partition: bytes,
    bucket: int,
    total_buckets: int,
    files: Sequence[DataFileMeta],
    index_files: Sequence[IndexFileMeta],
    full: bool,
) -> CompactUnit | None:
    """The merge-tree unit of one bucket, complete with the bucket context executors need."""
    opts = table.options
    key_types = [f.type for f in table.schema.logical_trimmed_primary_keys_type.fields]
    levels = Levels(list(files), opts.num_levels, key_function(key_types))
    dv_files = {m.data_file_name for f in index_files for m in (f.dv_ranges or ())}
    unit = pick_unit(opts, levels, full, partition=partition, bucket=bucket, total_buckets=total_buckets,
                     index_files=tuple(index_files), dv_files=dv_files)
    if unit is None or not unit.files:
        return None
    return unit


def _plan_row(
    schema: TableSchema,
    u: CompactUnit,
    target: int,
    by_bucket: Mapping[tuple[bytes, int], list[ManifestEntry]],
    deferred: str | None,
) -> PlanRow:
    bucket_files = list(u.bucket_files) or [e.file for e in by_bucket.get((u.partition, u.bucket), [])]
    expected_out = max(1, math.ceil(u.bytes_in / max(target, 1))) if u.files else 0
    if u.kind == APPEND and not bucket_files:
        bucket_files = list(u.files)
    files_after = max(0, len(bucket_files) - len(u.files)) + expected_out
    return PlanRow(
        partition=partition_label(schema, u.partition),
        bucket=u.bucket,
        sorted_runs=sorted_runs_of(bucket_files) if u.kind == MERGE_TREE else len(bucket_files),
        levels=levels_label(bucket_files),
        files=len(u.files),
        bytes_to_rewrite=u.bytes_in,
        output_level=u.output_level if u.kind == MERGE_TREE else None,
        files_after=files_after,
        reason=deferred or u.reason,
    )
