"""Records of many keys in merge order, grouped by key: what every merge engine works on.

The records (key columns, ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, value columns) are sorted the
way Java's merge-sort comparator orders them -- key, then ``sequence.field`` (NULL first),
then ``_SEQUENCE_NUMBER`` -- and cut into key groups with numpy (:func:`sort_and_group`). An
engine computes one :class:`GroupResult` per group and :func:`assemble` turns it back into one
row per key.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..schema.options import CoreOptions

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


@dataclass
class KeyGroups:
    """Records in merge order plus their key-group layout.

    The input stays unsorted in ``source``; ``order`` maps merge-order positions to its rows
    (None: already in merge order). ``table`` (all columns sorted) is built only when an
    engine reads value columns record by record; deduplicate / first-row only pick one row
    per key, which :func:`assemble` takes straight from ``source`` (one copy, not two). For
    the same reason kinds and sequence numbers are kept in input order and put in merge order
    only when an engine reads them record by record (:attr:`kinds`, :attr:`seqs`): a pick
    reads them at its rows alone.
    """

    source: pa.Table
    order: np.ndarray | None  # int64 source row per merge-order position
    n: int
    starts: np.ndarray
    source_kinds: np.ndarray  # int8 per record, in input order
    source_seqs: np.ndarray  # int64 per record, in input order
    _kinds: np.ndarray | None = None
    _seqs: np.ndarray | None = None
    _sorted: pa.Table | None = None
    _gid: np.ndarray | None = None

    @property
    def n_rows(self) -> int:
        return len(self.source_kinds)

    @property
    def kinds(self) -> np.ndarray:
        """Kind per record, in merge order."""
        if self._kinds is None:
            self._kinds = self.source_kinds if self.order is None else self.source_kinds[self.order]
        return self._kinds

    @property
    def seqs(self) -> np.ndarray:
        """``_SEQUENCE_NUMBER`` per record, in merge order."""
        if self._seqs is None:
            self._seqs = self.source_seqs if self.order is None else self.source_seqs[self.order]
        return self._seqs

    @property
    def gid(self) -> np.ndarray:
        """Group id per record (non-decreasing); built on first use: deduplicate and
        first-row never need it."""
        if self._gid is None:
            import numpy as np

            new = np.zeros(self.n_rows, dtype=np.int64)
            new[self.starts[1:]] = 1
            self._gid = np.cumsum(new)
        return self._gid

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

    def any_retract(self) -> bool:
        """Whether any record is a retraction (-U/-D); no merge order needed."""
        k = self.source_kinds
        return bool(((k == UPDATE_BEFORE) | (k == DELETE)).any())

    def picked(self, pick: np.ndarray) -> GroupResult:
        """The result that emits record ``pick`` of each group as it is (its kind and
        sequence number): deduplicate and first-row."""
        src = self.source_rows(pick)
        return GroupResult(pick, {}, self.source_kinds[src], self.source_seqs[src], src)


@dataclass
class GroupResult:
    """Per-group outcome of an engine: default pick, computed columns, kind, sequence, presence."""

    pick: np.ndarray  # record index whose non-computed columns are emitted (-1: no row)
    values: dict[str, pa.Array]
    kind: np.ndarray
    seq: np.ndarray
    source_pick: np.ndarray | None = None  # g.source_rows(pick) when every pick is >= 0, if known


# ---------------------------------------------------------------------------- sorting / grouping


def check_columns(table: pa.Table, key_names: list[str]) -> None:
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


def sort_and_group(table: pa.Table, key_names: list[str], opts: CoreOptions,
                    presorted: bool = False) -> KeyGroups:
    import numpy as np

    seq_fields = opts.sequence_field
    for f in seq_fields:
        if f not in table.column_names:
            raise InvalidInput(f"sequence.field '{f}' is not a column of the merge input")
    kinds_in = table.column(VALUE_KIND).to_numpy().astype(np.int8, copy=False)
    seqs_in = table.column(SEQUENCE_NUMBER).to_numpy().astype(np.int64, copy=False)
    fast = None if seq_fields else _integer_key_order(table, key_names, seqs_in, presorted)
    rows, new = fast if fast is not None else _sorted_groups(table, key_names, opts, presorted)
    starts = np.flatnonzero(new)
    return KeyGroups(source=table, order=rows, n=len(starts), starts=starts, source_kinds=kinds_in,
                     source_seqs=seqs_in)


def _integer_key_order(table: pa.Table, key_names: list[str], seqs: np.ndarray,
                       presorted: bool) -> tuple[np.ndarray | None, np.ndarray] | None:
    """(merge order or None when the input is in it, first-of-group flags) for ONE integer
    key column without NULLs, from numpy's stable sort on the key alone -- a timsort,
    near-linear on the concatenated sorted runs of a split or a compaction. That order is the
    (key, ``_SEQUENCE_NUMBER``) order of :func:`_sorted_groups` (both sorts are stable)
    whenever the sequence numbers of every key already ascend in input order, as when older
    runs come first; otherwise None and the general sort decides."""
    import numpy as np
    import pyarrow as pa

    if len(key_names) != 1:
        return None
    col = table.column(key_names[0])
    if not pa.types.is_integer(col.type) or col.null_count:
        return None
    keys = col.to_numpy()
    n_rows = len(keys)
    rows: np.ndarray | None = None
    if not presorted and n_rows > 1 and (keys[1:] < keys[:-1]).any():
        rows = np.argsort(keys, kind="stable")
        keys = keys[rows]
    new = np.empty(n_rows, dtype=bool)
    new[:1] = True
    np.not_equal(keys[1:], keys[:-1], out=new[1:])
    if not presorted:
        # only where a record follows one of its key (merge-order positions dup, dup + 1)
        dup = np.flatnonzero(~new[1:])
        if dup.size:
            before = dup if rows is None else rows[dup]
            after = dup + 1 if rows is None else rows[dup + 1]
            if (seqs[after] < seqs[before]).any():
                return None  # a key's newer record comes first: order by sequence number too
    return rows, new


def _sorted_groups(table: pa.Table, key_names: list[str], opts: CoreOptions,
                   presorted: bool) -> tuple[np.ndarray | None, np.ndarray]:
    """(merge order or None, first-of-group flags) by Arrow's sort on (key,
    ``sequence.field``, ``_SEQUENCE_NUMBER``), any key types."""
    import numpy as np

    seq_fields = opts.sequence_field
    order = "descending" if opts.sequence_field_sort_order == "descending" else "ascending"
    sort_keys = [(k, "ascending") for k in key_names] + [(f, order) for f in seq_fields]
    sort_keys.append((SEQUENCE_NUMBER, "ascending"))
    system = table.select(list(key_names))
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
            t = system.take(idx)  # only the key columns are sorted here
    n_rows = t.num_rows
    new = np.zeros(n_rows, dtype=bool)
    new[0] = True
    for k in key_names:
        new[1:] |= adjacent_differs(t.column(k))
    return rows, new


def _identity(idx: np.ndarray, n: int) -> bool:
    import numpy as np

    return len(idx) == n and (n == 0 or (idx[0] == 0 and bool((np.diff(idx) == 1).all())))


def _arrow(arr: np.ndarray, typ: pa.DataType | None = None) -> pa.Array:
    """``pa.array(arr, typ)`` for a 1-D integer array without copying through pyarrow's numpy
    conversion, which imports ``numpy.ma`` (~0.02 s of a small read) to look for a mask."""
    import numpy as np
    import pyarrow as pa

    if arr.ndim == 1 and arr.dtype.kind in "iu":
        own = pa.from_numpy_dtype(arr.dtype)
        if typ is None or typ == own:
            return pa.Array.from_buffers(own, len(arr), [None, pa.py_buffer(np.ascontiguousarray(arr))])
    return pa.array(arr, type=typ)


def assemble(g: KeyGroups, key_names: list[str], res: GroupResult) -> pa.Table:
    """One output row per group: keys from the group's first record, system columns and
    computed values from ``res``, every other column from the picked record -- taken from
    the unsorted input with ONE ``Table.take`` (none when the picks are the input as is)."""
    import numpy as np
    import pyarrow as pa

    src = g.source
    schema = src.schema
    pick = res.pick
    safe_pick = pick if g.n == 0 or pick.min() >= 0 else np.where(pick >= 0, pick, g.starts)
    names = src.column_names
    plain = [c for c in names if c not in key_names and c not in (VALUE_KIND, SEQUENCE_NUMBER)
             and c not in res.values]
    n_src = src.num_rows
    out: dict[str, Any] = {}
    if plain:
        rows = res.source_pick if res.source_pick is not None and safe_pick is pick else g.source_rows(safe_pick)
        sub = src.select(plain)
        picked = sub if _identity(rows, n_src) else sub.take(_arrow(rows))
        out.update(zip(plain, picked.columns, strict=True))
    key_rows = g.source_rows(g.starts)
    keys = src.select(list(key_names))
    keys = keys if _identity(key_rows, n_src) else keys.take(_arrow(key_rows))
    out.update(zip(key_names, keys.columns, strict=True))
    arrays = []
    for name in names:
        typ = schema.field(name).type
        if name in out:
            arr = out[name]
        elif name == VALUE_KIND:
            arr = _arrow(res.kind.astype(np.int8, copy=False), typ)
        elif name == SEQUENCE_NUMBER:
            arr = _arrow(res.seq.astype(np.int64, copy=False), typ)
        else:
            arr = res.values[name]
            if arr.type != typ:
                arr = arr.cast(typ)
        arrays.append(arr)
    return pa.Table.from_arrays(arrays, schema=schema)


def keep_single_records(g: KeyGroups, res: GroupResult) -> GroupResult:
    """A key with ONE record is that record, unchanged (values, kind, sequence number).

    Why: Java wraps every merge function in ``ReducerMergeFunctionWrapper`` (reads, write
    buffer flushes, compactions), which only calls the function once a second record of the
    key arrives. So a lone record is never aggregated (a distinct ``collect`` keeps its
    duplicates, a partial-update row keeps fields of an all-NULL sequence group) and a lone
    -U/-D keeps its kind (dropped by reads) instead of becoming a merged +I.
    """
    import numpy as np
    import pyarrow as pa

    sizes = np.diff(np.append(g.starts, g.n_rows))
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
    return GroupResult(pick, values, kind, seq)


def value_fields(g: KeyGroups, key_names: list[str], schema: TableSchema) -> list[Any]:
    cols = set(g.source.column_names)
    return [f for f in schema.fields if f.name in cols and f.name not in key_names
            and f.name not in (SEQUENCE_NUMBER, VALUE_KIND)]


def with_base(g: KeyGroups, base: np.ndarray, considered: np.ndarray,
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
