"""Tag create/rename/delete/expire on our own tables: Java's TagDeletion rules, fail-closed reads,
branch protection, dry-run == real run."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import IntType, VarCharType
from paimon_cli.core.errors import AlreadyExists, InvalidInput, NotFound, UnsafeRefused
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.operation.branch_ops import create_branch
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.tag_deletion import plan_tag_deletion
from paimon_cli.core.operation.tag_ops import (
    create_tag,
    delete_tags,
    expire_tags,
    expire_tags_after_commit,
    expired_tag_names,
    rename_tag,
)
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import TimeTravel


def _write(table: Any, rows: list[dict[str, Any]], overwrite: bool = False) -> int:
    tw = TableWrite(table, overwrite=overwrite)
    tw.write_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(table.schema.fields)))
    commit = FileStoreCommit(table)
    snap = commit.commit(tw.prepare_commit(), overwrite={} if overwrite else None)
    assert snap is not None
    return snap.id


def _ids(table: Any, at: TimeTravel | None = None) -> list[int]:
    return sorted(r["id"] for r in TableRead(table, at).to_arrow().to_pylist())


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


@pytest.fixture
def history(catalog: FileSystemCatalog) -> Any:
    """s1 {1..3}, s2 +{4..6}, s3 overwrite {7}, s4 +{8}; tags t1@1 t2@2 t4@4; snapshots 1-3 expired
    (their files removed by hand, as an expire that keeps tagged files would leave them)."""
    schema = Schema.of([("id", IntType(nullable=False), None), ("v", VarCharType(10), None)],
                       primary_keys=["id"], options={"bucket": "1"})
    catalog.create_table("db.t", schema)
    t = catalog.get_table("db.t")
    _write(t, [{"id": i, "v": "a"} for i in (1, 2, 3)])
    _write(t, [{"id": i, "v": "b"} for i in (4, 5, 6)])
    _write(t, [{"id": 7, "v": "c"}], overwrite=True)
    _write(t, [{"id": 8, "v": "d"}])
    for name, sid in (("t1", 1), ("t2", 2), ("t4", 4)):
        create_tag(t, name, sid)
    sm = t.snapshot_manager
    for sid in (1, 2, 3):
        Path(sm.snapshot_path(sid)).unlink()
    sm.commit_earliest_hint(4)
    return catalog.get_table("db.t")


def test_delete_tag_cleans_only_files_no_neighbour_uses(history: Any) -> None:
    t = history
    root = Path(t.path)
    data_of = {}
    for name in ("t1", "t2", "t4"):
        snap = t.tag_manager.tag(name).snapshot
        data_of[name] = {e.file.file_name for e in FileStoreScan(t).plan(snap)}
    before = _files(root)
    plan = plan_tag_deletion(t, ["t2"])
    assert _files(root) == before  # planning deletes nothing
    deleted = {f.path for f in plan.files}
    data_deleted = {Path(f.path).name for f in plan.files if f.kind == "data"}
    assert data_deleted == data_of["t2"] - data_of["t1"] - data_of["t4"]
    assert data_deleted  # the {4..6} file
    delete_tags(t, ["t2"])
    assert before - _files(root) == {str(Path(p).relative_to(root)) for p in deleted}
    assert _ids(t, TimeTravel(tag="t1")) == [1, 2, 3]
    assert _ids(t, TimeTravel(tag="t4")) == [7, 8]
    assert _ids(t) == [7, 8]
    # then the first tag: its data goes (nothing right of it uses {1..3})
    plan = delete_tags(t, ["t1"])
    assert {Path(f.path).name for f in plan.files if f.kind == "data"} == data_of["t1"]
    assert _ids(t, TimeTravel(tag="t4")) == [7, 8]


def test_tag_of_live_snapshot_only_loses_its_file(history: Any) -> None:
    plan = delete_tags(history, ["t4"])
    assert [f.kind for f in plan.files] == ["tag"]
    assert _ids(history) == [7, 8]


def test_dry_run_then_real_run_delete_the_same(history: Any) -> None:
    root = Path(history.path)
    before = _files(root)
    dry = delete_tags(history, ["t1", "t2"], dry_run=True)
    assert _files(root) == before
    real = delete_tags(history, ["t1", "t2"])
    assert [(f.kind, f.path, f.size) for f in dry.files] == [(f.kind, f.path, f.size) for f in real.files]
    gone = before - _files(root)
    assert gone == {str(Path(f.path).relative_to(root)) for f in real.files}
    assert sum(f.size for f in real.files) == dry.total_bytes > 0


def test_unreadable_neighbour_refuses(history: Any) -> None:
    root = Path(history.path)
    (root / "tag" / "tag-t1").write_text("{ not json")
    before = _files(root)
    with pytest.raises(UnsafeRefused, match="tag-t1"):
        delete_tags(history, ["t2"])
    assert _files(root) == before


def test_unreadable_manifest_of_right_neighbour_refuses(history: Any) -> None:
    root = Path(history.path)
    snap4 = history.snapshot_manager.snapshot(4)
    lst = root / "manifest" / snap4.base_manifest_list
    lst.write_bytes(b"garbage")
    before = _files(root)
    with pytest.raises(UnsafeRefused, match=snap4.base_manifest_list):
        delete_tags(history, ["t2"])
    assert _files(root) == before


def test_branch_from_the_tag_keeps_its_files(history: Any, catalog: FileSystemCatalog) -> None:
    """Java 0.9 would delete the {4..6} file here and break the branch; we keep it."""
    create_branch(history, "b", tag="t2")
    plan = delete_tags(history, ["t2"])
    assert not [f for f in plan.files if f.kind == "data"]
    branch = catalog.get_table("db.t", "b")
    assert _ids(branch) == [1, 2, 3, 4, 5, 6]


def test_create_rename_and_errors(history: Any) -> None:
    t = history
    with pytest.raises(AlreadyExists):
        create_tag(t, "t1", 4)
    with pytest.raises(NotFound):
        create_tag(t, "x", 99)
    with pytest.raises(InvalidInput):
        create_tag(t, "a/b", 4)
    with pytest.raises(NotFound):
        delete_tags(t, ["nope"])
    raw = (Path(t.path) / "tag" / "tag-t4").read_bytes()
    rename_tag(t, "t4", "t4b")
    assert (Path(t.path) / "tag" / "tag-t4b").read_bytes() == raw
    assert not (Path(t.path) / "tag" / "tag-t4").exists()
    with pytest.raises(AlreadyExists):
        rename_tag(t, "t4b", "t1")
    with pytest.raises(NotFound):
        rename_tag(t, "t4", "zz")


def test_time_retained_expiry(history: Any) -> None:
    t = history
    tag = create_tag(t, "short", 4, time_retained_seconds=60)
    create_tag(t, "long", 4, time_retained_seconds=86400)
    assert tag.time_retained_java == "PT1M"
    text = json.loads((Path(t.path) / "tag" / "tag-short").read_text())
    assert text["tagTimeRetained"] == 60.0 and len(text["tagCreateTime"]) >= 5
    now = dt.datetime.now()
    assert expired_tag_names(t, now) == []
    later = now + dt.timedelta(minutes=5)
    assert expired_tag_names(t, later) == ["short"]
    plan = expire_tags(t, dry_run=True, now=later)
    assert plan.tags == ["short"] and t.tag_manager.tag_exists("short")
    expire_tags(t, now=later)
    assert not t.tag_manager.tag_exists("short") and t.tag_manager.tag_exists("long")
    # older_than also takes tags without retention (their file time)
    assert set(expired_tag_names(t, now, older_than=later)) == {"t1", "t2", "t4", "long"}


def test_default_time_retained_option_and_after_commit(catalog: FileSystemCatalog) -> None:
    schema = Schema.of([("id", IntType(nullable=False), None)], primary_keys=["id"],
                       options={"bucket": "1", "tag.default-time-retained": "1 s"})
    catalog.create_table("db.r", schema)
    t = catalog.get_table("db.r")
    _write(t, [{"id": 1}])
    tag = create_tag(t, "d", None)
    assert tag.time_retained_seconds == 1.0
    import time

    time.sleep(1.2)
    plan = expire_tags_after_commit(t)
    assert plan is not None and plan.tags == ["d"]
    assert not t.tag_manager.tag_exists("d")


def test_branch_created_between_plan_and_apply_refuses(history: Any) -> None:
    from paimon_cli.core.operation.tag_deletion import apply_tag_deletion

    plan = plan_tag_deletion(history, ["t2"])
    assert any(f.kind == "data" for f in plan.files)
    create_branch(history, "late", tag="t2")
    before = _files(Path(history.path))
    with pytest.raises(UnsafeRefused, match="branches"):
        apply_tag_deletion(history, plan)
    assert _files(Path(history.path)) == before


def test_tag_an_expired_snapshot_through_its_tag(history: Any) -> None:
    """Java's findSnapshot: snapshot 2 is gone but tag t2 still holds it."""
    tag = create_tag(history, "again", 2)
    assert tag.snapshot.id == 2
    root = Path(history.path) / "tag"
    assert (root / "tag-again").read_bytes() == (root / "tag-t2").read_bytes()
    assert _ids(history, TimeTravel(tag="again")) == [1, 2, 3, 4, 5, 6]
    with pytest.raises(NotFound):
        create_tag(history, "none", 3)


def test_older_than_dates_a_tag_without_retention_by_its_file(history: Any) -> None:
    """Java's TagTimeExpire: a tag lacking a create time OR a retention is dated by its file's
    modification time when older_than is given (a create time alone is not used)."""
    import os

    t = history
    tag_file = Path(t.path) / "tag" / "tag-t1"
    body = json.loads(tag_file.read_text())
    body["tagCreateTime"] = [2000, 1, 1, 0, 0]  # a create time without a retention
    tag_file.write_text(json.dumps(body))
    fresh = dt.datetime.now()
    os.utime(tag_file, (fresh.timestamp(), fresh.timestamp()))
    cutoff = fresh - dt.timedelta(hours=1)
    assert "t1" not in expired_tag_names(t, fresh, older_than=cutoff)  # its file is new
    old = (fresh - dt.timedelta(days=1)).timestamp()
    os.utime(tag_file, (old, old))
    assert "t1" in expired_tag_names(t, fresh, older_than=cutoff)


def test_older_than_text_is_a_wall_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    """Java 2.x reads expire_tags' older_than as written (apache/paimon#9263): not converted
    through an instant, which moves local times in a DST gap."""
    import time

    from paimon_cli.core.api.arguments import local_datetime

    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    try:
        assert local_datetime("2024-03-31 02:30:00", "--older-than") == dt.datetime(2024, 3, 31, 2, 30)
        assert local_datetime("2024-03-31T02:30:00.1234", "--older-than") == dt.datetime(2024, 3, 31, 2, 30, 0, 123000)
    finally:
        monkeypatch.undo()
        time.tzset()
