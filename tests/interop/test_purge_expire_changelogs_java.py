"""purge-files and expire-changelogs on tables Java Paimon 0.9 wrote, read back by Java.

Why: purge-files empties a table with one OVERWRITE commit and then deletes nearly every
file, and expire-changelogs deletes what long-lived changelogs hold; what Java reads (and
writes) afterwards is the acceptance test, not our own reader.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse

from .conftest import JavaTables, sort_rows
from .java_harness import JavaPaimon

pytestmark = pytest.mark.java


def _copy(java_tables: JavaTables, tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    shutil.copytree(java_tables.warehouse, wh)
    return wh


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()}


@pytest.mark.parametrize("name", ["pk_part", "dv_t", "dyn_t", "append_t"])
def test_purge_java_reads_empty_and_writes_again(java_paimon: JavaPaimon, java_tables: JavaTables,
                                                 tmp_path: Path, name: str) -> None:
    """pk_part has a tag, a branch and a consumer; dv_t deletion vectors; dyn_t HASH index
    files; append_t a statistics file."""
    jp, t = java_paimon, java_tables[name]
    wh = _copy(java_tables, tmp_path)
    table = Warehouse(wh).table(t.identifier)
    root = Path(table.open().path)
    before = _files(root)
    dry = table.purge_files(dry_run=True)
    assert _files(root) == before
    report = table.purge_files()
    assert before - _files(root) == {str(Path(f.path).relative_to(root)) for f in dry.plan.files}
    assert jp.read(wh, "db", name, row_kind=False) == []
    snaps = jp.system_table(wh, "db", name, "snapshots")
    assert [r[snaps["columns"].index("snapshot_id")] for r in snaps["rows"]] == [report.result.snapshot_id]  # type: ignore[union-attr]
    assert snaps["rows"][0][snaps["columns"].index("commit_kind")] == "OVERWRITE"
    for kind in ("tags", "branches", "consumers"):
        assert jp.system_table(wh, "db", name, kind)["rows"] == []
    row: dict[str, Any] = dict(t.latest_expected[0])
    jp.write(wh, "db", name, [row])
    assert sort_rows(jp.read(wh, "db", name, row_kind=False)) == [row]


def test_expire_changelogs_java_reads(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Java 0.9 writes and expires after each commit with a decoupled changelog lifecycle
    (expired snapshots become long-lived changelogs); our expire-changelogs removes the
    oldest as Java's procedure would, and Java still reads the retained snapshots and keeps
    writing on top; --delete-all then removes the rest."""
    jp, wh = java_paimon, str(tmp_path / "wh")
    jp.create_table(wh, "db", "cl", [("id", "BIGINT NOT NULL"), ("v", "STRING")], primary_keys=["id"],
                    options={"bucket": "1", "changelog-producer": "input", "snapshot.num-retained.min": "2",
                             "snapshot.num-retained.max": "2", "snapshot.time-retained": "1 ms",
                             "changelog.num-retained.max": "50", "changelog.time-retained": "1 h"})
    rows: dict[int, dict[str, Any]] = {}
    for i in range(6):
        batch = [{"id": i, "v": f"v{i}"}, {"id": 100, "v": f"x{i}"}]
        jp.write(wh, "db", "cl", batch)
        rows.update({r["id"]: r for r in batch})
    expected = sort_rows(list(rows.values()), ("id",))
    table = Warehouse(wh).table("db.cl")
    root = Path(table.open().path)
    cl_dir = root / "changelog"

    def changelogs() -> list[int]:
        return sorted(int(p.name.split("-")[1]) for p in cl_dir.glob("changelog-*"))

    snaps = sorted(int(p.name.split("-")[1]) for p in (root / "snapshot").glob("snapshot-*"))
    held = changelogs()
    assert len(snaps) == 2 and len(held) >= 3 and held[-1] < snaps[0]
    report = table.expire_changelogs(retain_max=snaps[-1] - held[1] + 1)  # keep from the second one
    assert report.result is not None and report.result.expired == 1
    assert changelogs() == held[1:]
    for sid in snaps:
        assert sort_rows(jp.read(wh, "db", "cl", row_kind=False, snapshot_id=sid), ("id",))[0]["id"] == 0
    assert sort_rows(jp.read(wh, "db", "cl", row_kind=False), ("id",)) == expected
    jp.write(wh, "db", "cl", [{"id": 7, "v": "v7"}])
    assert sort_rows(jp.read(wh, "db", "cl", row_kind=False), ("id",)) == sort_rows(
        [*expected, {"id": 7, "v": "v7"}], ("id",))
    table.expire_changelogs(delete_all=True)
    assert list(cl_dir.iterdir()) == []
    jp.write(wh, "db", "cl", [{"id": 8, "v": "v8"}])
    assert len(jp.read(wh, "db", "cl", row_kind=False)) == len(expected) + 2
