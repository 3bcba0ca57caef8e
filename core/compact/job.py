"""The compaction job: plan units on the driver, run them on an engine, commit ONE snapshot.

Java splits dedicated compaction the same way (``CompactAction``: a planner on the driver,
one compaction task per bucket, a single committer). Here:

1. :func:`plan_compaction` reads the latest snapshot once (the *base*), keeps the partitions
   the user selected (``--partition`` specs or a ``--where`` on partition columns), asks the
   table's planner for units -- the merge-tree strategy per bucket for primary-key tables
   (:func:`core.mergetree.compact_strategy.pick_unit`), the append planner for append tables
   (:func:`core.compact.append.plan_append_units`) -- and applies the ``--max-bytes`` /
   ``--max-buckets`` budgets, neediest buckets first.
2. :func:`compact_table` runs the units in-process (:mod:`.local`) or as Spark tasks
   (:mod:`.spark`), then commits every UnitResult as one COMPACT snapshot. The commit
   re-reads the latest snapshot on every attempt, so appends committed meanwhile are fine;
   if an input file was removed or rewritten by someone else the commit raises
   CommitConflict (exit 5). On any failure every file the units wrote is deleted again.

``--engine auto`` picks Spark only when it can pay for the JVM start: the plan rewrites at
least :data:`AUTO_SPARK_MIN_BYTES` in at least :data:`AUTO_SPARK_MIN_UNITS` units (one unit
gains nothing from more processes), the machine has more CPUs than the local engine's
threads (measured on 2 cores: 64 units took 5.5 s on local threads, 8.9 s on Spark
``local[2]`` with its session start), and pyspark plus a ``java`` are installed; a
``--spark-master``/``--spark-conf`` also selects Spark.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import os
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotYetSupported
from ..mergetree.compact_unit import APPEND, MERGE_TREE, CompactUnit, UnitResult
from ..operation.bucket_layout import check_entries_layout
from ..operation.partition_spec import parse_partition_specs, partition_filter, partition_label
from .local import DEFAULT_LOCAL_THREADS, Progress, UnitsFailed, delete_written

if TYPE_CHECKING:
    from ..manifest.manifest import DataFileMeta, ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable

log = logging.getLogger(__name__)

AUTO_SPARK_MIN_BYTES = 1 << 30  # 1 GiB rewritten
AUTO_SPARK_MIN_UNITS = 4
ENGINES = ("auto", "local", "spark")
ORDER_STRATEGIES = ("order", "zorder", "hilbert")

PLAN_COLUMNS = ["partition", "bucket", "sorted_runs", "levels", "files", "bytes_to_rewrite", "output_level",
                "files_after", "reason"]
RESULT_COLUMNS = ["snapshot_id", "commit_kind", "units", "files_in", "files_out", "bytes_in", "bytes_out",
                  "rows_in", "rows_out", "seconds", "engine", "engine_reason", "message"]


# ---------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------


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

    @property
    def bytes_in(self) -> int:
        return sum(u.bytes_in for u in self.units)

    @property
    def files_in(self) -> int:
        return sum(len(u.files) for u in self.units)


@dataclass
class CompactResult:
    """What ``compact`` did (or, with ``plan_only``, would do)."""

    snapshot_id: int | None = None
    commit_kind: str | None = None
    units: int = 0
    files_in: int = 0
    files_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    rows_in: int = 0
    rows_out: int = 0
    seconds: float = 0.0
    engine: str | None = None
    engine_reason: str = ""
    message: str = ""
    plan: CompactPlan | None = None
    snapshots: list[int] = field(default_factory=list)

    def as_row(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in RESULT_COLUMNS} | {"seconds": round(self.seconds, 3)}


# ---------------------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------------------


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
) -> CompactPlan:
    """Units for the latest snapshot (no I/O beyond metadata).

    ``partitions``: ``--partition`` strings (``k=v,k2=v2;k=v3``) or already parsed specs.
    """
    schema = table.schema
    specs: list[dict[str, str]] | None = None
    if partitions:
        if all(isinstance(p, str) for p in partitions):
            specs = parse_partition_specs(list(partitions), schema)  # type: ignore[arg-type]
        else:
            specs = [dict(p) for p in partitions]  # type: ignore[arg-type]
            parse_partition_specs([",".join(f"{k}={v}" for k, v in s.items()) for s in specs], schema)
    if max_bytes is not None and max_bytes <= 0:
        raise InvalidInput(f"--max-bytes {max_bytes}: must be positive")
    if max_buckets is not None and max_buckets <= 0:
        raise InvalidInput(f"--max-buckets {max_buckets}: must be positive")
    pfilter = partition_filter(schema, specs, where)
    _check_compactable(table)

    base = table.snapshot_manager.latest_snapshot()
    plan = CompactPlan(base)
    if base is None:
        return plan
    entries = table.store_scan.plan(base)
    if pfilter is not None:
        entries = [e for e in entries if pfilter(e.partition)]
    if not entries:
        return plan
    check_entries_layout(table, entries, "compact")  # Java's compaction writer refuses these too

    by_bucket: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        by_bucket.setdefault((e.partition, e.bucket), []).append(e)

    if schema.primary_keys:
        candidates = _plan_merge_tree(table, base, by_bucket, full)
    else:
        from .append import plan_append_units

        candidates = list(plan_append_units(table, entries, full, snapshot=base))

    # neediest first: most sorted runs (files for append), then most bytes
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
    target = table.options.target_file_size(bool(schema.primary_keys))
    plan.rows = [_plan_row(schema, u, target, by_bucket, None) for u in plan.units]
    for u in plan.deferred:
        why = "--max-buckets" if max_buckets is not None and len(plan.units) >= max_buckets else "--max-bytes"
        plan.rows.append(_plan_row(schema, u, target, by_bucket, f"deferred by {why} budget"))
    return plan


def _check_compactable(table: FileStoreTable) -> None:
    from ..io import paths

    schema = table.schema
    if schema.bucket == paths.POSTPONE_BUCKET:
        raise NotYetSupported("compact: bucket=-2 (postpone) tables are not supported yet")
    opts = table.options
    if opts.get_bool("row-tracking.enabled") or opts.get_bool("data-evolution.enabled"):
        raise NotYetSupported("compact: row-tracking / data-evolution tables are not supported yet")


def _dv_index_files(table: FileStoreTable, snapshot: Snapshot) -> dict[tuple[bytes, int], tuple[Any, ...]]:
    from ..manifest.index_manifest import DELETION_VECTORS_INDEX

    out: dict[tuple[bytes, int], list[Any]] = {}
    for ie in table.store_scan.index_entries(snapshot):
        if ie.index_file.index_type == DELETION_VECTORS_INDEX:
            out.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    return {k: tuple(v) for k, v in out.items()}


def _plan_merge_tree(
    table: FileStoreTable,
    base: Snapshot,
    by_bucket: Mapping[tuple[bytes, int], list[ManifestEntry]],
    full: bool,
) -> list[CompactUnit]:
    index = _dv_index_files(table, base)
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
    index_files: Sequence[Any],
    full: bool,
) -> CompactUnit | None:
    """The merge-tree unit of one bucket, complete with the bucket context executors need."""
    from ..mergetree.compact_strategy import pick_unit
    from ..mergetree.levels import Levels, key_function

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


# ---------------------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------------------


def spark_available() -> str | None:
    """None when the Spark engine can run here, else why not."""
    import importlib.util
    import os
    import shutil

    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'paimon-cli[spark]')"
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        return "no java on PATH (Spark needs a JDK 8/11/17)"
    return None


def choose_engine(
    engine: str, plan: CompactPlan, spark_master: str | None, spark_conf: Mapping[str, str] | None
) -> tuple[str, str]:
    """(engine, why) for ``--engine``; see the module docstring for the ``auto`` rule."""
    if engine not in ENGINES:
        raise InvalidInput(f"--engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if engine == "local":
        if spark_master or spark_conf:
            raise InvalidInput("--spark-master/--spark-conf need --engine spark (or auto)")
        return "local", "--engine local"
    if engine == "spark":
        why_not = spark_available()
        if why_not:
            raise InvalidInput(f"--engine spark: {why_not}")
        return "spark", "--engine spark"
    if spark_master or spark_conf:
        why_not = spark_available()
        if why_not:
            raise InvalidInput(f"--spark-master/--spark-conf: {why_not}")
        return "spark", "Spark options were given"
    size, n = plan.bytes_in, len(plan.units)
    what = f"{_human(size)} in {n} unit{'s' if n != 1 else ''}"
    if size >= AUTO_SPARK_MIN_BYTES and n >= AUTO_SPARK_MIN_UNITS:
        cpus = os.cpu_count() or 1
        if cpus <= DEFAULT_LOCAL_THREADS:
            return "local", (f"large plan ({what}) but only {cpus} CPUs: the local engine's threads use them "
                             "without Spark's start-up cost")
        why_not = spark_available()
        if why_not:
            return "local", f"large plan ({what}) but {why_not}"
        return "spark", f"large plan ({what}: >= {_human(AUTO_SPARK_MIN_BYTES)} and >= {AUTO_SPARK_MIN_UNITS} units)"
    return "local", f"small plan ({what}: < {_human(AUTO_SPARK_MIN_BYTES)} or < {AUTO_SPARK_MIN_UNITS} units)"


def _human(n: int) -> str:
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if size < 1024 or unit == "TiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{n} B"


def run_units(
    table: FileStoreTable,
    units: Sequence[CompactUnit],
    engine: str,
    *,
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    parallelism: int | None = None,
    progress: Progress | None = None,
) -> list[UnitResult]:
    """Execute units on the chosen engine; raises UnitsFailed with the finished results."""
    if engine == "spark":
        from .spark import run_spark

        return run_spark(table, units, master=spark_master, conf=spark_conf, parallelism=parallelism,
                         progress=progress)
    from .local import run_local

    return run_local(table, units, parallelism, progress)


# ---------------------------------------------------------------------------------------
# The job
# ---------------------------------------------------------------------------------------


def compact_table(
    table: FileStoreTable,
    *,
    full: bool = False,
    partitions: Sequence[str] | None = None,
    where: str | None = None,
    max_bytes: int | None = None,
    max_buckets: int | None = None,
    order_strategy: str | None = None,
    order_by: Sequence[str] | None = None,
    engine: str = "auto",
    spark_master: str | None = None,
    spark_conf: Mapping[str, str] | None = None,
    parallelism: int | None = None,
    plan_only: bool = False,
    expire: bool = True,
    progress: Progress | None = None,
    commit_user: str | None = None,
) -> CompactResult:
    """Plan, run and commit one compaction of ``table``; nothing is committed on any error."""
    started = time.monotonic()
    if parallelism is not None and parallelism <= 0:
        raise InvalidInput(f"--parallelism {parallelism}: must be positive")
    if engine not in ENGINES:
        raise InvalidInput(f"--engine {engine!r}: expected one of {', '.join(ENGINES)}")
    if order_strategy is not None or order_by:
        return _sort_compact(table, order_strategy, order_by, partitions, where, plan_only, expire, started,
                             commit_user, progress, engine, max_bytes, max_buckets, full)

    plan = plan_compaction(table, full=full, partitions=partitions, where=where, max_bytes=max_bytes,
                           max_buckets=max_buckets)
    result = CompactResult(plan=plan, units=len(plan.units))
    result.files_in = plan.files_in
    result.bytes_in = plan.bytes_in
    result.rows_in = sum(u.rows_in for u in plan.units)
    if not plan.units:
        result.message = _nothing_message(plan)
        result.seconds = time.monotonic() - started
        return result
    name, why = choose_engine(engine, plan, spark_master, spark_conf)
    result.engine, result.engine_reason = name, why
    if plan_only:
        result.message = f"plan only: {len(plan.units)} unit(s), nothing written"
        result.seconds = time.monotonic() - started
        return result

    try:
        results = run_units(table, plan.units, name, spark_master=spark_master, spark_conf=spark_conf,
                            parallelism=parallelism, progress=progress)
    except UnitsFailed as failed:
        delete_written(table, failed.results)
        raise failed.error from None
    snapshot = commit_results(table, results, commit_user)
    _fill_counts(result, results)
    if snapshot is None:
        result.message = "the units changed nothing; no snapshot committed"
    else:
        result.snapshot_id = snapshot.id
        result.commit_kind = snapshot.commit_kind
        result.snapshots = [snapshot.id]
        result.message = f"compacted {len(results)} unit(s) into snapshot {snapshot.id}"
        if expire:
            # a dedicated compaction job expires even on write-only tables (Java's compact
            # action runs on a write-only=false copy of the table)
            warning = expire_after(table, {"write-only": "false"})
            if warning:
                result.message += f"; {warning}"
    result.seconds = time.monotonic() - started
    return result


def _nothing_message(plan: CompactPlan) -> str:
    if plan.base_snapshot is None:
        return "the table has no snapshot; nothing to compact"
    if plan.deferred:
        return f"nothing fits the budget ({len(plan.deferred)} unit(s) deferred); nothing committed"
    return "nothing to compact; nothing committed"


def _fill_counts(result: CompactResult, results: Sequence[UnitResult]) -> None:
    files_in = files_out = bytes_in = bytes_out = rows_in = rows_out = 0
    for r in results:
        after = {f.file_name for f in r.after}
        before = {f.file_name for f in r.before}
        for f in r.before:
            if f.file_name not in after:  # an upgraded file is neither read nor written
                files_in += 1
                bytes_in += f.file_size
                rows_in += f.row_count
        for f in r.after:
            if f.file_name not in before:
                files_out += 1
                bytes_out += f.file_size
        rows_out += r.rows_out
    result.files_in, result.files_out = files_in, files_out
    result.bytes_in, result.bytes_out = bytes_in, bytes_out
    result.rows_in, result.rows_out = rows_in, rows_out


def commit_results(
    table: FileStoreTable,
    results: Sequence[UnitResult],
    commit_user: str | None = None,
    commit_kind: str = "COMPACT",
) -> Snapshot | None:
    """Publish the results as one snapshot; on any failure delete what the units wrote."""
    from ..operation.commit import FileStoreCommit

    messages = [m for m in (r.commit_message() for r in results) if not m.is_empty()]
    if not messages:
        delete_written(table, results)
        return None
    commit = FileStoreCommit(table, commit_user)
    try:
        # the commit itself refuses when a bucket's deletion vectors changed since planning
        return commit.commit(messages, commit_kind)
    except BaseException:
        if not commit.may_have_published():
            delete_written(table, results)
        raise


def expire_after(table: FileStoreTable, options_overrides: Mapping[str, str] | None = None) -> str | None:
    """Java's post-commit maintenance (snapshot, partition and tag expiry; see
    :mod:`core.operation.maintenance`); returns the warnings as one line, or None.

    A refused expiration never undoes the commit: it is reported, not raised.
    """
    from ..operation.maintenance import after_commit

    warnings = after_commit(table, options_overrides)
    return "; ".join(warnings) if warnings else None


# ---------------------------------------------------------------------------------------
# Sort compaction (append tables)
# ---------------------------------------------------------------------------------------


def parse_order_by(order_by: Sequence[str] | str | None) -> list[str]:
    if order_by is None:
        return []
    items = [order_by] if isinstance(order_by, str) else list(order_by)
    cols = [c.strip() for item in items for c in item.split(",")]
    if any(not c for c in cols):
        raise InvalidInput(f"--order-by {','.join(items)!r}: empty column name")
    return cols


def _sort_compact(
    table: FileStoreTable,
    strategy: str | None,
    order_by: Sequence[str] | None,
    partitions: Sequence[str] | None,
    where: str | None,
    plan_only: bool,
    expire: bool,
    started: float,
    commit_user: str | None,
    progress: Progress | None,
    engine: str,
    max_bytes: int | None,
    max_buckets: int | None,
    full: bool,
) -> CompactResult:
    cols = parse_order_by(order_by)
    if strategy is None or not cols:
        raise InvalidInput("sort compaction needs both --order-strategy and --order-by")
    strategy = strategy.lower()
    if strategy not in ORDER_STRATEGIES:
        raise InvalidInput(f"--order-strategy {strategy!r}: expected one of {', '.join(ORDER_STRATEGIES)}")
    if engine == "spark":
        raise InvalidInput("sort compaction runs locally; --engine spark does not apply")
    if max_bytes is not None or max_buckets is not None:
        raise InvalidInput("--max-bytes/--max-buckets do not apply to sort compaction (whole partitions)")
    schema = table.schema
    from .sort import check_sortable_table

    check_sortable_table(table)
    names = set(schema.field_names)
    unknown = [c for c in cols if c not in names]
    if unknown:
        raise InvalidInput(f"--order-by: {unknown[0]!r} is not a column of {table.identifier}")
    specs = parse_partition_specs(list(partitions), schema) if partitions else None
    from .sort import sort_compact

    def sort_progress(done: int, total: int, rows: int) -> None:
        if progress is not None:
            progress("done", None, done, total)

    out = sort_compact(table, strategy, cols, partitions=specs, where=where, plan_only=plan_only,
                       commit_user=commit_user, progress=sort_progress)
    result = CompactResult(snapshot_id=out.snapshot_id, commit_kind=out.commit_kind, units=out.units,
                           files_in=out.files_in, files_out=out.files_out, bytes_in=out.bytes_in,
                           bytes_out=out.bytes_out, rows_in=out.rows_in, rows_out=out.rows_out,
                           engine="local", engine_reason="sort compaction runs in-process")
    by = f"{strategy}({','.join(out.order_by)})"
    if plan_only:
        result.plan = _sort_plan(table, out, by)
        result.message = f"plan only: sort {len(out.partitions)} partition(s) by {by}, nothing written"
    elif result.snapshot_id is not None:
        result.snapshots = [result.snapshot_id]
        result.message = (f"sorted {len(out.partitions)} partition(s) by {by} into snapshot "
                          f"{result.snapshot_id}")
        if expire:
            warning = expire_after(table, {"write-only": "false"})
            if warning:
                result.message += f"; {warning}"
    else:
        result.message = "nothing to sort; nothing committed"
    result.seconds = time.monotonic() - started
    return result


def _sort_plan(table: FileStoreTable, out: Any, by: str) -> CompactPlan:
    """Plan rows of a sort compaction: one per partition to rewrite."""
    sm = table.snapshot_manager
    base = sm.snapshot(out.base_snapshot_id) if out.base_snapshot_id is not None else None
    plan = CompactPlan(base)
    if base is None:
        return plan
    wanted = set(out.partitions)
    groups: dict[str, list[DataFileMeta]] = {}
    for e in table.store_scan.plan(base):
        label = partition_label(table.schema, e.partition)
        if label in wanted:
            groups.setdefault(label, []).append(e.file)
    target = table.options.target_file_size(False)
    for label in out.partitions:
        files = groups.get(label, [])
        size = sum(f.file_size for f in files)
        plan.rows.append(PlanRow(label, 0, len(files), levels_label(files), len(files), size, None,
                                 max(1, math.ceil(size / max(target, 1))), f"sort by {by}"))
    return plan
