"""``inspect files`` of a large table: this tree's CLI, a baseline CLI and pypaimon 2.1's
``$files`` in interleaved rounds (issue 28).

Usage (tables from ``make_tables.py --only files``; 500,000 files with ``--partitions 500``)::

    .venv/bin/python bench/bench_inspect_files.py --warehouse /tmp/benchwh \\
        --baseline-cli /tmp/baseline/.venv/bin/paimon-cli --formats jsonl json csv table

One untimed warm-up per case first: it checks the row count of every CLI's ``-o jsonl``
(and of pypaimon's Arrow table), and that the baseline and this tree print the same bytes
for every format. Then ``--repeat`` rounds run each case once, in order, stdout to
/dev/null; wall and CPU seconds (user + sys of the process, from ``wait4``) are reported as
medians, peak RSS (``ru_maxrss``) as the largest of the rounds, with the load average before
and after. Prints Markdown on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
ROOT = BENCH_DIR.parent
PP_VENVS = [Path.home() / ".cache/paimon-cli-tests/pypaimon-2.1.0-venv", Path.home() / ".cache/paimon-cli-tests/pypaimon-2.1-venv",
            Path("/tmp/pp/venv21")]


@dataclass
class Case:
    key: str
    label: str
    argv: list[str]
    walls: list[float] = field(default_factory=list)
    cpus: list[float] = field(default_factory=list)
    rss: list[float] = field(default_factory=list)  # peak RSS, MiB


def _run(argv: list[str]) -> tuple[float, float, float]:
    """Wall and CPU seconds and peak RSS (MiB) of one process, stdout to /dev/null."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = code = os.waitstatus_to_exitcode(status)
    if code != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({code}): {err.decode(errors='replace')[-500:]}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def _digest(argv: list[str]) -> tuple[str, int, bytes]:
    """sha256 and line count of a process's stdout, read as it comes (this process stays
    small: a child's ``ru_maxrss`` may count the pages of the process that forked it), and
    the first 64 KiB of it."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    h = hashlib.sha256()
    lines = 0
    head = b""
    while chunk := proc.stdout.read(1 << 20):
        h.update(chunk)
        lines += chunk.count(b"\n")
        if len(head) < 65536:
            head += chunk[:65536]
    if proc.wait() != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode})")
    return h.hexdigest(), lines, head


def _loadavg() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", default="bench.files")
    ap.add_argument("--files", type=int, default=100_000, help="expected live files")
    ap.add_argument("--cli", default=str(ROOT / ".venv/bin/paimon-cli"))
    ap.add_argument("--baseline-cli", help="paimon-cli of the build to compare with")
    ap.add_argument("--formats", nargs="+", default=["jsonl"], choices=["jsonl", "json", "csv", "table"])
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--pypaimon-python", help="python of a venv with pypaimon 2.1 (default: the tests' venv)")
    ap.add_argument("--no-pypaimon", action="store_true")
    args = ap.parse_args(argv)

    clis = [("new", args.cli)] + ([("base", args.baseline_cli)] if args.baseline_cli else [])
    cases = [Case(f"{who}_{fmt}", f"paimon-cli ({who}) inspect files -o {fmt}",
                  [cli, "inspect", "files", args.table, "-w", args.warehouse, "-o", fmt])
             for fmt in args.formats for who, cli in clis]
    pp_py = None
    if not args.no_pypaimon:
        found = [Path(args.pypaimon_python)] if args.pypaimon_python else [v / "bin/python" for v in PP_VENVS]
        pp_py = next((p for p in found if p.exists()), None)
        if pp_py is None:
            raise SystemExit("no pypaimon 2.1 venv found (--pypaimon-python, or --no-pypaimon)")
        cases.append(Case("pp", "pypaimon 2.1 `$files` -> to_arrow (whole process)",
                          [str(pp_py), str(BENCH_DIR / "pypaimon_read.py"), args.warehouse, f"{args.table}$files"]))

    load_start = _loadavg()
    digests: dict[str, str] = {}
    for c in cases:  # warm-up and checks
        digest, lines, head = _digest(c.argv)
        if c.key == "pp":
            import json

            rows = json.loads(head)["rows"]
        else:
            digests[c.key] = digest
            rows = lines if c.key.endswith("jsonl") else None
        if rows is not None and rows != args.files:
            raise SystemExit(f"{c.label}: {rows} rows, expected {args.files}")
        print(f"warm-up {c.label}: ok", file=sys.stderr)
    for fmt in args.formats:
        if args.baseline_cli and digests[f"new_{fmt}"] != digests[f"base_{fmt}"]:
            raise SystemExit(f"-o {fmt}: this tree and the baseline print different text")
    for r in range(args.repeat):
        for c in cases:
            wall, cpu, rss = _run(c.argv)
            c.walls.append(wall)
            c.cpus.append(cpu)
            c.rss.append(rss)
        print(f"round {r + 1}/{args.repeat} done (load {_loadavg()})", file=sys.stderr)
    load_end = _loadavg()

    med = {c.key: (statistics.median(c.walls), statistics.median(c.cpus), max(c.rss)) for c in cases}
    out = [f"`{args.table}` ({args.files:,} live files), {args.repeat} interleaved rounds after a warm-up; "
           f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores; load average at start "
           f"{load_start}, at end {load_end}.", ""]
    if args.baseline_cli:
        out.append("Baseline and this tree printed the same bytes for every format (checked in the warm-up).")
        out.append("")
    out += ["| case | wall median (s) | CPU median (s) | wall min / max (s) | peak RSS (MiB) |",
            "|---|---:|---:|---:|---:|"]
    for c in cases:
        out.append(f"| {c.label} | {med[c.key][0]:.2f} | {med[c.key][1]:.2f} | {min(c.walls):.2f} / "
                   f"{max(c.walls):.2f} | {med[c.key][2]:.0f} |")
    out += ["", "| format | baseline / new (wall) | baseline / new (CPU) | pypaimon 2.1 / new (wall) |",
            "|---|---:|---:|---:|"]
    for fmt in args.formats:
        new = med[f"new_{fmt}"]
        base = med.get(f"base_{fmt}")
        pp = med.get("pp")
        out.append(f"| `-o {fmt}` | {'-' if base is None else f'{base[0] / new[0]:.2f}x'} | "
                   f"{'-' if base is None else f'{base[1] / new[1]:.2f}x'} | "
                   f"{'-' if pp is None else f'{pp[0] / new[0]:.2f}x'} |")
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
