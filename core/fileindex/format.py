"""The file-index container (Java ``FileIndexFormat``): which index of which column sits where.

Layout (all big-endian): magic int64, version int32, headLength int32 (the whole head,
magic included, i.e. the absolute offset of the body), columnCount int32, per column a
Java modified-UTF-8 name and indexCount int32, per index a modified-UTF-8 type name,
start int32 (ABSOLUTE offset in the container, -1 for an empty index) and length int32;
then redundantLength int32 (0) and the payloads concatenated.

Columns and index types are written in the iteration order of a Java ``HashMap`` keyed by
name, close to what Java's writer produces. Readers (Java's included) look entries up by
name, so the order carries no meaning; Java's own order also depends on the insertion
history of several nested hash maps, which we do not replay (payloads are what must be
byte-identical, and are).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from ..errors import CorruptMetadata

MAGIC = 1493475289347502
VERSION_1 = 1
EMPTY_INDEX_FLAG = -1

INDEX_SUFFIX = ".index"


def decode_modified_utf8(data: bytes) -> str:
    """Java ``DataInput.readUTF`` bytes to str (NUL as C0 80, astral chars as surrogate pairs)."""
    raw = data.replace(b"\xc0\x80", b"\x00").decode("utf-8", "surrogatepass")
    return raw.encode("utf-16", "surrogatepass").decode("utf-16")


def encode_modified_utf8(text: str) -> bytes:
    """Java ``DataOutput.writeUTF`` body (without the u16 length)."""
    b16 = text.encode("utf-16-be", "surrogatepass")
    buf = bytearray()
    for i in range(0, len(b16), 2):
        u = (b16[i] << 8) | b16[i + 1]
        if 0x0001 <= u <= 0x007F:
            buf.append(u)
        elif u <= 0x07FF:
            buf += bytes((0xC0 | (u >> 6), 0x80 | (u & 0x3F)))
        else:
            buf += bytes((0xE0 | (u >> 12), 0x80 | ((u >> 6) & 0x3F), 0x80 | (u & 0x3F)))
    return bytes(buf)


def _write_utf(text: str) -> bytes:
    body = encode_modified_utf8(text)
    if len(body) > 0xFFFF:
        raise ValueError(f"name too long for Java writeUTF: {text[:40]}...")
    return struct.pack(">H", len(body)) + body


# -- Java HashMap iteration order ---------------------------------------------------------


def java_string_hash(text: str) -> int:
    """``String.hashCode()`` (int32 over UTF-16 code units)."""
    h = 0
    b16 = text.encode("utf-16-be", "surrogatepass")
    for i in range(0, len(b16), 2):
        h = (31 * h + ((b16[i] << 8) | b16[i + 1])) & 0xFFFFFFFF
    return h


def java_hashmap_order(keys: Iterable[str], hash_fn: Callable[[str], int] = java_string_hash) -> list[str]:
    """The order a ``new HashMap<>()`` filled with ``keys`` (in this order) iterates them.

    Buckets are ``(h ^ h>>>16) & (capacity-1)``; the capacity starts at 16 and doubles past
    a 0.75 load; within a bucket insertion order survives resizes (no treeification below
    8 colliding keys, far beyond what a file index holds).
    """
    ks = list(dict.fromkeys(keys))
    cap = 16
    while len(ks) > cap * 0.75:
        cap *= 2

    def bucket(k: str) -> int:
        h = hash_fn(k)
        return (h ^ (h >> 16)) & (cap - 1)

    return [k for _, _, k in sorted((bucket(k), i, k) for i, k in enumerate(ks))]


# -- writing --------------------------------------------------------------------------------


def write_container(indexes: Mapping[str, Mapping[str, bytes | None]], *, java_order: bool = True) -> bytes:
    """Serialise ``{column: {index type: payload or None}}``; empty mapping -> b"" (no index)."""
    if not indexes:
        return b""
    cols = java_hashmap_order(indexes) if java_order else list(indexes)
    layout: list[tuple[str, list[tuple[str, int, int]]]] = []
    body = bytearray()
    for col in cols:
        per = indexes[col]
        types = java_hashmap_order(per) if java_order else list(per)
        entries = []
        for t in types:
            payload = per[t]
            if payload is None:
                entries.append((t, EMPTY_INDEX_FLAG, 0))
            else:
                entries.append((t, len(body), len(payload)))
                body += payload
        layout.append((col, entries))
    names = b"".join(_write_utf(c) + b"".join(_write_utf(t) for t, _, _ in e) for c, e in layout)
    n_entries = sum(len(e) for _, e in layout)
    head_len = 8 + 4 + 4 + 4 + n_entries * 8 + len(layout) * 4 + 4 + len(names)
    out = bytearray(struct.pack(">qiii", MAGIC, VERSION_1, head_len, len(layout)))
    for col, entries in layout:
        out += _write_utf(col) + struct.pack(">i", len(entries))
        for t, start, length in entries:
            out += _write_utf(t)
            out += struct.pack(">ii", EMPTY_INDEX_FLAG if start == EMPTY_INDEX_FLAG else start + head_len, length)
    out += struct.pack(">i", 0)
    assert len(out) == head_len
    return bytes(out + body)


# -- reading --------------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexEntry:
    column: str
    index_type: str
    start: int  # absolute, -1 for an empty index
    length: int

    @property
    def empty(self) -> bool:
        return self.start == EMPTY_INDEX_FLAG


class FileIndexContainer:
    """A parsed container held in memory (embedded bytes or a whole ``.index`` file)."""

    def __init__(self, data: bytes, path: str = "<embedded file index>") -> None:
        self.data = data
        self.path = path
        self.entries: list[IndexEntry] = _parse_head(data, path)

    def columns(self) -> list[str]:
        return list(dict.fromkeys(e.column for e in self.entries))

    def column_entries(self, column: str) -> list[IndexEntry]:
        return [e for e in self.entries if e.column == column]

    def payload(self, entry: IndexEntry) -> bytes | None:
        if entry.empty:
            return None
        end = entry.start + entry.length
        if entry.start < 0 or end > len(self.data):
            raise CorruptMetadata(self.path, f"index {entry.column}/{entry.index_type} points past the end")
        return self.data[entry.start:end]

    def read_all(self) -> dict[str, dict[str, bytes | None]]:
        out: dict[str, dict[str, bytes | None]] = {}
        for e in self.entries:
            out.setdefault(e.column, {})[e.index_type] = self.payload(e)
        return out


def _parse_head(data: bytes, path: str) -> list[IndexEntry]:
    try:
        magic, version, head_len, columns = struct.unpack_from(">qiii", data, 0)
        if magic != MAGIC:
            raise CorruptMetadata(path, f"not a Paimon file index (magic {magic})")
        if version != VERSION_1:
            raise CorruptMetadata(path, f"unsupported file index version {version}")
        pos = 20
        out: list[IndexEntry] = []
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
                start, length = struct.unpack_from(">ii", data, pos)
                pos += 8
                out.append(IndexEntry(col, typ, start, length))
        if pos + 4 > head_len or head_len > len(data):
            raise CorruptMetadata(path, f"file index head length {head_len} does not fit its entries")
        return out
    except (struct.error, UnicodeDecodeError) as e:
        raise CorruptMetadata(path, f"truncated or damaged file index header: {e}") from e


def read_file_index_header(data: bytes, path: str) -> list[tuple[str, str, int]]:
    """(column, index type, payload length) for every index in the container."""
    return [(e.column, e.index_type, e.length) for e in _parse_head(data, path)]


def index_file_names(extra_files: Iterable[str]) -> list[str]:
    return [x for x in extra_files if x.endswith(INDEX_SUFFIX)]


def new_index_file_name(old: str | None, data_file_name: str) -> str:
    """``<data file>.index`` first; a rewrite of ``x.index`` gives ``x-1.index``, ``x-1`` -> ``x-2``.

    Java's ``DataFilePathFactory.createNewFileIndexFilePath`` (last ``-`` and last ``.``).
    """
    if old is None:
        return data_file_name + INDEX_SUFFIX
    dot = old.rfind(".")
    dash = old.rfind("-")
    if dash != -1 and dash < dot:
        num = old[dash + 1:dot]
        if num.isdigit() or (num[:1] in "+-" and num[1:].isdigit() and len(num) > 1):
            return f"{old[:dash + 1]}{int(num) + 1}{INDEX_SUFFIX}"
    return f"{old[:dot]}-1{INDEX_SUFFIX}"
