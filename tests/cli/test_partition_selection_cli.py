"""A ``--partition`` / ``--where`` that selects no partition (issue 27, item 11).

The defect: ``compact --partition dt=2024-05-09`` on a table without that partition said
"nothing to compact" and exited 0, so a mistyped cron line passed as a quiet run. Now every
maintenance command that selects partitions refuses it (exit 3, one line naming the selection
and the table, nothing written) -- real run, ``--plan`` and ``--dry-run`` alike; ``write
--overwrite --partition`` and ``read --where`` still succeed (a new partition, an empty result
are answers) and say so on stderr.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.test_compact_cli import invoke, one_error_line


class Env:
    """db.p: PK (id, dt) partitioned by dt, bucket 2, partitions 2024-05-01/02; db.a: an
    unaware-bucket append table partitioned the same way; db.e: partitioned, never written."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.ok("create", "db.p", "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL",
                "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2")
        self.ok("create", "db.a", "--schema", "id BIGINT, v STRING, dt STRING", "--partition-by", "dt")
        self.ok("create", "db.e", "--schema", "id BIGINT, dt STRING", "--partition-by", "dt")
        rows = "id,v,dt\n1,a,2024-05-01\n2,b,2024-05-01\n3,c,2024-05-02\n"
        for t in ("db.p", "db.a"):
            for _ in range(2):
                self.ok("write", t, self.csv("in.csv", rows), "--write-only")

    def csv(self, name: str, text: str) -> str:
        p = self.root / name
        p.write_text(text)
        return str(p)

    def run(self, *args: str) -> Any:
        return invoke(self.runner, *args, "-w", self.wh)

    def ok(self, *args: str) -> Any:
        res = self.run(*args)
        assert res.exit_code == 0, res.output
        return res

    def tree(self) -> set[str]:
        return {str(p.relative_to(self.wh)) for p in Path(self.wh).rglob("*")}


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


@pytest.mark.parametrize("args, selection", [
    (["compact", "db.p", "--partition", "dt=2024-05-09"], "--partition dt=2024-05-09 matched no partition of db.p"),
    (["compact", "db.p", "--partition", "dt=2024-05-09", "--plan"], "--partition dt=2024-05-09 matched"),
    (["compact", "db.p", "--full", "--partition", "dt=2024-05-09;dt=2024-05-10"],
     "--partition dt=2024-05-09;dt=2024-05-10 matched no partition of db.p"),
    (["compact", "db.p", "--where", "dt > '2024-06-01'"], "--where \"dt > '2024-06-01'\" matched no partition"),
    (["compact", "db.a", "--order-strategy", "zorder", "--order-by", "id,v", "--partition", "dt=2024-05-09"],
     "--partition dt=2024-05-09 matched no partition of db.a"),
    (["compact", "db.e", "--partition", "dt=2024-05-09"], "--partition dt=2024-05-09 matched no partition of db.e"),
    (["rescale", "db.p", "--bucket-num", "4", "--partition", "dt=2024-05-09"],
     "--partition dt=2024-05-09 matched no partition of db.p"),
    (["rescale", "db.p", "--bucket-num", "4", "--partition", "dt=2024-05-09", "--dry-run"],
     "--partition dt=2024-05-09 matched"),
    (["rewrite-file-index", "db.a", "--partition", "dt=2024-05-09"],
     "--partition dt=2024-05-09 matched no partition of db.a"),
    (["rewrite-file-index", "db.a", "--where", "dt = '2024-05-09'", "--dry-run"],
     "--where \"dt = '2024-05-09'\" matched no partition"),
])
def test_a_selection_matching_no_partition_is_refused(env: Env, args: list[str], selection: str) -> None:
    if args[0] == "rewrite-file-index":
        env.ok("alter", "db.a", "--set", "file-index.bloom-filter.columns=v")
    before = env.tree()
    res = env.run(*args)
    assert res.exit_code == 3, res.output
    line = one_error_line(res)
    assert selection in line and "inspect partitions" in line
    assert env.tree() == before  # nothing written, not even the schema change of --bucket-num


def test_a_selection_matching_a_partition_still_works(env: Env) -> None:
    res = env.ok("compact", "db.p", "--full", "--partition", "dt=2024-05-01;dt=2024-05-09", "-o", "json")
    assert json.loads(res.stdout)[0]["commit_kind"] == "COMPACT"
    # matched, but already compacted: still "nothing to do", exit 0
    res = env.ok("compact", "db.p", "--full", "--partition", "dt=2024-05-01", "-o", "json")
    assert json.loads(res.stdout)[0]["snapshot_id"] is None
    res = env.ok("rescale", "db.p", "--partition", "dt=2024-05-02", "--dry-run", "-o", "json")
    assert res.exit_code == 0  # in the target layout already: nothing to rewrite, not an error


def test_overwrite_of_a_partition_that_does_not_exist_says_so(env: Env) -> None:
    day = env.csv("day.csv", "id,v\n9,z\n")
    dry = env.ok("write", "db.p", day, "--overwrite", "--partition", "dt=2024-05-09", "--dry-run")
    assert "--partition dt=2024-05-09 matched no partition of db.p: the overwrite would add it" in dry.stderr
    res = env.ok("write", "db.p", day, "--overwrite", "--partition", "dt=2024-05-09", "-o", "json")
    assert "--partition dt=2024-05-09 matched no partition of db.p: the overwrite added it" in res.stderr
    assert json.loads(res.stdout)[0]["snapshot_id"] is not None
    again = env.ok("write", "db.p", day, "--overwrite", "--partition", "dt=2024-05-09", "-o", "json")
    assert "matched no partition" not in again.stderr  # it exists now: replaced


def test_read_where_matching_no_partition_is_an_empty_answer_with_a_note(env: Env) -> None:
    res = env.ok("read", "db.p", "--where", "dt = '2024-05-09'", "-o", "json")
    assert json.loads(res.stdout) == []
    assert "--where \"dt = '2024-05-09'\" matched no partition of db.p: the result is empty" in res.stderr
    explain = env.ok("read", "db.p", "--where", "dt = '2024-05-09' AND id = 1", "--explain")
    assert "matched no partition of db.p" in explain.stderr
    some = env.ok("read", "db.p", "--where", "dt = '2024-05-01' AND id = 99", "-o", "json")
    assert json.loads(some.stdout) == [] and "matched no partition" not in some.stderr


@pytest.mark.parametrize("args, command", [
    (["compact", "db.a"], "compact"),
    (["compact", "db.a", "--order-strategy", "zorder", "--order-by", "id,v"], "compact"),
    (["rewrite-file-index", "db.a", "--dry-run"], "rewrite-file-index"),
    (["clone", "db.a", "--target", "db.a2", "--dry-run"], "clone"),
    (["materialize-deletion-vectors", "db.dv", "--dry-run"], "materialize-deletion-vectors"),
])
def test_a_where_beyond_partition_keys_names_the_running_command(env: Env, args: list[str], command: str) -> None:
    """The ``--where`` refusals are shared by every command that selects partitions; each
    names the command that is running (they said "compact" for all of them)."""
    env.ok("create", "db.dv", "--schema", "id BIGINT, v STRING, dt STRING", "--partition-by", "dt",
           "--option", "row-tracking.enabled=true", "--option", "data-evolution.enabled=true",
           "--option", "deletion-vectors.enabled=true")
    before = env.tree()
    res = env.run(*args, "--where", "id = 1")
    assert res.exit_code == 4, res.output
    assert one_error_line(res) == (f"error: --where: {command} selects partitions only; 'id' is not a partition key "
                                   "(keys: ['dt'])")
    assert env.tree() == before


@pytest.mark.parametrize("args, command", [
    (["compact", "db.u"], "compact"),
    (["rewrite-file-index", "db.u", "--dry-run"], "rewrite-file-index"),
    (["clone", "db.u", "--target", "db.u2", "--dry-run"], "clone"),
])
def test_a_where_on_an_unpartitioned_table_names_the_running_command(env: Env, args: list[str],
                                                                     command: str) -> None:
    env.ok("create", "db.u", "--schema", "id BIGINT, v STRING")
    env.ok("write", "db.u", env.csv("u.csv", "id,v\n1,a\n"))
    res = env.run(*args, "--where", "id = 1")
    assert res.exit_code == 4, res.output
    assert one_error_line(res) == f"error: --where: the table is not partitioned; {command} filters partitions only"
