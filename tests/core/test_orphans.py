"""core/operation/orphans.py + core/operation/used_files.py: what is an orphan, what is used, and fail-closed refusals."""

from __future__ import annotations

import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.errors import InvalidInput, UnsafeRefused
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.orphans import plan_remove_orphans, remove_orphans, resolve_cutoff
from paimon_cli.core.operation.write import TableWrite
from tests.core.test_orphans_support import (
    age_all,
    copy_file,
    dirs_under,
    files_under,
    make_table,
    plant,
    read_rows,
    reload,
    write_rows,
)

NOW = int(time.time() * 1000)


@pytest.fixture
def table(tmp_path: Path) -> Any:
    """PK table, 3 commits, a tag on snapshot 2, everything two days old."""
    t = make_table(tmp_path / "wh")
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    write_rows(t, [(1, "a", "x2"), (3, "c", "z")], tmp_path)
    write_rows(t, [(2, "b", None), (4, "a", "w")], tmp_path)
    t.tag_manager.create_tag("t2", t.snapshot_manager.snapshot(2))
    age_all(t.path)
    return t


def _planted(t: Any) -> dict[str, str]:
    """One orphan of each candidate area (relative path -> absolute path)."""
    root = Path(t.path)
    data_dir = next(p for p in (root / "dt=a").iterdir() if p.name.startswith("bucket-"))
    some_manifest = next(p for p in (root / "manifest").iterdir() if p.name.startswith("manifest-") and "list" not in p.name)
    out = {
        "uncommitted data": plant(data_dir / "data-00000000-dead-beef-0000-000000000000-0.parquet"),
        "failed-commit manifest": copy_file(some_manifest, root / "manifest" / "manifest-11111111-2222-3333-4444-555555555555-0"),
        "snapshot tmp": plant(root / "snapshot" / ".snapshot-4.0f0f0f0f.tmp"),
        "changelog leftover": plant(root / "changelog" / "junk.tmp"),
        "index leftover": plant(root / "index" / "index-99999999-0000-0000-0000-000000000000-0"),
        "statistics leftover": plant(root / "statistics" / "stat-99999999-0000-0000-0000-000000000000-0"),
    }
    age_all(t.path)
    return out


def test_removes_exactly_the_planted_orphans_and_table_still_reads(table: Any) -> None:
    before_rows = {sid: read_rows(table, sid) for sid in (1, 2, 3)}
    planted = _planted(table)
    legit = files_under(table.path) - {os.path.relpath(p, table.path) for p in planted.values()}
    plan = plan_remove_orphans(table)
    assert sorted(f.path for f in plan.files) == sorted(planted.values())
    assert {f.kind for f in plan.files} == {"data", "manifest", "snapshot-dir", "changelog-dir", "index", "statistics"}
    assert plan.total_bytes == sum(os.path.getsize(p) for p in planted.values())
    result = remove_orphans(table, plan)
    assert sorted(f.path for f in result.deleted) == sorted(planted.values()) and not result.kept
    assert files_under(table.path) == legit
    t = reload(table)
    assert {sid: read_rows(t, sid) for sid in (1, 2, 3)} == before_rows
    assert read_rows(t, tag="t2") == before_rows[2]


def test_young_files_are_not_candidates(table: Any) -> None:
    root = Path(table.path)
    young = plant(root / "dt=a" / "bucket-0" / "data-young-0.parquet")
    old = plant(root / "dt=a" / "bucket-0" / "data-old-0.parquet")
    t = time.time() - 25 * 3600
    os.utime(old, (t, t))
    plan = plan_remove_orphans(table)  # default: older than 1 day
    assert [f.path for f in plan.files] == [old]
    plan = plan_remove_orphans(table, "26h")
    assert plan.files == []
    assert young in [f.path for f in plan_remove_orphans(table, "P0D", force=True, now_millis=int(time.time() * 1000) + 5000).files]


def test_cutoff_rules() -> None:
    assert resolve_cutoff(None, NOW) == NOW - 86_400_000
    assert resolve_cutoff("2d", NOW) == NOW - 2 * 86_400_000
    assert resolve_cutoff("36h", NOW) == NOW - 36 * 3_600_000
    assert resolve_cutoff("90min", NOW) == NOW - 90 * 60_000
    assert resolve_cutoff("PT2H", NOW) == NOW - 2 * 3_600_000
    assert resolve_cutoff("2020-01-01T00:00:00Z", NOW) == 1577836800000
    with pytest.raises(UnsafeRefused, match="less than 1 hour"):
        resolve_cutoff("30min", NOW)
    assert resolve_cutoff("30min", NOW, force=True) == NOW - 30 * 60_000
    with pytest.raises(InvalidInput, match="later than now"):
        resolve_cutoff("2999-01-01T00:00:00", NOW, force=True)
    with pytest.raises(InvalidInput, match="expected a duration"):
        resolve_cutoff("yesterday", NOW)


def test_dry_run_plan_equals_real_run(table: Any) -> None:
    planted = _planted(table)
    first = plan_remove_orphans(table, now_millis=NOW)
    again = plan_remove_orphans(table, now_millis=NOW)
    assert [(f.path, f.size) for f in first.files] == [(f.path, f.size) for f in again.files]
    assert files_under(table.path) >= {os.path.relpath(p, table.path) for p in planted.values()}  # plan deleted nothing
    done = remove_orphans(table, again)
    assert [(f.path, f.size) for f in done.deleted] == [(f.path, f.size) for f in first.files]


def test_used_by_every_branch_tag_snapshot_and_changelog(table: Any, tmp_path: Path) -> None:
    root = Path(table.path)
    # a branch made from tag t2 (schema + tag's snapshot), then written to
    b = root / "branch" / "branch-b1"
    shutil.copytree(root / "schema", b / "schema")
    (b / "snapshot").mkdir(parents=True)
    (b / "snapshot" / "snapshot-2").write_text(table.tag_manager.tag("t2").snapshot.to_json())
    (b / "snapshot" / "LATEST").write_text("2")
    bt = reload(table, "b1")
    write_rows(bt, [(9, "z", "only-in-branch")], tmp_path)
    # a long-lived changelog holding snapshot 1's metadata, then snapshot 1 "expired"
    (root / "changelog").mkdir(exist_ok=True)
    shutil.copyfile(root / "snapshot" / "snapshot-1", root / "changelog" / "changelog-1")
    age_all(table.path)
    before = files_under(table.path)
    plan = plan_remove_orphans(table)
    assert plan.files == []
    branch_only = [p for p in files_under(root / "dt=z")]
    assert branch_only, "the branch wrote its own data files"
    assert plan.used.branches == ["main", "b1"]
    remove_orphans(table, plan)
    assert files_under(table.path) == before
    assert [r["v"] for r in read_rows(reload(table, "b1")) if r["id"] == 9] == ["only-in-branch"]


def test_index_files_are_used(tmp_path: Path) -> None:
    t = make_table(tmp_path / "wh", "dyn", bucket="-1")  # dynamic bucket: HASH index files
    write_rows(t, [(1, "a", "x"), (2, "a", "y")], tmp_path)
    write_rows(t, [(1, "a", "x2")], tmp_path)
    age_all(t.path)
    plan = plan_remove_orphans(t)
    assert plan.files == []
    assert any(f.startswith("index/") for f in files_under(t.path))
    kept = [os.path.basename(f) for f in files_under(t.path) if f.startswith(("manifest/", "index/", "dt="))]
    assert all(plan.used.uses(kept))


# ------------------------------------------------------------------ fail closed


def _corrupt(path: str | Path, data: bytes = b"{ not json") -> None:
    Path(path).write_bytes(data)


@pytest.mark.parametrize(
    "what",
    ["snapshot", "tag", "manifest", "manifest-list", "index-manifest", "consumer", "changelog", "branch-snapshot"],
)
def test_unreadable_metadata_refuses_and_deletes_nothing(table: Any, what: str) -> None:
    root = Path(table.path)
    _planted(table)
    if what == "snapshot":
        bad = root / "snapshot" / "snapshot-1"
    elif what == "tag":
        bad = root / "tag" / "tag-t2"
    elif what == "manifest":
        bad = sorted(p for p in (root / "manifest").iterdir() if p.name.startswith("manifest-") and "list" not in p.name)[0]
        # the planted copy is an orphan; corrupt a referenced one
        used = plan_remove_orphans(table).used.names
        bad = next(p for p in sorted((root / "manifest").iterdir())
                   if p.name.startswith("manifest-") and "list" not in p.name and p.name in used)
        _corrupt(bad, b"Obj\x01garbage")
    elif what == "manifest-list":
        snap = json.loads((root / "snapshot" / "snapshot-2").read_text())
        bad = root / "manifest" / snap["deltaManifestList"]
    elif what == "index-manifest":
        snap = json.loads((root / "snapshot" / "snapshot-3").read_text())
        snap["indexManifest"] = "index-manifest-00000000-0000-0000-0000-000000000000-0"
        (root / "snapshot" / "snapshot-3").write_text(json.dumps(snap))
        bad = root / "manifest" / snap["indexManifest"]
        bad.write_bytes(b"not avro")
    elif what == "consumer":
        bad = root / "consumer" / "consumer-c1"
        bad.parent.mkdir(exist_ok=True)
    elif what == "changelog":
        bad = root / "changelog" / "changelog-1"
    else:
        b = root / "branch" / "branch-b1"
        shutil.copytree(root / "schema", b / "schema")
        bad = b / "snapshot" / "snapshot-1"
        bad.parent.mkdir(parents=True)
    if what not in ("manifest", "index-manifest"):
        _corrupt(bad)
    age_all(table.path)
    before = files_under(table.path)
    with pytest.raises(UnsafeRefused) as e:
        plan_remove_orphans(table)
    assert bad.name in str(e.value)
    assert files_under(table.path) == before


def test_tag_whose_manifest_list_is_missing_refuses(table: Any) -> None:
    """apache/paimon#5229 / #6479: a tag that cannot be read must protect, not expose, its files."""
    root = Path(table.path)
    tag = json.loads((root / "tag" / "tag-t2").read_text())
    # make the tag point at metadata only it would use, then lose that metadata; its snapshot
    # has expired (while snapshot-2 exists, a tag naming other lists is refused as inconsistent)
    tag["baseManifestList"] = "manifest-list-00000000-aaaa-bbbb-cccc-000000000000-0"
    (root / "tag" / "tag-t2").write_text(json.dumps(tag))
    (root / "snapshot" / "snapshot-1").unlink()
    (root / "snapshot" / "snapshot-2").unlink()
    _planted(table)
    before = files_under(table.path)
    with pytest.raises(UnsafeRefused, match=r"manifest-list-00000000.*referenced by tag t2 does not exist"):
        plan_remove_orphans(table)
    assert files_under(table.path) == before


def test_no_snapshots_but_data_refuses(table: Any) -> None:
    """apache/paimon#7710: an empty used set is never a licence to delete every old file."""
    root = Path(table.path)
    for p in (root / "snapshot").iterdir():
        if p.name.startswith("snapshot-"):
            p.unlink()
    (root / "tag" / "tag-t2").unlink()
    before = files_under(table.path)
    # the LATEST hint still names a snapshot: that alone refuses (issue 27)
    with pytest.raises(UnsafeRefused, match="the LATEST hint names snapshot 3 but its file is missing"):
        plan_remove_orphans(table)
    assert files_under(table.path) == before
    for hint in ("LATEST", "EARLIEST"):
        (root / "snapshot" / hint).unlink(missing_ok=True)
    before = files_under(table.path)
    with pytest.raises(UnsafeRefused, match="no snapshot, tag or changelog"):
        plan_remove_orphans(table)
    assert files_under(table.path) == before


def test_snapshots_vanishing_while_reading_refuses(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A concurrent expire/rollback that removes every listed snapshot between listing and reading."""
    from paimon_cli.core.operation import used_files
    from paimon_cli.core.refs.snapshot import SnapshotManager

    real = SnapshotManager.try_snapshot

    def vanish(self: SnapshotManager, sid: int) -> Any:
        return None if self.dir_name == "snapshot" else real(self, sid)

    monkeypatch.setattr(SnapshotManager, "try_snapshot", vanish)
    monkeypatch.setattr(used_files.time, "sleep", lambda s: None)
    with pytest.raises(UnsafeRefused, match="latest snapshot vanished"):
        plan_remove_orphans(table)


def test_expired_snapshot_vanishing_is_tolerated(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.refs.snapshot import SnapshotManager

    real = SnapshotManager.try_snapshot

    def vanish(self: SnapshotManager, sid: int) -> Any:
        if self.dir_name == "snapshot" and sid == 1:
            os.unlink(self.snapshot_path(sid))  # expired meanwhile
            return None
        return real(self, sid)

    monkeypatch.setattr(SnapshotManager, "try_snapshot", vanish)
    plan = plan_remove_orphans(table)
    assert "snapshot 1" in plan.used.vanished


def test_manifest_missing_while_its_snapshot_exists_refuses(table: Any) -> None:
    root = Path(table.path)
    snap = json.loads((root / "snapshot" / "snapshot-3").read_text())
    (root / "manifest" / snap["deltaManifestList"]).unlink()
    with pytest.raises(UnsafeRefused, match="referenced by snapshot 3 does not exist"):
        plan_remove_orphans(table)


def test_branch_without_schema_refuses(table: Any) -> None:
    (Path(table.path) / "branch" / "branch-broken" / "snapshot").mkdir(parents=True)
    with pytest.raises(UnsafeRefused, match="branch-broken: branch has no schema"):
        plan_remove_orphans(table)


# ------------------------------------------------------------------ races and directories


def test_file_committed_between_plan_and_delete_is_kept(table: Any, tmp_path: Path) -> None:
    """apache/paimon#3074: a writer commits an old, already-written file after the plan."""
    import pyarrow as pa

    tw = TableWrite(table)
    tw.write_arrow(pa.table({"id": pa.array([7], pa.int32()), "dt": ["a"], "v": ["late"]}))
    messages = tw.prepare_commit()
    age_all(table.path)
    plan = plan_remove_orphans(table)
    late = {f.path for f in plan.files}
    assert late and all("/dt=a/bucket-" in p for p in late)
    FileStoreCommit(table).commit(messages, "APPEND")
    result = remove_orphans(table, plan)
    assert {f.path for f in result.kept} == late and result.deleted == []
    assert [r["v"] for r in read_rows(reload(table)) if r["id"] == 7] == ["late"]


def test_empty_bucket_and_partition_dirs_go_only_when_emptied(table: Any) -> None:
    root = Path(table.path)
    lone = plant(root / "dt=zz" / "bucket-0" / "data-lone-0.parquet")
    plant(root / "dt=yy" / "bucket-0" / "data-lone2-0.parquet")
    (root / "dt=empty" / "bucket-3").mkdir(parents=True)
    (root / "manifest" / "some-dir").mkdir()
    age_all(table.path)
    young = plant(root / "dt=yy" / "bucket-0" / "data-young-0.parquet")  # keeps dt=yy alive
    plan = plan_remove_orphans(table)
    assert str(root / "dt=zz" / "bucket-0") in plan.dirs and str(root / "dt=zz") in plan.dirs
    assert str(root / "dt=empty" / "bucket-3") in plan.dirs and str(root / "dt=empty") in plan.dirs
    assert not any("dt=yy" in d for d in plan.dirs)
    assert plan.dirs.index(str(root / "dt=zz" / "bucket-0")) < plan.dirs.index(str(root / "dt=zz"))
    result = remove_orphans(table, plan)
    assert lone in [f.path for f in result.deleted]
    dirs = dirs_under(table.path)
    assert "dt=zz" not in dirs and "dt=empty" not in dirs
    assert "dt=yy/bucket-0" in dirs and os.path.exists(young)
    assert "manifest/some-dir" in dirs  # never a candidate: directories are not files


def test_young_directory_is_kept(table: Any) -> None:
    root = Path(table.path)
    (root / "dt=new" / "bucket-0").mkdir(parents=True)  # a writer just created it
    plan = plan_remove_orphans(table)
    assert not any("dt=new" in d for d in plan.dirs)


def test_each_directory_listed_once(table: Any) -> None:
    _planted(table)
    plan = plan_remove_orphans(table)
    # root, manifest, index, statistics, 3 partitions + their buckets, snapshot/tag/changelog/consumer, branch dir
    buckets = sum(1 for p in Path(table.path).glob("dt=*/bucket-*"))
    partitions = sum(1 for p in Path(table.path).glob("dt=*"))
    assert plan.dirs_listed == 1 + 3 + partitions + buckets + 4 + 1
