"""The lock a catalog lends a table's metadata commits (Java ``CatalogLock`` / ``Lock``).

On stores without an atomic create Java serialises commits through the metastore: with
``lock.enabled`` a Hive or JDBC catalog takes a per-table lock around "check the file is
absent, write it, write the hint". Our publishes are write-if-absent already, but a Java
writer that relies on the lock alone must still be excluded, so every publish (snapshot,
schema, tag, branch, the ``maintain`` lease) runs inside the same lock object Java takes.
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Callable
from typing import Protocol, TypeVar

T = TypeVar("T")


class CommitLock(Protocol):
    """Runs ``fn`` while holding the table's lock; released on every way out (errors, signals)."""

    def run_with_lock(self, fn: Callable[[], T]) -> T: ...


class _NoLock:
    """The filesystem catalog's lock: write-if-absent alone decides."""

    def run_with_lock(self, fn: Callable[[], T]) -> T:
        return fn()

    def __repr__(self) -> str:
        return "NO_LOCK"


NO_LOCK: CommitLock = _NoLock()


class TableLock(ABC):
    """One table's metastore lock: :meth:`acquire` blocks until held (or raises), :meth:`release`
    gives it back. :meth:`run_with_lock` is reentrant on a thread: a publish inside a locked
    operation (a rollback writing its hint) must not wait for the lock its own caller holds, so
    only the outermost call talks to the metastore."""

    def __init__(self) -> None:
        self._held = threading.local()

    @abstractmethod
    def acquire(self) -> None: ...

    @abstractmethod
    def release(self) -> None: ...

    def run_with_lock(self, fn: Callable[[], T]) -> T:
        depth = getattr(self._held, "depth", 0)
        if depth:
            self._held.depth = depth + 1
            try:
                return fn()
            finally:
                self._held.depth = depth
        self.acquire()
        self._held.depth = 1
        try:
            return fn()
        finally:
            self._held.depth = 0
            self.release()
