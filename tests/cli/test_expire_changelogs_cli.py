"""expire-changelogs from the command line: Java's expire_changelogs semantics, dry run, refusals."""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.test_compact_cli import invoke, one_error_line


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


class CliEnv:
    """A warehouse under ``root`` with table db.t, driven through the command line."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        self.runner = runner
        self.root = root
        self.wh = str(root / "wh")
        self.table = root / "wh" / "db.db" / "t"

    def run(self, *args: str) -> Any:
        return invoke(self.runner, *args, "-w", self.wh)

    def ok(self, *args: str) -> Any:
        res = self.run(*args)
        assert res.exit_code == 0, res.output
        return res

    def json(self, *args: str) -> Any:
        return json.loads(self.ok(*args, "-o", "json").stdout)


class Env(CliEnv):
    """db.t: primary-key table, decoupled changelog lifecycle; 6 write-only commits, then an
    expire keeping 2 snapshots moved snapshots 1..4 to changelog/."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        super().__init__(runner, root)
        self.ok("create", "db.t", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
                "--option", "bucket=1", "--option", "changelog.num-retained.max=100")
        for i in range(6):
            p = root / f"in{i}.csv"
            p.write_text(f"id,v\n{i},v{i}\n1,x{i}\n")
            self.ok("write", "db.t", str(p), "--write-only")
        self.ok("expire", "db.t", "--retain-max", "2", "--retain-min", "2", "--older-than", "1ms")
        assert self.changelogs() == [1, 2, 3, 4]

    def changelogs(self) -> list[int]:
        return sorted(int(p.name.split("-")[1]) for p in (self.table / "changelog").glob("changelog-*"))

    def rows(self) -> list[dict[str, Any]]:
        return sorted(self.json("read", "db.t"), key=lambda r: r["id"])


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def test_no_argument_expires_nothing(env: Env) -> None:
    """As Java's procedure: omitted arguments keep everything, whatever the table's options say."""
    before = tree(env.table)
    assert env.json("expire-changelogs", "db.t") == [
        {"mode": "changelog", "expired": 0, "range": None, "earliest_now": 1, "files": 0, "bytes": 0,
         "seconds": pytest.approx(0, abs=5)}]
    assert tree(env.table) == before


def test_retain_max_dry_run_is_exactly_the_run(env: Env) -> None:
    """retain-max 4 of latest snapshot 6: ids from 3 stay; the dry run lists what goes."""
    before = tree(env.table)
    planned = env.json("expire-changelogs", "db.t", "--retain-max", "4", "--dry-run")
    assert tree(env.table) == before
    assert {r["kind"] for r in planned} >= {"changelog", "manifest-list"}
    res = env.json("expire-changelogs", "db.t", "--retain-max", "4")
    assert res[0]["expired"] == 2 and res[0]["range"] == "1..2" and res[0]["earliest_now"] == 3
    gone = set(before) - set(tree(env.table))
    assert gone == {r["path"] for r in planned}
    assert env.changelogs() == [3, 4]
    assert (env.table / "changelog" / "EARLIEST").read_text() == "3"
    assert [r["id"] for r in env.rows()] == [0, 1, 2, 3, 4, 5]


def test_older_than_keeps_the_latest_changelog(env: Env) -> None:
    """Java caps the range at the latest changelog (exclusive): it always stays."""
    env.ok("expire-changelogs", "db.t", "--older-than", "1ms")
    assert env.changelogs() == [4]


def test_max_deletes_and_retain_min(env: Env) -> None:
    env.ok("expire-changelogs", "db.t", "--older-than", "1ms", "--max-deletes", "1")
    assert env.changelogs() == [2, 3, 4]
    # retain-min 4 of latest snapshot 6: ids from 3 are never expired
    env.ok("expire-changelogs", "db.t", "--older-than", "1ms", "--retain-min", "4")
    assert env.changelogs() == [3, 4]


def test_delete_all(env: Env) -> None:
    env.ok("expire-changelogs", "db.t", "--retain-max", "5")  # writes the changelog EARLIEST hint
    assert env.changelogs() == [2, 3, 4]
    planned = env.json("expire-changelogs", "db.t", "--delete-all", "--dry-run")
    assert {r["path"].rsplit("/", 1)[-1] for r in planned if r["kind"] == "other"} == {"EARLIEST", "LATEST"}
    before = tree(env.table)
    env.ok("expire-changelogs", "db.t", "--delete-all")
    gone = set(before) - set(tree(env.table))
    assert gone == {r["path"] for r in planned}
    assert list((env.table / "changelog").iterdir()) == []
    assert [r["id"] for r in env.rows()] == [0, 1, 2, 3, 4, 5]


def test_delete_all_refuses_a_changelog_not_older_than_the_earliest_snapshot(env: Env) -> None:
    shutil.copy(env.table / "snapshot" / "snapshot-5", env.table / "changelog" / "changelog-5")
    before = tree(env.table)
    res = env.run("expire-changelogs", "db.t", "--delete-all")
    assert res.exit_code == 6
    assert "changelog 5 is not older than snapshot 5" in one_error_line(res)
    assert tree(env.table) == before


@pytest.mark.parametrize(("args", "code", "says"), [
    (("--delete-all", "--retain-max", "2"), 2, "--delete-all takes none of"),
    (("--retain-min", "0"), 4, "retain-min must be at least 1"),
    (("--retain-max", "1", "--retain-min", "3"), 4, "must not be less than retain-min"),
    (("--max-deletes", "-1"), 4, "max-deletes must not be negative"),
    (("--older-than", "5"), 4, "--older-than"),
    (("--retain-max", "x"), 2, "--retain-max"),
])
def test_bad_input(env: Env, args: tuple[str, ...], code: int, says: str) -> None:
    before = tree(env.table)
    res = env.run("expire-changelogs", "db.t", *args)
    assert res.exit_code == code, res.output
    if code != 2:
        assert says in one_error_line(res)
    else:
        assert says in res.stderr
    assert tree(env.table) == before


def test_missing_table(env: Env) -> None:
    res = env.run("expire-changelogs", "db.nope", "--retain-max", "1")
    assert res.exit_code == 3
    one_error_line(res)


def test_corrupt_metadata_refuses_and_changes_nothing(env: Env) -> None:
    """The earliest snapshot decides which files the changelogs still share: unreadable, exit 6."""
    (env.table / "snapshot" / "snapshot-5").write_text("{not json")
    before = tree(env.table)
    res = env.run("expire-changelogs", "db.t", "--older-than", "1ms")
    assert res.exit_code == 6, res.output
    assert "nothing was deleted" in one_error_line(res)
    assert tree(env.table) == before
