"""ORC timestamps outside Arrow's nanosecond range are refused by every ORC read path, never
returned wrapped (pyarrow <= 25 wraps them, 26 raises), whatever the codec, nesting and nulls;
values inside (before 1970 too) read exactly. Java's own files are covered in
tests/interop/test_orc_timestamp_range_java.py."""

from __future__ import annotations

import datetime as dt
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.orc as orc
import pytest

from paimon_cli.core.errors import CorruptMetadata, NotYetSupported
from paimon_cli.core.format import orc_timestamps
from paimon_cli.core.format.orc_format import iter_orc, read_orc
from paimon_cli.core.io import fileio

IN = [dt.datetime(2024, 3, 1, 12, 0, 0, 123000), dt.datetime(1969, 12, 31, 23, 59, 58),
      dt.datetime(1677, 9, 22, 0, 12, 44), dt.datetime(2262, 4, 10, 23, 47, 16), None]
FAR = [(dt.datetime(1500, 6, 1, 8, 30), "1500-06-01T08:30:00.000000000"),
       (dt.datetime(3000, 1, 1, 0, 0, 0, 500000), "3000-01-01T00:00:00.500000000")]
NAMES = ["id", "ts", "tz", "r", "l", "m"]


def _table(values: list[dt.datetime | None]) -> pa.Table:
    ts = pa.array(values, pa.timestamp("us"))
    return pa.table({
        "id": pa.array(range(len(values)), pa.int32()),
        "ts": ts,
        "tz": ts.cast(pa.timestamp("us", tz="UTC")),
        "r": pa.StructArray.from_arrays([ts], ["t"]),
        "l": pa.array([[v, v] for v in values], pa.list_(pa.timestamp("us"))),
        "m": pa.array([[("k", v)] for v in values], pa.map_(pa.string(), pa.timestamp("us"))),
    })


def _write(path: Path, table: pa.Table, codec: str) -> str:
    orc.write_table(table, str(path), compression=codec, stripe_size=1 << 20)
    return str(path)


def _reads(path: str, names: list[str]) -> list[pa.Table]:
    fio = fileio.load_file_io(path)
    return [read_orc(fio, path, names),
            pa.Table.from_batches(list(iter_orc(fio, path, names, 2, lambda b: pa.Table.from_batches([b]))))]


CODECS = ["zstd", "snappy", "lz4", "zlib", "uncompressed"]


@pytest.mark.parametrize("codec", CODECS)
def test_in_range_reads_exactly(tmp_path: Path, codec: str) -> None:
    path = _write(tmp_path / "f.orc", _table(IN), codec)
    want = [None if v is None else (v - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1) * 1000 for v in IN]
    for got in _reads(path, NAMES):
        assert got.column("ts").cast(pa.int64()).to_pylist() == want
        assert got.column("tz").cast(pa.int64()).to_pylist() == want
        assert got.column("r").combine_chunks().field("t").cast(pa.int64()).to_pylist() == want


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize(("far", "text"), FAR)
@pytest.mark.parametrize("where", ["ts", "tz", "r.t", "l.element", "m.value"])
def test_out_of_range_is_refused_by_every_path(tmp_path: Path, codec: str, far: dt.datetime, text: str,
                                               where: str) -> None:
    t = _table(IN)
    rows = t.to_pylist()
    rows[1] = {**rows[1], **{
        "ts": {"ts": far}, "tz": {"tz": far.replace(tzinfo=dt.timezone.utc)}, "r.t": {"r": {"t": far}},
        "l.element": {"l": [None, far]}, "m.value": {"m": [("k", far)]}}[where]}
    path = _write(tmp_path / "f.orc", pa.Table.from_pylist(rows, schema=t.schema), codec)
    fio = fileio.load_file_io(path)
    calls = [lambda: read_orc(fio, path, NAMES), lambda: list(iter_orc(fio, path, NAMES, 2, lambda b: pa.Table.from_batches([b])))]
    for call in calls:
        with pytest.raises(NotYetSupported, match=rf"f\.orc: column {where} holds {text} \(ORC timestamp\)"):
            call()
    # a read of other columns is not refused
    assert read_orc(fio, path, ["id"]).num_rows == len(IN)


def test_without_statistics_check_pyarrow_refusal_is_translated(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """A value the statistics miss (none, or a bound within a day of the range's ends) is left to
    pyarrow 26's own check, whose error is the same one-line refusal naming the column."""
    if not orc_timestamps._pyarrow_checks():
        pytest.fail("this pyarrow wraps ORC timestamps: the test needs pyarrow >= 26")
    t = _table(IN)
    rows = t.to_pylist()
    rows[2] = {**rows[2], "r": {"t": FAR[0][0]}}
    path = _write(tmp_path / "f.orc", pa.Table.from_pylist(rows, schema=t.schema), "zstd")
    fio = fileio.load_file_io(path)
    monkeypatch.setattr(orc_timestamps, "_footer", lambda f, p: ([b"\x08\x0c"], []))  # a struct of no columns
    for call in (lambda: read_orc(fio, path, NAMES), lambda: list(iter_orc(fio, path, NAMES, 2, lambda b: pa.Table.from_batches([b])))):
        with pytest.raises(NotYetSupported, match=r"f\.orc: column r holds 1500-06-01T08:30:00\.000000000 "):
            call()


@pytest.mark.parametrize("edge", [dt.datetime(1677, 9, 21, 12), dt.datetime(2262, 4, 11, 12)])
def test_a_bound_within_a_day_of_the_ends(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, edge: dt.datetime) -> None:
    """Read exactly where pyarrow checks the range itself; refused where it would wrap unseen."""
    path = _write(tmp_path / "f.orc", _table([edge]), "zstd")
    fio = fileio.load_file_io(path)
    if orc_timestamps._pyarrow_checks():
        got = read_orc(fio, path, ["ts"]).column("ts").cast(pa.int64()).to_pylist()
        assert got == [(edge - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1) * 1000]
    monkeypatch.setattr(orc_timestamps, "_pyarrow_checks", lambda: False)
    with pytest.raises(NotYetSupported, match="within a day of the nanosecond range"):
        read_orc(fio, path, ["ts"])
    assert read_orc(fio, path, ["id"]).num_rows == 1


def test_all_null_timestamps_and_files_without_timestamps_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(orc_timestamps, "_pyarrow_checks", lambda: False)
    path = _write(tmp_path / "f.orc", _table([None, None]), "zstd")
    fio = fileio.load_file_io(path)
    assert read_orc(fio, path, NAMES).num_rows == 2
    # no timestamp read: the footer is not looked at
    monkeypatch.setattr(orc_timestamps, "_footer", lambda f, p: pytest.fail("footer parsed"))
    assert read_orc(fio, path, ["id"]).num_rows == 2


def test_a_truncated_footer_is_corrupt(tmp_path: Path) -> None:
    path = tmp_path / "f.orc"
    _write(path, _table(IN), "zstd")
    data = path.read_bytes()
    ps_len = data[-1]
    bad = data[:-1 - ps_len - 5] + data[-1 - ps_len:]  # footer shortened by 5 bytes
    (tmp_path / "g.orc").write_bytes(bad)
    with pytest.raises(CorruptMetadata):
        read_orc(fileio.load_file_io(str(tmp_path / "g.orc")), str(tmp_path / "g.orc"), NAMES)


# -- what is written to ORC -------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["s", "ms", "us", "ns"])
def test_writing_keeps_what_orc_holds_exactly(tmp_path: Path, unit: str) -> None:
    """Before 1970 in whole milliseconds, after 1970 with any fraction, the range's inner ends:
    written and read back exactly by pyarrow (Java's reading of them: the interop tests)."""
    from paimon_cli.core.format.orc_format import orc_physical

    values = [dt.datetime(1960, 1, 1), dt.datetime(1969, 12, 31, 23, 59, 59), dt.datetime(1970, 1, 1, 0, 0, 0, 1000),
              dt.datetime(2024, 3, 1, 12, 0, 0, 123000), dt.datetime(1677, 9, 22, 0, 12, 44), dt.datetime(2262, 4, 10), None]
    if unit == "s":
        values[2:4] = [dt.datetime(1970, 1, 1, 0, 0, 1), dt.datetime(2024, 3, 1, 12)]
    else:
        values += [dt.datetime(1960, 1, 1, 0, 0, 0, 500000), dt.datetime(1969, 12, 31, 23, 59, 59, 999000),
                   dt.datetime(1969, 12, 31, 23, 59, 59, 1000)]
    t = pa.table({"ts": pa.array(values, pa.timestamp(unit))})
    path = tmp_path / "f.orc"
    orc.write_table(orc_physical(t), str(path))
    got = read_orc(fileio.load_file_io(str(path)), str(path), ["ts"]).column("ts").cast(pa.timestamp(unit))
    assert got.to_pylist() == values


@pytest.mark.parametrize(("value", "unit", "text"), [
    (dt.datetime(1960, 1, 1, 0, 0, 0, 123456), "us", "1960-01-01T00:00:00.123456000: pyarrow's ORC writer"),
    (dt.datetime(1969, 12, 31, 23, 59, 59, 999999), "us", "1969-12-31T23:59:59.999999000: pyarrow's ORC writer"),
    (dt.datetime(1960, 1, 1, 0, 0, 0, 1), "ns", "1960-01-01T00:00:00.000001000: pyarrow's ORC writer"),
    (dt.datetime(1500, 6, 1), "ms", "1500-06-01T00:00:00.000000000, outside the nanosecond range"),
    (dt.datetime(3000, 1, 1), "us", "3000-01-01T00:00:00.000000000, outside the nanosecond range"),
    (dt.datetime(1500, 6, 1), "s", "1500-06-01T00:00:00.000000000, outside the nanosecond range"),
])
@pytest.mark.parametrize("where", ["ts", "tz", "r.t", "l.element", "m.value"])
def test_writing_what_orc_would_store_wrong_is_refused(tmp_path: Path, value: dt.datetime, unit: str, text: str,
                                                       where: str) -> None:
    from paimon_cli.core.data.types import DataField, parse_data_type
    from paimon_cli.core.format.data_file import DataFileWriter, write_data_file
    from paimon_cli.core.schema.options import CoreOptions

    ok = dt.datetime(2024, 1, 1)
    rows = [{"id": 0, "ts": ok, "tz": ok, "r": {"t": ok}, "l": [ok], "m": [("k", ok)]} for _ in range(3)]
    rows[2] = {**rows[2], **{"ts": {"ts": value}, "tz": {"tz": value}, "r.t": {"r": {"t": value}},
                             "l.element": {"l": [None, value]}, "m.value": {"m": [("a", ok), ("k", value)]}}[where]}
    typ = {"s": pa.timestamp("s"), "ms": pa.timestamp("ms"), "us": pa.timestamp("us"), "ns": pa.timestamp("ns")}[unit]
    schema = pa.schema([("id", pa.int32()), ("ts", typ), ("tz", pa.timestamp(typ.unit, tz="UTC")),
                        ("r", pa.struct([("t", typ)])), ("l", pa.list_(typ)), ("m", pa.map_(pa.string(), typ))])
    t = pa.Table.from_pylist([{**r, "tz": r["tz"].replace(tzinfo=dt.timezone.utc)} for r in rows], schema=schema)
    p = {"s": 0, "ms": 3, "us": 6, "ns": 9}[unit]
    fields = [DataField(i, n, parse_data_type(s)) for i, (n, s) in enumerate([
        ("id", "INT"), ("ts", f"TIMESTAMP({p})"), ("tz", f"TIMESTAMP({p}) WITH LOCAL TIME ZONE"),
        ("r", f"ROW<t TIMESTAMP({p})>"), ("l", f"ARRAY<TIMESTAMP({p})>"), ("m", f"MAP<STRING, TIMESTAMP({p})>")])]
    fio = fileio.load_file_io(str(tmp_path))
    with pytest.raises(NotYetSupported, match=rf"column {where} holds {re.escape(text)}"):
        write_data_file(fio, str(tmp_path / "a.orc"), t, fields, "orc", CoreOptions({}))
    w = DataFileWriter(fio, str(tmp_path / "b.orc"), fields, "orc", CoreOptions({}))
    with pytest.raises(NotYetSupported, match=rf"column {where} holds {re.escape(text)}"):
        w.write(t)
    w.abort()
    assert not list(tmp_path.iterdir())
    # the rows without it (a slice) are written
    assert write_data_file(fio, str(tmp_path / "c.orc"), t.slice(0, 2), fields, "orc", CoreOptions({})) > 0


def test_a_value_under_a_null_row_is_not_written_so_not_refused(tmp_path: Path) -> None:
    from paimon_cli.core.format.orc_format import orc_physical

    child = pa.array([dt.datetime(1960, 1, 1, 0, 0, 0, 123456), dt.datetime(2024, 1, 1)], pa.timestamp("us"))
    r = pa.StructArray.from_arrays([child], ["t"], mask=pa.array([True, False]))
    path = tmp_path / "f.orc"
    orc.write_table(orc_physical(pa.table({"r": r})), str(path))
    got = read_orc(fileio.load_file_io(str(path)), str(path), ["r"]).column("r").to_pylist()
    assert got == [None, {"t": dt.datetime(2024, 1, 1)}]


def _zz(n: int) -> int:
    return (n << 1) ^ (n >> 63)


@pytest.mark.parametrize("fields", [(3, 4), (1, 2)], ids=["utc", "local-only"])
def test_statistics_of_older_writers(monkeypatch: pytest.MonkeyPatch, fields: tuple[int, int]) -> None:
    """Writers before ORC-135 give only the local minimum / maximum: used the same way; none at
    all is refused where pyarrow would wrap unseen."""
    monkeypatch.setattr(orc_timestamps, "_pyarrow_checks", lambda: False)
    lo, hi = fields
    far = (dt.datetime(1500, 6, 1) - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)
    ok = (dt.datetime(2024, 1, 1) - dt.datetime(1970, 1, 1)) // dt.timedelta(milliseconds=1)
    orc_timestamps._check_column("f.orc", "ts", {1: 2, 9: {lo: _zz(ok), hi: _zz(ok)}}, "why")
    with pytest.raises(NotYetSupported, match=r"f\.orc: column ts holds 1500-06-01T00:00:00\.000000000 \(ORC"):
        orc_timestamps._check_column("f.orc", "ts", {1: 2, 9: {lo: _zz(far), hi: _zz(ok)}}, "why")
    with pytest.raises(NotYetSupported, match="without statistics"):
        orc_timestamps._check_column("f.orc", "ts", {1: 2}, "why")
    orc_timestamps._check_column("f.orc", "ts", {1: 0}, "why")  # nulls only
