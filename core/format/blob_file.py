"""Paimon's ``.blob`` file format (Paimon 1.4+) and the ``BlobDescriptor`` that points into it.

A ``.blob`` file holds the values of ONE blob column for consecutive rows::

    record_0 | record_1 | ... | index | int32 LE index_length | byte version (= 1)
    record   = int32 LE magic | blob bytes | int64 LE record_length | int32 LE CRC32

The index holds one record length per row (``-1``: NULL, ``-2``: placeholder, "take this row
from an older blob file"), delta-encoded, ZigZag'd and written as unsigned LEB128 varints;
records follow each other, so a row's offset is the running sum of the positive lengths.
Reads touch the footer, then only the record region of the rows asked for, decoded with numpy
and pyarrow (no per-row Python loop).
"""

from __future__ import annotations

import contextlib
import io
import struct
import zlib
from dataclasses import dataclass
from typing import IO, Any, cast

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptMetadata
from ..io.fileio import FileIO
from ..utils.interrupt import discard

BLOB_MAGIC = 1481511375  # bytes CF 11 4E 58
_MAGIC_BYTES = struct.pack("<i", BLOB_MAGIC)
_MAGIC_CRC = zlib.crc32(_MAGIC_BYTES)
BLOB_VERSION = 1
NULL_LENGTH = -1
PLACEHOLDER_LENGTH = -2
_RECORD_OVERHEAD = 4 + 8 + 4  # magic, record length, CRC32
_FOOTER = 5  # int32 index length + version byte

DESCRIPTOR_VERSION = 2
DESCRIPTOR_MAGIC = 0x424C4F4244455343  # "BLOBDESC"
DESCRIPTOR_TYPE = pa.struct([pa.field("uri", pa.string()), pa.field("offset", pa.int64()),
                             pa.field("length", pa.int64())])


@dataclass(frozen=True)
class BlobIndex:
    """The footer of a ``.blob`` file: each row's record length and record offset."""

    lengths: np.ndarray  # int64, -1 NULL, -2 placeholder
    offsets: np.ndarray  # int64 record start (meaningful where length > 0)

    @property
    def row_count(self) -> int:
        return len(self.lengths)


# -- index encoding ---------------------------------------------------------------------------

def encode_index(lengths: np.ndarray) -> bytes:
    """Delta + ZigZag + LEB128 (Paimon's ``DeltaVarintCompressor``), vectorised: one pass
    per varint byte position (at most 10), not per row."""
    v = np.asarray(lengths, dtype=np.int64)
    deltas = np.diff(v, prepend=np.int64(0))
    zz = ((deltas << 1) ^ (deltas >> 63)).astype(np.uint64)
    if len(zz) == 0:
        return b""
    nbytes = np.ones(len(zz), dtype=np.int64)
    for k in range(1, 10):
        nbytes += zz >= (np.uint64(1) << np.uint64(7 * k))
    starts = np.cumsum(nbytes) - nbytes
    out = np.empty(int(nbytes.sum()), dtype=np.uint8)
    for k in range(int(nbytes.max())):
        rows = np.flatnonzero(nbytes > k)
        part = (zz[rows] >> np.uint64(7 * k)) & np.uint64(0x7F)
        more = (nbytes[rows] > k + 1).astype(np.uint64) << np.uint64(7)
        out[starts[rows] + k] = (part | more).astype(np.uint8)
    return out.tobytes()


def decode_index(data: bytes, path: str = "blob file") -> np.ndarray:
    """The int64 values of a delta-varint index, vectorised."""
    b = np.frombuffer(data, dtype=np.uint8)
    if len(b) == 0:
        return np.zeros(0, dtype=np.int64)
    ends = np.flatnonzero((b & 0x80) == 0)
    if len(ends) == 0 or ends[-1] != len(b) - 1:
        raise CorruptMetadata(path, "truncated varint in the index")
    starts = np.concatenate(([0], ends[:-1] + 1))
    if int((ends - starts).max()) > 9:
        raise CorruptMetadata(path, "varint longer than 64 bits in the index")
    group = np.repeat(np.arange(len(starts)), ends - starts + 1)
    shift = (np.arange(len(b)) - starts[group]).astype(np.uint64) * np.uint64(7)
    contrib = (b & 0x7F).astype(np.uint64) << shift
    zz = np.add.reduceat(contrib, starts)
    deltas = (zz >> np.uint64(1)).astype(np.int64) ^ -(zz & np.uint64(1)).astype(np.int64)
    return np.cumsum(deltas)


# -- reading ----------------------------------------------------------------------------------

def read_blob_index(file_io: FileIO, path: str) -> BlobIndex:
    """The index of the ``.blob`` file at ``path``, validated as Java's ``BlobFileMeta`` does."""
    with file_io.open_arrow_input(path) as f:
        size = f.size()
        if size < _FOOTER:
            raise CorruptMetadata(path, f"{size} bytes, too short for a footer")
        footer = f.read_at(_FOOTER, size - _FOOTER)
        index_len, version = struct.unpack("<iB", footer)
        if version != BLOB_VERSION:
            raise CorruptMetadata(path, f"version {version}, expected {BLOB_VERSION}")
        data_end = size - _FOOTER - index_len
        if index_len < 0 or data_end < 0:
            raise CorruptMetadata(path, f"index length {index_len} outside the file")
        lengths = decode_index(f.read_at(index_len, data_end), path)
    positive = np.where(lengths > 0, lengths, 0)
    if np.any((lengths < 0) & (lengths != NULL_LENGTH) & (lengths != PLACEHOLDER_LENGTH)) or \
            np.any((lengths >= 0) & (lengths < _RECORD_OVERHEAD)):
        raise CorruptMetadata(path, "invalid record length in the index")
    if int(positive.sum()) != data_end:
        raise CorruptMetadata(path, f"records fill {int(positive.sum())} bytes, the data region "
                              f"is {data_end}")
    offsets = np.cumsum(positive) - positive
    return BlobIndex(lengths, offsets)


def blob_values(file_io: FileIO, path: str, index: BlobIndex, rows: np.ndarray, mode: str) -> pa.Array:
    """The values of the file's ``rows`` (positions in the file, ascending): ``bytes`` (binary),
    ``size`` (int64 byte count) or ``descriptor`` (struct uri/offset/length into ``path``).
    NULL and placeholder rows read as NULL."""
    lengths = index.lengths[rows]
    valid = lengths > 0
    mask = pa.array(~valid)
    sizes = np.where(valid, lengths - _RECORD_OVERHEAD, 0)
    if mode == "size":
        return pa.array(sizes, pa.int64(), mask=~valid)
    if mode == "descriptor":
        uri = pa.array(np.full(len(rows), file_io.absolute(path), dtype=object), pa.string())
        return pa.StructArray.from_arrays([uri, pa.array(index.offsets[rows] + 4), pa.array(sizes)],
                                          fields=list(DESCRIPTOR_TYPE), mask=mask)
    return _blob_bytes(file_io, path, index, rows)


def _blob_bytes(file_io: FileIO, path: str, index: BlobIndex, rows: np.ndarray) -> pa.Array:
    """Blob bytes of ``rows``: one read of the record region from the first to the last row,
    viewed as one binary array of records, sliced between magic and trailer."""
    if len(rows) == 0:
        return pa.array([], pa.large_binary())
    first, last = int(rows[0]), int(rows[-1])
    lengths = index.lengths[first:last + 1]
    valid = lengths > 0
    sizes = np.where(valid, lengths, 0)
    lo = int(index.offsets[first])
    with file_io.open_arrow_input(path) as f:
        region = f.read_at(int(sizes.sum()), lo)
    offsets = np.concatenate(([0], np.cumsum(sizes))).astype(np.int64)
    validity = None if valid.all() else pa.array(valid).buffers()[1]
    records = pa.LargeBinaryArray.from_buffers(pa.large_binary(), len(lengths),
                                               [validity, pa.py_buffer(offsets), pa.py_buffer(region)])
    if not pc.all(pc.equal(pc.binary_slice(records, 0, 4), pa.scalar(_MAGIC_BYTES, pa.large_binary()))).as_py() \
            in (True, None):
        raise CorruptMetadata(path, "a record does not start with the blob magic")
    blobs = pc.binary_slice(records, 4, -(_RECORD_OVERHEAD - 4))
    return blobs.take(pa.array(rows - first)) if len(rows) != len(lengths) else blobs


# -- writing ----------------------------------------------------------------------------------

def record_lengths(values: pa.Array) -> np.ndarray:
    """The index entry each value of a binary array gets: its record length, -1 for NULL."""
    sizes = pc.fill_null(pc.binary_length(values), -1).to_numpy(zero_copy_only=False).astype(np.int64)
    return np.where(sizes >= 0, sizes + _RECORD_OVERHEAD, NULL_LENGTH)


class BlobFileWriter:
    """Streams one ``.blob`` file: records as values arrive, the index and footer at close.

    Only the record lengths stay in memory (8 bytes a row); each value is written once.
    ``placeholders`` marks rows written as placeholders (-2: "keep the older file's value"),
    which partial updates by ``_ROW_ID`` write for the rows they leave alone.
    """

    def __init__(self, file_io: FileIO | None, path: str, out: IO[bytes] | None = None) -> None:
        """``out``: write there instead of opening ``path`` with ``file_io``."""
        self.file_io = file_io
        self.path = path
        self._out: Any = out if out is not None else cast(FileIO, file_io).open_output(path)
        self._lengths: list[np.ndarray] = []
        self.position = 0
        self.rows = 0

    def write(self, values: pa.Array, placeholders: np.ndarray | None = None) -> None:
        values = values.cast(pa.large_binary())
        lengths = record_lengths(values)
        if placeholders is not None:
            lengths = np.where(placeholders, PLACEHOLDER_LENGTH, lengths)
        data = values.buffers()[2]
        offsets = np.frombuffer(values.buffers()[1], dtype=np.int64, count=len(values) + 1, offset=values.offset * 8)
        view = memoryview(data) if data is not None else memoryview(b"")
        out = self._out
        # one C-level CRC32 and write per record: neither numpy nor pyarrow computes CRC32
        for i in np.flatnonzero(lengths > 0).tolist():
            blob = view[int(offsets[i]):int(offsets[i + 1])]
            tail = struct.pack("<q", int(lengths[i]))
            crc = zlib.crc32(tail, zlib.crc32(blob, _MAGIC_CRC))
            out.write(_MAGIC_BYTES)
            out.write(blob)
            out.write(tail + struct.pack("<I", crc))
        self._lengths.append(lengths)
        self.position += int(np.where(lengths > 0, lengths, 0).sum())
        self.rows += len(lengths)

    def close(self) -> int:
        """Write the index and footer; the file's size in bytes."""
        lengths = np.concatenate(self._lengths) if self._lengths else np.zeros(0, dtype=np.int64)
        index = encode_index(lengths)
        self._out.write(index + struct.pack("<iB", len(index), BLOB_VERSION))
        self._out.close()
        return self.position + len(index) + _FOOTER

    def abort(self) -> None:
        with contextlib.suppress(Exception):
            self._out.close()
        if self.file_io is not None:
            discard(self.file_io, [self.path])


def write_blob_bytes(values: list[bytes | None]) -> bytes:
    """A complete ``.blob`` file holding ``values`` (None: NULL), through :class:`BlobFileWriter`."""
    out = _Buffer()
    w = BlobFileWriter(None, "memory.blob", out)
    w.write(pa.array(values, pa.large_binary()))
    w.close()
    return out.getvalue()


class _Buffer(io.BytesIO):
    """Stays readable after the writer closes it."""

    def close(self) -> None:
        pass


# -- BlobDescriptor ---------------------------------------------------------------------------

@dataclass(frozen=True)
class BlobDescriptor:
    """Where a blob's bytes are: ``length`` bytes at ``offset`` of ``uri``."""

    uri: str
    offset: int
    length: int
    version: int = DESCRIPTOR_VERSION

    def serialize(self) -> bytes:
        uri = self.uri.encode("utf-8")
        head = struct.pack("<B", self.version)
        if self.version > 1:
            head += struct.pack("<q", DESCRIPTOR_MAGIC)
        return head + struct.pack("<i", len(uri)) + uri + struct.pack("<qq", self.offset, self.length)

    @staticmethod
    def deserialize(data: bytes) -> BlobDescriptor:
        """Version 1 (no magic) or 2, as Java's ``BlobDescriptor.deserialize`` accepts."""
        try:
            version = data[0]
            pos = 1
            if version > DESCRIPTOR_VERSION:
                raise CorruptMetadata("blob descriptor", f"version {version} is newer than {DESCRIPTOR_VERSION}")
            if version > 1:
                (magic,) = struct.unpack_from("<q", data, pos)
                if magic != DESCRIPTOR_MAGIC:
                    raise CorruptMetadata("blob descriptor", "missing magic header")
                pos += 8
            (n,) = struct.unpack_from("<i", data, pos)
            pos += 4
            if n < 0 or pos + n + 16 > len(data):
                raise CorruptMetadata("blob descriptor", "URI length outside the payload")
            uri = data[pos:pos + n].decode("utf-8")
            offset, length = struct.unpack_from("<qq", data, pos + n)
        except (IndexError, struct.error) as e:
            raise CorruptMetadata("blob descriptor", f"too short ({len(data)} bytes)") from e
        return BlobDescriptor(uri, offset, length, version)
