"""Sort compaction of bucket-unaware append tables (``--order-strategy order|zorder|hilbert``).

Why: an append table is read by scanning files whose min/max stats overlap the filter. Sorting
the rows of a partition by the filtered columns (or by a space-filling curve over several of
them) makes those ranges narrow, so far more files are skipped. Paimon's sort-compact
(Flink ``SortCompactAction`` / Spark ``CompactProcedure`` with ``order_strategy``) reads the
selected partitions, sorts every row by a key and writes them back as an OVERWRITE of those
partitions. This module does the same:

* ``order``: lexicographic on the columns, ascending, NULLs first (Paimon's generated
  ``RecordComparator`` with ``nullsIsLast = false``);
* ``zorder``: the bytes of Paimon's ``ZIndexer`` -- every column as 8 order-preserving bytes
  (``ZOrderByteUtils``; CHAR/VARCHAR/BINARY/VARBINARY take ``zorder.var-length-contribution``
  bytes), bits interleaved column by column, compared as unsigned bytes;
* ``hilbert``: the bytes of Paimon's ``HilbertIndexer`` -- every column mapped to a long, the
  63-bit-per-dimension Hilbert index (Skilling's transpose, as the ``hilbert-curve`` library
  Paimon uses) rendered as ``BigInteger.toByteArray`` padded/truncated to 63 bytes.

Keys are computed column-wise with numpy (no per-row Python). A partition bigger than the sort
budget (half of ``write-buffer-size``) is sorted in chunks spilled to local Arrow IPC files and
merged back through memory maps, a window of every run at a time, so memory stays bounded by
the budget whatever the partition size.

The commit is an OVERWRITE of the rewritten partitions pinned to the snapshot that was read
(``FileStoreCommit.commit(..., base_snapshot_id=...)``): if anything was appended to them
meanwhile the commit fails with CommitConflict (exit 5) instead of losing those rows
(apache/paimon#4802), and the files written are deleted again.

Entry point for the compaction job (``paimon-cli compact --order-strategy ... --order-by ...``)::

    sort_compact(table, strategy, order_by, *, partitions=None, where=None, partition_filter=None,
                 base_snapshot=None, commit_user=None, plan_only=False, progress=None,
                 before_commit=None) -> SortCompactResult

``partitions`` is the ``--partition`` spec list (each dict ANDed, the list ORed, values as
the user typed them) or ``where`` a ``--where`` on partition columns (not both; matched by
:func:`core.operation.partition_spec.partition_filter`); ``partition_filter`` is an extra
predicate over serialized partition rows, ANDed. ``base_snapshot`` defaults to the latest snapshot.
``plan_only`` returns the result with the partitions/files that WOULD be rewritten and writes
nothing. ``progress(partition_index, partitions_total, rows_done)`` is called as partitions
finish. ``before_commit`` is a test hook run after the files are written, before the commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
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
from ..errors import InvalidInput, NotYetSupported

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..manifest.manifest import ManifestEntry
    from ..mergetree.commit_message import CommitMessage
    from ..operation.commit import FileStoreCommit
    from ..refs.snapshot import Snapshot
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
# Sorting a stream of tables with bounded memory
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
        raise InvalidInput(f"--order-by: unknown column {unknown[0]!r} (columns: {', '.join(names)})")
    fields = tuple(table.schema.field(c) for c in cols)
    if s == HILBERT and len(fields) < 2:
        raise InvalidInput("--order-strategy hilbert needs at least two --order-by columns (as Paimon)")
    supported = (*_VAR_TYPES, BooleanType, *_INT_TYPES, *_TS_TYPES, FloatType, DoubleType, DecimalType)
    for f in fields:
        if not isinstance(f.type, supported):
            raise InvalidInput(f"--order-by: column {f.name} of type {f.type} cannot be sorted by (nested type)")
    var_size = table.options.get_int("zorder.var-length-contribution") or PRIMITIVE_BUFFER_SIZE
    return SortSpec(s, fields, var_size)


def _spill_rows(nbytes: int, rows: int, budget: int) -> int:
    per_row = max(nbytes / max(rows, 1), 1.0)
    return max(1024, int(budget / 32 / per_row))


def sort_stream(
    tables: Iterator[pa.Table], spec: SortSpec, budget_bytes: int, spill_dir: str | None = None
) -> Iterator[pa.Table]:
    """The rows of ``tables`` sorted by ``spec`` (key column included), in pieces.

    Up to ``budget_bytes`` of Arrow data are sorted in memory; beyond that each full buffer
    is sorted and spilled as an Arrow IPC run to a temporary local directory, and the runs
    are merged back (:func:`_merge_runs`) through memory maps, a window of each at a time.
    """
    import tempfile

    import pyarrow as pa

    buf: list[pa.Table] = []
    size = 0
    total_bytes = total_rows = 0
    runs: list[str] = []
    tmp: tempfile.TemporaryDirectory[str] | None = None
    try:
        for t in tables:
            if t.num_rows == 0:
                continue
            t = spec.with_key(t)
            buf.append(t)
            size += t.nbytes
            total_bytes += t.nbytes
            total_rows += t.num_rows
            if size >= budget_bytes:
                if tmp is None:
                    tmp = tempfile.TemporaryDirectory(prefix="paimon-cli-sort-", dir=spill_dir)
                runs.append(_spill(spec.sort(pa.concat_tables(buf)), tmp.name, len(runs), budget_bytes))
                buf, size = [], 0
        if not runs:
            if buf:
                yield spec.sort(pa.concat_tables(buf))
            return
        if buf:
            runs.append(_spill(spec.sort(pa.concat_tables(buf)), tmp.name, len(runs), budget_bytes))  # type: ignore[union-attr]
            buf = []
        yield from _merge_runs(runs, spec, budget_bytes, total_bytes / max(total_rows, 1))
    finally:
        if tmp is not None:
            tmp.cleanup()


def _spill(t: pa.Table, directory: str, index: int, budget: int) -> str:
    """One sorted run as an Arrow IPC file in batches small enough to merge many runs."""
    import pyarrow as pa

    path = f"{directory}/run-{index}.arrow"
    rows = _spill_rows(t.nbytes, t.num_rows, budget)
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
        for b in t.to_batches(max_chunksize=rows):
            w.write_batch(b)
    return path


class _Run:
    """A spilled run read back through a memory map; the merge sees a window of at most
    ``window`` rows of it at a time (:attr:`buf`), so k runs hold about the budget together."""

    def __init__(self, path: str, window: int) -> None:
        import pyarrow as pa

        self.source = pa.memory_map(path, "r")
        self.reader = pa.ipc.open_file(self.source)
        self.window = window
        self.next_batch = 0
        self.batch: pa.Table | None = None
        self.offset = 0
        self.buf: pa.Table | None = None
        self._load()

    def _load(self) -> None:
        import pyarrow as pa

        self.batch, self.offset = None, 0
        while self.next_batch < self.reader.num_record_batches:
            b = self.reader.get_batch(self.next_batch)
            self.next_batch += 1
            if b.num_rows:
                self.batch = pa.Table.from_batches([b])
                break
        self._window()

    def _window(self) -> None:
        self.buf = None if self.batch is None else self.batch.slice(self.offset, self.window)

    @property
    def exhausted(self) -> bool:
        """No row left after the current window."""
        if self.batch is None or self.buf is None:
            return True
        return self.offset + self.buf.num_rows >= self.batch.num_rows and \
            self.next_batch >= self.reader.num_record_batches

    def consume(self, rows: int) -> None:
        """Drop the first ``rows`` of the window (they were emitted)."""
        if rows <= 0 or self.batch is None:
            return
        self.offset += rows
        if self.offset >= self.batch.num_rows:
            self._load()
        else:
            self._window()

    def close(self) -> None:
        self.batch = self.buf = None
        self.source.close()


def _merge_runs(paths: list[str], spec: SortSpec, budget_bytes: int, row_bytes: float) -> Iterator[pa.Table]:
    """K-way merge of sorted runs, batch-wise and vectorised.

    Each step takes the smallest LAST row among the runs that still have batches to come
    (the frontier): every buffered row that sorts at or before it can be emitted, because
    no later batch of any run can hold a smaller row. One Arrow sort of the buffered rows
    plus a marker row for the frontier finds them; each run loses a prefix of its buffer,
    and at least the frontier run's whole buffer goes, so every step makes progress.
    """
    import numpy as np
    import pyarrow as pa

    window = max(256, int(budget_bytes / 2 / max(len(paths), 1) / max(row_bytes, 1.0)))
    runs = [_Run(p, window) for p in paths]
    keys = spec.sort_keys
    key_names = [k for k, _ in keys]
    try:
        while True:
            active = [r for r in runs if r.buf is not None]
            if not active:
                return
            pending = [r for r in active if not r.exhausted]
            if not pending:
                yield spec.sort(pa.concat_tables([r.buf for r in active]))  # type: ignore[misc]
                return
            lasts = pa.concat_tables([r.buf.slice(r.buf.num_rows - 1, 1) for r in pending])  # type: ignore[union-attr]
            frontier = spec.sort(lasts).slice(0, 1)
            parts = []
            for i, r in enumerate(active):
                b = r.buf
                parts.append(pa.table({
                    **{k: b.column(k) for k in key_names},
                    "__run": pa.array(np.full(b.num_rows, i, dtype=np.int32)),
                    "__marker": pa.array(np.zeros(b.num_rows, dtype=np.int8)),
                    "__pos": pa.array(np.arange(b.num_rows, dtype=np.int64)),
                }))
            parts.append(pa.table({
                **{k: frontier.column(k) for k in key_names},
                "__run": pa.array([-1], pa.int32()),
                "__marker": pa.array([1], pa.int8()),
                "__pos": pa.array([0], pa.int64()),
            }))
            union = pa.concat_tables(parts)
            order = sort_indices_nulls_first(union, [*keys, ("__marker", "ascending")])
            order_np = order.to_numpy()
            marker = np.asarray(union.column("__marker").to_numpy())
            cut = int(np.flatnonzero(marker[order_np] == 1)[0])
            run_ids = np.asarray(union.column("__run").to_numpy())[order_np[:cut]]
            counts = np.bincount(run_ids, minlength=len(active))
            # emitted rows per run form a prefix of its buffer: take them in global order
            offsets = np.concatenate([[0], np.cumsum([r.buf.num_rows for r in active])[:-1]])  # type: ignore[union-attr]
            global_rows = offsets[run_ids] + np.asarray(union.column("__pos").to_numpy())[order_np[:cut]]
            data = pa.concat_tables([r.buf for r in active])  # type: ignore[misc]
            if cut:
                yield data.take(pa.array(global_rows))
            for i, r in enumerate(active):
                r.consume(int(counts[i]))
    finally:
        for r in runs:
            r.close()


# ---------------------------------------------------------------------------------------
# The sort-compact job
# ---------------------------------------------------------------------------------------


@dataclass
class SortCompactResult:
    """What a sort compaction did (or, with ``plan_only``, would do)."""

    strategy: str
    order_by: list[str]
    base_snapshot_id: int | None
    snapshot_id: int | None = None
    partitions: list[str] = field(default_factory=list)
    files_in: int = 0
    files_out: int = 0
    bytes_in: int = 0
    bytes_out: int = 0
    rows_in: int = 0
    rows_out: int = 0
    seconds: float = 0.0
    plan_only: bool = False
    commit_kind: str | None = None

    @property
    def units(self) -> int:
        """One unit per rewritten partition (the job's summary counts units)."""
        return len(self.partitions)

    def to_dict(self) -> dict[str, Any]:
        return {
            "strategy": self.strategy, "order_by": list(self.order_by), "base_snapshot_id": self.base_snapshot_id,
            "snapshot_id": self.snapshot_id, "partitions": list(self.partitions), "files_in": self.files_in,
            "files_out": self.files_out, "bytes_in": self.bytes_in, "bytes_out": self.bytes_out,
            "rows_in": self.rows_in, "rows_out": self.rows_out, "seconds": round(self.seconds, 3),
            "plan_only": self.plan_only,
        }


def check_sortable_table(table: FileStoreTable) -> None:
    if table.schema.primary_keys:
        raise InvalidInput(
            f"--order-strategy: {table.identifier} has a primary key; sort compaction is for "
            "bucket-unaware append tables (bucket = -1)"
        )
    if table.schema.bucket != -1:
        raise InvalidInput(
            f"--order-strategy: {table.identifier} has bucket={table.schema.bucket}; sort compaction "
            "supports only bucket-unaware append tables (bucket = -1), as Paimon"
        )
    if table.options.get_bool("row-tracking.enabled") or table.options.get_bool("data-evolution.enabled"):
        raise NotYetSupported("sort compaction of row-tracking / data-evolution tables is not supported")


def sort_compact(
    table: FileStoreTable,
    strategy: str,
    order_by: Sequence[str],
    *,
    partitions: Sequence[Mapping[str, Any]] | None = None,
    where: str | None = None,
    partition_filter: Callable[[bytes], bool] | None = None,
    base_snapshot: Snapshot | None = None,
    commit_user: str | None = None,
    plan_only: bool = False,
    progress: Callable[[int, int, int], None] | None = None,
    before_commit: Callable[[], None] | None = None,
) -> SortCompactResult:
    """Rewrite the selected partitions sorted by ``order_by``; one OVERWRITE snapshot pinned
    to ``base_snapshot`` (see the module docstring)."""
    from ..errors import CommitConflict
    from ..mergetree.commit_message import CommitMessage
    from ..operation.commit import FileStoreCommit
    from .append import bucket_dv_vectors, dv_index_by_partition, output_writer, read_file_tables

    started = time.monotonic()
    check_sortable_table(table)
    spec = make_sort_spec(table, strategy, order_by)
    from ..operation.partition_spec import partition_filter as job_partition_filter
    from ..operation.partition_spec import partition_label

    selected = job_partition_filter(table.schema, partitions, where)
    preds = [f for f in (selected, partition_filter) if f is not None]
    pred = (lambda p: all(f(p) for f in preds)) if preds else None
    snapshot = base_snapshot if base_snapshot is not None else table.snapshot_manager.latest_snapshot()
    result = SortCompactResult(spec.strategy, [f.name for f in spec.fields],
                               snapshot.id if snapshot is not None else None, plan_only=plan_only)
    if snapshot is None:
        result.seconds = time.monotonic() - started
        return result
    entries = table.store_scan.plan(snapshot)
    if pred is not None:
        entries = [e for e in entries if pred(e.partition)]
    groups: dict[bytes, list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault(e.partition, []).append(e)
    index_by_part = dv_index_by_partition(table, snapshot)
    for p, es in groups.items():
        result.partitions.append(partition_label(table.schema, p))
        result.files_in += len(es)
        result.bytes_in += sum(e.file.file_size for e in es)
        result.rows_in += sum(e.file.row_count for e in es)
    if plan_only or not groups:
        result.seconds = time.monotonic() - started
        return result

    # half the write buffer: the sort briefly holds the buffered rows and their sorted copy
    budget = max((table.options.get_memory_bytes("write-buffer-size") or (256 << 20)) // 2, 1 << 16)
    messages: list[CommitMessage] = []
    writers: list[Any] = []
    commit = FileStoreCommit(table, commit_user)
    try:
        for i, (p, es) in enumerate(groups.items()):
            index_files = index_by_part.get(p, [])
            vectors = bucket_dv_vectors(table, p, es[0].bucket, index_files) if index_files else {}
            files = sorted((e.file for e in es), key=lambda f: f.min_sequence_number)
            out = output_writer(table, p, es[0].bucket, seq_start=0)
            writers.append(out)
            tables = read_file_tables(table, p, es[0].bucket, files, vectors)
            for piece in sort_stream(tables, spec, budget):
                out.write(spec.strip(piece))
            new_files = out.close()
            result.files_out += len(new_files)
            result.bytes_out += sum(f.file_size for f in new_files)
            result.rows_out += sum(f.row_count for f in new_files)
            if new_files:
                messages.append(CommitMessage(p, es[0].bucket, es[0].total_buckets, new_files=new_files))
            else:  # every row was deleted: drop the partition's files and vectors explicitly
                messages.append(CommitMessage(p, es[0].bucket, es[0].total_buckets, deleted_files=files,
                                              deleted_index_files=list(index_files)))
            if progress is not None:
                progress(i + 1, len(groups), result.rows_out)
        if before_commit is not None:
            before_commit()
        snap = commit_partition_rewrite(commit, messages, snapshot, set(groups))
    except BaseException as e:
        if isinstance(e, CommitConflict) or not commit.may_have_published():
            for w in writers:
                w.abort()
        raise
    result.snapshot_id = snap.id if snap is not None else None
    result.commit_kind = snap.commit_kind if snap is not None else None
    result.seconds = time.monotonic() - started
    return result


def commit_partition_rewrite(
    commit: FileStoreCommit, messages: Sequence[CommitMessage], base: Snapshot, partitions: set[bytes]
) -> Snapshot | None:
    """ONE OVERWRITE snapshot replacing whole ``partitions`` (read at ``base``) with the new
    files of ``messages``; a partition left without rows needs explicit ``deleted_files``.

    Pinned to ``base``: rows appended to those partitions meanwhile, or deletion vectors
    added by a non-COMPACT commit, fail it with CommitConflict instead of being lost."""
    _check_no_new_deletion_vectors(commit.table, base, partitions)
    if any(m.new_files for m in messages):
        return commit.commit(messages, "OVERWRITE", overwrite={}, dynamic=True, base_snapshot_id=base.id)
    return commit.commit(messages, "OVERWRITE")


def _check_no_new_deletion_vectors(table: FileStoreTable, base: Snapshot, partitions: set[bytes]) -> None:
    """CommitConflict if a non-COMPACT snapshot after ``base`` added deletion vectors in the
    rewritten partitions: the sorted files were made without them, so committing would bring
    rows deleted meanwhile back. (The commit's pin only looks at added data files.)"""
    if not table.options.deletion_vectors_enabled:
        return
    from ..errors import CommitConflict
    from ..manifest.index_manifest import DELETION_VECTORS_INDEX

    sm = table.snapshot_manager
    latest = sm.latest_snapshot()
    if latest is None or latest.id <= base.id:
        return

    def names(snap: Snapshot) -> set[str]:
        return {ie.index_file.file_name for ie in table.store_scan.index_entries(snap)
                if ie.index_file.index_type == DELETION_VECTORS_INDEX and ie.partition in partitions}

    prev = names(base)
    prev_manifest = base.index_manifest
    for sid in range(base.id + 1, latest.id + 1):
        snap = sm.snapshot(sid)
        if snap.index_manifest == prev_manifest:
            continue
        cur = names(snap)
        if snap.commit_kind != "COMPACT" and cur - prev:
            raise CommitConflict(
                f"snapshot {sid} ({snap.commit_kind}) added deletion vectors to partitions being sorted after "
                f"base snapshot {base.id}; committing would bring deleted rows back, give up committing"
            )
        prev, prev_manifest = cur, snap.index_manifest


__all__ = [
    "HILBERT",
    "ORDER",
    "STRATEGIES",
    "ZORDER",
    "SortCompactResult",
    "SortSpec",
    "commit_partition_rewrite",
    "hilbert_index_bytes",
    "hilbert_keys",
    "make_sort_spec",
    "sort_compact",
    "sort_stream",
    "zorder_keys",
]
