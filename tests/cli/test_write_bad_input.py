"""`paimon-cli write` with bad input commits nothing and exits with the documented code.

Why: a loader that half-writes a table, or dies with a traceback that hides the bad row, is
worse than no loader. For every kind of bad input (a value that does not fit its column,
NULL in a NOT NULL or key column, unknown columns, bad row kinds, missing or unreadable
files, tables this writer refuses) the CLI must print ONE ``error:`` line on stderr naming
the column / row / file, exit with README's code for that class of error, and leave the
warehouse byte-for-byte as it was: no new snapshot, no orphan data file, no manifest, not
even when the bad row comes after data files of earlier inputs were already flushed.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog

README = Path(__file__).resolve().parents[2] / "README.md"


def documented_exit_codes() -> dict[str, int]:
    """README "Exit codes": first words of the meaning -> code."""
    section = README.read_text("utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    return {m.split(":")[0].strip(): int(c) for c, m in re.findall(r"^\| (\d) \| ([^|]+) \|$", section, flags=re.M)}


DOC = documented_exit_codes()
UNSUPPORTED = DOC["error"]  # "an unexpected failure ..., or a feature that is not supported yet"
NOT_FOUND = DOC["not found"]
INVALID = DOC["invalid input"]

SCHEMA = ("id BIGINT NOT NULL, name VARCHAR(5), small TINYINT, amount DECIMAL(5, 2), d DATE, "
          "qty INT NOT NULL, ts TIMESTAMP(3)")


def test_readme_codes() -> None:
    assert (UNSUPPORTED, NOT_FOUND, INVALID) == (1, 3, 4)
    section = README.read_text("utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert "not supported yet" in section  # refused tables (NotYetSupported) exit with 1


# ------------------------------------------------------------------------------------ helpers


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def tree(root: Path) -> dict[str, str]:
    """Every file (hidden ones too) with a content hash, and every directory."""
    out = {}
    for p in sorted(root.rglob("*")):
        out[str(p.relative_to(root))] = "<dir>" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def one_error_line(result: Any) -> str:
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert result.stdout == ""
    return lines[0]


GOOD = [{"id": 1, "name": "a", "small": 1, "amount": "1.50", "d": "2024-01-01", "qty": 1, "ts": "2024-01-01 10:00:00"},
        {"id": 2, "name": "bb", "small": -3, "amount": "-2.25", "d": "2024-01-02", "qty": 2, "ts": None}]


def write_parquet(path: Path, rows: list[dict[str, Any]], types: dict[str, Any] | None = None) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if types:
        schema = pa.schema([(c, types.get(c, pa.string())) for c in rows[0]])
        pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    else:
        pq.write_table(pa.Table.from_pylist(rows), path)
    return str(path)


def write_csv(path: Path, header: list[str], lines: list[list[Any]]) -> str:
    text = ",".join(header) + "\n" + "".join(",".join("" if v is None else str(v) for v in ln) + "\n" for ln in lines)
    path.write_text(text, "utf-8")
    return str(path)


class Env:
    """A warehouse with db.t (one good snapshot), db.dv (DV) and db.fr (first-row)."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.inputs = root / "in"
        self.inputs.mkdir()
        for name, opts in (("t", ["--option", "bucket=2"]),
                           ("dv", ["--option", "bucket=1", "--option", "deletion-vectors.enabled=true"]),
                           ("fr", ["--option", "bucket=1", "--option", "merge-engine=first-row"])):
            res = invoke(runner, "create", f"db.{name}", "--schema", SCHEMA, "--primary-key", "id", *opts, "-w", self.wh)
            assert res.exit_code == 0, res.output
        good = self.csv("good.csv", GOOD)
        res = invoke(runner, "write", "db.t", good, "-w", self.wh)
        assert res.exit_code == 0, res.output
        assert self.latest("t") == 1

    def csv(self, name: str, rows: list[dict[str, Any]]) -> str:
        header = list(rows[0])
        return write_csv(self.inputs / name, header, [[r[c] for c in header] for r in rows])

    def latest(self, table: str) -> int | None:
        from paimon_cli.core.errors import NotFound

        try:
            return FileSystemCatalog(self.wh).get_table(f"db.{table}").snapshot_manager.latest_snapshot_id()
        except NotFound:
            return None

    def refused(self, code: int, *args: str, table: str = "t") -> str:
        """Run ``write db.<table> ARGS``; assert exit code, one error line, nothing changed."""
        wh = Path(self.wh)
        before = tree(wh)
        latest = self.latest(table)
        res = invoke(self.runner, "write", f"db.{table}", *args, "-w", self.wh)
        assert res.exit_code == code, (res.exit_code, res.stderr, res.stdout)
        line = one_error_line(res)
        after = tree(wh)
        # no file changed and no directory was left behind (flushed files are removed together
        # with the bucket and partition directories they needed)
        assert after == before, "the failed write changed the warehouse"
        assert self.latest(table) == latest
        return line


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def row(**over: Any) -> dict[str, Any]:
    return {**GOOD[0], "id": 10, **over}


# ------------------------------------------------------------------------------------ bad values


def test_integer_overflow(env: Env) -> None:
    import pyarrow as pa

    f = write_parquet(env.inputs / "of.parquet", [row(id=10, small=5), row(id=11, small=300)], {"id": pa.int64(),
                      "small": pa.int64(), "qty": pa.int32()})
    line = env.refused(INVALID, f)
    assert "of.parquet" in line and "'small'" in line and "300" in line and "row 2" in line


def test_integer_overflow_in_csv(env: Env) -> None:
    line = env.refused(INVALID, env.csv("of.csv", [row(), row(id=11), row(id=12, qty=2**31)]))
    assert "of.csv" in line and "'qty'" in line and str(2**31) in line and "row 3" in line


@pytest.mark.parametrize("amount,what", [("1.234", "1.234"), ("1234.5", "1234.5")], ids=["scale", "precision"])
def test_decimal_loss(env: Env, amount: str, what: str) -> None:
    line = env.refused(INVALID, env.csv("dec.csv", [row(), row(id=11, amount=amount)]))
    assert "dec.csv" in line and "'amount'" in line and what in line and "row 2" in line


@pytest.mark.parametrize("amount,why", [(999.995, "more than 3 integer digits after rounding to scale 2"),
                                        (float("nan"), "not a finite number")], ids=["overflow", "nan"])
def test_decimal_from_parquet_double(env: Env, amount: float, why: str) -> None:
    import pyarrow as pa

    f = write_parquet(env.inputs / "dd.parquet", [row(amount=1.5), row(id=11, amount=amount)],
                      {"id": pa.int64(), "amount": pa.float64(), "small": pa.int8(), "qty": pa.int32()})
    line = env.refused(INVALID, f)
    assert "dd.parquet" in line and "'amount'" in line and repr(amount) in line and "row 2" in line and why in line


def test_decimal_from_parquet_double_rounds_as_java(env: Env) -> None:
    """Not bad input: a double becomes its shortest text rounded half-up to the scale (Java's
    cast), so 994.29 is stored as 994.29 and 0.125 as 0.13, as a Java job would store them."""
    import pyarrow as pa

    f = write_parquet(env.inputs / "ok.parquet", [row(id=20, amount=994.29), row(id=21, amount=0.125),
                                                  row(id=22, amount=0.1 + 0.2)],
                      {"id": pa.int64(), "amount": pa.float64(), "small": pa.int8(), "qty": pa.int32()})
    res = invoke(env.runner, "write", "db.t", f, "-w", env.wh)
    assert res.exit_code == 0, res.output
    res = invoke(env.runner, "read", "db.t", "--where", "id >= 20", "--select", "id,amount", "-o", "csv", "-w", env.wh)
    assert res.exit_code == 0, res.output
    assert sorted(res.stdout.splitlines()[1:]) == ["20,994.29", "21,0.13", "22,0.30"]


def test_fraction_into_integer(env: Env) -> None:
    line = env.refused(INVALID, env.csv("frac.csv", [row(qty="1.5")]))
    assert "frac.csv" in line and "'qty'" in line and "1.5" in line


@pytest.mark.parametrize("value", ["2024-02-30", "yesterday", "2024-13-01"])
def test_bad_date(env: Env, value: str) -> None:
    line = env.refused(INVALID, env.csv("date.csv", [row(), row(id=11), row(id=12, d=value)]))
    assert "date.csv" in line and "'d'" in line and value in line and "row 3" in line


def test_bad_timestamp(env: Env) -> None:
    line = env.refused(INVALID, env.csv("ts.csv", [row(ts="2024-01-01 25:00:00")]))
    assert "ts.csv" in line and "'ts'" in line


def test_string_too_long(env: Env) -> None:
    line = env.refused(INVALID, env.csv("long.csv", [row(name="abcdefg")]))
    assert "long.csv" in line and "'name'" in line and "VARCHAR(5)" in line


def test_null_into_not_null_column(env: Env) -> None:
    line = env.refused(INVALID, env.csv("nn.csv", [row(), row(id=11, qty=None)]))
    assert "nn.csv" in line and "'qty'" in line and "NULL" in line and "row 2" in line


def test_null_into_key_column(env: Env) -> None:
    import pyarrow as pa

    f = write_parquet(env.inputs / "nk.parquet", [row(id=10), row(id=None)], {"id": pa.int64(), "small": pa.int8(),
                      "qty": pa.int32()})
    line = env.refused(INVALID, f)
    assert "nk.parquet" in line and "'id'" in line and "primary-key" in line and "row 2" in line


def test_missing_key_column(env: Env) -> None:
    rows = [{k: v for k, v in row().items() if k != "id"}]
    line = env.refused(INVALID, env.csv("nokey.csv", rows))
    assert "nokey.csv" in line and "'id'" in line


def test_unknown_column(env: Env) -> None:
    line = env.refused(INVALID, env.csv("extra.csv", [row(bogus="x")]))
    assert "extra.csv" in line and "'bogus'" in line


def test_unknown_column_case_hint(env: Env) -> None:
    rows = [{("ID" if k == "id" else k): v for k, v in row().items()}]
    line = env.refused(INVALID, env.csv("case.csv", rows))
    assert "'ID'" in line and "'id'" in line


# ------------------------------------------------------------------------------------ row kinds


@pytest.mark.parametrize("kind", ["+X", "D", ""])
def test_bad_row_kind(env: Env, kind: str) -> None:
    f = env.csv("kinds.csv", [row(op="+I"), row(id=11, op="-D"), row(id=12, op=kind)])
    line = env.refused(INVALID, f, "--row-kind-column", "op")
    assert "kinds.csv" in line and "'op'" in line and "row 3" in line


def test_row_kind_column_missing(env: Env) -> None:
    line = env.refused(INVALID, env.csv("nokind.csv", [row()]), "--row-kind-column", "op")
    assert "'op'" in line


def test_delete_and_row_kind_column_together(env: Env) -> None:
    line = env.refused(INVALID, env.csv("both.csv", [row(op="+I")]), "--row-kind-column", "op", "--delete")
    assert "--delete" in line and "--row-kind-column" in line


# ------------------------------------------------------------------------------------ files


def test_missing_file(env: Env) -> None:
    missing = str(env.inputs / "nope.parquet")
    line = env.refused(NOT_FOUND, missing)
    assert "nope.parquet" in line


def test_missing_second_file(env: Env) -> None:
    """The first input is fine: still nothing may be written."""
    line = env.refused(NOT_FOUND, env.csv("ok.csv", [row()]), str(env.inputs / "gone.csv"))
    assert "gone.csv" in line


def test_glob_matching_nothing(env: Env) -> None:
    line = env.refused(NOT_FOUND, str(env.inputs / "day-*.parquet"))
    assert "day-*.parquet" in line


def test_empty_directory(env: Env) -> None:
    (env.inputs / "empty").mkdir()
    line = env.refused(NOT_FOUND, str(env.inputs / "empty"))
    assert "empty" in line


def test_unreadable_parquet(env: Env) -> None:
    bad = env.inputs / "broken.parquet"
    bad.write_bytes(b"PAR1 this is not parquet at all")
    line = env.refused(INVALID, str(bad))
    assert "broken.parquet" in line


def test_truncated_parquet(env: Env) -> None:
    good = Path(write_parquet(env.inputs / "whole.parquet", [row(id=i) for i in range(10, 40)]))
    cut = env.inputs / "cut.parquet"
    cut.write_bytes(good.read_bytes()[:-40])
    line = env.refused(INVALID, str(cut))
    assert "cut.parquet" in line


def test_malformed_json(env: Env) -> None:
    f = env.inputs / "bad.jsonl"
    f.write_text('{"id": 10, "qty": 1}\n{"id": 11, "qty": \n', "utf-8")
    line = env.refused(INVALID, str(f))
    assert "bad.jsonl" in line


def test_unknown_extension_needs_format(env: Env) -> None:
    f = env.inputs / "data.bin"
    f.write_bytes(b"\x81\xfe\x00\xc3binary garbage\xff\xfe" * 10)
    line = env.refused(INVALID, str(f))
    assert "data.bin" in line and "--format" in line


@pytest.mark.parametrize("name", ["gen.py", "notes.md", "data.2024-05-01", "dump.gz"])
def test_a_text_file_of_unknown_extension_is_refused_not_read_as_csv(env: Env, name: str) -> None:
    """Issue 27 item 15: ``write t gen.py`` parsed the script as CSV (here it would even load:
    its header names table columns). An unknown extension is refused before anything is read;
    --format still reads it, and known extensions need none."""
    f = env.inputs / name
    f.write_text("id,qty\n10,1\n")
    line = env.refused(INVALID, str(f))
    assert name in line and "unknown format; use --format" in line
    # the same file in a directory is refused as well (nothing else of the directory is written)
    d = env.inputs / "dir"
    d.mkdir(exist_ok=True)
    (d / "a.csv").write_text("id,qty\n11,1\n")
    (d / name).write_text("id,qty\n12,1\n")
    assert "unknown format; use --format" in env.refused(INVALID, str(d))
    (d / name).unlink()
    if not name.endswith(".gz"):
        res = invoke(env.runner, "write", "db.t", str(f), "--format", "csv", "-w", env.wh)
        assert res.exit_code == 0, res.stderr
    res = invoke(env.runner, "write", "db.t", str(d / "a.csv"), "-w", env.wh)
    assert res.exit_code == 0, res.stderr


@pytest.mark.parametrize("content", [b"bogus", b"\x00\x01\x02 one line of garbage"], ids=["header", "garbage"])
def test_one_line_text_without_newline(env: Env, content: bytes) -> None:
    """pyarrow calls a text without a newline an empty CSV: it must still be checked, not
    silently written as zero rows."""
    f = env.inputs / "one.csv"
    f.write_bytes(content)
    line = env.refused(INVALID, str(f))
    assert "one.csv" in line and "is not a column of the table" in line


def test_header_only_csv_is_zero_rows(env: Env) -> None:
    """The other side of the line above: a valid header without rows is an empty input."""
    f = env.inputs / "header.csv"
    f.write_bytes(b"id,qty")
    res = invoke(env.runner, "write", "db.t", str(f), "-w", env.wh, "-o", "json")
    assert res.exit_code == 0, res.stderr
    assert env.latest("t") == 1


def test_bad_value_in_a_later_file_after_flushes(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Earlier inputs are big enough to be flushed to data files (tiny write buffer) before the
    bad row of the last input is met: those files must be removed, nothing committed."""
    import pyarrow as pa

    from paimon_cli.core.io.fileio import FileIO

    deleted: list[str] = []
    real_delete = FileIO.delete

    def spy(self: FileIO, path: str) -> None:
        deleted.append(path)
        real_delete(self, path)

    monkeypatch.setattr(FileIO, "delete", spy)

    types = {"id": pa.int64(), "small": pa.int8(), "qty": pa.int32()}
    big = [write_parquet(env.inputs / f"big{i}.parquet", [row(id=1000 * i + j, name=f"n{j % 99}")
                                                           for j in range(3000)], types) for i in (1, 2)]
    bad = env.csv("last.csv", [row(id=7), row(id=8, small=-129)])
    line = env.refused(INVALID, *big, bad, "--option", "write-buffer-size=64kb", "--option", "page-size=4kb")
    assert "last.csv" in line and "'small'" in line and "-129" in line and "row 2" in line
    assert any("/bucket-" in p and "/data-" in p for p in deleted), "no data file was flushed: the test lost its point"


# ------------------------------------------------------------------------------------ refused tables


@pytest.mark.parametrize("table", ["dv", "fr"])
def test_deletion_vector_and_first_row_tables_are_written_and_visible(env: Env, table: str) -> None:
    """Refused before compaction existed; now the write compacts level 0 up (APPEND + COMPACT)."""
    import json

    res = invoke(env.runner, "write", f"db.{table}", env.csv(f"{table}.csv", [row(id=5), row(id=6)]),
                 "-w", env.wh, "-o", "json")
    assert res.exit_code == 0, res.output
    out = json.loads(res.stdout)[0]
    assert (out["commit_kind"], out["compact_snapshot_id"]) == ("APPEND", 2) and env.latest(table) == 2
    read = invoke(env.runner, "read", f"db.{table}", "-w", env.wh, "-o", "json")
    assert sorted(r["id"] for r in json.loads(read.stdout)) == [5, 6]


def test_unknown_table(env: Env) -> None:
    line = env.refused(NOT_FOUND, env.csv("x.csv", [row()]), table="nope")
    assert "db.nope" in line or "nope" in line


def test_partition_without_overwrite(env: Env) -> None:
    line = env.refused(INVALID, env.csv("p.csv", [row()]), "--partition", "d=2024-01-01")
    assert "--partition" in line


def test_bad_dynamic_option(env: Env) -> None:
    line = env.refused(INVALID, env.csv("o.csv", [row()]), "--option", "write-buffer-sise=1mb")
    assert "write-buffer-sise" in line and "write-buffer-size" in line


def test_layout_option_per_write(env: Env) -> None:
    line = env.refused(INVALID, env.csv("o.csv", [row()]), "--option", "bucket=3")
    assert "'bucket'" in line


def test_the_good_rows_are_still_there(env: Env) -> None:
    """After a refused write the table reads as before."""
    env.refused(INVALID, env.csv("dec.csv", [row(amount="9999.99")]))
    res = invoke(env.runner, "read", "db.t", "-o", "json", "-w", env.wh)
    assert res.exit_code == 0, res.stderr
    import json

    assert sorted(r["id"] for r in json.loads(res.stdout)) == [1, 2]


# --------------------------------------------------------------------- Parquet INT96 timestamps


def test_int96_input_outside_the_nanosecond_range_is_refused_never_wrapped(env: Env) -> None:
    """pyarrow reads a Parquet INT96 as int64 nanoseconds and wraps beyond them (1500-06-01 came
    back as 2084-12-19 and was written so): the input's raw values are checked first, an
    out-of-range one refused naming file, column and value; in-range ones (before 1970 too)
    are written exactly."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    def int96_file(name: str, stamps: list[dt.datetime | None]) -> str:
        rows = [{**GOOD[0], "id": 100 + i, "ts": None} for i in range(len(stamps))]
        table = pa.Table.from_pylist(rows).set_column(6, "ts", pa.array(stamps, pa.timestamp("us")))
        path = env.inputs / name
        pq.write_table(table, path, use_deprecated_int96_timestamps=True)
        assert pq.ParquetFile(path).schema.column(6).physical_type == "INT96"
        return str(path)

    far = int96_file("far.parquet", [dt.datetime(2024, 1, 1), dt.datetime(1500, 6, 1, 12)])
    line = env.refused(UNSUPPORTED, far)
    assert "far.parquet" in line and "column ts" in line and "1500-06-01T12:00:00" in line, line
    assert "INT96" in line and "refused rather than written wrong" in line, line

    near = [dt.datetime(1969, 12, 31, 23, 59, 59, 500000), dt.datetime(2262, 4, 11, 23, 47, 16), None]
    res = invoke(env.runner, "write", "db.t", int96_file("near.parquet", near), "-w", env.wh)
    assert res.exit_code == 0, res.output
    table = FileSystemCatalog(env.wh).get_table("db.t")
    from paimon_cli.core.operation.read import TableRead

    got = {r["id"]: r["ts"] for r in TableRead(table).to_arrow().to_pylist() if r["id"] >= 100}
    # TIMESTAMP(3) column: the checked cast keeps what it holds exactly (milliseconds)
    assert got == {100: dt.datetime(1969, 12, 31, 23, 59, 59, 500000), 101: dt.datetime(2262, 4, 11, 23, 47, 16),
                   102: None}


def test_int96_input_into_a_nanosecond_column_is_refused_not_written_wrapped(env: Env) -> None:
    """Into TIMESTAMP(9) the wrapped value fit and was committed: 1500 read back as 2084."""
    import datetime as dt

    import pyarrow as pa
    import pyarrow.parquet as pq

    res = invoke(env.runner, "create", "db.ns", "--schema", "id BIGINT NOT NULL, ts TIMESTAMP(9)",
                 "--primary-key", "id", "--option", "bucket=1", "-w", env.wh)
    assert res.exit_code == 0, res.output
    path = env.inputs / "ns.parquet"
    pq.write_table(pa.table({"id": [1, 2], "ts": pa.array([dt.datetime(2024, 1, 1), dt.datetime(1500, 6, 1)],
                                                            pa.timestamp("us"))}),
                   path, use_deprecated_int96_timestamps=True)
    line = env.refused(UNSUPPORTED, str(path), table="ns")
    assert "column ts" in line and "1500-06-01T00:00:00" in line, line
    assert env.latest("ns") is None
