"""The partial-update merge engine (Java's ``PartialUpdateMergeFunction``), for all keys at once.

Each field takes its last non-null value; ``fields.<seq>.sequence-group=<fields>`` makes a
group of fields follow the newest value of its sequence fields instead (a record older than
the group's current one leaves the group alone), optionally aggregated
(``fields.<f>.aggregate-function``); ``partial-update.remove-record-on-delete`` /
``remove-record-on-sequence-group`` let a -D record reset the whole row.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotYetSupported
from ..schema.options import CoreOptions
from .aggregate import LastValueAgg, ProductAgg, create_aggregator
from .aggregate.groups import last_index, take_or_null, valid_mask
from .key_groups import (
    DELETE,
    INSERT,
    GroupResult,
    KeyGroups,
    adjacent_differs,
    sort_indices_nulls_first,
    value_fields,
    with_base,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..schema.table_schema import TableSchema

SEQUENCE_GROUP_SUFFIX = ".sequence-group"


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


def partial_update(g: KeyGroups, key_names: list[str], schema: TableSchema, opts: CoreOptions) -> GroupResult:
    import numpy as np

    n_rows = g.n_rows
    rows = np.arange(n_rows, dtype=np.int64)
    retract = g.retract
    inserts = ~retract
    groups = sequence_groups(schema, opts)
    remove_on_delete = opts.get_bool("partial-update.remove-record-on-delete")
    rsg_raw = opts.get("partial-update.remove-record-on-sequence-group")
    remove_on_seq_group = [s.strip() for s in (rsg_raw or "").split(",") if s.strip()]
    _check_partial_update(opts, groups, bool(retract.any()), remove_on_delete, remove_on_seq_group)
    all_seq = [f for s, _ in groups for f in s]
    fields = value_fields(g, key_names, schema)
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
    return GroupResult(last, values, kind, g.seqs[last])


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


def _sequence_ranks(g: KeyGroups, groups: list[tuple[list[str], list[str]]]) -> list[np.ndarray]:
    """Per sequence group: the dense rank of each record's sequence-field tuple, -1 when all
    its sequence fields are null."""
    import numpy as np

    ranks: list[np.ndarray] = []
    for seq_fields, _ in groups:
        nonempty = np.zeros(g.n_rows, dtype=bool)
        for f in seq_fields:
            nonempty |= valid_mask(g.table.column(f).combine_chunks())
        rank = _dense_rank(g.table, seq_fields)
        ranks.append(np.where(nonempty, rank, -1))
    return ranks


def _resets(
    g: KeyGroups, groups: list[tuple[list[str], list[str]]], ranks: list[np.ndarray], remove_on_delete: bool,
    remove_on_seq_group: list[str],
) -> np.ndarray:
    """Records that reset the whole row (Java: row = the -D record's values, kind -D)."""
    import numpy as np

    n_rows = g.n_rows
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
    g: KeyGroups, seq_fields: list[str], prot: list[str], rank: np.ndarray, aggregators: dict[str, Any],
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
    g: KeyGroups, agg: Any, name: str, col: Any, base: np.ndarray, considered: np.ndarray, rank: np.ndarray
) -> Any:
    """An aggregated field inside a sequence group, folded from the base row on."""
    import pyarrow as pa

    if isinstance(agg, ProductAgg) and (g.retract & considered).any():
        raise NotYetSupported(
            f"product of field '{name}' with retractions inside a sequence group is not supported yet"
        )
    idx, flags = with_base(g, base, considered & (rank >= 0), g.retract)
    return agg.aggregate(col.take(pa.array(idx)), g.gid[idx], flags, g.n)
