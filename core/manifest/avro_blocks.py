"""The header and block counts of an Avro container file, without decoding a record.

Why: the columnar path decodes several manifests in one polars-avro call (its per-call cost
is about a third of a 1,000-entry manifest's decode) and must then cut the result back into
files; each block header states its record count, so the cut is exact before any decoding.
Anything unexpected returns None and the caller decodes file by file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

MAGIC = b"Obj\x01"
_SYNC_SIZE = 16


@dataclass(frozen=True)
class ContainerInfo:
    schema: Any  # the writer schema, parsed
    schema_text: bytes  # as stored: files with equal text decode to the same Arrow schema
    records: int


def _long(buf: bytes, pos: int) -> tuple[int, int]:
    """An Avro zig-zag varint at ``pos``: (value, next position); IndexError past the end."""
    shift = result = 0
    while True:
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise ValueError("varint too long")


def _bytes(buf: bytes, pos: int) -> tuple[bytes, int]:
    n, pos = _long(buf, pos)
    if n < 0 or pos + n > len(buf):
        raise ValueError("bad length")
    return buf[pos:pos + n], pos + n


def _header(raw: bytes) -> tuple[dict[bytes, bytes], int]:
    """The metadata map and the position after the sync marker."""
    meta: dict[bytes, bytes] = {}
    pos = len(MAGIC)
    while True:
        count, pos = _long(raw, pos)
        if count == 0:
            return meta, pos + _SYNC_SIZE
        if count < 0:  # a negative count is followed by the block's byte size
            count = -count
            _, pos = _long(raw, pos)
        for _ in range(count):
            key, pos = _bytes(raw, pos)
            meta[key], pos = _bytes(raw, pos)


def container_info(raw: bytes) -> ContainerInfo | None:
    """Writer schema and record count of a whole, well-formed container file; None otherwise."""
    if raw[:4] != MAGIC:
        return None
    try:
        meta, pos = _header(raw)
        sync = raw[pos - _SYNC_SIZE:pos]
        records = 0
        while pos < len(raw):
            count, pos = _long(raw, pos)
            size, pos = _long(raw, pos)
            pos += size
            if count < 0 or size < 0 or raw[pos:pos + _SYNC_SIZE] != sync:
                return None
            pos += _SYNC_SIZE
            records += count
        text = meta[b"avro.schema"]
        return ContainerInfo(json.loads(text), text, records)
    except (IndexError, ValueError, KeyError):  # truncated, garbled, no schema (JSONDecodeError is a ValueError)
        return None
