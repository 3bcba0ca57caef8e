"""Row tracking (``row-tracking.enabled``): commit-time numbering, compaction, system columns.

The rules are Java's ``RowTrackingCommitUtils`` (commit) and ``DataFileRecordReader`` (read);
pypaimon 2.1 interop is in tests/interop/test_row_tracking_pypaimon.py.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta, FileKind, FileSource, ManifestEntry
from paimon_cli.core.operation.row_tracking import assign_row_tracking, system_columns
from paimon_cli.core.operation.scan import FileStoreScan

ROW_TRACKING = {"row-tracking.enabled": "true"}
SYSTEM = "_ROW_ID,_SEQUENCE_NUMBER"


def meta(name: str, rows: int, seq: tuple[int, int] = (0, 0), source: int | None = FileSource.APPEND,
         first: int | None = None, write_cols: tuple[str, ...] | None = None) -> DataFileMeta:
    return DataFileMeta(
        file_name=name, file_size=10, row_count=rows, min_key=binary_row.EMPTY_ROW, max_key=binary_row.EMPTY_ROW,
        key_stats=EMPTY_STATS, value_stats=EMPTY_STATS, min_sequence_number=seq[0], max_sequence_number=seq[1],
        schema_id=0, level=0, file_source=source, first_row_id=first, write_cols=write_cols,
    )


def entry(f: DataFileMeta, partition: bytes = b"p1", kind: FileKind = FileKind.ADD) -> ManifestEntry:
    return ManifestEntry(kind, partition, 0, -1, f)


# ---------------------------------------------------------------------------- commit rules


def test_assign_sequence_numbers_and_first_row_ids() -> None:
    entries = [
        entry(meta("a.parquet", 3)),  # new write: seq 0..0
        entry(meta("b.parquet", 4, seq=(5, 0))),  # some rows without a stored seq
        entry(meta("c.parquet", 2, seq=(3, 9), source=FileSource.COMPACT)),  # compaction output
        entry(meta("d.parquet", 5, seq=(2, 6))),  # a rolled file of a Java writer: keeps its seq
        entry(meta("e.parquet", 2, first=40)),  # already numbered
        entry(meta("f.parquet", 2, write_cols=("id", "_ROW_ID"))),  # stores its ids
    ]
    got = assign_row_tracking(7, 100, entries, group_by_partition=False)
    files = {e.file.file_name: e.file for e in got.entries}
    assert [(f.min_sequence_number, f.max_sequence_number) for f in files.values()] == [
        (7, 7), (5, 7), (3, 9), (2, 6), (7, 7), (7, 7)]
    assert [f.first_row_id for f in files.values()] == [100, 103, None, 107, 40, None]
    assert got.next_row_id == 112


def test_assign_groups_by_partition_and_numbers_blob_files() -> None:
    entries = [
        entry(meta("a.parquet", 3), b"p1"),
        entry(meta("b.parquet", 3), b"p2"),
        entry(meta("a-0.blob", 2, write_cols=("pic",)), b"p2"),
        entry(meta("a-1.blob", 1, write_cols=("pic",)), b"p2"),
        entry(meta("c.parquet", 4), b"p1"),
    ]
    grouped = assign_row_tracking(1, 0, entries)
    assert [(e.file.file_name, e.file.first_row_id) for e in grouped.entries] == [
        ("a.parquet", 0), ("c.parquet", 3), ("b.parquet", 7), ("a-0.blob", 7), ("a-1.blob", 9)]
    assert grouped.next_row_id == 10
    in_order = assign_row_tracking(1, 0, entries, group_by_partition=False)
    assert [e.file.first_row_id for e in in_order.entries] == [0, 3, 3, 5, 6]


def test_assign_requires_file_source() -> None:
    with pytest.raises(InvalidInput, match="_FILE_SOURCE"):
        assign_row_tracking(1, 0, [entry(meta("a.parquet", 1, source=None))])


def test_system_columns_prefer_stored_values() -> None:
    f = meta("a.parquet", 4, seq=(3, 8), first=20)
    t = pa.table({"x": [1, 2, 3]})
    cols = system_columns(f, t, 1, ["_ROW_ID", "_SEQUENCE_NUMBER"])
    assert cols["_ROW_ID"].to_pylist() == [21, 22, 23]
    assert cols["_SEQUENCE_NUMBER"].to_pylist() == [8, 8, 8]
    stored = pa.table({"_ROW_ID": pa.array([5, None, 9], pa.int64()), "_SEQUENCE_NUMBER": [4, 4, 4]})
    cols = system_columns(dataclasses.replace(f, first_row_id=None), stored, 0, ["_ROW_ID", "_SEQUENCE_NUMBER"])
    assert cols["_ROW_ID"].to_pylist() == [5, None, 9]
    assert cols["_SEQUENCE_NUMBER"].to_pylist() == [4, 4, 4]


# ---------------------------------------------------------------------------- tables we write


def data(ids: list[int], dt_: str) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt_] * len(ids), "v": [f"v{i}" for i in ids]})


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return Warehouse(str(tmp_path / "wh"))


def rows(t: Any, where: str | None = None, cols: str = "id,dt,_ROW_ID,_SEQUENCE_NUMBER") -> list[dict[str, Any]]:
    return sorted(t.read(cols, where=where).to_pylist(), key=lambda r: (r.get("id", 0), r.get("_ROW_ID")))


def live(wh: Warehouse, name: str) -> list[DataFileMeta]:
    table = FileSystemCatalog(wh.path).get_table(name)
    return [e.file for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())]


def test_write_compact_rewrite_keep_row_ids(wh: Warehouse) -> None:
    t = wh.create_table("db.t", "id BIGINT, dt STRING, v STRING", partition_by="dt", options=ROW_TRACKING)
    t.write(data([1, 2, 3], "a"))
    t.write(pa.concat_tables([data([4, 5], "a"), data([6], "b")]))
    t.write(data([7, 8], "b"))
    before = rows(t)
    assert [(r["id"], r["_ROW_ID"], r["_SEQUENCE_NUMBER"]) for r in before] == [
        (1, 0, 1), (2, 1, 1), (3, 2, 1), (4, 3, 2), (5, 4, 2), (6, 5, 2), (7, 6, 3), (8, 7, 3)]
    assert wh.table("db.t").open().snapshot_manager.latest_snapshot().next_row_id == 8

    t.compact(full=True)
    files = live(wh, "db.t")
    assert all(f.file_source == FileSource.COMPACT for f in files)
    assert all(f.write_cols == ("id", "dt", "v", "_ROW_ID", "_SEQUENCE_NUMBER") for f in files)
    # partition a holds ids 0..4, b 5..7: contiguous once the inputs are taken in id order
    assert sorted(f.first_row_id for f in files) == [0, 5]
    assert {(f.min_sequence_number, f.max_sequence_number) for f in files} == {(1, 2), (2, 3)}
    assert rows(t) == before
    table = wh.table("db.t").open()
    assert table.snapshot_manager.latest_snapshot().next_row_id == 8
    part_a = [f for f in files if f.first_row_id == 0][0]
    stored = pq.read_table(Path(table.path, "dt=a", "bucket-0", part_a.file_name))
    assert stored.column_names == ["id", "dt", "v", "_ROW_ID", "_SEQUENCE_NUMBER"]
    assert stored.column("_ROW_ID").to_pylist() == [0, 1, 2, 3, 4]
    assert stored.column("_SEQUENCE_NUMBER").to_pylist() == [1, 1, 1, 2, 2]
    # stats of the stored system columns decode (inspect reads them over _WRITE_COLS)
    assert sorted(r["record_count"] for r in wh.table("db.t").inspect("files").to_arrow().to_pylist()) == [3, 5]

    t.write(data([9], "a"))  # new ids continue after nextRowId
    assert [r["_ROW_ID"] for r in rows(t) if r["id"] == 9] == [8]
    t.compact(full=True)  # a: ids 0..4 + 8 -> not contiguous, stored per row only
    assert sorted((f.first_row_id is None, f.row_count) for f in live(wh, "db.t")) == [(False, 3), (True, 6)]
    after = rows(t)
    assert [r for r in after if r["id"] != 9] == before

    wh.table("db.t").alter(set_options={"file-index.bloom-filter.columns": "v"})
    t.rewrite_file_index()
    assert all(f.extra_files or f.embedded_index for f in live(wh, "db.t"))
    assert rows(t) == after


def test_read_where_and_select_only_system_columns(wh: Warehouse) -> None:
    t = wh.create_table("db.t", "id BIGINT, dt STRING, v STRING", options=ROW_TRACKING)
    for i in range(3):
        t.write(data([10 * i, 10 * i + 1], "x"))
    assert rows(t, "_ROW_ID >= 3", SYSTEM) == [
        {"_ROW_ID": 3, "_SEQUENCE_NUMBER": 2}, {"_ROW_ID": 4, "_SEQUENCE_NUMBER": 3},
        {"_ROW_ID": 5, "_SEQUENCE_NUMBER": 3}]
    assert [r["id"] for r in rows(t, "_SEQUENCE_NUMBER = 2 AND id > 10", "id")] == [11]
    schema = t.reader("_ROW_ID,id").to_arrow().schema
    assert schema.names == ["_ROW_ID", "id"] and schema.field("_ROW_ID").type == pa.int64()


def test_system_columns_need_row_tracking(wh: Warehouse) -> None:
    t = wh.create_table("db.plain", "id BIGINT, v STRING")
    t.write(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}))
    with pytest.raises(InvalidInput, match="_ROW_ID"):
        t.read("id,_ROW_ID")
    with pytest.raises(InvalidInput, match="_SEQUENCE_NUMBER"):
        t.read(where="_SEQUENCE_NUMBER > 0")
    # tables without row tracking carry nextRowId forward, as Java 1.3+ writes it
    assert wh.table("db.plain").open().snapshot_manager.latest_snapshot().next_row_id == 0


def test_data_evolution_tables_number_appends_and_read_system_columns(wh: Warehouse) -> None:
    """A data-evolution table is a row-tracking table: plain appends are numbered at commit
    and its merged read exposes the system columns like any row-tracking read."""
    t = wh.create_table("db.de", "id BIGINT, v STRING",
                        options={**ROW_TRACKING, "data-evolution.enabled": "true"})
    t.write(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}))
    t.write(pa.table({"id": pa.array([4, 5], pa.int64()), "v": ["d", "e"]}))
    assert t.open().snapshot_manager.latest_snapshot().next_row_id == 5
    assert t.read("id,_ROW_ID,_SEQUENCE_NUMBER").to_pylist() == [
        {"id": i, "_ROW_ID": i - 1, "_SEQUENCE_NUMBER": 1 if i <= 3 else 2} for i in range(1, 6)]
    assert t.read("v", where="_ROW_ID >= 2 AND _SEQUENCE_NUMBER = 1").to_pylist() == [{"v": "c"}]


def test_data_evolution_without_row_tracking_is_refused(wh: Warehouse) -> None:
    t = wh.create_table("db.de", "id BIGINT", options={"data-evolution.enabled": "true"})
    with pytest.raises(InvalidInput, match="needs row-tracking.enabled"):
        t.write(pa.table({"id": pa.array([1], pa.int64())}))


def test_zero_file_columns_still_count_rows(wh: Warehouse) -> None:
    """Selecting only a column the old files lack (or only system columns) keeps their rows."""
    t = wh.create_table("db.t", "id BIGINT, v STRING")
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "v": ["a", "b"]}))
    t.alter(add_columns=["note STRING"])
    assert t.read("note").to_pylist() == [{"note": None}, {"note": None}]


def test_row_tracking_needs_bucket_unaware_append_table(wh: Warehouse) -> None:
    with pytest.raises(InvalidInput):
        t = wh.create_table("db.pk", "id BIGINT NOT NULL, v STRING", primary_key="id",
                            options={**ROW_TRACKING, "bucket": "2"})
        t.write(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}))



def test_manifest_maintenance_keeps_row_ids_and_next_row_id(wh: Warehouse) -> None:
    """compact-manifest and remove-unexisting-files commit without new files: every kept row
    keeps its id and ``nextRowId`` never goes back (a reused id would alias two rows)."""
    t = wh.create_table("db.t", "id BIGINT, dt STRING, v STRING", partition_by="dt", options=ROW_TRACKING)
    for i in range(3):
        t.write(pa.concat_tables([data([i], "a"), data([10 + i], "b")]))
    before = rows(t)
    assert t.compact_manifest().snapshot_id is not None
    assert rows(t) == before
    table = wh.table("db.t").open()
    assert table.snapshot_manager.latest_snapshot().next_row_id == 6

    gone = next(f for f in live(wh, "db.t") if f.row_count == 1 and f.first_row_id == 1)  # id 10 in dt=b
    Path(table.path, "dt=b", "bucket-0", gone.file_name).unlink()
    t.remove_unexisting_files()
    assert rows(t) == [r for r in before if r["_ROW_ID"] != 1]
    assert wh.table("db.t").open().snapshot_manager.latest_snapshot().next_row_id == 6
    t.write(data([99], "a"))
    assert [r["_ROW_ID"] for r in rows(t) if r["id"] == 99] == [6]
