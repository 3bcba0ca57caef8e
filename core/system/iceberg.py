"""``inspect iceberg``: the Iceberg side of a table with ``metadata.iceberg.storage``.

One row per Iceberg snapshot of the version ``version-hint.text`` names, with what an Iceberg
reader sees of it and whether the Paimon snapshot of that id still exists (they must agree:
the metadata is kept on the Paimon snapshots). Not a Java system table; Java has no way to
show this.
"""

from __future__ import annotations

from ..data.java_format import local_datetime_from_millis
from ..errors import InvalidInput
from ..iceberg.metadata_files import IcebergMetadataFiles
from ..schema.iceberg_options import STORAGE, iceberg_options
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import Rows

COLUMNS = ["snapshot_id", "parent_snapshot_id", "operation", "commit_time", "schema_id", "total_records",
           "total_data_files", "added_data_files", "deleted_data_files", "tags", "current", "paimon_snapshot",
           "manifest_list", "metadata_file"]
BRIEF = ["snapshot_id", "operation", "commit_time", "total_records", "total_data_files", "tags", "current",
         "paimon_snapshot"]


def iceberg(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    opts = iceberg_options(table.schema.options)
    if not opts.enabled:
        raise InvalidInput(f"inspect iceberg: {table.identifier} has no Iceberg metadata ({STORAGE} is not set)")
    files = IcebergMetadataFiles(table, opts)
    version = files.hint()
    versions = files.versions()
    if version is None or version not in versions:
        version = versions[-1] if versions else None
    md = files.read(version) if version is not None else None
    if version is None or md is None:
        return Rows(COLUMNS, [], BRIEF)
    metadata_file = files.metadata_path(version)
    sm = table.snapshot_manager
    tags: dict[int, list[str]] = {}
    for name, sid in sorted(md.refs.items()):
        tags.setdefault(sid, []).append(name)
    rows = []
    for s in md.snapshots:
        rows.append({
            "snapshot_id": s.snapshot_id,
            "parent_snapshot_id": s.parent_snapshot_id,
            "operation": s.operation,
            "commit_time": local_datetime_from_millis(s.timestamp_ms),
            "schema_id": s.schema_id,
            "total_records": _long(s.summary.get("total-records")),
            "total_data_files": _long(s.summary.get("total-data-files")),
            "added_data_files": _long(s.summary.get("added-data-files")),
            "deleted_data_files": _long(s.summary.get("deleted-data-files")),
            "tags": ",".join(tags.get(s.snapshot_id, [])) or None,
            "current": s.snapshot_id == md.current_snapshot_id,
            "paimon_snapshot": sm.snapshot_exists(s.snapshot_id),
            "manifest_list": s.manifest_list,
            "metadata_file": metadata_file,
        })
    return Rows(COLUMNS, rows, BRIEF)


def _long(v: str | None) -> int | None:
    try:
        return None if v is None else int(v)
    except ValueError:
        return None
