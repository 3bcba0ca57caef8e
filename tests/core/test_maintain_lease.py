"""The per-table maintain lease: one owner at a time, atomic takeover after expiry only."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.maintain.lease import LEASE_FILE, Lease, LeaseHeld, LeaseInfo
from paimon_cli.core.operation.orphans import plan_remove_orphans
from tests.core.test_orphans_support import age_all, make_table, reload, write_rows


class Clock:
    def __init__(self, now: int = 1_000_000) -> None:
        self.now = now

    def __call__(self) -> int:
        return self.now


@pytest.fixture
def fio(tmp_path: Path) -> FileIO:
    return FileIO(str(tmp_path))


def test_one_owner_until_released(fio: FileIO, tmp_path: Path) -> None:
    clock = Clock()
    a = Lease.acquire(fio, str(tmp_path), "run-a", 60_000, clock)
    info = LeaseInfo.from_bytes((tmp_path / LEASE_FILE).read_bytes())
    assert (info.owner, info.acquired, info.expires) == ("run-a", clock.now, clock.now + 60_000)
    assert info.pid > 0 and info.host
    with pytest.raises(LeaseHeld, match="leased by run-a"):
        Lease.acquire(fio, str(tmp_path), "run-b", 60_000, clock)
    a.release()
    assert not (tmp_path / LEASE_FILE).exists()
    b = Lease.acquire(fio, str(tmp_path), "run-b", 60_000, clock)
    a.release()  # a second release by the old owner never deletes another run's lease
    assert LeaseInfo.from_bytes((tmp_path / LEASE_FILE).read_bytes()).token == b.info.token


def test_expired_lease_is_taken_over_and_the_old_owner_learns_it(fio: FileIO, tmp_path: Path) -> None:
    clock = Clock()
    dead = Lease.acquire(fio, str(tmp_path), "killed", 1_000, clock)
    clock.now += 999
    with pytest.raises(LeaseHeld):
        Lease.acquire(fio, str(tmp_path), "next", 1_000, clock)
    clock.now += 2
    taker = Lease.acquire(fio, str(tmp_path), "next", 1_000, clock)
    assert taker.info.owner == "next"
    assert not dead.renew() and dead.lost == "the lease was taken over by another run"
    dead.release()
    assert (tmp_path / LEASE_FILE).exists()  # still the taker's
    assert not list(tmp_path.glob("*.takeover"))  # the marker is cleaned up
    assert taker.renew() and taker.info.expires == clock.now + 1_000


def test_an_owner_that_missed_its_expiry_stops(fio: FileIO, tmp_path: Path) -> None:
    clock = Clock()
    lease = Lease.acquire(fio, str(tmp_path), "slow", 1_000, clock)
    clock.now += 1_000
    assert not lease.renew() and lease.lost == "the lease expired before it was renewed"


def test_concurrent_takeover_has_exactly_one_winner(fio: FileIO, tmp_path: Path) -> None:
    clock = Clock()
    Lease.acquire(fio, str(tmp_path), "killed", 1_000, clock)
    clock.now += 5_000
    winners: list[Lease] = []
    refused: list[str] = []
    gate = threading.Barrier(8)

    def contend(i: int) -> None:
        gate.wait()
        try:
            winners.append(Lease.acquire(FileIO(str(tmp_path)), str(tmp_path), f"run-{i}", 60_000, clock))
        except LeaseHeld as e:
            refused.append(str(e))

    threads = [threading.Thread(target=contend, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(winners) == 1 and len(refused) == 7
    assert LeaseInfo.from_bytes((tmp_path / LEASE_FILE).read_bytes()).token == winners[0].info.token


def test_kept_alive_renews_and_releases_on_failure(fio: FileIO, tmp_path: Path) -> None:
    lease = Lease.acquire(fio, str(tmp_path), "run", 300)  # renewed every 100 ms
    first = lease.info.expires
    with pytest.raises(RuntimeError), lease.kept_alive():
        threading.Event().wait(0.45)
        assert lease.info.expires > first and lease.lost is None
        raise RuntimeError("an action failed")
    assert not (tmp_path / LEASE_FILE).exists() and lease.released_at is not None


def test_an_unreadable_lease_is_never_taken(fio: FileIO, tmp_path: Path) -> None:
    (tmp_path / LEASE_FILE).write_bytes(b"garbage")
    with pytest.raises(LeaseHeld, match="unreadable lease"):
        Lease.acquire(fio, str(tmp_path), "run", 1_000)
    assert (tmp_path / LEASE_FILE).read_bytes() == b"garbage"


def test_orphan_removal_neither_deletes_nor_chokes_on_a_lease(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    table = make_table(wh, pk=False)
    write_rows(table, [(1, "a", "x")], tmp_path)
    Lease.acquire(table.file_io, table.path, "run", 60_000)
    Path(table.path, f"{LEASE_FILE}.deadbeef.takeover").write_bytes(b"deadbeef")  # a crashed taker's marker
    age_all(table.path)
    plan = plan_remove_orphans(reload(table), "1d", False)
    assert not [f for f in plan.files if LEASE_FILE in f.path]
