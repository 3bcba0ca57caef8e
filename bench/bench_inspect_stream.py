"""``inspect files -o jsonl`` of a large table, streamed: first-line latency, total wall time
and peak RSS, against today's main and pypaimon 2.1's ``$files`` (to Arrow, then JSON lines).

Run by hand (not part of pytest), one run per case, after generating the table::

    .venv/bin/python bench/make_tables.py --warehouse /tmp/wh1m --only files \\
        --partitions 1000 --buckets 4 --files-per-bucket 250     # 1,000,000 live files
    .venv/bin/python bench/bench_inspect_stream.py --warehouse /tmp/wh1m \\
        --main-cli /work/main/.venv/bin/paimon-cli

Each case is a subprocess whose stdout is a pipe read here: the first line's arrival is the
first-row latency (interpreter start included), EOF the total; peak RSS is the child's
``ru_maxrss`` (``os.wait4``). ``head`` cases close the pipe after the first line and time
how long the process takes to notice and exit. A case over ``--timeout`` is killed (its
CPU time and RSS up to then are reported).
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
PYPAIMON = Path("/work/.cache/paimon-cli-tests/pypaimon-2.1.0-venv/bin/python")

PYPAIMON_WORKER = """
import json, sys
from pypaimon import CatalogFactory
catalog = CatalogFactory.create({"warehouse": sys.argv[1]})
t = catalog.get_table(sys.argv[2] + "$files")
rb = t.new_read_builder()
arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
out = sys.stdout
for batch in arrow.to_batches(65536):
    out.write("".join(json.dumps(r, default=str) + "\\n" for r in batch.to_pylist()))
    out.flush()
"""


@dataclass
class Result:
    label: str
    first_s: float | None
    total_s: float | None
    lines: int
    cpu_s: float
    rss_mib: float
    code: int
    note: str = ""


def run(label: str, argv: list[str], timeout: float, first_only: bool = False) -> Result:
    """One case: read the child's stdout line by line (only the first with ``first_only``)."""
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None
    first = None
    lines = 0
    killed: list[bool] = []

    def kill() -> None:  # also when no line ever comes (a peer that prints only at the end)
        killed.append(True)
        os.killpg(proc.pid, signal.SIGKILL)

    watchdog = threading.Timer(timeout, kill)
    watchdog.start()
    for _ in proc.stdout:
        lines += 1
        if first is None:
            first = time.perf_counter() - start
            if first_only:
                break
    proc.stdout.close()  # a head: the pipe closes after the first line
    _, status, usage = os.wait4(proc.pid, 0)
    watchdog.cancel()
    total = time.perf_counter() - start
    note = f"killed after {timeout:.0f} s" if killed else ""
    err = proc.stderr.read().decode(errors="replace").strip() if proc.stderr else ""
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, -signal.SIGPIPE) and not note:
        note = err.splitlines()[-1] if err else f"exit {code}"
    cpu = usage.ru_utime + usage.ru_stime
    return Result(label, first, None if note else total, lines, cpu, usage.ru_maxrss / 1024, code, note)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", default="bench.files")
    ap.add_argument("--main-cli", help="today's main paimon-cli (e.g. /work/main/.venv/bin/paimon-cli)")
    ap.add_argument("--pypaimon-python", default=str(PYPAIMON))
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--skip", action="append", default=[], help="ours|head|columns|main|pypaimon")
    args = ap.parse_args(argv)

    ours = [sys.executable, "-m", "paimon_cli", "inspect", "files", args.table, "-w", args.warehouse, "-o", "jsonl"]
    cases: list[tuple[str, str, list[str], bool]] = [
        ("ours", "paimon-cli (this branch) inspect files -o jsonl", ours, False),
        ("head", "paimon-cli (this branch), pipe closed after the first line", ours, True),
        ("columns", "paimon-cli (this branch) --columns partition,bucket,file_path,level,record_count",
         [*ours, "--columns", "partition,bucket,file_path,level,record_count"], False),
    ]
    if Path(args.pypaimon_python).exists():
        cases.append(("pypaimon", "pypaimon 2.1 `$files` -> Arrow -> JSON lines",
                      [args.pypaimon_python, "-c", PYPAIMON_WORKER, args.warehouse, args.table], False))
    if args.main_cli:
        main_argv = [args.main_cli, "inspect", "files", args.table, "-w", args.warehouse, "-o", "jsonl"]
        cases.append(("main", "paimon-cli main inspect files -o jsonl", main_argv, False))
    results = []
    for key, label, cmd, first_only in cases:
        if key in args.skip:
            continue
        print(f"running {key} ...", file=sys.stderr, flush=True)
        r = run(label, cmd, args.timeout, first_only)
        print(f"  {r}", file=sys.stderr, flush=True)
        results.append(r)
    print("| case | first row s | total s | CPU s | rows | peak RSS MiB | note |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for r in results:
        first = f"{r.first_s:.2f}" if r.first_s is not None else "-"
        total = f"{r.total_s:.1f}" if r.total_s is not None else "-"
        print(f"| {r.label} | {first} | {total} | {r.cpu_s:.1f} | {r.lines:,} | {r.rss_mib:.0f} | {r.note} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
