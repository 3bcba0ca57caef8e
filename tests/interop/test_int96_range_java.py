"""TIMESTAMP(p>6) in Parquet is INT96 (Java's ParquetSchemaConverter, 0.9 to 2.x): a Julian day
and the nanoseconds of that day, so Java keeps any year. Arrow's nanosecond timestamps end at
1677-09-21 / 2262-04-11: a value outside never comes back wrapped; every reader of a data file
(read, read --to, compaction) either returns the exact value or refuses, naming the file and
the column, and nothing is written."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.interop.java_harness import JavaPaimon

from .cli_runner import CLI_ENV, one_line_error

pytestmark = pytest.mark.java

IN_RANGE = ["2024-03-01T12:00:00.123456789", "2262-04-11T23:47:16.854775807", "1677-09-21T00:12:43.145224192"]
# Java 0.9 itself fails (IllegalArgumentException from java.sql.Timestamp.setNanos) on a time
# before 1970 with a fraction of a second in INT96: it writes negative nanoseconds of the day
OUT_OF_RANGE = [("1500-06-01T08:30:00", True), ("2500-01-01T00:00:00.000000001", True),
                ("1500-06-01T08:30:00.000000001", False)]


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


def _ns(text: str) -> int:
    """Nanoseconds since the epoch of a LocalDateTime text (exact, not through float)."""
    whole, _, frac = text.partition(".")
    secs = (dt.datetime.fromisoformat(whole) - dt.datetime(1970, 1, 1)) // dt.timedelta(seconds=1)
    return secs * 1_000_000_000 + int((frac + "000000000")[:9])


def _java_table(java: JavaPaimon, wh: Path, name: str, values: list[str], **options: str) -> None:
    java.create_table(wh, "db", name, [("id", "INT NOT NULL"), ("ts", "TIMESTAMP(9)"),
                                       ("r", "ROW<t TIMESTAMP(9)>")], [],
                      [], {"file.format": "parquet", "bucket": "-1", **options})
    for i, v in enumerate(values):  # one file each
        java.write(wh, "db", name, [{"id": i, "ts": v, "r": {"t": v}}])


def _cli(wh: Path, *args: str) -> object:
    return CliRunner().invoke(app, [*args, "-w", str(wh)])


def _one_line_refusal(res: object, column: str) -> str:
    line = one_line_error(res, 1)
    assert ".parquet" in line and column in line and "1677-09-21" in line and "2262-04-11" in line, line
    return line


def test_int96_in_range_reads_exactly(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _java_table(java_paimon, wh, "ok", IN_RANGE)
    out = tmp_path / "out.parquet"
    res = _cli(wh, "read", "db.ok", "--to", str(out))
    assert res.exit_code == 0, res.stdout + res.stderr
    got = pq.read_table(out).sort_by("id")
    assert got.column("ts").type == pa.timestamp("ns")
    assert got.column("ts").cast(pa.int64()).to_pylist() == [_ns(v) for v in IN_RANGE]
    assert [r["t"] for r in got.column("r").cast(pa.struct([("t", pa.int64())])).to_pylist()] == \
        [_ns(v) for v in IN_RANGE]


@pytest.mark.parametrize(("bad", "java_reads"), OUT_OF_RANGE)
def test_int96_out_of_range_is_refused_never_wrapped(
    java_paimon: JavaPaimon, tmp_path: Path, bad: str, java_reads: bool
) -> None:
    wh = tmp_path / "wh"
    _java_table(java_paimon, wh, "far", [IN_RANGE[0], bad])
    line = _one_line_refusal(_cli(wh, "read", "db.far"), "ts")
    assert "bucket-0" in line and f"holds {bad if '.' in bad else bad + '.000000000'} " in line, line
    out = tmp_path / "out.parquet"
    _one_line_refusal(_cli(wh, "read", "db.far", "--to", str(out)), "ts")
    assert not out.exists()
    # only the nested column is far: still refused, naming it
    _java_table(java_paimon, wh, "far_nested", [IN_RANGE[0]])
    java_paimon.write(wh, "db", "far_nested", [{"id": 9, "ts": IN_RANGE[0], "r": {"t": bad}}])
    _one_line_refusal(_cli(wh, "read", "db.far_nested"), "r.t")

    # compaction reads every file: it refuses and writes nothing; Java still reads the exact values
    before = sorted(p.name for p in (wh / "db.db" / "far").rglob("*") if p.is_file())
    _one_line_refusal(_cli(wh, "compact", "db.far", "--full"), "ts")
    assert sorted(p.name for p in (wh / "db.db" / "far").rglob("*") if p.is_file()) == before
    if not java_reads:
        return
    rows = sorted(java_paimon.read_raw(wh, "db", "far")["rows"], key=lambda r: r[0] if isinstance(r, list) else r["id"])
    texts = [r[1] if isinstance(r, list) else r["ts"] for r in rows]
    assert [_ns(t) for t in texts] == [_ns(IN_RANGE[0]), _ns(bad)]
