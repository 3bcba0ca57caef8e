"""Bitmap file index (Java ``BitmapFileIndex`` with ``BitmapFileIndexMeta`` V1 / ``...MetaV2``).

Payload: version byte, then the meta, then the bitmaps (RoaringBitmap portable format,
run-optimised). Row positions count rows in the data file. A value (or NULL) seen in
exactly one row has no bitmap: its offset is ``-1 - row``. Offsets are relative to the
bitmap body, whose first bitmap is the NULL one when more than one row is NULL.

* V1 meta: rowCount, nonNullBitmapNumber, hasNull, [nullOffset], (value, offset)*.
* V2 meta: rowCount, nonNullBitmapNumber, hasNull, [nullOffset, nullBitmapLength],
  blockCount, (firstValue, blockOffset)*, bodyOffset; then the index blocks, each
  entryCount + (value, offset, length)* sorted by value, a block closed when the next entry
  would push it past ``index-block-size`` (16kb).

Values: strings int32 length + UTF-8, tinyint 1 byte, smallint 2, int/date/time 4,
bigint/timestamp (millis p<=3 else micros) 8, float/double IEEE, boolean 1 byte.
Floats are grouped by their bit pattern (Java's ``Float.equals``), so 0.0 and -0.0 are
different values, as in Java.
"""

from __future__ import annotations

import array
import struct
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ..data.types import BigIntType, BooleanType, LocalZonedTimestampType, SmallIntType, TimestampType, TinyIntType
from ..errors import InvalidInput
from ..schema.file_index_options import (
    BITMAP_DEFAULT_BLOCK_SIZE,
    BITMAP_DEFAULT_VERSION,
    BITMAP_VERSION_1,
    BITMAP_VERSION_2,
)
from .values import BOOL, DOUBLE, FLOAT, INT, STRING, Column, kind_of

if TYPE_CHECKING:
    import numpy as np
    import pyroaring

    from ..data.types import DataType

def to_bitmap(positions: np.ndarray) -> pyroaring.BitMap:
    import numpy as np
    import pyroaring

    a = array.array("I")
    a.frombytes(np.ascontiguousarray(positions, dtype=np.uint32).tobytes())
    return pyroaring.BitMap(a)


def serialize_bitmap(bm: pyroaring.BitMap) -> bytes:
    bm.run_optimize()  # as Java's RoaringBitmap32.serialize
    return bm.serialize()


# -- value (de)serialisation ------------------------------------------------------------------


class _Codec:
    """How one column type's values are written, read, measured and ordered."""

    def __init__(self, t: DataType) -> None:
        self.kind = kind_of(t)
        if isinstance(t, TinyIntType):
            self.fmt = ">b"
        elif isinstance(t, SmallIntType):
            self.fmt = ">h"
        elif self.kind == INT:
            self.fmt = ">q" if _is_long(t) else ">i"
        elif self.kind == FLOAT:
            self.fmt = ">f"
        elif self.kind == DOUBLE:
            self.fmt = ">d"
        elif isinstance(t, BooleanType):
            self.fmt = ">?"
        else:
            self.fmt = ""

    def write(self, v: Any) -> bytes:
        if self.kind == STRING:
            return struct.pack(">i", len(v)) + v
        if self.kind in (FLOAT, DOUBLE):
            return v  # already the IEEE bytes (bit-pattern keys)
        return struct.pack(self.fmt, v)

    def read(self, data: bytes, pos: int) -> tuple[Any, int]:
        if self.kind == STRING:
            (n,) = struct.unpack_from(">i", data, pos)
            return bytes(data[pos + 4: pos + 4 + n]), pos + 4 + n
        size = struct.calcsize(self.fmt)
        if self.kind in (FLOAT, DOUBLE):
            return bytes(data[pos: pos + size]), pos + size
        return struct.unpack_from(self.fmt, data, pos)[0], pos + size

    def size(self, v: Any) -> int:
        if self.kind == STRING:
            return 4 + len(v)
        return struct.calcsize(self.fmt)

    def sort_key(self, v: Any) -> Any:
        """Java's comparator: unsigned bytes for strings, Float/Double.compare for floats."""
        if self.kind in (FLOAT, DOUBLE):
            x = struct.unpack(self.fmt, v)[0]
            if x != x:
                return (2, 0.0)
            if x == 0.0:
                return (1, 0.0) if v[0] & 0x80 == 0 else (0, 0.0)
            return (0, x) if x < 0 else (1, x)
        return v

    def key_of_literal(self, key: Any) -> Any:
        """Index key (as stored in our maps) of a values.literal_key result."""
        if self.kind in (FLOAT, DOUBLE):
            if key != key:
                return struct.pack(self.fmt, float("nan"))
            return struct.pack(self.fmt, key)
        return key


def _is_long(t: DataType) -> bool:
    return isinstance(t, (BigIntType, TimestampType, LocalZonedTimestampType))


def _float_keys(col: Column) -> tuple[np.ndarray, Any]:
    """Group keys (bit patterns, canonical NaN) and a function bits -> IEEE BE bytes."""
    import numpy as np

    if col.kind == FLOAT:
        f = col.values.astype(np.float32)
        bits = f.view(np.int32).astype(np.int64)
        bits[np.isnan(f)] = 0x7FC00000
        return bits, lambda b: struct.pack(">i", int(b))
    d = col.values.astype(np.float64)
    bits = d.view(np.int64).copy()
    bits[np.isnan(d)] = 0x7FF8000000000000
    return bits, lambda b: struct.pack(">q", int(b))


# -- writer ---------------------------------------------------------------------------------


class BitmapBuilder:
    """Accumulates value -> row positions over the batches of one data file."""

    index_type = "bitmap"

    def __init__(
        self, t: DataType, version: int = BITMAP_DEFAULT_VERSION, block_size: int = BITMAP_DEFAULT_BLOCK_SIZE
    ) -> None:
        self.codec = _Codec(t)
        self.version = version
        self.block_size = block_size
        self.rows = 0
        self.parts: dict[Any, list[np.ndarray]] = {}
        self.nulls: list[np.ndarray] = []

    def add(self, col: Column) -> None:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        base = self.rows
        n = col.length
        self.rows += n
        rows = np.arange(base, base + n, dtype=np.uint32)  # row positions of one file fit 32 bits
        if not col.valid.all():
            self.nulls.append(rows[~col.valid])
            rows = rows[col.valid]
        if len(rows) == 0:
            return
        if col.kind == STRING:
            arr = col.values
            if arr.null_count:
                arr = arr.drop_null()
            enc = pc.dictionary_encode(arr)
            inverse = enc.indices.to_numpy(zero_copy_only=False)
            uniques = enc.dictionary.to_pylist()
        else:
            vals = col.values[col.valid]
            to_key: Any = None
            if col.kind in (FLOAT, DOUBLE):
                vals, to_key = _float_keys(Column(col.kind, col.valid[col.valid], vals, len(vals)))
            keys = pa.array(vals)
            u = pc.unique(keys)  # hash based: far cheaper than np.unique's sort
            inverse = pc.index_in(keys, u).to_numpy(zero_copy_only=False)
            ul = u.to_pylist()
            if to_key is not None:
                uniques = [to_key(b) for b in ul]
            elif col.kind == BOOL:
                uniques = [bool(x) for x in ul]
            else:
                uniques = ul
        if len(uniques) <= 32:  # few values: one vectorised compare each
            groups = [rows[inverse == j] for j in range(len(uniques))]
        else:
            order = np.argsort(inverse, kind="stable")
            counts = np.bincount(inverse, minlength=len(uniques))
            groups = np.split(rows[order], np.cumsum(counts)[:-1])
        parts = self.parts
        for key, g in zip(uniques, groups, strict=True):
            lst = parts.get(key)
            if lst is None:
                parts[key] = [g]
            else:
                lst.append(g)

    def distinct_count(self) -> int:
        return len(self.parts)

    def serialize(self) -> bytes:
        import numpy as np

        codec = self.codec
        null_rows = np.concatenate(self.nulls) if self.nulls else np.zeros(0, dtype=np.int64)
        null_bytes = serialize_bitmap(to_bitmap(null_rows))
        keys = sorted(self.parts, key=codec.sort_key)
        offsets: list[tuple[Any, int, int]] = []  # key, offset, length (-1 for single rows)
        bodies: list[bytes] = []
        off = len(null_bytes) if len(null_rows) > 1 else 0
        for k in keys:
            g = self.parts[k]
            pos = g[0] if len(g) == 1 else np.concatenate(g)
            if len(pos) == 1:
                offsets.append((k, -1 - int(pos[0]), -1))
            else:
                b = serialize_bitmap(to_bitmap(pos))
                bodies.append(b)
                offsets.append((k, off, len(b)))
                off += len(b)
        has_null = len(null_rows) > 0
        null_offset = -1 - int(null_rows[0]) if len(null_rows) == 1 else 0
        out = bytearray(struct.pack(">b", self.version))
        out += struct.pack(">ii?", self.rows, len(keys), has_null)
        if self.version == BITMAP_VERSION_1:
            if has_null:
                out += struct.pack(">i", null_offset)
            for k, o, _ in offsets:
                out += codec.write(k) + struct.pack(">i", o)
        else:
            if has_null:
                out += struct.pack(">ii", null_offset, len(null_bytes))
            out += self._v2_meta(offsets)
        if len(null_rows) > 1:
            out += null_bytes
        for b in bodies:
            out += b
        return bytes(out)

    def _v2_meta(self, offsets: list[tuple[Any, int, int]]) -> bytes:
        codec = self.codec
        blocks: list[tuple[Any, int, list[bytes]]] = []  # first key, offset, entry bytes
        cur: list[bytes] = []
        cur_first: Any = None
        cur_size = 4
        cur_off = 0
        for k, o, length in offsets:
            entry = codec.write(k) + struct.pack(">ii", o, length)
            if cur_first is None:
                cur_first = k
            if cur_size + len(entry) > self.block_size:
                if not cur:
                    raise InvalidInput(f"bitmap index: value of {len(entry)} bytes exceeds index-block-size")
                blocks.append((cur_first, cur_off, cur))
                cur_off += cur_size
                cur, cur_first, cur_size = [], k, 4
                if cur_size + len(entry) > self.block_size:
                    raise InvalidInput(f"bitmap index: value of {len(entry)} bytes exceeds index-block-size")
            cur.append(entry)
            cur_size += len(entry)
        if cur:
            blocks.append((cur_first, cur_off, cur))
        head = bytearray(struct.pack(">i", len(blocks)))
        body = bytearray()
        for first, boff, entries in blocks:
            head += codec.write(first) + struct.pack(">i", boff)
            body += struct.pack(">i", len(entries)) + b"".join(entries)
        head += struct.pack(">i", len(body))
        return bytes(head + body)


# -- reader ---------------------------------------------------------------------------------


class BitmapReader:
    """A parsed bitmap payload: value -> candidate rows."""

    def __init__(self, payload: bytes, t: DataType) -> None:
        self.codec = codec = _Codec(t)
        self.payload = payload
        self.version = payload[0]
        if self.version not in (BITMAP_VERSION_1, BITMAP_VERSION_2):
            raise ValueError(f"unsupported bitmap index version {self.version}")
        self.row_count, self.distinct, self.has_null = struct.unpack_from(">ii?", payload, 1)
        pos = 10
        self.null_offset = 0
        self.null_length = -1
        entries: dict[Any, tuple[int, int]] = {}
        if self.version == BITMAP_VERSION_1:
            if self.has_null:
                (self.null_offset,) = struct.unpack_from(">i", payload, pos)
                pos += 4
            order: list[Any] = []
            for _ in range(self.distinct):
                k, pos = codec.read(payload, pos)
                (o,) = struct.unpack_from(">i", payload, pos)
                pos += 4
                entries[k] = (o, -1)
                order.append(k)
            self.body_start = pos
            # lengths: bitmaps are stored back to back in offset order up to the payload end
            starts = sorted({o for o, _ in entries.values() if o >= 0}
                            | ({self.null_offset} if self.has_null and self.null_offset >= 0 else set()))
            ends = dict(zip(starts, starts[1:] + [len(payload) - self.body_start], strict=True))
            self.entries = {k: (o, ends.get(o, -1) if o >= 0 else -1) for k, (o, _) in entries.items()}
            if self.has_null and self.null_offset >= 0:
                self.null_length = ends[self.null_offset]
        else:
            if self.has_null:
                self.null_offset, self.null_length = struct.unpack_from(">ii", payload, pos)
                pos += 8
            (nblocks,) = struct.unpack_from(">i", payload, pos)
            pos += 4
            block_offsets = []
            for _ in range(nblocks):
                _, pos = codec.read(payload, pos)
                (bo,) = struct.unpack_from(">i", payload, pos)
                pos += 4
                block_offsets.append(bo)
            (body_off,) = struct.unpack_from(">i", payload, pos)
            pos += 4
            index_start = pos
            self.body_start = index_start + body_off
            for bo in block_offsets:
                p = index_start + bo
                (cnt,) = struct.unpack_from(">i", payload, p)
                p += 4
                for _ in range(cnt):
                    k, p = codec.read(payload, p)
                    o, length = struct.unpack_from(">ii", payload, p)
                    p += 8
                    entries[k] = (o, length)
            self.entries = entries

    def keys(self) -> list[Any]:
        return list(self.entries)

    def _bitmap(self, offset: int, length: int) -> pyroaring.BitMap:
        import pyroaring

        if offset < 0:
            return pyroaring.BitMap([-1 - offset])
        start = self.body_start + offset
        end = start + length if length >= 0 else len(self.payload)
        return pyroaring.BitMap.deserialize(self.payload[start:end])

    def rows_equal(self, key: Any) -> pyroaring.BitMap:
        import pyroaring

        if key is None:
            if not self.has_null:
                return pyroaring.BitMap()
            return self._bitmap(self.null_offset, self.null_length)
        e = self.entries.get(self.codec.key_of_literal(key))
        if e is None:
            return pyroaring.BitMap()
        return self._bitmap(*e)

    def rows_in(self, keys: Iterable[Any]) -> pyroaring.BitMap:
        import pyroaring

        out = pyroaring.BitMap()
        for k in keys:
            out |= self.rows_equal(k)
        return out

    def all_rows(self) -> pyroaring.BitMap:
        import pyroaring

        return pyroaring.BitMap(range(self.row_count))

    def bitmap_sizes(self) -> dict[Any, int]:
        return {k: (1 if o < 0 else -1) for k, (o, _) in self.entries.items()}
