"""`write` runs a Java writer's post-commit maintenance (snapshot, partition and tag expiry)
unless `--no-expire` / `--write-only`, and writes into a branch with `--branch`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog


def ok(runner: CliRunner, *args: str) -> Any:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, (args, r.stdout, r.stderr)
    return r


def _csv(tmp_path: Path, name: str, rows: str) -> str:
    f = tmp_path / name
    f.write_text("id,dt\n" + rows)
    return str(f)


def test_write_expires_partitions_and_snapshots_unless_told_not_to(
    runner: CliRunner, warehouse: str, tmp_path: Path
) -> None:
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING", "--partition-by", "dt", *w,
       "--option", "partition.expiration-time=1 d", "--option", "partition.expiration-check-interval=0 s",
       "--option", "partition.timestamp-formatter=yyyy-MM-dd",
       "--option", "snapshot.num-retained.min=1", "--option", "snapshot.num-retained.max=2")
    ok(runner, "write", "db.t", _csv(tmp_path, "a.csv", "1,2020-01-01\n"), "--no-expire", *w)
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert table.snapshot_manager.latest_snapshot().commit_kind == "APPEND"  # old partition kept
    ok(runner, "write", "db.t", _csv(tmp_path, "b.csv", "2,2999-01-01\n"), *w)
    table = FileSystemCatalog(warehouse).get_table("db.t")
    rows = json.loads(ok(runner, "read", "db.t", "-o", "json", *w).stdout)
    assert [r["id"] for r in rows] == [2]  # the 2020 partition was dropped after the commit
    assert table.snapshot_manager.latest_snapshot().commit_kind == "OVERWRITE"  # Java's partition drop
    ok(runner, "write", "db.t", _csv(tmp_path, "c.csv", "3,2999-01-02\n"), *w)
    # Java's order after each commit: snapshot expiry (num-retained.max=2), then partitions
    sm = FileSystemCatalog(warehouse).get_table("db.t").snapshot_manager
    assert [s.id for s in sm.snapshots()] == [3, 4]


def test_write_into_a_branch(runner: CliRunner, warehouse: str, tmp_path: Path) -> None:
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING", *w)
    ok(runner, "write", "db.t", _csv(tmp_path, "a.csv", "1,x\n"), *w)
    ok(runner, "tag", "create", "db.t", "t1", *w)
    ok(runner, "branch", "create", "db.t", "b1", "--tag", "t1", *w)
    ok(runner, "write", "db.t", _csv(tmp_path, "b.csv", "2,y\n"), "--branch", "b1", *w)
    main_ids = [r["id"] for r in json.loads(ok(runner, "read", "db.t", "-o", "json", *w).stdout)]
    branch_ids = sorted(r["id"] for r in json.loads(
        ok(runner, "read", "db.t", "-o", "json", "--branch", "b1", *w).stdout))
    assert main_ids == [1] and branch_ids == [1, 2]


def test_write_reports_the_snapshot_holding_the_rows_and_the_compaction_it_triggered(
    runner: CliRunner, warehouse: str, tmp_path: Path
) -> None:
    """Issue 27 item 12: a write that compacts (here a deletion-vector table, always; with
    --row-kind-column) reported only the COMPACT snapshot, not the APPEND one holding the rows."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.dv", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
       "--option", "bucket=1", "--option", "deletion-vectors.enabled=true", *w)
    src = tmp_path / "cdc.csv"
    src.write_text("op,id,v\n+I,1,a\n+I,2,b\n-D,2,b\n")
    res = ok(runner, "write", "db.dv", str(src), "--row-kind-column", "op", "-o", "json", *w)
    (row,) = json.loads(res.stdout)
    snaps = FileSystemCatalog(warehouse).get_table("db.dv").snapshot_manager
    kinds = {s.id: s.commit_kind for s in snaps.snapshots()}
    assert kinds == {1: "APPEND", 2: "COMPACT"}
    assert (row["snapshot_id"], row["commit_kind"], row["compact_snapshot_id"]) == (1, "APPEND", 2)
    text = ok(runner, "write", "db.dv", str(src), "--row-kind-column", "op", "-o", "csv", *w)
    assert text.stdout.splitlines()[0].startswith("snapshot_id,commit_kind,compact_snapshot_id,")
    assert text.stdout.splitlines()[1].startswith("3,APPEND,4,")
    # without a compaction the column is empty
    ok(runner, "create", "db.ap", "--schema", "id INT, dt STRING", *w)
    plain = json.loads(ok(runner, "write", "db.ap", _csv(tmp_path, "ap.csv", "1,a\n"), "-o", "json", *w).stdout)
    assert plain[0]["commit_kind"] == "APPEND" and plain[0]["compact_snapshot_id"] is None
