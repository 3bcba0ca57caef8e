"""Which function computes each ``inspect`` kind: Paimon's ``$`` system tables (named as
Java names them, ``-`` for ``_``), our ``table`` overview and ``expiry`` report, and the
catalog-wide tables. A new kind: one function in a module of this package, one line here.

A family's module is imported when one of its kinds is first looked up: the reader-backed
kinds need pyarrow and the overview needs expire and the file-index checks, which
``inspect snapshots`` (or ``tag list``) must not pay for at start-up.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from importlib import import_module
from typing import Any, Generic, TypeVar

from ..catalog.base import Catalog
from ..errors import NotFound
from ..utils.rows import Rows, RowStream
from .catalog import all_table_options, catalog_options

SystemTable = Callable[..., Rows]  # (table, at: TimeTravel | None = None) -> Rows
StreamedTable = Callable[..., Any]  # (table, at, limit) -> operation.read.TableRead
_F = TypeVar("_F")


class _Families(Mapping[str, _F], Generic[_F]):
    """kind -> function, from ``"module:function"`` addresses inside this package."""

    def __init__(self, addresses: dict[str, str]) -> None:
        self._addresses = addresses

    def __getitem__(self, kind: str) -> _F:
        module, _, function = self._addresses[kind].partition(":")
        fn: _F = getattr(import_module(f"{__package__}.{module}"), function)
        return fn

    def __iter__(self) -> Iterator[str]:
        return iter(self._addresses)

    def __len__(self) -> int:
        return len(self._addresses)


SYSTEM_TABLES: Mapping[str, SystemTable] = _Families[SystemTable]({
    "snapshots": "snapshots:snapshots",
    "schemas": "snapshots:schemas",
    "options": "snapshots:options",
    "files": "files_stream:files",
    "manifests": "files:manifests",
    "partitions": "files:partitions",
    "buckets": "files:buckets",
    "tags": "refs:tags",
    "branches": "refs:branches",
    "consumers": "refs:consumers",
    "table-indexes": "indexes:table_indexes",
    "statistics": "indexes:statistics",
    "aggregation-fields": "snapshots:aggregation_fields",
    "file-indexes": "file_indexes:file_index_rows",
    "audit-log": "audit_log:audit_log",
    "binlog": "audit_log:binlog",
    "ro": "audit_log:read_optimized",
    "table": "overview:table_overview",
    "expiry": "overview:expiry",
    "iceberg": "iceberg:iceberg",
})

# kinds that are a read of the table: streamed batch by batch, stopping at a limit
STREAMED_TABLES: Mapping[str, StreamedTable] = _Families[StreamedTable]({
    "audit-log": "audit_log:audit_log_read",
    "binlog": "audit_log:binlog_read",
    "ro": "audit_log:read_optimized_read",
})

# kinds too large to hold at once: a RowStream of rows, chunk by chunk (the same rows as above)
ROW_STREAMS: Mapping[str, Callable[..., RowStream]] = _Families[Callable[..., RowStream]]({
    "files": "files_stream:files_stream",
})

# the columns that matter most per kind: what a terminal shows unless --columns / --wide
# (the rest of a kind's columns, and the kinds not named here, show in full)
BRIEF_COLUMNS: dict[str, list[str]] = {
    "snapshots": ["snapshot_id", "schema_id", "commit_kind", "commit_time", "total_record_count"],
    "schemas": ["schema_id", "partition_keys", "primary_keys", "update_time", "fields"],
    "files": ["partition", "bucket", "level", "record_count", "file_size_in_bytes", "file_path"],
    "manifests": ["file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id"],
    "buckets": ["partition", "bucket", "record_count", "file_size_in_bytes", "file_count"],
    "tags": ["tag_name", "snapshot_id", "commit_time", "record_count", "time_retained"],
    "table-indexes": ["partition", "bucket", "index_type", "row_count", "file_size", "file_name"],
    "file-indexes": ["partition", "bucket", "column_name", "index_type", "storage_type", "is_empty", "file_path"],
    "expiry": ["snapshot_id", "commit_time", "will_expire", "delete_files", "delete_bytes", "held_by"],
    "iceberg": ["snapshot_id", "operation", "commit_time", "total_records", "total_data_files", "tags", "current",
                "paimon_snapshot"],
}

CATALOG_TABLES: dict[str, Callable[[Catalog], Rows]] = {
    "all-table-options": all_table_options,
    "catalog-options": catalog_options,
}


def system_table(name: str) -> SystemTable:
    try:
        return SYSTEM_TABLES[name]
    except KeyError:
        raise NotFound(f"unknown system table {name!r}; known: {', '.join(SYSTEM_TABLES)}") from None
