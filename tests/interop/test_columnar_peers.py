"""The columnar manifest path on manifests Java Paimon 0.9 and pypaimon 2.1 wrote.

Every manifest of the peers' tables is decoded by polars-avro (the object path's fallback is
disabled, so a peer layout polars-avro mis-decodes cannot hide behind it) and compared field
by field with the fastavro object path; every snapshot's plan equals the object plan
(``merge_entries`` over ``ManifestFile.read``), in order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.manifest import columnar
from paimon_cli.core.manifest.expire_file_entry import merge_entries
from paimon_cli.core.manifest.manifest import ManifestFile
from paimon_cli.core.operation.scan import FileStoreScan

from .conftest import JavaTables
from .pypaimon_fixtures import PyPaimonTables


@pytest.fixture()
def polars_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(raw: bytes, path: str) -> object:
        raise AssertionError(f"{path}: the columnar path fell back to fastavro")

    monkeypatch.setattr(columnar, "_from_records", refuse)
    monkeypatch.setattr(columnar, "_OBJECTS_UP_TO", -1)  # small (even empty) manifests too: polars-avro


def _check_manifests(table_dir: Path) -> int:
    mdir = str(table_dir / "manifest")
    fio = FileIO(mdir)
    names = sorted(p.name for p in (table_dir / "manifest").glob("manifest-*") if not p.name.startswith(
        "manifest-list"))
    for name in names:
        objects = ManifestFile(fio, mdir).read(name)
        assert columnar.entries_from_table(columnar.read_manifest_table(fio, mdir, name)) == objects, name
    return len(names)


def _check_plans(warehouse: str, ident: str) -> int:
    table = FileSystemCatalog(warehouse).get_table(ident)
    scan = FileStoreScan(table)
    mf = ManifestFile(scan.file_io, scan.manifest_dir)
    snapshots = table.snapshot_manager.snapshots()
    for snap in snapshots:
        old = merge_entries([e for m in scan.data_manifests(snap) for e in mf.read(m.file_name)])
        assert scan.plan(snap) == old, (ident, snap.id)
        assert scan.plan_table(snap, columns=["_FILE_NAME"]).column("_FILE_NAME").to_pylist() == [
            e.file.file_name for e in old]
    return len(snapshots)


@pytest.mark.usefixtures("polars_only")
def test_java_09_manifests(java_tables: JavaTables) -> None:
    for name, t in java_tables.tables.items():
        assert _check_manifests(Path(java_tables.warehouse, f"{t.db}.db", name)) > 0, name
        assert _check_plans(java_tables.warehouse, t.identifier) > 0


@pytest.mark.pypaimon
@pytest.mark.usefixtures("polars_only")
def test_pypaimon_21_manifests(pypaimon_tables: PyPaimonTables) -> None:
    for name in (pypaimon_tables.pk_table, pypaimon_tables.append_table):
        assert _check_manifests(Path(pypaimon_tables.warehouse, f"{pypaimon_tables.db}.db", name)) > 0
        assert _check_plans(pypaimon_tables.warehouse, f"{pypaimon_tables.db}.{name}") > 0
