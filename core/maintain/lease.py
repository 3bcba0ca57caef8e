"""A per-table lease so two ``maintain`` runs never work on one table at once.

The lease is one small JSON object at ``<table>/maintain.lease`` (owner, host, pid, acquired,
expires, token), created with the write-if-absent the commit publishes snapshots with
(:meth:`FileIO.try_write_atomic`): of two runs creating it, exactly one wins. Nothing else reads
the table root's plain files: Java (0.9 .. 2.x) and pypaimon open ``schema/``, ``snapshot/``,
``manifest/`` ... only, and orphan removal (ours and Java's) lists those areas and the
partition / bucket directories, never the files at the root, so a lease is neither data nor an
orphan to anyone.

An expired lease (its owner was killed) is taken over atomically: the taker first wins a
takeover marker named after the stale lease's token (write-if-absent again), checks the lease
still holds that token, deletes it and creates its own. A token never repeats, so a late
taker that wins the marker after the takeover finds another token and backs off. The owner
renews the lease while it works (every third of the TTL) and stops when a renewal finds the
lease no longer its own or past expiry. As with every lease, this assumes the hosts' clocks
agree to well within the TTL.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

from ..errors import NotFound, PaimonError
from ..io.commit_lock import NO_LOCK, CommitLock
from ..io.fileio import FileIO, join

LEASE_FILE = "maintain.lease"
DEFAULT_TTL_MILLIS = 10 * 60_000


def now_millis() -> int:
    return int(time.time() * 1000)


@dataclass(frozen=True)
class LeaseInfo:
    """The content of a lease object."""

    owner: str
    host: str
    pid: int
    acquired: int  # epoch millis
    expires: int  # epoch millis
    token: str  # unique per acquisition

    def to_bytes(self) -> bytes:
        return json.dumps(asdict(self), sort_keys=True).encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> LeaseInfo:
        obj = json.loads(data)
        return cls(str(obj["owner"]), str(obj["host"]), int(obj["pid"]), int(obj["acquired"]),
                   int(obj["expires"]), str(obj["token"]))

    def describe(self) -> str:
        return f"{self.owner} (host {self.host}, pid {self.pid}) until {time.strftime('%H:%M:%S', time.localtime(self.expires / 1000))}"


class LeaseHeld(Exception):
    """Another run holds the table's lease (not an error of the table: it is being looked after)."""


class Lease:
    """A held lease on one table; :meth:`release` it (``with`` does), also on failure."""

    def __init__(self, fio: FileIO, table_path: str, info: LeaseInfo, ttl_millis: int,
                 clock: Callable[[], int] = now_millis, lock: CommitLock = NO_LOCK) -> None:
        self.fio = fio
        self.lock = lock  # the catalog's commit lock: the lease is published like any metadata
        self.path = join(table_path, LEASE_FILE)
        self.info = info
        self.ttl_millis = ttl_millis
        self.clock = clock
        self.released_at: int | None = None
        self.lost: str | None = None  # why the lease was lost while held (None: still ours)
        self._lock = threading.Lock()

    @classmethod
    def acquire(cls, fio: FileIO, table_path: str, owner: str, ttl_millis: int = DEFAULT_TTL_MILLIS,
                clock: Callable[[], int] = now_millis, lock: CommitLock = NO_LOCK) -> Lease:
        """The table's lease, or :class:`LeaseHeld` naming the live holder; with a catalog's
        ``lock``, taken while holding it (as every commit of the table is)."""
        return lock.run_with_lock(lambda: cls._acquire(fio, table_path, owner, ttl_millis, clock, lock))

    @classmethod
    def _acquire(cls, fio: FileIO, table_path: str, owner: str, ttl_millis: int,
                 clock: Callable[[], int], lock: CommitLock) -> Lease:
        path = join(table_path, LEASE_FILE)
        for _ in range(3):  # a lease released or taken over meanwhile: look again
            info = _new_info(owner, ttl_millis, clock)
            if fio.try_write_atomic(path, info.to_bytes()):
                return cls(fio, table_path, info, ttl_millis, clock, lock)
            current = _read(fio, path)
            if current is None:
                continue
            if current.expires > clock():
                raise LeaseHeld(f"leased by {current.describe()}")
            if not _take_over(fio, path, current):
                raise LeaseHeld(f"expired lease of {current.owner} is being taken over by another run")
        raise LeaseHeld(f"{path}: the lease changed hands three times while acquiring it")

    def renew(self) -> bool:
        """Push the expiry out by the TTL; False (and :attr:`lost` set) when the lease is no
        longer ours or already expired (a taker may act on it)."""
        with self._lock:
            if self.lost is not None or self.released_at is not None:
                return self.lost is None
            return self.lock.run_with_lock(self._renew)

    def _renew(self) -> bool:
        now = self.clock()
        try:
            current = _read(self.fio, self.path)
        except (PaimonError, LeaseHeld) as e:
            self.lost = f"cannot read the lease to renew it: {e}"
            return False
        if current is None or current.token != self.info.token:
            self.lost = "the lease was taken over by another run"
        elif now >= self.info.expires:
            self.lost = "the lease expired before it was renewed"
        else:
            renewed = LeaseInfo(**{**asdict(self.info), "expires": now + self.ttl_millis})
            self.fio.write_bytes(self.path, renewed.to_bytes())
            self.info = renewed
        return self.lost is None

    def release(self) -> None:
        """Delete the lease if it is still ours (never another run's)."""
        with self._lock:
            if self.released_at is not None:
                return
            self.released_at = self.clock()
            with contextlib.suppress(PaimonError, LeaseHeld, OSError):
                self.lock.run_with_lock(self._delete_if_ours)

    def _delete_if_ours(self) -> None:
        current = _read(self.fio, self.path)
        if current is not None and current.token == self.info.token:
            self.fio.delete(self.path)

    @contextlib.contextmanager
    def kept_alive(self) -> Iterator[Lease]:
        """Renew on a background thread while the block runs; release when it ends."""
        stop = threading.Event()

        def renew_loop() -> None:
            while not stop.wait(self.ttl_millis / 3000.0):
                with contextlib.suppress(Exception):
                    if not self.renew():
                        return

        thread = threading.Thread(target=renew_loop, name="maintain-lease", daemon=True)
        thread.start()
        try:
            yield self
        finally:
            stop.set()
            thread.join()
            self.release()


def _new_info(owner: str, ttl_millis: int, clock: Callable[[], int]) -> LeaseInfo:
    now = clock()
    return LeaseInfo(owner, socket.gethostname(), os.getpid(), now, now + ttl_millis, uuid.uuid4().hex)


def _read(fio: FileIO, path: str) -> LeaseInfo | None:
    """The lease at ``path`` (None: there is none); an unreadable one is refused by name."""
    try:
        data = fio.read_bytes(path)
    except NotFound:
        return None
    try:
        return LeaseInfo.from_bytes(data)
    except (ValueError, KeyError, TypeError) as e:
        raise LeaseHeld(f"{path}: unreadable lease ({e}); delete it if no maintain run is working "
                        "on this table") from e


def _take_over(fio: FileIO, path: str, stale: LeaseInfo) -> bool:
    """Delete the expired lease ``stale`` if this run wins its takeover marker; True when the
    lease is gone (so the caller may create its own)."""
    marker = f"{path}.{stale.token}.takeover"
    # unique content: write-if-absent reads back and compares, so equal bytes from two takers
    # would both count as the winner's
    if not fio.try_write_atomic(marker, f"{stale.token} {uuid.uuid4()}".encode()):
        return False
    try:
        current = _read(fio, path)
        if current is not None and current.token != stale.token:
            return False  # taken over and re-created before we won the marker
        if current is not None:
            fio.delete(path)
        return True
    finally:
        fio.delete(marker)
