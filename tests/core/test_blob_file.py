"""The ``.blob`` file byte layout (Paimon 1.4+ ``BlobFormatWriter``) and ``BlobDescriptor``.

Facts from the upstream spec (research notes §5.3/§5.4): records ``magic | bytes | int64 LE
record length | CRC32``, then a delta/ZigZag/LEB128 index of record lengths (-1 NULL, -2
placeholder), ``int32 LE`` index length and version byte 1. The 3-row file below is the
one pypaimon 2.1 writes for ``[b"hello", None, 30 bytes]``; the descriptor bytes are
upstream's compatibility fixture ``paimon-common/src/test/resources/compatible/blob_descriptor_v1``.
"""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path

import numpy as np
import pytest

from paimon_cli.core.errors import CorruptMetadata, NotYetSupported
from paimon_cli.core.format.blob_file import (
    BlobDescriptor,
    BlobIndex,
    blob_values,
    decode_index,
    encode_index,
    read_blob_index,
    write_blob_bytes,
)
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.operation.blob_read import check_blob_read
from paimon_cli.core.schema.table_schema import TableSchema

PYPAIMON_3_ROWS = bytes.fromhex(
    "cf114e58" "68656c6c6f" "1500000000000000" "c8f6a751"
    "cf114e58" + "78" * 30 + "2e00000000000000" "cf42c0ad"
    "2a2b5e" "03000000" "01")
DESCRIPTOR_V1_FIXTURE = bytes.fromhex("010a0000002f746573742f70617468" "6400000000000000" "c800000000000000")


def _file(tmp_path: Path, data: bytes) -> tuple[FileIO, str]:
    p = tmp_path / "data-x-0.blob"
    p.write_bytes(data)
    return FileIO(str(tmp_path)), str(p)


def test_writer_matches_the_spec_byte_for_byte() -> None:
    assert write_blob_bytes([b"hello", None, b"x" * 30]) == PYPAIMON_3_ROWS
    head = PYPAIMON_3_ROWS[:17]  # magic, bytes, record length: the CRC covers exactly these
    assert struct.unpack("<I", PYPAIMON_3_ROWS[17:21])[0] == zlib.crc32(head)


def test_index_is_delta_zigzag_varint() -> None:
    assert encode_index(np.array([21, -1, 46])) == bytes([0x2A, 0x2B, 0x5E])
    values = np.array([16, 16, -1, -2, 300, 70_000, -1, 2**40, 16], dtype=np.int64)
    assert decode_index(encode_index(values)).tolist() == values.tolist()
    assert decode_index(b"").tolist() == []
    with pytest.raises(CorruptMetadata, match="truncated"):
        decode_index(b"\x80")


def test_read_values_as_bytes_size_and_descriptor(tmp_path: Path) -> None:
    fio, path = _file(tmp_path, PYPAIMON_3_ROWS)
    idx = read_blob_index(fio, path)
    assert idx.lengths.tolist() == [21, -1, 46] and idx.offsets.tolist() == [0, 21, 21]
    rows = np.arange(3)
    assert blob_values(fio, path, idx, rows, "bytes").to_pylist() == [b"hello", None, b"x" * 30]
    assert blob_values(fio, path, idx, rows, "size").to_pylist() == [5, None, 30]
    desc = blob_values(fio, path, idx, rows, "descriptor").to_pylist()
    assert desc[1] is None
    assert desc[2] == {"uri": fio.absolute(path), "offset": 25, "length": 30}
    assert PYPAIMON_3_ROWS[25:55] == b"x" * 30  # the descriptor points at the blob bytes
    assert blob_values(fio, path, idx, np.array([2]), "bytes").to_pylist() == [b"x" * 30]
    assert blob_values(fio, path, idx, np.array([0, 2]), "bytes").to_pylist() == [b"hello", b"x" * 30]


def test_empty_blob_and_placeholder_rows(tmp_path: Path) -> None:
    data = write_blob_bytes([b"", b"ab"])
    fio, path = _file(tmp_path, data)
    idx = read_blob_index(fio, path)
    assert blob_values(fio, path, idx, np.arange(2), "bytes").to_pylist() == [b"", b"ab"]
    # a placeholder row (-2) takes no bytes and reads as NULL from this file
    index = encode_index(np.array([-2, 18]))
    records = data[16:34]  # the record of b"ab"
    fio, path = _file(tmp_path, records + index + struct.pack("<iB", len(index), 1))
    idx = read_blob_index(fio, path)
    assert idx.lengths.tolist() == [-2, 18]
    assert blob_values(fio, path, idx, np.arange(2), "bytes").to_pylist() == [None, b"ab"]


@pytest.mark.parametrize("mutate, message", [
    (lambda b: b[:-1] + b"\x02", "version 2"),
    (lambda b: b[:-5] + struct.pack("<iB", 99, 1), "records fill|outside"),
    (lambda b: b"\x00" + b, "records fill"),
    (lambda b: b[:2], "too short"),
])
def test_invalid_files_are_refused_as_corrupt(tmp_path: Path, mutate, message: str) -> None:  # type: ignore[no-untyped-def]
    fio, path = _file(tmp_path, mutate(PYPAIMON_3_ROWS))
    with pytest.raises(CorruptMetadata, match=message):
        read_blob_index(fio, path)


def test_bad_magic_is_corrupt(tmp_path: Path) -> None:
    fio, path = _file(tmp_path, b"\x00" + PYPAIMON_3_ROWS[1:])
    idx = read_blob_index(fio, path)
    with pytest.raises(CorruptMetadata, match="magic"):
        blob_values(fio, path, idx, np.arange(3), "bytes")
    assert isinstance(idx, BlobIndex)


def test_descriptor_v1_fixture_and_v2_round_trip() -> None:
    d = BlobDescriptor.deserialize(DESCRIPTOR_V1_FIXTURE)
    assert (d.version, d.uri, d.offset, d.length) == (1, "/test/path", 100, 200)
    assert d.serialize() == DESCRIPTOR_V1_FIXTURE
    v2 = BlobDescriptor("file:/wh/db.db/t/bucket-0/data-1-0.blob", 4, 5)
    data = v2.serialize()
    assert data[:9] == b"\x02" + b"CSEDBOLB"  # version 2, magic "BLOBDESC" little-endian
    assert len(data) == 29 + len(v2.uri) and BlobDescriptor.deserialize(data) == v2
    for bad in (b"", b"\x03" + data[1:], data[:1] + b"\x00" * 8 + data[9:], data[:-3]):
        with pytest.raises(CorruptMetadata):
            BlobDescriptor.deserialize(bad)


@pytest.mark.parametrize("options, fields, message", [
    ({"blob-descriptor-field": "pic"}, [("pic", "BLOB")], "blob-descriptor-field"),
    ({"blob-view-field": "pic"}, [("pic", "BLOB")], "blob-view-field"),
    ({}, [("pics", "ARRAY<BLOB>")], "nested in ARRAY"),
])
def test_blob_layouts_a_read_cannot_decode_are_refused_by_name(options: dict[str, str],
                                                               fields: list[tuple[str, str]], message: str) -> None:
    schema = TableSchema.from_json(json.dumps({
        "version": 3, "id": 0, "highestFieldId": len(fields),
        "fields": [{"id": 0, "name": "id", "type": "BIGINT"}] +
                  [{"id": i + 1, "name": n, "type": t} for i, (n, t) in enumerate(fields)],
        "partitionKeys": [], "primaryKeys": [], "timeMillis": 0,
        "options": {"row-tracking.enabled": "true", "data-evolution.enabled": "true", **options}}), "schema-0")
    with pytest.raises(NotYetSupported, match=message):
        check_blob_read(schema)
