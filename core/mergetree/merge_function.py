"""Merge engines of primary-key tables: fold all records of a key into one, exactly as Java does.

Why: a primary-key table stores many records per key (one per write, per LSM level) and every
reader and compaction must collapse them with the table's ``merge-engine``. Java does this in
``mergetree/compact/{Deduplicate,PartialUpdate,FirstRow}MergeFunction`` and
``aggregate/AggregateMergeFunction`` by feeding the records of one key, in merge order, to a
stateful function. Here the same result is computed for ALL keys at once:

1. sort the records by (key columns, ``sequence.field`` columns, ``_SEQUENCE_NUMBER``) — the
   order of Java's merge-sort comparator. User sequence fields compare with NULL first (also
   for ``sequence.field.sort-order=descending``, which only flips non-null comparisons);
2. find key groups with numpy (adjacent-difference of the key columns);
3. compute each output column per group with vectorised "last/first index where ..." picks,
   running maxima (sequence groups) and aggregations (core/mergetree/aggregate.py).

Semantics follow Java 1.x (master) where it extends 0.9 and otherwise equal 0.9:
* the record kind of a deduplicate / first-row result is the kind of the chosen record;
  partial-update / aggregation results are +I, or -D when ``*.remove-record-on-delete`` saw a
  -D last or (partial-update) the key only had retractions;
* ``_SEQUENCE_NUMBER`` of the result is the chosen record's (deduplicate/first-row) or the last
  record's in merge order (partial-update/aggregation) — as Java writes it;
* ``ignore-delete`` drops retractions (-U/-D) before merging (deduplicate, first-row,
  partial-update; Java 0.8+ writers never store them for such tables).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotYetSupported
from ..schema.options import CoreOptions
from .aggregate import (
    LastValueAgg,
    ProductAgg,
    create_aggregator,
    last_index,
    take_or_null,
    valid_mask,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..schema.table_schema import TableSchema

SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"

INSERT = 0
UPDATE_BEFORE = 1
UPDATE_AFTER = 2
DELETE = 3

SEQUENCE_GROUP_SUFFIX = ".sequence-group"

_IGNORE_DELETE_KEYS = ("ignore-delete", "first-row.ignore-delete", "deduplicate.ignore-delete",
                       "partial-update.ignore-delete")


def ignore_delete(options: CoreOptions) -> bool:
    """0.9's ``ignore-delete`` with its fallback keys (first-row./deduplicate./partial-update.)."""
    return any(options.get_bool(k, False) for k in _IGNORE_DELETE_KEYS if options.contains(k))


@dataclass
class _Groups:
    """Records in merge order plus their key-group layout.

    The input stays unsorted in ``source``; ``order`` maps merge-order positions to its rows
    (None: already in merge order). ``table`` (all columns sorted) is built only when an
    engine reads value columns record by record; deduplicate / first-row only pick one row
    per key, which :func:`_assemble` takes straight from ``source`` (one copy, not two).
    """

    source: pa.Table
    order: np.ndarray | None  # int64 source row per merge-order position
    gid: np.ndarray  # group id per record, non-decreasing
    n: int
    starts: np.ndarray
    kinds: np.ndarray  # int8 per record
    seqs: np.ndarray  # int64 per record
    _sorted: pa.Table | None = None

    @property
    def table(self) -> pa.Table:
        if self._sorted is None:
            self._sorted = self.source if self.order is None else self.source.take(self.order)
        return self._sorted

    def source_rows(self, positions: np.ndarray) -> np.ndarray:
        """Source row indices of merge-order ``positions``."""
        return positions if self.order is None else self.order[positions]

    @property
    def retract(self) -> np.ndarray:
        return (self.kinds == UPDATE_BEFORE) | (self.kinds == DELETE)


@dataclass
class _Result:
    """Per-group outcome of an engine: default pick, computed columns, kind, sequence, presence."""

    pick: np.ndarray  # record index whose non-computed columns are emitted (-1: no row)
    values: dict[str, pa.Array]
    kind: np.ndarray
    seq: np.ndarray


# ---------------------------------------------------------------------------- public API


def merge(
    table: pa.Table,
    key_names: list[str],
    schema: TableSchema,
    options: CoreOptions | None = None,
    drop_deletes: bool = False,
    *,
    lone_records_as_is: bool = False,
    presorted: bool = False,
) -> pa.Table:
    """Merge the records of every key in ``table`` with the table's merge engine.

    ``table`` holds the key columns ``key_names`` (e.g. ``_KEY_id`` or plain ``id``),
    ``_SEQUENCE_NUMBER``, ``_VALUE_KIND`` (int8 0 +I, 1 -U, 2 +U, 3 -D) and value columns named
    as in ``schema``. Returns one row per key, sorted by key, same columns and schema.
    ``drop_deletes`` removes keys whose result is a retraction (-U/-D), as reads and
    top-level compactions do. ``lone_records_as_is`` returns a key's only record unchanged, as
    Java's ``ReducerMergeFunctionWrapper`` does around every read, write-buffer flush and
    compaction (see _keep_single_records); without it the result is the bare merge function's.
    ``presorted``: ``table`` is already sorted by (key, ``_SEQUENCE_NUMBER``) (the writer's
    flush sorts it); the sort is skipped unless ``sequence.field`` changes the order.
    """
    opts = options if options is not None else schema.core_options
    _check_columns(table, key_names)
    engine = opts.merge_engine
    if engine not in ("deduplicate", "partial-update", "aggregation", "first-row"):
        raise InvalidInput(f"unknown merge-engine '{engine}' (deduplicate, partial-update, aggregation, first-row)")
    if opts.ignore_delete and engine != "aggregation" and table.num_rows:
        kinds = table.column(VALUE_KIND).to_numpy()
        keep = (kinds != UPDATE_BEFORE) & (kinds != DELETE)
        if not keep.all():
            table = table.filter(keep)
    if table.num_rows == 0:
        return table.slice(0, 0)
    groups = _sort_and_group(table, key_names, opts, presorted)
    if engine == "deduplicate":
        res = _deduplicate(groups)
    elif engine == "first-row":
        res = _first_row(groups)
    elif engine == "partial-update":
        res = _partial_update(groups, key_names, schema, opts)
    else:
        res = _aggregation(groups, key_names, schema, opts)
    if lone_records_as_is and engine in ("partial-update", "aggregation"):
        # deduplicate / first-row already emit a lone record unchanged (its own pick, kind, seq)
        res = _keep_single_records(groups, res)
    out = _assemble(groups, key_names, res)
    present = res.pick >= 0
    if drop_deletes:
        present &= (res.kind != UPDATE_BEFORE) & (res.kind != DELETE)
    if not present.all():
        out = out.filter(present)
    return out


def sequence_groups(schema: TableSchema, options: CoreOptions) -> list[tuple[list[str], list[str]]]:
    """Parse ``fields.<s1>,<s2>.sequence-group=<f1>,<f2>`` into [(sequence fields, protected fields)].

    Validates like Java's PartialUpdateMergeFunction.Factory (unknown fields, a field in two
    groups, primary-key fields inside a group).
    """
    names = schema.field_names
    groups: list[tuple[list[str], list[str]]] = []
    owner: dict[str, str] = {}
    for key in sorted(options.options):
        if not (key.startswith("fields.") and key.endswith(SEQUENCE_GROUP_SUFFIX)):
            continue
        seq_fields = [s.strip() for s in key[len("fields."):-len(SEQUENCE_GROUP_SUFFIX)].split(",")]
        protected = [s.strip() for s in (options.options[key] or "").split(",") if s.strip()]
        for f in seq_fields + protected:
            if f not in names:
                raise InvalidInput(f"option '{key}': field '{f}' can not be found in table schema")
            if f in schema.primary_keys:
                raise InvalidInput(
                    f"option '{key}': the sequence-group contains primary key field '{f}', which is not allowed"
                )
        for f in protected:
            if f in owner:
                raise InvalidInput(f"Field '{f}' is defined repeatedly by multiple groups: {key}")
            owner[f] = key
        groups.append((seq_fields, protected))
    return groups


# ---------------------------------------------------------------------------- sorting / grouping


def _check_columns(table: pa.Table, key_names: list[str]) -> None:
    missing = [c for c in [*key_names, SEQUENCE_NUMBER, VALUE_KIND] if c not in table.column_names]
    if missing:
        raise InvalidInput(f"merge input lacks column(s) {', '.join(missing)}; has {', '.join(table.column_names)}")
    if not key_names:
        raise InvalidInput("merge needs at least one key column")


def sort_indices_nulls_first(table: pa.Table, sort_keys: list[tuple[str, str]]) -> pa.Array:
    """pc.sort_indices with NULLs first for every key (per-key placement on pyarrow >= 25) and
    float NaN after +inf, as Java orders keys (its sort buffer's normalized keys, and
    Float/Double.compare in 2.0+); Arrow would place NaN with the NULLs, first."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table, sort_keys = _nan_after_inf(table, sort_keys)
    major = int(pa.__version__.split(".")[0])
    if major >= 25:
        return pc.sort_indices(table, sort_keys=[(k, o, "at_start") for k, o in sort_keys])
    return pc.sort_indices(table, sort_keys=sort_keys, null_placement="at_start")


def _nan_after_inf(table: pa.Table, sort_keys: list[tuple[str, str]]) -> tuple[pa.Table, list[tuple[str, str]]]:
    """Sort input in which every float column holding NaN is split in two: the value with
    NaN as +inf, then a NaN flag in the same direction (so NaN follows +inf ascending)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out_keys: list[tuple[str, str]] = []
    for name, order in sort_keys:
        out_keys.append((name, order))
        col = table.column(name)
        if not pa.types.is_floating(col.type):
            continue
        nan = pc.fill_null(pc.is_nan(col), False)
        if not pc.any(nan).as_py():
            continue
        flag = f"\x00nan:{name}"
        table = table.set_column(table.column_names.index(name), name,
                                 pc.if_else(nan, pa.scalar(float("inf"), col.type), col))
        table = table.append_column(flag, pc.cast(nan, pa.int8()))
        out_keys.append((flag, order))
    return table, out_keys


def adjacent_differs(col: Any) -> np.ndarray:
    """For sorted values v: v[i] != v[i-1] for i >= 1 (nulls equal to nulls), as a numpy bool array.

    Floats compare as Java's key comparator (0.9 .. 1.4 generated ``a > b ? 1 : a < b ? -1 : 0``):
    -0.0 equals 0.0, and NaN equals NaN (Arrow sorts NaNs together, after +inf), so NaN keys
    are ONE key as in every Java version, not one key per record as IEEE ``!=`` would make them."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if len(arr) < 2:
        return np.zeros(0, dtype=bool)
    a, b = arr.slice(1), arr.slice(0, len(arr) - 1)
    ne = pc.fill_null(pc.not_equal(a, b), False)
    if pa.types.is_floating(arr.type):
        ne = pc.and_(ne, pc.invert(pc.fill_null(pc.and_(pc.is_nan(a), pc.is_nan(b)), False)))
    if arr.null_count:
        ne = pc.or_(ne, pc.xor(pc.is_null(a), pc.is_null(b)))
    return ne.to_numpy(zero_copy_only=False)


def _sort_and_group(table: pa.Table, key_names: list[str], opts: CoreOptions,
                    presorted: bool = False) -> _Groups:
    import numpy as np

    seq_fields = opts.sequence_field
    for f in seq_fields:
        if f not in table.column_names:
            raise InvalidInput(f"sequence.field '{f}' is not a column of the merge input")
    order = "descending" if opts.sequence_field_sort_order == "descending" else "ascending"
    sort_keys = [(k, "ascending") for k in key_names] + [(f, order) for f in seq_fields]
    sort_keys.append((SEQUENCE_NUMBER, "ascending"))
    system = table.select(list(dict.fromkeys([*key_names, VALUE_KIND, SEQUENCE_NUMBER])))
    if presorted and not seq_fields:
        rows = None
        t = system
    else:
        # NULL sequence-field values sort first in both directions, like Java's generated comparator.
        idx = sort_indices_nulls_first(table.select([k for k, _ in sort_keys]), sort_keys)
        rows = idx.to_numpy().astype(np.int64)
        if (rows[1:] > rows[:-1]).all():  # already in merge order (e.g. one sorted file)
            rows = None
            t = system
        else:
            t = system.take(idx)  # only the key and system columns are sorted here
    n_rows = t.num_rows
    new = np.zeros(n_rows, dtype=bool)
    new[0] = True
    for k in key_names:
        new[1:] |= adjacent_differs(t.column(k))
    gid = np.cumsum(new, dtype=np.int64) - 1
    n = int(gid[-1]) + 1
    return _Groups(
        source=table,
        order=rows,
        gid=gid,
        n=n,
        starts=np.flatnonzero(new).astype(np.int64),
        kinds=t.column(VALUE_KIND).to_numpy().astype(np.int8),
        seqs=t.column(SEQUENCE_NUMBER).to_numpy().astype(np.int64),
    )


def _identity(idx: np.ndarray, n: int) -> bool:
    import numpy as np

    return len(idx) == n and (n == 0 or (idx[0] == 0 and bool((np.diff(idx) == 1).all())))


def _assemble(g: _Groups, key_names: list[str], res: _Result) -> pa.Table:
    """One output row per group: keys from the group's first record, system columns and
    computed values from ``res``, every other column from the picked record -- taken from
    the unsorted input with ONE ``Table.take`` (none when the picks are the input as is)."""
    import numpy as np
    import pyarrow as pa

    src = g.source
    schema = src.schema
    pick = res.pick
    safe_pick = np.where(pick >= 0, pick, g.starts)
    names = src.column_names
    plain = [c for c in names if c not in key_names and c not in (VALUE_KIND, SEQUENCE_NUMBER)
             and c not in res.values]
    n_src = src.num_rows
    out: dict[str, Any] = {}
    if plain:
        rows = g.source_rows(safe_pick)
        sub = src.select(plain)
        picked = sub if _identity(rows, n_src) else sub.take(pa.array(rows))
        out.update(zip(plain, picked.columns, strict=True))
    key_rows = g.source_rows(g.starts)
    keys = src.select(list(key_names))
    keys = keys if _identity(key_rows, n_src) else keys.take(pa.array(key_rows))
    out.update(zip(key_names, keys.columns, strict=True))
    arrays = []
    for name in names:
        typ = schema.field(name).type
        if name in out:
            arr = out[name]
        elif name == VALUE_KIND:
            arr = pa.array(res.kind.astype(np.int8), type=typ)
        elif name == SEQUENCE_NUMBER:
            arr = pa.array(res.seq.astype(np.int64), type=typ)
        else:
            arr = res.values[name]
            if arr.type != typ:
                arr = arr.cast(typ)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=schema)


def _keep_single_records(g: _Groups, res: _Result) -> _Result:
    """A key with ONE record is that record, unchanged (values, kind, sequence number).

    Why: Java wraps every merge function in ``ReducerMergeFunctionWrapper`` (reads, write
    buffer flushes, compactions), which only calls the function once a second record of the
    key arrives. So a lone record is never aggregated (a distinct ``collect`` keeps its
    duplicates, a partial-update row keeps fields of an all-NULL sequence group) and a lone
    -U/-D keeps its kind (dropped by reads) instead of becoming a merged +I.
    """
    import numpy as np
    import pyarrow as pa

    sizes = np.diff(np.append(g.starts, len(g.gid)))
    single = sizes == 1
    if not single.any():
        return res
    pick = np.where(single, g.starts, res.pick)
    kind = np.where(single, g.kinds[g.starts], res.kind).astype(np.int8)
    seq = np.where(single, g.seqs[g.starts], res.seq).astype(np.int64)
    values: dict[str, Any] = {}
    if res.values:
        starts = pa.array(g.starts)
        # computed values at [0, n), raw first records at [n, 2n): one take picks per group
        choose = pa.array(np.where(single, np.arange(g.n) + g.n, np.arange(g.n)))
        for name, arr in res.values.items():
            raw = g.table.column(name).combine_chunks().take(starts)
            if arr.type != raw.type:
                arr = arr.cast(raw.type)
            values[name] = pa.concat_arrays([arr, raw]).take(choose)
    return _Result(pick, values, kind, seq)


# ---------------------------------------------------------------------------- engines


def _deduplicate(g: _Groups) -> _Result:
    """Last record wins (retractions were already dropped when ignore-delete)."""
    import numpy as np

    pick = np.empty(g.n, dtype=np.int64)  # each group's last record: the next start - 1
    pick[:-1] = g.starts[1:] - 1
    pick[-1] = len(g.gid) - 1
    return _Result(pick, {}, g.kinds[pick], g.seqs[pick])


def _first_row(g: _Groups) -> _Result:
    """First record wins; retractions are an error unless ignore-delete (then already dropped)."""
    if g.retract.any():
        raise InvalidInput(
            "first-row merge engine can not accept DELETE/UPDATE_BEFORE records; "
            "set 'ignore-delete'='true' to ignore them"
        )

    pick = g.starts
    return _Result(pick, {}, g.kinds[pick], g.seqs[pick])


def _value_fields(g: _Groups, key_names: list[str], schema: TableSchema) -> list[Any]:
    cols = set(g.source.column_names)
    return [f for f in schema.fields if f.name in cols and f.name not in key_names
            and f.name not in (SEQUENCE_NUMBER, VALUE_KIND)]


def _with_base(g: _Groups, base: np.ndarray, considered: np.ndarray,
               retract: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Record indices (merge order) to fold: each group's base record first as an initial
    accumulator (Java initialises the row with it), then the considered records.
    Returns (indices, retract flags)."""
    import numpy as np

    cons = np.flatnonzero(considered)
    has = base >= 0
    init = base[has]
    if not init.size:
        return cons, retract[cons]
    idx = np.concatenate([init, cons])
    flags = np.concatenate([np.zeros(init.size, dtype=bool), retract[cons]])
    order_key = np.concatenate([init * 2, cons * 2 + 1])
    o = np.argsort(order_key, kind="stable")
    return idx[o], flags[o]


def _aggregation(g: _Groups, key_names: list[str], schema: TableSchema, opts: CoreOptions) -> _Result:
    """Per-field aggregate functions; ``aggregation.remove-record-on-delete`` restarts a key at its last -D."""
    import numpy as np

    n_rows = len(g.gid)
    rows = np.arange(n_rows, dtype=np.int64)
    retract = g.retract
    remove_on_delete = opts.get_bool("aggregation.remove-record-on-delete")
    if remove_on_delete:
        base = last_index(g.kinds == DELETE, g.gid, g.n)
        considered = rows > base[g.gid]
    else:
        base = np.full(g.n, -1, dtype=np.int64)
        considered = np.ones(n_rows, dtype=bool)
    idx, flags = _with_base(g, base, considered, retract)
    sub_gid = g.gid[idx]
    values: dict[str, Any] = {}
    import pyarrow as pa

    pidx = pa.array(idx)
    for f in _value_fields(g, key_names, schema):
        agg = create_aggregator(f, opts.field_aggregate_function(f.name), opts,
                                is_primary_key=f.name in schema.primary_keys)
        col = g.table.column(f.name).combine_chunks().take(pidx)
        values[f.name] = agg.aggregate(col, sub_gid, flags, g.n)
    last = last_index(np.ones(n_rows, dtype=bool), g.gid, g.n)
    kind = np.full(g.n, INSERT, dtype=np.int8)
    if remove_on_delete:
        kind[g.kinds[last] == DELETE] = DELETE
    return _Result(last, values, kind, g.seqs[last])


# ---------------------------------------------------------------------------- partial-update


def _dense_rank(table: pa.Table, fields: list[str]) -> np.ndarray:
    """Dense rank of the tuple of ``fields`` per record, ascending with NULL smallest per field."""
    import numpy as np

    sub = table.select(fields)
    idx = sort_indices_nulls_first(sub, [(f, "ascending") for f in fields])
    idx_np = idx.to_numpy()
    s = sub.take(idx)
    new = np.zeros(len(idx_np), dtype=bool)
    if len(idx_np):
        new[0] = True
    for f in fields:
        new[1:] |= adjacent_differs(s.column(f))
    ranks_sorted = np.cumsum(new, dtype=np.int64) - 1
    ranks = np.empty(len(idx_np), dtype=np.int64)
    ranks[idx_np] = ranks_sorted
    return ranks


def _accepted(rank: np.ndarray, gid: np.ndarray, considered: np.ndarray,
              init_rank: np.ndarray) -> np.ndarray:
    """Records whose sequence-group value is >= the group's running maximum so far (Java: compare >= 0).

    ``rank`` is -1 for records whose sequence fields are all null (skipped by Java).
    A running maximum per key group is a single np.maximum.accumulate with per-group offsets.
    """
    import numpy as np

    r = np.where(considered & (rank >= 0), rank, -1)
    width = int(max(r.max(initial=-1), init_rank.max(initial=-1))) + 2
    off = gid * width
    v = r + 1 + off
    cm = np.maximum.accumulate(v)
    prev = np.empty_like(cm)
    prev[0] = off[0]
    prev[1:] = cm[:-1]
    first = np.ones(len(gid), dtype=bool)
    first[1:] = gid[1:] != gid[:-1]
    prev = np.where(first, off, prev)
    prev_in_group = prev - off - 1
    prev_eff = np.maximum(prev_in_group, init_rank[gid])
    return considered & (rank >= 0) & (rank >= prev_eff)


def _partial_update(g: _Groups, key_names: list[str], schema: TableSchema, opts: CoreOptions) -> _Result:
    import numpy as np

    n_rows = len(g.gid)
    rows = np.arange(n_rows, dtype=np.int64)
    retract = g.retract
    inserts = ~retract
    groups = sequence_groups(schema, opts)
    remove_on_delete = opts.get_bool("partial-update.remove-record-on-delete")
    rsg_raw = opts.get("partial-update.remove-record-on-sequence-group")
    remove_on_seq_group = [s.strip() for s in (rsg_raw or "").split(",") if s.strip()]
    _check_partial_update(opts, groups, bool(retract.any()), remove_on_delete, remove_on_seq_group)
    all_seq = [f for s, _ in groups for f in s]
    fields = _value_fields(g, key_names, schema)
    protected_by: dict[str, int] = {}
    for gi, (_, prot) in enumerate(groups):
        for f in prot:
            protected_by[f] = gi
    aggregators = _group_aggregators(fields, schema, opts, all_seq, protected_by)
    ranks = _sequence_ranks(g, groups)
    reset = _resets(g, groups, ranks, remove_on_delete, remove_on_seq_group)
    base = last_index(reset, g.gid, g.n)
    considered = rows > base[g.gid]
    # Java 1.x initialises the row with the first record when it is a retraction, then processes it.
    first_retract = (base < 0) & retract[g.starts]
    base = np.where(first_retract, g.starts, base)
    fallback = np.where(base >= 0, base, -1)  # a field without a value of its own keeps the base row's
    values: dict[str, Any] = {}
    # Fields outside sequence groups: last non-null inserted value after the base.
    for f in fields:
        if f.name in protected_by or f.name in all_seq:
            continue
        col = g.table.column(f.name).combine_chunks()
        li = last_index(valid_mask(col) & inserts & considered, g.gid, g.n)
        values[f.name] = take_or_null(col, np.where(li >= 0, li, fallback))
    for gi, (seq_fields, prot) in enumerate(groups):
        values.update(_sequence_group_values(g, seq_fields, prot, ranks[gi], aggregators, considered, base))

    last = last_index(np.ones(n_rows, dtype=bool), g.gid, g.n)
    met_insert = last_index(inserts, g.gid, g.n) >= 0
    kind = np.where(reset[last] | ~met_insert, DELETE, INSERT).astype(np.int8)
    return _Result(last, values, kind, g.seqs[last])


def _check_partial_update(
    opts: CoreOptions, groups: list[tuple[list[str], list[str]]], has_retract: bool, remove_on_delete: bool,
    remove_on_seq_group: list[str],
) -> None:
    """Java's refusals of conflicting partial-update options (and of retractions it cannot apply)."""
    if remove_on_delete and opts.ignore_delete:
        raise InvalidInput(
            "ignore-delete and partial-update.remove-record-on-delete have conflicting behavior "
            "so should not be enabled at the same time"
        )
    if remove_on_seq_group and opts.ignore_delete:
        raise InvalidInput(
            "ignore-delete and partial-update.remove-record-on-sequence-group have conflicting behavior "
            "so should not be enabled at the same time"
        )
    if remove_on_delete and groups:
        raise InvalidInput(
            "sequence-group and partial-update.remove-record-on-delete have conflicting behavior "
            "so should not be enabled at the same time"
        )
    all_seq = [f for s, _ in groups for f in s]
    for f in remove_on_seq_group:
        if f not in all_seq:
            raise InvalidInput(
                f"field '{f}' defined in 'partial-update.remove-record-on-sequence-group' must be part of sequence groups"
            )
    if has_retract and not groups and not remove_on_delete:
        raise InvalidInput(
            "partial-update can not accept delete records (-U/-D); configure 'ignore-delete', "
            "'partial-update.remove-record-on-delete' or 'sequence-group's to retract partial columns"
        )


def _group_aggregators(
    fields: list[Any], schema: TableSchema, opts: CoreOptions, all_seq: list[str], protected_by: dict[str, int]
) -> dict[str, Any]:
    """The aggregators of fields inside sequence groups (others merge as partial updates)."""
    aggregators: dict[str, Any] = {}
    for f in fields:
        if f.name in all_seq:
            continue  # no aggregation for sequence fields
        if f.name in schema.primary_keys:
            continue
        func = opts.field_aggregate_function(f.name)
        if func is None:
            continue
        if func != "last_non_null_value" and f.name not in protected_by:
            raise InvalidInput(f"Must use sequence group for aggregation functions but not found for field {f.name}")
        if f.name in protected_by:
            agg = create_aggregator(f, func, opts)
            if not (agg.commutative or isinstance(agg, LastValueAgg)):
                raise NotYetSupported(
                    f"aggregate function '{func}' of field '{f.name}' inside a partial-update sequence group "
                    "is order-dependent and not supported by paimon-cli yet"
                )
            aggregators[f.name] = agg
    return aggregators


def _sequence_ranks(g: _Groups, groups: list[tuple[list[str], list[str]]]) -> list[np.ndarray]:
    """Per sequence group: the dense rank of each record's sequence-field tuple, -1 when all
    its sequence fields are null."""
    import numpy as np

    ranks: list[np.ndarray] = []
    for seq_fields, _ in groups:
        nonempty = np.zeros(len(g.gid), dtype=bool)
        for f in seq_fields:
            nonempty |= valid_mask(g.table.column(f).combine_chunks())
        rank = _dense_rank(g.table, seq_fields)
        ranks.append(np.where(nonempty, rank, -1))
    return ranks


def _resets(
    g: _Groups, groups: list[tuple[list[str], list[str]]], ranks: list[np.ndarray], remove_on_delete: bool,
    remove_on_seq_group: list[str],
) -> np.ndarray:
    """Records that reset the whole row (Java: row = the -D record's values, kind -D)."""
    import numpy as np

    n_rows = len(g.gid)
    reset = np.zeros(n_rows, dtype=bool)
    if remove_on_delete:
        reset = g.kinds == DELETE
    elif remove_on_seq_group:
        all_rows = np.ones(n_rows, dtype=bool)
        no_init = np.full(g.n, -1, dtype=np.int64)
        for gi, (seq_fields, _) in enumerate(groups):
            if any(f in remove_on_seq_group for f in seq_fields):
                acc = _accepted(ranks[gi], g.gid, all_rows, no_init)
                reset |= acc & (g.kinds == DELETE)
    return reset


def _sequence_group_values(
    g: _Groups, seq_fields: list[str], prot: list[str], rank: np.ndarray, aggregators: dict[str, Any],
    considered: np.ndarray, base: np.ndarray,
) -> dict[str, Any]:
    """The sequence fields and protected fields of one sequence group: a record counts only
    when its sequence tuple is not older than the group's current one."""
    import numpy as np

    retract = g.retract
    inserts = ~retract
    has_base = base >= 0
    fallback = np.where(has_base, base, -1)
    init_rank = np.where(has_base, rank[np.where(has_base, base, 0)], -1)
    acc = _accepted(rank, g.gid, considered, init_rank)
    la = last_index(acc, g.gid, g.n)
    src = np.where(la >= 0, la, fallback)
    values: dict[str, Any] = {f: take_or_null(g.table.column(f).combine_chunks(), src) for f in seq_fields}
    last_is_retract = (la >= 0) & retract[np.maximum(la, 0)]
    for f in prot:
        col = g.table.column(f).combine_chunks()
        agg = aggregators.get(f)
        if agg is None:
            values[f] = take_or_null(col, np.where(last_is_retract, -1, src))
        elif isinstance(agg, LastValueAgg):
            # accepted insert -> value; any retraction -> null; rejected insert -> unchanged
            ev = (acc & inserts) | (retract & considered & (rank >= 0))
            le = last_index(ev, g.gid, g.n)
            le_ret = (le >= 0) & retract[np.maximum(le, 0)]
            values[f] = take_or_null(col, np.where(le_ret, -1, np.where(le >= 0, le, fallback)))
        else:
            values[f] = _fold_in_group(g, agg, f, col, base, considered, rank)
    return values


def _fold_in_group(
    g: _Groups, agg: Any, name: str, col: Any, base: np.ndarray, considered: np.ndarray, rank: np.ndarray
) -> Any:
    """An aggregated field inside a sequence group, folded from the base row on."""
    import pyarrow as pa

    if isinstance(agg, ProductAgg) and (g.retract & considered).any():
        raise NotYetSupported(
            f"product of field '{name}' with retractions inside a sequence group is not supported yet"
        )
    idx, flags = _with_base(g, base, considered & (rank >= 0), g.retract)
    return agg.aggregate(col.take(pa.array(idx)), g.gid[idx], flags, g.n)
