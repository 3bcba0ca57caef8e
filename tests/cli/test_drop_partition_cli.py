"""`paimon-cli drop-partition` (Java's drop_partition / ALTER TABLE DROP PARTITION): any
partition in one OVERWRITE snapshot, the dry run equal to the run, selections that match
nothing refused with nothing changed."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app


def ok(runner: CliRunner, *args: str) -> Any:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, (args, r.stdout, r.stderr)
    return r


def fails(runner: CliRunner, code: int, *args: str) -> str:
    r = runner.invoke(app, list(args))
    assert r.exit_code == code, (args, r.exit_code, r.stdout, r.stderr)
    if code != 2:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return r.stderr


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def table(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t: primary-key table by (dt, hh), two commits over four partitions."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT NOT NULL, dt STRING NOT NULL, hh INT NOT NULL, v STRING",
       "--primary-key", "id,dt,hh", "--partition-by", "dt,hh", "--option", "bucket=2", *w)
    for i, rows in enumerate(("1,d1,1,a\n2,d1,2,b\n3,d2,1,c\n", "4,d2,2,d\n5,d1,1,e\n1,d1,1,z\n")):
        f = tmp_path / f"in{i}.csv"
        f.write_text("id,dt,hh,v\n" + rows)
        ok(runner, "write", "db.t", str(f), *w)
    return warehouse, Path(warehouse) / "db.db" / "t"


def _rows(runner: CliRunner, wh: str) -> list[tuple[int, str, int, str]]:
    out = json.loads(ok(runner, "read", "db.t", "-o", "json", "-w", wh).stdout)
    return sorted((r["id"], r["dt"], r["hh"], r["v"]) for r in out)


def _live(runner: CliRunner, wh: str) -> set[str]:
    return {Path(x["file_path"]).name for x in json.loads(ok(runner, "inspect", "files", "db.t", "-o", "json",
                                                                "-w", wh).stdout)}


def test_drop_partition_dry_run_equals_run(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    live = _live(runner, wh)
    before = tree(root)
    dry = json.loads(ok(runner, "drop-partition", "db.t", "--partition", "dt=d1,hh=1", "--dry-run", "-o", "json",
                        *w).stdout)
    assert tree(root) == before
    assert {x["partition"] for x in dry} == {"dt=d1,hh=1"}
    r = ok(runner, "drop-partition", "db.t", "--partition", "dt=d1,hh=1", "-o", "json", *w)
    assert json.loads(r.stdout) == dry
    assert "dropped 1 partition(s) of db.t (dt=d1,hh=1)" in r.stderr and "snapshot 3" in r.stderr
    assert live - _live(runner, wh) == {Path(x["path"]).name for x in dry}
    assert _rows(runner, wh) == [(2, "d1", 2, "b"), (3, "d2", 1, "c"), (4, "d2", 2, "d")]
    snap = json.loads(ok(runner, "inspect", "snapshots", "db.t", "-o", "json", *w).stdout)[-1]
    assert (snap["commit_kind"], snap["operation"]) == ("OVERWRITE", "TRUNCATE")
    # the data files stay for older snapshots; time travel still reads them
    assert len(json.loads(ok(runner, "read", "db.t", "--snapshot", "2", "-o", "json", *w).stdout)) == 5


def test_drop_partial_spec_and_alternatives(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, _ = table
    w = ["-w", wh]
    r = ok(runner, "drop-partition", "db.t", "--partition", "hh=2", "--partition", "dt=d2", *w)
    assert "3 partition(s)" in r.stderr  # d1/2, d2/1, d2/2
    assert _rows(runner, wh) == [(1, "d1", 1, "z"), (5, "d1", 1, "e")]
    snaps = json.loads(ok(runner, "inspect", "snapshots", "db.t", "-o", "json", *w).stdout)
    assert len(snaps) == 3  # one snapshot for all


def test_drop_partition_bad_input(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    before = tree(root)
    err = fails(runner, 3, "drop-partition", "db.t", "--partition", "dt=d9", *w)
    assert "--partition dt=d9 matched no partition of db.t; nothing was dropped" in err
    # one alternative that matches nothing refuses the whole drop (a typo is not "dropped the rest")
    err = fails(runner, 3, "drop-partition", "db.t", "--partition", "dt=d1;dt=d9", "--dry-run", *w)
    assert "dt=d9" in err
    assert "not a partition key" in fails(runner, 4, "drop-partition", "db.t", "--partition", "day=d1", *w)
    assert "k=v" in fails(runner, 4, "drop-partition", "db.t", "--partition", "d1", *w)
    fails(runner, 2, "drop-partition", "db.t", *w)
    fails(runner, 3, "drop-partition", "db.nope", "--partition", "dt=d1", *w)
    assert tree(root) == before
    ok(runner, "create", "db.flat", "--schema", "id INT", *w)
    assert "not partitioned" in fails(runner, 4, "drop-partition", "db.flat", "--partition", "id=1", *w)


def test_drop_partition_of_an_empty_table_matches_nothing(runner: CliRunner, warehouse: str) -> None:
    w = ["-w", warehouse]
    ok(runner, "create", "db.e", "--schema", "id INT, dt STRING", "--partition-by", "dt", *w)
    assert "matched no partition" in fails(runner, 3, "drop-partition", "db.e", "--partition", "dt=x", *w)
