"""Data-evolution files: row-id range groups, logical row counts (metadata only), maintenance."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_cli.core.api import Table, Warehouse
from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta
from paimon_cli.core.operation.data_evolution import logical_row_count, row_range_groups
from paimon_cli.core.operation.data_evolution_read import anchor_file


def meta(name: str, first: int | None, rows: int, write_cols: tuple[str, ...] | None = None) -> DataFileMeta:
    return DataFileMeta(name, 1, rows, b"", b"", EMPTY_STATS, EMPTY_STATS, 1, 1, 0, 0,
                        first_row_id=first, write_cols=write_cols)


def test_partial_files_join_the_range_they_overlay() -> None:
    base1, base2 = meta("f1", 0, 40), meta("f2", 40, 40)
    part2, part1 = meta("p2", 40, 40, ("b",)), meta("p1", 0, 40, ("b",))
    only_partial = meta("p3", 80, 40, ("a",))  # new rows written as a partial-column file
    groups = row_range_groups([base2, part2, only_partial, base1, part1])
    assert [[f.file_name for f in g] for g in groups] == [["f1", "p1"], ["f2", "p2"], ["p3"]]
    # 280 rows of files, 120 rows of table
    assert logical_row_count([base1, base2, part1, part2, only_partial]) == 120


def test_blob_files_join_their_data_files_range_but_never_anchor_it() -> None:
    data, upd = meta("b-data.parquet", 0, 10, ("id",)), meta("c-upd.parquet", 0, 10, ("id",))
    upd = dataclasses.replace(upd, min_sequence_number=5, max_sequence_number=5)
    blob0, blob1 = meta("a-0.blob", 0, 4, ("pic",)), meta("a-1.blob", 4, 6, ("pic",))
    (group,) = row_range_groups([data, blob0, blob1, upd])
    assert [f.file_name for f in group] == ["b-data.parquet", "a-0.blob", "a-1.blob", "c-upd.parquet"]
    assert logical_row_count(group) == 10
    # Java's DataEvolutionUtils.retrieveAnchorFile: oldest normal file, .blob files skipped
    assert anchor_file(group).file_name == "b-data.parquet"


def test_overlapping_ranges_chain_into_one_group() -> None:
    groups = row_range_groups([meta("a", 0, 10), meta("b", 5, 10), meta("c", 14, 2), meta("d", 16, 1)])
    assert [[f.file_name for f in g] for g in groups] == [["a", "b", "c"], ["d"]]


def test_file_without_first_row_id_is_refused_by_name() -> None:
    with pytest.raises(NotYetSupported, match="_FIRST_ROW_ID"):
        row_range_groups([meta("x", None, 3)])


# ---------------------------------------------------------------------------- maintenance


DE = {"row-tracking.enabled": "true", "data-evolution.enabled": "true"}


def _de_table(tmp_path: Path) -> Table:
    t = Warehouse(str(tmp_path / "wh")).create_table("db.de", "id BIGINT, v STRING", options=DE)
    t.write(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "v": ["a", "b", "c"]}))
    t.write(pa.table({"_ROW_ID": pa.array([1], pa.int64()), "v": ["B"]}), columns=["v"])
    return t


def test_compact_manifest_keeps_the_merged_rows(tmp_path: Path) -> None:
    t = _de_table(tmp_path)
    before = t.read("id,v,_ROW_ID,_SEQUENCE_NUMBER").to_pylist()
    assert before[1] == {"id": 2, "v": "B", "_ROW_ID": 1, "_SEQUENCE_NUMBER": 2}
    report = t.compact_manifest()
    assert report.result is not None and report.result.snapshot_id == 3
    assert t.read("id,v,_ROW_ID,_SEQUENCE_NUMBER").to_pylist() == before


def test_rewrite_file_index_indexes_each_file_over_its_own_columns(tmp_path: Path) -> None:
    """A partial-column file gets indexes only for its ``_WRITE_COLS`` (Java's data-evolution
    reads consult a file's index for those columns only); row ids and rows stay."""
    t = _de_table(tmp_path)
    before = t.read("id,v,_ROW_ID,_SEQUENCE_NUMBER").to_pylist()
    metas = {m.file_name: m for m in _live(t)}
    t.alter(set_options={"file-index.bloom-filter.columns": "id,v"})
    report = t.rewrite_file_index()
    assert report.result.snapshot_id == 3 and len(report.result.changed) == 2
    indexed = {(r["file_path"].rsplit("/", 1)[1], r["column_name"]) for r in t.inspect("file-indexes").rows}
    (base,) = [n for n, m in metas.items() if m.write_cols is None]
    (part,) = [n for n, m in metas.items() if m.write_cols == ("v",)]
    assert indexed == {(base, "id"), (base, "v"), (part, "v")}
    after = {m.file_name: m for m in _live(t)}
    assert all(m.extra_files for m in after.values())  # bloom filters exceed the in-manifest threshold
    assert {n: dataclasses.replace(m, extra_files=()) for n, m in after.items()} == metas
    assert t.read("id,v,_ROW_ID,_SEQUENCE_NUMBER").to_pylist() == before
    assert t.rewrite_file_index().result.snapshot_id is None  # nothing left to change


def _live(t: Table) -> list[DataFileMeta]:
    from paimon_cli.core.operation.scan import FileStoreScan

    table = t.open()
    return [e.file for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())]


def test_remove_unexisting_files_refused_by_name_unchanged(tmp_path: Path) -> None:
    """A lost partial-column file would silently revert column values, not remove rows."""
    t = _de_table(tmp_path)
    files = sorted(p.name for p in (tmp_path / "wh").rglob("*"))
    for dry_run in (True, False):
        with pytest.raises(NotYetSupported, match="remove-unexisting-files: data-evolution"):
            t.remove_unexisting_files(dry_run=dry_run)
    assert sorted(p.name for p in (tmp_path / "wh").rglob("*")) == files
