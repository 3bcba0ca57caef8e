"""`paimon-cli rollback --to-timestamp / --to-watermark / --as-latest` (Java 2.x's
rollback_to_timestamp, rollback_to_watermark, rollback_to_as_latest): the snapshot chosen, the
dry run equal to the run, nothing deleted by --as-latest, documented exit codes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.test_tag_cli import fails, ok, tree

LONG_MIN = -(2**63)


def set_watermark(root: Path, sid: int, watermark: int | None) -> None:
    """What a Flink writer records (a snapshot's ``watermark``); our CLI writer sets none."""
    p = root / "snapshot" / f"snapshot-{sid}"
    snap = json.loads(p.read_text())
    if watermark is None:
        snap.pop("watermark", None)
    else:
        snap["watermark"] = watermark
    p.write_text(json.dumps(snap, indent=2))


@pytest.fixture
def table(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t (PK id, partitioned by dt): snapshots 1..5, one write each; tag t2 -> 2; watermarks
    1:none 2:100 3:MIN 4:200 5:300."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT NOT NULL, dt STRING NOT NULL, v STRING",
       "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=1", *w)
    for i, rows in enumerate(("1,a,x\n2,b,y\n", "1,a,x2\n3,c,z\n", "2,b,y3\n", "4,d,w\n", "1,a,x5\n")):
        f = tmp_path / f"in{i}.csv"
        f.write_text("id,dt,v\n" + rows)
        ok(runner, "write", "db.t", str(f), *w)
        time.sleep(0.005)  # distinct commit times
    root = Path(warehouse) / "db.db" / "t"
    for sid, wm in ((2, 100), (3, LONG_MIN), (4, 200), (5, 300)):
        set_watermark(root, sid, wm)
    ok(runner, "tag", "create", "db.t", "t2", "--snapshot", "2", *w)
    return warehouse, root


def read(runner: CliRunner, wh: str, *at: str) -> list[dict[str, Any]]:
    rows = json.loads(ok(runner, "read", "db.t", *at, "-o", "json", "-w", wh).stdout)
    return sorted(rows, key=lambda r: (r["id"], r["dt"]))


def snapshot_time(root: Path, sid: int) -> int:
    return int(json.loads((root / "snapshot" / f"snapshot-{sid}").read_text())["timeMillis"])


def snapshot_ids(root: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in (root / "snapshot").glob("snapshot-*"))


@pytest.mark.parametrize("delta", [0, 1])
def test_to_timestamp_picks_the_latest_committed_at_or_before(runner: CliRunner, table: tuple[str, Path],
                                                              delta: int) -> None:
    wh, root = table
    w = ["-w", wh]
    want = read(runner, wh, "--snapshot", "3")
    ts = snapshot_time(root, 3) + delta  # at, or just after, snapshot 3's commit (before 4's)
    assert ts < snapshot_time(root, 4)
    dry = ok(runner, "rollback", "db.t", "--to-timestamp", str(ts), "--dry-run", "-o", "json", *w)
    assert "would roll back to snapshot 3, the latest snapshot committed at or before" in dry.stderr
    run = ok(runner, "rollback", "db.t", "--to-timestamp", str(ts), "--yes", "-o", "json", *w)
    assert json.loads(dry.stdout) == json.loads(run.stdout) != []
    assert snapshot_ids(root) == [1, 2, 3]
    assert read(runner, wh) == want


def test_to_timestamp_as_iso_local_time(runner: CliRunner, table: tuple[str, Path]) -> None:
    import datetime

    wh, root = table
    iso = datetime.datetime.fromtimestamp(snapshot_time(root, 2) / 1000).isoformat(timespec="milliseconds")
    ok(runner, "rollback", "db.t", "--to-timestamp", iso, "-w", wh)
    assert snapshot_ids(root) == [1, 2]


def test_to_watermark_skips_snapshots_without_one(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    # 250: snapshot 4 (200); 3 carries Long.MIN_VALUE (no watermark), so 150 picks 3's
    # predecessor 2 (Java 2.x earlierOrEqualWatermark)
    r = ok(runner, "rollback", "db.t", "--to-watermark", "150", "--dry-run", *w)
    assert "would roll back to snapshot 2, the latest snapshot with a watermark at or below 150 (watermark 100)" \
        in r.stderr
    ok(runner, "rollback", "db.t", "--to-watermark", "250", *w)
    assert snapshot_ids(root) == [1, 2, 3, 4]


def test_as_latest_deletes_nothing_and_reads_as_the_target(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    want = read(runner, wh, "--snapshot", "2")
    latest_rows = read(runner, wh)
    before = tree(root)
    dry = ok(runner, "rollback", "db.t", "--snapshot", "2", "--as-latest", "--dry-run", "-o", "json", *w)
    assert tree(root) == before
    assert "would commit snapshot 6 (OVERWRITE) equal to snapshot 2" in dry.stderr
    assert "rollback-to-as-latest-2-<uuid>" in dry.stderr
    run = ok(runner, "rollback", "db.t", "--snapshot", "2", "--as-latest", "-o", "json", *w)
    assert json.loads(dry.stdout) == json.loads(run.stdout)
    changes = json.loads(run.stdout)
    assert {c["kind"] for c in changes} == {"delete"}  # the files snapshots 3..5 added
    after = tree(root)
    assert set(before) <= set(after)  # nothing deleted ...
    assert all(after[k] == v for k, v in before.items() if not k.startswith("snapshot/L"))  # ... or rewritten
    assert snapshot_ids(root) == [1, 2, 3, 4, 5, 6]
    snap6 = json.loads((root / "snapshot" / "snapshot-6").read_text())
    snap2 = json.loads((root / "snapshot" / "snapshot-2").read_text())
    assert snap6["commitKind"] == "OVERWRITE" and snap6["watermark"] == 100
    assert snap6["totalRecordCount"] == snap2["totalRecordCount"]
    assert snap6.get("indexManifest") == snap2.get("indexManifest")
    assert read(runner, wh) == want
    assert read(runner, wh, "--snapshot", "5") == latest_rows  # the newer history stays readable
    tags = json.loads(ok(runner, "tag", "list", "db.t", "-o", "json", *w).stdout)
    protection = [t for t in tags if t["tag_name"].startswith("rollback-to-as-latest-2-")]
    assert len(protection) == 1 and protection[0]["snapshot_id"] == 2 and protection[0]["time_retained"] is None
    assert "t2" in {t["tag_name"] for t in tags}
    # the rollback can itself be rolled back
    ok(runner, "rollback", "db.t", "--snapshot", "5", "--as-latest", *w)
    assert read(runner, wh) == latest_rows


def test_as_latest_survives_expiration(runner: CliRunner, table: tuple[str, Path]) -> None:
    """The files put back were deleted by snapshots 3..5; expiring those must keep them: the
    protection tag does (as in Java 2.x)."""
    wh, root = table
    w = ["-w", wh]
    want = read(runner, wh, "--snapshot", "1")
    ok(runner, "compact", "db.t", "--full", *w)  # snapshot 6 deletes snapshot 1's files
    r = ok(runner, "rollback", "db.t", "--snapshot", "1", "--as-latest", "-o", "json", *w)
    assert {c["kind"] for c in json.loads(r.stdout)} == {"add", "delete"}  # 1's files come back
    ok(runner, "expire", "db.t", "--retain-min", "1", "--retain-max", "1", "--older-than", "PT0S", "--yes", *w)
    assert snapshot_ids(root) == [7]
    assert read(runner, wh) == want
    r = ok(runner, "remove-orphan-files", "db.t", "--older-than", "PT0S", "--force", "--dry-run", "-o", "json", *w)
    assert [f for f in json.loads(r.stdout) if f["kind"] != "directory"] == []


def test_as_latest_to_a_tag_creates_no_tag(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    want = read(runner, wh, "--tag", "t2")
    r = ok(runner, "rollback", "db.t", "--tag", "t2", "--as-latest", *w)
    assert "equal to tag t2 (snapshot 2)" in r.stderr
    assert sorted(p.name for p in (root / "tag").iterdir()) == ["tag-t2"]
    assert read(runner, wh) == want


def test_bad_input_changes_nothing(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    before = tree(root)
    early = str(snapshot_time(root, 1) - 1)
    assert "no snapshot of db.t was committed at or before" in fails(
        runner, 3, "rollback", "db.t", "--to-timestamp", early, *w)
    assert "watermark at or below 50" in fails(runner, 3, "rollback", "db.t", "--to-watermark", "50", *w)
    assert "--to-timestamp" in fails(runner, 4, "rollback", "db.t", "--to-timestamp", "yesterday", *w)
    fails(runner, 3, "rollback", "db.t", "--snapshot", "9", "--as-latest", *w)
    fails(runner, 3, "rollback", "db.t", "--tag", "nope", "--as-latest", *w)
    fails(runner, 2, "rollback", "db.t", "--snapshot", "1", "--to-watermark", "100", *w)
    fails(runner, 2, "rollback", "db.t", "--as-latest", *w)
    fails(runner, 2, "rollback", "db.t", "--to-watermark", "x", *w)
    assert tree(root) == before
