"""purge-files from the command line: Java's purge_files, dry run, --yes, refusals."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.test_compact_cli import one_error_line
from tests.cli.test_expire_changelogs_cli import CliEnv, tree


class Env(CliEnv):
    """db.t: partitioned primary-key table with a decoupled changelog lifecycle: 5 commits
    (1..3 moved to changelog/), tags t2 (@2, expired) and t5, branch b from t5, consumer c1,
    an orphan data file; every file is back-dated so the purge's orphan step may take it."""

    def __init__(self, runner: CliRunner, root: Path) -> None:
        super().__init__(runner, root)
        self.ok("create", "db.t", "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL",
                "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=1",
                "--option", "changelog.num-retained.max=100", "--option", "changelog-producer=input")
        for i in range(5):
            self.write(i)
            if i == 1:
                self.ok("tag", "create", "db.t", "t2")
        self.ok("tag", "create", "db.t", "t5")
        self.ok("branch", "create", "db.t", "b", "--tag", "t5")
        self.ok("expire", "db.t", "--retain-max", "2", "--retain-min", "2", "--older-than", "1ms")
        from paimon_cli.core.io.fileio import load_file_io
        from paimon_cli.core.refs.consumers import ConsumerManager

        ConsumerManager(load_file_io(str(self.table)), str(self.table)).reset_consumer("c1", 5)
        bucket = next(self.table.glob("dt=*/bucket-0"))
        (bucket / "data-orphan-0.parquet").write_bytes(b"orphan")
        past = time.time() - 7200
        for p in self.table.rglob("*"):
            os.utime(p, (past, past))

    def write(self, i: int, *extra: str) -> None:
        p = self.root / f"in{i}.csv"
        p.write_text(f"id,v,dt\n{i},v{i},d{i % 2}\n100,x{i},d0\n")
        self.ok("write", "db.t", str(p), "--write-only", *extra)


@pytest.fixture
def env(runner: CliRunner, tmp_path: Path) -> Env:
    return Env(runner, tmp_path)


def test_dry_run_lists_exactly_what_the_purge_deletes(env: Env) -> None:
    before = tree(env.table)
    planned = env.json("purge-files", "db.t", "--dry-run")
    assert tree(env.table) == before
    kinds = {r["kind"] for r in planned}
    assert {"branch-file", "tag", "consumer", "long-lived-changelog", "snapshot", "data", "manifest"} <= kinds
    res = env.run("purge-files", "db.t", "--dry-run")
    assert "would drop 1 branches, 2 tags, 1 consumers; truncate" in res.stderr
    out = env.json("purge-files", "db.t", "--yes")
    assert out[0]["snapshot_id"] == 6 and (out[0]["branches"], out[0]["tags"], out[0]["consumers"]) == (1, 2, 1)
    after = tree(env.table)
    gone = set(before) - set(after)
    assert gone == {r["path"] for r in planned}
    assert (out[0]["files"], out[0]["bytes"]) == (len(planned), sum(r["bytes"] for r in planned))
    # what stays: the schema, snapshot 6 and what it names
    assert sorted(p.name for p in (env.table / "snapshot").iterdir()) == ["EARLIEST", "LATEST", "snapshot-6"]
    assert not list(env.table.glob("dt=*/bucket-0/*"))
    for d in ("tag", "consumer", "branch", "changelog"):
        assert not list((env.table / d).glob("*")), d
    assert env.json("read", "db.t") == []
    env.write(9)
    assert [r["id"] for r in env.json("read", "db.t")] == [9, 100]


def test_bytes_are_the_sizes_of_the_files(env: Env) -> None:
    planned = env.json("purge-files", "db.t", "--dry-run")
    for r in planned:
        assert r["bytes"] == os.path.getsize(os.path.join(env.table, r["path"])), r


def test_refuses_without_yes(env: Env) -> None:
    before = tree(env.table)
    res = env.run("purge-files", "db.t")
    assert res.exit_code == 2
    assert "pass --yes to confirm" in res.stderr
    assert tree(env.table) == before


def test_refuses_a_branch(env: Env) -> None:
    before = tree(env.table)
    res = env.run("purge-files", "db.t", "--branch", "b", "--yes")
    assert res.exit_code == 1
    assert "only a whole table" in one_error_line(res)
    assert tree(env.table) == before


def test_missing_table(env: Env) -> None:
    res = env.run("purge-files", "db.nope", "--yes")
    assert res.exit_code == 3
    one_error_line(res)


@pytest.mark.parametrize("damage", ["tag", "branch-snapshot", "manifest", "schema-id", "record-count"])
def test_unreadable_metadata_refuses_and_changes_nothing(env: Env, damage: str) -> None:
    """schema-id: the truncate snapshot would name the id the latest schema file claims;
    record-count: it would report records while listing no file (expiry then refuses)."""
    if damage == "record-count":
        snap = env.table / "snapshot" / "snapshot-5"
        snap.write_text(json.dumps({**json.loads(snap.read_text()), "totalRecordCount": 999}))
    elif damage == "schema-id":
        schema = env.table / "schema" / "schema-0"
        schema.write_text(json.dumps({**json.loads(schema.read_text()), "id": 7}))
    elif damage == "tag":
        (env.table / "tag" / "tag-t2").write_text("{broken")
    elif damage == "branch-snapshot":
        next((env.table / "branch" / "branch-b" / "snapshot").glob("snapshot-*")).write_text("{broken")
    else:
        next((env.table / "manifest").glob("manifest-list-*")).write_bytes(b"garbage")
    before = tree(env.table)
    res = env.run("purge-files", "db.t", "--yes")
    assert res.exit_code == 6, res.output
    one_error_line(res)
    assert tree(env.table) == before


def test_unwritten_iceberg_storage_is_refused(env: Env) -> None:
    env.ok("alter", "db.t", "--set", "metadata.iceberg.storage=rest-catalog")
    before = tree(env.table)
    res = env.run("purge-files", "db.t", "--yes")
    assert res.exit_code == 1
    assert "metadata.iceberg.storage" in one_error_line(res)
    assert tree(env.table) == before


def test_external_data_files_go_and_orphans_there_stay(runner: CliRunner, tmp_path: Path) -> None:
    """Files of the table on an external root are deleted through the manifests; orphan
    removal never scans the root (as Java), so a file nothing names there stays."""
    ext = tmp_path / "ext"
    ok = CliEnv(runner, tmp_path).ok
    ok("create", "db.x", "--schema", "id BIGINT NOT NULL, v STRING", "--option", "bucket=-1",
       "--option", f"data-file.external-paths=file://{ext}", "--option", "data-file.external-paths.strategy=round-robin")
    for i in range(3):
        p = tmp_path / f"in{i}.csv"
        p.write_text(f"id,v\n{i},v{i}\n")
        ok("write", "db.x", str(p))
    ok("tag", "create", "db.x", "t3")
    stray = next(ext.rglob("*.parquet")).with_name("data-stray-0.parquet")
    stray.write_bytes(b"x")
    before = tree(tmp_path)
    planned = json.loads(ok("purge-files", "db.x", "--dry-run", "-o", "json").stdout)
    assert len([r for r in planned if r["kind"] == "external"]) == 3
    ok("purge-files", "db.x", "--yes")
    gone = set(before) - set(tree(tmp_path))
    table = Path(tmp_path, "wh", "db.db", "x")
    shown = {r["path"] if r["path"].startswith("file:") else str(table / r["path"]) for r in planned}
    assert gone == {str(Path(p.removeprefix("file:")).relative_to(tmp_path)) for p in shown}
    assert [p.name for p in ext.rglob("*") if p.is_file()] == ["data-stray-0.parquet"]
    assert json.loads(ok("read", "db.x", "-o", "json").stdout) == []
