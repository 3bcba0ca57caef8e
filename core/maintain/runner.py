"""The run of ``maintain``: assess every table, plan, then work the plans under leases.

Deciding is apart from doing: :func:`plan_tables` only reads (health and the policy), and
:func:`run_plans` executes; ``--dry-run`` stops after the first. The procedures themselves
are the library's verbs (``compact``, ``expire``, ...), handed in as an :class:`Executor` by
the API, so ``maintain`` never runs a procedure differently from its own command.

Per table, the worst that can happen stays with that table: an error fails the table (its
remaining actions are skipped, the other tables go on), a commit conflict with a writer is
retried a few times and then deferred, an unreadable table is reported and never touched (no
lease is written into it either), and a table leased by another run is left to that run.
"""

from __future__ import annotations

import signal
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import CommitConflict, CorruptMetadata, PaimonError, worst_exit_code
from ..utils import interrupt
from ..utils.workers import worker_pool
from .findings import TableHealth
from .lease import DEFAULT_TTL_MILLIS, Lease, LeaseHeld, now_millis
from .plan import PlannedAction, TablePlan, last_full_compaction_millis, plan_table
from .policy import Policy

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

# a table's exit code: 0 for ok / planned / leased / deferred, 4 for corrupt, the error's own
# code for failed; the run exits with the worst (errors.worst_exit_code)
CONFLICT_RETRIES = 3
CONFLICT_WAITS = (0.5, 1.0, 2.0)


@dataclass
class ActionResult:
    """What one procedure did, as its report tells it."""

    bytes_rewritten: int = 0
    bytes_deleted: int = 0
    snapshot_id: int | None = None
    detail: str = ""


class Executor(Protocol):
    def __call__(self, identifier: str, action: PlannedAction, max_bytes: int | None) -> ActionResult: ...


Assess = Callable[["FileStoreTable", bool], TableHealth]
OpenTable = Callable[[str], "FileStoreTable"]


@dataclass
class RunOptions:
    dry_run: bool = False
    max_duration_millis: int | None = None
    max_bytes: int | None = None
    parallel: int = 1
    lease_ttl_millis: int = DEFAULT_TTL_MILLIS
    owner: str = field(default_factory=lambda: f"maintain-{uuid.uuid4().hex[:12]}")


@dataclass
class ActionRecord:
    action: str
    reason: str
    outcome: str  # done | planned | failed | deferred | skipped | held-back
    seconds: float = 0.0
    bytes_rewritten: int = 0
    bytes_deleted: int = 0
    snapshot_id: int | None = None
    attempts: int = 0
    detail: str = ""
    started: int | None = None  # epoch millis
    ended: int | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class TableRecord:
    """One table's part of the run (the report's row and its details)."""

    identifier: str
    score_before: int | None = None
    score_after: int | None = None
    outcome: str = "ok"
    exit_code: int = 0
    message: str = ""
    seconds: float = 0.0
    actions: list[ActionRecord] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)
    rules: dict[str, Any] | None = None
    lease: dict[str, Any] | None = None  # owner, acquired, released (epoch millis)

    @property
    def bytes_rewritten(self) -> int:
        return sum(a.bytes_rewritten for a in self.actions)

    @property
    def bytes_deleted(self) -> int:
        return sum(a.bytes_deleted for a in self.actions)

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k != "actions"}
        return d | {"bytes_rewritten": self.bytes_rewritten, "bytes_deleted": self.bytes_deleted,
                    "actions": [a.as_dict() for a in self.actions]}

    @staticmethod
    def columns() -> list[str]:
        """The keys of :meth:`as_dict`, in its order."""
        return list(TableRecord("").as_dict())


@dataclass
class MaintainRun:
    owner: str
    dry_run: bool
    policy: str
    started: int
    ended: int = 0
    tables: list[TableRecord] = field(default_factory=list)
    interrupted: str | None = None  # SIGINT / SIGTERM, when a signal stopped the run

    @property
    def exit_code(self) -> int:
        return worst_exit_code(t.exit_code for t in self.tables)

    def as_dict(self) -> dict[str, Any]:
        return {"owner": self.owner, "dry_run": self.dry_run, "policy": self.policy, "started": self.started,
                "ended": self.ended, "exit_code": self.exit_code, "interrupted": self.interrupted,
                "tables": [t.as_dict() for t in self.tables]}


class RunInterrupted(interrupt.Interrupted):
    """SIGINT / SIGTERM stopped the run; ``run`` is its record up to then (every lease is
    released by now), so ``--report`` can still tell what was done."""

    def __init__(self, signum: int, run: MaintainRun) -> None:
        super().__init__(signum)
        self.run = run


def _mark_interrupted(run: MaintainRun, signum: int) -> None:
    """The actions the signal kept from running are skipped; the tables it cut short say so."""
    name = signal.Signals(signum).name
    run.interrupted = name
    for t in run.tables:
        cut = False
        for a in t.actions:
            if a.outcome == "planned":
                a.outcome, a.detail, cut = "skipped", f"interrupted ({name})", True
            elif a.outcome == "failed" and a.detail == "interrupted":
                a.detail, cut = f"interrupted ({name})", True
        if cut and t.outcome in ("ok", "deferred"):
            t.outcome, t.message = "interrupted", f"stopped by {name}; the rest waits for the next run"


def _fail(record: TableRecord, e: BaseException, outcome: str = "failed") -> None:
    record.outcome = outcome
    record.exit_code = getattr(e, "exit_code", 1) if outcome == "failed" else 4
    text = " ".join(str(e).split())
    record.message = text if isinstance(e, PaimonError) and text else f"{type(e).__name__}: {text}".rstrip(": ")


def _health_fields(record: TableRecord, health: TableHealth) -> None:
    record.score_before = health.score
    record.findings = [{"kind": f.kind.value, "severity": f.severity.value, "value": f.value,
                        "threshold": f.threshold, "unit": f.unit, "message": f.message, "fix": f.fix}
                       for f in health.findings]


def assess_and_plan(identifier: str, open_table: OpenTable, assess: Assess, policy: Policy
                    ) -> tuple[TableRecord, TablePlan | None]:
    """Read one table's health and plan it (reads only); an unreadable table gets no plan."""
    record = TableRecord(identifier)
    try:
        table = open_table(identifier)
        database, name = identifier.split(".", 1)
        rules = policy.rules_for(database, name, table.schema.options)
        record.rules = rules.as_dict()
        health = assess(table, rules.remove_orphan_files)
        _health_fields(record, health)
        if health.error is not None:
            code = getattr(health, "error_code", None) or 4
            record.outcome, record.exit_code = ("corrupt" if code == 4 else "failed"), code
            record.message = health.error
            return record, None
        last_full, has_data = (None, False)
        if rules.full_compaction_interval_millis is not None:
            last_full, has_data = last_full_compaction_millis(table)
        plan = plan_table(health, rules, last_full, has_data)
    except PaimonError as e:
        _fail(record, e, "corrupt" if isinstance(e, CorruptMetadata) else "failed")
        return record, None
    except Exception as e:  # noqa: BLE001 - one table that cannot be opened never stops the others
        _fail(record, e)
        return record, None
    record.actions = [ActionRecord(a.action.value, a.reason, "planned") for a in plan.actions]
    record.actions += [ActionRecord(a.action.value, a.reason, "held-back", detail="off by policy")
                       for a in plan.held_back]
    return record, plan


def plan_tables(identifiers: list[str], open_table: OpenTable, assess: Assess, policy: Policy, parallel: int = 1
                ) -> list[tuple[TableRecord, TablePlan | None]]:
    """Assess and plan every table, least healthy first (unreadable tables lead the report)."""
    with worker_pool(parallel, "maintain-assess") as pool:
        planned = list(pool.map(lambda i: assess_and_plan(i, open_table, assess, policy), identifiers))
    return sorted(planned, key=lambda rp: (rp[0].score_before if rp[0].score_before is not None else -1,
                                           rp[0].identifier))


class _Budget:
    """The run's time and byte budgets, shared by the parallel workers."""

    def __init__(self, options: RunOptions, started: float) -> None:
        self.options = options
        self.started = started
        self.bytes_used = 0
        self.lock = threading.Lock()

    def exhausted(self) -> str | None:
        o = self.options
        if o.max_duration_millis is not None and (time.monotonic() - self.started) * 1000 >= o.max_duration_millis:
            return "--max-duration reached"
        with self.lock:
            if o.max_bytes is not None and self.bytes_used >= o.max_bytes:
                return "--max-bytes reached"
        return None

    def bytes_left(self) -> int | None:
        with self.lock:
            return None if self.options.max_bytes is None else max(0, self.options.max_bytes - self.bytes_used)

    def spend(self, n: int) -> None:
        with self.lock:
            self.bytes_used += n


def run_maintain(identifiers: list[str], open_table: OpenTable, assess: Assess, execute: Executor,
                 policy: Policy, options: RunOptions) -> MaintainRun:
    """Assess and plan every table, then (unless a dry run) work the plans, least healthy
    first, one table at a time or ``options.parallel`` at once."""
    run = MaintainRun(options.owner, options.dry_run, policy.source, now_millis())
    planned = plan_tables(identifiers, open_table, assess, policy, options.parallel)
    run.tables = [record for record, _ in planned]
    for record, plan in planned:
        if plan is None or not plan.actions:
            record.score_after = record.score_before  # nothing to do, or never touched
        elif plan is not None and options.dry_run:
            record.outcome = "planned"
    if not options.dry_run:
        budget = _Budget(options, time.monotonic())
        work = [(r, p) for r, p in planned if p is not None and p.actions]

        def one(item: tuple[TableRecord, TablePlan]) -> None:
            _work_table(item[0], open_table, assess, execute, policy, options, budget)

        try:
            if options.parallel <= 1:
                for item in work:  # on the main thread, as the single-table commands run
                    one(item)
            else:
                with worker_pool(options.parallel, "maintain") as pool:
                    for fut in [pool.submit(one, item) for item in work]:
                        fut.result()
        except KeyboardInterrupt as e:  # the CLI's SIGINT / SIGTERM (interrupt.Interrupted), or a library Ctrl-C
            signum = getattr(e, "signum", signal.SIGINT)
            _mark_interrupted(run, signum)
            run.ended = now_millis()
            raise RunInterrupted(signum, run) from e
    run.ended = now_millis()
    return run


def _work_table(record: TableRecord, open_table: OpenTable, assess: Assess, execute: Executor,
                policy: Policy, options: RunOptions, budget: _Budget) -> None:
    """Work one table's plan under its lease; every failure stays in ``record``."""
    start = time.monotonic()
    try:
        why = budget.exhausted()
        if why is not None:
            _defer_rest(record, record.actions, why)
            return
        table = open_table(record.identifier)
        try:
            lease = Lease.acquire(table.file_io, table.path, options.owner, options.lease_ttl_millis,
                                  lock=table.catalog_environment.lease_lock)
        except LeaseHeld as e:
            record.outcome, record.message = "leased", str(e)
            for a in record.actions:
                a.outcome = "skipped" if a.outcome == "planned" else a.outcome
            return
        record.lease = {"owner": lease.info.owner, "acquired": lease.info.acquired, "released": None}
        try:
            with lease.kept_alive():
                _work_leased(record, lease, open_table, assess, execute, policy, budget)
        finally:
            record.lease["released"] = lease.released_at
        if record.outcome != "corrupt":
            rules_orphans = bool(record.rules and record.rules.get("remove-orphan-files"))
            record.score_after = assess(open_table(record.identifier), rules_orphans).score
    except Exception as e:  # noqa: BLE001 - one table's failure never stops the others
        if record.outcome not in ("failed", "corrupt"):
            _fail(record, e)
    finally:
        record.seconds = round(time.monotonic() - start, 3)


def _work_leased(record: TableRecord, lease: Lease, open_table: OpenTable, assess: Assess, execute: Executor,
                 policy: Policy, budget: _Budget) -> None:
    """Re-plan under the lease (another run may have done the work meanwhile), then act."""
    fresh, plan = assess_and_plan(record.identifier, open_table, assess, policy)
    lease_info = record.lease
    record.__dict__.update({k: v for k, v in fresh.__dict__.items() if k not in ("seconds", "lease")})
    record.lease = lease_info
    if plan is None:
        return
    todo = [(r, a) for r, a in zip(record.actions, plan.actions, strict=False) if r.outcome == "planned"]
    for i, (rec, action) in enumerate(todo):
        interrupt.check()  # a worker thread stops between actions once SIGINT / SIGTERM came
        why = budget.exhausted() or (f"lease lost: {lease.lost}" if lease.lost else None)
        if why is not None:
            _defer_rest(record, [r for r, _ in todo[i:]], why)
            if lease.lost:
                _fail(record, PaimonError(why))
            return
        _run_action(record, rec, action, execute, budget)
        if rec.outcome == "failed":
            for later, _ in todo[i + 1:]:
                later.outcome, later.detail = "skipped", f"after {rec.action} failed"
            return
    if todo and not lease.renew():  # still ours at the end? (an owner past expiry may have had company)
        _fail(record, PaimonError(f"lease lost while working: {lease.lost}"))


def _run_action(record: TableRecord, rec: ActionRecord, action: PlannedAction, execute: Executor,
                budget: _Budget) -> None:
    """One procedure; commit conflicts are retried, then deferred; other errors fail the table."""
    rec.started = now_millis()
    t0 = time.monotonic()
    try:
        for attempt in range(1, CONFLICT_RETRIES + 2):
            rec.attempts = attempt
            try:
                result = execute(record.identifier, action, budget.bytes_left())
            except CommitConflict as e:
                if attempt > CONFLICT_RETRIES:
                    rec.outcome, rec.detail = "deferred", f"commit conflict after {attempt} attempts: {e}"
                    record.outcome = "deferred" if record.outcome == "ok" else record.outcome
                    return
                time.sleep(CONFLICT_WAITS[attempt - 1])
                continue
            except KeyboardInterrupt:  # a signal (interrupt.Interrupted) or a library caller's Ctrl-C
                rec.outcome, rec.detail = "failed", "interrupted"
                raise
            except Exception as e:  # noqa: BLE001 - recorded; the table stops, the run goes on
                rec.outcome = "failed"
                _fail(record, e)
                rec.detail = record.message
                return
            rec.outcome, rec.detail = "done", result.detail
            rec.bytes_rewritten, rec.bytes_deleted, rec.snapshot_id = (
                result.bytes_rewritten, result.bytes_deleted, result.snapshot_id)
            budget.spend(result.bytes_rewritten)
            return
    finally:
        rec.ended = now_millis()
        rec.seconds = round(time.monotonic() - t0, 3)


def _defer_rest(record: TableRecord, actions: list[ActionRecord], why: str) -> None:
    for a in actions:
        if a.outcome == "planned":
            a.outcome, a.detail = "deferred", why
    if record.outcome == "ok":
        record.outcome, record.message = "deferred", why
