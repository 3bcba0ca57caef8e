"""Our merge-tree compaction of Java-written and our own tables, read and continued by Java Paimon 0.9.

For each table (every merge engine without lookup, sequence.field, deletes, partitions, fixed
and dynamic buckets, parquet/orc/avro): several level-0 commits, then our minor compaction and
our full compaction (pick_unit over the latest snapshot's live files per bucket,
run_merge_tree_unit, one COMPACT commit). After each, Java reads exactly the rows it read
before; after the full one every live file is on the max level and no key ranges overlap on a
level >= 1. Then Java writes overlapping keys and compacts itself, and Java's read equals ours.
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.mergetree.compact_strategy import pick_unit
from paimon_cli.core.mergetree.compact_task import run_merge_tree_unit
from paimon_cli.core.mergetree.levels import Levels, key_function
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
COLS = [("k", "INT NOT NULL"), ("p", "STRING NOT NULL"), ("a", "STRING"), ("b", "BIGINT"), ("ts", "INT")]
PK = ["k", "p"]


def _table(wh: str, name: str) -> Any:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}")


def our_compact(wh: str, name: str, full: bool) -> list[Any]:
    """What `compact` does for a primary-key table, through package A's API."""
    t = _table(wh, name)
    snap = t.snapshot_manager.latest_snapshot()
    groups: dict[tuple[bytes, int, int], list[Any]] = {}
    for e in FileStoreScan(t).plan(snap):
        groups.setdefault((e.partition, e.bucket, e.total_buckets), []).append(e.file)
    key = key_function([f.type for f in t.schema.logical_trimmed_primary_keys_type.fields])
    results = []
    for (part, bucket, total), files in groups.items():
        unit = pick_unit(t.options, Levels(files, t.options.num_levels, key), full,
                         partition=part, bucket=bucket, total_buckets=total)
        if unit is not None:
            results.append(run_merge_tree_unit(t, unit))
    if results:
        snap = FileStoreCommit(t).commit([r.commit_message() for r in results], "COMPACT")
        assert snap is not None and snap.commit_kind == "COMPACT"
    return results


def check_levels(wh: str, name: str, full: bool) -> None:
    t = _table(wh, name)
    live = FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())
    max_level = t.options.num_levels - 1
    if full:
        assert {e.file.level for e in live} == {max_level}
    key = key_function([f.type for f in t.schema.logical_trimmed_primary_keys_type.fields])
    per: dict[tuple[bytes, int, int], list[Any]] = {}
    for e in live:
        if e.file.level >= 1:
            per.setdefault((e.partition, e.bucket, e.file.level), []).append(e.file)
    for files in per.values():
        files.sort(key=lambda f: key(f.min_key))
        for a, b in pairwise(files):
            assert key(a.max_key) < key(b.min_key), (a.file_name, b.file_name)


def java_rows(jp: JavaPaimon, wh: str, name: str) -> list[dict[str, Any]]:
    rows = jp.read(wh, DB, name, row_kind=False)
    return sorted(rows, key=lambda r: (r["p"], r["k"]))


def our_rows(wh: str, name: str) -> list[dict[str, Any]]:
    return sorted(TableRead(_table(wh, name)).to_arrow().to_pylist(), key=lambda r: (r["p"], r["k"]))


def batches(seed: int, n_commits: int = 4, n: int = 60, deletes: bool = True,
            retract_ok: bool = True) -> list[tuple[list[dict[str, Any]], list[str]]]:
    rng = np.random.default_rng(seed)
    out = []
    for c in range(n_commits):
        keys = rng.choice(np.arange(40), size=n // 2, replace=False)
        rows, kinds = [], []
        for k in keys:
            for p in ("x", "y"):
                a = None if rng.random() < 0.2 else f"a{c}-{k}"
                b = None if rng.random() < 0.2 else int(rng.integers(-50, 50))
                rows.append({"k": int(k), "p": p, "a": a, "b": b, "ts": int(rng.integers(0, 5))})
                r = rng.random()
                kinds.append("-D" if (c and deletes and retract_ok and r < 0.15) else "+U" if r < 0.3 else "+I")
        out.append((rows, kinds))
    return out


SCENARIOS = {
    "dedup": ({}, True),
    "dedup_seq": ({"sequence.field": "ts"}, True),
    "dedup_orc": ({"file.format": "orc"}, True),
    "dedup_avro": ({"file.format": "avro"}, True),
    "dedup_ignore_delete": ({"ignore-delete": "true"}, True),
    "partial": ({"merge-engine": "partial-update", "ignore-delete": "true"}, True),
    "agg": ({"merge-engine": "aggregation", "fields.b.aggregate-function": "sum",
             "fields.a.aggregate-function": "max"}, False),
    "dynamic": ({"bucket": "-1"}, True),
}


def _options(extra: dict[str, str]) -> dict[str, str]:
    return {"bucket": "2", "write-only": "true", "num-sorted-run.compaction-trigger": "3", **extra}


def _java_table(jp: JavaPaimon, wh: str, name: str, extra: dict[str, str], deletes: bool) -> None:
    jp.create_table(wh, DB, name, COLS, PK, ["p"], _options(extra))
    for rows, kinds in batches(1, deletes=deletes):
        jp.write(wh, DB, name, rows, kinds)


_KIND = {"+I": 0, "-U": 1, "+U": 2, "-D": 3}


def _our_table(wh: str, name: str, extra: dict[str, str], deletes: bool) -> None:
    cat = FileSystemCatalog(wh)
    cat.create_database(DB, True)
    cat.create_table(f"{DB}.{name}", Schema.of(parse_columns(", ".join(f"{c} {t}" for c, t in COLS)),
                                               partition_keys=["p"], primary_keys=PK, options=_options(extra)))
    t = cat.get_table(f"{DB}.{name}")
    for rows, kinds in batches(2, deletes=deletes):
        tw = TableWrite(t)
        data = pa.Table.from_pylist(rows, schema=pa.schema([("k", pa.int32()), ("p", pa.string()), ("a", pa.string()),
                                                           ("b", pa.int64()), ("ts", pa.int32())]))
        tw.write_arrow(data, np.array([_KIND[k] for k in kinds], dtype=np.int8))
        FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")


@pytest.mark.slow
@pytest.mark.parametrize("writer", ["java", "ours"])
@pytest.mark.parametrize("scenario", list(SCENARIOS))
def test_compaction_read_by_java(java_paimon: JavaPaimon, tmp_path: Path, writer: str, scenario: str) -> None:
    wh = str(tmp_path / "wh")
    extra, deletes = SCENARIOS[scenario]
    name = f"t_{scenario}"
    if writer == "java":
        _java_table(java_paimon, wh, name, extra, deletes)
    else:
        _our_table(wh, name, extra, deletes)
    before = java_rows(java_paimon, wh, name)
    assert before == our_rows(wh, name) and len(before) > 20

    minor = our_compact(wh, name, full=False)
    assert minor, "4 level-0 runs with trigger 3 must pick a unit"
    assert all(0 < r.unit.output_level for r in minor)
    check_levels(wh, name, full=False)
    assert java_rows(java_paimon, wh, name) == before

    java_paimon.write(wh, DB, name, *batches(7, n_commits=1, deletes=deletes)[0])  # one more level-0 run
    mid = java_rows(java_paimon, wh, name)
    assert mid == our_rows(wh, name)
    full = our_compact(wh, name, full=True)
    assert full and all(r.unit.drop_delete for r in full)
    check_levels(wh, name, full=True)
    assert java_rows(java_paimon, wh, name) == mid
    t = _table(wh, name)
    live = FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())
    assert all(e.file.delete_row_count == 0 for e in live)

    # Java keeps writing and compacting on top of our files
    for rows, kinds in batches(11, n_commits=2, deletes=deletes):
        java_paimon.write(wh, DB, name, rows, kinds)
    java_paimon.compact(wh, DB, name, full=False)
    after_java = java_rows(java_paimon, wh, name)
    assert after_java == our_rows(wh, name)
    java_paimon.compact(wh, DB, name, full=True)
    assert java_rows(java_paimon, wh, name) == after_java
    # and we compact Java's output again
    for rows, kinds in batches(13, n_commits=2, deletes=deletes):
        java_paimon.write(wh, DB, name, rows, kinds)
    final = java_rows(java_paimon, wh, name)
    our_compact(wh, name, full=False)
    assert java_rows(java_paimon, wh, name) == final
    our_compact(wh, name, full=True)
    check_levels(wh, name, full=True)
    assert java_rows(java_paimon, wh, name) == final == our_rows(wh, name)


def test_java_written_multi_level_table_minor_units(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Java compacts into several levels first (minor compactions), then our minor and full ones."""
    wh = str(tmp_path / "wh")
    name = "levels"
    java_paimon.create_table(wh, DB, name, COLS, PK, ["p"], {"bucket": "1", "num-sorted-run.compaction-trigger": "2",
                                                            "write-only": "false", "target-file-size": "2 kb"})
    for rows, kinds in batches(21, n_commits=6):
        java_paimon.write(wh, DB, name, rows, kinds)
    before = java_rows(java_paimon, wh, name)
    t = _table(wh, name)
    levels = {e.file.level for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())}
    assert len(levels) >= 2  # Java left runs on several levels
    for rows, kinds in batches(22, n_commits=3):
        java_paimon.write(wh, DB, name, rows, kinds)  # Java compacts while writing
    before = java_rows(java_paimon, wh, name)
    while our_compact(wh, name, full=False):
        check_levels(wh, name, full=False)
        assert java_rows(java_paimon, wh, name) == before
    our_compact(wh, name, full=True)
    check_levels(wh, name, full=True)
    assert java_rows(java_paimon, wh, name) == before
    t = _table(wh, name)
    live = FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())
    assert len(live) > 1  # rolled at the 2 kb target


def test_schema_evolution_java_table(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Files of older schemas (renamed / added columns) are evolved by field id when rewritten."""
    wh = str(tmp_path / "wh")
    name = "evo"
    java_paimon.create_table(wh, DB, name, COLS, PK, ["p"], _options({}))
    for rows, kinds in batches(31, n_commits=2):
        java_paimon.write(wh, DB, name, rows, kinds)
    java_paimon.alter_table(wh, DB, name, [{"rename": ["a", "a2"]}, {"add": ["c", "DOUBLE"]}])
    rows2 = [{"k": r["k"], "p": r["p"], "a2": r["a"], "b": r["b"], "ts": r["ts"], "c": 1.5}
             for r in batches(32, n_commits=1)[0][0]]
    java_paimon.write(wh, DB, name, rows2)
    before = java_rows(java_paimon, wh, name)
    assert any(r["c"] is None for r in before) and any(r["c"] == 1.5 for r in before)
    our_compact(wh, name, full=True)
    check_levels(wh, name, full=True)
    assert java_rows(java_paimon, wh, name) == before
    t = _table(wh, name)
    assert {e.file.schema_id for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())} == {t.schema.id}


def _jfloat(k: float) -> Any:
    """The helper parses NaN / signed zeros exactly from strings."""
    return ("NaN" if k != k else repr(k)) if (k != k or k == 0) else k


def _float_rows(rows: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(repr of the key, value) sorted: repr tells -0.0 from 0.0 and makes NaN comparable."""
    return sorted((repr(float(r["k"])), r["v"]) for r in rows)


def test_signed_zero_and_nan_keys(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Java 0.9's key comparator (``a > b ? 1 : a < b ? -1 : 0``) makes -0.0 and 0.0 ONE key:
    Java merges them on write, read and compaction, and so do we (Java 2.0+ compares with
    Double.compare and keeps them apart). NaN keys are one key in every version; Java 0.9 also
    folds NaN into neighbouring keys (its comparator says NaN equals everything), a bug we
    do not copy -- our own NaN-keyed table keeps its other keys and Java reads it back."""
    wh = str(tmp_path / "wh")
    cols = [("k", "DOUBLE NOT NULL"), ("v", "STRING")]
    opts = {"bucket": "1", "write-only": "true"}
    java_paimon.create_table(wh, DB, "zeros", cols, ["k"], [], opts)
    for rows in ([(0.0, "a"), (1.0, "b"), (-1.0, "c")], [(-0.0, "d")], [(0.0, "e"), (2.0, "f")], [(-0.0, "g")]):
        java_paimon.write(wh, DB, "zeros", [{"k": _jfloat(k), "v": v} for k, v in rows])
    before = _float_rows(java_paimon.read(wh, DB, "zeros", row_kind=False))
    assert before == [("-0.0", "g"), ("-1.0", "c"), ("1.0", "b"), ("2.0", "f")]
    assert _float_rows(our_rows_plain(wh, "zeros")) == before
    our_compact(wh, "zeros", full=True)
    check_levels(wh, "zeros", full=True)
    assert _float_rows(java_paimon.read(wh, DB, "zeros", row_kind=False)) == before
    assert _float_rows(our_rows_plain(wh, "zeros")) == before

    cat = FileSystemCatalog(wh)
    cat.create_table(f"{DB}.nans", Schema.of(parse_columns("k DOUBLE NOT NULL, v STRING"), primary_keys=["k"],
                                            options=opts))
    t = cat.get_table(f"{DB}.nans")
    nan = float("nan")
    for keys, vals in (([nan, 1.0, -0.0], ["a", "b", "c"]), ([nan, 0.0], ["d", "e"]),
                       ([2.0, nan, nan], ["f", "g", "h"])):
        tw = TableWrite(t)
        tw.write_arrow(pa.table({"k": pa.array(keys, pa.float64()), "v": vals}))
        FileStoreCommit(t).commit(tw.prepare_commit(), "APPEND")
    want = [("0.0", "e"), ("1.0", "b"), ("2.0", "f"), ("nan", "h")]
    assert _float_rows(our_rows_plain(wh, "nans")) == want
    our_compact(wh, "nans", full=True)
    check_levels(wh, "nans", full=True)
    assert _float_rows(our_rows_plain(wh, "nans")) == want
    assert _float_rows(java_paimon.read(wh, DB, "nans", row_kind=False)) == want  # one max-level file


def our_rows_plain(wh: str, name: str) -> list[dict[str, Any]]:
    return TableRead(_table(wh, name)).to_arrow().to_pylist()
