"""Java Paimon 2.0's lifecycle semantics through the command line (issue 25); the core-level
ones are in tests/core/test_semantics_2_0.py."""

from __future__ import annotations

import time
from pathlib import Path

from typer.testing import CliRunner

from tests.cli.test_expire_changelogs_cli import CliEnv, Env

# ------------------------------------------- changelog expiry skips changelogs already gone (#7923)


def test_changelog_expiry_skips_a_changelog_already_gone(runner: CliRunner, tmp_path: Path) -> None:
    """2.x (apache/paimon#7923): a long-lived changelog in the expired range that another
    process deleted meanwhile is skipped, the others expire and EARLIEST moves past them."""
    env = Env(runner, tmp_path)  # changelogs 1..4, snapshots 5..6
    rows = env.rows()
    (env.table / "changelog" / "changelog-2").unlink()
    res = env.json("expire-changelogs", "db.t", "--retain-max", "3")
    assert res[0]["expired"] == 2 and res[0]["earliest_now"] == 4
    assert env.changelogs() == [4]
    assert (env.table / "changelog" / "EARLIEST").read_text() == "4"
    assert env.rows() == rows


def test_changelog_expiry_by_table_options_skips_a_changelog_already_gone(runner: CliRunner, tmp_path: Path) -> None:
    env = Env(runner, tmp_path)
    rows = env.rows()
    (env.table / "changelog" / "changelog-3").unlink()
    env.ok("alter", "db.t", "--set", "changelog.num-retained.min=1", "--set", "changelog.num-retained.max=2",
           "--set", "changelog.time-retained=1ms")
    env.ok("expire", "db.t", "--changelog")
    assert env.changelogs() == [4]
    assert env.rows() == rows


# ------------------------------------------------------------------------ tag.time-expire-enabled


def _tag_env(runner: CliRunner, root: Path, enabled: str) -> CliEnv:
    env = CliEnv(runner, root)
    env.ok("create", "db.t", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
           "--option", "bucket=1", "--option", f"tag.time-expire-enabled={enabled}")
    (root / "in0.csv").write_text("id,v\n1,a\n")
    env.ok("write", "db.t", str(root / "in0.csv"))
    env.ok("tag", "create", "db.t", "short", "--time-retained", "1 s")
    time.sleep(1.2)
    (root / "in1.csv").write_text("id,v\n2,b\n")
    env.ok("write", "db.t", str(root / "in1.csv"))  # a commit: Java's post-commit tag expiry
    return env


def test_tag_time_expire_disabled_keeps_tags_after_a_commit(runner: CliRunner, tmp_path: Path) -> None:
    """2.x: with ``tag.time-expire-enabled=false`` a commit expires no tag (Java 0.9 has no
    such option and always does); ``tag expire``, Java's ``expire_tags``, still does, as the
    procedure turns the option on for its run."""
    env = _tag_env(runner, tmp_path, "false")
    assert (env.table / "tag" / "tag-short").is_file()
    assert [r["tag"] for r in env.json("tag", "expire", "db.t")] == ["short"]
    assert not (env.table / "tag" / "tag-short").exists()


def test_tag_time_expire_enabled_by_default(runner: CliRunner, tmp_path: Path) -> None:
    env = _tag_env(runner, tmp_path, "true")
    assert not (env.table / "tag" / "tag-short").exists()


# ------------------------------------------------------------ commit.strict-mode.last-safe-snapshot


def test_write_option_strict_mode_gives_up_after_another_users_compaction(runner: CliRunner, tmp_path: Path) -> None:
    """``write --option commit.strict-mode.last-safe-snapshot=N`` reaches the commit (Java's
    dynamic options do): a compaction by another user after N in the same partition is exit 5,
    nothing committed."""
    env = CliEnv(runner, tmp_path)
    env.ok("create", "db.t", "--schema", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING",
           "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=1")
    for i in range(2):
        (tmp_path / f"in{i}.csv").write_text(f"id,dt,v\n{i},a,x\n")
        env.ok("write", "db.t", str(tmp_path / f"in{i}.csv"), "--write-only")
    env.ok("compact", "db.t", "--full")
    latest = env.json("inspect", "snapshots", "db.t")[-1]
    assert latest["commit_kind"] == "COMPACT"
    res = env.run("write", "db.t", str(tmp_path / "in0.csv"), "--write-only",
                  "--option", f"commit.strict-mode.last-safe-snapshot={latest['snapshot_id'] - 1}")
    assert res.exit_code == 5, res.output
    assert "commit.strict-mode.last-safe-snapshot" in res.stderr
    assert env.json("inspect", "snapshots", "db.t")[-1]["snapshot_id"] == latest["snapshot_id"]
    env.ok("write", "db.t", str(tmp_path / "in0.csv"), "--write-only",
           "--option", f"commit.strict-mode.last-safe-snapshot={latest['snapshot_id']}")
