"""core/mergetree/{levels,compact_strategy}.py: Java's UniversalCompactionTest cases, Levels, IntervalPartition."""

from __future__ import annotations

from typing import Any

import pytest

from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import IntType
from paimon_cli.core.errors import CorruptMetadata
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta
from paimon_cli.core.mergetree.compact_strategy import (
    FILE_REWRITE,
    ForceUpLevel0Compaction,
    UniversalCompaction,
    drop_delete,
    lookup_mode,
    pick_full_compaction,
    pick_unit,
    strategy_for,
)
from paimon_cli.core.mergetree.levels import Levels, LevelSortedRun, SortedRun, interval_partition, key_function
from paimon_cli.core.schema.options import CoreOptions

KEY = key_function([IntType(nullable=False)])
_n = [0]


def file(size: int, level: int = 0, lo: int = 0, hi: int = 0, max_seq: int = 0, min_seq: int = 0,
         name: str | None = None, deletes: int | None = 0) -> DataFileMeta:
    _n[0] += 1
    return DataFileMeta(
        file_name=name or f"f{_n[0]}", file_size=size, row_count=1,
        min_key=binary_row.serialize([lo], [IntType(nullable=False)]),
        max_key=binary_row.serialize([hi], [IntType(nullable=False)]),
        key_stats=EMPTY_STATS, value_stats=EMPTY_STATS, min_sequence_number=min_seq,
        max_sequence_number=max_seq, schema_id=0, level=level, creation_time=0, delete_row_count=deletes,
    )


def level(lvl: int, size: int) -> LevelSortedRun:
    return LevelSortedRun(lvl, SortedRun((file(size, lvl),)))


def level0(*sizes: int) -> list[LevelSortedRun]:
    return [level(0, s) for s in sizes]


def sizes_of(p: Any) -> list[int]:
    return [f.file_size for f in p.files]


def test_output_level() -> None:
    c = UniversalCompaction(25, 1, 3)
    runs = [level(lv, 1) for lv in (0, 0, 1, 3, 4)]
    assert [c.create_unit(runs, 5, n, "x").output_level for n in (1, 2, 3, 4, 5)] == [1, 1, 2, 3, 5]


def test_pick() -> None:
    c = UniversalCompaction(25, 1, 3)
    assert sizes_of(c.pick(3, level0(1, 2, 3, 3))) == [1, 2, 3, 3]  # size amplification
    p = c.pick(4, [level(0, 1), level(1, 1), level(2, 1), level(3, 50)])
    assert sizes_of(p) == [1, 1, 1] and p.reason == "size-ratio"
    p = c.pick(4, [level(0, 1), level(1, 2), level(2, 3), level(3, 50)])
    assert sizes_of(p) == [1, 2, 3]  # file num, extended by size ratio


def test_no_output_level0() -> None:
    c = UniversalCompaction(25, 1, 3)
    assert sizes_of(c.pick(3, [level(0, 1), level(0, 1), level(1, 1), level(2, 50)])) == [1, 1, 1]
    assert sizes_of(c.pick(3, [level(0, 1), level(0, 2), level(1, 3), level(2, 50)])) == [1, 2, 3]


def test_extreme_case_no_output_level0() -> None:
    c = UniversalCompaction(200, 1, 5)
    p = c.pick(6, level0(1, 1, 1, 1024, 1024 * 1024))
    assert sizes_of(p) == [1, 1, 1, 1024, 1024 * 1024] and p.output_level == 5


def _append_and_pick_amp(c: UniversalCompaction, sizes: list[int]) -> list[int]:
    sizes = [1] + sizes
    u = c.pick_for_size_amp(3, level0(*sizes))
    return [sum(sizes_of(u))] if u is not None else sizes


def test_size_amplification() -> None:
    c = UniversalCompaction(25, 0, 1)
    sizes = [1]
    expected = [[2], [3], [4], [1, 4], [6], [1, 6], [8], [1, 8], [1, 1, 8], [11], [1, 11], [1, 1, 11], [14],
                [1, 14], [1, 1, 14], [1, 1, 1, 14], [18]]
    for want in expected:
        sizes = _append_and_pick_amp(c, sizes)
        assert sizes == want


def _pick_ratio(c: UniversalCompaction, sizes: list[int]) -> list[int]:
    runs = [level(i, s) for i, s in enumerate(sizes)]
    u = c.pick_for_size_ratio(len(sizes), runs)
    if u is None:
        return sizes
    compact = sizes_of(u)
    rest = list(sizes)
    for s in compact:
        rest.remove(s)
    return [sum(compact)] + rest


def test_size_ratio() -> None:
    c = UniversalCompaction(25, 1, 5)
    sizes = [1, 1, 1, 1]
    expected = [[5], [1, 5], [1, 1, 5], [1, 1, 1, 5], [4, 5], [1, 4, 5], [1, 1, 4, 5], [3, 4, 5], [1, 3, 4, 5],
                [2, 3, 4, 5], [1, 2, 3, 4, 5], [16], [1, 16], [1, 1, 16], [1, 1, 1, 16], [4, 16], [1, 4, 16],
                [1, 1, 4, 16], [3, 4, 16], [1, 3, 4, 16], [2, 3, 4, 16], [1, 2, 3, 4, 16], [11, 16]]
    for want in expected:
        sizes = _pick_ratio(c, [1] + sizes)
        assert sizes == want


def test_size_ratio_threshold() -> None:
    assert _pick_ratio(UniversalCompaction(25, 10, 2), [8, 9, 10]) == [8, 9, 10]
    assert _pick_ratio(UniversalCompaction(25, 20, 2), [8, 9, 10]) == [27]


def test_lookup_force_up_level0() -> None:
    c = ForceUpLevel0Compaction(UniversalCompaction(25, 1, 3))
    p = c.pick(3, level0(1, 2, 2, 2))
    assert sizes_of(p) == [1, 2, 2, 2] and p.output_level == 2
    p = c.pick(3, [level(0, 1), level(1, 2), level(2, 2)])
    assert sizes_of(p) == [1, 2, 2] and p.output_level == 2
    p = c.pick(3, [level(0, 1), level(2, 2)])
    assert sizes_of(p) == [1] and p.output_level == 1
    # gentle with an interval above one pick: a fresh writer skips the force-up
    assert ForceUpLevel0Compaction(UniversalCompaction(25, 1, 3), 6).pick(3, [level(0, 1), level(2, 2)]) is None


def test_early_full_compaction_thresholds() -> None:
    c = UniversalCompaction(200, 1, 5, total_size_threshold=100)
    p = c.pick(6, [level(0, 1), level(5, 50)])
    assert p.output_level == 5 and p.reason == "total-size-threshold"
    c = UniversalCompaction(200, 1, 5, incremental_size_threshold=10)
    assert c.pick(6, [level(0, 5), level(5, 50)]) is None
    assert c.pick(6, [level(0, 11), level(5, 50)]).reason == "incremental-size-threshold"
    c = UniversalCompaction(200, 1, 5, full_compaction_interval_millis=1000)
    assert c.pick(6, [level(0, 1), level(5, 50)]).reason == "optimization-interval"  # max-level file is old
    assert c.pick(6, [level(5, 50)]) is None


def test_full_compaction_pick() -> None:
    assert pick_full_compaction(6, []) is None
    top = [LevelSortedRun(5, SortedRun((file(5, 5, 0, 1, name="a"), file(5, 5, 2, 3, name="b"))))]
    assert pick_full_compaction(6, top) is None
    p = pick_full_compaction(6, top, dv_files={"b"})
    assert [f.file_name for f in p.files] == ["b"] and p.reason == FILE_REWRITE and p.output_level == 5
    p = pick_full_compaction(6, [level(0, 1)] + top)
    assert p.output_level == 5 and len(p.files) == 3


def test_levels_order_and_runs() -> None:
    files = [file(10, 0, 0, 9, max_seq=5, name="a"), file(10, 0, 0, 9, max_seq=7, name="b"),
             file(10, 0, 0, 9, max_seq=7, min_seq=3, name="c"),
             file(10, 2, 10, 19, name="d"), file(10, 2, 0, 9, name="e"), file(10, 4, 0, 50, name="f")]
    lv = Levels(files, 3, KEY)  # num-levels raised to cover level 4
    assert lv.number_of_levels == 5 and lv.max_level == 4
    runs = lv.level_sorted_runs()
    assert [(r.level, [f.file_name for f in r.run.files]) for r in runs] == [
        (0, ["b"]), (0, ["c"]), (0, ["a"]), (2, ["e", "d"]), (4, ["f"])]
    assert lv.number_of_sorted_runs() == 5 and lv.non_empty_highest_level() == 4
    assert Levels([], 6, KEY).non_empty_highest_level() == -1
    with pytest.raises(CorruptMetadata):
        Levels([file(1, 1, 0, 5), file(1, 1, 5, 9)], 6, KEY)
    lv.update([files[0]], [file(3, 1, 0, 9, name="g")])
    assert [r.level for r in lv.level_sorted_runs()] == [0, 0, 1, 2, 4]


def test_interval_partition() -> None:
    fs = [file(1, 0, 0, 5, name="a"), file(1, 0, 3, 8, name="b"), file(1, 0, 6, 9, name="c"),
          file(1, 0, 20, 30, name="d"), file(1, 0, 31, 40, name="e"), file(1, 0, 35, 36, name="f")]
    sections = interval_partition(fs, KEY)
    names = [[[f.file_name for f in r.files] for r in sec] for sec in sections]
    assert names == [[["a", "c"], ["b"]], [["d"]], [["e"], ["f"]]]


def test_pick_unit_and_drop_delete() -> None:
    opts = CoreOptions({"num-sorted-run.compaction-trigger": "3"})
    files = [file(1, 0, 0, 9, max_seq=3), file(1, 0, 0, 9, max_seq=2), file(1, 0, 0, 9, max_seq=1),
             file(100, 3, 0, 9)]
    lv = Levels(files, opts.num_levels, KEY)
    u = pick_unit(opts, lv, False, partition=binary_row.EMPTY_ROW, bucket=2, total_buckets=4)
    assert u is not None and u.kind == "merge-tree" and u.bucket == 2 and u.total_buckets == 4
    assert len(u.files) == 3 and u.output_level == 2 and not u.drop_delete  # level 3 holds older data
    assert u.max_level == 3 and len(u.bucket_files) == 4
    full = pick_unit(opts, lv, True)
    assert full.output_level == 3 and full.drop_delete and full.full and len(full.files) == 4
    assert drop_delete(CoreOptions({"deletion-vectors.enabled": "true"}), lv, 1)
    assert not drop_delete(opts, lv, 0)
    # nothing to do: a single run already on its level
    assert pick_unit(opts, Levels([file(1, 3, 0, 9)], 4, KEY), False) is None


def test_lookup_mode_and_strategy() -> None:
    assert not lookup_mode(CoreOptions({}))
    for o in ({"deletion-vectors.enabled": "true"}, {"changelog-producer": "lookup"},
              {"merge-engine": "first-row"}, {"force-lookup": "true"}):
        assert lookup_mode(CoreOptions(o))
        assert isinstance(strategy_for(CoreOptions(o)), ForceUpLevel0Compaction)
    assert isinstance(strategy_for(CoreOptions({})), UniversalCompaction)
    assert isinstance(strategy_for(CoreOptions({"compaction.force-up-level-0": "true"})), ForceUpLevel0Compaction)
