"""``--where`` literals: as written (:class:`RawLiteral`), typed by their column
(:func:`coerce_literal`, binary_row's Python domain), as pyarrow values, and as SQL text."""

from __future__ import annotations

import datetime as _dt
import decimal
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from .binary_row import Timestamp
from .types import (
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

if TYPE_CHECKING:
    import pyarrow as pa


@dataclass(frozen=True)
class RawLiteral:
    """An untyped literal as written: kind in int/num/str/date/time/timestamp/bool/null/hex."""

    kind: str
    text: str

    def show(self) -> str:
        if self.kind in ("str", "date", "time", "timestamp", "hex"):
            prefix = {"str": "", "date": "DATE ", "time": "TIME ", "timestamp": "TIMESTAMP ", "hex": "X"}[self.kind]
            return f"{prefix}'{self.text}'"
        return self.text


_INT_RANGES = {TinyIntType: 8, SmallIntType: 16, IntType: 32, BigIntType: 64}
_TS_RE = re.compile(
    r"\s*(\d{4,})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?\s*", re.IGNORECASE)


def _bad(column: str, raw: RawLiteral, t: DataType, why: str = "") -> InvalidInput:
    extra = f": {why}" if why else ""
    return InvalidInput(f"--where: literal {raw.show()} does not fit column {column} {t.as_sql()}{extra}")


def coerce_literal(raw: RawLiteral, t: DataType, column: str) -> Any:
    """The literal as a value of the column's type (binary_row's Python domain); InvalidInput if not."""
    if raw.kind == "null":
        return None
    if isinstance(t, BooleanType):
        if raw.kind == "bool" or (raw.kind == "str" and raw.text.lower() in ("true", "false")):
            return raw.text.lower() == "true"
        raise _bad(column, raw, t, "expected TRUE or FALSE")
    if type(t) in _INT_RANGES or isinstance(t, (FloatType, DoubleType, DecimalType)):
        return _coerce_number(raw, t, column)
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
        return _coerce_time(raw, t, column)
    raise InvalidInput(f"--where: column {column} of type {t.as_sql()} cannot be compared with a literal")


def _coerce_number(raw: RawLiteral, t: DataType, column: str) -> Any:
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


def _coerce_time(raw: RawLiteral, t: DataType, column: str) -> Any:
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
        nanos = ts.millisecond * 1_000_000 + ts.nano_of_millisecond
        if getattr(t, "precision", 6) > 6 and not -2**63 <= nanos < 2**63:
            # values of TIMESTAMP(7..9) are held in int64 nanoseconds (and refused beyond, see
            # parquet_int96): a literal there cannot be compared with them
            raise _bad(column, raw, t, "outside 1677-09-21..2262-04-11, the range of nanosecond timestamps")
        return ts
    raise _bad(column, raw, t, "expected TIMESTAMP 'yyyy-mm-dd hh:mm:ss'")


def parse_timestamp_literal(text: str, ltz: bool) -> Any:
    """Exact (nanosecond) timestamp; an offset is only meaningful (and allowed) for LTZ columns.

    TIMESTAMP holds a wall clock, so a literal is one too. TIMESTAMP_LTZ holds an instant: a
    literal with an offset is converted to UTC, one without is taken as UTC.
    """
    m = _TS_RE.fullmatch(text)
    if not m:
        return None
    y, mo, d, h, mi, s, frac, off = m.groups()
    if off and not ltz:
        return None
    try:
        base = _dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
    except ValueError:
        return None
    nanos = int((frac or "").ljust(9, "0")) if frac else 0
    if off and off.upper() != "Z":
        sign = -1 if off[0] == "-" else 1
        digits = off[1:].replace(":", "")
        base -= sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    ts = Timestamp.from_datetime(base)
    return Timestamp(ts.millisecond + nanos // 1_000_000, nanos % 1_000_000)


def literal_fits(v: Any, t: DataType) -> bool:
    """Whether an (already range-checked) literal is exactly a value of ``t`` (decimal scale)."""
    if isinstance(t, DecimalType) and isinstance(v, decimal.Decimal):
        return v == v.quantize(decimal.Decimal(1).scaleb(-t.scale))
    return True


def _ts_unit(t: DataType, values: Sequence[Any]) -> str:
    p = getattr(t, "precision", 6)
    unit = "ms" if p <= 3 else "us" if p <= 6 else "ns"
    for v in values:  # a literal finer than the column keeps its precision (never equal, but ordered)
        if v is not None:
            if v.nano_of_millisecond % 1000 and unit != "ns":
                unit = "ns"
            elif v.nano_of_millisecond and unit == "ms":
                unit = "us"
    return unit


def _literal_arrow_type(values: Sequence[Any], t: DataType) -> pa.DataType:
    import pyarrow as pa

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


def arrow_values(values: Sequence[Any], t: DataType) -> tuple[list[Any], pa.DataType]:
    """Literals as pyarrow accepts them, with one arrow type for all (timestamps as epoch ints)."""
    at = _literal_arrow_type(values, t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        div = {"ms": 1_000_000, "us": 1000, "ns": 1}[at.unit]
        return [(v.millisecond * 1_000_000 + v.nano_of_millisecond) // div for v in values], at
    return list(values), at


def sql_literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float, decimal.Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return f"X'{v.hex()}'"
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return f"DATE '{v.isoformat()}'"
    if isinstance(v, Timestamp):
        return f"TIMESTAMP '{str(v).replace('T', ' ')}'"
    if isinstance(v, _dt.time):
        return f"TIME '{v.isoformat()}'"
    return "'" + str(v).replace("'", "''") + "'"
