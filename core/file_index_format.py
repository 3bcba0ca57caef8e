"""The file-index container header (``FileIndexFormat``): which index of which column sits where.

Layout (all big-endian): magic int64, version int32, headLength int32, columnCount int32,
per column a modified-UTF-8 name and indexCount int32, per index a modified-UTF-8 type
name, start int32 (absolute offset, -1 for an empty index) and length int32; then
redundantLength int32 and the bodies.
"""

from __future__ import annotations

import struct

from .errors import CorruptMetadata

MAGIC = 1493475289347502
VERSION_1 = 1


def decode_modified_utf8(data: bytes) -> str:
    """Java ``DataInput.readUTF`` bytes to str (NUL as C0 80, astral chars as surrogate pairs)."""
    raw = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    return raw.encode("utf-16", "surrogatepass").decode("utf-16")


def encode_modified_utf8(text: str) -> bytes:
    units = []
    b16 = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(b16), 2):
        units.append(int.from_bytes(b16[i:i + 2], "big"))
    buf = bytearray()
    for u in units:
        if 0x0001 <= u <= 0x007F:
            buf.append(u)
        elif u <= 0x07FF:
            buf += bytes((0xC0 | (u >> 6), 0x80 | (u & 0x3F)))
        else:
            buf += bytes((0xE0 | (u >> 12), 0x80 | ((u >> 6) & 0x3F), 0x80 | (u & 0x3F)))
    return bytes(buf)


def read_file_index_header(data: bytes, path: str) -> list[tuple[str, str, int]]:
    """(column, index type, payload length) for every index in the container."""
    try:
        magic, version, _head_len, columns = struct.unpack_from(">qiii", data, 0)
        if magic != MAGIC:
            raise CorruptMetadata(path, f"not a Paimon file index (magic {magic})")
        if version != VERSION_1:
            raise CorruptMetadata(path, f"unsupported file index version {version}")
        pos = 20
        out: list[tuple[str, str, int]] = []
        for _ in range(columns):
            (n,) = struct.unpack_from(">H", data, pos)
            col = decode_modified_utf8(data[pos + 2: pos + 2 + n])
            pos += 2 + n
            (count,) = struct.unpack_from(">i", data, pos)
            pos += 4
            for _ in range(count):
                (n,) = struct.unpack_from(">H", data, pos)
                typ = decode_modified_utf8(data[pos + 2: pos + 2 + n])
                pos += 2 + n
                _start, length = struct.unpack_from(">ii", data, pos)
                pos += 8
                out.append((col, typ, length))
        return out
    except (struct.error, UnicodeDecodeError) as e:
        raise CorruptMetadata(path, f"truncated or damaged file index header: {e}") from e
