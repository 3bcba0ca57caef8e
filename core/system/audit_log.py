"""``$audit_log``, ``$binlog`` and ``$ro``: system tables backed by a read of the table.

Each is a :class:`TableRead` (``*_read``), so ``inspect`` streams its batches and stops at
``--limit`` like ``read``; the Rows functions collect them for library callers.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import pyarrow as pa

from ..operation.read import TableRead
from ..operation.split_read import ROW_KIND_COLUMN
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import Rows


def _arrow_rows(data: Any) -> Rows:
    """A (small, displayed) arrow table as Rows; maps become lists of [key, value] pairs."""
    return Rows(list(data.column_names), data.to_pylist())


def audit_log_read(table: FileStoreTable, at: TimeTravel | None = None, limit: int | None = None) -> TableRead:
    """``rowkind`` + columns: the merged batch view that keeps the retraction of a deleted key.

    Java's AuditLogTable reads with ``forceKeepDelete``, so a key whose last record is a
    delete still shows (as ``-D``) until a compaction to the top level drops it.
    """
    return TableRead(table, at, limit=limit, keep_deletes=True, with_row_kind=True)


class BinlogRead(TableRead):
    """``rowkind`` + each column as a one-element array (Java 1.x BinlogTable, batch read)."""

    def output_schema(self) -> pa.Schema:
        schema = super().output_schema()
        return pa.schema([f if f.name == ROW_KIND_COLUMN else pa.field(f.name, pa.list_(f.type)) for f in schema])

    def iter_batches(self) -> Iterator[pa.RecordBatch]:
        return _binlog_batches(super().iter_batches(), self.output_schema())  # the read's checks run here, not on first next()


def _binlog_batches(batches: Iterator[pa.RecordBatch], schema: pa.Schema) -> Generator[pa.RecordBatch, None, None]:
    try:
        for b in batches:
            yield _as_binlog(b, schema)
    finally:  # stopping early ends the read's read-ahead threads
        close = getattr(batches, "close", None)
        if close is not None:
            close()


def _as_binlog(batch: pa.RecordBatch, schema: pa.Schema) -> pa.RecordBatch:
    offsets = pa.array(range(batch.num_rows + 1), pa.int32())
    cols = [batch.column(0)] + [pa.ListArray.from_arrays(offsets, c) for c in batch.columns[1:]]
    return pa.RecordBatch.from_arrays(cols, schema=schema)


def binlog_read(table: FileStoreTable, at: TimeTravel | None = None, limit: int | None = None) -> TableRead:
    return BinlogRead(table, at, limit=limit, keep_deletes=True, with_row_kind=True)


def read_optimized_read(table: FileStoreTable, at: TimeTravel | None = None, limit: int | None = None) -> TableRead:
    """``$ro``: primary-key tables read only their top level (no merging with fresh files)."""
    return TableRead(table, at, limit=limit, top_level_only=True)


def audit_log(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    return _arrow_rows(audit_log_read(table, at).to_arrow())


def binlog(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    return _arrow_rows(binlog_read(table, at).to_arrow())


def read_optimized(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    return _arrow_rows(read_optimized_read(table, at).to_arrow())
