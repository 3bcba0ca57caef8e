"""``expire --engine spark``: snapshot expiry with the bulk of the work in Spark tasks.

Java never distributes expiry (its Spark procedure runs ExpireSnapshotsImpl on the driver with
a thread pool); on a table with thousands of expiring snapshots the reading of their delta
manifests and the deletes dominate, so here those run as tasks and everything else stays
exactly the local engine's code on the driver:

* the driver picks the range (retain min/max, time, consumers, the per-run limit), reads the
  tags, the end snapshot and the other branches, fail closed
  (:func:`~..operation.expire.plan_expire`, the local planner itself);
* tasks read each expiring snapshot's delta (and changelog) manifests with the same decision
  functions (:class:`SparkDeltas`) and return only the files those snapshots delete or add;
  the driver filters them through the same skipping sets, so the plan -- its files, their
  order, its notes -- is the local engine's;
* :func:`~..operation.expire.apply_expire` deletes phase by phase; each phase (data files,
  manifests, lists, statistics) is one Spark job (:class:`SparkDeleter`) and a later phase
  starts only after every task of the one before succeeded. The snapshot files (in order) and
  the EARLIEST hint stay on the driver, so a crash midway leaves what the local engine leaves.

A task never raises into Spark: a refusal or read error comes back as data and the driver
raises it (same class, same exit code) before anything is deleted. ``--changelog`` plans on
the driver (long-lived changelogs are few) and deletes in tasks.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from ..compact.job import choose_explicit_engine
from ..compact.local import TableRef
from ..compact.spark import TASKS_PER_CORE, _java_message, _rebuild_error, limit_task_cores, spark_session, stop_session
from ..errors import PaimonError
from ..manifest.expire_file_entry import ExpireFileEntry, FileKey
from ..operation.expire import ExpireResult, apply_expire, plan_expire
from ..operation.expire_plan import ACTION, ExpirePlan, ExpirePolicy
from ..operation.file_deletion import FileDeletion, GuardedReader, added_in_changelog
from ..operation.live_files import deleted_in_delta
from ..operation.snapshot_deletion import DeltaReader
from ..refs.snapshot import Snapshot
from ..utils.progress import StepProgress

if TYPE_CHECKING:
    from ..io.fileio import FileIO
    from ..table.file_store_table import FileStoreTable

# one task's error, shipped as data: (error class path, message, exit code, traceback)
TaskError = tuple[str, str, int, str]


def use_spark(engine: str, master: str | None, conf: Mapping[str, str] | None) -> bool:
    """Whether ``--engine`` runs on Spark (compact's rules; ``auto``: only when a master or a
    conf is given, expiry has no size threshold); refuses a Spark engine that cannot start."""
    explicit = choose_explicit_engine(engine.lower(), master, conf)
    return explicit is not None and explicit[0] == "spark"


def expire_on_spark(table: FileStoreTable, policy: ExpirePolicy, *, dry_run: bool, master: str | None = None,
                    conf: Mapping[str, str] | None = None, parallelism: int | None = None,
                    progress: StepProgress | None = None) -> tuple[ExpirePlan, ExpireResult | None]:
    """(plan, result) as the local engine's ``plan_expire`` + ``apply_expire`` give them (no
    result for a dry run), with the manifest reading and the deletes in Spark tasks."""
    session, created = spark_session(master, conf, f"paimon-cli expire {table.identifier}")
    try:
        ctx = _Job(session.sparkContext, TableRef.of(table), parallelism)
        plan = plan_expire(table, policy, deltas=SparkDeltas(ctx))
        result = None if dry_run else apply_expire(table, plan, progress=progress, delete=SparkDeleter(ctx))
    finally:
        if created:
            stop_session(session)
    return plan, result


@dataclass
class _Job:
    sc: Any  # SparkContext
    ref: TableRef
    parallelism: int | None

    def slices(self, n: int) -> int:
        tasks = self.parallelism or max(1, self.sc.defaultParallelism) * TASKS_PER_CORE
        return max(1, min(n, tasks))

    def run(self, items: Sequence[Any], task: Callable[[TableRef, list[Any]], list[Any]]) -> list[Any]:
        """``task`` over contiguous slices of ``items``, results in item order."""
        n = self.slices(len(items))
        size = -(-len(items) // n)
        chunks = [list(items[i : i + size]) for i in range(0, len(items), size)]
        try:
            return list(self.sc.parallelize(chunks, len(chunks)).flatMap(partial(task, self.ref)).collect())
        except Exception as e:  # noqa: BLE001 - a lost cluster / executor / worker crash: one line
            raise PaimonError(f"the Spark job failed: {_java_message(e)}") from e


def _error(e: BaseException) -> TaskError:
    cls = type(e)
    return f"{cls.__module__}:{cls.__qualname__}", str(e), int(getattr(e, "exit_code", 1)), traceback.format_exc()


# ---------------------------------------------------------------------------------------
# reading the expiring snapshots' manifests
# ---------------------------------------------------------------------------------------

# (snapshot, read its delta? with missing_ok, read its changelog?)
_ReadItem = tuple[Snapshot, bool | None, bool]
_Deleted = dict[FileKey, ExpireFileEntry] | None
_Added = list[ExpireFileEntry] | None


def _read_task(ref: TableRef, items: list[_ReadItem]) -> list[tuple[int, _Deleted, _Added, TaskError | None]]:
    """Executor side: per snapshot, what its delta deletes and its changelog adds (the local
    engine's functions on a fresh guarded reader); after an error the rest is skipped."""
    limit_task_cores()
    out: list[tuple[int, _Deleted, _Added, TaskError | None]] = []
    try:
        table = ref.open()
        reader = GuardedReader(table.file_io, table.path, ACTION)
    except BaseException as e:  # noqa: BLE001 - shipped back to the driver as data
        return [(items[0][0].id, None, None, _error(e))]
    for snap, data_missing_ok, changelog in items:
        try:
            deleted = None if data_missing_ok is None else deleted_in_delta(reader, snap, data_missing_ok)
            added = added_in_changelog(reader, snap) if changelog else None
            out.append((snap.id, deleted, added, None))
        except BaseException as e:  # noqa: BLE001 - shipped back to the driver as data
            out.append((snap.id, None, None, _error(e)))
            break
    return out


@dataclass
class SparkDeltas(DeltaReader):
    """The expiring snapshots' delta and changelog manifests, read in one Spark job."""

    job: _Job
    _deleted: dict[int, _Deleted] = field(default_factory=dict)
    _added: dict[int, _Added] = field(default_factory=dict)

    def prepare(self, reader: GuardedReader, data: list[tuple[Snapshot, bool]], changelog: list[Snapshot]) -> None:
        items: dict[int, _ReadItem] = {s.id: (s, ok, False) for s, ok in data}
        for s in changelog:
            items[s.id] = (s, items[s.id][1] if s.id in items else None, True)
        results = self.job.run([items[i] for i in sorted(items)], _read_task)
        errors = sorted((sid, err) for sid, _, _, err in results if err is not None)
        if errors:  # the first failing snapshot, as the local engine's walk would meet it
            raise _rebuild_error(errors[0][1])
        for sid, deleted, added, _ in results:
            self._deleted[sid] = deleted
            self._added[sid] = added

    def deleted(self, reader: GuardedReader, snap: Snapshot, missing_ok: bool) -> _Deleted:
        return self._deleted[snap.id]

    def changelog_added(self, reader: GuardedReader, snap: Snapshot) -> _Added:
        return self._added[snap.id]


# ---------------------------------------------------------------------------------------
# deleting
# ---------------------------------------------------------------------------------------


def _delete_task(ref: TableRef, items: list[tuple[int, str]]) -> list[tuple[int, TaskError | None]]:
    """Executor side: delete each path (one already gone counts as deleted); the first
    failure stops the task."""
    out: list[tuple[int, TaskError | None]] = []
    try:
        file_io = ref.open().file_io
        for i, path in items:
            file_io.delete(path)
            out.append((i, None))
    except BaseException as e:  # noqa: BLE001 - shipped back to the driver as data
        out.append((items[len(out)][0], _error(e)))
    return out


@dataclass
class SparkDeleter:
    """:func:`~..operation.file_deletion.delete_in_order` with each phase one Spark job: a
    phase starts only when every task of the one before succeeded."""

    job: _Job

    def __call__(self, file_io: FileIO, files: list[FileDeletion], phase: Callable[[FileDeletion], int],
                 on_delete: Callable[[FileDeletion], None]) -> None:
        groups: dict[int, list[FileDeletion]] = {}
        for f in files:
            groups.setdefault(phase(f), []).append(f)
        for p in sorted(groups):
            group = groups[p]
            results = self.job.run([(i, f.path) for i, f in enumerate(group)], _delete_task)
            for i, err in results:
                if err is None:
                    on_delete(group[i])
            errors = [err for _, err in results if err is not None]
            if errors:
                raise _rebuild_error(errors[0])
