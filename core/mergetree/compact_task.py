"""Execute one merge-tree CompactUnit: Java's ``MergeTreeCompactTask`` + ``MergeTreeCompactRewriter``.

``run_merge_tree_unit(table, unit)`` reads only the unit's files and writes new ones; it never
commits (the driver turns the :class:`UnitResult` into a COMPACT commit message). Semantics:

* the unit's files are split into *sections* of overlapping key ranges
  (:func:`core.mergetree.levels.interval_partition`);
* a section of several runs is merge-sorted and rewritten to the output level; a section that
  is one run is walked file by file: files smaller than ``compaction.small-file-ratio`` x
  ``target-file-size`` join the pending rewrite, a large file flushes the pending rewrite and is
  *upgraded* (same file, new level: DELETE then ADD of the same name) -- except a file with
  delete rows (or unknown delete count) going to the max level, which is rewritten. A file
  already on the output level is left alone first, as Java 0.9 .. 1.1 do. Java 1.2+
  (apache/paimon#5751) applies the delete rule first and so also rewrites a max-level file
  whose delete count is unknown (written before 0.8) or positive. We keep the 0.9 order:
  readers of every version treat an unknown count as "no deletes"
  (``MergeTreeSplitGenerator.withoutDeleteRow``), no Java version writes a max-level file
  with deletes (output to the max level always drops them, upgrades need a count of 0),
  so the 1.2+ rewrite changes nothing readers see. It would only rewrite big files that
  need no work, and give a file set that differs from the Java 0.9 peer;
* deviation from Java (all versions): before a LEVEL-0 file is upgraded, a recorded delete
  count of 0 or unknown is not trusted -- the file's ``_VALUE_KIND`` column (that column only)
  is read and, when it holds -U / -D records, the file is handled with its real count. Why:
  pypaimon 2.1 writes ``_DELETE_ROW_COUNT = 0`` for every file, retractions included; Java's
  rules would then upgrade such a file to the max level (where readers read files raw, see
  ``withoutDeleteRow``) or, with deletion vectors, to any level above 0 (DV readers never
  merge), and the retraction would show up as a row. With the real count Java's own rules
  apply: such a file is rewritten when going to the max level (deletes dropped) and, with
  deletion vectors, on every upgrade (``LookupMergeTreeCompactRewriter.upgradeStrategy``,
  deletes force-dropped); an upgrade that stays (merge-on-read, below the max level) keeps
  the file and records the real count in its new ADD entry, so readers merge it and a later
  max-level compaction rewrites it. Positive counts and files above level 0 are trusted as
  Java trusts them (ours and Java's writers count correctly, and a level-0 file only leaves
  level 0 through this check). Tables written by Java or by us never take the new path:
  their level-0 counts are exact, so the check finds nothing and the file set stays Java's;
* every pending rewrite goes through ONE rolling writer (Java concatenates the sections),
  output rolled at ``target-file-size``, sequence numbers kept, retractions dropped when
  ``unit.drop_delete``, ``_FILE_SOURCE`` = COMPACT;
* a ``file-rewrite`` unit (full compaction of a lone max-level run with deletion vectors, 1.x
  ``FileRewriteCompactTask``) rewrites each file on its own.

Package "lookup" (deletion vectors, lookup / full-compaction changelog, first-row) plugs in
through :func:`make_rewriter` -- see "Hook call sites" below.
"""

from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..format import data_file  # called through the module: tests spy on its readers
from ..format.arrow_schema import system_fields
from ..index.deletion_vectors import read_deletion_vectors
from ..index.index_paths import index_file_path
from ..io import paths
from ..manifest.index_manifest import DELETION_VECTORS_INDEX
from ..utils.interrupt import discard
from .compact_strategy import FILE_REWRITE, lookup_mode
from .compact_unit import CompactUnit, UnitResult
from .file_writer import RollingFileWriter, partition_dir_of, write_pipelined
from .key_groups import DELETE, UPDATE_BEFORE, VALUE_KIND
from .levels import Levels, SortedRun, interval_partition, key_function
from .sort_merge import MergeReader

if TYPE_CHECKING:
    from ..index.deletion_vectors import DeletionVector
    from ..manifest.index_manifest import IndexFileMeta
    from ..manifest.manifest import DataFileMeta
    from ..schema.options import CoreOptions
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable


@dataclass
class RewriteResult:
    """Java ``CompactResult``: files leaving (``before``), arriving (``after``), changelog files."""

    before: list[DataFileMeta] = field(default_factory=list)
    after: list[DataFileMeta] = field(default_factory=list)
    changelog: list[DataFileMeta] = field(default_factory=list)

    def merge(self, other: RewriteResult) -> None:
        self.before += other.before
        self.after += other.after
        self.changelog += other.changelog


@dataclass
class CompactContext:
    """Everything a rewriter needs about the unit being compacted (one per unit)."""

    table: FileStoreTable
    unit: CompactUnit
    schema: TableSchema
    options: CoreOptions
    partition_dir: str
    key: Any  # KeyFn: serialized key row -> sortable tuple
    levels: Levels  # the bucket's files at planning time (unit.bucket_files)
    deletion_vectors: dict[str, DeletionVector]  # data file name -> DV (the bucket's live DVs)
    written: list[str] = field(default_factory=list)  # every path created by this unit (abort)
    writers: list[RollingFileWriter] = field(default_factory=list)

    @property
    def max_level(self) -> int:
        return self.unit.max_level if self.unit.max_level else self.levels.max_level

    def new_writer(self, level: int, changelog: bool = False, **kwargs: Any) -> RollingFileWriter:
        """A rolling KV writer for this bucket (registered so the unit's abort removes its files)."""
        w = RollingFileWriter(self.table, self.unit.partition, self.unit.bucket, kind="kv", level=level,
                              schema=self.schema, options=self.options, changelog=changelog,
                              partition_dir=self.partition_dir, **kwargs)
        self.writers.append(w)
        return w

    def reader(self, runs: list[SortedRun], *, drop_delete: bool, levels: list[int] | None = None,
               with_raw: bool = False, merge_records: bool = True) -> MergeReader:
        """A bounded-memory merge over ``runs`` of this bucket (input DVs applied)."""
        return MergeReader(self.table, self.partition_dir, self.unit.bucket, [list(r.files) for r in runs],
                           levels=levels if levels is not None else [_run_level(r) for r in runs],
                           drop_delete=drop_delete, with_raw=with_raw, merge_records=merge_records,
                           deletion_vectors=self.deletion_vectors, schema=self.schema, options=self.options)

    def all_written(self) -> list[str]:
        out = list(self.written)
        for w in self.writers:
            out += [p for p in w.written if p not in out]
        return out

    def abort(self) -> None:
        for w in self.writers:
            w.abort()
        discard(self.table.file_io, self.written)


def _run_level(run: SortedRun) -> int:
    return run.files[0].level if run.files else 0


class MergeTreeRewriter:
    """Java ``MergeTreeCompactRewriter``: merge-sort sections into one rolling writer; upgrade = relevel."""

    def rewrite(self, ctx: CompactContext, output_level: int, drop_delete: bool,
                sections: list[list[SortedRun]]) -> RewriteResult:
        writer = ctx.new_writer(output_level)
        try:
            write_pipelined(writer, (chunk.merged for section in sections
                                     for chunk in ctx.reader(section, drop_delete=drop_delete)))
            after = writer.close()
        except BaseException:
            writer.abort()
            raise
        before = [f for section in sections for run in section for f in run.files]
        return RewriteResult(before, after)

    def upgrade(self, ctx: CompactContext, output_level: int, file: DataFileMeta) -> RewriteResult:
        return RewriteResult([file], [dataclasses.replace(file, level=output_level)])

    def finish(self, ctx: CompactContext, result: RewriteResult) -> tuple[list[IndexFileMeta], list[IndexFileMeta]]:
        """(new index files, deleted index files) of the unit; none without deletion vectors."""
        return [], []


# ------------------------------------------------------------------------------------------
# Hook call sites for the lookup rewriter (core/mergetree/lookup_rewriter.py)
# ------------------------------------------------------------------------------------------
#
# When the table needs lookup (deletion vectors, changelog-producer=lookup, first-row,
# force-lookup) or changelog-producer=full-compaction, the unit is executed with the
# rewriter returned by ``core.mergetree.lookup_rewriter.make_rewriter(ctx, default)`` where ``default``
# is a :class:`MergeTreeRewriter`. The returned object must provide the same three methods:
#
#   rewrite(ctx, output_level, drop_delete, sections) -> RewriteResult
#   upgrade(ctx, output_level, file) -> RewriteResult
#   finish(ctx, result) -> (new_index_files, deleted_index_files)   # DV index changes, once per unit
#
# ``ctx`` (:class:`CompactContext`) gives the unit, the bucket's Levels (``ctx.levels``), the
# live deletion vectors (``ctx.deletion_vectors``), writers (``ctx.new_writer(level,
# changelog=True)`` for changelog files) and merge readers (``ctx.reader(runs, with_raw=True)``
# yields each chunk's un-merged records annotated with run / level / file / row position).


def needs_hooks(options: CoreOptions) -> bool:
    return lookup_mode(options) or options.changelog_producer == "full-compaction"


def make_rewriter(ctx: CompactContext) -> Any:
    """The plain rewriter, or the lookup rewriter around it when the table needs it."""
    default = MergeTreeRewriter()
    if not needs_hooks(ctx.options):
        return default
    from .lookup_rewriter import make_rewriter as lookup_rewriter  # it builds on this module: a cycle at import

    return lookup_rewriter(ctx, default)


# ------------------------------------------------------------------------------------------
# The task
# ------------------------------------------------------------------------------------------


def min_file_size(options: CoreOptions) -> int:
    """Java ``compactionFileSize(true)``: files at least this big are upgraded, not rewritten."""
    target = options.target_file_size(True)
    if options.contains("compaction.small-file-ratio"):
        return int(target * float(options.get("compaction.small-file-ratio") or 0.7))
    return target // 10 * 7


def load_deletion_vectors(table: FileStoreTable, partition: bytes, bucket: int,
                          index_files: tuple[IndexFileMeta, ...] | list[IndexFileMeta]) -> dict[str, DeletionVector]:
    """Data file name -> DV from the bucket's DELETION_VECTORS index files."""
    out: dict[str, DeletionVector] = {}
    for f in index_files:
        if f.index_type != DELETION_VECTORS_INDEX or not f.dv_ranges:
            continue
        out.update(read_deletion_vectors(table.file_io, index_file_path(table, partition, bucket, f), f.dv_ranges))
    return out


def retraction_count(ctx: CompactContext, file: DataFileMeta) -> int:
    """-U / -D records in ``file``, from its ``_VALUE_KIND`` column alone (no other column is read)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    path = paths.data_file_path(ctx.table.data_root, ctx.partition_dir, ctx.unit.bucket, file.file_name,
                                file.external_path)
    retract = pa.array([UPDATE_BEFORE, DELETE], type=pa.int8())
    n = 0
    for batch in data_file.iter_data_file_batches(ctx.table.file_io, path, system_fields(), [VALUE_KIND],
                                        batch_rows=1 << 20, low_memory=True):
        n += int(pc.sum(pc.is_in(batch.column(0), value_set=retract)).as_py() or 0)
    return n


def with_actual_delete_count(ctx: CompactContext, file: DataFileMeta) -> DataFileMeta:
    """``file``, or a copy whose ``delete_row_count`` is the number of retractions it really holds.

    Only level-0 files recording no deletes (0 or unknown) are checked: pypaimon 2.1 writes 0
    for every file, -U / -D records included. Files recording a positive count, and files above
    level 0 (ours and Java's writers count correctly; level-0 files leave level 0 only through
    this check), are trusted as Java trusts them. A file without retractions is returned as is.
    """
    if file.level != 0 or (file.delete_row_count or 0) > 0:
        return file
    n = retraction_count(ctx, file)
    return dataclasses.replace(file, delete_row_count=n) if n else file


def make_context(table: FileStoreTable, unit: CompactUnit) -> CompactContext:
    schema = table.schema
    options = table.options
    key = key_function([f.type.copy(nullable=False) for f in schema.logical_trimmed_primary_keys_type.fields])
    partition_dir = partition_dir_of(schema, unit.partition)
    bucket_files = list(unit.bucket_files) or list(unit.files)
    levels = Levels(bucket_files, max(options.num_levels, unit.max_level + 1 if unit.max_level else 0), key)
    dvs = load_deletion_vectors(table, unit.partition, unit.bucket, unit.index_files) if unit.index_files else {}
    return CompactContext(table, unit, schema, options, partition_dir, key, levels, dvs)


def run_merge_tree_unit(table: FileStoreTable, unit: CompactUnit) -> UnitResult:
    """Compact one bucket's unit; nothing is committed. Files written are removed on failure."""
    started = time.monotonic()
    ctx = make_context(table, unit)
    try:
        rewriter = make_rewriter(ctx)
        result = _execute(ctx, rewriter)
        new_index, deleted_index = rewriter.finish(ctx, result)
    except BaseException:
        ctx.abort()
        raise
    after_names = {f.file_name for f in result.before}
    rows_out = sum(f.row_count for f in result.after if f.file_name not in after_names)
    return UnitResult(
        unit=unit,
        before=result.before,
        after=result.after,
        changelog=result.changelog,
        new_index_files=list(new_index),
        deleted_index_files=list(deleted_index),
        written=ctx.all_written(),
        rows_out=rows_out,
        seconds=time.monotonic() - started,
    )


def _execute(ctx: CompactContext, rewriter: Any) -> RewriteResult:
    unit = ctx.unit
    out_level = unit.output_level
    result = RewriteResult()
    if not unit.files:
        return result
    if unit.reason == FILE_REWRITE:
        for f in unit.files:
            result.merge(rewriter.rewrite(ctx, out_level, unit.drop_delete, [[SortedRun((f,))]]))
        return result
    max_level = ctx.max_level
    small = min_file_size(ctx.options)
    candidate: list[list[SortedRun]] = []

    def upgrade(f: DataFileMeta) -> None:
        if f.level == out_level:
            # Java 0.9 .. 1.1: a file already on the output level is left alone, BEFORE the
            # delete rule below (1.2+ applies the rule first; module docstring says why not)
            return
        # a level-0 file's count of 0 / None is checked against its _VALUE_KIND column
        # (pypaimon 2.1 records 0 for files with retractions; module docstring)
        g = with_actual_delete_count(ctx, f)
        has_deletes = g.delete_row_count is None or g.delete_row_count > 0
        if out_level == max_level and has_deletes:
            # files with delete records should not be upgraded directly to max level
            res = rewriter.rewrite(ctx, out_level, unit.drop_delete, [[SortedRun((g,))]])
        else:
            res = rewriter.upgrade(ctx, out_level, g)
        if g is not f:  # the DELETE entry names the file as the manifest holds it
            res.before = [f if b is g else b for b in res.before]
        result.merge(res)

    def rewrite() -> None:
        if not candidate:
            return
        if len(candidate) == 1:
            section = candidate[0]
            if not section:
                candidate.clear()
                return
            if len(section) == 1:
                for f in section[0].files:
                    upgrade(f)
                candidate.clear()
                return
        result.merge(rewriter.rewrite(ctx, out_level, unit.drop_delete, list(candidate)))
        candidate.clear()

    for section in interval_partition(unit.files, ctx.key):
        if len(section) > 1:
            candidate.append(section)
            continue
        for f in section[0].files:
            if f.file_size < small:
                candidate.append([SortedRun((f,))])
            else:
                rewrite()
                upgrade(f)
    rewrite()
    return result


__all__ = [
    "CompactContext",
    "MergeTreeRewriter",
    "RewriteResult",
    "load_deletion_vectors",
    "make_context",
    "make_rewriter",
    "min_file_size",
    "needs_hooks",
    "retraction_count",
    "run_merge_tree_unit",
    "with_actual_delete_count",
]
