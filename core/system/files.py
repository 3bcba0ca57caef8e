"""``$manifests``, ``$partitions`` and ``$buckets``: the file-level system tables, computed
from the manifests of one snapshot (latest, or the one time travel picks); ``$files`` streams
(:mod:`.files_stream`)."""

from __future__ import annotations

from typing import Any

from ..data.binary_row import deserialize
from ..data.java_format import java_string, utc_wall_clock_from_millis
from ..manifest.entry_decoder import EntryDecoder
from ..operation.partition_entries import entry_groups
from ..operation.scan import FileStoreScan
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import JavaText, Rows


def manifests(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id",
            "min_partition_stats", "max_partition_stats", "min_row_id", "max_row_id",
            # ours after Java's columns: the manifest-list stats 1.1+ readers prune on
            "min_bucket", "max_bucket", "min_level", "max_level"]
    snap = table.resolve_snapshot(at)
    if snap is None:
        return Rows(cols, [])
    dec = EntryDecoder(table)
    types = dec.partition_types

    def stats_text(row: bytes) -> JavaText:
        values = deserialize(row, types)
        text = "{" + ", ".join(java_string(v, t) for v, t in zip(values, types, strict=True)) + "}"
        return JavaText(text, dict(zip(dec.partition_names, values, strict=True)))

    rows = []
    for m in FileStoreScan(table).data_manifests(snap):
        ps = m.partition_stats
        with_stats = bool(types) and ps is not None
        rows.append({
            "file_name": m.file_name,
            "file_size": m.file_size,
            "num_added_files": m.num_added_files,
            "num_deleted_files": m.num_deleted_files,
            "schema_id": m.schema_id,
            "min_partition_stats": stats_text(ps.min_values) if with_stats else None,
            "max_partition_stats": stats_text(ps.max_values) if with_stats else None,
            "min_row_id": m.min_row_id,
            "max_row_id": m.max_row_id,
            "min_bucket": m.min_bucket,
            "max_bucket": m.max_bucket,
            "min_level": m.min_level,
            "max_level": m.max_level,
        })
    return Rows(cols, rows)


def _accumulate(table: FileStoreTable, at: TimeTravel | None, keys: list[str], real_buckets: bool) -> list[dict[str, Any]]:
    """Java's PartitionEntry/BucketEntry numbers of the snapshot ``at`` picks (see
    :func:`..operation.partition_entries.entry_groups`)."""
    snap = table.resolve_snapshot(at)
    return [] if snap is None else entry_groups(table, snap, keys, real_buckets)


def _update_time(last: int | None) -> Any:
    return utc_wall_clock_from_millis(last) if last is not None else None


def partitions(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Java lists partition entries through the table's batch scan: real buckets only."""
    cols = ["partition", "record_count", "file_size_in_bytes", "file_count", "last_update_time"]
    dec = EntryDecoder(table)
    rows = [{
        "partition": dec.partition_string(g["_PARTITION"]),
        "record_count": g["_ROW_COUNT"],
        "file_size_in_bytes": g["_FILE_SIZE"],
        "file_count": g["_COUNT"],
        "last_update_time": _update_time(g["_CREATION_TIME"]),
    } for g in _accumulate(table, at, ["_PARTITION"], real_buckets=True)]
    rows.sort(key=lambda r: r["partition"])
    return Rows(cols, rows)


def buckets(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Every bucket, the postpone bucket (-2) too: Java reads bucket entries from the store scan."""
    cols = ["partition", "bucket", "record_count", "file_size_in_bytes", "file_count", "last_update_time"]
    dec = EntryDecoder(table)
    rows = [{
        "partition": dec.partition_string(g["_PARTITION"]),
        "bucket": g["_BUCKET"],
        "record_count": g["_ROW_COUNT"],
        "file_size_in_bytes": g["_FILE_SIZE"],
        "file_count": g["_COUNT"],
        "last_update_time": _update_time(g["_CREATION_TIME"]),
    } for g in _accumulate(table, at, ["_PARTITION", "_BUCKET"], real_buckets=False)]
    rows.sort(key=lambda r: (r["partition"], r["bucket"]))
    return Rows(cols, rows)
