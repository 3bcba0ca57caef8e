"""The real CLI, frozen (SIGSTOP) at one exact moment, for tests that act on a command in the
middle of its work: kill it while it holds the commit lock, or stop the metastore under it.

    python -m tests.catalogs.cli_stopped_at POINT [paimon-cli arguments ...]

POINT is ``locked`` (the table's commit lock was just acquired: the metastore holds it for
this process) or ``call:<prefix>`` (right before the first metastore call whose description
starts with ``<prefix>``: a Hive Metastore call such as ``create table``, ``alter table``,
``drop table``, ``lock``, ``add partitions``, ``drop partition``, or a JDBC catalog statement
such as ``register a table``, ``acquire lock``). The process stops itself once, there; the
test sees it stopped (``waitpid`` with ``WUNTRACED``, see :func:`wait_stopped`), does its part
and sends SIGCONT or SIGKILL. Nothing else of the CLI is changed: paimon-cli has no such hook,
so this launcher wraps the two places from outside.
"""

from __future__ import annotations

import functools
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
_stopped = [False]


def _stop_once() -> None:
    if not _stopped[0]:
        _stopped[0] = True
        os.kill(os.getpid(), signal.SIGSTOP)


def _install(point: str) -> None:
    if point == "locked":
        from paimon_cli.core.io.commit_lock import TableLock

        acquire_of: dict[type, Callable[..., None]] = {}

        def after_acquire(cls: type) -> None:
            real = cls.__dict__["acquire"]

            @functools.wraps(real)
            def acquire(self: Any) -> None:
                real(self)
                _stop_once()

            acquire_of[cls] = real
            cls.acquire = acquire  # type: ignore[attr-defined]

        from paimon_cli.core.catalog.hive import HiveTableLock
        from paimon_cli.core.catalog.jdbc import JdbcTableLock

        for cls in (HiveTableLock, JdbcTableLock):
            assert issubclass(cls, TableLock)
            after_acquire(cls)
        return
    if not point.startswith("call:"):
        raise SystemExit(f"unknown point {point!r}")
    prefix = point[len("call:"):]
    from paimon_cli.core.catalog.hive_metastore import HiveMetastoreClient
    from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore

    hms_call = HiveMetastoreClient._call
    jdbc_run = JdbcCatalogStore._run

    def call(self: Any, what: str, fn: Any, **kw: Any) -> Any:
        if what.startswith(prefix):
            _stop_once()
        return hms_call(self, what, fn, **kw)

    def run(self: Any, what: str, fn: Any) -> Any:
        if what.startswith(prefix):
            _stop_once()
        return jdbc_run(self, what, fn)

    HiveMetastoreClient._call = call  # type: ignore[method-assign]
    JdbcCatalogStore._run = run  # type: ignore[method-assign]


def spawn(point: str, args: Sequence[str]) -> subprocess.Popen[str]:
    """Start ``paimon-cli ARGS`` that stops itself at ``point``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    return subprocess.Popen([sys.executable, "-m", "tests.catalogs.cli_stopped_at", point, *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=REPO)


def wait_stopped(proc: subprocess.Popen[str], timeout_s: float = 120) -> None:
    """Block until ``proc`` has stopped itself; fail with its output if it ended instead."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        pid, status = os.waitpid(proc.pid, os.WUNTRACED | os.WNOHANG)
        if pid == proc.pid:
            if os.WIFSTOPPED(status):
                return
            proc.returncode = os.waitstatus_to_exitcode(status)
            out, err = proc.communicate()
            raise AssertionError(f"the command ended (exit {proc.returncode}) before it stopped:\n{out}\n{err}")
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"the command did not reach its stop point within {timeout_s:.0f} s")


def main() -> None:
    point, args = sys.argv[1], sys.argv[2:]
    _install(point)
    sys.argv = ["paimon-cli", *args]
    from paimon_cli.app import run

    run()


if __name__ == "__main__":
    main()
