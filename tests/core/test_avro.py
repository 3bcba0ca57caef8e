"""Avro container wrapper over fastavro: codecs, header schema, logical types, corrupt input."""

from __future__ import annotations

import io
import json

import fastavro
import pytest

from paimon_cli.core.errors import CorruptMetadata, InvalidInput
from paimon_cli.core.manifest.avro import CODECS, NAMESPACE, epoch_millis, read_avro, schema_json, write_avro

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


def _raw(records: list[dict]) -> list[dict]:
    """fastavro hands timestamp-millis back as UTC datetimes; map them to the stored long."""
    return [{**r, "_TIME": epoch_millis(r["_TIME"])} for r in records]


@pytest.mark.parametrize("codec", CODECS)
def test_round_trip_every_codec(codec: str) -> None:
    data = write_avro(SCHEMA, RECORDS, codec=codec)
    schema, records = read_avro(data, "f")
    assert schema == SCHEMA
    assert _raw(records) == RECORDS


@pytest.mark.parametrize("codec", CODECS)
def test_plain_fastavro_reads_our_files(codec: str) -> None:
    data = write_avro(SCHEMA, RECORDS, codec=codec)
    rdr = fastavro.reader(io.BytesIO(data))
    assert rdr.metadata["avro.codec"] == codec
    assert [r["_NAME"] for r in rdr] == [r["_NAME"] for r in RECORDS]


@pytest.mark.parametrize("codec", CODECS)
def test_we_read_plain_fastavro_files(codec: str) -> None:
    buf = io.BytesIO()
    fastavro.writer(buf, fastavro.parse_schema(SCHEMA), RECORDS, codec=codec, sync_interval=100)
    schema, records = read_avro(buf.getvalue(), "f")
    assert schema["fields"][0] == SCHEMA["fields"][0]
    assert _raw(records) == RECORDS  # several blocks (tiny sync interval)


def test_blocks_follow_java_sync_interval() -> None:
    data = write_avro(SCHEMA, RECORDS * 200, codec="zstandard")
    blocks = list(fastavro.block_reader(io.BytesIO(data)))
    assert len(blocks) > 1
    assert all(len(b.bytes_.getvalue()) >= 64_000 for b in blocks[:-1])  # fastavro's default is 16 kB
    assert _raw(read_avro(data, "f")[1]) == RECORDS * 200


def test_header_keeps_java_names_and_two_keys() -> None:
    data = write_avro(SCHEMA, [], codec="zstandard")
    meta = fastavro.reader(io.BytesIO(data)).metadata
    assert set(meta) == {"avro.schema", "avro.codec"}
    # fastavro prints the schema with json.dumps' default ", "/": " separators, so the text is
    # not Java's compact Schema.toString(); Java parses it and matches fields by name, so what
    # must agree is the parsed schema: same fields, types, record names, namespace and key order.
    assert json.loads(meta["avro.schema"]) == SCHEMA
    assert list(json.loads(meta["avro.schema"])) == ["type", "name", "namespace", "fields"]
    assert json.dumps(json.loads(meta["avro.schema"]), separators=(",", ":")) == schema_json(SCHEMA)
    assert schema_json(SCHEMA).startswith('{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated"')
    assert meta["avro.codec"] == "zstandard"
    assert read_avro(data, "f") == (SCHEMA, [])


def test_zstandard_multi_frame_without_content_size() -> None:
    # Java's zstd output stream does not record the content size and a block may hold
    # several frames; fastavro's zstandard codec (backports.zstd) must cope. The file is
    # assembled from a header-only file plus re-compressed blocks of a null-codec file.
    from backports import zstd
    from fastavro.io.binary_encoder import BinaryEncoder

    head = write_avro(SCHEMA, [], codec="zstandard")
    sync = head[-16:]
    out = io.BytesIO(head)
    out.seek(0, io.SEEK_END)
    enc = BinaryEncoder(out)
    for block in fastavro.block_reader(io.BytesIO(write_avro(SCHEMA, RECORDS, codec="null"))):
        raw = block.bytes_.getvalue()
        c = zstd.ZstdCompressor(level=3)
        payload = c.compress(raw[:40]) + c.flush(zstd.ZstdCompressor.FLUSH_FRAME)
        payload += c.compress(raw[40:]) + c.flush(zstd.ZstdCompressor.FLUSH_FRAME)
        assert zstd.get_frame_info(payload).decompressed_size is None
        enc.write_long(block.num_records)
        enc.write_long(len(payload))
        out.write(payload)
        out.write(sync)
    assert _raw(read_avro(out.getvalue(), "f")[1]) == RECORDS


def test_top_level_null_union_02_era() -> None:
    union = ["null", SCHEMA]
    data = write_avro(union, [RECORDS[0], None, RECORDS[1]], codec="snappy")
    schema, records = read_avro(data, "old")
    assert schema == json.loads(json.dumps(union))
    assert _raw(records) == RECORDS[:2]


@pytest.mark.parametrize(
    ("data", "problem"),
    [
        (b"", "not an Avro container"),
        (b"PAR1xxxx", "not an Avro container"),
        (b"Obj\x01", "cannot read header"),
        (None, "sync marker"),
        (None, "cannot decode Avro"),
    ],
)
def test_corrupt_input_is_one_line_corrupt_metadata(data: bytes | None, problem: str) -> None:
    good = write_avro(SCHEMA, RECORDS, codec="deflate")
    if data is None and problem == "sync marker":
        data = good[:-1] + bytes([good[-1] ^ 0xFF])
    elif data is None:
        data = good[:-30]  # truncated inside the last block
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


def test_epoch_millis_inverts_fastavro_timestamps() -> None:
    schema, records = read_avro(write_avro(SCHEMA, RECORDS), "f")
    assert records[0]["_TIME"].tzinfo is not None
    assert [epoch_millis(r["_TIME"]) for r in records] == [r["_TIME"] for r in RECORDS]
    assert epoch_millis(-1) == -1 and epoch_millis(None) is None
