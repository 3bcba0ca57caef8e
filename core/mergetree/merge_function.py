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

from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..schema.options import CoreOptions
from .aggregate import create_aggregator
from .aggregate.groups import last_index
from .key_groups import (
    DELETE,
    INSERT,
    UPDATE_BEFORE,
    VALUE_KIND,
    GroupResult,
    KeyGroups,
    assemble,
    check_columns,
    keep_single_records,
    sort_and_group,
    value_fields,
    with_base,
)
from .partial_update import partial_update

if TYPE_CHECKING:
    import pyarrow as pa

    from ..schema.table_schema import TableSchema

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
    compaction (see keep_single_records); without it the result is the bare merge function's.
    ``presorted``: ``table`` is already sorted by (key, ``_SEQUENCE_NUMBER``) (the writer's
    flush sorts it); the sort is skipped unless ``sequence.field`` changes the order.
    """
    opts = options if options is not None else schema.core_options
    check_columns(table, key_names)
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
    groups = sort_and_group(table, key_names, opts, presorted)
    if engine == "deduplicate":
        res = _deduplicate(groups)
    elif engine == "first-row":
        res = _first_row(groups)
    elif engine == "partial-update":
        res = partial_update(groups, key_names, schema, opts)
    else:
        res = _aggregation(groups, key_names, schema, opts)
    if lone_records_as_is and engine in ("partial-update", "aggregation"):
        # deduplicate / first-row already emit a lone record unchanged (its own pick, kind, seq)
        res = keep_single_records(groups, res)
    out = assemble(groups, key_names, res)
    present = res.pick >= 0
    if drop_deletes:
        present &= (res.kind != UPDATE_BEFORE) & (res.kind != DELETE)
    if not present.all():
        out = out.filter(present)
    return out


# ---------------------------------------------------------------------------- engines


def _deduplicate(g: KeyGroups) -> GroupResult:
    """Last record wins (retractions were already dropped when ignore-delete)."""
    import numpy as np

    pick = np.empty(g.n, dtype=np.int64)  # each group's last record: the next start - 1
    pick[:-1] = g.starts[1:] - 1
    pick[-1] = g.n_rows - 1
    return g.picked(pick)


def _first_row(g: KeyGroups) -> GroupResult:
    """First record wins; retractions are an error unless ignore-delete (then already dropped)."""
    if g.any_retract():
        raise InvalidInput(
            "first-row merge engine can not accept DELETE/UPDATE_BEFORE records; "
            "set 'ignore-delete'='true' to ignore them"
        )

    return g.picked(g.starts)


def _aggregation(g: KeyGroups, key_names: list[str], schema: TableSchema, opts: CoreOptions) -> GroupResult:
    """Per-field aggregate functions; ``aggregation.remove-record-on-delete`` restarts a key at its last -D."""
    import numpy as np

    n_rows = g.n_rows
    rows = np.arange(n_rows, dtype=np.int64)
    retract = g.retract
    remove_on_delete = opts.get_bool("aggregation.remove-record-on-delete")
    if remove_on_delete:
        base = last_index(g.kinds == DELETE, g.gid, g.n)
        considered = rows > base[g.gid]
    else:
        base = np.full(g.n, -1, dtype=np.int64)
        considered = np.ones(n_rows, dtype=bool)
    idx, flags = with_base(g, base, considered, retract)
    sub_gid = g.gid[idx]
    values: dict[str, Any] = {}
    import pyarrow as pa

    pidx = pa.array(idx)
    for f in value_fields(g, key_names, schema):
        agg = create_aggregator(f, opts.field_aggregate_function(f.name), opts,
                                is_primary_key=f.name in schema.primary_keys)
        col = g.table.column(f.name).combine_chunks().take(pidx)
        values[f.name] = agg.aggregate(col, sub_gid, flags, g.n)
    last = last_index(np.ones(n_rows, dtype=bool), g.gid, g.n)
    kind = np.full(g.n, INSERT, dtype=np.int8)
    if remove_on_delete:
        kind[g.kinds[last] == DELETE] = DELETE
    return GroupResult(last, values, kind, g.seqs[last])
