"""Sort keys of sort compaction: Paimon's orders over the ``--order-by`` columns.

* ``order``: lexicographic on the columns, ascending, NULLs first (Paimon's generated
  ``RecordComparator`` with ``nullsIsLast = false``);
* ``zorder``: the bytes of Paimon's ``ZIndexer`` -- every column as 8 order-preserving bytes
  (``ZOrderByteUtils``; CHAR/VARCHAR/BINARY/VARBINARY take ``zorder.var-length-contribution``
  bytes), bits interleaved column by column, compared as unsigned bytes;
* ``hilbert``: the bytes of Paimon's ``HilbertIndexer`` -- every column mapped to a long, the
  63-bit-per-dimension Hilbert index (Skilling's transpose, as the ``hilbert-curve`` library
  Paimon uses) rendered as ``BigInteger.toByteArray`` padded/truncated to 63 bytes.

Keys are computed column-wise with numpy (no per-row Python). :class:`SortSpec` is how one
sort compaction sorts (the key column it adds, the Arrow sort keys).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

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
from ..errors import InvalidInput
from ..utils.suggest import did_you_mean

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..table.file_store_table import FileStoreTable

ORDER = "order"
ZORDER = "zorder"
HILBERT = "hilbert"
STRATEGIES = (ORDER, ZORDER, HILBERT)
SORT_KEY = "_PAIMON_CLI_SORT_KEY"
PRIMITIVE_BUFFER_SIZE = 8
HILBERT_BITS = 63
HILBERT_KEY_BYTES = 63
_LONG_MAX = (1 << 63) - 1
_VAR_TYPES = (CharType, VarCharType, BinaryType, VarBinaryType)
_INT_TYPES = (TinyIntType, SmallIntType, IntType, BigIntType, DateType, TimeType)
_TS_TYPES = (TimestampType, LocalZonedTimestampType)
_KEY_CHUNK_ROWS = 65536  # rows per vectorised key computation (bounds the bit matrices)
_HILBERT_CHUNK_ROWS = 16384  # the 62-step transpose loop runs fastest on cache-sized arrays

# ---------------------------------------------------------------------------------------
# Column values as numpy (validity + int64 / float64 / bytes)
# ---------------------------------------------------------------------------------------


def _array(col: Any) -> pa.Array:
    import pyarrow as pa

    if isinstance(col, pa.ChunkedArray):
        return col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    return col


def _valid(arr: pa.Array) -> np.ndarray:
    import numpy as np

    if arr.null_count == 0:
        return np.ones(len(arr), dtype=bool)
    return np.asarray(arr.is_valid().to_numpy(zero_copy_only=False), dtype=bool)


def _int64(arr: pa.Array, dt: DataType) -> np.ndarray:
    """Integer-like values as Java reads them: TINYINT..BIGINT, DATE days, TIME millis of day,
    TIMESTAMP(_LTZ) ``getMillisecond()`` (floor of the epoch value in milliseconds)."""
    import numpy as np
    import pyarrow as pa

    t = arr.type
    if pa.types.is_timestamp(t) or pa.types.is_time(t):
        phys = pa.int32() if pa.types.is_time32(t) else pa.int64()
        raw = np.asarray(arr.cast(phys).fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)
        div = {"s": None, "ms": 1, "us": 1000, "ns": 1_000_000}[t.unit]
        if div is None:
            return raw * 1000
        return raw if div == 1 else np.floor_divide(raw, div)
    if pa.types.is_date32(t):
        arr = arr.cast(pa.int32())
    return np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False), dtype=np.int64)


def _double_bits(arr: pa.Array) -> np.ndarray:
    """``Double.doubleToLongBits`` of the value (FLOAT widened to double first; NaN canonical)."""
    import numpy as np

    vals = np.asarray(arr.fill_null(0).to_numpy(zero_copy_only=False)).astype(np.float64)
    bits = vals.view(np.int64).copy()
    bits[np.isnan(vals)] = np.int64(0x7FF8000000000000)
    return bits


def _var_bytes(arr: pa.Array) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(data bytes, start offsets, lengths) of a string/binary array (UTF-8 for strings)."""
    import numpy as np
    import pyarrow as pa

    if pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type):
        arr = arr.cast(pa.large_binary() if pa.types.is_large_string(arr.type) else pa.binary())
    if pa.types.is_fixed_size_binary(arr.type):
        arr = arr.cast(pa.binary())
    large = pa.types.is_large_binary(arr.type)
    bufs = arr.buffers()
    n = len(arr)
    off_dtype = np.int64 if large else np.int32
    offsets = np.frombuffer(bufs[1], dtype=off_dtype)[arr.offset : arr.offset + n + 1].astype(np.int64)
    data = np.frombuffer(bufs[2], dtype=np.uint8) if bufs[2] is not None else np.zeros(0, dtype=np.uint8)
    starts = offsets[:-1]
    lengths = offsets[1:] - starts
    return data, starts, lengths


def _gather(data: np.ndarray, starts: np.ndarray, count: np.ndarray, width: int, shift: np.ndarray) -> np.ndarray:
    """(n, width) bytes: row r holds ``data[starts[r] : starts[r] + count[r]]`` placed at
    column ``shift[r]`` onwards, zeros elsewhere."""
    import numpy as np

    n = len(starts)
    cols = np.arange(width, dtype=np.int64)[None, :]
    k = cols - shift[:, None]
    ok = (k >= 0) & (k < count[:, None])
    out = np.zeros((n, width), dtype=np.uint8)
    if data.size:
        idx = np.clip(starts[:, None] + k, 0, data.size - 1)
        out[ok] = data[idx[ok]]
    return out


def _decimal_be16(arr: pa.Array) -> np.ndarray:
    """The unscaled values of a decimal128 array as 16-byte big-endian two's complement."""
    import numpy as np

    n = len(arr)
    raw = np.frombuffer(arr.buffers()[1], dtype=np.uint8)[arr.offset * 16 : (arr.offset + n) * 16]
    return raw.reshape(n, 16)[:, ::-1].copy()


_BIT_LENGTH = None


def _bit_length_table() -> np.ndarray:
    import numpy as np

    global _BIT_LENGTH
    if _BIT_LENGTH is None:
        _BIT_LENGTH = np.array([int(i).bit_length() for i in range(256)], dtype=np.int64)
    return _BIT_LENGTH


def _be_bit_length(be: np.ndarray) -> np.ndarray:
    """Bit length of the non-negative big-endian integers in the rows of ``be`` (n, w)."""
    import numpy as np

    n, w = be.shape
    nz = be != 0
    has = nz.any(axis=1)
    first = np.argmax(nz, axis=1)
    top = be[np.arange(n), first]
    return np.where(has, (w - 1 - first) * 8 + _bit_length_table()[top], 0)


def _to_byte_array(be: np.ndarray, signed: bool) -> tuple[np.ndarray, np.ndarray]:
    """Java ``BigInteger.toByteArray`` of the integers in ``be`` (n, w) big-endian, as
    (bytes with one extra leading sign byte (n, w + 1), minimal length per row)."""
    import numpy as np

    n, w = be.shape
    if signed:
        negative = (be[:, 0] & 0x80) != 0
        mag = np.where(negative[:, None], ~be, be)  # bitLength of a negative x is that of ~x
        ext = np.where(negative, 0xFF, 0).astype(np.uint8)
    else:
        mag = be
        ext = np.zeros(n, dtype=np.uint8)
    length = _be_bit_length(mag) // 8 + 1
    full = np.concatenate([ext[:, None], be], axis=1)
    return full, length


# ---------------------------------------------------------------------------------------
# Z-order (ZIndexer + ZOrderByteUtils)
# ---------------------------------------------------------------------------------------


def _ordered_long_bytes(v: np.ndarray) -> np.ndarray:
    """``putLong(v ^ Long.MIN_VALUE)``: 8 big-endian bytes that sort like the signed value."""
    import numpy as np

    u = v.astype(np.int64).view(np.uint64) ^ np.uint64(1 << 63)
    return u.astype(">u8").view(np.uint8).reshape(len(v), 8)


def _z_column(col: Any, dt: DataType, var_size: int) -> np.ndarray:
    """One column's z-order contribution, (n, 8) or (n, var_size) uint8."""
    import numpy as np

    arr = _array(col)
    n = len(arr)
    valid = _valid(arr)
    if isinstance(dt, _VAR_TYPES):
        data, starts, lengths = _var_bytes(arr)
        count = np.minimum(lengths, var_size)
        out = _gather(data, starts, count, var_size, np.zeros(n, dtype=np.int64))
    elif isinstance(dt, BooleanType):
        vals = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        out = np.zeros((n, PRIMITIVE_BUFFER_SIZE), dtype=np.uint8)
        out[:, 0] = np.where(vals, 0x81, 0)  # (byte) -127
    elif isinstance(dt, _INT_TYPES) or isinstance(dt, _TS_TYPES):
        out = _ordered_long_bytes(_int64(arr, dt))
    elif isinstance(dt, (FloatType, DoubleType)):
        bits = _double_bits(arr)
        # ZOrderByteUtils: lval ^= ((lval >> (Integer.SIZE - 1)) | Long.MIN_VALUE) -- a shift
        # by 31 on the long, kept as Paimon (and Iceberg before it) computes it
        bits = bits ^ ((bits >> np.int64(31)) | np.int64(-(1 << 63)))
        out = bits.view(np.uint64).astype(">u8").view(np.uint8).reshape(n, 8)
    elif isinstance(dt, DecimalType):
        # toUnscaledBytes() (BigInteger.toByteArray), then the first 8 bytes / zero-filled
        full, length = _to_byte_array(_decimal_be16(arr), signed=True)
        w = full.shape[1]
        count = np.minimum(length, PRIMITIVE_BUFFER_SIZE)
        starts = np.arange(n, dtype=np.int64) * w + (w - length)
        out = _gather(full.reshape(-1), starts, count, PRIMITIVE_BUFFER_SIZE, np.zeros(n, dtype=np.int64))
    else:
        raise InvalidInput(f"zorder: column type {dt} cannot be z-ordered (Paimon's ZIndexer refuses it)")
    if not valid.all():
        out[~valid] = 0
    return out


def _interleave_plan(lengths: Sequence[int]) -> np.ndarray:
    """Source bit (in the concatenation of the columns' bytes, MSB first) of every output
    bit of ``ZOrderByteUtils.interleaveBits``: one bit per column in turn, skipping
    columns that have run out of bytes. Computed once per column layout."""
    import numpy as np

    total = sum(lengths)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    out = np.zeros(total * 8, dtype=np.int64)
    col, byte, bit = 0, 0, 7
    pos = 0
    ncols = len(lengths)
    while pos < total * 8:
        out[pos] = (starts[col] + byte) * 8 + (7 - bit)
        pos += 1
        if pos == total * 8:
            break
        while True:
            col += 1
            if col == ncols:
                col = 0
                bit -= 1
                if bit == -1:
                    byte += 1
                    bit = 7
            if lengths[col] > byte:
                break
    return out


def zorder_keys(table: pa.Table, fields: Sequence[DataField], var_size: int = PRIMITIVE_BUFFER_SIZE) -> pa.Array:
    """Paimon ``ZIndexer.index`` of every row, as a fixed_size_binary array."""
    import numpy as np

    if not fields:
        raise InvalidInput("zorder: no columns to order by")
    if var_size <= 0:
        raise InvalidInput(f"zorder.var-length-contribution={var_size}: must be positive")
    lengths = [var_size if isinstance(f.type, _VAR_TYPES) else PRIMITIVE_BUFFER_SIZE for f in fields]
    total = sum(lengths)
    plan = _interleave_plan(lengths)
    n = table.num_rows
    parts = []
    for start in range(0, max(n, 1), _KEY_CHUNK_ROWS):
        piece = table.slice(start, _KEY_CHUNK_ROWS)
        if piece.num_rows == 0:
            break
        cols = [_z_column(piece.column(f.name), f.type, var_size) for f in fields]
        bits = np.unpackbits(np.concatenate(cols, axis=1), axis=1)
        parts.append(np.packbits(bits[:, plan], axis=1))
    data = np.concatenate(parts, axis=0) if parts else np.zeros((0, total), dtype=np.uint8)
    return _fixed_binary(data, total)


def _fixed_binary(data: np.ndarray, width: int) -> pa.Array:
    import numpy as np
    import pyarrow as pa

    data = np.ascontiguousarray(data, dtype=np.uint8)
    return pa.FixedSizeBinaryArray.from_buffers(pa.binary(width), data.shape[0], [None, pa.py_buffer(data.tobytes())])


# ---------------------------------------------------------------------------------------
# Hilbert (HilbertIndexer + davidmoten hilbert-curve, bits = 63)
# ---------------------------------------------------------------------------------------


def _h_column(col: Any, dt: DataType) -> np.ndarray:
    """One column as the long HilbertIndexer feeds the curve (NULL = Long.MAX_VALUE)."""
    import numpy as np
    import pyarrow as pa

    arr = _array(col)
    n = len(arr)
    valid = _valid(arr)
    if isinstance(dt, _VAR_TYPES):
        # ConvertBinaryUtil.convertBytesToLong: first 8 bytes, shorter ones right-aligned
        data, starts, lengths = _var_bytes(arr)
        count = np.minimum(lengths, 8)
        be = _gather(data, starts, count, 8, 8 - count)
        out = be.view(">u8").reshape(n).astype(np.uint64).view(np.int64)
    elif isinstance(dt, BooleanType):
        vals = np.asarray(arr.fill_null(False).to_numpy(zero_copy_only=False), dtype=bool)
        out = np.where(vals, np.int64(_LONG_MAX), np.int64(0))
    elif isinstance(dt, TinyIntType):
        out = _int64(arr, dt) & 0xFF  # convertBytesToLong(new byte[] {b}): unsigned
    elif isinstance(dt, _INT_TYPES) or isinstance(dt, _TS_TYPES):
        out = _int64(arr, dt)
    elif isinstance(dt, (FloatType, DoubleType)):
        out = _double_bits(arr)
    elif isinstance(dt, DecimalType):
        # BigDecimal.longValue(): fraction truncated toward zero, low 64 bits of the integer
        whole = arr.cast(pa.decimal128(38, 0), safe=False)
        be = _decimal_be16(whole)
        out = be[:, 8:].copy().view(">u8").reshape(n).astype(np.uint64).view(np.int64)
    else:
        raise InvalidInput(f"hilbert: column type {dt} cannot be Hilbert-ordered (Paimon's HilbertIndexer refuses it)")
    out = np.asarray(out, dtype=np.int64)
    if not valid.all():
        out = np.where(valid, out, np.int64(_LONG_MAX))
    return out


def _hilbert_transposed(points: list[np.ndarray]) -> list[np.ndarray]:
    """Skilling's AxesToTranspose over 63-bit ordinates, vectorised over rows.

    Only the low 63 bits matter: every step is an XOR, an AND with a mask below 2^62 or a
    test of a bit below 2^63, and the index reads bits 62..0, so bit 63 never reaches the
    result and the ordinates are masked to 63 bits up front. The per-row branch ("bit q of
    x[i] set: invert x[0]'s low bits, else exchange them with x[i]'s") is computed with
    all-ones/all-zeros masks and in-place operations.
    """
    import numpy as np

    n = len(points)
    mask63 = np.uint64((1 << 63) - 1)
    x = [p.view(np.uint64) & mask63 for p in points]
    rows = len(x[0])
    t = np.empty(rows, np.uint64)
    m = np.empty(rows, np.uint64)
    tmp = np.empty(rows, np.uint64)
    zero, one = np.uint64(0), np.uint64(1)
    for k in range(HILBERT_BITS - 1, 0, -1):  # q = 2^k from 2^62 down to 2
        p = np.uint64((1 << k) - 1)
        sk = np.uint64(k)
        for i in range(n):
            np.right_shift(x[i], sk, out=m)
            np.bitwise_and(m, one, out=m)
            np.subtract(zero, m, out=m)  # all ones where bit k of x[i] is set
            if i == 0:
                np.bitwise_and(m, p, out=tmp)
                np.bitwise_xor(x[0], tmp, out=x[0])
                continue
            np.bitwise_xor(x[0], x[i], out=t)
            np.bitwise_and(t, p, out=t)
            np.bitwise_and(t, np.invert(m, out=tmp), out=t)  # the exchange only where the bit is clear
            np.bitwise_and(m, p, out=tmp)
            np.bitwise_or(tmp, t, out=tmp)
            np.bitwise_xor(x[0], tmp, out=x[0])
            np.bitwise_xor(x[i], t, out=x[i])
    for i in range(1, n):  # Gray encode
        np.bitwise_xor(x[i], x[i - 1], out=x[i])
    acc = np.zeros(rows, np.uint64)
    for k in range(HILBERT_BITS - 1, 0, -1):
        np.right_shift(x[n - 1], np.uint64(k), out=m)
        np.bitwise_and(m, one, out=m)
        np.subtract(zero, m, out=m)
        np.bitwise_and(m, np.uint64((1 << k) - 1), out=m)
        np.bitwise_xor(acc, m, out=acc)
    return [np.bitwise_xor(xi, acc) for xi in x]


def hilbert_index_bytes(points: list[np.ndarray]) -> np.ndarray:
    """``HilbertIndexer.hilbertCurvePosBytes`` for rows of longs: (n, 63) uint8."""
    import numpy as np

    dims = len(points)
    rows = len(points[0])
    x = _hilbert_transposed(points)
    # bits 62..0 of every dimension (big-endian bytes unpacked, bit 63 dropped), interleaved:
    # bit 62 of every dim, then bit 61, ... (hilbert-curve's toIndex)
    per_dim = [np.unpackbits(xi.astype(">u8").view(np.uint8).reshape(rows, 8), axis=1)[:, 1:] for xi in x]
    bits = np.stack(per_dim, axis=2).reshape(rows, HILBERT_BITS * dims)
    total = HILBERT_BITS * dims
    pad = (-total) % 8
    if pad:
        bits = np.concatenate([np.zeros((rows, pad), dtype=np.uint8), bits], axis=1)
    be = np.packbits(bits, axis=1)  # the index as a positive big-endian integer
    full, length = _to_byte_array(be, signed=False)  # BigInteger.toByteArray
    w = full.shape[1]
    # ConvertBinaryUtil.paddingToNByte(bytes, 63): left-pad short arrays, keep the first 63 bytes of long ones
    start = np.minimum(w - length, w - HILBERT_KEY_BYTES)
    cols = start[:, None] + np.arange(HILBERT_KEY_BYTES, dtype=np.int64)[None, :]
    ok = cols >= 0
    out = np.zeros((rows, HILBERT_KEY_BYTES), dtype=np.uint8)
    r = np.broadcast_to(np.arange(rows)[:, None], cols.shape)
    out[ok] = full[r[ok], cols[ok]]
    return out


def hilbert_keys(table: pa.Table, fields: Sequence[DataField]) -> pa.Array:
    """Paimon ``HilbertIndexer.index`` of every row, as fixed_size_binary(63)."""
    import numpy as np

    if len(fields) < 2:
        raise InvalidInput("hilbert: Hilbert sort needs at least two columns (as Paimon)")
    n = table.num_rows
    parts = []
    for start in range(0, max(n, 1), _HILBERT_CHUNK_ROWS):
        piece = table.slice(start, _HILBERT_CHUNK_ROWS)
        if piece.num_rows == 0:
            break
        parts.append(hilbert_index_bytes([_h_column(piece.column(f.name), f.type) for f in fields]))
    data = np.concatenate(parts, axis=0) if parts else np.zeros((0, HILBERT_KEY_BYTES), dtype=np.uint8)
    return _fixed_binary(data, HILBERT_KEY_BYTES)


# ---------------------------------------------------------------------------------------
# How to sort
# ---------------------------------------------------------------------------------------


def sort_indices_nulls_first(t: pa.Table, keys: Sequence[tuple[str, str]]) -> pa.Array:
    """``pc.sort_indices`` with NULLs first (per-key placement on pyarrow >= 25, where the
    global ``null_placement`` is deprecated)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if int(pa.__version__.split(".")[0]) >= 25:
        return pc.sort_indices(t, sort_keys=[(k, o, "at_start") for k, o in keys])
    return pc.sort_indices(t, sort_keys=list(keys), null_placement="at_start")


@dataclass(frozen=True)
class SortSpec:
    """How to sort: the strategy, the order columns and the table's fields."""

    strategy: str
    fields: tuple[DataField, ...]
    var_size: int = PRIMITIVE_BUFFER_SIZE

    def with_key(self, t: pa.Table) -> pa.Table:
        """``t`` plus the key column the sort uses (z/hilbert); order sorts the columns themselves."""
        if self.strategy == ZORDER:
            return t.append_column(SORT_KEY, zorder_keys(t, self.fields, self.var_size))
        if self.strategy == HILBERT:
            return t.append_column(SORT_KEY, hilbert_keys(t, self.fields))
        return t

    @property
    def sort_keys(self) -> list[tuple[str, str]]:
        if self.strategy == ORDER:
            return [(f.name, "ascending") for f in self.fields]
        return [(SORT_KEY, "ascending")]

    def sort(self, t: pa.Table) -> pa.Table:
        if t.num_rows <= 1:
            return t
        return t.take(sort_indices_nulls_first(t, self.sort_keys))

    def strip(self, t: pa.Table) -> pa.Table:
        return t.drop_columns([SORT_KEY]) if SORT_KEY in t.column_names else t


def make_sort_spec(table: FileStoreTable, strategy: str, order_by: Sequence[str]) -> SortSpec:
    """Validate ``--order-strategy`` / ``--order-by`` against the table (one-line errors)."""
    s = (strategy or "").strip().lower()
    if s not in STRATEGIES:
        raise InvalidInput(f"--order-strategy {strategy!r}: expected one of {', '.join(STRATEGIES)}")
    cols = [c.strip() for c in order_by if c and c.strip()]
    if not cols:
        raise InvalidInput("--order-by: give at least one column (e.g. --order-by a,b)")
    if len(set(cols)) != len(cols):
        raise InvalidInput(f"--order-by {','.join(cols)}: a column is listed twice")
    names = table.schema.field_names
    unknown = [c for c in cols if c not in names]
    if unknown:
        raise InvalidInput(f"--order-by: unknown column {unknown[0]!r}{did_you_mean(unknown[0], names)} "
                           f"(columns: {', '.join(names)})")
    fields = tuple(table.schema.field(c) for c in cols)
    if s == HILBERT and len(fields) < 2:
        raise InvalidInput("--order-strategy hilbert needs at least two --order-by columns (as Paimon)")
    supported = (*_VAR_TYPES, BooleanType, *_INT_TYPES, *_TS_TYPES, FloatType, DoubleType, DecimalType)
    for f in fields:
        if not isinstance(f.type, supported):
            raise InvalidInput(f"--order-by: column {f.name} of type {f.type} cannot be sorted by (nested type)")
    var_size = table.options.get_int("zorder.var-length-contribution") or PRIMITIVE_BUFFER_SIZE
    return SortSpec(s, fields, var_size)
