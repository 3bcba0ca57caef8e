"""remove-orphan-files on a table with 100,000 live files (issue 5 speed goal), vs Java 0.9.

Run by hand (not part of pytest)::

    .venv/bin/python bench/bench_orphans.py --warehouse /tmp/orphanwh [--java] [--repeat 3]

Builds an append table (``bucket`` 4, ``bucket-key`` id, partitioned by ``dt``) whose 20
APPEND snapshots commit 5,000 files each: 50 partitions x 4 buckets x 500 live files =
100,000 data files that exist on disk (16 bytes each; only names matter to the cleaner).
Tag ``t10`` pins snapshot 10. Then plants 1,000 orphan data files (5 per bucket), 10
manifests and a snapshot ``.tmp``, ages every file two days and times:

* ``plan``: our in-process plan (used-file collection + candidate listing), with the number
  of directory listings (must equal the number of directories: each listed once);
* ``cli dry-run``: ``paimon-cli remove-orphan-files --dry-run -o json`` end to end;
* ``cli run``: the real run on a fresh copy (must delete exactly the planted files);
* with ``--java``: Java 0.9's OrphanFilesClean (tests/interop/java/OrphansHelper.java) on
  another identical copy, same cutoff, through the py4j harness (JVM start not timed).

Prints a Markdown table on stdout (progress on stderr).
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paimon_cli.core.catalog.filesystem import FileSystemCatalog  # noqa: E402
from paimon_cli.core.data import binary_row  # noqa: E402
from paimon_cli.core.data.types import parse_columns  # noqa: E402
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta, FileSource  # noqa: E402
from paimon_cli.core.mergetree.commit_message import CommitMessage  # noqa: E402
from paimon_cli.core.operation.commit import FileStoreCommit  # noqa: E402
from paimon_cli.core.operation.orphans import plan_remove_orphans  # noqa: E402
from paimon_cli.core.schema.table_schema import Schema  # noqa: E402

PARTITIONS, BUCKETS, COMMITS, PER_BUCKET_PER_COMMIT = 50, 4, 20, 25
ORPHANS_PER_BUCKET = 5


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(wh: Path) -> tuple[str, set[str]]:
    """The table (returns its path) plus the planted orphans (paths relative to the table)."""
    if wh.exists():
        shutil.rmtree(wh)
    cat = FileSystemCatalog(str(wh))
    cat.create_table(
        "bench.orphans",
        Schema.of(parse_columns("id INT, dt STRING, v STRING"), partition_keys=("dt",),
                  options={"bucket": str(BUCKETS), "bucket-key": "id", "write-only": "true"}),
    )
    t = cat.get_table("bench.orphans")
    from paimon_cli.core.data.types import VarCharType

    parts = [(f"dt=p{p:02d}", binary_row.serialize([f"p{p:02d}"], [VarCharType(2147483647)])) for p in range(PARTITIONS)]
    n = 0
    for c in range(COMMITS):
        messages = []
        for pdir, pbytes in parts:
            for b in range(BUCKETS):
                bdir = Path(t.path) / pdir / f"bucket-{b}"
                bdir.mkdir(parents=True, exist_ok=True)
                files = []
                for _ in range(PER_BUCKET_PER_COMMIT):
                    name = f"data-{c:04d}{n:08d}-0000-4000-8000-000000000000-0.parquet"
                    n += 1
                    (bdir / name).write_bytes(b"0123456789abcdef")
                    files.append(DataFileMeta(
                        file_name=name, file_size=16, row_count=1, min_key=binary_row.EMPTY_ROW,
                        max_key=binary_row.EMPTY_ROW, key_stats=EMPTY_STATS, value_stats=EMPTY_STATS,
                        min_sequence_number=0, max_sequence_number=0, schema_id=0, level=0,
                        creation_time=0, delete_row_count=0, file_source=int(FileSource.APPEND),
                    ))
                messages.append(CommitMessage(pbytes, b, BUCKETS, new_files=files))
        FileStoreCommit(t).commit(messages, "APPEND")
        log(f"  commit {c + 1}/{COMMITS}: {n} files")
    t.tag_manager.create_tag("t10", t.snapshot_manager.snapshot(10))
    planted: set[str] = set()
    k = 0
    for pdir, _ in parts:
        for b in range(BUCKETS):
            for _ in range(ORPHANS_PER_BUCKET):
                k += 1  # unique names: Java keys its candidates by file name
                rel = f"{pdir}/bucket-{b}/data-0badf00d-{k:04d}-4000-8000-000000000000-0.parquet"
                (Path(t.path) / rel).write_bytes(b"orphan")
                planted.add(rel)
    some = sorted(p for p in os.listdir(Path(t.path) / "manifest") if p.startswith("manifest-") and "list" not in p)[0]
    for k in range(10):
        rel = f"manifest/manifest-0badf00d-{k:04d}-4000-8000-000000000000-0"
        shutil.copyfile(Path(t.path) / "manifest" / some, Path(t.path) / rel)
        planted.add(rel)
    rel = "snapshot/.snapshot-21.0badf00d.tmp"
    (Path(t.path) / rel).write_bytes(b"{")
    planted.add(rel)
    old = time.time() - 2 * 86_400
    for d, dirs, fs in os.walk(t.path):
        for x in fs + dirs:
            os.utime(os.path.join(d, x), (old, old))
    return t.path, planted


def count_dirs(root: str) -> int:
    return 1 + sum(len(dirs) for _, dirs, _ in os.walk(root))


def cli(wh: str, *args: str) -> tuple[float, str]:
    exe = Path(sys.executable).with_name("paimon-cli")
    started = time.perf_counter()
    proc = subprocess.run([str(exe), "remove-orphan-files", "bench.orphans", "-w", wh, "-o", "json", *args],
                          capture_output=True, text=True)
    took = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"paimon-cli failed: {proc.stderr}")
    return took, proc.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--java", action="store_true", help="also time Java 0.9's OrphanFilesClean")
    args = ap.parse_args()
    base = Path(args.warehouse)
    src = base / "src"
    log("building the table ...")
    started = time.perf_counter()
    table_path, planted = build(src)
    log(f"built in {time.perf_counter() - started:.1f} s")
    rel_table = os.path.relpath(table_path, src)
    results: dict[str, list[float]] = {"plan": [], "cli dry-run": [], "cli run": [], "java": []}
    listings = dirs = 0
    for r in range(args.repeat):
        log(f"round {r + 1}/{args.repeat}")
        t = FileSystemCatalog(str(src)).get_table("bench.orphans")
        s = time.perf_counter()
        plan = plan_remove_orphans(t)
        results["plan"].append(time.perf_counter() - s)
        assert {os.path.relpath(f.path, table_path) for f in plan.files} == planted
        listings, dirs = plan.dirs_listed, count_dirs(table_path)
        assert plan.dirs_listed == plan.dirs_distinct  # each directory listed once
        took, out = cli(str(src), "--dry-run")
        results["cli dry-run"].append(took)
        assert {row["path"] for row in json.loads(out)} == planted
        run_wh = base / f"run{r}"
        if run_wh.exists():
            shutil.rmtree(run_wh)
        shutil.copytree(src, run_wh)
        took, out = cli(str(run_wh))
        results["cli run"].append(took)
        assert {row["path"] for row in json.loads(out)} == planted
        assert not any((run_wh / rel_table / p).exists() for p in planted)
        shutil.rmtree(run_wh)
        if args.java:
            results["java"].append(java_run(base, src, rel_table, planted, r))
    print(f"table: {PARTITIONS * BUCKETS * COMMITS * PER_BUCKET_PER_COMMIT:,} live data files in "
          f"{PARTITIONS} partitions x {BUCKETS} buckets, {COMMITS} snapshots + 1 tag; "
          f"{len(planted):,} planted orphans; {dirs} directories on disk; the plan made {listings} listings "
          "of distinct paths (each directory once; the extra ones are absent index/, statistics/, "
          "changelog/, consumer/, branch/)")
    print()
    print("| step | median s | runs |")
    print("|---|---|---|")
    for k, v in results.items():
        if v:
            print(f"| {k} | {statistics.median(v):.2f} | {', '.join(f'{x:.2f}' for x in v)} |")


_JP = None


def java_run(base: Path, src: Path, rel_table: str, planted: set[str], r: int) -> float:
    global _JP
    from tests.interop.java_harness import JavaPaimon

    if _JP is None:
        os.environ.setdefault("PAIMON_CLI_TEST_JAVA_OPTS", "")  # JIT on for a timing run
        _JP = JavaPaimon.start(log_path=base / "jvm.log", temp_dir=base / "java-io")
    jwh = base / f"java{r}"
    if jwh.exists():
        shutil.rmtree(jwh)
    shutil.copytree(src, jwh)
    path = str(jwh / rel_table)
    cutoff = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    s = time.perf_counter()
    out = _JP._gateway.jvm.OrphansHelper.removeOrphanFiles(path, cutoff, False)
    took = time.perf_counter() - s
    got = {os.path.relpath(p, path) for p in str(out).splitlines() if p}
    assert got == planted, (len(got), len(planted))
    shutil.rmtree(jwh)
    return took


if __name__ == "__main__":
    main()
