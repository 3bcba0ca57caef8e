"""Vectorised bucket hashing: Java's ``BinaryRow.hashCode`` for every row of an Arrow table.

Fixed buckets (``abs(hash % n)``), dynamic-bucket HASH indexes and bucket pruning all hinge
on the murmur3 hash of the bucket-key BinaryRow (FORMAT-FACTS 1-3). The scalar reference
is ``binary_row.bucket_hash``; doing that per row in Python costs seconds per million rows,
so here the rows are built column-wise as little-endian uint64 word matrices (null-bit
header, one slot per field, 8-aligned variable part) and murmur3 x86_32 runs over the word
columns with numpy's wrapping uint32 arithmetic, one pass per distinct row length.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, NoReturn

from ..data.type_visitor import DataTypeVisitor
from ..data.types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataField,
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
from ..errors import InvalidInput, NotYetSupported

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

_SEED = 42
_C1 = 0xCC9E2D51
_C2 = 0x1B873593
_M5 = 0xE6546B64
_F1 = 0x85EBCA6B
_F2 = 0xC2B2AE35


# ---------------------------------------------------------------------------------------
# murmur3 x86_32 over word matrices
# ---------------------------------------------------------------------------------------


def murmur3_words(words: np.ndarray) -> np.ndarray:
    """murmur3 x86_32 (seed 42) of each row of a (rows, n) uint32 matrix, as int32.

    Rows are whole 4-byte words (BinaryRows are 8-aligned), so there is no tail step; the
    length mixed into the finaliser is ``4 * n``. Equals ``mmh3.hash(row_bytes, 42)``.
    """
    import numpy as np

    rows = words.shape[0]
    if rows <= _CHUNK_ROWS:
        return _murmur3_chunk(words)
    out = np.empty(rows, dtype=np.int32)
    for a in range(0, rows, _CHUNK_ROWS):  # cache-sized slices: ~3x faster on wide rows
        out[a : a + _CHUNK_ROWS] = _murmur3_chunk(words[a : a + _CHUNK_ROWS])
    return out


_CHUNK_ROWS = 1 << 16


def _murmur3_chunk(words: np.ndarray) -> np.ndarray:
    import numpy as np

    rows, n = words.shape
    # k-mixing is independent per word: do it for the whole matrix, column-major so the
    # sequential h-chain below reads contiguous columns.
    k = np.ascontiguousarray(words.T, dtype=np.uint32)
    np.multiply(k, np.uint32(_C1), out=k)
    k = (k << np.uint32(15)) | (k >> np.uint32(17))
    np.multiply(k, np.uint32(_C2), out=k)
    h = np.full(rows, _SEED, dtype=np.uint32)
    tmp = np.empty(rows, dtype=np.uint32)
    for i in range(n):
        np.bitwise_xor(h, k[i], out=h)
        np.right_shift(h, np.uint32(19), out=tmp)
        np.left_shift(h, np.uint32(13), out=h)
        np.bitwise_or(h, tmp, out=h)
        np.multiply(h, np.uint32(5), out=h)
        np.add(h, np.uint32(_M5), out=h)
    return _fmix(h, 4 * n)


def _fmix(h: np.ndarray, length: int) -> np.ndarray:
    import numpy as np

    h = h ^ np.uint32(length & 0xFFFFFFFF)
    h ^= h >> np.uint32(16)
    h *= np.uint32(_F1)
    h ^= h >> np.uint32(13)
    h *= np.uint32(_F2)
    h ^= h >> np.uint32(16)
    return h.view(np.int32)


# ---------------------------------------------------------------------------------------
# Arrow columns -> BinaryRow slots and variable parts
# ---------------------------------------------------------------------------------------


@dataclass
class _Encoded:
    """One field of the key row for all rows.

    ``slot`` is final for fixed-size values; for values living in the variable part the
    row-relative offset is OR-ed in (``<< 32``) once the layout is known. ``var_size`` is the
    8-aligned number of variable bytes per row (an int when it is the same for every row).
    """

    slot: np.ndarray  # uint64 (n,)
    null: np.ndarray  # bool (n,)
    kind: str = "fixed"  # fixed | bytes | words
    var_size: Any = 0  # int or int64 (n,) array
    # kind "bytes": long strings/binaries copied from an Arrow data buffer
    data: np.ndarray | None = None  # unaligned uint64 view: data[i] = 8 bytes from byte i
    starts: np.ndarray | None = None  # int64 (n,) start in ``data``
    lengths: np.ndarray | None = None  # int64 (n,) bytes to copy (0 = nothing in var part)
    # kind "words": fixed-size var regions already as uint64 words (n, var_size // 8)
    words: np.ndarray | None = None


def _column(table: pa.Table, f: DataField) -> pa.Array:
    import pyarrow as pa

    names = table.column_names
    if f.name in names:
        col = table.column(f.name)
    elif "_KEY_" + f.name in names:
        col = table.column("_KEY_" + f.name)
    else:
        raise InvalidInput(f"bucket key column {f.name!r} is not among the input columns {names}")
    arr = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    return arr


def _cast(arr: pa.Array, target: pa.DataType, f: DataField, safe: bool = True) -> pa.Array:
    if arr.type == target:
        return arr
    try:
        return arr.cast(target, safe=safe)
    except Exception as e:  # noqa: BLE001 - arrow raises several types for bad casts
        raise InvalidInput(f"bucket key column {f.name!r}: cannot use {arr.type} values as {f.type} ({e})") from None


def _null_mask(arr: pa.Array) -> np.ndarray:
    import numpy as np

    if arr.null_count == 0:
        return np.zeros(len(arr), dtype=bool)
    return arr.is_null().to_numpy(zero_copy_only=False)


def _fixed_values(arr: pa.Array, dtype: Any) -> np.ndarray:
    """The values buffer of a fixed-width array (garbage under nulls; callers mask)."""
    import numpy as np

    buf = arr.buffers()[1]
    n = len(arr)
    if buf is None or n == 0:
        return np.zeros(n, dtype=dtype)
    return np.frombuffer(buf, dtype=dtype, count=arr.offset + n)[arr.offset :]


def _masked_slot(values: np.ndarray, null: np.ndarray) -> np.ndarray:
    import numpy as np

    slot = values.astype(np.uint64)
    if null.any():
        slot[null] = 0
    return slot


def _ragged(lengths: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(segment id, position within segment) for every element of the concatenated segments."""
    import numpy as np

    total = int(lengths.sum())
    seg = np.repeat(np.arange(len(lengths), dtype=np.int64), lengths)
    firsts = np.cumsum(lengths) - lengths
    within = np.arange(total, dtype=np.int64) - firsts[seg]
    return seg, within


def _encode_int(arr: pa.Array, f: DataField, arrow_t: pa.DataType, np_signed: Any, np_unsigned: Any) -> _Encoded:
    arr = _cast(arr, arrow_t, f)
    null = _null_mask(arr)
    return _Encoded(_masked_slot(_fixed_values(arr, np_signed).view(np_unsigned), null), null)


def _encode_bool(arr: pa.Array, f: DataField) -> _Encoded:
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    arr = _cast(arr, pa.bool_(), f)
    null = _null_mask(arr)
    vals = pc.fill_null(arr, False).to_numpy(zero_copy_only=False).astype(np.uint64)
    return _Encoded(vals, null)


def _encode_date(arr: pa.Array, f: DataField) -> _Encoded:
    import numpy as np
    import pyarrow as pa

    if pa.types.is_date64(arr.type):
        null = _null_mask(arr)
        days = np.floor_divide(_fixed_values(arr, np.int64), 86_400_000).astype(np.int32)
        return _Encoded(_masked_slot(days.view(np.uint32), null), null)
    return _encode_int(arr, f, pa.date32(), np.int32, np.uint32)


def _encode_time(arr: pa.Array, f: DataField) -> _Encoded:
    import numpy as np
    import pyarrow as pa

    t = arr.type
    if pa.types.is_time32(t) or pa.types.is_time64(t):
        null = _null_mask(arr)
        raw = _fixed_values(arr, np.int32 if pa.types.is_time32(t) else np.int64).astype(np.int64)
        unit = t.unit
        if unit == "s":
            ms = raw * 1000
        elif unit == "ms":
            ms = raw
        elif unit == "us":
            ms = np.floor_divide(raw, 1000)
        else:
            ms = np.floor_divide(raw, 1_000_000)
        return _Encoded(_masked_slot(ms.astype(np.int32).view(np.uint32), null), null)
    return _encode_int(arr, f, pa.time32("ms"), np.int32, np.uint32)


def _encode_float(arr: pa.Array, f: DataField, double: bool) -> _Encoded:
    import numpy as np
    import pyarrow as pa

    arr = _cast(arr, pa.float64() if double else pa.float32(), f, safe=False)
    null = _null_mask(arr)
    if double:
        bits = _fixed_values(arr, np.float64).view(np.uint64)
    else:
        bits = _fixed_values(arr, np.float32).view(np.uint32)
    return _Encoded(_masked_slot(bits, null), null)


def _encode_decimal(arr: pa.Array, f: DataField, t: DecimalType) -> _Encoded:
    import numpy as np
    import pyarrow as pa

    arr = _cast(arr, pa.decimal128(t.precision, t.scale), f)
    null = _null_mask(arr)
    n = len(arr)
    buf = arr.buffers()[1]
    if buf is None or n == 0:
        lohi = np.zeros((n, 2), dtype=np.uint64)
    else:
        lohi = np.frombuffer(buf, dtype=np.uint64, count=(arr.offset + n) * 2).reshape(-1, 2)[arr.offset :]
    lo, hi = lohi[:, 0], lohi[:, 1]
    if t.is_compact:
        # |unscaled| < 10**18: the low little-endian word is the int64 value.
        return _Encoded(_masked_slot(lo, null), null)
    # BigInteger.toByteArray: minimal big-endian two's complement (bitLength / 8 + 1 bytes)
    # at the start of a zero-filled 16-byte region, reserved even for nulls.
    sign = (hi.view(np.int64) >> np.int64(63)).view(np.uint64)  # all ones for negatives
    xhi, xlo = hi ^ sign, lo ^ sign  # ~v for negatives has v's bit length
    nbytes = np.ones(n, dtype=np.int64)
    for k in range(1, 16):  # one more byte per power-of-two threshold 2**(8k-1) reached
        bit = 8 * k - 1
        if bit < 64:
            nbytes += (xhi != 0) | (xlo >= np.uint64(1 << bit))
        else:
            nbytes += xhi >= np.uint64(1 << (bit - 64))
    # The region read big-endian is v << 8 * (16 - nbytes) (mod 2**128).
    shift = (8 * (16 - nbytes)).astype(np.uint64)
    small = shift < 64
    s_lo = np.where(small, shift, 0)
    s_hi = np.where(small, 0, shift - np.uint64(64))
    carry = np.where(shift == 0, 0, lo >> np.where(small & (shift > 0), np.uint64(64) - s_lo, 0))
    new_hi = np.where(small, (hi << s_lo) | carry, lo << s_hi)
    new_lo = np.where(small, lo << s_lo, 0).astype(np.uint64)
    words = np.stack([new_hi.byteswap(), new_lo.byteswap()], axis=1)
    words[null] = 0
    nbytes[null] = 0
    return _Encoded(nbytes.astype(np.uint64), null, kind="words", var_size=16, words=words)


def _encode_timestamp(arr: pa.Array, f: DataField, compact: bool) -> _Encoded:
    import numpy as np
    import pyarrow as pa

    if not pa.types.is_timestamp(arr.type):
        arr = _cast(arr, pa.timestamp("ms" if compact else "us"), f)
    null = _null_mask(arr)
    raw = _fixed_values(arr, np.int64)
    unit = arr.type.unit
    if unit == "s":
        ms, nano = raw * 1000, np.zeros(len(raw), dtype=np.int64)
    elif unit == "ms":
        ms, nano = raw, np.zeros(len(raw), dtype=np.int64)
    elif unit == "us":
        ms, nano = np.floor_divide(raw, 1000), np.mod(raw, 1000) * 1000
    else:
        ms, nano = np.floor_divide(raw, 1_000_000), np.mod(raw, 1_000_000)
    if compact:
        return _Encoded(_masked_slot(ms.view(np.uint64), null), null)
    millis = _masked_slot(ms.view(np.uint64), null)
    return _Encoded(_masked_slot(nano, null), null, kind="words", var_size=8, words=millis.reshape(-1, 1))


def _encode_bytes(arr: pa.Array, f: DataField) -> _Encoded:
    import numpy as np
    import pyarrow as pa

    t = arr.type
    stringish = pa.types.is_string(t) or pa.types.is_large_string(t) or _is_view(t, "is_string_view")
    binaryish = (
        pa.types.is_binary(t)
        or pa.types.is_large_binary(t)
        or pa.types.is_fixed_size_binary(t)
        or _is_view(t, "is_binary_view")
    )
    if stringish:
        arr = _cast(arr, pa.large_string(), f)
    elif binaryish or pa.types.is_null(t):
        arr = _cast(arr, pa.large_binary(), f)
    else:
        raise InvalidInput(f"bucket key column {f.name!r}: cannot use {t} values as {f.type}")
    n = len(arr)
    null = _null_mask(arr)
    bufs = arr.buffers()
    offsets = np.frombuffer(bufs[1], dtype=np.int64, count=arr.offset + n + 1)[arr.offset :]
    first, last = int(offsets[0]), int(offsets[-1])
    raw = np.frombuffer(bufs[2], dtype=np.uint8)[first:last] if bufs[2] is not None and last > first else None
    # 8 zero bytes of padding so every value start can be read as one unaligned uint64.
    data = np.zeros(last - first + 8, dtype=np.uint8)
    if raw is not None:
        data[: last - first] = raw
    as_words = np.ndarray(shape=(last - first + 1,), dtype=np.uint64, buffer=data, strides=(1,))
    starts = offsets[:-1] - first
    lengths = np.diff(offsets)
    lengths[null] = 0
    short = (lengths <= 7) & ~null
    # Inline (<= 7 bytes): data in the slot's low bytes, 0x80 | len in its top byte.
    slot = np.zeros(n, dtype=np.uint64)
    rows = np.flatnonzero(short)
    if len(rows):
        ln = lengths[rows]
        slot[rows] = (as_words[starts[rows]] & _LOW_MASK[ln]) | ((ln.astype(np.uint64) | np.uint64(0x80)) << np.uint64(56))
    long_rows = ~short & ~null
    var_lengths = np.where(long_rows, lengths, 0)
    # Long values: the slot is (offset << 32) | length; the offset is OR-ed in later.
    slot = np.where(long_rows, var_lengths.astype(np.uint64), slot)
    return _Encoded(
        slot, null, kind="bytes", var_size=(var_lengths + 7) & ~7, data=as_words, starts=starts, lengths=var_lengths
    )


def _is_view(t: pa.DataType, predicate: str) -> bool:
    import pyarrow as pa

    fn = getattr(pa.types, predicate, None)
    return bool(fn(t)) if fn is not None else False


_LOW_MASK: Any = None  # _LOW_MASK[k] keeps the low k bytes of a word (k = 0..8)


def _init_tables() -> None:
    global _LOW_MASK
    if _LOW_MASK is None:
        import numpy as np

        _LOW_MASK = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)


_Encoder = Callable[["pa.Array", DataField], _Encoded]


class _KeyEncoders(DataTypeVisitor[_Encoder]):
    """The encoder of a bucket key field's type (Java's ``BinaryWriter.write`` per type):
    chosen once per field, then run on the whole column."""

    def __init__(self, field: DataField) -> None:
        self.field = field

    def unsupported(self, dt: DataType) -> NoReturn:
        raise NotYetSupported(f"bucket key column {self.field.name!r}: type {dt} cannot be a bucket key")

    def visit_boolean(self, dt: BooleanType) -> _Encoder:
        return _encode_bool

    def visit_tinyint(self, dt: TinyIntType) -> _Encoder:
        import numpy as np
        import pyarrow as pa

        return lambda arr, f: _encode_int(arr, f, pa.int8(), np.int8, np.uint8)

    def visit_smallint(self, dt: SmallIntType) -> _Encoder:
        import numpy as np
        import pyarrow as pa

        return lambda arr, f: _encode_int(arr, f, pa.int16(), np.int16, np.uint16)

    def visit_int(self, dt: IntType) -> _Encoder:
        import numpy as np
        import pyarrow as pa

        return lambda arr, f: _encode_int(arr, f, pa.int32(), np.int32, np.uint32)

    def visit_bigint(self, dt: BigIntType) -> _Encoder:
        import numpy as np
        import pyarrow as pa

        return lambda arr, f: _encode_int(arr, f, pa.int64(), np.int64, np.uint64)

    def visit_date(self, dt: DateType) -> _Encoder:
        return _encode_date

    def visit_time(self, dt: TimeType) -> _Encoder:
        return _encode_time

    def visit_float(self, dt: FloatType) -> _Encoder:
        return lambda arr, f: _encode_float(arr, f, double=False)

    def visit_double(self, dt: DoubleType) -> _Encoder:
        return lambda arr, f: _encode_float(arr, f, double=True)

    def visit_decimal(self, dt: DecimalType) -> _Encoder:
        return lambda arr, f: _encode_decimal(arr, f, dt)

    def visit_timestamp(self, dt: TimestampType) -> _Encoder:
        return lambda arr, f: _encode_timestamp(arr, f, dt.is_compact)

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> _Encoder:
        return lambda arr, f: _encode_timestamp(arr, f, dt.is_compact)

    def visit_char(self, dt: CharType) -> _Encoder:
        return _encode_bytes

    def visit_varchar(self, dt: VarCharType) -> _Encoder:
        return _encode_bytes

    def visit_binary(self, dt: BinaryType) -> _Encoder:
        return _encode_bytes

    def visit_varbinary(self, dt: VarBinaryType) -> _Encoder:
        return _encode_bytes


def _encode(arr: pa.Array, f: DataField) -> _Encoded:
    return _KeyEncoders(f).visit(f.type)(arr, f)


# ---------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------

# A length group whose rows are fewer than this fraction of its 32-bit words is hashed row
# by row with mmh3 (C): the vectorised loop runs once per word, so for a handful of very
# long rows (big strings) the per-row calls are the cheaper, still bounded, Python loop.
_MMH3_ROWS_PER_WORD = 0.25


_SLICE_ROWS = 1 << 15


def bucket_hashes(table: pa.Table, key_fields: Sequence[DataField]) -> np.ndarray:
    """Java ``BinaryRow.hashCode`` of the key row of every table row, as int32.

    Columns are found by field name (or ``_KEY_<name>`` as in key-value data files) and
    cast to the field's Arrow type where needed. Equals ``binary_row.bucket_hash`` per row.
    """
    import numpy as np

    if sys.byteorder != "little":
        raise NotYetSupported("bucket hashing assumes a little-endian host, as Java's BinaryRow does")
    _init_tables()
    n = table.num_rows
    arity = len(key_fields)
    header_words = ((arity + 63 + 8) // 64)  # null-bit region in 8-byte words
    fixed_words = header_words + arity
    if n == 0:
        return np.zeros(0, dtype=np.int32)
    if n > _SLICE_ROWS:  # bounded temporaries and better cache use
        return np.concatenate([bucket_hashes(table.slice(a, _SLICE_ROWS), key_fields) for a in range(0, n, _SLICE_ROWS)])

    header = np.zeros((n, header_words), dtype=np.uint64)
    slots = np.zeros((n, arity), dtype=np.uint64)
    encoded: list[_Encoded] = []
    for i, f in enumerate(key_fields):
        enc = _encode(_column(table, f), f)
        encoded.append(enc)
        if enc.null.any():
            bit = i + 8
            header[:, bit >> 6] |= enc.null.astype(np.uint64) << np.uint64(bit & 63)

    var_offsets, cursor = _variable_layout(encoded, slots, fixed_words)
    out = np.empty(n, dtype=np.int32)
    groups = _rows_by_length(np.broadcast_to(np.asarray(cursor, dtype=np.int64), (n,)), n)
    for length, idx in groups:
        out_rows = _hash_group(length, idx, n, header, slots, encoded, var_offsets, fixed_words)
        if idx is None:
            out[:] = out_rows
        else:
            out[idx] = out_rows
    return out


def _variable_layout(encoded: list[_Encoded], slots: np.ndarray, fixed_words: int) -> tuple[list[Any], Any]:
    """The variable part: appended field by field, each piece 8-aligned, offsets from the row
    start written into the fields' slots. Returns the offsets per field (None: fixed) and the
    row lengths (scalar or per row)."""
    import numpy as np

    cursor: Any = fixed_words * 8
    var_offsets: list[Any] = []
    for i, enc in enumerate(encoded):
        if enc.kind == "fixed":
            var_offsets.append(None)
            slots[:, i] = enc.slot
            continue
        off = cursor
        var_offsets.append(off)
        cursor = cursor + enc.var_size
        if enc.kind == "bytes":
            assert enc.lengths is not None  # every "bytes" encoding has them
            has_var = enc.lengths > 0
            slots[:, i] = np.where(has_var, (np.asarray(off, dtype=np.int64).astype(np.uint64) << np.uint64(32)) | enc.slot, enc.slot)
        else:
            slots[:, i] = (np.asarray(off, dtype=np.int64).astype(np.uint64) << np.uint64(32)) | enc.slot
    return var_offsets, cursor


def _rows_by_length(lengths: np.ndarray, n: int) -> list[tuple[int, np.ndarray | None]]:
    """[(row length, row indices or None for all rows)]: murmur3 runs once per distinct length."""
    import numpy as np

    lo, hi = int(lengths.min()), int(lengths.max())
    if lo == hi:
        return [(lo, None)]
    order = np.argsort(lengths, kind="stable")
    sorted_len = lengths[order]
    cuts = np.flatnonzero(np.diff(sorted_len)) + 1
    bounds = np.concatenate(([0], cuts, [n]))
    return [(int(sorted_len[a]), order[a:b]) for a, b in pairwise(bounds)]


def _take(a: Any, idx: np.ndarray | None) -> Any:
    import numpy as np

    if isinstance(a, np.ndarray) and a.ndim >= 1:
        return a if idx is None else a[idx]
    return a


def _hash_group(
    length: int,
    idx: np.ndarray | None,
    n: int,
    header: np.ndarray,
    slots: np.ndarray,
    encoded: list[_Encoded],
    var_offsets: list[Any],
    fixed_words: int,
) -> np.ndarray:
    """Build the (rows, length/8) word matrix of rows sharing one length and hash it."""
    import numpy as np

    rows = n if idx is None else len(idx)
    lw = length // 8
    header_words = header.shape[1]
    m = np.zeros((rows, lw), dtype=np.uint64)
    m[:, :header_words] = _take(header, idx)
    m[:, header_words:fixed_words] = _take(slots, idx)
    flat_words = m.ravel()
    row_base = np.arange(rows, dtype=np.int64) * lw
    for enc, off in zip(encoded, var_offsets, strict=True):
        if enc.kind == "fixed":
            continue
        off_g = _take(off, idx)
        if enc.kind == "words":
            assert enc.words is not None
            w = _take(enc.words, idx)
            if np.ndim(off_g) == 0:
                start = int(off_g) // 8
                m[:, start : start + w.shape[1]] = w
            else:
                pos = (row_base + np.asarray(off_g) // 8)[:, None] + np.arange(w.shape[1])
                flat_words[pos.ravel()] = w.ravel()
        else:
            assert enc.lengths is not None and enc.starts is not None and enc.data is not None
            lens = _take(enc.lengths, idx)
            sel = np.flatnonzero(lens)
            if len(sel) == 0:
                continue
            lens = lens[sel]
            seg, within = _ragged((lens + 7) >> 3)  # one element per 8-byte word
            remaining = np.minimum(lens[seg] - 8 * within, 8)
            src = _take(enc.starts, idx)[sel][seg] + 8 * within
            dst = (row_base[sel] + np.broadcast_to(np.asarray(off_g, dtype=np.int64), (rows,))[sel] // 8)[seg] + within
            flat_words[dst] = enc.data[src] & _LOW_MASK[remaining]
    words32 = m.view(np.uint32)
    n_words = words32.shape[1]
    if rows < n_words * _MMH3_ROWS_PER_WORD:
        import mmh3

        return np.fromiter((mmh3.hash(r.tobytes(), _SEED, signed=True) for r in m), dtype=np.int32, count=rows)
    return murmur3_words(words32)


def bucket_ids(hashes: np.ndarray, num_buckets: int) -> np.ndarray:
    """Java ``Math.abs(hash % n)`` (truncating ``%``) for every hash, as int32."""
    import numpy as np

    if num_buckets <= 0:
        raise InvalidInput(f"bucket count must be positive, got {num_buckets}")
    h = np.asarray(hashes).astype(np.int64)
    return np.abs(np.fmod(h, num_buckets)).astype(np.int32)


def bucket_key_fields(schema: Any) -> list[DataField]:
    """The DataFields of a TableSchema's bucket key (``bucket-key`` or trimmed primary key)."""
    by_name = {f.name: f for f in schema.fields}
    return [by_name[k] for k in schema.bucket_keys]
