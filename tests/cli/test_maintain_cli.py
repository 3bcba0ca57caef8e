"""``paimon-cli maintain`` end to end: a warehouse in known bad states, cron safety, output."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse
from tests.maintain_fixtures import CORRUPT, DB, FIXABLE, build_bad_warehouse, table_rows, tree_digest


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, list[tuple[Any, ...]]]]:
    wh = tmp_path_factory.mktemp("bad") / "wh"
    return wh, build_bad_warehouse(wh)


@pytest.fixture
def bad(template: tuple[Path, dict[str, list[tuple[Any, ...]]]], tmp_path: Path) -> Path:
    wh = tmp_path / "wh"
    shutil.copytree(template[0], wh)
    return wh


def _kinds(wh: Path) -> dict[str, set[str]]:
    report = Warehouse(str(wh)).health()
    return {h.table: {f.kind.value for f in h.findings} for h in report.tables}


def _cli(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, ["maintain", *args])


def _plan(stdout: str) -> set[tuple[str, str, str]]:
    """(table, action, outcome) of ``-o json`` table records; ("-", the table's outcome) without actions."""
    return {(t["identifier"], a["action"], a["outcome"]) for t in json.loads(stdout) for a in t["actions"]} | {
        (t["identifier"], "-", t["outcome"]) for t in json.loads(stdout) if not t["actions"]}


def test_maintain_fixes_what_health_found_and_leaves_the_corrupt_table(
        runner: CliRunner, bad: Path, template: tuple[Path, dict[str, list[tuple[Any, ...]]]], tmp_path: Path) -> None:
    before = _kinds(bad)
    for table, kinds in FIXABLE.items():
        assert kinds <= before[table], table
    corrupt_dir = bad / f"{DB}.db" / CORRUPT
    corrupt_digest = tree_digest(corrupt_dir)
    report = tmp_path / "run.json"
    res = _cli(runner, "-w", str(bad), "--report", str(report), "-o", "json")
    assert res.exit_code == 4, res.output  # the corrupt table: reported, the others maintained
    assert f"error: {DB}.{CORRUPT}: corrupt: " in res.stderr and res.stderr.count("\n") == 1
    after = _kinds(bad)
    for table, kinds in FIXABLE.items():
        assert not kinds & after[table], (table, after[table])
    assert tree_digest(corrupt_dir) == corrupt_digest
    wh = Warehouse(str(bad))
    for table, rows in template[1].items():
        assert table_rows(wh, table) == rows, table
    rows = {r["identifier"]: r for r in json.loads(res.stdout)}
    assert rows[f"{DB}.{CORRUPT}"]["outcome"] == "corrupt"
    assert rows[f"{DB}.l0"]["outcome"] == "ok" and rows[f"{DB}.l0"]["bytes_rewritten"] > 0
    data = json.loads(report.read_text())
    assert data["exit_code"] == 4 and not data["dry_run"]
    l0 = next(t for t in data["tables"] if t["identifier"] == f"{DB}.l0")
    assert l0["findings"][0]["kind"] == "sorted_runs" and l0["score_after"] == 100
    assert [(a["action"], a["outcome"]) for a in l0["actions"]] == [("compact", "done")]
    assert l0["lease"]["owner"] == data["owner"]
    assert not list(bad.rglob("maintain.lease*"))


def test_dry_run_changes_no_byte_and_prints_the_plan(runner: CliRunner, bad: Path) -> None:
    digest = tree_digest(bad)
    res = _cli(runner, "-w", str(bad), "--dry-run", "-o", "json")
    assert tree_digest(bad) == digest
    got = _plan(res.stdout)
    assert (f"{DB}.l0", "compact", "planned") in got and (f"{DB}.parts", "expire-partitions", "planned") in got
    assert (f"{DB}.{CORRUPT}", "-", "corrupt") in got
    assert all(a["reason"] for t in json.loads(res.stdout) for a in t["actions"])


def test_json_output_has_the_report_files_shape_with_and_without_dry_run(
        runner: CliRunner, bad: Path, tmp_path: Path) -> None:
    """Issue 27 item 13: -o json and --dry-run -o json had different fields and carried the
    score as "90 -> 100" and the actions as "compact" strings."""
    plan_report, run_report = tmp_path / "plan.json", tmp_path / "run.json"
    dry = _cli(runner, "-w", str(bad), "bad.l0", "bad.small", "--dry-run", "-o", "json", "--report", str(plan_report))
    run = _cli(runner, "-w", str(bad), "bad.l0", "bad.small", "-o", "json", "--report", str(run_report))
    assert dry.exit_code == 0 and run.exit_code == 0, (dry.output, run.output)
    planned, done = json.loads(dry.stdout), json.loads(run.stdout)
    assert planned == json.loads(plan_report.read_text())["tables"]
    assert done == json.loads(run_report.read_text())["tables"]
    assert [list(t) for t in planned] == [list(t) for t in done]  # one shape
    by_name = {t["identifier"]: t for t in done}
    l0 = by_name["bad.l0"]
    assert isinstance(l0["score_before"], int) and l0["score_after"] == 100 and l0["score_before"] < 100
    assert [a["action"] for a in l0["actions"]] == ["compact"] and l0["actions"][0]["outcome"] == "done"
    assert isinstance(l0["bytes_rewritten"], int) and l0["findings"][0]["kind"] == "sorted_runs"
    assert {t["identifier"]: [a["outcome"] for a in t["actions"]] for t in planned}["bad.l0"] == ["planned"]
    lines = _cli(runner, "-w", str(bad), "bad.l0", "--dry-run", "-o", "jsonl")
    (record,) = [json.loads(x) for x in lines.stdout.splitlines()]
    assert list(record) == list(planned[0]) and record["identifier"] == "bad.l0"


def test_policy_switches_and_selection(runner: CliRunner, bad: Path, tmp_path: Path) -> None:
    policy = tmp_path / "maintain.toml"
    policy.write_text('[defaults]\ncompact = false\n[tables."bad.small"]\ncompact = true\n')
    res = _cli(runner, "-w", str(bad), "bad.small", "bad.l0", "--policy", str(policy), "-o", "json", "--dry-run")
    assert res.exit_code == 0, res.output
    assert _plan(res.stdout) == {("bad.small", "compact", "planned"), ("bad.l0", "compact", "held-back")}


@pytest.mark.parametrize("text, expected", [
    ("[defaults]\nexpire-snapshot = true\n", "did you mean 'expire-snapshots'?"),
    ('[defaults]\nremove-orphan-files = true\norphan-files-older-than = "2h"\n', "under 1 day is refused"),
    ("[defaults\n", "not valid TOML"),
    ("x = " + "[" * 5000 + "]" * 5000 + "\n", "not valid TOML: arrays or inline tables nested too deeply"),
])
def test_policy_errors_are_one_line_exit_4_and_change_nothing(runner: CliRunner, bad: Path, tmp_path: Path,
                                                              text: str, expected: str) -> None:
    policy = tmp_path / "p.toml"
    policy.write_text(text)
    digest = tree_digest(bad)
    res = _cli(runner, "-w", str(bad), "--policy", str(policy))
    assert res.exit_code == 4 and res.stdout == ""
    assert res.stderr.startswith("error: ") and expected in res.stderr and res.stderr.count("\n") == 1
    assert tree_digest(bad) == digest


def test_missing_policy_or_table_is_not_found(runner: CliRunner, bad: Path) -> None:
    assert _cli(runner, "-w", str(bad), "--policy", str(bad / "nope.toml")).exit_code == 3
    assert _cli(runner, "-w", str(bad), "bad.nope").exit_code == 3


def test_quiet_prints_nothing_on_success_and_openmetrics_parse(runner: CliRunner, bad: Path) -> None:
    from prometheus_client.openmetrics.parser import text_string_to_metric_families

    res = _cli(runner, "-w", str(bad), "bad.small", "bad.l0", "--quiet")
    assert res.exit_code == 0 and res.stdout == "" and res.stderr == ""
    res = _cli(runner, "-w", str(bad), "--format", "openmetrics")
    assert res.exit_code == 4
    families = {f.name: f for f in text_string_to_metric_families(res.stdout)}
    assert {"paimon_maintain_score_before", "paimon_maintain_exit_code", "paimon_maintain_actions"} <= set(families)
    codes = {s.labels["table"]: s.value for s in families["paimon_maintain_table_exit_code"].samples}
    assert codes[CORRUPT] == 4 and codes["small"] == 0
    assert _cli(runner, "-w", str(bad), "--format", "prom").exit_code == 2


# ------------------------------------------------------------------------- cron safety


def _spawn(wh: Path, *args: str) -> subprocess.Popen[bytes]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    return subprocess.Popen([sys.executable, "-m", "paimon_cli", "maintain", "-w", str(wh), *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)


def test_two_runs_started_together_never_work_on_one_table_at_once(bad: Path, tmp_path: Path) -> None:
    shutil.rmtree(bad / f"{DB}.db" / CORRUPT)  # both runs must exit 0
    procs = [_spawn(bad, "--report", str(tmp_path / f"r{i}.json")) for i in range(2)]
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err.decode()
    reports = [json.loads((tmp_path / f"r{i}.json").read_text()) for i in range(2)]
    assert reports[0]["owner"] != reports[1]["owner"]
    worked: dict[str, list[tuple[int, int, str]]] = {}
    for r in reports:
        for t in r["tables"]:
            if t["lease"] is not None:
                worked.setdefault(t["identifier"], []).append(
                    (t["lease"]["acquired"], t["lease"]["released"], r["owner"]))
            for a in t["actions"]:
                if a["outcome"] == "done":  # every action ran inside its run's lease on the table
                    assert t["lease"]["acquired"] <= a["started"] <= a["ended"] <= t["lease"]["released"]
    assert set(worked) == {f"{DB}.{n}" for n in FIXABLE}
    for intervals in worked.values():
        intervals.sort()
        for (_, end, _), (start, _, _) in zip(intervals, intervals[1:], strict=False):
            assert end < start  # never two owners at once
    done = [(t["identifier"], a["action"]) for r in reports for t in r["tables"] for a in t["actions"]
            if a["outcome"] == "done"]
    assert len(done) == len(set(done))  # no action ran twice: the second owner re-planned under its lease
    assert not _kinds(bad)["l0"] & FIXABLE["l0"]


def test_a_killed_runs_lease_expires_and_is_taken_over(bad: Path, tmp_path: Path) -> None:
    table = Warehouse(str(bad)).table(f"{DB}.l0").open()
    code = ("import sys, time\nfrom paimon_cli.core.api import Warehouse\nfrom paimon_cli.core.maintain.lease import Lease\n"
            f"t = Warehouse({str(bad)!r}).table('{DB}.l0').open()\n"
            "Lease.acquire(t.file_io, t.path, 'killed-run', 3000)\nprint('held', flush=True)\ntime.sleep(120)\n")
    holder = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE)
    assert holder.stdout is not None and holder.stdout.readline() == b"held\n"
    os.kill(holder.pid, signal.SIGKILL)  # no cleanup runs: the lease stays behind
    holder.wait()
    lease = Path(table.path) / "maintain.lease"
    assert lease.exists()
    first = _spawn(bad, f"{DB}.l0", "--report", str(tmp_path / "first.json"))
    first.communicate(timeout=120)
    t = json.loads((tmp_path / "first.json").read_text())["tables"][0]
    assert first.returncode == 0 and t["outcome"] == "leased" and "killed-run" in t["message"]
    time.sleep(max(0.0, json.loads(lease.read_text())["expires"] / 1000 - time.time()) + 0.2)
    second = _spawn(bad, f"{DB}.l0", "--report", str(tmp_path / "second.json"))
    second.communicate(timeout=120)
    t = json.loads((tmp_path / "second.json").read_text())["tables"][0]
    assert second.returncode == 0 and t["outcome"] == "ok" and t["actions"][0]["outcome"] == "done"
    assert not lease.exists() and not _kinds(bad)["l0"] & FIXABLE["l0"]


@pytest.mark.parametrize("sig", ["INT", "TERM"])
def test_an_interrupted_run_releases_its_lease_and_writes_its_report(bad: Path, tmp_path: Path, sig: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    env["PAIMON_CLI_TEST_SIGNAL"] = f"{sig}:file:1"  # the run signals itself inside its compaction
    before = table_rows(Warehouse(str(bad)), "l0")
    report = tmp_path / "report.json"
    proc = subprocess.run([sys.executable, "-m", "paimon_cli", "maintain", f"{DB}.l0", "-w", str(bad),
                           "--report", str(report)], capture_output=True, env=env, timeout=120,
                          preexec_fn=lambda: [signal.signal(s, signal.SIG_DFL) for s in (signal.SIGINT, signal.SIGTERM)])
    assert proc.returncode == 128 + getattr(signal, f"SIG{sig}"), proc.stderr.decode()
    assert b"interrupted (SIG" in proc.stderr
    assert not list(bad.rglob("maintain.lease*"))
    assert table_rows(Warehouse(str(bad)), "l0") == before
    run = json.loads(report.read_text())  # what the run did up to the signal
    assert run["interrupted"] == f"SIG{sig}"
    [t] = run["tables"]
    assert t["outcome"] == "interrupted" and t["lease"]["released"] is not None
    cut = [a for a in t["actions"] if a["detail"] == f"interrupted (SIG{sig})"]
    assert cut and cut[0]["outcome"] == "failed" and all(a["outcome"] == "skipped" for a in cut[1:])
