"""compact-manifest, remove-unexisting-files and repair on tables pypaimon 2.1 wrote, read back by pypaimon.

pypaimon writes its own manifest lists (two extra fields, its record names); after our
manifest compaction, entry removal and hint repair it must read exactly the rows the
fixture modelled, and keep writing on top. Also: a table we write and compact-manifest reads
in pypaimon as in our reader.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.io import paths
from paimon_cli.core.mergetree.file_writer import partition_dir_of
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.pypaimon_fixtures import PyPaimonTables
from tests.interop.pypaimon_peer import PyPaimon

pytestmark = [pytest.mark.pypaimon, pytest.mark.slow]  # each peer call starts an interpreter


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _copy(t: PyPaimonTables, tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    shutil.copytree(t.warehouse, wh)
    return wh


def _manifest_count(wh: str, ident: str) -> int:
    core = Warehouse(wh).table(ident).open()
    return len(FileStoreScan(core).data_manifests(core.snapshot_manager.latest_snapshot()))


@pytest.mark.parametrize("which", ["pk", "append"])
def test_pypaimon_reads_after_compact_manifest(pypaimon: PyPaimon, pypaimon_tables: PyPaimonTables,
                                               tmp_path: Path, which: str) -> None:
    t = pypaimon_tables
    wh = _copy(t, tmp_path)
    name, expected = (t.pk_table, t.pk_rows()) if which == "pk" else (t.append_table, t.append_rows())
    ident = f"{t.db}.{name}"
    before = _manifest_count(wh, ident)
    report = Warehouse(wh).table(ident).compact_manifest()
    assert report.snapshot_id is not None and _manifest_count(wh, ident) < before
    assert canon(pypaimon.read(wh, t.db, name)) == canon(expected)
    # pypaimon commits on top of the compacted manifests
    row = dict(expected[0], id=1000)
    pypaimon.write(wh, t.db, name, [row])
    assert canon(pypaimon.read(wh, t.db, name)) == canon([*expected, row])


def test_pypaimon_reads_after_remove_unexisting_files(pypaimon: PyPaimon, pypaimon_tables: PyPaimonTables,
                                                      tmp_path: Path) -> None:
    t = pypaimon_tables
    wh = _copy(t, tmp_path)
    ident = f"{t.db}.{t.append_table}"
    table = Warehouse(wh).table(ident)
    core = table.open()
    live = FileStoreScan(core).plan(core.snapshot_manager.latest_snapshot())
    victim = min(live, key=lambda e: e.file.row_count)
    path = Path(paths.data_file_path(core.path, partition_dir_of(core.schema, victim.partition), victim.bucket,
                                     victim.file.file_name, victim.file.external_path))
    lost_ids = set(pq.read_table(path).column("id").to_pylist())
    path.unlink()
    with pytest.raises(Exception, match="(?i)no such file|not found|does not exist"):
        pypaimon.read(wh, t.db, t.append_table)
    dry = table.remove_unexisting_files(dry_run=True)
    assert [r["path"] for r in dry.rows().rows] == [str(path.relative_to(core.path))]
    report = table.remove_unexisting_files()
    assert report.snapshot_id is not None
    expected = [r for r in t.append_rows() if r["id"] not in lost_ids]
    assert lost_ids and len(expected) == len(t.append_rows()) - victim.file.row_count
    assert canon(pypaimon.read(wh, t.db, t.append_table)) == canon(expected)


def test_pypaimon_reads_after_repair(pypaimon: PyPaimon, pypaimon_tables: PyPaimonTables, tmp_path: Path) -> None:
    t = pypaimon_tables
    wh = _copy(t, tmp_path)
    snap_dir = Path(wh, f"{t.db}.db", t.pk_table, "snapshot")
    (snap_dir / "LATEST").write_text("99")
    (snap_dir / "EARLIEST").unlink(missing_ok=True)
    report = Warehouse(wh).table(f"{t.db}.{t.pk_table}").repair()
    assert {r["hint"]: r["action"] for r in report.rows().rows} == {"EARLIEST": "write", "LATEST": "write"}
    assert (snap_dir / "LATEST").read_text() == str(t.pk_snapshot_ids[-1])
    assert canon(pypaimon.read(wh, t.db, t.pk_table)) == canon(t.pk_rows())


def test_pypaimon_reads_our_compacted_manifests(pypaimon: PyPaimon, tmp_path: Path) -> None:
    from tests.core.test_orphans_support import make_table, reload, write_rows

    t = make_table(tmp_path / "wh", pk=True)
    for i in range(5):
        write_rows(t, [(i, "a", f"a{i}"), (i + 10, "b", f"b{i}"), (1, "c", f"c{i}")], tmp_path)
    t = reload(t)
    ours = TableRead(t).to_arrow().to_pylist()
    assert Warehouse(str(tmp_path / "wh")).table("db.t").compact_manifest().snapshot_id == 6
    assert canon(pypaimon.read(str(tmp_path / "wh"), "db", "t")) == canon(ours)


def test_postponed_files_are_checked_and_compacted(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """bucket = -2: a lost postponed file is dropped too (Java's batch scan would not see it);
    compact-manifest keeps the postponed entries (bucket -2 sorts first)."""
    wh = str(tmp_path / "wh")
    cols = [("id", "int64"), ("dt", "string"), ("name", "string")]
    pypaimon.create_table(wh, "peer", "post", cols, primary_keys=["dt", "id"], partition_keys=["dt"],
                          options={"bucket": "-2"})
    pypaimon.write(wh, "peer", "post", [{"id": i, "dt": "a", "name": f"p{i}"} for i in range(3)])
    pypaimon.write(wh, "peer", "post", [{"id": 9, "dt": "b", "name": "p9"}])
    pypaimon.write(wh, "peer", "post", [{"id": 1, "dt": "a", "name": "fixed"}], postpone_fixed_bucket=True)
    table = Warehouse(wh).table("peer.post")
    core = table.open()
    live = FileStoreScan(core).plan(core.snapshot_manager.latest_snapshot())
    postponed = [e for e in live if e.bucket == -2]
    assert len(postponed) == 2
    victim = next(e for e in postponed if partition_dir_of(core.schema, e.partition) == "dt=b")
    path = Path(core.path, "dt=b", "bucket-postpone", victim.file.file_name)
    path.unlink()
    dry = table.remove_unexisting_files(dry_run=True)
    assert [(r["path"], r["bucket"]) for r in dry.rows().rows] == [(f"dt=b/bucket-postpone/{path.name}", -2)]
    assert table.remove_unexisting_files().snapshot_id is not None
    after = FileStoreScan(core).plan(core.snapshot_manager.latest_snapshot())
    assert {e.identifier() for e in after} == {e.identifier() for e in live} - {victim.identifier()}
    assert table.compact_manifest().snapshot_id is not None
    core = table.open()
    assert {e.identifier() for e in FileStoreScan(core).plan(core.snapshot_manager.latest_snapshot())} == \
        {e.identifier() for e in after}
    assert canon(pypaimon.read(wh, "peer", "post")) == canon([{"id": 1, "dt": "a", "name": "fixed"}])
