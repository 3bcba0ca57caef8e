"""Field aggregators of the ``aggregation`` merge engine (and of partial-update sequence groups).

Why this module exists: Java Paimon folds every record of a key into an accumulator, field
by field (``mergetree/compact/aggregate/Field*Agg.java``). Folding row by row in Python is far
too slow, so each aggregator here computes the SAME result for all keys at once from the
records sorted in merge order: ``values`` (one column, merge order), ``gid`` (the key-group id
of every record, non-decreasing), ``retract`` (True for -U/-D records) and the number of
groups. Simple functions map onto numpy ``reduceat`` / pyarrow hash aggregations; order-
sensitive numeric folds (float sums, products with retraction) run one vectorised step per
record POSITION inside a group (a loop over the longest group, never over rows).

Functions whose values are opaque blobs or nested collections (rbm32/rbm64 bitmaps, collect,
merge_map, nested_update, distinct listagg) fold per key group in Python: their values must be
decoded element by element anyway and Java's semantics (set/map union with retraction) have
no columnar equivalent. That is the only per-record Python on a data path and it only touches
those columns.

Known, documented differences from Java: Java collects ``distinct`` / ``merge_map`` /
keyed ``nested_update`` results through a HashSet/HashMap, so its element order is a hash
order; ours is first-insertion order (same elements). Decimal sums that overflow in an
intermediate step but not at the end are not nulled (Java nulls them and restarts).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..data.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    MapType,
    RowType,
    SmallIntType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)
from ..errors import InvalidInput, NotYetSupported

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..schema.options import CoreOptions

# Longest key group for which float sums/products are folded position by position (exactly
# like Java's sequential float arithmetic). Longer groups use numpy reduceat, which may round
# differently in the last bit; memory/time would otherwise grow with the group length.
SEQUENTIAL_FOLD_MAX_GROUP = 4096

_INTEGER_TYPES = (TinyIntType, SmallIntType, IntType, BigIntType)
_NUMERIC_TYPES = (*_INTEGER_TYPES, FloatType, DoubleType, DecimalType)


# ---------------------------------------------------------------------------- group helpers


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


def _hash_aggregate(values: pa.Array, gid: np.ndarray, n_groups: int, func: str,
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


def _np_values(values: pa.Array, fill: Any) -> np.ndarray:
    import pyarrow.compute as pc

    if values.null_count:
        values = pc.fill_null(values, fill)
    return values.to_numpy(zero_copy_only=False)


def _np_dtype(dt: DataType) -> Any:
    import numpy as np

    return {
        TinyIntType: np.int8, SmallIntType: np.int16, IntType: np.int32, BigIntType: np.int64,
        FloatType: np.float32, DoubleType: np.float64,
    }[type(dt)]


def _sequential_fold(v: np.ndarray, valid: np.ndarray, retract: np.ndarray, gid: np.ndarray,
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


# ---------------------------------------------------------------------------- aggregators


class FieldAggregator:
    """One field's aggregate function; ``aggregate`` computes the fold of every group at once."""

    name = ""
    supports_retract = False
    # agg(acc, x) == aggReversed(acc, x) and order-free: usable inside partial-update sequence groups.
    commutative = False

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        self.field = field
        self.dtype = field.type
        self.options = options
        self.ignore_retract = ignore_retract
        self.check_type()

    def check_type(self) -> None:
        """Refuse column types Java refuses for this function (at table-read time in Java)."""

    def _bad_type(self) -> InvalidInput:
        return InvalidInput(
            f"aggregate function '{self.name}' does not support column '{self.field.name}' "
            f"of type {self.dtype.as_sql()}"
        )

    def aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray,
                  n_groups: int) -> pa.Array:
        """Merged value per group (length n_groups) of records already in merge order."""
        import numpy as np

        if retract.any():
            if self.ignore_retract:
                keep = ~retract
                values = values.filter(keep)
                gid = gid[keep]
                retract = np.zeros(int(keep.sum()), dtype=bool)
            elif not self.supports_retract:
                raise InvalidInput(
                    f"aggregate function '{self.name}' of field '{self.field.name}' does not support "
                    f"retraction (-U/-D records); set 'fields.{self.field.name}.ignore-retract'='true' "
                    "to ignore them"
                )
        return self._aggregate(values, gid, retract, n_groups)

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray,
                   n_groups: int) -> pa.Array:
        raise NotImplementedError


class PrimaryKeyAgg(FieldAggregator):
    """Primary-key columns are never aggregated: the value of the last record (Java FieldPrimaryKeyAgg)."""

    name = "primary-key"
    supports_retract = True

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import numpy as np

        return take_or_null(values, last_index(np.ones(len(values), dtype=bool), gid, n_groups))


class SumAgg(FieldAggregator):
    name = "sum"
    supports_retract = True
    commutative = True

    def check_type(self) -> None:
        if not isinstance(self.dtype, _NUMERIC_TYPES):
            raise self._bad_type()

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        valid = valid_mask(values)
        if isinstance(self.dtype, DecimalType):
            signed = pc.if_else(pa.array(retract), pc.negate(values), values)
            total = _hash_aggregate(signed, gid, n_groups, "sum", pc.ScalarAggregateOptions(min_count=1))
            return _decimal_fit(total, self.dtype)
        np_t = _np_dtype(self.dtype)
        v = _np_values(values, 0)
        count = segment_sum(valid.astype(np.int64), gid, n_groups)
        if isinstance(self.dtype, _INTEGER_TYPES):
            # Two's-complement wrap-around commutes with addition, so summing in int64 and
            # narrowing at the end equals Java's per-step (byte)/(short)/(int) overflow.
            v64 = v.astype(np.int64)
            with np.errstate(over="ignore"):
                signed = np.where(retract, -v64, v64) * valid
                res = segment_sum(signed, gid, n_groups).astype(np_t)
        else:
            v = v.astype(np_t)
            _, counts = group_starts(gid, n_groups)
            if n_groups and counts.max() > SEQUENTIAL_FOLD_MAX_GROUP:
                res = segment_sum(np.where(valid, np.where(retract, -v, v), 0).astype(np_t), gid, n_groups)
            else:
                res, _ = _sequential_fold(v, valid, retract, gid, n_groups,
                                          lambda a, x: a + x, lambda a, x: a - x, lambda x: -x)
        return pa.array(res, type=values.type, mask=count == 0)


def _decimal_fit(total: pa.Array, dt: DecimalType) -> pa.Array:
    """Narrow a decimal128(38, s) aggregate to DECIMAL(p, s); values that do not fit become null (Java)."""
    import decimal

    import pyarrow as pa
    import pyarrow.compute as pc

    bound = pa.scalar(decimal.Decimal(10) ** (dt.precision - dt.scale), type=pa.decimal128(38, 0))
    too_big = pc.greater_equal(pc.cast(pc.abs(total), pa.float64()), pc.cast(bound, pa.float64()))
    cleaned = pc.if_else(pc.fill_null(too_big, False), pa.scalar(None, total.type), total)
    return pc.cast(cleaned, pa.decimal128(dt.precision, dt.scale))


class ProductAgg(FieldAggregator):
    name = "product"
    supports_retract = True
    commutative = True  # only without retraction; the caller checks

    def check_type(self) -> None:
        if not isinstance(self.dtype, _NUMERIC_TYPES):
            raise self._bad_type()

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import numpy as np
        import pyarrow as pa

        valid = valid_mask(values)
        if isinstance(self.dtype, DecimalType):
            return _decimal_product(values, gid, retract, n_groups, self.dtype)
        np_t = _np_dtype(self.dtype)
        v = _np_values(values, 1).astype(np_t)
        count = segment_sum(valid.astype(np.int64), gid, n_groups)
        is_int = isinstance(self.dtype, _INTEGER_TYPES)
        if is_int and not retract.any():
            # Multiplication also commutes with two's-complement wrap-around.
            starts, counts = group_starts(gid, n_groups)
            res = np.ones(n_groups, dtype=np.int64)
            ne = counts > 0
            if v.size:
                with np.errstate(over="ignore"):
                    res[ne] = np.multiply.reduceat(np.where(valid, v.astype(np.int64), 1), starts[ne])
            return pa.array(res.astype(np_t), type=values.type, mask=count == 0)
        if is_int:
            zero = valid & retract & (v == 0)
            if zero.any():
                raise InvalidInput(
                    f"product of field '{self.field.name}': retracting a record with value 0 divides by zero"
                )

            def div(a: Any, x: Any) -> Any:  # Java integer division truncates toward zero
                safe = np.where(x == 0, 1, x)
                q = np.abs(a) // np.abs(safe)
                return np.where((a < 0) != (safe < 0), -q, q)
        else:
            def div(a: Any, x: Any) -> Any:
                return a / x
        res, _ = _sequential_fold(v, valid, retract, gid, n_groups,
                                  lambda a, x: a * x, div, lambda x: x)
        return pa.array(res.astype(np_t), type=values.type, mask=count == 0)


def _decimal_product(values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int,
                     dt: DecimalType) -> pa.Array:
    """DECIMAL products fold per group with Python Decimal: pyarrow has no decimal hash_product."""
    import decimal

    import pyarrow as pa

    ctx = decimal.Context(prec=80)
    q = decimal.Decimal(1).scaleb(-dt.scale)
    limit = decimal.Decimal(10) ** (dt.precision - dt.scale)

    def fit(x: decimal.Decimal | None) -> decimal.Decimal | None:
        if x is None:
            return None
        x = x.quantize(q, rounding=decimal.ROUND_HALF_UP, context=ctx)
        return None if abs(x) >= limit else x

    def agg(acc: Any, x: Any) -> Any:
        if acc is None or x is None:
            return x if acc is None else acc
        return fit(ctx.multiply(acc, x))

    def ret(acc: Any, x: Any) -> Any:
        if acc is None or x is None:
            return x if acc is None else acc
        return fit(ctx.divide(acc, x))

    return pa.array(fold_groups(values.to_pylist(), gid, retract, n_groups, agg, ret), type=values.type)


class _CompareAgg(FieldAggregator):
    func = ""
    commutative = True

    def check_type(self) -> None:
        if isinstance(self.dtype, (ArrayType, MapType, RowType)):
            raise self._bad_type()

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import pyarrow.compute as pc

        return _hash_aggregate(values, gid, n_groups, self.func,
                               pc.ScalarAggregateOptions(skip_nulls=True, min_count=1))


class MaxAgg(_CompareAgg):
    name = "max"
    func = "max"


class MinAgg(_CompareAgg):
    name = "min"
    func = "min"


class BoolAndAgg(_CompareAgg):
    name = "bool_and"
    func = "all"

    def check_type(self) -> None:
        if not isinstance(self.dtype, BooleanType):
            raise self._bad_type()


class BoolOrAgg(BoolAndAgg):
    name = "bool_or"
    func = "any"


class LastValueAgg(FieldAggregator):
    """Last record's value, null included; a retraction sets null."""

    name = "last_value"
    supports_retract = True

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import numpy as np

        idx = last_index(np.ones(len(values), dtype=bool), gid, n_groups)
        idx = np.where((idx >= 0) & retract[np.maximum(idx, 0)], -1, idx)
        return take_or_null(values, idx)


class LastNonNullValueAgg(FieldAggregator):
    """Last non-null value; a retraction carrying a non-null value sets null."""

    name = "last_non_null_value"
    supports_retract = True

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import numpy as np

        idx = last_index(valid_mask(values), gid, n_groups)
        idx = np.where((idx >= 0) & retract[np.maximum(idx, 0)], -1, idx)
        return take_or_null(values, idx)


class FirstValueAgg(FieldAggregator):
    name = "first_value"

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import numpy as np

        return take_or_null(values, first_index(np.ones(len(values), dtype=bool), gid, n_groups))


class FirstNonNullValueAgg(FieldAggregator):
    name = "first_non_null_value"

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        return take_or_null(values, first_index(valid_mask(values), gid, n_groups))


class ListaggAgg(FieldAggregator):
    """Strings joined by ``fields.<f>.list-agg-delimiter`` (default ","); blank strings are skipped (1.x)."""

    name = "listagg"

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        super().__init__(field, options, ignore_retract)
        self.delimiter = options.get(f"fields.{field.name}.list-agg-delimiter") or ","
        self.distinct = (options.get(f"fields.{field.name}.distinct") or "false").lower() == "true"

    def check_type(self) -> None:
        if not isinstance(self.dtype, (VarCharType, CharType)):
            raise self._bad_type()

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        import pyarrow.compute as pc

        blank = pc.fill_null(pc.equal(pc.utf8_length(pc.utf8_trim_whitespace(values)), 0), True)
        keep = pc.invert(blank).to_numpy(zero_copy_only=False)
        vals, g = values.filter(keep), gid[keep]
        if self.distinct:
            delim = self.delimiter

            def agg(acc: Any, x: Any) -> Any:
                if acc is None:
                    return x
                tokens = acc.split(delim)
                seen = set(tokens)
                out = [acc]
                for tok in x.split(delim):
                    if tok.strip() and tok not in seen:
                        seen.add(tok)
                        out.append(tok)
                return delim.join(out)

            return _pa_array(fold_groups(vals.to_pylist(), g, retract[keep], n_groups, agg, None), values.type)
        lists = _hash_aggregate(vals, g, n_groups, "list")
        return pc.binary_join(lists, self.delimiter).cast(values.type)


def _pa_array(items: list[Any], typ: pa.DataType) -> pa.Array:
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


class _BitmapAgg(FieldAggregator):
    commutative = True
    bits = 32

    def check_type(self) -> None:
        if not isinstance(self.dtype, (VarBinaryType, BinaryType)):
            raise self._bad_type()

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        # Serialized roaring bitmaps are opaque: each must be decoded, so the union is a per-group fold.
        import pyroaring

        cls = pyroaring.BitMap if self.bits == 32 else pyroaring.BitMap64
        acc: list[Any] = [None] * n_groups
        for g, blob in zip(gid.tolist(), values.to_pylist()):
            if blob is None:
                continue
            bm = cls.deserialize(blob)
            acc[g] = bm if acc[g] is None else acc[g] | bm
        return _pa_array([None if b is None else b.serialize() for b in acc], values.type)


class Rbm32Agg(_BitmapAgg):
    name = "rbm32"
    bits = 32


class Rbm64Agg(_BitmapAgg):
    """Union of Java ``Roaring64Bitmap`` values (core/data/roaring64.py), byte for byte like Java.

    Java's bytes depend on the merge history, so this replays FieldRoaringBitmap64Agg.agg per
    key group in merge order: a null leaves the accumulator alone, the first value is kept
    verbatim (Java returns the input object), every further value is ``or``-ed into the
    accumulator's structure. Not ``commutative``: aggReversed would produce other bytes.
    """

    name = "rbm64"
    bits = 64
    commutative = False

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        from ..data.roaring64 import Roaring64Layout

        acc: list[Any] = [None] * n_groups
        merged: list[Any] = [None] * n_groups  # parsed accumulator once a group has 2+ values
        for g, blob in zip(gid.tolist(), values.to_pylist()):
            if blob is None:
                continue
            if acc[g] is None:
                acc[g] = blob
                continue
            if merged[g] is None:
                merged[g] = Roaring64Layout.parse(acc[g])
            merged[g].or_(Roaring64Layout.parse(blob))
            merged[g].run_optimize()  # RoaringBitmap64.serialize() runs it before every write
        out = [m.to_bytes() if m is not None else a for a, m in zip(acc, merged)]
        return _pa_array(out, values.type)


# Java 4.2 compact-sketch preamble bytes that the C++ serializer writes differently.
_THETA_EMPTY_JAVA = bytes([1, 3, 3, 0, 0, 0x1E, 0, 0])  # EmptyCompactSketch: seed hash left 0
_THETA_FLAG_EMPTY = 0x04
_THETA_FLAG_SINGLE_ITEM = 0x20
_THETA_P_ONE = b"\x00\x00\x80\x3f"  # float32 LE 1.0f, Java's PreambleUtil.insertP(mem, 1.0f)


def _java_theta_bytes(data: bytes) -> bytes:
    """C++ ``compact_theta_sketch.serialize()`` rewritten to Java datasketches 4.2's ``toByteArray()``.

    Why: Paimon 0.9 stores ``Union.getResult().toByteArray()`` (ordered compact, serial version 3).
    The C++ library computes the same hashes and theta but fills three preamble fields differently:
    Java's empty sketch carries seed hash 0, its single-item sketch sets the SINGLE_ITEM flag, and
    it writes p=1.0f where C++ writes 0 (bytes 12..15 whenever there are 2+ preamble longs).
    """
    pre_longs = data[0] & 0x3F
    if data[5] & _THETA_FLAG_EMPTY:
        return _THETA_EMPTY_JAVA
    out = bytearray(data)
    if pre_longs == 1:
        out[5] |= _THETA_FLAG_SINGLE_ITEM
    else:
        out[12:16] = _THETA_P_ONE
    return bytes(out)


def _theta_sketch(blob: bytes, field: str) -> Any:
    import datasketches

    try:
        return datasketches.compact_theta_sketch.deserialize(blob)
    except Exception as exc:  # the C++ binding raises RuntimeError/ValueError on a bad layout
        raise InvalidInput(
            f"theta_sketch value of field '{field}' is not a serialized compact theta sketch: {exc}"
        ) from None


def theta_union(acc: bytes, x: bytes, field: str = "?") -> bytes:
    """Java's ``ThetaSketch.union(acc, x)``: fresh default union (lg_k 12, default seed) of both."""
    import datasketches

    union = datasketches.theta_union()
    union.update(_theta_sketch(acc, field))
    union.update(_theta_sketch(x, field))
    return _java_theta_bytes(union.get_result(True).serialize())


class ThetaSketchAgg(FieldAggregator):
    """Union of Apache DataSketches theta sketches, byte for byte like Java's FieldThetaSketchAgg.

    Java folds pairwise: a null is skipped, the first value is kept verbatim (Java returns the
    input array), and each further value goes through a fresh ``Union`` of (accumulator, value)
    whose ordered compact result becomes the accumulator. The C++ ``datasketches`` binding yields
    the same hashes and theta; ``_java_theta_bytes`` fixes the preamble fields it writes otherwise.
    Not ``commutative``: re-associating a fold in estimation mode is not guaranteed to keep bytes.
    """

    name = "theta_sketch"
    commutative = False

    def check_type(self) -> None:
        if not isinstance(self.dtype, VarBinaryType):  # Java's factory casts to VarBinaryType
            raise self._bad_type()

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        acc: list[Any] = [None] * n_groups
        for g, blob in zip(gid.tolist(), values.to_pylist()):
            if blob is None:
                continue
            acc[g] = blob if acc[g] is None else theta_union(acc[g], blob, self.field.name)
        return _pa_array(acc, values.type)


def _hashable(x: Any) -> Any:
    if isinstance(x, dict):
        return tuple((k, _hashable(v)) for k, v in x.items())
    if isinstance(x, list):
        return ("__list__", tuple(_hashable(v) for v in x))
    if isinstance(x, tuple):
        return tuple(_hashable(v) for v in x)
    return x


class CollectAgg(FieldAggregator):
    """ARRAY concatenation (``fields.<f>.distinct`` de-duplicates); retraction removes one match per element."""

    name = "collect"
    supports_retract = True
    commutative = True  # Java: aggReversed == agg

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        super().__init__(field, options, ignore_retract)
        self.distinct = (options.get(f"fields.{field.name}.distinct") or "false").lower() == "true"

    def check_type(self) -> None:
        if not isinstance(self.dtype, ArrayType):
            raise InvalidInput(
                f"Data type for collect column '{self.field.name}' must be 'Array' but was '{self.dtype.as_sql()}'"
            )

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        distinct = self.distinct

        def agg(acc: Any, x: Any) -> Any:
            if acc is None and not distinct:
                return list(x)
            items = list(acc or [])
            if not distinct:
                return items + list(x)
            seen = {_hashable(e) for e in items}
            for e in x:
                h = _hashable(e)
                if h not in seen:
                    seen.add(h)
                    items.append(e)
            return items

        def ret(acc: Any, x: Any) -> Any:
            if acc is None or x is None:
                return acc
            pending = [_hashable(e) for e in x]
            out = []
            for e in acc:
                h = _hashable(e)
                if h in pending:
                    pending.remove(h)
                else:
                    out.append(e)
            return out

        return _pa_array(fold_groups(values.to_pylist(), gid, retract, n_groups, agg, ret), values.type)


class MergeMapAgg(FieldAggregator):
    """MAP union, later keys win; retraction removes the retracted keys."""

    name = "merge_map"
    supports_retract = True

    def check_type(self) -> None:
        if not isinstance(self.dtype, MapType):
            raise InvalidInput(
                f"Data type of merge map column '{self.field.name}' must be 'MAP' but was '{self.dtype.as_sql()}'"
            )

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        def agg(acc: Any, x: Any) -> Any:
            if acc is None:
                return list(x)
            d = {_hashable(k): (k, v) for k, v in acc}
            for k, v in x:
                d[_hashable(k)] = (k, v)
            return list(d.values())

        def ret(acc: Any, x: Any) -> Any:
            if acc is None:
                return None
            gone = {_hashable(k) for k, _ in (x or [])}
            return [(k, v) for k, v in acc if _hashable(k) not in gone]

        return _pa_array(fold_groups(values.to_pylist(), gid, retract, n_groups, agg, ret), values.type)


class NestedUpdateAgg(FieldAggregator):
    """ARRAY<ROW> as a nested table keyed by ``fields.<f>.nested-key`` (no key: append rows)."""

    name = "nested_update"
    supports_retract = True

    def __init__(self, field: DataField, options: CoreOptions, ignore_retract: bool = False) -> None:
        super().__init__(field, options, ignore_retract)
        raw = options.get(f"fields.{field.name}.nested-key") or ""
        self.nested_key = [k.strip() for k in raw.split(",") if k.strip()]
        assert isinstance(self.dtype, ArrayType) and isinstance(self.dtype.element, RowType)
        names = [f.name for f in self.dtype.element.fields]
        for k in self.nested_key:
            if k not in names:
                raise InvalidInput(f"nested-key '{k}' of field '{field.name}' is not a field of {names}")

    def check_type(self) -> None:
        if not (isinstance(self.dtype, ArrayType) and isinstance(self.dtype.element, RowType)):
            raise InvalidInput(
                f"Data type of nested table column '{self.field.name}' must be 'Array<Row>' "
                f"but was '{self.dtype.as_sql()}'"
            )

    def _aggregate(self, values, gid, retract, n_groups):  # type: ignore[no-untyped-def]
        keys = self.nested_key

        def key_of(row: Any) -> Any:
            return tuple(_hashable(row.get(k)) for k in keys)

        def agg(acc: Any, x: Any) -> Any:
            if acc is None:
                rows = list(x)
            else:
                rows = list(acc) + list(x)
            if keys:
                d: dict[Any, Any] = {}
                for r in rows:
                    k = key_of(r)
                    d[k] = r
                rows = list(d.values())
            return rows

        def ret(acc: Any, x: Any) -> Any:
            if acc is None or x is None:
                return acc
            if keys:
                gone = {key_of(r) for r in x}
                return [r for r in acc if key_of(r) not in gone]
            gone_rows = {_hashable(r) for r in x}
            return [r for r in acc if _hashable(r) not in gone_rows]

        return _pa_array(fold_groups(values.to_pylist(), gid, retract, n_groups, agg, ret), values.type)


_AGGREGATORS: dict[str, type[FieldAggregator]] = {
    "sum": SumAgg,
    "product": ProductAgg,
    "max": MaxAgg,
    "min": MinAgg,
    "last_value": LastValueAgg,
    "last_non_null_value": LastNonNullValueAgg,
    "listagg": ListaggAgg,
    "bool_and": BoolAndAgg,
    "bool_or": BoolOrAgg,
    "first_value": FirstValueAgg,
    "first_non_null_value": FirstNonNullValueAgg,
    "first_not_null_value": FirstNonNullValueAgg,  # Java's legacy name
    "rbm32": Rbm32Agg,
    "rbm64": Rbm64Agg,
    "theta_sketch": ThetaSketchAgg,
    "collect": CollectAgg,
    "merge_map": MergeMapAgg,
    "nested_update": NestedUpdateAgg,
}
_SKETCHES = ("hll_sketch", "nested_partial_update", "merge_map_with_keytime")
AGGREGATE_FUNCTIONS = tuple(_AGGREGATORS)


def create_aggregator(field: DataField, func: str | None, options: CoreOptions,
                      is_primary_key: bool = False) -> FieldAggregator:
    """Java's FieldAggregator factory: PK -> primary-key, None -> last_non_null_value, + ignore-retract."""
    ignore_retract = (options.get(f"fields.{field.name}.ignore-retract") or "false").lower() == "true"
    if is_primary_key:
        return PrimaryKeyAgg(field, options, ignore_retract)
    name = (func or "last_non_null_value").strip()
    cls = _AGGREGATORS.get(name)
    if cls is None:
        if name in _SKETCHES:
            raise NotYetSupported(
                f"aggregate function '{name}' of field '{field.name}' is not supported by paimon-cli yet"
            )
        raise InvalidInput(
            f"Use unsupported aggregation: '{name}' for field '{field.name}' or spell aggregate function "
            f"incorrectly (known: {', '.join(sorted(_AGGREGATORS))})"
        )
    return cls(field, options, ignore_retract)
