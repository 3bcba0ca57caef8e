"""A snapshot file that is gone while the hints or its neighbours say it exists (issue 27).

Why: with ``snapshot-8`` deleted while ``LATEST`` said 8, ``remove-orphan-files`` and
``maintain`` (orphans on) took snapshot 7 for the latest and deleted the files only snapshot 8
used (its data files, deletion vectors, manifests): putting the snapshot file back then gave a
table pointing at missing files. The same holds for a gap between the earliest snapshot and the
newest. Such metadata contradicts itself: every command that deletes by "what snapshots use"
must refuse (exit 6) and say what is missing, readers must say it too (exit 4; ``maintain``
reports the table as corrupt, 4, as for any metadata it cannot read), and nothing may change.
After ``repair`` (the operator accepting the loss) the table works again.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app

TABLE = "db.t"


def cli(wh: Path, *args: str) -> Any:
    return CliRunner().invoke(app, [*args, "-w", str(wh)])


def ok(wh: Path, *args: str) -> Any:
    res = cli(wh, *args)
    assert res.exit_code == 0, (args, res.output)
    return res


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A deletion-vector primary-key table with snapshots 1..8 (each write commits APPEND then
    COMPACT, so snapshot 8 has its own data files, deletion vectors and manifests), every file
    two days old."""
    root = tmp_path_factory.mktemp("missing-snapshot")
    wh = root / "wh"
    ok(wh, "create", TABLE, "-s", "id BIGINT NOT NULL, v STRING", "--primary-key", "id", "--option", "bucket=1",
       "--option", "deletion-vectors.enabled=true")
    for i in range(1, 5):
        p = root / f"in{i}.csv"
        p.write_text(f"id,v\n{i},a{i}\n1,x{i}\n{10 + i},b\n")
        ok(wh, "write", TABLE, str(p))
    snapshots = sorted(p.name for p in (wh / "db.db" / "t" / "snapshot").glob("snapshot-*"))
    assert snapshots == [f"snapshot-{i}" for i in range(1, 9)]
    old = time.time() - 2 * 86400
    for p in wh.rglob("*"):
        os.utime(p, (old, old))
    (root / "policy.toml").write_text("[defaults]\nremove-orphan-files = true\n")
    return root


@pytest.fixture
def env(template: Path, tmp_path: Path) -> Path:
    shutil.copytree(template, tmp_path / "env")
    return tmp_path / "env"


def snapshot_dir(env: Path) -> Path:
    return env / "wh" / "db.db" / "t" / "snapshot"


DESTRUCTIVE = {
    "remove-orphan-files": ("remove-orphan-files", TABLE, "--older-than", "1d", "--force"),
    "remove-orphan-files-dry-run": ("remove-orphan-files", TABLE, "--dry-run"),
    "expire": ("expire", TABLE, "--retain-min", "1", "--retain-max", "2"),
    "rollback": ("rollback", TABLE, "--snapshot", "3"),
    "tag-delete": ("tag", "delete", TABLE, "t3"),
    "purge-files": ("purge-files", TABLE, "--yes"),
}


def _refusals(env: Path, missing: str) -> None:
    """Every destructive command refuses (6) naming what is missing; maintain and health say
    the table is corrupt (4); nothing changed."""
    wh = env / "wh"
    before = tree(wh)
    for name, args in DESTRUCTIVE.items():
        res = cli(wh, *args)
        assert res.exit_code == 6, (name, res.output)
        assert res.stderr.startswith(f"error: {missing}") and res.stderr.count("\n") == 1, (name, res.stderr)
        assert "(nothing was" in res.stderr, (name, res.stderr)
        assert tree(wh) == before, name
    for args in (("maintain", "db", "--policy", str(env / "policy.toml")), ("maintain", "db")):
        res = cli(wh, *args, "-o", "json")
        assert res.exit_code == 4, (args, res.output)
        [t] = json.loads(res.stdout)
        assert (t["outcome"], t["message"]) == ("corrupt", missing), args
    res = cli(wh, "health", "db", "-o", "json")
    assert res.exit_code == 4, res.output
    [f] = json.loads(res.stdout)
    assert (f["kind"], f["message"]) == ("unreadable_metadata", f"metadata cannot be read: {missing}")
    assert tree(wh) == before


def test_latest_hint_naming_a_deleted_snapshot(template: Path, env: Path) -> None:
    wh = env / "wh"
    ok(wh, "tag", "create", TABLE, "t3", "--snapshot", "3")
    (snapshot_dir(env) / "snapshot-8").unlink()
    assert (snapshot_dir(env) / "LATEST").read_text() == "8"
    missing = (f"{snapshot_dir(env) / 'snapshot-8'}: the LATEST hint names snapshot 8 but its file is missing (the "
               "newest snapshot file is 7; restore the file, or make 7 the latest with `paimon-cli repair`)")
    _refusals(env, missing)
    before = tree(wh)
    # readers of the latest say what is missing (4, not 3: the table is not gone); a named
    # snapshot that exists still reads
    for args in (("read", TABLE), ("inspect", "files", TABLE), ("compact", TABLE, "--full"), ("write", TABLE, "-")):
        res = cli(wh, *args)
        assert res.exit_code == 4 and res.stderr == f"error: {missing}\n", (args, res.output)
    assert cli(wh, "read", TABLE, "--snapshot", "7").exit_code == 0
    assert tree(wh) == before
    # putting the file back makes the table whole: nothing it used was deleted
    shutil.copyfile(snapshot_dir(template) / "snapshot-8", snapshot_dir(env) / "snapshot-8")
    assert ok(wh, "read", TABLE, "-o", "csv").stdout == ok(template / "wh", "read", TABLE, "-o", "csv").stdout
    # or the operator accepts the loss: repair, then the commands run again
    (snapshot_dir(env) / "snapshot-8").unlink()
    ok(wh, "repair", TABLE)
    assert (snapshot_dir(env) / "LATEST").read_text() == "7"
    ok(wh, "remove-orphan-files", TABLE, "--older-than", "1d", "--force")
    ok(wh, "maintain", "db", "--policy", str(env / "policy.toml"))
    assert ok(wh, "read", TABLE, "-o", "csv").stdout


@pytest.mark.parametrize("gone", [[5], [4, 5]])
def test_gap_between_earliest_and_newest(env: Path, gone: list[int]) -> None:
    wh = env / "wh"
    ok(wh, "tag", "create", TABLE, "t3", "--snapshot", "3")
    for sid in gone:
        (snapshot_dir(env) / f"snapshot-{sid}").unlink()
    what = f"snapshot {gone[0]} is" if len(gone) == 1 else f"snapshots {gone[0]}..{gone[-1]} are"
    missing = (f"{snapshot_dir(env) / f'snapshot-{gone[0]}'}: {what} missing between the earliest snapshot 1 and the "
               f"newest 8; restore {'it' if len(gone) == 1 else 'them'}, or make snapshot 6 the earliest with "
               "`paimon-cli repair --earliest 6`")
    _refusals(env, missing)
    # the latest snapshot does not need the missing one: it reads
    assert ok(wh, "read", TABLE, "-o", "csv").stdout
    ok(wh, "repair", TABLE, "--earliest", "6")  # the table starts after the gap
    ok(wh, "remove-orphan-files", TABLE, "--older-than", "1d", "--force")
    ok(wh, "expire", TABLE, "--retain-min", "1", "--retain-max", "2")
    assert ok(wh, "read", TABLE, "-o", "csv").stdout
