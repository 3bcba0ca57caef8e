"""``repair`` of a whole catalog, a database and a list of tables (Java's ``repair`` of '', 'db'
and 'db.table', comma-separated)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


class Env:
    """s.a (2 snapshots, LATEST says 42), s.b (3 snapshots, hints right), t.c (2 snapshots,
    EARLIEST missing)."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner, self.wh = runner, root / "wh"
        for name, writes in (("s.a", 2), ("s.b", 3), ("t.c", 2)):
            res = invoke(runner, "create", name, "-s", "id BIGINT, v STRING", "-w", str(self.wh))
            assert res.exit_code == 0, res.output
            for i in range(writes):
                p = root / f"{name}{i}.csv"
                p.write_text(f"id,v\n{i},x\n")
                res = invoke(runner, "write", name, str(p), "-w", str(self.wh))
                assert res.exit_code == 0, res.output
        (self.snap("s.a") / "LATEST").write_text("42")
        (self.snap("t.c") / "EARLIEST").unlink()

    def snap(self, name: str) -> Path:
        db, t = name.split(".")
        return self.wh / f"{db}.db" / t / "snapshot"

    def hints(self) -> dict[str, tuple[str | None, str | None]]:
        out = {}
        for name in ("s.a", "s.b", "t.c"):
            e, lt = self.snap(name) / "EARLIEST", self.snap(name) / "LATEST"
            out[name] = (e.read_text() if e.exists() else None, lt.read_text() if lt.exists() else None)
        return out

    def repair(self, *args: str) -> Any:
        return invoke(self.runner, "repair", *args, "-w", str(self.wh))


BROKEN = {"s.a": ("1", "42"), "s.b": ("1", "3"), "t.c": (None, "2")}
FIXED = {"s.a": ("1", "2"), "s.b": ("1", "3"), "t.c": ("1", "2")}


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def test_whole_catalog_dry_run_then_run(env: Env) -> None:
    assert env.hints() == BROKEN
    dry = env.repair("--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    writes = {(r["table"], r["hint"], r["repaired"]) for r in json.loads(dry.stdout) if r["action"] == "write"}
    assert writes == {("s.a", "LATEST", 2), ("t.c", "EARLIEST", 1)}
    assert env.hints() == BROKEN and "checked 3 of 3 table(s), 0 failed" in dry.stderr
    res = env.repair("-o", "json")
    assert res.exit_code == 0, res.output
    assert {(r["table"], r["hint"], r["repaired"]) for r in json.loads(res.stdout) if r["action"] == "write"} == writes
    assert env.hints() == FIXED and "repaired 3 of 3 table(s)" in res.stderr


def test_filesystem_catalog_has_nothing_to_register(env: Env) -> None:
    """Its directories are its names (the metastore catalogs register what storage holds)."""
    for args in ([], ["s"], ["s.a,t"]):
        res = env.repair(*args, "--dry-run", "-o", "json")
        assert res.exit_code == 0, res.output
        assert "the filesystem catalog's directories are its names; nothing to register" in res.stderr
        assert not [r for r in json.loads(res.stdout) if r["action"] == "register"]


def test_database_and_list_forms(env: Env) -> None:
    res = env.repair("s")
    assert res.exit_code == 0, res.output
    assert env.hints() == {**BROKEN, "s.a": FIXED["s.a"]}  # t.c is another database
    res = env.repair("t.c, s.b")
    assert res.exit_code == 0, res.output
    assert env.hints() == FIXED
    assert "repair: t.c:" in res.stderr and "repair: s.b:" in res.stderr


def test_a_failing_table_does_not_stop_the_others(env: Env) -> None:
    (env.snap("s.b") / "snapshot-2").unlink()  # a gap: refused (6) without --earliest
    res = env.repair("-o", "json")
    assert res.exit_code == 6, res.output
    errors = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: s.b: ") and "Traceback" not in res.stderr
    assert env.hints() == {**FIXED, "s.b": BROKEN["s.b"]}
    assert {r["table"] for r in json.loads(res.stdout)} == {"s.a", "t.c"}


@pytest.mark.parametrize("args, code, text", [
    (["s.a.x"], 4, "exactly one dot"),
    (["s.a,s.a.x"], 4, "expected DB or DB.TABLE"),
    (["nope"], 3, "nope"),
    (["s,nope"], 3, "nope"),
    (["s", "--earliest", "2"], 2, "--earliest"),
    (["s.a,s.b", "--branch", "x"], 2, "--branch"),
])
def test_bad_input_changes_nothing(env: Env, args: list[str], code: int, text: str) -> None:
    res = env.repair(*args)
    assert res.exit_code == code and text in res.stderr, res.output
    assert "Traceback" not in res.stderr
    assert env.hints() == BROKEN
