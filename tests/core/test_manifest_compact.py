"""core/operation/manifest_compact.py: Java's compact_manifest (full manifest compaction)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.data import binary_row
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.manifest.manifest import FileKind
from paimon_cli.core.operation.manifest_compact import (
    COMMIT_USER_PREFIX,
    compact_manifest,
    plan_compact_manifest,
)
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.refs.snapshot import BATCH_COMMIT_IDENTIFIER
from tests.core.test_orphans_support import files_under, make_table, read_rows, reload, write_rows


def _live(t: Any) -> set[tuple[Any, ...]]:
    return {e.identifier() for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())}


def _manifests(t: Any) -> list[Any]:
    return FileStoreScan(t).data_manifests(t.snapshot_manager.latest_snapshot())


@pytest.fixture
def table(tmp_path: Path) -> Any:
    """PK table, 3 partitions, 6 commits, then a full compaction of partition a (DELETEs)."""
    from paimon_cli.core.compact.job import compact_table

    t = make_table(tmp_path / "wh")
    for i in range(6):
        write_rows(t, [(i, "a", f"a{i}"), (i + 10, "b", f"b{i}"), (i + 20, "c", f"c{i}")], tmp_path)
    compact_table(reload(t), full=True, partitions=["dt=a"], expire=False)
    return reload(t)


def test_empty_table_has_nothing_to_compact(tmp_path: Path) -> None:
    t = make_table(tmp_path / "wh")
    plan = plan_compact_manifest(t)
    assert plan.snapshot_id is None and not plan.changes and "no snapshot" in plan.message
    assert compact_manifest(t).snapshot_id is None
    assert t.snapshot_manager.snapshot_ids() == []


def test_compacts_into_one_snapshot_with_the_same_files(table: Any) -> None:
    rows, live, latest = read_rows(table), _live(table), table.snapshot_manager.latest_snapshot()
    before = _manifests(table)
    assert len(before) == 7 and any(m.num_deleted_files for m in before)
    plan = plan_compact_manifest(table)
    assert [r["action"] for r in plan.rows().rows] == ["rewrite"] * 7  # all small, one with DELETEs
    result = compact_manifest(table, plan)
    t = reload(table)
    snap = t.snapshot_manager.latest_snapshot()
    assert result.snapshot_id == snap.id == latest.id + 1 and result.plan is plan
    assert snap.commit_kind == "COMPACT" and snap.commit_identifier == BATCH_COMMIT_IDENTIFIER
    assert snap.commit_user.startswith(COMMIT_USER_PREFIX + "_")
    assert snap.total_record_count == latest.total_record_count and snap.delta_record_count == 0
    assert snap.index_manifest == latest.index_manifest and snap.schema_id == latest.schema_id
    assert FileStoreScan(t).delta_manifests(snap) == [] and snap.changelog_manifest_list is None
    after = _manifests(t)
    assert len(after) == result.manifests_after == 1
    entries = FileStoreScan(t).read_entries(after)
    assert all(e.kind == FileKind.ADD for e in entries) and len(entries) == len(plan.survivors)
    assert _live(t) == live and read_rows(t) == rows
    assert plan.dropped == sum(m.num_deleted_files for m in before) * 2  # each DELETE and its ADD
    # sorted by partition, then bucket
    keys = [(binary_row.deserialize(e.partition, t.schema.partition_types), e.bucket) for e in entries]
    assert keys == sorted(keys)
    # idempotent: nothing left to do, no snapshot
    again = compact_manifest(t)
    assert again.snapshot_id is None and not again.plan.changes
    assert reload(t).snapshot_manager.latest_snapshot_id() == snap.id


def test_dry_run_plan_is_what_runs_and_writes_nothing(table: Any) -> None:
    files = files_under(table.path)
    plan = plan_compact_manifest(table)
    assert files_under(table.path) == files
    result = compact_manifest(reload(table), plan)
    assert result.plan.rows() == plan.rows()


def test_big_delete_free_manifests_of_other_partitions_are_kept(tmp_path: Path) -> None:
    """Every manifest counts as big (1-byte target): only the DELETEs' partition is rewritten."""
    from paimon_cli.core.compact.job import compact_table

    t = make_table(tmp_path / "wh", **{"manifest.target-file-size": "1 b", "manifest.merge-min-count": "1000"})
    for i in range(3):
        write_rows(t, [(i, "a", f"a{i}")], tmp_path)
        write_rows(t, [(i + 10, "b", f"b{i}")], tmp_path)
    compact_table(reload(t), full=True, partitions=["dt=a"], expire=False)
    t = reload(t)
    rows, live = read_rows(t), _live(t)
    plan = plan_compact_manifest(t)
    by_action = {a.manifest.file_name: a for a in plan.actions}
    scan = FileStoreScan(t)
    deleted = {e.identifier() for e in scan.read_entries(_manifests(t)) if e.kind == FileKind.DELETE}
    for m in _manifests(t):
        entries = scan.read_entries([m])
        parts = {binary_row.deserialize(e.partition, t.schema.partition_types)[0] for e in entries}
        touched = any(e.kind == FileKind.DELETE or e.identifier() in deleted for e in entries)
        assert by_action[m.file_name].rewrite == touched, (parts, by_action[m.file_name])
        if parts == {"b"}:
            assert not by_action[m.file_name].rewrite
    kept = [a.manifest for a in plan.actions if not a.rewrite]
    assert len(kept) == 5  # partition b's three appends and the compaction's new files (one per bucket)
    compact_manifest(t, plan)
    t = reload(t)
    assert all(m in _manifests(t) for m in kept)
    assert _live(t) == live and read_rows(t) == rows


def test_a_commit_in_between_is_planned_again(table: Any, tmp_path: Path) -> None:
    plan = plan_compact_manifest(table)
    write_rows(reload(table), [(99, "d", "late")], tmp_path)
    t = reload(table)
    rows = read_rows(t)
    result = compact_manifest(t, plan)
    assert result.plan is not plan and result.plan.snapshot_id == plan.snapshot_id + 1
    t = reload(t)
    assert t.snapshot_manager.latest_snapshot_id() == plan.snapshot_id + 2
    assert read_rows(t) == rows and len(_manifests(t)) == 1


def test_failed_publish_leaves_the_table_as_it_was(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    files = files_under(table.path)
    real = FileIO.try_write_atomic

    def fail(self: FileIO, path: str, *a: Any, **kw: Any) -> Any:
        if "/snapshot/snapshot-" in path:
            raise OSError("disk full")
        return real(self, path, *a, **kw)

    monkeypatch.setattr(FileIO, "try_write_atomic", fail)
    with pytest.raises(OSError, match="disk full"):
        compact_manifest(table)
    assert files_under(table.path) == files  # the manifests it wrote are gone again


def test_expire_and_orphan_clean_after_compaction_keep_every_live_file(table: Any) -> None:
    """The old manifests go with expiration; the data files stay (no delta releases them)."""
    from paimon_cli.core.api import Warehouse
    from tests.core.test_rollback import no_orphans

    rows, live = read_rows(table), _live(table)
    compact_manifest(table)
    wh = str(Path(table.path).parent.parent)
    Warehouse(wh).table("db.t").expire(retain_max=1, retain_min=1, older_than="0s")
    t = reload(table)
    assert t.snapshot_manager.snapshot_ids() == [t.snapshot_manager.latest_snapshot_id()]
    assert _live(t) == live and read_rows(t) == rows and no_orphans(t) == []
