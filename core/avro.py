"""Thin fastavro wrapper for Paimon's manifest-type Avro container files.

Why a wrapper: (1) every decode failure must become one ``CorruptMetadata`` line naming the
file; (2) fastavro would turn ``timestamp-millis`` into datetimes, but ``_CREATION_TIME``
is a wall clock stored as UTC millis, so we read logical types as their raw ints;
(3) Java writes the header schema as compact JSON (no spaces) and fastavro does not, so
the header is re-emitted with Java's exact text for byte-comparable files.
"""

from __future__ import annotations

import io
import json
from typing import Any

from .errors import CorruptMetadata, InvalidInput

AVRO_MAGIC = b"Obj\x01"
JAVA_SYNC_INTERVAL = 64_000  # Avro Java DataFileConstants.DEFAULT_SYNC_INTERVAL
NAMESPACE = "org.apache.paimon.avro.generated"
CODECS = ("null", "deflate", "snappy", "zstandard")


def schema_json(schema: Any) -> str:
    """Compact JSON exactly as Avro Java's ``Schema.toString()`` prints a schema we built
    in Java's key order (``type``, ``name``, ``namespace``, ``fields``; ``name``, ``type``,
    ``default``)."""
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def _strip_logical(schema: Any) -> Any:
    """Copy of ``schema`` without logicalType annotations, so values decode as raw ints/bytes."""
    if isinstance(schema, list):
        return [_strip_logical(s) for s in schema]
    if isinstance(schema, dict):
        out = {k: _strip_logical(v) for k, v in schema.items() if k != "logicalType"}
        if "fields" in schema:
            out["fields"] = [
                {**{k: v for k, v in f.items() if k != "type"}, "type": _strip_logical(f["type"])}
                for f in schema["fields"]
            ]
        if set(out) == {"type"} and isinstance(out["type"], str):
            return out["type"]
        return out
    return schema


def _read_long(buf: bytes, pos: int) -> tuple[int, int]:
    """Avro zig-zag varint at ``pos``; returns (value, next position)."""
    shift = result = 0
    while True:
        if pos >= len(buf):
            raise ValueError("truncated varint")
        b = buf[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if not b & 0x80:
            break
        shift += 7
    return (result >> 1) ^ -(result & 1), pos


def _write_long(n: int) -> bytes:
    n = (n << 1) ^ (n >> 63)
    out = bytearray()
    while n & ~0x7F:
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _encode_header(meta: list[tuple[str, bytes]]) -> bytes:
    out = bytearray(AVRO_MAGIC)
    out += _write_long(len(meta))
    for k, v in meta:
        kb = k.encode()
        out += _write_long(len(kb)) + kb + _write_long(len(v)) + v
    out += _write_long(0)
    return bytes(out)


def _decompress(codec: str, data: bytes) -> bytes:
    if codec == "null":
        return data
    if codec == "deflate":
        import zlib

        return zlib.decompress(data, -15)
    if codec == "snappy":
        import zlib

        import cramjam

        raw = bytes(cramjam.snappy.decompress_raw(data[:-4]))
        if zlib.crc32(raw) != int.from_bytes(data[-4:], "big"):
            raise ValueError("snappy block CRC mismatch")
        return raw
    if codec == "zstandard":
        import zstandard

        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(data), read_across_frames=True) as r:
            return r.read()
    raise ValueError(f"unsupported Avro codec {codec!r}")


def _compress(codec: str, data: bytes) -> bytes:
    if codec == "null":
        return data
    if codec == "deflate":
        import zlib

        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        return c.compress(data) + c.flush()
    if codec == "snappy":
        import zlib

        import cramjam

        return bytes(cramjam.snappy.compress_raw(data)) + zlib.crc32(data).to_bytes(4, "big")
    if codec == "zstandard":
        import zstandard

        return zstandard.ZstdCompressor(level=1).compress(data)
    raise InvalidInput(f"unsupported Avro codec {codec!r} (choose from {', '.join(CODECS)})")


def _parse_container(buf: bytes) -> tuple[dict[str, bytes], bytes, list[tuple[int, bytes]]]:
    """(metadata, sync marker, [(record count, still-compressed block payload)])."""
    if buf[:4] != AVRO_MAGIC:
        raise ValueError(f"not an Avro container file (magic {buf[:4].hex() or 'empty'})")
    meta: dict[str, bytes] = {}
    pos = 4
    while True:
        count, pos = _read_long(buf, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = _read_long(buf, pos)
        for _ in range(count):
            n, pos = _read_long(buf, pos)
            key = buf[pos : pos + n].decode()
            pos += n
            n, pos = _read_long(buf, pos)
            meta[key] = buf[pos : pos + n]
            pos += n
    sync = buf[pos : pos + 16]
    if len(sync) != 16:
        raise ValueError("truncated header (no sync marker)")
    pos += 16
    blocks: list[tuple[int, bytes]] = []
    while pos < len(buf):
        count, pos = _read_long(buf, pos)
        size, pos = _read_long(buf, pos)
        if count < 0 or size < 0 or pos + size + 16 > len(buf):
            raise ValueError(f"truncated or invalid data block at byte {pos}")
        blocks.append((count, buf[pos : pos + size]))
        pos += size
        if buf[pos : pos + 16] != sync:
            raise ValueError(f"sync marker mismatch at byte {pos}")
        pos += 16
    return meta, sync, blocks


def _container(meta: list[tuple[str, bytes]], sync: bytes, blocks: list[tuple[int, bytes]]) -> bytes:
    out = bytearray(_encode_header(meta))
    out += sync
    for count, payload in blocks:
        out += _write_long(count) + _write_long(len(payload)) + payload + sync
    return bytes(out)


def read_avro(data: bytes, path: str) -> tuple[Any, list[dict[str, Any]]]:
    """Return (writer schema as JSON object, records as dicts keyed by field name).

    Blocks are decompressed here (so no codec library is needed inside fastavro) and
    re-framed as a null-codec file whose header schema has its logical types stripped;
    fastavro then decodes the records. Null records of a 0.2-era top-level
    ``["null", record]`` union are dropped.
    """
    import fastavro

    try:
        meta, sync, blocks = _parse_container(bytes(data))
        codec = meta.get("avro.codec", b"null").decode()
        if codec not in CODECS:
            raise ValueError(f"unsupported Avro codec {codec!r}")
        if "avro.schema" not in meta:
            raise ValueError("header has no avro.schema")
        writer_schema = json.loads(meta["avro.schema"])
        plain = _container(
            [("avro.schema", schema_json(_strip_logical(writer_schema)).encode()), ("avro.codec", b"null")],
            sync,
            [(n, _decompress(codec, payload)) for n, payload in blocks],
        )
        records = [r for r in fastavro.reader(io.BytesIO(plain)) if r is not None]
    except CorruptMetadata:
        raise
    except Exception as e:  # fastavro/codecs raise many kinds (ValueError, EOFError, KeyError, ZstdError)
        msg = str(e).splitlines()[0] if str(e) else type(e).__name__
        raise CorruptMetadata(path, f"cannot decode Avro: {msg}") from e
    return writer_schema, records


def write_avro(schema: Any, records: list[dict[str, Any]], codec: str = "zstandard") -> bytes:
    """An Avro container file of ``records``; header = {avro.schema: compact JSON, avro.codec}.

    fastavro encodes the records into uncompressed blocks; we compress them (zstd level 1,
    Paimon's ``file.compression.zstd-level`` default) and write Java's compact header.
    """
    import fastavro

    if codec not in CODECS:
        raise InvalidInput(f"unsupported Avro codec {codec!r} (choose from {', '.join(CODECS)})")
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(schema), records, codec="null", sync_interval=JAVA_SYNC_INTERVAL)
    _, sync, blocks = _parse_container(buf.getvalue())
    header = [("avro.schema", schema_json(schema).encode()), ("avro.codec", codec.encode())]
    return _container(header, sync, [(n, _compress(codec, payload)) for n, payload in blocks])
