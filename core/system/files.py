"""``$manifests``, ``$partitions`` and ``$buckets``: the file-level system tables, computed
from the manifests of one snapshot (latest, or the one time travel picks); ``$files`` streams
(:mod:`.files_stream`)."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import closing
from typing import Any, cast

from ..data.binary_row import deserialize
from ..data.java_format import java_string, utc_wall_clock_from_millis
from ..manifest.columnar import iter_manifest_tables
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.manifest import FileKind
from ..operation.scan import FileStoreScan, is_postpone_table
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


_SUMS = ["_ROW_COUNT", "_FILE_SIZE", "_COUNT"]


def _accumulate(table: FileStoreTable, at: TimeTravel | None, keys: list[str], real_buckets: bool) -> list[dict[str, Any]]:
    """Java's PartitionEntry/BucketEntry merge, grouped by ``keys`` with Arrow: ADDs count up,
    DELETEs down, the newest creation time wins; groups left with files are kept.

    Over the raw (unmerged) entries, so ``last_update_time`` also sees files compacted away;
    manifest by manifest, so memory is one manifest plus the groups. ``real_buckets``: a
    postpone table's postponed files left out (Java's batch scan)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    snap = table.resolve_snapshot(at)
    if snap is None:
        return []
    scan = FileStoreScan(table)
    drop = real_buckets and is_postpone_table(table.schema)
    partial = []
    columns = ["_KIND", "_PARTITION", "_BUCKET", "_ROW_COUNT", "_FILE_SIZE", "_CREATION_TIME"]
    tables = cast("Generator[pa.Table, None, None]",  # a generator: closing it ends the prefetch
                  iter_manifest_tables(scan.file_io, scan.manifest_dir, scan.data_manifests(snap), columns))
    with closing(tables):
        for tbl in tables:
            if drop:
                tbl = tbl.filter(pc.greater_equal(tbl.column("_BUCKET"), 0))
            sign = pc.if_else(pc.equal(tbl.column("_KIND"), int(FileKind.DELETE)), -1, 1).cast(pa.int64())
            signed = pa.table({
                **{k: tbl.column(k) for k in keys}, "_ROW_COUNT": pc.multiply(tbl.column("_ROW_COUNT"), sign),
                "_FILE_SIZE": pc.multiply(tbl.column("_FILE_SIZE"), sign), "_COUNT": sign,
                "_CREATION_TIME": tbl.column("_CREATION_TIME")})
            partial.append(_group(signed, keys))
    if not partial:
        return []
    total = _group(pa.concat_tables(partial), keys)
    return total.filter(pc.greater(total.column("_COUNT"), 0)).to_pylist()


def _group(tbl: Any, keys: list[str]) -> Any:
    """Sums of :data:`_SUMS` and the latest ``_CREATION_TIME`` per ``keys``, columns keep their names."""
    grouped = tbl.group_by(keys, use_threads=False).aggregate(
        [(c, "sum") for c in _SUMS] + [("_CREATION_TIME", "max")])
    names = [*keys, *(f"{c}_sum" for c in _SUMS), "_CREATION_TIME_max"]
    return grouped.select(names).rename_columns([*keys, *_SUMS, "_CREATION_TIME"])


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
