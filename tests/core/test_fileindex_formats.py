"""File-index byte layouts: the container, bloom filter sizing/hashing, bitmap V1/V2 and BSI.

Java 0.9 (the interop peer) writes bitmap V1 only and no BSI, so the V2 and BSI layouts are
checked here against fixtures assembled by hand from the upstream layout
(BitmapFileIndexMetaV2.serialize, BitSliceIndexBitmapFileIndex / BitSliceIndexRoaringBitmap),
independently of our writer's code paths; the bitmaps inside are RoaringBitmap portable
serialisations (run-optimised, as Java's RoaringBitmap32.serialize).
"""

from __future__ import annotations

import random
import struct

import numpy as np
import pyarrow as pa
import pyroaring
import pytest

from paimon_cli.core.data.types import BigIntType, BooleanType, DoubleType, IntType, VarCharType
from paimon_cli.core.errors import CorruptMetadata
from paimon_cli.core.fileindex.bitmap import BitmapBuilder, BitmapReader
from paimon_cli.core.fileindex.bloom import BloomFilterBuilder, BloomFilterReader, thomas_wang
from paimon_cli.core.fileindex.bsi import BsiBuilder, BsiReader
from paimon_cli.core.fileindex.format import (
    MAGIC,
    FileIndexContainer,
    decode_modified_utf8,
    encode_modified_utf8,
    new_index_file_name,
    write_container,
)
from paimon_cli.core.fileindex.values import to_column
from paimon_cli.core.schema.file_index_options import bloom_size, java_round


def _bm(rows: list[int]) -> bytes:
    b = pyroaring.BitMap(rows)
    b.run_optimize()
    return b.serialize()


# ------------------------------------------------------------------------- container


def test_modified_utf8_matches_java_writeutf() -> None:
    assert encode_modified_utf8("abc") == b"abc"
    assert encode_modified_utf8("\x00") == b"\xc0\x80"  # NUL as two bytes
    assert encode_modified_utf8("é") == b"\xc3\xa9"
    assert encode_modified_utf8("\U0001f600") == b"\xed\xa0\xbd\xed\xb8\x80"  # surrogate pair, 3 bytes each
    for s in ["", "a\x00b", "日本", "x\U0001f600y"]:
        assert decode_modified_utf8(encode_modified_utf8(s)) == s


def test_container_layout_absolute_offsets_and_empty_entries() -> None:
    data = write_container({"a": {"bloom-filter": b"\x01\x02\x03"}, "b\x00": {"bitmap": None, "bsi": b"zz"}},
                           java_order=False)
    magic, version, head_len, ncols = struct.unpack_from(">qiii", data)
    assert (magic, version, ncols) == (MAGIC, 1, 2)
    # head: 20 + per column (u16 name + 4) + per index (u16 type + 8) + redundant 4
    names = 2 + 1 + 2 + len("b\xc0\x80".encode("latin-1"))
    types = (2 + 12) + (2 + 6) + (2 + 3)
    assert head_len == 20 + names + 2 * 4 + types + 3 * 8 + 4
    c = FileIndexContainer(data)
    entries = {(e.column, e.index_type): e for e in c.entries}
    assert entries[("a", "bloom-filter")].start == head_len and entries[("a", "bloom-filter")].length == 3
    assert entries[("b\x00", "bitmap")].start == -1 and entries[("b\x00", "bitmap")].empty
    assert entries[("b\x00", "bsi")].start == head_len + 3
    assert c.read_all() == {"a": {"bloom-filter": b"\x01\x02\x03"}, "b\x00": {"bitmap": None, "bsi": b"zz"}}
    assert write_container({}) == b""
    with pytest.raises(CorruptMetadata):
        FileIndexContainer(b"\x00" * 24)
    with pytest.raises(CorruptMetadata):
        FileIndexContainer(data[:30])


def test_new_index_file_names_follow_java() -> None:
    assert new_index_file_name(None, "data-x-0.parquet") == "data-x-0.parquet.index"
    assert new_index_file_name("data-x-0.parquet.index", "data-x-0.parquet") == "data-x-0.parquet-1.index"
    assert new_index_file_name("data-x-0.parquet-1.index", "data-x-0.parquet") == "data-x-0.parquet-2.index"
    assert new_index_file_name("data-x-0.parquet-9.index", "data-x-0.parquet") == "data-x-0.parquet-10.index"


# ------------------------------------------------------------------------- bloom filter


def test_bloom_sizing_follows_java_rounding() -> None:
    assert bloom_size(1_000_000, 0.1) == (4_792_536, 3)
    assert bloom_size(100, 0.1) == (480, 3)  # 479 -> +1 bit
    nb, _ = bloom_size(1000, 0.5)
    assert nb % 8 == 0
    # an exact multiple of 8 still gains 8 bits, as Java's nb + (8 - nb % 8)
    assert any(bloom_size(n, 0.05)[0] - int(-n * np.log(0.05) / np.log(2) ** 2) == 8 for n in range(1, 400))
    assert java_round(2.5) == 3 and java_round(-2.5) == -2 and java_round(0.49) == 0


def _wang_ref(k: int) -> int:
    """Thomas Wang's mix with Python ints emulating Java long (arithmetic shifts, wrap)."""
    m = 2**64

    def s(x: int) -> int:
        x %= m
        return x - m if x >= 2**63 else x

    k = s(~k + (k << 21))
    k = s(k ^ (k >> 24))
    k = s(k + (k << 3) + (k << 8))
    k = s(k ^ (k >> 14))
    k = s(k + (k << 2) + (k << 4))
    k = s(k ^ (k >> 28))
    return s(k + (k << 31))


def test_thomas_wang_vectorised_matches_reference() -> None:
    rnd = random.Random(1)
    vals = [0, 1, -1, 2**63 - 1, -(2**63), 2**31, -(2**31)] + [rnd.randint(-(2**63), 2**63 - 1) for _ in range(500)]
    got = thomas_wang(np.array(vals, dtype=np.int64)).tolist()
    assert got == [_wang_ref(v) for v in vals]


def test_bloom_payload_layout_and_membership() -> None:
    b = BloomFilterBuilder(100, 0.1)
    arr = pa.array([f"k{i}" for i in range(100)] + [None])
    b.add(to_column(arr.slice(0, 50), VarCharType(100)))
    b.add(to_column(arr.slice(50), VarCharType(100)))
    payload = b.serialize()
    assert len(payload) == 4 + 480 // 8 and struct.unpack_from(">i", payload)[0] == 3
    r = BloomFilterReader(payload)
    assert all(r.might_contain(f"k{i}".encode(), "string") for i in range(100))
    assert sum(r.might_contain(f"x{i}".encode(), "string") for i in range(1000)) < 300


# ------------------------------------------------------------------------- bitmap


def _v1_fixture() -> bytes:
    """values [b, a, b, NULL, NULL, c] (VARCHAR), V1, by hand from BitmapFileIndexMeta.serialize."""
    nulls, b_rows = _bm([3, 4]), _bm([0, 2])
    out = struct.pack(">b", 1) + struct.pack(">ii?", 6, 3, True)
    out += struct.pack(">i", 0)  # null bitmap first in the body
    for key, off in ((b"a", -1 - 1), (b"b", len(nulls)), (b"c", -1 - 5)):
        out += struct.pack(">i", len(key)) + key + struct.pack(">i", off)
    return out + nulls + b_rows


def _v2_fixture(block_size: int = 16 * 1024) -> bytes:
    """The same column as V2 (one index block), by hand from BitmapFileIndexMetaV2.serialize."""
    nulls, b_rows = _bm([3, 4]), _bm([0, 2])
    entries = [(b"a", -2, -1), (b"b", len(nulls), len(b_rows)), (b"c", -6, -1)]
    block = struct.pack(">i", 3) + b"".join(struct.pack(">i", len(k)) + k + struct.pack(">ii", o, n)
                                           for k, o, n in entries)
    out = struct.pack(">b", 2) + struct.pack(">ii?", 6, 3, True) + struct.pack(">ii", 0, len(nulls))
    out += struct.pack(">i", 1) + struct.pack(">i", 1) + b"a" + struct.pack(">i", 0)  # 1 block: first key a @ 0
    out += struct.pack(">i", len(block)) + block
    return out + nulls + b_rows


def _build_bitmap(version: int, block_size: int = 16 * 1024) -> bytes:
    b = BitmapBuilder(VarCharType(10), version, block_size)
    arr = pa.array(["b", "a", "b", None, None, "c"])
    b.add(to_column(arr.slice(0, 4), VarCharType(10)))
    b.add(to_column(arr.slice(4), VarCharType(10)))
    return b.serialize()


def test_bitmap_v1_and_v2_match_hand_built_layouts() -> None:
    assert _build_bitmap(1) == _v1_fixture()
    assert _build_bitmap(2) == _v2_fixture()
    for payload in (_v1_fixture(), _v2_fixture()):
        r = BitmapReader(payload, VarCharType(10))
        assert list(r.rows_equal(b"b")) == [0, 2]
        assert list(r.rows_equal(b"a")) == [1] and list(r.rows_equal(b"c")) == [5]
        assert list(r.rows_equal(None)) == [3, 4]
        assert len(r.rows_equal(b"zz")) == 0
        assert r.row_count == 6 and r.distinct == 3


def test_bitmap_v2_splits_index_blocks_by_size() -> None:
    t = IntType()
    b = BitmapBuilder(t, 2, 40)  # 4 + n * (4 key + 8) <= 40 -> 3 entries per block
    vals = pa.array([v for v in range(10) for _ in range(2)] + [None], pa.int32())
    b.add(to_column(vals, t))
    payload = b.serialize()
    # header: version, rows, distinct, hasNull, nullOffset, nullLength, blockCount
    (nblocks,) = struct.unpack_from(">i", payload, 1 + 4 + 4 + 1 + 8)
    assert nblocks == 4
    firsts = [struct.unpack_from(">ii", payload, 1 + 4 + 4 + 1 + 8 + 4 + 8 * i) for i in range(4)]
    assert [f for f, _ in firsts] == [0, 3, 6, 9] and [o for _, o in firsts] == [0, 40, 80, 120]
    r = BitmapReader(payload, t)
    for v in range(10):
        assert list(r.rows_equal(v)) == [2 * v, 2 * v + 1]
    assert list(r.rows_equal(None)) == [20]


def test_bitmap_float_keys_keep_zero_signs_apart_and_sort_like_java() -> None:
    t = DoubleType()
    b = BitmapBuilder(t, 2)
    b.add(to_column(pa.array([0.0, -0.0, float("nan"), 1.5, -2.0, 0.0]), t))
    r = BitmapReader(b.serialize(), t)
    assert list(r.rows_equal(0.0)) == [0, 5] and list(r.rows_equal(-0.0)) == [1]
    assert list(r.rows_equal(float("nan"))) == [2]
    keys = [struct.unpack(">d", k)[0] for k in r.keys()]
    assert [str(k) for k in keys] == ["-2.0", "-0.0", "0.0", "1.5", "nan"]  # Double.compare order


def test_bitmap_boolean_and_bigint() -> None:
    for t, arr in ((BooleanType(), pa.array([True, False, None, True])), (BigIntType(), pa.array([2**40, -1, None, 2**40]))):
        for version in (1, 2):
            b = BitmapBuilder(t, version)
            b.add(to_column(arr, t))
            r = BitmapReader(b.serialize(), t)
            first = arr[0].as_py()
            assert list(r.rows_equal(first)) == [0, 3] and list(r.rows_equal(None)) == [2]


# ------------------------------------------------------------------------- BSI


def test_bsi_matches_hand_built_layout_and_compares() -> None:
    t = BigIntType()
    b = BsiBuilder()
    b.add(to_column(pa.array([5, -3, None, 0, 7]), t))
    payload = b.serialize()
    pos = struct.pack(">bqq", 1, 0, 7) + _bm([0, 3, 4]) + struct.pack(">i", 3) + _bm([0, 4]) + _bm([4]) + _bm([0, 4])
    neg = struct.pack(">bqq", 1, 0, 3) + _bm([1]) + struct.pack(">i", 2) + _bm([1]) + _bm([1])
    assert payload == struct.pack(">bi", 1, 5) + b"\x01" + pos + b"\x01" + neg
    r = BsiReader(payload)
    values = {0: 5, 1: -3, 3: 0, 4: 7}
    for op in ("=", "<", "<=", ">", ">="):
        for lit in range(-5, 10):
            want = sorted(row for row, v in values.items() if {"=": v == lit, "<": v < lit, "<=": v <= lit,
                                                                ">": v > lit, ">=": v >= lit}[op])
            assert sorted(r.rows(op, lit)) == want, (op, lit)
    assert sorted(r.not_null()) == [0, 1, 3, 4]


def test_bsi_skips_long_min_instead_of_writing_a_wrong_index() -> None:
    b = BsiBuilder()
    b.add(to_column(pa.array([-(2**63), 1], pa.int64()), BigIntType()))
    assert b.serialize() is None


def test_bloom_packed_mode_for_huge_filters_gives_the_same_bytes(monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.fileindex import bloom

    arr = pa.array([f"v{i}" for i in range(5000)])
    small = BloomFilterBuilder(3000, 0.01)
    small.add(to_column(arr, VarCharType(10)))
    monkeypatch.setattr(bloom, "_BOOL_BITS_LIMIT", 8)
    packed = BloomFilterBuilder(3000, 0.01)
    assert packed.packed
    packed.add(to_column(arr, VarCharType(10)))
    assert packed.serialize() == small.serialize()


# ---------------------------------------------------------------------------- the dispatch over types

def _chain_kind_of(t: object) -> str | None:
    """The isinstance chain ``values.kind_of`` used before it dispatched on the type visitor,
    kept here as the reference the visitor must match for every type class."""
    from paimon_cli.core.data import types as ty
    from paimon_cli.core.fileindex import values as v

    if isinstance(t, (ty.CharType, ty.VarCharType)):
        return v.STRING
    if isinstance(t, (ty.BinaryType, ty.VarBinaryType)):
        return v.BYTES
    if isinstance(t, (ty.TinyIntType, ty.SmallIntType, ty.IntType, ty.BigIntType, ty.DateType, ty.TimeType,
                      ty.TimestampType, ty.LocalZonedTimestampType)):
        return v.INT
    if isinstance(t, ty.FloatType):
        return v.FLOAT
    if isinstance(t, ty.DoubleType):
        return v.DOUBLE
    if isinstance(t, ty.BooleanType):
        return v.BOOL
    if isinstance(t, ty.DecimalType):
        return v.INT if t.precision <= 18 else None
    return None


def test_index_value_kind_of_every_type_class_is_the_former_isinstance_chains() -> None:
    from paimon_cli.core.fileindex.values import kind_of
    from tests.type_instances import EVERY_TYPE, covers_every_type_class, every_type

    assert covers_every_type_class(EVERY_TYPE)
    got = {t.as_sql(): kind_of(t) for t in every_type()}
    assert got == {t.as_sql(): _chain_kind_of(t) for t in every_type()}
    assert set(got.values()) == {"string", "bytes", "int", "float", "double", "bool", None}
