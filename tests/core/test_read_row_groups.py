"""Append reads: Parquet row groups pruned by their statistics, files decoded concurrently.

Exactness is the point: a pruned read must return what the unpruned read filtered by the
predicate returns, in the same order, whatever the schema history, deletion vectors and
default values. Multi-row-group files are made by rewriting the files our writer produced
with a small row group size (same columns, field ids and rows; Java's writer cuts row
groups at ``parquet.block.size``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import BigIntType, DateType, DoubleType, IntType, VarCharType
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.index.deletion_vectors import DeletionVector, write_deletion_vector_index
from paimon_cli.core.manifest.index_manifest import IndexFileMeta
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.schema_change import AddColumn, RenameColumn, SetOption, UpdateColumnType
from paimon_cli.core.schema.table_schema import Schema

ROWS_PER_GROUP = 100


def _write(catalog: FileSystemCatalog, ident: str, rows: list[dict[str, Any]]) -> None:
    table = catalog.get_table(ident)
    tw = TableWrite(table)
    tw.write_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(table.schema.fields)))
    assert FileStoreCommit(table).commit(tw.prepare_commit()) is not None


def _split_row_groups(catalog: FileSystemCatalog, ident: str) -> None:
    """Rewrite every data file of the table with ``ROWS_PER_GROUP`` rows per row group."""
    table = catalog.get_table(ident)
    for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()):
        path = f"{table.path}/bucket-{e.bucket}/{e.file.file_name}"
        data = pq.read_table(path)
        pq.write_table(data, path, row_group_size=ROWS_PER_GROUP, compression="zstd")
        assert pq.ParquetFile(path).metadata.num_row_groups > 1


def _date(i: int) -> Any:
    import datetime as dt

    return dt.date(2024, 1, 1) + dt.timedelta(days=i // 50)


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


@pytest.fixture
def table_name(catalog: FileSystemCatalog) -> str:
    schema = Schema.of([("id", IntType(), None), ("name", VarCharType(20), None), ("d", DateType(), None),
                        ("v", BigIntType(), None), ("f", DoubleType(), None)], options={"bucket": "-1"})
    catalog.create_table("db.t", schema)
    for start in (0, 1000, 2000):
        _write(catalog, "db.t", [{"id": i, "name": None if i % 7 == 0 else f"n{i:05d}", "d": _date(i),
                                  "v": None if 1100 <= i < 1300 else i * 3, "f": i / 2}
                                 for i in range(start, start + 1000)])
    _split_row_groups(catalog, "db.t")
    return "db.t"


WHERES = [
    "id < 150", "id >= 2950", "id = 1234", "id IN (5, 1500, 2999)", "id NOT IN (1, 2)", "id <> 7",
    "name = 'n00042'", "name > 'n02900'", "name IS NULL", "v IS NULL", "v IS NOT NULL AND id < 1200",
    "d = DATE '2024-01-03'", "d < DATE '2024-01-02' OR id > 2990", "f < 10", "id > 100000",
]


def _expected(table: Any, where: str) -> pa.Table:
    everything = TableRead(table).to_arrow()
    return parse_predicate(where, table.schema.fields).filter(everything)


@pytest.mark.parametrize("where", WHERES)
def test_pruned_read_equals_unpruned_read_filtered(catalog: FileSystemCatalog, table_name: str, where: str) -> None:
    table = catalog.get_table(table_name)
    pred = parse_predicate(where, table.schema.fields)
    out = TableRead(table, predicate=pred).to_arrow()
    assert out.equals(_expected(table, where))
    streamed = TableRead(table, predicate=pred, limit=10**9).to_arrow()  # the sequential path
    assert streamed.equals(out)


def _row_groups(table: Any, where: str) -> dict[str, Any]:
    tr = TableRead(table, predicate=parse_predicate(where, table.schema.fields))
    return {r["step"]: r for r in tr.explain().rows}["pruned by row-group stats"]


def test_explain_counts_row_groups(catalog: FileSystemCatalog, table_name: str) -> None:
    table = catalog.get_table(table_name)
    step = _row_groups(table, "id < 150")
    # files hold 1000 rows each as 10 row groups; file stats leave the first file, whose
    # row groups 0..99 and 100..199 are read
    assert step["note"].startswith("8 of 10 row group(s) in 1 Parquet file(s)")
    assert step["files"] == 0 and step["records"] == 800
    assert _row_groups(table, "v IS NULL")["note"].startswith("8 of 10 ")  # 1100..1299 hold the NULLs
    assert _row_groups(table, "d = DATE '2024-01-03'")["note"].startswith("9 of 10 ")
    assert _row_groups(table, "name IS NULL")["note"].startswith("0 of 30 ")
    assert _row_groups(table, "f < 10")["note"].startswith("0 of 10 ")  # floats are not pruned
    assert "pruned by row-group stats" not in {r["step"] for r in TableRead(table).explain().rows}


def test_concurrent_read_keeps_file_order(catalog: FileSystemCatalog, table_name: str) -> None:
    table = catalog.get_table(table_name)
    assert TableRead(table).to_arrow().column("id").to_pylist() == list(range(3000))


def test_deletion_vectors_in_later_row_groups(catalog: FileSystemCatalog, table_name: str) -> None:
    catalog.alter_table(table_name, [SetOption("deletion-vectors.enabled", "true")])
    table = catalog.get_table(table_name)
    entries = FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
    second = sorted(entries, key=lambda e: e.file.min_sequence_number)[1]  # ids 1000..1999
    path = f"{table.path}/index/index-test-dv-0"
    size, metas = write_deletion_vector_index(table.file_io, path,
                                              {second.file.file_name: DeletionVector.from_positions([0, 550, 999])})
    FileStoreCommit(table).commit([CommitMessage(second.partition, second.bucket, second.total_buckets,
                                                 new_index_files=[IndexFileMeta("DELETION_VECTORS", "index-test-dv-0",
                                                                                size, 1, tuple(metas))])])
    table = catalog.get_table(table_name)
    for where in ("id >= 1500 AND id < 1600", "id = 1550", "id > 1990"):
        ids = TableRead(table, predicate=parse_predicate(where, table.schema.fields)).to_arrow().column("id")
        assert ids.to_pylist() == [i for i in range(3000) if parse_ok(where, i) and i not in (1000, 1550, 1999)]


def parse_ok(where: str, i: int) -> bool:
    return {"id >= 1500 AND id < 1600": 1500 <= i < 1600, "id = 1550": i == 1550, "id > 1990": i > 1990}[where]


def test_schema_evolution_prunes_only_unchanged_columns(catalog: FileSystemCatalog, table_name: str) -> None:
    """A renamed column is pruned through its field id; a widened one (INT -> BIGINT) and one
    the old files lack are never pruned, and every answer is still exact."""
    catalog.alter_table(table_name, [RenameColumn("name", "label"), UpdateColumnType("id", BigIntType()),
                                     AddColumn("extra", IntType())])
    _write(catalog, table_name, [{"id": 5000 + i, "label": f"z{i}", "d": _date(i), "v": i, "f": 0.0, "extra": i}
                                 for i in range(300)])
    _split_row_groups(catalog, table_name)
    table = catalog.get_table(table_name)
    assert _row_groups(table, "label = 'n00042'")["note"].startswith("9 of 10 ")  # old file: by field id
    assert _row_groups(table, "id < 150")["note"].startswith("0 of 10 ")  # widened: the old file is not pruned
    assert _row_groups(table, "id >= 5250")["note"].startswith("2 of 3 ")  # the new file is
    assert _row_groups(table, "extra = 3")["note"].startswith("2 of 3 ")
    assert _row_groups(table, "extra IS NULL")["note"].startswith("0 of 30 ")  # old files lack it: unknown
    for where in ("label = 'n00042'", "id < 150", "id >= 5250", "extra = 3", "extra IS NULL", "label > 'z1'"):
        pred = parse_predicate(where, table.schema.fields)
        assert TableRead(table, predicate=pred).to_arrow().equals(_expected(table, where)), where


def test_default_value_column_is_not_pruned(catalog: FileSystemCatalog, table_name: str) -> None:
    """A NULL reads back as the column's default, which no statistics describe."""
    catalog.alter_table(table_name, [SetOption("fields.v.default-value", "-1")])
    table = catalog.get_table(table_name)
    out = TableRead(table, predicate=parse_predicate("v = -1", table.schema.fields)).to_arrow()
    assert out.column("id").to_pylist() == list(range(1100, 1300))
    assert _row_groups(table, "v = -1")["note"].startswith("0 of 30 ")


# -- read --to ---------------------------------------------------------------------------------


def _cli(*args: str) -> Any:
    import typer
    from typer.testing import CliRunner

    from paimon_cli.commands.read import read

    app = typer.Typer()
    app.command()(read)
    app.command("noop")(lambda: None)
    return CliRunner().invoke(app, ["read", *args])


@pytest.mark.parametrize("ext", ["parquet", "csv", "jsonl"])
def test_read_to_failing_half_way_leaves_the_target_as_it_was(catalog: FileSystemCatalog, table_name: str,
                                                              tmp_path: Path, ext: str) -> None:
    table = catalog.get_table(table_name)
    out_dir = tmp_path / "out"
    out_dir.mkdir()
    out = out_dir / f"rows.{ext}"
    res = _cli(table_name, "-w", catalog.warehouse, "--to", str(out))
    assert res.exit_code == 0, res.output
    first = out.read_bytes()
    assert sorted(p.name for p in out_dir.iterdir()) == [out.name]  # no temporary file left
    if ext == "parquet":
        assert pq.read_table(out).equals(TableRead(table).to_arrow())
    # the last file's pages are damaged (its footer is intact): the first files' rows are
    # written before the read fails
    last = max(FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()),
               key=lambda e: e.file.min_sequence_number)
    path = Path(table.path) / "bucket-0" / last.file.file_name
    data = bytearray(path.read_bytes())
    data[4:len(data) // 2] = b"\x07" * (len(data) // 2 - 4)
    path.write_bytes(bytes(data))
    res = _cli(table_name, "-w", catalog.warehouse, "--to", str(out))
    assert res.exit_code != 0
    assert out.read_bytes() == first
    assert sorted(p.name for p in out_dir.iterdir()) == [out.name]
    fresh = tmp_path / "fresh" / f"rows.{ext}"
    res = _cli(table_name, "-w", catalog.warehouse, "--to", str(fresh))
    assert res.exit_code != 0
    assert list(fresh.parent.iterdir()) == []


# -- partition columns ------------------------------------------------------------------------


def test_partition_columns_filled_from_the_partition_value(catalog: FileSystemCatalog) -> None:
    """Partition columns are not decoded but filled from the split's partition (as Java's
    read does): values, NULL partitions, projections of partition columns only, filters."""
    schema = Schema.of([("p", IntType(), None), ("s", VarCharType(10), None), ("d", DateType(), None),
                        ("x", BigIntType(), None)], partition_keys=["p", "s", "d"], options={"bucket": "-1"})
    catalog.create_table("db.part", schema)
    rows = [{"p": i % 3 if i % 5 else None, "s": None if i % 7 == 0 else f"s{i % 2}", "d": _date(i * 10), "x": i}
            for i in range(200)]
    _write(catalog, "db.part", rows)
    table = catalog.get_table("db.part")
    assert len(TableRead(table).plan().splits) > 10
    got = TableRead(table).to_arrow()
    assert got.schema == pa.schema([pa.field(f.name, f.type) for f in arrow_schema(table.schema.fields)])
    assert sorted(got.to_pylist(), key=lambda r: r["x"]) == rows
    only = TableRead(table, projection=["s", "p"]).to_arrow()
    assert sorted(zip(only.column("p").to_pylist(), only.column("s").to_pylist(), strict=True), key=str) == \
        sorted(((r["p"], r["s"]) for r in rows), key=str)
    for where in ("p = 1", "p IS NULL", "s = 's1' AND d >= DATE '2024-01-10'", "x > 150 AND s IS NULL",
                  "x = 7 AND p = 2", "x = 8 OR p = 1", "p = 1 AND (x < 3 OR x > 190)",
                  # on value columns alone: the partition columns are filled after the filter
                  "x > 150", "x < 20 OR x > 180", "x = 3", "x < 0"):
        pred = parse_predicate(where, table.schema.fields)
        out = TableRead(table, predicate=pred).to_arrow()
        assert out.equals(pred.filter(got)), where
        assert TableRead(table, predicate=pred, limit=10**9).to_arrow().equals(out), where


def test_concurrent_and_streamed_reads_give_the_same_batches(catalog: FileSystemCatalog) -> None:
    """``read --to`` writes the batches it gets: whether a row group was decoded whole on a
    worker or streamed, they are the same (65,536 rows, then the filter)."""
    catalog.create_table("db.big", Schema.of([("id", BigIntType(), None)], options={"bucket": "-1"}))
    table = catalog.get_table("db.big")
    tw = TableWrite(table)
    tw.write_arrow(pa.table({"id": pa.array(range(70_000), pa.int64())}))
    FileStoreCommit(table).commit(tw.prepare_commit())
    table = catalog.get_table("db.big")
    for pred in (None, parse_predicate("id > 5", table.schema.fields)):
        concurrent = list(TableRead(table, predicate=pred).iter_batches())
        streamed = list(TableRead(table, predicate=pred, limit=10**9).iter_batches())
        assert [b.num_rows for b in concurrent] == [b.num_rows for b in streamed] == \
            ([65536, 4464] if pred is None else [65530, 4464])
        assert pa.Table.from_batches(concurrent).equals(pa.Table.from_batches(streamed))


# -- probe: predicate columns decoded first ------------------------------------------------------


def _batches(table: Any, where: str, probe: bool, monkeypatch: pytest.MonkeyPatch,
             limit: int | None = None) -> list[pa.RecordBatch]:
    from paimon_cli.core.operation import split_read

    with monkeypatch.context() as m:
        if not probe:
            m.setattr(split_read.RawFileSplitRead, "_probe_split", lambda self, unit: None)
        pred = parse_predicate(where, table.schema.fields)
        return list(TableRead(table, predicate=pred, limit=limit).iter_batches())


def _decoded_columns(table: Any, where: str, monkeypatch: pytest.MonkeyPatch,
                     limit: int | None = None) -> list[list[str]]:
    """The column lists handed to the row-group decoders by a read with ``where`` (the
    streamed one with ``limit``)."""
    from paimon_cli.core.operation import split_read

    calls: list[list[str]] = []
    real, real_iter = split_read.read_row_group, split_read.iter_data_file_batches

    def spy(file_io: Any, path: str, fields: Any, columns: Any, metadata: Any, index: int) -> pa.Table:
        calls.append(list(columns))
        return real(file_io, path, fields, columns, metadata, index)

    def spy_iter(file_io: Any, path: str, fields: Any, columns: Any, **kw: Any) -> Any:
        calls.append(list(columns))
        return real_iter(file_io, path, fields, columns, **kw)

    with monkeypatch.context() as m:
        m.setattr(split_read, "read_row_group", spy)
        m.setattr(split_read, "iter_data_file_batches", spy_iter)
        TableRead(table, predicate=parse_predicate(where, table.schema.fields), limit=limit).to_arrow()
    return calls


PROBE_WHERES = WHERES + ["f = 700.5", "f > 1499 AND f < 1500.5", "name = 'n01499' OR f = 3.0", "name BETWEEN 'n02990' AND 'n02995'",
                         "v = 3 OR id = 2999", "id < 0"]


@pytest.mark.parametrize("where", PROBE_WHERES)
def test_probed_read_equals_plain_read(catalog: FileSystemCatalog, table_name: str, where: str,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """Batch for batch (what ``read --to`` writes) the read with the probe is the read without."""
    table = catalog.get_table(table_name)
    probed, plain = _batches(table, where, True, monkeypatch), _batches(table, where, False, monkeypatch)
    assert [b.num_rows for b in probed] == [b.num_rows for b in plain]
    streamed = _batches(table, where, True, monkeypatch, limit=10**9)
    assert [b.num_rows for b in streamed] == [b.num_rows for b in plain]
    assert all(a.equals(b) for a, b in zip(streamed, plain, strict=True))
    assert pa.Table.from_batches(probed, schema=plain[0].schema if plain else None).equals(
        pa.Table.from_batches(plain, schema=plain[0].schema if plain else None)) if plain else not probed
    assert pa.Table.from_batches(probed, schema=_expected(table, where).schema).equals(_expected(table, where))


def test_probe_decodes_other_columns_only_where_a_row_matches(catalog: FileSystemCatalog, table_name: str,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    table = catalog.get_table(table_name)
    # file statistics keep the files of ids 1000..1999 and 2000..2999; f (DOUBLE) has no
    # row-group statistics used, so their 20 row groups are kept; only the one holding 700.5
    # (id 1401) is decoded beyond f: the third file is skipped whole
    where = "f = 700.5 OR f = 1400.25"
    calls = _decoded_columns(table, where, monkeypatch)
    assert sorted(calls) == sorted([["f"]] * 20 + [["id", "name", "d", "v"]])
    # the streamed read (a limit): the matching row group is then streamed in every column
    assert sorted(_decoded_columns(table, where, monkeypatch, limit=5)) == \
        sorted([["f"]] * 20 + [["id", "name", "d", "v", "f"]])
    step = {r["step"]: r for r in TableRead(table, predicate=parse_predicate(where, table.schema.fields)
                                            ).explain().rows}["skipped by predicate columns"]
    assert step["note"].startswith("19 of 20 row group(s) kept by their statistics match no row in f (decoded first)")
    assert step["files"] == 1 and step["records"] == 1900
    # statistics first: id < 150 keeps 2 row groups of the first file, the probe reads them
    assert sorted(calls := _decoded_columns(table, "id < 150", monkeypatch)) == [["id"], ["id"], ["name", "d", "v", "f"],
                                                                                 ["name", "d", "v", "f"]]
    rows = {r["step"]: r for r in TableRead(table, predicate=parse_predicate("id < 150", table.schema.fields)
                                            ).explain().rows}
    assert rows["skipped by predicate columns"]["records"] == 0
    assert rows["skipped by predicate columns"]["note"].startswith("0 of 2 row group(s)")


def test_probe_uses_the_value_column_part_of_a_predicate(catalog: FileSystemCatalog,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """``dt = .. AND qty = 5``: the partition part is the plan's, the rest probes; an OR
    across both is not probed."""
    schema = Schema.of([("p", IntType(), None), ("x", BigIntType(), None), ("y", VarCharType(10), None)],
                       partition_keys=["p"], options={"bucket": "-1"})
    catalog.create_table("db.pp", schema)
    _write(catalog, "db.pp", [{"p": i % 2, "x": (i * 7919) % 400, "y": f"y{i}"} for i in range(400)])
    table = catalog.get_table("db.pp")
    for path in Path(table.path).rglob("*.parquet"):  # one file per partition, 2 row groups each
        pq.write_table(pq.read_table(path), path, row_group_size=ROWS_PER_GROUP)
    calls = _decoded_columns(table, "p = 1 AND x = 3", monkeypatch)
    assert sorted(calls) == [["x"], ["x"], ["y"]]  # p = 1's 2 row groups; x = 3 is row 237, the second
    assert all(c == ["x", "y"] for c in _decoded_columns(table, "p = 1 OR x = 3", monkeypatch))
    for where in ("p = 1 AND x = 3", "p = 1 OR x = 3", "p = 0 AND (x = 3 OR y = 'y5')"):
        pred = parse_predicate(where, table.schema.fields)
        assert TableRead(table, predicate=pred).to_arrow().equals(pred.filter(TableRead(table).to_arrow())), where


def test_probe_is_not_used_where_it_cannot_save(catalog: FileSystemCatalog, table_name: str,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a predicate, or when every column read is a predicate column, one decode."""
    table = catalog.get_table(table_name)
    pred = parse_predicate("id = 5", table.schema.fields)
    from paimon_cli.core.operation import split_read

    calls: list[list[str]] = []
    real = split_read.read_row_group
    monkeypatch.setattr(split_read, "read_row_group",
                        lambda io, p, fl, cols, md, i: calls.append(list(cols)) or real(io, p, fl, cols, md, i))
    assert TableRead(table, projection=["id"], predicate=pred).to_arrow().column("id").to_pylist() == [5]
    assert calls == [["id"]]  # the one row group statistics keep, decoded once
    assert "skipped by predicate columns" not in {r["step"] for r in TableRead(table).explain().rows}


def test_probe_with_deletion_vectors_defaults_and_evolution(catalog: FileSystemCatalog, table_name: str,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A matching row that is deleted, a NULL read back as the default, a renamed, a widened
    and an added column: the probed read is the plain one."""
    catalog.alter_table(table_name, [SetOption("deletion-vectors.enabled", "true"),
                                     SetOption("fields.v.default-value", "-1")])
    table = catalog.get_table(table_name)
    entries = FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
    second = sorted(entries, key=lambda e: e.file.min_sequence_number)[1]  # ids 1000..1999
    path = f"{table.path}/index/index-test-dv-0"
    size, metas = write_deletion_vector_index(table.file_io, path,
                                              {second.file.file_name: DeletionVector.from_positions([401, 550])})
    FileStoreCommit(table).commit([CommitMessage(second.partition, second.bucket, second.total_buckets,
                                                 new_index_files=[IndexFileMeta("DELETION_VECTORS", "index-test-dv-0",
                                                                                size, 1, tuple(metas))])])
    catalog.alter_table(table_name, [RenameColumn("f", "g"), UpdateColumnType("id", BigIntType()),
                                     AddColumn("extra", IntType())])
    _write(catalog, table_name, [{"id": 5000 + i, "name": f"z{i}", "d": _date(i), "v": None, "g": i + 0.25,
                                  "extra": i % 4} for i in range(300)])
    _split_row_groups(catalog, table_name)
    table = catalog.get_table(table_name)
    for where in ("g = 700.5", "g = 775.0", "v = -1", "v = -1 AND g < 600", "extra = 2", "extra IS NULL AND g = 3.0",
                  "id = 1550", "id = 1401 OR g = 5.25", "name = 'z7'"):
        probed, plain = _batches(table, where, True, monkeypatch), _batches(table, where, False, monkeypatch)
        assert [b.num_rows for b in probed] == [b.num_rows for b in plain], where
        streamed = _batches(table, where, True, monkeypatch, limit=10**9)
        assert [b.num_rows for b in streamed] == [b.num_rows for b in plain], where
        assert all(a.equals(b) for a, b in zip(streamed, plain, strict=True)), where
        assert pa.Table.from_batches(probed, schema=_expected(table, where).schema).equals(
            _expected(table, where)), where
    assert _batches(table, "g = 775.0", True, monkeypatch) == []  # id 1550 matched but is deleted
    assert [r["id"] for b in _batches(table, "v = -1", True, monkeypatch) for r in b.to_pylist()] == \
        list(range(1100, 1300)) + list(range(5000, 5300))
