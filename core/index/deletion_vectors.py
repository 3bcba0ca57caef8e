"""Deletion vectors: which row positions of a data file are deleted (FORMAT-FACTS 10).

A DV index file is a version byte (1) followed by one blob per data file. Two blob kinds
exist and are told apart by their magic: 32-bit Roaring (big-endian magic, the default)
and 64-bit (Iceberg-style, little-endian magic, ``deletion-vectors.bitmap64``). Their
``length`` in the index manifest means different things, which is easy to get wrong, so
both the reader and the writer check it.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import CorruptMetadata, InvalidInput
from ..manifest.index_manifest import DeletionVectorMeta

if TYPE_CHECKING:
    from ..io.fileio import FileIO

VERSION = 1
MAGIC_32 = 1581511376  # read big-endian
MAGIC_64 = 1681511377  # read little-endian
MAX_32_POSITION = 2**31 - 1  # Java ints: positions above Integer.MAX_VALUE need bitmap64
_MAGIC_32_BYTES = struct.pack(">i", MAGIC_32)
_MAGIC_64_BYTES = struct.pack("<i", MAGIC_64)


class DeletionVector:
    """Deleted row positions of one data file, over a pyroaring ``BitMap`` or ``BitMap64``."""

    def __init__(self, bitmap: Any = None, bitmap64: bool = False) -> None:
        from pyroaring import BitMap, BitMap64

        if bitmap is None:
            bitmap = BitMap64() if bitmap64 else BitMap()
        self.bitmap = bitmap
        self.is_64 = isinstance(bitmap, BitMap64)

    @staticmethod
    def from_positions(positions: Iterable[int], bitmap64: bool = False) -> DeletionVector:
        from pyroaring import BitMap, BitMap64

        positions = list(positions)
        if not bitmap64 and positions and (min(positions) < 0 or max(positions) > MAX_32_POSITION):
            raise InvalidInput(f"deletion vector position out of 0..{MAX_32_POSITION}; use a 64-bit deletion vector")
        return DeletionVector(BitMap64(positions) if bitmap64 else BitMap(positions), bitmap64)

    def is_deleted(self, pos: int) -> bool:
        return pos in self.bitmap

    def delete(self, pos: int) -> None:
        if not self.is_64 and not 0 <= pos <= MAX_32_POSITION:
            raise InvalidInput(f"deletion vector position {pos} out of 0..{MAX_32_POSITION}")
        self.bitmap.add(pos)

    def merge(self, other: DeletionVector) -> None:
        """Add every position of ``other`` (Java ``DeletionVector.merge``)."""
        self.bitmap |= convert(other, self.is_64).bitmap  # InvalidInput if 64-bit positions don't fit

    @property
    def cardinality(self) -> int:
        return len(self.bitmap)

    def positions(self) -> Any:
        """Sorted positions as an ``array.array`` (cheap to hand to numpy/pyarrow)."""
        return self.bitmap.to_array()

    def is_empty(self) -> bool:
        return len(self.bitmap) == 0

    def __eq__(self, other: object) -> bool:
        return isinstance(other, DeletionVector) and self.is_64 == other.is_64 and self.bitmap == other.bitmap

    def __repr__(self) -> str:
        return f"DeletionVector({'64' if self.is_64 else '32'}-bit, cardinality={self.cardinality})"

    # -- blob encoding --------------------------------------------------------------------

    def to_blob(self) -> tuple[bytes, int]:
        """(blob bytes: length + body + CRC, the ``length`` the index manifest records)."""
        body = self._body_64() if self.is_64 else self._body_32()
        blob = struct.pack(">i", len(body)) + body + struct.pack(">I", zlib.crc32(body))
        return blob, (len(blob) if self.is_64 else len(body))

    def _body_32(self) -> bytes:
        from pyroaring import BitMap

        bm = BitMap(self.bitmap)
        bm.run_optimize()  # Java runOptimize()s before serializing
        return _MAGIC_32_BYTES + bm.serialize()

    def _body_64(self) -> bytes:
        """Magic, LE count, then one (LE key, 32-bit portable bitmap) per key 0..max, dense."""
        from pyroaring import BitMap

        groups: dict[int, list[int]] = {}
        for p in self.bitmap:
            groups.setdefault(p >> 32, []).append(p & 0xFFFFFFFF)
        count = max(groups) + 1 if groups else 0
        out = bytearray(_MAGIC_64_BYTES + struct.pack("<q", count))
        for key in range(count):
            bm = BitMap(groups.get(key, ()))
            bm.run_optimize()
            out += struct.pack("<i", key) + bm.serialize()
        return bytes(out)


def _parse_64(body: bytes) -> Any:
    """The 64-bit layout after the magic: CRoaring's 64-bit portable format, which is the
    same bytes (LE count, then LE key + 32-bit portable bitmap per key; empty ones allowed)."""
    from pyroaring import BitMap64

    return BitMap64.deserialize(body)


def read_blob(data: bytes, offset: int, length: int | None, path: str) -> DeletionVector:
    """Decode the blob at ``offset`` (its length prefix), checking length and CRC."""
    from pyroaring import BitMap

    try:
        (size,) = struct.unpack_from(">i", data, offset)
        body = data[offset + 4 : offset + 4 + size]
        if size < 4 or len(body) != size or offset + 8 + size > len(data):
            raise ValueError(f"blob at offset {offset} of size {size} runs past the end of the file")
        (crc,) = struct.unpack_from(">I", data, offset + 4 + size)
        magic = body[:4]
        if magic == _MAGIC_32_BYTES:
            expected = size
        elif magic == _MAGIC_64_BYTES:
            expected = size + 8
        else:
            raise ValueError(f"blob at offset {offset} has unknown magic {magic.hex()}")
        if length is not None and length != expected:
            raise ValueError(f"blob at offset {offset}: index manifest length {length} != {expected}")
        if zlib.crc32(body) != crc:
            raise ValueError(f"blob at offset {offset}: CRC32 mismatch")
        if magic == _MAGIC_32_BYTES:
            return DeletionVector(BitMap.deserialize(body[4:]))
        return DeletionVector(_parse_64(body[4:]))
    except (ValueError, struct.error) as e:
        raise CorruptMetadata(path, f"deletion vector: {e}") from e


def read_deletion_vectors(
    file_io: FileIO, index_file_path: str, metas: Iterable[DeletionVectorMeta]
) -> dict[str, DeletionVector]:
    """Data file name -> DeletionVector for the ranges ``metas`` names in one DV index file."""
    data = file_io.read_bytes(index_file_path)
    if not data or data[0] != VERSION:
        got = data[0] if data else "nothing"
        raise CorruptMetadata(index_file_path, f"deletion vector index version {got}, expected {VERSION}")
    out: dict[str, DeletionVector] = {}
    for m in metas:
        dv = read_blob(data, m.offset, m.length, index_file_path)
        if m.cardinality is not None and dv.cardinality != m.cardinality:
            problem = f"deletion vector of {m.data_file_name}: cardinality {dv.cardinality} != {m.cardinality}"
            raise CorruptMetadata(index_file_path, problem)
        out[m.data_file_name] = dv
    return out


def serialize_deletion_vector_index(
    vectors: Mapping[str, DeletionVector],
) -> tuple[bytes, list[DeletionVectorMeta]]:
    """File bytes and per-file metas, blobs in ``vectors`` order (Java's LinkedHashMap order)."""
    out = bytearray([VERSION])
    metas: list[DeletionVectorMeta] = []
    for name, dv in vectors.items():
        blob, length = dv.to_blob()
        metas.append(DeletionVectorMeta(name, len(out), length, dv.cardinality))
        out += blob
    return bytes(out), metas


def write_deletion_vector_index(
    file_io: FileIO, path: str, vectors: Mapping[str, DeletionVector], bitmap64: bool | None = None
) -> tuple[int, list[DeletionVectorMeta]]:
    """Write one DV index file; returns (file size, metas for ``_DELETIONS_VECTORS_RANGES``).

    ``bitmap64`` (the table's ``deletion-vectors.bitmap64``), when given, converts every
    vector to that kind first so one file never mixes kinds.
    """
    if bitmap64 is not None:
        vectors = {n: convert(dv, bitmap64) for n, dv in vectors.items()}
    data, metas = serialize_deletion_vector_index(vectors)
    file_io.write_bytes(path, data)
    return len(data), metas


def convert(dv: DeletionVector, bitmap64: bool) -> DeletionVector:
    """The same positions in the other bitmap kind (no-op when already that kind)."""
    if dv.is_64 == bitmap64:
        return dv
    return DeletionVector.from_positions(dv.positions(), bitmap64)
