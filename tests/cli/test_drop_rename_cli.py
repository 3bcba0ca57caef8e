"""drop and rename: tables and databases, as Java's filesystem catalog drops and renames them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


@pytest.fixture
def wh(runner: CliRunner, tmp_path: Path) -> Path:
    w = tmp_path / "wh"
    for t in ("shop.a", "shop.b", "other.c"):
        assert invoke(runner, "create", t, "--schema", "id INT", "-w", str(w)).exit_code == 0
        data = tmp_path / "in.csv"
        data.write_text("id\n1\n2\n")
        assert invoke(runner, "write", t, str(data), "-w", str(w)).exit_code == 0
    return w


def _files(path: Path) -> set[str]:
    return {str(p) for p in path.rglob("*") if p.is_file()}


def test_drop_table_dry_run_lists_exactly_what_the_drop_deletes(runner: CliRunner, wh: Path) -> None:
    table_dir = wh / "shop.db" / "a"
    before = _files(table_dir)
    r = invoke(runner, "drop", "shop.a", "--dry-run", "-o", "json", "-w", str(wh))
    assert r.exit_code == 0, r.output
    [row] = json.loads(r.stdout)
    assert row["file_count"] == len(before) and row["files"] == "deleted"
    assert row["bytes"] == sum(Path(p).stat().st_size for p in before)
    assert _files(table_dir) == before  # the dry run changed nothing
    r = invoke(runner, "drop", "shop.a", "--yes", "-w", str(wh))
    assert r.exit_code == 0, r.output
    assert not table_dir.exists()
    r = invoke(runner, "list", "shop", "-o", "json", "-w", str(wh))
    assert [x["table"] for x in json.loads(r.stdout)] == ["b"]


def test_drop_needs_yes_without_a_terminal_and_if_exists(runner: CliRunner, wh: Path) -> None:
    r = invoke(runner, "drop", "shop.a", "-w", str(wh))
    assert r.exit_code == 2 and "pass --yes" in r.stderr
    assert (wh / "shop.db" / "a").is_dir()
    assert invoke(runner, "drop", "shop.nope", "--yes", "-w", str(wh)).exit_code == 3
    assert invoke(runner, "drop", "shop.nope", "--yes", "--if-exists", "-w", str(wh)).exit_code == 0
    assert invoke(runner, "drop", "nodb", "--yes", "--if-exists", "-w", str(wh)).exit_code == 0


def test_drop_database_needs_cascade_when_it_holds_tables(runner: CliRunner, wh: Path) -> None:
    r = invoke(runner, "drop", "shop", "--yes", "-w", str(wh))
    assert r.exit_code == 4 and "not empty (2 table(s)); pass --cascade" in r.stderr
    assert (wh / "shop.db" / "a").is_dir()
    r = invoke(runner, "drop", "shop", "--cascade", "--yes", "-o", "json", "-w", str(wh))
    assert r.exit_code == 0, r.output
    assert [x["name"] for x in json.loads(r.stdout)] == ["shop.a", "shop.b", "shop"]
    assert not (wh / "shop.db").exists()
    r = invoke(runner, "list", "-o", "json", "-w", str(wh))
    assert [x["database"] for x in json.loads(r.stdout)] == ["other"]


def test_rename_moves_the_table_and_keeps_its_rows(runner: CliRunner, wh: Path) -> None:
    r = invoke(runner, "rename", "shop.a", "other.a2", "-w", str(wh))
    assert r.exit_code == 0, r.output
    assert not (wh / "shop.db" / "a").exists() and (wh / "other.db" / "a2" / "schema" / "schema-0").is_file()
    r = invoke(runner, "read", "other.a2", "-o", "jsonl", "-w", str(wh))
    assert sorted(json.loads(x)["id"] for x in r.stdout.splitlines()) == [1, 2]
    r = invoke(runner, "rename", "other.a2", "shop.b", "-w", str(wh))
    assert r.exit_code == 4 and "already exists" in r.stderr
    assert invoke(runner, "rename", "shop.zz", "shop.y", "-w", str(wh)).exit_code == 3
    assert invoke(runner, "rename", "shop.b", "nodb.b", "-w", str(wh)).exit_code == 3
