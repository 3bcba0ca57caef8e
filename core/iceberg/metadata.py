"""``vN.metadata.json``: Iceberg table metadata as Java's ``IcebergMetadata`` writes it.

Keys in Java's order through the project's Jackson printer; the snapshot summary puts
``operation`` first. Unknown keys of a metadata file another writer left are dropped on
rewrite, as Java's reader ignores them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..errors import CorruptMetadata
from ..utils.json_util import dumps_jackson, loads_metadata

FORMAT_VERSION = 2
TAG_MAX_REF_AGE_MS = 9223372036854775807  # Java: tags are expired by Paimon, never by Iceberg
# summary key naming the Paimon snapshot a metadata version was built from (Java 2.1+): it tells a
# live version from one a rollback abandoned
COMMIT_IDENTITY = "paimon-commit-identity"


@dataclass
class IcebergSnapshot:
    sequence_number: int
    snapshot_id: int
    parent_snapshot_id: int | None
    timestamp_ms: int
    summary: dict[str, str]
    manifest_list: str
    schema_id: int

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"sequence-number": self.sequence_number, "snapshot-id": self.snapshot_id}
        if self.parent_snapshot_id is not None:
            out["parent-snapshot-id"] = self.parent_snapshot_id
        summary = {"operation": self.summary.get("operation", "append")}
        summary.update((k, v) for k, v in self.summary.items() if k != "operation")
        out.update({"timestamp-ms": self.timestamp_ms, "summary": summary, "manifest-list": self.manifest_list,
                    "schema-id": self.schema_id})
        return out

    @property
    def operation(self) -> str:
        return self.summary.get("operation", "")


@dataclass
class IcebergMetadata:
    format_version: int
    table_uuid: str
    location: str
    last_sequence_number: int
    last_updated_ms: int
    last_column_id: int
    schemas: list[dict[str, Any]]
    current_schema_id: int
    partition_specs: list[dict[str, Any]]
    default_spec_id: int
    last_partition_id: int
    snapshots: list[IcebergSnapshot]
    current_snapshot_id: int
    properties: dict[str, str] = field(default_factory=dict)
    refs: dict[str, int] = field(default_factory=dict)  # tag name -> snapshot id

    @property
    def current_snapshot(self) -> IcebergSnapshot | None:
        for s in self.snapshots:
            if s.snapshot_id == self.current_snapshot_id:
                return s
        return None

    def to_json(self) -> str:
        doc = {
            "format-version": self.format_version,
            "table-uuid": self.table_uuid,
            "location": self.location,
            "last-sequence-number": self.last_sequence_number,
            "last-updated-ms": self.last_updated_ms,
            "last-column-id": self.last_column_id,
            "schemas": self.schemas,
            "current-schema-id": self.current_schema_id,
            "partition-specs": self.partition_specs,
            "default-spec-id": self.default_spec_id,
            "last-partition-id": self.last_partition_id,
            "sort-orders": [{"order-id": 0, "fields": []}],
            "default-sort-order-id": 0,
            "snapshots": [s.to_dict() for s in self.snapshots],
            "current-snapshot-id": self.current_snapshot_id,
            "properties": self.properties,
            "refs": {name: {"snapshot-id": sid, "type": "tag", "max-ref-age-ms": TAG_MAX_REF_AGE_MS}
                     for name, sid in sorted(self.refs.items())},
        }
        return dumps_jackson(doc)

    @staticmethod
    def from_json(text: str, path: str) -> IcebergMetadata:
        obj = loads_metadata(text, path)
        if not isinstance(obj, dict):
            raise CorruptMetadata(path, "Iceberg metadata JSON is not an object")
        try:
            snapshots = [IcebergSnapshot(
                sequence_number=int(s.get("sequence-number", s["snapshot-id"])),
                snapshot_id=int(s["snapshot-id"]),
                parent_snapshot_id=None if s.get("parent-snapshot-id") is None else int(s["parent-snapshot-id"]),
                timestamp_ms=int(s["timestamp-ms"]),
                summary={str(k): str(v) for k, v in (s.get("summary") or {}).items() if v is not None},
                manifest_list=str(s["manifest-list"]),
                schema_id=int(s.get("schema-id", obj.get("current-schema-id", 0))),
            ) for s in obj.get("snapshots") or []]
            refs = {str(k): int(v["snapshot-id"]) for k, v in (obj.get("refs") or {}).items()
                    if isinstance(v, dict) and v.get("type", "tag") == "tag"}
            return IcebergMetadata(
                format_version=int(obj["format-version"]),
                table_uuid=str(obj["table-uuid"]),
                location=str(obj["location"]),
                last_sequence_number=int(obj.get("last-sequence-number", 0)),
                last_updated_ms=int(obj.get("last-updated-ms", 0)),
                last_column_id=int(obj.get("last-column-id", 0)),
                schemas=list(obj.get("schemas") or []),
                current_schema_id=int(obj.get("current-schema-id", 0)),
                partition_specs=list(obj.get("partition-specs") or []),
                default_spec_id=int(obj.get("default-spec-id", 0)),
                last_partition_id=int(obj.get("last-partition-id", 999)),
                snapshots=snapshots,
                current_snapshot_id=int(obj.get("current-snapshot-id", -1)),
                properties={str(k): str(v) for k, v in (obj.get("properties") or {}).items()},
                refs=refs,
            )
        except (KeyError, TypeError, ValueError, AttributeError) as e:
            raise CorruptMetadata(path, f"malformed Iceberg metadata ({type(e).__name__}: {e})") from e
