"""Iceberg metadata from the command line: commits write it, ``inspect iceberg`` shows it,
``expire --dry-run`` says what it would drop, and a table without it is told so (exit 4)."""

from __future__ import annotations

from pathlib import Path

from pyiceberg.table import StaticTable
from typer.testing import CliRunner

from tests.cli.test_bad_input import one_error_line
from tests.cli.test_features_cli import Env


def _iceberg_ids(table: Path) -> list[int]:
    return sorted(r["id"] for r in StaticTable.from_metadata(str(table)).scan().to_arrow().to_pylist())


def test_commands_keep_iceberg_readers_in_step(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path, "metadata.iceberg.storage=table-location")
    for _ in range(3):
        env.ok("write", "db.t", str(env.csv))
    env.ok("tag", "create", "db.t", "t2", "--snapshot", "2")
    rows = env.json("inspect", "iceberg", "db.t")
    assert [(r["snapshot_id"], r["operation"], r["current"], r["paimon_snapshot"], r["tags"]) for r in rows] == [
        (1, "append", False, True, None), (2, "append", False, True, "t2"), (3, "append", True, True, None)]
    assert rows[-1]["total_records"] == 6 and rows[-1]["metadata_file"].endswith("/metadata/v3.metadata.json")
    assert _iceberg_ids(env.table) == [1, 1, 1, 2, 2, 2]

    dry = env.run("expire", "db.t", "--retain-max", "1", "--retain-min", "1", "--dry-run")
    assert dry.exit_code == 0 and "Iceberg metadata: v3.metadata.json drops snapshots 1, 2" in dry.stderr + dry.stdout
    assert len(env.json("inspect", "iceberg", "db.t")) == 3
    env.ok("expire", "db.t", "--retain-max", "1", "--retain-min", "1")
    assert [r["snapshot_id"] for r in env.json("inspect", "iceberg", "db.t")] == [3]

    env.ok("rollback", "db.t", "--tag", "t2")
    rows = env.json("inspect", "iceberg", "db.t")
    assert [(r["snapshot_id"], r["current"], r["tags"]) for r in rows] == [(2, True, "t2")]
    assert _iceberg_ids(env.table) == [1, 1, 2, 2]
    assert sorted(r["id"] for r in env.json("read", "db.t")) == [1, 1, 2, 2]


def test_inspect_iceberg_of_a_table_without_it(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path)
    res = env.run("inspect", "iceberg", "db.t")
    assert res.exit_code == 4
    assert "has no Iceberg metadata (metadata.iceberg.storage is not set)" in one_error_line(res)


def test_iceberg_switched_on_later_starts_from_the_latest_snapshot(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path)
    env.ok("write", "db.t", str(env.csv))
    env.ok("write", "db.t", str(env.csv))
    env.ok("alter", "db.t", "--set", "metadata.iceberg.storage=table-location")
    assert env.json("inspect", "iceberg", "db.t") == []
    env.ok("compact", "db.t", "--full")
    rows = env.json("inspect", "iceberg", "db.t")
    assert [(r["snapshot_id"], r["operation"]) for r in rows] == [(3, "append")]
    assert _iceberg_ids(env.table) == [1, 1, 2, 2]
