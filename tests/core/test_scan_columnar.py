"""Scan plans on the columnar path equal the object path's (merge, filters, order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import VarCharType
from paimon_cli.core.manifest.expire_file_entry import merge_entries
from paimon_cli.core.manifest.manifest import ManifestEntry, ManifestFile
from paimon_cli.core.operation.scan import FileStoreScan, ScanFilter
from tests.core.test_orphans_support import make_table, reload, write_rows


def _old_plan(scan: FileStoreScan, snapshot: Any, f: ScanFilter | None) -> list[ManifestEntry]:
    """The object plan as it was: every entry, merged, then filtered."""
    mf = ManifestFile(scan.file_io, scan.manifest_dir)
    live = merge_entries([e for m in scan.data_manifests(snapshot) for e in mf.read(m.file_name)])
    return [e for e in live if f is None or (
        (f.bucket is None or e.bucket == f.bucket) and (f.level is None or e.file.level == f.level)
        and (f.partition is None or f.partition(e.partition)))]


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Any:
    wh = tmp_path_factory.mktemp("wh")
    t = make_table(wh)
    for n in range(4):
        write_rows(t, [(i, f"d{i % 3}", f"v{n}") for i in range(n, 40, 3)], wh)
        t = reload(t)
    Warehouse(str(wh)).table("db.t").compact(full=True, partitions="dt=d1")  # DELETE L0 + ADD L5
    t = reload(t)
    write_rows(t, [(i, "d1", "late") for i in range(5)], wh)
    return reload(t)


def _d(name: str) -> bytes:
    return binary_row.serialize([name], [VarCharType(nullable=False)])


FILTERS = [None, ScanFilter(bucket=0), ScanFilter(bucket=1, level=0), ScanFilter(level=5), ScanFilter(level=3),
           ScanFilter(partition=lambda p: p == _d("d1")), ScanFilter(partition=lambda p: p != _d("d1"), bucket=1),
           ScanFilter(bucket=7)]


@pytest.mark.parametrize("f", FILTERS)
def test_plans_equal_the_object_plan(table: Any, f: ScanFilter | None) -> None:
    scan = FileStoreScan(table)
    snapshots = table.snapshot_manager.snapshots()
    assert any(m.num_deleted_files for s in snapshots for m in scan.data_manifests(s))  # a real merge
    for snap in snapshots:
        old = _old_plan(scan, snap, f)
        assert scan.plan(snap, f) == old
        arrow = scan.plan_table(snap, f)
        assert arrow.column("_FILE_NAME").to_pylist() == [e.file.file_name for e in old]
        assert scan.plan_table(snap, f, columns=["_LEVEL", "_BUCKET"]).to_pylist() == [
            {"_LEVEL": e.file.level, "_BUCKET": e.bucket} for e in old]
    assert scan.plan(None, f) == [] and scan.plan_table(None, f).num_rows == 0


def test_manifests_outside_the_filter_are_not_read(table: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    scan = FileStoreScan(table)
    snap = table.snapshot_manager.latest_snapshot()
    metas = scan.data_manifests(snap)
    assert {m.max_level for m in metas} >= {0, 5}
    read: list[str] = []
    real = FileStoreScan.data_manifests

    def spy(self: FileStoreScan, s: Any) -> Any:
        out = real(self, s)
        read.extend(m.file_name for m in out if m.min_level is not None and m.min_level <= 5 <= m.max_level)
        return out

    monkeypatch.setattr(FileStoreScan, "data_manifests", spy)
    from paimon_cli.core.manifest import columnar

    opened: list[str] = []
    original = columnar.manifest_tables_from_bytes
    monkeypatch.setattr(columnar, "manifest_tables_from_bytes",
                        lambda raws, paths: opened.extend(Path(p).name for p in paths) or original(raws, paths))
    scan.plan_table(snap, ScanFilter(level=5))
    assert sorted(opened) == sorted(read) and len(opened) < len(metas)
