"""The Hive Metastore table lock around a commit: Java's ``HiveCatalogLock``.

One EXCLUSIVE table-level lock, polled with back-off, released in every outcome; in addition it
sends heartbeats while held (a metastore with Hive's lock house-keeping on expires unheartbeated
locks after ``hive.txn.timeout``) and names the holder when it gives up. The lock not acquired in
``lock-acquire-timeout``, or lost while held -> :class:`LockNotAcquired` (a
:class:`CommitConflict`, exit 5). The calls go through :class:`.hive_metastore.HiveMetastoreClient`.
"""

from __future__ import annotations

import getpass
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from ..errors import (
    CatalogUnavailable,
    CommitConflict,
    LockNotAcquired,
    NotFound,
    OutcomeUnknown,
    PaimonError,
)
from ..utils.durations import parse_duration_millis
from .hive_metastore import HiveMetastoreClient

log = logging.getLogger(__name__)
T = TypeVar("T")

# Java's defaults (CatalogOptions)
DEFAULT_LOCK_CHECK_MAX_SLEEP_S = 8.0
DEFAULT_LOCK_ACQUIRE_TIMEOUT_S = 480.0
DEFAULT_HEARTBEAT_INTERVAL_S = 60.0  # well inside hive.txn.timeout's default 300 s


@dataclass(frozen=True)
class LockSettings:
    """The catalog options of the lock, in seconds."""

    check_max_sleep_s: float = DEFAULT_LOCK_CHECK_MAX_SLEEP_S
    acquire_timeout_s: float = DEFAULT_LOCK_ACQUIRE_TIMEOUT_S
    heartbeat_interval_s: float = DEFAULT_HEARTBEAT_INTERVAL_S
    release_retry_s: float = 30.0

    @staticmethod
    def from_options(options: Mapping[str, str]) -> LockSettings:
        """``lock-check-max-sleep`` / ``lock-acquire-timeout`` as Java parses them (``8 s``,
        ``8 min``, a bare number = milliseconds)."""
        def seconds(key: str, default: float) -> float:
            raw = options.get(key)
            return default if raw is None else parse_duration_millis(raw, key) / 1000.0

        return LockSettings(
            check_max_sleep_s=seconds("lock-check-max-sleep", DEFAULT_LOCK_CHECK_MAX_SLEEP_S),
            acquire_timeout_s=seconds("lock-acquire-timeout", DEFAULT_LOCK_ACQUIRE_TIMEOUT_S),
        )


class HeldLock:
    """A lock this process holds; heartbeats run until it is released."""

    def __init__(self, lock_id: int, database: str, table: str) -> None:
        self.lock_id = lock_id
        self.database = database
        self.table = table
        self.lost_reason: str | None = None

    @property
    def lost(self) -> bool:
        return self.lost_reason is not None

    def ensure_held(self) -> None:
        """Raise :class:`CommitConflict` if a heartbeat found the lock gone (expired or broken by
        an operator): call it right before the step the lock protects."""
        if self.lost_reason is not None:
            raise LockNotAcquired(
                f"lost the Hive Metastore lock {self.lock_id} on {self.database}.{self.table}: {self.lost_reason}"
            )


class HiveMetastoreLock:
    """Java's ``HiveCatalogLock``: an EXCLUSIVE table-level HMS lock around a commit.

    Acquire: ``lock`` with the OS user and host name, then ``check_lock`` every 0.1, 0.2, 0.4 ...
    seconds, the wait capped at ``check_max_sleep_s``, until acquired or ``acquire_timeout_s``
    has passed; a request still waiting is withdrawn (unlocked) and :class:`CommitConflict`
    names the holder. Release: ``unlock`` in every outcome; a failed unlock is logged (the
    metastore expires the lock if its house-keeping is on, or an operator releases it with
    :func:`release_lock`), never hides the result or the error of the work.

    Unlike Java, a held lock is heartbeated every ``heartbeat_interval_s`` from a background
    thread on its own connection: without it a metastore with Hive's house-keeping on
    (``hive.compactor.initiator.on`` with DbTxnManager) expires a commit's lock after
    ``hive.txn.timeout`` (300 s) while the commit still runs.
    """

    def __init__(
        self,
        client_factory: Callable[[], HiveMetastoreClient],
        settings: LockSettings | None = None,
        *,
        user: str | None = None,
        hostname: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client_factory = client_factory
        self.settings = settings or LockSettings()
        self.user = user if user is not None else getpass.getuser()
        self.hostname = hostname if hostname is not None else socket.gethostname()
        self._sleep = sleep
        self._clock = clock

    def run_with_lock(self, database: str, table: str, fn: Callable[[], T]) -> T:
        with self.hold(database, table):
            return fn()

    @contextmanager
    def hold(self, database: str, table: str) -> Iterator[HeldLock]:
        client = self.client_factory()
        try:
            held = self._acquire(client, database, table)
            stop = threading.Event()
            beat = threading.Thread(target=self._heartbeats, args=(held, stop), daemon=True,
                                    name=f"hms-lock-heartbeat-{held.lock_id}")
            beat.start()
            try:
                yield held
            finally:
                stop.set()
                beat.join()
                self._release(client, held.lock_id)
        finally:
            client.close()

    def _acquire(self, client: HiveMetastoreClient, database: str, table: str) -> HeldLock:
        from pymetastore.hive_metastore import ttypes

        component = ttypes.LockComponent(
            type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE, dbname=database, tablename=table,
            operationType=None,  # unset, as Java sends it (a 2.3 server in test mode rejects UNSET)
        )
        # a name only this request has: a request whose answer is lost can be found again
        agent = f"paimon-cli {uuid.uuid4().hex}"
        request = ttypes.LockRequest(component=[component], user=self.user, hostname=self.hostname, agentInfo=agent)
        start = self._clock()
        try:
            resp = client.lock(request)
        except OutcomeUnknown as err:
            raise self._lost_request(database, table, agent, err) from None
        lock_id = int(resp.lockid)
        acquired = False
        try:
            wait = 0.05
            while resp.state == ttypes.LockState.WAITING:
                if self._clock() - start >= self.settings.acquire_timeout_s:
                    break
                wait = min(wait * 2, self.settings.check_max_sleep_s)
                self._sleep(wait)
                try:
                    resp = client.check_lock(lock_id)
                except NotFound:  # our waiting request expired (its check is its heartbeat)
                    raise LockNotAcquired(
                        f"lost the Hive Metastore lock request {lock_id} on {database}.{table} while waiting"
                    ) from None
            acquired = resp.state == ttypes.LockState.ACQUIRED
        finally:
            if not acquired:
                self._release(client, lock_id)
        if acquired:
            return HeldLock(lock_id, database, table)
        state = ttypes.LockState._VALUES_TO_NAMES.get(resp.state, str(resp.state))
        waited = self._clock() - start
        holders = self._holders(client, database, table, lock_id)
        raise LockNotAcquired(
            f"could not lock {database}.{table} in the Hive Metastore within {waited:.0f} s "
            f"(lock-acquire-timeout {self.settings.acquire_timeout_s:g} s, last state {state})"
            + (f"; held by {holders}" if holders else "")
        )

    def _lost_request(self, database: str, table: str, agent: str, err: OutcomeUnknown) -> CatalogUnavailable:
        """The metastore took the lock request but its answer never came (it hung, or died after
        reading it). Nothing was committed; what is unknown is whether the metastore holds a
        lock for us now or grants one later (a hung metastore works off its socket when it
        wakes up). Such a lock would block every commit to the table until Hive's house-keeping
        expires it, which most metastores never do. So the request is looked up by its agent
        info until the metastore answers again (for ``release_retry_s``) and released."""
        deadline = self._clock() + self.settings.release_retry_s
        answered_at: float | None = None
        wait = 0.2
        while True:
            client = self.client_factory()
            try:
                mine = [x.lock_id for x in client.show_locks(database, table) if x.agent_info == agent]
                for lock_id in mine:
                    client.unlock(lock_id)
                if mine:
                    outcome = f"the lock {mine[0]} it granted late was released"
                    break
                answered_at = self._clock() if answered_at is None else answered_at
                # a request still in the metastore's socket is taken up shortly after it answers
                if self._clock() - answered_at >= 2.0:
                    outcome = "it granted no lock"
                    break
            except NotFound:  # unlocked meanwhile (expired)
                outcome = "it granted no lock"
                break
            except PaimonError as e:
                if self._clock() + wait > deadline:
                    log.warning("Hive Metastore lock request %r on %s.%s may still be granted (%s); it would block "
                                "commits to that table until it expires or is released by id", agent, database,
                                table, e)
                    outcome = f"a lock it may still grant is left to its house-keeping (agent info {agent!r})"
                    break
            finally:
                client.close()
            self._sleep(wait)
            wait = min(wait * 2, 2.0)
        lost = str(err).removeprefix("lock: ").split("; the change may")[0]  # it was a lock request: say what
        return CatalogUnavailable(f"could not lock {database}.{table}: {lost}; nothing was committed, {outcome}")

    @staticmethod
    def _holders(client: HiveMetastoreClient, database: str, table: str, own: int) -> str:
        try:
            locks = client.show_locks(database, table)
        except PaimonError:
            return ""
        return "; ".join(x.describe() for x in locks if x.lock_id != own and x.state == "ACQUIRED")

    def _release(self, client: HiveMetastoreClient, lock_id: int) -> None:
        """Unlock, retrying for ``release_retry_s`` (a metastore restarting keeps its locks, and
        one left behind blocks every later commit until it expires or an operator frees it)."""
        deadline = self._clock() + self.settings.release_retry_s
        wait = 0.5
        while True:
            try:
                client.unlock(lock_id)
                return
            except NotFound as err:
                log.debug("Hive Metastore lock %s already gone: %s", lock_id, err)
                return
            except PaimonError as err:
                if self._clock() + wait > deadline:
                    log.warning(
                        "could not release Hive Metastore lock %s (%s); it blocks commits to that table "
                        "until the metastore expires it or it is released by id", lock_id, err,
                    )
                    return
                self._sleep(wait)
                wait = min(wait * 2, 5.0)

    def _heartbeats(self, held: HeldLock, stop: threading.Event) -> None:
        interval = self.settings.heartbeat_interval_s
        client: HiveMetastoreClient | None = None
        try:
            while not stop.wait(interval):
                if client is None:
                    client = self.client_factory()
                try:
                    client.heartbeat(held.lock_id)
                except (NotFound, CommitConflict) as err:  # LockNotAcquired is a CommitConflict
                    held.lost_reason = f"the metastore no longer has it ({err})"
                    log.warning("Hive Metastore lock %s on %s.%s is gone: %s", held.lock_id, held.database,
                                held.table, err)
                    return
                except PaimonError as err:  # unreachable for a moment: keep trying
                    log.warning("heartbeat of Hive Metastore lock %s failed: %s", held.lock_id, err)
        finally:
            if client is not None:
                client.close()


def release_lock(client: HiveMetastoreClient, lock_id: int) -> None:
    """Release any lock by id (the 2.3 metastore checks no owner): the way out of a lock left by
    a dead process on a metastore that never expires locks (its house-keeping off, the default)."""
    client.unlock(lock_id)
