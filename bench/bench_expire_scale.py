"""Benchmark: expire 10,000 snapshots of a table with 1,000,000 live files, vs main and Java 0.9.

Builds (once, cached) an append table partitioned by ``dt`` (10 partitions) with 10,010
snapshots: per block of 10, nine APPENDs of 120 files and one COMPACT that deletes the 100
newest files of one partition and adds 20, so the latest snapshot lists 1,001,000 live files
and the history deletes 100,100. Metadata only, written with our own writers the way Paimon's
manifest merge shapes it (a delta manifest per snapshot, a merged manifest per 10 snapshots, a
merged manifest per 1,000; base lists hold at most ~120 manifests). Data files: only the
100,100 files some snapshot deletes exist on disk (empty), so the files each tool deletes can
be compared; the 1,001,000 live ones do not exist (no tool opens data files).

Then, in one run, three fresh copies are expired with retain-min 10, time-retained 1 ms and an
expire limit of 10,000 (so each tool expires snapshots 1..10,000):

* ``main``: ``paimon-cli expire`` of today's main (``--main-python``, its own venv),
* ``new``: ``paimon-cli expire`` of this checkout,
* Java Paimon 0.9 ``ExpireSnapshotsImpl`` through the py4j harness (JVM defaults, warmed up),

reporting wall time and peak RSS (``/usr/bin/time -v`` for the CLIs, VmHWM of the JVM) and
checking all three leave exactly the same files.

Run: ``.venv/bin/python bench/bench_expire_scale.py [--work /tmp/bench_expire_scale] [--rebuild]``
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import re
import shutil
import subprocess
import sys
import time
import uuid
from collections import deque
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench.bench_expire import file_set, log  # noqa: E402
from bench.make_tables import BASE_TIME_MILLIS, _snapshot  # noqa: E402

PARTITIONS = 10
BLOCK = 10  # snapshots per block: 9 appends + 1 compaction
APPEND_FILES = 120
COMPACT_DELETES = 100
COMPACT_ADDS = 20
L2_EVERY = 100  # level-1 manifests folded into one level-2 manifest
N_SNAPSHOTS = 10_010
EXPIRE = 10_000


def _merge(entries: list) -> list:
    """ADD/DELETE of the same file inside one merged manifest cancel (Paimon's manifest merge)."""
    out: dict[tuple[str, int], object] = {}
    for e in entries:
        k = e.file.file_name
        if e.kind == 1 and (k, 0) in out:
            del out[(k, 0)]
        else:
            out[(k, e.kind)] = e
    return list(out.values())


def build(wh: Path) -> None:  # noqa: PLR0915 - one linear generator
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.data import binary_row
    from paimon_cli.core.data.types import BigIntType, VarCharType
    from paimon_cli.core.io import paths
    from paimon_cli.core.manifest.manifest import (
        EMPTY_STATS,
        DataFileMeta,
        FileKind,
        FileSource,
        ManifestEntry,
        ManifestFile,
        ManifestList,
    )
    from paimon_cli.core.refs.snapshot import SnapshotManager
    from paimon_cli.core.schema.table_schema import Schema

    cat = FileSystemCatalog(str(wh))
    cat.create_database("db", True)
    t = cat.create_table("db.t", Schema.of(
        [("id", BigIntType(), None), ("dt", VarCharType(), None)],
        partition_keys=["dt"], options={"bucket": "-1", "write-only": "true", "file.format": "parquet"},
    ))
    fio = cat.file_io
    mdir = paths.manifest_dir(t.path)
    fio.mkdirs(mdir)
    mfile = ManifestFile(fio, mdir, partition_type=t.schema.logical_partition_type)
    mlist = ManifestList(fio, mdir)
    sm = SnapshotManager(fio, t.path)
    fio.mkdirs(sm.snapshot_dir)
    parts = [binary_row.serialize([f"p{p}"], t.schema.partition_types) for p in range(PARTITIONS)]
    dirs = [Path(paths.bucket_path(t.path, f"dt=p{p}", 0)) for p in range(PARTITIONS)]
    for d in dirs:
        d.mkdir(parents=True, exist_ok=True)
    recent: list[deque] = [deque(maxlen=2 * APPEND_FILES) for _ in range(PARTITIONS)]
    counter = [0]

    def new_file(source: int) -> DataFileMeta:
        counter[0] += 1
        return DataFileMeta(
            file_name=f"data-{uuid.UUID(int=counter[0])}-0.parquet", file_size=1024 + counter[0] % 4096,
            row_count=10, min_key=binary_row.EMPTY_ROW, max_key=binary_row.EMPTY_ROW, key_stats=EMPTY_STATS,
            value_stats=EMPTY_STATS, min_sequence_number=0, max_sequence_number=0, schema_id=0, level=0,
            creation_time=BASE_TIME_MILLIS, delete_row_count=0, file_source=source,
        )

    l2: list = []  # level-2 manifest metas
    l1: list = []  # level-1 metas since the last level-2 fold
    l1_entries: list = []
    deltas: list = []  # delta metas since the last level-1 fold
    block_entries: list = []
    appends = compacts = 0
    total = 0
    t0 = time.monotonic()
    for sid in range(1, N_SNAPSHOTS + 1):
        if sid % BLOCK == 0:
            p = compacts % PARTITIONS
            compacts += 1
            gone = [recent[p].pop() for _ in range(COMPACT_DELETES)]
            for old in gone:
                (dirs[p] / old.file_name).touch()
            added = [new_file(int(FileSource.COMPACT)) for _ in range(COMPACT_ADDS)]
            recent[p].extend(added)
            entries = [ManifestEntry(FileKind.DELETE, parts[p], 0, 0, f) for f in gone]
            entries += [ManifestEntry(FileKind.ADD, parts[p], 0, 0, f) for f in added]
            kind, delta_rows = "COMPACT", 0
            total += (COMPACT_ADDS - COMPACT_DELETES) * 10
        else:
            p = appends % PARTITIONS
            appends += 1
            added = [new_file(int(FileSource.APPEND)) for _ in range(APPEND_FILES)]
            recent[p].extend(added)
            entries = [ManifestEntry(FileKind.ADD, parts[p], 0, 0, f) for f in added]
            kind, delta_rows = "APPEND", APPEND_FILES * 10
            total += delta_rows
        base = mlist.write(l2 + l1 + deltas)
        dmeta = mfile.write(entries, 0)
        delta = mlist.write([dmeta])
        snap = dataclasses.replace(
            _snapshot(sid, base, delta, total, delta_rows, BASE_TIME_MILLIS + sid * 1000), commit_kind=kind)
        fio.write_bytes(sm.snapshot_path(sid), snap.to_json().encode())
        deltas.append(dmeta)
        block_entries += entries
        if sid % BLOCK == 0:
            merged = _merge(block_entries)
            l1.append(mfile.write(merged, 0))
            l1_entries += merged
            deltas, block_entries = [], []
            if len(l1) == L2_EVERY:
                l2.append(mfile.write(_merge(l1_entries), 0))
                l1, l1_entries = [], []
        if sid % 500 == 0:
            log(f"  built {sid} snapshots, {counter[0]} files ({time.monotonic() - t0:.0f} s)")
    sm.commit_earliest_hint(1)
    sm.commit_latest_hint(N_SNAPSHOTS)
    (wh / "BUILT").write_text("ok")


def _timed_cli(python: str, wh: Path) -> tuple[float, int, str]:
    """(wall s, peak RSS KiB, stdout) of one ``paimon-cli expire`` under /usr/bin/time -v."""
    cmd = ["/usr/bin/time", "-v", python, "-m", "paimon_cli", "expire", "db.t", "-w", str(wh),
           "--retain-min", "10", "--older-than", "1 ms", "--max-deletes", str(EXPIRE), "-o", "json"]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True)
    wall = time.monotonic() - t0
    if p.returncode != 0:
        raise SystemExit(f"{python} expire failed ({p.returncode}): {p.stderr[-2000:]}")
    rss = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", p.stderr).group(1))
    return wall, rss, p.stdout


def _jvm_hwm_kib() -> int:
    """Peak RSS (VmHWM) of the gateway JVM this process started."""
    me = os.getpid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            status = Path(f"/proc/{pid}/status").read_text()
        except OSError:
            continue
        if re.search(rf"^PPid:\s+{me}$", status, re.M) and "java" in status.split("\n", 1)[0]:
            return int(re.search(r"^VmHWM:\s+(\d+)", status, re.M).group(1))
    return 0


def _java(work: Path, wh: Path) -> tuple[float, int, int]:
    from tests.interop.java_harness import JavaPaimon

    jp = JavaPaimon.start(log_path=work / "jvm.log", temp_dir=work / "jvm-io", java_opts=[])
    try:
        warm = work / "warm"
        shutil.rmtree(warm, ignore_errors=True)
        jp.create_table(str(warm), "db", "w", [("id", "INT")], options={"write-only": "true"})
        for i in range(12):
            jp.write(str(warm), "db", "w", [{"id": i}])
        jp.expire(str(warm), "db", "w", retain_min=1, older_than_ms=1, max_deletes=100)
        t0 = time.monotonic()
        n = jp.expire(str(wh), "db", "t", retain_min=10, older_than_ms=1, max_deletes=EXPIRE)
        wall = time.monotonic() - t0
        return wall, _jvm_hwm_kib(), n
    finally:
        jp.close()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--work", default="/tmp/bench_expire_scale")
    ap.add_argument("--rebuild", action="store_true")
    ap.add_argument("--main-python", default="/work/main/.venv/bin/python")
    ap.add_argument("--skip", default="", help="comma list of main,new,java to leave out")
    args = ap.parse_args()
    work = Path(args.work)
    orig = work / "orig"
    if args.rebuild or not (orig / "BUILT").exists():
        shutil.rmtree(orig, ignore_errors=True)
        orig.mkdir(parents=True)
        log(f"building {N_SNAPSHOTS} snapshots in {orig} ...")
        t0 = time.monotonic()
        build(orig)
        log(f"built in {time.monotonic() - t0:.0f} s")
    tdir = lambda wh: wh / "db.db" / "t"  # noqa: E731
    before = file_set(tdir(orig))
    skip = set(filter(None, args.skip.split(",")))
    results: dict[str, tuple[float, int, int]] = {}
    left: dict[str, set[str]] = {}
    for name in ("main", "new", "java"):
        if name in skip:
            continue
        dst = work / name
        shutil.rmtree(dst, ignore_errors=True)
        shutil.copytree(orig, dst)
        log(f"running {name} ...")
        if name == "java":
            results[name] = _java(work, dst)
        else:
            wall, rss, out = _timed_cli(args.main_python if name == "main" else sys.executable, dst)
            results[name] = (wall, rss, EXPIRE)
        left[name] = file_set(tdir(dst))
        log(f"  {name}: {results[name][0]:.1f} s, {results[name][1] / 1024:.0f} MiB, "
            f"{len(before - left[name])} files deleted")
    print(f"## expire at scale: {EXPIRE:,} of {N_SNAPSHOTS:,} snapshots, 1,001,000 live files\n")
    print("| run | snapshots expired | files deleted | wall time | peak RSS |")
    print("|---|---|---|---|---|")
    labels = {"main": "main `paimon-cli expire`", "new": "this branch `paimon-cli expire`",
              "java": "Java Paimon 0.9 `ExpireSnapshotsImpl` (warm JVM)"}
    for name, (wall, rss, n) in results.items():
        print(f"| {labels[name]} | {n} | {len(before - left[name]):,} | {wall:.1f} s | {rss / 1024:.0f} MiB |")
    names = list(left)
    same = all(left[n] == left[names[0]] for n in names)
    print(f"\nFiles left identical ({', '.join(names)}): **{same}** ({len(left[names[0]]):,} files).")
    for a in names[1:]:
        if left[a] != left[names[0]]:
            print(f"DIFF {names[0]}-only: {sorted(left[names[0]] - left[a])[:5]} "
                  f"{a}-only: {sorted(left[a] - left[names[0]])[:5]}")
    if "new" in results:
        for other in ("main", "java"):
            if other in results:
                print(f"Ratio new/{other}: wall {results['new'][0] / results[other][0]:.2f}, "
                      f"RSS {results['new'][1] / results[other][1]:.2f}.")


if __name__ == "__main__":
    main()
