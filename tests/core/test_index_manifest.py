"""Index manifests: Java's exact schema, 0.9 and current layouts, DV and global-index entries."""

from __future__ import annotations

import copy
import io
import json
import re
from pathlib import Path

import fastavro
import pytest

from paimon_cli.core.data import binary_row as br
from paimon_cli.core.data.types import IntType
from paimon_cli.core.errors import CorruptMetadata, NotYetSupported
from paimon_cli.core.io.fileio import FileIO, join
from paimon_cli.core.manifest.avro import write_avro
from paimon_cli.core.manifest.index_manifest import (
    INDEX_MANIFEST_SCHEMA,
    DeletionVectorMeta,
    GlobalIndexMeta,
    IndexFileMeta,
    IndexManifestEntry,
    IndexManifestFile,
)
from paimon_cli.core.manifest.manifest import FileKind

# FORMAT-FACTS 5.4 (fixture-verified there).
JAVA_INDEX_SCHEMA = (
    '{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"},{"name":"_KIND","type":"int"},{"name":"_PARTITION","type":"bytes"},{"name":"_BUCKET","type":"int"},{"name":"_INDEX_TYPE","type":"string"},{"name":"_FILE_NAME","type":"string"},{"name":"_FILE_SIZE","type":"long"},{"name":"_ROW_COUNT","type":"long"},{"name":"_DELETIONS_VECTORS_RANGES","type":["null",{"type":"array","items":["null",{"type":"record","name":"record__DELETIONS_VECTORS_RANGES","fields":[{"name":"f0","type":"string"},{"name":"f1","type":"int"},{"name":"f2","type":"int"},{"name":"_CARDINALITY","type":["null","long"],"default":null}]}]}],"default":null},{"name":"_EXTERNAL_PATH","type":["null","string"],"default":null},{"name":"_GLOBAL_INDEX","type":["null",{"type":"record","name":"record__GLOBAL_INDEX","fields":[{"name":"_ROW_RANGE_START","type":"long"},{"name":"_ROW_RANGE_END","type":"long"},{"name":"_INDEX_FIELD_ID","type":"int"},{"name":"_EXTRA_FIELD_IDS","type":["null",{"type":"array","items":"int"}],"default":null},{"name":"_INDEX_META","type":["null","bytes"],"default":null},{"name":"_SOURCE_META","type":["null","bytes"],"default":null}]}],"default":null}]}'
)


@pytest.fixture()
def fio(tmp_path: Path) -> FileIO:
    return FileIO(str(tmp_path))


ENTRIES = [
    IndexManifestEntry(
        FileKind.ADD, br.EMPTY_ROW, 0,
        IndexFileMeta("DELETION_VECTORS", "index-a-0", 77, 2,
                      (DeletionVectorMeta("data-1.parquet", 1, 24, 2), DeletionVectorMeta("data-2.parquet", 33, 22, 1))),
    ),
    IndexManifestEntry(FileKind.ADD, br.EMPTY_ROW, 1, IndexFileMeta("HASH", "index-a-1", 40, 10)),
    IndexManifestEntry(
        FileKind.ADD, br.EMPTY_ROW, 0,
        IndexFileMeta("btree", "index-a-2", 900, 6, None, "s3://x/index-a-2",
                      GlobalIndexMeta(0, 5, 1, (2, 3), b"\x01", None)),
    ),
]


def test_write_exact_schema_and_plain_fastavro_fields(fio: FileIO, tmp_path: Path) -> None:
    imf = IndexManifestFile(fio, str(tmp_path), codec="deflate")
    name = imf.write(ENTRIES)
    assert re.fullmatch(r"index-manifest-[0-9a-f-]{36}-0", name)
    data = fio.read_bytes(join(str(tmp_path), name))
    rdr = fastavro.reader(io.BytesIO(data))
    # fastavro prints the header schema with ", "/": " separators; Java matches fields by name,
    # so only the whitespace may differ from Java's compact text.
    assert json.dumps(json.loads(rdr.metadata["avro.schema"]), separators=(",", ":")) == JAVA_INDEX_SCHEMA
    raw = list(rdr)
    assert [r["_VERSION"] for r in raw] == [1, 1, 1]
    assert raw[0]["_INDEX_TYPE"] == "DELETION_VECTORS"
    assert raw[0]["_DELETIONS_VECTORS_RANGES"] == [
        {"f0": "data-1.parquet", "f1": 1, "f2": 24, "_CARDINALITY": 2},
        {"f0": "data-2.parquet", "f1": 33, "f2": 22, "_CARDINALITY": 1},
    ]
    assert raw[1]["_DELETIONS_VECTORS_RANGES"] is None and raw[1]["_GLOBAL_INDEX"] is None
    assert raw[2]["_GLOBAL_INDEX"]["_EXTRA_FIELD_IDS"] == [2, 3]
    assert raw[2]["_EXTERNAL_PATH"] == "s3://x/index-a-2"
    assert imf.read(name) == ENTRIES


def test_reads_09_layout(fio: FileIO, tmp_path: Path) -> None:
    s = copy.deepcopy(INDEX_MANIFEST_SCHEMA)
    s["fields"] = s["fields"][:9]
    s["fields"][8]["type"][1]["items"][1]["fields"] = s["fields"][8]["type"][1]["items"][1]["fields"][:3]
    rec = {
        "_VERSION": 1, "_KIND": 0, "_PARTITION": br.serialize([3], [IntType()]), "_BUCKET": 2,
        "_INDEX_TYPE": "DELETION_VECTORS", "_FILE_NAME": "index-old-0", "_FILE_SIZE": 33, "_ROW_COUNT": 1,
        "_DELETIONS_VECTORS_RANGES": [{"f0": "data-x.orc", "f1": 1, "f2": 24}],
    }
    fio.write_bytes(join(str(tmp_path), "im"), write_avro(s, [rec], codec="zstandard"))
    [e] = IndexManifestFile(fio, str(tmp_path)).read("im")
    assert e.bucket == 2 and e.partition == rec["_PARTITION"]
    f = e.index_file
    assert f.dv_ranges == (DeletionVectorMeta("data-x.orc", 1, 24, None),)
    assert f.external_path is None and f.global_index is None


def test_dv_entry_without_ranges_is_corrupt(fio: FileIO, tmp_path: Path) -> None:
    bad = IndexManifestEntry(FileKind.ADD, br.EMPTY_ROW, 0, IndexFileMeta("DELETION_VECTORS", "i", 1, 1))
    name = IndexManifestFile(fio, str(tmp_path)).write([bad])
    with pytest.raises(CorruptMetadata, match="no _DELETIONS_VECTORS_RANGES"):
        IndexManifestFile(fio, str(tmp_path)).read(name)


def test_newer_version_is_refused_by_name(fio: FileIO, tmp_path: Path) -> None:
    """A layout a newer Paimon would write is a feature we lack, not corruption (exit 1)."""
    rec = {
        "_VERSION": 2, "_KIND": 0, "_PARTITION": br.EMPTY_ROW, "_BUCKET": 0, "_INDEX_TYPE": "HASH",
        "_FILE_NAME": "i", "_FILE_SIZE": 1, "_ROW_COUNT": 1,
    }
    fio.write_bytes(join(str(tmp_path), "v2"), write_avro(INDEX_MANIFEST_SCHEMA, [rec]))
    with pytest.raises(NotYetSupported, match="_VERSION 2 \\(written by a newer Paimon\\) is not supported"):
        IndexManifestFile(fio, str(tmp_path)).read("v2")
    rec["_VERSION"] = 0  # older than any layout Java reads: corrupt, as before
    fio.write_bytes(join(str(tmp_path), "v0"), write_avro(INDEX_MANIFEST_SCHEMA, [rec]))
    with pytest.raises(CorruptMetadata, match="_VERSION 0, expected 1"):
        IndexManifestFile(fio, str(tmp_path)).read("v0")
