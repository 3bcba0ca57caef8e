"""Generate two synthetic, fully valid Paimon tables for the inspect benchmarks.

Run by hand (not part of pytest)::

    .venv/bin/python bench/make_tables.py --warehouse /tmp/benchwh

Everything is written with paimon-cli's own core writers (schema, manifest, manifest list,
snapshot JSON, hints), so the benchmark also exercises our writers' output being readable
by pypaimon 2.1. Only metadata is written: data files do not exist on disk, which neither
``paimon-cli inspect`` nor pypaimon's ``$snapshots``/``$files`` need (both read manifests
only; bench_inspect.py checks that pypaimon actually succeeds on these tables).

Tables:

``bench.snaps``  append table (bucket -1), 10,000 APPEND snapshots. Snapshot N commits one
    data file: its delta manifest list holds one manifest with one ADD entry. Its base
    manifest list is the exact state before N, kept small the way Paimon's manifest merge
    does: one "full" manifest per completed block of ``--block`` snapshots plus the delta
    manifests since the last block boundary. So every snapshot is exact, not approximated.

``bench.files``  primary-key table partitioned by ``dt`` with 4 fixed buckets whose latest
    snapshot has partitions x buckets x files-per-bucket live files (default
    100 x 4 x 250 = 100,000), one manifest per partition (100 manifests), written over
    ``--files-commits`` APPEND snapshots (each adds the partitions of its slice; the latest
    snapshot's base list holds the earlier manifests). Every entry carries real key stats,
    value stats over all four columns and min/max keys as serialized BinaryRows.

``bench.files1m``  the same shape at 1,000,000 live files (``--only files1m``: 1,000
    partitions x 4 buckets x 250 files, 1,000 manifests of 1,000 entries over 10 snapshots),
    then one more snapshot of ``--churn`` level-0 files (default 20,000) where half are
    upgraded to level 5 (DELETE L0 + ADD L5 of the same file) and half are rewritten (DELETE
    + ADD of a new file), so planning merges real ADD/DELETE pairs; still 1,000,000 live.
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from dataclasses import replace
from pathlib import Path

# Allow running from a checkout without installing (the package is also pip-installed).
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from paimon_cli.core.catalog.filesystem import FileSystemCatalog  # noqa: E402
from paimon_cli.core.data import binary_row  # noqa: E402
from paimon_cli.core.data.types import BigIntType, DoubleType, VarCharType  # noqa: E402
from paimon_cli.core.io.fileio import join  # noqa: E402
from paimon_cli.core.io.paths import manifest_dir  # noqa: E402
from paimon_cli.core.manifest.manifest import (  # noqa: E402
    DataFileMeta,
    FileKind,
    FileSource,
    ManifestEntry,
    ManifestFile,
    ManifestFileMeta,
    ManifestList,
    SimpleStats,
)
from paimon_cli.core.refs.snapshot import Snapshot, SnapshotManager  # noqa: E402
from paimon_cli.core.schema.table_schema import Schema  # noqa: E402

BASE_TIME_MILLIS = 1_767_225_600_000  # 2026-01-01T00:00:00Z: fixed so runs are comparable
COMMIT_USER = "paimon-cli-bench"


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _snapshot(
    sid: int,
    base: tuple[str, int],
    delta: tuple[str, int],
    total: int,
    delta_count: int,
    time_millis: int,
) -> Snapshot:
    """A version-3 APPEND snapshot; totalRecordCount/deltaRecordCount are required by pypaimon."""
    return Snapshot(
        version=3,
        id=sid,
        schema_id=0,
        base_manifest_list=base[0],
        base_manifest_list_size=base[1],
        delta_manifest_list=delta[0],
        delta_manifest_list_size=delta[1],
        commit_user=COMMIT_USER,
        commit_identifier=sid,
        commit_kind="APPEND",
        time_millis=time_millis,
        total_record_count=total,
        delta_record_count=delta_count,
        changelog_record_count=0,
    )


def _fresh_table(catalog: FileSystemCatalog, ident: str, schema: Schema) -> str:
    """Create the table; refuse to add snapshots on top of an existing one."""
    if catalog.table_exists(ident):
        raise SystemExit(f"{ident} already exists in {catalog.warehouse}; pass --force to regenerate it")
    return catalog.create_table(ident, schema).path


def _drop_table(catalog: FileSystemCatalog, ident: str) -> None:
    db, name = ident.split(".")
    catalog.file_io.delete_dir(join(catalog.warehouse, f"{db}.db", name))


# ---------------------------------------------------------------------------------------
# bench.snaps
# ---------------------------------------------------------------------------------------

SNAPS_ROWS_PER_FILE = 100


def make_snaps(catalog: FileSystemCatalog, ident: str, count: int, block: int) -> None:
    schema = Schema.of(
        [("id", BigIntType(nullable=False), None), ("msg", VarCharType(), None)],
        options={"bucket": "-1", "file.format": "parquet"},
    )
    path = _fresh_table(catalog, ident, schema)
    fio = catalog.file_io
    mdir = manifest_dir(path)
    fio.mkdirs(mdir)
    mfile = ManifestFile(fio, mdir, partition_type=None)
    mlist = ManifestList(fio, mdir)
    sm = SnapshotManager(fio, path)
    fio.mkdirs(sm.snapshot_dir)

    value_types = [BigIntType(), VarCharType()]  # stats rows are nullable
    empty = SimpleStats.empty()
    block_metas: list[ManifestFileMeta] = []  # one merged manifest per completed block
    block_entries: list[ManifestEntry] = []  # entries since the last block boundary
    since_block: list[ManifestFileMeta] = []  # their one-entry delta manifests
    total = 0
    t0 = time.perf_counter()
    for sid in range(1, count + 1):
        lo = (sid - 1) * SNAPS_ROWS_PER_FILE
        hi = lo + SNAPS_ROWS_PER_FILE - 1
        f = DataFileMeta(
            file_name=f"data-{uuid.UUID(int=sid)}-0.parquet",
            file_size=2048 + sid % 512,
            row_count=SNAPS_ROWS_PER_FILE,
            min_key=binary_row.EMPTY_ROW,
            max_key=binary_row.EMPTY_ROW,
            key_stats=empty,
            value_stats=SimpleStats(
                binary_row.serialize([lo, f"msg-{lo:08d}"], value_types),
                binary_row.serialize([hi, f"msg-{hi:08d}"], value_types),
                [0, 0],
            ),
            min_sequence_number=lo,
            max_sequence_number=hi,
            schema_id=0,
            level=0,
            creation_time=BASE_TIME_MILLIS + sid * 1000,
            delete_row_count=0,
            file_source=int(FileSource.APPEND),
            first_row_id=None,
        )
        entry = ManifestEntry(FileKind.ADD, binary_row.EMPTY_ROW, 0, -1, f)
        base = mlist.write(block_metas + since_block)  # exact state before this snapshot
        delta_meta = mfile.write([entry], 0)
        delta = mlist.write([delta_meta])
        snap = _snapshot(sid, base, delta, total + SNAPS_ROWS_PER_FILE, SNAPS_ROWS_PER_FILE,
                         BASE_TIME_MILLIS + sid * 1000)
        fio.write_bytes(sm.snapshot_path(sid), snap.to_json().encode())
        total += SNAPS_ROWS_PER_FILE
        block_entries.append(entry)
        since_block.append(delta_meta)
        if len(block_entries) == block:  # "manifest merge": fold the block into one manifest
            block_metas.append(mfile.write(block_entries, 0))
            block_entries, since_block = [], []
        if sid % 1000 == 0:
            _log(f"  {ident}: {sid}/{count} snapshots ({time.perf_counter() - t0:.1f} s)")
    sm.commit_earliest_hint(1)
    sm.commit_latest_hint(count)


# ---------------------------------------------------------------------------------------
# bench.files
# ---------------------------------------------------------------------------------------

FILES_ROWS_PER_FILE = 1000


def make_files(
    catalog: FileSystemCatalog, ident: str, partitions: int, buckets: int, per_bucket: int, commits: int,
    churn: int = 0,
) -> None:
    schema = Schema.of(
        [
            ("dt", VarCharType(nullable=False), None),
            ("id", BigIntType(nullable=False), None),
            ("name", VarCharType(), None),
            ("amount", DoubleType(), None),
        ],
        partition_keys=["dt"],
        primary_keys=["dt", "id"],
        options={"bucket": str(buckets), "file.format": "parquet"},
    )
    path = _fresh_table(catalog, ident, schema)
    tbl = catalog.get_table(ident)
    fio = catalog.file_io
    mdir = manifest_dir(path)
    fio.mkdirs(mdir)
    part_type = tbl.schema.logical_partition_type
    mfile = ManifestFile(fio, mdir, partition_type=part_type)
    mlist = ManifestList(fio, mdir)
    sm = SnapshotManager(fio, path)
    fio.mkdirs(sm.snapshot_dir)

    part_types = [VarCharType(nullable=False)]
    key_types = [BigIntType(nullable=False)]  # trimmed primary key: id
    key_stat_types = [BigIntType()]
    value_types = [VarCharType(), BigIntType(), VarCharType(), DoubleType()]  # dt, id, name, amount

    per_commit = -(-partitions // commits)
    metas: list[ManifestFileMeta] = []
    total = 0
    seq = 0
    t0 = time.perf_counter()
    sid = 0
    level0: list[ManifestEntry] = []  # what the churn snapshot upgrades or rewrites
    for start in range(0, partitions, per_commit):
        delta_metas: list[ManifestFileMeta] = []
        delta_rows = 0
        for p in range(start, min(start + per_commit, partitions)):
            dt = f"2025-{1 + p // 28 % 12:02d}-{1 + p % 28:02d}" if p < 336 else f"p{p:05d}"
            part = binary_row.serialize([dt], part_types)
            entries = []
            for b in range(buckets):
                for k in range(per_bucket):
                    n = ((p * buckets + b) * per_bucket + k)
                    lo_id = n * FILES_ROWS_PER_FILE
                    hi_id = lo_id + FILES_ROWS_PER_FILE - 1
                    min_key = binary_row.serialize([lo_id], key_types)
                    max_key = binary_row.serialize([hi_id], key_types)
                    # newest files sit in level 0, older ones were compacted to level 5
                    level = 0 if k >= per_bucket - 5 else 5
                    f = DataFileMeta(
                        file_name=f"data-{uuid.UUID(int=n + 1)}-0.parquet",
                        file_size=100_000 + n % 4096,
                        row_count=FILES_ROWS_PER_FILE,
                        min_key=min_key,
                        max_key=max_key,
                        key_stats=SimpleStats(
                            binary_row.serialize([lo_id], key_stat_types),
                            binary_row.serialize([hi_id], key_stat_types),
                            [0],
                        ),
                        value_stats=SimpleStats(
                            binary_row.serialize([dt, lo_id, f"a{n:07d}", float(k)], value_types),
                            binary_row.serialize([dt, hi_id, f"z{n:07d}", float(k) + 999.5], value_types),
                            [0, 0, n % 3, 0],
                        ),
                        min_sequence_number=seq,
                        max_sequence_number=seq + FILES_ROWS_PER_FILE - 1,
                        schema_id=0,
                        level=level,
                        creation_time=BASE_TIME_MILLIS + n,
                        delete_row_count=0,
                        file_source=int(FileSource.APPEND if level == 0 else FileSource.COMPACT),
                    )
                    seq += FILES_ROWS_PER_FILE
                    entries.append(ManifestEntry(FileKind.ADD, part, b, buckets, f))
                    if level == 0 and len(level0) < churn:
                        level0.append(entries[-1])
            delta_metas.append(mfile.write(entries, 0))
            delta_rows += len(entries) * FILES_ROWS_PER_FILE
        sid += 1
        base = mlist.write(metas)
        delta = mlist.write(delta_metas)
        total += delta_rows
        snap = _snapshot(sid, base, delta, total, delta_rows, BASE_TIME_MILLIS + sid * 60_000)
        fio.write_bytes(sm.snapshot_path(sid), snap.to_json().encode())
        metas.extend(delta_metas)
        _log(f"  {ident}: snapshot {sid}, {len(metas)}/{partitions} partition manifests "
             f"({time.perf_counter() - t0:.1f} s)")
    if level0:
        sid += 1
        base = mlist.write(metas)
        churned = _churn(level0)
        delta = mlist.write([mfile.write(churned[i:i + 1000], 0) for i in range(0, len(churned), 1000)])
        fio.write_bytes(sm.snapshot_path(sid), _snapshot(sid, base, delta, total, 0,
                                                         BASE_TIME_MILLIS + sid * 60_000).to_json().encode())
        _log(f"  {ident}: snapshot {sid}, {len(churned)} churn entries")
    sm.commit_earliest_hint(1)
    sm.commit_latest_hint(sid)


def _churn(level0: list[ManifestEntry]) -> list[ManifestEntry]:
    """DELETE + ADD pairs: even files move to level 5 (same name), odd ones are rewritten."""
    out: list[ManifestEntry] = []
    for i, e in enumerate(level0):
        f = e.file
        if i % 2 == 0:
            new = replace(f, level=5, file_source=int(FileSource.COMPACT))
        else:
            new = replace(f, file_name=f"data-{uuid.uuid5(uuid.NAMESPACE_OID, f.file_name)}-1.parquet")
        out += [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, f),
                ManifestEntry(FileKind.ADD, e.partition, e.bucket, e.total_buckets, new)]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True, help="warehouse directory (created if missing)")
    ap.add_argument("--snapshots", type=int, default=10_000, help="snapshots of bench.snaps")
    ap.add_argument("--block", type=int, default=100, help="bench.snaps: snapshots per merged manifest")
    ap.add_argument("--partitions", type=int, default=100)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--files-per-bucket", type=int, default=250)
    ap.add_argument("--files-commits", type=int, default=10, help="bench.files: snapshots to spread them over")
    ap.add_argument("--churn", type=int, default=20_000, help="bench.files1m: level-0 files upgraded/rewritten")
    ap.add_argument("--only", choices=["snaps", "files", "files1m"], help="generate only one table")
    ap.add_argument("--force", action="store_true", help="delete the bench tables first")
    args = ap.parse_args(argv)

    catalog = FileSystemCatalog(str(Path(args.warehouse).resolve()))
    jobs = [
        ("snaps", "bench.snaps", lambda: make_snaps(catalog, "bench.snaps", args.snapshots, args.block)),
        ("files", "bench.files", lambda: make_files(
            catalog, "bench.files", args.partitions, args.buckets, args.files_per_bucket, args.files_commits)),
        ("files1m", "bench.files1m", lambda: make_files(catalog, "bench.files1m", 1000, 4, 250, 10, args.churn)),
    ]
    for key, ident, fn in jobs:
        if args.only != key and (args.only or key == "files1m"):  # the 1M-file table only on request
            continue
        if args.force:
            _drop_table(catalog, ident)
        t0 = time.perf_counter()
        _log(f"generating {ident} in {catalog.warehouse} ...")
        fn()
        _log(f"{ident}: done in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
