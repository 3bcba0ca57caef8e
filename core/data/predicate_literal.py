"""``--where`` literals: as written (:class:`RawLiteral`), typed by their column
(:func:`coerce_literal`, binary_row's Python domain), as pyarrow values, and as SQL text."""

from __future__ import annotations

import datetime as _dt
import decimal
import re
import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, NoReturn

from ..errors import InvalidInput
from .binary_row import Timestamp
from .type_visitor import DataTypeVisitor
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
    return _LiteralCoercion(raw, column).visit(t)


class _LiteralCoercion(DataTypeVisitor[Any]):
    """One literal as a value of the type visited."""

    def __init__(self, raw: RawLiteral, column: str) -> None:
        self.raw = raw
        self.column = column

    def unsupported(self, dt: DataType) -> NoReturn:
        raise InvalidInput(f"--where: column {self.column} of type {dt.as_sql()} cannot be compared with a literal")

    def _bad(self, t: DataType, why: str = "") -> InvalidInput:
        return _bad(self.column, self.raw, t, why)

    def visit_boolean(self, dt: BooleanType) -> Any:
        raw = self.raw
        if raw.kind == "bool" or (raw.kind == "str" and raw.text.lower() in ("true", "false")):
            return raw.text.lower() == "true"
        raise self._bad(dt, "expected TRUE or FALSE")

    def visit_tinyint(self, dt: TinyIntType) -> Any:
        return self._integer(dt, 8)

    def visit_smallint(self, dt: SmallIntType) -> Any:
        return self._integer(dt, 16)

    def visit_int(self, dt: IntType) -> Any:
        return self._integer(dt, 32)

    def visit_bigint(self, dt: BigIntType) -> Any:
        return self._integer(dt, 64)

    def visit_float(self, dt: FloatType) -> Any:
        v = self._float(dt)
        return struct.unpack("<f", struct.pack("<f", v))[0]  # FLOAT: rounded to 32 bits

    def visit_double(self, dt: DoubleType) -> Any:
        return self._float(dt)

    def visit_decimal(self, dt: DecimalType) -> Any:
        d = self._decimal(dt)
        if not d.is_finite():
            raise self._bad(dt, "not a finite number")
        if abs(d) >= decimal.Decimal(10) ** (dt.precision - dt.scale):
            raise self._bad(dt, "out of range")
        return d

    def _number_text(self, t: DataType) -> str:
        if self.raw.kind not in ("int", "num", "str"):
            raise self._bad(t)
        return self.raw.text.strip()

    def _float(self, t: DataType) -> float:
        text = self._number_text(t)
        try:
            return float(text)
        except ValueError:
            raise self._bad(t, "not a number") from None

    def _decimal(self, t: DataType) -> decimal.Decimal:
        text = self._number_text(t)
        try:
            return decimal.Decimal(text)
        except decimal.InvalidOperation:
            raise self._bad(t, "not a number") from None

    def _integer(self, t: DataType, bits: int) -> int:
        """An integer literal, range-checked for a ``bits``-wide column."""
        d = self._decimal(t)
        if not d.is_finite() or d != d.to_integral_value():
            raise self._bad(t, "not an integer")
        v = int(d)
        if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
            raise self._bad(t, "out of range")
        return v

    def visit_char(self, dt: CharType) -> Any:
        return self._string(dt)

    def visit_varchar(self, dt: VarCharType) -> Any:
        return self._string(dt)

    def _string(self, t: DataType) -> str:
        if self.raw.kind in ("str", "int", "num"):
            return self.raw.text
        raise self._bad(t, "expected a string")

    def visit_binary(self, dt: BinaryType) -> Any:
        return self._bytes(dt)

    def visit_varbinary(self, dt: VarBinaryType) -> Any:
        return self._bytes(dt)

    def _bytes(self, t: DataType) -> bytes:
        raw = self.raw
        if raw.kind == "hex":
            try:
                return bytes.fromhex(raw.text)
            except ValueError:
                raise self._bad(t, "bad hex") from None
        if raw.kind == "str":
            return raw.text.encode("utf-8")
        raise self._bad(t, "expected X'hex' or a string")

    def visit_date(self, dt: DateType) -> Any:
        if self.raw.kind in ("date", "str"):
            try:
                return _dt.date.fromisoformat(self.raw.text.strip())
            except ValueError:
                raise self._bad(dt, "expected yyyy-mm-dd") from None
        raise self._bad(dt, "expected DATE 'yyyy-mm-dd'")

    def visit_time(self, dt: TimeType) -> Any:
        if self.raw.kind in ("time", "str"):
            try:
                return _dt.time.fromisoformat(self.raw.text.strip())
            except ValueError:
                raise self._bad(dt, "expected hh:mm:ss[.fff]") from None
        raise self._bad(dt, "expected TIME 'hh:mm:ss'")

    def visit_timestamp(self, dt: TimestampType) -> Any:
        return self._timestamp(dt, ltz=False)

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> Any:
        return self._timestamp(dt, ltz=True)

    def _timestamp(self, t: DataType, ltz: bool) -> Any:
        if self.raw.kind in ("timestamp", "str", "date"):
            ts = parse_timestamp_literal(self.raw.text, ltz)
            if ts is None:
                raise self._bad(t, "expected yyyy-mm-dd[ hh:mm[:ss[.fffffffff]]]")
            nanos = ts.millisecond * 1_000_000 + ts.nano_of_millisecond
            if getattr(t, "precision", 6) > 6 and not -2**63 <= nanos < 2**63:
                # values of TIMESTAMP(7..9) are held in int64 nanoseconds (and refused beyond, see
                # parquet_int96): a literal there cannot be compared with them
                raise self._bad(t, "outside 1677-09-21..2262-04-11, the range of nanosecond timestamps")
            return ts
        raise self._bad(t, "expected TIMESTAMP 'yyyy-mm-dd hh:mm:ss'")


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
    return _LiteralArrowTypes(values).visit(t)


class _LiteralArrowTypes(DataTypeVisitor["pa.DataType"]):
    """The one Arrow type of a column's literals (decimal scale and timestamp unit widen to
    hold every literal exactly)."""

    def __init__(self, values: Sequence[Any]) -> None:
        import pyarrow as pa

        self.pa = pa
        self.values = values

    def unsupported(self, dt: DataType) -> NoReturn:
        raise InvalidInput(f"--where: no arrow literal for type {dt.as_sql()}")

    def visit_boolean(self, dt: BooleanType) -> pa.DataType:
        return self.pa.bool_()

    def visit_tinyint(self, dt: TinyIntType) -> pa.DataType:
        return self.pa.int8()

    def visit_smallint(self, dt: SmallIntType) -> pa.DataType:
        return self.pa.int16()

    def visit_int(self, dt: IntType) -> pa.DataType:
        return self.pa.int32()

    def visit_bigint(self, dt: BigIntType) -> pa.DataType:
        return self.pa.int64()

    def visit_float(self, dt: FloatType) -> pa.DataType:
        return self.pa.float32()

    def visit_double(self, dt: DoubleType) -> pa.DataType:
        return self.pa.float64()

    def visit_decimal(self, dt: DecimalType) -> pa.DataType:
        scale = max([dt.scale] + [-v.as_tuple().exponent for v in self.values if v is not None])
        return self.pa.decimal128(min(38, dt.precision - dt.scale + scale), scale)

    def visit_char(self, dt: CharType) -> pa.DataType:
        return self.pa.string()

    def visit_varchar(self, dt: VarCharType) -> pa.DataType:
        return self.pa.string()

    def visit_binary(self, dt: BinaryType) -> pa.DataType:
        return self.pa.binary()

    def visit_varbinary(self, dt: VarBinaryType) -> pa.DataType:
        return self.pa.binary()

    def visit_date(self, dt: DateType) -> pa.DataType:
        return self.pa.date32()

    def visit_time(self, dt: TimeType) -> pa.DataType:
        return self.pa.time32("ms") if dt.precision <= 3 else self.pa.time64("us")

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> pa.DataType:
        return self.pa.timestamp(_ts_unit(dt, self.values), tz="UTC")

    def visit_timestamp(self, dt: TimestampType) -> pa.DataType:
        return self.pa.timestamp(_ts_unit(dt, self.values))


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
