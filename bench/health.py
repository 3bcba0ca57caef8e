"""Time ``paimon-cli health`` over a warehouse of many small tables (run by hand).

    .venv/bin/python bench/health.py --warehouse /tmp/healthwh [--tables 100] [--repeat 5]

Builds the warehouse first when it does not exist (with paimon-cli's own ``write`` /
``compact``: a quarter each of primary-key tables, level-0 backlogs, append tables with small
files, partitioned append tables; ``--commits`` commits per table, 6 by default: enough for the backlogs to be findings), then times, as a user sees
it (subprocess, interpreter start included, stdout to /dev/null): ``health -o json`` and
``health --format openmetrics``, plus ``Warehouse.health()`` in-process. Prints a Markdown
report on stdout; progress on stderr.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
COLUMNS = "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING"


def build(path: str, tables: int, commits: int) -> None:
    import pyarrow as pa

    from paimon_cli.core.api import Warehouse

    w = Warehouse(path)
    t0 = time.perf_counter()
    for i in range(tables):
        kind = ("pk", "l0", "small", "parts")[i % 4]
        name = f"db{i % 5}.{kind}_{i:03d}"
        if kind in ("pk", "l0"):
            t = w.create_table(name, COLUMNS, primary_key="id", options={"bucket": "2"})
        elif kind == "small":
            t = w.create_table(name, COLUMNS, options={"bucket": "1", "bucket-key": "id"})
        else:
            t = w.create_table(name, COLUMNS, partition_by="dt")
        for c in range(commits):
            ids = list(range(c * 100, c * 100 + 100))
            data = pa.table({"id": pa.array(ids, pa.int64()), "dt": [f"2024-05-0{1 + c % 3}"] * 100,
                             "v": [f"v{x}" for x in ids]})
            t.write(data, write_only=kind in ("l0", "small"))
        print(f"built {i + 1}/{tables} ({time.perf_counter() - t0:.0f} s)", file=sys.stderr, end="\r")
    print(file=sys.stderr)


def timed(argv: list[str], repeat: int) -> tuple[list[float], list[float], int]:
    """Wall and CPU (user + system of the child) seconds per run, after one warm-up; CPU time
    is what the work costs on a machine shared with other jobs."""
    walls, cpus = [], []
    code = 0
    for _ in range(repeat + 1):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        code = subprocess.run(argv, stdout=subprocess.DEVNULL, check=False).returncode
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return walls[1:], cpus[1:], code


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--tables", type=int, default=100)
    ap.add_argument("--commits", type=int, default=6)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if not os.path.exists(args.warehouse):
        t0 = time.perf_counter()
        build(args.warehouse, args.tables, args.commits)
        print(f"build: {time.perf_counter() - t0:.1f} s", file=sys.stderr)

    from paimon_cli.core.api import Warehouse

    t0 = time.perf_counter()
    report = Warehouse(args.warehouse).health()
    inproc = time.perf_counter() - t0
    n = len(report.tables)
    findings = sum(len(h.findings) for h in report.tables)
    cli = [sys.executable, "-m", "paimon_cli", "health", "-w", args.warehouse]
    cases = {
        "`paimon-cli health -o json`": cli + ["-o", "json"],
        "`paimon-cli health --format openmetrics`": cli + ["--format", "openmetrics"],
    }
    print(f"Tables: {n}, findings: {findings}; {platform.processor() or platform.machine()}, "
          f"{os.cpu_count()} cores, Python {platform.python_version()}\n")
    print(f"Load average before the runs: {os.getloadavg()[0]:.1f}\n")
    print("| case | wall best (s) | wall median (s) | CPU median (s) | exit |\n|---|---:|---:|---:|---:|")
    print(f"| `Warehouse.health()` in-process (imports included) | {inproc:.3f} | {inproc:.3f} | - | - |")
    for label, argv in cases.items():
        walls, cpus, code = timed(argv, args.repeat)
        print(f"| {label} | {min(walls):.3f} | {statistics.median(walls):.3f} | {statistics.median(cpus):.3f} "
              f"| {code} |")
    kinds: dict[str, int] = {}
    for h in report.tables:
        for f in h.findings:
            kinds[f.kind.value] = kinds.get(f.kind.value, 0) + 1
    print(f"\nFindings by kind: {json.dumps(kinds, sort_keys=True)}")


if __name__ == "__main__":
    main()
