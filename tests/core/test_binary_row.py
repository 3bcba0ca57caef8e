"""BinaryRow bytes and bucket hashes against the Java-derived vectors of FORMAT-FACTS 1-3."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from paimon_cli.core.data import binary_row as br
from paimon_cli.core.data.binary_row import Timestamp
from paimon_cli.core.data.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataField,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)
from paimon_cli.core.errors import InvalidInput, NotYetSupported

S = VarCharType()
I = IntType()  # noqa: E741


# --- worked bytes (FORMAT-FACTS 1 and 2) ------------------------------------------------


def test_int_row_bytes() -> None:
    assert br.to_bytes([5], [I]).hex() == "00000000000000000500000000000000"


def test_inline_string_slot() -> None:
    assert br.to_bytes(["hello"], [S])[8:].hex() == "68656c6c6f000085"


def test_long_string_goes_to_variable_part() -> None:
    assert br.to_bytes(["hello-java"], [S]).hex() == (
        "0000000000000000" "0a00000010000000" "68656c6c6f2d6a61" "7661000000000000"
    )


def test_non_compact_decimal_bytes() -> None:
    row = br.to_bytes([Decimal("12345678901234567890123.45")], [DecimalType(25, 2)])
    assert row[8:16].hex() == "0b00000010000000"  # len 11 at offset 16
    assert row[16:].hex() == "01056e0f36a6443de2df79" + "00" * 5  # 16 bytes reserved


def test_non_compact_timestamp_bytes() -> None:
    row = br.to_bytes([dt.datetime(2026, 1, 2, 3, 4, 5, 123456)], [TimestampType(6)])
    assert int.from_bytes(row[8:12], "little") == 456000
    assert int.from_bytes(row[12:16], "little") == 16
    assert row[16:].hex() == "038da97c9b010000"


def test_empty_row_serialized_is_12_bytes() -> None:
    assert br.serialize([], []).hex() == "00000000" + "00" * 8
    assert br.EMPTY_ROW == br.serialize([], [])
    assert br.deserialize(br.EMPTY_ROW, []) == []


def test_serialized_int_key() -> None:
    assert br.serialize([1], [I]).hex() == "00000001" + "00" * 8 + "0100000000000000"


def test_serialized_stats_row_fixture() -> None:
    data = br.serialize([3, "name-3", "even"], [I, S, S])
    assert data.hex() == "00000003" "0000000000000000" "0300000000000000" "6e616d652d330086" "6576656e00000084"
    assert br.serialized_arity(data) == 3
    assert br.deserialize(data, [I, S, S]) == [3, "name-3", "even"]


def test_null_zeroes_slot_and_sets_bit() -> None:
    row = br.to_bytes([None, 7], [I, I])
    assert row[1] == 0b1  # field 0 -> bit 8
    assert row[8:16] == b"\0" * 8
    assert br.from_bytes(row, [I, I]) == [None, 7]


def test_null_non_compact_decimal_reserves_16_bytes() -> None:
    row = br.to_bytes([None], [DecimalType(25, 2)])
    assert len(row) == 16 + 16
    assert int.from_bytes(row[8:16], "little") == 16 << 32
    assert br.from_bytes(row, [DecimalType(25, 2)]) == [None]


def test_null_non_compact_timestamp_reserves_8_bytes() -> None:
    for t in (TimestampType(6), LocalZonedTimestampType(9)):
        row = br.to_bytes([None], [t])
        assert len(row) == 24
        assert int.from_bytes(row[8:16], "little") == 16 << 32


def test_null_compact_types_reserve_nothing() -> None:
    assert len(br.to_bytes([None, None], [DecimalType(10, 2), TimestampType(3)])) == 8 + 16


def test_null_bits_region_grows_past_56_fields() -> None:
    assert br.null_bits_size(0) == 8
    assert br.null_bits_size(56) == 8
    assert br.null_bits_size(57) == 16
    assert br.null_bits_size(120) == 16
    assert br.null_bits_size(121) == 24
    vals = [None if i % 3 == 0 else i for i in range(70)]
    row = br.to_bytes(vals, [I] * 70)
    assert len(row) == 16 + 8 * 70
    assert br.from_bytes(row, [I] * 70) == vals


def test_is_null_at() -> None:
    data = br.serialize([1, None, "x"], [I, I, S])
    assert [br.is_null_at(data, i) for i in range(3)] == [False, True, False]


def test_deserialize_arity_mismatch() -> None:
    with pytest.raises(InvalidInput, match="arity 1, expected 2"):
        br.deserialize(br.serialize([1], [I]), [I, I])


def test_truncated_row_refused() -> None:
    with pytest.raises(InvalidInput):
        br.from_bytes(b"\0" * 8, [I])
    with pytest.raises(InvalidInput):
        br.serialized_arity(b"\0\0")


def test_nested_values_refused_but_nulls_ok() -> None:
    at = ArrayType(IntType())
    with pytest.raises(NotYetSupported):
        br.to_bytes([[1, 2]], [at])
    assert br.from_bytes(br.to_bytes([None], [at]), [at]) == [None]


def test_decimal_overflow_refused() -> None:
    with pytest.raises(InvalidInput, match="does not fit"):
        br.to_bytes([Decimal("1000")], [DecimalType(3, 0)])


def test_decimal_rounds_half_up() -> None:
    assert br.from_bytes(br.to_bytes([Decimal("1.005")], [DecimalType(5, 2)]), [DecimalType(5, 2)]) == [
        Decimal("1.01")
    ]


def test_row_type_accepted_as_types() -> None:
    rt = RowType((DataField(0, "a", I), DataField(1, "b", S)))
    assert br.serialize([1, "x"], rt) == br.serialize([1, "x"], [I, S])


# --- bucket hash (FORMAT-FACTS 3) --------------------------------------------------------


@pytest.mark.parametrize(
    ("values", "types", "expected"),
    [
        (["hello"], [S], 243722546),
        (["hello-java"], [S], -201703277),
        (["hello-java", 42], [S, BigIntType()], -2066620165),
        ([Decimal("12345.67")], [DecimalType(10, 2)], 754928256),
        ([Decimal("12345678901234567890123.45")], [DecimalType(25, 2)], 1388205002),
        ([dt.datetime(2026, 1, 2, 3, 4, 5, 123000)], [TimestampType(3)], -1766746798),
        ([dt.datetime(2026, 1, 2, 3, 4, 5, 123456)], [TimestampType(6)], 1245041971),
        ([bytes([0, 1, 0xFF, 0x7F])], [VarBinaryType()], 586821318),
        ([bytes(range(10))], [VarBinaryType()], 1822312655),
        ([5], [I], 260196596),
        ([5, 6], [I, I], 131015827),
        ([5, 6, 7], [I, I, I], 1805332940),
    ],
)
def test_java_hashes(values: list, types: list, expected: int) -> None:
    assert br.bucket_hash(values, types) == expected


def test_java_buckets() -> None:
    assert br.bucket_of(["hello-java"], [S], 4) == 1
    assert br.bucket_of([5], [I], 100) == 96
    assert br.bucket_of([5, 6], [I, I], 100) == 27
    assert br.bucket_of([5, 6, 7], [I, I, I], 100) == 40


def test_bucket_of_hash_java_modulo() -> None:
    # Java: Math.abs(h % n) with truncating %.
    for h in (-(2**31), -7, -1, 0, 1, 7, 2**31 - 1):
        for n in (1, 3, 4, 100):
            java = abs(int(math.fmod(h, n)))
            assert br.bucket_of_hash(h, n) == java
    with pytest.raises(InvalidInput):
        br.bucket_of_hash(1, 0)


# --- Timestamp ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ts", "text"),
    [
        (Timestamp(0), "1970-01-01T00:00"),
        (Timestamp(1000), "1970-01-01T00:00:01"),
        (Timestamp(1), "1970-01-01T00:00:00.001"),
        (Timestamp(0, 1000), "1970-01-01T00:00:00.000001"),
        (Timestamp(0, 1), "1970-01-01T00:00:00.000000001"),
        (Timestamp(1, 1), "1970-01-01T00:00:00.001000001"),
        (Timestamp(-1), "1969-12-31T23:59:59.999"),
        (Timestamp.from_datetime(dt.datetime(2026, 1, 2, 3, 4, 5, 123456)), "2026-01-02T03:04:05.123456"),
        (Timestamp.from_datetime(dt.datetime(2026, 1, 2, 3, 4)), "2026-01-02T03:04"),
        (Timestamp(253402300800000), "+10000-01-01T00:00"),
        (Timestamp(-62135596800000), "0001-01-01T00:00"),
        (Timestamp(-62135596800000 - 86400000 * 366), "0000-01-01T00:00"),
        (Timestamp(-62198755200000), "-0001-01-01T00:00"),
    ],
)
def test_timestamp_str_like_java(ts: Timestamp, text: str) -> None:
    assert str(ts) == text


def test_timestamp_datetime_round_trip_and_tz() -> None:
    d = dt.datetime(2026, 1, 2, 3, 4, 5, 123456)
    assert Timestamp.from_datetime(d).to_datetime() == d
    aware = dt.datetime(2026, 1, 2, 11, 4, 5, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    assert Timestamp.from_datetime(aware).to_datetime() == dt.datetime(2026, 1, 2, 3, 4, 5)
    pre_epoch = dt.datetime(1969, 12, 31, 23, 59, 59, 999999)
    ts = Timestamp.from_datetime(pre_epoch)
    assert (ts.millisecond, ts.nano_of_millisecond) == (-1, 999000)
    assert ts.to_datetime() == pre_epoch
    assert Timestamp(5) < Timestamp(5, 1) < Timestamp(6)
    with pytest.raises(InvalidInput):
        Timestamp(0, 1_000_000)


# --- round-trip properties at the bounds of every atomic type ------------------------------


def _ints(bits: int) -> st.SearchStrategy[int]:
    lo, hi = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    return st.one_of(st.sampled_from([lo, hi, 0, -1]), st.integers(lo, hi))


def _decimals(p: int, s: int) -> st.SearchStrategy[Decimal]:
    bound = 10**p - 1
    return st.one_of(st.sampled_from([-bound, bound, 0]), st.integers(-bound, bound)).map(
        lambda u: Decimal(f"{u}E-{s}") if s else Decimal(u)
    )


_TIMESTAMPS = st.builds(
    Timestamp, st.one_of(st.sampled_from([-(2**63), 2**63 - 1, 0]), _ints(64)), st.integers(0, 999_999)
)

CASES: list[tuple[object, st.SearchStrategy]] = [
    (BooleanType(), st.booleans()),
    (TinyIntType(), _ints(8)),
    (SmallIntType(), _ints(16)),
    (IntType(), _ints(32)),
    (BigIntType(), _ints(64)),
    (FloatType(), st.floats(width=32, allow_nan=False)),
    (DoubleType(), st.floats(allow_nan=False)),
    (DecimalType(18, 4), _decimals(18, 4)),
    (DecimalType(1, 0), _decimals(1, 0)),
    (DecimalType(19, 0), _decimals(19, 0)),
    (DecimalType(38, 10), _decimals(38, 10)),
    (DecimalType(38, 0), _decimals(38, 0)),
    (CharType(10), st.text(max_size=10)),
    (VarCharType(), st.text(max_size=40)),
    (BinaryType(8), st.binary(min_size=8, max_size=8)),
    (VarBinaryType(), st.binary(max_size=40)),
    (DateType(), st.dates()),
    (TimeType(3), st.times().map(lambda t: t.replace(microsecond=t.microsecond // 1000 * 1000))),
    (TimestampType(3), _TIMESTAMPS.map(lambda t: Timestamp(t.millisecond))),
    (TimestampType(9), _TIMESTAMPS),
    (LocalZonedTimestampType(3), _TIMESTAMPS.map(lambda t: Timestamp(t.millisecond))),
    (LocalZonedTimestampType(6), _TIMESTAMPS),
]


@pytest.mark.parametrize(("t", "strategy"), CASES, ids=[str(c[0]) for c in CASES])
@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_round_trip(t: object, strategy: st.SearchStrategy, data: st.DataObject) -> None:
    values = [data.draw(st.one_of(st.none(), strategy)) for _ in range(3)]
    types = [t, I, t]
    mixed = [values[0], 42, values[2]]
    raw = br.to_bytes(mixed, types)
    assert len(raw) % 8 == 0
    decoded = br.from_bytes(raw, types)
    if isinstance(t, FloatType):
        import struct

        mixed = [None if v is None else struct.unpack("<f", struct.pack("<f", v))[0] for v in mixed]
        mixed[1] = 42
    assert decoded == mixed
    assert br.deserialize(br.serialize(mixed, types), types) == decoded
    assert br.to_bytes(decoded, types) == raw  # canonical: re-encoding is byte-identical
    h = br.bucket_hash(mixed, types)
    assert -(2**31) <= h < 2**31
