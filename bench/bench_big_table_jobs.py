"""Jobs on a 1,000,000-file table beyond whole-table scans: a partition-selective compaction
plan, a partition-selective read plan (``--explain``) and one small write whose commit fully
compacts the manifests, each run by two CLIs (this tree and a baseline) on the same table
(the write on fresh copies).

Run by hand (not part of pytest), after generating the table::

    .venv/bin/python bench/make_tables.py --warehouse /tmp/wh1m --only files \\
        --partitions 1000 --buckets 4 --files-per-bucket 250     # 1,000,000 live files
    .venv/bin/python bench/bench_big_table_jobs.py --warehouse /tmp/wh1m \\
        --baseline-cli /tmp/oldmain/.venv/bin/paimon-cli

The table has 1,000 manifests of ~40 kB, below ``manifest.target-file-size`` (8 MB) and
together above ``manifest.full-compaction-threshold-size`` (16 MB): the first commit into it
rewrites every entry into ~8 MB manifests, as Java's commit would. CPU seconds are the
child's ``ru_utime + ru_stime`` and peak RSS its ``ru_maxrss`` (``os.wait4``). Each case
checks that both CLIs produced the same result (the plan texts; the manifest count and live
file count after the write).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TABLE = "bench.files"


def run(argv: list[str]) -> tuple[str, float, float, float]:
    """(stdout, wall s, CPU s, peak RSS MiB) of one child process."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        if os.waitstatus_to_exitcode(status) != 0:
            raise SystemExit(f"{' '.join(argv)} failed: {err.read().decode()[-2000:]}")
        return out.read().decode(), wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True, help="the generated 1M-file warehouse (left unchanged)")
    ap.add_argument("--cli", default=str(Path(sys.executable).with_name("paimon-cli")), help="this tree's CLI")
    ap.add_argument("--baseline-cli", required=True, help="the CLI to compare with")
    ap.add_argument("--partition", default="dt=2025-01-05")
    args = ap.parse_args(argv)

    clis = {"baseline": args.baseline_cli, "this tree": args.cli}
    rows = []
    plans = {}
    for label, cli in clis.items():
        out, wall, cpu, rss = run([cli, "compact", TABLE, "-w", args.warehouse, "--partition", args.partition,
                                   "--plan", "-o", "csv"])
        plans[label] = out
        rows.append((f"`compact --partition {args.partition} --plan`", label, wall, cpu, rss))
    assert plans["baseline"] == plans["this tree"], "the plans differ"
    explains = {}
    where = " AND ".join(f"{k} = '{v}'" for k, v in (kv.split("=", 1) for kv in args.partition.split(",")))
    for label, cli in clis.items():
        out, wall, cpu, rss = run([cli, "read", TABLE, "-w", args.warehouse, "--where", where, "--explain",
                                   "-o", "csv"])
        explains[label] = out
        rows.append((f"`read --where \"{where}\" --explain`", label, wall, cpu, rss))
    assert explains["baseline"] == explains["this tree"], "the read plans differ"

    after = {}
    with tempfile.TemporaryDirectory() as tmp:
        row = Path(tmp) / "one.csv"
        row.write_text("dt,id,name,amount\n2025-01-05,99999999,x,1.5\n")
        for label, cli in clis.items():
            copy = Path(tmp) / label.replace(" ", "_")
            shutil.copytree(args.warehouse, copy)
            _, wall, cpu, rss = run([cli, "write", TABLE, str(row), "-w", str(copy), "--write-only", "-q"])
            rows.append(("`write` of one row (commit fully compacts the manifests)", label, wall, cpu, rss))
            manifests, _, _, _ = run([args.cli, "inspect", "manifests", TABLE, "-w", str(copy), "-o", "csv"])
            files, _, _, _ = run([args.cli, "inspect", "files", TABLE, "-w", str(copy), "--columns", "bucket",
                                  "-o", "csv"])
            after[label] = (len(manifests.splitlines()) - 1, len(files.splitlines()) - 1)
            shutil.rmtree(copy)
    assert after["baseline"] == after["this tree"], after

    print(f"manifests / live files after the write: {after['this tree']}")
    print("| job | CLI | wall s | CPU s | peak RSS MiB |")
    print("|---|---|---:|---:|---:|")
    for job, label, wall, cpu, rss in rows:
        print(f"| {job} | {label} | {wall:.1f} | {cpu:.1f} | {rss:,.0f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
