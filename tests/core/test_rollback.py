"""core/operation/rollback.py: Java 1.x metadata semantics, and no orphans left behind."""

from __future__ import annotations

import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.errors import CommitConflict, InvalidInput, NotFound, UnsafeRefused
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.orphans import plan_remove_orphans
from paimon_cli.core.operation.rollback import apply_rollback, plan_rollback, rollback
from paimon_cli.core.operation.scan import FileStoreScan
from tests.core.test_orphans_support import files_under, make_table, read_rows, reload, write_rows


@pytest.fixture
def table(tmp_path: Path) -> Any:
    """PK table with 5 commits; tags t2 -> 2 and t4 -> 4."""
    t = make_table(tmp_path / "wh")
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    write_rows(t, [(1, "a", "x2"), (3, "c", "z")], tmp_path)
    write_rows(t, [(2, "b", None), (4, "a", "w")], tmp_path)
    write_rows(t, [(5, "d", "new-partition")], tmp_path)
    write_rows(t, [(1, "a", "x5")], tmp_path)
    t.tag_manager.create_tag("t2", t.snapshot_manager.snapshot(2))
    t.tag_manager.create_tag("t4", t.snapshot_manager.snapshot(4))
    return t


def no_orphans(t: Any) -> list[str]:
    """Every file of the table that nothing uses (cutoff: now, forced)."""
    plan = plan_remove_orphans(t, "P0D", force=True, now_millis=int(time.time() * 1000) + 2000)
    return [f.path for f in plan.files]


def hint(t: Any, name: str) -> str:
    return (Path(t.path) / "snapshot" / name).read_text()


def test_rollback_to_snapshot(table: Any) -> None:
    rows3 = read_rows(table, 3)
    rows2 = read_rows(table, tag="t2")
    plan = rollback(table, snapshot_id=3)
    assert plan.snapshots == [5, 4] and plan.tags == ["t4"] and not plan.create_snapshot
    t = reload(table)
    assert t.snapshot_manager.snapshot_ids() == [1, 2, 3]
    assert hint(t, "LATEST") == "3"
    assert t.tag_manager.tag_names() == ["t2"]
    assert read_rows(t) == rows3 and read_rows(t, tag="t2") == rows2
    assert no_orphans(t) == []  # unlike pypaimon / Java 1.x nothing is left behind
    assert not (Path(t.path) / "dt=d").exists() or files_under(Path(t.path) / "dt=d") == set()
    # and the table keeps working
    write_rows(t, [(6, "a", "after")], Path(t.path).parent)
    assert reload(t).snapshot_manager.latest_snapshot_id() == 4


def test_dry_run_changes_nothing_and_lists_what_goes(table: Any) -> None:
    before = files_under(table.path)
    plan = rollback(table, snapshot_id=3, dry_run=True)
    assert files_under(table.path) == before
    gone = {str(Path(f.path).relative_to(table.path)) for f in plan.files}
    kinds = {f.kind for f in plan.files}
    assert {"snapshot", "tag", "data", "manifest", "manifest-list"} <= kinds
    assert all(f.size > 0 for f in plan.files)
    apply_rollback(table, plan)
    assert files_under(table.path) == (before - gone) | {"snapshot/LATEST"}


def test_rollback_to_tag_whose_snapshot_expired(table: Any) -> None:
    rows2 = read_rows(table, tag="t2")
    root = Path(table.path)
    for i in (1, 2, 3):  # "expire" 1..3 (keep their files: t2 still uses some)
        (root / "snapshot" / f"snapshot-{i}").unlink()
    (root / "snapshot" / "EARLIEST").write_text("4")
    left_by_manual_expiry = no_orphans(table)
    plan = rollback(table, tag="t2")
    assert plan.create_snapshot and plan.target_id == 2 and plan.snapshots == [5, 4]
    t = reload(table)
    assert t.snapshot_manager.snapshot_ids() == [2]
    assert hint(t, "EARLIEST") == "2" and hint(t, "LATEST") == "2"
    text = (root / "snapshot" / "snapshot-2").read_text()
    assert "tagCreateTime" not in text and json.loads(text)["id"] == 2
    assert read_rows(t) == rows2 and t.tag_manager.tag_names() == ["t2"]
    assert no_orphans(t) == left_by_manual_expiry  # the rollback itself left nothing behind


def test_snapshot_id_of_expired_but_tagged_snapshot_rolls_back_to_the_tag(table: Any) -> None:
    (Path(table.path) / "snapshot" / "snapshot-2").unlink()
    (Path(table.path) / "snapshot" / "snapshot-1").unlink()
    plan = plan_rollback(table, snapshot_id=2)
    assert plan.from_tag == "t2" and plan.create_snapshot


def test_files_still_used_by_a_branch_are_kept(table: Any, tmp_path: Path) -> None:
    root = Path(table.path)
    b = root / "branch" / "branch-b4"  # a branch created from tag t4
    shutil.copytree(root / "schema", b / "schema")
    (b / "snapshot").mkdir(parents=True)
    (b / "snapshot" / "snapshot-4").write_text(table.tag_manager.tag("t4").snapshot.to_json())
    (b / "snapshot" / "LATEST").write_text("4")
    branch_rows = read_rows(reload(table, "b4"))
    rollback(table, snapshot_id=2)
    assert read_rows(reload(table, "b4")) == branch_rows  # Java 0.9 deletes files the branch reads
    assert no_orphans(reload(table)) == []


def test_level_upgrade_after_target_keeps_the_file(table: Any) -> None:
    """A COMPACT that upgrades a file (DELETE + ADD of the same name) must not make rollback
    delete it: the target still reads it at its old level (Java 0.9 deleted it)."""
    t = reload(table)
    e = next(x for x in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot()) if x.file.level == 0)
    up = dataclasses.replace(e.file, level=5)
    FileStoreCommit(t).commit(
        [CommitMessage(e.partition, e.bucket, e.total_buckets, new_files=[up], deleted_files=[e.file])], "COMPACT"
    )
    rows5 = read_rows(reload(table), 5)
    rollback(reload(table), snapshot_id=5)
    t = reload(table)
    assert (Path(t.path) / "snapshot" / "snapshot-6").exists() is False
    assert read_rows(t) == rows5
    assert no_orphans(t) == []


def test_nothing_to_do_for_the_latest(table: Any) -> None:
    before = files_under(table.path)
    plan = rollback(table, snapshot_id=5)
    assert plan.snapshots == [] and plan.files == [] and plan.tags == []
    assert files_under(table.path) == before


def test_bad_targets(table: Any) -> None:
    with pytest.raises(NotFound, match="snapshot 9 not found"):
        rollback(table, snapshot_id=9)
    with pytest.raises(NotFound, match="tag 'nope' not found"):
        rollback(table, tag="nope")
    with pytest.raises(InvalidInput, match="exactly one"):
        rollback(table)
    # a tag beyond the latest snapshot (e.g. left over from an older history)
    table.tag_manager.create_tag("future", dataclasses.replace(table.snapshot_manager.snapshot(5), id=9))
    with pytest.raises(InvalidInput, match="later than the latest snapshot 5"):
        rollback(table, tag="future")


def test_unreadable_tag_refuses_and_changes_nothing(table: Any) -> None:
    (Path(table.path) / "tag" / "tag-t2").write_text("{ broken")
    before = files_under(table.path)
    with pytest.raises(UnsafeRefused, match="tag-t2"):
        rollback(table, snapshot_id=3)
    assert files_under(table.path) == before


def test_corrupt_manifest_of_a_removed_snapshot_refuses(table: Any) -> None:
    root = Path(table.path)
    snap = json.loads((root / "snapshot" / "snapshot-5").read_text())
    (root / "manifest" / snap["deltaManifestList"]).write_bytes(b"garbage")
    before = files_under(table.path)
    with pytest.raises(UnsafeRefused, match=snap["deltaManifestList"]):
        rollback(table, snapshot_id=3)
    assert files_under(table.path) == before


def test_commit_between_plan_and_apply_conflicts(table: Any, tmp_path: Path) -> None:
    plan = plan_rollback(table, snapshot_id=3)
    write_rows(reload(table), [(7, "a", "racer")], tmp_path)
    before = files_under(table.path)
    with pytest.raises(CommitConflict, match="snapshot 6 was committed"):
        apply_rollback(reload(table), plan)
    assert files_under(table.path) == before


def test_long_lived_changelogs_after_target_are_removed(table: Any) -> None:
    root = Path(table.path)
    (root / "changelog").mkdir()
    for i in (1, 2, 3, 4):
        shutil.copyfile(root / "snapshot" / f"snapshot-{i}", root / "changelog" / f"changelog-{i}")
    (root / "changelog" / "LATEST").write_text("4")
    plan = rollback(table, snapshot_id=3)
    assert plan.changelogs == [4]
    assert sorted(p.name for p in (root / "changelog").iterdir()) == ["LATEST", "changelog-1", "changelog-2", "changelog-3"]
    assert (root / "changelog" / "LATEST").read_text() == "3"
    assert no_orphans(reload(table)) == []


def test_rollback_on_a_branch(table: Any, tmp_path: Path) -> None:
    root = Path(table.path)
    b = root / "branch" / "branch-b2"
    shutil.copytree(root / "schema", b / "schema")
    (b / "snapshot").mkdir(parents=True)
    (b / "snapshot" / "snapshot-2").write_text(table.tag_manager.tag("t2").snapshot.to_json())
    (b / "snapshot" / "LATEST").write_text("2")
    bt = reload(table, "b2")
    write_rows(bt, [(8, "e", "branch-only")], tmp_path)
    main_rows = read_rows(reload(table))
    plan = rollback(reload(table, "b2"), snapshot_id=2)
    gone = {str(Path(f.path).relative_to(root)) for f in plan.files}
    assert {g.split("/")[0] for g in gone} == {"branch", "dt=e", "manifest"}
    bt = reload(table, "b2")
    assert bt.snapshot_manager.snapshot_ids() == [2]
    assert read_rows(bt) == read_rows(reload(table), tag="t2")
    assert not (root / "dt=e").exists() or files_under(root / "dt=e") == set()
    assert read_rows(reload(table)) == main_rows
    assert no_orphans(reload(table)) == []


@pytest.mark.parametrize("crash_after", [1, 2, 4, 8])
def test_killed_rollback_leaves_a_readable_table_and_only_orphans(table: Any, crash_after: int) -> None:
    """Every deletion step keeps the table readable; a crash leaves only files nothing uses."""
    expected = {sid: read_rows(table, sid) for sid in (3, 4, 5)}
    plan = plan_rollback(table, snapshot_id=3)
    planned = {f.path for f in plan.files}
    fio = table.file_io
    real_delete, calls = fio.delete, []

    def dying_delete(path: str) -> None:
        if len(calls) >= crash_after:
            raise KeyboardInterrupt("killed")
        calls.append(path)
        real_delete(path)

    fio.delete = dying_delete  # type: ignore[method-assign]
    with pytest.raises(KeyboardInterrupt):
        apply_rollback(table, plan)
    fio.delete = real_delete  # type: ignore[method-assign]
    t = reload(table)
    latest = t.snapshot_manager.latest_snapshot_id()
    assert latest in expected and read_rows(t) == expected[latest]
    assert read_rows(t, 3) == expected[3]
    assert set(no_orphans(t)) <= planted_leftovers(planned, t)


def planted_leftovers(planned: set[str], t: Any) -> set[str]:
    """Files of the plan that are still there (the only possible orphans after a crash)."""
    return {p for p in planned if Path(p).exists()}


def test_branch_or_tag_created_while_planning_conflicts(table: Any) -> None:
    plan = plan_rollback(table, snapshot_id=3)
    table.tag_manager.create_tag("late", table.snapshot_manager.snapshot(5))
    before = files_under(table.path)
    with pytest.raises(CommitConflict, match="tag late was created"):
        apply_rollback(reload(table), plan)
    assert files_under(table.path) == before
    table.tag_manager.delete_tag("late")
    root = Path(table.path)
    shutil.copytree(root / "schema", root / "branch" / "branch-late" / "schema")
    with pytest.raises(CommitConflict, match="branch late was created"):
        apply_rollback(reload(table), plan)


def _set_watermarks(t: Any, marks: dict[int, int | None]) -> None:
    for sid, wm in marks.items():
        p = Path(t.path) / "snapshot" / f"snapshot-{sid}"
        snap = json.loads(p.read_text())
        snap.pop("watermark", None)
        if wm is not None:
            snap["watermark"] = wm
        p.write_text(json.dumps(snap))


@pytest.mark.parametrize("marks", [
    {1: 10, 2: 20, 3: 30, 4: 40, 5: 50},
    {1: None, 2: 20, 3: -(2**63), 4: 40, 5: None},  # none, and Long.MIN_VALUE: "no watermark"
    {1: None, 2: None, 3: None, 4: None, 5: 50},
    {1: None, 2: None, 3: None, 4: None, 5: None},
])
def test_watermark_search_matches_java_2(table: Any, marks: dict[int, int | None]) -> None:
    """Java 2.x earlierOrEqualWatermark / laterOrEqualWatermark: the last watermarked snapshot at
    or below, the first at or above; snapshots without one are skipped."""
    _set_watermarks(table, marks)
    sm = reload(table).snapshot_manager
    real = {sid: wm for sid, wm in marks.items() if wm is not None and wm != -(2**63)}
    for w in range(0, 70, 5):
        earlier = max((sid for sid, wm in real.items() if wm <= w), default=None)
        later = min((sid for sid, wm in real.items() if wm >= w), default=None)
        got_e, got_l = sm.earlier_or_equal_watermark(w), sm.later_or_equal_watermark(w)
        assert (got_e.id if got_e else None, got_l.id if got_l else None) == (earlier, later), w


def test_rollback_to_watermark_and_time(table: Any) -> None:
    from paimon_cli.core.operation.rollback import RollbackTarget

    _set_watermarks(table, {1: 10, 2: 20, 3: None, 4: 40, 5: 50})
    t = reload(table)
    assert plan_rollback(t, target=RollbackTarget(watermark=39)).target_id == 2
    s3 = t.snapshot_manager.snapshot(3)
    plan = plan_rollback(t, target=RollbackTarget(timestamp_millis=s3.time_millis))
    assert plan.target_id == 3 and plan.chosen and "committed at or before" in plan.chosen
    with pytest.raises(NotFound, match="watermark at or below 5"):
        plan_rollback(t, target=RollbackTarget(watermark=5))
    with pytest.raises(InvalidInput, match="exactly one"):
        RollbackTarget(snapshot_id=1, watermark=5)
