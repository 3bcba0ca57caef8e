"""Update columns of existing rows of a data-evolution table by ``_ROW_ID``, in one commit.

What pypaimon's ``update_by_arrow_with_row_id`` does (and Java's MERGE INTO on such tables):
for every row-id range holding an updated row, one partial-column file with the updated
columns for the **whole** range (current values merged with the updates; a range's files must
all cover the same ids), ``_FIRST_ROW_ID`` of the range, ``_WRITE_COLS`` = the columns,
sequence number 0 that the commit stamps with the snapshot id, so the new file wins the
range's merge. Nothing else changes: an APPEND snapshot, ``nextRowId`` kept.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import IO, Any, cast

import numpy as np
import pyarrow as pa

from ..data.types import BigIntType, DataField
from ..errors import CommitConflict, InvalidInput, NotYetSupported
from ..format.arrow_schema import ROW_ID, ROW_ID_ID, SEQUENCE_NUMBER
from ..format.blob_file import BlobFileWriter
from ..format.input import InputChunk, read_inputs
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.manifest import DataFileMeta, FileSource
from ..mergetree.blob_file_writer import BLOB_EXTENSION, blob_file_meta
from ..mergetree.commit_message import CommitMessage
from ..mergetree.file_writer import APPEND, RollingFileWriter
from ..refs.snapshot import Snapshot
from ..schema.table_schema import TableSchema
from ..table.file_store_table import FileStoreTable
from ..utils.interrupt import discard
from ..utils.suggest import did_you_mean
from .blob_read import blob_columns, is_blob_file
from .commit import FileStoreCommit
from .data_evolution import check_blob_writable, row_range_groups
from .data_evolution_read import DataEvolutionSplitRead
from .read_plan import Split
from .row_tracking import is_data_evolution
from .scan import FileStoreScan

_NO_ROLL = 1 << 62  # one file per range: a partial file must cover its range exactly


@dataclass
class RowRange:
    partition: bytes
    bucket: int
    total_buckets: int
    files: list[DataFileMeta]

    @property
    def first(self) -> int:
        return self.files[0].first_row_id or 0

    @property
    def last(self) -> int:
        return self.first + max(f.row_count for f in self.files) - 1


@dataclass
class UpdateResult:
    snapshot: Snapshot | None
    rows: int  # rows updated
    files: int  # partial-column files written
    record_count: int  # rows in those files (whole ranges)
    bytes: int = 0


def update_table(table: FileStoreTable, inputs: list[str], columns: list[str], fmt: str | None = None,
                 storage_options: dict[str, Any] | None = None, stdin: IO[bytes] | None = None) -> UpdateResult:
    """``write --columns``: read ``_ROW_ID`` and ``columns`` from the input files (checked and
    converted to the table's types) and update those rows in one commit."""
    schema = update_schema(table, columns)
    chunks = read_inputs(inputs, schema, fmt, storage_options=storage_options, stdin=stdin)
    with contextlib.closing(cast("Generator[InputChunk, None, None]", chunks)):
        return update_by_row_id(table, (c.data for c in chunks), columns)


def update_schema(table: FileStoreTable, columns: list[str]) -> TableSchema:
    """The input's schema: ``_ROW_ID`` and the updated columns; refuses a bad request before I/O."""
    schema = table.schema
    if not is_data_evolution(table.options):
        raise InvalidInput(f"write --columns: {table.identifier} is not a data-evolution table "
                           "(data-evolution.enabled); rows can be updated by _ROW_ID only there")
    check_blob_writable(schema, "write --columns")
    if not columns:
        raise InvalidInput("write --columns: no columns given")
    if len(set(columns)) != len(columns):
        raise InvalidInput(f"write --columns: a column is named twice in {', '.join(columns)}")
    names = set(schema.field_names)
    unknown = [c for c in columns if c not in names]
    if unknown:
        raise InvalidInput(f"write --columns: unknown column(s) {', '.join(unknown)}"
                           f"{did_you_mean(unknown[0], schema.field_names)}")
    parts = [c for c in columns if c in schema.partition_keys]
    if parts:
        raise InvalidInput(f"write --columns: partition column(s) {', '.join(parts)} cannot be updated")
    wanted = set(columns)
    row_id = DataField(ROW_ID_ID, ROW_ID, BigIntType(nullable=False))
    return schema.copy(fields=[row_id, *(f for f in schema.fields if f.name in wanted)],
                       partition_keys=[], primary_keys=[])


def update_by_row_id(table: FileStoreTable, chunks: Iterable[pa.Table], columns: list[str]) -> UpdateResult:
    """Apply the ``_ROW_ID``-addressed rows of ``chunks`` to ``columns``; one APPEND commit."""
    update_schema(table, columns)
    updates = _collect(chunks, columns)
    if updates.num_rows == 0:
        return UpdateResult(None, 0, 0, 0)
    base = table.snapshot_manager.latest_snapshot()
    ranges = table_ranges(table, base)
    touched = _touched(ranges, updates.column(ROW_ID).to_numpy())
    commit = FileStoreCommit(table)
    written: list[str] = []
    try:
        messages = _write_ranges(table, ranges, touched, updates, columns, written)

        def unchanged(latest: Snapshot | None) -> None:
            check_ranges_unchanged(table, base, latest, [ranges[i] for i in touched])

        snap = commit.commit(messages, "APPEND", check_latest=unchanged)
    except BaseException:
        if not commit.may_have_published():
            discard(table.file_io, written)
        raise
    files = [f for m in messages for f in m.new_files]
    return UpdateResult(snap, updates.num_rows, len(files), sum(f.row_count for f in files),
                        sum(f.file_size for f in files))


def _collect(chunks: Iterable[pa.Table], columns: list[str]) -> pa.Table:
    """The update rows ordered by ``_ROW_ID``; a row id given twice is refused."""
    parts = [c.select([ROW_ID, *columns]) for c in chunks]
    if not parts:
        return pa.table({ROW_ID: pa.array([], pa.int64())})
    t = pa.concat_tables(parts).combine_chunks()
    t = t.take(np.argsort(t.column(ROW_ID).to_numpy(), kind="stable"))
    ids = t.column(ROW_ID).to_numpy()
    dup = np.flatnonzero(ids[1:] == ids[:-1])
    if dup.size:
        raise InvalidInput(f"write --columns: _ROW_ID {int(ids[dup[0]])} is given more than once")
    return t


def table_ranges(table: FileStoreTable, snapshot: Snapshot | None) -> list[RowRange]:
    """The snapshot's row-id ranges, in row-id order (ids are unique across partitions)."""
    by_bucket: dict[tuple[bytes, int, int], list[DataFileMeta]] = {}
    for e in FileStoreScan(table).plan(snapshot):
        by_bucket.setdefault((e.partition, e.bucket, e.total_buckets), []).append(e.file)
    out = [RowRange(p, b, tb, g) for (p, b, tb), files in by_bucket.items() for g in row_range_groups(files)]
    out.sort(key=lambda r: r.first)
    return out


def _touched(ranges: list[RowRange], ids: np.ndarray) -> dict[int, np.ndarray]:
    """Range index -> positions (in the sorted updates) of the rows it holds; unknown ids refused."""
    starts = np.array([r.first for r in ranges], dtype=np.int64)
    lasts = np.array([r.last for r in ranges], dtype=np.int64)
    at = np.searchsorted(starts, ids, side="right") - 1
    bad = (at < 0) | (ids > lasts[np.clip(at, 0, None)] if len(ranges) else np.ones(len(ids), bool))
    if bad.any():
        raise InvalidInput(f"write --columns: _ROW_ID {int(ids[np.flatnonzero(bad)[0]])} is not a row of the table")
    out: dict[int, np.ndarray] = {}
    bounds = np.flatnonzero(np.diff(at)) + 1
    for pos in np.split(np.arange(len(ids)), bounds):
        out[int(at[pos[0]])] = pos
    return out


def _write_ranges(table: FileStoreTable, ranges: list[RowRange], touched: dict[int, np.ndarray],
                  updates: pa.Table, columns: list[str], written: list[str]) -> list[CommitMessage]:
    """One partial-column file per touched range (and one ``.blob`` file per updated blob
    column), one batch of a range in memory at a time."""
    blobs = set(blob_columns(table.schema))
    normal = [c for c in columns if c not in blobs]
    reader = DataEvolutionSplitRead(table, normal, None) if normal else None
    decoder = EntryDecoder(table)
    target = [table.schema.field(c) for c in normal]
    messages: dict[tuple[bytes, int], CommitMessage] = {}
    file_schema = table.schema.copy(fields=target, partition_keys=[], primary_keys=[])
    for i, pos in touched.items():
        r = ranges[i]
        rows = updates.take(pa.array(pos))
        key = (r.partition, r.bucket)
        msg = messages.setdefault(key, CommitMessage(r.partition, r.bucket, r.total_buckets))
        if reader is not None:
            split = Split(r.partition, decoder.partition_values(r.partition), r.bucket, r.files)
            merged = _overlay_batches(reader.merged_range_batches(split, r.files, target), rows, r.first, normal)
            meta = _write_file(table, file_schema, r, decoder.partition_dir(r.partition), merged, written)
            msg.new_files.append(replace(meta, first_row_id=r.first, write_cols=tuple(normal)))
        for c in columns:
            if c in blobs:
                meta = _write_blob_delta(table, r, decoder.partition_dir(r.partition), rows, c, written)
                msg.new_files.append(replace(meta, first_row_id=r.first))
    return list(messages.values())


def _write_blob_delta(table: FileStoreTable, r: RowRange, partition_dir: str, rows: pa.Table, column: str,
                      written: list[str]) -> DataFileMeta:
    """The updated values of one blob column of a range as a ``.blob`` file from the range's
    first row id, as pypaimon's update by ``_ROW_ID`` writes it: when older blob files hold the
    column it runs to the last updated row, the rows left alone being placeholders that read
    through to those files; otherwise it covers the whole range, NULL where not updated."""
    rel = rows.column(ROW_ID).to_numpy() - r.first
    baseline = any(is_blob_file(f) and f.write_cols == (column,) for f in r.files)
    n = int(rel.max()) + 1 if baseline else r.last - r.first + 1
    values = rows.column(column).combine_chunks().cast(pa.large_binary())
    at = np.full(n, len(values), dtype=np.int64)  # the trailing NULL
    at[rel] = np.arange(len(values))
    values = pa.concat_arrays([values, pa.nulls(1, pa.large_binary())]).take(pa.array(at))
    placeholders = at == len(rows) if baseline else None
    namer = RollingFileWriter(table, r.partition, r.bucket, kind=APPEND, level=0, partition_dir=partition_dir,
                              index_builder_factory=None)  # names the file: prefix, uuid, bucket dir / external path
    name, path = namer.new_path(BLOB_EXTENSION)
    written.append(path)
    w = BlobFileWriter(table.file_io, path)
    try:
        w.write(values, placeholders)
        size = w.close()
    except BaseException:
        w.abort()
        raise
    return blob_file_meta(name, w, size, column, table.schema.id, FileSource.APPEND, namer.external)


def _overlay(current: pa.Table, updates: pa.Table, first: int, columns: list[str]) -> pa.Table:
    """``current`` with the rows ``updates`` names replaced (vectorised take over both)."""
    n = current.num_rows
    index = np.arange(n, dtype=np.int64)
    index[updates.column(ROW_ID).to_numpy() - first] = n + np.arange(updates.num_rows, dtype=np.int64)
    take = pa.array(index)
    cols = []
    for c in columns:
        old = current.column(c)
        new = updates.column(c).cast(old.type)
        cols.append(pa.concat_arrays([*old.chunks, *new.chunks]).take(take))
    return pa.Table.from_arrays(cols, names=columns)


def _overlay_batches(batches: Iterable[pa.Table], updates: pa.Table, first: int, columns: list[str],
                     ) -> Iterator[pa.Table]:
    """:func:`_overlay` over a range read batch by batch (``updates`` sorted by row id)."""
    ids = updates.column(ROW_ID).to_numpy()
    start = first
    for t in batches:
        lo, hi = (int(i) for i in np.searchsorted(ids, [start, start + t.num_rows]))
        yield _overlay(t, updates.slice(lo, hi - lo), start, columns)
        start += t.num_rows


def _write_file(table: FileStoreTable, schema: TableSchema, r: RowRange, partition_dir: str,
                data: Iterable[pa.Table], written: list[str]) -> DataFileMeta:
    w = RollingFileWriter(table, r.partition, r.bucket, kind=APPEND, level=0, file_source=FileSource.APPEND,
                          schema=schema, target_file_size=_NO_ROLL, partition_dir=partition_dir,
                          index_builder_factory=None)
    rows = 0
    try:
        for t in data:
            w.write(t.append_column(SEQUENCE_NUMBER, pa.array(np.zeros(t.num_rows, dtype=np.int64))))
            rows += t.num_rows
        metas = w.close()
    finally:
        written.extend(w.written)
    if len(metas) != 1 or metas[0].row_count != rows:
        raise NotYetSupported("write --columns: a range's partial-column file could not be written as one file")
    return metas[0]


def check_ranges_unchanged(table: FileStoreTable, base: Snapshot | None, latest: Snapshot | None,
                           ranges: list[RowRange]) -> None:
    """Java's data-evolution conflict check: files computed from ``ranges`` as of ``base`` must
    not land on a table where another commit has rewritten one of them since (an update would
    undo that change; a partial file would no longer match its range's files)."""
    if latest is None or base is None or latest.id == base.id:
        return
    now = {(r.partition, r.first): {f.file_name for f in r.files} for r in table_ranges(table, latest)}
    for r in ranges:
        if now.get((r.partition, r.first)) != {f.file_name for f in r.files}:
            raise CommitConflict(f"rows {r.first}..{r.last} of {table.identifier} changed since snapshot "
                                 f"{base.id}; nothing was committed, run it again")
