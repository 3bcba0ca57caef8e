"""Compaction-time record merging that also yields changelog and deletion-vector marks.

Why: Java's compaction of a lookup-mode table (``LookupMergeTreeCompactRewriter`` +
``LookupChangelogMergeFunctionWrapper`` / ``FirstRowMergeFunctionWrapper``) and of a
``changelog-producer=full-compaction`` table (``FullChangelogMergeTreeCompactRewriter`` +
``FullChangelogMergeFunctionWrapper``) does not just fold the records of a key: it compares
the key's record BEFORE the compaction with the merged one AFTER it and emits -U/+U, +I or -D
changelog records, and (deletion vectors) marks the replaced record in a file that stays.
Java does this per key with stateful wrappers; here every function takes a chunk of
un-merged records of COMPLETE keys (all records of each key present) and works on all keys of
the chunk at once with numpy / pyarrow.

Chunk layout (what :mod:`core.mergetree.compact_task`'s bounded merge hands over): the value
columns of the current schema (keys are the trimmed primary-key value columns),
``_SEQUENCE_NUMBER``, ``_VALUE_KIND`` and ``_LEVEL`` (the level of the file each record came
from). Outputs have the same columns without ``_LEVEL``.

Semantics (0.9 and 1.x agree unless noted):

* lookup (non first-row): per key, of the records on levels > 0 only ONE is kept (the lowest
  level; 0.9: the newest -- identical in a well-formed tree), as Java's
  ``LookupMergeFunction`` does; a key without such a record is looked up on the levels above
  the output level (:class:`core.mergetree.lookup.LevelLookup`), the found record joins the
  merge in sequence order and, with deletion vectors, its position is marked deleted. The
  merge is the bare merge function (no single-record shortcut). A key with level-0 records
  then gets changelog BEFORE = that high-level record, AFTER = the merge result.
* first-row: the first record wins; a key whose records are all level-0 and which exists on a
  level above is dropped (the old row stays); otherwise, for a new key, the row is also
  emitted as changelog.
* full-compaction: BEFORE = the key's record on the max level, AFTER = the merge (a single
  record is itself); a key with only a max-level record yields nothing.
* ``changelog-producer.row-deduplicate``: no -U/+U pair when BEFORE and AFTER values are equal
  (1.x: minus ``changelog-producer.row-deduplicate-ignore-fields``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from .key_groups import (
    DELETE,
    INSERT,
    SEQUENCE_NUMBER,
    UPDATE_AFTER,
    UPDATE_BEFORE,
    VALUE_KIND,
    adjacent_differs,
    sort_indices_nulls_first,
)
from .lookup import FILE, POS, ROW
from .lookup import LEVEL as LOOKUP_LEVEL
from .merge_function import merge

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..schema.options import CoreOptions
    from ..schema.table_schema import TableSchema
    from .dv_maintainer import DvMaintainer
    from .lookup import LevelLookup

LEVEL = "_LEVEL"


# ---------------------------------------------------------------------------------------
# options
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class LookupStrategy:
    """Java ``LookupStrategy``: why (and whether) compaction looks keys up."""

    is_first_row: bool
    produce_changelog: bool
    deletion_vector: bool
    force_lookup: bool

    @property
    def need_lookup(self) -> bool:
        return self.produce_changelog or self.deletion_vector or self.is_first_row or self.force_lookup

    @staticmethod
    def of(options: CoreOptions) -> LookupStrategy:
        return LookupStrategy(
            is_first_row=options.merge_engine == "first-row",
            produce_changelog=options.changelog_producer == "lookup",
            deletion_vector=options.deletion_vectors_enabled,
            force_lookup=options.get_bool("force-lookup", False),
        )


def full_compaction_changelog(options: CoreOptions) -> bool:
    return options.changelog_producer == "full-compaction"


# ---------------------------------------------------------------------------------------
# grouping helpers
# ---------------------------------------------------------------------------------------


@dataclass
class _Sorted:
    """A chunk in merge order with its key groups."""

    t: pa.Table
    gid: np.ndarray
    starts: np.ndarray
    n: int  # groups
    levels: np.ndarray
    kinds: np.ndarray


def merge_sort_keys(key_names: list[str], options: CoreOptions) -> list[tuple[str, str]]:
    order = "descending" if options.sequence_field_sort_order == "descending" else "ascending"
    return ([(k, "ascending") for k in key_names] + [(f, order) for f in options.sequence_field]
            + [(SEQUENCE_NUMBER, "ascending")])


def _sort_group(records: pa.Table, key_names: list[str], options: CoreOptions) -> _Sorted:
    import numpy as np

    keys = merge_sort_keys(key_names, options)
    idx = sort_indices_nulls_first(records.select([k for k, _ in keys]), keys)
    t = records.take(idx)
    n_rows = t.num_rows
    new = np.zeros(n_rows, dtype=bool)
    if n_rows:
        new[0] = True
    for k in key_names:
        new[1:] |= adjacent_differs(t.column(k))
    gid = np.cumsum(new, dtype=np.int64) - 1
    return _Sorted(
        t=t, gid=gid, starts=np.flatnonzero(new).astype(np.int64), n=int(gid[-1]) + 1 if n_rows else 0,
        levels=t.column(LEVEL).to_numpy().astype(np.int64),
        kinds=t.column(VALUE_KIND).to_numpy().astype(np.int8),
    )


def _is_add(kinds: np.ndarray) -> np.ndarray:
    return (kinds == INSERT) | (kinds == UPDATE_AFTER)


def _drop_ignored_retracts(records: pa.Table, options: CoreOptions) -> pa.Table:
    """``ignore-delete``: retractions never take part (Java's merge functions skip them)."""
    if options.merge_engine == "aggregation" or not options.ignore_delete or records.num_rows == 0:
        return records
    import pyarrow.compute as pc

    k = records.column(VALUE_KIND)
    return records.filter(pc.and_(pc.not_equal(k, UPDATE_BEFORE), pc.not_equal(k, DELETE)))


def _values_equal(a: pa.Table, b: pa.Table, columns: list[str]) -> np.ndarray:
    """Row-wise equality of ``columns`` (NULL equals NULL), as Java's RecordEqualiser."""
    import numpy as np

    eq = np.ones(a.num_rows, dtype=bool)
    for c in columns:
        eq &= _arrays_equal(a.column(c).combine_chunks(), b.column(c).combine_chunks())
    return eq


def _arrays_equal(x: pa.Array, y: pa.Array) -> np.ndarray:
    """Row-wise equality of two aligned arrays, NULL equal to NULL, nested types included:
    structs field by field, lists / maps (entries in order, as Java compares their bytes)
    by length and then element by element over the flattened values -- no per-row Python."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_dictionary(x.type):
        x = x.dictionary_decode()
    if pa.types.is_dictionary(y.type):
        y = y.dictionary_decode()
    n = len(x)
    xn = x.is_null().to_numpy(zero_copy_only=False)
    yn = y.is_null().to_numpy(zero_copy_only=False)
    valid = ~xn & ~yn
    t = x.type
    if pa.types.is_map(t):
        entries = pa.list_(pa.field("entries", pa.struct([t.key_field, t.item_field]), nullable=False))
        return _arrays_equal(x.view(entries), y.view(entries))
    if pa.types.is_struct(t):
        eq = valid.copy()
        for cx, cy in zip(x.flatten(), y.flatten(), strict=True):
            eq &= _arrays_equal(cx, cy)
        return eq | (xn & yn)
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        lx = pc.fill_null(pc.list_value_length(x), -1).to_numpy(zero_copy_only=False).astype(np.int64)
        ly = pc.fill_null(pc.list_value_length(y), -1).to_numpy(zero_copy_only=False).astype(np.int64)
        eq = np.zeros(n, dtype=bool)
        idx = np.flatnonzero(valid & (lx == ly))
        if len(idx):
            sel = pa.array(idx)
            elem = _arrays_equal(pc.list_flatten(x.take(sel)), pc.list_flatten(y.take(sel)))
            lengths = lx[idx]
            ends = np.cumsum(lengths)
            bad = np.concatenate([[0], np.cumsum(~elem)])
            eq[idx] = (bad[ends] - bad[ends - lengths]) == 0
        return eq | (xn & yn)
    same = pc.fill_null(pc.equal(x, y), False).to_numpy(zero_copy_only=False)
    return same | (xn & yn)


def _dedup_columns(schema: TableSchema, options: CoreOptions) -> list[str] | None:
    """Columns compared by ``changelog-producer.row-deduplicate``; None when it is off."""
    if not options.get_bool("changelog-producer.row-deduplicate", False):
        return None
    raw = options.get("changelog-producer.row-deduplicate-ignore-fields") or ""
    ignore = {s.strip() for s in raw.split(",") if s.strip()}
    return [f.name for f in schema.fields if f.name not in ignore]


def _with_kind(t: pa.Table, kinds: np.ndarray) -> pa.Table:
    import pyarrow as pa

    i = t.column_names.index(VALUE_KIND)
    return t.set_column(i, VALUE_KIND, pa.array(kinds.astype("int8"), type=t.schema.field(VALUE_KIND).type))


def _changelog(before: pa.Table, after: pa.Table, has_before: np.ndarray, emit: np.ndarray,
               dedup_cols: list[str] | None) -> pa.Table | None:
    """Java ``setChangelog`` for aligned per-key BEFORE/AFTER rows (one row per key each).

    ``has_before``: a BEFORE record exists (any kind); ``emit``: the key had level-0 input
    (lookup) / the key takes part (full compaction). Rows are emitted per key in order
    (-D) | (-U, +U) | (+I).
    """
    import numpy as np
    import pyarrow as pa

    b_add = has_before & _is_add(before.column(VALUE_KIND).to_numpy().astype(np.int8))
    a_add = _is_add(after.column(VALUE_KIND).to_numpy().astype(np.int8))
    insert = emit & ~b_add & a_add
    delete = emit & b_add & ~a_add
    update = emit & b_add & a_add
    if dedup_cols is not None and update.any():
        idx = np.flatnonzero(update)
        same = _values_equal(before.take(pa.array(idx)), after.take(pa.array(idx)), dedup_cols)
        update[idx[same]] = False
    b_rows = np.flatnonzero(delete | update)
    a_rows = np.flatnonzero(insert | update)
    if not len(b_rows) and not len(a_rows):
        return None
    b = _with_kind(before.take(pa.array(b_rows)), np.where(delete[b_rows], DELETE, UPDATE_BEFORE))
    a = _with_kind(after.take(pa.array(a_rows)), np.where(insert[a_rows], INSERT, UPDATE_AFTER))
    both = pa.concat_tables([b.select(after.column_names), a])
    order = np.argsort(np.concatenate([b_rows * 2, a_rows * 2 + 1]), kind="stable")
    return both.take(pa.array(order))


def keep_one_high_level(records: pa.Table, key_names: list[str], options: CoreOptions) -> pa.Table:
    """Java ``LookupMergeFunction`` for rewrites WITHOUT level-0 records in lookup mode: of a
    key's records on levels > 0 only one counts (the lowest level, newest on ties), because in
    lookup mode every high-level record already holds the merged value of the levels below
    it. Level-0 records all stay. No-op for first-row (Java does not wrap it)."""
    import numpy as np
    import pyarrow as pa

    if options.merge_engine == "first-row" or records.num_rows == 0:
        return records
    s = _sort_group(records, key_names, options)
    n_rows = s.t.num_rows
    if n_rows == s.n:
        return s.t
    pos = np.arange(n_rows, dtype=np.int64)
    high = s.levels > 0
    big = np.iinfo(np.int64).max
    score = np.where(high, s.levels * (n_rows + 1) + (n_rows - 1 - pos), big)
    gmin = np.minimum.reduceat(score, s.starts)
    hl = np.where(gmin < big, n_rows - 1 - (gmin % (n_rows + 1)), -1)
    keep = ~high | (pos == hl[s.gid])
    return s.t if keep.all() else s.t.filter(pa.array(keep))


# ---------------------------------------------------------------------------------------
# lookup mode
# ---------------------------------------------------------------------------------------


@dataclass
class ChunkResult:
    """Merged rows (one per surviving key, key order; retractions included -- the caller drops
    them when the unit drops deletes) and changelog rows (None: none)."""

    merged: pa.Table | None
    changelog: pa.Table | None = None


@dataclass
class LookupMerger:
    """Merges chunks of one lookup-mode rewrite (Java LookupMergeTreeCompactRewriter's merge wrapper).

    ``lookup`` covers the levels above the output level (None: nothing there); ``dv`` gets
    the deletion marks (deletion-vector tables).
    """

    schema: TableSchema
    options: CoreOptions
    lookup: LevelLookup | None
    dv: DvMaintainer | None = None
    produce_changelog: bool = False
    stats: dict[str, int] = field(default_factory=lambda: {"lookups": 0, "hits": 0, "marked": 0})

    def __post_init__(self) -> None:
        self.key_names = list(self.schema.trimmed_primary_keys)
        self.first_row = self.options.merge_engine == "first-row"
        self.dedup_cols = _dedup_columns(self.schema, self.options)
        if self.first_row and self.options.deletion_vectors_enabled:
            raise InvalidInput(
                "First row merge engine does not need deletion vectors because there is no deletion "
                "of old data in this merge engine."
            )

    def merge(self, records: pa.Table) -> ChunkResult:
        records = _drop_ignored_retracts(records, self.options)
        if records.num_rows == 0:
            return ChunkResult(None)
        if self.first_row:
            return self._first_row(records)
        return self._lookup_merge(records)

    # -- helpers ----------------------------------------------------------------------------

    def _do_lookup(self, keys: pa.Table) -> pa.Table | None:
        if self.lookup is None or keys.num_rows == 0:
            return None
        self.stats["lookups"] += keys.num_rows
        found = self.lookup.lookup(keys)
        if found is not None:
            self.stats["hits"] += found.num_rows
        return found

    def _mark(self, found: pa.Table) -> None:
        """Deletion marks for looked-up records (one notify per file, positions vectorised)."""
        if self.dv is None or found is None or found.num_rows == 0:
            return
        import numpy as np

        files = found.column(FILE).combine_chunks().dictionary_encode()
        codes = files.indices.to_numpy()
        pos = found.column(POS).to_numpy()
        for i, name in enumerate(files.dictionary.to_pylist()):  # a few files per chunk
            sel = pos[codes == i]
            self.dv.notify_deletions(name, sel)
            self.stats["marked"] += int(len(np.unique(sel)))

    def _as_records(self, found: pa.Table, like: pa.Table) -> pa.Table:
        """Looked-up rows shaped like the chunk's columns (``_LEVEL`` from the level found)."""
        import pyarrow as pa

        cols = []
        for name in like.column_names:
            src = LOOKUP_LEVEL if name == LEVEL else name
            col = found.column(src)
            typ = like.schema.field(name).type
            cols.append(col if col.type.equals(typ) else col.cast(typ))
        return pa.Table.from_arrays(cols, schema=like.schema)

    # -- deduplicate / partial-update / aggregation -----------------------------------------

    def _lookup_merge(self, records: pa.Table) -> ChunkResult:
        import numpy as np
        import pyarrow as pa

        s = _sort_group(records, self.key_names, self.options)
        n_rows = s.t.num_rows
        pos = np.arange(n_rows, dtype=np.int64)
        high = s.levels > 0
        big = np.iinfo(np.int64).max
        # lowest level wins among level > 0 records; ties: the newest (last in merge order)
        score = np.where(high, s.levels * (n_rows + 1) + (n_rows - 1 - pos), big)
        gmin = np.minimum.reduceat(score, s.starts)
        hl = np.where(gmin < big, n_rows - 1 - (gmin % (n_rows + 1)), -1)
        has_l0 = np.logical_or.reduceat(s.levels == 0, s.starts)
        keep = ~high | (pos == hl[s.gid])
        need = np.flatnonzero(hl < 0)  # groups without a high-level record in the rewrite
        found = None
        if len(need) and self.lookup is not None:
            keys = s.t.take(pa.array(s.starts[need])).select(self.key_names)
            found = self._do_lookup(keys)
            self._mark(found)
        cand = s.t.filter(pa.array(keep))
        kept_idx = np.flatnonzero(keep)
        # position in `cand` of each group's high-level record
        hl_in_cand = np.full(s.n, -1, dtype=np.int64)
        has_hl = hl >= 0
        hl_in_cand[has_hl] = np.searchsorted(kept_idx, hl[has_hl])
        found_rows = None
        if found is not None and found.num_rows and self.lookup is not None and self.lookup.value_columns is not None:
            found_rows = self._as_records(found, cand)
            groups_found = need[found.column(ROW).to_numpy()]
            cand_all = pa.concat_tables([cand, found_rows])
            hl_in_cand[groups_found] = cand.num_rows + np.arange(found_rows.num_rows)
        else:
            cand_all = cand
        before_rows = hl_in_cand
        merged = merge(cand_all.drop_columns([LEVEL]), self.key_names, self.schema, self.options,
                       drop_deletes=False, lone_records_as_is=False)
        out = ChunkResult(merged)
        if self.produce_changelog and merged.num_rows:
            if merged.num_rows != s.n:  # cannot happen: every group keeps at least one record
                raise InvalidInput("lookup merge lost a key group; this is a bug")
            has_before = before_rows >= 0
            before = cand_all.drop_columns([LEVEL]).take(pa.array(np.where(has_before, before_rows, 0)))
            out.changelog = _changelog(before, merged, has_before, has_l0, self.dedup_cols)
        return out

    # -- first-row -------------------------------------------------------------------------

    def _first_row(self, records: pa.Table) -> ChunkResult:
        import numpy as np
        import pyarrow as pa

        kinds = records.column(VALUE_KIND).to_numpy()
        if ((kinds == UPDATE_BEFORE) | (kinds == DELETE)).any():
            raise InvalidInput(
                "first-row merge engine can not accept DELETE/UPDATE_BEFORE records; "
                "set 'ignore-delete'='true' to ignore them"
            )
        s = _sort_group(records, self.key_names, self.options)
        contains_high = np.logical_or.reduceat(s.levels > 0, s.starts)
        first = s.t.take(pa.array(s.starts)).drop_columns([LEVEL])
        exists = np.zeros(s.n, dtype=bool)
        need = np.flatnonzero(~contains_high)
        if len(need) and self.lookup is not None:
            found = self._do_lookup(first.take(pa.array(need)).select(self.key_names))
            if found is not None:
                exists[need[found.column(ROW).to_numpy()]] = True
        keep = contains_high | ~exists
        merged = first.filter(pa.array(keep)) if not keep.all() else first
        out = ChunkResult(merged)
        if self.produce_changelog:
            new = ~contains_high & ~exists
            if new.any():
                out.changelog = first.filter(pa.array(new))
        return out


# ---------------------------------------------------------------------------------------
# full-compaction changelog
# ---------------------------------------------------------------------------------------


@dataclass
class FullChangelogMerger:
    """Merges chunks of a full compaction into the max level with Java's full-compaction changelog."""

    schema: TableSchema
    options: CoreOptions
    max_level: int

    def __post_init__(self) -> None:
        self.key_names = list(self.schema.trimmed_primary_keys)
        self.dedup_cols = _dedup_columns(self.schema, self.options)

    def merge(self, records: pa.Table) -> ChunkResult:
        import numpy as np
        import pyarrow as pa

        records = _drop_ignored_retracts(records, self.options)
        if records.num_rows == 0:
            return ChunkResult(None)
        s = _sort_group(records, self.key_names, self.options)
        n_rows = s.t.num_rows
        sizes = np.diff(np.append(s.starts, n_rows))
        top_mask = s.levels == self.max_level
        pos = np.arange(n_rows, dtype=np.int64)
        top = np.maximum.reduceat(np.where(top_mask, pos, -1), s.starts)
        plain = s.t.drop_columns([LEVEL])
        merged = merge(plain, self.key_names, self.schema, self.options, drop_deletes=False,
                       lone_records_as_is=True, presorted=not self.options.sequence_field)
        if merged.num_rows != s.n:
            raise InvalidInput("full-compaction merge lost a key group; this is a bug")
        has_before = top >= 0
        before = plain.take(pa.array(np.where(has_before, top, 0)))
        # a key whose only record is on the max level did not change
        emit = ~(has_before & (sizes == 1))
        return ChunkResult(merged, _changelog(before, merged, has_before, emit, self.dedup_cols))


__all__ = ["ChunkResult", "FullChangelogMerger", "LookupMerger", "LookupStrategy", "LEVEL",
           "full_compaction_changelog", "keep_one_high_level", "merge_sort_keys"]
