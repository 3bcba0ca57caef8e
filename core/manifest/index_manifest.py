"""Index manifests (``manifest/index-manifest-<uuid>-<n>``): the snapshot's full list of
HASH, deletion-vector and global index files (FORMAT-FACTS 5.4).

Read by field name, so 0.9 files (no ``_CARDINALITY``, ``_EXTERNAL_PATH``, ``_GLOBAL_INDEX``)
and current ones both load; written in the current layout with ``_VERSION`` = 1.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..errors import CorruptMetadata
from ..io.paths import check_file_name
from .avro import NAMESPACE, ObjectsFile, check_version, optional_field
from .manifest import FileKind

INDEX_MANIFEST_VERSION = 1
HASH_INDEX = "HASH"
DELETION_VECTORS_INDEX = "DELETION_VECTORS"


@dataclass(frozen=True)
class DeletionVectorMeta:
    """Where one data file's deletion vector sits inside a DV index file.

    ``offset`` points at the blob's 4-byte length prefix; ``length`` semantics differ
    between 32-bit and 64-bit blobs (FORMAT-FACTS 10).
    """

    data_file_name: str
    offset: int
    length: int
    cardinality: int | None = None


@dataclass(frozen=True)
class GlobalIndexMeta:
    row_range_start: int
    row_range_end: int
    index_field_id: int
    extra_field_ids: tuple[int, ...] | None = None
    index_meta: bytes | None = None
    source_meta: bytes | None = None


@dataclass(frozen=True)
class IndexFileMeta:
    index_type: str
    file_name: str
    file_size: int
    row_count: int
    dv_ranges: tuple[DeletionVectorMeta, ...] | None = None
    external_path: str | None = None
    global_index: GlobalIndexMeta | None = None


@dataclass(frozen=True)
class IndexManifestEntry:
    kind: FileKind
    partition: bytes
    bucket: int
    index_file: IndexFileMeta


INDEX_MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record",
    "namespace": NAMESPACE,
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_INDEX_TYPE", "type": "string"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        optional_field(
            "_DELETIONS_VECTORS_RANGES",
            {
                "type": "array",
                "items": [
                    "null",
                    {
                        "type": "record",
                        "name": "record__DELETIONS_VECTORS_RANGES",
                        "fields": [
                            {"name": "f0", "type": "string"},
                            {"name": "f1", "type": "int"},
                            {"name": "f2", "type": "int"},
                            optional_field("_CARDINALITY", "long"),
                        ],
                    },
                ],
            },
        ),
        optional_field("_EXTERNAL_PATH", "string"),
        optional_field(
            "_GLOBAL_INDEX",
            {
                "type": "record",
                "name": "record__GLOBAL_INDEX",
                "fields": [
                    {"name": "_ROW_RANGE_START", "type": "long"},
                    {"name": "_ROW_RANGE_END", "type": "long"},
                    {"name": "_INDEX_FIELD_ID", "type": "int"},
                    optional_field("_EXTRA_FIELD_IDS", {"type": "array", "items": "int"}),
                    optional_field("_INDEX_META", "bytes"),
                    optional_field("_SOURCE_META", "bytes"),
                ],
            },
        ),
    ],
}


def _bytes_or_none(v: Any) -> bytes | None:
    return None if v is None else bytes(v)


def index_entry_from_record(r: dict[str, Any], path: str = "") -> IndexManifestEntry:
    check_version(r, INDEX_MANIFEST_VERSION, path)
    ranges = r.get("_DELETIONS_VECTORS_RANGES")
    dv = None
    if ranges is not None:
        dv = tuple(
            DeletionVectorMeta(x["f0"], x["f1"], x["f2"], x.get("_CARDINALITY")) for x in ranges if x is not None
        )
    g = r.get("_GLOBAL_INDEX")
    gi = None
    if g is not None:
        extra = g.get("_EXTRA_FIELD_IDS")
        gi = GlobalIndexMeta(
            g["_ROW_RANGE_START"],
            g["_ROW_RANGE_END"],
            g["_INDEX_FIELD_ID"],
            None if extra is None else tuple(extra),
            _bytes_or_none(g.get("_INDEX_META")),
            _bytes_or_none(g.get("_SOURCE_META")),
        )
    return IndexManifestEntry(
        kind=FileKind(r["_KIND"]),
        partition=bytes(r["_PARTITION"]),
        bucket=r["_BUCKET"],
        index_file=IndexFileMeta(
            index_type=r["_INDEX_TYPE"],
            file_name=check_file_name(r["_FILE_NAME"], "_FILE_NAME", path),
            file_size=r["_FILE_SIZE"],
            row_count=r["_ROW_COUNT"],
            dv_ranges=dv,
            external_path=r.get("_EXTERNAL_PATH"),
            global_index=gi,
        ),
    )


def index_entry_to_record(e: IndexManifestEntry) -> dict[str, Any]:
    f = e.index_file
    g = f.global_index
    return {
        "_VERSION": INDEX_MANIFEST_VERSION,
        "_KIND": int(e.kind),
        "_PARTITION": e.partition,
        "_BUCKET": e.bucket,
        "_INDEX_TYPE": f.index_type,
        "_FILE_NAME": f.file_name,
        "_FILE_SIZE": f.file_size,
        "_ROW_COUNT": f.row_count,
        "_DELETIONS_VECTORS_RANGES": None
        if f.dv_ranges is None
        else [
            {"f0": d.data_file_name, "f1": d.offset, "f2": d.length, "_CARDINALITY": d.cardinality}
            for d in f.dv_ranges
        ],
        "_EXTERNAL_PATH": f.external_path,
        "_GLOBAL_INDEX": None
        if g is None
        else {
            "_ROW_RANGE_START": g.row_range_start,
            "_ROW_RANGE_END": g.row_range_end,
            "_INDEX_FIELD_ID": g.index_field_id,
            "_EXTRA_FIELD_IDS": None if g.extra_field_ids is None else list(g.extra_field_ids),
            "_INDEX_META": g.index_meta,
            "_SOURCE_META": g.source_meta,
        },
    }


class IndexManifestFile(ObjectsFile):
    """Reader/writer of index manifests in ``manifest_dir``."""

    prefix = "index-manifest"
    schema = INDEX_MANIFEST_SCHEMA

    def read(self, name: str) -> list[IndexManifestEntry]:
        path, entries = self._read_objects(name, index_entry_from_record)
        for e in entries:
            if e.index_file.index_type == DELETION_VECTORS_INDEX and e.index_file.dv_ranges is None:
                raise CorruptMetadata(path, f"DV index file {e.index_file.file_name} has no _DELETIONS_VECTORS_RANGES")
        return entries

    def live_entries(self, name: str | None) -> list[IndexManifestEntry]:
        """The index files a snapshot's index manifest ``name`` lists as live (a full listing,
        not a delta: its ADD entries); none when the snapshot has no index manifest."""
        if not name:
            return []
        return [e for e in self.read(name) if e.kind == FileKind.ADD]

    def write(self, entries: list[IndexManifestEntry]) -> str:
        """Write the full listing (every entry ADD, by Java's convention); returns the name."""
        return self._write_records([index_entry_to_record(e) for e in entries])[0]
