"""Serialized BinaryRows decoded a column at a time: the rows of an Arrow binary column
(keys and value stats of a manifest's files) into one Arrow array per field.

``inspect files`` shows two keys and three stats rows per file; decoding them one value at
a time (:func:`.binary_row.deserialize`) was most of its cost. Here the fixed 8-byte slots of
all rows are gathered with numpy; a string field's bytes (inline or in the variable part)
are gathered into one Arrow string array. Types whose Python value is not a plain Arrow
scalar (decimal, time, timestamp, nested) are decoded per row by the row decoder itself, so
values are the same objects :func:`.binary_row.deserialize` returns. A column with a row the
fast path cannot vouch for (NULL row, other arity, short row, a slice past the row's end,
bad UTF-8) returns None: the caller decodes it row by row, with that decoder's errors.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .binary_row import _read_field, null_bits_size
from .types import (
    BigIntType,
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DoubleType,
    FloatType,
    IntType,
    SmallIntType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

_FIXED = {TinyIntType: "<i1", SmallIntType: "<i2", IntType: "<i4", BigIntType: "<i8", FloatType: "<f4",
          DoubleType: "<f8", DateType: "<i4"}
_MIN_DAY, _MAX_DAY = -719_162, 2_932_896  # date(1, 1, 1) and date(9999, 12, 31): Python's range


def decode_serialized(column: pa.Array | pa.ChunkedArray, types: Sequence[DataType]) -> list[pa.Array | list[Any]] | None:
    """Each field of the serialized rows in ``column`` (4-byte big-endian arity, then the
    row): an Arrow array (NULL where the field is null) or, for types decoded per row, a list
    of the values. None when any row needs the row-by-row decoder (see module docstring)."""
    import numpy as np
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks() if column.num_chunks != 1 else column.chunk(0)
    column = column.cast(pa.large_binary())
    n = len(column)
    arity = len(types)
    if column.null_count:
        return None
    if n == 0:
        return [pa.array([], pa.null()) for _ in types]
    offsets = np.frombuffer(column.buffers()[1], dtype=np.int64, count=column.offset + n + 1)[column.offset:]
    buf = column.buffers()[2]
    data = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, np.uint8)
    starts = offsets[:-1] + 4  # the row after the arity prefix
    sizes = offsets[1:] - starts
    nb = null_bits_size(arity)
    if (sizes < nb + 8 * arity).any():
        return None
    prefix = data[offsets[:-1, None] + np.arange(4)].astype(np.int64)
    if ((prefix[:, 0] << 24 | prefix[:, 1] << 16 | prefix[:, 2] << 8 | prefix[:, 3]) != arity).any():
        return None
    out: list[pa.Array | list[Any]] = []
    for i, t in enumerate(types):
        bit = i + 8
        null = (data[starts + (bit >> 3)] & (1 << (bit & 7))) != 0
        slot = data[(starts + nb + 8 * i)[:, None] + np.arange(8)]  # (n, 8) bytes
        field = _field(t, slot, null, data, starts, sizes, nb + 8 * i)
        if field is None:
            return None
        out.append(field)
    return out


def _field(t: DataType, slot: np.ndarray, null: np.ndarray, data: np.ndarray, starts: np.ndarray,
           sizes: np.ndarray, at: int) -> pa.Array | list[Any] | None:
    import numpy as np
    import pyarrow as pa

    mask = null if null.any() else None
    kind = type(t)
    fixed = _FIXED.get(kind)
    if fixed is not None:
        width = np.dtype(fixed).itemsize
        values = np.ascontiguousarray(slot[:, :width]).view(fixed).reshape(-1)
        if kind is DateType:
            days = values[~null]
            if len(days) and (days.min() < _MIN_DAY or days.max() > _MAX_DAY):
                return _per_row(t, data, starts, sizes, null, at)  # the row decoder keeps the day count
            return pa.array(values, pa.int32(), mask=mask).cast(pa.date32())
        return pa.array(values, mask=mask)
    if kind is BooleanType:
        return pa.array(slot[:, 0] != 0, pa.bool_(), mask=mask)
    if kind in (CharType, VarCharType, BinaryType, VarBinaryType):
        return _var_field(kind in (CharType, VarCharType), slot, null, data, starts, sizes)
    return _per_row(t, data, starts, sizes, null, at)


def _var_field(text: bool, slot: np.ndarray, null: np.ndarray, data: np.ndarray, starts: np.ndarray,
               sizes: np.ndarray) -> pa.Array | None:
    """A string or binary field: up to 7 bytes inline in the slot (high bit of its last byte
    set, length in the rest of it), else the slot is ``offset << 32 | length`` into the row."""
    import numpy as np
    import pyarrow as pa

    inline = (slot[:, 7] & 0x80) != 0
    raw = np.ascontiguousarray(slot).view("<i8").reshape(-1)
    off = np.where(inline, 0, raw >> 32)
    length = np.where(inline, slot[:, 7] & 0x7F, raw & 0xFFFFFFFF)
    length = np.where(null, 0, length)
    if (~null & ((~inline & ((off < 0) | (off + length > sizes))) | (inline & (length > 7)))).any():
        return None  # the row decoder names the bad slice
    begin = np.where(inline, 0, starts + off)  # inline bytes are taken from the slot
    out_offsets = np.zeros(len(length) + 1, np.int64)
    np.cumsum(length, out=out_offsets[1:])
    total = int(out_offsets[-1])
    if total:
        pos = np.repeat(begin - out_offsets[:-1], length) + np.arange(total)
        values = data[pos] if not inline.any() else _with_inline(data, pos, inline, slot, length, out_offsets)
    else:
        values = np.zeros(0, np.uint8)
    validity = None if not null.any() else pa.py_buffer(np.packbits(~null, bitorder="little").tobytes())
    arr = pa.Array.from_buffers(pa.large_string() if text else pa.large_binary(), len(length),
                                [validity, pa.py_buffer(out_offsets.tobytes()), pa.py_buffer(values.tobytes())],
                                null_count=int(null.sum()))
    if text:
        try:
            arr.validate(full=True)  # UTF-8: the row decoder raises on bad bytes
        except pa.ArrowInvalid:
            return None
    return arr.cast(pa.string() if text else pa.binary())


def _with_inline(data: np.ndarray, pos: np.ndarray, inline: np.ndarray, slot: np.ndarray, length: np.ndarray,
                 out_offsets: np.ndarray) -> np.ndarray:
    """The gathered bytes, inline values taken from their slots."""
    import numpy as np

    rows = np.repeat(np.arange(len(length)), length)
    within = np.arange(len(pos)) - np.repeat(out_offsets[:-1], length)
    from_slot = inline[rows]
    out = np.empty(len(pos), np.uint8)
    out[~from_slot] = data[pos[~from_slot]]
    out[from_slot] = slot[rows[from_slot], within[from_slot]]
    return out


def _per_row(t: DataType, data: np.ndarray, starts: np.ndarray, sizes: np.ndarray, null: np.ndarray,
            slot: int) -> list[Any]:
    """The field by the row decoder (values and errors as :func:`.binary_row.from_bytes`)."""
    raw = data.tobytes()
    return [None if is_null else _read_field(raw[s: s + z], slot, t)
            for s, z, is_null in zip(starts.tolist(), sizes.tolist(), null.tolist(), strict=True)]


__all__ = ["decode_serialized"]
