"""The rolling writer of data-evolution tables with BLOB columns (Java's
``DedicatedFormatRollingFileWriter`` + ``MultipleBlobFileWriter``, Paimon 1.4+).

The non-blob columns go to the normal data file (``_WRITE_COLS`` = those columns), rolled at
``target-file-size``; each blob column goes to ``.blob`` files of its own, rolled at
``blob.target-file-size`` (checked after every value, as Java's ``BlobFormatWriter``: a value
bigger than the target fills a file alone). When the normal file rolls, the blob files of its
rows are closed with it, so a normal file's rows are exactly those of the blob files listed
after it: the commit (:func:`core.operation.row_tracking.assign_first_row_ids`) then gives
each ``.blob`` file its sub-range of the data file's row ids. Every file takes its name from
the normal writer (same prefix, uuid and counter, same bucket directory or external path) and
numbers its rows from 0, so the commit stamps all of them with the snapshot id. Blob files
carry no value statistics (Java writes them with stats mode ``none``: ``_VALUE_STATS_COLS`` = []).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa

from ..data import binary_row
from ..errors import InvalidInput, NotYetSupported
from ..format.blob_file import BlobFileWriter, record_lengths
from ..manifest.manifest import EMPTY_STATS, DataFileMeta, FileSource
from ..utils.interrupt import discard
from .file_writer import APPEND, RollingFileWriter, creation_time_millis

if TYPE_CHECKING:
    from ..schema.options import CoreOptions
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable

BLOB_EXTENSION = ".blob"


def blob_target_file_size(options: CoreOptions) -> int:
    """``blob.target-file-size``, else the table's append ``target-file-size`` (Java)."""
    return options.get_memory_bytes("blob.target-file-size") or options.target_file_size(False)


class BlobRollingFileWriter:
    """Writes append rows of one (partition, bucket) as normal data files plus ``.blob`` files.

    Same use as :class:`RollingFileWriter`: ``write`` batches (the table's columns; a
    ``_SEQUENCE_NUMBER`` column is ignored), ``close`` returns every file's metadata -- each
    normal file followed by its blob files, column by column -- and ``abort`` deletes them.
    """

    def __init__(self, table: FileStoreTable, partition: bytes, bucket: int, *, schema: TableSchema,
                 options: CoreOptions, blob_fields: Sequence[str], partition_dir: str | None = None,
                 file_source: int = FileSource.APPEND, target_file_size: int | None = None) -> None:
        self.blob_fields = list(blob_fields)
        normal = [f for f in schema.fields if f.name not in self.blob_fields]
        if not normal:
            raise NotYetSupported("write: a table with only BLOB columns cannot be written (Java needs a "
                                  "non-blob column)")
        self.normal = RollingFileWriter(
            table, partition, bucket, kind=APPEND, level=0, file_source=file_source,
            schema=schema.copy(fields=normal), options=options, target_file_size=target_file_size,
            partition_dir=partition_dir, write_cols=[f.name for f in normal], sequence_per_file=True,
            on_file_closed=self._normal_closed)
        target = blob_target_file_size(options)
        self._blobs = [_BlobRoller(self.normal, name, target, schema.id, file_source) for name in self.blob_fields]
        self.result: list[DataFileMeta] = []
        self._pending: pa.Table | None = None  # blob columns of the batch being written
        self._pending_base = 0  # normal rows written before that batch
        self._fed = 0  # rows of the batch already handed to the blob writers

    @property
    def written(self) -> list[str]:
        """Every path created so far (for aborts of the whole write)."""
        return [*self.normal.written, *(p for b in self._blobs for p in b.written)]

    @property
    def rows_written(self) -> int:
        return self.normal.rows_written

    def write(self, batch: pa.Table | pa.RecordBatch) -> None:
        t = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        if t.num_rows == 0:
            return
        try:
            self._pending, self._pending_base, self._fed = t.select(self.blob_fields), self.normal.rows_written, 0
            self.normal.write(t.drop_columns(self.blob_fields))
            self._feed(self.normal.rows_written - self._pending_base)
        except BaseException:
            self.abort()
            raise
        finally:
            self._pending = None

    def close(self) -> list[DataFileMeta]:
        try:
            self.normal.close()  # the last normal file closes its blob files
        except BaseException:
            self.abort()
            raise
        return list(self.result)

    def abort(self) -> None:
        self.normal.abort()
        for b in self._blobs:
            b.abort()
        self.result = []

    def _feed(self, upto: int) -> None:
        """Hand rows ``_fed .. upto`` of the pending batch to the blob writers."""
        if self._pending is None or upto <= self._fed:
            return
        part = self._pending.slice(self._fed, upto - self._fed)
        for b, name in zip(self._blobs, self.blob_fields, strict=True):
            b.write(part.column(name).combine_chunks())
        self._fed = upto

    def _normal_closed(self, meta: DataFileMeta) -> None:
        """A normal file is finished: its rows' blob files are finished with it."""
        self._feed(self.normal.rows_written - self._pending_base)
        blob_metas = []
        for b in self._blobs:
            metas = b.finish()
            if sum(m.row_count for m in metas) != meta.row_count:
                raise InvalidInput(f"write: blob files of {b.field} hold {sum(m.row_count for m in metas)} rows, "
                                   f"data file {meta.file_name} {meta.row_count}")
            blob_metas += metas
        self.result += [meta, *blob_metas]


class _BlobRoller:
    """The ``.blob`` files of one column for the current normal file, rolled at the target."""

    def __init__(self, owner: RollingFileWriter, field: str, target: int, schema_id: int, file_source: int) -> None:
        self.owner = owner
        self.field = field
        self.target = max(1, target)
        self.schema_id = schema_id
        self.file_source = int(file_source)
        self.written: list[str] = []
        self._metas: list[DataFileMeta] = []
        self._current: BlobFileWriter | None = None
        self._name = ""

    def write(self, values: pa.Array) -> None:
        sizes = np.maximum(record_lengths(values), 0)
        start, n = 0, len(values)
        while start < n:
            if self._current is None:
                self._name, path = self.owner.new_path(BLOB_EXTENSION)
                self.written.append(path)
                self._current = BlobFileWriter(self.owner.table.file_io, path)
            reached = np.flatnonzero(self._current.position + np.cumsum(sizes[start:]) >= self.target)
            end = start + int(reached[0]) + 1 if len(reached) else n
            self._current.write(values.slice(start, end - start))
            if self._current.position >= self.target:
                self._close_current()
            start = end

    def finish(self) -> list[DataFileMeta]:
        if self._current is not None:
            self._close_current()
        metas, self._metas = self._metas, []
        return metas

    def abort(self) -> None:
        if self._current is not None:
            self._current.abort()
            self._current = None
        discard(self.owner.table.file_io, self.written)

    def _close_current(self) -> None:
        w, self._current = self._current, None
        assert w is not None
        size = w.close()
        self._metas.append(blob_file_meta(self._name, w, size, self.field, self.schema_id, self.file_source,
                                          self.owner.external))


def blob_file_meta(name: str, w: BlobFileWriter, size: int, field: str, schema_id: int, file_source: int,
                   external: bool) -> DataFileMeta:
    """The manifest entry of a finished ``.blob`` file, as Java's blob writer fills it: the one
    column in ``_WRITE_COLS``, rows numbered from 0, no key, no value statistics."""
    return DataFileMeta(
        file_name=name, file_size=size, row_count=w.rows,
        min_key=binary_row.EMPTY_ROW, max_key=binary_row.EMPTY_ROW, key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS, min_sequence_number=0, max_sequence_number=w.rows - 1,
        schema_id=schema_id, level=0, creation_time=creation_time_millis(), delete_row_count=0,
        file_source=int(file_source), value_stats_cols=(), external_path=w.path if external else None,
        write_cols=(field,))
