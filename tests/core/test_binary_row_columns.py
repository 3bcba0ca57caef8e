"""Serialized BinaryRows decoded a column at a time give the values (types included) the row
decoder gives, and decline (None) what only the row decoder can report."""

from __future__ import annotations

import datetime as dt
import decimal
import math
import random
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.data.binary_row import deserialize, serialize
from paimon_cli.core.data.binary_row_columns import decode_serialized
from paimon_cli.core.data.types import (
    BigIntType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    TimestampType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

TYPES: list[DataType] = [IntType(), BigIntType(), VarCharType(100), DoubleType(), FloatType(), DateType(),
                         BooleanType(), TinyIntType(), SmallIntType(), DecimalType(10, 2), DecimalType(30, 3),
                         VarBinaryType(50), TimestampType(3), TimestampType(9), CharType(3)]


def _value(rnd: random.Random, t: DataType) -> Any:
    if rnd.random() < 0.2:
        return None
    if isinstance(t, IntType):
        return rnd.randint(-2**31, 2**31 - 1)
    if isinstance(t, BigIntType):
        return rnd.randint(-2**63, 2**63 - 1)
    if isinstance(t, (VarCharType, CharType)):  # inline (<= 7 bytes) and in the variable part
        return "".join(rnd.choice('a\u00e9"\\\n\U0001f600xyz') for _ in range(rnd.randint(0, 12)))
    if isinstance(t, DoubleType):
        return rnd.choice([1.5, -0.0, math.nan, math.inf, 1e300, rnd.random()])
    if isinstance(t, FloatType):
        return rnd.choice([1.5, 0.1, -3.0, math.nan])
    if isinstance(t, DateType):
        return dt.date(2020, 1, 1) + dt.timedelta(days=rnd.randint(-700_000, 2_900_000))
    if isinstance(t, BooleanType):
        return rnd.random() < 0.5
    if isinstance(t, TinyIntType):
        return rnd.randint(-128, 127)
    if isinstance(t, SmallIntType):
        return rnd.randint(-32768, 32767)
    if isinstance(t, DecimalType):
        return decimal.Decimal(rnd.randint(-10**9, 10**9)).scaleb(-t.scale)
    if isinstance(t, VarBinaryType):
        return bytes(rnd.randint(0, 255) for _ in range(rnd.randint(0, 12)))
    return dt.datetime(2020, 1, 1) + dt.timedelta(microseconds=rnd.randint(0, 10**15))


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) and isinstance(b, float):
        return (math.isnan(a) and math.isnan(b)) or (a == b and math.copysign(1, a) == math.copysign(1, b))
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("offset", [0, 5])
def test_every_field_as_the_row_decoder_gives_it(offset: int) -> None:
    rnd = random.Random(7)
    rows = [serialize([_value(rnd, t) for t in TYPES], TYPES) for _ in range(2000)]
    column = pa.array(rows, pa.large_binary()).slice(offset)
    fields = decode_serialized(column, TYPES)
    assert fields is not None
    expected = [deserialize(r, TYPES) for r in rows[offset:]]
    for i, field in enumerate(fields):
        got = field.to_pylist() if isinstance(field, pa.Array) else field
        assert len(got) == len(expected)
        assert all(_same(g, e[i]) for g, e in zip(got, expected, strict=True)), TYPES[i]


def test_dates_outside_python_keep_the_day_count() -> None:
    rows = [serialize([d], [DateType()]) for d in (0, 3_000_000, -800_000)]
    fields = decode_serialized(pa.array(rows, pa.binary()), [DateType()])
    assert fields is not None and fields[0] == [deserialize(r, [DateType()])[0] for r in rows]
    assert fields[0][1] == 3_000_000


def test_what_only_the_row_decoder_reports_is_declined() -> None:
    types: list[DataType] = [IntType(), VarCharType(20)]
    good = serialize([1, "a long string value"], types)
    assert decode_serialized(pa.array([good, None], pa.binary()), types) is None  # a NULL row
    assert decode_serialized(pa.array([good], pa.binary()), [IntType()]) is None  # another arity
    assert decode_serialized(pa.array([good[:12]], pa.binary()), types) is None  # too short
    bad = bytearray(good)
    bad[4 + 8 + 8 + 4] = 200  # the string's offset past the row
    assert decode_serialized(pa.array([bytes(bad)], pa.binary()), types) is None
    utf = bytearray(good)
    utf[-9] = 0xFF  # not UTF-8: the row decoder raises
    assert decode_serialized(pa.array([bytes(utf)], pa.binary()), types) is None
    with pytest.raises(UnicodeDecodeError):
        deserialize(bytes(utf), types)
