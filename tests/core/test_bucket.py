"""Vectorised bucket hashing equals the scalar BinaryRow reference and Java's known hashes."""

from __future__ import annotations

import datetime as dt
import decimal
import random

import mmh3
import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.data.binary_row import Timestamp, bucket_hash, to_bytes
from paimon_cli.core.data.types import (
    ArrayType,
    BigIntType,
    DataField,
    DecimalType,
    IntType,
    TimestampType,
    VarBinaryType,
    VarCharType,
    parse_data_type,
)
from paimon_cli.core.errors import InvalidInput, NotYetSupported
from paimon_cli.core.index import bucket as bucket_mod
from paimon_cli.core.index.bucket import bucket_hashes, bucket_ids, murmur3_words


def _fields(*types: str) -> list[DataField]:
    return [DataField(i, f"c{i}", parse_data_type(t)) for i, t in enumerate(types)]


def _reference(table: pa.Table, fields: list[DataField]) -> list[int]:
    types = [f.type for f in fields]
    cols = [table.column(f.name).to_pylist() for f in fields]
    return [bucket_hash([c[r] for c in cols], types) for r in range(table.num_rows)]


def _check(table: pa.Table, fields: list[DataField]) -> np.ndarray:
    ours = bucket_hashes(table, fields)
    assert ours.dtype == np.int32 and len(ours) == table.num_rows
    assert ours.tolist() == _reference(table, fields)
    return ours


# ---------------------------------------------------------------------------- murmur3


def test_murmur3_words_equals_mmh3() -> None:
    rng = np.random.default_rng(7)
    for n_words in (0, 1, 2, 4, 9, 40):
        words = rng.integers(0, 2**32, (300, n_words), dtype=np.uint64).astype(np.uint32)
        expected = [mmh3.hash(r.tobytes(), 42, signed=True) for r in words]
        assert murmur3_words(words).tolist() == expected


def test_murmur3_words_chunks_large_inputs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bucket_mod, "_CHUNK_ROWS", 64)
    words = np.random.default_rng(1).integers(0, 2**32, (1000, 6), dtype=np.uint64).astype(np.uint32)
    assert murmur3_words(words).tolist() == [mmh3.hash(r.tobytes(), 42, signed=True) for r in words]


# ---------------------------------------------------------------------------- Java's numbers


def test_hashes_java_computed() -> None:
    """Hashes Java's InternalRowSerializer.toBinaryRow(..).hashCode() gives (FORMAT-FACTS 3)."""
    cases = [
        ("STRING", pa.string(), "hello", 243722546),
        ("STRING", pa.string(), "hello-java", -201703277),
        ("DECIMAL(10, 2)", pa.decimal128(10, 2), decimal.Decimal("12345.67"), 754928256),
        ("DECIMAL(25, 2)", pa.decimal128(25, 2), decimal.Decimal("12345678901234567890123.45"), 1388205002),
        ("TIMESTAMP(3)", pa.timestamp("ms"), dt.datetime(2026, 1, 2, 3, 4, 5, 123000), -1766746798),
        ("TIMESTAMP(6)", pa.timestamp("us"), dt.datetime(2026, 1, 2, 3, 4, 5, 123456), 1245041971),
        ("BYTES", pa.binary(), bytes([0, 1, 0xFF, 0x7F]), 586821318),
        ("BYTES", pa.binary(), bytes(range(10)), 1822312655),
    ]
    for sql, at, value, want in cases:
        assert bucket_hashes(pa.table({"c0": pa.array([value], at)}), _fields(sql)).tolist() == [want], sql
    t = pa.table({"c0": ["hello-java"], "c1": pa.array([42], pa.int64())})
    assert bucket_hashes(t, _fields("STRING", "BIGINT")).tolist() == [-2066620165]
    assert bucket_ids(np.array([-201703277], np.int32), 4).tolist() == [1]


def test_fixed_bucket_extractor_example() -> None:
    """Java FixedBucketRowKeyExtractorTest: row (5, 6, 7), 100 buckets -> 96, 27, 40."""
    t = pa.table({"c0": pa.array([5], pa.int32()), "c1": pa.array([6], pa.int32()), "c2": pa.array([7], pa.int32())})
    fields = _fields("INT", "INT", "INT")
    got = [int(bucket_ids(bucket_hashes(t, fields[:k]), 100)[0]) for k in (1, 2, 3)]
    assert got == [96, 27, 40]


def test_bucket_ids_is_java_abs_of_truncating_mod() -> None:
    h = np.array([0, 1, -1, 7, -7, 2**31 - 1, -(2**31), -201703277], dtype=np.int32)
    for n in (1, 3, 4, 7, 100, 2**31 - 1):
        want = [abs(int(np.fmod(np.int64(x), n))) for x in h]
        assert bucket_ids(h, n).tolist() == want
        assert bucket_ids(h, n).dtype == np.int32
    with pytest.raises(InvalidInput):
        bucket_ids(h, 0)


# ---------------------------------------------------------------------------- every atomic type

RNG = random.Random(11)


def _string() -> str:
    n = RNG.choice([0, 1, 5, 7, 8, 9, 15, 16, 17, 33])
    return "".join(RNG.choice("abz0ü€😀") for _ in range(n))


def _dec_big() -> decimal.Decimal:
    v = RNG.choice([0, 1, -1, 127, 128, -128, -129, 255, 256, -256, 2**63, -(2**63), 2**64, 10**25 - 1, -(10**25 - 1),
                    RNG.randint(-(10**25) + 1, 10**25 - 1)])
    return decimal.Decimal(v).scaleb(-4)


GENS = {
    "BOOLEAN": (pa.bool_(), lambda: RNG.random() < 0.5),
    "TINYINT": (pa.int8(), lambda: RNG.randint(-128, 127)),
    "SMALLINT": (pa.int16(), lambda: RNG.randint(-32768, 32767)),
    "INT": (pa.int32(), lambda: RNG.randint(-(2**31), 2**31 - 1)),
    "BIGINT": (pa.int64(), lambda: RNG.randint(-(2**63), 2**63 - 1)),
    "FLOAT": (pa.float32(), lambda: float(np.float32(RNG.uniform(-1e9, 1e9)))),
    "DOUBLE": (pa.float64(), lambda: RNG.choice([0.0, -0.0, RNG.uniform(-1e300, 1e300)])),
    "DECIMAL(18, 3)": (pa.decimal128(18, 3), lambda: decimal.Decimal(RNG.randint(-(10**18) + 1, 10**18 - 1)).scaleb(-3)),
    "DECIMAL(25, 4)": (pa.decimal128(25, 4), _dec_big),
    "DECIMAL(38, 0)": (pa.decimal128(38, 0), lambda: decimal.Decimal(RNG.choice([10**38 - 1, -(10**38 - 1), RNG.randint(-(10**38) + 1, 10**38 - 1)]))),
    "DATE": (pa.date32(), lambda: dt.date(1970, 1, 1) + dt.timedelta(days=RNG.randint(-700_000, 700_000))),
    "TIME": (pa.time32("ms"), lambda: dt.time(RNG.randint(0, 23), RNG.randint(0, 59), RNG.randint(0, 59), RNG.randint(0, 999) * 1000)),
    "TIMESTAMP(3)": (pa.timestamp("ms"), lambda: dt.datetime(1800, 1, 1) + dt.timedelta(milliseconds=RNG.randint(0, 10**13))),
    "TIMESTAMP(6)": (pa.timestamp("us"), lambda: dt.datetime(1800, 1, 1) + dt.timedelta(microseconds=RNG.randint(0, 10**16))),
    "TIMESTAMP(3) WITH LOCAL TIME ZONE": (
        pa.timestamp("ms", tz="UTC"),
        lambda: dt.datetime(1960, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=RNG.randint(0, 10**12)),
    ),
    "TIMESTAMP(6) WITH LOCAL TIME ZONE": (
        pa.timestamp("us", tz="UTC"),
        lambda: dt.datetime(1960, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(microseconds=RNG.randint(0, 10**15)),
    ),
    "STRING": (pa.string(), _string),
    "VARCHAR(40)": (pa.large_string(), _string),
    "CHAR(3)": (pa.string(), lambda: RNG.choice(["abc", "a", "xyz"])),
    "BYTES": (pa.binary(), lambda: bytes(RNG.randint(0, 255) for _ in range(RNG.choice([0, 3, 7, 8, 21])))),
    "BINARY(4)": (pa.binary(4), lambda: bytes(RNG.randint(0, 255) for _ in range(4))),
}


def _random_table(types: list[str], n: int, null_rate: float = 0.2) -> tuple[pa.Table, list[DataField]]:
    fields = _fields(*types)
    cols = {}
    for f, t in zip(fields, types, strict=True):
        at, gen = GENS[t]
        cols[f.name] = pa.array([None if RNG.random() < null_rate else gen() for _ in range(n)], at)
    return pa.table(cols), fields


@pytest.mark.parametrize("sql", list(GENS))
def test_each_atomic_type_with_nulls(sql: str) -> None:
    t, fields = _random_table([sql], 200)
    _check(t, fields)


def test_all_types_in_one_row_and_chunked_sliced_input() -> None:
    t, fields = _random_table(list(GENS), 300)
    chunked = pa.concat_tables([t.slice(0, 70), t.slice(70, 1), t.slice(71)])
    assert chunked.column(0).num_chunks == 3
    _check(chunked, fields)
    _check(t.slice(37, 100), fields)


def test_rows_of_many_lengths_take_both_hash_paths(monkeypatch: pytest.MonkeyPatch) -> None:
    """Length groups are hashed vectorised or (few rows, long rows) with mmh3: same result."""
    t, fields = _random_table(["STRING", "DECIMAL(25, 4)", "BYTES", "TIMESTAMP(6)", "STRING"], 400)
    big = pa.table({"c0": ["x" * 5000, "y" * 17], "c1": pa.array([None, decimal.Decimal(1)], pa.decimal128(25, 4)),
                    "c2": [b"", b"0123456789"], "c3": pa.array([None, 5], pa.timestamp("us")), "c4": [None, "z" * 900]})
    both = pa.concat_tables([t, big.cast(t.schema)])
    _check(both, fields)
    monkeypatch.setattr(bucket_mod, "_MMH3_ROWS_PER_WORD", 0.0)  # force the vectorised path
    _check(both, fields)
    monkeypatch.setattr(bucket_mod, "_MMH3_ROWS_PER_WORD", 1e9)  # force per-row mmh3
    _check(both, fields)


def test_inputs_larger_than_a_slice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bucket_mod, "_SLICE_ROWS", 64)
    t, fields = _random_table(["STRING", "INT"], 500)
    _check(t, fields)


def test_more_than_56_fields_widen_the_null_bit_header() -> None:
    types = ["INT"] * 60
    t, fields = _random_table(types, 30, null_rate=0.3)
    _check(t, fields)


def test_string_boundaries_and_non_ascii() -> None:
    values = ["", "a", "1234567", "12345678", "ü" * 3, "ü" * 4, "€€€", "😀😀", None, "x" * 64]
    t = pa.table({"c0": values})
    hashes = _check(t, _fields("STRING"))
    # 7 UTF-8 bytes inline vs 8 bytes in the variable part give different row lengths
    assert len(to_bytes(["1234567"], [VarCharType()])) == 16
    assert len(to_bytes(["12345678"], [VarCharType()])) == 24
    assert len(set(hashes.tolist())) == len(values)


def test_non_compact_nulls_reserve_space() -> None:
    """A NULL DECIMAL(25,4)/TIMESTAMP(6) hashes like Java's reserved zero bytes, not an INT null."""
    t = pa.table({"c0": pa.array([None], pa.decimal128(25, 4)), "c1": pa.array([None], pa.timestamp("us"))})
    h = _check(t, _fields("DECIMAL(25, 4)", "TIMESTAMP(6)"))
    assert h[0] == mmh3.hash(to_bytes([None, None], [DecimalType(25, 4), TimestampType(6)]), 42, signed=True)
    assert len(to_bytes([None, None], [DecimalType(25, 4), TimestampType(6)])) == 8 + 16 + 16 + 8


def test_other_arrow_representations_are_converted() -> None:
    """Units, widths and encodings other than the canonical Arrow mapping give the same hash."""
    ts = [dt.datetime(1969, 12, 31, 23, 59, 59, 999999), dt.datetime(2024, 2, 29, 12, 0, 0, 1), None]
    base = pa.table({"c0": pa.array(ts, pa.timestamp("us"))})
    f = _fields("TIMESTAMP(6)")
    want = bucket_hashes(base, f)
    assert bucket_hashes(pa.table({"c0": base.column(0).cast(pa.timestamp("ns"))}), f).tolist() == want.tolist()
    assert want.tolist() == [bucket_hash([v if v is None else Timestamp.from_datetime(v)], [TimestampType(6)]) for v in ts]
    # int64 column for INT, dictionary-encoded strings, decimal of another scale
    t = pa.table({"c0": pa.array([1, -5, None], pa.int64())})
    assert bucket_hashes(t, [DataField(0, "c0", IntType())]).tolist() == _reference(
        pa.table({"c0": pa.array([1, -5, None], pa.int32())}), [DataField(0, "c0", IntType())])
    d = pa.table({"c0": pa.array(["a", "long-string-value", "a", None]).dictionary_encode()})
    assert bucket_hashes(d, _fields("STRING")).tolist() == _reference(pa.table({"c0": ["a", "long-string-value", "a", None]}), _fields("STRING"))
    dec = pa.table({"c0": pa.array([decimal.Decimal("1.5"), None], pa.decimal128(5, 1))})
    assert bucket_hashes(dec, _fields("DECIMAL(25, 4)")).tolist() == _reference(
        pa.table({"c0": pa.array([decimal.Decimal("1.5000"), None], pa.decimal128(25, 4))}), _fields("DECIMAL(25, 4)"))
    date64 = pa.table({"c0": pa.array([dt.date(1901, 5, 6), None], pa.date64())})
    assert bucket_hashes(date64, _fields("DATE")).tolist() == _reference(
        pa.table({"c0": pa.array([dt.date(1901, 5, 6), None], pa.date32())}), _fields("DATE"))


def test_key_columns_by_name_or_key_prefix() -> None:
    t = pa.table({"_KEY_id": pa.array([1, 2], pa.int64()), "id": pa.array([9, 9], pa.int64())})
    f = [DataField(0, "id", BigIntType())]
    assert bucket_hashes(t, f).tolist() == [bucket_hash([9], [BigIntType()])] * 2  # plain name wins
    t2 = t.drop_columns(["id"])
    assert bucket_hashes(t2, f).tolist() == [bucket_hash([1], [BigIntType()]), bucket_hash([2], [BigIntType()])]


def test_errors() -> None:
    t = pa.table({"a": pa.array([1], pa.int32())})
    with pytest.raises(InvalidInput, match="'b'"):
        bucket_hashes(t, [DataField(0, "b", IntType())])
    with pytest.raises(InvalidInput, match="'a'"):
        bucket_hashes(t, [DataField(0, "a", VarBinaryType())])
    with pytest.raises(InvalidInput, match="'a'"):
        bucket_hashes(pa.table({"a": pa.array([2**40], pa.int64())}), [DataField(0, "a", IntType())])
    with pytest.raises(NotYetSupported):
        bucket_hashes(pa.table({"a": pa.array([[1]])}), [DataField(0, "a", ArrayType(IntType()))])


def test_empty_table() -> None:
    t = pa.table({"a": pa.array([], pa.string())})
    out = bucket_hashes(t, _fields("STRING")[:0] + [DataField(0, "a", VarCharType())])
    assert out.dtype == np.int32 and len(out) == 0


def test_record_batch_input() -> None:
    t, fields = _random_table(["STRING", "BIGINT"], 50)
    batch = t.combine_chunks().to_batches()[0]
    assert bucket_hashes(batch, fields).tolist() == _reference(t, fields)


# ---------------------------------------------------------------------------- the dispatch over types

def _chain_encode(arr: pa.Array, f: DataField) -> object:
    """The isinstance chain ``bucket._encode`` used before it dispatched on the type visitor,
    kept here as the reference the visitor must match for every type class."""
    from paimon_cli.core.data import types as ty

    b = bucket_mod
    t = f.type
    if isinstance(t, ty.BooleanType):
        return b._encode_bool(arr, f)
    if isinstance(t, ty.TinyIntType):
        return b._encode_int(arr, f, pa.int8(), np.int8, np.uint8)
    if isinstance(t, ty.SmallIntType):
        return b._encode_int(arr, f, pa.int16(), np.int16, np.uint16)
    if isinstance(t, ty.IntType):
        return b._encode_int(arr, f, pa.int32(), np.int32, np.uint32)
    if isinstance(t, ty.BigIntType):
        return b._encode_int(arr, f, pa.int64(), np.int64, np.uint64)
    if isinstance(t, ty.DateType):
        return b._encode_date(arr, f)
    if isinstance(t, ty.TimeType):
        return b._encode_time(arr, f)
    if isinstance(t, ty.FloatType):
        return b._encode_float(arr, f, double=False)
    if isinstance(t, ty.DoubleType):
        return b._encode_float(arr, f, double=True)
    if isinstance(t, ty.DecimalType):
        return b._encode_decimal(arr, f, t)
    if isinstance(t, (ty.TimestampType, ty.LocalZonedTimestampType)):
        return b._encode_timestamp(arr, f, t.is_compact)
    if isinstance(t, (ty.CharType, ty.VarCharType)):
        return b._encode_bytes(arr, f)
    if isinstance(t, (ty.BinaryType, ty.VarBinaryType)):
        return b._encode_bytes(arr, f)
    raise NotYetSupported(f"bucket key column {f.name!r}: type {t} cannot be a bucket key")


# one or more instances of every type class (nullable and not, precisions, lengths, nested)
EVERY_TYPE = [
    *GENS,
    "BOOLEAN NOT NULL", "INT NOT NULL", "BIGINT NOT NULL", "STRING NOT NULL", "DECIMAL(10, 2) NOT NULL",
    "DECIMAL(1, 0)", "DECIMAL(19, 0)", "DECIMAL(38, 18)", "TIME(0)", "TIME(3) NOT NULL",
    "TIMESTAMP(0)", "TIMESTAMP(9)", "TIMESTAMP(9) WITH LOCAL TIME ZONE", "TIMESTAMP(0) WITH LOCAL TIME ZONE",
    "CHAR(1)", "CHAR(255) NOT NULL", "VARCHAR(1)", "BINARY(1)", "VARBINARY(7)", "DATE NOT NULL",
    "ARRAY<INT>", "MULTISET<STRING>", "MAP<STRING, INT>", "ROW<a INT, b STRING>", "VARIANT", "BLOB",
]


def _input_for(dtype: object) -> pa.Array:
    """A column with values (where GENS knows the type) and a null for ``dtype``."""
    from paimon_cli.core.format.arrow_schema import arrow_type

    sql = dtype.as_sql()  # type: ignore[attr-defined]
    base = sql.removesuffix(" NOT NULL")
    if base in GENS:
        at, gen = GENS[base]
        return pa.array([gen() for _ in range(30)] + [None], at)
    try:
        at = arrow_type(dtype)  # type: ignore[arg-type]
    except Exception:
        at = pa.int32()
    return pa.nulls(3, at)


def _outcome(encode: object, arr: pa.Array, f: DataField) -> tuple[str, object]:
    try:
        enc = encode(arr, f)  # type: ignore[operator]
    except Exception as e:
        return ("raises", (type(e), str(e)))
    return ("encoded", {k: (v.tolist() if isinstance(v, np.ndarray) else v) for k, v in vars(enc).items()})


@pytest.mark.parametrize("sql", EVERY_TYPE)
def test_encoder_of_every_type_class_is_the_former_isinstance_chains(sql: str) -> None:
    bucket_mod._init_tables()  # as bucket_hashes does before encoding
    f = DataField(0, "k", parse_data_type(sql))
    arr = _input_for(f.type)
    assert _outcome(bucket_mod._encode, arr, f) == _outcome(_chain_encode, arr, f)


def test_every_type_class_is_covered_by_the_dispatch_test() -> None:
    from paimon_cli.core.data.type_visitor import VISIT_METHODS

    assert {type(parse_data_type(s)) for s in EVERY_TYPE} == set(VISIT_METHODS)
