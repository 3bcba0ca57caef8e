"""``paimon-cli health``: output shapes (rows, OpenMetrics) and exit codes."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pyarrow as pa
import pytest
from prometheus_client.openmetrics.parser import text_string_to_metric_families
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse

COLUMNS = "id BIGINT NOT NULL, v STRING"
ROW_KEYS = ["database", "table", "score", "kind", "severity", "value", "threshold", "unit", "message", "fix"]


def rows(ids: list[int]) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "v": [f"v{i}" for i in ids]})


@pytest.fixture
def wh(warehouse: str) -> str:
    w = Warehouse(warehouse)
    w.create_table("db.good", COLUMNS, primary_key="id", options={"bucket": "1"}).write(rows([1, 2]))
    t = w.create_table("db.l0", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(8):
        t.write(rows([i]), write_only=True)
    t = w.create_table("other.small", COLUMNS, options={"bucket": "1", "bucket-key": "id"})
    for i in range(5):
        t.write(rows([i]), write_only=True)
    return warehouse


def corrupt(warehouse: str) -> None:
    t = Warehouse(warehouse).create_table("db.broken", COLUMNS)
    t.write(rows([1]))
    (Path(warehouse) / "db.db" / "broken" / "snapshot" / "snapshot-1").write_text("{ not json")


def run(runner: CliRunner, wh: str, *args: str, code: int = 0) -> str:
    res = runner.invoke(app, ["health", *args, "-w", wh])
    assert res.exit_code == code, (res.output, res.stderr if res.stderr_bytes is not None else "")
    return res.stdout


def test_json_shape(runner: CliRunner, wh: str) -> None:
    out = json.loads(run(runner, wh, "-o", "json"))
    assert [list(r) for r in out] == [ROW_KEYS] * len(out)
    assert [(r["database"], r["table"], r["score"], r["kind"], r["severity"]) for r in out] == [
        ("db", "good", 100, None, None),
        ("db", "l0", 70, "sorted_runs", "critical"),
        ("other", "small", 90, "small_files", "warning"),
    ]
    good, l0, small = out
    assert good["message"] == "no findings" and good["fix"] is None and good["value"] is None
    assert (l0["value"], l0["threshold"], l0["unit"]) == (8, 8, "sorted runs")
    assert l0["fix"] == f"paimon-cli compact db.l0 --warehouse {wh}"
    assert (small["value"], small["threshold"], small["unit"]) == (5, 5, "files")


def test_jsonl_and_csv_have_the_same_rows(runner: CliRunner, wh: str) -> None:
    lines = [json.loads(x) for x in run(runner, wh, "-o", "jsonl").splitlines()]
    assert [r["table"] for r in lines] == ["good", "l0", "small"]
    table = list(csv.DictReader(io.StringIO(run(runner, wh, "-o", "csv"))))
    assert list(table[0]) == ROW_KEYS
    assert [(r["table"], r["kind"], r["score"]) for r in table] == [
        ("good", "", "100"), ("l0", "sorted_runs", "70"), ("small", "small_files", "90")]


def test_selectors(runner: CliRunner, wh: str) -> None:
    out = json.loads(run(runner, wh, "other", "db.l0", "-o", "json"))
    assert [r["table"] for r in out] == ["small", "l0"]
    res = runner.invoke(app, ["health", "nodb", "-w", wh])
    assert res.exit_code == 3 and "nodb" in res.stderr
    res = runner.invoke(app, ["health", "db.nope", "-w", wh])
    assert res.exit_code == 3


def test_openmetrics_parses(runner: CliRunner, wh: str) -> None:
    text = run(runner, wh, "--format", "openmetrics")
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert set(families) == {"paimon_table_health_score"} | {
        f"paimon_table_{k}" for k in ("small_files", "sorted_runs", "size_amplification", "delete_ratio",
                                      "manifests", "snapshots", "consumers", "changelogs", "expired_partitions",
                                      "expired_tags", "missing_file_index", "unreadable_metadata",
                                      "orphan_files")}
    assert all(f.type == "gauge" for f in families.values())
    scores = {(s.labels["db"], s.labels["table"]): s.value for s in families["paimon_table_health_score"].samples}
    assert scores == {("db", "good"): 100, ("db", "l0"): 70, ("other", "small"): 90}
    runs = {s.labels["table"]: (s.labels["severity"], s.value) for s in families["paimon_table_sorted_runs"].samples}
    assert runs == {"good": ("none", 0), "l0": ("critical", 8), "small": ("none", 0)}
    assert families["paimon_table_orphan_files"].samples == []  # not measured without --scan-orphans


def test_openmetrics_has_a_zero_sample_per_table_for_kinds_without_a_finding(runner: CliRunner, wh: str) -> None:
    """Issue 27 item 14: a family without any finding had no sample, so dashboards showed
    "no data" instead of 0."""
    families = {f.name: f for f in text_string_to_metric_families(run(runner, wh, "--format", "openmetrics"))}
    tables = {("db", "good"), ("db", "l0"), ("other", "small")}
    for name, fam in families.items():
        if name == "paimon_table_orphan_files":
            continue
        got = {(s.labels["db"], s.labels["table"]): s.value for s in fam.samples}
        assert set(got) == tables, name
    for kind in ("changelogs", "manifests", "unreadable_metadata", "missing_file_index"):
        samples = families[f"paimon_table_{kind}"].samples
        assert {(s.labels["severity"], s.value) for s in samples} == {("none", 0)}, kind
    scanned = {f.name: f for f in text_string_to_metric_families(
        run(runner, wh, "--format", "openmetrics", "--scan-orphans"))}
    assert {(s.labels["table"], s.value) for s in scanned["paimon_table_orphan_files"].samples} == {
        ("good", 0), ("l0", 0), ("small", 0)}
    # an unreadable table: its score and the unreadable finding only, nothing else is known
    corrupt(wh)
    broken = {f.name: f for f in text_string_to_metric_families(
        run(runner, wh, "--format", "openmetrics", code=4))}
    assert [s.value for s in broken["paimon_table_unreadable_metadata"].samples
            if s.labels["table"] == "broken"] == [1]
    assert not [s for s in broken["paimon_table_sorted_runs"].samples if s.labels["table"] == "broken"]


def test_unreadable_table_exit_4_after_every_table(runner: CliRunner, wh: str) -> None:
    corrupt(wh)
    res = runner.invoke(app, ["health", "-w", wh, "-o", "json"])
    assert res.exit_code == 4
    out = json.loads(res.stdout)
    assert [r["table"] for r in out] == ["broken", "good", "l0", "small"]
    broken = out[0]
    assert (broken["score"], broken["kind"], broken["severity"]) == (0, "unreadable_metadata", "critical")
    assert "snapshot-1" in broken["message"] and broken["fix"] is None
    assert res.stderr.startswith("error: 1 table(s) could not be assessed: db.broken (")
    metrics = runner.invoke(app, ["health", "-w", wh, "--format", "openmetrics"])
    assert metrics.exit_code == 4
    fams = {f.name: f for f in text_string_to_metric_families(metrics.stdout)}
    unreadable = {s.labels["table"]: s.value for s in fams["paimon_table_unreadable_metadata"].samples}
    assert unreadable == {"broken": 1, "good": 0, "l0": 0, "small": 0}


def test_table_output(runner: CliRunner, wh: str) -> None:
    out = run(runner, wh, "--wide")
    assert "sorted_runs" in out and "no findings" in out and "paimon-cli compact db.l0" in out


def test_openmetrics_renderer_escapes_and_counters() -> None:
    from paimon_cli.openmetrics import MetricFamily, Sample, gauge, render

    text = render([
        gauge("x_ratio", 'a "help"\\ with\nnewline', [({"table": 'we"ird\\na\nme'}, 0.25)]),
        MetricFamily("x_runs", "runs", "counter", (Sample({}, 3),)),
        gauge("x_empty", "no samples", []),
    ])
    fams = {f.name: f for f in text_string_to_metric_families(text)}
    (s,) = fams["x_ratio"].samples
    assert s.labels == {"table": 'we"ird\\na\nme'} and s.value == 0.25
    assert fams["x_ratio"].documentation == 'a "help"\\ with\nnewline'
    assert fams["x_runs"].type == "counter" and fams["x_runs"].samples[0].name == "x_runs_total"
    assert fams["x_empty"].samples == []
    with pytest.raises(ValueError):
        gauge("bad-name", "", [])
    with pytest.raises(ValueError):
        render([gauge("a", "", []), gauge("a", "", [])])


def test_terminal_shows_a_line_per_table_within_80_columns(wh: str, runner: CliRunner) -> None:
    """Issue 27 #8: a terminal gets `table  score  worst finding`, one row per table, within 80
    columns (a long message wraps between words); --wide and the machine formats keep every
    finding."""
    from tests.cli.pty_session import on_tty

    out, err, code = on_tty("health", "-w", wh)
    assert code == 0, err
    lines = out.splitlines()
    assert all(len(line) <= 80 for line in lines), out
    assert "null" not in out
    header = [c.strip() for c in next(x for x in lines if x.startswith("┃")).strip("┃").split("┃")]
    assert header == ["table", "score", "worst_finding"]
    cells: list[list[str]] = []
    for line in (x for x in lines if x.startswith("│")):
        parts = [c.strip() for c in line.strip("│").split("│")]
        if parts[0]:
            cells.append(parts)
        else:  # a wrapped message continues on the next line
            cells[-1][2] += " " + parts[2]
    messages = {r["table"]: r["message"] for r in json.loads(run(runner, wh, "-o", "json"))}
    assert [(c[0], c[1]) for c in cells] == [("db.good", "100"), ("db.l0", "70"), ("other.small", "90")]
    assert [c[2] for c in cells] == [messages["good"], messages["l0"], messages["small"]]  # words whole
    wide, _, code = on_tty("health", "-w", wh, "--wide")
    assert code == 0 and "sorted_runs" in wide and "paimon-cli compact db.l0" in wide
