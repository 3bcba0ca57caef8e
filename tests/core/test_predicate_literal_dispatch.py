"""predicate_literal's dispatches over types match the isinstance chains they replaced.

The chains are kept here verbatim as the reference; every type class of
``tests/type_instances.py`` meets literals of every kind, valid and not.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import struct
from collections.abc import Sequence
from typing import Any

import pyarrow as pa

from paimon_cli.core.data.predicate_literal import (
    RawLiteral,
    _bad,
    _ts_unit,
    parse_timestamp_literal,
)
from paimon_cli.core.data.types import (
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
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)
from paimon_cli.core.errors import InvalidInput

_INT_RANGES = {TinyIntType: 8, SmallIntType: 16, IntType: 32, BigIntType: 64}


def _chain_coerce_literal(raw: RawLiteral, t: DataType, column: str) -> Any:
    """The literal as a value of the column's type (binary_row's Python domain); InvalidInput if not."""
    if raw.kind == "null":
        return None
    if isinstance(t, BooleanType):
        if raw.kind == "bool" or (raw.kind == "str" and raw.text.lower() in ("true", "false")):
            return raw.text.lower() == "true"
        raise _bad(column, raw, t, "expected TRUE or FALSE")
    if type(t) in _INT_RANGES or isinstance(t, (FloatType, DoubleType, DecimalType)):
        return _chain_coerce_number(raw, t, column)
    if isinstance(t, (CharType, VarCharType)):
        if raw.kind in ("str", "int", "num"):
            return raw.text
        raise _bad(column, raw, t, "expected a string")
    if isinstance(t, (BinaryType, VarBinaryType)):
        if raw.kind == "hex":
            try:
                return bytes.fromhex(raw.text)
            except ValueError:
                raise _bad(column, raw, t, "bad hex") from None
        if raw.kind == "str":
            return raw.text.encode("utf-8")
        raise _bad(column, raw, t, "expected X'hex' or a string")
    if isinstance(t, (DateType, TimeType, TimestampType, LocalZonedTimestampType)):
        return _chain_coerce_time(raw, t, column)
    raise InvalidInput(f"--where: column {column} of type {t.as_sql()} cannot be compared with a literal")


def _chain_coerce_number(raw: RawLiteral, t: DataType, column: str) -> Any:
    """An integer (range-checked), FLOAT/DOUBLE (FLOAT rounded to 32 bits) or DECIMAL literal."""
    if raw.kind not in ("int", "num", "str"):
        raise _bad(column, raw, t)
    text = raw.text.strip()
    if isinstance(t, (FloatType, DoubleType)):
        try:
            v = float(text)
        except ValueError:
            raise _bad(column, raw, t, "not a number") from None
        return struct.unpack("<f", struct.pack("<f", v))[0] if isinstance(t, FloatType) else v
    try:
        d = decimal.Decimal(text)
    except decimal.InvalidOperation:
        raise _bad(column, raw, t, "not a number") from None
    if isinstance(t, DecimalType):
        if not d.is_finite():
            raise _bad(column, raw, t, "not a finite number")
        if abs(d) >= decimal.Decimal(10) ** (t.precision - t.scale):
            raise _bad(column, raw, t, "out of range")
        return d
    if not d.is_finite() or d != d.to_integral_value():
        raise _bad(column, raw, t, "not an integer")
    bits = _INT_RANGES[type(t)]
    v = int(d)
    if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
        raise _bad(column, raw, t, "out of range")
    return v


def _chain_coerce_time(raw: RawLiteral, t: DataType, column: str) -> Any:
    """A DATE, TIME or TIMESTAMP / TIMESTAMP_LTZ literal."""
    text = raw.text
    if isinstance(t, DateType):
        if raw.kind in ("date", "str"):
            try:
                return _dt.date.fromisoformat(text.strip())
            except ValueError:
                raise _bad(column, raw, t, "expected yyyy-mm-dd") from None
        raise _bad(column, raw, t, "expected DATE 'yyyy-mm-dd'")
    if isinstance(t, TimeType):
        if raw.kind in ("time", "str"):
            try:
                return _dt.time.fromisoformat(text.strip())
            except ValueError:
                raise _bad(column, raw, t, "expected hh:mm:ss[.fff]") from None
        raise _bad(column, raw, t, "expected TIME 'hh:mm:ss'")
    if raw.kind in ("timestamp", "str", "date"):
        ts = parse_timestamp_literal(text, isinstance(t, LocalZonedTimestampType))
        if ts is None:
            raise _bad(column, raw, t, "expected yyyy-mm-dd[ hh:mm[:ss[.fffffffff]]]")
        return ts
    raise _bad(column, raw, t, "expected TIMESTAMP 'yyyy-mm-dd hh:mm:ss'")


def _chain_literal_arrow_type(values: Sequence[Any], t: DataType) -> pa.DataType:
    if isinstance(t, BooleanType):
        return pa.bool_()
    if isinstance(t, TinyIntType):
        return pa.int8()
    if isinstance(t, SmallIntType):
        return pa.int16()
    if isinstance(t, IntType):
        return pa.int32()
    if isinstance(t, BigIntType):
        return pa.int64()
    if isinstance(t, FloatType):
        return pa.float32()
    if isinstance(t, DoubleType):
        return pa.float64()
    if isinstance(t, DecimalType):
        scale = max([t.scale] + [-v.as_tuple().exponent for v in values if v is not None])
        return pa.decimal128(min(38, t.precision - t.scale + scale), scale)
    if isinstance(t, (CharType, VarCharType)):
        return pa.string()
    if isinstance(t, (BinaryType, VarBinaryType)):
        return pa.binary()
    if isinstance(t, DateType):
        return pa.date32()
    if isinstance(t, TimeType):
        return pa.time32("ms") if t.precision <= 3 else pa.time64("us")
    if isinstance(t, LocalZonedTimestampType):
        return pa.timestamp(_ts_unit(t, values), tz="UTC")
    if isinstance(t, TimestampType):
        return pa.timestamp(_ts_unit(t, values))
    raise InvalidInput(f"--where: no arrow literal for type {t.as_sql()}")


RAW_LITERALS = [
    ("null", "NULL"), ("bool", "TRUE"), ("bool", "false"), ("str", "true"), ("str", "abc"), ("str", "12"),
    ("str", " 7 "), ("str", "2024-01-02"), ("str", "12:30:00"), ("str", "2024-01-02 03:04:05.123456789"),
    ("str", "2024-01-02T03:04:05+02:00"), ("str", "NaN"), ("str", "Infinity"), ("int", "127"), ("int", "128"),
    ("int", "-129"), ("int", "32768"), ("int", "2147483648"), ("int", "-9223372036854775808"),
    ("int", "9223372036854775808"), ("num", "1.5"), ("num", "-0.0"), ("num", "1e400"), ("num", "3.14159"),
    ("num", "12345678901234567890.5"), ("num", "99999999.99"), ("num", "100000000"), ("hex", "0aff"),
    ("hex", "zz"), ("date", "2024-02-29"), ("date", "2023-02-29"), ("time", "23:59:59.999"), ("time", "25:00"),
    ("timestamp", "2024-01-02 03:04:05.1234567"), ("timestamp", "2024-01-02 03:04:05Z"),
    ("timestamp", "2024-01-02 03:04:05-07:30"), ("timestamp", "nope"),
]


def _outcome(fn: Any, *args: Any) -> Any:
    try:
        v = fn(*args)
    except Exception as e:
        return ("raises", type(e), str(e))
    return ("value", type(v), repr(v))


def test_literal_coercion_and_arrow_types_of_every_type_class_are_the_former_isinstance_chains() -> None:
    from paimon_cli.core.data.predicate_literal import _literal_arrow_type, coerce_literal
    from tests.type_instances import EVERY_TYPE, covers_every_type_class, every_type

    assert covers_every_type_class(EVERY_TYPE)
    kinds = set()
    for t in every_type():
        values = []
        for kind, text in RAW_LITERALS:
            raw = RawLiteral(kind, text)
            got = _outcome(coerce_literal, raw, t, "c")
            assert got == _outcome(_chain_coerce_literal, raw, t, "c"), (t, raw)
            kinds.add(got[0])
            if got[0] == "value" and kind != "null":
                values.append(coerce_literal(raw, t, "c"))
        for vals in ([], values[:1], values):
            assert _outcome(_literal_arrow_type, vals, t) == _outcome(_chain_literal_arrow_type, vals, t), (t, vals)
    assert kinds == {"value", "raises"}
