"""Which function computes each ``inspect`` kind: Paimon's ``$`` system tables (named as
Java names them, ``-`` for ``_``), our ``table`` overview and ``expiry`` report, and the
catalog-wide tables. A new kind: one function in a module of this package, one line here."""

from __future__ import annotations

from collections.abc import Callable

from ..errors import NotFound
from ..table.catalog import FileSystemCatalog
from ..utils.rows import Rows
from . import audit_log, files, indexes, overview, refs, snapshots
from .catalog import all_table_options, catalog_options
from .file_indexes import file_index_rows

SYSTEM_TABLES: dict[str, Callable[..., Rows]] = {
    "snapshots": snapshots.snapshots,
    "schemas": snapshots.schemas,
    "options": snapshots.options,
    "files": files.files,
    "manifests": files.manifests,
    "partitions": files.partitions,
    "buckets": files.buckets,
    "tags": refs.tags,
    "branches": refs.branches,
    "consumers": refs.consumers,
    "table-indexes": indexes.table_indexes,
    "statistics": indexes.statistics,
    "aggregation-fields": snapshots.aggregation_fields,
    "file-indexes": file_index_rows,
    "audit-log": audit_log.audit_log,
    "binlog": audit_log.binlog,
    "ro": audit_log.read_optimized,
    "table": overview.table_overview,
    "expiry": overview.expiry,
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
