"""``$audit_log``, ``$binlog`` and ``$ro``: system tables backed by a read of the table."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from ..operation.read import TableRead
from ..operation.split_read import ROW_KIND_COLUMN
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import Rows


def _arrow_rows(data: Any) -> Rows:
    """A (small, displayed) arrow table as Rows; maps become lists of [key, value] pairs."""
    return Rows(list(data.column_names), data.to_pylist())


def audit_log(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``rowkind`` + columns: the merged batch view that keeps the retraction of a deleted key.

    Java's AuditLogTable reads with ``forceKeepDelete``, so a key whose last record is a
    delete still shows (as ``-D``) until a compaction to the top level drops it.
    """
    return _arrow_rows(TableRead(table, at, keep_deletes=True, with_row_kind=True).to_arrow())


def binlog(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``rowkind`` + each column as a one-element array (Java 1.x BinlogTable, batch read)."""
    data = TableRead(table, at, keep_deletes=True, with_row_kind=True).to_arrow()
    offsets = pa.array(range(data.num_rows + 1), pa.int32())
    cols = [data.column(ROW_KIND_COLUMN).combine_chunks()]
    for name in data.column_names[1:]:
        cols.append(pa.ListArray.from_arrays(offsets, data.column(name).combine_chunks()))
    return _arrow_rows(pa.Table.from_arrays(cols, names=data.column_names))


def read_optimized(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``$ro``: primary-key tables read only their top level (no merging with fresh files)."""
    return _arrow_rows(TableRead(table, at, top_level_only=True).to_arrow())
