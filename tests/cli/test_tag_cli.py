"""`paimon-cli tag`: the whole life cycle through the CLI, documented exit codes, one-line errors,
fail-closed deletion (exit 6, nothing changed) and `--dry-run` == the real run."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def ok(runner: CliRunner, *args: str) -> Any:
    r = invoke(runner, *args)
    assert r.exit_code == 0, (args, r.stdout, r.stderr)
    return r


def fails(runner: CliRunner, code: int, *args: str) -> str:
    r = invoke(runner, *args)
    assert r.exit_code == code, (args, r.exit_code, r.stdout, r.stderr)
    if code != 2:  # usage errors are click's own format
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return r.stderr


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def table(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t: PK (id), bucket 1; s1 {1,2}, s2 +{3}, s3 overwrite {4}."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
       "--option", "bucket=1", *w)
    for i, (rows, extra) in enumerate((("1,a\n2,b\n", []), ("3,c\n", []), ("4,d\n", ["--overwrite"]))):
        f = tmp_path / f"in{i}.csv"
        f.write_text("id,v\n" + rows)
        ok(runner, "write", "db.t", str(f), *extra, *w)
    return warehouse, Path(warehouse) / "db.db" / "t"


def test_create_list_rename_delete(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    r = ok(runner, "tag", "create", "db.t", "first", "--snapshot", "1", *w)
    assert "snapshot 1" in r.stderr
    ok(runner, "tag", "create", "db.t", "latest", "--time-retained", "7d", *w)
    rows = json.loads(ok(runner, "tag", "list", "db.t", "-o", "json", *w).stdout)
    assert [(x["tag_name"], x["snapshot_id"], x["time_retained"]) for x in rows] == [
        ("first", 1, None), ("latest", 3, "PT168H")]
    tag = json.loads((root / "tag" / "tag-latest").read_text())
    assert tag["tagTimeRetained"] == 604800.0 and tag["id"] == 3
    ok(runner, "tag", "rename", "db.t", "first", "one", *w)
    assert sorted(p.name for p in (root / "tag").iterdir()) == ["tag-latest", "tag-one"]
    rows = json.loads(ok(runner, "read", "db.t", "--tag", "one", "-o", "json", *w).stdout)
    assert sorted(x["id"] for x in rows) == [1, 2]
    out = json.loads(ok(runner, "tag", "delete", "db.t", "one,latest", "-o", "json", *w).stdout)
    assert [x["kind"] for x in out] == ["tag", "tag"]  # both snapshots still exist
    assert json.loads(ok(runner, "tag", "list", "db.t", "-o", "json", *w).stdout) == []


def test_bad_input_exit_codes(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "x", *w)
    before = tree(root)
    assert "not found" in fails(runner, 3, "tag", "delete", "db.t", "nope", *w)
    assert "already exists" in fails(runner, 4, "tag", "create", "db.t", "x", *w)
    assert "not a duration" in fails(runner, 4, "tag", "create", "db.t", "y", "--time-retained", "7 fortnights", *w)
    assert "positive" in fails(runner, 4, "tag", "create", "db.t", "y", "--time-retained", "0 s", *w)
    assert "snapshot 9 not found" in fails(runner, 3, "tag", "create", "db.t", "y", "--snapshot", "9", *w)
    fails(runner, 4, "tag", "create", "db.t", "a/b", *w)
    assert "already exists" in fails(runner, 4, "tag", "rename", "db.t", "x", "x", *w)
    fails(runner, 3, "tag", "rename", "db.t", "nope", "z", *w)
    fails(runner, 3, "tag", "list", "db.nope", *w)
    fails(runner, 2, "tag", "create", "db.t", *w)  # NAME missing
    fails(runner, 2, "tag", "rename", "db.t", "x", *w)  # NEW_NAME missing
    fails(runner, 2, "tag", "destroy", "db.t", "x", *w)
    fails(runner, 2, "tag", "create", "db.t", "z", "--dry-run", *w)
    fails(runner, 2, "tag", "list", "db.t", "--snapshot", "1", *w)
    assert tree(root) == before


def _expire_first_snapshots(root: Path) -> None:
    """Snapshots 1 and 2 gone (as after `expire`), EARLIEST -> 3."""
    for sid in (1, 2):
        (root / "snapshot" / f"snapshot-{sid}").unlink()
    (root / "snapshot" / "EARLIEST").write_text("3")


def test_delete_cleans_files_dry_run_matches(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "s1", "--snapshot", "1", *w)
    ok(runner, "tag", "create", "db.t", "s2", "--snapshot", "2", *w)
    _expire_first_snapshots(root)
    before = tree(root)
    dry = json.loads(ok(runner, "tag", "delete", "db.t", "s2", "--dry-run", "-o", "json", *w).stdout)
    assert tree(root) == before
    assert {x["kind"] for x in dry} >= {"tag", "data", "manifest-list"}  # its manifests live on in s3
    real = invoke(runner, "tag", "delete", "db.t", "s2", "-o", "json", *w)
    assert real.exit_code == 0 and json.loads(real.stdout) == dry
    gone = set(before) - set(tree(root))
    assert gone == {x["path"] for x in dry}  # listed relative to the table directory
    assert f"{sum(x['bytes'] for x in dry)} bytes" in real.stderr
    # the table and the remaining tag still read
    rows = json.loads(ok(runner, "read", "db.t", "--tag", "s1", "-o", "json", *w).stdout)
    assert sorted(x["id"] for x in rows) == [1, 2]
    rows = json.loads(ok(runner, "read", "db.t", "-o", "json", *w).stdout)
    assert [x["id"] for x in rows] == [4]


def test_delete_fails_closed(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "s1", "--snapshot", "1", *w)
    ok(runner, "tag", "create", "db.t", "s2", "--snapshot", "2", *w)
    _expire_first_snapshots(root)
    (root / "tag" / "tag-s1").write_text('{"id": ')  # the left neighbour is unreadable
    before = tree(root)
    err = fails(runner, 6, "tag", "delete", "db.t", "s2", *w)
    assert "tag-s1" in err and "nothing was deleted" in err
    assert tree(root) == before


def test_expire(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "keep", "--time-retained", "1d", *w)
    ok(runner, "tag", "create", "db.t", "old", *w)
    r = ok(runner, "tag", "expire", "db.t", *w)
    assert "no tag" in r.stderr
    assert "later than now" in fails(runner, 4, "tag", "expire", "db.t", "--older-than", "2999-01-01", *w)
    r = ok(runner, "tag", "expire", "db.t", "--older-than", "0s", "--dry-run", "-o", "json", *w)
    assert sorted(x["tag"] for x in json.loads(r.stdout)) == ["keep", "old"]
    assert len(list((root / "tag").iterdir())) == 2
    ok(runner, "tag", "expire", "db.t", "--older-than", "0s", *w)
    assert not list((root / "tag").iterdir())
    fails(runner, 4, "tag", "expire", "db.t", "--older-than", "yesterday-ish", *w)


def test_branch_option(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "t1", "--snapshot", "1", *w)
    ok(runner, "branch", "create", "db.t", "dev", "--tag", "t1", *w)
    ok(runner, "tag", "create", "db.t", "on-dev", "--branch", "dev", *w)
    assert (root / "branch" / "branch-dev" / "tag" / "tag-on-dev").is_file()
    assert not (root / "tag" / "tag-on-dev").exists()
    rows = json.loads(ok(runner, "tag", "list", "db.t", "--branch", "dev", "-o", "json", *w).stdout)
    assert sorted(x["tag_name"] for x in rows) == ["on-dev", "t1"]
    fails(runner, 3, "tag", "list", "db.t", "--branch", "nope", *w)
