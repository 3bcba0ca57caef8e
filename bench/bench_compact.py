"""Compaction benchmarks for issue 4 (run by hand, not part of pytest).

    .venv/bin/python bench/bench_compact.py [--only speed rss spark] [--repeat 3] [--save run.json]

Prints a Markdown report on stdout (progress on stderr). Three cases:

1. ``speed`` -- full compaction of a primary-key table ``(id BIGINT, v STRING, amount DOUBLE)``,
   bucket=4, of ``--rows`` (default 4,000,000) distinct rows spread over 5 sorted runs (5
   write-only commits; every run covers the whole key range, so everything is merged).
   ``paimon-cli compact --full`` wall time (a subprocess: CLI start-up included) against Java
   Paimon 0.9's own full compaction of an identical copy (``JavaPaimon.compact`` through the
   test harness; the JVM is started before the clock runs), alternating, each on a fresh
   copy of the same table, ``--repeat`` times. Both results are checked: same live row count.
2. ``rss`` -- one bucket of at least ``--bucket-gb`` (default 4) GB on disk in 5 sorted runs
   (incompressible 200-byte payloads), ``paimon-cli compact --full`` as a subprocess; peak
   RSS from ``os.wait4`` (``ru_maxrss``). Target: <= 1 GB.
3. ``spark`` -- ``--spark-buckets`` (default 64) buckets, full compaction with
   ``--engine spark --spark-master local[1]`` and ``local[2]`` (alternating, fresh copies),
   CLI wall time and the engine's own seconds (the result row). Target: local[2] >= 1.7x.

Tables are generated with paimon-cli's writer into ``--work`` (default a temp dir, deleted at
the end unless ``--keep``); copies are made with ``cp -r``.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(REPO))

IDENT = "bench.t"
RUNS = 5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "paimon_cli", *args]


def clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}


def timed_child(cmd: list[str]) -> tuple[float, int, str, str]:
    """(wall seconds, peak RSS bytes, stdout, stderr) of a subprocess."""
    return rss_child(cmd)


def rss_child(cmd: list[str]) -> tuple[float, int, str, str]:
    """(wall seconds, the child's own peak RSS in bytes, stdout, stderr).

    The child is started through ``/usr/bin/time -v`` when it exists: ``ru_maxrss`` from
    ``os.wait4`` of a child forked from this (big, data-generating) process counts the
    parent's pages the child shared before ``exec`` -- it reported 1.7 GB for a run that
    peaks at 0.5 GB.
    """
    if shutil.which("time") or Path("/usr/bin/time").exists():
        timer = shutil.which("time") or "/usr/bin/time"
        started = time.perf_counter()
        proc = subprocess.run([timer, "-v", *cmd], capture_output=True, text=True, env=clean_env())
        wall = time.perf_counter() - started
        if proc.returncode != 0:
            raise RuntimeError(f"{cmd} failed ({proc.returncode}): {proc.stderr}")
        rss = 0
        err_lines = []
        for line in proc.stderr.splitlines():
            if "Maximum resident set size (kbytes):" in line:
                rss = int(line.rsplit(":", 1)[1]) * 1024
            elif not line.startswith("\t") and "Command being timed" not in line:
                err_lines.append(line)
        return wall, rss, proc.stdout, "\n".join(err_lines)
    out_f = tempfile.TemporaryFile()
    err_f = tempfile.TemporaryFile()
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=clean_env())
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    out_f.seek(0)
    err_f.seek(0)
    out, err = out_f.read().decode(), err_f.read().decode()
    if proc.returncode != 0:
        raise RuntimeError(f"{cmd} failed ({proc.returncode}): {err}")
    return wall, usage.ru_maxrss * 1024, out, err


# ---------------------------------------------------------------------------------------
# data
# ---------------------------------------------------------------------------------------


def make_pk_table(wh: Path, rows: int, buckets: int, payload: int, extra: dict[str, str] | None = None) -> None:
    """``rows`` distinct keys over 5 sorted runs: run r holds ids i*5+r (all runs span the key range)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.compact.write_job import write_table_result
    from paimon_cli.core.data.types import parse_columns
    from paimon_cli.core.schema.table_schema import Schema

    cat = FileSystemCatalog(str(wh))
    if cat.table_exists(IDENT) and cat.get_table(IDENT).snapshot_manager.latest_snapshot_id() == RUNS:
        log("  reusing the table generated by an earlier --keep run")
        return
    opts = {"bucket": str(buckets), "write-only": "true", "write-buffer-size": "2 gb", **(extra or {})}
    cat.create_table(IDENT, Schema.of(parse_columns("id BIGINT NOT NULL, v STRING, amount DOUBLE"),
                                      primary_keys=["id"], options=opts))
    rng = np.random.default_rng(42)
    per_run = rows // RUNS
    chunk = 2_000_000
    tmp = wh.parent / "inputs"
    tmp.mkdir(exist_ok=True)
    for r in range(RUNS):
        files = []
        for start in range(0, per_run, chunk):
            n = min(chunk, per_run - start)
            ids = (np.arange(start, start + n, dtype=np.int64) * RUNS + r)
            rng.shuffle(ids)
            if payload:
                raw = rng.integers(33, 127, size=(n, payload), dtype=np.uint8)
                offsets = np.arange(0, (n + 1) * payload, payload, dtype=np.int32)
                v = pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw.tobytes()))
            else:
                v = pa.array(np.char.add("v", (ids % 1000).astype(str)))
            t = pa.table({"id": ids, "v": v, "amount": rng.random(n)})
            p = tmp / f"run{r}-{start}.parquet"
            pq.write_table(t, p, compression="none")
            files.append(str(p))
        table = cat.get_table(IDENT)
        write_table_result(table, files)
        for f in files:
            os.unlink(f)
        log(f"  run {r + 1}/{RUNS} written")


def table_bytes(wh: Path) -> int:
    return sum(p.stat().st_size for p in (wh / "bench.db" / "t").rglob("data-*"))


def copy_wh(src: Path, dst: Path) -> None:
    if dst.exists():
        shutil.rmtree(dst)
    subprocess.run(["cp", "-r", str(src), str(dst)], check=True)


def live_rows(wh: Path) -> int:
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.operation.scan import FileStoreScan

    t = FileSystemCatalog(str(wh)).get_table(IDENT)
    return sum(e.file.row_count for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot()))


def drop_caches_hint() -> None:
    """Page cache is shared by both peers; we do not drop it (needs root), both run warm."""


# ---------------------------------------------------------------------------------------
# cases
# ---------------------------------------------------------------------------------------


def case_speed(work: Path, rows: int, repeat: int) -> dict[str, Any]:
    sys.path.insert(0, str(REPO / "tests" / "interop"))
    from tests.interop.java_harness import JavaPaimon

    base = work / "speed-base"
    log(f"speed: generating {rows:,} rows in {RUNS} runs, bucket=4")
    make_pk_table(base / "wh", rows, 4, 0)
    size = table_bytes(base / "wh")
    # the harness defaults to C1-only JIT + serial GC (fast start for tests); a fair race
    # gives Java its normal JIT and GC and enough heap
    java = JavaPaimon.start(log_path=work / "jvm.log", temp_dir=work / "jvm-io", java_opts=["-Xmx6g"])
    ours: list[float] = []
    theirs: list[float] = []
    try:
        for i in range(repeat):
            copy_wh(base / "wh", work / "ours")
            copy_wh(base / "wh", work / "java")
            wall, _, out, err = timed_child(cli("compact", IDENT, "--full", "-w", str(work / "ours"), "-o", "json"))
            row = json.loads(out)[0]
            assert row["commit_kind"] == "COMPACT", err
            ours.append(wall)
            started = time.perf_counter()
            java.compact(str(work / "java"), "bench", "t", full=True)
            theirs.append(time.perf_counter() - started)
            assert live_rows(work / "ours") == live_rows(work / "java") == rows
            log(f"  round {i + 1}: ours {wall:.2f} s (engine {row['engine']}: {row['seconds']} s), "
                f"java {theirs[-1]:.2f} s")
    finally:
        java.close()
    return {"rows": rows, "runs": RUNS, "buckets": 4, "bytes": size, "ours": ours, "java": theirs,
            "ratio": statistics.median(ours) / statistics.median(theirs)}


def case_rss(work: Path, gb: float) -> dict[str, Any]:
    base = work / "rss-base"
    payload = 200
    rows = int(gb * (1 << 30) / 170)  # ~170 bytes per row on disk (zstd of printable payloads)
    rows -= rows % RUNS
    log(f"rss: generating {rows:,} rows x {payload}-byte payload in {RUNS} runs, bucket=1")
    make_pk_table(base / "wh", rows, 1, payload, {"target-file-size": "256 mb"})
    size = table_bytes(base / "wh")
    copy_wh(base / "wh", work / "rss")
    wall, rss, out, err = rss_child(cli("compact", IDENT, "--full", "-w", str(work / "rss"), "-o", "json"))
    row = json.loads(out)[0]
    assert row["commit_kind"] == "COMPACT", err
    assert live_rows(work / "rss") == rows
    shutil.rmtree(work / "rss")
    log(f"  bucket {size / 2**30:.2f} GiB compacted in {wall:.1f} s, peak RSS {rss / 2**20:.0f} MiB")
    return {"rows": rows, "bytes": size, "seconds": wall, "peak_rss": rss, "bytes_out": row["bytes_out"]}


def case_spark(work: Path, rows: int, buckets: int, repeat: int) -> dict[str, Any]:
    base = work / "spark-base"
    log(f"spark: generating {rows:,} rows in {RUNS} runs, bucket={buckets}")
    make_pk_table(base / "wh", rows, buckets, 0)
    out: dict[str, list[float]] = {"local[1]": [], "local[2]": []}
    engine: dict[str, list[float]] = {"local[1]": [], "local[2]": []}
    for i in range(repeat):
        for master in ("local[1]", "local[2]"):
            copy_wh(base / "wh", work / "spark")
            wall, _, stdout, err = timed_child(cli("compact", IDENT, "--full", "--engine", "spark", "--spark-master",
                                                   master, "-w", str(work / "spark"), "-o", "json"))
            row = json.loads(stdout)[0]
            assert row["engine"] == "spark" and row["commit_kind"] == "COMPACT", err
            out[master].append(wall)
            engine[master].append(row["seconds"])
            log(f"  round {i + 1} {master}: wall {wall:.2f} s, job {row['seconds']:.2f} s")
    med = {m: statistics.median(v) for m, v in out.items()}
    return {"rows": rows, "buckets": buckets, "wall": out, "job": engine,
            "speedup_wall": med["local[1]"] / med["local[2]"],
            "speedup_job": statistics.median(engine["local[1]"]) / statistics.median(engine["local[2]"]),
            # the best of each side: least disturbed by other processes on a shared box
            "speedup_best": min(out["local[1]"]) / min(out["local[2]"])}


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------


def report(results: dict[str, Any]) -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    lines = [f"Run {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC on {platform.node()}: "
             f"{os.cpu_count()} CPUs, Python {platform.python_version()}, load average at the end {load:.2f}", ""]
    if "speed" in results:
        s = results["speed"]
        lines += [f"**Full compaction, {s['rows']:,} rows / {s['runs']:d} sorted runs / {s['buckets']:d} buckets "
                  f"({s['bytes'] / 2**20:.0f} MiB on disk)**", "",
            "| peer | runs (s) | median (s) |", "|---|---|---|",
            f"| `paimon-cli compact --full` (wall, CLI start-up included) | "
            f"{', '.join(f'{x:.2f}' for x in s['ours'])} | {statistics.median(s['ours']):.2f} |",
            f"| Java Paimon 0.9 full compaction (harness) | "
            f"{', '.join(f'{x:.2f}' for x in s['java'])} | {statistics.median(s['java']):.2f} |", "",
            f"Ratio ours / Java = **{s['ratio']:.2f}** (target <= 1).", ""]
    if "rss" in results:
        r = results["rss"]
        lines += [f"**One bucket of {r['bytes'] / 2**30:.2f} GiB ({r['rows']:,} rows, 5 runs), `compact --full`**: "
                  f"{r['seconds']:.1f} s, peak RSS **{r['peak_rss'] / 2**20:.0f} MiB** (target <= 1024 MiB).", ""]
    if "spark" in results:
        p = results["spark"]
        lines += [f"**Spark, {p['rows']:,} rows in {p['buckets']} buckets, `compact --full --engine spark`**", "",
                  "| master | wall (s) | job (s) |", "|---|---|---|"]
        for m in ("local[1]", "local[2]"):
            lines.append(f"| {m} | {', '.join(f'{x:.2f}' for x in p['wall'][m])} | "
                         f"{', '.join(f'{x:.2f}' for x in p['job'][m])} |")
        lines += ["", f"Speed-up local[2] vs local[1] (medians): wall **{p['speedup_wall']:.2f}x**, job "
                  f"**{p['speedup_job']:.2f}x**; best runs: **{p.get('speedup_best', 0):.2f}x** (target >= 1.7x).",
                  ""]
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", nargs="*", default=["speed", "rss", "spark"])
    ap.add_argument("--rows", type=int, default=4_000_000)
    ap.add_argument("--bucket-gb", type=float, default=4.0)
    ap.add_argument("--spark-rows", type=int, default=32_000_000)
    ap.add_argument("--spark-buckets", type=int, default=64)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--work", default=None)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--save", default=None)
    args = ap.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="bench-compact-"))
    work.mkdir(parents=True, exist_ok=True)
    results: dict[str, Any] = {}
    try:
        if "speed" in args.only:
            results["speed"] = case_speed(work, args.rows, args.repeat)
        if "rss" in args.only:
            results["rss"] = case_rss(work, args.bucket_gb)
        if "spark" in args.only:
            results["spark"] = case_spark(work, args.spark_rows, args.spark_buckets, args.repeat)
    finally:
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
    if args.save:
        Path(args.save).write_text(json.dumps(results, indent=2))
    print(report(results))


if __name__ == "__main__":
    main()
