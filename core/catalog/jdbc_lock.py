"""The commit lock of a JDBC catalog: Java's ``JdbcCatalogLock`` row for row, so our commits and
Java's exclude each other.

``lock_id = <catalog-key>.<db>.<object>``; acquiring deletes the row if it has expired (by the
database's clock), then INSERTs it (a primary-key clash = busy, retried with doubling sleeps
capped by ``lock-check-max-sleep`` until ``lock-acquire-timeout``); releasing DELETEs it.
``expire_time_seconds`` is ``lock-acquire-timeout`` in whole seconds. The rows are read and
written by :class:`.jdbc_store.JdbcCatalogStore`; this module waits, retries and keeps one
holder per lock inside this process.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from ..errors import (
    InvalidInput,
    LockNotAcquired,
    PaimonError,
)

if TYPE_CHECKING:
    from .jdbc_store import JdbcCatalogStore

log = logging.getLogger(__name__)
T = TypeVar("T")

FIRST_LOCK_SLEEP_MS = 50  # Java JdbcCatalogLock: 50 ms, doubled before every retry
LOCK_HELD = "held"  # _try_acquire: the lock row exists


def lock_id(catalog_key: str, database: str, object_name: str) -> str:
    """Java's ``String.format("%s.%s.%s", catalogKey, database, table)``."""
    return f"{catalog_key}.{database}.{object_name}"


# Locks this process holds, so that a second thread waits here rather than in the database and
# a re-entry of the same thread (which Java's lock does not support either) fails at once.
_LOCAL_GUARD = threading.Lock()
_LOCAL: dict[tuple[str, str], tuple[threading.Lock, list[int | None]]] = {}


class JdbcLock:
    """Java's ``JdbcCatalogLock`` for one table: :meth:`run_with_lock` is the CommitLock."""

    def __init__(self, store: JdbcCatalogStore, lock_id: str) -> None:
        self.store = store
        self.lock_id = lock_id
        settings = store.settings
        if store.protocol != "sqlite" and len(lock_id) > settings.lock_key_max_length:
            # Java would retry the failing INSERT until the timeout; say why at once instead
            raise InvalidInput(f"lock id {lock_id!r} is longer than lock-key-max-length={settings.lock_key_max_length}")
        with _LOCAL_GUARD:
            self._local = _LOCAL.setdefault((settings.uri, lock_id), (threading.Lock(), [None]))

    def run_with_lock(self, fn: Callable[[], T]) -> T:
        """Hold the lock while ``fn`` runs; released on every outcome. If ``fn`` succeeded but
        the release fails, the result stands (the row expires after expire_time_seconds)."""
        self.acquire()
        try:
            result = fn()
        except BaseException:
            self._release_quietly()
            raise
        self._release_quietly()
        return result

    def acquire(self) -> None:
        """Java's JdbcCatalogLock.lock: try, then sleep 100, 200, 400 ... ms (capped by
        lock-check-max-sleep) between tries until lock-acquire-timeout has passed."""
        settings = self.store.settings
        local, owner = self._local
        if owner[0] == threading.get_ident():
            raise RuntimeError(f"lock {self.lock_id} is already held by this thread (the JDBC lock is not reentrant)")
        start = time.monotonic()
        if not local.acquire(timeout=settings.lock_acquire_timeout_ms / 1000.0):
            raise self._timeout(start)
        owner[0] = threading.get_ident()
        try:
            busy = self.store._try_acquire(self.lock_id)
            sleep_ms = FIRST_LOCK_SLEEP_MS
            while busy is not None:
                sleep_ms = min(sleep_ms * 2, settings.lock_check_max_sleep_ms)
                time.sleep(sleep_ms / 1000.0)
                busy = self.store._try_acquire(self.lock_id)
                if (time.monotonic() - start) * 1000 > settings.lock_acquire_timeout_ms:
                    break
            if busy is not None:
                raise self._timeout(start, busy)
        except BaseException:
            owner[0] = None
            local.release()
            raise

    def _timeout(self, start: float, busy: str = LOCK_HELD) -> LockNotAcquired:
        s = self.store.settings
        why = (f"another writer holds it; a crashed writer's lock expires {s.expire_time_seconds} s after it was "
               "taken") if busy == LOCK_HELD else f"the catalog database stayed busy ({busy})"
        return LockNotAcquired(
            f"lock {self.lock_id} in {self.store._describe()} not acquired within {time.monotonic() - start:.1f} s"
            f" (lock-acquire-timeout {s.lock_acquire_timeout_ms} ms): {why}")

    def release(self) -> None:
        """Delete the lock row (Java's releaseLock) and let other threads of this process in."""
        local, owner = self._local
        try:
            self.store._release(self.lock_id)
        finally:
            if owner[0] == threading.get_ident():
                owner[0] = None
                local.release()

    def _release_quietly(self) -> None:
        try:
            self.release()
        except PaimonError as err:
            log.warning("%s; it expires %d s after it was taken", err, self.store.settings.expire_time_seconds)
