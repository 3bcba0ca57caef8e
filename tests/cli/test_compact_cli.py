"""``paimon-cli compact``: result rows, ``--plan``, exit codes and one-line errors; ``write --write-only``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import PLAN_COLUMNS, RESULT_COLUMNS
from paimon_cli.core.operation.scan import FileStoreScan


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def one_error_line(result: Any) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    assert result.stdout == ""
    return lines[0]


class Env:
    """db.pk: PK table partitioned by dt, bucket 2, six write-only commits; db.ap: append table."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.n = 0
        ok = invoke(runner, "create", "db.pk", "--schema", "id INT NOT NULL, dt STRING NOT NULL, v STRING",
                    "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2", "-w", self.wh)
        assert ok.exit_code == 0, ok.output
        ok = invoke(runner, "create", "db.ap", "--schema", "id INT, v STRING", "-w", self.wh)
        assert ok.exit_code == 0, ok.output
        for r in range(6):
            self.write("pk", [{"id": i, "dt": dt, "v": f"{r}"} for dt in ("a", "b") for i in range(30)],
                       "--write-only")

    def write(self, table: str, rows: list[dict[str, Any]], *args: str) -> Any:
        self.n += 1
        p = self.root / f"in{self.n}.parquet"
        pq.write_table(pa.Table.from_pylist(rows), p)
        res = invoke(self.runner, "write", f"db.{table}", str(p), "-w", self.wh, *args)
        assert res.exit_code == 0, res.output
        return res

    def compact(self, *args: str, table: str = "pk") -> Any:
        return invoke(self.runner, "compact", f"db.{table}", "-w", self.wh, *args)

    def latest(self, table: str = "pk") -> int | None:
        return FileSystemCatalog(self.wh).get_table(f"db.{table}").snapshot_manager.latest_snapshot_id()

    def tree(self) -> set[str]:
        return {str(p.relative_to(self.wh)) for p in Path(self.wh).rglob("*")}


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def test_compact_json_result(env: Env) -> None:
    res = env.compact("-o", "json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert list(row) == RESULT_COLUMNS
    assert row["snapshot_id"] == 7 and row["commit_kind"] == "COMPACT" and row["units"] == 4
    assert row["files_in"] == 24 and row["files_out"] >= 4 and row["engine"] == "local"
    assert row["bytes_in"] > 0 and row["bytes_out"] > 0 and row["rows_out"] == 60
    assert "small plan" in row["engine_reason"]
    # not a TTY: exactly one summary line on stderr
    assert res.stderr.count("\n") == 1 and res.stderr.startswith("compact: compacted 4 unit(s) into snapshot 7")
    read = invoke(env.runner, "read", "db.pk", "-w", env.wh, "-o", "json")
    assert sorted((r["id"], r["dt"], r["v"]) for r in json.loads(read.stdout)) == sorted(
        (i, dt, "5") for dt in ("a", "b") for i in range(30))


def test_plan_rows_and_nothing_written(env: Env) -> None:
    before = env.tree()
    res = env.compact("--plan", "--full", "--partition", "dt=a", "-o", "json")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert len(rows) == 2 and all(list(r) == PLAN_COLUMNS for r in rows)
    assert {(r["partition"], r["bucket"]) for r in rows} == {("dt=a", 0), ("dt=a", 1)}
    r = rows[0]
    assert r["sorted_runs"] == 6 and r["levels"] == "L0:6" and r["files"] == 6 and r["output_level"] == 5
    assert r["bytes_to_rewrite"] > 0 and r["files_after"] >= 1 and r["reason"] == "full"
    assert env.tree() == before and env.latest() == 6
    table = env.compact("--plan", "--max-buckets", "1")
    assert table.exit_code == 0 and "deferred by --max-buckets budget" in table.stdout


def test_nothing_to_compact(env: Env) -> None:
    assert env.compact("--full").exit_code == 0
    latest = env.latest()
    res = env.compact("--full", "-o", "json")
    assert res.exit_code == 0
    (row,) = json.loads(res.stdout)
    assert row["snapshot_id"] is None and row["units"] == 0 and "nothing" in row["message"]
    assert env.latest() == latest


def test_write_only_flag_and_dv_visibility(env: Env) -> None:
    ok = invoke(env.runner, "create", "db.dv", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
                "--option", "bucket=1", "--option", "deletion-vectors.enabled=true", "-w", env.wh)
    assert ok.exit_code == 0
    res = env.write("dv", [{"id": 1, "v": "a"}], "-o", "json")
    row = json.loads(res.stdout)[0]  # APPEND then COMPACT: visible at once
    assert (row["snapshot_id"], row["commit_kind"], row["compact_snapshot_id"]) == (1, "APPEND", 2)
    env.write("dv", [{"id": 2, "v": "b"}], "--write-only")
    read = invoke(env.runner, "read", "db.dv", "-w", env.wh, "-o", "json")
    assert [r["id"] for r in json.loads(read.stdout)] == [1]
    assert env.compact(table="dv").exit_code == 0
    read = invoke(env.runner, "read", "db.dv", "-w", env.wh, "-o", "json")
    assert sorted(r["id"] for r in json.loads(read.stdout)) == [1, 2]


@pytest.mark.parametrize("args, code, text", [
    (["--partition", "x=1"], 4, "'x' is not a partition key"),
    (["--partition", "dt=a", "--where", "dt = 'a'"], 4, "either --partition or --where"),
    (["--where", "id = 1"], 4, "'id' is not a partition key"),
    (["--where", "dt = "], 4, "--where"),
    (["--engine", "fast"], 4, "--engine 'fast'"),
    (["--engine", "local", "--spark-master", "local[2]"], 4, "need --engine spark"),
    (["--max-bytes", "lots"], 4, "--max-bytes"),
    (["--spark-conf", "novalue"], 4, "--spark-conf 'novalue'"),
    (["--order-strategy", "zorder"], 4, "needs both --order-strategy and --order-by"),
    (["--order-strategy", "zorder", "--order-by", "id"], 4, "primary key"),
    (["--branch", "nope"], 3, "branch"),
])
def test_bad_input_one_line(env: Env, args: list[str], code: int, text: str) -> None:
    before = env.tree()
    res = env.compact(*args)
    assert res.exit_code == code, res.output
    assert text in one_error_line(res)
    assert env.tree() == before


def test_missing_table_and_sort_errors(env: Env) -> None:
    res = invoke(env.runner, "compact", "db.nope", "-w", env.wh)
    assert res.exit_code == 3 and "nope" in one_error_line(res)
    res = env.compact("--order-strategy", "spiral", "--order-by", "id", table="ap")
    assert res.exit_code == 4 and "spiral" in one_error_line(res)
    res = env.compact("--order-strategy", "order", "--order-by", "nope", table="ap")
    assert res.exit_code == 4 and "nope" in one_error_line(res)


def test_sort_compaction_of_append_table(env: Env) -> None:
    for k in range(3):
        env.write("ap", [{"id": (i * 7919 + k) % 100, "v": str(i)} for i in range(50)])
    plan = env.compact("--order-strategy", "zorder", "--order-by", "id,v", "--plan", "-o", "json", table="ap")
    assert plan.exit_code == 0, plan.output
    (row,) = json.loads(plan.stdout)
    assert row["files"] == 3 and row["reason"] == "sort by zorder(id,v)"
    res = env.compact("--order-strategy", "order", "--order-by", "id", "-o", "json", table="ap")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["commit_kind"] == "OVERWRITE" and row["rows_in"] == row["rows_out"] == 150
    read = invoke(env.runner, "read", "db.ap", "-w", env.wh, "-o", "json")
    ids = [r["id"] for r in json.loads(read.stdout)]
    assert ids == sorted(ids) and len(ids) == 150


def test_conflict_exit_5(env: Env, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.compact import job

    real = job.run_units

    raced: list[Any] = []

    def racing(table: Any, units: Any, engine: str, **kw: Any) -> Any:
        results = real(table, units, engine, **kw)
        if not raced:  # another job compacts everything first and wins the race
            raced.append(None)
            other = job.compact_table(FileSystemCatalog(env.wh).get_table("db.pk"), full=True)
            assert other.snapshot_id == 7
        return results

    monkeypatch.setattr(job, "run_units", racing)
    before = {p for p in env.tree() if "data-" in p}
    res = env.compact()
    assert res.exit_code == 5, res.output
    assert "give up committing" in one_error_line(res)
    assert env.latest() == 7
    after = {p for p in env.tree() if "data-" in p}
    live = {e.file.file_name for e in FileStoreScan(FileSystemCatalog(env.wh).get_table("db.pk")).plan(
        FileSystemCatalog(env.wh).get_table("db.pk").snapshot_manager.latest_snapshot())}
    assert {Path(p).name for p in after - before} == live  # only the winner's outputs were added


def test_progress_bar_only_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    from paimon_cli.core.mergetree.compact_unit import MERGE_TREE, CompactUnit
    from paimon_cli.progress import ProgressBar

    unit = CompactUnit(MERGE_TREE, b"", 3, 4, ())
    for tty in (False, True):
        buf = io.StringIO()
        buf.isatty = lambda tty=tty: tty  # type: ignore[method-assign]
        monkeypatch.setattr(sys, "stderr", buf)
        with ProgressBar("compacting") as bar:
            bar.units("start", unit, 0, 2)
            bar.units("done", unit, 1, 2)
            bar.units("done", None, 2, 2)
        monkeypatch.undo()
        text = buf.getvalue()
        if tty:
            assert "compacting" in text and "2/2" in text
        else:
            assert text == ""


def test_compact_a_branch(env: Env) -> None:
    from paimon_cli.core.compact.write_job import write_table_result
    from paimon_cli.core.operation.branch_ops import create_branch

    cat = FileSystemCatalog(env.wh)
    create_branch(cat.get_table("db.pk"), "b1")
    for r in range(6):
        p = env.root / f"b{r}.parquet"
        pq.write_table(pa.Table.from_pylist([{"id": i, "dt": "a", "v": f"b{r}"} for i in range(10)]), p)
        write_table_result(cat.get_table("db.pk", branch="b1"), [str(p)], options={"write-only": "true"})
    main_latest = env.latest()
    res = env.compact("--branch", "b1", "--full", "-o", "json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["snapshot_id"] == 7 and row["commit_kind"] == "COMPACT"
    assert env.latest() == main_latest
    branch = cat.get_table("db.pk", branch="b1")
    assert branch.snapshot_manager.latest_snapshot().commit_kind == "COMPACT"
    read = invoke(env.runner, "read", "db.pk", "--branch", "b1", "-w", env.wh, "-o", "json")
    assert sorted((r["id"], r["v"]) for r in json.loads(read.stdout)) == [(i, "b5") for i in range(10)]
