"""core/format/input.py: every input format, globs, stdin, checked casts with row numbers, row kinds."""

from __future__ import annotations

import datetime as dt
import decimal
import gzip
import io
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import InvalidInput, NotFound
from paimon_cli.core.format import input as inp
from paimon_cli.core.format import input_files, input_readers
from paimon_cli.core.schema.schema_manager import new_table_schema
from paimon_cli.core.schema.table_schema import Schema, TableSchema

COLUMNS = (
    "id INT NOT NULL, name VARCHAR(5), amt DECIMAL(10, 2), ts TIMESTAMP(3), t TIME, d DATE, "
    "f FLOAT, b BOOLEAN, tz TIMESTAMP(6) WITH LOCAL TIME ZONE, big BIGINT, tiny TINYINT, bin BYTES"
)


def schema(columns: str = COLUMNS, pk: tuple[str, ...] = ("id",), options: dict[str, str] | None = None,
           partition: tuple[str, ...] = ()) -> TableSchema:
    return new_table_schema(Schema.of(parse_columns(columns), partition_keys=partition, primary_keys=pk,
                                      options=options or {}))


def stdin(data: bytes) -> io.BufferedReader:
    return io.BufferedReader(io.BytesIO(data))


def read(inputs: list[str], sch: TableSchema | None = None, **kw: Any) -> list[inp.InputChunk]:
    return list(inp.read_inputs(inputs, sch or schema(), **kw))


def rows(chunks: list[inp.InputChunk]) -> list[dict[str, Any]]:
    return [r for c in chunks for r in c.data.to_pylist()]


def error(inputs: list[str], sch: TableSchema | None = None, **kw: Any) -> str:
    with pytest.raises(InvalidInput) as ei:
        read(inputs, sch, **kw)
    return str(ei.value)


# ------------------------------------------------------------------------------ formats


def test_csv_keeps_text_and_converts_every_type(tmp_path: Path) -> None:
    p = tmp_path / "in.csv"
    p.write_text(
        "id,name,amt,ts,t,d,f,b,tz,big,tiny,bin\n"
        "1,007,12.34,2024-01-01 10:00:00.123,10:11:12.5,2024-02-29,1.5,TRUE,2024-01-01T02:00:00+02:00,"
        "9007199254740993,-128,ab\n"
        '2,"",1,2024-01-01T10:00:00,,,,,2024-01-01 01:00:00,NULL,,\n'
    )
    got = rows(read([str(p)]))
    assert got[0] == {
        "id": 1, "name": "007", "amt": decimal.Decimal("12.34"),
        "ts": dt.datetime(2024, 1, 1, 10, 0, 0, 123000), "t": dt.time(10, 11, 12, 500000),
        "d": dt.date(2024, 2, 29), "f": 1.5, "b": True,
        "tz": dt.datetime(2024, 1, 1, 0, 0, tzinfo=dt.timezone.utc), "big": 9007199254740993,
        "tiny": -128, "bin": b"ab",
    }
    # quoted "" stays an empty string, bare empty/NULL are NULL; naive LTZ text is UTC
    assert got[1]["name"] == "" and got[1]["big"] is None and got[1]["t"] is None
    assert got[1]["tz"] == dt.datetime(2024, 1, 1, 1, 0, tzinfo=dt.timezone.utc)


def test_output_has_table_types_and_order(tmp_path: Path) -> None:
    p = tmp_path / "in.csv"
    p.write_text("b,id\ntrue,5\n")
    (chunk,) = read([str(p)])
    assert chunk.data.column_names == schema().field_names
    assert chunk.data.schema.field("tiny").type == pa.int8()
    assert chunk.data.schema.field("ts").type == pa.timestamp("ms")
    assert chunk.data.schema.field("tz").type == pa.timestamp("us", tz="UTC")
    assert chunk.data.schema.field("id").nullable is False
    assert chunk.row_kinds is None and chunk.first_row == 1


def test_tsv_and_gzip(tmp_path: Path) -> None:
    (tmp_path / "a.tsv").write_text("id\tname\n1\tx,y\n")
    with gzip.open(tmp_path / "b.csv.gz", "wt") as f:
        f.write("id,name\n2,z\n")
    got = rows(read([str(tmp_path / "a.tsv"), str(tmp_path / "b.csv.gz")]))
    assert [(r["id"], r["name"]) for r in got] == [(1, "x,y"), (2, "z")]


def test_json_lines_and_json_array(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(
        '{"id": 1, "amt": 12.3, "ts": "2024-01-01 10:00:00", "name": "2024-01-01 10:00:00"}\n\n'
        '{"id": 2, "amt": "0.05", "b": false}\n'
    )
    (tmp_path / "b.json").write_text('[{"id": 3, "amt": 1.10, "f": 2.5}, {"id": 4}]')
    sch = schema("id INT NOT NULL, name STRING, amt DECIMAL(10, 2), ts TIMESTAMP(3), b BOOLEAN, f FLOAT")
    got = rows(read([str(tmp_path / "a.jsonl"), str(tmp_path / "b.json")], sch))
    assert [r["id"] for r in got] == [1, 2, 3, 4]
    assert got[0]["name"] == "2024-01-01 10:00:00"  # JSON timestamp inference must not touch strings
    assert got[0]["ts"] == dt.datetime(2024, 1, 1, 10)
    assert [r["amt"] for r in got] == [decimal.Decimal("12.30"), decimal.Decimal("0.05"),
                                       decimal.Decimal("1.10"), None]
    assert got[1]["b"] is False and got[2]["f"] == 2.5


def test_parquet_and_arrow_file_and_stream(tmp_path: Path) -> None:
    t = pa.table({"id": pa.array([1, 2], pa.int64()), "big": pa.array([5, None], pa.int32()),
                  "name": pa.array(["a", "b"]).dictionary_encode(),
                  "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 1)], pa.timestamp("s")).take([0, 0])})
    pq.write_table(t, tmp_path / "a.parquet")
    with pa.OSFile(str(tmp_path / "b.arrow"), "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
        w.write_table(t)
    with pa.OSFile(str(tmp_path / "c.arrows"), "wb") as sink, pa.ipc.new_stream(sink, t.schema) as w:
        w.write_table(t)
    for name in ("a.parquet", "b.arrow", "c.arrows"):
        got = rows(read([str(tmp_path / name)]))
        assert [(r["id"], r["big"], r["name"]) for r in got] == [(1, 5, "a"), (2, None, "b")], name
        assert got[0]["ts"] == dt.datetime(2024, 1, 1, 0, 0, 1)


def test_large_parquet_comes_in_bounded_batches(tmp_path: Path) -> None:
    n = 200_000
    pq.write_table(pa.table({"id": pa.array(range(n), pa.int32())}), tmp_path / "big.parquet", row_group_size=50_000)
    chunks = read([str(tmp_path / "big.parquet")], schema("id INT NOT NULL"))
    assert len(chunks) > 1 and max(c.data.num_rows for c in chunks) <= 65_536
    assert sum(c.data.num_rows for c in chunks) == n
    assert [c.first_row for c in chunks][:2] == [1, chunks[0].data.num_rows + 1]


def test_unknown_extension_is_refused_no_extension_sniffed_and_format_forces(tmp_path: Path) -> None:
    (tmp_path / "data.bin").write_text('{"id": 7}\n')
    with pytest.raises(InvalidInput, match=r"data.bin: unknown format; use --format"):
        read([str(tmp_path / "data.bin")])
    assert rows(read([str(tmp_path / "data.bin")], fmt="json"))[0]["id"] == 7
    (tmp_path / "part-00000").write_text('{"id": 6}\n')  # no extension: the content decides
    assert rows(read([str(tmp_path / "part-00000")]))[0]["id"] == 6
    (tmp_path / "data.txt2").write_text("id\n8\n")
    assert rows(read([str(tmp_path / "data.txt2")], fmt="csv"))[0]["id"] == 8
    (tmp_path / "data.gz").write_bytes(__import__("gzip").compress(b"id\n9\n"))
    with pytest.raises(InvalidInput, match=r"data.gz: unknown format; use --format"):
        read([str(tmp_path / "data.gz")])
    assert rows(read([str(tmp_path / "data.gz")], fmt="csv"))[0]["id"] == 9
    with pytest.raises(InvalidInput, match="--format 'xml'"):
        read([str(tmp_path / "data.bin")], fmt="xml")


# ------------------------------------------------------------------------------ globs, stdin


def test_globs_and_directories_expand_sorted(tmp_path: Path) -> None:
    for i in (2, 1, 3):
        (tmp_path / f"part-{i}.csv").write_text(f"id\n{i}\n")
    (tmp_path / "_SUCCESS").write_text("")
    got = rows(read([str(tmp_path / "part-*.csv")]))
    assert [r["id"] for r in got] == [1, 2, 3]
    files = input_files.expand_inputs([str(tmp_path)])
    assert [f.path.rsplit("/", 1)[-1] for f in files] == ["part-1.csv", "part-2.csv", "part-3.csv"]
    with pytest.raises(NotFound, match="no files match"):
        input_files.expand_inputs([str(tmp_path / "nope-*.csv")])
    with pytest.raises(NotFound, match="no such file"):
        input_files.expand_inputs([str(tmp_path / "missing.csv")])


@pytest.mark.s3
def test_s3_glob(s3_server: Any, s3_warehouse: str) -> None:
    from paimon_cli.core.io.fileio import FileIO

    fio = FileIO(s3_warehouse, s3_server.storage_options)
    for i in (1, 2):
        fio.write_bytes(f"{s3_warehouse}/in/p{i}.jsonl", f'{{"id": {i}}}\n'.encode())
    got = rows(read([f"{s3_warehouse}/in/*.jsonl"], storage_options=s3_server.storage_options))
    assert [r["id"] for r in got] == [1, 2]


def _encoded(t: pa.Table, fmt: str) -> bytes:
    """``t`` as CSV, JSON lines, Parquet or an Arrow IPC stream."""
    if fmt == "csv":
        return "\n".join([",".join(t.column_names)] + [",".join(map(str, r.values())) for r in t.to_pylist()]).encode()
    if fmt == "json":
        import json

        return b"".join(json.dumps(r).encode() + b"\n" for r in t.to_pylist())
    buf = io.BytesIO()
    if fmt == "parquet":
        pq.write_table(t, buf)
    else:
        with pa.ipc.new_stream(buf, t.schema) as w:
            w.write_table(t)
    return buf.getvalue()


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "arrow"])
def test_stdin_is_sniffed(fmt: str) -> None:
    data = _encoded(pa.table({"id": pa.array([4, 5], pa.int32())}), fmt)
    got = rows(read(["-"], stdin=stdin(data)))
    assert [r["id"] for r in got] == [4, 5]
    # --format wins over sniffing
    assert [r["id"] for r in rows(read(["-"], stdin=stdin(data), fmt=fmt))] == [4, 5]


def test_stdin_binary_garbage_needs_format() -> None:
    assert "pass --format" in error(["-"], stdin=stdin(b"\x00\x9f\x92\x96\xff\xfe\x00\x01" * 4))


# ------------------------------------------------------------------------------ column mapping


def test_missing_nullable_columns_are_null_and_missing_not_null_is_refused(tmp_path: Path) -> None:
    got = rows(read(["-"], stdin=stdin(b"id\n1\n")))
    assert got[0]["name"] is None and got[0]["amt"] is None
    assert error(["-"], stdin=stdin(b"name\nx\n")) == (
        "-: input has no column 'id', a primary-key column of the table"
    )
    sch = schema("id INT NOT NULL, v STRING NOT NULL")
    assert "input has no column 'v', a NOT NULL column" in error(["-"], sch, stdin=stdin(b"id\n1\n"))


def test_unknown_columns_are_refused_with_a_hint() -> None:
    msg = error(["-"], stdin=stdin(b"id,Name\n1,x\n"))
    assert "column 'Name' is not a column of the table (did you mean 'name'?" in msg
    assert "columns ['x', 'y'] are not columns" in error(["-"], stdin=stdin(b"id,x,y\n1,2,3\n"))
    assert "appears more than once" in error(["-"], stdin=stdin(b"id,id\n1,2\n"))


def test_unknown_column_error_lists_the_table_columns_in_schema_order() -> None:
    """Issue 27 #16: the columns as the table declares them (as `inspect schemas` shows), not sorted."""
    sch = schema("zeta INT NOT NULL, alpha STRING, mid DOUBLE", pk=("zeta",))
    for data in (b"zeta,beta\n1,x\n", b"zeta,beta,gamma\n1,x,y\n"):
        assert error(["-"], sch, stdin=stdin(data)).endswith("table columns are ['zeta', 'alpha', 'mid']")
    msg = error(["-"], sch, row_kind_column="op", stdin=stdin(b"zeta,beta,op\n1,x,+I\n"))
    assert "table columns are ['zeta', 'alpha', 'mid']" in msg  # the row-kind column is not one of them


def test_constants_fill_missing_columns() -> None:
    sch = schema("id INT NOT NULL, dt STRING NOT NULL", pk=("id", "dt"), partition=("dt",))
    got = rows(read(["-"], sch, stdin=stdin(b"id\n1\n2\n"), constants={"dt": "2024-05-01"}))
    assert [r["dt"] for r in got] == ["2024-05-01", "2024-05-01"]


# ------------------------------------------------------------------------------ checked casts


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"id,amt\n1,1.23\n2,1.234\n", "-: row 2, column 'amt': value '1.234' cannot be stored as DECIMAL(10, 2)"),
        (b"id,amt\n1,123456789.1\n", "-: row 1, column 'amt': value '123456789.1' cannot be stored as DECIMAL(10, 2)"),
        (b"id,tiny\n1,127\n2,5\n3,128\n", "-: row 3, column 'tiny': value '128' cannot be stored as TINYINT"),
        (b"id,big\n1,x\n", "-: row 1, column 'big': value 'x' cannot be stored as BIGINT"),
        (b"id,d\n1,2024-01-31\n2,2024-02-30\n", "-: row 2, column 'd': value '2024-02-30' cannot be stored as DATE"),
        (b"id,ts\n1,2024-13-01 00:00:00\n", "-: row 1, column 'ts': value '2024-13-01 00:00:00' cannot be stored as TIMESTAMP(3)"),
        (b"id,ts\n1,2024-01-01 00:00:00.1234\n", "-: row 1, column 'ts': value '2024-01-01 00:00:00.1234' cannot be stored as TIMESTAMP(3)"),
        (b"id,f\n1,1e39\n", "-: row 1, column 'f': value '1e39' cannot be stored as FLOAT (out of FLOAT range)"),
        (b"id,name\n1,abcde\n2,abcdef\n", "-: row 2, column 'name': value 'abcdef' is longer than VARCHAR(5) (6 characters)"),
        (b"id,t\n1,25:00:00\n", "-: row 1, column 't': value '25:00:00' cannot be stored as TIME(0)"),
        (b"id\n1\n\n2\nNULL\n", "-: row 3, column 'id': NULL in primary-key column"),
    ],
)
def test_bad_values_name_file_row_and_column(data: bytes, expected: str) -> None:
    assert error(["-"], stdin=stdin(data)).startswith(expected)


def test_row_numbers_continue_across_batches_and_files(tmp_path: Path) -> None:
    n = 70_000
    ids = list(range(n))
    tiny = [1] * n
    tiny[66_000] = 1000
    pq.write_table(pa.table({"id": pa.array(ids, pa.int32()), "tiny": pa.array(tiny, pa.int64())}),
                   tmp_path / "x.parquet")
    msg = error([str(tmp_path / "x.parquet")])
    assert msg.startswith(f"{tmp_path / 'x.parquet'}: row 66001, column 'tiny': value 1000 cannot be stored as TINYINT")


def test_numeric_casts_from_typed_inputs(tmp_path: Path) -> None:
    sch = schema("id INT NOT NULL, amt DECIMAL(5, 2), f FLOAT, big BIGINT, d DOUBLE")
    ok = pa.table({"id": pa.array([1], pa.int64()), "amt": pa.array([1.25]), "f": pa.array([0.1]),
                   "big": pa.array([3], pa.int8()), "d": pa.array([7], pa.int32())})
    pq.write_table(ok, tmp_path / "ok.parquet")
    got = rows(read([str(tmp_path / "ok.parquet")], sch))
    assert got == [{"id": 1, "amt": decimal.Decimal("1.25"), "f": pytest.approx(0.1), "big": 3, "d": 7.0}]
    for col, arr, why in [
        ("id", pa.array([1, 2**40], pa.int64()), "row 2, column 'id': value 1099511627776 cannot be stored as INT"),
        ("amt", pa.array([0.5, 999.995]), "row 2, column 'amt': value 999.995 cannot be stored as DECIMAL(5, 2) "
                                          "(more than 3 integer digits after rounding to scale 2)"),
        ("amt", pa.array([1.0, float("nan")]), "row 2, column 'amt': value nan cannot be stored as DECIMAL(5, 2) "
                                               "(not a finite number)"),
        ("amt", pa.array([-float("inf")]), "row 1, column 'amt': value -inf cannot be stored as DECIMAL(5, 2)"),
        ("amt", pa.array([1.0, 1e300]), "row 2, column 'amt': value 1e+300 cannot be stored as DECIMAL(5, 2) "
                                        "(more than 3 integer digits)"),
        ("amt", pa.array([1000], pa.int64()), "row 1, column 'amt': value 1000 cannot be stored as DECIMAL(5, 2)"),
        ("big", pa.array([1.5]), "row 1, column 'big': value 1.5 cannot be stored as BIGINT"),
    ]:
        data = {"id": pa.array([1] * len(arr), pa.int64()), col: arr}
        pq.write_table(pa.table(data), tmp_path / "bad.parquet")
        assert why in error([str(tmp_path / "bad.parquet")], sch)


def test_doubles_into_decimal_as_java_casts_them(tmp_path: Path) -> None:
    """A double is the decimal its shortest text spells, rounded half-up to the scale (Java's
    BigDecimal.valueOf + Paimon's Decimal.fromBigDecimal): 994.29 is 994.29, not refused
    because its binary value is 994.2899999...; the same numbers as JSON or CSV text agree."""
    import numpy as np

    sch = schema("id INT NOT NULL, amt DECIMAL(12, 2)")
    rng = np.random.default_rng(27)
    cents = rng.integers(-10**12 + 1, 10**12, 300_000)
    cents[:4] = [99429, 10**12 - 1, -(10**12 - 1), 0]
    exact = [decimal.Decimal(int(c)).scaleb(-2) for c in cents]
    ids = pa.array(np.arange(len(cents), dtype=np.int32))
    pq.write_table(pa.table({"id": ids, "amt": pa.array(cents / 100.0)}), tmp_path / "d.parquet")
    assert [r["amt"] for r in rows(read([str(tmp_path / "d.parquet")], sch))] == exact
    texts = [repr(float(x)) for x in cents / 100.0]
    (tmp_path / "d.jsonl").write_text("".join(f'{{"id": {i}, "amt": {t}}}\n' for i, t in enumerate(texts)))
    (tmp_path / "d.csv").write_text("id,amt\n" + "".join(f"{i},{t}\n" for i, t in enumerate(texts)))
    for text in ("d.jsonl", "d.csv"):
        assert [r["amt"] for r in rows(read([str(tmp_path / text)], sch))] == exact
    # more digits than the scale: rounded half-up (away from zero) on the shortest text, as
    # Java does, so 2.675 (binary 2.67499999...) is 2.68 and 0.1 + 0.2 is 0.30
    doubles = [1.005, 2.675, -2.675, 0.1 + 0.2, -0.005, 0.0049, 1e-300, -1e-300, 9999999999.994, 5e-324]
    want = ["1.01", "2.68", "-2.68", "0.30", "-0.01", "0.00", "0.00", "0.00", "9999999999.99", "0.00"]
    pq.write_table(pa.table({"id": pa.array(range(len(doubles)), pa.int32()), "amt": pa.array(doubles)}),
                   tmp_path / "r.parquet")
    assert [r["amt"] for r in rows(read([str(tmp_path / "r.parquet")], sch))] == [decimal.Decimal(w) for w in want]
    # float32 input: its own shortest text (0.1f is 0.1, not 0.10000000149...)
    pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "amt": pa.array([0.1], pa.float32())}),
                   tmp_path / "f.parquet")
    got = rows(read([str(tmp_path / "f.parquet")], schema("id INT NOT NULL, amt DECIMAL(38, 20)")))
    assert got[0]["amt"] == decimal.Decimal("0.1")
    # only a true overflow of the precision is refused
    for v in (10**10, 9999999999.995, -9999999999.995):
        pq.write_table(pa.table({"id": pa.array([1], pa.int32()), "amt": pa.array([float(v)])}), tmp_path / "o.parquet")
        assert "cannot be stored as DECIMAL(12, 2) (more than 10 integer digits" in error([str(tmp_path / "o.parquet")], sch)


def test_timestamp_precision_and_zones(tmp_path: Path) -> None:
    sch = schema("id INT NOT NULL, ts TIMESTAMP(3), tz TIMESTAMP(3) WITH LOCAL TIME ZONE, n TIMESTAMP(9)")
    t = pa.table({
        "id": pa.array([1], pa.int32()),
        "ts": pa.array([dt.datetime(2024, 1, 1, 1, 2, 3, 456000)], pa.timestamp("us")),
        "tz": pa.array([dt.datetime(2024, 1, 1, 1, 0, tzinfo=dt.timezone.utc)], pa.timestamp("us", tz="Europe/Paris")),
        "n": pa.array(["2024-01-01T00:00:00.123456789"]),
    })
    pq.write_table(t, tmp_path / "a.parquet")
    (chunk,) = read([str(tmp_path / "a.parquet")], sch)
    got = chunk.data.drop_columns(["n"]).to_pylist()[0]
    assert got["ts"] == dt.datetime(2024, 1, 1, 1, 2, 3, 456000)
    assert got["tz"] == dt.datetime(2024, 1, 1, 1, 0, tzinfo=dt.timezone.utc)
    assert chunk.data.column("n").cast(pa.int64())[0].as_py() % 1000 == 789
    lossy = t.set_column(1, "ts", pa.array([dt.datetime(2024, 1, 1, 1, 2, 3, 456001)], pa.timestamp("us")))
    pq.write_table(lossy, tmp_path / "b.parquet")
    assert "column 'ts': value" in error([str(tmp_path / "b.parquet")], sch)


def test_char_and_binary_lengths() -> None:
    sch = schema("id INT NOT NULL, c CHAR(2), b VARBINARY(3)")
    assert rows(read(["-"], sch, stdin=stdin(b"id,c,b\n1,\xc3\xa9\xc3\xa9,abc\n")))[0]["c"] == "éé"
    assert "column 'c': value 'abc' is longer than CHAR(2)" in error(["-"], sch, stdin=stdin(b"id,c\n1,abc\n"))
    assert "column 'b': value b'abcd' is longer than VARBINARY(3) (4 bytes)" in error(
        ["-"], sch, stdin=stdin(b"id,b\n1,abcd\n"))


def test_nested_columns_from_parquet_and_json(tmp_path: Path) -> None:
    sch = schema("id INT NOT NULL, tags ARRAY<STRING>, m MAP<STRING, INT>, p ROW<x DOUBLE, y INT>")
    t = pa.table({"id": pa.array([1, 2], pa.int32()), "tags": [["a"], None],
                  "m": pa.array([[("k", 1)], []], pa.map_(pa.string(), pa.int64())),
                  "p": [{"y": 2, "x": 1.5}, None]})
    pq.write_table(t, tmp_path / "n.parquet")
    got = rows(read([str(tmp_path / "n.parquet")], sch))
    assert got[0] == {"id": 1, "tags": ["a"], "m": [("k", 1)], "p": {"x": 1.5, "y": 2}}
    (tmp_path / "n.jsonl").write_text('{"id": 1, "tags": ["x", null], "p": {"x": 1, "y": 3}}\n')
    got = rows(read([str(tmp_path / "n.jsonl")], sch))
    assert got[0]["tags"] == ["x", None] and got[0]["p"] == {"x": 1.0, "y": 3}
    (tmp_path / "m.jsonl").write_text('{"id": 1, "m": {"k": 1}}\n')
    assert "column 'm': cannot convert" in error([str(tmp_path / "m.jsonl")], sch)


# ------------------------------------------------------------------------------ row kinds


def test_row_kind_column_is_mapped_and_dropped() -> None:
    data = b"id,op\n1,+I\n2,-U\n3,+U\n4,-D\n"
    (chunk,) = read(["-"], stdin=stdin(data), row_kind_column="op")
    assert chunk.row_kinds.to_pylist() == [0, 1, 2, 3]
    assert "op" not in chunk.data.column_names
    assert error(["-"], stdin=stdin(b"id,op\n1,+I\n2,DEL\n"), row_kind_column="op") == (
        "-: row 2, column 'op': row kind 'DEL' is not one of +I, -U, +U, -D"
    )
    assert "row 1, column 'op': row kind None" in error(["-"], stdin=stdin(b"id,op\n1,\n"), row_kind_column="op")
    assert "row-kind column 'op' is missing" in error(["-"], stdin=stdin(b"id\n1\n"), row_kind_column="op")


def test_rowkind_field_option_keeps_the_column() -> None:
    sch = schema("id INT NOT NULL, k STRING", options={"rowkind.field": "k"})
    (chunk,) = read(["-"], sch, stdin=stdin(b"id,k\n1,-D\n2,+I\n"))
    assert chunk.row_kinds.to_pylist() == [3, 0]
    assert chunk.data.column("k").to_pylist() == ["-D", "+I"]


def test_delete_marks_every_row() -> None:
    (chunk,) = read(["-"], stdin=stdin(b"id\n1\n2\n"), delete=True)
    assert chunk.row_kinds.to_pylist() == [3, 3]
    with pytest.raises(InvalidInput, match="either --delete or --row-kind-column"):
        inp.make_plan(schema(), "op", delete=True)


def test_sniff_format() -> None:
    assert input_files.sniff_format(b"PAR1xxxx") == "parquet"
    assert input_files.sniff_format(b"ARROW1\x00\x00") == "arrow"
    assert input_files.sniff_format(b"\xff\xff\xff\xff\x10\x00") == "arrow"
    assert input_files.sniff_format(b"  [{") == "json"
    assert input_files.sniff_format(b"a,b\n1,") == "csv"
    assert input_files.format_of_path("s3://b/x/y.CSV.gz") == ("csv", "gzip")
    assert input_files.format_of_path("/x/y.ndjson") == ("json", None)
    assert input_files.format_of_path("/x/y.gz") == (None, "gzip")


class _CallerOnly(io.RawIOBase):
    """A stdin stream that records reads made from another thread than its creator's."""

    def __init__(self, data: bytes) -> None:
        import threading

        self._data = io.BytesIO(data)
        self._owner = threading.get_ident()
        self.foreign_reads = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        import threading

        if threading.get_ident() != self._owner:
            self.foreign_reads += 1
        return self._data.readinto(b)


def _arrow_sources(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """What pyarrow's CSV and JSON readers are handed."""
    import pyarrow.csv as pcsv
    import pyarrow.json as pj

    seen: list[Any] = []
    real_csv, real_json = pcsv.open_csv, pj.read_json

    def open_csv(source: Any, *a: Any, **kw: Any) -> Any:
        seen.append(source)
        return real_csv(source, *a, **kw)

    def read_json(source: Any, *a: Any, **kw: Any) -> Any:
        seen.append(source)
        return real_json(source, *a, **kw)

    monkeypatch.setattr(pcsv, "open_csv", open_csv)
    monkeypatch.setattr(pj, "read_json", read_json)
    return seen


@pytest.mark.parametrize("fmt", ["csv", "json", "parquet", "arrow"])
def test_text_and_stdin_inputs_never_reach_pyarrow_threads_as_python_objects(
    fmt: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """pyarrow's CSV/JSON readers read ahead on its I/O threads, its Parquet/IPC readers decode
    on its CPU threads: over a Python stream those threads held it after an early stop (a bad
    row), and one that still did while the interpreter exited aborted `write` (exit 134).
    Inputs reach pyarrow as Arrow memory or native files; stdin is read by the caller only."""
    sch = schema("id INT NOT NULL, name STRING")
    data = _encoded(pa.table({"id": pa.array(range(3000), pa.int32()), "name": [f"n{i}" for i in range(3000)]}), fmt)
    seen = _arrow_sources(monkeypatch)
    monkeypatch.setattr(input_readers, "_TEXT_CHUNK_BYTES", 4096)  # several chunks

    stream = _CallerOnly(data)
    got = rows(read(["-"], sch, fmt=fmt, stdin=io.BufferedReader(stream, 1024)))
    assert [r["id"] for r in got] == list(range(3000))
    assert stream.foreign_reads == 0
    assert all(isinstance(s, pa.NativeFile) for s in seen), seen

    path = tmp_path / f"in.{fmt}"
    path.write_bytes(data)
    from paimon_cli.core.io.fileio import FileIO

    def no_python_stream(self: FileIO, p: str) -> None:
        raise AssertionError(f"{p} was opened as a Python stream for pyarrow")

    monkeypatch.setattr(FileIO, "open_input", no_python_stream)
    assert [r["id"] for r in rows(read([str(path)], sch))] == list(range(3000))
    assert all(isinstance(s, pa.NativeFile) for s in seen), seen


def test_csv_chunks_cut_at_line_ends_parse_as_one_stream(monkeypatch: pytest.MonkeyPatch) -> None:
    """CSV is parsed chunk by chunk (see _native_reader): the header comes from the first chunk,
    CRLF and blank lines survive a cut, a last line without newline is read."""
    monkeypatch.setattr(input_readers, "_TEXT_CHUNK_BYTES", 37)
    data = b"id,name\n" + b"".join(b'%d,"n,%d"\r\n' % (i, i) for i in range(50)) + b"\n\n\n" + b"50,last"
    got = rows(read(["-"], schema("id INT NOT NULL, name STRING"), fmt="csv", stdin=stdin(data)))
    assert got == [{"id": i, "name": f"n,{i}"} for i in range(50)] + [{"id": 50, "name": "last"}]
    bad = data.replace(b'40,"n,40"', b'40,"n,40",9')
    assert error(["-"], schema("id INT NOT NULL, name STRING"), fmt="csv", stdin=stdin(bad)).startswith(
        "-: row 41: CSV parse error: Expected 2 columns, got 3")  # the row's number, found across chunks


def test_big_parquet_row_group_of_large_values_comes_in_small_batches(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A row group above the whole-read limit streams in batches of about that many bytes,
    not 65536 rows: rows of multi-megabyte blobs would otherwise all be in memory at once."""
    monkeypatch.setattr(input_readers, "_ROW_GROUP_BYTES", 4000)
    p = tmp_path / "big.parquet"
    pq.write_table(pa.table({"id": list(range(20)), "b": [bytes([i]) * 1000 for i in range(20)]}), p,
                   row_group_size=20, compression="none")
    with open(p, "rb") as f:
        batches = list(input_readers.read_parquet(f, str(p), {"id", "b"}))
    assert sum(t.num_rows for t in batches) == 20 and max(t.num_rows for t in batches) <= 4


def _chain_text_read_type(dt: object) -> object:
    """The isinstance chain ``text_read_type`` was before it dispatched on the type visitor, kept
    here as the reference the visitor must match for every type class."""
    from paimon_cli.core.data import types as ty

    if isinstance(dt, (ty.CharType, ty.VarCharType, ty.BinaryType, ty.VarBinaryType, ty.DateType, ty.TimeType,
                       ty.TimestampType, ty.LocalZonedTimestampType)):
        return pa.string()
    if isinstance(dt, ty.DecimalType):
        return pa.decimal128(38, 38 - (dt.precision - dt.scale))
    return None


def test_text_read_type_of_every_type_class_is_the_former_isinstance_chain() -> None:
    from paimon_cli.core.format.input_readers import text_read_type
    from tests.type_instances import EVERY_TYPE, covers_every_type_class, every_type

    assert covers_every_type_class(EVERY_TYPE)
    got = {t.as_sql(): text_read_type(t) for t in every_type()}
    assert got == {t.as_sql(): _chain_text_read_type(t) for t in every_type()}
    assert {str(v) for v in got.values()} >= {"string", "None", "decimal128(38, 18)"}
