"""Stopping on SIGINT / SIGTERM the way a failure stops: the same cleanup, then exit 130 / 143.

The CLI routes both signals to :func:`_on_signal` (:func:`install`), which raises
:class:`Interrupted` -- a ``KeyboardInterrupt``, so every ``except BaseException`` / ``finally``
cleanup of the commands runs as it does on an error. Three rules keep that cleanup complete:

* a signal is raised once; later ones are only recorded, so they cannot cut the cleanup short;
* :func:`deferred` holds a signal back during a block (a commit attempt, joining workers) and
  raises it when the block ends, so an interrupt never lands between publishing a snapshot and
  recording that it was published (which decides whether files may be deleted);
* worker threads never receive signals: they call :func:`check` at their safe points (each
  batch a data-file writer takes), so running tasks stop soon and their own cleanup runs;
* a signal cuts a blocking call of the main thread short (a prompt's read, a wait on
  workers): :func:`interruptible` keeps it so after a native library hooks the signal too.

Files written and not committed are removed through :func:`discard`, which counts them for
the one-line report of the interrupt.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any, Protocol


class FileRemover(Protocol):
    """What :func:`discard` needs of a ``FileIO`` (utils sit below the io room)."""

    def exists(self, path: str) -> bool: ...

    def delete(self, path: str) -> None: ...


class Interrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM asked the process to stop."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


_signum: int | None = None  # the first stop signal received
_delivered = False  # Interrupted was raised on the main thread
_deferring = 0  # depth of deferred() blocks on the main thread
_committed: list[int] = []  # snapshots published by commit attempts (commit_attempt)
_removed: set[str] = set()  # uncommitted files discard() deleted
_left: set[str] = set()  # uncommitted files discard() could not delete


def install() -> None:
    """Route SIGINT and SIGTERM through :class:`Interrupted` (call once, on the main thread);
    a signal the parent made us ignore (``nohup``, background jobs) stays ignored."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is not signal.SIG_IGN:
            signal.signal(signum, _on_signal)
    interruptible()


def interruptible() -> None:
    """Let SIGINT / SIGTERM cut a blocking system call of the main thread short.

    Python's own handler makes such a call (a read of the terminal, a wait for a worker)
    fail with EINTR, so :func:`_on_signal` raises at once. polars hooks SIGINT when it is
    imported (signal-hook chains its handler before ours) and sets ``SA_RESTART``: the kernel
    then resumes the call after the handler, and the signal waits until the call ends by
    itself -- Enter at a ``[y/N]`` prompt. Clearing that flag keeps every handler in place.
    Call after importing such a library (``utils.native``) and before blocking on a person.
    A no-op unless :func:`install` routed the signals here (library use keeps its own).
    """
    for signum in (signal.SIGINT, signal.SIGTERM):
        if signal.getsignal(signum) is _on_signal:
            signal.siginterrupt(signum, True)


def _on_signal(signum: int, frame: Any) -> None:
    global _signum, _delivered
    if _signum is None:
        _signum = signum
    if not _delivered and _deferring == 0:
        if _in_finalizer(frame):
            # Python swallows what a ``__del__`` raises (printing a traceback), so the stop
            # would be lost: send the signal again, to land once the finalizer has returned
            resend = threading.Timer(_REDELIVER_SECONDS, os.kill, (os.getpid(), signum))
            resend.daemon = True  # never keeps an ending process alive
            resend.start()
            return
        _delivered = True
        raise Interrupted(_signum)


_REDELIVER_SECONDS = 0.01


def _in_finalizer(frame: Any) -> bool:
    """Whether the main thread is running an object's ``__del__`` (e.g. a pyarrow writer
    collected mid-loop), where an exception cannot propagate."""
    while frame is not None:
        if frame.f_code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def requested() -> int | None:
    """The signal that asked the process to stop, or None."""
    return _signum


def check() -> None:
    """Raise :class:`Interrupted` on a worker thread once a stop was requested (the main
    thread gets the signal itself)."""
    if _signum is not None and threading.current_thread() is not threading.main_thread():
        raise Interrupted(_signum)


@contextlib.contextmanager
def deferred() -> Iterator[None]:
    """Hold SIGINT / SIGTERM back while the block runs (main thread; a no-op elsewhere).

    A signal that arrived meanwhile is raised when the block ends normally outside exception
    handling; while an error is already propagating it stays recorded (:func:`requested`).
    Usable as a decorator.
    """
    global _deferring, _delivered
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _deferring += 1
    try:
        yield
    finally:
        _deferring -= 1
    if _deferring == 0 and _signum is not None and not _delivered and sys.exc_info()[1] is None:
        _delivered = True
        raise Interrupted(_signum)


def commit_attempt(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Decorator for one commit attempt: signals are held back while it runs, so none lands
    between publishing a snapshot and recording that it was published (the record decides
    whether the caller may delete the commit's files); a snapshot it returns is noted for the
    interrupt report (the user must not retry a write that was committed)."""

    @functools.wraps(fn)
    def attempt(*args: Any, **kwargs: Any) -> Any:
        with deferred():
            reached("commit")
            snapshot = fn(*args, **kwargs)
            if snapshot is not None:
                _committed.append(int(snapshot.id))
        return snapshot

    return attempt


# Test hook: "<INT|TERM>:<point>:<n>" -- the process signals itself when it reaches the nth
# point of that kind ("file": a data file is created; "commit": a commit attempt starts), so
# the interrupt tests hit exact moments on any machine. Unset in normal use.
_TEST_SIGNAL_ENV = "PAIMON_CLI_TEST_SIGNAL"
_test_hook: list[Any] | None = None
_test_lock = threading.Lock()


def reached(kind: str) -> None:
    """Count a ``kind`` point for the ``PAIMON_CLI_TEST_SIGNAL`` hook (a no-op without it)."""
    global _test_hook
    spec = os.environ.get(_TEST_SIGNAL_ENV)
    if not spec:
        return
    with _test_lock:
        if _test_hook is None:
            name, point, n = spec.split(":")
            _test_hook = [signal.Signals["SIG" + name], point, int(n)]
        if _test_hook[1] != kind or _test_hook[2] <= 0:
            return
        _test_hook[2] -= 1
        if _test_hook[2] == 0:
            os.kill(os.getpid(), _test_hook[0])


def discard(file_io: FileRemover, paths: Iterable[str]) -> int:
    """Delete files this process wrote and did not commit (best effort: a file left behind is
    an orphan that ``remove-orphan-files`` clears). Never pass a file a snapshot may reference.

    Returns how many were deleted; the process-wide tally feeds :func:`cleanup_summary`.
    """
    n = 0
    with deferred():  # a signal must not stop a cleanup half-way
        for path in paths:
            try:
                if not file_io.exists(path):  # never created, or removed already
                    continue
                file_io.delete(path)
            except Exception:  # noqa: BLE001 - best effort cleanup
                _left.add(path)
                continue
            _removed.add(path)
            _left.discard(path)
            n += 1
    return n


def cleanup_summary() -> str:
    """What was committed and what :func:`discard` removed in this process, for the
    interrupt's one-line report."""
    text = f"removed {len(_removed)} uncommitted file(s)"
    if _committed:
        ids = ", ".join(str(i) for i in _committed)
        text = f"snapshot{'s' if len(_committed) > 1 else ''} {ids} had been committed; {text}"
    if _left:
        text += f"; {len(_left)} could not be removed (remove-orphan-files clears them)"
    return text


__all__ = ["Interrupted", "check", "cleanup_summary", "commit_attempt", "deferred", "discard", "install",
           "interruptible", "reached", "requested"]
