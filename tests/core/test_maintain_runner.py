"""The maintain run: order, budgets, conflicts, failures and leases, with a recording executor."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.errors import CommitConflict, NotYetSupported, UnsafeRefused
from paimon_cli.core.maintain import runner
from paimon_cli.core.maintain.findings import Finding, FindingKind, Severity, TableHealth
from paimon_cli.core.maintain.lease import LEASE_FILE, Lease
from paimon_cli.core.maintain.plan import PlannedAction
from paimon_cli.core.maintain.policy import Policy
from paimon_cli.core.maintain.runner import ActionResult, MaintainRun, RunOptions, TableRecord, run_maintain


@pytest.fixture(autouse=True)
def no_waits(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(runner, "CONFLICT_WAITS", (0.0, 0.0, 0.0))


class Fake:
    """Tables with preset health (fixed once an action ran) and an executor that records calls."""

    def __init__(self, tmp: Path, scores: dict[str, int]) -> None:
        self.wh = Warehouse(str(tmp))
        self.scores = scores
        self.fixed: set[str] = set()
        self.calls: list[tuple[str, str, int | None]] = []
        self.errors: dict[str, list[BaseException]] = {}
        self.bytes = 100
        for name in scores:
            self.wh.create_table(name, "id BIGINT")

    def open(self, identifier: str):  # type: ignore[no-untyped-def]
        return self.wh.table(identifier).open()

    def assess(self, table, scan_orphans: bool) -> TableHealth:  # type: ignore[no-untyped-def]
        name = table.identifier.full_name
        db, t = name.split(".")
        if name in self.fixed:
            return TableHealth(db, t, 100)
        f = Finding(FindingKind.SMALL_FILES, Severity.WARNING, 9, 5, "files", "9 small files", "")
        return TableHealth(db, t, self.scores[name], (f,))

    def __call__(self, identifier: str, action: PlannedAction, max_bytes: int | None) -> ActionResult:
        self.calls.append((identifier, action.action.value, max_bytes))
        errs = self.errors.get(identifier)
        if errs:
            raise errs.pop(0)
        self.fixed.add(identifier)
        return ActionResult(bytes_rewritten=self.bytes, detail="compacted")

    def run(self, **options: object):  # type: ignore[no-untyped-def]
        return run_maintain(list(self.scores), self.open, self.assess, self, Policy.empty(), RunOptions(**options))


def test_least_healthy_first_and_scores_before_after(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 90, "db.b": 40, "db.c": 70})
    run = fake.run()
    assert [c[0] for c in fake.calls] == ["db.b", "db.c", "db.a"]
    assert [(t.identifier, t.score_before, t.score_after, t.outcome) for t in run.tables] == [
        ("db.b", 40, 100, "ok"), ("db.c", 70, 100, "ok"), ("db.a", 90, 100, "ok")]
    assert run.exit_code == 0
    lease = run.tables[0].lease
    assert lease is not None and lease["owner"] == run.owner and lease["acquired"] <= lease["released"]
    assert not list(tmp_path.rglob(LEASE_FILE))  # released


def test_dry_run_plans_only(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 50})
    run = fake.run(dry_run=True)
    assert fake.calls == [] and run.tables[0].outcome == "planned"
    assert [(a.action, a.outcome, a.reason) for a in run.tables[0].actions] == [("compact", "planned", "9 small files")]


def test_conflicts_are_retried_then_deferred_never_fatal(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 10, "db.b": 20, "db.c": 30})
    fake.errors["db.a"] = [CommitConflict("writer won")] * 2  # succeeds on the third attempt
    fake.errors["db.b"] = [CommitConflict("writer won")] * 10
    run = fake.run()
    a, b, c = run.tables
    assert (a.outcome, a.actions[0].attempts, a.actions[0].outcome) == ("ok", 3, "done")
    assert (b.outcome, b.actions[0].attempts, b.actions[0].outcome) == ("deferred", 4, "deferred")
    assert "commit conflict after 4 attempts" in b.actions[0].detail
    assert c.outcome == "ok" and run.exit_code == 0


def test_one_failing_table_never_stops_the_others_and_the_worst_code_wins(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 10, "db.b": 20, "db.c": 30})
    fake.errors["db.a"] = [UnsafeRefused("manifest unreadable")]
    fake.errors["db.b"] = [NotYetSupported("blob compaction")]
    run = fake.run()
    assert [(t.outcome, t.exit_code) for t in run.tables] == [("failed", 6), ("failed", 1), ("ok", 0)]
    assert run.tables[0].message == "manifest unreadable" and run.exit_code == 1
    assert not list(tmp_path.rglob(LEASE_FILE))  # released also on failure


def test_budgets_defer_the_rest(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 10, "db.b": 20, "db.c": 30})
    run = fake.run(max_bytes=150)
    assert [c[0] for c in fake.calls] == ["db.a", "db.b"]
    assert fake.calls[0][2] == 150 and fake.calls[1][2] == 50  # compaction gets what is left
    assert [t.outcome for t in run.tables] == ["ok", "ok", "deferred"]
    assert run.tables[2].actions[0].outcome == "deferred" and run.tables[2].message == "--max-bytes reached"
    fake2 = Fake(tmp_path / "x", {"db.a": 10})
    assert fake2.run(max_duration_millis=0).tables[0].outcome == "deferred" and fake2.calls == []


def test_a_leased_table_is_left_to_its_holder(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 10, "db.b": 20})
    t = fake.open("db.a")
    held = Lease.acquire(t.file_io, t.path, "other-run", 60_000)
    run = fake.run()
    a = run.tables[0]
    assert (a.outcome, a.exit_code, a.lease) == ("leased", 0, None) and "other-run" in a.message
    assert a.actions[0].outcome == "skipped" and [c[0] for c in fake.calls] == ["db.b"]
    held.release()


def test_parallel_runs_every_table_once(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {f"db.t{i}": i for i in range(6)})
    run = fake.run(parallel=3)
    assert sorted(c[0] for c in fake.calls) == sorted(fake.scores)
    assert all(t.outcome == "ok" for t in run.tables)


def test_a_corrupt_table_gets_no_lease_and_no_action(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 10, "db.b": 20})
    real = fake.assess

    def assess(table, scan_orphans):  # type: ignore[no-untyped-def]
        if table.identifier.full_name == "db.a":
            return TableHealth("db", "a", 0, (), error="snapshot-2: invalid JSON", error_code=4)
        return real(table, scan_orphans)

    fake.assess = assess  # type: ignore[method-assign]
    before = sorted(p.name for p in (tmp_path / "db.db" / "a").rglob("*"))
    run = fake.run()
    assert [(t.outcome, t.exit_code, t.score_after) for t in run.tables] == [("corrupt", 4, 0), ("ok", 0, 100)]
    assert sorted(p.name for p in (tmp_path / "db.db" / "a").rglob("*")) == before
    assert run.exit_code == 4 and [c[0] for c in fake.calls] == ["db.b"]


def test_the_lease_is_renewed_while_an_action_runs(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 10})
    slow = fake.__call__

    def call(identifier: str, action: PlannedAction, max_bytes: int | None) -> ActionResult:
        time.sleep(0.5)  # longer than the 300 ms TTL: only renewal keeps the lease
        return slow(identifier, action, max_bytes)

    run = run_maintain(["db.a"], fake.open, fake.assess, call, Policy.empty(), RunOptions(lease_ttl_millis=300))
    assert run.tables[0].outcome == "ok"


def test_a_table_that_cannot_be_opened_is_reported_and_the_rest_run(tmp_path: Path) -> None:
    fake = Fake(tmp_path, {"db.a": 10, "db.b": 20})
    real = fake.open

    def open_table(identifier: str):  # type: ignore[no-untyped-def]
        if identifier == "db.a":
            raise OSError("connection reset")
        return real(identifier)

    run = run_maintain(["db.a", "db.b"], open_table, fake.assess, fake, Policy.empty(), RunOptions())
    by_name = {t.identifier: t for t in run.tables}
    assert (by_name["db.a"].outcome, by_name["db.a"].exit_code, by_name["db.a"].message) == (
        "failed", 1, "OSError: connection reset")
    assert by_name["db.b"].outcome == "ok" and run.exit_code == 1


@pytest.mark.parametrize("parallel", [1, 2])
def test_an_interrupt_ends_the_run_with_its_record(tmp_path: Path, parallel: int) -> None:
    import signal

    from paimon_cli.core.utils.interrupt import Interrupted

    fake = Fake(tmp_path, {"db.a": 90, "db.b": 40, "db.c": 70})
    fake.errors["db.b"] = [Interrupted(signal.SIGTERM)]  # the least healthy table goes first
    with pytest.raises(runner.RunInterrupted) as stopped:
        fake.run(parallel=parallel)
    run = stopped.value.run
    assert stopped.value.signum == signal.SIGTERM and run.interrupted == "SIGTERM" and run.ended
    by = {t.identifier: t for t in run.tables}
    b = by["db.b"]
    assert (b.outcome, [(a.outcome, a.detail) for a in b.actions]) == (
        "interrupted", [("failed", "interrupted (SIGTERM)")])
    assert b.lease is not None and b.lease["released"] is not None
    for t in run.tables:  # a table either ran before the signal or waits for the next run
        assert all(a.outcome in ("done", "skipped", "failed") for a in t.actions)
        assert t.outcome == ("ok" if all(a.outcome == "done" for a in t.actions) else "interrupted")
    assert not list(tmp_path.rglob(LEASE_FILE))


def test_a_plain_keyboard_interrupt_counts_as_sigint(tmp_path: Path) -> None:
    import signal

    fake = Fake(tmp_path, {"db.a": 50})
    fake.errors["db.a"] = [KeyboardInterrupt()]  # Ctrl-C in a library caller (no CLI signal routing)
    with pytest.raises(runner.RunInterrupted) as stopped:
        fake.run()
    assert stopped.value.signum == signal.SIGINT and stopped.value.run.interrupted == "SIGINT"
    t = stopped.value.run.tables[0]
    assert t.outcome == "interrupted" and [(a.outcome, a.detail) for a in t.actions] == [
        ("failed", "interrupted (SIGINT)")]


def test_run_exit_code_orders_catalog_errors_too() -> None:
    """A table failed by an unreachable catalog (8) or a refused permission (9) gives the run
    its code instead of crashing the run's summary."""
    def run(*codes: int) -> int:
        return MaintainRun("o", False, "p", 0, tables=[TableRecord(f"db.t{i}", exit_code=c)
                                                         for i, c in enumerate(codes)]).exit_code

    assert run(0, 8) == 8 and run(5, 8) == 8 and run(8, 6) == 6
    assert run(4, 9) == 9 and run(9, 1) == 1 and run(0, 7) == 7
