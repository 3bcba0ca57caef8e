"""Lookup-mode units through compact_task.run_merge_tree_unit (no Java): what a compaction of a
deletion-vector / lookup-changelog / first-row / full-compaction-changelog table commits.

Java agreement is in tests/interop/test_compact_lookup_java.py; here the commit messages,
levels, DV index files and changelog records are checked directly, and our own reader
(which applies DVs and skips level 0 like Java) sees the expected rows.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.format.arrow_schema import key_value_file_fields
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.index.deletion_vectors import read_deletion_vectors
from paimon_cli.core.io.paths import index_dir, join
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX
from paimon_cli.core.mergetree.compact_strategy import pick_unit
from paimon_cli.core.mergetree.compact_task import run_merge_tree_unit
from paimon_cli.core.mergetree.levels import Levels, key_function
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.table_schema import Schema

KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


class T:
    def __init__(self, tmp_path: Path, **options: str) -> None:
        self.cat = FileSystemCatalog(str(tmp_path / "wh"))
        self.cat.create_table("db.t", Schema.of(parse_columns("id INT NOT NULL, v BIGINT"), primary_keys=("id",),
                                                options={"bucket": "1", "write-only": "true", **options}))
        self.results: list[Any] = []

    @property
    def table(self) -> Any:
        return self.cat.get_table("db.t")

    def write(self, ids: list[int], v: int, kinds: list[int] | None = None) -> None:
        from paimon_cli.core.operation.write import TableWrite

        t = self.table
        tw = TableWrite(t)
        tw.write_arrow(pa.table({"id": pa.array(ids, pa.int32()), "v": pa.array([v] * len(ids), pa.int64())}),
                       None if kinds is None else np.array(kinds, np.int8))
        FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")

    def compact(self, full: bool, zero_level0_delete_counts: bool = False) -> Any:
        """One unit compacted and committed; ``zero_level0_delete_counts``: the unit sees its
        level-0 files as pypaimon 2.1 records them (``_DELETE_ROW_COUNT`` 0 whatever they hold)."""
        t = self.table
        snap = t.snapshot_manager.latest_snapshot()
        entries = FileStoreScan(t).plan(snap)
        idx = [e.index_file for e in FileStoreScan(t).index_entries(snap)
               if e.index_file.index_type == DELETION_VECTORS_INDEX]
        levels = Levels([e.file for e in entries], t.options.num_levels,
                        key_function([t.schema.field("id").type.copy(nullable=False)]))
        unit = pick_unit(t.options, levels, full, partition=entries[0].partition, bucket=0, total_buckets=1,
                         index_files=idx, dv_files=[m.data_file_name for f in idx for m in (f.dv_ranges or ())])
        assert unit is not None
        if zero_level0_delete_counts:
            def zero(files: tuple[Any, ...]) -> tuple[Any, ...]:
                return tuple(dataclasses.replace(f, delete_row_count=0) if f.level == 0 else f for f in files)

            unit = dataclasses.replace(unit, files=zero(unit.files), bucket_files=zero(unit.bucket_files))
        res = run_merge_tree_unit(t, unit)
        FileStoreCommit(t).commit([res.commit_message()], "COMPACT")
        self.results.append(res)
        return res

    def rows(self) -> list[tuple[int, int]]:
        return sorted((r["id"], r["v"]) for r in TableRead(self.table).to_arrow().to_pylist())

    def changelog(self, res: Any) -> list[tuple[str, int, int, int]]:
        t = self.table
        out = []
        for f in res.changelog:
            path = join(t.path, "bucket-0", f.file_name)
            for r in read_data_file(t.file_io, path, key_value_file_fields(t.schema)).to_pylist():
                out.append((KINDS[r["_VALUE_KIND"]], r["id"], r["v"], r["_SEQUENCE_NUMBER"]))
        return out

    def dvs(self) -> dict[str, list[int]]:
        t = self.table
        out: dict[str, list[int]] = {}
        for e in FileStoreScan(t).index_entries(t.snapshot_manager.latest_snapshot()):
            f = e.index_file
            if f.index_type == DELETION_VECTORS_INDEX and f.dv_ranges:
                got = read_deletion_vectors(t.file_io, join(index_dir(t.path), f.file_name), f.dv_ranges)
                out.update({n: sorted(d.positions()) for n, d in got.items()})
        return out


def test_dv_lookup_changelog_unit(tmp_path: Path) -> None:
    t = T(tmp_path, **{"deletion-vectors.enabled": "true", "changelog-producer": "lookup",
                                    "compaction.small-file-ratio": "0.0000001"})  # every file "large": upgraded
    t.write(list(range(10)), 1)
    first = t.compact(True)  # lone level-0 file upgraded to level 5: changelog only
    assert [f.level for f in first.after] == [5] and first.before[0].file_name == first.after[0].file_name
    assert [c[0] for c in t.changelog(first)] == ["+I"] * 10
    assert t.rows() == [(i, 1) for i in range(10)]

    t.write([3, 11], 2)  # deleteRowCount 0, dedup, no sequence field: upgraded without rewrite
    res = t.compact(False)
    level4 = res.after[0].file_name
    assert [(f.level, f.file_name) for f in res.after] == [(4, res.before[0].file_name)]
    assert sorted(t.changelog(res)) == [("+I", 11, 2, 11), ("+U", 3, 2, 10), ("-U", 3, 1, 3)]
    level5 = first.after[0].file_name
    assert t.dvs() == {level5: [3]}  # the replaced row stays in the level-5 file, marked
    assert len(res.new_index_files) == 1 and res.deleted_index_files == []
    assert t.rows() == sorted([(i, 1) for i in range(10) if i != 3] + [(3, 2), (11, 2)])

    t.write([4, 11], 3, [3, 0])  # a delete: the file must be rewritten (drop delete)
    res = t.compact(False)  # level 0 alone goes to level 3; 11 is found on level 4, 4 on level 5
    assert res.unit.output_level == 3
    assert sorted(t.changelog(res)) == [("+U", 11, 3, 13), ("-D", 4, 1, 4), ("-U", 11, 2, 11)]
    assert t.dvs() == {level5: [3, 4], level4: [1]}
    assert (4, 1) not in t.rows() and (11, 3) in t.rows()
    old_index = res.new_index_files

    full = t.compact(True)  # everything rewritten into level 5: no vector left
    assert {f.level for f in full.after} == {5}
    assert full.deleted_index_files == old_index and full.new_index_files[0].row_count == 0
    assert t.dvs() == {}
    assert t.rows() == sorted([(i, 1) for i in (0, 1, 2, 5, 6, 7, 8, 9)] + [(3, 2), (11, 3)])


def _kinds(t: T, files: list[Any]) -> list[int]:
    tbl = t.table
    return [k for f in files for k in read_data_file(tbl.file_io, join(tbl.path, "bucket-0", f.file_name),
                                                     key_value_file_fields(tbl.schema), ["_VALUE_KIND"])
            .column(0).to_pylist()]


@pytest.mark.parametrize("changelog", [False, True], ids=["dv", "dv-lookup-changelog"])
def test_dv_upgrade_of_level0_file_recording_no_deletes(tmp_path: Path, changelog: bool) -> None:
    """pypaimon 2.1 records ``_DELETE_ROW_COUNT`` 0 for a file holding -D. Java's upgradeStrategy
    would upgrade it unchanged (count 0, deduplicate) and the DV reader, which does not merge
    levels above 0, would show the deleted key. The real count from ``_VALUE_KIND`` makes the
    upgrade a rewrite with deletes dropped; the replaced row is still marked in its DV."""
    opts = {"deletion-vectors.enabled": "true", "compaction.small-file-ratio": "0.0000001"}  # all "large"
    if changelog:
        opts["changelog-producer"] = "lookup"
    t = T(tmp_path, **opts)
    t.write(list(range(10)), 1)
    first = t.compact(True)
    level5 = first.after[0].file_name
    assert [f.level for f in first.after] == [5]

    t.write([3, 11], 2, [3, 0])  # -D 3, +I 11: TableWrite records 1 delete, the unit is told 0
    res = t.compact(False, zero_level0_delete_counts=True)
    [l0] = res.before
    assert l0.level == 0 and l0.delete_row_count == 0  # DELETE entry as the manifest is assumed to hold it
    assert l0.file_name not in {f.file_name for f in res.after}  # rewritten, not upgraded
    assert res.written and all(f.level == res.unit.output_level > 0 for f in res.after)
    assert sorted(_kinds(t, res.after)) == [0]  # the -D is gone from the file; only +I 11 stays
    assert all(f.delete_row_count == 0 for f in res.after)
    assert t.dvs() == {level5: [3]}  # the deleted key's old row is marked in the level-5 file
    assert t.rows() == sorted([(i, 1) for i in range(10) if i != 3] + [(11, 2)])  # DV reader: no 3
    live = [e.file for e in FileStoreScan(t.table).plan(t.table.snapshot_manager.latest_snapshot())]
    assert all(k in (0, 2) for k in _kinds(t, [f for f in live if f.level > 0]))
    if changelog:
        assert sorted(c[:3] for c in t.changelog(res)) == [("+I", 11, 2), ("-D", 3, 1)]

    t.write([20, 21], 3)  # no retraction: the recorded 0 is true, Java's in-place upgrade stays
    res = t.compact(False, zero_level0_delete_counts=True)
    [l0] = [f for f in res.before if f.level == 0]
    assert [(f.level, f.delete_row_count) for f in res.after if f.file_name == l0.file_name] \
        == [(res.unit.output_level, 0)]  # upgraded in place
    assert t.rows() == sorted([(i, 1) for i in range(10) if i != 3] + [(11, 2), (20, 3), (21, 3)])


def test_first_row_unit(tmp_path: Path) -> None:
    t = T(tmp_path, **{"merge-engine": "first-row", "changelog-producer": "lookup"})
    t.write([1, 2], 1)
    t.compact(True)
    t.write([2, 3, 3], 2)
    res = t.compact(False)
    assert t.changelog(res) == [("+I", 3, 2, 3)]  # 2 exists on level 5: no changelog, not rewritten
    assert t.rows() == [(1, 1), (2, 1), (3, 2)]


def test_full_compaction_changelog_unit(tmp_path: Path) -> None:
    t = T(tmp_path, **{"changelog-producer": "full-compaction"})
    t.write([1, 2, 3], 1)
    res = t.compact(True)
    assert sorted(t.changelog(res)) == [("+I", 1, 1, 0), ("+I", 2, 1, 1), ("+I", 3, 1, 2)]
    t.write([2, 3, 4], 2, [0, 3, 0])
    res = t.compact(True)
    assert sorted(t.changelog(res)) == [("+I", 4, 2, 5), ("+U", 2, 2, 3), ("-D", 3, 1, 2), ("-U", 2, 1, 1)]
    assert {f.level for f in res.after} == {5} and all(f.file_source == 0 for f in res.changelog)
    assert t.rows() == [(1, 1), (2, 2), (4, 2)]


def test_compaction_changelog_files_honour_changelog_file_options(tmp_path: Path) -> None:
    """Changelog written by compaction: changelog-file.format / stats-mode, no file index,
    while the data files of the same compaction keep the table's format, stats and index."""
    from paimon_cli.core.manifest.stats import collect_value_stats
    from paimon_cli.core.schema.options import CoreOptions

    t = T(tmp_path, **{"changelog-producer": "full-compaction", "changelog-file.format": "avro",
                       "changelog-file.stats-mode": "none", "metadata.stats-mode": "full",
                       "file-index.bloom-filter.columns": "v"})
    t.write([1, 2, 3], 1)
    t.write([2, 4], 2)
    res = t.compact(True)
    assert sorted(t.changelog(res)) == [("+I", 1, 1, 0), ("+I", 2, 2, 3), ("+I", 3, 1, 2), ("+I", 4, 2, 4)]
    [log] = res.changelog
    assert log.file_name.startswith("changelog-") and log.file_name.endswith(".avro")
    assert log.embedded_index is None and log.extra_files == ()
    tbl = t.table
    rows = read_data_file(tbl.file_io, join(tbl.path, "bucket-0", log.file_name), key_value_file_fields(tbl.schema))
    none = CoreOptions({**tbl.options.options, "metadata.stats-mode": "none"})
    assert (log.value_stats, log.value_stats_cols) == collect_value_stats(rows, list(tbl.schema.fields), none, "avro")
    data = [f for f in res.after if f.file_name.startswith("data-")]
    assert data and all(f.file_name.endswith(".parquet") for f in data)
    assert all(f.embedded_index or f.extra_files for f in data if f.file_source == 1)
    assert all(f.value_stats != log.value_stats for f in data)


@pytest.mark.parametrize("typ,a,b,same", [
    (pa.list_(pa.int32()), [[1, 2], [3], None, [], None, [1, None], [1]],
     [[1, 2], [4], None, [], [1], [1, None], [1, 1]],
     [True, False, True, True, False, True, False]),
    (pa.map_(pa.string(), pa.int32()), [[("a", 1)], None, [("b", 2), ("c", 3)], []],
     [[("a", 1)], None, [("b", 2), ("c", 4)], [("x", 1)]], [True, True, False, False]),
    (pa.struct([("x", pa.int32()), ("y", pa.list_(pa.string()))]),
     [{"x": 1, "y": ["a"]}, None, {"x": 2, "y": None}, {"x": None, "y": ["b"]}, {"x": 1, "y": ["a"]}],
     [{"x": 1, "y": ["a"]}, None, {"x": 2, "y": []}, {"x": None, "y": ["b"]}, None],
     [True, True, False, True, False]),
])
def test_row_deduplicate_equality_of_nested_values(typ: Any, a: list[Any], b: list[Any], same: list[bool]) -> None:
    """changelog-producer.row-deduplicate compares nested columns vectorised, NULL == NULL."""
    from paimon_cli.core.mergetree.changelog import _values_equal

    ta = pa.table({"c": pa.array(a, typ), "n": pa.array(range(len(a)), pa.int32())})
    tb = pa.table({"c": pa.array(b, typ), "n": pa.array(range(len(b)), pa.int32())})
    assert _values_equal(ta, tb, ["c", "n"]).tolist() == same
    assert _values_equal(ta.slice(1), tb.slice(1), ["c"]).tolist() == same[1:]  # offsets respected
