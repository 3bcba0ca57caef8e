"""`paimon-cli tag create --from-timestamp/--from-watermark`, `tag replace`, `tag trigger` and
`tag expire --older-than` as Java 2.x's create_tag_from_timestamp / _watermark, replace_tag,
trigger_tag_automatic_creation and expire_tags: the snapshot chosen, `--dry-run` equal to the
run, no orphans, documented exit codes and nothing changed on bad input."""

from __future__ import annotations

import datetime as dt
import json
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from tests.cli.test_rollback_cli import set_watermark, snapshot_time
from tests.cli.test_tag_cli import fails, ok, tree


def write(runner: CliRunner, wh: str, tmp_path: Path, rows: str, *extra: str) -> None:
    f = tmp_path / f"in{time.monotonic_ns()}.csv"
    f.write_text("id,v\n" + rows)
    ok(runner, "write", "db.t", str(f), *extra, "-w", wh)
    time.sleep(0.005)  # distinct commit times


@pytest.fixture
def table(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t (PK id, bucket 1, write-only: nothing expires inline): snapshots 1..4."""
    ok(runner, "create", "db.t", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
       "--option", "bucket=1", "--option", "write-only=true", "-w", warehouse)
    for rows in ("1,a\n2,b\n", "3,c\n", "1,x\n", "4,d\n"):
        write(runner, warehouse, tmp_path, rows)
    return warehouse, Path(warehouse) / "db.db" / "t"


def tags(runner: CliRunner, wh: str) -> dict[str, int]:
    rows = json.loads(ok(runner, "tag", "list", "db.t", "-o", "json", "-w", wh).stdout)
    return {r["tag_name"]: r["snapshot_id"] for r in rows}


def read(runner: CliRunner, wh: str, *at: str) -> list[dict[str, Any]]:
    return sorted(json.loads(ok(runner, "read", "db.t", *at, "-o", "json", "-w", wh).stdout), key=lambda r: r["id"])


def orphans(runner: CliRunner, wh: str) -> list[Any]:
    r = ok(runner, "remove-orphan-files", "db.t", "--older-than", "PT0S", "--force", "--dry-run", "-o", "json",
           "-w", wh)
    return [f for f in json.loads(r.stdout) if f["kind"] != "directory"]


# ------------------------------------------------------------------ create --from-timestamp / --from-watermark


def test_create_from_timestamp_takes_the_earliest_at_or_after(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ts = snapshot_time(root, 2) + 1  # after 2's commit: snapshot 3
    r = ok(runner, "tag", "create", "db.t", "a", "--from-timestamp", str(ts), *w)
    assert "at snapshot 3" in r.stderr
    ok(runner, "tag", "create", "db.t", "b", "--from-timestamp", str(snapshot_time(root, 2)), *w)
    iso = dt.datetime.fromtimestamp(snapshot_time(root, 4) / 1000).isoformat(timespec="milliseconds")
    ok(runner, "tag", "create", "db.t", "c", "--from-timestamp", iso, *w)
    assert tags(runner, wh) == {"a": 3, "b": 2, "c": 4}
    # the tag's file is the snapshot file, as Java's createTag writes it
    assert (root / "tag" / "tag-a").read_text() == (root / "snapshot" / "snapshot-3").read_text()


def test_create_from_timestamp_finds_an_expired_snapshot_in_a_tag(runner: CliRunner, table: tuple[str, Path]) -> None:
    """Java's procedure also walks the tags: an expired snapshot a tag holds can be chosen."""
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "keep1", "--snapshot", "1", *w)
    t1 = snapshot_time(root, 1)
    ok(runner, "expire", "db.t", "--retain-max", "2", "--retain-min", "1", "--older-than", "PT0S", "--yes", *w)
    assert not (root / "snapshot" / "snapshot-1").exists()
    ok(runner, "tag", "create", "db.t", "from-tag", "--from-timestamp", str(t1), *w)
    assert tags(runner, wh)["from-tag"] == 1
    assert read(runner, wh, "--tag", "from-tag") == read(runner, wh, "--tag", "keep1")


def test_create_from_watermark(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    for sid, wm in ((2, 100), (3, -(2**63)), (4, 300)):
        set_watermark(root, sid, wm)
    ok(runner, "tag", "create", "db.t", "w150", "--from-watermark", "150", *w)  # 3 has none: 4
    ok(runner, "tag", "create", "db.t", "w100", "--from-watermark", "100", *w)
    ok(runner, "tag", "create", "db.t", "w0", "--from-watermark", "0", *w)
    assert tags(runner, wh) == {"w150": 4, "w100": 2, "w0": 2}
    assert "watermark at or above 301" in fails(runner, 3, "tag", "create", "db.t", "x", "--from-watermark", "301",
                                                *w)


def test_create_from_bad_input(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    before = tree(root)
    late = str(snapshot_time(root, 4) + 10_000)
    assert "committed at or after" in fails(runner, 3, "tag", "create", "db.t", "x", "--from-timestamp", late, *w)
    assert "--from-timestamp" in fails(runner, 4, "tag", "create", "db.t", "x", "--from-timestamp", "noon", *w)
    fails(runner, 2, "tag", "create", "db.t", "x", "--snapshot", "1", "--from-watermark", "3", *w)
    fails(runner, 2, "tag", "delete", "db.t", "x", "--from-timestamp", "1", *w)
    assert tree(root) == before


# ------------------------------------------------------------------ replace


def test_replace_moves_the_tag(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "rel", "--snapshot", "1", *w)
    r = ok(runner, "tag", "replace", "db.t", "rel", "--snapshot", "3", "--time-retained", "1d", *w)
    assert "moved tag 'rel' from snapshot 1 to 3, retained PT24H" in r.stderr
    assert tags(runner, wh) == {"rel": 3}
    assert read(runner, wh, "--tag", "rel") == read(runner, wh, "--snapshot", "3")
    ok(runner, "tag", "replace", "db.t", "rel", *w)  # default: the latest
    assert tags(runner, wh) == {"rel": 4}
    assert (root / "tag" / "tag-rel").read_text() == (root / "snapshot" / "snapshot-4").read_text()


def test_replace_deletes_what_only_the_old_snapshot_held(runner: CliRunner, table: tuple[str, Path]) -> None:
    """Java leaves the old snapshot's files as orphans; we delete exactly those (as tag delete),
    and the dry run lists the same files the run deletes."""
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "old", "--snapshot", "1", *w)
    ok(runner, "compact", "db.t", "--full", *w)  # 1's files now only in tag old
    ok(runner, "expire", "db.t", "--retain-max", "1", "--retain-min", "1", "--older-than", "PT0S", "--yes", *w)
    assert orphans(runner, wh) == []
    before = tree(root)
    dry = ok(runner, "tag", "replace", "db.t", "old", "--dry-run", "-o", "json", *w)
    assert tree(root) == before
    assert "would move tag 'old' from snapshot 1 to 5" in dry.stderr
    planned = json.loads(dry.stdout)
    assert {f["kind"] for f in planned} >= {"data", "manifest-list"}
    run = ok(runner, "tag", "replace", "db.t", "old", "--yes", "-o", "json", *w)
    assert json.loads(run.stdout) == planned
    assert orphans(runner, wh) == []
    assert read(runner, wh, "--tag", "old") == read(runner, wh)


def test_replace_bad_input(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "t", "--snapshot", "1", *w)
    before = tree(root)
    assert "tag 'nope' not found" in fails(runner, 3, "tag", "replace", "db.t", "nope", *w)
    assert "snapshot 9 not found" in fails(runner, 3, "tag", "replace", "db.t", "t", "--snapshot", "9", *w)
    fails(runner, 2, "tag", "replace", "db.t", *w)
    fails(runner, 4, "tag", "replace", "db.t", "t", "--time-retained", "0s", *w)
    assert tree(root) == before


# ------------------------------------------------------------------ trigger


def auto_table(runner: CliRunner, wh: str, tmp_path: Path, *options: str) -> Path:
    """db.t with hourly process-time auto tags, written write-only (no tag made inline)."""
    ok(runner, "create", "db.t", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
       "--option", "bucket=1", "--option", "write-only=true", "--option", "tag.automatic-creation=process-time",
       "--option", "tag.creation-period=hourly", *options, "-w", wh)
    for rows in ("1,a\n", "2,b\n"):
        write(runner, wh, tmp_path, rows)
    return Path(wh) / "db.db" / "t"


def hour_tag(millis: int, tz: dt.tzinfo | None = None) -> str:
    t = dt.datetime.fromtimestamp(millis / 1000, tz).replace(tzinfo=None, minute=0, second=0, microsecond=0)
    return (t - dt.timedelta(hours=1)).strftime("%Y-%m-%d %H")


def test_trigger_creates_the_missing_auto_tags(runner: CliRunner, warehouse: str, tmp_path: Path) -> None:
    w = ["-w", warehouse]
    root = auto_table(runner, warehouse, tmp_path)
    assert not (root / "tag").exists()  # write-only: nothing tagged inline
    before = tree(root)
    dry = ok(runner, "tag", "trigger", "db.t", "--dry-run", "-o", "json", *w)
    assert tree(root) == before
    name = hour_tag(snapshot_time(root, 1))
    assert json.loads(dry.stdout)[0] == {"action": "create", "tag": name, "snapshot_id": 1}
    run = ok(runner, "tag", "trigger", "db.t", "--yes", "-o", "json", *w)
    assert json.loads(run.stdout) == json.loads(dry.stdout)
    assert tags(runner, warehouse)[name] == 1
    again = ok(runner, "tag", "trigger", "db.t", "-o", "json", *w)
    assert json.loads(again.stdout) == []  # idempotent: continues after the last auto tag


def test_trigger_reads_process_time_in_sink_process_time_zone(runner: CliRunner, warehouse: str,
                                                             tmp_path: Path) -> None:
    """Java 2.x ProcessTimeExtractor: the commit time in ``sink.process-time-zone``."""
    local = dt.datetime.now().astimezone().utcoffset() or dt.timedelta()
    hours = int((local + dt.timedelta(hours=5)).total_seconds() // 3600)
    hours = (hours + 12) % 24 - 12  # stay a valid offset, 5 h away from the machine's
    zone = f"{'+' if hours >= 0 else '-'}{abs(hours):02d}:00"
    root = auto_table(runner, warehouse, tmp_path, "--option", f"sink.process-time-zone={zone}")
    ok(runner, "tag", "trigger", "db.t", "-w", warehouse)
    tz = dt.timezone(dt.timedelta(hours=hours))
    assert hour_tag(snapshot_time(root, 1), tz) in tags(runner, warehouse)


def test_trigger_resumes_after_the_latest_auto_tag_by_time(runner: CliRunner, warehouse: str,
                                                           tmp_path: Path) -> None:
    """Java 2.x resumes after the auto tag with the latest time; 0.9 / 1.x took the highest
    snapshot's and refused when it held two auto tags (we refused too)."""
    w = ["-w", warehouse]
    root = auto_table(runner, warehouse, tmp_path)
    write(runner, warehouse, tmp_path, "3,c\n")
    (root / "tag").mkdir()
    snap2 = (root / "snapshot" / "snapshot-2").read_text()
    for name in ("2001-01-01 00", "2001-01-01 01"):  # two auto-shaped tags on snapshot 2
        (root / "tag" / f"tag-{name}").write_text(snap2)
    r = ok(runner, "tag", "trigger", "db.t", "-o", "json", *w)
    assert [x["snapshot_id"] for x in json.loads(r.stdout)] == [3]
    assert tags(runner, warehouse)[hour_tag(snapshot_time(root, 3))] == 3


def test_trigger_trims_and_expires(runner: CliRunner, warehouse: str, tmp_path: Path) -> None:
    w = ["-w", warehouse]
    root = auto_table(runner, warehouse, tmp_path, "--option", "tag.num-retained-max=1")
    (root / "tag").mkdir()
    # an older auto tag on snapshot 1 (created by an earlier run) and a manual tag long expired
    (root / "tag" / "tag-2001-01-01 00").write_text((root / "snapshot" / "snapshot-1").read_text())
    ok(runner, "tag", "create", "db.t", "short", "--snapshot", "1", "--time-retained", "1s", *w)
    time.sleep(1.1)
    write(runner, warehouse, tmp_path, "3,c\n")
    dry = json.loads(ok(runner, "tag", "trigger", "db.t", "--dry-run", "-o", "json", *w).stdout)
    name = hour_tag(snapshot_time(root, 2))
    assert dry[:2] == [{"action": "create", "tag": name, "snapshot_id": 2},
                       {"action": "delete", "tag": "2001-01-01 00", "snapshot_id": 1}]
    assert {"action": "expire", "tag": "short", "snapshot_id": 1} in dry
    run = json.loads(ok(runner, "tag", "trigger", "db.t", "--yes", "-o", "json", *w).stdout)
    assert run == dry
    assert "short" not in tags(runner, warehouse) and "2001-01-01 00" not in tags(runner, warehouse)


def test_trigger_without_auto_creation_expires_only(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "keep", "--snapshot", "1", *w)
    r = ok(runner, "tag", "trigger", "db.t", "-o", "json", *w)
    assert json.loads(r.stdout) == [] and "0 created, 0 dropped, 0 expired" in r.stderr
    fails(runner, 2, "tag", "trigger", "db.t", "x", *w)
    fails(runner, 2, "tag", "trigger", "db.t", "--snapshot", "1", *w)


# ------------------------------------------------------------------ expire --older-than


def test_expire_older_than_is_a_wall_clock(runner: CliRunner, table: tuple[str, Path],
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """Java 2.x reads older_than as a plain wall clock (apache/paimon#9263). In Europe/Berlin
    2024-03-31 02:30 does not exist as an instant; read through one it became 01:30 and missed
    a tag created at 02:15 (a writer's wall clock in another zone)."""
    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "night", "--snapshot", "1", "--time-retained", "3650d", *w)
    p = root / "tag" / "tag-night"
    p.write_text(p.read_text().replace(p.read_text().split('"tagCreateTime" : ')[1].split("]")[0] + "]",
                                       "[ 2024, 3, 31, 2, 15 ]"))
    assert tags(runner, wh) == {"night": 1}
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        r = ok(runner, "tag", "expire", "db.t", "--older-than", "2024-03-31 02:30:00", "-o", "json", *w)
    finally:
        monkeypatch.undo()
        time.tzset()
    assert [x["tag"] for x in json.loads(r.stdout)] == ["night"]
    assert tags(runner, wh) == {}


def test_expire_older_than_uses_the_file_time_of_a_tag_without_retention(runner: CliRunner,
                                                                         table: tuple[str, Path]) -> None:
    import os

    wh, root = table
    w = ["-w", wh]
    ok(runner, "tag", "create", "db.t", "plain", "--snapshot", "1", *w)
    ok(runner, "tag", "create", "db.t", "new", "--snapshot", "2", *w)
    old = time.time() - 3 * 86400
    os.utime(root / "tag" / "tag-plain", (old, old))
    cutoff = dt.datetime.fromtimestamp(time.time() - 86400).strftime("%Y-%m-%d %H:%M:%S")
    dry = ok(runner, "tag", "expire", "db.t", "--older-than", cutoff, "--dry-run", "-o", "json", *w)
    run = ok(runner, "tag", "expire", "db.t", "--older-than", cutoff, "--yes", "-o", "json", *w)
    assert json.loads(dry.stdout) == json.loads(run.stdout)
    assert tags(runner, wh) == {"new": 2}
