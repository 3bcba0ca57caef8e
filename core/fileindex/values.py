"""Column values in the form Java's file indexes see them, vectorised.

Java feeds its index writers Paimon's internal values: ``BinaryString`` bytes for CHAR /
VARCHAR, ``byte[]`` for BINARY, int for TINYINT..INT, DATE (days) and TIME (millis of day),
long for BIGINT, TIMESTAMP as millis (precision <= 3) or micros, float/double, boolean and
the unscaled long of a DECIMAL (BSI). Here a pyarrow column becomes a :class:`Column`:
a validity mask plus either a numpy array of those numbers or a list of bytes.

Literal values from ``--where`` (core.data.predicate's Python domain) map the same way through
:func:`literal_key`, which returns None when the literal cannot equal any stored value
exactly (the caller then stays conservative).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..data.binary_row import Timestamp
from ..data.type_visitor import DataTypeVisitor
from ..data.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

# value kinds
STRING = "string"
BYTES = "bytes"
INT = "int"  # any integer domain held in int64 (tinyint..bigint, date, time, timestamps, decimal)
FLOAT = "float"
DOUBLE = "double"
BOOL = "bool"


class _IndexKinds(DataTypeVisitor["str | None"]):
    """The value domain a file index keys a type's values in; None: the type is not indexed."""

    def visit_atomic(self, dt: DataType) -> str | None:
        return None  # variant, blob

    def visit_char(self, dt: CharType) -> str | None:
        return STRING

    def visit_varchar(self, dt: VarCharType) -> str | None:
        return STRING

    def visit_binary(self, dt: BinaryType) -> str | None:
        return BYTES

    def visit_varbinary(self, dt: VarBinaryType) -> str | None:
        return BYTES

    def visit_tinyint(self, dt: TinyIntType) -> str | None:
        return INT

    def visit_smallint(self, dt: SmallIntType) -> str | None:
        return INT

    def visit_int(self, dt: IntType) -> str | None:
        return INT

    def visit_bigint(self, dt: BigIntType) -> str | None:
        return INT

    def visit_date(self, dt: DateType) -> str | None:
        return INT

    def visit_time(self, dt: TimeType) -> str | None:
        return INT

    def visit_timestamp(self, dt: TimestampType) -> str | None:
        return INT

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> str | None:
        return INT

    def visit_float(self, dt: FloatType) -> str | None:
        return FLOAT

    def visit_double(self, dt: DoubleType) -> str | None:
        return DOUBLE

    def visit_boolean(self, dt: BooleanType) -> str | None:
        return BOOL

    def visit_decimal(self, dt: DecimalType) -> str | None:
        return INT if dt.precision <= 18 else None

    def visit_array(self, dt: ArrayType) -> str | None:
        return None

    def visit_multiset(self, dt: MultisetType) -> str | None:
        return None

    def visit_map(self, dt: MapType) -> str | None:
        return None

    def visit_row(self, dt: RowType) -> str | None:
        return None


_INDEX_KINDS = _IndexKinds()


def kind_of(t: DataType) -> str | None:
    return _INDEX_KINDS.visit(t)


@dataclass
class Column:
    """One batch of a column: ``valid`` (bool numpy), and ``values`` (numpy for numbers,
    a pyarrow binary array for strings/bytes so no Python objects are made)."""

    kind: str
    valid: np.ndarray
    values: Any
    length: int


def _ts_numbers(arr: pa.Array, t: TimestampType | LocalZonedTimestampType) -> np.ndarray:
    """millis (p <= 3) or micros, as Java's Timestamp.getMillisecond / toMicros (floor)."""
    import numpy as np
    import pyarrow as pa

    unit = arr.type.unit
    raw = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    precision = t.precision
    per_sec = {"s": 1, "ms": 1000, "us": 1_000_000, "ns": 1_000_000_000}[unit]
    want = 1000 if precision <= 3 else 1_000_000
    if per_sec == want:
        return raw
    if per_sec < want:
        return raw * (want // per_sec)
    return np.floor_divide(raw, per_sec // want)


def to_column(arr: pa.Array | pa.ChunkedArray, t: DataType) -> Column:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    n = len(arr)
    valid = (np.ones(n, dtype=bool) if arr.null_count == 0
             else arr.is_valid().to_numpy(zero_copy_only=False))
    kind = kind_of(t)
    if kind in (STRING, BYTES):
        # bytes views without copying: string -> binary, large_string -> large_binary
        if pa.types.is_string(arr.type):
            values = arr.view(pa.binary())
        elif pa.types.is_large_string(arr.type):
            values = arr.view(pa.large_binary())
        elif pa.types.is_binary(arr.type) or pa.types.is_large_binary(arr.type):
            values = arr
        else:  # fixed-size binary, string views, dictionaries: normalise once
            values = arr.cast(pa.large_binary()) if not pa.types.is_dictionary(arr.type) else \
                arr.dictionary_decode().cast(pa.large_binary())
        return Column(kind, valid, values, n)
    if kind == BOOL:
        return Column(kind, valid, arr.fill_null(False).to_numpy(zero_copy_only=False).astype(bool), n)
    if kind == FLOAT:
        v = arr.cast(pa.float32()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.float32)
        return Column(kind, valid, v, n)
    if kind == DOUBLE:
        v = arr.cast(pa.float64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.float64)
        return Column(kind, valid, v, n)
    if kind == INT:
        if isinstance(t, (TimestampType, LocalZonedTimestampType)):
            return Column(kind, valid, _ts_numbers(arr, t), n)
        if isinstance(t, DecimalType):
            # decimal128 little-endian two's complement; precision <= 18 fits the low word
            d = arr.cast(pa.decimal128(t.precision, t.scale))
            buf = np.frombuffer(d.buffers()[1], dtype=np.int64)
            v = buf[2 * d.offset: 2 * (d.offset + n)][0::2].copy()
            v[~valid] = 0
            return Column(kind, valid, v, n)
        if isinstance(t, DateType):
            v = arr.cast(pa.int32())
        elif isinstance(t, TimeType):
            if pa.types.is_time(arr.type):
                unit = arr.type.unit
                v = arr.cast(pa.int64() if arr.type.bit_width == 64 else pa.int32())
                div = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[unit]
                if unit == "s":
                    v = pc.multiply(v.cast(pa.int64()), 1000)
                elif div != 1:
                    v = pc.divide(v.cast(pa.int64()), div)
            else:
                v = arr
        else:
            v = arr
        out = v.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
        return Column(kind, valid, out, n)
    raise ValueError(f"no file-index value mapping for {t.as_sql()}")


# -- literals -------------------------------------------------------------------------------

_EPOCH_DATE = _dt.date(1970, 1, 1)


def literal_key(v: Any, t: DataType) -> Any:
    """The index key of a predicate literal: bytes, int, float or bool; None = not exact."""
    if v is None:
        return None
    k = kind_of(t)
    try:
        if k == STRING:
            return v.encode("utf-8") if isinstance(v, str) else None
        if k == BYTES:
            return bytes(v) if isinstance(v, (bytes, bytearray)) else None
        if k == BOOL:
            return bool(v) if isinstance(v, bool) else None
        if k == FLOAT:
            if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
                return None
            f = float(v)
            rt = struct.unpack(">f", struct.pack(">f", f))[0]
            return rt if rt == f else None  # not representable as float32: equality cannot hold
        if k == DOUBLE:
            if isinstance(v, bool) or not isinstance(v, (int, float, decimal.Decimal)):
                return None
            return float(v)
        if k == INT:
            if isinstance(t, DateType):
                if isinstance(v, _dt.datetime) or not isinstance(v, _dt.date):
                    return None
                return (v - _EPOCH_DATE).days
            if isinstance(t, TimeType):
                if not isinstance(v, _dt.time):
                    return None
                if v.microsecond % 1000:
                    return None
                return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
            if isinstance(t, (TimestampType, LocalZonedTimestampType)):
                if isinstance(v, _dt.datetime):
                    v = Timestamp.from_datetime(v)
                if not isinstance(v, Timestamp):
                    return None
                if t.precision <= 3:
                    return v.millisecond if v.nano_of_millisecond == 0 else None
                if v.nano_of_millisecond % 1000:
                    return None
                return v.to_epoch_micros()
            if isinstance(t, DecimalType):
                if isinstance(v, bool) or not isinstance(v, (int, decimal.Decimal)):
                    return None
                scaled = decimal.Decimal(v).scaleb(t.scale)
                if scaled != scaled.to_integral_value():
                    return None
                return int(scaled)
            if isinstance(v, bool) or not isinstance(v, int):
                if isinstance(v, (float, decimal.Decimal)) and v == int(v):
                    return int(v)
                return None
            return int(v)
    except (ValueError, OverflowError, ArithmeticError):
        return None
    return None


