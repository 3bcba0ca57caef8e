"""remove-orphan-files as Spark tasks (``--engine spark``): Java's SparkOrphanFilesClean design
over the local engine's rules (core/operation/orphans.py), so both engines decide alike.

The driver keeps everything that decides safety and is small: the cutoff (and its guard),
the external-roots check, the branches, every snapshot / tag / changelog / consumer of every
branch (read fail closed by :func:`~..operation.used_files.branch_refs`), the walk of the
partition directories down to the bucket directories, the leftovers of interrupted commits
in ``snapshot/`` and ``changelog/``, the refusals, the pre-delete re-read of the latest
snapshots and tags, and the empty-directory cleanup. Tasks do the bulk:

* list each candidate directory (``manifest/``, ``index/``, ``statistics/``, every bucket
  directory, those of scanned external roots) with the local engine's own candidate rule;
* read the manifest lists, then the manifests, emitting the used names (data files and their
  extra files: ADD and DELETE entries alike). A list or manifest that cannot be read comes
  back to the driver, which refuses exactly as the local engine does (the same missing-file
  tolerance, the same messages): nothing is deleted;
* the used/candidate anti-join: a DataFrame ``left_anti`` join on the file name against the
  names the manifests hold (the few metadata names are matched on the driver);
* the deletions, phase by phase in the local engine's order, grouped by parent directory.

Only the orphans (the report) and the names of manifest lists, manifests and index files come
back to the driver; the data-file names stay in Spark.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from ..compact.job import choose_explicit_engine
from ..compact.local import TableRef
from ..compact.spark import TASKS_PER_CORE, _java_message, _rebuild_error, limit_task_cores, spark_session, stop_session
from ..errors import InvalidInput, PaimonError
from ..io.fileio import basename, parent
from ..operation.external_roots import ExternalLayout, configured_roots
from ..operation.file_deletion import GuardedReader
from ..operation.orphans import (
    ACTION,
    OrphanFile,
    OrphanPlan,
    OrphanResult,
    _empty_dirs,
    _external_roots,
    _Scan,
    no_metadata_refusal,
    remove_orphans,
    resolve_cutoff,
)
from ..operation.used_files import DirLister, Ref, UsedFiles, _References, branch_refs, list_branches
from ..refs.snapshot import Snapshot
from ..utils.progress import StepProgress

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

def choose_orphans_engine(engine: str, spark_master: str | None, spark_conf: Mapping[str, str] | None,
                          parallelism: int | None = None) -> str:
    """``local`` or ``spark`` by compact's flag rules; ``auto`` is Spark only when Spark options
    were given (a listing and a join pay off only on a cluster, which the user names)."""
    explicit = choose_explicit_engine(engine.lower(), spark_master, spark_conf)
    name = explicit[0] if explicit is not None else "local"
    if name == "local" and parallelism is not None:
        raise InvalidInput("--parallelism needs --engine spark")
    return name


# ---------------------------------------------------------------------------------------
# executor side: every task returns its error as data ("e", info), never raises into Spark
# ---------------------------------------------------------------------------------------


def _error_row(e: BaseException) -> tuple[str, Any]:
    cls = type(e)
    return "e", (f"{cls.__module__}:{cls.__qualname__}", str(e), int(getattr(e, "exit_code", 1)),
                 traceback.format_exc())


def _guarded(rows: Callable[[], Iterator[tuple[Any, ...]]]) -> Iterator[tuple[Any, ...]]:
    limit_task_cores()
    try:
        yield from rows()
    except BaseException as e:  # noqa: BLE001 - shipped back to the driver as data
        yield _error_row(e)


def _list_dirs(ref: TableRef, cutoff: int, leaves: Iterable[tuple[str, str, bool]]) -> Iterator[tuple[Any, ...]]:
    """One task: list candidate directories with the local engine's rule. Rows: ("c", name,
    path, kind, size, mtime) per candidate, ("d", dir, plain files, subdirs, candidates)."""

    def rows() -> Iterator[tuple[Any, ...]]:
        table = ref.open()
        lister = DirLister(table.file_io)
        layout = ExternalLayout.of(table.schema)
        for directory, area, external in leaves:
            scan = _Scan(table, lister, cutoff)
            scan.consider(directory, area, layout if external else None)
            for f in scan.files():
                yield "c", basename(f.path), f.path, f.kind, f.size, f.mtime_millis
            yield "d", directory, scan.dir_files[directory], scan.dir_subdirs[directory], scan.candidates

    return _guarded(rows)


def _read_lists(ref: TableRef, names: Iterable[str]) -> Iterator[tuple[Any, ...]]:
    """One task: ("l", list, [manifest names] or None when missing) per manifest list."""

    def rows() -> Iterator[tuple[Any, ...]]:
        reader = GuardedReader(ref.open().file_io, ref.path, ACTION)
        for ml in names:
            metas = reader.manifest_list(ml, missing_ok=True, cache=False)
            yield "l", ml, None if metas is None else [m.file_name for m in metas]

    return _guarded(rows)


def _read_manifests(ref: TableRef, names: Iterable[str]) -> Iterator[tuple[Any, ...]]:
    """One task: ("m", manifest, read?) per manifest and ("n", name) per data or extra file it
    names, read on the local engine's columnar path."""

    def rows() -> Iterator[tuple[Any, ...]]:
        import pyarrow.compute as pc

        reader = GuardedReader(ref.open().file_io, ref.path, ACTION)
        todo = list(names)
        for name, table in zip(todo, _References(reader, UsedFiles(), keys=False)._manifest_tables(todo), strict=True):
            yield "m", name, table is not None
            if table is not None:
                for column in (table.column("_FILE_NAME"), pc.list_flatten(table.column("_EXTRA_FILES"))):
                    yield from (("n", n) for n in column.to_pylist())

    return _guarded(rows)


def _delete_dirs(ref: TableRef, groups: Iterable[tuple[str, list[str]]]) -> Iterator[tuple[Any, ...]]:
    """One task: delete the files of its parent directories; ("x", dir) per directory done."""

    def rows() -> Iterator[tuple[Any, ...]]:
        fio = ref.open().file_io
        for directory, paths in groups:
            for p in paths:
                fio.delete(p)
            yield "x", directory

    return _guarded(rows)


# ---------------------------------------------------------------------------------------
# driver side
# ---------------------------------------------------------------------------------------


class _Job:
    """The Spark side of one run: the session's context, the table reference, the task count."""

    def __init__(self, session: Any, table: FileStoreTable, parallelism: int | None) -> None:
        self.session = session
        self.sc = session.sparkContext
        self.ref = TableRef.of(table)
        self.tasks = parallelism or max(1, self.sc.defaultParallelism) * TASKS_PER_CORE
        self.cached: list[Any] = []

    def rdd(self, items: Sequence[Any], task: Callable[..., Iterator[tuple[Any, ...]]], *args: Any) -> Any:
        slices = max(1, min(len(items), self.tasks))
        return self.sc.parallelize(list(items), slices).mapPartitions(partial(task, self.ref, *args))

    def cache(self, rdd: Any) -> Any:
        self.cached.append(rdd.cache())
        return rdd

    @staticmethod
    def collect(rdd: Any, keep: Callable[[tuple[Any, ...]], bool] = lambda r: True) -> list[tuple[Any, ...]]:
        """The rows ``keep`` selects; a task's error is raised here as the local engine raises it."""
        try:
            rows = rdd.filter(lambda r: r[0] == "e" or keep(r)).collect()
        except Exception as e:  # noqa: BLE001 - a lost cluster / executor / worker crash: one line
            raise PaimonError(f"the Spark job failed: {_java_message(e)}") from e
        for r in rows:
            if r[0] == "e":
                raise _rebuild_error(r[1])
        return rows

    def unpersist(self) -> None:
        """Drop the cached listings, waiting for the executors: a session stopped while their
        block removals are in flight prints Spark's RejectedExecutionException traces."""
        for rdd in self.cached:
            rdd.unpersist(blocking=True)
        self.cached.clear()


class _SparkUsed(UsedFiles):
    """Used files whose data-file names stay in Spark: ``name_count`` counts the candidates
    they use as the local engine's :class:`~..operation.used_files.CandidateNames` does."""

    remote_used = 0

    @property
    def name_count(self) -> int:
        return len(self.names) + self.remote_used


class _SparkReferences(_References):
    """The local engine's used-files pass whose manifest lists and manifests are read by tasks:
    the driver keeps the list/manifest names and the missing-file rules; the names the
    manifests hold stay in Spark (``self.names``)."""

    used: _SparkUsed

    def __init__(self, reader: GuardedReader, used: _SparkUsed, job: _Job) -> None:
        super().__init__(reader, used, keys=False)
        self.job = job
        self.names: list[Any] = []  # RDDs of ("n", name)

    def _manifest_names(self, lists: list[str]) -> list[list[str] | None]:
        job = self.job
        got = {r[1]: r[2] for r in job.collect(job.rdd(lists, _read_lists))} if lists else {}
        return [got[ml] for ml in lists]

    def _manifest_tables(self, names: list[str]) -> Iterator[Any]:
        """Whether each manifest was read (None: missing); the names they hold stay in Spark."""
        if not names:
            return
        job = self.job
        rdd = job.cache(job.rdd(names, _read_manifests))
        read = {r[1]: r[2] for r in job.collect(rdd, lambda r: r[0] == "m")}
        self.names.append(rdd.filter(lambda r: r[0] == "n").map(lambda r: (r[1],)))
        yield from (True if read[n] else None for n in names)

    def _use(self, table: Any) -> None:
        pass  # the names are in ``self.names``


def _used_files(job: _Job, table: FileStoreTable, lister: DirLister, branches: list[str]) -> _SparkReferences:
    """What every snapshot, tag and changelog of every branch uses (collect_used_files' pass)."""
    reader = GuardedReader(table.file_io, table.path, ACTION)
    used = _SparkUsed(branches=list(branches))
    pinned: list[tuple[Ref, Snapshot]] = []
    for br in branches:
        pinned.extend(branch_refs(reader, br, lister, None, used))
    refs = _SparkReferences(reader, used, job)
    refs.read(pinned, changelog_missing_ok=False)
    return refs


class _LeafScan(_Scan):
    """The local engine's scan with every candidate directory deferred to the listing tasks."""

    def __init__(self, table: FileStoreTable, lister: DirLister, cutoff: int) -> None:
        super().__init__(table, lister, cutoff)
        self.leaves: list[tuple[str, str, bool]] = []

    def consider(self, directory: str, area: str, layout: ExternalLayout | None = None) -> None:
        self.leaves.append((directory, area, layout is not None))

    def listed(self, summaries: list[tuple[Any, ...]]) -> None:
        """Take in the tasks' per-directory counts (all ``_empty_dirs`` asks of a directory)."""
        for _, directory, files, subdirs, candidates in summaries:
            self.candidates += candidates
            self.saw_files = self.saw_files or files > 0
            self.dir_files[directory] = files
            self.dir_subdirs[directory] = subdirs


def _anti_join(job: _Job, listing: Any, refs: _SparkReferences) -> tuple[list[OrphanFile], int]:
    """(candidates no used name matches, sorted by path; distinct candidate names the manifests use).
    The metadata names are few and on the driver: they are matched there."""
    from pyspark.sql.types import LongType, StringType, StructField, StructType

    spark = job.session
    cand_schema = StructType([StructField(n, t) for n, t in (
        ("name", StringType()), ("path", StringType()), ("kind", StringType()), ("size", LongType()),
        ("mtime", LongType()))])
    candidates = spark.createDataFrame(listing.filter(lambda r: r[0] == "c").map(lambda r: r[1:]), cand_schema)
    names = job.sc.union(refs.names) if refs.names else job.sc.parallelize([], 1)
    used = spark.createDataFrame(names, StructType([StructField("name", StringType())]))
    shuffle = "spark.sql.shuffle.partitions"
    before = spark.conf.get(shuffle)
    spark.conf.set(shuffle, str(job.tasks))  # 200 by default: far too many tasks for a listing
    try:
        rows = candidates.join(used, on="name", how="left_anti").collect()
        used_count = candidates.select("name").distinct().join(used, on="name", how="left_semi").count()
    except Exception as e:  # noqa: BLE001 - a lost cluster / executor / worker crash: one line
        raise PaimonError(f"the Spark job failed: {_java_message(e)}") from e
    finally:
        spark.conf.set(shuffle, before)
    meta = refs.used.names
    files = [OrphanFile(r["path"], r["kind"], int(r["size"]), r["mtime"]) for r in rows if r["name"] not in meta]
    return sorted(files, key=lambda f: f.path), used_count


def plan_remove_orphans_spark(job: _Job, table: FileStoreTable, older_than: str | None, force: bool,
                              now_millis: int, external_paths: bool) -> OrphanPlan:
    """:func:`~..operation.orphans.plan_remove_orphans` with listing, manifest reading and the
    anti-join as Spark tasks; the same plan (files, directories, counts) on the same table."""
    cutoff = resolve_cutoff(older_than, now_millis, force)
    lister = DirLister(table.file_io)
    scan_roots, tables_checked = _external_roots(table, lister, external_paths)
    branches = list_branches(GuardedReader(table.file_io, table.path, ACTION), lister)
    scan = _LeafScan(table, lister, cutoff)
    scan.table_files()
    if scan_roots:
        scan.external_files(scan_roots)
    scan.leftovers(branches)
    listing = job.cache(job.rdd(scan.leaves, _list_dirs, cutoff))
    scan.listed(job.collect(listing, lambda r: r[0] == "d"))
    refs = _used_files(job, table, lister, branches)
    orphans, refs.used.remote_used = _anti_join(job, listing, refs)
    files = sorted([*orphans, *scan.leftover_files], key=lambda f: f.path)
    if not refs.used.has_metadata and scan.saw_files:
        raise no_metadata_refusal(table.path)
    return OrphanPlan(
        table.path, cutoff, now_millis, files, _empty_dirs(table.file_io.is_local, files, scan), refs.used,
        scan.candidates, lister.listings + len(scan.leaves), lister.distinct + len({d for d, _, _ in scan.leaves}),
        external_roots=scan_roots,
        unscanned_external_roots=[] if external_paths else configured_roots(table.schema.options),
        tables_checked=tables_checked,
    )


def _delete_in_tasks(job: _Job, file_io: Any, files: Sequence[Any], phase: Callable[[Any], int],
                     on_delete: Callable[[Any], None] | None = None) -> None:
    """:func:`~..operation.file_deletion.delete_in_order` as tasks: phase by phase (a later phase
    never starts after a failure), each phase's files grouped by parent directory."""
    phases: dict[int, list[Any]] = {}
    for f in files:
        phases.setdefault(phase(f), []).append(f)
    for p in sorted(phases):
        by_dir: dict[str, list[Any]] = {}
        for f in phases[p]:
            by_dir.setdefault(parent(f.path), []).append(f)
        groups = [(d, [f.path for f in fs]) for d, fs in by_dir.items()]
        done = {r[1] for r in job.collect(job.rdd(groups, _delete_dirs))}
        for d, fs in by_dir.items():
            if d in done and on_delete is not None:
                for f in fs:
                    on_delete(f)


def remove_orphan_files_spark(
    table: FileStoreTable,
    *,
    older_than: str | None = None,
    force: bool = False,
    external_paths: bool = False,
    dry_run: bool = False,
    master: str | None = None,
    conf: Mapping[str, str] | None = None,
    parallelism: int | None = None,
    now_millis: int | None = None,
    progress: StepProgress | None = None,
) -> tuple[OrphanPlan, OrphanResult | None]:
    """Plan (and unless ``dry_run`` execute) an orphan removal on Spark; the execution is the
    local engine's :func:`~..operation.orphans.remove_orphans` (re-read of the latest snapshots
    and tags, kept files, empty directories) with the deletions as tasks."""
    import time

    now = int(time.time() * 1000) if now_millis is None else now_millis
    resolve_cutoff(older_than, now, force)  # refuse before starting a JVM
    session, created = spark_session(master, conf, f"paimon-cli remove-orphan-files {table.identifier}")
    job = _Job(session, table, parallelism)
    try:
        plan = plan_remove_orphans_spark(job, table, older_than, force, now, external_paths)
        if dry_run:
            return plan, None
        return plan, remove_orphans(table, plan, progress, delete=partial(_delete_in_tasks, job))
    finally:
        job.unpersist()
        if created:
            stop_session(session)
