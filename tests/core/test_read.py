"""TableRead on tables written by our own writer: merge, time travel, evolution, DVs, pruning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import BigIntType, IntType, VarCharType
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.index.deletion_vectors import DeletionVector, write_deletion_vector_index
from paimon_cli.core.manifest.index_manifest import IndexFileMeta
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.schema_change import AddColumn, RenameColumn, SetOption
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.system.registry import SYSTEM_TABLES
from paimon_cli.core.table.file_store_table import TimeTravel

KINDS = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


def _write(catalog: FileSystemCatalog, ident: str, rows: list[dict[str, Any]], kinds: list[str] | None = None) -> int:
    table = catalog.get_table(ident)
    tw = TableWrite(table)
    data = pa.Table.from_pylist(rows, schema=arrow_schema(table.schema.fields))
    tw.write_arrow(data, pa.array([KINDS[k] for k in kinds], pa.int8()) if kinds else None)
    snap = FileStoreCommit(table).commit(tw.prepare_commit())
    assert snap is not None
    return snap.id


def _rows(table: Any, **kw: Any) -> list[dict[str, Any]]:
    return sorted(TableRead(table, **kw).to_arrow().to_pylist(), key=lambda r: json.dumps(r, sort_keys=True, default=str))


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


@pytest.fixture
def pk(catalog: FileSystemCatalog) -> str:
    """PK (id, dt) partitioned by dt, 2 buckets; 3 commits: inserts, updates, a delete."""
    schema = Schema.of([("id", IntType(nullable=False), None), ("dt", VarCharType(10, nullable=False), None),
                        ("name", VarCharType(20), None), ("v", BigIntType(), None)],
                       partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "2"})
    catalog.create_table("db.pk", schema)
    _write(catalog, "db.pk", [{"id": i, "dt": d, "name": f"n{i}", "v": i * 10}
                              for d in ("a", "b") for i in range(1, 9)])
    _write(catalog, "db.pk", [{"id": 1, "dt": "a", "name": "n1-u", "v": 111}, {"id": 2, "dt": "b", "name": None, "v": None}],
           ["+U", "+U"])
    _write(catalog, "db.pk", [{"id": 3, "dt": "a", "name": "n3", "v": 30}], ["-D"])
    return "db.pk"


def _pk_expected(upto: int) -> list[dict[str, Any]]:
    state = {(i, d): {"id": i, "dt": d, "name": f"n{i}", "v": i * 10} for d in ("a", "b") for i in range(1, 9)}
    if upto >= 2:
        state[(1, "a")] = {"id": 1, "dt": "a", "name": "n1-u", "v": 111}
        state[(2, "b")] = {"id": 2, "dt": "b", "name": None, "v": None}
    if upto >= 3:
        del state[(3, "a")]
    return _sorted(list(state.values()))


def test_pk_merged_read_at_every_snapshot(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_table(pk)
    assert _rows(table) == _pk_expected(3)
    for sid in (1, 2, 3):
        assert _rows(table, at=TimeTravel(snapshot_id=sid)) == _pk_expected(sid)


def test_pk_projection_where_limit(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_table(pk)
    pred = parse_predicate("dt = 'a' AND (v >= 50 OR name = 'n1-u')", table.schema.fields)
    out = TableRead(table, projection=["v", "id"], predicate=pred).to_arrow()
    assert out.column_names == ["v", "id"]
    assert sorted(out.to_pylist(), key=lambda r: r["id"]) == [
        {"v": 111, "id": 1}, {"v": 50, "id": 5}, {"v": 60, "id": 6}, {"v": 70, "id": 7}, {"v": 80, "id": 8}]
    # a value filter is applied after merging: the old version of id 1 (v=10) is not resurrected
    pred = parse_predicate("v = 10 AND dt = 'a'", table.schema.fields)
    assert TableRead(table, predicate=pred).to_arrow().num_rows == 0
    assert TableRead(table, limit=3).to_arrow().num_rows == 3
    assert TableRead(table, limit=0).to_arrow().num_rows == 0
    assert sum(b.num_rows for b in TableRead(table, limit=5).iter_batches()) == 5


def test_pk_pruning_by_partition_bucket_and_key_stats(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_table(pk)
    tr = TableRead(table, predicate=parse_predicate("dt = 'b' AND id = 4", table.schema.fields))
    plan = tr.plan()
    assert plan.pruned_by_partition.partitions == 1
    assert plan.pruned_by_bucket.buckets == 1
    assert plan.remaining.partitions == 1 and plan.remaining.buckets == 1
    assert tr.to_arrow().to_pylist() == [{"id": 4, "dt": "b", "name": "n4", "v": 40}]
    rows = {r["step"]: r for r in tr.explain().rows}
    assert rows["total"]["files"] == plan.total.files
    assert rows["remaining"]["files"] == plan.remaining.files
    # key stats: no file of the table holds an id above 8
    tr = TableRead(table, predicate=parse_predicate("id > 8", table.schema.fields))
    assert tr.plan().remaining.files == 0 and tr.to_arrow().num_rows == 0
    # value stats alone cannot drop overlapping level-0 files of a deduplicate table,
    # but a bucket where no file can match goes whole
    tr = TableRead(table, predicate=parse_predicate("v > 1000", table.schema.fields))
    assert tr.plan().remaining.files == 0


def test_audit_log_binlog_ro(catalog: FileSystemCatalog, pk: str) -> None:
    table = catalog.get_table(pk)
    audit = SYSTEM_TABLES["audit-log"](table)
    assert audit.columns == ["rowkind", "id", "dt", "name", "v"]
    kinds = {(r["id"], r["dt"]): r["rowkind"] for r in audit.rows}
    assert kinds[(3, "a")] == "-D" and kinds[(1, "a")] == "+U" and kinds[(4, "a")] == "+I"
    assert len(audit.rows) == len(_pk_expected(3)) + 1
    binlog = SYSTEM_TABLES["binlog"](table)
    assert binlog.rows[0]["rowkind"] == audit.rows[0]["rowkind"]
    assert binlog.rows[0]["id"] == [audit.rows[0]["id"]]
    assert SYSTEM_TABLES["ro"](table).rows == []  # nothing compacted to the top level yet


def test_schema_evolution_by_field_id(catalog: FileSystemCatalog, pk: str) -> None:
    catalog.alter_table(pk, [RenameColumn("name", "label"), AddColumn("extra", IntType())])
    _write(catalog, pk, [{"id": 5, "dt": "a", "label": "five", "v": 5, "extra": 55}])
    table = catalog.get_table(pk)
    rows = {(r["id"], r["dt"]): r for r in _rows(table)}
    assert rows[(4, "a")] == {"id": 4, "dt": "a", "label": "n4", "v": 40, "extra": None}
    assert rows[(5, "a")] == {"id": 5, "dt": "a", "label": "five", "v": 5, "extra": 55}
    pred = parse_predicate("label = 'n6' OR extra = 55", table.schema.fields)
    assert sorted((r["id"], r["dt"]) for r in _rows(table, predicate=pred)) == [(5, "a"), (6, "a"), (6, "b")]
    # time travel reads with the schema of that snapshot (Java does the same)
    old = TableRead(table, TimeTravel(snapshot_id=3)).to_arrow()
    assert old.column_names == ["id", "dt", "name", "v"]


def test_partial_update_merges_all_columns_even_when_projected(catalog: FileSystemCatalog) -> None:
    schema = Schema.of([("id", IntType(nullable=False), None), ("a", VarCharType(10), None), ("b", IntType(), None)],
                       primary_keys=["id"], options={"bucket": "1", "merge-engine": "partial-update"})
    catalog.create_table("db.pu", schema)
    _write(catalog, "db.pu", [{"id": 1, "a": "x", "b": None}, {"id": 2, "a": None, "b": 2}])
    _write(catalog, "db.pu", [{"id": 1, "a": None, "b": 10}, {"id": 2, "a": "y", "b": None}])
    table = catalog.get_table("db.pu")
    assert _rows(table) == [{"id": 1, "a": "x", "b": 10}, {"id": 2, "a": "y", "b": 2}]
    pred = parse_predicate("b = 10", table.schema.fields)
    assert _rows(table, projection=["a"], predicate=pred) == [{"a": "x"}]


@pytest.fixture
def append(catalog: FileSystemCatalog) -> str:
    schema = Schema.of([("id", IntType(), None), ("kind", VarCharType(10), None)], options={"bucket": "-1"})
    catalog.create_table("db.ap", schema)
    _write(catalog, "db.ap", [{"id": i, "kind": "x" if i % 2 else "y"} for i in range(10)])
    _write(catalog, "db.ap", [{"id": i, "kind": None} for i in range(10, 15)])
    return "db.ap"


def test_append_read_and_value_stats_pruning(catalog: FileSystemCatalog, append: str) -> None:
    table = catalog.get_table(append)
    assert [r["id"] for r in TableRead(table).to_arrow().to_pylist()] == list(range(15))  # write order
    tr = TableRead(table, predicate=parse_predicate("id >= 12", table.schema.fields))
    assert tr.plan().pruned_by_stats.files == 1
    assert [r["id"] for r in tr.to_arrow().to_pylist()] == [12, 13, 14]
    tr = TableRead(table, predicate=parse_predicate("kind = 'x'", table.schema.fields))
    assert tr.plan().pruned_by_stats.files == 1  # the second file's kind is all NULL
    assert [r["id"] for r in tr.to_arrow().to_pylist()] == [1, 3, 5, 7, 9]
    assert SYSTEM_TABLES["ro"](table).rows == TableRead(table).to_arrow().to_pylist()
    assert {r["rowkind"] for r in SYSTEM_TABLES["audit-log"](table).rows} == {"+I"}


def test_append_deletion_vectors_drop_rows(catalog: FileSystemCatalog, append: str) -> None:
    catalog.alter_table(append, [SetOption("deletion-vectors.enabled", "true")])
    table = catalog.get_table(append)
    entries = FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
    first = min(entries, key=lambda e: e.file.min_sequence_number)
    name = "index-test-dv-0"
    path = f"{table.path}/index/{name}"
    size, metas = write_deletion_vector_index(table.file_io, path, {first.file.file_name: DeletionVector.from_positions([0, 3, 9])})
    meta = IndexFileMeta("DELETION_VECTORS", name, size, 1, tuple(metas))
    FileStoreCommit(table).commit([CommitMessage(first.partition, first.bucket, first.total_buckets,
                                                 new_index_files=[meta])])
    table = catalog.get_table(append)
    assert [r["id"] for r in TableRead(table).to_arrow().to_pylist()] == [1, 2, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14]
    pred = parse_predicate("id < 5", table.schema.fields)
    assert [r["id"] for r in TableRead(table, predicate=pred).to_arrow().to_pylist()] == [1, 2, 4]
    # an earlier snapshot has no DV yet
    assert TableRead(table, TimeTravel(snapshot_id=2)).to_arrow().num_rows == 15


def test_default_values_fill_nulls(catalog: FileSystemCatalog, append: str) -> None:
    catalog.alter_table(append, [SetOption("fields.kind.default-value", "none")])
    table = catalog.get_table(append)
    out = TableRead(table, predicate=parse_predicate("kind = 'none'", table.schema.fields)).to_arrow()
    assert out.column("id").to_pylist() == [10, 11, 12, 13, 14]


def test_bad_arguments(catalog: FileSystemCatalog, append: str) -> None:
    table = catalog.get_table(append)
    with pytest.raises(InvalidInput, match="--select: unknown column"):
        TableRead(table, projection=["nope"])
    with pytest.raises(InvalidInput, match="--limit"):
        TableRead(table, limit=-1)


def test_empty_table(catalog: FileSystemCatalog) -> None:
    catalog.create_table("db.empty", Schema.of([("id", IntType(), None)]))
    table = catalog.get_table("db.empty")
    out = TableRead(table).to_arrow()
    assert out.num_rows == 0 and out.column_names == ["id"]
    assert {r["step"]: r["files"] for r in TableRead(table).explain().rows}["total"] == 0


# -- the command -------------------------------------------------------------------------------


def _cli(*args: str) -> Any:
    import typer
    from typer.testing import CliRunner

    from paimon_cli.commands.read import read

    app = typer.Typer()
    app.command()(read)
    app.command("noop")(lambda: None)
    return CliRunner().invoke(app, ["read", *args])


def test_command_outputs(catalog: FileSystemCatalog, pk: str, tmp_path: Path) -> None:
    wh = catalog.warehouse
    res = _cli(pk, "-w", wh, "--where", "dt = 'a' AND id <= 2", "--select", "id,name", "-o", "jsonl")
    assert res.exit_code == 0, res.output
    assert sorted(json.loads(x)["id"] for x in res.stdout.splitlines()) == [1, 2]
    res = _cli(pk, "-w", wh, "--where", "id = 99", "-o", "json")
    assert res.stdout.strip() == "[]"
    res = _cli(pk, "-w", wh, "--where", "id = 1 AND dt = 'a'", "-o", "json")
    assert json.loads(res.stdout) == [{"id": 1, "dt": "a", "name": "n1-u", "v": 111}]
    res = _cli(pk, "-w", wh, "--where", "id = 1 AND dt = 'a'", "-o", "csv", "--select", "id,name,v")
    assert res.stdout.splitlines() == ['"id","name","v"', '1,"n1-u",111']
    res = _cli(pk, "-w", wh, "--explain", "--where", "dt = 'a'", "-o", "json")
    steps = {r["step"]: r for r in json.loads(res.stdout)}
    assert steps["pruned by partition"]["partitions"] == 1
    out = tmp_path / "out.parquet"
    res = _cli(pk, "-w", wh, "--to", str(out), "--snapshot", "1")
    assert res.exit_code == 0, res.output
    import pyarrow.parquet as pq

    assert pq.read_table(str(out)).num_rows == 16
    res = _cli(pk, "-w", wh, "--where", "id = 'x'")
    assert res.exit_code != 0 and "does not fit column id" in str(res.exception or res.output)


@pytest.mark.parametrize("bitmap64", [False, True])
def test_drop_deleted_positions_with_batch_offsets(bitmap64: bool) -> None:
    """A batch starting at file position ``offset`` loses exactly the DV positions inside it."""
    from paimon_cli.core.operation.split_read import drop_deleted

    t = pa.table({"x": list(range(10))})
    dv = DeletionVector.from_positions([1, 5, 12], bitmap64=bitmap64)
    assert drop_deleted(t, dv, 0).column("x").to_pylist() == [0, 2, 3, 4, 6, 7, 8, 9]
    assert drop_deleted(t, dv, 5).column("x").to_pylist() == [1, 2, 3, 4, 5, 6, 8, 9]
    assert drop_deleted(t, dv, 20).num_rows == 10


def test_pk_files_without_key_columns_read_keys_from_values(catalog: FileSystemCatalog) -> None:
    """Files with no ``_KEY_`` columns in a table without ``data-file.thin-mode`` (what
    pypaimon-rust 0.4 writes) merge with ordinary files: keys come from the value columns,
    as Java 1.x's reader takes them (FormatReaderMapping.trimKeyFields)."""
    import pyarrow.parquet as pq

    schema = Schema.of([("id", IntType(nullable=False), None), ("dt", VarCharType(10, nullable=False), None),
                        ("v", BigIntType(), None)],
                       partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "1"})
    catalog.create_table("db.thin", schema)
    table = catalog.get_table("db.thin")
    assert "data-file.thin-mode" not in table.schema.options

    def write(rows: list[dict[str, Any]], thin: bool, kinds: list[str] | None = None) -> None:
        t = catalog.get_table("db.thin")
        tw = TableWrite(t, {"data-file.thin-mode": "true"} if thin else None)
        tw.write_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(t.schema.fields)),
                       pa.array([KINDS[k] for k in kinds], pa.int8()) if kinds else None)
        FileStoreCommit(t).commit(tw.prepare_commit())

    write([{"id": i, "dt": "a", "v": i} for i in range(6)], thin=True)
    write([{"id": i, "dt": "a", "v": 100 + i} for i in range(3, 9)], thin=False)
    write([{"id": 4, "dt": "a", "v": None}, {"id": 7, "dt": "a", "v": None}], thin=True, kinds=["+U", "-D"])
    files = sorted(Path(catalog.warehouse).glob("db.db/thin/dt=a/bucket-0/*.parquet"))
    layouts = sorted(tuple(pq.read_schema(str(f)).names) for f in files)
    assert ("_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "dt", "v") in layouts  # no _KEY_ columns
    assert ("_KEY_id", "_SEQUENCE_NUMBER", "_VALUE_KIND", "id", "dt", "v") in layouts
    expected = {0: 0, 1: 1, 2: 2, 3: 103, 4: None, 5: 105, 6: 106, 8: 108}
    got = TableRead(catalog.get_table("db.thin")).to_arrow().to_pylist()
    assert sorted(got, key=lambda r: r["id"]) == [{"id": i, "dt": "a", "v": v} for i, v in expected.items()]
    pred = parse_predicate("id = 4 OR id = 5", table.schema.fields)
    assert sorted(r["v"] for r in TableRead(catalog.get_table("db.thin"), predicate=pred).to_arrow().to_pylist()
                  if r["v"] is not None) == [105]


def test_json_output_converts_only_non_native_columns() -> None:
    """``-o jsonl``/``-o json`` render every type as the per-value renderer does."""
    import datetime
    import decimal
    import io

    from paimon_cli.output import to_json_value
    from paimon_cli.record_batches import write_json_batches as _write_json

    batch = pa.record_batch({
        "i": pa.array([1, None, 3], pa.int64()),
        "s": pa.array(["a\"b", None, "é\n"]),
        "f": pa.array([1.5, float("nan"), float("-inf")]),
        "g": pa.array([489.0, None, -0.25]),
        "b": pa.array([b"\x00\xff", None, b""]),
        "ts": pa.array([datetime.datetime(2024, 1, 2, 3, 4, 5, 123456), None, None], pa.timestamp("us")),
        "d": pa.array([decimal.Decimal("1.20"), None, decimal.Decimal("-3.00")], pa.decimal128(5, 2)),
        "l": pa.array([[1, 2], None, []], pa.list_(pa.int32())),
        "ok": pa.array([True, False, None]),
    })
    out = io.StringIO()
    assert _write_json(iter([batch, batch.slice(0, 0)]), out, lines=True) == 3
    got = [json.loads(x) for x in out.getvalue().splitlines()]
    assert got[0] == {"i": 1, "s": "a\"b", "f": 1.5, "g": 489.0, "b": "00ff", "ts": "2024-01-02 03:04:05.123456",
                      "d": "1.20", "l": [1, 2], "ok": True}
    assert got[1]["f"] == "NaN" and got[2]["f"] == "-Infinity" and got[2]["s"] == "é\n" and got[2]["b"] == ""
    assert '"g":489.0' in out.getvalue().splitlines()[0]
    for row, plain in zip(got, batch.to_pylist(), strict=True):  # non-temporal values as the renderer gives them
        for k in ("i", "s", "f", "g", "b", "l", "ok"):
            assert row[k] == to_json_value(plain[k])
    arr = io.StringIO()
    assert _write_json(iter([batch]), arr, lines=False) == 3
    assert json.loads(arr.getvalue()) == got
    assert arr.getvalue().startswith("[\n  {\n    \"i\": 1,")
    empty = io.StringIO()
    assert _write_json(iter([]), empty, lines=False) == 0 and empty.getvalue() == "[]\n"


@pytest.mark.parametrize("where", ["dt = 'a'", "dt <> 'b'", "dt = 'a' AND id > 2", "dt IN ('b', 'c')", "dt = 'z'"])
def test_partition_pruning_on_the_columnar_plan_counts_as_the_objects_do(tmp_path: Path, where: str) -> None:
    """A predicate on partition columns is applied to the Arrow plan before any entry object is
    built; every count of ``--explain`` is what the live entries say, postponed files included."""
    from paimon_cli.core.api import Warehouse
    from paimon_cli.core.data.binary_row import deserialize
    from paimon_cli.core.operation.read_plan import Counts
    from paimon_cli.core.operation.scan import split_postponed

    wh = Warehouse(str(tmp_path / "wh"))
    t = wh.create_table("db.p", "id BIGINT NOT NULL, dt STRING NOT NULL, v INT", primary_key="id,dt",
                        partition_by="dt", options={"bucket": "-2", "postpone.default-bucket-num": "2",
                                                    "postpone.batch-write-fixed-bucket": "false"})
    for dts in (("a", "b"), ("a", "c")):
        t.write(pa.table({"id": pa.array(range(6), pa.int64()), "dt": [dts[i % 2] for i in range(6)],
                          "v": pa.array(range(6), pa.int32())}))
    t.compact()  # real buckets for a, b, c; then staged files again in a and b
    t.write(pa.table({"id": pa.array([1, 2, 7], pa.int64()), "dt": ["a", "b", "a"], "v": pa.array([9, 9, 9], pa.int32())}))
    table = t.open()
    pred = parse_predicate(where, table.schema.fields)
    plan = TableRead(table, predicate=pred).plan()

    entries = FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
    real, staged = split_postponed(table.schema, entries)
    keys = table.schema.partition_keys

    def ok(e: Any) -> bool:
        values = deserialize(e.partition, table.schema.partition_types)
        return pred.might_match({k: (v, v, 0, 1) for k, v in zip(keys, values, strict=True)})

    assert plan.total == Counts.of(entries) and plan.total.files > 0
    assert plan.skipped_postponed == Counts.of(entries).minus(Counts.of(real)) and staged
    assert plan.pruned_by_partition == Counts.of(real).minus(Counts.of([e for e in real if ok(e)]))
    assert plan.postponed_selected == Counts.of([e for e in staged if ok(e)])
    if pred.columns() == {"dt"}:  # (key stats may prune more buckets of "id > 2")
        assert sorted((s.partition, s.bucket) for s in plan.splits) == sorted(
            {(e.partition, e.bucket) for e in real if ok(e)})


def test_pk_splits_merged_on_worker_threads_equal_the_sequential_read(catalog: FileSystemCatalog) -> None:
    """Primary-key splits are decoded and merged on worker threads; the result batches are
    the sequential split-by-split read's, in the same order, and stop at a limit."""
    import threading

    import numpy as np

    from paimon_cli.core.operation import merge_split_read

    schema = Schema.of([("id", BigIntType(nullable=False), None), ("dt", VarCharType(10, nullable=False), None),
                        ("v", BigIntType(), None), ("s", VarCharType(20), None)],
                       partition_keys=["dt"], primary_keys=["id", "dt"], options={"bucket": "3"})
    catalog.create_table("db.w", schema)
    rng = np.random.default_rng(5)
    for batch in range(3):
        ids = rng.permutation(np.arange(batch * 200, batch * 200 + 400))
        rows = [{"id": int(i), "dt": f"d{int(i) % 4}", "v": int(i) * 10 + batch, "s": f"b{batch}-{int(i)}"}
                for i in ids]
        _write(catalog, "db.w", rows, ["+I" if i % 7 else "-D" for i in range(len(rows))] if batch == 2 else None)
    table = catalog.get_table("db.w")
    read = TableRead(table)
    splits = read.plan().splits
    assert len(splits) > 4
    reader = read._split_read()
    sequential = [b for split in splits for t in reader.read(split) for b in t.cast(read.output_schema()).to_batches()]
    threads = set()
    merge = merge_split_read.MergeFileSplitRead.merge

    def spy(self: Any, data: Any, split: Any) -> Any:
        threads.add(threading.current_thread().name)
        return merge(self, data, split)

    merge_split_read.MergeFileSplitRead.merge = spy  # type: ignore[method-assign]
    try:
        for _ in range(3):
            got = list(TableRead(table).iter_batches())
            assert len(got) == len(sequential)
            assert all(g.equals(s) for g, s in zip(got, sequential, strict=True))
        limited = TableRead(table, limit=450).to_arrow()
    finally:
        merge_split_read.MergeFileSplitRead.merge = merge  # type: ignore[method-assign]
    assert threads and all(name.startswith("paimon-read") for name in threads)
    assert limited.equals(pa.Table.from_batches(sequential).slice(0, 450))


@pytest.mark.parametrize("engine", ["deduplicate", "first-row", "partial-update"])
def test_pk_partition_columns_come_from_the_partition_row(catalog: FileSystemCatalog, engine: str,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Deduplicate / first-row reads fill the partition columns from the split's partition
    (as Java's KeyValueFileReaderFactory does) without decoding them; the rows are the merged
    rows, typed as the table's columns, for projections and predicates on them too."""
    import datetime

    from paimon_cli.core.data.types import DateType
    from paimon_cli.core.operation import merge_split_read

    schema = Schema.of([("id", BigIntType(nullable=False), None), ("ps", VarCharType(10, nullable=False), None),
                        ("pd", DateType(nullable=False), None), ("pn", IntType(nullable=False), None),
                        ("v", BigIntType(), None)],
                       partition_keys=["ps", "pd", "pn"], primary_keys=["id", "ps", "pd", "pn"],
                       options={"bucket": "2", "merge-engine": engine})
    catalog.create_table("db.p", schema)
    days = [datetime.date(2024, 1, 1), datetime.date(1969, 12, 31)]
    state: dict[tuple[Any, ...], dict[str, Any]] = {}
    for batch in range(3):
        rows = [{"id": i, "ps": "ab"[i % 2], "pd": days[i % 3 % 2], "pn": i % 3 - 1, "v": i * 10 + batch}
                for i in range(batch * 4, batch * 4 + 12)]
        _write(catalog, "db.p", rows)
        for r in rows:
            key = (r["id"], r["ps"], r["pd"], r["pn"])
            if engine == "first-row":
                state.setdefault(key, r)
            else:
                state[key] = r
    decoded: list[list[str]] = []
    read_file = merge_split_read.read_data_file

    def spy(file_io: Any, path: str, fields: Any, columns: Any = None) -> Any:
        decoded.append(list(columns))
        return read_file(file_io, path, fields, columns)

    monkeypatch.setattr(merge_split_read, "read_data_file", spy)
    table = catalog.get_table("db.p")
    levels = {"all_levels": engine == "first-row"}  # first-row reads show level 0 only when asked
    got = TableRead(table, **levels).to_arrow()
    assert got.schema == arrow_schema(table.schema.fields)
    assert _sorted(got.to_pylist()) == _sorted(list(state.values()))
    from_files = {c for cols in decoded for c in cols}
    assert ({"ps", "pd", "pn"} & from_files) == (set() if engine != "partial-update" else {"ps", "pd", "pn"})
    pred = parse_predicate("pn = 0 AND ps = 'b' AND pd < DATE '2000-01-01'", table.schema.fields)
    want = [{"id": r["id"], "pd": r["pd"]} for r in state.values()
            if r["pn"] == 0 and r["ps"] == "b" and r["pd"] < datetime.date(2000, 1, 1)]
    assert want and _rows(table, projection=["id", "pd"], predicate=pred, **levels) == _sorted(want)
