"""``inspect files`` on the columnar, streamed path and ``partitions`` / ``buckets`` grouped
with Arrow give exactly the rows (values, typed values and order) the object path gave:
``tests/files_oracle.py`` keeps that path as the oracle. Tables: ours (primary key with compactions, append, deletion vectors, external paths,
postpone bucket, data evolution, time travel) and hand-made manifests with every merge case
(level upgrade, delete then re-add, a DELETE in a later manifest, identifiers that differ
only in extra files). Java 0.9 and pypaimon 2.1 tables: tests/interop/test_inspect_*.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Table, Warehouse
from paimon_cli.core.errors import CorruptMetadata
from paimon_cli.core.manifest.manifest import FileKind, ManifestEntry, ManifestFile, ManifestList
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.system.files_stream import files
from paimon_cli.core.table.file_store_table import FileStoreTable, TimeTravel
from tests.files_oracle import assert_same_files, reference_files

COLUMNS = "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING, n INT"


def data(ids: list[int], dt_: str = "2024-05-01", v: str = "x") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt_] * len(ids), "v": [f"{v}{i}" for i in ids],
                     "n": pa.array(ids, pa.int32())})


def open_table(t: Table) -> FileStoreTable:
    return t.open()


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return Warehouse(str(tmp_path / "wh"))


def test_primary_key_table_through_compactions(wh: Warehouse) -> None:
    """Compactions DELETE files and ADD level upgrades; manifests are merged as commits go on."""
    t = wh.create_table("db.pk", COLUMNS, primary_key="id,dt", partition_by="dt",
                        options={"bucket": "2", "manifest.merge-min-count": "2"})
    for i in range(4):
        t.write(data([1, 2, 3, 10 + i]))
        t.write(data([2, 3, 4 + i], "2024-05-02", "y"))
    t.compact()
    t.write(data([5, 6], "2024-05-03"))
    t.compact(full=True)
    t.write(data([7]))
    rows = assert_same_files(open_table(t))
    assert {r["level"] for r in rows} >= {0, 5}
    for sid in (2, 5, 9):
        assert_same_files(open_table(t), TimeTravel(snapshot_id=sid))


def test_append_dv_external_and_data_evolution_tables(wh: Warehouse, tmp_path: Path) -> None:
    log = wh.create_table("db.log", "id BIGINT, dt STRING, v STRING, n INT", partition_by="dt")
    log.write(data([1, 2]))
    log.write(data([3], "2024-05-02"))
    assert_same_files(open_table(log))
    dv = wh.create_table("db.dv", COLUMNS, primary_key="id,dt", partition_by="dt",
                         options={"bucket": "1", "deletion-vectors.enabled": "true"})
    dv.write(data([1, 2, 3]))
    dv.write(data([2]))
    dv.compact()
    assert_same_files(open_table(dv))
    root = tmp_path / "ext"
    ext = wh.create_table("db.ext", COLUMNS, primary_key="id,dt", partition_by="dt", options={
        "bucket": "1", "data-file.external-paths": f"file://{root}", "data-file.external-paths.strategy": "round-robin"})
    ext.write(data([1, 2]))
    ext.write(data([2, 3]))
    ext.compact(full=True)
    rows = assert_same_files(open_table(ext))
    assert rows and all(str(root) in r["file_path"] for r in rows)
    de = wh.create_table("db.de", "id BIGINT, v STRING, n INT", options={
        "row-tracking.enabled": "true", "data-evolution.enabled": "true"})
    de.write(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"], "n": pa.array([1, 2], pa.int32())}))
    de.write(pa.table({"_ROW_ID": pa.array([0], pa.int64()), "v": ["c"]}), columns="v")
    rows = assert_same_files(open_table(de))
    assert any(r["write_cols"] for r in rows) and any(r["first_row_id"] is not None for r in rows)


def test_postpone_bucket_files_are_left_out(wh: Warehouse) -> None:
    t = wh.create_table("db.pp", COLUMNS, primary_key="id,dt", partition_by="dt",
                        options={"bucket": "-2", "postpone.batch-write-fixed-bucket": "false"})
    t.write(data([1, 2]))
    assert assert_same_files(open_table(t)) == []
    t.compact()
    t.write(data([3]))
    rows = assert_same_files(open_table(t))
    assert rows and all(r["bucket"] >= 0 for r in rows)


def test_empty_table_and_limit(wh: Warehouse) -> None:
    t = wh.create_table("db.e", COLUMNS, primary_key="id,dt", options={"bucket": "1"})
    assert files(open_table(t)).rows == []
    for i in range(3):
        t.write(data([i]))
    assert t.inspect("files", limit=2).rows == reference_files(open_table(t)).rows[:2]
    assert t.inspect_stream("files").brief == t.inspect("files").brief


def _rewrite_history(table: FileStoreTable, manifests: list[list[ManifestEntry]],
                     miscount: bool = False) -> FileStoreTable:
    """A new latest snapshot whose base list is ``manifests`` (in order), delta list empty;
    ``miscount``: the list says no manifest deletes anything."""
    scan = FileStoreScan(table)
    mfile = ManifestFile(table.file_io, scan.manifest_dir, table.schema.logical_partition_type)
    mlist = ManifestList(table.file_io, scan.manifest_dir)
    metas = [mfile.write(es, table.schema.id) for es in manifests]
    if miscount:
        metas = [dataclasses.replace(m, num_deleted_files=0) for m in metas]
    base = mlist.write(metas)
    delta = mlist.write([])
    sm = table.snapshot_manager
    last = sm.latest_snapshot()
    assert last is not None
    snap = dataclasses.replace(last, id=last.id + 1, base_manifest_list=base[0], base_manifest_list_size=base[1],
                               delta_manifest_list=delta[0], delta_manifest_list_size=delta[1])
    table.file_io.write_bytes(sm.snapshot_path(snap.id), snap.to_json().encode())
    sm.commit_latest_hint(snap.id)
    return table


def _live_of(t: Table) -> list[ManifestEntry]:
    table = open_table(t)
    return FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())


def _entry(e: ManifestEntry, kind: FileKind, **f: Any) -> ManifestEntry:
    return dataclasses.replace(e, kind=kind, file=dataclasses.replace(e.file, **f))


def test_a_delete_the_manifest_list_does_not_count_is_refused(wh: Warehouse) -> None:
    """The DELETE pass reads only manifests whose list entry counts deleted files: one that
    hides its DELETEs would list a deleted file as live, so it is corrupt (exit 4)."""
    t = wh.create_table("db.m", COLUMNS, primary_key="id,dt", options={"bucket": "1"})
    t.write(data([1]))
    t.write(data([2]))
    a, b = _live_of(t)
    table = _rewrite_history(open_table(t), [[_entry(a, FileKind.ADD), _entry(b, FileKind.ADD)],
                                             [_entry(a, FileKind.DELETE)]], miscount=True)
    with pytest.raises(CorruptMetadata, match="1 DELETE entries, but its manifest list counts no deleted files"):
        files(table)
    assert reference_files(table).rows  # the object path reads every manifest (and shows b only)


def test_every_merge_case_by_hand(wh: Warehouse) -> None:
    """Level upgrade (DELETE l0 + ADD l5 later), delete then re-add (live at the re-add), a
    DELETE in a later manifest, a DELETE and ADD in one manifest, a DELETE that differs only
    in extra files or external path (cancels nothing), a DELETE of a file never added."""
    t = wh.create_table("db.h", COLUMNS, primary_key="id,dt", partition_by="dt", options={"bucket": "2"})
    t.write(data(list(range(8))))
    t.write(data(list(range(4)), "2024-05-02"))
    table = open_table(t)
    live = FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())
    a, b, c = live[0], live[1], live[2]

    def add(e: ManifestEntry, **f: Any) -> ManifestEntry:
        return dataclasses.replace(e, kind=FileKind.ADD, file=dataclasses.replace(e.file, **f))

    def delete(e: ManifestEntry, **f: Any) -> ManifestEntry:
        return dataclasses.replace(e, kind=FileKind.DELETE, file=dataclasses.replace(e.file, **f))

    a5 = dict(level=5)
    manifests = [
        [add(a), add(b), add(c), add(c, file_name="x-" + c.file.file_name)],
        [delete(a), add(a, **a5), delete(b), delete(c, extra_files=("idx-1.index",)),
         delete(c, file_name="never-added.parquet")],
        [add(b), delete(c, file_name="x-" + c.file.file_name), add(c, file_name="x-" + c.file.file_name),
         delete(c, external_path="file:///elsewhere/f.parquet")],
        [delete(a, **a5), add(a, level=3)],
    ]
    rows = assert_same_files(_rewrite_history(table, manifests))
    names = [(r["file_path"].rsplit("/", 1)[-1], r["level"]) for r in rows]
    assert names == [(c.file.file_name, c.file.level), (b.file.file_name, b.file.level),
                     ("x-" + c.file.file_name, c.file.level), (a.file.file_name, 3)]
