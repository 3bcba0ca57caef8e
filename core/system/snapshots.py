"""``$snapshots``, ``$schemas``, ``$options`` and ``$aggregation_fields``: what the snapshot and
schema files of a table say, column for column as Java's system tables show it."""

from __future__ import annotations

import json
from typing import Any

from ..data.java_format import java_hash_map_order, local_datetime_from_millis
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import JavaText, Rows

SNAPSHOT_COLUMNS = [
    "snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind", "commit_time",
    "base_manifest_list", "delta_manifest_list", "changelog_manifest_list", "total_record_count",
    "delta_record_count", "changelog_record_count", "watermark", "next_row_id", "operation",
    "writer_version",
]


def _flat_json(obj: Any) -> JavaText:
    """Java's compact JSON text; the object itself in JSON output."""
    return JavaText(json.dumps(obj, separators=(",", ":"), ensure_ascii=False), obj)


def snapshots(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    rows = []
    for s in table.snapshot_manager.snapshots():
        rows.append({
            "snapshot_id": s.id,
            "schema_id": s.schema_id,
            "commit_user": s.commit_user,
            "commit_identifier": s.commit_identifier,
            "commit_kind": s.commit_kind,
            "commit_time": local_datetime_from_millis(s.time_millis),
            "base_manifest_list": s.base_manifest_list,
            "delta_manifest_list": s.delta_manifest_list,
            "changelog_manifest_list": s.changelog_manifest_list,
            "total_record_count": s.total_record_count,
            "delta_record_count": s.delta_record_count,
            "changelog_record_count": s.changelog_record_count,
            "watermark": s.watermark,
            "next_row_id": s.next_row_id,
            "operation": s.operation,
            "writer_version": s.writer_version,
        })
    return Rows(SNAPSHOT_COLUMNS, rows)


def schemas(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["schema_id", "fields", "partition_keys", "primary_keys", "options", "comment", "update_time"]
    rows = []
    for s in table.schema_manager.list_all():
        rows.append({
            "schema_id": s.id,
            "fields": _flat_json([f.to_json() for f in s.fields]),
            "partition_keys": _flat_json(list(s.partition_keys)),
            "primary_keys": _flat_json(list(s.primary_keys)),
            "options": _flat_json({k: s.options[k] for k in java_hash_map_order(s.options)}),
            "comment": s.comment,
            "update_time": local_datetime_from_millis(s.time_millis),
        })
    return Rows(cols, rows)


def options(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    opts = table.schema.options
    return Rows(["key", "value"], [{"key": k, "value": opts[k]} for k in java_hash_map_order(opts)])


def aggregation_fields(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["field_name", "field_type", "function", "function_options", "comment"]
    functions: dict[str, list[str]] = {}
    fn_options: dict[str, list[str]] = {}
    for k, v in table.schema.options.items():
        parts = k.split(".")
        if len(parts) > 2 and parts[0] == "fields":
            functions.setdefault(parts[1], []).append(v)
            fn_options.setdefault(parts[1], []).append(k)
    rows = [{
        "field_name": f.name,
        "field_type": f.type.as_sql(),
        "function": _java_list(functions.get(f.name, [])),
        "function_options": _java_list(fn_options.get(f.name, [])),
        "comment": f.description,
    } for f in table.schema.fields]
    return Rows(cols, rows)


def _java_list(items: list[str]) -> JavaText:
    """``List.toString`` (``[a, b]``); the list in JSON output."""
    return JavaText("[" + ", ".join(items) + "]", items)
