"""Output on a terminal (issue 14): the columns that matter, no cut cells, records when a row
does not fit, human bytes/times only on a tty, the first rows fast, ``--limit`` on every
row-producing command, typed JSON that does not depend on ``TZ``.

Terminal behaviour runs the real program on a pseudo-terminal of 80 columns (``pty``).
"""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pytest
import typer
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse
from paimon_cli.terminal_table import TERMINAL_ROWS, human_bytes, human_duration, human_time, pick_columns
from tests.cli.pty_session import on_tty


def cli(runner: CliRunner, *args: str) -> str:
    res = runner.invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res.stdout


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The quickstart tables, a tag and a branch, and ``demo.many``: 250 rows (append)."""
    path = str(tmp_path_factory.mktemp("terminal") / "wh")
    runner = CliRunner()
    cli(runner, "quickstart", "-w", path)
    cli(runner, "tag", "create", "demo.orders", "t1", "--time-retained", "7d", "-w", path)
    cli(runner, "tag", "create", "demo.orders", "t2", "--snapshot", "1", "-w", path)
    cli(runner, "branch", "create", "demo.orders", "b1", "--tag", "t1", "-w", path)
    for n in range(3):  # orphans for remove-orphan-files --dry-run to list
        Path(path, "demo.db", "orders", "dt=2024-05-01", "bucket-0", f"data-orphan-{n}.parquet").write_bytes(b"x")
    w = Warehouse(path)
    w.create_table("demo.many", "id BIGINT, name STRING")
    w.table("demo.many").write(pa.table({"id": list(range(250)), "name": [f"n{i}" for i in range(250)]}))
    return path


# -- human values ------------------------------------------------------------------------------


def test_human_values() -> None:
    assert [human_bytes(n) for n in (0, 1023, 1024, 22_334_669, 5 * 2**40)] == \
        ["0 B", "1023 B", "1.0 KiB", "21.3 MiB", "5.0 TiB"]
    assert human_duration(dt.timedelta(hours=168)) == "7d"
    assert human_duration(dt.timedelta(days=1, hours=2, minutes=3)) == "1d 2h"
    assert human_duration(dt.timedelta(milliseconds=250)) == "250ms"
    now = dt.datetime(2024, 5, 4, 12, 0, tzinfo=dt.timezone.utc)
    assert human_time(now - dt.timedelta(hours=3, minutes=5), now) == "3h ago"
    assert human_time(now + dt.timedelta(minutes=2), now) == "in 2m"
    assert human_time(now - dt.timedelta(days=40), now) == "2024-03-25"


def test_unknown_column_suggests_the_closest() -> None:
    assert pick_columns(["bucket", "record_count"], "record_count, bucket") == ["record_count", "bucket"]
    with pytest.raises(typer.BadParameter, match="did you mean 'record_count'"):
        pick_columns(["bucket", "record_count"], "bucket,record_coutn")


def test_unknown_column_is_a_usage_error(runner: CliRunner, wh: str) -> None:
    res = runner.invoke(app, ["inspect", "files", "demo.orders", "-w", wh, "--columns", "recrod_count"])
    assert res.exit_code == 2
    assert "did you mean 'record_count'" in res.output


# -- a terminal of 80 columns ----------------------------------------------------------------


def _table_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("│", "┃"))]


def test_snapshots_fit_80_columns_with_the_columns_that_matter(wh: str) -> None:
    out, err, code = on_tty("inspect", "snapshots", "demo.orders", "-w", wh)
    assert code == 0, err
    lines = _table_lines(out)
    header = [c.strip() for c in lines[0].strip("┃").split("┃")]
    assert header == ["snapshot_id", "schema_id", "commit_kind", "commit_time", "total_record_count"]
    assert all(len(line) <= 80 for line in out.splitlines())
    assert "…" not in out
    rows = [[c.strip() for c in line.strip("│").split("│")] for line in lines[1:]]
    assert [r[0] for r in rows] == ["1", "2", "3"]
    assert all(r[3].endswith("ago") or r[3] == "now" for r in rows)  # relative times


def test_files_switch_to_records_when_a_row_does_not_fit(wh: str) -> None:
    out, err, code = on_tty("inspect", "files", "demo.orders", "-w", wh)
    assert code == 0, err
    assert "…" not in out
    assert out.startswith("-[ record 1 ]")
    first = out.split("-[ record 2 ]")[0]
    assert all(len(line) <= 80 for line in out.splitlines()), out  # a long value gets a line of its own
    joined = re.sub(r" :\n  ", " : ", first)
    fields = {k.strip(): v for k, v in (line.split(" : ", 1) for line in joined.splitlines() if " : " in line)}
    assert list(fields) == ["partition", "bucket", "level", "record_count", "file_size_in_bytes", "file_path"]
    size = fields["file_size_in_bytes"]
    assert re.fullmatch(r"\d+\.\d (KiB|MiB)", size), size  # human bytes on a terminal
    path = fields["file_path"]  # relative to the table on a terminal (issue 27 #7), never cut
    assert path.startswith("dt=2024-05-01/bucket-0/data-") and path.endswith(".parquet"), path
    assert (Path(wh) / "demo.db" / "orders" / path).is_file()


def test_files_paths_are_whole_off_a_terminal(runner: CliRunner, wh: str) -> None:
    """JSON, CSV and a pipe keep the full path (as Java 1.x's $files): only a person's terminal
    gets paths relative to the table."""
    root = str(Path(wh) / "demo.db" / "orders") + "/"
    as_json = json.loads(cli(runner, "inspect", "files", "demo.orders", "-w", wh, "-o", "json"))
    as_csv = list(csv.DictReader(io.StringIO(cli(runner, "inspect", "files", "demo.orders", "-w", wh, "-o", "csv"))))
    piped = cli(runner, "inspect", "files", "demo.orders", "-w", wh, "--columns", "file_path")
    assert [r["file_path"] for r in as_json] == [r["file_path"] for r in as_csv] == piped.split()[2:]
    assert all(p.startswith(root) for p in piped.split()[2:])
    out, err, code = on_tty("inspect", "files", "demo.orders", "-w", wh, "--columns", "file_path,bucket")
    assert code == 0, err
    assert sorted(re.findall(r"\S+\.parquet", out)) == sorted(p[len(root):] for p in piped.split()[2:])


def test_columns_and_wide_on_a_terminal(wh: str) -> None:
    out, _, code = on_tty("inspect", "files", "demo.orders", "-w", wh, "--columns", "bucket,record_count")
    assert code == 0
    assert [c.strip() for c in _table_lines(out)[0].strip("┃").split("┃")] == ["bucket", "record_count"]
    out, _, code = on_tty("inspect", "files", "demo.orders", "-w", wh, "--wide")
    assert code == 0
    header = [c.strip() for c in _table_lines(out)[0].strip("┃").split("┃")]
    assert "min_value_stats" in header and "write_cols" in header and "…" not in out


def test_compact_result_and_plan_fit_80_columns(wh: str, tmp_path: Path) -> None:
    runner = CliRunner()
    data = tmp_path / "more.jsonl"
    data.write_text(cli(runner, "read", "demo.orders", "-w", wh, "-o", "jsonl"))
    cli(runner, "write", "demo.orders", str(data), "-w", wh)
    out, err, code = on_tty("compact", "demo.orders", "-w", wh, "--full", "--plan")
    assert code == 0, err
    header = [c.strip() for c in _table_lines(out)[0].strip("┃").split("┃")]
    assert header == ["partition", "bucket", "files", "bytes_to_rewrite", "files_after", "reason"]
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines())
    out, err, code = on_tty("compact", "demo.orders", "-w", wh, "--full")
    assert code == 0, err
    lines = _table_lines(out)
    header = [c.strip() for c in lines[0].strip("┃").split("┃")]
    assert header == ["snapshot_id", "units", "files_in", "files_out", "bytes_in", "bytes_out", "seconds"]
    row = dict(zip(header, [c.strip() for c in lines[1].strip("│").split("│")], strict=True))
    assert row["snapshot_id"].isdigit() and row["bytes_in"].endswith("KiB")
    assert "…" not in out and all(len(line) <= 80 for line in out.splitlines())


def test_durations_read_as_days_on_a_terminal(wh: str) -> None:
    out, err, code = on_tty("inspect", "tags", "demo.orders", "-w", wh)
    assert code == 0, err
    rows = {r[0]: r for r in ([c.strip() for c in line.strip("│").split("│")] for line in _table_lines(out)[1:])}
    assert rows["t1"][-1] == "7d" and rows["t2"][-1] == "null" and "PT168H" not in out


def test_human_bytes_only_on_a_terminal(runner: CliRunner, wh: str) -> None:
    piped = cli(runner, "inspect", "partitions", "demo.orders", "-w", wh)
    sizes = [line.split()[2] for line in piped.splitlines()[2:]]
    assert sizes and all(s.isdigit() for s in sizes)  # exact bytes in a pipe
    out, _, _ = on_tty("inspect", "partitions", "demo.orders", "-w", wh)
    assert "KiB" in out


def test_terminal_shows_the_first_rows_and_says_how_to_see_more(wh: str) -> None:
    for args in (("read", "demo.many"), ("inspect", "ro", "demo.many"), ("inspect", "audit-log", "demo.many")):
        out, err, code = on_tty(*args, "-w", wh)
        assert code == 0, err
        assert len(_table_lines(out)) - 1 == TERMINAL_ROWS  # the header, then the rows
        assert "--limit" in err and "-o csv" in err
        out, err, code = on_tty(*args, "-w", wh, "--limit", "120")
        assert code == 0 and len(_table_lines(out)) - 1 == 120 and "--limit" not in err


# -- --limit on every row-producing command ---------------------------------------------------

LIMITED = [
    ("read", "demo.many"),
    *[("inspect", kind, "demo.orders") for kind in (
        "snapshots", "schemas", "options", "files", "manifests", "partitions", "buckets", "tags", "branches",
        "consumers", "table-indexes", "statistics", "aggregation-fields", "file-indexes", "audit-log", "binlog",
        "ro", "table", "expiry")],
    ("inspect", "all-table-options"),
    ("inspect", "catalog-options"),
    ("list",),
    ("list", "demo"),
    ("tag", "list", "demo.orders"),
    ("branch", "list", "demo.orders"),
    ("expire", "demo.orders", "--retain-max", "1", "--retain-min", "1", "--dry-run"),
    ("remove-orphan-files", "demo.orders", "--older-than", "0s", "--force", "--dry-run"),
    ("compact", "demo.events", "--full", "--plan"),
    ("tag", "delete", "demo.orders", "t2", "--dry-run"),
]


@pytest.mark.parametrize("args", LIMITED, ids=lambda a: "-".join(a[:2]))
def test_limit_on_every_row_producing_command(runner: CliRunner, wh: str, args: tuple[str, ...]) -> None:
    every = [json.loads(line) for line in cli(runner, *args, "-w", wh, "-o", "jsonl").splitlines()]
    for n in (0, 1, 2):
        got = [json.loads(line) for line in cli(runner, *args, "-w", wh, "-o", "jsonl", "--limit", str(n)).splitlines()]
        assert got == every[:n]


def test_every_row_listing_command_takes_limit() -> None:
    """Commands that print row listings (dry runs, plans) all declare --limit."""
    group = typer.main.get_command(app)
    for name in ("read", "inspect", "list", "tag", "branch", "expire", "expire-partitions", "remove-orphan-files",
                 "remove-unexisting-files", "rewrite-file-index", "compact", "compact-manifest", "repair",
                 "rollback", "rescale", "health", "maintain", "purge-files", "expire-changelogs"):
        params = {o for p in group.commands[name].params for o in p.opts}  # type: ignore[attr-defined]
        assert "--limit" in params, name


# -- typed JSON ------------------------------------------------------------------------------


def _json(runner: CliRunner, wh: str, *args: str) -> list[dict]:
    return json.loads(cli(runner, *args, "-w", wh, "-o", "json"))


def _under_tz(monkeypatch: pytest.MonkeyPatch, tz: str) -> None:
    monkeypatch.setenv("TZ", tz)
    time.tzset()


KINDS = ["snapshots", "schemas", "files", "manifests", "partitions", "buckets", "tags", "branches",
         "aggregation-fields", "table", "expiry"]


def test_typed_json_is_the_same_under_any_tz(runner: CliRunner, wh: str, monkeypatch: pytest.MonkeyPatch) -> None:
    outputs = {}
    try:
        for tz in ("UTC", "Asia/Kolkata", "America/Los_Angeles"):
            _under_tz(monkeypatch, tz)
            outputs[tz] = {k: cli(runner, "inspect", k, "demo.orders", "-w", wh, "-o", "json") for k in KINDS}
            outputs[tz]["csv"] = cli(runner, "inspect", "snapshots", "demo.orders", "-w", wh, "-o", "csv")
    finally:
        monkeypatch.undo()
        time.tzset()
    assert outputs["UTC"] == outputs["Asia/Kolkata"] == outputs["America/Los_Angeles"]


def test_typed_json_per_kind(runner: CliRunner, wh: str) -> None:
    table = Warehouse(wh).table("demo.orders").open()
    snaps = {s.id: s for s in table.snapshot_manager.snapshots()}
    for r in _json(runner, wh, "inspect", "snapshots", "demo.orders"):
        t = dt.datetime.fromisoformat(r["commit_time"])
        assert t.utcoffset() == dt.timedelta(0) and r["commit_time"].endswith("+00:00")
        assert int(t.timestamp() * 1000) == snaps[r["snapshot_id"]].time_millis
    (schema,) = _json(runner, wh, "inspect", "schemas", "demo.orders")
    assert [f["name"] for f in schema["fields"]] == ["order_id", "customer", "amount", "dt"]
    assert schema["fields"][0] == {"id": 0, "name": "order_id", "type": "BIGINT NOT NULL"}
    assert schema["partition_keys"] == ["dt"] and schema["primary_keys"] == ["order_id", "dt"]
    assert isinstance(schema["options"], dict) and schema["options"]["bucket"] == "2"
    assert schema["update_time"].endswith("+00:00")
    files = _json(runner, wh, "inspect", "files", "demo.orders")
    assert {tuple(f["partition"].items()) for f in files} == {(("dt", "2024-05-01"),), (("dt", "2024-05-02"),)}
    for f in files:
        assert set(f["null_value_counts"]) == set(f["min_value_stats"]) == {"order_id", "customer", "amount", "dt"}
        assert isinstance(f["min_value_stats"]["order_id"], int) and f["min_value_stats"]["dt"] == f["partition"]["dt"]
        assert f["min_value_stats"]["amount"] == str(f["min_value_stats"]["amount"])  # decimals stay exact strings
        assert isinstance(f["min_key"], list) and isinstance(f["min_key"][0], int)
    for kind in ("partitions", "buckets"):
        rows = _json(runner, wh, "inspect", kind, "demo.orders")
        assert {r["partition"]["dt"] for r in rows} == {"2024-05-01", "2024-05-02"}
    manifests = _json(runner, wh, "inspect", "manifests", "demo.orders")
    assert all(set(m["min_partition_stats"]) == {"dt"} for m in manifests)
    tags = {r["tag_name"]: r for r in _json(runner, wh, "inspect", "tags", "demo.orders")}
    assert tags["t2"]["commit_time"].endswith("+00:00")
    assert tags["t1"]["time_retained"] == "PT168H" and tags["t2"]["time_retained"] is None
    agg = _json(runner, wh, "inspect", "aggregation-fields", "demo.orders")
    assert all(isinstance(r["function"], list) for r in agg)


def test_text_formats_keep_java_text(runner: CliRunner, wh: str) -> None:
    csv = cli(runner, "inspect", "files", "demo.orders", "-w", wh, "-o", "csv")
    assert "\n[2024-05-01],0," in csv and "{amount=" in csv  # Java's $files text
    plain = cli(runner, "inspect", "schemas", "demo.orders", "-w", wh)
    assert '["dt"]' in plain and '"type":"BIGINT NOT NULL"' in plain


# -- the consumer stops: so do we ----------------------------------------------------------------

BIG_ROWS = 400_000


@pytest.fixture(scope="module")
def big(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``bench.big``: a primary-key table of BIG_ROWS rows in 4 buckets, one commit."""
    path = tmp_path_factory.mktemp("big") / "wh"
    path.mkdir()
    w = Warehouse(str(path))
    w.create_table("bench.big", "id BIGINT NOT NULL, name STRING", primary_key=["id"], options={"bucket": "4"})
    ids = pa.array(range(BIG_ROWS), pa.int64())
    w.table("bench.big").write(pa.table({"id": ids, "name": ids.cast(pa.string())}))
    return str(path)


def _pipeline_cpu(command: str) -> tuple[str, float, float]:
    """(stdout, wall seconds, cpu seconds of every process of the pipeline) of a shell line."""
    import resource

    def cpu() -> float:
        r = resource.getrusage(resource.RUSAGE_CHILDREN)
        return r.ru_utime + r.ru_stime

    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    before, start = cpu(), time.monotonic()
    out = subprocess.run(command, shell=True, capture_output=True, text=True, env=env, timeout=300, check=True)
    return out.stdout, time.monotonic() - start, cpu() - before


@pytest.mark.slow
@pytest.mark.parametrize("args", [("read",), ("inspect", "audit-log"), ("inspect", "binlog")])  # $ro: no top level here
def test_head_of_a_large_table_returns_fast(big: str, args: tuple[str, ...]) -> None:
    """``| head -3`` stops the read after the first bucket: bounded by CPU time (what the
    process did, steady on a loaded machine), not by wall time alone. Before, the whole
    table was read and laid out first (~0.28 ms a row of CPU: 100+ s here)."""
    cmd = f"{sys.executable} -m paimon_cli {' '.join(args)} bench.big -w {big} | head -3; exit ${{PIPESTATUS[0]}}"
    out, wall, cpu = _pipeline_cpu(f"bash -c '{cmd}'")
    assert len(out.splitlines()) == 3 and out.splitlines()[1].startswith("--")
    assert cpu < 20, f"the pipeline used {cpu:.1f} s of CPU: it read more than the first rows"
    assert wall < 240


@pytest.fixture
def splits(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The row count of each split the table reads produce, in order."""
    from paimon_cli.core.operation.read import TableRead

    seen: list[int] = []
    inner = TableRead._split_tables

    def counted(self: TableRead):  # type: ignore[no-untyped-def]
        for t in inner(self):
            seen.append(t.num_rows)
            yield t

    monkeypatch.setattr(TableRead, "_split_tables", counted)
    return seen


def test_a_closed_pipe_stops_the_read_after_the_first_split(big: str, splits: list[int],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The text table of a pipe is written as batches arrive: when the reader of stdout has
    gone (the first write fails), no further split is read. Before, every split was read
    and collected first."""
    import io

    from paimon_cli.record_batches import render_batches

    class ClosedPipe(io.StringIO):
        def write(self, s: str) -> int:
            raise BrokenPipeError

    for kind in ("audit-log", "binlog"):
        splits.clear()
        reader = Warehouse(big).table("bench.big").inspect_reader(kind)
        monkeypatch.setattr(sys, "stdout", ClosedPipe())
        batches = reader.batches()
        with pytest.raises(BrokenPipeError):
            render_batches(batches, reader.schema, "table")
        batches.close()
        monkeypatch.setattr(sys, "stdout", sys.__stdout__)
        assert len(splits) == 1 and sum(splits) < BIG_ROWS


def test_inspect_limit_reads_only_what_it_needs(runner: CliRunner, big: str, splits: list[int]) -> None:
    for kind in ("audit-log", "binlog"):
        splits.clear()
        out = cli(runner, "inspect", kind, "bench.big", "-w", big, "-o", "jsonl", "--limit", "2")
        assert len(out.splitlines()) == 2 and len(splits) == 1


def _value_ends(lines: list[str], values: list[str]) -> set[int]:
    """Where each value ends on its line (one place for a right-aligned column)."""
    ends = set()
    for v in values:
        line = next(x for x in lines if re.search(rf"(?<![\d.]){re.escape(v)}(?![\d.])", x))
        ends.add(re.search(rf"(?<![\d.]){re.escape(v)}(?![\d.])", line).end())
    return ends


def test_decimals_align_right_like_other_numbers(runner: CliRunner, wh: str) -> None:
    """Issue 27 #16: DECIMAL values (printed as exact text) align right on a terminal and in
    a piped text table, as integers do."""
    out, err, code = on_tty("read", "demo.orders", "-w", wh)
    assert code == 0, err
    rows = _table_lines(out)[1:]
    assert len(_value_ends(rows, ["10.50", "3.10", "25.00", "7.25"])) == 1, out
    piped = cli(runner, "read", "demo.orders", "-w", wh).splitlines()[2:]
    assert len(_value_ends(piped, ["10.50", "3.10", "25.00", "7.25"])) == 1, piped
