"""The Spark engine: compaction units as Spark tasks on ``local[*]`` or any cluster master.

The only module that imports pyspark (inside functions, so ``--help`` never loads it).
The driver plans; each unit (a picklable :class:`~.unit.CompactUnit`) becomes one element of
an RDD. A task re-opens the table from a :class:`~.local.TableRef` (warehouse URI, storage
options, table path, branch and the schema the driver planned with), runs the same
executor the local engine runs, and returns the :class:`~.unit.UnitResult` -- new file
metadata only, never a commit. The driver collects every result and commits one snapshot.

A task never raises into Spark: it returns its error instead, so one failed unit does not
make Spark retry it (a retry would write a second set of files) and the driver still gets
the results of the units that finished, whose files it must delete.

On a cluster the warehouse must be on storage every executor can reach (S3, HDFS via
fsspec, a shared mount) and every executor's Python must have paimon-cli installed.
"""

from __future__ import annotations

import os
import sys
import threading
import traceback
import uuid
from collections.abc import Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..errors import PaimonError
from ..mergetree import file_writer
from ..mergetree.compact_unit import CompactUnit, UnitResult
from .local import Progress, TableRef, UnitsFailed, delete_written, execute_unit

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable
    from .postpone import PostponedPartition, PostponeOutcome

DEFAULT_MASTER = "local[*]"
TASKS_PER_CORE = 3  # enough tasks to balance uneven units, few enough to keep task overhead low


class RemoteUnitError(PaimonError):
    """A unit failed inside a Spark task with an error that is not one of ours."""


def _run_task(ref: TableRef, item: tuple[int, CompactUnit]) -> tuple[int, Any, Any]:
    """Executor side: (index, UnitResult, None) or (index, None, (error class path, message, exit, trace))."""
    index, unit = item
    try:
        table = ref.open()
        return index, execute_unit(table, unit), None
    except BaseException as e:  # noqa: BLE001 - shipped back to the driver as data
        cls = type(e)
        return index, None, (f"{cls.__module__}:{cls.__qualname__}", str(e),
                             int(getattr(e, "exit_code", 1)), traceback.format_exc())


def limit_task_cores() -> int:
    """Keep a task on the cores Spark gave it (``spark.task.cpus``, default 1).

    Spark runs as many tasks per executor as it has cores; a task that also spread pyarrow's
    decode/encode over every core would oversubscribe the executor, and ``local[1]`` would
    quietly use the whole machine. Python workers are reused, so this is set per task.
    """
    import pyarrow as pa

    cores = 1
    try:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        if ctx is not None:
            cores = max(1, int(ctx.cpus()))
    except Exception:  # noqa: BLE001 - outside a task (tests) or an old pyspark: one core
        cores = 1
    pa.set_cpu_count(cores)
    file_writer.UNIT_CORES = cores
    return cores


def _run_slice(ref: TableRef, items: list[tuple[int, CompactUnit]]) -> list[tuple[int, Any, Any]]:
    """One Spark task: its units in order; after a failure the rest of the slice is skipped."""
    limit_task_cores()
    out = []
    for item in items:
        res = _run_task(ref, item)
        out.append(res)
        if res[2] is not None:
            break
    return out


def slice_units(units: Sequence[CompactUnit], slices: int) -> list[list[tuple[int, CompactUnit]]]:
    """Units spread over ``slices`` tasks, biggest first onto the least loaded (LPT), so the
    tasks finish together; each task's units keep biggest-first order."""
    import heapq

    order = sorted(range(len(units)), key=lambda i: -units[i].bytes_in)
    heap = [(0, k) for k in range(slices)]
    out: list[list[tuple[int, CompactUnit]]] = [[] for _ in range(slices)]
    for i in order:
        load, k = heapq.heappop(heap)
        out[k].append((i, units[i]))
        heapq.heappush(heap, (load + max(units[i].bytes_in, 1), k))
    return [s for s in out if s]


def _rebuild_error(info: tuple[str, str, int, str]) -> BaseException:
    """The driver-side exception for a task's error: the same PaimonError class when possible."""
    path, message, exit_code, trace = info
    module, _, qualname = path.partition(":")
    try:
        import importlib

        cls: Any = importlib.import_module(module)
        for part in qualname.split("."):
            cls = getattr(cls, part)
        if isinstance(cls, type) and issubclass(cls, PaimonError):
            err = cls.__new__(cls)
            Exception.__init__(err, message)
            err.remote_traceback = trace  # type: ignore[attr-defined]
            return err
    except Exception:  # noqa: BLE001 - fall back to a generic error below
        pass
    err2 = RemoteUnitError(f"a Spark task failed: {qualname.rsplit('.', 1)[-1]}: {message}")
    err2.exit_code = exit_code
    err2.remote_traceback = trace  # type: ignore[attr-defined]
    return err2


# what a task fails with when the executors' Python is not the one paimon-cli needs (the
# cause is deep in the Java message, past what one error line can show)
_EXECUTOR_PYTHON_FAULTS = (
    ("No module named 'paimon_cli'", "the executors' Python has no paimon-cli"),
    ("Cannot run program", "the executors cannot start their Python"),
    ("Python in worker has different version", "the executors' Python is another version than the driver's"),
)


def _java_message(e: BaseException) -> str:
    """The Java exception's own message for a Py4JJavaError, else the first line of ``e``;
    a wrong executor Python is named with what to do about it."""
    text = ""
    java = getattr(e, "java_exception", None)
    if java is not None:
        try:
            text = " ".join(str(java.toString()).split())
        except Exception:  # noqa: BLE001 - the JVM may be gone
            pass
    text = text or (str(e).strip().splitlines() or [type(e).__name__])[0]
    for needle, fault in _EXECUTOR_PYTHON_FAULTS:
        if needle in text:
            return (f"{fault} ({os.environ.get('PYSPARK_PYTHON', 'python3')}): install 'paimon-cli[spark]' "
                    "of this version there and point spark.pyspark.python (or PYSPARK_PYTHON) at it")
    return text[:500]


def _is_local_master(master: str) -> bool:
    return master == "local" or master.startswith("local[") or master.startswith("local-cluster[")


_LOG4J = """rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{yy/MM/dd HH:mm:ss} %p %c{1}: %m%n
# the shell-level loggers: without them Spark prints "Setting default log level" on start
logger.pygw.name = org.apache.spark.api.python.PythonGatewayServer
logger.pygw.level = error
logger.submit.name = org.apache.spark.deploy.SparkSubmit
logger.submit.level = error
logger.repl.name = org.apache.spark.repl.Main
logger.repl.level = error
# "Task 0 in stage 0.0 failed 1 times; aborting job": the driver reports the failure itself
logger.tsm.name = org.apache.spark.scheduler.TaskSetManager
logger.tsm.level = off
"""


def _quiet_log4j() -> str:
    """A log4j2 configuration that logs errors only: one file per content in the temp dir,
    shared by every run (written atomically if absent, so runs never litter or race)."""
    import hashlib
    import tempfile

    digest = hashlib.sha256(_LOG4J.encode()).hexdigest()[:12]
    path = os.path.join(tempfile.gettempdir(), f"paimon-cli-log4j2-{digest}.properties")
    if not os.path.exists(path):
        with tempfile.NamedTemporaryFile("w", dir=tempfile.gettempdir(), prefix=".paimon-cli-log4j2-",
                                         delete=False) as f:
            f.write(_LOG4J)
        os.replace(f.name, path)
    return path


MASTER_CONNECT_TIMEOUT = 5.0  # seconds per master address


def check_master_reachable(master: str, timeout: float = MASTER_CONNECT_TIMEOUT) -> None:
    """Refuse a ``spark://`` or ``k8s://`` master no address of which accepts a TCP connection.

    Spark's client would retry an unreachable standalone master for about a minute and then
    print a Java stack trace; a connect with a timeout says the same in seconds, in one line.
    """
    import socket
    from urllib.parse import urlsplit

    if master.startswith("spark://"):  # spark://host1:port1,host2:port2 (standby masters)
        addresses = [a.strip() for a in master[len("spark://"):].split(",") if a.strip()]
        default_port = 7077
    elif master.startswith("k8s://"):  # k8s://https://host:port, or k8s://host:port (https)
        api = master[len("k8s://"):]
        url = urlsplit(api if "://" in api else "https://" + api)
        addresses = [url.netloc]
        default_port = 443 if url.scheme == "https" else 80
    else:
        return  # local[*], yarn, ...: nothing to connect to up front
    reasons = []
    for address in addresses:
        try:
            url = urlsplit("//" + address)
            with socket.create_connection((url.hostname or "", url.port or default_port), timeout=timeout):
                return
        except (OSError, ValueError) as e:
            reasons.append(f"{address}: {getattr(e, 'strerror', None) or e}")
    raise PaimonError(f"cannot reach Spark master {master!r} ({'; '.join(reasons)})")


def _choose_executor_python(conf: dict[str, str]) -> None:
    """The executors' Python: ``spark.pyspark.python``, else PYSPARK_PYTHON, else this
    interpreter (it has paimon-cli; a cluster built from the driver's image has it at the same
    path). A Python driver hands executors only its PYSPARK_PYTHON (default ``python3`` from
    each executor's PATH) and ignores the conf and the workers' environment, so the choice is
    put there before the session starts, for every master (and stays for this process)."""
    python = conf.get("spark.pyspark.python") or os.environ.get("PYSPARK_PYTHON") or sys.executable
    os.environ["PYSPARK_PYTHON"] = python
    conf["spark.pyspark.python"] = python


def spark_session(master: str | None, conf: Mapping[str, str] | None, app_name: str) -> tuple[Any, bool]:
    """(SparkSession, created_here). An already active session is reused and left running."""
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active, False
    master = master or DEFAULT_MASTER
    check_master_reachable(master)
    conf = dict(conf or {})
    _choose_executor_python(conf)
    if _is_local_master(master):
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
        conf.setdefault("spark.pyspark.driver.python", sys.executable)
        conf.setdefault("spark.ui.enabled", "false")
    conf.setdefault("spark.ui.showConsoleProgress", "false")
    if "spark.driver.extraJavaOptions" not in conf:
        # Spark's start-up chatter would break "one summary line" on stderr
        conf["spark.driver.extraJavaOptions"] = f"-Dlog4j2.configurationFile=file:{_quiet_log4j()}"
    conf.setdefault("spark.task.maxFailures", "1")  # a retried unit would write its files twice
    builder = SparkSession.builder.master(master).appName(app_name)
    for k, v in conf.items():
        builder = builder.config(k, v)
    try:
        session = builder.getOrCreate()
    except Exception as e:  # noqa: BLE001 - a bad master URL, no JVM, a refused cluster: one line
        raise PaimonError(f"cannot start Spark with master {master!r}: {_java_message(e)}") from e
    session.sparkContext.setLogLevel(os.environ.get("PAIMON_SPARK_LOG_LEVEL", "ERROR"))
    return session, True


def stop_session(session: Any) -> None:
    """Stop a session this run created, quietly: what Spark prints while it tears the executors
    down (netty's and Scala's ``RejectedExecutionException`` traces, "Ignoring error", "Still have
    N requests outstanding") is noise about a job already finished, and it would come before the
    run's own one-line outcome. The JVM outlives the session (a later session in this process
    reuses it), so its stderr is given back once the session is stopped. ``PAIMON_SPARK_LOG_LEVEL``
    keeps the noise, for debugging a cluster."""
    if os.environ.get("PAIMON_SPARK_LOG_LEVEL"):
        session.stop()
        return
    jvm, saved = None, None
    try:
        session.sparkContext.setLogLevel("OFF")
        jvm = session.sparkContext._jvm
        saved = jvm.java.lang.System.err
        jvm.java.lang.System.setErr(jvm.java.io.PrintStream(jvm.java.io.OutputStream.nullOutputStream()))
    except Exception:  # noqa: BLE001 - a JVM already gone: nothing left to silence
        jvm = None
    try:
        session.stop()
    finally:
        if jvm is not None and saved is not None:
            try:
                jvm.java.lang.System.setErr(saved)
            except Exception:  # noqa: BLE001 - the gateway is gone with the JVM: nothing to restore
                pass


def run_spark(
    table: FileStoreTable,
    units: Sequence[CompactUnit],
    *,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    parallelism: int | None = None,
    progress: Progress | None = None,
) -> list[UnitResult]:
    """Run ``units`` as Spark tasks; results in unit order (UnitsFailed on any failure).

    ``parallelism`` is the number of tasks (default: ``TASKS_PER_CORE`` x the cores the
    master gives, at most one per unit). A PySpark task costs ~0.1 s of its own, so small
    units are grouped into fewer tasks, balanced by input bytes.
    """
    if not units:
        return []
    session, created = spark_session(master, conf, f"paimon-cli compact {table.identifier}")
    try:
        sc = session.sparkContext
        ref = TableRef.of(table)
        try:
            tasks = parallelism or max(1, sc.defaultParallelism) * TASKS_PER_CORE
            groups = slice_units(units, max(1, min(len(units), tasks)))
            rdd = sc.parallelize(groups, len(groups)).flatMap(partial(_run_slice, ref))
            collected = _collect_with_progress(sc, rdd, units, progress)
        except Exception as e:  # noqa: BLE001 - a lost cluster / executor / worker crash: one line
            raise UnitsFailed(PaimonError(f"the Spark job failed: {_java_message(e)}"), []) from e
    finally:
        if created:
            stop_session(session)
    results: list[UnitResult | None] = [None] * len(units)
    errors = []
    for index, result, error in collected:
        if error is not None:
            errors.append(_rebuild_error(error))
        else:
            results[index] = result
    done = [r for r in results if r is not None]
    if errors:
        raise UnitsFailed(errors[0], done)
    return done


def _collect_with_progress(sc: Any, rdd: Any, units: Sequence[CompactUnit], progress: Progress | None) -> list[Any]:
    """``rdd.collect()``; with a progress callback, report finished tasks while it runs."""
    if progress is None:
        return rdd.collect()
    group = f"paimon-compact-{uuid.uuid4()}"
    box: dict[str, Any] = {}

    def collect() -> None:
        try:
            sc.setJobGroup(group, "paimon-cli compact")
            box["out"] = rdd.collect()
        except BaseException as e:  # noqa: BLE001 - re-raised on the calling thread
            box["err"] = e

    worker = threading.Thread(target=collect, name="paimon-spark-collect", daemon=True)
    worker.start()
    total = len(units)
    reported = 0
    tracker = sc.statusTracker()
    while worker.is_alive():
        worker.join(0.5)
        done = 0
        try:
            for job_id in tracker.getJobIdsForGroup(group):
                info = tracker.getJobInfo(job_id)
                for stage_id in (info.stageIds if info is not None else []):
                    stage = tracker.getStageInfo(stage_id)
                    if stage is not None:
                        done += stage.numCompletedTasks
        except Exception:  # noqa: BLE001 - progress is cosmetic
            continue
        # partitions may hold several units; report units in proportion
        slices = rdd.getNumPartitions()
        done_units = min(total, done * total // max(slices, 1))
        while reported < done_units:
            reported += 1
            progress("done", units[reported - 1], reported, total)
    if "err" in box:
        raise box["err"]
    while reported < total:
        reported += 1
        progress("done", units[reported - 1], reported, total)
    return box["out"]


# ---------------------------------------------------------------------------------------
# Postpone-bucket compaction: one Spark task per partition with staged files
# ---------------------------------------------------------------------------------------


def _replay_task(ref: TableRef, commit_user: str, full: bool,
                 item: tuple[int, PostponedPartition]) -> tuple[int, Any, Any]:
    """Executor side: replay one partition's staged files into its real buckets (no commit);
    (index, PostponeOutcome, None) or (index, None, error info) -- the replay deleted its files."""
    from .postpone import replay

    index, part = item
    limit_task_cores()
    try:
        _, out = replay(ref.open(), [part], commit_user, full)
        return index, out, None
    except BaseException as e:  # noqa: BLE001 - shipped back to the driver as data
        cls = type(e)
        return index, None, (f"{cls.__module__}:{cls.__qualname__}", str(e),
                             int(getattr(e, "exit_code", 1)), traceback.format_exc())


def run_spark_postpone(
    table: FileStoreTable,
    units: Sequence[CompactUnit],
    parts: Sequence[PostponedPartition],
    commit_user: str,
    full: bool,
    *,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    parallelism: int | None = None,
) -> tuple[list[UnitResult], PostponeOutcome]:
    """Java's Spark postpone compaction: the real-bucket ``units`` as ordinary tasks, then each
    partition's staged files replayed by one task (a partition's rows stay in creation order
    on one writer); the driver commits. On any failure every file written is deleted and
    UnitsFailed (units) or the task's error is raised."""
    from .postpone import PostponeOutcome

    session, created = spark_session(master, conf, f"paimon-cli compact {table.identifier}")
    try:
        results = run_spark(table, units, master=master, conf=conf, parallelism=parallelism)
        try:
            collected = _replay_partitions(session.sparkContext, table, parts, commit_user, full, parallelism)
        except BaseException:
            delete_written(table, results)
            raise
    finally:
        if created:
            stop_session(session)
    done = [out for _, out, error in collected if error is None]
    errors = [_rebuild_error(error) for _, _, error in collected if error is not None]
    if errors:
        for out in done:
            out.discard(table)
        delete_written(table, results)
        raise errors[0]
    return results, PostponeOutcome.merged([out for _, out, _ in sorted(collected, key=lambda c: c[0])])


def _replay_partitions(sc: Any, table: FileStoreTable, parts: Sequence[PostponedPartition], commit_user: str,
                       full: bool, parallelism: int | None) -> list[tuple[int, Any, Any]]:
    if not parts:
        return []
    ref = TableRef.of(table)
    tasks = max(1, min(len(parts), parallelism or max(1, sc.defaultParallelism) * TASKS_PER_CORE))
    try:
        rdd = sc.parallelize(list(enumerate(parts)), tasks).map(partial(_replay_task, ref, commit_user, full))
        return list(rdd.collect())
    except Exception as e:  # noqa: BLE001 - a lost cluster / executor / worker crash: one line
        raise PaimonError(f"the Spark job failed: {_java_message(e)}") from e
