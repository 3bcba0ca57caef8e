"""``inspect files`` renders column chunks (keys and stats decoded a column at a time, JSON
records and csv/table cells made vectorised): the text of every format is byte for byte what
the row-by-row path prints, and what it printed before the columnar path existed.

Tables (generated here): a primary-key table partitioned by DATE, DECIMAL, STRING and INT
(a string with quotes, backslash, comma; one with a newline, tab and non-ASCII), value
stats of every primitive type (NaN, infinities, -0.0, a non-compact decimal and timestamp,
binary, strings that need escaping), a schema change and a compaction; an append table with
the same types and NULL partitions and a renamed column; a small append table.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import hashlib
import io
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.output import _utf8_bytes_layer, render_stream

COLUMNS = ("k INT NOT NULL, p_date DATE, p_dec DECIMAL(10, 2), p_str STRING, p_int INT, b BOOLEAN, t TINYINT, "
           "s SMALLINT, big BIGINT, f FLOAT, d DOUBLE, dec DECIMAL(6, 2), wide DECIMAL(25, 5), day DATE, "
           "ts TIMESTAMP(3), ts6 TIMESTAMP(6), txt STRING, bin BYTES")
ARROW = pa.schema([("k", pa.int32()), ("p_date", pa.date32()), ("p_dec", pa.decimal128(10, 2)),
                   ("p_str", pa.string()), ("p_int", pa.int32()), ("b", pa.bool_()), ("t", pa.int8()),
                   ("s", pa.int16()), ("big", pa.int64()), ("f", pa.float32()), ("d", pa.float64()),
                   ("dec", pa.decimal128(6, 2)), ("wide", pa.decimal128(25, 5)), ("day", pa.date32()),
                   ("ts", pa.timestamp("ms")), ("ts6", pa.timestamp("us")), ("txt", pa.string()),
                   ("bin", pa.binary())])
PARTITIONS = [(dt.date(2024, 5, 1), decimal.Decimal("1.50"), 'a"b\\c,d', 1),
              (dt.date(2024, 5, 2), decimal.Decimal("99999999.99"), "x y", 2**31 - 1),
              (dt.date(1999, 12, 31), decimal.Decimal("-0.01"), "line\nbreak\t\u00e9\u4e2d", -7),
              (dt.date(2024, 5, 1), decimal.Decimal("0.00"), "", 0)]
# every column but the file path (a temp dir, random file names), size and creation time
FIXED = ("partition,bucket,file_format,schema_id,level,record_count,min_key,max_key,null_value_counts,"
         "min_value_stats,max_value_stats,min_sequence_number,max_sequence_number,deleteRowCount,file_source,"
         "first_row_id,write_cols")
FORMATS = ["json", "jsonl", "csv", "table"]


def _rows(write: int) -> list[dict[str, object]]:
    rows = []
    for j, (p_date, p_dec, p_str, p_int) in enumerate(PARTITIONS):
        for r in range(3):
            k = write * 100 + j * 10 + r
            rows.append({
                "k": k, "p_date": p_date, "p_dec": p_dec, "p_str": p_str, "p_int": p_int,
                "b": [True, False, None][r], "t": [-128, 127, None][r], "s": [r, -r, 30000][r],
                "big": [2**62, -2**63, k][r],
                "f": [0.1, float("nan"), 3.0][r] if write else [1.5, -0.0, None][r],
                "d": [1e-05, 1e20, float("inf")][r] if write == 1 else [k / 3, -0.0, None][r],
                "dec": decimal.Decimal(f"{k}.25"),
                "wide": decimal.Decimal("12345678901234567890.12345") if r else None,
                "day": dt.date(1970, 1, 1) + dt.timedelta(days=k * 37),
                "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 678000) if r else None,
                "ts6": dt.datetime(2001, 2, 3, 4, 5, 6, 123456),
                "txt": ['q"uote', "back\\slash", "nl\nx"][r] + str(k), "bin": bytes([k % 256, 0, 255])})
    return rows


def build(root: str) -> Warehouse:
    w = Warehouse(root)
    not_null = COLUMNS
    for c in ("p_date DATE", "p_dec DECIMAL(10, 2)", "p_str STRING", "p_int INT"):
        not_null = not_null.replace(c + ",", c + " NOT NULL,")
    pk = w.create_table("db.types", not_null, primary_key="k,p_date,p_dec,p_str,p_int",
                        partition_by="p_date,p_dec,p_str,p_int", options={"bucket": "2"})
    nulls = w.create_table("db.nulls", COLUMNS, partition_by="p_date,p_dec,p_str,p_int")
    for i in range(3):
        rows = _rows(i)
        pk.write(pa.Table.from_pylist(rows, ARROW))
        for row in rows[3:6]:  # NULL partition values
            row.update(p_date=None, p_dec=None, p_str=None, p_int=None)
        nulls.write(pa.Table.from_pylist(rows, ARROW))
    pk.alter(add_columns="extra STRING")
    pk.write(pa.table({"k": pa.array([999], pa.int32()), "p_date": pa.array([PARTITIONS[0][0]], pa.date32()),
                       "p_dec": pa.array([PARTITIONS[0][1]], pa.decimal128(10, 2)), "p_str": [PARTITIONS[0][2]],
                       "p_int": pa.array([1], pa.int32()), "extra": ["new"]}))
    pk.compact()
    nulls.alter(add_columns="extra STRING", rename_columns={"txt": "text"})
    nulls.write(pa.table({"k": pa.array([999], pa.int32()), "p_date": pa.array([None], pa.date32()),
                          "extra": ["new"], "text": ["t"]}))
    log = w.create_table("db.log", "id BIGINT, dt STRING, v DOUBLE", partition_by="dt")
    log.write(pa.table({"id": pa.array([1, 2], pa.int64()), "dt": ["x", None], "v": [0.5, None]}))
    log.write(pa.table({"id": pa.array([3], pa.int64()), "dt": ["x"], "v": [2.0]}))
    # files list their stats columns (stats mode none); two such lists in one merged manifest
    dense = w.create_table("db.dense", "id BIGINT, dt STRING, v DOUBLE, w STRING", partition_by="dt",
                           options={"fields.v.stats-mode": "none", "manifest.merge-min-count": "2"})
    dense.write(pa.table({"id": pa.array([1, 2], pa.int64()), "dt": ["x", "y"], "v": [0.5, None], "w": ["a", "b"]}))
    dense.alter(set_options={"fields.w.stats-mode": "none"})
    dense.write(pa.table({"id": pa.array([3], pa.int64()), "dt": ["x"], "v": [2.0], "w": ["c"]}))
    dense.write(pa.table({"id": pa.array([4], pa.int64()), "dt": ["y"], "v": [1.0], "w": ["d"]}))
    return w


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    return build(str(tmp_path_factory.mktemp("files_output") / "wh"))


def rendered(w: Warehouse, name: str, fmt: str, *, columns: str | None = None, limit: int | None = None,
             row_path: bool = False) -> str:
    """``inspect files`` as the CLI prints it to a pipe; ``row_path``: without column chunks."""
    stream = w.table(name).inspect_stream("files")
    if row_path:
        stream = dataclasses.replace(stream, column_chunks=None)
    out, saved = io.StringIO(), sys.stdout
    sys.stdout = out
    try:
        render_stream(stream, fmt, limit=limit, columns=columns)
    finally:
        sys.stdout = saved
    return out.getvalue()


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["db.types", "db.nulls", "db.log", "db.dense"])
def test_column_chunks_print_what_rows_print(wh: Warehouse, name: str, fmt: str) -> None:
    for columns in (None, "max_key,partition,min_value_stats", "creation_time,write_cols,null_value_counts"):
        for limit in (None, 0, 1, 7):
            got = rendered(wh, name, fmt, columns=columns, limit=limit)
            assert got == rendered(wh, name, fmt, columns=columns, limit=limit, row_path=True), (columns, limit)


# sha256 of the text paimon-cli printed for these tables before column chunks (commit 9b0682d)
EXPECTED = {
    "db.types json": "3b85d4e40a32709bccd4247c0b7d6122be12159bb949987526f3205c74f897b6",
    "db.types jsonl": "029a8a64c6f612d2b1d18fe5008de9a48b31c55c39f4b5be9cc9b13c7dbd1abd",
    "db.types csv": "922f49c66cc023ca4a806bf69330e60e22637485e1f1edfb24ae16280ffc1eba",
    "db.types table": "e2eed9fbe8ea961459552e2736f463ff173b6b1d15ef9f5cb4c8568a7d920219",
    "db.nulls json": "f42277d5ee713ba643056266252956d9c810652f54c21f0e0a36409ad067036b",
    "db.nulls jsonl": "8a1ed749f6c123b3b733d1e9a1e563e93683ca1be776f73649bc460bb3c6dba6",
    "db.nulls csv": "87fe1f95dfdafd9018f2f35a5faaa2e94049f18b20512d6622b49c4a315db5ef",
    "db.nulls table": "db4eeb7f2063fc50a58d5dea1f3b7fd40c5757d107effde3efb228b431467096",
    "db.log json": "52ccd19123d60048ea984c8a08565a767a2915eeb85f8402368e4825450f2700",
    "db.log jsonl": "49500e710844b4a91270b5b629eedfacfcaa472488e320b10f5cc5a9de45737d",
    "db.log csv": "77dd7c42fda318fe0bb58c18e81c99d9397e02116d15cbae2388fe45dbf147ec",
    "db.log table": "e2647f84f9461bc8e6007d083cd98fd4000c54c9f923fe93c63700a82330d2d1",
    "db.dense json": "c2f8dadd05ce66089bf85ee8abba622806a18c5715446aa60752374da79700a2",
    "db.dense jsonl": "ed2243a2d3d58f33887057f1be83aa2f9509afeec1cb115bbe533658c9482e62",
    "db.dense csv": "e4606b75b2936d09bc186fdf0a1e828f3a22e158932db7832abe5c7ca61c0d9b",
    "db.dense table": "be2fe0a3b623e653b59b071c61849659a54038b4d8da5b906bbfa09578064afd",
}


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["db.types", "db.nulls", "db.log", "db.dense"])
def test_text_is_what_it_was(wh: Warehouse, name: str, fmt: str) -> None:
    text = rendered(wh, name, fmt, columns=FIXED)
    assert hashlib.sha256(text.encode()).hexdigest() == EXPECTED[f"{name} {fmt}"], text


def test_the_text_shows_the_hard_values(wh: Warehouse) -> None:
    """What the digests stand for, spelled out for a few values."""
    jsonl = rendered(wh, "db.nulls", "jsonl", columns="partition,min_value_stats")
    assert '{"partition":{"p_date":null,"p_dec":null,"p_str":null,"p_int":null}' in jsonl
    assert '"p_str":"line\\nbreak\\t\u00e9\u4e2d"' in jsonl
    assert '"p_dec":"-0.01"' in jsonl and '"p_date":"1999-12-31"' in jsonl
    stats = rendered(wh, "db.nulls", "jsonl", columns="min_value_stats,max_value_stats")
    for value in ('"d":"Infinity"', '"d":1e-05', '"d":-0.0', '"wide":"12345678901234567890.12345"',
                  '"ts6":"2001-02-03T04:05:06.123456"', '"text":"back\\\\slash1"'):
        assert value in stats
    csv = rendered(wh, "db.types", "csv", columns="partition,min_key")
    assert '"[19844, 1.50, a""b\\c,d, 1]"' in csv


class _ClosedAfterFirstWrite(io.StringIO):
    def write(self, s: str) -> int:
        if self.getvalue():
            raise BrokenPipeError
        return super().write(s)


@pytest.mark.parametrize("fmt", FORMATS)
def test_column_chunks_stop_at_the_limit_and_at_a_closed_pipe(wh: Warehouse, fmt: str,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    stream = wh.table("db.nulls").inspect_stream("files")
    real = stream.column_chunks
    assert real is not None
    served: list[int] = []
    closed: list[bool] = []

    def column_chunks(columns: list[str], typed: bool, merge: bool = False) -> Iterator[dict[str, Any]]:
        try:
            for chunk in real(columns, typed, merge):
                served.append(1)
                yield chunk
        finally:
            closed.append(True)

    counted = dataclasses.replace(stream, column_chunks=column_chunks)
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    render_stream(counted, fmt, limit=1)
    assert served == [1] and closed == [True]  # the first manifest's chunk only
    served.clear()
    closed.clear()
    render_stream(counted, fmt, limit=0)
    assert served == []
    if fmt == "table":
        return  # a piped table holds its first 1000 rows to set the widths
    closed.clear()
    monkeypatch.setattr(sys, "stdout", _ClosedAfterFirstWrite())
    with pytest.raises(BrokenPipeError):
        render_stream(counted, fmt)
    # jsonl: the first chunk printed, the second failed; json and csv: their opening went first
    assert len(served) == (2 if fmt == "jsonl" else 1) and closed == [True]


def test_json_and_csv_take_merged_chunks_a_piped_table_one_per_manifest(wh: Warehouse,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """json, jsonl and csv ask for merged chunks (fewer, larger Arrow calls; their text does not
    depend on where a chunk ends): consecutive manifests of one layout share a chunk, the
    manifest written after a schema change keeps its own. A piped table widens its columns
    where a chunk starts, so it keeps one chunk per manifest."""
    from paimon_cli.output import _column_length

    stream = wh.table("db.types").inspect_stream("files")
    real = stream.column_chunks
    assert real is not None
    cols = list(stream.columns)
    for typed in (False, True):
        apart = [_column_length(c["bucket"]) for c in real(cols, typed)]
        merged = [_column_length(c["bucket"]) for c in real(cols, typed, True)]
        assert sum(merged) == sum(apart) and len(merged) < len(apart) and merged[-1] == apart[-1] == 1
    asked: list[bool] = []

    def column_chunks(columns: list[str], typed: bool, merge: bool = False) -> Iterator[dict[str, Any]]:
        asked.append(merge)
        return real(columns, typed, merge)

    monkeypatch.setattr(sys, "stdout", io.StringIO())
    for fmt in FORMATS:
        render_stream(dataclasses.replace(stream, column_chunks=column_chunks), fmt)
    assert asked == [True, True, True, False]


@pytest.mark.parametrize("fmt", ["json", "jsonl"])
def test_records_reach_the_byte_layer_as_the_text_layer_writes_them(wh: Warehouse, fmt: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """JSON records go to stdout's bytes when its text layer would write the same bytes
    (UTF-8, no newline translation); another encoding gets the text."""
    text = rendered(wh, "db.nulls", fmt)  # a StringIO has no byte layer
    assert "\u00e9\u4e2d" in text  # non-ASCII: its bytes differ between the encodings below
    for encoding in ("utf-8", "UTF8", "utf-16"):
        raw = io.BytesIO()
        out = io.TextIOWrapper(raw, encoding=encoding)
        assert (_utf8_bytes_layer(out) is raw) == (encoding != "utf-16")
        monkeypatch.setattr(sys, "stdout", out)
        render_stream(wh.table("db.nulls").inspect_stream("files"), fmt)
        out.flush()
        assert raw.getvalue().decode(encoding) == text


def main(root: str) -> None:
    """Print EXPECTED for the code checked out (``python -m tests.cli.test_inspect_files_output DIR``)."""
    w = build(root)
    for name in ("db.types", "db.nulls", "db.log", "db.dense"):
        for fmt in FORMATS:
            text = rendered(w, name, fmt, columns=FIXED)
            print(f'    "{name} {fmt}": "{hashlib.sha256(text.encode()).hexdigest()}",')


if __name__ == "__main__":
    main(str(Path(sys.argv[1])))
