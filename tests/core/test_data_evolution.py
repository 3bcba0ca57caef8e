"""Row-id range groups and logical row counts of data-evolution files (metadata only)."""

from __future__ import annotations

import pytest

from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta
from paimon_cli.core.operation.data_evolution import logical_row_count, row_range_groups


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


def test_overlapping_ranges_chain_into_one_group() -> None:
    groups = row_range_groups([meta("a", 0, 10), meta("b", 5, 10), meta("c", 14, 2), meta("d", 16, 1)])
    assert [[f.file_name for f in g] for g in groups] == [["a", "b", "c"], ["d"]]


def test_file_without_first_row_id_is_refused_by_name() -> None:
    with pytest.raises(NotYetSupported, match="_FIRST_ROW_ID"):
        row_range_groups([meta("x", None, 3)])
