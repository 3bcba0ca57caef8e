"""compact-manifest, remove-unexisting-files and repair from the command line: output and exit codes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.test_compact_cli import invoke, one_error_line


class Env:
    """db.t: append table partitioned by dt, three write commits of one row each."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.table = root / "wh" / "db.db" / "t"
        self.ok("create", "db.t", "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL",
                "--partition-by", "dt", "--option", "bucket=-1")
        for i, dt in enumerate(("x", "y", "x")):
            p = root / f"in{i}.csv"
            p.write_text(f"id,v,dt\n{i},v{i},{dt}\n")
            self.ok("write", "db.t", str(p))

    def run(self, *args: str) -> Any:
        return invoke(self.runner, *args, "-w", self.wh)

    def ok(self, *args: str) -> Any:
        res = self.run(*args)
        assert res.exit_code == 0, res.output
        return res

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json").stdout)

    def snapshots(self) -> list[str]:
        return sorted(p.name for p in (self.table / "snapshot").glob("snapshot-*"))


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def test_compact_manifest(env: Env) -> None:
    plan = env.json("compact-manifest", "db.t", "--dry-run")
    assert [r["action"] for r in plan] == ["rewrite"] * 3 and env.snapshots()[-1] == "snapshot-3"
    res = env.ok("compact-manifest", "db.t", "-o", "json")
    assert json.loads(res.stdout) == [{"snapshot_id": 4, "manifests_before": 3, "manifests_after": 1,
                                       "entries": 3, "dropped": 0}]
    assert "committed snapshot 4: 3 manifests -> 1" in res.stderr
    res = env.ok("compact-manifest", "db.t")
    assert "nothing to compact" in res.stderr and env.snapshots()[-1] == "snapshot-4"
    assert sorted(r["id"] for r in env.json("read", "db.t")) == [0, 1, 2]


def test_remove_unexisting_files(env: Env) -> None:
    victim = next((env.table / "dt=y" / "bucket-0").glob("*.parquet"))
    victim.unlink()
    dry = env.json("remove-unexisting-files", "db.t", "--dry-run")
    assert [r["path"] for r in dry] == [f"dt=y/bucket-0/{victim.name}"] and env.snapshots()[-1] == "snapshot-3"
    res = env.ok("remove-unexisting-files", "db.t", "-o", "json")
    assert json.loads(res.stdout) == dry
    assert "dropped their entries (1 rows) in snapshot 4" in res.stderr
    assert sorted(r["id"] for r in env.json("read", "db.t")) == [0, 2]


def test_remove_unexisting_files_refuses_an_unreadable_manifest(env: Env) -> None:
    for m in (env.table / "manifest").glob("manifest-[0-9a-f]*"):
        m.write_bytes(b"junk")
    res = env.run("remove-unexisting-files", "db.t")
    assert res.exit_code == 6
    assert "cannot read the manifests of snapshot 3" in one_error_line(res)
    assert env.snapshots()[-1] == "snapshot-3"


def test_repair(env: Env) -> None:
    snap = env.table / "snapshot"
    (snap / "LATEST").write_text("42")
    (snap / "snapshot-2").unlink()
    res = env.run("repair", "db.t")
    assert res.exit_code == 6 and "`repair --earliest 3`" in one_error_line(res)
    dry = env.json("repair", "db.t", "--earliest", "3", "--dry-run")
    assert [(r["hint"], r["current"], r["repaired"], r["action"]) for r in dry] == [
        ("EARLIEST", "1", 3, "write"), ("LATEST", "42", 3, "write")]
    assert (snap / "LATEST").read_text() == "42"
    res = env.ok("repair", "db.t", "--earliest", "3")
    assert "write EARLIEST = 3, write LATEST = 3" in res.stderr
    assert (snap / "EARLIEST").read_text() == "3" and (snap / "LATEST").read_text() == "3"
    res = env.run("repair", "db.t", "--earliest", "1")
    assert res.exit_code == 4 and "must not be earlier" in one_error_line(res)
    assert env.run("repair", "db.t", "--earliest", "0").exit_code == 2
    assert env.run("repair", "db.nope").exit_code == 3
