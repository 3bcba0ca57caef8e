"""core/operation/unexisting_files.py: Java's remove_unexisting_files, failing closed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from paimon_cli.core.errors import CommitConflict, UnsafeRefused
from paimon_cli.core.io import paths
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.mergetree.file_writer import partition_dir_of
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.unexisting_files import plan_remove_unexisting_files, remove_unexisting_files
from tests.core.test_orphans_support import files_under, make_table, read_rows, reload, write_rows


@pytest.fixture
def table(tmp_path: Path) -> Any:
    """Append table (every row is in exactly one file), 2 partitions, 3 commits."""
    t = make_table(tmp_path / "wh", pk=False)
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    write_rows(t, [(3, "a", "z"), (4, "b", "w")], tmp_path)
    write_rows(t, [(5, "a", "v")], tmp_path)
    return reload(t)


def _live(t: Any) -> list[Any]:
    return FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())


def _path(t: Any, e: Any) -> Path:
    return Path(paths.data_file_path(t.path, partition_dir_of(t.schema, e.partition), e.bucket, e.file.file_name))


def test_nothing_missing_commits_nothing(table: Any) -> None:
    plan = plan_remove_unexisting_files(table)
    assert plan.checked == 5 and plan.missing == []
    assert remove_unexisting_files(table, plan).snapshot_id is None
    assert reload(table).snapshot_manager.latest_snapshot_id() == 3


def test_missing_file_is_dropped(table: Any) -> None:
    victim = next(e for e in _live(table) if e.file.row_count == 1 and partition_dir_of(table.schema, e.partition)
                  == "dt=a")
    rows = read_rows(table)
    path = _path(table, victim)
    lost = [dict(r, dt="a") for r in pq.read_table(path).to_pylist()]
    assert len(lost) == 1 and lost[0] in rows
    path.unlink()
    plan = plan_remove_unexisting_files(table)
    assert [(m.entry.file.file_name, m.partition, m.entry.bucket) for m in plan.missing] == \
        [(victim.file.file_name, "dt=a", victim.bucket)]
    assert plan.rows().rows == [{"path": f"dt=a/bucket-{victim.bucket}/{victim.file.file_name}", "partition": "dt=a",
                                 "bucket": victim.bucket, "level": 0, "rows": 1, "bytes": victim.file.file_size,
                                 "deletion_vector": False}]
    files = files_under(table.path)
    assert files_under(table.path) == files  # planning wrote nothing
    result = remove_unexisting_files(table, plan, after_commit=lambda: ["w"])
    t = reload(table)
    snap = t.snapshot_manager.latest_snapshot()
    assert result.snapshot_id == snap.id == 4 and snap.commit_kind == "OVERWRITE" and result.warnings == ["w"]
    assert snap.total_record_count == 4 and snap.delta_record_count == -1
    assert victim.identifier() not in {e.identifier() for e in _live(t)}
    remaining = read_rows(t)
    assert remaining == [r for r in rows if r not in lost]
    assert plan_remove_unexisting_files(t).missing == []


def test_unreadable_manifest_refuses(table: Any) -> None:
    snap = table.snapshot_manager.latest_snapshot()
    m = FileStoreScan(table).data_manifests(snap)[0].file_name
    (Path(table.path) / "manifest" / m).unlink()
    with pytest.raises(UnsafeRefused, match="cannot read the manifests of snapshot 3"):
        plan_remove_unexisting_files(table)


def test_existence_unknown_refuses(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """A permission error is not "missing" (FileIO.exists would say False)."""
    victim = _live(table)[0]
    real = FileIO.file_size

    def denied(self: FileIO, path: str) -> int:
        if path.endswith(victim.file.file_name):
            raise PermissionError("access denied")
        return real(self, path)

    monkeypatch.setattr(FileIO, "file_size", denied)
    with pytest.raises(UnsafeRefused, match="cannot tell whether .* exists"):
        plan_remove_unexisting_files(table)
    assert reload(table).snapshot_manager.latest_snapshot_id() == 3


def test_concurrent_removal_conflicts(table: Any) -> None:
    victim = _live(table)[0]
    _path(table, victim).unlink()
    plan = plan_remove_unexisting_files(table)
    remove_unexisting_files(table, plan_remove_unexisting_files(table))  # someone else was faster
    with pytest.raises(CommitConflict):
        remove_unexisting_files(reload(table), plan)
    assert reload(table).snapshot_manager.latest_snapshot_id() == 4


def test_failed_publish_leaves_the_table_as_it_was(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    _path(table, _live(table)[0]).unlink()
    plan = plan_remove_unexisting_files(table)
    files = files_under(table.path)
    real = FileIO.try_write_atomic

    def fail(self: FileIO, path: str, *a: Any, **kw: Any) -> Any:
        if "/snapshot/snapshot-" in path:
            raise OSError("disk full")
        return real(self, path, *a, **kw)

    monkeypatch.setattr(FileIO, "try_write_atomic", fail)
    with pytest.raises(OSError, match="disk full"):
        remove_unexisting_files(table, plan)
    assert files_under(table.path) == files
