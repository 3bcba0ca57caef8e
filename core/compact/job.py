"""The compaction job: plan units on the driver, run them on an engine, commit ONE snapshot.

Java splits dedicated compaction the same way (``CompactAction``: a planner on the driver,
one compaction task per bucket, a single committer). Here:

1. :func:`core.compact.plan.plan_compaction` reads the latest snapshot once and picks the
   units (metadata only; partition selection and budgets);
2. :func:`compact_table` runs the units in-process (:mod:`.local`) or as Spark tasks
   (:mod:`.spark`), then commits every UnitResult as one COMPACT snapshot. The commit
   re-reads the latest snapshot on every attempt, so appends committed meanwhile are fine;
   if an input file was removed or rewritten by someone else the commit raises
   CommitConflict (exit 5). On any failure every file the units wrote is deleted again.
   ``--order-strategy`` hands the job to sort compaction (:mod:`.sort`) instead.

``--engine auto`` picks Spark only when it can pay for the JVM start: the plan rewrites at
least :data:`AUTO_SPARK_MIN_BYTES` in at least :data:`AUTO_SPARK_MIN_UNITS` units (one unit
gains nothing from more processes), the machine has more CPUs than the local engine's
threads (measured on 2 cores: 64 units took 5.5 s on local threads, 8.9 s on Spark
``local[2]`` with its session start), and pyspark plus a ``java`` are installed; a
``--spark-master``/``--spark-conf`` also selects Spark.
"""

from __future__ import annotations

import importlib.util
import logging
import math
import os
import shutil
import time
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..io import paths
from ..mergetree.compact_unit import CompactUnit, UnitResult
from ..mergetree.file_writer import external_paths_of, written_index_note
from ..operation.commit import FileStoreCommit
from ..operation.maintenance import after_commit
from ..operation.partition_spec import parse_partition_specs, partition_label
from ..operation.row_tracking import is_data_evolution
from ..operation.scan import FileStoreScan
from ..schema.options import memory_text
from ..utils.suggest import did_you_mean
from . import postpone
from .local import DEFAULT_LOCAL_THREADS, Progress, UnitsFailed, delete_written, run_local
from .plan import CompactPlan, PlanRow, levels_label, plan_compaction

if TYPE_CHECKING:
    from ..manifest.manifest import DataFileMeta
    from ..operation.write import TableWrite
    from ..refs.snapshot import Snapshot
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
# what a terminal shows of them by default (the message and the engine also go to stderr)
PLAN_BRIEF = ["partition", "bucket", "files", "bytes_to_rewrite", "files_after", "reason"]
RESULT_BRIEF = ["snapshot_id", "units", "files_in", "files_out", "bytes_in", "bytes_out", "seconds"]


# ---------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------


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
    notes: list[str] = field(default_factory=list)  # worth saying beside the message (oversized indexes)

    def as_row(self) -> dict[str, Any]:
        return {c: getattr(self, c) for c in RESULT_COLUMNS} | {"seconds": round(self.seconds, 3)}


# ---------------------------------------------------------------------------------------
# Engines
# ---------------------------------------------------------------------------------------


def spark_available() -> str | None:
    """None when the Spark engine can run here, else why not."""
    if importlib.util.find_spec("pyspark") is None:
        return "pyspark is not installed (pip install 'paimon-cli[spark]')"
    if not os.environ.get("JAVA_HOME") and shutil.which("java") is None:
        return "no java on PATH (Spark needs a JDK 8/11/17)"
    return None


def choose_explicit_engine(
    engine: str, spark_master: str | None, spark_conf: Mapping[str, str] | None
) -> tuple[str, str] | None:
    """(engine, why) when the flags decide ``--engine`` alone; None when ``auto`` must weigh
    the work. Shared by every command with an ``--engine`` (compact, expire, orphans)."""
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
    return None


def choose_engine(
    engine: str, plan: CompactPlan, spark_master: str | None, spark_conf: Mapping[str, str] | None
) -> tuple[str, str]:
    """(engine, why) for ``--engine``; see the module docstring for the ``auto`` rule."""
    explicit = choose_explicit_engine(engine, spark_master, spark_conf)
    if explicit is not None:
        return explicit
    size, n = plan.bytes_in, len(plan.units)
    what = f"{memory_text(size)} in {n} unit{'s' if n != 1 else ''}"
    if size >= AUTO_SPARK_MIN_BYTES and n >= AUTO_SPARK_MIN_UNITS:
        cpus = os.cpu_count() or 1
        if cpus <= DEFAULT_LOCAL_THREADS:
            return "local", (f"large plan ({what}) but only {cpus} CPUs: the local engine's threads use them "
                             "without Spark's start-up cost")
        why_not = spark_available()
        if why_not:
            return "local", f"large plan ({what}) but {why_not}"
        return "spark", f"large plan ({what}: >= {memory_text(AUTO_SPARK_MIN_BYTES)} and >= {AUTO_SPARK_MIN_UNITS} units)"
    return "local", f"small plan ({what}: < {memory_text(AUTO_SPARK_MIN_BYTES)} or < {AUTO_SPARK_MIN_UNITS} units)"


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
        from .spark import run_spark  # pyspark-side code loads for the Spark engine only

        return run_spark(table, units, master=spark_master, conf=spark_conf, parallelism=parallelism,
                         progress=progress)
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
    partition_idle_millis: int | None = None,
) -> CompactResult:
    """Plan, run and commit one compaction of ``table``; nothing is committed on any error.

    ``partition_idle_millis`` (Java's ``partition_idle_time``): only partitions without a new
    file for that long, fully compacted as Java's batch compaction of a bucketed table; an
    unaware-bucket append table gets Java's append compaction of those partitions (``full``
    still applies)."""
    started = time.monotonic()
    if parallelism is not None and parallelism <= 0:
        raise InvalidInput(f"--parallelism {parallelism}: must be positive")
    if engine not in ENGINES:
        raise InvalidInput(f"--engine {engine!r}: expected one of {', '.join(ENGINES)}")
    external_paths_of(table)  # new files go to data-file.external-paths: refuse bad ones before planning
    if partition_idle_millis is not None:
        if order_strategy is not None or order_by:
            # Java's Flink and Spark compact procedures refuse it the same way
            raise InvalidInput("--partition-idle-time cannot be combined with --order-strategy / --order-by: "
                               "sort compaction does not support partition_idle_time")
        if table.schema.primary_keys or table.schema.bucket != -1:
            full = True
    if order_strategy is not None or order_by:
        return _sort_compact(table, order_strategy, order_by, partitions, where, plan_only, expire, started,
                             commit_user, progress, engine, max_bytes, max_buckets, full)

    plan = plan_compaction(table, full=full, partitions=partitions, where=where, max_bytes=max_bytes,
                           max_buckets=max_buckets, partition_idle_millis=partition_idle_millis)
    result = CompactResult(plan=plan, units=len(plan.units))
    result.files_in = plan.files_in
    result.bytes_in = plan.bytes_in
    result.rows_in = sum(u.rows_in for u in plan.units)
    if plan.busy_partitions and plan.units:
        result.notes.append(f"{plan.busy_partitions} partition(s) left out: they received new files within "
                            "--partition-idle-time")
    if plan.postponed:
        return _postpone_compact(table, plan, result, full, engine, spark_master, spark_conf, parallelism,
                                 plan_only, commit_user, started)
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

    _run_and_commit(table, plan, result, name, spark_master, spark_conf, parallelism, progress, commit_user,
                    expire)
    result.seconds = time.monotonic() - started
    return result


def _run_and_commit(
    table: FileStoreTable,
    plan: CompactPlan,
    result: CompactResult,
    engine: str,
    spark_master: str | None,
    spark_conf: Mapping[str, str] | None,
    parallelism: int | None,
    progress: Progress | None,
    commit_user: str | None,
    expire: bool,
) -> None:
    """Run the plan's units, commit them as one snapshot and expire after it."""
    try:
        results = run_units(table, plan.units, engine, spark_master=spark_master, spark_conf=spark_conf,
                            parallelism=parallelism, progress=progress)
    except UnitsFailed as failed:
        delete_written(table, failed.results)
        raise failed.error from None
    snapshot = commit_results(table, results, commit_user)
    _fill_counts(result, results, table.options.options)
    if snapshot is None:
        result.message = "the units changed nothing; no snapshot committed"
        return
    result.snapshot_id = snapshot.id
    result.commit_kind = snapshot.commit_kind
    result.snapshots = [snapshot.id]
    result.message = f"compacted {len(results)} unit(s) into snapshot {snapshot.id}"
    if expire and table.schema.bucket != paths.POSTPONE_BUCKET:
        # a dedicated compaction job expires even on write-only tables (Java's compact
        # action runs on a write-only=false copy of the table); never after commits into
        # postpone tables (Java's newExpireRunnable is null there)
        _append_expiry(table, result)


def _postpone_compact(
    table: FileStoreTable,
    plan: CompactPlan,
    result: CompactResult,
    full: bool,
    engine: str,
    spark_master: str | None,
    spark_conf: Mapping[str, str] | None,
    parallelism: int | None,
    plan_only: bool,
    commit_user: str | None,
    started: float,
) -> CompactResult:
    """Move the staged files of a postpone table into real buckets (:mod:`.postpone`), with
    the plan's other units, in ONE COMPACT snapshot fenced on the planned snapshot."""
    result.engine, result.engine_reason = _postpone_engine(engine, spark_master, spark_conf)
    staged = sum(len(p.files) for p in plan.postponed)
    result.units += len(plan.postponed)
    if plan_only:
        result.message = f"plan only: {staged} postponed file(s) and {len(plan.units)} unit(s), nothing written"
        result.seconds = time.monotonic() - started
        return result
    assert plan.base_snapshot is not None
    user = commit_user or str(uuid.uuid4())
    tw: TableWrite | None = None
    try:
        if result.engine == "spark":
            from .spark import run_spark_postpone

            results, out = run_spark_postpone(table, plan.units, plan.postponed, user, full, master=spark_master,
                                              conf=spark_conf, parallelism=parallelism)
        else:
            results = run_local(table, plan.units) if plan.units else []
            try:
                tw, out = postpone.replay(table, plan.postponed, user, full)
            except BaseException:
                delete_written(table, results)
                raise
    except UnitsFailed as failed:
        delete_written(table, failed.results)
        raise failed.error from None
    snapshot = postpone.commit_postponed(table, tw, out, plan.base_snapshot, user, results)
    _fill_counts(result, [*results, *out.results], table.options.options)
    _add_postponed_counts(result, plan, out, table.options.options)
    if snapshot is not None:
        result.snapshot_id, result.commit_kind, result.snapshots = snapshot.id, snapshot.commit_kind, [snapshot.id]
    result.message = (f"moved {staged} postponed file(s) of {len(plan.postponed)} partition(s) into real buckets"
                      + (f" into snapshot {snapshot.id}" if snapshot is not None else ""))
    result.seconds = time.monotonic() - started
    return result


def _postpone_engine(engine: str, spark_master: str | None, spark_conf: Mapping[str, str] | None) -> tuple[str, str]:
    """Spark when asked for (``--engine spark`` or Spark options), else in-process."""
    if engine == "spark" or (engine == "auto" and (spark_master or spark_conf)):
        name, why = choose_engine(engine, CompactPlan(None), spark_master, spark_conf)
        return name, f"{why}: one Spark task per partition with staged files"
    if spark_master or spark_conf:
        raise InvalidInput("--spark-master/--spark-conf need --engine spark (or auto)")
    return "local", "postpone-bucket compaction runs in-process unless --engine spark"


def _add_postponed_counts(result: CompactResult, plan: CompactPlan, out: postpone.PostponeOutcome,
                          options: Mapping[str, str]) -> None:
    """The staged files read and the real-bucket files the replay wrote (after its compaction)."""
    result.files_in += sum(len(p.files) for p in plan.postponed)
    result.bytes_in += sum(p.bytes for p in plan.postponed)
    result.rows_in += out.rows_in
    compacted = {f.file_name for r in out.results for f in r.after}
    replayed = [f for m in out.messages for f in m.new_files if f.file_name not in compacted]
    for f in replayed:
        result.files_out += 1
        result.bytes_out += f.file_size
        result.rows_out += f.row_count
    index_note = written_index_note(options, replayed)
    if index_note and not result.notes:  # one note per job
        result.notes.append(index_note)


def _append_expiry(table: FileStoreTable, result: CompactResult) -> None:
    warning = expire_after(table, {"write-only": "false"})
    if warning:
        result.message += f"; {warning}"


def _nothing_message(plan: CompactPlan) -> str:
    if plan.base_snapshot is None:
        return "the table has no snapshot; nothing to compact"
    if plan.deferred:
        return f"nothing fits the budget ({len(plan.deferred)} unit(s) deferred); nothing committed"
    if plan.busy_partitions:
        return (f"nothing to compact in the idle partitions ({plan.busy_partitions} partition(s) received "
                "new files within --partition-idle-time); nothing committed")
    return "nothing to compact; nothing committed"


def _fill_counts(result: CompactResult, results: Sequence[UnitResult], options: Mapping[str, str]) -> None:
    files_in = files_out = bytes_in = bytes_out = rows_in = rows_out = 0
    written = []
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
                written.append(f)
        rows_out += r.rows_out
    index_note = written_index_note(options, written)
    if index_note:
        result.notes.append(index_note)
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
    messages = [m for m in (r.commit_message() for r in results) if not m.is_empty()]
    if not messages:
        delete_written(table, results)
        return None
    commit = FileStoreCommit(table, commit_user)
    # data evolution: a concurrent update of the compacted row ranges fails the commit
    check = None
    if is_data_evolution(table.options):
        from .data_evolution import ranges_unchanged  # the data-evolution room loads for such tables only

        check = ranges_unchanged(table, [r.unit for r in results])
    try:
        # the commit itself refuses when a bucket's deletion vectors changed since planning
        return commit.commit(messages, commit_kind, check_latest=check)
    except BaseException:
        if not commit.may_have_published():
            delete_written(table, results)
        raise


def expire_after(table: FileStoreTable, options_overrides: Mapping[str, str] | None = None) -> str | None:
    """Java's post-commit maintenance (snapshot, partition and tag expiry; see
    :mod:`core.operation.maintenance`); returns the warnings as one line, or None.

    A refused expiration never undoes the commit: it is reported, not raised.
    """
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
    from . import sort  # the sort room (and its external sort) loads for sort compaction only

    cols = parse_order_by(order_by)
    strategy = _check_sort_request(table, strategy, cols, engine, max_bytes, max_buckets)
    specs = parse_partition_specs(list(partitions), table.schema) if partitions else None

    def sort_progress(done: int, total: int, rows: int) -> None:
        if progress is not None:
            progress("done", None, done, total)

    out = sort.sort_compact(table, strategy, cols, partitions=specs, where=where, plan_only=plan_only,
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
        if out.index_note:
            result.notes.append(out.index_note)
        result.message = (f"sorted {len(out.partitions)} partition(s) by {by} into snapshot "
                          f"{result.snapshot_id}")
        if expire:
            _append_expiry(table, result)
    else:
        result.message = "nothing to sort; nothing committed"
    result.seconds = time.monotonic() - started
    return result


def _check_sort_request(
    table: FileStoreTable, strategy: str | None, cols: list[str], engine: str, max_bytes: int | None,
    max_buckets: int | None,
) -> str:
    """The lower-cased strategy; InvalidInput for options sort compaction cannot honour."""
    if strategy is None or not cols:
        raise InvalidInput("sort compaction needs both --order-strategy and --order-by")
    strategy = strategy.lower()
    if strategy not in ORDER_STRATEGIES:
        raise InvalidInput(f"--order-strategy {strategy!r}: expected one of {', '.join(ORDER_STRATEGIES)}")
    if engine == "spark":
        raise InvalidInput("sort compaction runs locally; --engine spark does not apply")
    if max_bytes is not None or max_buckets is not None:
        raise InvalidInput("--max-bytes/--max-buckets do not apply to sort compaction (whole partitions)")
    from .sort import check_sortable_table

    check_sortable_table(table)
    names = set(table.schema.field_names)
    unknown = [c for c in cols if c not in names]
    if unknown:
        raise InvalidInput(f"--order-by: {unknown[0]!r} is not a column of {table.identifier}"
                           f"{did_you_mean(unknown[0], table.schema.field_names)}")
    return strategy


def _sort_plan(table: FileStoreTable, out: Any, by: str) -> CompactPlan:
    """Plan rows of a sort compaction: one per partition to rewrite."""
    sm = table.snapshot_manager
    base = sm.snapshot(out.base_snapshot_id) if out.base_snapshot_id is not None else None
    plan = CompactPlan(base)
    if base is None:
        return plan
    wanted = set(out.partitions)
    groups: dict[str, list[DataFileMeta]] = {}
    for e in FileStoreScan(table).plan(base):
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
