"""Java's ``Roaring64Bitmap.serialize(DataOutput)`` byte layout (rbm64 aggregate values).

Why this module exists: Java Paimon stores ``fields.<c>.aggregate-function=rbm64`` values as
``org.roaringbitmap.longlong.Roaring64Bitmap`` bytes (RoaringBitmap 1.0.5 in Paimon 0.9, the
layout is unchanged up to 1.2.1 on master). That is NOT the portable 64-bit roaring format
pyroaring speaks: it dumps the in-memory structure, an adaptive radix tree (ART) over the high
48 bits of every value plus a two-level array of 16-bit roaring containers. The bytes depend on
the HISTORY of the bitmap (node types, Node48 slot order, container slot order and spare array
capacity), so merging two values byte-exactly like Java means replaying Java's operations on
a faithful model of that structure, which is what :class:`Roaring64Layout` is.

Layout (all integers little-endian unless noted)::

    byte    0 = empty (nothing follows) | 1 = not empty
    --- ART
    int64   key count
    node    pre-order: header, body, then the children in ascending key-byte order
            header: byte type (0 Node4, 1 Node16, 2 Node48, 3 Node256, 4 leaf),
                    int16 child count, byte prefix length, prefix bytes
            Node4   4 key bytes, position 3 first      (positions hold sorted key bytes)
            Node16  8 key bytes pos 7..0, 8 bytes pos 15..8
            Node48  256 child-slot bytes (0xFF = none), in groups of 8 written 7..0
            Node256 256-bit presence mask (4 int64)
            leaf    6 bytes high-48 key (big-endian), int64 container index (level << 32 | slot)
    --- containers
    int32   number of first-level arrays
            per array: byte 0xFE, int32 length (capacity, grows 1.5x), per slot:
                       byte 0 (null) | 1, byte type (0 run, 1 bitmap, 2 array), int32 cardinality,
                       run: int16 run count + (start, length-1) int16 pairs;
                       bitmap: 1024 int64; array: cardinality int16 values
    int64   container count, int32 last first-level index, int32 last slot index

Paimon's ``RoaringBitmap64.serialize`` calls ``runOptimize()`` first, and
``FieldRoaringBitmap64Agg`` merges as ``deserialize(acc).or(deserialize(input))`` then
serialize; :func:`merge_roaring64` replays exactly that, including the container-type rules of
each ``ior`` pairing. :func:`serialize_roaring64` gives what Java writes for a bitmap built by
adding the values in ascending unsigned order (``RoaringBitmap64.bitmapOf(sorted)``).
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

import numpy as np

from ..errors import InvalidInput

if TYPE_CHECKING:
    import pyroaring

RUN, BITMAP, ARRAY = 0, 1, 2
NODE4, NODE16, NODE48, NODE256, LEAF = 0, 1, 2, 3, 4
_EMPTY_SLOT = 0xFF
_ARRAY_MAX = 4096  # ArrayContainer.DEFAULT_MAX_SIZE
_BITMAP_BYTES = 8192
_FULL = 1 << 16
_MAX_JVM_ARRAY_OFFSET = 2**31 - 1 - 8 - 1
_NOT_TRIMMED_MARK = 0xFE


# ---------------------------------------------------------------------------- 16-bit containers


def _runs(values: np.ndarray) -> int:
    if values.size == 0:
        return 0
    return int(np.count_nonzero(np.diff(values.astype(np.int32)) != 1)) + 1


def _run_size(runs: int) -> int:
    return 2 + 4 * runs  # RunContainer.serializedSizeInBytes


class _Container:
    """One 16-bit roaring container: Java's type, its sorted values and, while unmodified,
    the exact payload it was parsed from (so untouched containers re-serialize verbatim)."""

    __slots__ = ("kind", "values", "raw")

    def __init__(self, kind: int, values: np.ndarray, raw: bytes | None = None) -> None:
        self.kind = kind
        self.values = values
        self.raw = raw

    @property
    def full(self) -> bool:
        return self.values.size == _FULL

    def payload(self) -> bytes:
        if self.raw is not None:
            return self.raw
        v = self.values
        head = struct.pack("<Bi", self.kind, v.size)
        if self.kind == ARRAY:
            return head + v.astype("<u2").tobytes()
        if self.kind == BITMAP:
            bits = np.zeros(_FULL, dtype=bool)
            bits[v] = True
            return head + np.packbits(bits, bitorder="little").tobytes()
        iv = v.astype(np.int32)
        brk = np.flatnonzero(np.diff(iv) != 1)
        starts = np.concatenate(([0], brk + 1))
        ends = np.concatenate((brk, [iv.size - 1]))
        pairs = np.empty(2 * starts.size, dtype="<u2")
        pairs[0::2] = iv[starts]
        pairs[1::2] = iv[ends] - iv[starts]
        return head + struct.pack("<H", starts.size) + pairs.tobytes()

    def run_optimized(self) -> _Container:
        """Container.runOptimize() as Roaring64Bitmap.runOptimize applies it (only run results replace)."""
        if self.kind == RUN:
            return self
        r = _runs(self.values)
        size = 2 * self.values.size if self.kind == ARRAY else _BITMAP_BYTES
        if size > _run_size(r):
            return _Container(RUN, self.values)
        return self

    def ior(self, other: _Container) -> _Container:
        """``this.ior(other)``: the union, typed as Java's container pairing decides."""
        a, b = self.kind, other.kind
        if a == RUN and self.full:
            return self  # RunContainer.ior returns itself when full
        s = np.union1d(self.values, other.values).astype(np.uint16)
        c = int(s.size)
        full = c == _FULL
        if a == ARRAY and b == ARRAY:
            kind = ARRAY if c <= _ARRAY_MAX else BITMAP
        elif b == BITMAP and a in (ARRAY, RUN):  # Bitmap.or(Array) / Run.or(Bitmap)
            kind = RUN if full else BITMAP
        elif a == BITMAP:
            kind = BITMAP if b == ARRAY or not full else RUN
        elif a == RUN and b == RUN:
            kind = RUN if _BITMAP_BYTES > _run_size(_runs(s)) else BITMAP  # toBitmapIfNeeded
        else:  # Run.ior(Array) and Array.ior(Run) = Run.or(Array): toEfficientContainer
            r = _runs(s)
            if _run_size(r) <= min(_BITMAP_BYTES, 2 * c + 2):
                kind = RUN
            else:
                kind = ARRAY if c <= _ARRAY_MAX else BITMAP
        return _Container(kind, s)


# ---------------------------------------------------------------------------- ART nodes


class _Leaf:
    __slots__ = ("key", "idx", "prefix", "count")

    def __init__(self, key: int, idx: int, prefix: bytes = b"", count: int = 0) -> None:
        self.key = key  # high 48 bits
        self.idx = idx
        self.prefix = prefix
        self.count = count

    @property
    def key_bytes(self) -> bytes:
        return self.key.to_bytes(6, "big")


class _Inner:
    """Node4/16 (``keys`` = raw key-byte positions), Node48 (``index`` = 256 slot bytes),
    Node256 (children by key byte). ``children`` is positional exactly as in Java."""

    __slots__ = ("type", "prefix", "count", "keys", "index", "children")

    def __init__(self, type_: int, prefix: bytes) -> None:
        self.type = type_
        self.prefix = prefix
        self.count = 0
        # key bytes by position (Node4/16) and child slot by key byte (Node48); empty otherwise
        self.keys = bytearray(4 if type_ == NODE4 else 16 if type_ == NODE16 else 0)
        self.index = bytearray([_EMPTY_SLOT]) * (256 if type_ == NODE48 else 0)
        self.children: list[_Node | None] = [None] * {NODE4: 4, NODE16: 16, NODE48: 48, NODE256: 256}[type_]

    def child_pos(self, b: int) -> int:
        if self.type in (NODE4, NODE16):
            for i in range(self.count):
                if self.keys[i] == b:
                    return i
            return -1
        if self.type == NODE48:
            return b if self.index[b] != _EMPTY_SLOT else -1
        return b if self.children[b] is not None else -1

    def get(self, pos: int) -> _Node | None:
        return self.children[self.index[pos]] if self.type == NODE48 else self.children[pos]

    def put(self, pos: int, node: _Node) -> None:
        if self.type == NODE48:
            self.children[self.index[pos]] = node
        else:
            self.children[pos] = node

    def ordered(self) -> Iterator[_Node]:
        """Children in ascending key-byte order (Java's getNextLargerPos walk)."""
        if self.type in (NODE4, NODE16):
            yield from (c for c in self.children[: self.count] if c is not None)
        elif self.type == NODE48:
            for b in range(256):
                if self.index[b] != _EMPTY_SLOT:
                    child = self.children[self.index[b]]
                    if child is not None:
                        yield child
        else:
            yield from (c for c in self.children if c is not None)


_Node = _Leaf | _Inner


def _insert_sorted(node: _Inner, child: _Node, b: int) -> None:
    """Node4/Node16: append at position ``count`` then sort positions 0..count by unsigned key."""
    n = node.count
    node.keys[n] = b
    node.children[n] = child
    pairs = sorted(zip(node.keys[: n + 1], node.children[: n + 1], strict=True), key=lambda p: p[0])
    node.keys[: n + 1] = bytes(k for k, _ in pairs)
    node.children[: n + 1] = [c for _, c in pairs]
    node.count = n + 1


def _insert_child(node: _Inner, child: _Node, b: int) -> _Inner:
    """Node.insertLeaf: add a child under key byte ``b``, growing the node type when full."""
    if node.type == NODE4:
        if node.count < 4:
            _insert_sorted(node, child, b)
            return node
        grown = _Inner(NODE16, node.prefix)
        grown.keys[:4] = node.keys
        grown.children[:4] = node.children
        grown.count = 4
        return _insert_child(grown, child, b)
    if node.type == NODE16:
        if node.count < 16:
            _insert_sorted(node, child, b)
            return node
        grown = _Inner(NODE48, node.prefix)
        for i in range(16):
            grown.index[node.keys[i]] = i
            grown.children[i] = node.children[i]
        grown.count = 16
        return _insert_child(grown, child, b)
    if node.type == NODE48:
        if node.count < 48:
            pos = node.count
            if node.children[pos] is not None:
                pos = node.children.index(None)
            node.children[pos] = child
            node.index[b] = pos
            node.count += 1
            return node
        grown = _Inner(NODE256, node.prefix)
        for k in range(256):
            if node.index[k] != _EMPTY_SLOT:
                grown.children[k] = node.children[node.index[k]]
        grown.count = node.count
        return _insert_child(grown, child, b)
    node.count += 1
    node.children[b] = child
    return node


def _mismatch(a: bytes, b: bytes) -> int:
    """java.util.Arrays.mismatch over two ranges: first differing index, the shorter length if
    one is a prefix of the other, -1 if equal."""
    n = min(len(a), len(b))
    for i in range(n):
        if a[i] != b[i]:
            return i
    return -1 if len(a) == len(b) else n


def _art_insert(node: _Node | None, key: bytes, depth: int, idx: int) -> _Node:
    """Art.insert(node, key, depth, containerIdx); returns the node that replaces ``node``."""
    if node is None:
        return _Leaf(int.from_bytes(key, "big"), idx)
    if isinstance(node, _Leaf):
        old = node.key_bytes
        common = _mismatch(old[depth:], key[depth:])
        node.prefix = b""
        parent = _Inner(NODE4, key[depth:depth + common])
        _insert_child(parent, node, old[depth + common])
        _insert_child(parent, _Leaf(int.from_bytes(key, "big"), idx), key[depth + common])
        return parent
    if node.prefix:
        pl = len(node.prefix)
        mis = _mismatch(node.prefix, key[depth:])
        if mis != pl:
            parent = _Inner(NODE4, node.prefix[:mis])
            _insert_child(parent, node, node.prefix[mis])
            node.prefix = node.prefix[mis + 1:]
            _insert_child(parent, _Leaf(int.from_bytes(key, "big"), idx), key[depth + mis])
            return parent
        depth += pl
    pos = node.child_pos(key[depth])
    if pos != -1:
        child = node.get(pos)
        fresh = _art_insert(child, key, depth + 1, idx)
        if fresh is not child:
            node.put(pos, fresh)
        return node
    return _insert_child(node, _Leaf(int.from_bytes(key, "big"), idx), key[depth])


# ---------------------------------------------------------------------------- the whole bitmap


class Roaring64Layout:
    """Java's Roaring64Bitmap state as far as it reaches the serialized bytes."""

    def __init__(self) -> None:
        self.root: _Node | None = None
        self.key_size = 0
        self.leaves: dict[int, _Leaf] = {}
        self.arrays: list[list[_Container | None]] = []
        self.container_size = 0
        self.first_level = -1
        self.second_level = 0

    # -- building ----------------------------------------------------------------------

    def container(self, idx: int) -> _Container:
        c = self.arrays[idx >> 32][idx & 0xFFFFFFFF]
        if c is None:
            raise ValueError(f"container index {idx} names an empty slot")
        return c

    def _add_container(self, c: _Container) -> int:
        """Containers.addContainer: next slot, arrays grow by half (Arrays.copyOf) when full."""
        if self.second_level + 1 == _MAX_JVM_ARRAY_OFFSET or self.first_level == -1:
            self.arrays.append([None])
            self.first_level += 1
            self.second_level = 0
        else:
            self.second_level += 1
        arr = self.arrays[self.first_level]
        need = self.second_level + 1
        if need > len(arr):
            cap = len(arr) + (len(arr) >> 1)
            arr.extend([None] * (max(cap, need) - len(arr)))
        arr[self.second_level] = c
        self.container_size += 1
        return (self.first_level << 32) | self.second_level

    def _put(self, high: int, c: _Container) -> None:
        idx = self._add_container(c)
        self.root = _art_insert(self.root, high.to_bytes(6, "big"), 0, idx)
        self.key_size += 1
        self.leaves[high] = self._find_leaf(high)

    def _find_leaf(self, high: int) -> _Leaf:
        key = high.to_bytes(6, "big")
        node, depth = self.root, 0
        while isinstance(node, _Inner):
            depth += len(node.prefix)
            node = node.get(node.child_pos(key[depth]))
            depth += 1
        assert isinstance(node, _Leaf) and node.key == high
        return node

    @classmethod
    def from_values(cls, values: np.ndarray) -> Roaring64Layout:
        """Roaring64Bitmap after addLong of ``values`` (sorted unique uint64) in order, then runOptimize."""
        out = cls()
        if values.size == 0:
            return out
        highs = values >> np.uint64(16)
        cut = np.flatnonzero(highs[1:] != highs[:-1]) + 1
        starts = np.concatenate(([0], cut))
        ends = np.concatenate((cut, [values.size]))
        lows = (values & np.uint64(0xFFFF)).astype(np.uint16)
        for s, e in zip(starts.tolist(), ends.tolist(), strict=True):
            low = lows[s:e]
            out._put(int(highs[s]), _Container(ARRAY if low.size <= _ARRAY_MAX else BITMAP, low))
        out.run_optimize()
        return out

    def or_(self, other: Roaring64Layout) -> None:
        """Roaring64Bitmap.or: walk ``other``'s keys ascending; ior shared keys in place,
        append clones of the others (new container slot, then ART insert)."""
        for high in sorted(other.leaves):
            c2 = other.container(other.leaves[high].idx)
            mine = self.leaves.get(high)
            if mine is None:
                self._put(high, _Container(c2.kind, c2.values, c2.raw))
            else:
                a, b = mine.idx >> 32, mine.idx & 0xFFFFFFFF
                self.arrays[a][b] = self.container(mine.idx).ior(c2)

    def run_optimize(self) -> None:
        for arr in self.arrays:
            for i, c in enumerate(arr):
                if c is not None:
                    arr[i] = c.run_optimized()

    # -- values ------------------------------------------------------------------------

    def values(self) -> np.ndarray:
        """All values, ascending unsigned, as uint64."""
        parts = []
        for high in sorted(self.leaves):
            low = self.container(self.leaves[high].idx).values
            parts.append((np.uint64(high) << np.uint64(16)) | low.astype(np.uint64))
        return np.concatenate(parts) if parts else np.zeros(0, dtype=np.uint64)

    # -- bytes -------------------------------------------------------------------------

    def to_bytes(self) -> bytes:
        if self.root is None:
            return b"\x00"
        out = [b"\x01", struct.pack("<q", self.key_size)]
        _write_node(self.root, out)
        out.append(struct.pack("<i", len(self.arrays)))
        for arr in self.arrays:
            out.append(struct.pack("<Bi", _NOT_TRIMMED_MARK, len(arr)))
            for c in arr:
                out.append(b"\x00" if c is None else b"\x01" + c.payload())
        out.append(struct.pack("<qii", self.container_size, self.first_level, self.second_level))
        return b"".join(out)

    @classmethod
    def parse(cls, data: bytes) -> Roaring64Layout:
        try:
            return _Reader(data).read()
        except (IndexError, struct.error, ValueError, KeyError, TypeError) as e:
            raise InvalidInput(f"rbm64 value ({len(data)} bytes) is not a Java Roaring64Bitmap: {e}") from None


def _write_node(node: _Node, out: list[bytes]) -> None:
    if isinstance(node, _Leaf):
        out.append(struct.pack("<BhB", LEAF, node.count, len(node.prefix)) + node.prefix)
        out.append(node.key_bytes + struct.pack("<q", node.idx))
        return
    out.append(struct.pack("<BhB", node.type, node.count, len(node.prefix)) + node.prefix)
    if node.type == NODE4:
        out.append(bytes(node.keys[::-1]))
    elif node.type == NODE16:
        out.append(bytes(node.keys[7::-1]) + bytes(node.keys[15:7:-1]))
    elif node.type == NODE48:
        out.append(b"".join(bytes(node.index[i:i + 8][::-1]) for i in range(0, 256, 8)))
    else:
        present = np.array([c is not None for c in node.children], dtype=bool)
        out.append(np.packbits(present, bitorder="little").tobytes())
    for child in node.ordered():
        _write_node(child, out)


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def take(self, n: int) -> bytes:
        if self.pos + n > len(self.data):
            raise ValueError(f"truncated at byte {self.pos}")
        b = self.data[self.pos:self.pos + n]
        self.pos += n
        return b

    def unpack(self, fmt: str) -> tuple[Any, ...]:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))

    def read(self) -> Roaring64Layout:
        out = Roaring64Layout()
        (tag,) = self.unpack("<b")
        if tag == 0:
            return out
        (out.key_size,) = self.unpack("<q")
        out.root = self.node(out.leaves)
        (n_arrays,) = self.unpack("<i")
        for _ in range(n_arrays):
            _trim, length = self.unpack("<bi")
            arr: list[_Container | None] = []
            for _ in range(length):
                (mark,) = self.unpack("<b")
                if mark == 0:
                    arr.append(None)
                elif mark == 1:
                    arr.append(self.container())
                else:
                    raise ValueError(f"container null tag {mark}")
            out.arrays.append(arr)
        out.container_size, out.first_level, out.second_level = self.unpack("<qii")
        if self.pos != len(self.data):
            raise ValueError(f"{len(self.data) - self.pos} trailing bytes")
        for leaf in out.leaves.values():
            out.container(leaf.idx)  # every leaf must point at a container
        return out

    def node(self, leaves: dict[int, _Leaf]) -> _Node:
        type_, count, plen = self.unpack("<BhB")
        prefix = self.take(plen) if 0 < plen < 128 else b""
        if type_ == LEAF:
            key = int.from_bytes(self.take(6), "big")
            (idx,) = self.unpack("<q")
            leaf = _Leaf(key, idx, prefix, count)
            leaves[key] = leaf
            return leaf
        if type_ not in (NODE4, NODE16, NODE48, NODE256):
            raise ValueError(f"node type {type_}")
        node = _Inner(type_, prefix)
        node.count = count
        if type_ == NODE4:
            node.keys[:] = self.take(4)[::-1]
        elif type_ == NODE16:
            raw = self.take(16)
            node.keys[:] = raw[7::-1] + raw[15:7:-1]
        elif type_ == NODE48:
            raw = self.take(256)
            node.index[:] = b"".join(raw[i:i + 8][::-1] for i in range(0, 256, 8))
        else:
            mask = np.unpackbits(np.frombuffer(self.take(32), dtype=np.uint8), bitorder="little")
            present = np.flatnonzero(mask).tolist()
        children = [self.node(leaves) for _ in range(count)]
        if type_ in (NODE4, NODE16):
            node.children[:count] = children
        elif type_ == NODE48:
            it = iter(children)
            for b in range(256):
                if node.index[b] != _EMPTY_SLOT:
                    node.children[node.index[b]] = next(it)
        else:
            for b, child in zip(present, children, strict=True):
                node.children[b] = child
        return node

    def container(self) -> _Container:
        start = self.pos
        kind, card = self.unpack("<Bi")
        if kind == RUN:
            (n,) = self.unpack("<H")
            pairs = np.frombuffer(self.take(4 * n), dtype="<u2").astype(np.int64)
            starts, lens = pairs[0::2], pairs[1::2] + 1
            offs = np.repeat(starts - np.concatenate(([0], np.cumsum(lens)[:-1])), lens)
            values = (offs + np.arange(int(lens.sum()))).astype(np.uint16)
        elif kind == BITMAP:
            bits = np.unpackbits(np.frombuffer(self.take(_BITMAP_BYTES), dtype=np.uint8), bitorder="little")
            values = np.flatnonzero(bits).astype(np.uint16)
        elif kind == ARRAY:
            values = np.frombuffer(self.take(2 * card), dtype="<u2").astype(np.uint16)
        else:
            raise ValueError(f"container type {kind}")
        return _Container(kind, values, self.data[start:self.pos])


# ---------------------------------------------------------------------------- public API


def deserialize_roaring64(data: bytes) -> pyroaring.BitMap64:
    """Decode Java ``Roaring64Bitmap.serialize`` bytes into a pyroaring BitMap64."""
    import array

    import pyroaring

    values = Roaring64Layout.parse(bytes(data)).values()
    return pyroaring.BitMap64(array.array("Q", values.astype("=u8").tobytes()))


def serialize_roaring64(bm: pyroaring.BitMap64) -> bytes:
    """Java's bytes for ``RoaringBitmap64.bitmapOf(values ascending).serialize()``."""
    values = np.frombuffer(bm.to_array().tobytes(), dtype=np.uint64) if len(bm) else np.zeros(0, np.uint64)
    return Roaring64Layout.from_values(values).to_bytes()


def merge_roaring64(acc: bytes, value: bytes) -> bytes:
    """FieldRoaringBitmap64Agg.agg(acc, value) for two non-null values, byte for byte."""
    layout = Roaring64Layout.parse(bytes(acc))
    layout.or_(Roaring64Layout.parse(bytes(value)))
    layout.run_optimize()
    return layout.to_bytes()
