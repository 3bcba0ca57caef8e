"""A data-evolution row range read batch by batch (``merged_range_batches``): the same rows in
the same order as the whole-range read (``merged_range``), never more than a batch at a time,
on normal, evolved (added / renamed columns, partial-column files), deletion-vector and BLOB
tables; and the compaction writer receives the range batch by batch."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from paimon_cli.core.api import Table, Warehouse
from paimon_cli.core.compact import data_evolution as de_compact
from paimon_cli.core.format.arrow_schema import ROW_ID, SEQUENCE_NUMBER
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.index.deletion_vectors import DeletionVector
from paimon_cli.core.manifest.entry_decoder import EntryDecoder
from paimon_cli.core.mergetree.compact_unit import DATA_EVOLUTION, CompactUnit
from paimon_cli.core.mergetree.file_writer import RollingFileWriter
from paimon_cli.core.operation import data_evolution_read
from paimon_cli.core.operation.data_evolution import row_range_groups
from paimon_cli.core.operation.data_evolution_read import DataEvolutionSplitRead
from paimon_cli.core.operation.read_plan import Split
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.split_read import drop_deleted
from paimon_cli.core.table.file_store_table import FileStoreTable

DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true", "bucket": "-1"}
SYSTEM = (ROW_ID, SEQUENCE_NUMBER)


def _ids(lo: int, hi: int) -> pa.Array:
    return pa.array(range(lo, hi), pa.int64())


def _ranges(t: Table) -> tuple[FileStoreTable, list[tuple[Split, list]]]:
    ft = t.warehouse.catalog.get_table(t.identifier)
    files = [e.file for e in FileStoreScan(ft).plan(ft.snapshot_manager.latest_snapshot())]
    dec = EntryDecoder(ft)
    split = Split(b"", dec.partition_values(b""), 0, files)
    return ft, [(split, g) for g in row_range_groups(files)]


def _check_batches_equal_whole(t: Table, batch_rows: int, dv: DeletionVector | None = None) -> int:
    """Every range of ``t``: batches of at most ``batch_rows`` rows (before ``dv``), together
    exactly the whole-range rows; returns how many batches were read."""
    ft, ranges = _ranges(t)
    reader = DataEvolutionSplitRead(ft, ft.schema.field_names, None)
    target = list(ft.schema.fields)
    count = 0
    for split, group in ranges:
        whole = reader.merged_range(split, group, target, SYSTEM)
        batches = list(reader.merged_range_batches(split, group, target, SYSTEM, batch_rows=batch_rows))
        assert [b.num_rows for b in batches] == [min(batch_rows, whole.num_rows - s)
                                                 for s in range(0, whole.num_rows, batch_rows)]
        assert pa.concat_tables(batches).equals(whole)
        if dv is not None:
            kept = list(reader.merged_range_batches(split, group, target, SYSTEM, dv, batch_rows=batch_rows))
            assert pa.concat_tables(kept).equals(drop_deleted(whole, dv, 0))
            assert pa.concat_tables(kept).num_rows == whole.num_rows - len(dv.bitmap)
        count += len(batches)
    return count


def test_normal_range_is_read_in_batches_equal_to_the_whole_range(tmp_path: Path) -> None:
    t = Warehouse(str(tmp_path / "wh")).create_table("db.t", "id BIGINT, v STRING", options=DE)
    t.write(pa.table({"id": _ids(0, 10), "v": [f"v{i}" for i in range(10)]}))
    t.write(pa.table({"id": _ids(10, 13), "v": ["x", None, "z"]}))
    assert _check_batches_equal_whole(t, 3) == 4 + 1
    assert _check_batches_equal_whole(t, 100) == 2  # one batch per range: the whole range


def test_evolved_range_with_partial_files_added_and_renamed_columns(tmp_path: Path) -> None:
    t = Warehouse(str(tmp_path / "wh")).create_table("db.t", "id BIGINT, v STRING, n INT", options=DE)
    t.write(pa.table({"id": _ids(0, 11), "v": [f"v{i}" for i in range(11)], "n": pa.array(range(11), pa.int32())}))
    t.write(pa.table({"_ROW_ID": _ids(2, 9), "v": [f"new{i}" for i in range(7)]}), columns=["v"])
    t.alter(add_columns="c STRING", rename_columns={"v": "w"})
    t.write(pa.table({"_ROW_ID": pa.array([0, 5, 10], pa.int64()), "c": ["c0", "c5", "c10"]}), columns=["c"])
    t.write(pa.table({"_ROW_ID": pa.array([1, 4], pa.int64()), "w": ["w1", "w4"]}), columns=["w"])
    rows = t.read("id,w,n,c,_ROW_ID").to_pylist()
    assert [r["w"] for r in rows[:6]] == ["v0", "w1", "new0", "new1", "w4", "new3"]
    assert [r["c"] for r in rows if r["c"]] == ["c0", "c5", "c10"]
    assert _check_batches_equal_whole(t, 4) == 3
    assert _check_batches_equal_whole(t, 1) == 11


def test_deletion_vector_is_applied_per_batch(tmp_path: Path) -> None:
    t = Warehouse(str(tmp_path / "wh")).create_table("db.t", "id BIGINT, v STRING", options=DE)
    t.write(pa.table({"id": _ids(0, 10), "v": [f"v{i}" for i in range(10)]}))
    t.write(pa.table({"_ROW_ID": _ids(3, 6), "v": ["a", "b", "c"]}), columns=["v"])
    dv = DeletionVector.from_positions([0, 3, 4, 5, 9])  # batch 3..5 loses every row
    assert _check_batches_equal_whole(t, 3, dv) == 4


def test_blob_range_is_read_in_batches_across_its_blob_files(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    t = Warehouse(str(tmp_path / "wh")).create_table("db.b", "id BIGINT, pic BLOB, v STRING",
                                                     options={**DE, "blob.target-file-size": "100 b"})
    pics = [bytes([i]) * (10 + 7 * i) if i % 4 else None for i in range(9)]
    t.write(pa.table({"id": _ids(0, 9), "pic": pa.array(pics, pa.large_binary()), "v": list("abcdefghi")}))
    t.write(pa.table({"_ROW_ID": _ids(2, 5), "pic": pa.array([b"x" * 30, None, b"y"], pa.large_binary())}),
            columns=["pic"])
    _, ranges = _ranges(t)
    assert len([m for m in ranges[0][1] if m.file_name.endswith(".blob")]) > 2
    assert _check_batches_equal_whole(t, 2, DeletionVector.from_positions([1, 2, 8])) == 5
    # a batch is also cut where its blob bytes pass the budget: a batch per blob value here
    monkeypatch.setattr(data_evolution_read, "BLOB_BATCH_BYTES", 1)
    ft, [(split, group)] = _ranges(t)
    reader = DataEvolutionSplitRead(ft, ft.schema.field_names, None)
    target = list(ft.schema.fields)
    batches = list(reader.merged_range_batches(split, group, target, SYSTEM, batch_rows=100))
    assert pa.concat_tables(batches).equals(reader.merged_range(split, group, target, SYSTEM))
    assert all(b.column("pic").null_count >= b.num_rows - 1 for b in batches)
    assert len(batches) >= 6


def test_compaction_writer_receives_the_range_batch_by_batch(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    """A range larger than the batch reaches the writer in several bounded writes."""
    t = Warehouse(str(tmp_path / "wh")).create_table("db.t", "id BIGINT, v STRING", options=DE)
    t.write(pa.table({"id": _ids(0, 20), "v": [f"v{i}" for i in range(20)]}))
    t.write(pa.table({"_ROW_ID": _ids(5, 8), "v": ["a", "b", "c"]}), columns=["v"])
    before = t.read("id,v,_ROW_ID").to_pylist()
    ft = t.warehouse.catalog.get_table(t.identifier)
    entries = list(FileStoreScan(ft).plan(ft.snapshot_manager.latest_snapshot()))
    e = entries[0]
    unit = CompactUnit(DATA_EVOLUTION, e.partition, e.bucket, e.total_buckets, tuple(x.file for x in entries))
    writes: list[int] = []
    real = RollingFileWriter.write

    def write(self: RollingFileWriter, table: pa.Table) -> None:
        writes.append(table.num_rows)
        real(self, table)

    monkeypatch.setattr(RollingFileWriter, "write", write)
    monkeypatch.setattr(data_evolution_read, "BATCH_ROWS", 6)
    result = de_compact.run_data_evolution_unit(ft, unit)
    assert writes == [6, 6, 6, 2]
    assert result.after[0].row_count == 20
    (path,) = result.written
    out = read_data_file(ft.file_io, path, list(ft.schema.fields), ["id", "v"]).to_pylist()
    assert out == [{"id": r["id"], "v": r["v"]} for r in before]


def test_stored_system_columns_are_read_batch_by_batch(tmp_path: Path) -> None:
    """A compacted row-tracking file stores ``_ROW_ID`` / ``_SEQUENCE_NUMBER``; the stored
    values (not the file's max sequence number) come through every batch."""
    t = Warehouse(str(tmp_path / "wh")).create_table("db.t", "id BIGINT, v STRING",
                                                     options={"row-tracking.enabled": "true", "bucket": "-1"})
    t.write(pa.table({"id": _ids(0, 5), "v": list("abcde")}))
    t.write(pa.table({"id": _ids(5, 9), "v": list("fghi")}))
    t.compact(full=True)
    ft, [(split, group)] = _ranges(t)
    assert "_SEQUENCE_NUMBER" in (group[0].write_cols or ())
    assert _check_batches_equal_whole(t, 2) == 5
    reader = DataEvolutionSplitRead(ft, ft.schema.field_names, None)
    batches = reader.merged_range_batches(split, group, list(ft.schema.fields), SYSTEM, batch_rows=2)
    assert pa.concat_tables(batches).column(SEQUENCE_NUMBER).to_pylist() == [1] * 5 + [2] * 4


def test_update_by_row_id_overlays_a_range_batch_by_batch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``write --columns`` reads the range it rewrites in batches; each batch gets the updates
    of its own rows, none shifted across a batch edge."""
    t = Warehouse(str(tmp_path / "wh")).create_table("db.t", "id BIGINT, v STRING", options=DE)
    t.write(pa.table({"id": _ids(0, 10), "v": [f"v{i}" for i in range(10)]}))
    monkeypatch.setattr(data_evolution_read, "BATCH_ROWS", 3)
    t.write(pa.table({"_ROW_ID": pa.array([9, 2, 3, 6], pa.int64()), "v": ["n9", "n2", "n3", "n6"]}), columns=["v"])
    new = {2: "n2", 3: "n3", 6: "n6", 9: "n9"}
    assert t.read("id,v,_ROW_ID").to_pylist() == [{"id": i, "v": new.get(i, f"v{i}"), "_ROW_ID": i} for i in range(10)]
