"""remove-orphan-files over a 1,000,000-file table (issue 15): today's main vs this tree vs
Java 0.9's OrphanFilesClean, wall time and peak RSS, one run each on the same copy.

Run by hand (not part of pytest)::

    .venv/bin/python bench/bench_orphans_scale.py --warehouse /tmp/orphans1m [--java]
        [--main-python /work/main/.venv/bin/python] [--skip-build]

The table is ``bench/make_tables.py``'s ``files`` shape scaled up (key table, ``dt``
partitions x 4 buckets x 250 files; 1,000 partitions = 1,000,000 live files, one manifest
of 1,000 entries per partition, written over 10 snapshots), synthetic metadata written by our
own writers. Unlike make_tables.py, every live data file also exists on disk (an empty
file: only names matter to the cleaner), and ``--orphans-per-bucket`` orphan data files per
bucket plus 10 orphan manifests and a snapshot ``.tmp`` are planted. Every file is aged two
days, so the default cutoff (1 day) makes all of them candidates.

Each contender runs in its own process (RSS = that process; Java: the JVM's VmHWM):

* ``main``: ``paimon-cli remove-orphan-files`` of the ``--main-python`` venv (today's main);
* ``new``: the same command of this tree;
* ``java``: ``OrphanFilesClean`` of Java Paimon 0.9 via tests/interop/java/OrphansHelper.java
  (py4j harness, JVM defaults; JVM start is not timed).

Each does a dry run (all three must report exactly the planted orphans), then a real run
(must delete exactly them; the orphans are planted again before the next contender).
Prints a Markdown table on stdout (progress on stderr).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

IDENT = "bench.orphans1m"
BUCKETS, PER_BUCKET, COMMITS = 4, 250, 10
DAY = 86_400


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _partition_dir(p: int) -> str:
    """make_tables.make_files' partition value of partition ``p``."""
    return f"dt=2025-{1 + p // 28 % 12:02d}-{1 + p % 28:02d}" if p < 336 else f"dt=p{p:05d}"


def build(wh: Path, partitions: int) -> Path:
    """Metadata (make_tables.make_files) plus every live data file as an empty file."""
    import make_tables

    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    if wh.exists():
        shutil.rmtree(wh)
    cat = FileSystemCatalog(str(wh))
    cat.create_database("bench", ignore_if_exists=True)
    started = time.perf_counter()
    make_tables.make_files(cat, IDENT, partitions, BUCKETS, PER_BUCKET, COMMITS)
    log(f"metadata written in {time.perf_counter() - started:.1f} s")
    table = Path(cat.get_table(IDENT).path)
    started = time.perf_counter()
    for p in range(partitions):
        for b in range(BUCKETS):
            bdir = table / _partition_dir(p) / f"bucket-{b}"
            bdir.mkdir(parents=True)
            for k in range(PER_BUCKET):
                n = (p * BUCKETS + b) * PER_BUCKET + k
                os.close(os.open(bdir / f"data-{uuid.UUID(int=n + 1)}-0.parquet", os.O_CREAT | os.O_WRONLY, 0o644))
        if p % 100 == 99:
            log(f"  data files of {p + 1}/{partitions} partitions ({time.perf_counter() - started:.1f} s)")
    return table


def plant(table: Path, partitions: int, per_bucket: int) -> set[str]:
    """The orphans (paths relative to the table), created if missing, aged two days."""
    planted: set[str] = set()
    k = 0
    for p in range(partitions):
        for b in range(BUCKETS):
            for _ in range(per_bucket):
                k += 1
                planted.add(f"{_partition_dir(p)}/bucket-{b}/data-0badf00d-{k:04x}-4000-8000-000000000000-0.parquet")
    manifests = sorted(x for x in os.listdir(table / "manifest") if x.startswith("manifest-") and "list" not in x)
    for k in range(10):
        planted.add(f"manifest/manifest-0badf00d-{k:04d}-4000-8000-000000000000-0")
    planted.add("snapshot/.snapshot-11.0badf00d.tmp")
    for rel in planted:
        path = table / rel
        if not path.exists():
            if rel.startswith("manifest/"):
                shutil.copyfile(table / "manifest" / manifests[0], path)
            else:
                path.write_bytes(b"orphan")
    return planted


def age_all(table: Path) -> None:
    old = time.time() - 2 * DAY
    for d, dirs, fs in os.walk(table):
        for x in fs + dirs:
            os.utime(os.path.join(d, x), (old, old))


def _age(table: Path, rels: set[str]) -> None:
    old = time.time() - 2 * DAY
    for rel in rels:
        os.utime(table / rel, (old, old))


def run_cli(python: str, wh: Path, dry_run: bool) -> tuple[float, int, set[str]]:
    """(wall s, peak RSS MiB, relative paths reported) of one ``remove-orphan-files``."""
    cmd = [python, "-m", "paimon_cli", "remove-orphan-files", IDENT, "-w", str(wh), "-o", "json"]
    if dry_run:
        cmd.append("--dry-run")
    else:
        cmd.append("--yes")
    env = dict(os.environ, PYTHONPATH="")
    out_path, err_path = Path(f"/tmp/bench-orphans-{os.getpid()}.out"), Path(f"/tmp/bench-orphans-{os.getpid()}.err")
    with open(out_path, "w") as out_f, open(err_path, "w") as err_f:
        started = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out_f, stderr=err_f, env=env, cwd="/")
        _, status, usage = os.wait4(proc.pid, 0)  # rusage of exactly this process
        took = time.perf_counter() - started
    proc.returncode = os.waitstatus_to_exitcode(status)
    out, err = out_path.read_text(), err_path.read_text()
    out_path.unlink()
    err_path.unlink()
    rss = usage.ru_maxrss / 1024
    if proc.returncode != 0:
        raise SystemExit(f"{python} remove-orphan-files failed ({proc.returncode}): {err.strip()[-2000:]}")
    return took, int(rss), {row["path"] for row in json.loads(out)}


_JP = None


def _jvm_pid() -> int:
    me = str(os.getpid())
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                stat = Path(f"/proc/{pid}/stat").read_text()
                cmd = Path(f"/proc/{pid}/cmdline").read_bytes()
            except OSError:
                continue
            if stat.rsplit(")", 1)[1].split()[1] == me and b"java" in cmd:
                return int(pid)
    raise SystemExit("JVM process not found")


def _hwm_mib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) // 1024
    return -1


def run_java(base: Path, table: Path, dry_run: bool) -> tuple[float, int, set[str]]:
    """Java 0.9 OrphanFilesClean in the harness JVM (started once, not timed)."""
    global _JP
    from tests.interop.java_harness import JavaPaimon

    if _JP is None:
        os.environ["PAIMON_CLI_TEST_JAVA_OPTS"] = ""  # JVM defaults (JIT, default GC) for a timing run
        _JP = JavaPaimon.start(log_path=base / "jvm.log", temp_dir=base / "java-io")
    cutoff = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    started = time.perf_counter()
    out = _JP._gateway.jvm.OrphansHelper.removeOrphanFiles(str(table), cutoff, dry_run)
    took = time.perf_counter() - started
    return took, _hwm_mib(_jvm_pid()), {os.path.relpath(p, table) for p in str(out).splitlines() if p}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--partitions", type=int, default=1000)
    ap.add_argument("--orphans-per-bucket", type=int, default=2)
    ap.add_argument("--main-python", default="/work/main/.venv/bin/python")
    ap.add_argument("--java", action="store_true", help="also run Java 0.9's OrphanFilesClean")
    ap.add_argument("--skip-build", action="store_true", help="reuse the table of an earlier run")
    ap.add_argument("--only", default="main,new,java", help="contenders, comma-separated")
    args = ap.parse_args()
    wh = Path(args.warehouse) / "wh"
    table = wh / "bench.db" / "orphans1m"
    if not args.skip_build:
        log("building the table ...")
        build(wh, args.partitions)
    planted = plant(table, args.partitions, args.orphans_per_bucket)
    if not args.skip_build:
        age_all(table)
    else:
        _age(table, planted)
    contenders = [c for c in args.only.split(",") if c != "java" or args.java]
    rows = []
    for who in contenders:
        for dry in (True, False):
            planted = plant(table, args.partitions, args.orphans_per_bucket)
            _age(table, planted)
            log(f"{who} {'dry run' if dry else 'run'} ...")
            if who == "java":
                took, rss, got = run_java(Path(args.warehouse), table, dry)
            else:
                python = args.main_python if who == "main" else sys.executable
                took, rss, got = run_cli(python, wh, dry)
            if got != planted:
                raise SystemExit(f"{who}: {len(got)} orphans reported, {len(planted)} planted; "
                                 f"e.g. extra {sorted(got - planted)[:3]} missing {sorted(planted - got)[:3]}")
            if not dry and any((table / p).exists() for p in planted):
                raise SystemExit(f"{who}: a planted orphan survived the real run")
            rows.append((who, "dry run" if dry else "run", took, rss))
            log(f"  {took:.1f} s, peak RSS {rss} MiB")
    if _JP is not None:
        _JP.close()
    plant(table, args.partitions, args.orphans_per_bucket)
    live = args.partitions * BUCKETS * PER_BUCKET
    print(f"table: {live:,} live data files (all on disk) in {args.partitions} partitions x {BUCKETS} buckets, "
          f"{args.partitions} manifests, {COMMITS} snapshots; {len(planted):,} planted orphans")
    print()
    print("| contender | mode | wall s | peak RSS MiB |")
    print("|---|---|---|---|")
    for who, mode, took, rss in rows:
        print(f"| {who} | {mode} | {took:.1f} | {rss} |")


if __name__ == "__main__":
    main()
