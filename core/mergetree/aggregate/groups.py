"""Vectorised building blocks of the aggregators: per-key-group positions, sums, hash
aggregations and order-sensitive folds over records sorted in merge order (``gid``
non-decreasing), plus the per-group Python fold for opaque and nested values."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...data.types import (
    BigIntType,
    DataType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    TinyIntType,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

# Longest key group for which float sums/products are folded position by position (exactly
# like Java's sequential float arithmetic). Longer groups use numpy reduceat, which may round
# differently in the last bit; memory/time would otherwise grow with the group length.
SEQUENTIAL_FOLD_MAX_GROUP = 4096


def group_starts(gid: np.ndarray, n_groups: int) -> tuple[np.ndarray, np.ndarray]:
    """Start offset and record count of every group in a gid-sorted array (empty groups allowed)."""
    import numpy as np

    starts = np.searchsorted(gid, np.arange(n_groups, dtype=np.int64), side="left")
    ends = np.searchsorted(gid, np.arange(n_groups, dtype=np.int64), side="right")
    return starts.astype(np.int64), (ends - starts).astype(np.int64)


def last_index(mask: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Row index of the last True per group, -1 where a group has none."""
    import numpy as np

    out = np.full(n_groups, -1, dtype=np.int64)
    idx = np.flatnonzero(mask)
    if idx.size:
        g = gid[idx]
        keep = np.ones(idx.size, dtype=bool)
        keep[:-1] = g[1:] != g[:-1]
        out[g[keep]] = idx[keep]
    return out


def first_index(mask: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Row index of the first True per group, -1 where a group has none."""
    import numpy as np

    out = np.full(n_groups, -1, dtype=np.int64)
    idx = np.flatnonzero(mask)
    if idx.size:
        g = gid[idx]
        keep = np.ones(idx.size, dtype=bool)
        keep[1:] = g[1:] != g[:-1]
        out[g[keep]] = idx[keep]
    return out


def take_or_null(values: pa.Array, idx: np.ndarray) -> pa.Array:
    """values[idx] with null where idx < 0."""
    import pyarrow as pa

    return values.take(pa.array(idx, type=pa.int64(), mask=idx < 0))


def valid_mask(values: pa.Array) -> np.ndarray:
    import numpy as np
    import pyarrow.compute as pc

    if values.null_count == 0:
        return np.ones(len(values), dtype=bool)
    return pc.is_valid(values).to_numpy(zero_copy_only=False)


def segment_sum(arr: np.ndarray, gid: np.ndarray, n_groups: int) -> np.ndarray:
    """Per-group sum with numpy reduceat; empty groups give 0."""
    import numpy as np

    out = np.zeros(n_groups, dtype=arr.dtype)
    if arr.size == 0:
        return out
    starts, counts = group_starts(gid, n_groups)
    ne = counts > 0
    out[ne] = np.add.reduceat(arr, starts[ne])
    return out


def hash_aggregate(values: pa.Array, gid: np.ndarray, n_groups: int, func: str,
                    options: Any = None) -> pa.Array:
    """pyarrow hash aggregation by gid (ordered, single-threaded), scattered to n_groups (null if absent)."""
    import numpy as np
    import pyarrow as pa

    t = pa.table({"__g": pa.array(gid, type=pa.int64()), "__v": values})
    res = t.group_by("__g", use_threads=False).aggregate([("__v", func, options)])
    pos = np.full(n_groups, -1, dtype=np.int64)
    pos[res.column("__g").to_numpy()] = np.arange(res.num_rows, dtype=np.int64)
    col = res.column(f"__v_{func}").combine_chunks()
    return take_or_null(col, pos)


def np_values(values: pa.Array, fill: Any) -> np.ndarray:
    import pyarrow.compute as pc

    if values.null_count:
        values = pc.fill_null(values, fill)
    return values.to_numpy(zero_copy_only=False)


def np_dtype(dt: DataType) -> Any:
    import numpy as np

    return {
        TinyIntType: np.int8, SmallIntType: np.int16, IntType: np.int32, BigIntType: np.int64,
        FloatType: np.float32, DoubleType: np.float64,
    }[type(dt)]


def sequential_fold(v: np.ndarray, valid: np.ndarray, retract: np.ndarray, gid: np.ndarray,
                     n_groups: int, agg: Callable[[Any, Any], Any], ret: Callable[[Any, Any], Any],
                     init_retract: Callable[[Any], Any]) -> tuple[np.ndarray, np.ndarray]:
    """Fold records of every group in order, one numpy step per position inside the group.

    Java semantics of the numeric aggregators: a null input leaves the accumulator alone; the
    first non-null input initialises it (``init_retract`` maps a retracting first input).
    Returns (accumulator, has_value) per group.
    """
    import numpy as np

    starts, counts = group_starts(gid, n_groups)
    acc = np.zeros(n_groups, dtype=v.dtype)
    has = np.zeros(n_groups, dtype=bool)
    max_len = int(counts.max()) if n_groups else 0
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for k in range(max_len):
            g = np.flatnonzero(counts > k)
            rows = starts[g] + k
            ok = valid[rows]
            g, rows = g[ok], rows[ok]
            if not g.size:
                continue
            x = v[rows]
            r = retract[rows]
            h = has[g]
            cur = acc[g]
            new = np.where(h, np.where(r, ret(cur, x), agg(cur, x)), np.where(r, init_retract(x), x))
            acc[g] = new.astype(v.dtype, copy=False)
            has[g] = True
    return acc, has


def pa_array(items: list[Any], typ: pa.DataType) -> pa.Array:
    import pyarrow as pa

    return pa.array(items, type=typ)


def fold_groups(items: list[Any], gid: np.ndarray, retract: np.ndarray, n_groups: int,
                agg: Callable[[Any, Any], Any], ret: Callable[[Any, Any], Any] | None) -> list[Any]:
    """Java's accumulator fold per key group over decoded Python values (nested / blob columns only)."""
    out: list[Any] = [None] * n_groups
    g_list = gid.tolist()
    r_list = retract.tolist()
    for i, x in enumerate(items):
        g = g_list[i]
        if r_list[i]:
            if ret is not None:
                out[g] = ret(out[g], x)
        elif x is not None:
            out[g] = agg(out[g], x)
    return out
