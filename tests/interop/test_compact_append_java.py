"""Append-table compaction against the real Java Paimon 0.9.

For append tables written by Java and by us -- bucket-unaware and fixed-bucket, partitioned,
every data file format, with deletion vectors made by Java's own DV writer (what Spark's DELETE
does) or by us -- Java reads exactly the same rows after our small-file and sort compactions,
then keeps writing, deleting and compacting the table itself. Sort-compaction output is
checked against Paimon's own ZIndexer / HilbertIndexer (tests/interop/java/AppendCompactHelper.java),
and an append racing a sort compaction makes it fail with a conflict without losing a row.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.append import plan_append_units, run_append_unit
from paimon_cli.core.compact.sort import sort_compact
from paimon_cli.core.compact.sort_keys import SORT_KEY, make_sort_spec
from paimon_cli.core.data.binary_row import deserialize
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import CommitConflict
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.index.deletion_vectors import DeletionVector, write_deletion_vector_index
from paimon_cli.core.io import paths
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX, IndexFileMeta
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema

DB = "db"
COLUMNS = [("id", "INT"), ("dt", "STRING"), ("x", "INT"), ("y", "DOUBLE"), ("s", "STRING")]


# ---------------------------------------------------------------------------- helpers


def gen(k: int, n: int = 30, parts: tuple[str, ...] = ("a", "b")) -> list[dict[str, Any]]:
    rnd = random.Random(k)
    return [{"id": k * 10_000 + i, "dt": parts[i % len(parts)], "x": rnd.randint(-100, 100),
             "y": None if rnd.random() < 0.1 else round(rnd.uniform(-50, 50), 3),
             "s": f"s{rnd.randint(0, 999)}"} for i in range(n)]


def by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: r[k] for k, _ in COLUMNS} for r in rows), key=lambda r: r["id"])


def create(java: Any, wh: str, name: str, creator: str, bucket: int, **options: str) -> None:
    opts = {"bucket": str(bucket), **options}
    if bucket > 0:
        opts["bucket-key"] = "id"
    if creator == "java":
        java.create_table(wh, DB, name, COLUMNS, partition_keys=["dt"], options=opts)
    else:
        cat = FileSystemCatalog(wh)
        cat.create_database(DB, True)
        cols = ", ".join(f"{c} {t}" for c, t in COLUMNS)
        cat.create_table(f"{DB}.{name}", Schema.of(parse_columns(cols), partition_keys=("dt",), options=opts))


def table(wh: str, name: str) -> Any:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}")


def write(java: Any, wh: str, name: str, writer: str, rows: list[dict[str, Any]]) -> None:
    if writer == "java":
        java.write(wh, DB, name, rows)
        return
    t = table(wh, name)
    tw = TableWrite(t)
    tw.write_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(list(t.schema.fields))))
    FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")


def java_rows(java: Any, wh: str, name: str) -> list[dict[str, Any]]:
    return by_id(java.read(wh, DB, name, row_kind=False))


def our_rows(wh: str, name: str) -> list[dict[str, Any]]:
    return by_id(TableRead(table(wh, name)).to_arrow().to_pylist())


def live(t: Any) -> list[Any]:
    return FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())


def compact_ours(wh: str, name: str, full: bool) -> list[Any]:
    t = table(wh, name)
    units = plan_append_units(t, live(t), full)
    results = [run_append_unit(t, u) for u in units]
    if results:
        snap = FileStoreCommit(t).commit([r.commit_message() for r in results], "COMPACT")
        assert snap is not None and snap.commit_kind == "COMPACT"
    return results


def dv_index_files(t: Any) -> set[str]:
    snap = t.snapshot_manager.latest_snapshot()
    return {ie.index_file.file_name for ie in FileStoreScan(t).index_entries(snap)
            if ie.index_file.index_type == DELETION_VECTORS_INDEX}


def file_ids(t: Any, e: Any) -> list[int]:
    part = paths.partition_path_for(t.schema, deserialize(e.partition, t.schema.partition_types))
    path = paths.data_file_path(t.path, part, e.bucket, e.file.file_name)
    return read_data_file(t.file_io, path, list(t.schema.fields), ["id"]).column("id").to_pylist()


# ---------------------------------------------------------------------------- small-file compaction


@pytest.mark.parametrize("creator,bucket,fmt", [
    ("java", -1, "parquet"), ("java", 2, "orc"), ("ours", -1, "avro"), ("ours", 2, "parquet"),
])
def test_small_file_compaction_java_reads_same_rows_and_keeps_going(
    java_paimon: Any, tmp_path: Path, creator: str, bucket: int, fmt: str,
) -> None:
    wh = str(tmp_path / "wh")
    name = f"t_{creator}_{bucket + 1}_{fmt}"
    # write-only: the writers leave compaction to the dedicated job (Java's own writers would
    # otherwise compact a fixed bucket once it holds compaction.min.file-num files)
    create(java_paimon, wh, name, creator, bucket, **{"file.format": fmt, "write-only": "true"})
    expected: list[dict[str, Any]] = []
    for k in range(6):
        expected += gen(k)
        write(java_paimon, wh, name, creator, gen(k))
    expected = by_id(expected)
    assert java_rows(java_paimon, wh, name) == expected
    files_before = len(live(table(wh, name)))

    results = compact_ours(wh, name, full=False)
    assert results, "six small commits are more than compaction.min.file-num"
    assert java_rows(java_paimon, wh, name) == expected
    t = table(wh, name)
    assert len(live(t)) < files_before
    assert any(e.file.file_source == 1 for e in live(t))

    # --full picks up the leftovers
    compact_ours(wh, name, full=True)
    assert java_rows(java_paimon, wh, name) == expected

    # Java keeps writing into the table and compacts it itself
    more = gen(50) + gen(51)
    java_paimon.write(wh, DB, name, gen(50))
    java_paimon.write(wh, DB, name, gen(51))
    java_paimon.compact(wh, DB, name, full=True,
                        options={"compaction.min.file-num": "2", "compaction.max.file-num": "2"})
    assert java_rows(java_paimon, wh, name) == by_id(expected + more)
    # ... and we compact after Java again
    write(java_paimon, wh, name, "ours", gen(60))
    compact_ours(wh, name, full=True)
    assert java_rows(java_paimon, wh, name) == by_id(expected + more + gen(60)) == our_rows(wh, name)


# ---------------------------------------------------------------------------- deletion vectors


def delete_positions(java: Any, wh: str, name: str, by: str, deletes: dict[str, list[int]]) -> None:
    """Deletion vectors by Java's own writer (as Spark's DELETE) or by us (same layout)."""
    if by == "java":
        java._gateway.jvm.AppendCompactHelper.deleteRows(wh, DB, name, json.dumps(deletes))
        return
    import uuid

    t = table(wh, name)
    unaware = t.schema.bucket == -1
    snap = t.snapshot_manager.latest_snapshot()
    old = {(ie.partition, ie.bucket): ie.index_file for ie in FileStoreScan(t).index_entries(snap)}
    groups: dict[tuple[bytes, int, int], dict[str, DeletionVector]] = {}
    for e in live(t):
        if e.file.file_name in deletes:
            groups.setdefault((e.partition, e.bucket, e.total_buckets), {})[e.file.file_name] = (
                DeletionVector.from_positions(deletes[e.file.file_name]))
    messages = []
    for (part, bucket, total), vectors in groups.items():
        deleted = []
        if not unaware and (part, bucket) in old:  # a bucket keeps all its vectors in one file
            from paimon_cli.core.compact.append import bucket_dv_vectors

            prev = old[(part, bucket)]
            vectors = {**bucket_dv_vectors(t, part, bucket, [prev]), **vectors}
            deleted = [prev]
        name_ = f"index-{uuid.uuid4()}-0"
        size, metas = write_deletion_vector_index(t.file_io, paths.join(paths.index_dir(t.path), name_), vectors)
        messages.append(CommitMessage(part, bucket, total, deleted_index_files=deleted, new_index_files=[
            IndexFileMeta(DELETION_VECTORS_INDEX, name_, size, len(metas), tuple(metas))]))
    FileStoreCommit(t).commit(messages, "APPEND")


@pytest.mark.parametrize("creator,bucket,dv_by", [
    ("java", -1, "java"), ("java", 2, "java"), ("ours", -1, "ours"), ("ours", 1, "java"),
])
def test_deletion_vectors_applied_and_dropped(
    java_paimon: Any, tmp_path: Path, creator: str, bucket: int, dv_by: str,
) -> None:
    wh = str(tmp_path / "wh")
    name = f"dv_{creator}_{bucket + 1}_{dv_by}"
    create(java_paimon, wh, name, creator, bucket, **{"deletion-vectors.enabled": "true", "write-only": "true"})
    rows: list[dict[str, Any]] = []
    for k in range(3):
        rows += gen(k, 20)
        write(java_paimon, wh, name, creator, gen(k, 20))
    t = table(wh, name)
    files = sorted(live(t), key=lambda e: (e.partition, e.bucket, e.file.min_sequence_number))
    # first file of every bucket: half its rows go; the last file: one row
    deletes: dict[str, list[int]] = {}
    gone: set[int] = set()
    seen: set[tuple[bytes, int]] = set()
    for e in files:
        ids = file_ids(t, e)
        if (e.partition, e.bucket) not in seen:
            seen.add((e.partition, e.bucket))
            pos = list(range(0, len(ids), 2))
        elif e is files[-1]:
            pos = [len(ids) - 1]
        else:
            continue
        deletes[e.file.file_name] = pos
        gone |= {ids[p] for p in pos}
    delete_positions(java_paimon, wh, name, dv_by, deletes)
    want = by_id([r for r in rows if r["id"] not in gone])
    assert java_rows(java_paimon, wh, name) == want == our_rows(wh, name)

    results = compact_ours(wh, name, full=False)
    results += compact_ours(wh, name, full=True)
    assert results and any(r.deleted_index_files for r in results)
    assert java_rows(java_paimon, wh, name) == want == our_rows(wh, name)
    t = table(wh, name)
    # no live vector points at a file that is gone, and compacted outputs carry none
    snap = t.snapshot_manager.latest_snapshot()
    names = {e.file.file_name for e in live(t)}
    for ie in FileStoreScan(t).index_entries(snap):
        for m in ie.index_file.dv_ranges or ():
            assert m.data_file_name in names
    outputs = {f.file_name for r in results for f in r.after}
    assert not any(m.data_file_name in outputs for ie in FileStoreScan(t).index_entries(snap)
                   for m in ie.index_file.dv_ranges or ())

    # Java keeps going: more rows, a Java DELETE on a compacted file, Java's own compaction
    java_paimon.write(wh, DB, name, gen(70, 20))
    t = table(wh, name)
    target = next(e for e in live(t) if e.file.file_name in names and e.file.file_source == 1)
    ids = file_ids(t, target)
    java_paimon._gateway.jvm.AppendCompactHelper.deleteRows(wh, DB, name, json.dumps({target.file.file_name: [0]}))
    want = by_id([r for r in want + gen(70, 20) if r["id"] != ids[0]])
    assert java_rows(java_paimon, wh, name) == want
    java_paimon.compact(wh, DB, name, full=True, options={"compaction.min.file-num": "2"})
    assert java_rows(java_paimon, wh, name) == want == our_rows(wh, name)
    compact_ours(wh, name, full=True)
    assert java_rows(java_paimon, wh, name) == want


# ---------------------------------------------------------------------------- sort compaction


def java_keys(java: Any, wh: str, name: str, strategy: str, cols: list[str], var: int = 8) -> dict[int, bytes]:
    raw = json.loads(java._gateway.jvm.AppendCompactHelper.sortKeys(wh, DB, name, strategy, json.dumps(cols),
                                                                   var, "id"))
    return {int(k): bytes.fromhex(v) for k, v in raw.items()}


@pytest.mark.parametrize("strategy,cols,creator", [
    ("zorder", ["x", "y"], "java"), ("hilbert", ["x", "s"], "java"), ("zorder", ["s", "y", "x"], "ours"),
    ("order", ["s", "x"], "java"),
])
def test_sort_compaction_java_reads_rows_in_paimon_key_order(
    java_paimon: Any, tmp_path: Path, strategy: str, cols: list[str], creator: str,
) -> None:
    wh = str(tmp_path / "wh")
    name = f"sort_{strategy}_{creator}"
    create(java_paimon, wh, name, creator, -1, **{"target-file-size": "2 kb"})
    rows: list[dict[str, Any]] = []
    for k in range(4):
        rows += gen(k, 700)
        write(java_paimon, wh, name, creator, gen(k, 700))
    res = sort_compact(table(wh, name), strategy, cols)
    assert res.commit_kind == "OVERWRITE" and res.rows_out == len(rows)
    assert java_rows(java_paimon, wh, name) == by_id(rows)

    t = table(wh, name)
    spec = make_sort_spec(t, strategy, cols)
    jkeys = java_keys(java_paimon, wh, name, strategy, cols) if strategy != "order" else {}
    for part in ("a", "b"):
        es = [e for e in live(t) if deserialize(e.partition, t.schema.partition_types) == [part]]
        es.sort(key=lambda e: e.file.min_sequence_number)
        assert len(es) > 1  # rolled at the small target-file-size (checked every 1000 rows, as Java)
        ordered = []
        for e in es:
            p = paths.partition_path_for(t.schema, [part])
            ordered += read_data_file(t.file_io, paths.data_file_path(t.path, p, e.bucket, e.file.file_name),
                                      list(t.schema.fields)).to_pylist()
        if strategy == "order":
            seq = [tuple((r[c] is not None, r[c]) for c in cols) for r in ordered]
            assert seq == sorted(seq)
            continue
        # Paimon's own indexer agrees with ours for every row, and the files are in its order
        ours = spec.with_key(pa.Table.from_pylist(ordered, schema=arrow_schema(list(t.schema.fields))))
        our_keys = ours.column(SORT_KEY).to_pylist()
        java_order = [jkeys[r["id"]] for r in ordered]
        assert our_keys == java_order
        assert java_order == sorted(java_order)

    # Java keeps writing and compacting the sorted table
    java_paimon.write(wh, DB, name, gen(90, 10))
    java_paimon.compact(wh, DB, name, full=True, options={"compaction.min.file-num": "2",
                                                          "compaction.max.file-num": "2"})
    assert java_rows(java_paimon, wh, name) == by_id(rows + gen(90, 10)) == our_rows(wh, name)


def test_append_during_sort_compaction_conflicts_and_loses_nothing(java_paimon: Any, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    name = "race"
    create(java_paimon, wh, name, "java", -1)
    rows = gen(1) + gen(2)
    java_paimon.write(wh, DB, name, gen(1))
    java_paimon.write(wh, DB, name, gen(2))
    late = gen(3, 8)

    with pytest.raises(CommitConflict) as err:
        sort_compact(table(wh, name), "zorder", ["x", "y"],
                     before_commit=lambda: java_paimon.write(wh, DB, name, late))
    assert err.value.exit_code == 5
    assert java_rows(java_paimon, wh, name) == by_id(rows + late) == our_rows(wh, name)
    # once nothing races, the same compaction commits
    res = sort_compact(table(wh, name), "zorder", ["x", "y"])
    assert res.snapshot_id is not None
    assert java_rows(java_paimon, wh, name) == by_id(rows + late)
