"""Avro container wrapper: codecs, Java-compact header, raw logical types, corrupt input."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from paimon_cli.core.avro import CODECS, NAMESPACE, read_avro, schema_json, write_avro
from paimon_cli.core.errors import CorruptMetadata, InvalidInput

SCHEMA = {
    "type": "record",
    "name": "record",
    "namespace": NAMESPACE,
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_NAME", "type": "string"},
        {"name": "_TIME", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}], "default": None},
        {"name": "_SUB", "type": {"type": "record", "name": "record__SUB",
                                  "fields": [{"name": "_B", "type": "bytes"}]}},
    ],
}
RECORDS = [
    {"_VERSION": 2, "_NAME": f"n{i}", "_TIME": None if i % 2 else 1_700_000_000_000 + i, "_SUB": {"_B": bytes([i])}}
    for i in range(50)
]


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec(codec: str) -> None:
    data = write_avro(SCHEMA, RECORDS, codec=codec)
    schema, records = read_avro(data, "f")
    assert schema == SCHEMA
    assert records == RECORDS  # timestamp-millis stays raw millis


@pytest.mark.parametrize("codec", ["null", "deflate", "snappy"])
def test_plain_fastavro_reads_our_files(codec: str) -> None:
    data = write_avro(SCHEMA, RECORDS, codec=codec)
    rdr = fastavro.reader(io.BytesIO(data))
    assert rdr.metadata["avro.codec"] == codec
    assert [r["_NAME"] for r in rdr] == [r["_NAME"] for r in RECORDS]


def test_header_is_compact_java_json_with_two_keys() -> None:
    data = write_avro(SCHEMA, [], codec="zstandard")
    meta = fastavro.reader(io.BytesIO(data)).metadata
    assert set(meta) == {"avro.schema", "avro.codec"}
    assert meta["avro.schema"] == schema_json(SCHEMA)
    assert " " not in meta["avro.schema"]
    assert meta["avro.schema"].startswith('{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated"')
    assert meta["avro.codec"] == "zstandard"
    assert read_avro(data, "f") == (SCHEMA, [])


def test_zstandard_reads_fastavro_independent_multi_frame() -> None:
    # Java's zstd output stream may not record the content size; stream decoding copes.
    import zstandard

    from paimon_cli.core import avro

    raw = write_avro(SCHEMA, RECORDS, codec="null")
    meta, sync, blocks = avro._parse_container(raw)
    cobj = zstandard.ZstdCompressor(level=3, write_content_size=False)
    frames = [(n, cobj.compress(p)) for n, p in blocks]
    rebuilt = avro._container([("avro.schema", meta["avro.schema"]), ("avro.codec", b"zstandard")], sync, frames)
    assert read_avro(rebuilt, "f")[1] == RECORDS


def test_top_level_null_union_02_era() -> None:
    union = ["null", SCHEMA]
    data = write_avro(union, [RECORDS[0], None, RECORDS[1]], codec="snappy")
    schema, records = read_avro(data, "old")
    assert schema == json.loads(json.dumps(union))
    assert records == RECORDS[:2]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "not an Avro container"),
        (b"PAR1xxxx", "not an Avro container"),
        (None, "sync marker"),
        (None, "truncated"),
    ],
)
def test_corrupt_input_is_one_line_corrupt_metadata(data: bytes | None, problem: str) -> None:
    good = write_avro(SCHEMA, RECORDS, codec="deflate")
    if data is None and problem == "sync marker":
        data = good[:-1] + bytes([good[-1] ^ 0xFF])
    elif data is None:
        data = good[:-30]
    with pytest.raises(CorruptMetadata) as ei:
        read_avro(data, "manifest/manifest-abc-0")
    assert ei.value.path == "manifest/manifest-abc-0"
    assert problem in str(ei.value) and "\n" not in str(ei.value)


def test_bad_block_payload_is_corrupt() -> None:
    good = bytearray(write_avro(SCHEMA, RECORDS, codec="zstandard"))
    good[-40] ^= 0xFF  # inside the compressed block
    with pytest.raises(CorruptMetadata):
        read_avro(bytes(good), "f")


def test_unknown_codec_refused() -> None:
    with pytest.raises(InvalidInput):
        write_avro(SCHEMA, [], codec="lzma")
