"""core/utils/interrupt.py and core/utils/workers.py: signals raised once, held back by deferred(),
seen by workers at check(); pools always joined; uncommitted files counted when discarded."""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.utils import interrupt
from paimon_cli.core.utils.workers import map_ordered, prefetch, worker_pool


@pytest.fixture
def handlers(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The CLI's handlers, on a fresh state (restored afterwards)."""
    for name, value in (("_signum", None), ("_delivered", False), ("_deferring", 0), ("_committed", []),
                        ("_removed", set()), ("_left", set())):
        monkeypatch.setattr(interrupt, name, value)
    old = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s in old:  # a runner that started us in the background ignores SIGINT: install() keeps that
        signal.signal(s, signal.SIG_DFL)
    interrupt.install()
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def _kill(sig: signal.Signals) -> None:
    os.kill(os.getpid(), sig)
    time.sleep(0.05)  # the handler runs at the next bytecode boundary


def test_a_signal_is_raised_once_as_interrupted(handlers: None) -> None:
    with pytest.raises(interrupt.Interrupted) as ei:
        _kill(signal.SIGTERM)
    assert ei.value.signum == signal.SIGTERM and isinstance(ei.value, KeyboardInterrupt)
    _kill(signal.SIGINT)  # cleanup in progress: later signals are only recorded
    assert interrupt.requested() == signal.SIGTERM


def test_a_signal_landing_in_a_finalizer_is_raised_after_it(handlers: None,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    """What a ``__del__`` raises is swallowed (with a traceback on stderr): a signal that
    lands there must still stop the process, once the finalizer returned, with no traceback."""
    finalized = []

    class Writer:
        def __del__(self) -> None:
            _kill(signal.SIGTERM)  # the handler runs inside this finalizer
            finalized.append(True)

    with pytest.raises(interrupt.Interrupted) as ei:
        Writer()  # collected at once
        assert finalized == [True]
        time.sleep(1)  # the re-sent signal lands here
        pytest.fail("the signal was lost in the finalizer")
    assert ei.value.signum == signal.SIGTERM
    assert "Exception ignored" not in capsys.readouterr().err


def test_deferred_holds_a_signal_until_the_block_ends(handlers: None) -> None:
    done = []
    with pytest.raises(interrupt.Interrupted):
        with interrupt.deferred():
            _kill(signal.SIGINT)
            done.append("rest of the block")
    assert done == ["rest of the block"]


def test_deferred_inside_error_handling_keeps_the_error(handlers: None) -> None:
    with pytest.raises(ValueError):
        try:
            raise ValueError("first")
        except ValueError:
            with interrupt.deferred():  # e.g. cleanup after a failure
                _kill(signal.SIGINT)
            raise
    assert interrupt.requested() == signal.SIGINT


def test_commit_attempt_is_never_interrupted_and_its_snapshot_is_reported(handlers: None) -> None:
    class Snap:
        id = 7

    @interrupt.commit_attempt
    def publish() -> Snap:
        _kill(signal.SIGINT)
        return Snap()

    with pytest.raises(interrupt.Interrupted):
        publish()
    assert interrupt.cleanup_summary() == "snapshot 7 had been committed; removed 0 uncommitted file(s)"


def test_workers_stop_at_check_and_the_pool_is_joined(handlers: None) -> None:
    started, stopped = threading.Event(), []

    def task(i: int) -> None:
        started.set()
        for _ in range(3000):  # bounded: a lost signal fails the test instead of hanging it
            try:
                interrupt.check()
            except interrupt.Interrupted:
                stopped.append(i)
                raise
            time.sleep(0.01)

    with pytest.raises(interrupt.Interrupted):
        with worker_pool(2, "test") as pool:
            futures = [pool.submit(task, i) for i in range(10)]
            started.wait(5)
            _kill(signal.SIGINT)
    # joined: the two running tasks stopped at check(), the queued ones never started
    assert sorted(stopped) == [0, 1]
    assert all(f.done() for f in futures) and sum(f.cancelled() for f in futures) == 8


def test_prefetch_joins_its_pool_when_closed_early() -> None:
    running = threading.Event()

    def slow(i: int) -> int:
        running.set()
        time.sleep(0.1)
        return i

    gen = prefetch(slow, range(100), 2, "test")
    assert next(gen) == 0
    gen.close()
    assert not [t for t in threading.enumerate() if t.name.startswith("test")]
    assert map_ordered(lambda x: x * 2, range(20), 3, "test") == [x * 2 for x in range(20)]


def test_discard_counts_what_it_removed(tmp_path: Path, handlers: None) -> None:
    fio = FileIO(str(tmp_path))
    for name in ("a", "b"):
        (tmp_path / name).write_text("x")
    paths = [str(tmp_path / n) for n in ("a", "b", "never-written")]
    assert interrupt.discard(fio, paths) == 2
    assert interrupt.discard(fio, paths) == 0
    assert not (tmp_path / "a").exists()
    assert interrupt.cleanup_summary() == "removed 2 uncommitted file(s)"


_WAIT_AFTER_POLARS = """
import os, signal, sys, threading, time
from paimon_cli.core.api import Warehouse
from paimon_cli.core.utils import interrupt

interrupt.install()
Warehouse(sys.argv[1]).health()  # loads polars (columnar manifests, health rules)
worker = threading.Thread(target=time.sleep, args=(5,), daemon=True)
worker.start()
threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT)).start()
start = time.monotonic()
try:
    worker.join()
    print("not interrupted")
except interrupt.Interrupted:
    print(f"interrupted after {time.monotonic() - start:.1f}")
"""


def test_a_wait_stays_interruptible_after_polars_loads(tmp_path: Path) -> None:
    """Importing polars hooks SIGINT with SA_RESTART: without ``interruptible`` the main
    thread's wait for a worker (or a prompt's read) outlasts Ctrl-C until it ends by itself."""
    import subprocess
    import sys

    from paimon_cli.core.api import Warehouse

    Warehouse(str(tmp_path / "wh")).quickstart()
    res = subprocess.run([sys.executable, "-c", _WAIT_AFTER_POLARS, str(tmp_path / "wh")], capture_output=True,
                         text=True, timeout=120)
    assert res.stdout.startswith("interrupted after"), res.stdout + res.stderr
    assert float(res.stdout.split()[-1]) < 2, res.stdout
