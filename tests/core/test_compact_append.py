"""core/compact/append.py: append-table small-file compaction (unaware and fixed bucket), with DVs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.append import plan_append_units, run_append_unit
from paimon_cli.core.data.binary_row import EMPTY_ROW, deserialize, serialize
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.index.deletion_vectors import DeletionVector, read_deletion_vectors, write_deletion_vector_index
from paimon_cli.core.io import paths
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX, IndexFileMeta
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta, FileKind, ManifestEntry
from paimon_cli.core.manifest.stats import decode_stats
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.mergetree.compact_unit import APPEND
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.schema_change import AddColumn
from paimon_cli.core.schema.table_schema import Schema

COLS = "id INT, dt STRING, v DOUBLE, s STRING"
ARROW = pa.schema([("id", pa.int32()), ("dt", pa.string()), ("v", pa.float64()), ("s", pa.string())])


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def make(cat: FileSystemCatalog, name: str, bucket: int, part: tuple[str, ...] = ("dt",), **options: str) -> Any:
    opts = {"bucket": str(bucket), **options}
    if bucket > 0:
        opts["bucket-key"] = "id"
    cat.create_table(f"db.{name}", Schema.of(parse_columns(COLS), partition_keys=part, options=opts))
    return cat.get_table(f"db.{name}")


def rows_of(k: int, n: int = 20, parts: tuple[str, ...] = ("a", "b")) -> list[dict[str, Any]]:
    return [{"id": 1000 * k + i, "dt": parts[i % len(parts)], "v": i * 0.5 - k, "s": f"s{k}-{i}"} for i in range(n)]


def write(t: Any, rows: list[dict[str, Any]]) -> Any:
    tw = TableWrite(t)
    tw.write_arrow(pa.Table.from_pylist(rows, schema=ARROW))
    return FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")


def live(t: Any) -> list[ManifestEntry]:
    return FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())


def read_all(t: Any) -> list[dict[str, Any]]:
    return sorted(TableRead(t).to_arrow().to_pylist(), key=lambda r: (r["id"], r["dt"] or ""))


def compact(t: Any, full: bool = False) -> tuple[list[Any], Any]:
    units = plan_append_units(t, live(t), full)
    results = [run_append_unit(t, u) for u in units]
    snap = FileStoreCommit(t).commit([r.commit_message() for r in results], "COMPACT") if results else None
    return results, snap


def data_files_on_disk(t: Any) -> set[str]:
    out = set()
    for _root, _dirs, files in os.walk(t.path):
        out |= {f for f in files if f.startswith("data-")}
    return out


def meta(name: str, size: int, seq: int = 0, rows: int = 10) -> DataFileMeta:
    return DataFileMeta(name, size, rows, EMPTY_ROW, EMPTY_ROW, EMPTY_STATS, EMPTY_STATS, seq, seq + rows - 1, 0, 0,
                        (), 0, 0, None, 0, None, None)


def entry(f: DataFileMeta, bucket: int = 0, partition: bytes | None = None) -> ManifestEntry:
    return ManifestEntry(FileKind.ADD, partition if partition is not None else serialize([], []), bucket,
                         -1 if bucket == 0 else 2, f)


# ---------------------------------------------------------------------------- planning (pure)


def test_unaware_planner_bins(cat: FileSystemCatalog) -> None:
    t = make(cat, "p", -1, part=(), **{"target-file-size": "100 kb", "source.split.open-file-cost": "1 kb"})
    kb = 1024
    small = [meta(f"f{i}", 10 * kb, seq=i * 10) for i in range(7)]
    big = meta("big", 80 * kb)  # >= 0.7 * target: never a candidate in a minor compaction
    units = plan_append_units(t, [entry(f) for f in [*small, big]], False, index_files={})
    assert len(units) == 1 and units[0].kind == APPEND and units[0].bucket == 0 and units[0].total_buckets == -1
    assert [f.file_name for f in units[0].files] == [f"f{i}" for i in range(7)]  # smallest first
    assert units[0].reason == "small-files"
    # fewer than compaction.min.file-num (5) small files: nothing to do
    assert plan_append_units(t, [entry(f) for f in small[:4]], False, index_files={}) == []
    # --full: a leftover bin of two files is enough, and files below target join
    units = plan_append_units(t, [entry(f) for f in [*small[:2], big]], True, index_files={})
    assert len(units) == 1 and {f.file_name for f in units[0].files} == {"f0", "f1", "big"}
    # enough content (> 1 file and 2 * target incl. open cost) drains a bin early
    mid = [meta(f"m{i}", 60 * kb, seq=i) for i in range(5)]
    units = plan_append_units(t, [entry(f) for f in mid], False, index_files={})
    assert [len(u.files) for u in units] == [4]  # the fifth file alone is below min.file-num
    t2 = make(cat, "p2", -1, part=(), **{"target-file-size": "100 kb", "compaction.min.file-num": "2"})
    assert [len(u.files) for u in plan_append_units(t2, [entry(f) for f in small[:2]], False, index_files={})] == [2]


def test_fixed_bucket_planner_window_and_full(cat: FileSystemCatalog) -> None:
    t = make(cat, "fb", 2, part=(), **{"target-file-size": "100 kb"})
    kb = 1024
    files = [meta(f"f{i}", 10 * kb, seq=i * 10) for i in range(6)]
    units = plan_append_units(t, [entry(f, bucket=1) for f in reversed(files)], False, index_files={})
    # the first 5 files in sequence order
    assert len(units) == 1 and [f.file_name for f in units[0].files] == [f"f{i}" for i in range(5)]
    assert units[0].bucket == 1 and units[0].total_buckets == 2
    # window drops the oldest once it holds 2 * target bytes: big files never make a window of 5
    bigs = [meta(f"b{i}", 150 * kb, seq=i * 10) for i in range(6)]
    assert plan_append_units(t, [entry(f, 1) for f in bigs], False, index_files={}) == []
    # full: leading big files are kept, then small > big and >= 3 files -> rewrite the rest
    mixed = [meta("b0", 150 * kb, 0), meta("s1", 1 * kb, 10), meta("b2", 150 * kb, 20), meta("s3", 1 * kb, 30),
             meta("s4", 1 * kb, 40)]
    units = plan_append_units(t, [entry(f, 1) for f in mixed], True, index_files={})
    assert len(units) == 1 and [f.file_name for f in units[0].files] == ["s1", "b2", "s3", "s4"]
    # full with fewer than 3 files: nothing (no deletion vectors)
    assert plan_append_units(t, [entry(f, 1) for f in mixed[:2]], True, index_files={}) == []
    forced = make(cat, "fb2", 2, part=(), **{"target-file-size": "100 kb", "compaction.force-rewrite-all-files": "true"})
    units = plan_append_units(forced, [entry(f, 1) for f in mixed[:2]], True, index_files={})
    assert [f.file_name for f in units[0].files] == ["b0", "s1"]


# ---------------------------------------------------------------------------- execution


@pytest.mark.parametrize("bucket", [-1, 2])
def test_compaction_keeps_rows_and_writes_compact_files(cat: FileSystemCatalog, bucket: int) -> None:
    t = make(cat, f"t{bucket + 1}", bucket)
    expected: list[dict[str, Any]] = []
    for k in range(6):
        expected += rows_of(k)
        write(t, rows_of(k))
    before = live(t)
    results, snap = compact(t)
    assert snap is not None and snap.commit_kind == "COMPACT"
    t = cat.get_table(t.identifier)
    assert read_all(t) == sorted(expected, key=lambda r: (r["id"], r["dt"]))
    after = live(t)
    assert len(after) < len(before)
    new = [e for e in after if e.file.file_name not in {b.file.file_name for b in before}]
    assert new and all(e.file.file_source == 1 and e.file.level == 0 for e in new)
    for r in results:
        u = r.unit
        # sequence numbers count on from the first input file (Java's compactRewrite)
        assert r.after[0].min_sequence_number == u.files[0].min_sequence_number
        assert sum(f.row_count for f in r.after) == sum(f.row_count for f in u.files) == r.rows_out
        assert {f.file_name for f in r.before} == {f.file_name for f in u.files}
    # value stats of a compacted file describe its rows
    e = new[0]
    types = [f.type for f in t.schema.fields]
    stats = decode_stats(e.file.value_stats, types)
    part = deserialize(e.partition, t.schema.partition_types)[0]
    ids = [r["id"] for r in expected if r["dt"] == part]
    if bucket == -1:
        assert (stats[0].min, stats[0].max, stats[0].null_count) == (min(ids), max(ids), 0)
    # no orphans: every data file on disk is live or an input of the compaction
    assert {e.file.file_name for e in after} <= data_files_on_disk(t)


def test_output_rolls_at_target_file_size(cat: FileSystemCatalog) -> None:
    t = make(cat, "roll", -1, part=(), **{"target-file-size": "64 kb", "compaction.min.file-num": "2"})
    import random

    rnd = random.Random(7)
    expected = []
    for k in range(9):  # nine small files (the writer rolls at the target too, so keep each write small)
        rows = [{"id": k * 100_000 + i, "dt": "x", "v": rnd.random(), "s": f"{rnd.getrandbits(120):030x}"}
                for i in range(1000)]
        expected += rows
        write(t, rows)
    assert len(live(t)) == 9 and all(e.file.file_size < 0.7 * 64 * 1024 for e in live(t))
    results, _ = compact(t, full=True)
    outs = [f for r in results for f in r.after]
    assert len(outs) >= 3
    assert all(f.file_size < 64 * 1024 * 2 for f in outs)  # Java also checks the size every 1000 rows
    assert read_all(cat.get_table(t.identifier)) == sorted(expected, key=lambda r: (r["id"], r["dt"]))


def test_schema_evolution_of_inputs(cat: FileSystemCatalog) -> None:
    t = make(cat, "evo", -1, part=(), **{"compaction.min.file-num": "2"})
    write(t, rows_of(1, 5, ("x",)))
    cat.alter_table(t.identifier, [AddColumn("extra", parse_columns("extra BIGINT")[0][1])])
    t = cat.get_table(t.identifier)
    tw = TableWrite(t)
    rows2 = [{**r, "extra": 7} for r in rows_of(2, 5, ("x",))]
    tw.write_arrow(pa.Table.from_pylist(rows2, schema=ARROW.append(pa.field("extra", pa.int64()))))
    FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")
    results, _ = compact(t)
    assert len(results) == 1 and all(f.schema_id == t.schema.id for f in results[0].after)
    got = read_all(cat.get_table(t.identifier))
    assert got == sorted([{**r, "extra": None} for r in rows_of(1, 5, ("x",))] + rows2, key=lambda r: r["id"])


def test_failed_unit_leaves_no_files(cat: FileSystemCatalog, monkeypatch: pytest.MonkeyPatch) -> None:
    t = make(cat, "fail", -1, part=(), **{"compaction.min.file-num": "2"})
    write(t, rows_of(1))
    write(t, rows_of(2))
    before = data_files_on_disk(t)
    units = plan_append_units(t, live(t), False)
    import paimon_cli.core.compact.append as mod

    real = mod.read_file_tables

    def boom(*a: Any, **k: Any) -> Any:
        yield from list(real(*a, **k))[:1]
        raise OSError("disk on fire")

    monkeypatch.setattr(mod, "read_file_tables", boom)
    with pytest.raises(OSError):
        run_append_unit(t, units[0])
    assert data_files_on_disk(t) == before


# ---------------------------------------------------------------------------- deletion vectors


def add_dvs(t: Any, deletes: dict[str, list[int]]) -> None:
    """Commit deletion vectors (data file name -> positions) the way Java's DV writers do:
    unaware tables one index file per partition under bucket 0; fixed buckets one per bucket."""
    by_bucket: dict[tuple[bytes, int, int], dict[str, DeletionVector]] = {}
    for e in live(t):
        if e.file.file_name in deletes:
            by_bucket.setdefault((e.partition, e.bucket, e.total_buckets), {})[e.file.file_name] = (
                DeletionVector.from_positions(deletes[e.file.file_name]))
    messages = []
    import uuid

    for (part, bucket, total), vectors in by_bucket.items():
        name = f"index-{uuid.uuid4()}-0"
        t.file_io.mkdirs(paths.index_dir(t.path))
        size, metas = write_deletion_vector_index(t.file_io, paths.join(paths.index_dir(t.path), name), vectors)
        messages.append(CommitMessage(part, bucket, total, new_index_files=[
            IndexFileMeta(DELETION_VECTORS_INDEX, name, size, len(metas), tuple(metas))]))
    FileStoreCommit(t).commit(messages, "APPEND")


def dv_index_names(t: Any) -> set[str]:
    snap = t.snapshot_manager.latest_snapshot()
    return {ie.index_file.file_name for ie in FileStoreScan(t).index_entries(snap)
            if ie.index_file.index_type == DELETION_VECTORS_INDEX}


@pytest.mark.parametrize("bitmap64", [False, True])
def test_unaware_deletion_vectors_applied_and_dropped(cat: FileSystemCatalog, bitmap64: bool) -> None:
    t = make(cat, "dvu", -1, part=(), **{"deletion-vectors.enabled": "true", "target-file-size": "1 mb",
                                         "compaction.small-file-ratio": "0.0001",
                                         "deletion-vectors.bitmap64": str(bitmap64).lower()})
    expected = []
    for k in range(3):
        expected += rows_of(k, 10, ("x",))
        write(t, rows_of(k, 10, ("x",)))
    files = sorted(live(t), key=lambda e: e.file.min_sequence_number)
    # file 0 loses 5 of 10 rows (above the 0.2 delete ratio), file 1 loses 1 (below it)
    add_dvs(t, {files[0].file.file_name: [0, 2, 4, 6, 8], files[1].file.file_name: [3]})
    gone = {expected[i]["id"] for i in (0, 2, 4, 6, 8)} | {expected[13]["id"]}
    want = sorted([r for r in expected if r["id"] not in gone], key=lambda r: (r["id"], r["dt"]))
    assert read_all(t) == want
    old_index = dv_index_names(t)
    results, snap = compact(t)
    assert len(results) == 1
    r = results[0]
    assert [f.file_name for f in r.unit.files] == [files[0].file.file_name]  # only the high-ratio file
    assert r.unit.reason == "deletion-vectors" and r.rows_out == 5
    # the touched index file is replaced by one holding the untouched file's vector
    assert [f.file_name for f in r.deleted_index_files] == sorted(old_index)
    assert len(r.new_index_files) == 1
    assert [m.data_file_name for m in r.new_index_files[0].dv_ranges] == [files[1].file.file_name]
    # the kept vector (written 32-bit above) is rewritten in the kind deletion-vectors.bitmap64 names
    kept = read_deletion_vectors(t.file_io, paths.join(paths.index_dir(t.path), r.new_index_files[0].file_name),
                                 r.new_index_files[0].dv_ranges)
    assert [(list(v.positions()), v.is_64) for v in kept.values()] == [([3], bitmap64)]
    t = cat.get_table(t.identifier)
    assert read_all(t) == want
    assert dv_index_names(t) == {r.new_index_files[0].file_name}
    # --full rewrites the remaining file with a vector too: no vectors left at all
    results, _ = compact(t, full=True)
    t = cat.get_table(t.identifier)
    assert read_all(t) == want
    assert dv_index_names(t) == set()


def test_fixed_bucket_deletion_vectors(cat: FileSystemCatalog) -> None:
    t = make(cat, "dvf", 1, part=(), **{"deletion-vectors.enabled": "true"})
    expected = []
    for k in range(3):
        expected += rows_of(k, 10, ("x",))
        write(t, rows_of(k, 10, ("x",)))
    files = sorted(live(t), key=lambda e: e.file.min_sequence_number)
    add_dvs(t, {files[0].file.file_name: [1], files[2].file.file_name: [0, 9]})
    rows_by_file = [expected[0:10], expected[10:20], expected[20:30]]
    gone = {rows_by_file[0][1]["id"], rows_by_file[2][0]["id"], rows_by_file[2][9]["id"]}
    want = sorted([r for r in expected if r["id"] not in gone], key=lambda r: (r["id"], r["dt"]))
    assert read_all(t) == want
    results, _ = compact(t, full=True)  # DV tables: full compaction always rewrites
    assert len(results) == 1 and len(results[0].unit.files) == 3
    r = results[0]
    assert r.rows_out == 27
    assert len(r.deleted_index_files) == 1 and len(r.new_index_files) == 1
    assert r.new_index_files[0].dv_ranges == ()  # Java writes an empty index file when none is left
    t = cat.get_table(t.identifier)
    assert read_all(t) == want
