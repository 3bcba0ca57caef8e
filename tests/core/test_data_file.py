"""Data files: Java-shaped Parquet/ORC/Avro writes, typed reads, schema evolution by id."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.data.types import DataField, parse_data_type
from paimon_cli.core.errors import CorruptMetadata, InvalidInput, NotYetSupported, PaimonError
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.format.avro_format import avro_schema
from paimon_cli.core.format.data_file import (
    encode_data_file,
    evolve,
    format_of,
    iter_data_file_batches,
    read_data_file,
    write_data_file,
)
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.schema.options import CoreOptions

UTC = dt.timezone.utc
COLS = [
    ("id", "INT NOT NULL"), ("b", "BOOLEAN"), ("t", "TINYINT"), ("s", "SMALLINT"), ("big", "BIGINT"),
    ("f", "FLOAT"), ("d", "DOUBLE"), ("d5", "DECIMAL(5, 2)"), ("d15", "DECIMAL(15, 3)"),
    ("d30", "DECIMAL(30, 6)"), ("str", "STRING"), ("vc", "VARCHAR(10)"), ("bin", "BYTES"), ("day", "DATE"),
    ("tm", "TIME(3)"), ("ts3", "TIMESTAMP(3)"), ("ts6", "TIMESTAMP(6)"),
    ("ltz", "TIMESTAMP(3) WITH LOCAL TIME ZONE"), ("arr", "ARRAY<STRING>"), ("m", "MAP<STRING, INT>"),
    ("im", "MAP<INT, STRING>"), ("r", "ROW<x DOUBLE, y STRING>"),
]
FIELDS = [DataField(i, n, parse_data_type(t)) for i, (n, t) in enumerate(COLS)]


def _rows(n: int = 10) -> list[dict]:
    out = []
    for i in range(n):
        if i % 4 == 3:
            out.append({c: (i if c == "id" else None) for c, _ in COLS})
            continue
        out.append({
            "id": i, "b": i % 2 == 0, "t": -i, "s": i * 100, "big": i * 10**12, "f": i / 4, "d": -i / 8,
            "d5": decimal.Decimal(f"{i}.25"), "d15": decimal.Decimal(f"{i}123456789.125"),
            "d30": decimal.Decimal(f"-{i}1234567890123456789.000001"), "str": f"héllo-{i}", "vc": f"v{i}",
            "bin": bytes([i, 0, 255]), "day": dt.date(2020, 2, 29) + dt.timedelta(days=i),
            "tm": dt.time(i, 30, 15, 123000), "ts3": dt.datetime(2024, 1, 1, 0, 0, 0, 5000 * i),
            "ts6": dt.datetime(1969, 12, 31, 23, 59, 59, 999999 - i),
            "ltz": dt.datetime(2024, 6, 1, 8, i, tzinfo=UTC),
            "arr": ["a", None] if i % 2 else [], "m": [("k", i), ("z", None)], "im": [(i, "x")],
            "r": {"x": 1.5 * i, "y": None},
        })
    return out


@pytest.fixture
def table() -> pa.Table:
    return pa.Table.from_pylist(_rows(), schema=arrow_schema(FIELDS))


@pytest.fixture
def fio(tmp_path: Path) -> FileIO:
    return FileIO(str(tmp_path))


def _orc_writable(table: pa.Table) -> pa.Table:
    """ts6 before 1970 in whole milliseconds: pyarrow's ORC writer stores a time before 1970 with
    a fraction of a millisecond so that Java cannot read the file, so writing one is refused."""
    ts6 = pa.array([None if v is None else v.replace(microsecond=v.microsecond // 1000 * 1000) - dt.timedelta(seconds=i)
                    for i, v in enumerate(table.column("ts6").to_pylist())], table.schema.field("ts6").type)
    return table.set_column(table.schema.get_field_index("ts6"), table.schema.field("ts6"), ts6)


@pytest.mark.parametrize("fmt", ["parquet", "orc", "avro"])
def test_round_trip_every_format(fio: FileIO, tmp_path: Path, table: pa.Table, fmt: str) -> None:
    path = str(tmp_path / f"data-1-0.{fmt}")
    if fmt == "orc":
        with pytest.raises(NotYetSupported, match=r"column ts6 holds 1969-12-31T23:59:59\.999999000: pyarrow's ORC"):
            write_data_file(fio, path, table, FIELDS, fmt, CoreOptions({}))
        assert not (tmp_path / f"data-1-0.{fmt}").exists()
        table = _orc_writable(table)
    size = write_data_file(fio, path, table, FIELDS, fmt, CoreOptions({}))
    assert size == (tmp_path / f"data-1-0.{fmt}").stat().st_size
    got = read_data_file(fio, path, FIELDS)
    assert got.schema.equals(table.schema)
    for name in table.column_names:
        a, b = got.column(name), table.column(name)
        if fmt == "avro" and name in ("m",):
            assert [sorted(x or []) for x in a.to_pylist()] == [sorted(x or []) for x in b.to_pylist()]
        else:
            assert a.equals(b), name
    # projection and batches
    proj = read_data_file(fio, path, FIELDS, columns=["str", "id"])
    assert proj.column_names == ["str", "id"] and proj.column("id").to_pylist() == list(range(10))
    batches = list(iter_data_file_batches(fio, path, FIELDS, columns=["id"], batch_rows=3))
    assert sum(b.num_rows for b in batches) == 10
    assert all(b.num_rows <= 3 for b in batches)


def test_parquet_physical_layout_is_javas(fio: FileIO, tmp_path: Path, table: pa.Table) -> None:
    path = str(tmp_path / "f.parquet")
    write_data_file(fio, path, table, FIELDS, "parquet", CoreOptions({}))
    pf = pq.ParquetFile(path)
    cols = {pf.schema.column(i).path: pf.schema.column(i) for i in range(len(pf.schema))}
    assert cols["d5"].physical_type == "INT32"
    assert cols["d15"].physical_type == "INT64"
    assert cols["d30"].physical_type == "FIXED_LEN_BYTE_ARRAY"
    ts3 = json.loads(cols["ts3"].logical_type.to_json())
    assert (ts3["Type"], ts3["isAdjustedToUTC"], ts3["timeUnit"]) == ("Timestamp", False, "milliseconds")
    assert json.loads(cols["ltz"].logical_type.to_json())["isAdjustedToUTC"] is True
    assert json.loads(cols["ts6"].logical_type.to_json())["timeUnit"] == "microseconds"
    assert json.loads(cols["t"].logical_type.to_json()) == {"Type": "Int", "bitWidth": 8, "isSigned": True}
    assert "arr.list.element" in cols and "m.key_value.key" in cols and "m.key_value.value" in cols
    assert cols["id"].max_definition_level == 0  # NOT NULL -> required
    md = pf.metadata.row_group(0).column(0)
    assert md.compression == "ZSTD"
    arrow = pq.read_schema(path)
    assert [int(f.metadata[b"PARQUET:field_id"]) for f in arrow] == list(range(len(COLS)))


def test_nanosecond_timestamps_are_int96_and_others_stay_int64(fio: FileIO, tmp_path: Path) -> None:
    fields = [DataField(0, "a", parse_data_type("TIMESTAMP(9)")), DataField(1, "b", parse_data_type("TIMESTAMP(3)"))]
    t = pa.table({"a": pa.array([1_000_000_001, None], pa.timestamp("ns")),
                  "b": pa.array([5, 6], pa.timestamp("ms"))})
    path = str(tmp_path / "n.parquet")
    write_data_file(fio, path, t, fields, "parquet", CoreOptions({}))
    pf = pq.ParquetFile(path)
    assert pf.schema.column(0).physical_type == "INT96"
    assert pf.schema.column(1).physical_type == "INT64"
    got = read_data_file(fio, path, fields)
    assert got.column("a").equals(t.column("a").cast(got.schema.field("a").type))
    assert got.column("b").to_pylist() == t.column("b").to_pylist()


@pytest.mark.parametrize("codec, expected", [("snappy", "SNAPPY"), ("none", "UNCOMPRESSED"), ("gzip", "GZIP")])
def test_parquet_compression_option(table: pa.Table, codec: str, expected: str) -> None:
    data = encode_data_file(table, FIELDS, "parquet", CoreOptions({"file.compression": codec}))
    assert pq.ParquetFile(io.BytesIO(data)).metadata.row_group(0).column(0).compression == expected


def test_zstd_level_changes_output(table: pa.Table) -> None:
    big = pa.concat_tables([table] * 200)
    fast = encode_data_file(big, FIELDS, "parquet", CoreOptions({}))
    slow = encode_data_file(big, FIELDS, "parquet", CoreOptions({"file.compression.zstd-level": "19"}))
    assert len(slow) <= len(fast)


def test_avro_schema_follows_java_converter() -> None:
    s = avro_schema(FIELDS)
    assert s["name"] == "record" and s["namespace"] == "org.apache.paimon.avro.generated"
    by = {f["name"]: f for f in s["fields"]}
    assert by["id"]["type"] == "int" and "default" not in by["id"]
    assert by["b"]["type"] == ["null", "boolean"] and by["b"]["default"] is None
    assert by["d30"]["type"][1] == {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 6}
    assert by["ts6"]["type"][1]["logicalType"] == "timestamp-micros"
    assert by["ltz"]["type"][1]["logicalType"] == "local-timestamp-millis"
    assert by["m"]["type"][1]["type"] == "map"
    im = by["im"]["type"][1]
    assert im["type"] == "array" and im["logicalType"] == "map"
    assert im["items"]["name"] == "record_im" and [f["name"] for f in im["items"]["fields"]] == ["key", "value"]
    assert by["r"]["type"][1]["name"] == "record_r"


def test_avro_header_and_codec(table: pa.Table) -> None:
    data = encode_data_file(table, FIELDS, "avro", CoreOptions({}))
    reader = fastavro.reader(io.BytesIO(data))
    assert reader.metadata["avro.codec"] == "zstandard"
    assert json.loads(reader.metadata["avro.schema"])["fields"][0] == {"name": "id", "type": "int"}


def test_avro_rejects_nanosecond_timestamps() -> None:
    fields = [DataField(0, "a", parse_data_type("TIMESTAMP(9)"))]
    with pytest.raises(NotYetSupported):
        encode_data_file(pa.table({"a": pa.array([1], pa.timestamp("ns"))}), fields, "avro", CoreOptions({}))


def test_write_errors(table: pa.Table) -> None:
    with pytest.raises(InvalidInput, match="lacks column"):
        encode_data_file(table.drop_columns(["str"]), FIELDS, "parquet", CoreOptions({}))
    nulls = table.set_column(0, "id", pa.array([None] * 10, pa.int32()))
    with pytest.raises(InvalidInput, match="null"):
        encode_data_file(nulls, FIELDS, "parquet", CoreOptions({}))
    with pytest.raises(InvalidInput, match="file.compression"):
        encode_data_file(table, FIELDS, "parquet", CoreOptions({"file.compression": "lzma"}))
    with pytest.raises(InvalidInput, match="file.format"):
        encode_data_file(table, FIELDS, "csv", CoreOptions({}))


def test_write_casts_compatible_input(table: pa.Table) -> None:
    loose = table.set_column(0, "id", table.column("id").cast(pa.int64()))
    data = encode_data_file(loose, FIELDS, "parquet", CoreOptions({}))
    assert pq.read_table(io.BytesIO(data)).schema.field("id").type == pa.int32()


def test_write_does_not_overwrite(fio: FileIO, tmp_path: Path, table: pa.Table) -> None:
    path = str(tmp_path / "x.parquet")
    write_data_file(fio, path, table, FIELDS, "parquet", CoreOptions({}))
    with pytest.raises(PaimonError, match="already exists"):
        write_data_file(fio, path, table, FIELDS, "parquet", CoreOptions({}))


def test_format_of() -> None:
    assert format_of("a/b/data-x-0.parquet") == "parquet"
    assert format_of("data-x-0.orc") == "orc"
    assert format_of("data-x-0.zstd.avro") == "avro"
    assert format_of("s3://b/t/bucket-0/data-x-0.avro.zstd") == "avro"
    with pytest.raises(InvalidInput):
        format_of("data-x-0.csv")


def test_read_errors(fio: FileIO, tmp_path: Path) -> None:
    bad = tmp_path / "bad.parquet"
    bad.write_bytes(b"not parquet at all")
    with pytest.raises(CorruptMetadata, match="bad.parquet"):
        read_data_file(fio, str(bad), FIELDS)
    with pytest.raises(InvalidInput, match="nope"):
        read_data_file(fio, str(bad), FIELDS, columns=["nope"])


def test_evolve_by_field_id() -> None:
    old = [DataField(0, "id", parse_data_type("INT")), DataField(1, "name", parse_data_type("STRING")),
           DataField(2, "gone", parse_data_type("INT"))]
    new = [DataField(0, "id", parse_data_type("BIGINT")), DataField(3, "added", parse_data_type("DOUBLE")),
           DataField(1, "renamed", parse_data_type("STRING"))]
    t = pa.Table.from_pylist([{"id": 1, "name": "a", "gone": 9}, {"id": 2, "name": None, "gone": 8}],
                             schema=arrow_schema(old))
    got = evolve(t, old, new)
    assert got.column_names == ["id", "added", "renamed"]
    assert got.schema.field("id").type == pa.int64()
    assert got.to_pylist() == [{"id": 1, "added": None, "renamed": "a"}, {"id": 2, "added": None, "renamed": None}]


def test_evolve_returns_a_table_already_in_the_target_schema_as_is() -> None:
    """Same names, ids and types (every file of an unevolved table): the read table itself."""
    fields = [DataField(0, "id", parse_data_type("BIGINT NOT NULL")), DataField(1, "name", parse_data_type("STRING"))]
    t = pa.Table.from_pylist([{"id": 1, "name": "a"}, {"id": 2, "name": None}], schema=arrow_schema(fields))
    assert evolve(t, fields, fields) is t
    assert evolve(t, [*fields, DataField(2, "dropped", parse_data_type("INT"))], fields) is t


def test_evolve_maps_swapped_names_by_field_id() -> None:
    """Two columns renamed into each other's names: the file's names and types equal the
    target's, only the field ids tell them apart, so the data must move by id."""
    old = [DataField(0, "a", parse_data_type("INT")), DataField(1, "b", parse_data_type("INT"))]
    new = [DataField(1, "a", parse_data_type("INT")), DataField(0, "b", parse_data_type("INT"))]
    t = pa.Table.from_pylist([{"a": 1, "b": 2}], schema=arrow_schema(old))
    got = evolve(t, old, new)
    assert got.to_pylist() == [{"a": 2, "b": 1}]
    assert got.schema.equals(arrow_schema(new), check_metadata=True)


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_data_file_read_in_its_own_schema_equals_the_cast_result(fio: FileIO, tmp_path: Path, table: pa.Table,
                                                                  fmt: str) -> None:
    """A file read back in exactly its fields' Arrow schema is returned as decoded; its
    columns and schema (field ids included) are those of the general cast path."""
    path = str(tmp_path / f"data-1-0.{fmt}")
    table = _orc_writable(table) if fmt == "orc" else table
    write_data_file(fio, path, table, FIELDS, fmt, CoreOptions({}))
    got = read_data_file(fio, path, FIELDS)
    assert got.schema.equals(arrow_schema(FIELDS), check_metadata=True)
    assert got.equals(table.cast(arrow_schema(FIELDS)))


@pytest.mark.parametrize("fmt", ["parquet", "orc"])
def test_local_data_files_reach_pyarrow_as_native_files(
    fio: FileIO, tmp_path: Path, table: pa.Table, fmt: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow reads on its own threads, sometimes after the call returned or raised; one that
    still held a Python file object while the interpreter exited aborted the process (`read`
    exit 134, "terminate called without an active exception"). Local data files are opened
    by pyarrow itself, on every read path, so no Python stream is ever handed over."""
    path = str(tmp_path / f"data-1-0.{fmt}")
    write_data_file(fio, path, _orc_writable(table) if fmt == "orc" else table, FIELDS, fmt, CoreOptions({}))

    def no_python_stream(self: FileIO, p: str) -> None:
        raise AssertionError(f"{p} was opened as a Python stream for pyarrow")

    monkeypatch.setattr(FileIO, "open_input", no_python_stream)
    assert read_data_file(fio, path, FIELDS, columns=["id"]).num_rows == 10
    assert sum(b.num_rows for b in iter_data_file_batches(fio, path, FIELDS, columns=["id"])) == 10
    assert sum(b.num_rows for b in iter_data_file_batches(fio, path, FIELDS, columns=["id"], low_memory=True)) == 10
    bad = tmp_path / f"bad.{fmt}"
    bad.write_bytes(b"not a data file")
    with pytest.raises(CorruptMetadata, match=f"bad.{fmt}"):
        read_data_file(fio, str(bad), FIELDS)
