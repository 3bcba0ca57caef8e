"""``maintain`` vs the same work as separate commands (issue 13), run by hand.

    .venv/bin/python bench/maintain.py --warehouse /tmp/maintainwh [--copies 4] [--repeat 3]

Builds ``--copies`` databases, each holding the bad-state tables of
``tests/maintain_fixtures.py`` except the corrupt one (small files, level-0 backlog, snapshots
past retention, an expired partition, files missing a configured index). Each round starts
from a fresh copy of that warehouse and times, end to end (subprocess wall time):

* ``maintain``: one ``paimon-cli maintain --quiet`` over the warehouse;
* ``maintain --parallel 2``;
* ``separate commands``: what a cron script does today, one ``paimon-cli <command> DB.TABLE``
  per action the dry-run plan names (the same actions, in the same order), plus the
  ``paimon-cli health -o json`` a script needs to decide them.

Every round checks the end state: ``health`` finds none of the fixable findings left. Prints
a Markdown table on stdout (progress on stderr).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.maintain_fixtures import CORRUPT, DB, FIXABLE, build_bad_warehouse  # noqa: E402


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cli(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "paimon_cli", *args], capture_output=True, check=False)


def build(template: Path, copies: int) -> None:
    if template.exists():
        shutil.rmtree(template)
    one = template.parent / (template.name + "-one")
    if one.exists():
        shutil.rmtree(one)
    build_bad_warehouse(one)
    shutil.rmtree(one / f"{DB}.db" / CORRUPT)
    for i in range(copies):
        shutil.copytree(one / f"{DB}.db", template / f"{DB}{i}.db")
    shutil.rmtree(one)


def plan(wh: Path) -> list[list[str]]:
    """The separate commands doing what maintain's plan says, in its order."""
    res = cli("maintain", "-w", str(wh), "--dry-run", "-o", "json")
    assert res.returncode == 0, res.stderr
    out = []
    for row in json.loads(res.stdout):
        if row["status"] == "planned":
            words = row["action"].split()
            out.append([w for w in words if not w.startswith("--")] + [row["table"]]
                       + [w for w in words if w.startswith("--")] + ["-w", str(wh)])
    return out


def fixed(wh: Path) -> None:
    res = cli("health", "-w", str(wh), "-o", "json")
    kinds = {k for ks in FIXABLE.values() for k in ks}
    left = [(r["table"], r["kind"]) for r in json.loads(res.stdout) if r.get("kind") in kinds]
    assert not left, left


def timed(fn: object) -> float:
    t0 = time.perf_counter()
    fn()  # type: ignore[operator]
    return time.perf_counter() - t0


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouse", type=Path, required=True)
    ap.add_argument("--copies", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    template = args.warehouse / "template"
    log(f"building {args.copies} x {len(FIXABLE)} tables")
    build(template, args.copies)
    work = args.warehouse / "work"
    commands = plan(template)
    log(f"{len(commands)} actions planned")
    results: dict[str, list[float]] = {"maintain": [], "maintain --parallel 2": [], "separate commands": []}

    def separate() -> None:
        assert cli("health", "-w", str(work), "-o", "json").returncode == 0
        for c in commands:
            c = [str(work) if w == str(template) else w for w in c]
            res = cli(*c)
            assert res.returncode == 0, (c, res.stderr)

    cases = {
        "maintain": lambda: cli("maintain", "-w", str(work), "--quiet").check_returncode(),
        "maintain --parallel 2": lambda: cli("maintain", "-w", str(work), "--quiet", "--parallel", "2").check_returncode(),
        "separate commands": separate,
    }
    for r in range(args.repeat):
        for name, fn in cases.items():
            if work.exists():
                shutil.rmtree(work)
            shutil.copytree(template, work)
            results[name].append(timed(fn))
            fixed(work)
            log(f"round {r + 1}: {name}: {results[name][-1]:.2f} s")
    print(f"{args.copies * len(FIXABLE)} tables, {len(commands)} actions; wall seconds, {args.repeat} rounds\n")
    print("| case | processes | best (s) | median (s) |\n|---|---:|---:|---:|")
    procs = {"maintain": 1, "maintain --parallel 2": 1, "separate commands": len(commands) + 1}
    for name, times in results.items():
        print(f"| {name} | {procs[name]} | {min(times):.2f} | {statistics.median(times):.2f} |")


if __name__ == "__main__":
    main()
