"""Parquet INT96 timestamps that Arrow's nanoseconds cannot hold, found in the raw column chunks.

Java Paimon (0.9 to 2.x, ``ParquetRowDataWriter.timestampToInt96``) writes TIMESTAMP(7..9) as
INT96: a Julian day (int32) and the nanoseconds of that day as a *signed* int64, the day
rounded toward zero, so a time before 1970 has negative nanoseconds. pyarrow reads INT96 as
int64 nanoseconds since the epoch and wraps silently outside 1677-09-21..2262-04-11; it reads
the nanoseconds of the day unsigned at every coarser unit too, so no pyarrow read tells a
wrapped value from a true one (1500-06-01 and 2084-12-19 read the same). The raw 12-byte
values do: every value of an INT96 column chunk (its dictionary page, or its plain data pages)
is checked before the rows are used, and a chunk holding one outside the range is refused.
Rows are not matched to values: a chunk is refused whole, as its file is.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING, Any

from ..errors import CorruptMetadata, NotYetSupported

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

_JULIAN_EPOCH_DAY = 2_440_588
# int64 nanoseconds since the epoch as (floor seconds, nanoseconds of that second)
_MIN_S, _MIN_SUB = -9_223_372_037, 145_224_192
_MAX_S, _MAX_SUB = 9_223_372_036, 854_775_807
NS_RANGE = "1677-09-21T00:12:43.145224192..2262-04-11T23:47:16.854775807"

# parquet.thrift PageType and Encoding values used here
_DATA_PAGE, _DICTIONARY_PAGE, _DATA_PAGE_V2 = 0, 2, 3
_PLAIN, _PLAIN_DICTIONARY, _RLE_DICTIONARY = 0, 2, 8
_CODECS = {"SNAPPY": "snappy", "GZIP": "gzip", "BROTLI": "brotli", "ZSTD": "zstd", "LZ4_RAW": "lz4_raw"}


def int96_columns(schema: pq.ParquetSchema, names: list[str] | None) -> list[str]:
    """The top-level columns of ``names`` (all when None) holding an INT96 leaf, in file order."""
    wanted = None if names is None else set(names)
    out: list[str] = []
    for i in range(len(schema)):
        col = schema.column(i)
        if col.physical_type == "INT96":
            top = col.path.split(".", 1)[0]
            if (wanted is None or top in wanted) and top not in out:
                out.append(top)
    return out


_TABLE_FILE = "TIMESTAMP(7..9); refused rather than read wrong (Java Paimon reads it)"
INPUT_FILE = "refused rather than written wrong"


def check_int96(f: pa.NativeFile, path: str, metadata: pq.FileMetaData, row_groups: list[int] | None,
                columns: list[str], why: str = _TABLE_FILE) -> None:
    """Refuse (:class:`NotYetSupported`, exit 1) when an INT96 leaf of ``columns`` in
    ``row_groups`` (all by default) holds a value outside Arrow's nanosecond range; ``why``
    ends the message (a table's data file by default, :data:`INPUT_FILE` for `write`'s input)."""
    tops = set(columns)
    schema = metadata.schema
    levels = {}
    for i in range(len(schema)):
        leaf = schema.column(i)
        levels[leaf.path] = (leaf.max_repetition_level > 0, leaf.max_definition_level > 0)
    for rg_index in range(metadata.num_row_groups) if row_groups is None else row_groups:
        rg = metadata.row_group(rg_index)
        for j in range(rg.num_columns):
            col = rg.column(j)
            if col.physical_type != "INT96" or col.path_in_schema.split(".", 1)[0] not in tops:
                continue
            for values in _chunk_values(f, path, col, levels.get(col.path_in_schema, (True, True))):
                _check_values(path, col.path_in_schema, values, why)


def _check_values(path: str, column: str, raw: bytes, why: str) -> None:
    import numpy as np

    rec = np.frombuffer(raw, dtype=np.dtype([("nanos", "<i8"), ("day", "<i4")]))
    if not len(rec):
        return
    nanos = rec["nanos"]
    secs = (rec["day"].astype(np.int64) - _JULIAN_EPOCH_DAY) * 86_400 + np.floor_divide(nanos, 1_000_000_000)
    sub = np.mod(nanos, 1_000_000_000)
    low = (secs < _MIN_S) | ((secs == _MIN_S) & (sub < _MIN_SUB))
    high = (secs > _MAX_S) | ((secs == _MAX_S) & (sub > _MAX_SUB))
    bad = np.flatnonzero(low | high)
    if len(bad):
        i = int(bad[0])
        raise NotYetSupported(
            f"{path}: column {column} holds {instant_text(int(secs[i]), int(sub[i]))} (Parquet INT96), outside the "
            f"nanosecond range {NS_RANGE} this toolkit holds: {why}")


def instant_text(secs: int, sub: int) -> str:
    """``secs`` after 1970-01-01 plus ``sub`` nanoseconds as ISO text, any year."""
    try:
        return f"{(_dt.datetime(1970, 1, 1) + _dt.timedelta(seconds=secs)).isoformat()}.{sub:09d}"
    except OverflowError:
        return f"{secs} s after 1970-01-01"


def _chunk_values(f: pa.NativeFile, path: str, col: Any, levels: tuple[bool, bool]) -> list[bytes]:
    """The PLAIN-encoded INT96 values of one column chunk: its dictionary page and its plain
    data pages (dictionary-encoded data pages hold indices into the former)."""
    start = col.dictionary_page_offset if col.has_dictionary_page and col.dictionary_page_offset else \
        col.data_page_offset
    size = col.total_compressed_size
    if start is None or start < 0 or size <= 0:
        raise CorruptMetadata(path, f"column {col.path_in_schema}: bad column chunk offsets")
    buf = f.read_at(size, start)
    codec = col.compression
    out: list[bytes] = []
    pos = 0
    while pos < len(buf):
        header, pos = _read_struct(buf, pos, path)
        page_type, comp_size, plain_size = header.get(1), header.get(3), header.get(2)
        if not isinstance(comp_size, int) or not isinstance(plain_size, int) or pos + comp_size > len(buf):
            raise CorruptMetadata(path, f"column {col.path_in_schema}: bad page header")
        body = buf[pos:pos + comp_size]
        pos += comp_size
        if page_type == _DICTIONARY_PAGE:
            out.append(_decompress(body, plain_size, codec, path))
        elif page_type == _DATA_PAGE:
            encoding = (header.get(5) or {}).get(2)
            if encoding == _PLAIN:
                page = _decompress(body, plain_size, codec, path)
                out.append(_skip_v1_levels(page, col, path, levels))
            elif encoding not in (_PLAIN_DICTIONARY, _RLE_DICTIONARY):
                raise NotYetSupported(f"{path}: column {col.path_in_schema}: INT96 page encoding {encoding}")
        elif page_type == _DATA_PAGE_V2:
            v2 = header.get(8) or {}
            encoding = v2.get(4)
            if encoding == _PLAIN:
                level_bytes = int(v2.get(5) or 0) + int(v2.get(6) or 0)
                rest = body[level_bytes:]
                compressed = v2.get(7, True)
                out.append(_decompress(rest, plain_size - level_bytes, codec, path) if compressed else bytes(rest))
            elif encoding not in (_PLAIN_DICTIONARY, _RLE_DICTIONARY):
                raise NotYetSupported(f"{path}: column {col.path_in_schema}: INT96 page encoding {encoding}")
    return out


def _skip_v1_levels(page: bytes, col: Any, path: str, levels: tuple[bool, bool]) -> bytes:
    """A v1 data page without its repetition and definition levels (each RLE run prefixed by
    its 4-byte length; present only when the column's maximum level is above 0)."""
    pos = 0
    for present in levels:
        if present:
            n = int.from_bytes(page[pos:pos + 4], "little")
            pos += 4 + n
    rest = page[pos:]
    if len(rest) % 12:
        raise CorruptMetadata(path, f"column {col.path_in_schema}: INT96 page of {len(rest)} bytes")
    return rest


def _decompress(body: bytes | memoryview, size: int, codec: str, path: str) -> bytes:
    import pyarrow as pa

    if codec == "UNCOMPRESSED":
        return bytes(body)
    data = bytes(body)
    if codec == "LZ4":  # LZ4_RAW (parquet-cpp) or Hadoop's framed LZ4 (parquet-mr) look alike here
        try:
            return pa.decompress(data, decompressed_size=size, codec="lz4_raw").to_pybytes()
        except (OSError, ValueError):
            return _hadoop_lz4(data, size, path)
    name = _CODECS.get(codec)
    if name is None:
        raise NotYetSupported(f"{path}: INT96 column compressed with {codec}: its values cannot be checked")
    try:
        return pa.decompress(data, decompressed_size=size, codec=name).to_pybytes()
    except (OSError, ValueError) as e:
        raise CorruptMetadata(path, f"cannot decompress an INT96 page: {e}") from e


def _hadoop_lz4(data: bytes, size: int, path: str) -> bytes:
    """Hadoop's LZ4 block stream: (big-endian plain size, compressed size, raw LZ4 block)..."""
    import pyarrow as pa

    out, pos = [], 0
    try:
        while pos < len(data):
            plain = int.from_bytes(data[pos:pos + 4], "big")
            n = int.from_bytes(data[pos + 4:pos + 8], "big")
            pos += 8
            out.append(pa.decompress(data[pos:pos + n], decompressed_size=plain, codec="lz4_raw").to_pybytes())
            pos += n
    except (OSError, ValueError) as e:
        raise CorruptMetadata(path, f"cannot decompress an INT96 page (LZ4): {e}") from e
    joined = b"".join(out)
    if len(joined) != size:
        raise CorruptMetadata(path, "an INT96 page (LZ4) decompressed to the wrong size")
    return joined


# -- Thrift compact protocol (page headers), just what a PageHeader uses -------------------------


def varint(buf: Any, pos: int) -> tuple[int, int]:
    """An unsigned LEB128 varint at ``pos`` (Thrift compact and protobuf alike) and the position
    after it; IndexError when ``buf`` ends inside it."""
    shift = out = 0
    while True:
        if pos >= len(buf):
            raise IndexError
        b = buf[pos]
        pos += 1
        out |= (b & 0x7F) << shift
        if not b & 0x80:
            return out, pos
        shift += 7


def zigzag(n: int) -> int:
    return (n >> 1) ^ -(n & 1)


def _read_value(buf: Any, pos: int, ctype: int, path: str) -> tuple[Any, int]:
    if ctype in (1, 2):  # bool true / false inside a struct field header
        return ctype == 1, pos
    if ctype == 3:  # byte
        return buf[pos], pos + 1
    if ctype in (4, 5, 6):  # i16, i32, i64
        v, pos = varint(buf, pos)
        return zigzag(v), pos
    if ctype == 7:  # double
        return None, pos + 8
    if ctype == 8:  # binary
        n, pos = varint(buf, pos)
        return bytes(buf[pos:pos + n]), pos + n
    if ctype in (9, 10):  # list, set
        head = buf[pos]
        pos += 1
        n, etype = head >> 4, head & 0x0F
        if n == 15:
            n, pos = varint(buf, pos)
        items = []
        for _ in range(n):
            if etype in (1, 2):
                items.append(buf[pos] == 1)
                pos += 1
            else:
                v, pos = _read_value(buf, pos, etype, path)
                items.append(v)
        return items, pos
    if ctype == 12:
        return _read_struct(buf, pos, path)
    raise CorruptMetadata(path, f"Parquet page header: unknown Thrift type {ctype}")


def _read_struct(buf: Any, pos: int, path: str) -> tuple[dict[int, Any], int]:
    out: dict[int, Any] = {}
    field = 0
    try:
        while True:
            head = buf[pos]
            pos += 1
            if head == 0:
                return out, pos
            delta, ctype = head >> 4, head & 0x0F
            if delta:
                field += delta
            else:
                v, pos = varint(buf, pos)
                field = zigzag(v)
            out[field], pos = _read_value(buf, pos, ctype, path)
    except IndexError:
        raise CorruptMetadata(path, "truncated Parquet page header") from None
