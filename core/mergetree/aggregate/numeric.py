"""Numeric and comparison aggregators: sum, product, max, min, bool_and, bool_or (Java
``FieldSumAgg``, ``FieldProductAgg``, ``FieldMaxAgg``, ...), with Java's overflow and retraction."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...data.types import (
    ArrayType,
    BooleanType,
    DecimalType,
    MapType,
    RowType,
)
from ...errors import InvalidInput
from .base import INTEGER_TYPES, NUMERIC_TYPES, FieldAggregator
from .groups import (
    SEQUENTIAL_FOLD_MAX_GROUP,
    fold_groups,
    group_starts,
    hash_aggregate,
    np_dtype,
    np_values,
    segment_sum,
    sequential_fold,
    valid_mask,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


class SumAgg(FieldAggregator):
    name = "sum"
    supports_retract = True
    commutative = True

    def check_type(self) -> None:
        if not isinstance(self.dtype, NUMERIC_TYPES):
            raise self._bad_type()

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        valid = valid_mask(values)
        if isinstance(self.dtype, DecimalType):
            signed = pc.if_else(pa.array(retract), pc.negate(values), values)
            total = hash_aggregate(signed, gid, n_groups, "sum", pc.ScalarAggregateOptions(min_count=1))
            return _decimal_fit(total, self.dtype)
        np_t = np_dtype(self.dtype)
        v = np_values(values, 0)
        count = segment_sum(valid.astype(np.int64), gid, n_groups)
        if isinstance(self.dtype, INTEGER_TYPES):
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
                res, _ = sequential_fold(v, valid, retract, gid, n_groups,
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
        if not isinstance(self.dtype, NUMERIC_TYPES):
            raise self._bad_type()

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import numpy as np
        import pyarrow as pa

        valid = valid_mask(values)
        if isinstance(self.dtype, DecimalType):
            return _decimal_product(values, gid, retract, n_groups, self.dtype)
        np_t = np_dtype(self.dtype)
        v = np_values(values, 1).astype(np_t)
        count = segment_sum(valid.astype(np.int64), gid, n_groups)
        is_int = isinstance(self.dtype, INTEGER_TYPES)
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
        res, _ = sequential_fold(v, valid, retract, gid, n_groups,
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

    def _aggregate(self, values: pa.Array, gid: np.ndarray, retract: np.ndarray, n_groups: int) -> pa.Array:
        import pyarrow.compute as pc

        return hash_aggregate(values, gid, n_groups, self.func,
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
