"""Values rendered the way Java Paimon's system tables render them.

System tables build strings such as ``[2024-01-01, 3]`` (``Arrays.toString`` of a partition)
or ``{id=1, name=a}`` (a ``TreeMap`` of stats) out of Paimon's *internal* values: a DATE is
its day count, a TIME its millisecond of day, a TIMESTAMP prints like ``LocalDateTime``,
doubles print like ``Double.toString``. Matching those strings is what lets an operator
compare our ``inspect`` with Flink/Spark output line by line.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import math
from collections.abc import Iterable, Mapping
from typing import Any

from .types import DataType, DoubleType, FloatType

_EPOCH = _dt.date(1970, 1, 1)


def java_double(v: float) -> str:
    """``Double.toString``: plain for 1e-3 <= |v| < 1e7, else ``d.dddE±n``; always a fraction digit."""
    if math.isnan(v):
        return "NaN"
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if v == 0:
        return "-0.0" if math.copysign(1.0, v) < 0 else "0.0"
    if 1e-3 <= abs(v) < 1e7:
        return repr(v)  # Python's repr is plain and shortest in this range, as Java's is
    return _java_fp(repr(v), abs(v))


def java_float(v: float) -> str:
    """``Float.toString``: the shortest digits that still identify the float32."""
    if math.isnan(v) or math.isinf(v) or v == 0:
        return java_double(v)
    import struct

    target = struct.pack("<f", v)
    for digits in range(1, 10):
        text = f"{v:.{digits}g}"
        try:
            same = struct.pack("<f", float(text)) == target
        except OverflowError:
            continue
        if same:
            return _java_fp(text, abs(float(text)))
    return _java_fp(repr(v), abs(v))


def _java_fp(py_repr: str, mag: float) -> str:
    d = decimal.Decimal(py_repr)
    sign, digits, exp = d.as_tuple()
    assert isinstance(exp, int)
    s = "".join(map(str, digits)).rstrip("0") or "0"
    # position of the decimal point relative to the digit string
    point = len(digits) + exp
    neg = "-" if sign else ""
    if 1e-3 <= mag < 1e7:
        if point <= 0:
            return f"{neg}0.{'0' * (-point)}{s}"
        if point >= len(s):
            return f"{neg}{s}{'0' * (point - len(s))}.0"
        return f"{neg}{s[:point]}.{s[point:]}"
    e = point - 1
    frac = s[1:] or "0"
    return f"{neg}{s[0]}.{frac}E{e}"


def java_string(v: Any, dtype: DataType | None = None) -> str:
    """``String.valueOf`` of Paimon's internal representation of a value."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if isinstance(dtype, FloatType):
            return java_float(v)
        return java_double(v) if dtype is None or isinstance(dtype, DoubleType) else repr(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, _dt.datetime):
        return java_local_datetime(v)
    if isinstance(v, _dt.date):
        return str((v - _EPOCH).days)
    if isinstance(v, _dt.time):
        return str(((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000)
    if isinstance(v, (bytes, bytearray, memoryview)):
        # Java prints the array identity ("[B@1b6d3586"), which is meaningless; show hex instead
        return "0x" + bytes(v).hex()
    return str(v)  # str, binary_row.Timestamp (prints like LocalDateTime)


def java_local_datetime(v: _dt.datetime, nanos: int | None = None) -> str:
    """``LocalDateTime.toString``: seconds dropped when zero, fraction in 3/6/9-digit groups."""
    n = v.microsecond * 1000 if nanos is None else nanos
    year = f"+{v.year}" if v.year > 9999 else f"{v.year:04d}"
    out = f"{year}-{v.month:02d}-{v.day:02d}T{v.hour:02d}:{v.minute:02d}"
    if v.second or n:
        out += f":{v.second:02d}"
        if n:
            if n % 1_000_000 == 0:
                out += f".{n // 1_000_000:03d}"
            elif n % 1000 == 0:
                out += f".{n // 1000:06d}"
            else:
                out += f".{n:09d}"
    return out


def java_array_string(values: Iterable[Any], types: Iterable[DataType] | None = None) -> str:
    """``Arrays.toString`` of internal values: ``[a, b]``."""
    vals = list(values)
    tys = list(types) if types is not None else [None] * len(vals)
    return "[" + ", ".join(java_string(v, t) for v, t in zip(vals, tys, strict=True)) + "]"


def java_map_string(m: Mapping[str, Any], types: Mapping[str, DataType] | None = None) -> str:
    """``TreeMap.toString``: keys sorted, ``{k=v, k2=v2}``."""
    types = types or {}
    return "{" + ", ".join(f"{k}={java_string(m[k], types.get(k))}" for k in sorted(m)) + "}"


def local_datetime_from_millis(millis: int) -> _dt.datetime:
    """An epoch-millis instant as the machine's local wall clock (what Java's system tables
    show), aware: it carries the local offset, so it is the same instant under any ``TZ``."""
    utc = _dt.datetime.fromtimestamp(millis // 1000, _dt.timezone.utc).replace(microsecond=(millis % 1000) * 1000)
    return utc.astimezone()


def utc_wall_clock_from_millis(millis: int) -> _dt.datetime:
    """Millis that already encode a wall clock as if UTC (``_CREATION_TIME``) to a naive datetime."""
    return _EPOCH_DT + _dt.timedelta(milliseconds=millis)


_EPOCH_DT = _dt.datetime(1970, 1, 1)


def java_string_hash(s: str) -> int:
    """``String.hashCode`` over UTF-16 code units, as a signed int32."""
    h = 0
    b = s.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(b), 2):
        h = (31 * h + ((b[i] << 8) | b[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def java_hash_map_order(keys: Iterable[str]) -> list[str]:
    """The iteration order of a ``java.util.HashMap`` filled with ``keys`` in this order.

    Java reads schema options into a HashMap, so its ``$options`` and ``$schemas`` show them
    in bucket order: capacity grows from 16 by doubling past 0.75 load, a key's bucket is
    ``(h ^ (h >>> 16)) & (capacity - 1)``, and a bucket keeps insertion order.
    """
    ks = list(dict.fromkeys(keys))
    cap = 16
    while len(ks) > cap * 0.75:
        cap *= 2

    def bucket(k: str) -> int:
        h = java_string_hash(k) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (cap - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(ks))]
