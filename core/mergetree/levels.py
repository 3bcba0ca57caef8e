"""The LSM tree of one bucket: level 0 (one sorted run per file) and levels >= 1 (one run each).

Mirrors Java's ``mergetree/Levels``, ``SortedRun``, ``LevelSortedRun`` and
``compact/IntervalPartition``; pure metadata, no I/O. Keys are compared as Java's key
comparator does, on the deserialized ``_MIN_KEY``/``_MAX_KEY`` rows (trimmed primary key,
never NULL): strings by code point = UTF-8 byte order, bytes unsigned.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ..data import binary_row
from ..data.types import DoubleType, FloatType
from ..errors import CorruptMetadata, InvalidInput

if TYPE_CHECKING:
    from ..data.types import DataType
    from ..manifest.manifest import DataFileMeta

KeyFn = Callable[[bytes], Any]


def key_function(key_types: list[DataType]) -> KeyFn:
    """``serialized key row -> sortable tuple`` (cached per distinct bytes). Float components
    become ``(is_nan, value)``: NaN sorts last and equals NaN, -0.0 == 0.0, as the key
    comparator (and :mod:`core.mergetree.sort_merge`) order them -- Python's NaN compares false."""
    cache: dict[bytes, Any] = {}
    floats = [isinstance(t, (FloatType, DoubleType)) for t in key_types]

    def part(v: Any, is_float: bool) -> Any:
        if v is None:
            return (0, 0)
        if is_float:
            return (1, (1, 0.0) if v != v else (0, v))
        return (1, v)

    def key(data: bytes) -> Any:
        k = cache.get(data)
        if k is None:
            try:
                values = binary_row.deserialize(data, key_types)
            except InvalidInput as e:
                raise CorruptMetadata("data file", f"key row does not match the primary key: {e}") from e
            k = cache[data] = tuple(part(v, f) for v, f in zip(values, floats, strict=True))
        return k

    return key


@dataclass(frozen=True)
class SortedRun:
    """Files with non-overlapping key ranges, in key order."""

    files: tuple[DataFileMeta, ...]

    @property
    def total_size(self) -> int:
        return sum(f.file_size for f in self.files)

    @property
    def is_empty(self) -> bool:
        return not self.files

    @staticmethod
    def from_unsorted(files: Iterable[DataFileMeta], key: KeyFn) -> SortedRun:
        """Sort by min key and check that ranges do not overlap (Java ``validate``)."""
        fs = sorted(files, key=lambda f: key(f.min_key))
        for a, b in pairwise(fs):
            if not key(b.min_key) > key(a.max_key):
                raise CorruptMetadata(
                    b.file_name, f"key range overlaps {a.file_name} on level {b.level}; a level >= 1 must be one sorted run")
        return SortedRun(tuple(fs))


@dataclass(frozen=True)
class LevelSortedRun:
    level: int
    run: SortedRun


def _level0_order(f: DataFileMeta) -> tuple[Any, ...]:
    """Java 1.3+ level-0 order: newest (max sequence) first, then min sequence, creation
    time and file name (0.9 went straight to the name; both only break ties)."""
    return (-f.max_sequence_number, f.min_sequence_number, f.creation_time or 0, f.file_name)


class Levels:
    """The files of one bucket by level, as Java's ``Levels`` holds them.

    ``num_levels`` is raised to cover the highest level a file is on (as Java restores).
    """

    def __init__(self, files: Iterable[DataFileMeta], num_levels: int, key: KeyFn) -> None:
        files = list(files)
        n = max(num_levels, max((f.level for f in files), default=-1) + 1)
        if n < 2:
            raise InvalidInput("num-levels must be at least 2")
        self.key = key
        self.level0: list[DataFileMeta] = sorted((f for f in files if f.level == 0), key=_level0_order)
        by_level: dict[int, list[DataFileMeta]] = {}
        for f in files:
            if f.level > 0:
                by_level.setdefault(f.level, []).append(f)
        self.levels: list[SortedRun] = [
            SortedRun.from_unsorted(by_level.get(i, []), key) for i in range(1, n)
        ]

    @property
    def number_of_levels(self) -> int:
        return len(self.levels) + 1

    @property
    def max_level(self) -> int:
        return len(self.levels)

    def run_of_level(self, level: int) -> SortedRun:
        if level <= 0:
            raise InvalidInput("level 0 does not have one single sorted run")
        return self.levels[level - 1]

    def number_of_sorted_runs(self) -> int:
        return len(self.level0) + sum(1 for r in self.levels if not r.is_empty)

    def non_empty_highest_level(self) -> int:
        """The highest non-empty level, or -1 when every level is empty."""
        for i in range(len(self.levels) - 1, -1, -1):
            if not self.levels[i].is_empty:
                return i + 1
        return 0 if self.level0 else -1

    def level_sorted_runs(self) -> list[LevelSortedRun]:
        """Newest to oldest: each level-0 file, then levels 1.. (non-empty ones)."""
        runs = [LevelSortedRun(0, SortedRun((f,))) for f in self.level0]
        runs += [LevelSortedRun(i + 1, r) for i, r in enumerate(self.levels) if not r.is_empty]
        return runs

    def all_files(self) -> list[DataFileMeta]:
        return [f for r in self.level_sorted_runs() for f in r.run.files]

    def update(self, before: Iterable[DataFileMeta], after: Iterable[DataFileMeta]) -> None:
        """Apply a compaction result (files leave their level, new ones join theirs)."""
        before = list(before)
        after = list(after)
        gone0 = {f.file_name for f in before if f.level == 0}
        self.level0 = sorted([f for f in self.level0 if f.file_name not in gone0]
                             + [f for f in after if f.level == 0], key=_level0_order)
        for lvl in range(1, self.number_of_levels):
            b = {f.file_name for f in before if f.level == lvl}
            a = [f for f in after if f.level == lvl]
            if not b and not a:
                continue
            keep = [f for f in self.levels[lvl - 1].files if f.file_name not in b]
            self.levels[lvl - 1] = SortedRun.from_unsorted(keep + a, self.key)


def interval_partition(files: Iterable[DataFileMeta], key: KeyFn) -> list[list[SortedRun]]:
    """Java ``IntervalPartition``: sections whose key intervals do not overlap, each split into
    the minimum number of sorted runs (files sorted by (min key, max key); a file joins the
    run whose last max key is smallest when it starts after it)."""
    fs = sorted(files, key=lambda f: (key(f.min_key), key(f.max_key)))
    result: list[list[SortedRun]] = []
    section: list[DataFileMeta] = []
    bound: Any = None
    for f in fs:
        if section and key(f.min_key) > bound:
            result.append(_partition_section(section, key))
            section = []
            bound = None
        section.append(f)
        if bound is None or key(f.max_key) > bound:
            bound = key(f.max_key)
    if section:
        result.append(_partition_section(section, key))
    return result


def _partition_section(files: list[DataFileMeta], key: KeyFn) -> list[SortedRun]:
    heap: list[tuple[Any, int, list[DataFileMeta]]] = []
    counter = 0
    heapq.heappush(heap, (key(files[0].max_key), counter, [files[0]]))
    for f in files[1:]:
        top_key, c, top = heapq.heappop(heap)
        if key(f.min_key) > top_key:
            top.append(f)
            heapq.heappush(heap, (key(f.max_key), c, top))
        else:
            counter += 1
            heapq.heappush(heap, (key(f.max_key), counter, [f]))
            heapq.heappush(heap, (top_key, c, top))
    return [SortedRun(tuple(run)) for _, _, run in sorted(heap, key=lambda x: x[1])]


__all__ = ["KeyFn", "LevelSortedRun", "Levels", "SortedRun", "interval_partition", "key_function"]
