"""Iceberg manifests and manifest lists (Avro), as Java's ``IcebergManifestFile`` / ``IcebergManifestList``.

Java writes them with Paimon's Avro writer in "iceberg" mode: Iceberg's field ids on every
field (readers resolve by id), maps as arrays of key/value records with ``logicalType: map``,
record names Iceberg's own readers expect (``manifest_entry``, ``r2``, ``r102``,
``k121_v122``, ...), partition values in Paimon's Avro types, and a non-null top-level record
(Paimon 0.9 wrapped it in a ``["null", record]`` union, which Iceberg readers reject). We
write that schema with fastavro and read whatever a Paimon version wrote, by field name.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..data.types import DataField, DoubleType, FloatType
from ..errors import CorruptMetadata, MissingMetadata, NotFound
from ..io.fileio import FileIO
from ..manifest.avro import read_avro, write_avro
from .types import FIRST_PARTITION_FIELD_ID, PARTITION_SPEC_ID, avro_type, avro_value, canonical, from_bound, to_bound

EXISTING, ADDED, DELETED = 0, 1, 2  # manifest_entry.status
DATA, POSITION_DELETES = 0, 1  # data_file.content
CONTENT_DATA, CONTENT_DELETES = 0, 1  # manifest_file.content


@dataclass(frozen=True)
class IcebergDataFile:
    """``data_file``: one Paimon data file as Iceberg sees it; ``partition`` holds canonical values."""

    file_path: str
    file_format: str
    partition: tuple[Any, ...]
    record_count: int
    file_size_in_bytes: int
    null_value_counts: dict[int, int] | None = field(default=None, compare=False)
    lower_bounds: dict[int, bytes] | None = field(default=None, compare=False)
    upper_bounds: dict[int, bytes] | None = field(default=None, compare=False)
    content: int = DATA
    referenced_data_file: str | None = None
    content_offset: int | None = None
    content_size_in_bytes: int | None = None


@dataclass(frozen=True)
class IcebergManifestEntry:
    status: int
    snapshot_id: int | None
    sequence_number: int | None
    file_sequence_number: int | None
    file: IcebergDataFile

    @property
    def live(self) -> bool:
        return self.status != DELETED


@dataclass(frozen=True)
class PartitionSummary:
    contains_null: bool
    contains_nan: bool | None
    lower_bound: bytes | None
    upper_bound: bytes | None


@dataclass(frozen=True)
class IcebergManifestFileMeta:
    """One row of a manifest list."""

    manifest_path: str
    manifest_length: int
    partition_spec_id: int
    content: int
    sequence_number: int
    min_sequence_number: int
    added_snapshot_id: int | None
    added_files_count: int
    existing_files_count: int
    deleted_files_count: int
    added_rows_count: int
    existing_rows_count: int
    deleted_rows_count: int
    partitions: tuple[PartitionSummary, ...] | None

    @property
    def live_files(self) -> int:
        return self.added_files_count + self.existing_files_count - self.deleted_files_count

    @property
    def live_rows(self) -> int:
        return self.added_rows_count + self.existing_rows_count - self.deleted_rows_count


# ---------------------------------------------------------------------------------------
# Avro schemas
# ---------------------------------------------------------------------------------------


def _opt(name: str, t: Any, field_id: int) -> dict[str, Any]:
    return {"name": name, "type": ["null", t], "default": None, "field-id": field_id}


def _req(name: str, t: Any, field_id: int) -> dict[str, Any]:
    return {"name": name, "type": t, "field-id": field_id}


def _kv_map(name: str, value: str, field_id: int, key_id: int, value_id: int) -> dict[str, Any]:
    record = {"type": "record", "name": f"k{key_id}_v{value_id}",
              "fields": [_req("key", "int", key_id), _req("value", value, value_id)]}
    return _opt(name, {"type": "array", "items": record, "logicalType": "map"}, field_id)


def entry_schema(partition_fields: Sequence[DataField]) -> dict[str, Any]:
    partition = []
    for i, f in enumerate(partition_fields):
        t = avro_type(f.type)
        fid = FIRST_PARTITION_FIELD_ID + i
        partition.append(_opt(f.name, t, fid) if f.type.nullable else _req(f.name, t, fid))
    data_file = {"type": "record", "name": "r2", "fields": [
        _req("content", "int", 134),
        _req("file_path", "string", 100),
        _req("file_format", "string", 101),
        _req("partition", {"type": "record", "name": "r102", "fields": partition}, 102),
        _req("record_count", "long", 103),
        _req("file_size_in_bytes", "long", 104),
        _kv_map("null_value_counts", "long", 110, 121, 122),
        _kv_map("lower_bounds", "bytes", 125, 126, 127),
        _kv_map("upper_bounds", "bytes", 128, 129, 130),
        _opt("referenced_data_file", "string", 143),
        _opt("content_offset", "long", 144),
        _opt("content_size_in_bytes", "long", 145),
    ]}
    return {"type": "record", "name": "manifest_entry", "fields": [
        _req("status", "int", 0),
        _opt("snapshot_id", "long", 1),
        _opt("sequence_number", "long", 3),
        _opt("file_sequence_number", "long", 4),
        _req("data_file", data_file, 2),
    ]}


def list_schema(legacy: bool) -> dict[str, Any]:
    """``metadata.iceberg.manifest-legacy-version``: Iceberg 1.4's count names (``added_data_files_count``)."""
    files = "data_files" if legacy else "files"
    summary = {"type": "record", "name": "r508", "fields": [
        _req("contains_null", "boolean", 509),
        _opt("contains_nan", "boolean", 518),
        _opt("lower_bound", "bytes", 510),
        _opt("upper_bound", "bytes", 511),
    ]}
    return {"type": "record", "name": "manifest_file", "fields": [
        _req("manifest_path", "string", 500),
        _req("manifest_length", "long", 501),
        _req("partition_spec_id", "int", 502),
        _req("content", "int", 517),
        _req("sequence_number", "long", 515),
        _req("min_sequence_number", "long", 516),
        _opt("added_snapshot_id", "long", 503),
        _req(f"added_{files}_count", "int", 504),
        _req(f"existing_{files}_count", "int", 505),
        _req(f"deleted_{files}_count", "int", 506),
        _req("added_rows_count", "long", 512),
        _req("existing_rows_count", "long", 513),
        _req("deleted_rows_count", "long", 514),
        _opt("partitions", {"type": "array", "items": summary, "element-id": 508}, 507),
    ]}


# ---------------------------------------------------------------------------------------
# records
# ---------------------------------------------------------------------------------------


def _map_out(m: dict[int, Any] | None) -> list[dict[str, Any]] | None:
    return None if m is None else [{"key": k, "value": v} for k, v in m.items()]


def _map_in(v: Any) -> dict[int, Any] | None:
    if v is None:
        return None
    if isinstance(v, dict):  # a native Avro map (string keys)
        return {int(k): x for k, x in v.items()}
    return {int(kv["key"]): kv["value"] for kv in v}


class IcebergManifests:
    """Reads and writes the manifests and manifest lists of one table's Iceberg metadata."""

    def __init__(self, file_io: FileIO, partition_fields: Sequence[DataField], codec: str, legacy_list: bool) -> None:
        self.file_io = file_io
        self.partition_fields = list(partition_fields)
        self.codec = codec
        self.entry_schema = entry_schema(self.partition_fields)
        self.list_schema = list_schema(legacy_list)
        self._files_key = "data_files" if legacy_list else "files"
        # manifest lists are never rewritten (their names are unique): read each once
        self._lists: dict[str, tuple[list[IcebergManifestFileMeta], bool]] = {}

    # -- manifests ---------------------------------------------------------------------

    def _entry_record(self, e: IcebergManifestEntry) -> dict[str, Any]:
        f = e.file
        part = {pf.name: avro_value(pf.type, v) for pf, v in zip(self.partition_fields, f.partition, strict=True)}
        return {
            "status": e.status,
            "snapshot_id": e.snapshot_id,
            "sequence_number": e.sequence_number,
            "file_sequence_number": e.file_sequence_number,
            "data_file": {
                "content": f.content,
                "file_path": f.file_path,
                "file_format": f.file_format,
                "partition": part,
                "record_count": f.record_count,
                "file_size_in_bytes": f.file_size_in_bytes,
                "null_value_counts": _map_out(f.null_value_counts),
                "lower_bounds": _map_out(f.lower_bounds),
                "upper_bounds": _map_out(f.upper_bounds),
                "referenced_data_file": f.referenced_data_file,
                "content_offset": f.content_offset,
                "content_size_in_bytes": f.content_size_in_bytes,
            },
        }

    def read_entries(self, meta: IcebergManifestFileMeta) -> list[IcebergManifestEntry]:
        """Entries with Iceberg's inheritance applied (a null snapshot id or sequence number of
        an ADDED entry is the manifest's)."""
        path = meta.manifest_path
        records = self._read(path)
        out = []
        try:
            for r in records:
                df = r["data_file"]
                raw_part = df.get("partition") or {}
                part = tuple(canonical(pf.type, raw_part.get(pf.name)) for pf in self.partition_fields)
                status = int(r["status"])
                snap = r.get("snapshot_id")
                seq = r.get("sequence_number")
                fseq = r.get("file_sequence_number")
                if snap is None:
                    snap = meta.added_snapshot_id
                if status == ADDED and seq is None:
                    seq = meta.sequence_number
                if status == ADDED and fseq is None:
                    fseq = meta.sequence_number
                out.append(IcebergManifestEntry(status, snap, seq, fseq, IcebergDataFile(
                    file_path=str(df["file_path"]), file_format=str(df["file_format"]), partition=part,
                    record_count=int(df["record_count"]), file_size_in_bytes=int(df["file_size_in_bytes"]),
                    null_value_counts=_map_in(df.get("null_value_counts")),
                    lower_bounds=_map_in(df.get("lower_bounds")), upper_bounds=_map_in(df.get("upper_bounds")),
                    content=int(df.get("content") or 0), referenced_data_file=df.get("referenced_data_file"),
                    content_offset=df.get("content_offset"), content_size_in_bytes=df.get("content_size_in_bytes"),
                )))
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptMetadata(path, f"malformed Iceberg manifest entry ({type(e).__name__}: {e})") from e
        return out

    def write_manifests(self, entries: Sequence[IcebergManifestEntry], sequence_number: int, content: int,
                        new_path: Any, target_size: int, written: list[str]) -> list[IcebergManifestFileMeta]:
        """Write ``entries`` into manifests of about ``target_size`` bytes each (Java's rolling
        writer); ``new_path()`` names each file; their paths go into ``written``."""
        if not entries:
            return []
        records = [self._entry_record(e) for e in entries]
        data = write_avro(self.entry_schema, records, self.codec)
        if len(data) <= target_size or len(entries) == 1:
            chunks = [(list(entries), data)]
        else:
            n = -(-len(data) // target_size)
            size = -(-len(entries) // n)
            chunks = []
            for i in range(0, len(entries), size):
                part = list(entries[i:i + size])
                chunks.append((part, write_avro(self.entry_schema, records[i:i + size], self.codec)))
        out = []
        for part, payload in chunks:
            path = new_path()
            self.file_io.write_bytes(path, payload)
            written.append(path)
            out.append(self._meta_of(path, len(payload), part, sequence_number, content))
        return out

    def _meta_of(self, path: str, length: int, entries: list[IcebergManifestEntry], sequence_number: int,
                 content: int) -> IcebergManifestFileMeta:
        counts = {ADDED: [0, 0], EXISTING: [0, 0], DELETED: [0, 0]}
        for e in entries:
            c = counts[e.status]
            c[0] += 1
            c[1] += e.file.record_count
        seqs = [e.sequence_number for e in entries if e.sequence_number is not None]
        return IcebergManifestFileMeta(
            manifest_path=path, manifest_length=length, partition_spec_id=PARTITION_SPEC_ID, content=content,
            sequence_number=sequence_number, min_sequence_number=min(seqs) if seqs else -1,
            added_snapshot_id=sequence_number,
            added_files_count=counts[ADDED][0], existing_files_count=counts[EXISTING][0],
            deleted_files_count=counts[DELETED][0], added_rows_count=counts[ADDED][1],
            existing_rows_count=counts[EXISTING][1], deleted_rows_count=counts[DELETED][1],
            partitions=self._summaries(entries),
        )

    def _summaries(self, entries: Iterable[IcebergManifestEntry]) -> tuple[PartitionSummary, ...]:
        """Per partition field: nulls, NaNs and bounds over every entry (Java's SimpleStatsCollector);
        an all-null field has no bounds."""
        out = []
        parts = [e.file.partition for e in entries]
        for i, pf in enumerate(self.partition_fields):
            values = [p[i] for p in parts]
            present = [v for v in values if v is not None]
            is_float = isinstance(pf.type, (FloatType, DoubleType))
            nan = any(v != v for v in present) if is_float else False
            ordered = [v for v in present if not (is_float and v != v)]
            lo = to_bound(pf.type, min(ordered)) if ordered else None
            hi = to_bound(pf.type, max(ordered)) if ordered else None
            out.append(PartitionSummary(len(present) < len(values), nan, lo, hi))
        return tuple(out)

    # -- manifest lists ----------------------------------------------------------------

    def write_list(self, path: str, metas: Sequence[IcebergManifestFileMeta]) -> None:
        k = self._files_key
        records = [{
            "manifest_path": m.manifest_path, "manifest_length": m.manifest_length,
            "partition_spec_id": m.partition_spec_id, "content": m.content, "sequence_number": m.sequence_number,
            "min_sequence_number": m.min_sequence_number, "added_snapshot_id": m.added_snapshot_id,
            f"added_{k}_count": m.added_files_count, f"existing_{k}_count": m.existing_files_count,
            f"deleted_{k}_count": m.deleted_files_count, "added_rows_count": m.added_rows_count,
            "existing_rows_count": m.existing_rows_count, "deleted_rows_count": m.deleted_rows_count,
            "partitions": None if m.partitions is None else [
                {"contains_null": s.contains_null, "contains_nan": s.contains_nan, "lower_bound": s.lower_bound,
                 "upper_bound": s.upper_bound} for s in m.partitions],
        } for m in metas]
        self.file_io.write_bytes(path, write_avro(self.list_schema, records, self.codec))

    def read_list(self, path: str) -> list[IcebergManifestFileMeta]:
        return list(self._read_list(path)[0])

    def legacy_list(self, path: str) -> bool:
        """Whether a manifest list is in Paimon 0.9's layout (a top-level ``["null", record]``
        union, no field ids), which Iceberg readers cannot read: its version is rebuilt."""
        return self._read_list(path)[1]

    def _read_list(self, path: str) -> tuple[list[IcebergManifestFileMeta], bool]:
        hit = self._lists.get(path)
        if hit is not None:
            return hit
        try:
            data = self.file_io.read_bytes(path)
        except NotFound as e:
            raise MissingMetadata(str(e)) from e
        schema, records = read_avro(data, path)
        out = []
        try:
            for r in records:
                def count(name: str, r: dict[str, Any] = r) -> int:
                    v = r.get(f"{name}_files_count", r.get(f"{name}_data_files_count"))
                    return int(v or 0)

                parts = r.get("partitions")
                out.append(IcebergManifestFileMeta(
                    manifest_path=str(r["manifest_path"]), manifest_length=int(r["manifest_length"]),
                    partition_spec_id=int(r.get("partition_spec_id") or 0), content=int(r.get("content") or 0),
                    sequence_number=int(r.get("sequence_number") or 0),
                    min_sequence_number=int(r.get("min_sequence_number") or 0),
                    added_snapshot_id=r.get("added_snapshot_id"),
                    added_files_count=count("added"), existing_files_count=count("existing"),
                    deleted_files_count=count("deleted"), added_rows_count=int(r.get("added_rows_count") or 0),
                    existing_rows_count=int(r.get("existing_rows_count") or 0),
                    deleted_rows_count=int(r.get("deleted_rows_count") or 0),
                    partitions=None if parts is None else tuple(PartitionSummary(
                        bool(s["contains_null"]), s.get("contains_nan"), s.get("lower_bound"), s.get("upper_bound"))
                        for s in parts),
                ))
        except (KeyError, TypeError, ValueError) as e:
            raise CorruptMetadata(path, f"malformed Iceberg manifest list ({type(e).__name__}: {e})") from e
        self._lists[path] = (out, isinstance(schema, list))
        return self._lists[path]

    def _read(self, path: str) -> list[dict[str, Any]]:
        try:
            data = self.file_io.read_bytes(path)
        except NotFound as e:
            raise MissingMetadata(str(e)) from e
        return read_avro(data, path)[1]


def may_contain(meta: IcebergManifestFileMeta, partition_fields: Sequence[DataField], partition: tuple[Any, ...]) -> bool:
    """Whether a manifest's partition summaries admit ``partition`` (Java's partition predicate)."""
    if meta.partitions is None or len(meta.partitions) != len(partition):
        return True
    for pf, summary, value in zip(partition_fields, meta.partitions, partition, strict=True):
        if value is None:
            if not summary.contains_null:
                return False
            continue
        if summary.lower_bound is None or summary.upper_bound is None:
            return False
        try:
            lo = from_bound(pf.type, summary.lower_bound)
            hi = from_bound(pf.type, summary.upper_bound)
        except (ValueError, struct.error):
            return True
        if value != value:  # NaN: only the contains_nan flag can tell
            if not summary.contains_nan:
                return False
            continue
        if not lo <= value <= hi:
            return False
    return True
