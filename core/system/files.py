"""``$manifests``, ``$partitions`` and ``$buckets``: the file-level system tables, computed
from the manifests of one snapshot (latest, or the one time travel picks); ``$files`` streams
(:mod:`.files_stream`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..data.binary_row import deserialize
from ..data.java_format import java_string, utc_wall_clock_from_millis
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.manifest import FileKind, ManifestEntry
from ..operation.scan import FileStoreScan, split_postponed
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


def _raw_entries(table: FileStoreTable, at: TimeTravel | None) -> list[ManifestEntry]:
    snap = table.resolve_snapshot(at)
    if snap is None:
        return []
    scan = FileStoreScan(table)
    return scan.read_entries(scan.data_manifests(snap))


def _accumulate(entries: list[ManifestEntry], key: Callable[[ManifestEntry], Any]) -> dict[Any, list[int]]:
    """Java's PartitionEntry/BucketEntry merge: ADDs count up, DELETEs down, newest creation wins.

    Over the raw (unmerged) entries, so ``last_update_time`` also sees files compacted away.
    """
    acc: dict[Any, list[int]] = {}
    for e in entries:
        sign = -1 if e.kind == FileKind.DELETE else 1
        a = acc.setdefault(key(e), [0, 0, 0, -(2**63)])
        a[0] += sign * e.file.row_count
        a[1] += sign * e.file.file_size
        a[2] += sign
        if e.file.creation_time is not None:
            a[3] = max(a[3], e.file.creation_time)
    return {k: v for k, v in acc.items() if v[2] > 0}


def _update_time(last: int) -> Any:
    return utc_wall_clock_from_millis(last) if last > -(2**63) else None


def partitions(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Java lists partition entries through the table's batch scan: real buckets only."""
    cols = ["partition", "record_count", "file_size_in_bytes", "file_count", "last_update_time"]
    dec = EntryDecoder(table)
    acc = _accumulate(split_postponed(table.schema, _raw_entries(table, at))[0], lambda e: e.partition)
    rows = [{
        "partition": dec.partition_string(part),
        "record_count": rc,
        "file_size_in_bytes": size,
        "file_count": count,
        "last_update_time": _update_time(last),
    } for part, (rc, size, count, last) in acc.items()]
    rows.sort(key=lambda r: r["partition"])
    return Rows(cols, rows)


def buckets(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Every bucket, the postpone bucket (-2) too: Java reads bucket entries from the store scan."""
    cols = ["partition", "bucket", "record_count", "file_size_in_bytes", "file_count", "last_update_time"]
    dec = EntryDecoder(table)
    acc = _accumulate(_raw_entries(table, at), lambda e: (e.partition, e.bucket))
    rows = [{
        "partition": dec.partition_string(p),
        "bucket": b,
        "record_count": rc,
        "file_size_in_bytes": size,
        "file_count": cnt,
        "last_update_time": _update_time(last),
    } for (p, b), (rc, size, cnt, last) in acc.items()]
    rows.sort(key=lambda r: (r["partition"], r["bucket"]))
    return Rows(cols, rows)
