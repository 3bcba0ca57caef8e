"""``alter --set bucket=N`` then ``write``/``compact``/``rescale`` from the command line.

The defect: after a bucket change, ``write`` of existing keys exited 0 and ``read`` showed two
rows per key. Now ``write`` and ``compact`` refuse (exit 4, one line naming the rescale
command, nothing changed) and ``rescale`` rewrites the partitions into the new layout.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.test_compact_cli import invoke, one_error_line
from tests.core.test_rescale import tree


class Env:
    """db.p: PK (id, dt) partitioned by dt; db.u: PK (id) unpartitioned; both bucket=2, then bucket=5."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.ok("create", "db.p", "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL",
                "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2")
        self.ok("create", "db.u", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
                "--option", "bucket=2")
        self.ok("write", "db.p", self.csv("a.csv", "id,v,dt\n1,a,x\n2,b,x\n3,c,x\n4,d,y\n5,e,y\n"))
        self.ok("write", "db.u", self.csv("u.csv", "id,v\n1,a\n2,b\n3,c\n4,d\n"))
        self.ok("alter", "db.p", "--set", "bucket=5")
        self.ok("alter", "db.u", "--set", "bucket=5")

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

    def read(self, table: str) -> list[dict[str, Any]]:
        res = self.ok("read", table, "-o", "json")
        return sorted(json.loads(res.stdout), key=lambda r: (r.get("dt") or "", r["id"]))


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def test_write_of_existing_keys_after_a_bucket_change_is_refused(env: Env) -> None:
    before = tree(env.wh)
    res = env.run("write", "db.p", env.csv("b.csv", "id,v,dt\n1,A,x\n2,B,x\n3,C,x\n4,D,y\n"))
    assert res.exit_code == 4
    line = one_error_line(res)
    assert "partition dt=x" in line and "2 buckets" in line and "5" in line
    assert line.endswith("paimon-cli rescale db.p --partition dt=x")
    res = env.run("write", "db.u", env.csv("ub.csv", "id,v\n1,A\n3,C\n"))
    assert res.exit_code == 4
    assert one_error_line(res).endswith("paimon-cli rescale db.u")
    assert tree(env.wh) == before
    assert [r["id"] for r in env.read("db.p")] == [1, 2, 3, 4, 5]  # one row per key
    assert [r["id"] for r in env.read("db.u")] == [1, 2, 3, 4]


def test_compact_after_a_bucket_change_is_refused(env: Env) -> None:
    before = tree(env.wh)
    for args in (("compact", "db.u"), ("compact", "db.u", "--full"), ("compact", "db.p", "--plan")):
        res = env.run(*args)
        assert res.exit_code == 4, res.output
        assert "paimon-cli rescale db." in one_error_line(res)
    assert tree(env.wh) == before


def test_rescale_dry_run_then_partition_subset_then_the_rest(env: Env) -> None:
    before = tree(env.wh)
    res = env.ok("rescale", "db.p", "--dry-run", "-o", "json")
    assert tree(env.wh) == before
    plan = json.loads(res.stdout)
    assert [(r["partition"], r["current_buckets"], r["new_buckets"], r["files"], r["rows"]) for r in plan] == [
        ("dt=x", 2, 5, plan[0]["files"], 3), ("dt=y", 2, 5, plan[1]["files"], 2)]
    assert all(r["files"] >= 1 and r["bytes"] > 0 for r in plan)
    assert "would rewrite 2 partition(s) of db.p into 5 buckets (dry run, nothing changed)" in res.stderr

    res = env.ok("rescale", "db.p", "--partition", "dt=x", "-o", "json")
    (row,) = json.loads(res.stdout)
    assert (row["snapshot_id"], row["commit_kind"], row["bucket_num"], row["partitions"]) == (2, "OVERWRITE", 5, 1)
    assert row["rows_in"] == row["rows_out"] == 3
    assert "rewrote 1 partition(s) of db.p into 5 buckets: snapshot 2" in res.stderr
    env.ok("write", "db.p", env.csv("x.csv", "id,v,dt\n1,A,x\n3,C,x\n6,F,x\n"))
    res = env.run("write", "db.p", env.csv("y.csv", "id,v,dt\n4,D,y\n"))
    assert res.exit_code == 4 and one_error_line(res).endswith("paimon-cli rescale db.p --partition dt=y")

    env.ok("rescale", "db.p")  # the remaining partition
    env.ok("write", "db.p", env.csv("y2.csv", "id,v,dt\n4,D,y\n"))
    env.ok("compact", "db.p", "--full")
    assert [(r["id"], r["v"], r["dt"]) for r in env.read("db.p")] == [
        (1, "A", "x"), (2, "b", "x"), (3, "C", "x"), (6, "F", "x"), (4, "D", "y"), (5, "e", "y")]
    res = env.ok("rescale", "db.p")
    assert "nothing to rewrite" in res.stderr and json.loads(env.ok("rescale", "db.p", "-o", "json").stdout)[0][
        "snapshot_id"] is None


def test_rescale_with_bucket_num_sets_the_option(env: Env) -> None:
    res = env.ok("rescale", "db.u", "--bucket-num", "3", "--dry-run")
    assert "would set bucket=3 (now 5); would rewrite db.u into 3 buckets" in res.stderr
    assert "new_buckets" in res.stdout
    res = env.ok("rescale", "db.u", "--bucket-num", "3")
    assert "set bucket=3 (schema 2); rewrote db.u into 3 buckets: snapshot 2" in res.stderr
    options = {r["key"]: r["value"] for r in json.loads(env.ok("inspect", "options", "db.u", "-o", "json").stdout)}
    assert options["bucket"] == "3"
    env.ok("write", "db.u", env.csv("ub.csv", "id,v\n1,A\n3,C\n9,Z\n"))
    assert [(r["id"], r["v"]) for r in env.read("db.u")] == [(1, "A"), (2, "b"), (3, "C"), (4, "d"), (9, "Z")]


def test_rescale_refusals(env: Env) -> None:
    env.ok("create", "db.d", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id")
    res = env.run("rescale", "db.d", "--bucket-num", "2")
    assert res.exit_code == 4 and "bucket = -1 (dynamic bucket)" in one_error_line(res)
    env.ok("create", "db.pp", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
           "--option", "bucket=-2")
    res = env.run("rescale", "db.pp")  # a postpone table has no bucket number to rescale to
    assert res.exit_code == 4 and "postpone bucket" in one_error_line(res) and "--bucket-num" in one_error_line(res)
    res = env.run("rescale", "db.p", "--bucket-num", "0")
    assert res.exit_code == 2
    res = env.run("rescale", "db.p", "--partition", "nope=1")
    assert res.exit_code == 4 and "not a partition key" in one_error_line(res)
    res = env.run("rescale", "db.missing")
    assert res.exit_code == 3


def test_rescale_a_branch(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path)
    env.ok("tag", "create", "db.p", "t1")
    env.ok("branch", "create", "db.p", "b1", "--tag", "t1")  # the branch starts with bucket=2 (schema 0)
    env.ok("alter", "db.p", "--set", "bucket=3", "--branch", "b1")
    res = env.run("write", "db.p", env.csv("b.csv", "id,v,dt\n1,B,x\n"), "--branch", "b1")
    assert res.exit_code == 4
    assert one_error_line(res).endswith("paimon-cli rescale db.p --partition dt=x --branch b1")
    main_before = tree(str(Path(env.wh) / "db.db" / "p" / "snapshot"))
    env.ok("rescale", "db.p", "--branch", "b1")
    env.ok("write", "db.p", env.csv("b.csv", "id,v,dt\n1,B,x\n"), "--branch", "b1")
    rows = json.loads(env.ok("read", "db.p", "--branch", "b1", "-o", "json").stdout)
    assert sorted((r["id"], r["v"]) for r in rows) == [(1, "B"), (2, "b"), (3, "c"), (4, "d"), (5, "e")]
    assert tree(str(Path(env.wh) / "db.db" / "p" / "snapshot")) == main_before  # main untouched
