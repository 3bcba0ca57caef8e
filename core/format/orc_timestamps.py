"""ORC timestamps that Arrow's nanoseconds cannot hold, found in the file's column statistics.

ORC stores a TIMESTAMP (and TIMESTAMP_INSTANT, Paimon's TIMESTAMP_LTZ) as seconds and
nanoseconds, so Java Paimon keeps any year at any precision. pyarrow's ORC reader returns int64
nanoseconds since the epoch: up to pyarrow 25 it wraps silently outside
1677-09-21..2262-04-11 (a year-1500 value reads as a timestamp in 2084), pyarrow 26 raises. It
has no coarser unit to read at, so a file whose timestamp columns hold a value outside is
refused. The values are not decoded here: the footer's column statistics (minimum and maximum
per column, in UTC milliseconds plus the nanoseconds below them, written by the Java and C++
ORC writers) tell whether any value is outside. A bound within a day of the range's ends (the
statistics and the reader may differ by the writer's time zone) or missing statistics are left
to pyarrow 26's own check, and refused with older pyarrow. Only files whose read columns hold
a timestamp are checked: others pay nothing.

Writing: :func:`check_orc_writable` refuses what pyarrow's ORC writer would store so that Java
Paimon cannot read it, or this toolkit could not read back.
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..errors import CorruptMetadata, NotYetSupported
from .parquet_int96 import NS_RANGE, instant_text, varint, zigzag

if TYPE_CHECKING:
    import pyarrow as pa

TABLE_FILE = "refused rather than read wrong (Java Paimon reads it)"

_MIN_NS, _MAX_NS = -(1 << 63), (1 << 63) - 1
_DAY_NS = 86_400 * 1_000_000_000
# orc_proto.proto: Type.Kind values, PostScript.compression values
_LIST, _MAP, _STRUCT, _UNION = 10, 11, 12, 13
_TIMESTAMP_KINDS = (9, 18)  # TIMESTAMP, TIMESTAMP_INSTANT
_NONE, _ZLIB, _SNAPPY, _LZO, _LZ4, _ZSTD = range(6)
_TAIL_BYTES = 16 << 10
_ARROW_OVERFLOW = re.compile(r"ORC timestamp \((-?\d+)s \+ (-?\d+)ns\) is out of range")


def _pyarrow_checks() -> bool:
    """pyarrow 26 refuses an ORC timestamp its nanoseconds cannot hold (arrow#50078)."""
    import pyarrow as pa

    return int(pa.__version__.split(".", 1)[0]) >= 26


def has_timestamp(t: pa.DataType) -> bool:
    """Whether ``t`` is or holds a timestamp (type ids compared, the quickest walk pyarrow offers)."""
    from pyarrow import lib

    tid = t.id
    if tid == lib.Type_TIMESTAMP:
        return True
    if tid == lib.Type_STRUCT:
        return any(has_timestamp(t.field(i).type) for i in range(t.num_fields))
    if tid == lib.Type_MAP:
        return has_timestamp(t.key_type) or has_timestamp(t.item_type)
    if tid in (lib.Type_LIST, lib.Type_LARGE_LIST):
        return has_timestamp(t.value_type)
    return False


def _may_hold_timestamps(schema: pa.Schema) -> bool:
    """False when no type of ``schema`` is a timestamp (its text names every type, nested ones
    too): 2 us, where walking the types takes 20 us for ten columns."""
    return "timestamp" in str(schema)


def timestamp_columns(schema: pa.Schema, names: list[str] | None) -> list[str]:
    """The top-level columns of ``names`` (all when None) holding a timestamp, in file order."""
    if not _may_hold_timestamps(schema):
        return []
    wanted = None if names is None else set(names)
    return [f.name for f in schema if (wanted is None or f.name in wanted) and has_timestamp(f.type)]


def check_orc_timestamps(f: pa.NativeFile, path: str, columns: list[str], why: str = TABLE_FILE) -> None:
    """Refuse (:class:`NotYetSupported`, exit 1) when a timestamp of ``columns`` (top-level
    names, nested timestamps included) may hold a value outside Arrow's nanosecond range;
    ``why`` ends the message."""
    raw_types, raw_stats = _footer(f, path)
    types: dict[int, dict[int, Any]] = {}

    def type_of(cid: int) -> dict[int, Any]:  # parsed on demand: only the read columns' subtrees
        if cid not in types:
            if cid >= len(raw_types):
                raise CorruptMetadata(path, f"ORC footer: column id {cid} beyond its {len(raw_types)} types")
            types[cid] = _message(raw_types[cid], path, repeated=(2, 3))
        return types[cid]

    root = type_of(0)
    if root.get(1) != _STRUCT:
        raise CorruptMetadata(path, "ORC footer: the root type is not a struct")
    names = [n.decode("utf-8", "replace") for n in root.get(3, [])]
    for name, sub in zip(names, _subtypes(root), strict=False):
        if name in columns:
            for column, cid in _timestamp_leaves(type_of, sub, name):
                stats = _message(raw_stats[cid], path, nested=(9,)) if cid < len(raw_stats) else None
                _check_column(path, column, stats, why)


def refusal_for(error: Exception, path: str, column: str, why: str = TABLE_FILE) -> NotYetSupported | None:
    """pyarrow 26's overflow error as the refusal :func:`check_orc_timestamps` makes (None for others)."""
    m = _ARROW_OVERFLOW.search(str(error))
    if m is None:
        return None
    secs, nanos = int(m.group(1)), int(m.group(2))
    ns = secs * 1_000_000_000 + nanos
    return _refusal(path, column, _text(ns), why)


_PER_SECOND = {"s": 1, "ms": 1_000, "us": 1_000_000, "ns": 1_000_000_000}


def check_orc_writable(table: pa.Table) -> None:
    """Refuse (:class:`NotYetSupported`, exit 1) a timestamp pyarrow's ORC writer would store
    so that Java cannot read it, or that no read of this toolkit could return. The writer splits
    a value into seconds and nanoseconds by truncating, so a time before 1970 with a fraction of
    a second gets negative nanoseconds: Java's ORC reader copes while they are whole
    milliseconds, but Java Paimon takes the nanoseconds below the millisecond as they are and
    fails on the whole file (``IllegalArgumentException`` from ``Timestamp.fromEpochMillis``)
    when they are not, so such a value (1960-01-01 00:00:00.123456) is refused. A value outside
    the nanosecond range (any unit coarser than nanoseconds can hold one) is refused too: every
    read here goes through pyarrow's nanoseconds."""
    if not _may_hold_timestamps(table.schema):
        return
    for field, column in zip(table.schema, table.columns, strict=True):
        if has_timestamp(field.type):
            for chunk in column.chunks:
                for name, arr in _arrow_leaves(field.name, chunk):
                    _check_writable(name, arr)


def _arrow_leaves(name: str, arr: pa.Array) -> list[tuple[str, pa.Array]]:
    """(dotted name, values) of every timestamp in ``arr`` (nested values of valid rows only)."""
    import pyarrow as pa

    t = arr.type
    if pa.types.is_timestamp(t):
        return [(name, arr)]
    if pa.types.is_struct(t):
        return [leaf for i, child in enumerate(arr.flatten()) for leaf in _arrow_leaves(f"{name}.{t.field(i).name}", child)]
    if pa.types.is_map(t):  # its entries, a struct of key and value (``keys`` ignores slicing)
        return _arrow_leaves(name, arr.cast(pa.list_(pa.struct([t.key_field, t.item_field]))).flatten())
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _arrow_leaves(f"{name}.element", arr.flatten())
    return []


def _check_writable(name: str, arr: pa.Array) -> None:
    import numpy as np
    import pyarrow as pa

    if arr.null_count == len(arr):
        return
    per = _PER_SECOND[arr.type.unit]
    ns_per = 1_000_000_000 // per
    v = arr.cast(pa.int64()).fill_null(0).to_numpy(zero_copy_only=False)
    lo, hi = -(-_MIN_NS // ns_per), _MAX_NS // ns_per  # the unit's values nanoseconds hold
    outside = np.flatnonzero((v < lo) | (v > hi))
    if len(outside):
        raise NotYetSupported(f"column {name} holds {_text(int(v[outside[0]]) * ns_per)}, outside the nanosecond "
                              f"range {NS_RANGE} this toolkit holds: refused rather than written to ORC (it could "
                              "not be read back)")
    per_milli = per // 1000  # values per millisecond: 1000 for microseconds, a million for nanoseconds
    if per_milli > 1:
        wrong = np.flatnonzero((v < 0) & (v % per_milli != 0))
        if len(wrong):
            raise NotYetSupported(f"column {name} holds {_text(int(v[wrong[0]]) * ns_per)}: pyarrow's ORC writer "
                                  "stores a time before 1970 with a fraction of a millisecond so that Java Paimon "
                                  "cannot read the file (negative nanoseconds): refused rather than written wrong")


def _check_column(path: str, column: str, stats: dict[int, Any] | None, why: str) -> None:
    if stats is not None and stats.get(1) == 0:
        return  # no value but nulls
    ts = None if stats is None else stats.get(9)
    # minimumUtc / maximumUtc (ORC-135), else the writer's local minimum / maximum of older
    # writers: milliseconds, within a day of what is read either way
    lo_ms, hi_ms = (3, 4) if ts is not None and 3 in ts and 4 in ts else (1, 2)
    if ts is None or lo_ms not in ts or hi_ms not in ts:
        if _pyarrow_checks():
            return
        raise NotYetSupported(f"{path}: column {column} is an ORC timestamp without statistics: whether it holds "
                              f"a value outside the nanosecond range {NS_RANGE} cannot be told: {why}")
    # minimumNanos / maximumNanos: the nanoseconds below the millisecond, plus 1 (0: absent);
    # int32 as a 64-bit varint, negative from pyarrow's writer before 1970 (see orc_format)
    low = zigzag(ts[lo_ms]) * 1_000_000 + (_int32(ts[5]) - 1 if ts.get(5) else 0)
    high = zigzag(ts[hi_ms]) * 1_000_000 + (_int32(ts[6]) - 1 if ts.get(6) else 999_999)
    for bound in (low, high):
        if bound < _MIN_NS or bound > _MAX_NS:
            raise _refusal(path, column, _text(bound), why)
    if low - _DAY_NS < _MIN_NS or high + _DAY_NS > _MAX_NS:
        if _pyarrow_checks():
            return
        edge = low if low - _DAY_NS < _MIN_NS else high
        raise NotYetSupported(f"{path}: column {column} holds {_text(edge)} (ORC statistics), within a day of the "
                              f"nanosecond range {NS_RANGE}: this pyarrow wraps beyond it and the exact value "
                              f"cannot be told from the statistics: {why}")


def _refusal(path: str, column: str, text: str, why: str) -> NotYetSupported:
    return NotYetSupported(f"{path}: column {column} holds {text} (ORC timestamp), outside the nanosecond range "
                           f"{NS_RANGE} this toolkit holds: {why}")


def _text(ns: int) -> str:
    return instant_text(*divmod(ns, 1_000_000_000))


def _subtypes(t: dict[int, Any]) -> list[int]:
    return [int(x) for x in t.get(2, [])]


def _timestamp_leaves(type_of: Callable[[int], dict[int, Any]], cid: int, name: str) -> list[tuple[str, int]]:
    """(dotted name, column id) of every timestamp in the subtree of column ``cid``."""
    t = type_of(cid)
    kind = t.get(1, 0)
    if kind in _TIMESTAMP_KINDS:
        return [(name, cid)]
    subs = _subtypes(t)
    if kind == _STRUCT:
        labels = [n.decode("utf-8", "replace") for n in t.get(3, [])]
    elif kind == _LIST:
        labels = ["element"]
    elif kind == _MAP:
        labels = ["key", "value"]
    elif kind == _UNION:
        labels = [str(i) for i in range(len(subs))]
    else:
        return []
    out: list[tuple[str, int]] = []
    for label, sub in zip(labels, subs, strict=False):
        out.extend(_timestamp_leaves(type_of, sub, f"{name}.{label}"))
    return out


# -- the file tail: PostScript, Footer (orc_proto.proto) ---------------------------------------


def _footer(f: pa.NativeFile, path: str) -> tuple[list[bytes], list[bytes]]:
    """The footer's types and per-column statistics, each an unparsed message."""
    size = f.size()
    tail = f.read_at(min(size, _TAIL_BYTES), max(0, size - _TAIL_BYTES))
    if not tail:
        raise CorruptMetadata(path, "empty ORC file")
    ps_len = tail[-1]
    if ps_len + 1 > len(tail):
        raise CorruptMetadata(path, "ORC postscript beyond the file")
    ps = _message(tail[len(tail) - 1 - ps_len:len(tail) - 1], path)
    footer_len, codec, block = int(ps.get(1, 0)), int(ps.get(2, _NONE)), int(ps.get(3, 256 << 10))
    end = len(tail) - 1 - ps_len
    if footer_len <= end:
        raw = tail[end - footer_len:end]
    else:
        start = size - 1 - ps_len - footer_len
        if start < 0:
            raise CorruptMetadata(path, "ORC footer beyond the file")
        raw = f.read_at(footer_len, start)
    footer = _message(_decompress(raw, codec, block, path), path, repeated=(3, 4, 7))
    return footer.get(4, []), footer.get(7, [])


def _decompress(raw: bytes, codec: int, block: int, path: str) -> bytes:
    """ORC's compression stream: chunks, each behind a 3-byte header (length << 1 | original)."""
    if codec == _NONE:
        return bytes(raw)
    import cramjam

    out, pos = [], 0
    while pos < len(raw):
        if pos + 3 > len(raw):
            raise CorruptMetadata(path, "truncated ORC compression chunk header")
        header = raw[pos] | raw[pos + 1] << 8 | raw[pos + 2] << 16
        n = header >> 1
        chunk = bytes(raw[pos + 3:pos + 3 + n])
        pos += 3 + n
        if len(chunk) != n:
            raise CorruptMetadata(path, "truncated ORC compression chunk")
        if header & 1:
            out.append(chunk)
            continue
        try:
            if codec == _ZLIB:
                out.append(zlib.decompress(chunk, -15))
            elif codec == _SNAPPY:
                out.append(bytes(cramjam.snappy.decompress_raw(chunk)))
            elif codec == _ZSTD:
                out.append(bytes(cramjam.zstd.decompress(chunk)))
            elif codec == _LZ4:
                buf = bytearray(block)
                used = cramjam.lz4.decompress_block_into(chunk, buf)
                out.append(bytes(buf[:used]))
            else:
                raise NotYetSupported(f"{path}: ORC compression {codec}: its timestamp statistics cannot be checked")
        except (zlib.error, cramjam.DecompressionError) as e:
            raise CorruptMetadata(path, f"cannot decompress the ORC footer: {e}") from e
    return b"".join(out)


def _varint(buf: Any, pos: int, path: str) -> tuple[int, int]:
    try:
        return varint(buf, pos)
    except IndexError:
        raise CorruptMetadata(path, "truncated ORC footer") from None


def _int32(n: int) -> int:
    return n - (1 << 64) if n >= 1 << 63 else n


def _message(buf: Any, path: str, repeated: tuple[int, ...] = (), nested: tuple[int, ...] = ()) -> dict[int, Any]:
    """A protobuf message as {field: value}: varints as ints, length-delimited as bytes (a list
    for ``repeated`` fields, a parsed message for ``nested`` ones); packed varints (a Type's
    subtypes) are unpacked into the list."""
    out: dict[int, Any] = {}
    pos = 0
    while pos < len(buf):
        key, pos = _varint(buf, pos, path)
        field, wire = key >> 3, key & 7
        value: Any
        if wire == 0:
            value, pos = _varint(buf, pos, path)
        elif wire == 2:
            n, pos = _varint(buf, pos, path)
            if pos + n > len(buf):
                raise CorruptMetadata(path, "truncated ORC footer")
            value = bytes(buf[pos:pos + n])
            pos += n
            if field in nested:
                value = _message(value, path)
        elif wire == 1:
            value, pos = int.from_bytes(buf[pos:pos + 8], "little"), pos + 8
        elif wire == 5:
            value, pos = int.from_bytes(buf[pos:pos + 4], "little"), pos + 4
        else:
            raise CorruptMetadata(path, f"ORC footer: protobuf wire type {wire}")
        if field in repeated:
            if wire == 2 and field == 2:  # packed subtypes
                packed, p = [], 0
                while p < len(value):
                    v, p = _varint(value, p, path)
                    packed.append(v)
                out.setdefault(field, []).extend(packed)
            else:
                out.setdefault(field, []).append(value)
        else:
            out[field] = value
    return out
