"""The compaction rewriter of lookup-mode and full-compaction-changelog tables.

Java's ``ChangelogMergeTreeRewriter`` family (``LookupMergeTreeCompactRewriter``,
``FullChangelogMergeTreeCompactRewriter``) around ``MergeTreeCompactTask``: which rewrites and
upgrades of a unit go through the changelog / lookup merge of :mod:`core.mergetree.changelog`,
the level lookups they need (:class:`core.mergetree.lookup.LevelLookup`), the deletion
vectors they mark (:class:`core.mergetree.dv_maintainer.DvMaintainer`) and the files they
write. :func:`make_rewriter` is what :mod:`core.mergetree.compact_task` plugs in.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..errors import InvalidInput
from ..manifest.manifest import FileSource
from .changelog import (
    LEVEL,
    FullChangelogMerger,
    LookupMerger,
    LookupStrategy,
    full_compaction_changelog,
    keep_one_high_level,
)
from .compact_task import RewriteResult
from .dv_maintainer import DvMaintainer
from .file_writer import RollingFileWriter, partition_dir_of
from .key_groups import INSERT, SEQUENCE_NUMBER, UPDATE_AFTER, VALUE_KIND
from .levels import SortedRun
from .lookup import LevelLookup
from .merge_function import merge
from .sort_merge import FILE_COL, MergeReader

# ---------------------------------------------------------------------------------------
# per-unit driver: what core.mergetree.compact_task calls
# ---------------------------------------------------------------------------------------


@dataclass
class RewriteOutput:
    """Files one changelog-producing rewrite (or upgrade) wrote."""

    after: list[Any] = field(default_factory=list)  # DataFileMeta at the output level (rewrite only)
    changelog: list[Any] = field(default_factory=list)  # changelog DataFileMeta
    written: list[str] = field(default_factory=list)
    rows_out: int = 0


class UnitHooks:
    """Lookup / DV / changelog behaviour of one merge-tree compaction unit (Java's
    ``LookupMergeTreeCompactRewriter`` and ``FullChangelogMergeTreeCompactRewriter`` around
    ``MergeTreeCompactTask``).

    ``compact_task`` asks :meth:`changelog_rewrite` per rewrite and :meth:`upgrade_strategy`
    per upgraded file; when either says so it feeds the merged-but-unfolded records (chunks of
    complete keys in ascending key order, with ``_LEVEL``) to :meth:`rewrite`. Files it
    rewrites (with or without changelog) go to :meth:`notify_rewritten`; :meth:`finish`
    writes the bucket's deletion-vector index file. Calls must come in ascending key order
    within the unit (MergeTreeCompactTask's order), because level lookups stream.
    """

    def __init__(self, table: Any, unit: Any, vectors: dict[str, Any] | None = None) -> None:
        opts = table.options
        self.table = table
        self.unit = unit
        self.schema = table.schema
        self.options = opts
        self.strategy = LookupStrategy.of(opts)
        self.full_changelog = full_compaction_changelog(opts)
        self.lookup_mode = self.strategy.need_lookup and not self.full_changelog
        self.max_level = unit.max_level if unit.max_level else opts.num_levels - 1
        self.dv: DvMaintainer | None = None
        if opts.deletion_vectors_enabled:
            self.dv = DvMaintainer(table, unit.partition, unit.bucket, unit.index_files, vectors)
        if self.lookup_mode and self.strategy.is_first_row and self.dv is not None:
            raise InvalidInput(
                "First row merge engine does not need deletion vectors because there is no deletion "
                "of old data in this merge engine."
            )
        self._lookup: dict[int, LevelLookup | None] = {}
        self.stats: dict[str, int] = {"lookups": 0, "hits": 0, "marked": 0}
        self.written: list[str] = []

    # -- decisions -------------------------------------------------------------------------

    @property
    def active(self) -> bool:
        """Whether this unit needs any of the hooks at all."""
        return self.lookup_mode or self.full_changelog or self.dv is not None

    @property
    def produce_changelog(self) -> bool:
        return self.full_changelog or (self.lookup_mode and self.strategy.produce_changelog)

    def changelog_rewrite(self, files: list[Any], output_level: int) -> bool:
        """Java ``rewriteChangelog``: does this rewrite go through the changelog/lookup merge?"""
        if self.full_changelog:
            return output_level == self.max_level
        if self.lookup_mode:
            return output_level != 0 and any(f.level == 0 for f in files)
        return False

    def upgrade_strategy(self, file: Any, output_level: int) -> tuple[bool, bool]:
        """Java ``upgradeStrategy`` -> (produce changelog / look up, rewrite the file).

        ``file.delete_row_count`` of a level-0 file is the count compact_task checked against
        the file's ``_VALUE_KIND`` column (pypaimon 2.1 records 0 even with retractions), so a
        deletion-vector upgrade of such a file is rewritten with deletes dropped, as Java does
        for a file whose count is positive (see compact_task's module docstring)."""
        if self.full_changelog:
            return output_level == self.max_level, False
        if not self.lookup_mode or file.level != 0:
            return False, False
        per_level = self.options.file_format_per_level()
        fmt = self.options.file_format.lower()
        if per_level.get(file.level, fmt).lower() != per_level.get(output_level, fmt).lower():
            return True, True  # 1.x: a level-0 file moving to a level of another format is rewritten
        if self.dv is not None and (file.delete_row_count is None or file.delete_row_count > 0):
            return True, True
        if output_level == self.max_level:
            return True, False
        if self.options.merge_engine == "deduplicate" and not self.options.sequence_field:
            return True, False
        return True, True

    def reader_deletion_vector(self, file_name: str) -> Any:
        """The DV to apply when READING an input file (Java's reader factory applies them)."""
        return self.dv.vector_of(file_name) if self.dv is not None else None

    # -- lookups ---------------------------------------------------------------------------

    def _level_lookup(self, output_level: int) -> LevelLookup | None:
        if output_level not in self._lookup:
            files = [f for f in self.unit.bucket_files if f.level > output_level]
            if not files:
                self._lookup[output_level] = None
            else:
                if self.strategy.is_first_row:
                    values: list[str] | None = None  # existence only
                elif self.dv is not None and not self.strategy.produce_changelog \
                        and self.options.merge_engine == "deduplicate" and not self.options.sequence_field:
                    values = None  # position only (Java PositionedKeyValueProcessor without value)
                else:
                    values = [f.name for f in self.schema.fields]
                self._lookup[output_level] = LevelLookup(
                    self.table, self.unit.partition, self.unit.bucket, files, output_level + 1,
                    list(self.schema.trimmed_primary_keys), values, self.dv)
        return self._lookup[output_level]

    def merger(self, output_level: int) -> LookupMerger | FullChangelogMerger:
        if self.full_changelog:
            return FullChangelogMerger(self.schema, self.options, self.max_level)
        m = LookupMerger(self.schema, self.options, self._level_lookup(output_level),
                         self.dv if self.strategy.deletion_vector else None, self.strategy.produce_changelog)
        m.stats = self.stats
        return m

    # -- execution -------------------------------------------------------------------------

    def rewrite_sections(self, sections: list[Any], output_level: int, drop_delete: bool,
                         rewrite: bool = True) -> RewriteOutput:
        """Java ``rewriteOrProduceChangelog`` over ``sections`` (each a list of sorted runs: a
        ``SortedRun`` or a list of files): read them with the bounded k-way merge (input
        files' deletion vectors applied), merge with lookup / changelog semantics, write the
        result to ``output_level`` when ``rewrite`` (False: an upgrade that keeps the file and
        only produces changelog / DV marks) and the changelog when the table produces one.
        The caller records the inputs as rewritten (:meth:`notify_rewritten`) when ``rewrite``."""
        return self.rewrite(self.chunks(sections), output_level, drop_delete, rewrite)

    def chunks(self, sections: list[Any]) -> Any:
        """Un-merged records of complete keys per chunk, ascending, in this module's layout."""
        import numpy as np
        import pyarrow as pa


        part_dir = partition_dir_of(self.schema, self.unit.partition)
        dvs = dict(self.dv.vectors) if self.dv is not None else None
        names = [f.name for f in self.schema.fields] + [SEQUENCE_NUMBER, VALUE_KIND]
        for section in sections:
            runs = [list(getattr(r, "files", r)) for r in section]
            reader = MergeReader(self.table, part_dir, self.unit.bucket, runs, with_raw=True,
                                 merge_records=False, deletion_vectors=dvs)
            file_levels = np.array([f.level for f in reader.files], dtype=np.int32)
            for chunk in reader:
                raw = chunk.raw
                if raw is None or raw.num_rows == 0:
                    continue
                lv = file_levels[raw.column(FILE_COL).to_numpy()]
                yield raw.select(names).append_column(LEVEL, pa.array(lv, type=pa.int32()))

    def rewrite(self, chunks: Any, output_level: int, drop_delete: bool, rewrite: bool) -> RewriteOutput:
        """Merge ``chunks`` (un-merged records of complete keys, ascending, with ``_LEVEL``):
        write the result to ``output_level`` when ``rewrite`` and the changelog when the table
        produces one. On failure every file written here is deleted again."""
        import pyarrow.compute as pc


        part, bucket = self.unit.partition, self.unit.bucket
        merger = self.merger(output_level)
        data_w = RollingFileWriter(self.table, part, bucket, level=output_level,
                                   file_source=FileSource.COMPACT) if rewrite else None
        log_w = RollingFileWriter(self.table, part, bucket, level=output_level, file_source=FileSource.APPEND,
                                  changelog=True) if self.produce_changelog else None
        out = RewriteOutput()
        try:
            for chunk in chunks:
                if chunk is None or chunk.num_rows == 0:
                    continue
                res = merger.merge(chunk)
                if data_w is not None and res.merged is not None and res.merged.num_rows:
                    m = res.merged
                    if drop_delete or self.full_changelog:
                        k = m.column(VALUE_KIND)
                        m = m.filter(pc.or_(pc.equal(k, INSERT), pc.equal(k, UPDATE_AFTER)))
                    if m.num_rows:
                        data_w.write(m)
                        out.rows_out += m.num_rows
                if log_w is not None and res.changelog is not None and res.changelog.num_rows:
                    log_w.write(res.changelog)
            if data_w is not None:
                out.after = data_w.close()
            if log_w is not None:
                out.changelog = log_w.close()
        except BaseException:
            for w in (data_w, log_w):
                if w is not None:
                    w.abort()
            raise
        for w in (data_w, log_w):
            if w is not None:
                out.written += w.written
        self.written += out.written
        return out

    def notify_rewritten(self, files: list[Any]) -> None:
        """Rewritten input files lose their deletion vectors (Java notifyRewriteCompactBefore)."""
        if self.dv is not None:
            for f in files:
                self.dv.remove(f.file_name)

    def finish(self) -> tuple[list[Any], list[Any], list[str]]:
        """(new index files, deleted index files, written paths) for the UnitResult."""
        if self.dv is None:
            return [], [], []
        new, deleted, written = self.dv.write()
        self.written += written
        return new, deleted, written


# ---------------------------------------------------------------------------------------
# the rewriter core.mergetree.compact_task plugs in (its "Hook call sites")
# ---------------------------------------------------------------------------------------


class LookupRewriter:
    """Java ``LookupMergeTreeCompactRewriter`` / ``FullChangelogMergeTreeCompactRewriter`` on top
    of compact_task's default ``MergeTreeRewriter``.

    * rewrites whose sections hold level-0 files (lookup mode), or that go to the max level
      (full-compaction changelog), merge with lookup / changelog semantics
      (:class:`UnitHooks`);
    * other rewrites are plain, except that in lookup mode a key keeps only one of its
      high-level records (Java wraps the merge function in ``LookupMergeFunction``);
    * upgrades follow Java's ``upgradeStrategy`` (changelog without rewrite, or rewrite);
    * rewritten files lose their deletion vectors; ``finish`` writes the bucket's DV index.
    """

    def __init__(self, ctx: Any, default: Any) -> None:
        self.default = default
        self.hooks = UnitHooks(ctx.table, ctx.unit, ctx.deletion_vectors)
        # Java's ChangelogMergeTreeRewriter(forceDropDelete = dvMaintainer != null) for upgrades
        self.force_drop_delete = self.hooks.lookup_mode and self.hooks.dv is not None

    def _result(self, before: list[Any], after: list[Any], changelog: list[Any]) -> Any:
        return RewriteResult(before, after, changelog)

    def rewrite(self, ctx: Any, output_level: int, drop_delete: bool, sections: list[Any]) -> Any:
        files = [f for section in sections for run in section for f in run.files]
        if self.hooks.changelog_rewrite(files, output_level):
            out = self.hooks.rewrite_sections(sections, output_level, drop_delete, True)
            ctx.written += [p for p in out.written if p not in ctx.written]
            self.hooks.notify_rewritten(files)
            return self._result(files, out.after, out.changelog)
        if self.hooks.lookup_mode and ctx.options.merge_engine in ("partial-update", "aggregation") \
                and self.hooks.dv is None:
            res = self._plain_lookup_rewrite(ctx, output_level, drop_delete, sections, files)
        else:
            res = self.default.rewrite(ctx, output_level, drop_delete, sections)
        self.hooks.notify_rewritten(files)
        return res

    def _plain_lookup_rewrite(self, ctx: Any, output_level: int, drop_delete: bool, sections: list[Any],
                              files: list[Any]) -> Any:
        """Java ``rewriteCompaction`` with the LookupMergeFunction-wrapped merge function."""

        key_names = list(ctx.schema.trimmed_primary_keys)
        writer = ctx.new_writer(output_level)
        try:
            for chunk in self.hooks.chunks(sections):
                records = keep_one_high_level(chunk, key_names, ctx.options).drop_columns([LEVEL])
                merged = merge(records, key_names, ctx.schema, ctx.options, drop_deletes=drop_delete,
                               lone_records_as_is=True)
                if merged.num_rows:
                    writer.write(merged)
            after = writer.close()
        except BaseException:
            writer.abort()
            raise
        return self._result(files, after, [])

    def upgrade(self, ctx: Any, output_level: int, file: Any) -> Any:
        changelog, rewrite = self.hooks.upgrade_strategy(file, output_level)
        if not changelog:
            return self.default.upgrade(ctx, output_level, file)
        out = self.hooks.rewrite_sections([[SortedRun((file,))]], output_level, self.force_drop_delete, rewrite)
        ctx.written += [p for p in out.written if p not in ctx.written]
        if rewrite:
            self.hooks.notify_rewritten([file])
            return self._result([file], out.after, out.changelog)
        return self._result([file], [dataclasses.replace(file, level=output_level)], out.changelog)

    def finish(self, ctx: Any, result: Any) -> tuple[list[Any], list[Any]]:
        new, deleted, written = self.hooks.finish()
        ctx.written += written
        return new, deleted


def make_rewriter(ctx: Any, default: Any) -> LookupRewriter:
    """compact_task's hook: the rewriter for tables in lookup mode or with full-compaction changelog."""
    return LookupRewriter(ctx, default)
