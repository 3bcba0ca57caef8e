"""``paimon-cli remove-orphan-files`` and ``paimon-cli rollback``: exit codes, dry-run JSON = real run."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.core.test_orphans_support import age_all, files_under, make_table, plant, read_rows, reload, write_rows


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    return CliRunner()


@pytest.fixture
def table(tmp_path: Path) -> Any:
    t = make_table(tmp_path / "wh")
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    write_rows(t, [(1, "a", "x2"), (3, "c", "z")], tmp_path)
    write_rows(t, [(4, "a", "w")], tmp_path)
    t.tag_manager.create_tag("t1", t.snapshot_manager.snapshot(1))
    return t


def wh(t: Any) -> str:
    return str(Path(t.path).parent.parent)


def run(runner: CliRunner, t: Any, *args: str) -> Any:
    return runner.invoke(app, [*args, "-w", wh(t)])


def test_orphans_dry_run_json_then_real_run(runner: CliRunner, table: Any) -> None:
    root = Path(table.path)
    planted = {
        plant(root / "dt=a" / "bucket-0" / "data-orphan-0.parquet", b"12345"),
        plant(root / "manifest" / "manifest-orphan-0", b"123"),
        plant(root / "snapshot" / ".snapshot-9.x.tmp", b"1"),
        plant(root / "dt=q" / "bucket-1" / "data-alone-0.parquet", b"12"),
    }
    age_all(table.path)
    before = files_under(table.path)
    dry = run(runner, table, "remove-orphan-files", "db.t", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    rows = json.loads(dry.stdout)
    assert files_under(table.path) == before
    files = {r["path"]: r["bytes"] for r in rows if r["kind"] != "directory"}
    assert files == {os.path.relpath(p, table.path): os.path.getsize(p) for p in planted}
    assert {r["path"] for r in rows if r["kind"] == "directory"} == {"dt=q/bucket-1", "dt=q"}
    assert "would delete 4 files (11 bytes) and 2 empty directories" in dry.stderr
    real = run(runner, table, "remove-orphan-files", "db.t", "-o", "json")
    assert real.exit_code == 0, real.output
    assert json.loads(real.stdout) == rows
    assert files_under(table.path) == before - {os.path.relpath(p, table.path) for p in planted}
    assert not (root / "dt=q").exists()
    assert read_rows(reload(table)) and read_rows(reload(table), tag="t1")


def test_orphans_exit_codes(runner: CliRunner, table: Any) -> None:
    r = run(runner, table, "remove-orphan-files", "db.t", "--older-than", "10min")
    assert r.exit_code == 6 and "less than 1 hour" in r.stderr and "--force" in r.stderr
    r = run(runner, table, "remove-orphan-files", "db.t", "--older-than", "10min", "--force", "--dry-run")
    assert r.exit_code == 0
    r = run(runner, table, "remove-orphan-files", "db.t", "--older-than", "2999-01-01T00:00:00")
    assert r.exit_code == 4 and "later than now" in r.stderr
    r = run(runner, table, "remove-orphan-files", "db.t", "--older-than", "soon")
    assert r.exit_code == 4
    r = run(runner, table, "remove-orphan-files", "db.nope")
    assert r.exit_code == 3
    r = run(runner, table, "remove-orphan-files", "db.t", "--branch", "nope")
    assert r.exit_code == 3
    (Path(table.path) / "tag" / "tag-t1").write_text("not json")
    plant(Path(table.path) / "dt=a" / "bucket-0" / "data-orphan-0.parquet")
    age_all(table.path)
    before = files_under(table.path)
    r = run(runner, table, "remove-orphan-files", "db.t")
    assert r.exit_code == 6 and "tag-t1" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert files_under(table.path) == before


def test_rollback_cli(runner: CliRunner, table: Any) -> None:
    rows1 = read_rows(table, 1)
    r = run(runner, table, "rollback", "db.t")
    assert r.exit_code == 2
    r = run(runner, table, "rollback", "db.t", "--snapshot", "1", "--tag", "t1")
    assert r.exit_code == 2
    r = run(runner, table, "rollback", "db.t", "--snapshot", "42")
    assert r.exit_code == 3 and "available 1..3" in r.stderr
    r = run(runner, table, "rollback", "db.t", "--tag", "nope")
    assert r.exit_code == 3
    before = files_under(table.path)
    dry = run(runner, table, "rollback", "db.t", "--tag", "t1", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    assert files_under(table.path) == before
    rows = json.loads(dry.stdout)
    assert {r["path"] for r in rows if r["kind"] == "snapshot"} == {"snapshot/snapshot-3", "snapshot/snapshot-2"}
    assert "would roll back to tag t1 (snapshot 1): 2 snapshots" in dry.stderr
    real = run(runner, table, "rollback", "db.t", "--tag", "t1", "-o", "json")
    assert real.exit_code == 0, real.output
    assert json.loads(real.stdout) == rows
    assert files_under(table.path) == (before - {r["path"] for r in rows}) | {"snapshot/LATEST"}
    assert read_rows(reload(table)) == rows1
    (Path(table.path) / "tag" / "tag-t1").write_text("{")
    r = run(runner, table, "rollback", "db.t", "--snapshot", "1")
    assert r.exit_code == 6 and "tag-t1" in r.stderr
