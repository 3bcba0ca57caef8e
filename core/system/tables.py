"""Rows of Paimon's ``$`` system tables, computed from metadata files.

Column names follow Java Paimon's system tables; the columns Java 0.9 has come first and
render their values as Java 0.9 does (partitions as ``[v1, v2]``, stats as ``{col=v}``), and
columns later releases added follow. ``inspect table`` is our own one-screen overview.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ..data.java_format import (
    java_array_string,
    java_hash_map_order,
    java_map_string,
    local_datetime_from_millis,
    utc_wall_clock_from_millis,
)
from ..errors import NotFound
from ..manifest.stats_reader import StatsReader
from ..operation.scan import FileStoreScan, is_postpone_table, split_postponed
from ..utils.rows import Rows

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..table.catalog import FileSystemCatalog
    from ..table.file_store_table import FileStoreTable, TimeTravel


def _flat_json(obj: Any) -> str:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


# ---------------------------------------------------------------------------------------
# snapshot / schema level tables
# ---------------------------------------------------------------------------------------

SNAPSHOT_COLUMNS = [
    "snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind", "commit_time",
    "base_manifest_list", "delta_manifest_list", "changelog_manifest_list", "total_record_count",
    "delta_record_count", "changelog_record_count", "watermark", "next_row_id", "operation",
    "writer_version",
]


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


def tags(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["tag_name", "snapshot_id", "schema_id", "commit_time", "record_count", "create_time", "time_retained"]
    rows = []
    for t in table.tag_manager.tags():
        rows.append({
            "tag_name": t.name,
            "snapshot_id": t.snapshot.id,
            "schema_id": t.snapshot.schema_id,
            "commit_time": local_datetime_from_millis(t.snapshot.time_millis),
            "record_count": t.snapshot.total_record_count,
            "create_time": t.create_time,
            "time_retained": t.time_retained_java,
        })
    return Rows(cols, rows)


def branches(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Java 0.9's columns; 1.x dropped ``created_from_*`` but keeps the other two."""
    bm = table.branch_manager
    rows = []
    for name, millis in bm.branches():
        tag, snap = bm.branch_origin(name)
        rows.append({
            "branch_name": name,
            "created_from_tag": tag,
            "created_from_snapshot": snap,
            "create_time": local_datetime_from_millis(millis) if millis else None,
        })
    return Rows(["branch_name", "created_from_tag", "created_from_snapshot", "create_time"], rows)


def consumers(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    rows = [{"consumer_id": k, "next_snapshot_id": v} for k, v in table.consumer_manager.consumers().items()]
    return Rows(["consumer_id", "next_snapshot_id"], rows)


def statistics(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["snapshot_id", "schema_id", "mergedRecordCount", "mergedRecordSize", "colstat"]
    snap = table.resolve_snapshot(at)
    if snap is None or not snap.statistics:
        return Rows(cols, [])
    from ..refs.statistics import read_statistics

    st = read_statistics(table.file_io, table.path, snap.statistics)
    return Rows(cols, [{
        "snapshot_id": st.snapshot_id,
        "schema_id": st.schema_id,
        "mergedRecordCount": st.merged_record_count,
        "mergedRecordSize": st.merged_record_size,
        "colstat": st.col_stats_json(),
    }])


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
        "function": "[" + ", ".join(functions.get(f.name, [])) + "]",
        "function_options": "[" + ", ".join(fn_options.get(f.name, [])) + "]",
        "comment": f.description,
    } for f in table.schema.fields]
    return Rows(cols, rows)


# ---------------------------------------------------------------------------------------
# file level tables
# ---------------------------------------------------------------------------------------


class _Decoder(StatsReader):
    """Decodes partitions, keys and stats of files written under any schema of the table.

    Everything derived from a partition or a schema is computed once: a table has few of
    those and may have hundreds of thousands of files. Value stats come from StatsReader.
    """

    def __init__(self, table: FileStoreTable) -> None:
        super().__init__(table)
        self.partition_types = [f.type for f in table.schema.logical_partition_type.fields]
        self._partitions: dict[bytes, tuple[list[Any], str, str]] = {}
        self._key_types: dict[int, list[Any]] = {}

    def _partition(self, partition: bytes) -> tuple[list[Any], str, str]:
        hit = self._partitions.get(partition)
        if hit is None:
            from ..data.binary_row import deserialize
            from ..io import paths

            values = deserialize(partition, self.partition_types) if self.partition_types else []
            text = java_array_string(values, self.partition_types)
            hit = (values, text, paths.partition_path_for(self.table.schema, values))
            self._partitions[partition] = hit
        return hit

    def partition_values(self, partition: bytes) -> list[Any]:
        return self._partition(partition)[0]

    def partition_string(self, partition: bytes) -> str:
        return self._partition(partition)[1]

    def partition_dir(self, partition: bytes) -> str:
        return self._partition(partition)[2]

    def key_string(self, key: bytes, schema_id: int) -> str | None:
        from ..data.binary_row import deserialize, serialized_arity

        if serialized_arity(key) <= 0:
            return None
        types = self._key_types.get(schema_id)
        if types is None:
            s = self.schema(schema_id)
            types = self._key_types[schema_id] = [s.field(n).type for n in s.trimmed_primary_keys]
        return java_array_string(deserialize(key, types), types)


def _file_format(file_name: str) -> str:
    return file_name.rsplit(".", 1)[-1] if "." in file_name else ""


FILES_COLUMNS = [
    "partition", "bucket", "file_path", "file_format", "schema_id", "level", "record_count",
    "file_size_in_bytes", "min_key", "max_key", "null_value_counts", "min_value_stats",
    "max_value_stats", "min_sequence_number", "max_sequence_number", "creation_time",
    "deleteRowCount", "file_source", "first_row_id", "write_cols",
]


def _live_entries(table: FileStoreTable, at: TimeTravel | None) -> tuple[Snapshot | None, list[ManifestEntry]]:
    """Files a batch scan sees: Java's ``$files`` plans through the table's batch scan, so a
    postpone table's postponed files are not listed (``$buckets`` shows them)."""
    snap = table.resolve_snapshot(at)
    return snap, FileStoreScan(table).batch_plan(snap)


def files(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    from ..io import paths

    _, entries = _live_entries(table, at)
    dec = _Decoder(table)
    types_by_name = {f.name: f.type for f in table.schema.fields}
    rows = []
    for e in entries:
        m = e.file
        nc, lo, hi = dec.value_stats(m)
        path = paths.data_file_path(table.path, dec.partition_dir(e.partition), e.bucket, m.file_name, m.external_path)
        rows.append({
            "partition": dec.partition_string(e.partition),
            "bucket": e.bucket,
            "file_path": path,
            "file_format": _file_format(m.file_name),
            "schema_id": m.schema_id,
            "level": m.level,
            "record_count": m.row_count,
            "file_size_in_bytes": m.file_size,
            "min_key": dec.key_string(m.min_key, m.schema_id),
            "max_key": dec.key_string(m.max_key, m.schema_id),
            "null_value_counts": java_map_string(nc),
            "min_value_stats": java_map_string(lo, types_by_name),
            "max_value_stats": java_map_string(hi, types_by_name),
            "min_sequence_number": m.min_sequence_number,
            "max_sequence_number": m.max_sequence_number,
            "creation_time": utc_wall_clock_from_millis(m.creation_time) if m.creation_time is not None else None,
            "deleteRowCount": m.delete_row_count,
            "file_source": _file_source(m.file_source),
            "first_row_id": m.first_row_id,
            "write_cols": list(m.write_cols) if m.write_cols is not None else None,
        })
    return Rows(FILES_COLUMNS, rows)


def _file_source(code: int | None) -> str | None:
    return {0: "APPEND", 1: "COMPACT"}.get(code) if code is not None else None


def manifests(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id",
            "min_partition_stats", "max_partition_stats", "min_row_id", "max_row_id"]
    snap = table.resolve_snapshot(at)
    if snap is None:
        return Rows(cols, [])
    from ..data.binary_row import deserialize

    dec = _Decoder(table)
    rows = []
    for m in FileStoreScan(table).data_manifests(snap):
        ps = m.partition_stats
        if dec.partition_types and ps is not None:
            lo = "{" + ", ".join(
                _plain(v, t) for v, t in zip(deserialize(ps.min_values, dec.partition_types), dec.partition_types)) + "}"
            hi = "{" + ", ".join(
                _plain(v, t) for v, t in zip(deserialize(ps.max_values, dec.partition_types), dec.partition_types)) + "}"
        else:
            lo = hi = None
        rows.append({
            "file_name": m.file_name,
            "file_size": m.file_size,
            "num_added_files": m.num_added_files,
            "num_deleted_files": m.num_deleted_files,
            "schema_id": m.schema_id,
            "min_partition_stats": lo,
            "max_partition_stats": hi,
            "min_row_id": m.min_row_id,
            "max_row_id": m.max_row_id,
        })
    return Rows(cols, rows)


def _plain(v: Any, t: Any) -> str:
    from ..data.java_format import java_string

    return java_string(v, t)


def _raw_entries(table: FileStoreTable, at: TimeTravel | None) -> list[ManifestEntry]:
    snap = table.resolve_snapshot(at)
    return [] if snap is None else FileStoreScan(table).read_entries(FileStoreScan(table).data_manifests(snap))


def _accumulate(entries: list[ManifestEntry], key: Callable[[ManifestEntry], Any]) -> dict[Any, list[int]]:
    """Java's PartitionEntry/BucketEntry merge: ADDs count up, DELETEs down, newest creation wins.

    Over the raw (unmerged) entries, so ``last_update_time`` also sees files compacted away.
    """
    from ..manifest.manifest import FileKind

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
    dec = _Decoder(table)
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
    dec = _Decoder(table)
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


def table_indexes(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["partition", "bucket", "index_type", "file_name", "file_size", "row_count", "dv_ranges"]
    snap = table.resolve_snapshot(at)
    dec = _Decoder(table)
    rows = []
    for e in FileStoreScan(table).index_entries(snap):
        f = e.index_file
        rows.append({
            "partition": dec.partition_string(e.partition),
            "bucket": e.bucket,
            "index_type": f.index_type,
            "file_name": f.file_name,
            "file_size": f.file_size,
            "row_count": f.row_count,
            "dv_ranges": None if f.dv_ranges is None else [
                {"f0": d.data_file_name, "f1": d.offset, "f2": d.length, "_CARDINALITY": d.cardinality}
                for d in f.dv_ranges
            ],
        })
    return Rows(cols, rows)


def file_indexes(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Per live file and indexed column: index types, sizes, storage, bitmap distinct values."""
    from .file_indexes import file_index_rows

    return file_index_rows(table, at)


# ---------------------------------------------------------------------------------------
# reader-backed tables and catalog-wide tables
# ---------------------------------------------------------------------------------------


def _arrow_rows(data: Any) -> Rows:
    """A (small, displayed) arrow table as Rows; maps become lists of [key, value] pairs."""
    return Rows(list(data.column_names), data.to_pylist())


def audit_log(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``rowkind`` + columns: the merged batch view that keeps the retraction of a deleted key.

    Java's AuditLogTable reads with ``forceKeepDelete``, so a key whose last record is a
    delete still shows (as ``-D``) until a compaction to the top level drops it.
    """
    from ..operation.read import TableRead

    return _arrow_rows(TableRead(table, at, keep_deletes=True, with_row_kind=True).to_arrow())


def binlog(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``rowkind`` + each column as a one-element array (Java 1.x BinlogTable, batch read)."""
    import pyarrow as pa

    from ..operation.read import ROW_KIND_COLUMN, TableRead

    data = TableRead(table, at, keep_deletes=True, with_row_kind=True).to_arrow()
    offsets = pa.array(range(data.num_rows + 1), pa.int32())
    cols = [data.column(ROW_KIND_COLUMN).combine_chunks()]
    for name in data.column_names[1:]:
        cols.append(pa.ListArray.from_arrays(offsets, data.column(name).combine_chunks()))
    return _arrow_rows(pa.Table.from_arrays(cols, names=data.column_names))


def read_optimized(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``$ro``: primary-key tables read only their top level (no merging with fresh files)."""
    from ..operation.read import TableRead

    return _arrow_rows(TableRead(table, at, top_level_only=True).to_arrow())


def all_table_options(catalog: FileSystemCatalog) -> Rows:
    rows = []
    for db in catalog.list_databases():
        for t in catalog.list_tables(db):
            tbl = catalog.get_table(f"{db}.{t}")
            for k, v in tbl.schema.options.items():
                rows.append({"database_name": db, "table_name": t, "key": k, "value": v})
    return Rows(["database_name", "table_name", "key", "value"], rows)


_SECRET_WORDS = ("secret", "password", "token", "key")


def catalog_options(catalog: FileSystemCatalog) -> Rows:
    rows = [{"key": "warehouse", "value": catalog.warehouse}]

    def walk(prefix: str, d: dict[str, Any]) -> None:
        for k, v in d.items():
            name = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(name + ".", v)
            else:
                hidden = any(w in k.lower() for w in _SECRET_WORDS)
                rows.append({"key": name, "value": "******" if hidden else str(v)})

    walk("", catalog.file_io.storage_options)
    return Rows(["key", "value"], rows)


def table_overview(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """One screen about a table: schema, keys, options, snapshot range, live files, levels."""
    s = table.schema
    sm = table.snapshot_manager
    snap = table.resolve_snapshot(at)
    entries, postponed = split_postponed(s, FileStoreScan(table).plan(snap))
    earliest, latest = sm.earliest_snapshot_id(), sm.latest_snapshot_id()
    opts = table.options
    target = opts.target_file_size(bool(s.primary_keys))
    levels: dict[int, int] = {}
    buckets_seen = set()
    for e in entries:
        levels[e.file.level] = levels.get(e.file.level, 0) + 1
        buckets_seen.add((e.partition, e.bucket))
    small = sum(1 for e in entries if e.file.file_size < target)
    props: list[tuple[str, Any]] = [
        ("table", str(table.identifier) + (f" (branch {table.branch})" if table.branch else "")),
        ("path", table.path),
        ("schema_id", s.id),
        ("columns", ", ".join(f"{f.name} {f.type.as_sql()}" for f in s.fields)),
        ("primary_keys", ", ".join(s.primary_keys) or "(none: append table)"),
        ("partition_keys", ", ".join(s.partition_keys) or "(unpartitioned)"),
        ("bucket", s.options.get("bucket", "-1" if not s.primary_keys else "-1")),
        ("comment", s.comment),
        ("options", ", ".join(f"{k}={v}" for k, v in s.options.items())),
        ("snapshots", f"{earliest}..{latest}" if latest is not None else "(none)"),
        ("snapshot", snap.id if snap else None),
        ("snapshot_time", local_datetime_from_millis(snap.time_millis) if snap else None),
        ("commit_kind", snap.commit_kind if snap else None),
        ("total_record_count", snap.total_record_count if snap else 0),
        ("live_files", len(entries)),
        ("live_bytes", sum(e.file.file_size for e in entries)),
        ("live_rows", sum(e.file.row_count for e in entries)),
        ("partitions", len({e.partition for e in entries})),
        ("buckets", len(buckets_seen)),
        ("levels", ", ".join(f"L{lv}: {n}" for lv, n in sorted(levels.items())) or "(no files)"),
        ("small_files", f"{small} below target-file-size ({target} bytes)"),
    ]
    if is_postpone_table(s):  # written, not yet readable: the live_* counts leave them out
        props += [
            ("postponed_files", len(postponed)),
            ("postponed_rows", sum(e.file.row_count for e in postponed)),
            ("postponed_bytes", sum(e.file.file_size for e in postponed)),
            ("postponed_partitions", len({e.partition for e in postponed})),
        ]
    props += [
        ("tags", len(table.tag_manager.tags())),
        ("branches", len(table.branch_manager.branches())),
    ]
    from ..operation.expire import snapshot_health

    for problem in snapshot_health(table):
        props.append(("warning", problem))
    from .file_indexes import file_index_warnings

    for problem in file_index_warnings(table):
        props.append(("warning", problem))
    return Rows(["property", "value"], [{"property": k, "value": v} for k, v in props])


def expiry(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``inspect expiry``: per snapshot, whether the next ``expire`` removes it and what it
    frees, or what holds it (retain-min, time-retained, a consumer, a tag, a branch)."""
    from ..operation.expire import expiry_report

    return expiry_report(table)


SYSTEM_TABLES: dict[str, Callable[..., Rows]] = {
    "snapshots": snapshots,
    "schemas": schemas,
    "options": options,
    "files": files,
    "manifests": manifests,
    "partitions": partitions,
    "buckets": buckets,
    "tags": tags,
    "branches": branches,
    "consumers": consumers,
    "table-indexes": table_indexes,
    "statistics": statistics,
    "aggregation-fields": aggregation_fields,
    "file-indexes": file_indexes,
    "audit-log": audit_log,
    "binlog": binlog,
    "ro": read_optimized,
    "table": table_overview,
    "expiry": expiry,
}

CATALOG_TABLES: dict[str, Callable[[FileSystemCatalog], Rows]] = {
    "all-table-options": all_table_options,
    "catalog-options": catalog_options,
}


def system_table(name: str) -> Callable[..., Rows]:
    try:
        return SYSTEM_TABLES[name]
    except KeyError:
        raise NotFound(f"unknown system table {name!r}; known: {', '.join(SYSTEM_TABLES)}") from None
