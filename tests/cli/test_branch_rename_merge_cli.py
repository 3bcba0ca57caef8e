"""`paimon-cli branch rename` and `branch merge` (Java 2.x's rename_branch / merge_branch):
flows, dry runs equal to the runs, and refusals that leave the warehouse unchanged."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.write import TableWrite


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


def _ids(runner: CliRunner, wh: str, *extra: str) -> list[int]:
    return sorted(x["id"] for x in json.loads(ok(runner, "read", "db.t", "-o", "json", "-w", wh, *extra).stdout))


def _commit_on(wh: str, branch: str | None, rows: list[dict[str, Any]], table: str = "db.t") -> None:
    t = FileSystemCatalog(wh).get_table(table, branch)
    tw = TableWrite(t)
    tw.write_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(t.schema.fields)))
    FileStoreCommit(t).commit(tw.prepare_commit())


@pytest.fixture
def forked(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t (append, by dt): snapshot 1 with ids 1, 2; branch dev from tag t1 (snapshot 1) gets
    id 9 in a new partition, main gets id 3 afterwards."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING", "--partition-by", "dt", *w)
    f = tmp_path / "in.csv"
    f.write_text("id,dt\n1,a\n2,b\n")
    ok(runner, "write", "db.t", str(f), *w)
    ok(runner, "tag", "create", "db.t", "t1", *w)
    ok(runner, "branch", "create", "db.t", "dev", "--tag", "t1", *w)
    _commit_on(warehouse, "dev", [{"id": 9, "dt": "c"}])
    _commit_on(warehouse, None, [{"id": 3, "dt": "a"}])
    return warehouse, Path(warehouse) / "db.db" / "t"


def test_rename_branch(runner: CliRunner, forked: tuple[str, Path]) -> None:
    wh, root = forked
    w = ["-w", wh]
    before = tree(root)
    dry = json.loads(ok(runner, "branch", "rename", "db.t", "dev", "dev2", "--dry-run", "-o", "json", *w).stdout)
    assert tree(root) == before
    assert [(x["action"], x["path"], x["source"]) for x in dry] == [
        ("rename", "branch/branch-dev2", "branch/branch-dev")]
    r = ok(runner, "branch", "rename", "db.t", "dev", "dev2", *w)
    assert "renamed branch 'dev' of db.t to 'dev2'" in r.stderr
    after = tree(root)
    # exactly the dry run: every file of the branch moved, nothing else changed
    assert {k.replace("branch/branch-dev/", "branch/branch-dev2/"): v for k, v in before.items()} == after
    rows = json.loads(ok(runner, "branch", "list", "db.t", "-o", "json", *w).stdout)
    assert [(x["branch_name"], x["created_from_tag"]) for x in rows] == [("dev2", "t1")]
    assert _ids(runner, wh, "--branch", "dev2") == [1, 2, 9]
    ok(runner, "tag", "list", "db.t", "--branch", "dev2", *w)


def test_rename_branch_bad_input(runner: CliRunner, forked: tuple[str, Path]) -> None:
    wh, root = forked
    w = ["-w", wh]
    ok(runner, "branch", "create", "db.t", "other", *w)
    before = tree(root)
    assert "not found" in fails(runner, 3, "branch", "rename", "db.t", "nope", "x", *w)
    assert "already exists" in fails(runner, 4, "branch", "rename", "db.t", "dev", "other", *w)
    assert "main" in fails(runner, 4, "branch", "rename", "db.t", "main", "x", *w)
    assert "numeric" in fails(runner, 4, "branch", "rename", "db.t", "dev", "123", *w)
    assert "itself" in fails(runner, 4, "branch", "rename", "db.t", "dev", "dev", *w)
    fails(runner, 2, "branch", "rename", "db.t", "dev", *w)
    fails(runner, 2, "branch", "delete", "db.t", "dev", "x", *w)
    ok(runner, "alter", "db.t", "--set", "scan.fallback-branch=dev", *w)
    before = tree(root)
    assert "scan.fallback-branch" in fails(runner, 4, "branch", "rename", "db.t", "dev", "dev2", *w)
    assert tree(root) == before


def test_merge_branch_into_main(runner: CliRunner, forked: tuple[str, Path]) -> None:
    wh, root = forked
    w = ["-w", wh]
    before = tree(root)
    dry = json.loads(ok(runner, "branch", "merge", "db.t", "dev", "--dry-run", "-o", "json", *w).stdout)
    assert tree(root) == before
    assert [(x["partition"], x["rows"]) for x in dry] == [("dt=c", 1)]
    r = ok(runner, "branch", "merge", "db.t", "dev", "-o", "json", *w)
    assert json.loads(r.stdout) == dry  # the run added exactly the dry run's files
    assert "merged 1 data file(s) (1 rows) of branch 'dev' into 'main'" in r.stderr
    assert _ids(runner, wh) == [1, 2, 3, 9]
    assert _ids(runner, wh, "--branch", "dev") == [1, 2, 9]  # the source is unchanged
    snaps = json.loads(ok(runner, "inspect", "snapshots", "db.t", "-o", "json", *w).stdout)
    assert [s["commit_kind"] for s in snaps] == ["APPEND", "APPEND", "APPEND"]
    merged = json.loads(ok(runner, "inspect", "files", "db.t", "-o", "json", *w).stdout)
    assert any(Path(x["file_path"]).name == Path(dry[0]["path"]).name for x in merged)  # the same file, shared
    # merging again finds nothing; no snapshot
    r = ok(runner, "branch", "merge", "db.t", "dev", *w)
    assert "nothing to merge" in r.stderr
    assert len(json.loads(ok(runner, "inspect", "snapshots", "db.t", "-o", "json", *w).stdout)) == 3
    # main into the branch (--branch is the target)
    ok(runner, "branch", "merge", "db.t", "main", "--branch", "dev", *w)
    assert _ids(runner, wh, "--branch", "dev") == [1, 2, 3, 9]


def test_merge_branch_refusals(runner: CliRunner, forked: tuple[str, Path], tmp_path: Path) -> None:
    wh, root = forked
    w = ["-w", wh]
    ok(runner, "branch", "create", "db.t", "empty", *w)
    before = tree(root)
    assert "not found" in fails(runner, 3, "branch", "merge", "db.t", "nope", *w)
    assert "into itself" in fails(runner, 4, "branch", "merge", "db.t", "dev", "--branch", "dev", *w)
    assert "no snapshot" in fails(runner, 4, "branch", "merge", "db.t", "empty", *w)
    assert tree(root) == before
    # a compaction on main: its history is no longer append-only, as Java refuses
    ok(runner, "compact", "db.t", "--full", *w)
    before = tree(root)
    err = fails(runner, 4, "branch", "merge", "db.t", "dev", *w)
    assert "commit kind COMPACT" in err and "append-only" in err
    assert tree(root) == before


def test_merge_branch_refuses_primary_keys_and_schema_drift(runner: CliRunner, warehouse: str,
                                                            tmp_path: Path) -> None:
    w = ["-w", warehouse]
    ok(runner, "create", "db.k", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
       "--option", "bucket=1", *w)
    f = tmp_path / "k.csv"
    f.write_text("id,v\n1,a\n")
    ok(runner, "write", "db.k", str(f), *w)
    ok(runner, "tag", "create", "db.k", "t1", *w)
    ok(runner, "branch", "create", "db.k", "dev", "--tag", "t1", *w)
    assert "primary keys" in fails(runner, 4, "branch", "merge", "db.k", "dev", *w)
    # append table whose branch added a column: the latest fields differ
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING", *w)
    f.write_text("id,dt\n1,a\n")
    ok(runner, "write", "db.t", str(f), *w)
    ok(runner, "tag", "create", "db.t", "t1", *w)
    ok(runner, "branch", "create", "db.t", "dev", "--tag", "t1", *w)
    FileSystemCatalog(warehouse).alter_table("db.t", _add_column("x"), "dev")
    assert "schema mismatch" in fails(runner, 4, "branch", "merge", "db.t", "dev", *w)


def _add_column(name: str) -> list[Any]:
    from paimon_cli.core.data.types import parse_data_type
    from paimon_cli.core.schema.schema_change import AddColumn

    return [AddColumn(name, parse_data_type("INT"), None)]
