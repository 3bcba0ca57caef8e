"""The split read of a data-evolution table (Java's ``DataEvolutionSplitRead``).

A split's files are grouped by row-id range; a group is read as one table: its files ordered
by ``_MAX_SEQUENCE_NUMBER`` descending (ties keep the split's order), each requested column
taken from the first file whose write columns hold its field id, columns no file holds read
as NULL; BLOB columns come from the range's ``.blob`` files (``blob_read``). The system
columns ``_ROW_ID`` / ``_SEQUENCE_NUMBER`` come from the first file, as any file's do (row
tracking's rule: the group's first row id plus the position, the file's max sequence number
-- the newest of the group -- unless stored physically). A deletion vector belongs to the
group's anchor file (the oldest data file by max sequence number, then file name). A range is
read batch by batch (:meth:`DataEvolutionSplitRead.merged_range_batches`): its column files
stream side by side, cut at the same row positions, and a batch holds at most ``batch_rows``
rows and about :data:`BLOB_BATCH_BYTES` of blob values, so a range larger than memory is
still read (and compacted).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pyarrow as pa

from ..data.types import DataField
from ..errors import NotYetSupported
from ..format.arrow_schema import arrow_field
from ..format.data_file import FORMATS, evolve, iter_data_file_batches, read_data_file
from ..index.deletion_vectors import DeletionVector
from ..manifest.manifest import DataFileMeta
from .blob_read import BlobColumnReader, blob_column, blob_fields_of, check_blob_read, is_blob_file
from .data_evolution import row_range_groups
from .read_plan import Split
from .row_tracking import derived_system_column, physical_system_fields, system_columns
from .split_read import SplitRead, drop_deleted

BATCH_ROWS = 65536  # rows per batch of a range read batch by batch
BLOB_BATCH_BYTES = 64 << 20  # blob bytes per batch (a batch is cut earlier when its blobs pass this)


class DataEvolutionSplitRead(SplitRead):
    """Reads a data-evolution split: one merged table per row-id range. ``blob_as`` is what a
    BLOB column reads as: its ``bytes``, ``size`` or ``descriptor`` (``blob_read``)."""

    blob_as = "bytes"

    def read(self, split: Split) -> Iterator[pa.Table]:
        check_blob_read(self.schema)
        target = [self.schema.field(n) for n in self.needed_columns()]
        dvs = self.deletion_vectors(split)
        for group in row_range_groups(split.files):
            dv = dvs.get(anchor_file(group).file_name)
            for t in self.merged_range_batches(split, group, target, self.system_columns, dv):
                if t.num_rows:
                    yield self.finish(t)

    def merged_range(self, split: Split, group: list[DataFileMeta], target: list[DataField],
                     system: Sequence[str] = ()) -> pa.Table:
        """The ``target`` columns, then the ``system`` columns, of every row of one row-id range,
        deleted rows too, in one table: the whole-range read that :meth:`merged_range_batches`
        (what the read, compaction and rewrites use) is checked against."""
        files = _checked_group([m for m in group if not is_blob_file(m)])
        rows = files[0].row_count
        columns: dict[int, pa.ChunkedArray | pa.Array] = {}
        blob_ids = blob_fields_of(target, self.schema)
        todo = {f.id: f for f in target if f.id not in blob_ids}
        for meta in files:
            fields = self.file_schemas.file_fields(meta)
            mine = [f for f in fields if f.id in todo]
            if not mine:
                continue
            path = self.file_path(split, meta)
            file_fields = list(self.file_schemas.schema(meta.schema_id).fields)
            t = read_data_file(self.table.file_io, path, file_fields, [f.name for f in mine])
            if t.num_rows != rows:
                raise NotYetSupported(f"read: data file {meta.file_name} holds {t.num_rows} rows, its metadata says "
                                      f"{rows}; cannot merge the columns of its row range")
            wanted = [todo.pop(f.id) for f in mine]
            evolved = evolve(t, file_fields, wanted)
            for f, col in zip(wanted, evolved.columns, strict=True):
                columns[f.id] = col
            if not todo:
                break
        blobs = [m for m in group if is_blob_file(m)]
        for fid in blob_ids:
            mine_blobs = [m for m in blobs if any(f.id == fid for f in self.file_schemas.file_fields(m))]
            columns[fid] = blob_column(self.table.file_io, mine_blobs, lambda m: self.file_path(split, m),
                                       files[0].first_row_id or 0, rows, self.blob_as)
        cols = [columns[f.id] if f.id in columns else pa.nulls(rows, arrow_field(f).type) for f in target]
        t = pa.Table.from_arrays(cols, names=[f.name for f in target])
        for name, col in self._system_columns(split, files[0], rows, system).items():
            t = t.append_column(name, col)
        return t

    def merged_range_batches(self, split: Split, group: list[DataFileMeta], target: list[DataField],
                             system: Sequence[str] = (), dv: DeletionVector | None = None,
                             batch_rows: int | None = None) -> Iterator[pa.Table]:
        """:meth:`merged_range` batch by batch, the rows ``dv`` marks dropped: the same rows in
        the same order, at most one batch of every column file (and its blobs) in memory.
        ``batch_rows``: :data:`BATCH_ROWS` unless given."""
        batch_rows = batch_rows or BATCH_ROWS
        files = _checked_group([m for m in group if not is_blob_file(m)])
        rows = files[0].row_count
        blob_ids = blob_fields_of(target, self.schema)
        todo = {f.id: f for f in target if f.id not in blob_ids}
        sources: list[tuple[DataFileMeta, list[DataField], list[DataField], _RowStream]] = []
        for meta in files:
            mine = [f for f in self.file_schemas.file_fields(meta) if f.id in todo]
            if not mine:
                continue
            file_fields = list(self.file_schemas.schema(meta.schema_id).fields)
            batches = iter_data_file_batches(self.table.file_io, self.file_path(split, meta), file_fields,
                                             [f.name for f in mine], batch_rows, low_memory=True)
            sources.append((meta, file_fields, [todo.pop(f.id) for f in mine], _RowStream(batches)))
            if not todo:
                break
        blobs = [m for m in group if is_blob_file(m)]
        blob_readers = {fid: BlobColumnReader(
            self.table.file_io, [m for m in blobs if any(f.id == fid for f in self.file_schemas.file_fields(m))],
            lambda m: self.file_path(split, m), files[0].first_row_id or 0, rows, self.blob_as)
            for fid in blob_ids}
        stored = [f for f in physical_system_fields(files[0]) if f.name in system]
        stored_rows = None
        if stored:
            fields = list(self.file_schemas.schema(files[0].schema_id).fields) + stored
            stored_rows = _RowStream(iter_data_file_batches(self.table.file_io, self.file_path(split, files[0]),
                                                            fields, [f.name for f in stored], batch_rows,
                                                            low_memory=True))
        blob_bytes: np.ndarray | None = None
        if self.blob_as == "bytes" and blob_readers:
            blob_bytes = np.sum([r.value_lengths() for r in blob_readers.values()], axis=0)
        for start, end in _batch_bounds(rows, batch_rows, blob_bytes):
            n = end - start
            columns: dict[int, pa.ChunkedArray | pa.Array] = {}
            for meta, file_fields, wanted, stream in sources:
                t = stream.take(n)
                if t.num_rows != n:
                    raise _rows_mismatch(meta, start + t.num_rows, rows)
                for f, col in zip(wanted, evolve(t, file_fields, wanted).columns, strict=True):
                    columns[f.id] = col
            for fid, reader in blob_readers.items():
                columns[fid] = reader.read(start, end)
            cols = [columns[f.id] if f.id in columns else pa.nulls(n, arrow_field(f).type) for f in target]
            t = pa.Table.from_arrays(cols, names=[f.name for f in target])
            if stored_rows is None:
                sys_cols = {name: derived_system_column(files[0], name, start, n) for name in system}
            else:
                sys_cols = system_columns(files[0], stored_rows.take(n), start, system)
            for name, col in sys_cols.items():
                t = t.append_column(name, col)
            yield t if dv is None else drop_deleted(t, dv, start)
        for meta, _, _, stream in sources:
            extra = stream.remaining()
            if extra:
                raise _rows_mismatch(meta, rows + extra, rows)

    def _system_columns(self, split: Split, meta: DataFileMeta, rows: int, names: Sequence[str]) -> dict[str, Any]:
        """``names`` of the range's rows from its newest file, stored values winning."""
        stored = [f for f in physical_system_fields(meta) if f.name in names]
        if not stored:
            return {n: derived_system_column(meta, n, 0, rows) for n in names}
        fields = list(self.file_schemas.schema(meta.schema_id).fields) + stored
        t = read_data_file(self.table.file_io, self.file_path(split, meta), fields, [f.name for f in stored])
        return system_columns(meta, t, 0, names)


class _RowStream:
    """A file's record batches handed out ``n`` rows at a time, so the column files of a range,
    each batched by its own format, line up row by row (slices: no copy)."""

    def __init__(self, batches: Iterator[pa.RecordBatch]) -> None:
        self._batches = batches
        self._pending: list[pa.Table] = []
        self._have = 0
        self._schema: pa.Schema | None = None

    def take(self, n: int) -> pa.Table:
        """The next ``n`` rows (fewer at the file's end)."""
        while self._have < n:
            b = next(self._batches, None)
            if b is None:
                break
            t = pa.Table.from_batches([b])
            self._schema = t.schema
            self._pending.append(t)
            self._have += t.num_rows
        if not self._pending:
            return pa.table({}) if self._schema is None else self._schema.empty_table()
        whole = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
        rest = whole.slice(n)
        self._pending, self._have = ([rest] if rest.num_rows else []), rest.num_rows
        return whole.slice(0, n)

    def remaining(self) -> int:
        """How many rows are left (reads them: only for the check at the range's end)."""
        return self._have + sum(b.num_rows for b in self._batches)


def _batch_bounds(rows: int, batch_rows: int, blob_bytes: np.ndarray | None) -> list[tuple[int, int]]:
    """Row positions ``[start, end)`` of a range's batches: every ``batch_rows`` rows, and where
    the running blob bytes pass another :data:`BLOB_BATCH_BYTES` (a row is never split)."""
    cuts = np.arange(batch_rows, rows, batch_rows, dtype=np.int64)
    if blob_bytes is not None and rows:
        running = np.cumsum(blob_bytes)
        marks = np.arange(BLOB_BATCH_BYTES, int(running[-1]), BLOB_BATCH_BYTES, dtype=np.int64)
        at = np.searchsorted(running, marks, side="right")  # first row past each mark ends a batch
        cuts = np.union1d(cuts, at[(at > 0) & (at < rows)])
    edges = np.concatenate(([0], cuts, [rows])).astype(np.int64) if rows else np.zeros(0, dtype=np.int64)
    return [(int(a), int(b)) for a, b in zip(edges[:-1], edges[1:], strict=True)]


def _rows_mismatch(meta: DataFileMeta, held: int, rows: int) -> NotYetSupported:
    return NotYetSupported(f"read: data file {meta.file_name} holds {held} rows, its metadata says {rows}; "
                           "cannot merge the columns of its row range")


def _checked_group(group: list[DataFileMeta]) -> list[DataFileMeta]:
    """The group's data files, newest first; every one must cover the same range in a known format."""
    if not group:
        raise NotYetSupported("read: a row-id range holds only .blob files and no data file")
    for meta in group:
        parts = meta.file_name.lower().split(".")[1:]
        if not any(p in FORMATS for p in parts):
            raise NotYetSupported(f"read: data-evolution file {meta.file_name} (.{parts[-1] if parts else ''} file) "
                                  "is not supported yet")
    first = group[0]
    if any(m.first_row_id != first.first_row_id or m.row_count != first.row_count for m in group):
        names = ", ".join(m.file_name for m in group)
        raise NotYetSupported(f"read: data-evolution files {names} overlap with different row-id ranges; "
                              "Java Paimon refuses such a group too")
    return sorted(group, key=lambda m: -m.max_sequence_number)  # stable: ties keep the split's order


def anchor_file(files: list[DataFileMeta]) -> DataFileMeta:
    """The file a range's deletion vector is keyed by (Java's ``DataEvolutionUtils``): the
    oldest data file, never a ``.blob`` file."""
    return min((m for m in files if not is_blob_file(m)), key=lambda m: (m.max_sequence_number, m.file_name))
