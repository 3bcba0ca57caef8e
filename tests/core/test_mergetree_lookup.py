"""core/mergetree/{lookup,changelog,dv_maintainer}: level lookups, DV marks and changelog rows.

The expected values follow Java's LookupChangelogMergeFunctionWrapper /
FirstRowMergeFunctionWrapper / FullChangelogMergeFunctionWrapper per key; end-to-end
agreement with Java 0.9 is in tests/interop/test_compact_lookup_java.py.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.index.deletion_vectors import read_deletion_vectors
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX
from paimon_cli.core.mergetree.changelog import (
    FullChangelogMerger,
    LookupMerger,
    keep_one_high_level,
)
from paimon_cli.core.mergetree.dv_maintainer import DvMaintainer, index_file_path
from paimon_cli.core.mergetree.file_writer import RollingFileWriter
from paimon_cli.core.mergetree.lookup import LevelLookup
from paimon_cli.core.schema.table_schema import Schema

KINDS = {0: "+I", 1: "-U", 2: "+U", 3: "-D"}


def make(tmp_path: Path, columns: str = "id INT NOT NULL, v STRING", **options: str) -> Any:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.t", Schema.of(parse_columns(columns), primary_keys=("id",),
                                       options={"bucket": "1", **options}))
    return cat.get_table("db.t")


def recs(ids: list[int], vals: list[Any], seq0: int, kinds: list[int] | None = None,
         level: int | None = None, vtype: pa.DataType | None = None) -> pa.Table:
    n = len(ids)
    t = pa.table({
        "id": pa.array(ids, pa.int32()), "v": pa.array(vals, pa.string() if vtype is None else vtype),
        "_SEQUENCE_NUMBER": pa.array(np.arange(seq0, seq0 + n), pa.int64()),
        "_VALUE_KIND": pa.array(kinds or [0] * n, pa.int8()),
    })
    if level is not None:
        t = t.append_column("_LEVEL", pa.array([level] * n, pa.int32()))
    return t


def write_level(table: Any, records: pa.Table, level: int, target: int = 1 << 30) -> list[Any]:
    w = RollingFileWriter(table, b"", 0, level=level, target_file_size=target)
    w.write(records)
    return w.close()


def rows(t: pa.Table | None) -> list[tuple[Any, ...]]:
    if t is None:
        return []
    return [(KINDS[r["_VALUE_KIND"]], r["id"], r["v"], r["_SEQUENCE_NUMBER"]) for r in t.to_pylist()]


# ---------------------------------------------------------------------------- DvMaintainer


@pytest.mark.parametrize("bitmap64", [False, True])
def test_dv_maintainer_round_trip(tmp_path: Path, bitmap64: bool) -> None:
    t = make(tmp_path, **{"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": str(bitmap64).lower()})
    dv = DvMaintainer(t, b"", 0, [])
    assert dv.write() == ([], [], [])  # unmodified: nothing written
    dv.notify_deletions("a.parquet", np.array([5, 1, 5]))
    dv.notify_deletions("b.parquet", [7])
    new, deleted, written = dv.write()
    assert deleted == [] and len(new) == 1 and len(written) == 1
    meta = new[0]
    assert meta.index_type == DELETION_VECTORS_INDEX and meta.row_count == 2
    assert meta.file_name.startswith("index-") and meta.file_size == len(t.file_io.read_bytes(written[0]))
    got = read_deletion_vectors(t.file_io, written[0], meta.dv_ranges)
    assert sorted(got["a.parquet"].positions()) == [1, 5] and list(got["b.parquet"].positions()) == [7]
    assert all(v.is_64 == bitmap64 for v in got.values())

    # restore, re-mark an existing position (no change), drop a rewritten file's vector
    dv2 = DvMaintainer(t, b"", 0, [meta])
    dv2.notify_deletions("a.parquet", [1])
    assert not dv2.modified
    dv2.remove("b.parquet")
    new2, deleted2, written2 = dv2.write()
    assert deleted2 == [meta] and [m.data_file_name for m in new2[0].dv_ranges] == ["a.parquet"]
    assert index_file_path(t, b"", 0, new2[0]) == written2[0]

    # every vector gone: Java still writes an (empty) index file replacing the old one
    dv3 = DvMaintainer(t, b"", 0, new2)
    dv3.remove("a.parquet")
    new3, deleted3, written3 = dv3.write()
    assert deleted3 == new2 and new3[0].row_count == 0 and new3[0].dv_ranges == ()
    assert t.file_io.read_bytes(written3[0]) == b"\x01"


@pytest.mark.parametrize("bitmap64", [False, True])
def test_dv_maintainer_writes_restored_vectors_in_the_tables_kind(tmp_path: Path, bitmap64: bool) -> None:
    """``deletion-vectors.bitmap64`` is not immutable: after it changes, the next index file of
    a bucket holds every vector (restored ones too) in the kind the option now names."""
    old = make(tmp_path, **{"deletion-vectors.enabled": "true", "deletion-vectors.bitmap64": str(not bitmap64).lower()})
    dv = DvMaintainer(old, b"", 0, [])
    dv.notify_deletions("a.parquet", [3, 4])
    dv.notify_deletions("b.parquet", [0])
    (meta,), _, _ = dv.write()
    t = old.copy({"deletion-vectors.bitmap64": str(bitmap64).lower()})
    restored = DvMaintainer(t, b"", 0, [meta])
    assert {v.is_64 for v in restored.vectors.values()} == {not bitmap64}
    restored.notify_deletions("b.parquet", [9])
    new, deleted, written = restored.write()
    assert deleted == [meta]
    got = read_deletion_vectors(t.file_io, written[0], new[0].dv_ranges)
    assert {n: list(v.positions()) for n, v in got.items()} == {"a.parquet": [3, 4], "b.parquet": [0, 9]}
    assert {v.is_64 for v in got.values()} == {bitmap64}
    blob_len = {True: 8, False: 0}[bitmap64]  # the 64-bit length counts the prefix and the CRC
    for m in new[0].dv_ranges:
        (size,) = struct.unpack_from(">i", t.file_io.read_bytes(written[0]), m.offset)
        assert m.length == size + blob_len


# ---------------------------------------------------------------------------- LevelLookup


def test_level_lookup_streams_levels_in_key_order(tmp_path: Path) -> None:
    t = make(tmp_path, **{"deletion-vectors.enabled": "true"})
    # level 5: ids 0..998 even, in 3 files; level 3: a few odd ids and id 10 (newer)
    l5 = []
    for lo in (0, 334, 668):
        ids = list(range(lo, min(lo + 334, 1000), 2))
        l5 += write_level(t, recs(ids, [f"a{i}" for i in ids], lo), 5)
    l3 = write_level(t, recs([1, 10, 333], ["b1", "b10", "b333"], 2000), 3)
    dv = DvMaintainer(t, b"", 0, [])
    dv.notify_deletions(l3[0].file_name, [2])  # b333 is deleted already
    lk = LevelLookup(t, b"", 0, l5 + l3, 2, ["id"], ["id", "v"], dv)

    keys = pa.table({"id": pa.array([1, 2, 3, 10], pa.int32())})
    found = lk.lookup(keys)
    got = {r["id"]: (r["v"], r["_LEVEL"], r["_POS"]) for r in found.to_pylist()}
    assert got == {1: ("b1", 3, 0), 2: ("a2", 5, 1), 10: ("b10", 3, 1)}  # lowest level wins
    assert set(found.column("_LOOKUP_ROW").to_pylist()) == {0, 1, 3}
    assert lk.files_read == [l3[0].file_name, l5[0].file_name]  # the other level-5 files not yet

    # next chunks (ascending): 333 is deleted on level 3 -> hidden, and odd -> not on level 5
    assert lk.lookup(pa.table({"id": pa.array([333], pa.int32())})) is None
    found = lk.lookup(pa.table({"id": pa.array([900], pa.int32())}))
    assert [(r["id"], r["v"], r["_FILE"]) for r in found.to_pylist()] == [(900, "a900", l5[2].file_name)]
    assert lk.files_read == [l3[0].file_name, l5[0].file_name, l5[2].file_name]  # middle file never read


def test_level_lookup_positions_only(tmp_path: Path) -> None:
    t = make(tmp_path)
    f = write_level(t, recs([1, 2, 3], ["x", "y", "z"], 0), 4)
    lk = LevelLookup(t, b"", 0, f, 1, ["id"], None)
    found = lk.lookup(pa.table({"id": pa.array([2, 5], pa.int32())}))
    assert found.column_names[:1] == ["id"] and "v" not in found.column_names
    assert found.select(["id", "_POS"]).to_pylist() == [{"id": 2, "_POS": 1}]


# ---------------------------------------------------------------------------- lookup merge


def test_lookup_changelog_deduplicate(tmp_path: Path) -> None:
    t = make(tmp_path, **{"changelog-producer": "lookup", "changelog-producer.row-deduplicate": "true"})
    high = write_level(t, recs([1, 2, 3, 4], ["o1", "o2", "o3", "o4"], 0), 5)
    lk = LevelLookup(t, b"", 0, high, 2, ["id"], ["id", "v"])
    m = LookupMerger(t.schema, t.options, lk, None, produce_changelog=True)
    chunk = pa.concat_tables([
        recs([1, 2, 3, 5, 5], ["n1", "o2", "x", "n5", "n5b"], 100, [0, 0, 3, 0, 0], level=0),
        recs([3], ["l1-3"], 50, level=1),  # key 3 has a high-level record in the rewrite
    ])
    res = m.merge(chunk)
    assert rows(res.merged) == [("+I", 1, "n1", 100), ("+I", 2, "o2", 101), ("-D", 3, "x", 102),
                                ("+I", 5, "n5b", 104)]
    assert rows(res.changelog) == [
        ("-U", 1, "o1", 0), ("+U", 1, "n1", 100),  # looked up on level 5
        # key 2: same value -> row-deduplicate drops the pair
        ("-D", 3, "l1-3", 50),  # BEFORE from level 1 inside the rewrite
        ("+I", 5, "n5b", 104),
    ]
    assert m.stats["lookups"] == 3 and m.stats["hits"] == 2


def test_lookup_merge_aggregation_uses_looked_up_value(tmp_path: Path) -> None:
    t = make(tmp_path, "id INT NOT NULL, v BIGINT", **{
        "merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "deletion-vectors.enabled": "true"})
    high = write_level(t, recs([1, 2], [10, 20], 0, vtype=pa.int64()), 5)
    hooks_dv = DvMaintainer(t, b"", 0, [])
    lk = LevelLookup(t, b"", 0, high, 1, ["id"], ["id", "v"], hooks_dv)
    m = LookupMerger(t.schema, t.options, lk, hooks_dv, produce_changelog=False)
    res = m.merge(recs([1, 1, 3], [1, 2, 3], 100, level=0, vtype=pa.int64()))
    assert res.merged.select(["id", "v"]).to_pylist() == [{"id": 1, "v": 13}, {"id": 3, "v": 3}]
    assert res.changelog is None
    assert {n: list(d.positions()) for n, d in hooks_dv.vectors.items()} == {high[0].file_name: [0]}


def test_lookup_merge_keeps_only_newest_high_level_record(tmp_path: Path) -> None:
    t = make(tmp_path, "id INT NOT NULL, v BIGINT", **{
        "merge-engine": "aggregation", "fields.v.aggregate-function": "sum", "changelog-producer": "lookup"})
    m = LookupMerger(t.schema, t.options, None, None, produce_changelog=True)
    chunk = pa.concat_tables([
        recs([1], [100], 0, level=3, vtype=pa.int64()),  # already merged into level 2's record
        recs([1], [105], 10, level=2, vtype=pa.int64()),
        recs([1], [1], 20, level=0, vtype=pa.int64()),
    ])
    res = m.merge(chunk)
    assert res.merged.select(["id", "v"]).to_pylist() == [{"id": 1, "v": 106}]
    assert [(KINDS[r["_VALUE_KIND"]], r["v"]) for r in res.changelog.to_pylist()] == [("-U", 105), ("+U", 106)]
    plain = keep_one_high_level(chunk.slice(0, 2), ["id"], t.options)
    assert plain.column("v").to_pylist() == [105]


def test_first_row_lookup(tmp_path: Path) -> None:
    t = make(tmp_path, **{"merge-engine": "first-row", "changelog-producer": "lookup"})
    high = write_level(t, recs([1, 3], ["o1", "o3"], 0), 5)
    lk = LevelLookup(t, b"", 0, high, 3, ["id"], None)
    m = LookupMerger(t.schema, t.options, lk, None, produce_changelog=True)
    chunk = pa.concat_tables([recs([1, 2, 2, 4], ["n1", "n2", "n2b", "n4"], 100, level=0),
                              recs([4], ["l2-4"], 50, level=2)])
    res = m.merge(chunk)
    # 1 exists above -> dropped; 2 new -> first record + changelog; 4 has a high-level record -> kept, no changelog
    assert rows(res.merged) == [("+I", 2, "n2", 101), ("+I", 4, "l2-4", 50)]
    assert rows(res.changelog) == [("+I", 2, "n2", 101)]
    with pytest.raises(InvalidInput, match="first-row"):
        m.merge(recs([9], ["x"], 200, [3], level=0))


# ---------------------------------------------------------------------------- full compaction


def test_full_compaction_changelog(tmp_path: Path) -> None:
    t = make(tmp_path, **{"changelog-producer": "full-compaction"})
    m = FullChangelogMerger(t.schema, t.options, 5)
    chunk = pa.concat_tables([
        recs([1, 2, 3, 4], ["o1", "o2", "o3", "o4"], 0, level=5),
        recs([1, 3, 5, 6, 6], ["n1", "x", "n5", "n6", "y"], 10, [0, 3, 0, 0, 3], level=0),
    ])
    res = m.merge(chunk)
    assert rows(res.changelog) == [("-U", 1, "o1", 0), ("+U", 1, "n1", 10), ("-D", 3, "o3", 2),
                                   ("+I", 5, "n5", 12)]
    assert rows(res.merged) == [("+I", 1, "n1", 10), ("+I", 2, "o2", 1), ("-D", 3, "x", 11),
                                ("+I", 4, "o4", 3), ("+I", 5, "n5", 12), ("-D", 6, "y", 14)]


def test_match_keys_single_and_composite() -> None:
    from paimon_cli.core.mergetree.lookup import match_keys

    req = pa.table({"a": ["b", "d", "x"]})
    rows = pa.table({"a": ["a", "b", "c", "d"]})
    assert match_keys(req, rows).tolist() == [-1, 0, -1, 1]
    req = pa.table({"a": ["b", "b", "ä"], "n": pa.array([1, 2, 0], pa.int32())})
    rows = pa.table({"a": ["b", "b", "b", "ä", "z"], "n": pa.array([0, 1, 2, 0, 1], pa.int32())})
    assert match_keys(req, rows).tolist() == [-1, 0, 1, 2, -1]


def test_level_lookup_composite_string_keys(tmp_path: Path) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.c", Schema.of(parse_columns("a STRING NOT NULL, n INT NOT NULL, v STRING"),
                                       primary_keys=("a", "n"), options={"bucket": "1"}))
    t = cat.get_table("db.c")

    def kv(a: list[str], n: list[int], v: list[str], seq0: int) -> pa.Table:
        k = len(a)
        return pa.table({"a": a, "n": pa.array(n, pa.int32()), "v": v,
                         "_SEQUENCE_NUMBER": pa.array(np.arange(seq0, seq0 + k), pa.int64()),
                         "_VALUE_KIND": pa.array([0] * k, pa.int8())})

    l5 = write_level(t, kv(["a", "a", "b", "é"], [1, 2, 1, 7], ["a1", "a2", "b1", "e7"], 0), 5)
    l2 = write_level(t, kv(["a", "é"], [2, 7], ["A2", "E7"], 10), 2)
    lk = LevelLookup(t, b"", 0, l5 + l2, 1, ["a", "n"], ["a", "n", "v"])
    got = lk.lookup(pa.table({"a": ["a", "a", "b", "c"], "n": pa.array([2, 3, 1, 0], pa.int32())}))
    assert [(r["a"], r["n"], r["v"], r["_LEVEL"]) for r in got.to_pylist()] == [("a", 2, "A2", 2), ("b", 1, "b1", 5)]
    got = lk.lookup(pa.table({"a": ["é"], "n": pa.array([7], pa.int32())}))
    assert got.column("v").to_pylist() == ["E7"]


def test_level_lookup_nanosecond_timestamp_keys(tmp_path: Path) -> None:
    """File key bounds keep nanoseconds: a file whose max key is 1 ns above the asked key is read."""
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cat.create_table("db.ts", Schema.of(parse_columns("k TIMESTAMP(9) NOT NULL, v STRING"), primary_keys=("k",),
                                        options={"bucket": "1"}))
    t = cat.get_table("db.ts")
    base = 1_700_000_000_000_000_000
    keys = pa.array([base + 1, base + 1001], pa.timestamp("ns"))
    f = write_level(t, pa.table({"k": keys, "v": ["x", "y"],
                                 "_SEQUENCE_NUMBER": pa.array([0, 1], pa.int64()),
                                 "_VALUE_KIND": pa.array([0, 0], pa.int8())}), 3)
    lk = LevelLookup(t, b"", 0, f, 1, ["k"], ["k", "v"])
    got = lk.lookup(pa.table({"k": pa.array([base + 1001], pa.timestamp("ns"))}))
    assert got is not None and got.column("v").to_pylist() == ["y"]


# ---------------------------------------------------------------------------- property: per-key reference


def _reference(chunk: list[dict[str, Any]], above: dict[int, tuple[int, int, int]], engine: str,
               row_dedup: bool) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """Java's LookupChangelogMergeFunctionWrapper, key by key, in plain Python.

    ``above``: key -> (level, v, seq) of its record on the levels above the output level."""
    out, log = [], []
    for k in sorted({r["id"] for r in chunk}):
        recs = sorted((r for r in chunk if r["id"] == k), key=lambda r: r["_SEQUENCE_NUMBER"])
        high = [r for r in recs if r["_LEVEL"] > 0]
        cands = [r for r in recs if r["_LEVEL"] == 0]
        hl = min(high, key=lambda r: (r["_LEVEL"], -r["_SEQUENCE_NUMBER"])) if high else None
        if hl is None and k in above:
            lv, v, seq = above[k]
            hl = {"id": k, "v": v, "_SEQUENCE_NUMBER": seq, "_VALUE_KIND": 0, "_LEVEL": lv}
        merged_in = sorted(cands + ([hl] if hl else []), key=lambda r: r["_SEQUENCE_NUMBER"])
        last = merged_in[-1]
        if engine == "deduplicate":
            res = (last["_VALUE_KIND"], k, last["v"], last["_SEQUENCE_NUMBER"])
        else:  # sum, inserts only
            res = (0, k, sum(r["v"] for r in merged_in), last["_SEQUENCE_NUMBER"])
        out.append(res)
        if not cands:
            continue
        before = hl if hl is not None and hl["_VALUE_KIND"] in (0, 2) else None
        after_add = res[0] in (0, 2)
        if before is None:
            if after_add:
                log.append((0, k, res[2], res[3]))
        elif not after_add:
            log.append((3, k, before["v"], before["_SEQUENCE_NUMBER"]))
        elif not row_dedup or before["v"] != res[2]:
            log += [(1, k, before["v"], before["_SEQUENCE_NUMBER"]), (2, k, res[2], res[3])]
    return out, log


@pytest.mark.parametrize("engine,row_dedup", [("deduplicate", False), ("deduplicate", True), ("aggregation", False)])
def test_lookup_merge_matches_per_key_reference(tmp_path: Path, engine: str, row_dedup: bool) -> None:
    opts = {"changelog-producer": "lookup", "changelog-producer.row-deduplicate": str(row_dedup).lower()}
    if engine == "aggregation":
        opts.update({"merge-engine": "aggregation", "fields.v.aggregate-function": "sum"})
    t = make(tmp_path, "id INT NOT NULL, v BIGINT", **opts)
    rng = np.random.default_rng(7 + row_dedup)
    # levels 4 and 5 outside the rewrite (output level 3); each key at most once per level
    above: dict[int, tuple[int, int, int]] = {}
    files = []
    for level in (5, 4):
        ids = sorted(rng.choice(300, 120, replace=False).tolist())
        vals = rng.integers(0, 4, len(ids)).tolist()
        seq0 = 0 if level == 5 else 1000
        files += write_level(t, recs(ids, vals, seq0, vtype=pa.int64()), level)
        for j, (i, v) in enumerate(zip(ids, vals, strict=True)):
            if level == 4 or i not in above:
                above[i] = (level, v, seq0 + j)
    lk = LevelLookup(t, b"", 0, files, 4, ["id"], ["id", "v"])
    m = LookupMerger(t.schema, t.options, lk, None, produce_changelog=True)
    seq = 5000
    all_log: list[tuple[Any, ...]] = []
    for lo in range(0, 300, 60):  # ascending chunks of complete keys
        rows = []
        for _ in range(80):
            k = int(rng.integers(lo, lo + 60))
            level = int(rng.choice([0, 0, 0, 1, 2, 3]))
            kind = 3 if engine == "deduplicate" and rng.random() < 0.15 else 0
            rows.append({"id": k, "v": int(rng.integers(0, 4)), "_SEQUENCE_NUMBER": seq if level == 0 else seq - 4000,
                         "_VALUE_KIND": kind, "_LEVEL": level})
            seq += 1
        # a key has at most one record per level >= 1 (one sorted run per level)
        seen: set[tuple[int, int]] = set()
        rows = [r for r in rows if r["_LEVEL"] == 0 or not ((r["id"], r["_LEVEL"]) in seen or seen.add((r["id"], r["_LEVEL"])))]
        chunk = pa.table({"id": pa.array([r["id"] for r in rows], pa.int32()),
                          "v": pa.array([r["v"] for r in rows], pa.int64()),
                          "_SEQUENCE_NUMBER": pa.array([r["_SEQUENCE_NUMBER"] for r in rows], pa.int64()),
                          "_VALUE_KIND": pa.array([r["_VALUE_KIND"] for r in rows], pa.int8()),
                          "_LEVEL": pa.array([r["_LEVEL"] for r in rows], pa.int32())})
        res = m.merge(chunk)
        out = [(r["_VALUE_KIND"], r["id"], r["v"], r["_SEQUENCE_NUMBER"]) for r in res.merged.to_pylist()]
        log = [] if res.changelog is None else [
            (r["_VALUE_KIND"], r["id"], r["v"], r["_SEQUENCE_NUMBER"]) for r in res.changelog.to_pylist()]
        ref_out, ref_log = _reference(rows, above, engine, row_dedup)
        assert out == ref_out
        assert log == ref_log  # same records in the same order (-U before +U, key order)
        all_log += log
    kinds = {k for k, *_ in all_log}
    assert {0, 1, 2} <= kinds and (engine != "deduplicate" or 3 in kinds)
