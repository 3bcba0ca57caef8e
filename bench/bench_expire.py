"""Benchmark: expire 5,000 of 5,010 snapshots (100,000 data files, with compactions) vs Java 0.9.

Builds (once, cached) an append table with 4 partitions: 5,010 commits, every 5th a COMPACT
that deletes every live file of its partition and adds 20; the others APPEND 20 files. That
is 100,200 data files (empty on disk: expiry never opens data files, it deletes them), with
manifests and manifest lists written by our commit. Then, in one run:

* Java Paimon 0.9 (bridge jar via the test harness, JVM warmed up) expires a copy,
* ours expires an identical copy in-process (plan + apply) and via the CLI,
* the files left must be identical,
* scaling: ours expiring 1,000 vs 5,000 snapshots (time per deleted file).

Run: ``.venv/bin/python bench/bench_expire.py [--work /tmp/bench_expire] [--rebuild]``
Prints a Markdown report (paste into bench/RESULTS.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

N_SNAPSHOTS = 5010
FILES_PER_COMMIT = 20
PARTITIONS = ["p0", "p1", "p2", "p3"]


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def build(wh: Path) -> None:
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.data import binary_row
    from paimon_cli.core.data.types import parse_data_type
    from paimon_cli.core.io import paths
    from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta
    from paimon_cli.core.mergetree.commit_message import CommitMessage
    from paimon_cli.core.operation.commit import FileStoreCommit
    from paimon_cli.core.schema.table_schema import Schema

    cat = FileSystemCatalog(str(wh))
    cat.create_database("db", True)
    t = cat.create_table("db.t", Schema.of(
        [("id", parse_data_type("INT"), None), ("dt", parse_data_type("STRING"), None)],
        partition_keys=["dt"], options={"bucket": "-1", "write-only": "true"},
    ))
    ptypes = t.schema.partition_types
    empty_key = binary_row.serialize([], [])
    live: dict[str, list[DataFileMeta]] = {p: [] for p in PARTITIONS}
    commit = FileStoreCommit(t)
    started = time.monotonic()

    def new_file() -> DataFileMeta:
        return DataFileMeta(
            file_name=f"data-{uuid.uuid4()}-0.parquet", file_size=0, row_count=1, min_key=empty_key,
            max_key=empty_key, key_stats=EMPTY_STATS, value_stats=EMPTY_STATS, min_sequence_number=0,
            max_sequence_number=0, schema_id=0, level=0, creation_time=1_700_000_000_000,
            delete_row_count=0, file_source=0,
        )

    for i in range(1, N_SNAPSHOTS + 1):
        p = PARTITIONS[i % len(PARTITIONS)]
        part = binary_row.serialize([p], ptypes)
        bdir = Path(paths.bucket_path(t.path, f"dt={p}", 0))
        bdir.mkdir(parents=True, exist_ok=True)
        files = [new_file() for _ in range(FILES_PER_COMMIT)]
        for f in files:
            (bdir / f.file_name).touch()
        if i % 5 == 0:
            msg = CommitMessage(part, 0, -1, new_files=files, deleted_files=live[p])
            commit.commit([msg], "COMPACT")
            live[p] = files
        else:
            commit.commit([CommitMessage(part, 0, -1, new_files=files)], "APPEND")
            live[p] = live[p] + files
        if i % 500 == 0:
            log(f"  built {i} snapshots ({time.monotonic() - started:.0f} s)")
    (wh / "BUILT").write_text("ok")


def file_set(table_dir: Path) -> set[str]:
    out = set()
    for root, _, names in os.walk(table_dir):
        for n in names:
            out.add(os.path.relpath(os.path.join(root, n), table_dir))
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/bench_expire")
    ap.add_argument("--rebuild", action="store_true")
    args = ap.parse_args()
    work = Path(args.work)
    orig = work / "orig"
    if args.rebuild or not (orig / "BUILT").exists():
        shutil.rmtree(orig, ignore_errors=True)
        orig.mkdir(parents=True)
        log(f"building {N_SNAPSHOTS} snapshots / {N_SNAPSHOTS * FILES_PER_COMMIT} data files in {orig} ...")
        t0 = time.monotonic()
        build(orig)
        log(f"built in {time.monotonic() - t0:.0f} s")
    copies = {}
    for name in ("java", "ours", "ours_cli", "ours_1000"):
        dst = work / name
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(orig, dst)
        copies[name] = dst
    tdir = lambda wh: wh / "db.db" / "t"  # noqa: E731
    before = file_set(tdir(orig))
    n_files_before = len(before)

    from tests.interop.java_harness import JavaPaimon

    jp = JavaPaimon.start(log_path=work / "jvm.log", temp_dir=work / "jvm-io")
    try:
        # warm-up: class loading and JIT of the expire path on a small table
        warm = work / "warm"
        shutil.rmtree(warm, ignore_errors=True)
        jp.create_table(str(warm), "db", "w", [("id", "INT")], options={"write-only": "true"})
        for i in range(12):
            jp.write(str(warm), "db", "w", [{"id": i}])
        jp.expire(str(warm), "db", "w", retain_min=1, older_than_ms=1, max_deletes=100)
        time.sleep(0.01)
        t0 = time.monotonic()
        n_java = jp.expire(str(copies["java"]), "db", "t", retain_min=10, older_than_ms=1, max_deletes=5000)
        java_s = time.monotonic() - t0
    finally:
        jp.close()

    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.operation.expire import apply_expire, plan_expire
    from paimon_cli.core.operation.expire_plan import ExpirePolicy

    policy = ExpirePolicy(retain_min=10, time_retained_millis=1, max_deletes=5000)
    t = FileSystemCatalog(str(copies["ours"])).get_table("db.t")
    t0 = time.monotonic()
    plan = plan_expire(t, policy)
    plan_s = time.monotonic() - t0
    res = apply_expire(t, plan)
    ours_s = time.monotonic() - t0

    t0 = time.monotonic()
    subprocess.run([sys.executable, "-m", "paimon_cli", "expire", "db.t", "-w", str(copies["ours_cli"]),
                    "--retain-min", "10", "--older-than", "1 ms", "--max-deletes", "5000", "-o", "json"],
                   check=True, capture_output=True)
    cli_s = time.monotonic() - t0

    t1k = FileSystemCatalog(str(copies["ours_1000"])).get_table("db.t")
    t0 = time.monotonic()
    plan1k = plan_expire(t1k, ExpirePolicy(retain_min=10, time_retained_millis=1, max_deletes=1000))
    res1k = apply_expire(t1k, plan1k)
    s1k = time.monotonic() - t0

    left_java = file_set(tdir(copies["java"]))
    left_ours = file_set(tdir(copies["ours"]))
    left_cli = file_set(tdir(copies["ours_cli"]))
    assert res.deleted_files == len(before - left_ours)  # the plan listed exactly what went
    same = left_java == left_ours == left_cli
    print("## expire: 5,000 of 5,010 snapshots, 100,200 data files (with compactions)\n")
    print(f"Table: append, 4 partitions, {N_SNAPSHOTS} snapshots (every 5th a COMPACT), "
          f"{n_files_before} files before expiry. Local disk, same run, JVM warmed up.\n")
    print("| run | snapshots expired | files deleted | wall time |")
    print("|---|---|---|---|")
    print(f"| Java Paimon 0.9 `ExpireSnapshotsImpl` (in a warm JVM) | {n_java} | "
          f"{len(before - left_java)} | {java_s:.2f} s |")
    print(f"| ours, in-process (plan {plan_s:.2f} s + delete {ours_s - plan_s:.2f} s) | {res.expired} | "
          f"{len(before - left_ours)} | {ours_s:.2f} s |")
    print(f"| ours, `paimon-cli expire` (incl. interpreter start) | {res.expired} | "
          f"{len(before - left_cli)} | {cli_s:.2f} s |")
    print(f"| ours, 1,000 snapshots only (scaling) | {res1k.expired} | {res1k.deleted_files} | {s1k:.2f} s |")
    print()
    print(f"Files left identical (Java vs ours vs CLI): **{same}** ({len(left_ours)} files).")
    per_5k = ours_s / max(res.deleted_files, 1) * 1e6
    per_1k = s1k / max(res1k.deleted_files, 1) * 1e6
    print(f"Time per deleted file: {per_5k:.0f} us (5,000 snapshots) vs {per_1k:.0f} us (1,000): "
          "work is proportional to what is deleted.")
    print(f"Ratio ours/Java (in-process): {ours_s / java_s:.2f}; CLI/Java: {cli_s / java_s:.2f}.")
    if not same:
        print(f"\nDIFF java-only: {sorted(left_java - left_ours)[:5]} ours-only: {sorted(left_ours - left_java)[:5]}")


if __name__ == "__main__":
    main()
