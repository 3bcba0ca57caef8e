"""`paimon-cli branch` and `paimon-cli expire-partitions` through the CLI: flows, dry runs,
documented exit codes and one-line errors that leave the warehouse unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.commit import FileStoreCommit


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def ok(runner: CliRunner, *args: str) -> Any:
    r = invoke(runner, *args)
    assert r.exit_code == 0, (args, r.stdout, r.stderr)
    return r


def fails(runner: CliRunner, code: int, *args: str) -> str:
    r = invoke(runner, *args)
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
    """db.t: append table partitioned by dt; s1 two old days, s2 one day far in the future."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING", "--partition-by", "dt", *w)
    for i, rows in enumerate(("1,2020-01-01\n2,2020-01-02\n", "3,2999-01-01\n")):
        f = tmp_path / f"in{i}.csv"
        f.write_text("id,dt\n" + rows)
        ok(runner, "write", "db.t", str(f), *w)
    return warehouse, Path(warehouse) / "db.db" / "t"


def _ids(runner: CliRunner, wh: str, *extra: str) -> list[int]:
    return sorted(x["id"] for x in json.loads(ok(runner, "read", "db.t", "-o", "json", "-w", wh, *extra).stdout))


def test_branch_life_cycle(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "t1", "--snapshot", "1", *w)
    ok(runner, "branch", "create", "db.t", "dev", "--tag", "t1", *w)
    ok(runner, "branch", "create", "db.t", "empty", *w)
    rows = json.loads(ok(runner, "branch", "list", "db.t", "-o", "json", *w).stdout)
    assert [(x["branch_name"], x["created_from_tag"], x["created_from_snapshot"]) for x in rows] == [
        ("dev", "t1", 1), ("empty", None, None)]
    assert _ids(runner, wh, "--branch", "dev") == [1, 2]
    assert _ids(runner, wh, "--branch", "empty") == []
    # a commit on the branch (the `write` command has no --branch yet; core does)
    cat = FileSystemCatalog(wh)
    dev = cat.get_table("db.t", "dev")
    import pyarrow as pa

    from paimon_cli.core.format.arrow_schema import arrow_schema
    from paimon_cli.core.operation.write import TableWrite

    tw = TableWrite(dev)
    tw.write_arrow(pa.Table.from_pylist([{"id": 9, "dt": "2020-01-03"}], schema=arrow_schema(dev.schema.fields)))
    FileStoreCommit(dev).commit(tw.prepare_commit())
    before = tree(root)
    dry = json.loads(ok(runner, "branch", "fast-forward", "db.t", "dev", "--dry-run", "-o", "json", *w).stdout)
    assert tree(root) == before
    assert ("copy", "snapshot-2") in {(x["action"], Path(x["path"]).name) for x in dry}  # overwritten in place
    ok(runner, "branch", "fast-forward", "db.t", "dev", *w)
    assert _ids(runner, wh) == [1, 2, 9]
    dry = json.loads(ok(runner, "branch", "delete", "db.t", "dev", "--dry-run", "-o", "json", *w).stdout)
    assert (root / "branch" / "branch-dev").is_dir()
    ok(runner, "branch", "delete", "db.t", "dev", *w)
    assert not (root / "branch" / "branch-dev").exists()
    assert _ids(runner, wh) == [1, 2, 9]  # main still reads the branch's data files
    rows = json.loads(ok(runner, "branch", "list", "db.t", "-o", "json", *w).stdout)
    assert [x["branch_name"] for x in rows] == ["empty"]


def test_branch_bad_input(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "branch", "create", "db.t", "b", *w)
    before = tree(root)
    assert "already exists" in fails(runner, 4, "branch", "create", "db.t", "b", *w)
    assert "not found" in fails(runner, 3, "branch", "create", "db.t", "c", "--tag", "nope", *w)
    fails(runner, 4, "branch", "create", "db.t", "123", *w)
    fails(runner, 4, "branch", "create", "db.t", "main", *w)
    assert "not found" in fails(runner, 3, "branch", "delete", "db.t", "nope", *w)
    assert "no snapshot" in fails(runner, 4, "branch", "fast-forward", "db.t", "b", *w)
    fails(runner, 4, "branch", "fast-forward", "db.t", "b", "--branch", "b", *w)
    fails(runner, 2, "branch", "create", "db.t", *w)
    fails(runner, 2, "branch", "list", "db.t", "x", *w)
    fails(runner, 2, "branch", "delete", "db.t", "b", "--tag", "t", *w)
    fails(runner, 2, "branch", "create", "db.t", "z", "--dry-run", *w)
    assert tree(root) == before


def test_expire_partitions(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    before = tree(root)
    dry = json.loads(ok(runner, "expire-partitions", "db.t", "--expiration-time", "30d", "--dry-run",
                        "-o", "json", *w).stdout)
    assert [x["partition"] for x in dry] == ["dt=2020-01-01", "dt=2020-01-02"]
    assert tree(root) == before
    r = ok(runner, "expire-partitions", "db.t", "--expiration-time", "30d", "--max-expires", "1", *w)
    assert "snapshot 3" in r.stderr
    assert _ids(runner, wh) == [2, 3]
    snaps = json.loads(ok(runner, "inspect", "snapshots", "db.t", "-o", "json", *w).stdout)
    assert snaps[-1]["commit_kind"] == "OVERWRITE"
    r = ok(runner, "expire-partitions", "db.t", "--expiration-time", "30d", "--strategy", "update-time", *w)
    assert "no partition" in r.stderr


def test_expire_partitions_bad_input(runner: CliRunner, table: tuple[str, Path], warehouse: str) -> None:
    wh, root = table
    w = ["-w", wh]
    before = tree(root)
    assert "not a duration" in fails(runner, 4, "expire-partitions", "db.t", "--expiration-time", "30 years", *w)
    assert "no expiration time" in fails(runner, 4, "expire-partitions", "db.t", *w)
    assert "not supported" in fails(runner, 4, "expire-partitions", "db.t", "--expiration-time", "1d",
                                    "--timestamp-formatter", "yyyy-MMM-dd", *w)
    assert "$name" in fails(runner, 4, "expire-partitions", "db.t", "--expiration-time", "1d",
                            "--timestamp-pattern", "dt", *w)
    fails(runner, 2, "expire-partitions", "db.t", "--expiration-time", "1d", "--strategy", "sometimes", *w)
    fails(runner, 2, "expire-partitions", "db.t", "--expiration-time", "1d", "--max-expires", "0", *w)
    fails(runner, 3, "expire-partitions", "db.nope", "--expiration-time", "1d", *w)
    assert tree(root) == before
    ok(runner, "create", "db.flat", "--schema", "id INT", *w)
    assert "not partitioned" in fails(runner, 4, "expire-partitions", "db.flat", "--expiration-time", "1d", *w)
