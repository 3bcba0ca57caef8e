"""Bit-sliced index (Java ``BitSliceIndexBitmapFileIndex`` + ``BitSliceIndexRoaringBitmap``).

Payload: version byte 1, rowCount int32, hasPositive byte, [positive BSI], hasNegative
byte, [negative BSI over absolute values]. Each BSI: version byte 1, min int64, max int64,
existence bitmap, slice count int32 (``64 - nlz(max - min)``), slices; value ``v`` of row
``r`` sets ``r`` in slice ``i`` for every 1-bit ``i`` of ``v - min``. Java's writer always
writes min = 0 (its running minimum starts at 0) -- we do the same so the bytes match.

Supported types: the integers, DATE, TIME, TIMESTAMP/LTZ (millis p<=3 else micros) and
DECIMAL (unscaled long, precision <= 18).
"""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from .bitmap import serialize_bitmap, to_bitmap
from .values import Column

if TYPE_CHECKING:
    import numpy as np
    import pyroaring


VERSION_1 = 1
_LONG_MIN = -(2**63)


class BsiBuilder:
    index_type = "bsi"

    def __init__(self) -> None:
        self.rows = 0
        self.values: list[np.ndarray] = []
        self.positions: list[np.ndarray] = []
        self.has_long_min = False

    def add(self, col: Column) -> None:
        import numpy as np

        n = col.length
        rows = np.arange(self.rows, self.rows + n, dtype=np.uint32)
        self.rows += n
        v = col.values[col.valid].astype(np.int64)
        if (v == _LONG_MIN).any():
            self.has_long_min = True  # Math.abs overflows in Java: we build no BSI for this file
        self.values.append(v)
        self.positions.append(rows[col.valid])

    def serialize(self) -> bytes | None:
        import numpy as np

        if self.has_long_min:
            return None
        vals = np.concatenate(self.values) if self.values else np.zeros(0, np.int64)
        rows = np.concatenate(self.positions) if self.positions else np.zeros(0, np.int64)
        neg = vals < 0
        out = bytearray(struct.pack(">bi", VERSION_1, self.rows))
        for mask, absolute in ((~neg, vals), (neg, -vals)):
            sel_rows = rows[mask]
            if len(sel_rows) == 0:
                out += b"\x00"
                continue
            out += b"\x01" + _bsi_bytes(absolute[mask], sel_rows)
        return bytes(out)


def _bsi_bytes(values: np.ndarray, rows: np.ndarray) -> bytes:
    mx = int(values.max()) if len(values) else 0
    mn = 0  # as Java's writer (see module doc)
    nslices = (mx - mn).bit_length()
    out = bytearray(struct.pack(">bqq", VERSION_1, mn, mx))
    out += serialize_bitmap(to_bitmap(rows))
    out += struct.pack(">i", nslices)
    rel = values - mn
    for i in range(nslices):
        out += serialize_bitmap(to_bitmap(rows[((rel >> i) & 1) == 1]))
    return bytes(out)


class _Bsi:
    def __init__(self, mn: int, mx: int, ebm: pyroaring.BitMap, slices: list[pyroaring.BitMap]) -> None:
        self.min, self.max, self.ebm, self.slices = mn, mx, ebm, slices

    @staticmethod
    def empty() -> _Bsi:
        import pyroaring

        return _Bsi(0, 0, pyroaring.BitMap(), [])

    def compare(self, op: str, predicate: int) -> pyroaring.BitMap:
        """Rows whose value ``op`` predicate (op in = < <= > >=), Java's compare()."""
        import pyroaring

        mn, mx = self.min, self.max
        empty, allv = pyroaring.BitMap, self.ebm.copy
        if op == "=":
            if mn == mx == predicate:
                return allv()
            if predicate < mn or predicate > mx:
                return empty()
        elif op == ">=":
            if predicate <= mn:
                return allv()
            if predicate > mx:
                return empty()
        elif op == ">":
            if predicate < mn:
                return allv()
            if predicate >= mx:
                return empty()
        elif op == "<=":
            if predicate >= mx:
                return allv()
            if predicate < mn:
                return empty()
        elif op == "<":
            if predicate > mx:
                return allv()
            if predicate <= mn:
                return empty()
        p = predicate - mn
        gt, lt, eq = pyroaring.BitMap(), pyroaring.BitMap(), self.ebm
        for i in range(len(self.slices) - 1, -1, -1):
            s = self.slices[i]
            if (p >> i) & 1:
                lt = lt | (eq - s)
                eq = eq & s
            else:
                gt = gt | (eq & s)
                eq = eq - s
        eq = eq & self.ebm
        return {"=": eq, ">": gt & self.ebm, "<": lt & self.ebm,
                "<=": (lt | eq) & self.ebm, ">=": (gt | eq) & self.ebm}[op]


def _read_bsi(data: bytes, pos: int) -> tuple[_Bsi, int]:
    version, mn, mx = struct.unpack_from(">bqq", data, pos)
    if version > VERSION_1:
        raise ValueError(f"unsupported bsi version {version}")
    pos += 17
    ebm, pos = _read_bitmap(data, pos)
    (n,) = struct.unpack_from(">i", data, pos)
    pos += 4
    slices = []
    for _ in range(n):
        s, pos = _read_bitmap(data, pos)
        slices.append(s)
    return _Bsi(mn, mx, ebm, slices), pos


def _portable_size(data: bytes, pos: int) -> int:
    """Byte length of the RoaringBitmap portable serialisation starting at ``pos``."""
    cookie = struct.unpack_from("<I", data, pos)[0]
    p = pos + 4
    if cookie & 0xFFFF == 12347:  # SERIAL_COOKIE (run containers present)
        size = (cookie >> 16) + 1
        run_bytes = (size + 7) // 8
        run_flags = data[p: p + run_bytes]
        p += run_bytes
        has_offsets = size >= 4
    elif cookie == 12346:  # SERIAL_COOKIE_NO_RUNCONTAINER
        size = struct.unpack_from("<I", data, p)[0]
        p += 4
        run_flags = b""
        has_offsets = True
    else:
        raise ValueError("not a portable roaring bitmap")
    header = p
    cards = [struct.unpack_from("<H", data, header + 4 * i + 2)[0] + 1 for i in range(size)]
    p = header + 4 * size
    if has_offsets:
        p += 4 * size
    for i in range(size):
        is_run = bool(run_flags) and (run_flags[i // 8] >> (i % 8)) & 1
        if is_run:
            (nruns,) = struct.unpack_from("<H", data, p)
            p += 2 + 4 * nruns
        elif cards[i] > 4096:
            p += 8192
        else:
            p += 2 * cards[i]
    return p - pos


def _read_bitmap(data: bytes, pos: int) -> tuple[pyroaring.BitMap, int]:
    import pyroaring

    n = _portable_size(data, pos)
    return pyroaring.BitMap.deserialize(data[pos: pos + n]), pos + n


class BsiReader:
    def __init__(self, payload: bytes) -> None:
        version, self.row_count = struct.unpack_from(">bi", payload, 0)
        if version > VERSION_1:
            raise ValueError(f"unsupported bsi index version {version}")
        pos = 5
        self.positive = self.negative = _Bsi.empty()
        if payload[pos]:
            self.positive, pos = _read_bsi(payload, pos + 1)
        else:
            pos += 1
        if payload[pos]:
            self.negative, pos = _read_bsi(payload, pos + 1)

    def not_null(self) -> pyroaring.BitMap:
        return self.positive.ebm | self.negative.ebm

    def rows(self, op: str, value: int) -> pyroaring.BitMap:
        """Rows with ``column op value`` (op in = < <= > >=), as Java's Reader visitors."""
        import pyroaring

        pos, neg = self.positive, self.negative
        if value == _LONG_MIN:
            return pyroaring.BitMap() if op in ("=", "<", "<=") else self.not_null()
        if op == "=":
            return neg.compare("=", -value) if value < 0 else pos.compare("=", value)
        if op == "<":
            return neg.compare(">", -value) if value < 0 else pos.compare("<", value) | neg.ebm
        if op == "<=":
            return neg.compare(">=", -value) if value < 0 else pos.compare("<=", value) | neg.ebm
        if op == ">":
            return pos.ebm | neg.compare("<", -value) if value < 0 else pos.compare(">", value)
        if op == ">=":
            return pos.ebm | neg.compare("<=", -value) if value < 0 else pos.compare(">=", value)
        raise ValueError(op)
