"""Manifest lists and files: Java-exact schemas on write, every 0.8..master layout on read."""

from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

import fastavro
import pytest

from paimon_cli.core.data import binary_row as br
from paimon_cli.core.data.types import DataField, IntType, RowType, VarCharType
from paimon_cli.core.errors import CorruptMetadata, NotYetSupported
from paimon_cli.core.io.fileio import FileIO, join
from paimon_cli.core.manifest.avro import write_avro
from paimon_cli.core.manifest.expire_file_entry import read_expire_file_entries
from paimon_cli.core.manifest.manifest import (
    DATA_FILE_SCHEMA,
    MANIFEST_LIST_SCHEMA,
    MANIFEST_SCHEMA,
    DataFileMeta,
    FileKind,
    FileSource,
    ManifestEntry,
    ManifestFile,
    ManifestFileMeta,
    ManifestList,
    SimpleStats,
    partition_stats,
)

# FORMAT-FACTS 5.2 / 5.3, the schema texts Java wrote (fixture-verified there); the manifest's
# last field, _WRITE_COLS_SEQUENCES, is Java master's (DataFileMeta field 20, 2.1) and pypaimon 2.1's.
JAVA_LIST_SCHEMA = (
    '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_NUM_ADDED_FILES","type":"long"},{"name":"_NUM_DELETED_FILES","type":"long"},{"name":"_PARTITION_STATS","type":{"type":"record","name":"record__PARTITION_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_SCHEMA_ID","type":"long"},{"name":"_MIN_BUCKET","type":["null","int"],"default":null},{"name":"_MAX_BUCKET","type":["null","int"],"default":null},{"name":"_MIN_LEVEL","type":["null","int"],"default":null},{"name":"_MAX_LEVEL","type":["null","int"],"default":null},{"name":"_MIN_ROW_ID","type":["null","long"],"default":null},{"name":"_MAX_ROW_ID","type":["null","long"],"default":null}]}'
)
JAVA_MANIFEST_SCHEMA = (
    '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_TOTAL_BUCKETS","type":"int"},{"name":"_FILE","type":{"type":"record","name":"record__FILE","fields":[{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_MIN_KEY","type":"bytes"},{"name":"_MAX_KEY","type":"bytes"},{"name":"_KEY_STATS","type":{"type":"record","name":"record__FILE__KEY_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_VALUE_STATS","type":{"type":"record","name":"record__FILE__VALUE_STATS","fields":[{"name":"_MIN_VALUES","type":"bytes"},{"name":"_MAX_VALUES","type":"bytes"},{"name":"_NULL_COUNTS","type":["null",{"type":"array","items":["null","long"]}],"default":null}]}},{"name":"_MIN_SEQUENCE_NUMBER","type":"long"},{"name":"_MAX_SEQUENCE_NUMBER","type":"long"},{"name":"_SCHEMA_ID","type":"long"},{"name":"_LEVEL","type":"int"},{"name":"_EXTRA_FILES","type":{"type":"array","items":"string"}},{"name":"_CREATION_TIME","type":["null",{"type":"long","logicalType":"timestamp-millis"}],"default":null},{"name":"_DELETE_ROW_COUNT","type":["null","long"],"default":null},{"name":"_EMBEDDED_FILE_INDEX","type":["null","bytes"],"default":null},{"name":"_FILE_SOURCE","type":["null","int"],"default":null},{"name":"_VALUE_STATS_COLS","type":["null",{"type":"array","items":"string"}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_FIRST_ROW_ID","type":["null","long"],"default":null},{"name":"_WRITE_COLS","type":["null",{"type":"array","items":"string"}],"default":null},{"name":"_WRITE_COLS_SEQUENCES","type":["null",{"type":"array","items":"long"}],"default":null}]}}]}'
)

PART_TYPE = RowType((DataField(0, "dt", VarCharType()), DataField(1, "hr", IntType())))
PT = [VarCharType(), IntType()]


def _header(data: bytes) -> dict[str, bytes]:
    return fastavro.reader(io.BytesIO(data)).metadata  # type: ignore[return-value]


def _compact(schema_text: str) -> str:
    return json.dumps(json.loads(schema_text), separators=(",", ":"))


def _raw_records(data: bytes) -> list[dict]:
    """Plain fastavro, without our reader (needs no zstd: callers write with a codec it has)."""
    return list(fastavro.reader(io.BytesIO(data)))


def _file(name: str, **kw: object) -> DataFileMeta:
    base: dict = dict(
        file_name=name,
        file_size=1234,
        row_count=10,
        min_key=br.serialize([1], [IntType()]),
        max_key=br.serialize([9], [IntType()]),
        key_stats=SimpleStats(br.serialize([1], [IntType()]), br.serialize([9], [IntType()]), [0]),
        value_stats=SimpleStats(br.EMPTY_ROW, br.EMPTY_ROW, []),
        min_sequence_number=0,
        max_sequence_number=9,
        schema_id=0,
        level=0,
    )
    base.update(kw)
    return DataFileMeta(**base)


def _entry(kind: FileKind, part: list, bucket: int, f: DataFileMeta) -> ManifestEntry:
    return ManifestEntry(kind, br.serialize(part, PT), bucket, 4, f)


@pytest.fixture()
def fio(tmp_path: Path) -> FileIO:
    return FileIO(str(tmp_path))


def test_schema_text_is_java_exact(fio: FileIO, tmp_path: Path) -> None:
    mf = ManifestFile(fio, str(tmp_path), PART_TYPE, codec="null")
    meta = mf.write([_entry(FileKind.ADD, ["2024-01-01", 1], 0, _file("data-a.parquet"))], schema_id=0)
    data = fio.read_bytes(join(str(tmp_path), meta.file_name))
    # fastavro prints the header schema with ", "/": " separators; Java matches fields by name,
    # so only the whitespace may differ from Java's compact text.
    assert _compact(_header(data)["avro.schema"]) == JAVA_MANIFEST_SCHEMA
    assert _header(data)["avro.codec"] == "null"
    ml = ManifestList(fio, str(tmp_path), codec="null")
    name, size = ml.write([meta])
    data = fio.read_bytes(join(str(tmp_path), name))
    assert len(data) == size
    assert _compact(_header(data)["avro.schema"]) == JAVA_LIST_SCHEMA


def test_default_codec_is_zstandard(fio: FileIO, tmp_path: Path) -> None:
    name, _ = ManifestList(fio, str(tmp_path)).write([])
    raw = fio.read_bytes(join(str(tmp_path), name))
    assert b"avro.codec\x12zstandard" in raw
    assert ManifestList(fio, str(tmp_path)).read(name) == []


def test_file_names_use_uuid_and_counter(fio: FileIO, tmp_path: Path) -> None:
    ml = ManifestList(fio, str(tmp_path))
    n0, _ = ml.write([])
    n1, _ = ml.write([])
    m = re.fullmatch(r"manifest-list-([0-9a-f-]{36})-0", n0)
    assert m and n1 == f"manifest-list-{m.group(1)}-1"
    mf = ManifestFile(fio, str(tmp_path))
    assert re.fullmatch(r"manifest-[0-9a-f-]{36}-0", mf.write([], 3).file_name)


def test_manifest_written_fields_read_back_with_plain_fastavro(fio: FileIO, tmp_path: Path) -> None:
    f = _file(
        "data-b.parquet",
        extra_files=("data-b.parquet.index",),
        creation_time=1_700_000_000_123,
        delete_row_count=2,
        embedded_index=b"\x01\x02",
        file_source=FileSource.COMPACT,
        value_stats_cols=("id",),
        external_path="s3://x/data-b.parquet",
        first_row_id=100,
        write_cols=("id", "v"),
        level=5,
        schema_id=3,
    )
    entries = [
        _entry(FileKind.DELETE, ["2024-01-01", 1], 2, _file("data-a.parquet")),
        _entry(FileKind.ADD, ["2024-01-02", None], 3, f),
    ]
    mf = ManifestFile(fio, str(tmp_path), PART_TYPE, codec="deflate")
    meta = mf.write(entries, schema_id=7)
    raw = _raw_records(fio.read_bytes(join(str(tmp_path), meta.file_name)))
    assert [r["_VERSION"] for r in raw] == [2, 2]
    assert [r["_KIND"] for r in raw] == [1, 0]
    assert raw[0]["_PARTITION"] == br.serialize(["2024-01-01", 1], PT)
    assert raw[0]["_FILE"]["_EXTRA_FILES"] == []  # never null
    assert raw[0]["_FILE"]["_CREATION_TIME"] is None
    assert raw[0]["_FILE"]["_VALUE_STATS_COLS"] is None
    rf = raw[1]["_FILE"]
    assert list(rf) == [fld["name"] for fld in DATA_FILE_SCHEMA["fields"]]
    assert rf["_EXTRA_FILES"] == ["data-b.parquet.index"]
    assert int(rf["_CREATION_TIME"].timestamp() * 1000) == 1_700_000_000_123
    assert rf["_DELETE_ROW_COUNT"] == 2
    assert rf["_EMBEDDED_FILE_INDEX"] == b"\x01\x02"
    assert rf["_FILE_SOURCE"] == 1
    assert rf["_VALUE_STATS_COLS"] == ["id"]
    assert rf["_EXTERNAL_PATH"] == "s3://x/data-b.parquet"
    assert rf["_FIRST_ROW_ID"] == 100
    assert rf["_WRITE_COLS"] == ["id", "v"]
    assert rf["_KEY_STATS"]["_NULL_COUNTS"] == [0]
    assert rf["_LEVEL"] == 5
    # Our reader gives back exactly what we wrote.
    assert mf.read(meta.file_name) == entries

    # The computed ManifestFileMeta (Java ManifestAvroWriter semantics).
    assert meta.num_added_files == 1 and meta.num_deleted_files == 1
    assert meta.schema_id == 3
    assert (meta.min_bucket, meta.max_bucket, meta.min_level, meta.max_level) == (2, 3, 0, 5)
    assert meta.min_row_id is None and meta.max_row_id is None  # one entry has no first_row_id
    ps = meta.partition_stats
    assert br.deserialize(ps.min_values, PT) == ["2024-01-01", 1]
    assert br.deserialize(ps.max_values, PT) == ["2024-01-02", 1]
    assert ps.null_counts == [0, 1]


def test_manifest_meta_row_ids_and_empty(fio: FileIO, tmp_path: Path) -> None:
    mf = ManifestFile(fio, str(tmp_path), PART_TYPE)
    entries = [
        _entry(FileKind.ADD, ["a", 1], 0, _file("f1", first_row_id=10, row_count=5)),
        _entry(FileKind.ADD, ["a", 1], 0, _file("f2", first_row_id=0, row_count=3)),
    ]
    meta = mf.write(entries, 0)
    assert (meta.min_row_id, meta.max_row_id) == (0, 14)
    empty = mf.write([], schema_id=9)
    assert empty.schema_id == 9 and empty.min_bucket is None
    assert empty.partition_stats.null_counts == [0, 0]


def test_unpartitioned_partition_stats() -> None:
    s = partition_stats([br.EMPTY_ROW, br.EMPTY_ROW], None)
    assert s == SimpleStats(br.EMPTY_ROW, br.EMPTY_ROW, [])


def test_manifest_list_round_trip_plain_fastavro(fio: FileIO, tmp_path: Path) -> None:
    metas = [
        ManifestFileMeta("manifest-x-0", 100, 3, 1, SimpleStats(br.EMPTY_ROW, br.EMPTY_ROW, []), 2, 0, 3, 0, 5),
        ManifestFileMeta("manifest-x-1", 200, 1, 0, SimpleStats(br.EMPTY_ROW, br.EMPTY_ROW, None), 2, None, None,
                         None, None, 5, 9),
    ]
    ml = ManifestList(fio, str(tmp_path), codec="snappy")
    name, _ = ml.write(metas)
    raw = _raw_records(fio.read_bytes(join(str(tmp_path), name)))
    assert list(raw[0]) == [f["name"] for f in MANIFEST_LIST_SCHEMA["fields"]]
    assert raw[0]["_VERSION"] == 2 and raw[0]["_PARTITION_STATS"]["_NULL_COUNTS"] == []
    assert raw[1]["_PARTITION_STATS"]["_NULL_COUNTS"] is None
    assert (raw[1]["_MIN_ROW_ID"], raw[1]["_MAX_ROW_ID"]) == (5, 9)
    assert ml.read(name) == metas


def test_identifier() -> None:
    e = _entry(FileKind.ADD, ["a", 1], 0, _file("f", extra_files=("i",), level=2))
    d = ManifestEntry(FileKind.DELETE, e.partition, 0, 4, e.file)
    assert e.identifier() == d.identifier()
    assert e.identifier() == (e.partition, 0, 2, "f", ("i",), None, None)
    other = ManifestEntry(FileKind.ADD, e.partition, 0, 4, _file("f", extra_files=(), level=2))
    assert other.identifier() != e.identifier()


# --- older layouts ---------------------------------------------------------------------


def _schema_with_file_fields(n: int) -> dict:
    s = copy.deepcopy(MANIFEST_SCHEMA)
    s["fields"][5]["type"]["fields"] = s["fields"][5]["type"]["fields"][:n]
    return s


def _old_record(n_fields: int) -> dict:
    f = {
        "_FILE_NAME": "data-old.orc",
        "_FILE_SIZE": 555,
        "_ROW_COUNT": 4,
        "_MIN_KEY": br.serialize([1], [IntType()]),
        "_MAX_KEY": br.serialize([4], [IntType()]),
        "_KEY_STATS": {"_MIN_VALUES": br.EMPTY_ROW, "_MAX_VALUES": br.EMPTY_ROW, "_NULL_COUNTS": []},
        "_VALUE_STATS": {"_MIN_VALUES": br.EMPTY_ROW, "_MAX_VALUES": br.EMPTY_ROW, "_NULL_COUNTS": None},
        "_MIN_SEQUENCE_NUMBER": 0,
        "_MAX_SEQUENCE_NUMBER": 3,
        "_SCHEMA_ID": 0,
        "_LEVEL": 0,
        "_EXTRA_FILES": [],
        "_CREATION_TIME": 1_600_000_000_000,
        "_DELETE_ROW_COUNT": 0,
        "_EMBEDDED_FILE_INDEX": None,
        "_FILE_SOURCE": 0,
        "_VALUE_STATS_COLS": None,
        "_EXTERNAL_PATH": None,
    }
    names = [fld["name"] for fld in DATA_FILE_SCHEMA["fields"]][:n_fields]
    return {
        "_VERSION": 2,
        "_KIND": 0,
        "_PARTITION": br.EMPTY_ROW,
        "_BUCKET": 0,
        "_TOTAL_BUCKETS": 1,
        "_FILE": {k: v for k, v in f.items() if k in names},
    }


@pytest.mark.parametrize(("version", "n_fields", "codec"), [("0.8", 15, "snappy"), ("0.9", 16, "zstandard"),
                                                           ("1.0", 18, "zstandard")])
def test_reads_old_manifest_layouts(fio: FileIO, tmp_path: Path, version: str, n_fields: int, codec: str) -> None:
    data = write_avro(_schema_with_file_fields(n_fields), [_old_record(n_fields)], codec=codec)
    fio.write_bytes(join(str(tmp_path), "manifest-old-0"), data)
    [e] = ManifestFile(fio, str(tmp_path)).read("manifest-old-0")
    f = e.file
    assert (e.kind, e.bucket, e.total_buckets, e.partition) == (FileKind.ADD, 0, 1, br.EMPTY_ROW)
    assert f.file_name == "data-old.orc" and f.creation_time == 1_600_000_000_000
    assert f.value_stats.null_counts is None and f.delete_row_count == 0
    assert f.file_source == (0 if n_fields >= 16 else None)
    assert f.external_path is None and f.first_row_id is None and f.write_cols is None


def test_reads_master_layout_with_write_cols_sequences(fio: FileIO, tmp_path: Path) -> None:
    rec = _old_record(18)
    rec["_FILE"].update(_FIRST_ROW_ID=None, _WRITE_COLS=["a"], _WRITE_COLS_SEQUENCES=[7])
    fio.write_bytes(join(str(tmp_path), "m"), write_avro(MANIFEST_SCHEMA, [rec]))
    [e] = ManifestFile(fio, str(tmp_path)).read("m")
    assert e.file.write_cols == ("a",) and e.file.write_cols_sequences == (7,)


def test_rewrite_keeps_write_cols_sequences(fio: FileIO, tmp_path: Path) -> None:
    """A manifest rewrite (commit merge, compact-manifest) must not drop Java 2.1's per-column
    sequences: they are what its global-index refresh reads."""
    mf = ManifestFile(fio, str(tmp_path))
    entry = ManifestEntry(FileKind.ADD, br.EMPTY_ROW, 0, 1,
                          _file("data-a.parquet", write_cols=("a", "b"), write_cols_sequences=(3, 9)))
    meta = mf.write([entry], schema_id=0)
    [back] = mf.read(meta.file_name)
    assert back.file.write_cols_sequences == (3, 9)
    assert _raw_records(fio.read_bytes(join(str(tmp_path), meta.file_name)))[0]["_FILE"][
        "_WRITE_COLS_SEQUENCES"] == [3, 9]


def _with_unknown_file_field(value: object) -> bytes:
    s = copy.deepcopy(MANIFEST_SCHEMA)
    s["fields"][5]["type"]["fields"].append({"name": "_NEWER_FIELD", "type": ["null", "long"], "default": None})
    rec = _old_record(21)
    rec["_FILE"].update(_NEWER_FIELD=value)
    return write_avro(s, [rec], codec="null")


def test_unknown_field_with_values_is_refused_by_name(fio: FileIO, tmp_path: Path) -> None:
    """A field a newer Paimon added is never read past nor dropped by a rewrite."""
    fio.write_bytes(join(str(tmp_path), "m"), _with_unknown_file_field(5))
    with pytest.raises(NotYetSupported, match=r"manifest field _FILE\._NEWER_FIELD"):
        ManifestFile(fio, str(tmp_path)).read("m")
    with pytest.raises(NotYetSupported, match=r"_FILE\._NEWER_FIELD"):
        read_expire_file_entries(fio.read_bytes(join(str(tmp_path), "m")), "m")


def test_unknown_field_that_is_null_everywhere_is_read(fio: FileIO, tmp_path: Path) -> None:
    fio.write_bytes(join(str(tmp_path), "m"), _with_unknown_file_field(None))
    [e] = ManifestFile(fio, str(tmp_path)).read("m")
    assert e.file.file_name == "data-old.orc"
    assert [x.file_name for x in read_expire_file_entries(fio.read_bytes(join(str(tmp_path), "m")), "m")] == [
        "data-old.orc"]


def test_manifest_list_ignores_pypaimon_extras(fio: FileIO, tmp_path: Path) -> None:
    s = copy.deepcopy(MANIFEST_LIST_SCHEMA)
    s["fields"] += [{"name": "_TOTAL_BUCKETS", "type": ["null", "int"], "default": None},
                    {"name": "_EXTRA_FILES", "type": ["null", {"type": "array", "items": "string"}], "default": None}]
    rec = {"_VERSION": 2, "_FILE_NAME": "manifest-a-0", "_FILE_SIZE": 10, "_NUM_ADDED_FILES": 1,
           "_NUM_DELETED_FILES": 0, "_SCHEMA_ID": 0, "_TOTAL_BUCKETS": 4, "_EXTRA_FILES": ["x"],
           "_PARTITION_STATS": {"_MIN_VALUES": br.EMPTY_ROW, "_MAX_VALUES": br.EMPTY_ROW, "_NULL_COUNTS": []}}
    fio.write_bytes(join(str(tmp_path), "ml"), write_avro(s, [rec], codec="null"))
    [m] = ManifestList(fio, str(tmp_path)).read("ml")
    assert m.file_name == "manifest-a-0"


def test_reads_pre_1_1_manifest_list(fio: FileIO, tmp_path: Path) -> None:
    s = copy.deepcopy(MANIFEST_LIST_SCHEMA)
    s["fields"] = s["fields"][:7]
    rec = {
        "_VERSION": 2,
        "_FILE_NAME": "manifest-a-0",
        "_FILE_SIZE": 10,
        "_NUM_ADDED_FILES": 1,
        "_NUM_DELETED_FILES": 0,
        "_PARTITION_STATS": {"_MIN_VALUES": br.EMPTY_ROW, "_MAX_VALUES": br.EMPTY_ROW, "_NULL_COUNTS": []},
        "_SCHEMA_ID": 0,
    }
    fio.write_bytes(join(str(tmp_path), "ml"), write_avro(s, [rec], codec="snappy"))
    [m] = ManifestList(fio, str(tmp_path)).read("ml")
    assert m.file_name == "manifest-a-0" and m.min_bucket is None and m.max_row_id is None


def test_reads_02_era_top_level_union(fio: FileIO, tmp_path: Path) -> None:
    union = ["null", _schema_with_file_fields(13)]
    fio.write_bytes(join(str(tmp_path), "m02"), write_avro(union, [_old_record(13)], codec="snappy"))
    [e] = ManifestFile(fio, str(tmp_path)).read("m02")
    assert e.file.file_name == "data-old.orc" and e.file.delete_row_count is None


def test_wrong_version_is_corrupt(fio: FileIO, tmp_path: Path) -> None:
    rec = _old_record(18)
    rec["_VERSION"] = 1
    fio.write_bytes(join(str(tmp_path), "mv1"), write_avro(_schema_with_file_fields(18), [rec]))
    with pytest.raises(CorruptMetadata, match="_VERSION 1"):
        ManifestFile(fio, str(tmp_path)).read("mv1")


def test_missing_required_field_is_corrupt(fio: FileIO, tmp_path: Path) -> None:
    s = copy.deepcopy(MANIFEST_LIST_SCHEMA)
    s["fields"] = [f for f in s["fields"] if f["name"] != "_FILE_SIZE"]
    rec = {"_VERSION": 2, "_FILE_NAME": "x", "_NUM_ADDED_FILES": 1, "_NUM_DELETED_FILES": 0,
           "_PARTITION_STATS": {"_MIN_VALUES": b"", "_MAX_VALUES": b"", "_NULL_COUNTS": None}, "_SCHEMA_ID": 0}
    fio.write_bytes(join(str(tmp_path), "bad"), write_avro(s, [rec]))
    with pytest.raises(CorruptMetadata, match="bad: malformed record"):
        ManifestList(fio, str(tmp_path)).read("bad")


def test_garbage_is_corrupt(fio: FileIO, tmp_path: Path) -> None:
    fio.write_bytes(join(str(tmp_path), "junk"), b"not avro at all")
    with pytest.raises(CorruptMetadata, match="junk"):
        ManifestFile(fio, str(tmp_path)).read("junk")


def test_schema_constants_serialize_to_java_text() -> None:
    assert json.dumps(MANIFEST_SCHEMA, separators=(",", ":")) == JAVA_MANIFEST_SCHEMA
    assert json.dumps(MANIFEST_LIST_SCHEMA, separators=(",", ":")) == JAVA_LIST_SCHEMA
