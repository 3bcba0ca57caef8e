"""Our HMS table lock against Java 0.9's HiveCatalogLock on a real Hive Metastore 2.3.9: they
exclude each other, ours is always released, a dead holder's lock expires as the metastore's
house-keeping allows, heartbeats keep ours alive, and a metastore restart does not strand it."""

from __future__ import annotations

import logging
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.hive_lock import HiveMetastoreLock, LockSettings, release_lock
from paimon_cli.core.catalog.hive_metastore import HiveMetastoreClient, LockInfo
from paimon_cli.core.errors import CatalogUnavailable, CommitConflict, LockNotAcquired, PaimonError
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db

REPO = Path(__file__).resolve().parents[2]


def lock_for(server: HiveMetastoreServer, **settings: float) -> HiveMetastoreLock:
    return HiveMetastoreLock(lambda: HiveMetastoreClient(server.uri, timeout_s=10), LockSettings(**settings))


def locks_on(server: HiveMetastoreServer, db: str, table: str) -> list[LockInfo]:
    with client(server) as hms:
        return hms.show_locks(db, table)


def wait_for(what: str, cond: Callable[[], Any], timeout_s: float = 60.0) -> Any:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        value = cond()
        if value:
            return value
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class Background(threading.Thread):
    """Run a call in a thread and keep its result or error."""

    def __init__(self, fn: Callable[[], Any]) -> None:
        super().__init__(daemon=True)
        self.fn = fn
        self.result: Any = None
        self.error: BaseException | None = None
        self.finished_at: float | None = None

    def run(self) -> None:
        try:
            self.result = self.fn()
        except BaseException as err:  # noqa: BLE001 - handed to the test
            self.error = err
        self.finished_at = time.monotonic()


def java_table(java_hive: JavaPaimon, server: HiveMetastoreServer, tmp_path: Path) -> tuple[str, str]:
    db = fresh_db()
    spec = hive_spec(server, tmp_path / "wh", **{"lock.enabled": "true", "lock-check-max-sleep": "200 ms"})
    java_hive.create_table(spec, db, "t", [("id", "INT"), ("v", "STRING")], [], [], {"bucket": "-1"})
    return spec, db


def test_our_lock_makes_javas_commit_wait(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    spec, db = java_table(java_hive, hive_metastore, tmp_path)
    snapshot_dir = tmp_path / "wh" / f"{db}.db" / "t" / "snapshot"
    with lock_for(hive_metastore).hold(db, "t") as held:
        commit = Background(lambda: java_hive.write(spec, db, "t", [{"id": 1, "v": "x"}]))
        commit.start()
        javas = wait_for("Java's lock request", lambda: [x for x in locks_on(hive_metastore, db, "t")
                                                          if x.state == "WAITING"])
        assert len(javas) == 1 and javas[0].type == "EXCLUSIVE" and javas[0].blocked_by == held.lock_id
        time.sleep(1.5)
        assert commit.is_alive(), "Java committed while we held the lock"
        assert not list(snapshot_dir.glob("snapshot-*"))
        released_at = time.monotonic()
    commit.join(60)
    assert commit.error is None and commit.result == 1
    assert commit.finished_at is not None and commit.finished_at >= released_at
    assert [r["id"] for r in java_hive.read(spec, db, "t", row_kind=False)] == [1]
    assert locks_on(hive_metastore, db, "t") == []


def test_javas_lock_makes_ours_wait_then_give_up_naming_the_holder(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    spec, db = java_table(java_hive, hive_metastore, tmp_path)
    hold = Background(lambda: java_hive.hold_lock(spec, db, "t", 7000))
    hold.start()
    javas = wait_for("Java's lock", lambda: [x for x in locks_on(hive_metastore, db, "t") if x.state == "ACQUIRED"])
    called: list[str] = []
    start = time.monotonic()
    with pytest.raises(LockNotAcquired) as err:
        lock_for(hive_metastore, acquire_timeout_s=1.5, check_max_sleep_s=0.4).run_with_lock(
            db, "t", lambda: called.append("ran"))
    took = time.monotonic() - start
    assert 1.5 <= took < 6, took
    assert not called
    msg = str(err.value)
    assert f"could not lock {db}.t" in msg and f"held by lock {javas[0].lock_id} of {javas[0].user}@" in msg
    # our withdrawn request is gone: only Java's lock is left
    assert [x.lock_id for x in locks_on(hive_metastore, db, "t")] == [javas[0].lock_id]

    # with time enough, ours gets the lock right after Java lets go
    got_at = lock_for(hive_metastore, acquire_timeout_s=60, check_max_sleep_s=0.3).run_with_lock(
        db, "t", time.monotonic)
    hold.join(30)
    assert hold.error is None and hold.result["held_ms"] >= 6500
    assert hold.finished_at is not None and got_at >= hold.finished_at - 1.0
    assert locks_on(hive_metastore, db, "t") == []


def test_the_lock_is_released_when_the_work_fails(hive_metastore: HiveMetastoreServer) -> None:
    db = fresh_db()
    lock = lock_for(hive_metastore)

    def work() -> None:
        assert [x.state for x in locks_on(hive_metastore, db, "t")] == ["ACQUIRED"]
        raise ValueError("commit failed")

    with pytest.raises(ValueError, match="commit failed"):
        lock.run_with_lock(db, "t", work)
    assert locks_on(hive_metastore, db, "t") == []
    start = time.monotonic()
    assert lock_for(hive_metastore, acquire_timeout_s=2).run_with_lock(db, "t", lambda: 42) == 42
    assert time.monotonic() - start < 2


_DEAD_HOLDER = """
import sys, time
from paimon_cli.core.catalog.hive_lock import HiveMetastoreLock, LockSettings
from paimon_cli.core.catalog.hive_metastore import HiveMetastoreClient
uri, db = sys.argv[1], sys.argv[2]
lock = HiveMetastoreLock(lambda: HiveMetastoreClient(uri), LockSettings(heartbeat_interval_s=3600))
with lock.hold(db, "t") as held:
    print(held.lock_id, flush=True)
    time.sleep(600)
"""


def test_a_dead_holders_lock_expires_while_ours_lives_on_heartbeats(hive_metastore: HiveMetastoreServer) -> None:
    """The metastore expires a lock nobody heartbeats after hive.txn.timeout (its house-keeping
    on, as the fixture runs it): a killed process's lock frees the table; ours, held longer
    than that timeout, survives because it is heartbeated."""
    db = fresh_db()
    with lock_for(hive_metastore, heartbeat_interval_s=2).hold(db, "alive") as alive:
        held_since = time.monotonic()
        proc = subprocess.Popen([sys.executable, "-c", _DEAD_HOLDER, hive_metastore.uri, db],
                                stdout=subprocess.PIPE, text=True, cwd=REPO)
        try:
            assert proc.stdout is not None
            dead_id = int(proc.stdout.readline())
        finally:
            os.kill(proc.pid, signal.SIGKILL)  # no unlock, no more heartbeats
            proc.wait()
        start = time.monotonic()
        got = lock_for(hive_metastore, acquire_timeout_s=120, check_max_sleep_s=1).run_with_lock(
            db, "t", lambda: locks_on(hive_metastore, db, "t"))
        waited = time.monotonic() - start
        assert waited >= hive_metastore.txn_timeout_s / 2, f"the dead lock went after {waited:.1f}s"
        assert dead_id not in {x.lock_id for x in got}
        time.sleep(max(0.0, hive_metastore.txn_timeout_s + 3 - (time.monotonic() - held_since)))
        assert time.monotonic() - held_since > hive_metastore.txn_timeout_s
        assert [x.lock_id for x in locks_on(hive_metastore, db, "alive")] == [alive.lock_id]
        alive.ensure_held()
    assert locks_on(hive_metastore, db, "alive") == []


def test_heartbeats_notice_a_lock_broken_by_an_operator(hive_metastore: HiveMetastoreServer) -> None:
    db = fresh_db()
    with lock_for(hive_metastore, heartbeat_interval_s=0.5).hold(db, "t") as held:
        with client(hive_metastore) as hms:
            release_lock(hms, held.lock_id)  # any client may release any lock on a 2.3 metastore
        wait_for("the heartbeat to notice", lambda: held.lost, timeout_s=15)
        with pytest.raises(CommitConflict, match=f"lost the Hive Metastore lock {held.lock_id}"):
            held.ensure_held()


def test_a_metastore_restart_while_held_does_not_strand_the_lock(running_metastore: HiveMetastoreServer) -> None:
    server = running_metastore
    db = fresh_db()
    with lock_for(server, heartbeat_interval_s=1).hold(db, "t") as held:
        server.stop()
        server.start()
        # the metastore keeps its locks in its database: still ours after the restart
        assert [x.lock_id for x in locks_on(server, db, "t")] == [held.lock_id]
        time.sleep(2.5)  # heartbeats resume on a fresh connection
        held.ensure_held()
    assert locks_on(server, db, "t") == []


def test_a_release_the_metastore_never_answers_is_left_for_release_lock(
    running_metastore: HiveMetastoreServer, caplog: pytest.LogCaptureFixture
) -> None:
    """Commit done, metastore gone: the work's result is kept, the release gives up after
    release_retry_s with a warning naming the lock, and the lock can be freed by id later."""
    server = running_metastore
    db = fresh_db()
    lock = lock_for(server, release_retry_s=3, heartbeat_interval_s=3600)
    caplog.set_level(logging.WARNING, logger="paimon_cli.core.catalog.hive_lock")
    original_timeout = server.txn_timeout_s
    try:
        with lock.hold(db, "t") as held:
            server.stop()
            left_at = time.monotonic()
        assert time.monotonic() - left_at < 10
        assert f"could not release Hive Metastore lock {held.lock_id}" in caplog.text
        server.txn_timeout_s = 3600  # nothing may expire it before we look
        server.start()
        with client(server) as hms:
            assert [(x.lock_id, x.state) for x in hms.show_locks(db, "t")] == [(held.lock_id, "ACQUIRED")]
            release_lock(hms, held.lock_id)
            assert hms.show_locks(db, "t") == []
    finally:
        server.txn_timeout_s = original_timeout
        server.stop()
        server.start()


def test_acquiring_with_the_metastore_down_fails_at_once(running_metastore: HiveMetastoreServer) -> None:
    running_metastore.stop()
    start = time.monotonic()
    with pytest.raises(PaimonError, match="Hive Metastore unreachable") as err:
        lock_for(running_metastore).run_with_lock("db", "t", lambda: None)
    assert type(err.value) is CatalogUnavailable and err.value.exit_code == 8
    assert time.monotonic() - start < 5


def test_a_lock_request_a_hung_metastore_answers_too_late_is_withdrawn(running_metastore: HiveMetastoreServer) -> None:
    """A frozen metastore takes our lock request into its socket and grants it when it wakes up,
    after our call timed out: nobody would ever release that lock (without Hive's house-keeping
    it never expires). The request carries a unique agent info; once the metastore answers
    again it is found and released. Nothing ran under it, so this is exit 8, not an unknown
    outcome."""
    server = running_metastore
    db = fresh_db()
    lock = HiveMetastoreLock(lambda: HiveMetastoreClient(server.uri, timeout_s=1.5), LockSettings())
    ran: list[int] = []
    server.pause()
    waking = threading.Timer(5.0, server.resume)
    waking.start()
    try:
        with pytest.raises(CatalogUnavailable, match=f"could not lock {db}.t") as err:
            lock.run_with_lock(db, "t", lambda: ran.append(1))
    finally:
        waking.join()
    assert not ran and err.value.exit_code == 8
    assert "before its answer" in str(err.value) and "nothing was committed, the lock " in str(err.value) \
        and "it granted late was released" in str(err.value)
    assert locks_on(server, db, "t") == []  # now, not after hive.txn.timeout
