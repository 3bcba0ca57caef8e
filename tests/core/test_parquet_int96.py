"""INT96 values outside Arrow's nanosecond range are refused by every Parquet read path, never
returned wrapped, whatever the codec, page version, encoding, nesting and nulls; values inside
(before 1970 too) read exactly. Java's own encoding (negative nanoseconds of the day) is covered
with files Java 0.9 writes in tests/interop/test_int96_range_java.py."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.format.parquet_format import (
    iter_parquet,
    parquet_metadata,
    read_parquet,
    read_parquet_row_group,
)
from paimon_cli.core.io import fileio

IN = [dt.datetime(2024, 3, 1, 12, 0, 0, 123000), dt.datetime(1969, 12, 31, 23, 59, 59, 1000),
      dt.datetime(1677, 9, 21, 0, 12, 44), dt.datetime(2262, 4, 11, 23, 47, 16), None]
FAR = dt.datetime(1500, 6, 1, 8, 30, 0, 5000)


def _table(values: list[dt.datetime | None]) -> pa.Table:
    ts = pa.array(values, pa.timestamp("ms"))
    return pa.table({
        "id": pa.array(range(len(values)), pa.int32()),
        "ts": ts,
        "r": pa.StructArray.from_arrays([ts], ["t"]),
        "l": pa.array([[v, v] for v in values], pa.list_(pa.timestamp("ms"))),
        "m": pa.array([[("k", v)] for v in values], pa.map_(pa.string(), pa.timestamp("ms"))),
    })


def _write(path: Path, table: pa.Table, codec: str, page: str, dictionary: bool) -> str:
    pq.write_table(table, path, use_deprecated_int96_timestamps=True, compression=codec,
                   data_page_version=page, use_dictionary=dictionary, row_group_size=3)
    assert pq.ParquetFile(path).metadata.schema.column(1).physical_type == "INT96"
    return str(path)


def _reads(path: str) -> list[pa.Table]:
    fio = fileio.load_file_io(path)
    names = ["id", "ts", "r", "l", "m"]
    md = parquet_metadata(fio, path)
    return [read_parquet(fio, path, names),
            pa.Table.from_batches(list(iter_parquet(fio, path, names, 2, True, lambda b: pa.Table.from_batches([b])))),
            pa.concat_tables([read_parquet_row_group(fio, path, md, i, names) for i in range(md.num_row_groups)])]


CASES = [(c, p, d) for c in ("zstd", "snappy", "gzip", "lz4", "none") for p in ("1.0", "2.0") for d in (True, False)]


@pytest.mark.parametrize(("codec", "page", "dictionary"), CASES)
def test_in_range_reads_exactly(tmp_path: Path, codec: str, page: str, dictionary: bool) -> None:
    path = _write(tmp_path / "f.parquet", _table(IN), codec, page, dictionary)
    want = [None if v is None else (v - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1) * 1000 for v in IN]
    for got in _reads(path):
        assert got.column("ts").cast(pa.int64()).to_pylist() == want
        assert got.column("r").combine_chunks().field("t").cast(pa.int64()).to_pylist() == want


@pytest.mark.parametrize(("codec", "page", "dictionary"), CASES)
@pytest.mark.parametrize("where", ["ts", "r.t", "l.list.element", "m.key_value.value"])
def test_out_of_range_is_refused_by_every_path(tmp_path: Path, codec: str, page: str, dictionary: bool,
                                               where: str) -> None:
    t = _table(IN)
    rows = t.to_pylist()
    rows[1] = {**rows[1], **{
        "ts": {"ts": FAR}, "r.t": {"r": {"t": FAR}}, "l.list.element": {"l": [None, FAR]},
        "m.key_value.value": {"m": [("k", FAR)]}}[where]}
    path = _write(tmp_path / "f.parquet", pa.Table.from_pylist(rows, schema=t.schema), codec, page, dictionary)
    fio = fileio.load_file_io(path)
    md = parquet_metadata(fio, path)
    calls = [lambda: read_parquet(fio, path, ["id", "ts", "r", "l", "m"]),
             lambda: list(iter_parquet(fio, path, ["id", "ts", "r", "l", "m"], 2, False,
                                       lambda b: pa.Table.from_batches([b]))),
             lambda: read_parquet_row_group(fio, path, md, 0, ["id", "ts", "r", "l", "m"])]
    for call in calls:
        with pytest.raises(NotYetSupported, match=rf"f\.parquet: column {where} holds 1500-06-01T08:30:00\.005000000 "):
            call()
    # a read of other columns, or of a row group without the value, is not refused
    assert read_parquet(fio, path, ["id"]).num_rows == len(IN)
    assert read_parquet_row_group(fio, path, md, 1, ["id", "ts", "r", "l", "m"]).num_rows == len(IN) - 3


@pytest.mark.parametrize(("name", "text"), [("a.csv", "id,ts\n1,1500-01-01 00:00:00\n"),
                                            ("a.json", '{"id": 1, "ts": "2500-01-01T00:00:00"}\n')])
def test_writing_a_value_nanoseconds_cannot_hold_is_refused(tmp_path: Path, name: str, text: str) -> None:
    """What we write for TIMESTAMP(7..9) passes through nanoseconds: a value outside is refused
    with its row (exit 4), never wrapped into the INT96 we write, and nothing is committed."""
    from typer.testing import CliRunner

    from paimon_cli.app import app

    wh = str(tmp_path / "wh")
    run = CliRunner().invoke
    assert run(app, ["create", "db.t", "--schema", "id INT, ts TIMESTAMP(9)", "-w", wh]).exit_code == 0
    (tmp_path / name).write_text(text)
    res = run(app, ["write", "db.t", str(tmp_path / name), "-w", wh])
    assert res.exit_code == 4 and "row 1, column 'ts'" in res.stderr and "TIMESTAMP(9)" in res.stderr, res.stderr
    assert not (tmp_path / "wh" / "db.db" / "t" / "snapshot").exists() or \
        not list((tmp_path / "wh" / "db.db" / "t" / "snapshot").glob("snapshot-*"))


def test_a_where_literal_nanoseconds_cannot_hold_is_invalid_input(tmp_path: Path) -> None:
    """Was a raw OverflowError (exit 1); a TIMESTAMP(6) column still takes such a literal."""
    from typer.testing import CliRunner

    from paimon_cli.app import app

    wh = str(tmp_path / "wh")
    run = CliRunner().invoke
    assert run(app, ["create", "db.t", "--schema", "id INT, ts TIMESTAMP(9), us TIMESTAMP(6)", "-w", wh]).exit_code == 0
    (tmp_path / "a.csv").write_text("id,ts,us\n1,2024-01-01 00:00:00.123456789,2024-01-01 00:00:00\n")
    assert run(app, ["write", "db.t", str(tmp_path / "a.csv"), "-w", wh]).exit_code == 0
    for literal in ("1500-01-01 00:00:00", "2500-01-01"):
        res = run(app, ["read", "db.t", "--where", f"ts > '{literal}'", "-w", wh])
        lines = res.stderr.splitlines()
        assert res.exit_code == 4 and len(lines) == 1 and "outside 1677-09-21..2262-04-11" in lines[0], res.stderr
    res = run(app, ["read", "db.t", "--where", "us > '1500-01-01 00:00:00'", "-w", wh, "-o", "json"])
    assert res.exit_code == 0 and '"id": 1' in res.stdout.replace('"id":1', '"id": 1'), res.stdout + res.stderr
