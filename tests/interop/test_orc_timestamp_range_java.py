"""ORC stores TIMESTAMP / TIMESTAMP_LTZ as seconds and nanoseconds, so Java Paimon keeps any year
at any precision; pyarrow's ORC reader returns int64 nanoseconds (1677-09-21..2262-04-11) and
wraps beyond them up to pyarrow 25 (26 raises). Every reader of a data file (read, read --to,
the API, compaction) either returns the exact value or refuses with one line naming the file,
the column and the value (exit 1, as a Parquet INT96 value outside), and nothing is written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse
from paimon_cli.core.errors import NotYetSupported
from tests.interop.java_harness import JavaPaimon

from .cli_runner import CLI_ENV, one_line_error

pytestmark = pytest.mark.java

COLS = [("id", "INT NOT NULL"), ("t3", "TIMESTAMP(3)"), ("t6", "TIMESTAMP(6)"), ("t9", "TIMESTAMP(9)"),
        ("l3", "TIMESTAMP_LTZ(3)"), ("l6", "TIMESTAMP_LTZ(6)"), ("r", "ROW<t TIMESTAMP(6)>")]
STAMPS = ["t3", "t6", "t9", "l3", "l6"]
IN_RANGE = ["2024-03-01T12:00:00.123", "1969-12-31T23:59:58.999", "1677-09-22T00:12:44", "2262-04-10T00:00:00"]
# (ORC cannot hold a time in the last second before 1970: Java and pyarrow both read
# 1969-12-31T23:59:59.999 back as 1970-01-01T00:00:00.999, ORC-763)
# Java writes 1500-06-01 through java.sql.Timestamp (Julian calendar before 1582) and reads the
# proleptic Gregorian 1500-06-11 back: that is the value in the file
FAR = [("1500-06-01T08:30:00.123", "1500-06-11T08:30:00.123000000"),
       ("3000-01-01T00:00:00.5", "3000-01-01T00:00:00.500000000")]


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


def _row(i: int, value: str, where: str | None = None) -> dict[str, object]:
    """Every timestamp column holds ``value``, or only column ``where`` (the others in range)."""
    row: dict[str, object] = {"id": i}
    for c in [*STAMPS, "r"]:
        v = value if where in (None, c) else IN_RANGE[0]
        row[c] = {"t": v} if c == "r" else v
    return row


def _java_table(java: JavaPaimon, wh: Path, name: str, rows: list[dict[str, object]]) -> None:
    java.create_table(wh, "db", name, COLS, [], [], {"file.format": "orc", "bucket": "-1"})
    for row in rows:  # one file each
        java.write(wh, "db", name, [row])


def _cli(wh: Path, *args: str) -> object:
    return CliRunner().invoke(app, [*args, "-w", str(wh)])


def _one_line_refusal(res: object, column: str, value: str) -> str:
    line = one_line_error(res, 1)
    assert ".orc: column " + column + " holds " + value + " (ORC timestamp)" in line, line
    assert "1677-09-21" in line and "2262-04-11" in line and "bucket-0" in line, line
    return line


def _ns(text: str) -> int:
    whole, _, frac = text.partition(".")
    secs = (dt.datetime.fromisoformat(whole) - dt.datetime(1970, 1, 1)) // dt.timedelta(seconds=1)
    return secs * 1_000_000_000 + int((frac + "000000000")[:9])


def test_orc_timestamps_in_range_read_exactly(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _java_table(java_paimon, wh, "ok", [_row(i, v) for i, v in enumerate(IN_RANGE)])
    out = tmp_path / "out.parquet"
    res = _cli(wh, "read", "db.ok", "--to", str(out))
    assert res.exit_code == 0, res.stdout + res.stderr
    got = pq.read_table(out).sort_by("id")
    want = [_ns(v) for v in IN_RANGE]
    for c in STAMPS:
        unit = got.column(c).type.unit
        per = {"ms": 1_000_000, "us": 1_000, "ns": 1}[unit]
        assert [v * per for v in got.column(c).cast(pa.int64()).to_pylist()] == want, c
    api = Warehouse(str(wh)).table("db.ok").read().sort_by("id")
    assert api.column("l6").type == pa.timestamp("us", tz="UTC")
    assert [v * 1000 for v in api.column("l6").cast(pa.int64()).to_pylist()] == want


@pytest.mark.parametrize(("bad", "stored"), FAR)
def test_orc_timestamps_outside_are_refused_never_wrapped(
    java_paimon: JavaPaimon, tmp_path: Path, bad: str, stored: str
) -> None:
    wh = tmp_path / "wh"
    _java_table(java_paimon, wh, "far", [_row(0, IN_RANGE[0]), _row(1, bad)])
    _one_line_refusal(_cli(wh, "read", "db.far"), "t3", stored)
    out = tmp_path / "out.parquet"
    _one_line_refusal(_cli(wh, "read", "db.far", "--to", str(out)), "t3", stored)
    assert not out.exists()
    with pytest.raises(NotYetSupported, match=r"\.orc: column t3 holds "):
        Warehouse(str(wh)).table("db.far").read()
    # a read of columns without the value is not refused
    res = _cli(wh, "read", "db.far", "--select", "id", "-o", "json")
    assert res.exit_code == 0 and res.stdout.count('"id"') == 2, res.stdout + res.stderr
    for where in [*STAMPS, "r"]:  # each column alone (LTZ, nested) is refused, naming it
        name = f"far_{where}"
        _java_table(java_paimon, wh, name, [_row(0, IN_RANGE[0]), _row(1, bad, where)])
        _one_line_refusal(_cli(wh, "read", f"db.{name}"), "r.t" if where == "r" else where, stored)

    # compaction reads every file: it refuses and writes nothing; Java still reads the values
    before = sorted(p.name for p in (wh / "db.db" / "far").rglob("*") if p.is_file())
    _one_line_refusal(_cli(wh, "compact", "db.far", "--full"), "t3", stored)
    assert sorted(p.name for p in (wh / "db.db" / "far").rglob("*") if p.is_file()) == before
    rows = sorted(java_paimon.read_raw(wh, "db", "far")["rows"], key=lambda r: r[0])
    assert [_ns(r[1]) for r in rows] == [_ns(IN_RANGE[0]), _ns(stored)]


# -- what we write into ORC -------------------------------------------------------------------
# pyarrow's ORC writer splits a timestamp into seconds and nanoseconds by truncating: a time
# before 1970 with a fraction of a second gets negative nanoseconds. Java reads them while they
# are whole milliseconds; with a fraction of a millisecond Java Paimon fails on the whole file
# (IllegalArgumentException). Such a value is refused, never written.
PRE_1970_FRACTION = "1960-01-01T00:00:00.123456"
WRITABLE = ["2024-03-01T12:00:00.123", "1960-01-01T00:00:00", "1960-01-01T00:00:00.5", "1969-12-31T23:59:58.001",
            "1677-09-22T00:12:44", "2262-04-10T00:00:00.999"]


def _files(wh: Path, name: str) -> list[str]:
    return sorted(str(p.relative_to(wh)) for p in (wh / "db.db" / name).rglob("*") if p.is_file())


def test_compaction_rewrites_orc_timestamps_java_reads_exactly(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _java_table(java_paimon, wh, "ok", [_row(i, v) for i, v in enumerate(WRITABLE)])
    before = java_paimon.read_raw(wh, "db", "ok")["rows"]
    res = _cli(wh, "compact", "db.ok", "--full")
    assert res.exit_code == 0, res.stdout + res.stderr
    assert len([f for f in _files(wh, "ok") if f.endswith(".orc")]) == len(WRITABLE) + 1
    after = java_paimon.read_raw(wh, "db", "ok")["rows"]
    key = lambda r: r[0]  # noqa: E731
    assert [[_ns(v) if isinstance(v, str) else v for v in r[:6]] for r in sorted(after, key=key)] == \
        [[_ns(v) if isinstance(v, str) else v for v in r[:6]] for r in sorted(before, key=key)]
    assert [_ns(r[1]) for r in sorted(after, key=key)] == [_ns(v) for v in WRITABLE]


def test_compaction_refuses_a_pre_1970_fraction_it_would_write_unreadable(
    java_paimon: JavaPaimon, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    _java_table(java_paimon, wh, "frac", [_row(0, IN_RANGE[0]), _row(1, PRE_1970_FRACTION, "l6")])
    # we read Java's file exactly
    res = _cli(wh, "read", "db.frac", "-o", "json")
    assert res.exit_code == 0 and "1960-01-01 00:00:00.123456" in res.stdout, res.stdout + res.stderr
    before = _files(wh, "frac")
    res = _cli(wh, "compact", "db.frac", "--full")
    out = res.stdout + res.stderr
    assert res.exit_code == 1 and "Traceback" not in out, out
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "column l6 holds 1960-01-01T00:00:00.123456000: pyarrow's ORC writer" in lines[0], out
    assert _files(wh, "frac") == before
    rows = sorted(java_paimon.read_raw(wh, "db", "frac")["rows"], key=lambda r: r[0])
    assert [_ns(r[5]) for r in rows] == [_ns(IN_RANGE[0]), _ns(PRE_1970_FRACTION)]


@pytest.mark.parametrize(("value", "message"), [
    ("1960-01-01 00:00:00.123456", "column t6 holds 1960-01-01T00:00:00.123456000: pyarrow's ORC writer"),
    ("1969-12-31 23:59:59.999999", "column t6 holds 1969-12-31T23:59:59.999999000: pyarrow's ORC writer"),
    ("1500-06-01 00:00:00", "column t6 holds 1500-06-01T00:00:00.000000000, outside the nanosecond range"),
    ("3000-01-01 00:00:00.5", "column t6 holds 3000-01-01T00:00:00.500000000, outside the nanosecond range"),
])
def test_write_into_orc_never_writes_a_timestamp_wrong(
    java_paimon: JavaPaimon, tmp_path: Path, value: str, message: str
) -> None:
    wh = tmp_path / "wh"
    java_paimon.create_table(wh, "db", "w", [("id", "INT"), ("t6", "TIMESTAMP(6)"), ("l3", "TIMESTAMP_LTZ(3)")],
                             [], [], {"file.format": "orc", "bucket": "-1"})
    good = tmp_path / "good.csv"
    good.write_text("id,t6,l3\n" + "".join(f"{i},{v.replace('T', ' ')},{v.replace('T', ' ')}\n"
                                           for i, v in enumerate(WRITABLE)))
    res = _cli(wh, "write", "db.w", str(good))
    assert res.exit_code == 0, res.stdout + res.stderr
    rows = sorted(java_paimon.read_raw(wh, "db", "w")["rows"], key=lambda r: r[0])
    assert [_ns(r[1]) for r in rows] == [_ns(v) for v in WRITABLE]
    assert [_ns(r[2]) for r in rows] == [_ns(v) for v in WRITABLE]
    before = _files(wh, "w")
    bad = tmp_path / "bad.csv"
    bad.write_text(f"id,t6,l3\n9,2024-01-01 00:00:00,2024-01-01 00:00:00\n10,{value},2024-01-01 00:00:00\n")
    res = _cli(wh, "write", "db.w", str(bad))
    out = res.stdout + res.stderr
    assert res.exit_code == 1 and "Traceback" not in out, out
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and message in lines[0], out
    assert _files(wh, "w") == before
    assert len(java_paimon.read_raw(wh, "db", "w")["rows"]) == len(WRITABLE)
