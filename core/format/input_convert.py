"""Checked conversion of input columns to the table's Arrow types: a value that would change
(overflow, lost digits or precision, unparsable text, too long for CHAR/VARCHAR(n)) is refused
with its position, found by bisecting the failing column (only on the error path). Floats into
DECIMAL are the one rounding cast, Java Paimon's own (see :func:`_float_to_decimal`)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..data.types import (
    MAX_LENGTH,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
)
from .arrow_schema import arrow_type

if TYPE_CHECKING:
    import pyarrow as pa

# a zone offset after a clock time: "...10:00Z", "...10:00:00.5+02:00", "... 10:00 -0130"
_OFFSET_RE = r"\d:\d\d(?::\d\d(?:[.,]\d*)?)?\s*(?:[Zz]|[+-]\d\d(?::?\d\d)?)$"


class BadValue(Exception):
    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


def display_value(arr: pa.Array, i: int) -> str:
    import decimal

    try:
        v = arr[i].as_py()
    except Exception:  # noqa: BLE001 - only for the message
        v = str(arr[i])
    if isinstance(v, decimal.Decimal):
        s = format(v, "f")
        s = s.rstrip("0").rstrip(".") if "." in s else s
    else:
        s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def first_true(mask: pa.Array) -> int:
    import pyarrow.compute as pc

    return int(pc.index(pc.fill_null(mask, False), True).as_py())


def _first_failing(arr: pa.Array, fn: Callable[[pa.Array], pa.Array]) -> tuple[int, str]:
    """Index and message of the first element ``fn`` fails on (fn fails element-wise)."""
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            fn(arr.slice(lo, mid - lo))
        except Exception:  # noqa: BLE001 - any failure narrows the search
            hi = mid
        else:
            lo = mid
    try:
        fn(arr.slice(lo, 1))
        return lo, "cannot be converted"
    except Exception as e:  # noqa: BLE001
        return lo, _reason(e)


def _reason(e: Exception) -> str:
    msg = str(e).split("\n", 1)[0]
    msg = re.sub(r"^(Invalid|NotImplemented): ", "", msg)
    msg = msg.split(". If these timestamps", 1)[0]
    return msg if len(msg) <= 160 else msg[:157] + "..."


def _checked(arr: pa.Array, fn: Callable[[pa.Array], pa.Array], sql: str) -> pa.Array:
    import pyarrow as pa

    try:
        return fn(arr)
    except (pa.ArrowInvalid, ValueError, OverflowError, _ConversionError):
        i, why = _first_failing(arr, fn)
        raise BadValue(i, f"value {display_value(arr, i)} cannot be stored as {sql} ({why})") from None
    except pa.ArrowNotImplementedError:
        raise BadValue(-1, f"cannot convert {arr.type} values to {sql}") from None


class _ConversionError(ValueError):
    pass


def is_string_type(t: pa.DataType) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _cast(arr: pa.Array, target: pa.DataType) -> pa.Array:
    import pyarrow.compute as pc

    return pc.cast(arr, target, safe=True)


def _float_to_decimal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """A float is the decimal its shortest text spells, rounded half-up to the column's scale:
    what Java's ``BigDecimal.valueOf(double)`` and Paimon's ``Decimal.fromBigDecimal`` do in a
    DOUBLE -> DECIMAL cast. Casting the binary value itself (pyarrow) would see 994.29 as
    994.2899999... Refused: NaN, infinities and values too large for the precision."""
    import pyarrow as pa
    import pyarrow.compute as pc

    p, s = target.precision, target.scale
    if pa.types.is_float16(arr.type):
        arr = _cast(arr, pa.float32())  # exact; float16 has no text cast
    wide = _cast(arr, pa.float64())  # exact; only for the magnitude checks
    if not pc.all(pc.fill_null(pc.is_finite(wide), True)).as_py():
        raise _ConversionError("not a finite number")
    magnitude = pc.abs(wide)
    # a margin of one digit each side keeps the decision exact: what is over it overflows for
    # sure, what is under it rounds to zero for sure; the rest is decided on the exact decimal
    if pc.any(pc.fill_null(pc.greater_equal(magnitude, 10.0 ** (p - s + 1)), False)).as_py():
        raise _ConversionError(f"more than {p - s} integer digits")
    tiny = pc.fill_null(pc.less(magnitude, 10.0 ** -(s + 2)), False)
    arr = pc.if_else(tiny, pa.scalar(0.0, arr.type), arr)
    # shortest text has at most 17 significant digits, so p - s + 2 integer digits and
    # s + 18 fraction digits hold every value left exactly (p <= 38 fits decimal256's 76)
    exact = _cast(_cast(arr, pa.string()), pa.decimal256(76, 74 - (p - s)))
    rounded = pc.round(exact, ndigits=s, round_mode="half_towards_infinity")  # Java's HALF_UP
    try:
        return _cast(rounded, target)
    except pa.ArrowInvalid:
        raise _ConversionError(f"more than {p - s} integer digits after rounding to scale {s}") from None


def _to_float32(arr: pa.Array) -> pa.Array:
    """float64 -> float32 rounds (as Java's cast does) but must not overflow to infinity."""
    import pyarrow as pa
    import pyarrow.compute as pc

    src = arr if pa.types.is_floating(arr.type) else _cast(arr, pa.float64())
    out = pc.cast(src, pa.float32())
    overflow = pc.and_(pc.is_finite(src), pc.invert(pc.is_finite(out)))
    if pc.any(pc.fill_null(overflow, False)).as_py():
        raise _ConversionError("out of FLOAT range")
    return out


def _parse_ts_text(arr: pa.Array, unit: str, aware: bool) -> pa.Array:
    """Text -> timestamp[unit] (UTC if ``aware``); more fraction digits than ``unit`` holds fail."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tz = "UTC" if aware else None
    try:
        return pc.cast(arr, pa.timestamp(unit, tz))
    except pa.ArrowInvalid:
        if unit == "ns":
            raise
        # maybe just more fraction digits: parse at nanos, then a checked (lossless) cast
        return pc.cast(pc.cast(arr, pa.timestamp("ns", tz)), pa.timestamp(unit, tz), safe=True)


def _parse_timestamp(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """ISO-8601 text -> timestamp: naive text is wall clock (UTC for LTZ), offsets go to UTC."""
    import pyarrow as pa
    import pyarrow.compute as pc

    has_offset = pc.fill_null(pc.match_substring_regex(arr, _OFFSET_RE), False)
    null_text = pa.scalar(None, arr.type)
    parts = []
    for aware, mask in ((True, has_offset), (False, pc.invert(has_offset))):
        if not pc.any(mask).as_py():
            continue
        ts = _parse_ts_text(pc.if_else(mask, arr, null_text), target.unit, aware)
        parts.append((mask, pc.cast(ts, target)))  # naive <-> UTC only relabels the zone
    if not parts:
        return pa.nulls(len(arr), target)
    if len(parts) == 1:
        return parts[0][1]
    return pc.if_else(parts[0][0], parts[0][1], parts[1][1])


def _parse_time(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``HH:MM:SS[.fff]`` text -> time32[ms] (pyarrow has no string -> time cast)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ts = pc.cast(pc.binary_join_element_wise("1970-01-01T", arr, ""), pa.timestamp("ns"))
    return pc.cast(pc.cast(ts, pa.time64("ns")), target, safe=True)


def _converter(source: pa.DataType, dt: DataType, target: pa.DataType) -> Callable[[pa.Array], pa.Array]:
    import pyarrow as pa

    if is_string_type(source):
        if isinstance(dt, TimeType):
            return lambda a: _parse_time(a, target)
        if isinstance(dt, (TimestampType, LocalZonedTimestampType)):
            return lambda a: _parse_timestamp(a, target)
        if isinstance(dt, FloatType):
            return lambda a: _to_float32(_cast(a, pa.float64()))
        if isinstance(dt, BooleanType):
            return lambda a: _cast(pa.compute.utf8_lower(a), target)
        return lambda a: _cast(a, target)
    if isinstance(dt, DecimalType):
        if pa.types.is_floating(source):
            return lambda a: _float_to_decimal(a, target)
        if pa.types.is_integer(source):
            return lambda a: _cast(_cast(a, pa.decimal128(38, 0)), target)
    if isinstance(dt, FloatType) and (pa.types.is_floating(source) or pa.types.is_decimal(source)):
        return _to_float32
    if isinstance(dt, DoubleType) and pa.types.is_decimal(source):
        return lambda a: _cast(a, target)
    return lambda a: _cast(a, target)


def _has_strings(t: pa.DataType) -> bool:
    return is_string_type(t) or any(_has_strings(t.field(i).type) for i in range(t.num_fields))


def _check_utf8(arr: pa.Array) -> None:
    """Strings must be valid UTF-8: text and JSON readers (and Arrow files) pass bytes through
    unchecked, and Java would fail on the data files we would write. One vectorised pass."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not _has_strings(arr.type):
        return
    try:
        arr.validate(full=True)
        return
    except pa.ArrowInvalid:
        pass
    i, _ = _first_failing(arr, lambda a: a.validate(full=True))
    where = ""
    if is_string_type(arr.type):
        raw = pc.cast(arr.slice(i, 1), pa.binary())[0].as_py()
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            where = f" at byte {e.start + 1} ({e.reason}: {raw[max(0, e.start - 8) : e.start + 8]!r})"
    raise BadValue(i, f"value is not valid UTF-8{where}")


def convert_column(arr: pa.Array | pa.ChunkedArray, dt: DataType) -> pa.Array:
    """``arr`` as the Arrow type of ``dt``, refusing any value that would change (see module)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    target = arrow_type(dt)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if isinstance(dt, (MapType, MultisetType)) and pa.types.is_struct(arr.type):
        raise BadValue(-1, f"cannot convert {arr.type} values to {dt.as_sql()} (give maps as Arrow/Parquet maps)")
    sql = dt.as_sql().replace(" NOT NULL", "")
    if pa.types.is_null(arr.type):
        out = pa.nulls(len(arr), target)
    elif arr.type.equals(target, check_metadata=False):
        out = arr
    else:
        out = _checked(arr, _converter(arr.type, dt, target), sql)
    _check_utf8(out)
    if isinstance(dt, (CharType, VarCharType, BinaryType, VarBinaryType)) and dt.length < MAX_LENGTH:
        lengths = pc.utf8_length(out) if isinstance(dt, (CharType, VarCharType)) else pc.binary_length(out)
        too_long = pc.greater(lengths, dt.length)
        if pc.any(too_long).as_py():
            i = first_true(too_long)
            unit = "characters" if isinstance(dt, (CharType, VarCharType)) else "bytes"
            raise BadValue(i, f"value {display_value(out, i)} is longer than {sql} ({lengths[i].as_py()} {unit})")
    return out
