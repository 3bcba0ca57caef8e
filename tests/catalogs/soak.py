"""A soak of one table shared by a Java writer and our maintenance, for the catalog lock tests.

For a bounded time a Java Paimon 0.9 writer commits in a loop through its own catalog (Hive or
JDBC, ``lock.enabled=true``) while our ``compact``, ``expire`` and ``maintain`` run in loops as
real CLI processes (``python -m paimon_cli``) through the same catalog. Meanwhile a watcher
reads every snapshot file as soon as it appears. Afterwards :meth:`Soak.check` proves:

* no lost commit: every row Java committed is in the table, and Java reads the end state row
  for row as we do;
* snapshots are consecutive and none was overwritten: the watcher saw every id from 1 to the
  latest, each file kept the content it first had, and every snapshot one of our runs reported
  committing is a COMPACT snapshot (a Java append never took its place, nor we Java's);
* every one of our processes exited 0 or 5 (the documented conflict), never anything else,
  and the Java writer never failed;
* the lock was released: the caller checks its metastore (``show_locks`` / the lock rows).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
# a soak run's exit codes: success, or the documented commit conflict (exit 5)
ALLOWED_EXIT_CODES = (0, 5)


def cli_env() -> dict[str, str]:
    """The environment of a CLI child: nothing of the user's PAIMON_* settings."""
    return {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}


def run_cli(args: Sequence[str], timeout_s: float = 300) -> subprocess.CompletedProcess[str]:
    """``python -m paimon_cli ARGS`` as a real process."""
    return subprocess.run([sys.executable, "-m", "paimon_cli", *args], capture_output=True, text=True,
                          env=cli_env(), cwd=REPO, timeout=timeout_s)


@dataclass
class Run:
    """One CLI process of a loop."""

    loop: str
    args: list[str]
    code: int
    stdout: str
    stderr: str
    seconds: float

    def committed(self) -> list[int]:
        """Snapshot ids the run reports committing (``-o json`` of compact and maintain)."""
        if self.code != 0 or not self.stdout.strip():
            return []
        try:
            out = json.loads(self.stdout)
        except ValueError:
            return []
        ids: list[int] = []
        for row in out if isinstance(out, list) else [out]:
            if isinstance(row.get("snapshot_id"), int):
                ids.append(row["snapshot_id"])
            for action in row.get("actions") or []:
                if action.get("outcome") == "done" and isinstance(action.get("snapshot_id"), int):
                    ids.append(action["snapshot_id"])
        return ids


class CliLoop(threading.Thread):
    """Runs ``commands(i)`` for i = 0, 1, ... as CLI processes until ``deadline``."""

    def __init__(self, name: str, command: Callable[[int], list[str]], deadline: float) -> None:
        super().__init__(daemon=True, name=name)
        self.command = command
        self.deadline = deadline
        self.runs: list[Run] = []
        self.error: BaseException | None = None

    def run(self) -> None:
        i = 0
        try:
            while time.monotonic() < self.deadline:
                args = self.command(i)
                start = time.monotonic()
                proc = run_cli(args)
                self.runs.append(Run(self.name, args, proc.returncode, proc.stdout, proc.stderr,
                                     time.monotonic() - start))
                i += 1
        except BaseException as err:  # noqa: BLE001 - reported by the test
            self.error = err


class JavaWriterLoop(threading.Thread):
    """Java commits ``rows_per_commit`` new keys per commit, in a loop, until ``deadline``.

    ``write(rows)`` is one Java batch commit. Rows of a commit that returned are committed;
    a commit that raised is recorded (the soak fails on it)."""

    def __init__(self, write: Callable[[list[dict[str, Any]]], Any], make_row: Callable[[int], dict[str, Any]],
                 deadline: float, rows_per_commit: int = 4) -> None:
        super().__init__(daemon=True, name="java-writer")
        self.write = write
        self.make_row = make_row
        self.deadline = deadline
        self.rows_per_commit = rows_per_commit
        self.committed: list[dict[str, Any]] = []
        self.commits = 0
        self.errors: list[str] = []

    def run(self) -> None:
        key = 0
        while time.monotonic() < self.deadline:
            rows = [self.make_row(key + j) for j in range(self.rows_per_commit)]
            key += self.rows_per_commit
            try:
                self.write(rows)
            except BaseException as err:  # noqa: BLE001 - reported by the test
                self.errors.append(f"{type(err).__name__}: {err}")
                return
            self.committed.extend(rows)
            self.commits += 1


class SnapshotWatcher(threading.Thread):
    """Reads every ``snapshot-N`` of ``table_dir`` as soon as it appears and keeps its first
    content; a later read that differs is an overwritten snapshot."""

    def __init__(self, table_dir: Path, interval_s: float = 0.02) -> None:
        super().__init__(daemon=True, name="snapshot-watcher")
        self.snapshot_dir = table_dir / "snapshot"
        self.interval_s = interval_s
        self.first: dict[int, dict[str, Any]] = {}
        self.digest: dict[int, str] = {}
        self.overwritten: list[str] = []
        self._halt = threading.Event()

    def _scan(self) -> None:
        try:
            names = os.listdir(self.snapshot_dir)
        except FileNotFoundError:
            return
        for name in names:
            if not name.startswith("snapshot-"):
                continue
            try:
                sid = int(name[len("snapshot-"):])
            except ValueError:
                continue
            try:
                data = (self.snapshot_dir / name).read_bytes()
            except FileNotFoundError:  # expired meanwhile
                continue
            digest = hashlib.sha256(data).hexdigest()
            if sid not in self.digest:
                self.digest[sid] = digest
                self.first[sid] = json.loads(data)
            elif self.digest[sid] != digest:
                self.overwritten.append(f"snapshot-{sid} changed: first {self.first[sid]}, now {data!r}")

    def run(self) -> None:
        while not self._halt.wait(self.interval_s):
            self._scan()
        self._scan()

    def stop(self) -> None:
        self._halt.set()
        self.join(30)


@dataclass
class Soak:
    """The loops of one soak; :meth:`run` starts and joins them, :meth:`check` judges them."""

    table_dir: Path
    java: JavaWriterLoop
    loops: list[CliLoop]
    watcher: SnapshotWatcher = field(init=False)

    def __post_init__(self) -> None:
        self.watcher = SnapshotWatcher(self.table_dir)

    def run(self) -> None:
        self.watcher.start()
        for t in [self.java, *self.loops]:
            t.start()
        for t in [self.java, *self.loops]:
            t.join()
        self.watcher.stop()

    @property
    def runs(self) -> list[Run]:
        return [r for loop in self.loops for r in loop.runs]

    def summary(self) -> str:
        per_loop = ", ".join(
            f"{loop.name}: {len(loop.runs)} runs, exits {sorted({r.code for r in loop.runs})}" for loop in self.loops)
        return f"java: {self.java.commits} commits; {per_loop}; snapshots seen: {len(self.watcher.first)}"

    def check(self, ours: list[dict[str, Any]], javas: list[dict[str, Any]], key: Callable[[dict[str, Any]], Any]) -> None:
        """``ours`` / ``javas``: the end state as we and Java read it."""
        for loop in self.loops:
            assert loop.error is None, f"{loop.name} crashed: {loop.error!r}"
        assert not self.java.errors, f"the Java writer failed: {self.java.errors}"
        bad = [r for r in self.runs if r.code not in ALLOWED_EXIT_CODES]
        assert not bad, f"{len(bad)} exit codes other than 0 / 5 ({self.summary()}), the first:\n" + "\n".join(
            f"{r.loop} {r.args}: exit {r.code}: {r.stderr.strip()[-2000:]}" for r in bad[:5])
        for r in self.runs:
            if r.code == 5:
                lines = r.stderr.strip().splitlines()
                assert len(lines) == 1 and lines[0].startswith("error:"), f"{r.args}: {r.stderr!r}"
        assert self.java.commits > 0 and all(any(r.code == 0 for r in loop.runs) for loop in self.loops), \
            self.summary()

        # no overwritten snapshot, consecutive ids from 1
        assert not self.watcher.overwritten, self.watcher.overwritten
        seen = sorted(self.watcher.first)
        assert seen == list(range(1, seen[-1] + 1)), f"snapshot ids seen are not consecutive: {seen}"
        for sid, snap in self.watcher.first.items():
            assert snap["id"] == sid
        on_disk = sorted(int(p.name[len("snapshot-"):]) for p in (self.table_dir / "snapshot").glob("snapshot-*"))
        assert on_disk == list(range(on_disk[0], seen[-1] + 1)), on_disk
        java_appends = sum(1 for s in self.watcher.first.values() if s["commitKind"] == "APPEND")
        assert java_appends == self.java.commits, (java_appends, self.java.commits)
        for r in self.runs:
            for sid in r.committed():
                snap = self.watcher.first.get(sid)
                assert snap is not None and snap["commitKind"] == "COMPACT", \
                    f"{r.loop} reported committing snapshot {sid}, which is {snap}"

        # no lost commit; Java reads what we read
        expected = sorted(self.java.committed, key=key)
        assert sorted(ours, key=key) == expected
        assert sorted(javas, key=key) == expected
