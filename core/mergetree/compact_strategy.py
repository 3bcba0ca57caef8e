"""Which files of a bucket to compact, and to which level: Java's compaction strategies.

Pure functions over :class:`core.mergetree.levels.Levels` (no I/O):

* :class:`UniversalCompaction` (Java ``UniversalCompaction`` 0.9 .. 1.4: early full
  compaction, size amplification, size ratio, run count) -- master's "level-1 inflation"
  change (#9185) is not in any release the harness runs and is not applied;
* :class:`ForceUpLevel0Compaction` (lookup mode: when universal picks nothing, all level-0
  files go up; ``lookup-compact=gentle`` only every ``lookup-compact.max-interval`` picks);
* :func:`pick_full_compaction` (``CompactStrategy.pickFullCompaction``, 1.x: a lone max-level
  run is rewritten file by file only where a file has a deletion vector or
  ``compaction.force-rewrite-all-files``);
* :func:`pick_unit` builds the :class:`core.mergetree.compact_unit.CompactUnit`, with
  ``drop_delete`` as ``MergeTreeCompactManager`` decides it.

A CLI compaction is a fresh Java job: strategies keep no state between runs, so the
interval-based early full compaction fires on the first pick (``lastFullCompaction`` is
null in a new Java writer too).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from .compact_unit import MERGE_TREE, CompactUnit
from .levels import Levels, LevelSortedRun

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexFileMeta
    from ..manifest.manifest import DataFileMeta
    from ..schema.options import CoreOptions

FILE_REWRITE = "file-rewrite"  # CompactUnit.reason of a FileRewriteCompactTask unit (1.x)


@dataclass(frozen=True)
class Pick:
    """Java's ``CompactUnit``: the files (runs flattened, newest first) and the output level."""

    output_level: int
    files: tuple[DataFileMeta, ...]
    reason: str
    file_rewrite: bool = False

    @staticmethod
    def from_runs(output_level: int, runs: list[LevelSortedRun], reason: str) -> Pick:
        return Pick(output_level, tuple(f for r in runs for f in r.run.files), reason)


class UniversalCompaction:
    """RocksDB-style universal compaction as Paimon 0.9 .. 1.4 picks it."""

    def __init__(
        self,
        max_size_amp: int,
        size_ratio: int,
        num_run_compaction_trigger: int,
        *,
        full_compaction_interval_millis: int | None = None,
        total_size_threshold: int | None = None,
        incremental_size_threshold: int | None = None,
        offpeak_ratio: int = 0,
    ) -> None:
        self.max_size_amp = max_size_amp
        self.size_ratio = size_ratio
        self.num_run_compaction_trigger = num_run_compaction_trigger
        self.full_compaction_interval_millis = full_compaction_interval_millis
        self.total_size_threshold = total_size_threshold
        self.incremental_size_threshold = incremental_size_threshold
        self.offpeak_ratio = offpeak_ratio

    @staticmethod
    def from_options(options: CoreOptions) -> UniversalCompaction:
        interval = options.get_duration_millis("compaction.optimization-interval")
        total = options.get_memory_bytes("compaction.total-size-threshold")
        incr = options.get_memory_bytes("compaction.incremental-size-threshold")
        return UniversalCompaction(
            options.compaction_max_size_amplification_percent,
            options.compaction_size_ratio,
            options.num_sorted_run_compaction_trigger,
            full_compaction_interval_millis=interval,
            total_size_threshold=total,
            incremental_size_threshold=incr,
            offpeak_ratio=_offpeak_ratio(options),
        )

    def pick(self, num_levels: int, runs: list[LevelSortedRun]) -> Pick | None:
        max_level = num_levels - 1
        early = self._early_full(num_levels, runs)
        if early is not None:
            return early
        unit = self.pick_for_size_amp(max_level, runs)
        if unit is not None:
            return unit
        unit = self.pick_for_size_ratio(max_level, runs)
        if unit is not None:
            return unit
        if len(runs) > self.num_run_compaction_trigger:
            candidate_count = len(runs) - self.num_run_compaction_trigger + 1
            return self._pick_for_size_ratio(max_level, runs, candidate_count, False, "run-count")
        return None

    def _early_full(self, num_levels: int, runs: list[LevelSortedRun]) -> Pick | None:
        """Java 1.4 ``EarlyFullCompaction.tryFullCompact`` (0.9: the optimization interval only)."""
        from .file_writer import creation_time_millis
        if len(runs) <= 1:
            return None
        max_level = num_levels - 1
        if self.full_compaction_interval_millis is not None:
            # Java 1.x restores the last full compaction time from the max-level files'
            # creation time (0.9: unknown, so the first pick of a writer is a full one)
            last = max((f.creation_time or 0 for r in runs if r.level == max_level for f in r.run.files),
                       default=None)
            if last is None or creation_time_millis() - last > self.full_compaction_interval_millis:
                return Pick.from_runs(max_level, runs, "optimization-interval")
        if self.total_size_threshold is not None:
            if sum(r.run.total_size for r in runs) < self.total_size_threshold:
                return Pick.from_runs(max_level, runs, "total-size-threshold")
        if self.incremental_size_threshold is not None:
            incr = sum(r.run.total_size for r in runs if r.level != max_level)
            if incr > self.incremental_size_threshold:
                return Pick.from_runs(max_level, runs, "incremental-size-threshold")
        return None

    def pick_for_size_amp(self, max_level: int, runs: list[LevelSortedRun]) -> Pick | None:
        if len(runs) < self.num_run_compaction_trigger:
            return None
        candidate = sum(r.run.total_size for r in runs[:-1])
        earliest = runs[-1].run.total_size
        if candidate * 100 > self.max_size_amp * earliest:
            return Pick.from_runs(max_level, runs, "size-amplification")
        return None

    def pick_for_size_ratio(self, max_level: int, runs: list[LevelSortedRun]) -> Pick | None:
        if len(runs) < self.num_run_compaction_trigger:
            return None
        return self._pick_for_size_ratio(max_level, runs, 1, False, "size-ratio")

    def _pick_for_size_ratio(self, max_level: int, runs: list[LevelSortedRun], candidate_count: int,
                             force_pick: bool, reason: str) -> Pick | None:
        candidate_size = sum(r.run.total_size for r in runs[:candidate_count])
        for nxt in runs[candidate_count:]:
            if candidate_size * (100.0 + self.size_ratio + self.offpeak_ratio) / 100.0 < nxt.run.total_size:
                break
            candidate_size += nxt.run.total_size
            candidate_count += 1
        if force_pick or candidate_count > 1:
            return self.create_unit(runs, max_level, candidate_count, reason)
        return None

    def create_unit(self, runs: list[LevelSortedRun], max_level: int, run_count: int, reason: str) -> Pick:
        if run_count == len(runs):
            output_level = max_level
        else:
            output_level = max(0, runs[run_count].level - 1)
        if output_level == 0:  # never output to level 0: pull in runs up to a non-zero level
            for nxt in runs[run_count:]:
                run_count += 1
                if nxt.level != 0:
                    output_level = nxt.level
                    break
        if run_count == len(runs):
            output_level = max_level
        return Pick.from_runs(output_level, runs[:run_count], reason)

    def force_pick_l0(self, num_levels: int, runs: list[LevelSortedRun]) -> Pick | None:
        count = 0
        for r in runs:
            if r.level > 0:
                break
            count += 1
        if count == 0:
            return None
        return self._pick_for_size_ratio(num_levels - 1, runs, count, True, "force-up-level0")


class ForceUpLevel0Compaction:
    """Lookup mode: universal first, else every level-0 file goes up.

    ``max_compact_interval`` (``lookup-compact=gentle``): Java counts picks per writer and
    forces level 0 up every N-th; a CLI run is one pick of a fresh writer, so with an
    interval above 1 the force-up is skipped (as Java's first N-1 picks are).
    """

    def __init__(self, universal: UniversalCompaction, max_compact_interval: int | None = None) -> None:
        self.universal = universal
        self.max_compact_interval = max_compact_interval

    def pick(self, num_levels: int, runs: list[LevelSortedRun]) -> Pick | None:
        p = self.universal.pick(num_levels, runs)
        if p is not None:
            return p
        if self.max_compact_interval is not None and self.max_compact_interval > 1:
            return None
        return self.universal.force_pick_l0(num_levels, runs)


def pick_full_compaction(
    num_levels: int,
    runs: list[LevelSortedRun],
    dv_files: Iterable[str] = (),
    force_rewrite_all_files: bool = False,
) -> Pick | None:
    """Everything to the max level; a lone max-level run only for files with a deletion
    vector (or all of them with ``compaction.force-rewrite-all-files``), rewritten one by one."""
    max_level = num_levels - 1
    if not runs:
        return None
    if len(runs) == 1 and runs[0].level == max_level:
        dvs = set(dv_files)
        files = tuple(f for f in runs[0].run.files if force_rewrite_all_files or f.file_name in dvs)
        if not files:
            return None
        return Pick(max_level, files, FILE_REWRITE, file_rewrite=True)
    return Pick.from_runs(max_level, runs, "full")


def lookup_mode(options: CoreOptions) -> bool:
    """Java ``needLookup``: DVs, ``changelog-producer=lookup``, first-row, ``force-lookup``."""
    return (
        options.deletion_vectors_enabled
        or options.changelog_producer == "lookup"
        or options.merge_engine == "first-row"
        or options.get_bool("force-lookup", False)
    )


def strategy_for(options: CoreOptions) -> UniversalCompaction | ForceUpLevel0Compaction:
    """``MergeTreeCompactManagerFactory`` / ``KeyValueFileStoreWrite.createCompactStrategy``."""
    universal = UniversalCompaction.from_options(options)
    if lookup_mode(options) or options.get_bool("compaction.force-up-level-0", False):
        interval = None
        if lookup_mode(options) and (options.get("lookup-compact") or "RADICAL").upper() == "GENTLE":
            interval = options.get_int("lookup-compact.max-interval")
            if interval is None:
                interval = options.num_sorted_run_compaction_trigger * 2
            interval = max(options.num_sorted_run_compaction_trigger, interval)
        return ForceUpLevel0Compaction(universal, interval)
    return universal


def pick(options: CoreOptions, levels: Levels, full: bool, dv_files: Iterable[str] = ()) -> Pick | None:
    """What the bucket's compact manager would submit now (None: nothing to do)."""
    runs = levels.level_sorted_runs()
    if full:
        return pick_full_compaction(levels.number_of_levels, runs, dv_files,
                                    options.get_bool("compaction.force-rewrite-all-files", False))
    p = strategy_for(options).pick(levels.number_of_levels, runs)
    if p is None or not p.files:
        return None
    if len(p.files) == 1 and p.files[0].level == p.output_level:
        return None
    return p


def drop_delete(options: CoreOptions, levels: Levels, output_level: int) -> bool:
    """``MergeTreeCompactManager``: retractions may go only when nothing older can remain."""
    return output_level != 0 and (
        output_level >= levels.non_empty_highest_level() or options.deletion_vectors_enabled
    )


def pick_unit(
    options: CoreOptions,
    levels: Levels,
    full: bool,
    *,
    partition: bytes = b"",
    bucket: int = 0,
    total_buckets: int = 0,
    index_files: Iterable[IndexFileMeta] = (),
    dv_files: Iterable[str] = (),
) -> CompactUnit | None:
    """The merge-tree :class:`CompactUnit` for one bucket, or None when nothing is to compact.

    ``dv_files``: names of the bucket's data files that have a deletion vector (only used
    by full compaction of a lone max-level run).
    """
    p = pick(options, levels, full, dv_files)
    if p is None:
        return None
    return CompactUnit(
        kind=MERGE_TREE,
        partition=partition,
        bucket=bucket,
        total_buckets=total_buckets,
        files=p.files,
        output_level=p.output_level,
        drop_delete=drop_delete(options, levels, p.output_level),
        full=full,
        max_level=levels.max_level,
        bucket_files=tuple(levels.all_files()),
        index_files=tuple(index_files),
        reason=p.reason,
    )


def _offpeak_ratio(options: CoreOptions) -> int:
    """Java 1.x ``compaction.offpeak-ratio`` during ``compaction.offpeak.{start,end}.hour``."""
    import datetime as _dt

    start = options.get_int("compaction.offpeak.start.hour")
    end = options.get_int("compaction.offpeak.end.hour")
    ratio = options.get_int("compaction.offpeak-ratio") or 0
    if start is None or end is None or start < 0 or end < 0 or start == end or not ratio:
        return 0
    hour = _dt.datetime.now().hour
    inside = start <= hour < end if start < end else (hour >= start or hour < end)
    return ratio if inside else 0


__all__ = [
    "FILE_REWRITE",
    "ForceUpLevel0Compaction",
    "Pick",
    "UniversalCompaction",
    "drop_delete",
    "lookup_mode",
    "pick",
    "pick_full_compaction",
    "pick_unit",
    "strategy_for",
]
