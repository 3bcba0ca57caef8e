"""Manifest lists and manifest files: the Avro metadata that names a snapshot's data files.

Readers go by field NAME (as Java does), so every layout from 0.8 (15 ``_FILE`` fields) to
master (21) reads the same way; fields a file lacks come back as None. Writers emit the
current layout with Java's record names, ``_VERSION`` = 2 and ``["null", T]`` unions
(FORMAT-FACTS 4, 5.2, 5.3).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

from ..data import binary_row
from ..data.types import RowType
from ..errors import CorruptMetadata, InvalidInput
from ..io.fileio import FileIO
from ..io.paths import check_file_name
from .avro import NAMESPACE, ObjectsFile, check_version, epoch_millis, optional_field, write_avro

MANIFEST_VERSION = 2


class FileKind(IntEnum):
    ADD = 0
    DELETE = 1


class FileSource(IntEnum):
    APPEND = 0
    COMPACT = 1


@dataclass(frozen=True)
class SimpleStats:
    """Min/max rows (serialized BinaryRows) and per-column null counts."""

    min_values: bytes
    max_values: bytes
    null_counts: list[int | None] | None

    @staticmethod
    def empty() -> SimpleStats:
        return SimpleStats(binary_row.EMPTY_ROW, binary_row.EMPTY_ROW, [])


EMPTY_STATS = SimpleStats.empty()


@dataclass(frozen=True)
class DataFileMeta:
    """One data file as a manifest describes it (``_FILE``)."""

    file_name: str
    file_size: int
    row_count: int
    min_key: bytes
    max_key: bytes
    key_stats: SimpleStats
    value_stats: SimpleStats
    min_sequence_number: int
    max_sequence_number: int
    schema_id: int
    level: int
    extra_files: tuple[str, ...] = ()
    creation_time: int | None = None  # local wall clock as if UTC millis (FORMAT-FACTS 5.3)
    delete_row_count: int | None = None
    embedded_index: bytes | None = None
    file_source: int | None = None
    value_stats_cols: tuple[str, ...] | None = None
    external_path: str | None = None
    first_row_id: int | None = None
    write_cols: tuple[str, ...] | None = None
    write_cols_sequences: tuple[int, ...] | None = None  # per-column max seq (2.1); carried as read
    # not in manifests: bytes of the `.index` file written with this file by this job (None:
    # none written, or read from a manifest), for the note on indexes outweighing their file
    index_file_bytes: int | None = field(default=None, compare=False, repr=False)

    @property
    def add_row_count(self) -> int | None:
        return None if self.delete_row_count is None else self.row_count - self.delete_row_count


@dataclass(frozen=True)
class ManifestEntry:
    kind: FileKind
    partition: bytes
    bucket: int
    total_buckets: int
    file: DataFileMeta

    def identifier(self) -> tuple[Any, ...]:
        """Java's FileEntry.Identifier (1.0+): what ADD/DELETE entries cancel on."""
        f = self.file
        return (self.partition, self.bucket, f.level, f.file_name, f.extra_files, f.embedded_index, f.external_path)


@dataclass(frozen=True)
class ManifestFileMeta:
    file_name: str
    file_size: int
    num_added_files: int
    num_deleted_files: int
    partition_stats: SimpleStats
    schema_id: int
    min_bucket: int | None = None
    max_bucket: int | None = None
    min_level: int | None = None
    max_level: int | None = None
    min_row_id: int | None = None
    max_row_id: int | None = None


# ---------------------------------------------------------------------------------------
# Avro schemas (Java's exact field order and record names)
# ---------------------------------------------------------------------------------------


def _stats_schema(record_name: str) -> dict[str, Any]:
    return {
        "type": "record",
        "name": record_name,
        "fields": [
            {"name": "_MIN_VALUES", "type": "bytes"},
            {"name": "_MAX_VALUES", "type": "bytes"},
            optional_field("_NULL_COUNTS", {"type": "array", "items": ["null", "long"]}),
        ],
    }


MANIFEST_LIST_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record",
    "namespace": NAMESPACE,
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_NUM_ADDED_FILES", "type": "long"},
        {"name": "_NUM_DELETED_FILES", "type": "long"},
        {"name": "_PARTITION_STATS", "type": _stats_schema("record__PARTITION_STATS")},
        {"name": "_SCHEMA_ID", "type": "long"},
        optional_field("_MIN_BUCKET", "int"),
        optional_field("_MAX_BUCKET", "int"),
        optional_field("_MIN_LEVEL", "int"),
        optional_field("_MAX_LEVEL", "int"),
        optional_field("_MIN_ROW_ID", "long"),
        optional_field("_MAX_ROW_ID", "long"),
    ],
}

DATA_FILE_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record__FILE",
    "fields": [
        {"name": "_FILE_NAME", "type": "string"},
        {"name": "_FILE_SIZE", "type": "long"},
        {"name": "_ROW_COUNT", "type": "long"},
        {"name": "_MIN_KEY", "type": "bytes"},
        {"name": "_MAX_KEY", "type": "bytes"},
        {"name": "_KEY_STATS", "type": _stats_schema("record__FILE__KEY_STATS")},
        {"name": "_VALUE_STATS", "type": _stats_schema("record__FILE__VALUE_STATS")},
        {"name": "_MIN_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_MAX_SEQUENCE_NUMBER", "type": "long"},
        {"name": "_SCHEMA_ID", "type": "long"},
        {"name": "_LEVEL", "type": "int"},
        {"name": "_EXTRA_FILES", "type": {"type": "array", "items": "string"}},
        optional_field("_CREATION_TIME", {"type": "long", "logicalType": "timestamp-millis"}),
        optional_field("_DELETE_ROW_COUNT", "long"),
        optional_field("_EMBEDDED_FILE_INDEX", "bytes"),
        optional_field("_FILE_SOURCE", "int"),
        optional_field("_VALUE_STATS_COLS", {"type": "array", "items": "string"}),
        optional_field("_EXTERNAL_PATH", "string"),
        optional_field("_FIRST_ROW_ID", "long"),
        optional_field("_WRITE_COLS", {"type": "array", "items": "string"}),
        optional_field("_WRITE_COLS_SEQUENCES", {"type": "array", "items": "long"}),
    ],
}

MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "record",
    "name": "record",
    "namespace": NAMESPACE,
    "fields": [
        {"name": "_VERSION", "type": "int"},
        {"name": "_KIND", "type": "int"},
        {"name": "_PARTITION", "type": "bytes"},
        {"name": "_BUCKET", "type": "int"},
        {"name": "_TOTAL_BUCKETS", "type": "int"},
        {"name": "_FILE", "type": DATA_FILE_SCHEMA},
    ],
}


# ---------------------------------------------------------------------------------------
# Record <-> object
# ---------------------------------------------------------------------------------------


def stats_from_record(rec: dict[str, Any] | None) -> SimpleStats:
    if rec is None:  # 0.2-era files had nullable nested records
        return EMPTY_STATS
    nc = rec.get("_NULL_COUNTS")
    return SimpleStats(bytes(rec["_MIN_VALUES"]), bytes(rec["_MAX_VALUES"]), None if nc is None else list(nc))


def stats_to_record(s: SimpleStats) -> dict[str, Any]:
    return {"_MIN_VALUES": s.min_values, "_MAX_VALUES": s.max_values, "_NULL_COUNTS": s.null_counts}


def _tuple_or_none(v: Any) -> tuple[Any, ...] | None:
    return None if v is None else tuple(v)


def data_file_from_record(r: dict[str, Any]) -> DataFileMeta:
    emb = r.get("_EMBEDDED_FILE_INDEX")
    return DataFileMeta(
        file_name=r["_FILE_NAME"],
        file_size=r["_FILE_SIZE"],
        row_count=r["_ROW_COUNT"],
        min_key=bytes(r["_MIN_KEY"]),
        max_key=bytes(r["_MAX_KEY"]),
        key_stats=stats_from_record(r.get("_KEY_STATS")),
        value_stats=stats_from_record(r.get("_VALUE_STATS")),
        min_sequence_number=r["_MIN_SEQUENCE_NUMBER"],
        max_sequence_number=r["_MAX_SEQUENCE_NUMBER"],
        schema_id=r["_SCHEMA_ID"],
        level=r["_LEVEL"],
        extra_files=tuple(r.get("_EXTRA_FILES") or ()),
        creation_time=epoch_millis(r.get("_CREATION_TIME")),
        delete_row_count=r.get("_DELETE_ROW_COUNT"),
        embedded_index=None if emb is None else bytes(emb),
        file_source=r.get("_FILE_SOURCE"),
        value_stats_cols=_tuple_or_none(r.get("_VALUE_STATS_COLS")),
        external_path=r.get("_EXTERNAL_PATH"),
        first_row_id=r.get("_FIRST_ROW_ID"),
        write_cols=_tuple_or_none(r.get("_WRITE_COLS")),
        write_cols_sequences=_tuple_or_none(r.get("_WRITE_COLS_SEQUENCES")),
    )


def data_file_to_record(f: DataFileMeta) -> dict[str, Any]:
    return {
        "_FILE_NAME": f.file_name,
        "_FILE_SIZE": f.file_size,
        "_ROW_COUNT": f.row_count,
        "_MIN_KEY": f.min_key,
        "_MAX_KEY": f.max_key,
        "_KEY_STATS": stats_to_record(f.key_stats),
        "_VALUE_STATS": stats_to_record(f.value_stats),
        "_MIN_SEQUENCE_NUMBER": f.min_sequence_number,
        "_MAX_SEQUENCE_NUMBER": f.max_sequence_number,
        "_SCHEMA_ID": f.schema_id,
        "_LEVEL": f.level,
        "_EXTRA_FILES": list(f.extra_files),
        "_CREATION_TIME": f.creation_time,
        "_DELETE_ROW_COUNT": f.delete_row_count,
        "_EMBEDDED_FILE_INDEX": f.embedded_index,
        "_FILE_SOURCE": None if f.file_source is None else int(f.file_source),
        "_VALUE_STATS_COLS": None if f.value_stats_cols is None else list(f.value_stats_cols),
        "_EXTERNAL_PATH": f.external_path,
        "_FIRST_ROW_ID": f.first_row_id,
        "_WRITE_COLS": None if f.write_cols is None else list(f.write_cols),
        "_WRITE_COLS_SEQUENCES": None if f.write_cols_sequences is None else list(f.write_cols_sequences),
    }


def entry_from_record(r: dict[str, Any], path: str = "") -> ManifestEntry:
    check_version(r, MANIFEST_VERSION, path)
    if r.get("_FILE") is None:
        raise CorruptMetadata(path, "manifest entry has no _FILE record")
    f = data_file_from_record(r["_FILE"])
    check_file_name(f.file_name, "_FILE_NAME", path)
    for x in f.extra_files:
        check_file_name(x, "_EXTRA_FILES entry", path)
    return ManifestEntry(
        kind=FileKind(r["_KIND"]),
        partition=bytes(r["_PARTITION"]),
        bucket=r["_BUCKET"],
        total_buckets=r["_TOTAL_BUCKETS"],
        file=f,
    )


def entry_to_record(e: ManifestEntry) -> dict[str, Any]:
    return {
        "_VERSION": MANIFEST_VERSION,
        "_KIND": int(e.kind),
        "_PARTITION": e.partition,
        "_BUCKET": e.bucket,
        "_TOTAL_BUCKETS": e.total_buckets,
        "_FILE": data_file_to_record(e.file),
    }


def manifest_meta_from_record(r: dict[str, Any], path: str = "") -> ManifestFileMeta:
    check_version(r, MANIFEST_VERSION, path)
    return ManifestFileMeta(
        file_name=check_file_name(r["_FILE_NAME"], "_FILE_NAME", path),
        file_size=r["_FILE_SIZE"],
        num_added_files=r["_NUM_ADDED_FILES"],
        num_deleted_files=r["_NUM_DELETED_FILES"],
        partition_stats=stats_from_record(r.get("_PARTITION_STATS")),
        schema_id=r["_SCHEMA_ID"],
        min_bucket=r.get("_MIN_BUCKET"),
        max_bucket=r.get("_MAX_BUCKET"),
        min_level=r.get("_MIN_LEVEL"),
        max_level=r.get("_MAX_LEVEL"),
        min_row_id=r.get("_MIN_ROW_ID"),
        max_row_id=r.get("_MAX_ROW_ID"),
    )


def manifest_meta_to_record(m: ManifestFileMeta) -> dict[str, Any]:
    return {
        "_VERSION": MANIFEST_VERSION,
        "_FILE_NAME": m.file_name,
        "_FILE_SIZE": m.file_size,
        "_NUM_ADDED_FILES": m.num_added_files,
        "_NUM_DELETED_FILES": m.num_deleted_files,
        "_PARTITION_STATS": stats_to_record(m.partition_stats),
        "_SCHEMA_ID": m.schema_id,
        "_MIN_BUCKET": m.min_bucket,
        "_MAX_BUCKET": m.max_bucket,
        "_MIN_LEVEL": m.min_level,
        "_MAX_LEVEL": m.max_level,
        "_MIN_ROW_ID": m.min_row_id,
        "_MAX_ROW_ID": m.max_row_id,
    }


# ---------------------------------------------------------------------------------------
# Partition stats
# ---------------------------------------------------------------------------------------


def partition_stats(partitions: Iterable[bytes], partition_type: RowType | None) -> SimpleStats:
    """All-mode min/max/null-count over serialized partition rows (Java SimpleStatsCollector)."""
    types = [f.type for f in partition_type.fields] if partition_type is not None else []
    n = len(types)
    mins: list[Any] = [None] * n
    maxs: list[Any] = [None] * n
    nulls = [0] * n
    for part in partitions:
        try:
            values = binary_row.deserialize(part, types)
        except InvalidInput as e:
            raise InvalidInput(f"partition row does not match partition type {partition_type}: {e}") from e
        for i, v in enumerate(values):
            if v is None:
                nulls[i] += 1
                continue
            if mins[i] is None or v < mins[i]:
                mins[i] = v
            if maxs[i] is None or v > maxs[i]:
                maxs[i] = v
    nullable = [t.copy(nullable=True) for t in types]
    return SimpleStats(binary_row.serialize(mins, nullable), binary_row.serialize(maxs, nullable), list(nulls))


# ---------------------------------------------------------------------------------------
# Files
# ---------------------------------------------------------------------------------------


def _row_id_range(entries: list[ManifestEntry]) -> tuple[int, int] | None:
    """(first, last) row id over the entries' files; None unless every file has row ids."""
    ranges: list[tuple[int, int]] = []
    for e in entries:
        first = e.file.first_row_id
        if first is None:
            return None
        ranges.append((first, first + e.file.row_count - 1))
    if not ranges:
        return None
    return min(r[0] for r in ranges), max(r[1] for r in ranges)


class ManifestList(ObjectsFile):
    """``manifest/manifest-list-<uuid>-<n>``: one ManifestFileMeta per manifest file."""

    prefix = "manifest-list"
    schema = MANIFEST_LIST_SCHEMA
    # pypaimon 2.1 writes these into manifest lists; Java's ManifestFileMeta has neither
    ignorable_fields = frozenset({"_TOTAL_BUCKETS", "_EXTRA_FILES"})

    def read(self, name: str) -> list[ManifestFileMeta]:
        return self._read_objects(name, manifest_meta_from_record)[1]

    def write(self, metas: list[ManifestFileMeta]) -> tuple[str, int]:
        """Write a new list (empty is legal); returns (file name, size in bytes)."""
        return self._write_records([manifest_meta_to_record(m) for m in metas])


class ManifestFile(ObjectsFile):
    """``manifest/manifest-<uuid>-<n>``: ManifestEntries; ``write`` also builds their meta."""

    prefix = "manifest"
    schema = MANIFEST_SCHEMA

    def __init__(
        self, file_io: FileIO, manifest_dir: str, partition_type: RowType | None = None, codec: str = "zstandard"
    ) -> None:
        super().__init__(file_io, manifest_dir, codec)
        self.partition_type = partition_type

    def read(self, name: str) -> list[ManifestEntry]:
        return self._read_objects(name, entry_from_record)[1]

    def write(self, entries: list[ManifestEntry], schema_id: int) -> ManifestFileMeta:
        """Write ``entries`` in order; ``schema_id`` (latest table schema) is used only when empty."""
        name, size = self._write_records([entry_to_record(e) for e in entries])
        return self.meta_of(name, size, entries, schema_id)

    def encoded_size(self, entries: list[ManifestEntry]) -> int:
        """The bytes ``entries`` take as a manifest file (encoded in memory, nothing written)."""
        return len(write_avro(self.schema, [entry_to_record(e) for e in entries], self.codec))

    def meta_of(self, name: str, size: int, entries: list[ManifestEntry], schema_id: int) -> ManifestFileMeta:
        """The manifest-list record Java's ManifestAvroWriter computes for these entries."""
        added = sum(1 for e in entries if e.kind == FileKind.ADD)
        row_ids = _row_id_range(entries)
        return ManifestFileMeta(
            file_name=name,
            file_size=size,
            num_added_files=added,
            num_deleted_files=len(entries) - added,
            partition_stats=partition_stats((e.partition for e in entries), self.partition_type),
            schema_id=max(e.file.schema_id for e in entries) if entries else schema_id,
            min_bucket=min(e.bucket for e in entries) if entries else None,
            max_bucket=max(e.bucket for e in entries) if entries else None,
            min_level=min(e.file.level for e in entries) if entries else None,
            max_level=max(e.file.level for e in entries) if entries else None,
            min_row_id=row_ids[0] if row_ids else None,
            max_row_id=row_ids[1] if row_ids else None,
        )
