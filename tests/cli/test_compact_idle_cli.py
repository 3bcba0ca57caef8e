"""``compact --partition-idle-time`` (Java's ``partition_idle_time``): only partitions whose newest
file is at least that old, judged by the files' ``_CREATION_TIME`` against the writer's clock."""

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
from paimon_cli.core.mergetree import file_writer
from paimon_cli.core.operation.scan import FileStoreScan

DAY = 86_400_000


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def one_error_line(result: Any) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ")
    return lines[0]


class Env:
    """db.pk (PK, bucket 1) and db.ap (unaware-bucket append), both partitioned by dt: partition
    ``old`` written three days ago (the writer's clock moved back), ``new`` written now."""

    def __init__(self, runner: CliRunner, root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.runner, self.root, self.wh, self.n = runner, root, str(root / "wh"), 0
        for name, extra in (("pk", ["--primary-key", "id,dt", "--option", "bucket=1"]),
                            ("ap", ["--option", "compaction.min.file-num=2"])):
            ok = invoke(runner, "create", f"db.{name}", "--schema", "id INT NOT NULL, dt STRING NOT NULL, v STRING",
                        "--partition-by", "dt", *extra, "-w", self.wh)
            assert ok.exit_code == 0, ok.output
        real = file_writer.creation_time_millis
        with monkeypatch.context() as m:
            m.setattr(file_writer, "creation_time_millis", lambda: real() - 3 * DAY)
            self.write_rounds("old")
        self.write_rounds("new")

    def write_rounds(self, dt: str) -> None:
        for table in ("pk", "ap"):
            for r in range(3):
                self.write(table, [{"id": i, "dt": dt, "v": f"{r}"} for i in range(20)])

    def write(self, table: str, rows: list[dict[str, Any]]) -> None:
        self.n += 1
        p = self.root / f"in{self.n}.parquet"
        pq.write_table(pa.Table.from_pylist(rows), p)
        res = invoke(self.runner, "write", f"db.{table}", str(p), "-w", self.wh, "--write-only")
        assert res.exit_code == 0, res.output

    def compact(self, *args: str, target: str = "db.pk") -> Any:
        return invoke(self.runner, "compact", target, "-w", self.wh, *args)

    def files(self, table: str = "pk") -> dict[str, list[tuple[str, int]]]:
        """Live files per partition: (name, level), sorted."""
        t = FileSystemCatalog(self.wh).get_table(f"db.{table}")
        out: dict[str, list[tuple[str, int]]] = {}
        for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot()):
            dt = "old" if b"old" in e.partition else "new"
            out.setdefault(dt, []).append((e.file.file_name, e.file.level))
        return {k: sorted(v) for k, v in out.items()}

    def latest(self, table: str = "pk") -> int | None:
        return FileSystemCatalog(self.wh).get_table(f"db.{table}").snapshot_manager.latest_snapshot_id()

    def tree(self) -> set[str]:
        return {str(p.relative_to(self.wh)) for p in Path(self.wh).rglob("*")}


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Env:
    return Env(runner, tmp_path, monkeypatch)


def test_only_idle_partitions_fully_compacted_and_plan_matches_run(env: Env) -> None:
    before_tree, before = env.tree(), env.files()
    plan = env.compact("--partition-idle-time", "1d", "--plan", "-o", "json")
    assert plan.exit_code == 0, plan.output
    rows = json.loads(plan.stdout)
    # implied full compaction (no --full given): the three level-0 runs go to the top level
    assert [(r["partition"], r["bucket"], r["files"], r["output_level"], r["reason"]) for r in rows] == [
        ("dt=old", 0, 3, 5, "full")]
    assert env.tree() == before_tree  # --plan writes nothing

    res = env.compact("--partition-idle-time", "1d", "-o", "json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["commit_kind"] == "COMPACT" and row["units"] == len(rows) and row["files_in"] == 3
    after = env.files()
    assert after["new"] == before["new"]  # the busy partition is untouched
    assert [lv for _, lv in after["old"]] == [5] and not set(after["old"]) & set(before["old"])
    read = invoke(env.runner, "read", "db.pk", "-w", env.wh, "-o", "json")
    assert sorted((r["dt"], r["id"], r["v"]) for r in json.loads(read.stdout)) == sorted(
        (dt, i, "2") for dt in ("old", "new") for i in range(20))


def test_compaction_output_is_new_data_for_the_next_run(env: Env) -> None:
    """As Java: the compacted files are the partition's newest files, so it is not idle again."""
    assert env.compact("--partition-idle-time", "1d").exit_code == 0
    latest = env.latest()
    res = env.compact("--partition-idle-time", "1d", "-o", "json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["snapshot_id"] is None and "2 partition(s) received new files" in row["message"]
    assert env.latest() == latest


def test_nothing_idle_long_enough(env: Env) -> None:
    before = env.tree()
    res = env.compact("--partition-idle-time", "4d", "-o", "json")
    assert res.exit_code == 0, res.output
    (row,) = json.loads(res.stdout)
    assert row["snapshot_id"] is None and row["units"] == 0
    assert "nothing to compact in the idle partitions (2 partition(s)" in row["message"]
    assert env.tree() == before
    # an ISO-8601 duration is the same grammar as every other duration option
    plan = env.compact("--partition-idle-time", "PT47H", "--plan", "-o", "json")
    assert [r["partition"] for r in json.loads(plan.stdout)] == ["dt=old"]


def test_append_table_gets_append_compaction_of_idle_partitions(env: Env) -> None:
    before = env.files("ap")
    res = env.compact("--partition-idle-time", "2d", "--plan", "-o", "json", target="db.ap")
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert [(r["partition"], r["files"], r["reason"]) for r in rows] == [("dt=old", 3, "small-files")]
    assert env.compact("--partition-idle-time", "2d", target="db.ap").exit_code == 0
    after = env.files("ap")
    assert after["new"] == before["new"] and len(after["old"]) == 1


def test_database_form(env: Env) -> None:
    res = env.compact("--partition-idle-time", "1d", "-o", "json", target="db")
    assert res.exit_code == 0, res.output
    assert env.files()["new"] and len(env.files()["old"]) == 1 and len(env.files("ap")["old"]) == 1
    assert len(env.files("ap")["new"]) == 3


@pytest.mark.parametrize("args, text", [
    (["--partition-idle-time", "5"], "a duration needs a unit"),
    (["--partition-idle-time", "soon"], "not a duration"),
    (["--partition-idle-time", "-1d"], "--partition-idle-time"),
])
def test_bad_durations(env: Env, args: list[str], text: str) -> None:
    before = env.tree()
    for target in ("db.pk", "db"):
        res = env.compact(*args, target=target)
        assert res.exit_code == 4 and text in one_error_line(res), res.output
    assert env.tree() == before


def test_refused_with_order_compaction(env: Env) -> None:
    before = env.tree()
    res = env.compact("--partition-idle-time", "1d", "--order-strategy", "zorder", "--order-by", "id,v",
                      target="db.ap")
    assert res.exit_code == 4
    line = one_error_line(res)
    assert "--partition-idle-time" in line and "--order-strategy" in line
    assert env.tree() == before


def test_postpone_table_refused(env: Env) -> None:
    ok = invoke(env.runner, "create", "db.pp", "--schema", "id INT NOT NULL, dt STRING NOT NULL",
                "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=-2", "-w", env.wh)
    assert ok.exit_code == 0, ok.output
    env.write("pp", [{"id": 1, "dt": "old"}])
    res = env.compact("--partition-idle-time", "1d", target="db.pp")
    assert res.exit_code == 1 and "postpone-bucket" in one_error_line(res)
