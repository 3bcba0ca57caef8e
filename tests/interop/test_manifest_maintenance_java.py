"""compact-manifest, remove-unexisting-files and repair on Java Paimon 0.9 tables, read back by Java.

Why: these commands rewrite what Java reads first (manifests, manifest lists, snapshot hints).
Each test works on a copy of the session's Java-written warehouse and asserts what Java 0.9
reads afterwards against the rows the fixture modelled (not against our own reader):

* compact-manifest: fewer manifests, same rows at the latest snapshot, older snapshots and
  tags untouched, Java keeps writing on top;
* remove-unexisting-files: a data file deleted by hand makes Java's read fail; after the
  command Java reads exactly the other rows, and the dry run listed exactly that entry;
* repair: a LATEST hint past the last snapshot (Java fails) and a stale LATEST below a
  snapshot gap (Java silently reads an old snapshot) are fixed, the gap only with --earliest.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.errors import UnsafeRefused
from paimon_cli.core.mergetree.file_writer import partition_dir_of
from paimon_cli.core.operation.scan import FileStoreScan

from .conftest import JavaTables, sort_rows
from .java_harness import JavaPaimon, JavaPaimonError

pytestmark = pytest.mark.java


def _copy(java_tables: JavaTables, tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    shutil.copytree(java_tables.warehouse, wh)
    return wh


def _manifests(wh: str, ident: str) -> int:
    t = FileSystemCatalog(wh).get_table(ident)
    return len(FileStoreScan(t).data_manifests(t.snapshot_manager.latest_snapshot()))


def _java_rows(jp: JavaPaimon, wh: str, name: str, **kw: Any) -> list[dict[str, Any]]:
    return sort_rows(jp.read(wh, "db", name, row_kind=False, **kw))


@pytest.mark.parametrize("name", ["pk_part", "append_t", "dv_t", "dyn_t"])
def test_compact_manifest_java_reads(java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path: Path,
                                     name: str) -> None:
    jp, t = java_paimon, java_tables[name]
    wh = _copy(java_tables, tmp_path)
    before = _manifests(wh, t.identifier)
    latest = FileSystemCatalog(wh).get_table(t.identifier).snapshot_manager.latest_snapshot_id()
    older = {sid: _java_rows(jp, wh, name, snapshot_id=sid) for sid in t.expected if sid != latest}

    report = Warehouse(wh).table(t.identifier).compact_manifest()
    assert report.snapshot_id == latest + 1
    after = _manifests(wh, t.identifier)
    assert after < before and after == report.result.manifests_after  # type: ignore[union-attr]
    assert _java_rows(jp, wh, name) == t.latest_expected
    for sid, rows in older.items():
        assert _java_rows(jp, wh, name, snapshot_id=sid) == rows
    snaps = jp.system_table(wh, "db", name, "snapshots")
    kinds = [r[snaps["columns"].index("commit_kind")] for r in snaps["rows"]]
    assert kinds[-1] == "COMPACT" and kinds[:-1] == t.snapshot_kinds
    # a second run has nothing left to do
    assert Warehouse(wh).table(t.identifier).compact_manifest().snapshot_id is None
    # and Java keeps writing on top of the compacted manifests
    row = dict(t.latest_expected[0])
    jp.write(wh, "db", name, [row])
    got = _java_rows(jp, wh, name)
    assert len(got) == len(t.latest_expected) + (0 if t.primary_keys else 1)


def test_remove_unexisting_files_java_reads(java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path: Path) -> None:
    jp, t = java_paimon, java_tables.append_t
    wh = _copy(java_tables, tmp_path)
    table = Warehouse(wh).table(t.identifier)
    core = table.open()
    live = FileStoreScan(core).plan(core.snapshot_manager.latest_snapshot())
    victim = max(live, key=lambda e: e.file.row_count)
    part = partition_dir_of(core.schema, victim.partition)
    path = Path(core.path, part, "bucket-0", victim.file.file_name)
    lost = pq.read_table(path).to_pylist()
    assert len(lost) == victim.file.row_count
    path.unlink()
    with pytest.raises(JavaPaimonError, match="FileNotFound|No such file|does not exist"):
        jp.read(wh, "db", t.name)

    dry = table.remove_unexisting_files(dry_run=True)
    assert [r["path"] for r in dry.rows().rows] == [f"{part}/bucket-0/{victim.file.file_name}"]
    assert dry.snapshot_id is None and path.parent.exists()
    report = table.remove_unexisting_files()
    assert report.rows().rows == dry.rows().rows
    expected = Counter(map(_key, t.latest_expected)) - Counter(map(_key, _as_java(lost)))
    got = _java_rows(jp, wh, t.name)
    assert Counter(map(_key, got)) == expected and len(got) == len(t.latest_expected) - len(lost)
    snaps = jp.system_table(wh, "db", t.name, "snapshots")
    assert snaps["rows"][-1][snaps["columns"].index("commit_kind")] == "OVERWRITE"
    # nothing else is missing now
    assert table.remove_unexisting_files(dry_run=True).rows().rows == []


def _as_java(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Parquet rows as the Java harness renders them (timestamps naive, as written)."""
    return [{k: (v.replace(tzinfo=None) if hasattr(v, "tzinfo") and v is not None else v) for k, v in r.items()}
            for r in rows]


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((k, str(v)) for k, v in r.items()))


def test_remove_unexisting_files_unreadable_manifest_refuses(java_tables: JavaTables, tmp_path: Path) -> None:
    wh = _copy(java_tables, tmp_path)
    table = Warehouse(wh).table("db.pk_part")
    core = table.open()
    snap = core.snapshot_manager.latest_snapshot()
    manifest = FileStoreScan(core).data_manifests(snap)[0].file_name
    Path(core.path, "manifest", manifest).write_bytes(b"garbage")
    with pytest.raises(UnsafeRefused, match="cannot read the manifests"):
        table.remove_unexisting_files(dry_run=True)
    with pytest.raises(UnsafeRefused):
        table.remove_unexisting_files()
    assert core.snapshot_manager.latest_snapshot_id() == snap.id


def test_repair_latest_hint_java_reads(java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path: Path) -> None:
    jp, t = java_paimon, java_tables.pk_part
    wh = _copy(java_tables, tmp_path)
    snap_dir = Path(t.path.replace(java_tables.warehouse, wh), "snapshot")
    (snap_dir / "LATEST").write_text("99")  # Java trusts it: snapshot-100 does not exist
    with pytest.raises(JavaPaimonError):
        jp.read(wh, "db", t.name)
    report = Warehouse(wh).table(t.identifier).repair()
    assert [(r["hint"], r["action"]) for r in report.rows().rows] == [("EARLIEST", "keep"), ("LATEST", "write")]
    assert _java_rows(jp, wh, t.name) == t.latest_expected


def test_repair_snapshot_gap_java_reads(java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path: Path) -> None:
    """Snapshot 5 lost and LATEST stale at 4: Java reads snapshot 4 as the latest, silently."""
    jp, t = java_paimon, java_tables.pk_part
    wh = _copy(java_tables, tmp_path)
    snap_dir = Path(t.path.replace(java_tables.warehouse, wh), "snapshot")
    latest = max(int(p.name.split("-")[1]) for p in snap_dir.glob("snapshot-*"))
    (snap_dir / f"snapshot-{latest - 1}").unlink()
    (snap_dir / "LATEST").write_text(str(latest - 2))
    stale = _java_rows(jp, wh, t.name)
    assert stale != t.latest_expected
    table = Warehouse(wh).table(t.identifier)
    with pytest.raises(UnsafeRefused, match=f"--earliest {latest}"):
        table.repair()
    assert (snap_dir / "LATEST").read_text() == str(latest - 2)  # refused: nothing changed
    report = table.repair(earliest=latest)
    assert {r["hint"]: r["repaired"] for r in report.rows().rows} == {"EARLIEST": latest, "LATEST": latest}
    assert _java_rows(jp, wh, t.name) == t.latest_expected
    jp.write(wh, "db", t.name, [dict(t.latest_expected[0])])  # and Java commits on top of it
    assert (snap_dir / "LATEST").read_text() == str(latest + 1)


def test_remove_unexisting_files_deletion_vector_table(java_paimon: JavaPaimon, java_tables: JavaTables,
                                                       tmp_path: Path) -> None:
    """The lost file's deletion vector goes with it (Java leaves it in the index); Java reads the
    rest, and compaction goes on."""
    from paimon_cli.core.compact.job import compact_table
    from paimon_cli.core.operation.read import TableRead

    jp, t = java_paimon, java_tables.dv_t
    wh = _copy(java_tables, tmp_path)
    table = Warehouse(wh).table(t.identifier)
    core = table.open()
    snap = core.snapshot_manager.latest_snapshot()
    live = FileStoreScan(core).plan(snap)
    dv_files = {d.data_file_name for ie in FileStoreScan(core).index_entries(snap) for d in ie.index_file.dv_ranges or ()}
    victim = next(e for e in live if e.file.file_name in dv_files)
    Path(core.path, f"bucket-{victim.bucket}", victim.file.file_name).unlink()
    with pytest.raises(JavaPaimonError):
        jp.read(wh, "db", t.name)
    dry = table.remove_unexisting_files(dry_run=True)
    assert [(r["path"], r["deletion_vector"]) for r in dry.rows().rows] == \
        [(f"bucket-{victim.bucket}/{victim.file.file_name}", True)]
    report = table.remove_unexisting_files()
    assert report.rows().rows == dry.rows().rows and "and 1 deletion vectors" in report.notes()[0]
    snap = table.open().snapshot_manager.latest_snapshot()
    index = FileStoreScan(table.open()).index_entries(snap)
    assert victim.file.file_name not in {d.data_file_name for ie in index for d in ie.index_file.dv_ranges or ()}
    java = _java_rows(jp, wh, t.name)
    assert 0 < len(java) < len(t.latest_expected) and all(r in t.latest_expected for r in java)
    assert sort_rows(TableRead(table.open()).to_arrow().to_pylist()) == java
    compact_table(table.open(), full=True, expire=False)
    assert _java_rows(jp, wh, t.name) == java
