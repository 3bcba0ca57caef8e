"""Time to the first rows of a large table: ``read`` and ``inspect audit-log`` on a terminal
(a pseudo-terminal, -o table) and into ``| head -3`` (run by hand; results in RESULTS.md).

    .venv/bin/python bench/bench_first_rows.py --warehouse /tmp/firstrows --rows 1000000

Makes ``bench.big`` (primary key, 4 buckets, ``--rows`` rows in one commit) unless it is
there, then times each case ``--repeat`` times: wall time from start until the process
ends (on a terminal: it printed what it shows; in a pipe: ``head`` got 3 lines and closed).
``--cli`` runs another build (e.g. a checkout of the code before the change).
"""

from __future__ import annotations

import argparse
import fcntl
import os
import pty
import resource
import statistics
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Callable
from pathlib import Path

TABLE = "bench.big"


def make_table(wh: str, rows: int) -> None:
    import pyarrow as pa

    from paimon_cli.core.api import Warehouse

    if (Path(wh) / "bench.db" / "big").exists():
        return
    Path(wh).mkdir(parents=True, exist_ok=True)
    w = Warehouse(wh)
    w.create_table(TABLE, "id BIGINT NOT NULL, name STRING, amount DOUBLE", primary_key=["id"],
                   options={"bucket": "4"})
    ids = pa.array(range(rows), pa.int64())
    w.table(TABLE).write(pa.table({"id": ids, "name": pa.compute.cast(ids, pa.string()),
                                   "amount": pa.compute.multiply(ids.cast(pa.float64()), 0.5)}))


def _children_cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def timed(how: Callable[[list[str]], float], cmd: list[str]) -> tuple[float, float]:
    """(wall, cpu) seconds of one run: cpu is what the process (and the shell, head) used,
    which a loaded machine changes far less than the wall time."""
    cpu = _children_cpu()
    wall = how(cmd)
    return wall, _children_cpu() - cpu


def on_terminal(cmd: list[str]) -> float:
    """Seconds until ``cmd`` ends with its stdout on an 80 x 50 pseudo-terminal."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, 80, 0, 0))
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
    os.close(slave)
    while True:
        try:
            if not os.read(master, 1 << 16):
                break
        except OSError:
            break
    proc.wait()
    os.close(master)
    return time.perf_counter() - start


def into_head(cmd: list[str]) -> float:
    """Seconds until ``cmd | head -3`` ends (the shell pipeline, as an operator types it)."""
    start = time.perf_counter()
    subprocess.run(" ".join(cmd) + " | head -3 > /dev/null", shell=True, check=False)
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--cli", default=str(Path(sys.executable).with_name("paimon-cli")))
    args = ap.parse_args()
    make_table(args.warehouse, args.rows)
    print("| case | runs | wall best (s) | wall median (s) | cpu median (s) |\n|---|---:|---:|---:|---:|")
    for label, how, sub in (
        ("read, terminal", on_terminal, ["read", TABLE]),
        ("inspect audit-log, terminal", on_terminal, ["inspect", "audit-log", TABLE]),
        ("read \\| head -3", into_head, ["read", TABLE]),
        ("inspect audit-log \\| head -3", into_head, ["inspect", "audit-log", TABLE]),
    ):
        runs = [timed(how, [args.cli, *sub, "-w", args.warehouse]) for _ in range(args.repeat)]
        walls, cpus = [w for w, _ in runs], [c for _, c in runs]
        print(f"| {label} | {len(runs)} | {min(walls):.2f} | {statistics.median(walls):.2f} | "
              f"{statistics.median(cpus):.2f} |", flush=True)


if __name__ == "__main__":
    main()
