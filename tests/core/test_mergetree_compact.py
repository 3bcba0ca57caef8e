"""core/mergetree/{sort_merge,compact_task}.py: bounded merge, task semantics, reference-merge property."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.format.arrow_schema import key_value_file_fields
from paimon_cli.core.format.data_file import read_data_file
from paimon_cli.core.index.deletion_vectors import DeletionVector
from paimon_cli.core.mergetree import sort_merge
from paimon_cli.core.mergetree.compact_strategy import pick_unit
from paimon_cli.core.mergetree.compact_task import run_merge_tree_unit
from paimon_cli.core.mergetree.levels import Levels, key_function
from paimon_cli.core.mergetree.merge_function import merge
from paimon_cli.core.mergetree.sort_merge import ANNOTATIONS, MergeReader
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema


def make(wh: Path, name: str, columns: str, pk: tuple[str, ...], part: tuple[str, ...] = (), **options: str) -> Any:
    cat = FileSystemCatalog(str(wh))
    cat.create_table(f"db.{name}", Schema.of(parse_columns(columns), partition_keys=part, primary_keys=pk,
                                             options={"bucket": "1", **options}))
    return cat.get_table(f"db.{name}")


def commit(t: Any, data: pa.Table, kinds: Any = None) -> None:
    tw = TableWrite(t)
    tw.write_arrow(data, kinds)
    FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")


def commit_one_file_per_record(t: Any, n: int) -> None:
    """``n`` level-0 files of one record each, +I and -D alternating (one commit per record:
    the writer, like Java's, checks its rolling size only every 1000 records)."""
    for i in range(n):
        commit(t, pa.table({"id": pa.array([i], pa.int32()), "v": ["a"]}), np.array([0 if i % 2 == 0 else 3], np.int8))


def bucket_units(t: Any, full: bool) -> list[Any]:
    t = FileSystemCatalog(t.path.rsplit("/db.db/", 1)[0]).get_table(f"db.{t.path.rsplit('/', 1)[1]}")
    snap = t.snapshot_manager.latest_snapshot()
    groups: dict[tuple[bytes, int, int], list[Any]] = {}
    for e in FileStoreScan(t).plan(snap):
        groups.setdefault((e.partition, e.bucket, e.total_buckets), []).append(e.file)
    key = key_function([f.type for f in t.schema.logical_trimmed_primary_keys_type.fields])
    units = []
    for (p, b, tb), files in groups.items():
        u = pick_unit(t.options, Levels(files, t.options.num_levels, key), full, partition=p, bucket=b,
                      total_buckets=tb)
        if u is not None:
            units.append(u)
    return units


def compact(t: Any, full: bool) -> list[Any]:
    results = [run_merge_tree_unit(t, u) for u in bucket_units(t, full)]
    if results:
        FileStoreCommit(t).commit([r.commit_message() for r in results], "COMPACT")
    return results


def file_records(t: Any, partition: bytes, bucket: int, files: list[Any]) -> pa.Table:
    from paimon_cli.core.io import paths

    part = paths.partition_path_for(t.schema, binary_row.deserialize(partition, t.schema.partition_types))
    parts = [read_data_file(t.file_io, paths.data_file_path(t.path, part, bucket, f.file_name),
                            key_value_file_fields(t.schema)) for f in files]
    if not parts:
        from paimon_cli.core.format.arrow_schema import arrow_schema

        return arrow_schema(key_value_file_fields(t.schema)).empty_table()
    return pa.concat_tables(parts)


def sort_rows(t: pa.Table, keys: list[str]) -> list[dict[str, Any]]:
    return t.sort_by([(k, "ascending") for k in keys]).to_pylist()


def test_merge_reader_chunks_composite_string_keys_dvs(tmp_path: Path, monkeypatch: Any) -> None:
    monkeypatch.setattr(sort_merge, "MIN_BATCH_ROWS", 1)
    monkeypatch.setattr(sort_merge, "MAX_BATCH_ROWS", 5)
    t = make(tmp_path, "m", "a STRING NOT NULL, b INT NOT NULL, v BIGINT", ("a", "b"), **{"write-only": "true"})
    rng = np.random.default_rng(3)
    for i in range(3):
        a = rng.choice(["x", "y", "zz", "ä", "aa"], 40)
        b = rng.integers(0, 6, 40)
        commit(t, pa.table({"a": a, "b": pa.array(b, pa.int32()), "v": pa.array(np.full(40, i), pa.int64())}))
    files = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    runs = [[f] for f in sorted(files, key=lambda f: -f.max_sequence_number)]
    dv_file = runs[0][0]
    dvs = {dv_file.file_name: DeletionVector.from_positions([0, 2])}
    reader = MergeReader(t, "", 0, runs, levels=[0, 0, 0], with_raw=True, deletion_vectors=dvs)
    chunks = list(reader)
    assert len(chunks) > 2  # small batches: several watermark steps
    merged = pa.concat_tables([c.merged for c in chunks])
    keys = list(zip(merged.column("_KEY_a").to_pylist(), merged.column("_KEY_b").to_pylist(), strict=True))
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # one row per key, in key order
    raw = pa.concat_tables([c.raw for c in chunks])
    assert raw.num_rows == sum(f.row_count for f in files) - 2
    assert set(ANNOTATIONS) <= set(raw.column_names)
    deleted = raw.filter(pa.compute.equal(raw.column("_FILE_"), reader.files.index(dv_file)))
    assert 0 not in deleted.column("_POS_").to_pylist() and 2 not in deleted.column("_POS_").to_pylist()
    # reference: merge of all records at once (minus the two deleted rows)
    everything = file_records(t, binary_row.EMPTY_ROW, 0, [f for r in runs for f in r])
    n0 = dv_file.row_count
    first = file_records(t, binary_row.EMPTY_ROW, 0, [dv_file])
    keep = np.ones(n0, dtype=bool)
    keep[[0, 2]] = False
    others = file_records(t, binary_row.EMPTY_ROW, 0, [f for r in runs[1:] for f in r])
    everything = pa.concat_tables([first.filter(pa.array(keep)), others])
    ref = merge(everything.drop_columns(["_KEY_a", "_KEY_b"]).append_column("_KEY_a", everything.column("a"))
                .append_column("_KEY_b", everything.column("b")), ["_KEY_a", "_KEY_b"], t.schema,
                lone_records_as_is=True)
    cols = ["a", "b", "v", "_SEQUENCE_NUMBER", "_VALUE_KIND"]
    assert sort_rows(merged.select(cols), ["a", "b"]) == sort_rows(ref.select(cols), ["a", "b"])


def test_full_compaction_to_max_level_drops_deletes(tmp_path: Path) -> None:
    t = make(tmp_path, "d", "id INT NOT NULL, dt STRING NOT NULL, v STRING", ("id", "dt"), ("dt",),
             bucket="2", **{"write-only": "true"})
    commit(t, pa.table({"id": pa.array(range(20), pa.int32()), "dt": ["a", "b"] * 10, "v": ["x"] * 20}))
    commit(t, pa.table({"id": pa.array(range(0, 20, 3), pa.int32()), "dt": ["a", "b", "a", "b", "a", "b", "a"],
                        "v": ["y"] * 7}), np.array([3, 3, 0, 0, 3, 0, 2], dtype=np.int8))
    before = TableRead(t).to_arrow()
    results = compact(t, True)
    assert results and all(r.unit.output_level == 5 and r.unit.drop_delete for r in results)
    live = FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())
    assert {e.file.level for e in live} == {5}
    assert all(e.file.delete_row_count == 0 for e in live)
    assert any(e.file.file_source == 1 for e in live)  # rewritten ones; lone files are upgraded as they are
    after = TableRead(t).to_arrow()
    assert sort_rows(after, ["dt", "id"]) == sort_rows(before, ["dt", "id"])
    snap = t.snapshot_manager.latest_snapshot()
    assert snap.commit_kind == "COMPACT"
    # sequence numbers kept: each output row has the sequence of its winning record
    out = pa.concat_tables([file_records(t, e.partition, e.bucket, [e.file]) for e in live])
    assert set(out.column("_SEQUENCE_NUMBER").to_pylist()) <= set(range(0, 20 + 7))
    assert compact(t, True) == []  # a lone max-level run: nothing to do


def test_upgrade_of_large_files_and_small_file_rewrite(tmp_path: Path) -> None:
    from paimon_cli.core.schema.schema_change import SetOption

    t = make(tmp_path, "u", "id INT NOT NULL, v STRING", ("id",), **{"write-only": "true"})
    commit(t, pa.table({"id": pa.array(range(0, 1000), pa.int32()), "v": [f"v{i}" * 20 for i in range(1000)]}))
    [big] = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    commit(t, pa.table({"id": pa.array([5000, 5001], pa.int32()), "v": ["a", "b"]}))  # disjoint, small
    commit(t, pa.table({"id": pa.array([6000], pa.int32()), "v": ["c"]}))  # disjoint, small
    cat = FileSystemCatalog(str(tmp_path))
    cat.alter_table("db.u", [SetOption("target-file-size", str(big.file_size))])
    t = cat.get_table("db.u")
    [u] = bucket_units(t, True)
    r = run_merge_tree_unit(t, u)
    before = {f.file_name: f for f in r.before}
    after = {f.file_name: f for f in r.after}
    assert set(before) & set(after) == {big.file_name}  # upgraded: DELETE + ADD of the same file
    assert after[big.file_name].level == 5 and before[big.file_name].level == 0
    assert dataclasses.replace(after[big.file_name], level=0) == big
    [new] = [f for n, f in after.items() if n != big.file_name]  # the two small files rewritten together
    assert new.row_count == 3 and new.level == 5 and new.file_source == 1
    assert r.written and all(big.file_name not in p for p in r.written)
    FileStoreCommit(t).commit([r.commit_message()], "COMPACT")
    assert TableRead(t).to_arrow().num_rows == 1003


def test_upgrade_into_max_level_rewrites_files_with_deletes(tmp_path: Path) -> None:
    t = make(tmp_path, "x", "id INT NOT NULL, v STRING", ("id",), **{"write-only": "true", "target-file-size": "1 b"})
    commit_one_file_per_record(t, 10)
    [u] = bucket_units(t, True)
    r = run_merge_tree_unit(t, u)
    after = {f.file_name for f in r.after}
    assert len(r.before) == 10  # target 1 byte: one record per file, each file large
    for f in r.before:  # -D files are rewritten (and vanish, deletes dropped); the others upgraded
        assert (f.file_name in after) == (f.delete_row_count == 0)
    assert sum(f.row_count for f in r.after) == 5 and all(f.delete_row_count == 0 for f in r.after)
    for p in r.written:
        t.file_io.delete(p)


def _zero_counts(u: Any) -> Any:
    """The unit as pypaimon 2.1's manifests describe its files: ``_DELETE_ROW_COUNT`` 0 always."""
    files = tuple(dataclasses.replace(f, delete_row_count=0) for f in u.files)
    return dataclasses.replace(u, files=files, bucket_files=files)


def _retractions(t: Any, files: list[Any]) -> int:
    kinds = file_records(t, binary_row.EMPTY_ROW, 0, files).column("_VALUE_KIND").to_numpy()
    return int(np.count_nonzero((kinds == 1) | (kinds == 3)))


def test_level0_file_recording_no_deletes_is_checked_before_max_level_upgrade(tmp_path: Path,
                                                                               monkeypatch: Any) -> None:
    """Deviation from Java: a level-0 file whose count is 0 (pypaimon 2.1 writes 0 even for -D
    records) is checked on its _VALUE_KIND column -- that column only -- and rewritten (deletes
    dropped) when it holds retractions; files without retractions are still upgraded in place."""
    from paimon_cli.core.format import data_file

    t = make(tmp_path, "x", "id INT NOT NULL, v STRING", ("id",), **{"write-only": "true", "target-file-size": "1 b"})
    commit_one_file_per_record(t, 10)
    before_rows = TableRead(t).to_arrow()
    [u] = bucket_units(t, True)
    u = _zero_counts(u)
    assert len(u.files) == 10 and all(f.level == 0 and f.delete_row_count == 0 for f in u.files)
    reads: list[Any] = []
    real = data_file.iter_data_file_batches

    def spy(file_io: Any, path: str, fields: Any, columns: Any = None, *a: Any, **kw: Any) -> Any:
        reads.append(columns)
        return real(file_io, path, fields, columns, *a, **kw)

    monkeypatch.setattr(data_file, "iter_data_file_batches", spy)
    r = run_merge_tree_unit(t, u)
    assert reads.count(["_VALUE_KIND"]) == 10  # every upgrade candidate checked, one column read
    monkeypatch.undo()
    after = {f.file_name: f for f in r.after}
    deletes = {f.file_name for f in u.files if _retractions(t, [f])}
    assert len(deletes) == 5
    assert {f.file_name for f in r.before} == {f.file_name for f in u.files}
    assert all(f.delete_row_count == 0 for f in r.before)  # DELETE entries: the metas as the manifest has them
    assert set(after) & deletes == set()  # -D files rewritten (and vanish: deletes dropped)
    assert set(after) == {f.file_name for f in u.files} - deletes  # the others upgraded in place
    assert all(f.level == 5 and f.delete_row_count == 0 for f in after.values())
    assert _retractions(t, list(r.after)) == 0
    FileStoreCommit(t).commit([r.commit_message()], "COMPACT")
    assert {e.file.level for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())} == {5}
    assert sort_rows(TableRead(t).to_arrow(), ["id"]) == sort_rows(before_rows, ["id"])
    assert sorted(r["id"] for r in before_rows.to_pylist()) == [0, 2, 4, 6, 8]


def test_level0_retractions_below_max_level_get_their_real_count(tmp_path: Path) -> None:
    """Merge-on-read upgrade below the max level keeping deletes (Java upgrades it as is): the
    file stays, its new ADD entry records the real count, so readers merge it and the next
    max-level compaction rewrites it (Java's rule for a positive count)."""
    from paimon_cli.core.mergetree.compact_unit import MERGE_TREE, CompactUnit

    t = make(tmp_path, "m", "id INT NOT NULL, v STRING", ("id",),
             **{"write-only": "true", "compaction.small-file-ratio": "0.0000001"})  # every file "large"
    commit(t, pa.table({"id": pa.array(range(0, 20), pa.int32()), "v": ["base"] * 20}))
    compact(t, True)
    commit(t, pa.table({"id": pa.array([3, 4, 30], pa.int32()), "v": [None, "new", "n30"]}),
           np.array([3, 2, 0], dtype=np.int8))
    expected = sorted([(i, "base") for i in range(20) if i not in (3, 4)] + [(4, "new"), (30, "n30")])
    live = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    [l0] = [f for f in live if f.level == 0]
    assert l0.delete_row_count == 1
    l0z = dataclasses.replace(l0, delete_row_count=0)
    bucket = tuple(l0z if f is l0 else f for f in live)
    u = CompactUnit(MERGE_TREE, binary_row.EMPTY_ROW, 0, 1, (l0z,), output_level=4, drop_delete=False,
                    max_level=5, bucket_files=bucket)
    r = run_merge_tree_unit(t, u)
    assert r.written == [] and r.before == [l0z]
    [up] = r.after
    assert up == dataclasses.replace(l0z, level=4, delete_row_count=1)
    FileStoreCommit(t).commit([r.commit_message()], "COMPACT")
    rows = sorted((x["id"], x["v"]) for x in TableRead(t).to_arrow().to_pylist())
    assert rows == expected
    compact(t, True)
    live = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    assert up.file_name not in {f.file_name for f in live}  # rewritten on its way to the max level
    assert {f.level for f in live} == {5} and _retractions(t, live) == 0
    assert sorted((x["id"], x["v"]) for x in TableRead(t).to_arrow().to_pylist()) == expected


def test_files_above_level0_and_positive_counts_are_trusted(tmp_path: Path, monkeypatch: Any) -> None:
    """Java's rules unchanged where the count can be believed: a file above level 0 recording 0
    deletes is upgraded in place unread; a positive count is rewritten without a check."""
    from paimon_cli.core.format import data_file

    t = make(tmp_path, "tr", "id INT NOT NULL, v STRING", ("id",),
             **{"write-only": "true", "compaction.small-file-ratio": "0.0000001"})  # every file "large"
    commit(t, pa.table({"id": pa.array([1, 2], pa.int32()), "v": ["a", None]}), np.array([0, 3], dtype=np.int8))
    [u] = bucket_units(t, True)
    [f] = u.files
    assert f.delete_row_count == 1 and u.output_level == 5
    high = dataclasses.replace(f, level=2, delete_row_count=0)
    checks: list[Any] = []
    real = data_file.iter_data_file_batches

    def spy(file_io: Any, path: str, fields: Any, columns: Any = None, *a: Any, **kw: Any) -> Any:
        if columns == ["_VALUE_KIND"]:
            checks.append(path)
        return real(file_io, path, fields, columns, *a, **kw)

    monkeypatch.setattr(data_file, "iter_data_file_batches", spy)
    r = run_merge_tree_unit(t, dataclasses.replace(u, files=(high,), bucket_files=(high,)))
    assert r.written == [] and r.after == [dataclasses.replace(high, level=5)]  # trusted, as in Java
    r2 = run_merge_tree_unit(t, u)  # level 0, positive count: rewritten, deletes dropped
    assert checks == []
    assert r2.written and [x.row_count for x in r2.after] == [1] and r2.before == [f]
    for p in r2.written:
        t.file_io.delete(p)


def test_minor_compaction_output_level_and_keep_deletes(tmp_path: Path) -> None:
    t = make(tmp_path, "minor", "id INT NOT NULL, v STRING", ("id",),
             **{"write-only": "true", "num-sorted-run.compaction-trigger": "3", "num-levels": "6"})
    commit(t, pa.table({"id": pa.array(range(5000), pa.int32()), "v": [f"base-{i}" for i in range(5000)]}))
    compact(t, True)  # level 5
    for i in range(3):
        commit(t, pa.table({"id": pa.array([i, 50 + i], pa.int32()), "v": [f"n{i}", "d"]}),
               np.array([0, 3], dtype=np.int8))
    before = TableRead(t).to_arrow()
    [u] = bucket_units(t, False)
    assert u.output_level == 4 and not u.drop_delete and len(u.files) == 3
    r = run_merge_tree_unit(t, u)
    assert all(f.level == 4 for f in r.after)
    assert sum(f.delete_row_count for f in r.after) == 3  # -D records kept above older data
    FileStoreCommit(t).commit([r.commit_message()], "COMPACT")
    assert sort_rows(TableRead(t).to_arrow(), ["id"]) == sort_rows(before, ["id"])
    compact(t, True)
    assert sort_rows(TableRead(t).to_arrow(), ["id"]) == sort_rows(before, ["id"])


def test_lookup_tables_use_the_lookup_rewriter(tmp_path: Path) -> None:
    from paimon_cli.core.mergetree.compact_task import MergeTreeRewriter, make_context, make_rewriter
    from paimon_cli.core.mergetree.lookup_rewriter import LookupRewriter

    for name, opts in (("fc", {"changelog-producer": "full-compaction"}), ("dv", {"deletion-vectors.enabled": "true"}),
                       ("plain", {})):
        t = make(tmp_path, name, "id INT NOT NULL, v STRING", ("id",), **{"write-only": "true", **opts})
        commit(t, pa.table({"id": pa.array([1, 2], pa.int32()), "v": ["a", "b"]}))
        commit(t, pa.table({"id": pa.array([1], pa.int32()), "v": ["c"]}))
        [u] = bucket_units(t, True)
        rw = make_rewriter(make_context(t, u))
        assert type(rw) is (MergeTreeRewriter if name == "plain" else LookupRewriter)
        r = run_merge_tree_unit(t, u)
        FileStoreCommit(t).commit([r.commit_message()], "COMPACT")
        assert sort_rows(TableRead(t).to_arrow(), ["id"]) == [{"id": 1, "v": "c"}, {"id": 2, "v": "b"}]


@pytest.mark.parametrize("delete_count", [None, 2])
def test_file_on_output_level_is_left_alone_before_the_delete_rule(tmp_path: Path, delete_count: Any) -> None:
    """Java 0.9 MergeTreeCompactTask.upgrade: same level -> nothing, even for a max-level file
    whose delete count is unknown (pre-0.8 writer) or positive; only the level-0 file moves."""
    from paimon_cli.core.schema.schema_change import SetOption

    t = make(tmp_path, "keep", "id INT NOT NULL, v STRING", ("id",), **{"write-only": "true"})
    commit(t, pa.table({"id": pa.array(range(10), pa.int32()), "v": ["a"] * 10}))
    compact(t, True)
    [top] = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    assert top.level == 5 and top.delete_row_count == 0
    cat = FileSystemCatalog(str(tmp_path))
    cat.alter_table("db.keep", [SetOption("target-file-size", "1 b")])  # every file counts as large
    t = cat.get_table("db.keep")
    commit(t, pa.table({"id": pa.array([100], pa.int32()), "v": ["b"]}))  # disjoint, level 0
    [u] = bucket_units(t, True)
    assert u.output_level == 5 and {f.level for f in u.files} == {0, 5}
    old = dataclasses.replace(top, delete_row_count=delete_count)
    files = tuple(old if f.file_name == top.file_name else f for f in u.files)
    u = dataclasses.replace(u, files=files, bucket_files=files)
    r = run_merge_tree_unit(t, u)
    assert top.file_name not in {f.file_name for f in r.before}  # neither rewritten nor re-levelled
    assert top.file_name not in {f.file_name for f in r.after}
    [l0] = r.before
    [up] = r.after
    assert l0.level == 0 and up.file_name == l0.file_name and up.level == 5  # upgraded in place
    assert r.written == []
    # a max-level file with deletes arriving from a LOWER level is still rewritten
    moved = dataclasses.replace(old, level=4)
    files = tuple(moved if f.file_name == top.file_name else f for f in u.files)
    r2 = run_merge_tree_unit(t, dataclasses.replace(u, files=files, bucket_files=files))
    assert top.file_name in {f.file_name for f in r2.before}
    assert top.file_name not in {f.file_name for f in r2.after} and r2.written
    for p in r2.written:
        t.file_io.delete(p)


def test_schema_evolution_of_older_files(tmp_path: Path) -> None:
    from paimon_cli.core.data.types import BigIntType
    from paimon_cli.core.schema.schema_change import AddColumn, RenameColumn

    t = make(tmp_path, "evo", "id INT NOT NULL, v STRING", ("id",), **{"write-only": "true"})
    commit(t, pa.table({"id": pa.array([1, 2, 3], pa.int32()), "v": ["a", "b", "c"]}))
    cat = FileSystemCatalog(str(tmp_path))
    cat.alter_table("db.evo", [RenameColumn("v", "w"), AddColumn("n", BigIntType())])
    t = cat.get_table("db.evo")
    commit(t, pa.table({"id": pa.array([2], pa.int32()), "w": ["B"], "n": pa.array([7], pa.int64())}))
    before = TableRead(t).to_arrow()
    results = compact(t, True)
    assert all(f.schema_id == t.schema.id for r in results for f in r.after)
    assert sort_rows(TableRead(t).to_arrow(), ["id"]) == sort_rows(before, ["id"])
    assert sort_rows(before, ["id"]) == [{"id": 1, "w": "a", "n": None}, {"id": 2, "w": "B", "n": 7},
                                         {"id": 3, "w": "c", "n": None}]


ENGINES = [
    {},
    {"sequence.field": "s"},
    {"merge-engine": "partial-update", "ignore-delete": "true"},
    {"merge-engine": "aggregation", "fields.x.aggregate-function": "sum", "fields.y.aggregate-function": "max"},
    {"merge-engine": "partial-update", "fields.s.sequence-group": "x"},
]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    engine=st.sampled_from(range(len(ENGINES))),
    commits=st.lists(st.lists(st.tuples(st.integers(0, 30), st.integers(0, 3), st.one_of(st.none(), st.integers(-5, 5)),
                                        st.sampled_from([0, 0, 0, 2, 1, 3])), min_size=1, max_size=25),
                     min_size=1, max_size=6),
    full=st.booleans(),
    batch=st.integers(1, 9),
)
def test_unit_output_equals_reference_merge(tmp_path_factory: Any, monkeypatch: Any, engine: int,
                                           commits: list[list[tuple[int, int, int | None, int]]], full: bool,
                                           batch: int) -> None:
    monkeypatch.setattr(sort_merge, "MIN_BATCH_ROWS", 1)
    monkeypatch.setattr(sort_merge, "MAX_BATCH_ROWS", batch)
    opts = dict(ENGINES[engine])
    wh = tmp_path_factory.mktemp("prop")
    t = make(wh, "p", "k INT NOT NULL, s INT, x INT, y INT", ("k",),
             **{"write-only": "true", "num-sorted-run.compaction-trigger": "2", **opts})
    no_retract = opts.get("merge-engine") == "aggregation"
    for rows in commits:
        kinds = np.array([0 if no_retract else r[3] for r in rows], dtype=np.int8)
        commit(t, pa.table({"k": pa.array([r[0] for r in rows], pa.int32()),
                            "s": pa.array([r[1] for r in rows], pa.int32()),
                            "x": pa.array([r[2] for r in rows], pa.int32()),
                            "y": pa.array([r[2] for r in rows], pa.int32())}), kinds)
    before = TableRead(t).to_arrow()
    for u in bucket_units(t, full):
        r = run_merge_tree_unit(t, u)
        inp = file_records(t, u.partition, u.bucket, list(r.before))
        ref = merge(inp, ["_KEY_k"], t.schema, drop_deletes=u.drop_delete, lone_records_as_is=True)
        out = file_records(t, u.partition, u.bucket, list(r.after))
        cols = ["k", "s", "x", "y", "_SEQUENCE_NUMBER", "_VALUE_KIND"]
        assert sort_rows(out.select(cols), ["k"]) == sort_rows(ref.select(cols), ["k"])
        levels = {f.level for f in r.after}
        assert levels <= {u.output_level}
        FileStoreCommit(t).commit([r.commit_message()], "COMPACT")
    assert sort_rows(TableRead(t).to_arrow(), ["k"]) == sort_rows(before, ["k"])


@pytest.mark.parametrize("key_type,values", [
    ("TIMESTAMP(9)", lambda i: pa.array(np.asarray(i, dtype="int64") * 1_000_007_000, pa.timestamp("ns"))),
    ("DECIMAL(20, 3)", lambda i: pa.array([__import__("decimal").Decimal(int(x)) / 8 for x in i], pa.decimal128(20, 3))),
    ("DATE", lambda i: pa.array(np.asarray(i, dtype="int32"), pa.date32())),
    ("BYTES", lambda i: pa.array([bytes([int(x) % 256, 255 - int(x) % 7]) for x in i], pa.binary())),
    ("DOUBLE", lambda i: pa.array(np.asarray(i, dtype="float64") / 3 - 20)),
])
def test_merge_reader_key_types(tmp_path: Path, monkeypatch: Any, key_type: str, values: Any) -> None:
    monkeypatch.setattr(sort_merge, "MIN_BATCH_ROWS", 1)
    monkeypatch.setattr(sort_merge, "MAX_BATCH_ROWS", 4)
    t = make(tmp_path, "kt", f"k {key_type} NOT NULL, g INT NOT NULL, v INT", ("k", "g"), **{"write-only": "true"})
    rng = np.random.default_rng(5)
    for c in range(3):
        ids = rng.integers(0, 60, 30)
        commit(t, pa.table({"k": values(ids), "g": pa.array(ids % 2, pa.int32()), "v": pa.array(np.full(30, c), pa.int32())}))
    files = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    chunks = list(MergeReader(t, "", 0, [[f] for f in files]))
    merged = pa.concat_tables([c.merged for c in chunks])
    everything = file_records(t, binary_row.EMPTY_ROW, 0, files)
    ref = merge(everything, ["_KEY_k", "_KEY_g"], t.schema, lone_records_as_is=True)
    cols = ["k", "g", "v", "_SEQUENCE_NUMBER"]
    assert merged.select(cols).to_pylist() == ref.select(cols).to_pylist()  # same keys, same order
    before = TableRead(t).to_arrow()
    compact(t, True)
    assert sort_rows(TableRead(t).to_arrow(), ["k", "g"]) == sort_rows(before, ["k", "g"])


_SPECIAL = [float("-inf"), -1.5, -0.0, 0.0, 1.5, float("inf"), float("nan")]


def _norm(x: float) -> Any:
    """Java 0.9's key identity for floats: -0.0 == 0.0, NaN == NaN."""
    return "nan" if x != x else x + 0.0


@pytest.mark.parametrize("key_type", ["DOUBLE", "FLOAT"])
@pytest.mark.parametrize("composite", [False, True])
def test_float_keys_nan_and_signed_zero(tmp_path: Path, monkeypatch: Any, key_type: str, composite: bool) -> None:
    """-0.0 and 0.0 are one key (Java 0.9 .. 1.4 comparator), all NaNs are one key sorting last;
    the bounded k-way merge (tiny batches, keys straddling batch and file boundaries), grouping,
    interval partition and level validation all agree, and compaction keeps every key once."""
    from paimon_cli.core.mergetree.levels import interval_partition
    from paimon_cli.core.mergetree.lookup import lex_compare
    from paimon_cli.core.schema.schema_change import SetOption

    monkeypatch.setattr(sort_merge, "MIN_BATCH_ROWS", 1)
    monkeypatch.setattr(sort_merge, "MAX_BATCH_ROWS", 2)
    pk = ("k", "g") if composite else ("k",)
    t = make(tmp_path, "fk", f"k {key_type} NOT NULL, g INT NOT NULL, v INT", pk, **{"write-only": "true"})
    at = pa.float64() if key_type == "DOUBLE" else pa.float32()
    rng = np.random.default_rng(11)
    expected: dict[Any, int] = {}
    for c in range(4):
        idx = rng.integers(0, len(_SPECIAL), 12)
        ks = [_SPECIAL[i] for i in idx]
        gs = [int(x) % 2 if composite else 0 for x in rng.integers(0, 4, 12)]
        vs = [c * 100 + i for i in range(12)]
        commit(t, pa.table({"k": pa.array(ks, at), "g": pa.array(gs, pa.int32()), "v": pa.array(vs, pa.int32())}))
        for k, g, v in zip(ks, gs, vs, strict=True):
            expected[(_norm(k), g)] = v
    files = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    assert len(files) == 4
    chunks = list(MergeReader(t, "", 0, [[f] for f in files]))
    merged = pa.concat_tables([c.merged for c in chunks])
    got = {(_norm(k), g): v for k, g, v in zip(*(merged.column(c).to_pylist() for c in ("k", "g", "v")), strict=True)}
    assert merged.num_rows == len(expected) and got == expected
    order = [_norm(k) for k in merged.column("k").to_pylist()]
    assert order == sorted(order, key=lambda x: (x == "nan", 0.0 if x == "nan" else x))  # NaN last

    def rows() -> dict[Any, int]:
        out = TableRead(t).to_arrow()
        assert out.num_rows == len(expected)
        return {(_norm(k), g): v for k, g, v in zip(*(out.column(c).to_pylist() for c in ("k", "g", "v")), strict=True)}

    assert rows() == expected
    cat = FileSystemCatalog(str(tmp_path))
    cat.alter_table("db.fk", [SetOption("target-file-size", "1 b")])  # roll: several max-level files
    t = cat.get_table("db.fk")
    compact(t, True)
    assert rows() == expected
    live = [e.file for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]
    key = key_function([f.type for f in t.schema.logical_trimmed_primary_keys_type.fields])
    Levels(live, t.options.num_levels, key)  # one sorted run per level: no false overlap with NaN bounds
    assert [len(s) for s in interval_partition(live, key)] == [1] * len(interval_partition(live, key))
    commit(t, pa.table({"k": pa.array([float("nan"), -0.0], at), "g": pa.array([0, 0], pa.int32()),
                        "v": pa.array([7, 8], pa.int32())}))
    expected[("nan", 0)], expected[(0.0, 0)] = 7, 8
    compact(t, True)
    assert rows() == expected
    # the lookup cursor's comparison agrees: NaN is the largest key and equals NaN
    col = pa.array([-1.5, 0.0, float("nan")], at)
    assert lex_compare([col], [pa.scalar(float("nan"), at)], strict=False).to_pylist() == [True, True, True]
    assert lex_compare([col], [pa.scalar(float("nan"), at)], strict=True).to_pylist() == [True, True, False]
    assert lex_compare([col], [pa.scalar(-0.0, at)], strict=False).to_pylist() == [True, True, False]


def test_merge_function_float_key_order_and_identity(tmp_path: Path) -> None:
    """core.mergetree.merge_function.merge: NaN keys are one key and sort after +inf (also when a
    sequence.field forces a re-sort, whose NULLs still come first); -0.0 and 0.0 are one key."""
    from paimon_cli.core.mergetree.key_groups import sort_indices_nulls_first

    nan, inf = float("nan"), float("inf")
    t = make(tmp_path, "mf", "k DOUBLE NOT NULL, ts INT, v INT", ("k",), **{"sequence.field": "ts"})
    rec = pa.table({
        "_KEY_k": pa.array([nan, inf, -0.0, nan, 0.0, -inf, nan], pa.float64()),
        "_SEQUENCE_NUMBER": pa.array(range(7), pa.int64()),
        "_VALUE_KIND": pa.array([0] * 7, pa.int8()),
        "k": pa.array([nan, inf, -0.0, nan, 0.0, -inf, nan], pa.float64()),
        "ts": pa.array([2, 1, 5, None, 4, 1, 1], pa.int32()),
        "v": pa.array(range(7), pa.int32()),
    })
    out = merge(rec, ["_KEY_k"], t.schema, t.options)
    keys = [repr(k) for k in out.column("k").to_pylist()]
    assert keys == ["-inf", "-0.0", "inf", "nan"]  # -0.0 (ts 5) beats 0.0 (ts 4); NaN last
    assert out.column("v").to_pylist() == [5, 2, 1, 0]  # NaN: ts 2 is the largest sequence.field
    idx = sort_indices_nulls_first(pa.table({"x": pa.array([1.0, None, nan, -inf, inf])}),
                                   [("x", "descending")]).to_pylist()
    assert idx == [1, 2, 4, 0, 3]  # NULL first, then NaN as the largest value
