"""``remove-orphan-files DB.*`` (Java's ``remove_orphan_files`` of ``db.*``): every table of a
database, the dry run listing exactly what a run deletes per table, fail-closed per table."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app

ORPHAN_DATA = "data-00000000-0000-0000-0000-000000000000-0.parquet"
ORPHAN_MANIFEST = "manifest-00000000-0000-0000-0000-000000000000-0"


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


class Env:
    """Database s with append tables a, b, c (two writes each) and two orphans per table, all
    files two days old."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner, self.wh = runner, root / "wh"
        for t in ("a", "b", "c"):
            res = invoke(runner, "create", f"s.{t}", "-s", "id BIGINT, v STRING", "-w", str(self.wh))
            assert res.exit_code == 0, res.output
            for i in range(2):
                p = root / f"{t}{i}.csv"
                p.write_text(f"id,v\n{i},{t}\n")
                res = invoke(runner, "write", f"s.{t}", str(p), "-w", str(self.wh))
                assert res.exit_code == 0, res.output
            tp = self.table_dir(t)
            (tp / "bucket-0" / ORPHAN_DATA).write_bytes(b"orphan")
            (tp / "manifest" / ORPHAN_MANIFEST).write_bytes(b"orphan")
        old = time.time() - 2 * 86400
        for p in self.wh.rglob("*"):
            os.utime(p, (old, old))

    def table_dir(self, t: str) -> Path:
        return self.wh / "s.db" / t

    def run(self, *args: str) -> Any:
        return invoke(self.runner, "remove-orphan-files", *args, "-w", str(self.wh))

    def tree(self) -> set[str]:
        return {str(p.relative_to(self.wh)) for p in self.wh.rglob("*")}

    def orphans_left(self) -> dict[str, bool]:
        return {t: (self.table_dir(t) / "bucket-0" / ORPHAN_DATA).exists()
                and (self.table_dir(t) / "manifest" / ORPHAN_MANIFEST).exists() for t in ("a", "b", "c")}


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def test_dry_run_lists_each_table_and_run_deletes_exactly_that(env: Env) -> None:
    before = env.tree()
    dry = env.run("s.*", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    listed = json.loads(dry.stdout)
    assert sorted((r["table"], r["path"]) for r in listed) == sorted(
        (f"s.{t}", p) for t in ("a", "b", "c") for p in (f"bucket-0/{ORPHAN_DATA}", f"manifest/{ORPHAN_MANIFEST}"))
    assert all(list(r) == ["table", "path", "kind", "bytes"] for r in listed)
    assert "would delete 6 files (36 bytes) in 3 of 3 table(s), 0 failed" in dry.stderr
    assert env.tree() == before

    run = env.run("s.*", "--yes", "-o", "json")
    assert run.exit_code == 0, run.output
    assert json.loads(run.stdout) == listed
    gone = {f"s.db/{r['table'][2:]}/{r['path']}" for r in listed}
    assert env.tree() == before - gone
    for t in ("a", "b", "c"):
        read = invoke(env.runner, "read", f"s.{t}", "-w", str(env.wh), "-o", "json")
        assert read.exit_code == 0 and sorted(r["id"] for r in json.loads(read.stdout)) == [0, 1]


def test_unreadable_table_deletes_nothing_there_others_cleaned(env: Env) -> None:
    """Java cleans the other tables and fails the call: so do we, never deleting in the table
    whose metadata could not be read; the exit code is that table's (6)."""
    manifests = sorted((env.table_dir("b") / "manifest").glob("manifest-list-*"))
    manifests[0].write_bytes(b"not avro")
    before_b = {p for p in env.tree() if p.startswith("s.db/b/")}
    res = env.run("s.*", "--yes", "-o", "json")
    assert res.exit_code == 6, res.output
    assert {r["table"] for r in json.loads(res.stdout)} == {"s.a", "s.c"}
    errors = [line for line in res.stderr.splitlines() if line.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: s.b: ") and "Traceback" not in res.stderr
    assert env.orphans_left() == {"a": False, "b": True, "c": False}
    assert {p for p in env.tree() if p.startswith("s.db/b/")} == before_b
    # the dry run reports the same partial failure with the same exit code
    dry = env.run("s.*", "--dry-run", "-o", "json")
    assert dry.exit_code == 6 and json.loads(dry.stdout) == []


def test_a_table_that_cannot_be_opened_stops_everything(env: Env) -> None:
    """Java opens every table before cleaning any: nothing is deleted anywhere."""
    (env.table_dir("b") / "schema" / "schema-0").write_text("{ not json")
    before = env.tree()
    res = env.run("s.*", "--yes")
    assert res.exit_code == 6, res.output  # corrupt metadata under a destructive command: refused
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and "Traceback" not in res.stderr
    assert "s.db/b/schema/schema-0" in lines[0] and "nothing was changed" in lines[0]
    assert env.tree() == before


@pytest.mark.parametrize("args, code, text", [
    (["nope.*"], 3, "nope"),
    (["s.*", "--branch", "b1"], 2, "--branch"),
    (["s.*", "--engine", "spark"], 2, "--engine spark"),
    (["s.*", "--older-than", "soon"], 4, "--older-than"),
])
def test_bad_input(env: Env, args: list[str], code: int, text: str) -> None:
    before = env.tree()
    res = env.run(*args, "--yes")
    assert res.exit_code == code and text in res.stderr, res.output
    assert "Traceback" not in res.stderr
    assert env.tree() == before
