"""RollingFileWriter: stream record batches into data files rolled at ``target-file-size``.

Java's compaction (and append-table compaction) writes through ``RollingFileWriter``: one
writer per output, a new file once the current one reaches the target size, each file's
``DataFileMeta`` built from statistics collected while writing. This module does the same
batch by batch, never holding a whole file:

* bytes go to :class:`core.format.data_file.DataFileWriter` (ParquetWriter / ORCWriter / fastavro
  streaming; same encoding as ``core.format.data_file.encode_data_file``);
* value / key statistics are accumulated per batch with :class:`core.manifest.stats.StatsAccumulator`
  and encoded by the same functions as ``core.manifest.stats.collect_*_stats`` (identical bytes to
  computing them over the whole file);
* primary-key (``kind="kv"``) files: input batches hold ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``
  and the value columns (``_KEY_<k>`` columns are optional: taken from the value columns
  when absent), sorted by key; min/max key are the first/last row's key;
* append (``kind="append"``) files: the table columns; sequence numbers are numbered from
  ``sequence_start`` as Java's append writers do (``LongCounter``), unless the batch carries
  ``_SEQUENCE_NUMBER``. ``system_fields`` (row-tracking compaction: ``_ROW_ID``,
  ``_SEQUENCE_NUMBER``) are stored after the table columns, with value stats, and named in
  ``_WRITE_COLS`` as Java's ``withWriteType(rowTypeWithRowTracking)`` writer does. Java
  leaves such a file's ``_FIRST_ROW_ID`` null; when the stored ids of a file run contiguously
  (``first .. first + rows - 1``) it is set here, which says the same thing and lets readers
  that ignore the stored column (pypaimon 2.1) and row-range pruning see the ids.

Hook for file indexes (package "fileindex"): by default (``index_builder_factory="auto"``) the
table's ``file-index.*`` options are built with ``core.fileindex.writer.index_builder_factory``
(changelog files get none);
pass None for no index, or a callable ``factory(data_file_path) -> builder``; per data file the writer calls
``builder.write_batch(table)`` with every chunk written to that file (value columns named
as the table's fields) and at file close ``builder.finish()``, which returns None or
``(embedded_index: bytes | None, extra_files: tuple[str, ...])`` (extra file NAMES written
next to the data file; they are added to :attr:`written` so an abort removes them).
"""

from __future__ import annotations

import datetime as _dt
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..data import binary_row
from ..data.types import DataField, DataType, DateType, LocalZonedTimestampType, TimestampType
from ..errors import InvalidInput
from ..format.arrow_schema import (
    KEY_PREFIX,
    ROW_ID,
    SEQUENCE_NUMBER,
    VALUE_KIND,
    key_fields,
    key_value_file_fields,
)
from ..format.data_file import DataFileWriter
from ..io import paths
from ..io.external_paths import ExternalPaths, external_paths_for
from ..io.fileio import join, parent
from ..io.paths import partition_dir_of
from ..manifest.manifest import EMPTY_STATS, DataFileMeta, FileSource
from ..manifest.stats import StatsAccumulator, key_stats_from_raw, value_stats_from_raw, value_stats_modes
from ..schema.file_index_options import configured_indexes
from ..schema.options import CoreOptions
from ..utils.interrupt import discard
from ..utils.workers import worker_pool

if TYPE_CHECKING:
    import pyarrow as pa

    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable

KV = "kv"
APPEND = "append"
_CHECK_ROWS = 1000  # Java's RollingFileWriter checks the size every 1000 records
_EPOCH = _dt.datetime(1970, 1, 1)


def creation_time_millis() -> int:
    """Java ``LocalDateTime.now()`` stored as if UTC (FORMAT-FACTS 5.3)."""
    d = _dt.datetime.now() - _EPOCH
    return (d.days * 86_400 + d.seconds) * 1000 + d.microseconds // 1000


# ---------------------------------------------------------------------------------------
# BinaryRow values of a few Arrow rows (partitions, min/max keys)
# ---------------------------------------------------------------------------------------


def py_value(scalar: pa.Scalar, dt: DataType) -> Any:
    """One Arrow scalar as the value core.data.binary_row encodes for ``dt``."""
    import pyarrow as pa

    if not scalar.is_valid:
        return None
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)):
        raw = int(scalar.cast(pa.int64()).as_py())
        unit = scalar.type.unit
        if unit == "s":
            return binary_row.Timestamp(raw * 1000)
        if unit == "ms":
            return binary_row.Timestamp(raw)
        if unit == "us":
            return binary_row.Timestamp.from_epoch_micros(raw)
        return binary_row.Timestamp(raw // 1_000_000, raw % 1_000_000)
    if isinstance(dt, DateType):
        return _EPOCH.date() + _dt.timedelta(days=int(scalar.cast(pa.int32()).as_py()))
    return scalar.as_py()


def row_values(table: pa.Table, index: int, fields: list[DataField]) -> list[Any]:
    """The BinaryRow values of row ``index`` of ``table`` for ``fields``."""
    return [py_value(table.column(f.name)[index], f.type) for f in fields]


def output_options(options: CoreOptions, level: int, changelog: bool = False) -> CoreOptions:
    """The options a file of ``level`` is written with, as Java 1.1+ ``KeyValueFileWriterFactory``
    resolves them per (level, is-changelog): a changelog file takes ``changelog-file.compression``
    / ``changelog-file.stats-mode`` when set, and otherwise -- like a data file -- its level's
    ``file.compression.per.level`` / ``metadata.stats-mode.per.level``, then the table-wide
    ``file.compression`` / ``metadata.stats-mode`` (``fields.<c>.stats-mode`` still wins per column).
    Java 0.9 has no changelog-file.* or per-level stats options and ignores them."""
    opts = dict(options.options)
    comp = options.options.get("changelog-file.compression") if changelog else None
    comp = comp or options.file_compression_per_level().get(level)
    if comp:
        opts["file.compression"] = comp
    mode = options.options.get("changelog-file.stats-mode") if changelog else None
    mode = mode or options.metadata_stats_mode_per_level().get(level)
    if mode:
        opts["metadata.stats-mode"] = mode
    return CoreOptions(opts)


def output_format(options: CoreOptions, level: int, changelog: bool = False) -> str:
    """``changelog-file.format`` (changelog files only), else ``file.format.per.level``, else
    ``file.format`` (Java ``key2Format``)."""
    fmt = options.options.get("changelog-file.format") if changelog else None
    return (fmt or options.file_format_per_level().get(level, options.file_format)).lower()


class _OpenFile:
    """State of the file being written."""

    def __init__(self, name: str, path: str, writer: DataFileWriter, values: StatsAccumulator,
                 keys: StatsAccumulator | None, index_builder: Any) -> None:
        self.name = name
        self.path = path
        self.writer = writer
        self.values = values
        self.keys = keys
        self.index_builder = index_builder
        self.rows = 0
        self.min_key: bytes | None = None
        self.max_key: bytes | None = None
        self.min_seq: int | None = None
        self.max_seq: int | None = None
        self.deletes = 0
        # stored _ROW_IDs: first, and the next one if they run contiguously so far (else None)
        self.first_row_id: int | None = None
        self.next_row_id: int | None = None


class RollingFileWriter:
    """Writes batches of one (partition, bucket) into files of ``level``, rolling at the target size.

    ``close()`` returns the new files' metadata; ``abort()`` deletes everything written.
    Every created path is in :attr:`written` from the moment the file is opened.
    """

    def __init__(
        self,
        table: FileStoreTable,
        partition: bytes,
        bucket: int,
        *,
        kind: str = KV,
        level: int = 0,
        file_source: int = FileSource.COMPACT,
        schema: TableSchema | None = None,
        options: CoreOptions | None = None,
        target_file_size: int | None = None,
        file_format: str | None = None,
        changelog: bool = False,
        sequence_start: int = 0,
        partition_dir: str | None = None,
        index_builder_factory: Callable[[str], Any] | None | str = "auto",
        system_fields: Sequence[DataField] = (),
        write_cols: Sequence[str] | None = None,
        sequence_per_file: bool = False,
        on_file_closed: Callable[[DataFileMeta], None] | None = None,
    ) -> None:
        """``write_cols``: the ``_WRITE_COLS`` of append files holding only some columns of the
        table (``schema`` is then those columns); ``sequence_per_file``: number each file's rows
        from 0 (Java's data-evolution writers, so the commit stamps every file with its snapshot
        id); ``on_file_closed``: called with each file's metadata as it is finished, before the
        next one opens (the blob writer closes its ``.blob`` files there)."""
        if kind not in (KV, APPEND):
            raise InvalidInput(f"RollingFileWriter: kind must be 'kv' or 'append', not {kind!r}")
        self.table = table
        self.schema = schema if schema is not None else table.schema
        base_opts = options if options is not None else self.schema.core_options
        self.kind = kind
        self.level = level
        self.file_source = int(file_source)
        self.changelog = changelog
        self.options = output_options(base_opts, level, changelog)
        self.file_format = (file_format or output_format(base_opts, level, changelog)).lower()
        self.target_file_size = target_file_size or base_opts.target_file_size(kind == KV)
        self.partition = partition
        self.bucket = bucket
        if partition_dir is None:
            partition_dir = partition_dir_of(self.schema, partition)
        self.bucket_path = paths.bucket_path(table.data_root, partition_dir, bucket)
        # Java's DataFilePathFactory: one external path provider per (partition, bucket) writer
        external = external_paths_of(table, base_opts)
        relative = table.relative_bucket_path(partition_dir, bucket)
        self._external = external.provider(relative) if external is not None else None
        compression = self.options.file_compression.lower()
        ext = f"{compression}.{self.file_format}" if base_opts.file_suffix_include_compression else self.file_format
        self._ext = ext
        self._prefix = base_opts.changelog_file_prefix if changelog else base_opts.data_file_prefix
        self._uuid = str(uuid.uuid4())
        self._counter = 0
        if system_fields and kind != APPEND:
            raise InvalidInput("RollingFileWriter: system_fields are for append files")
        self.value_fields = list(self.schema.fields)
        # what value stats cover: the table columns, then stored system columns
        self.stats_fields = self.value_fields + list(system_fields)
        self.write_cols = tuple(f.name for f in self.stats_fields) if system_fields else None
        if write_cols is not None:
            self.write_cols = tuple(write_cols)
        self.sequence_per_file = sequence_per_file
        self.on_file_closed = on_file_closed
        # key-value files: _KEY_ columns, system columns, values; append files: the values
        self.file_fields = key_value_file_fields(self.schema) if kind == KV else list(self.stats_fields)
        self.key_fields = key_fields(self.schema) if kind == KV else []
        self.key_types = [f.type for f in self.key_fields]
        self._value_skip = self._none_mode_columns()
        self.next_sequence = sequence_start
        if index_builder_factory == "auto":
            # changelog files get no file index: they are only read sequentially, and their
            # .index files would outlive changelog expiration (Java 2.0, apache/paimon#7697)
            index_builder_factory = None if changelog else _table_index_factory(table, self.schema, base_opts)
        self.index_builder_factory: Callable[[str], Any] | None = index_builder_factory  # type: ignore[assignment]
        self.written: list[str] = []
        self.result: list[DataFileMeta] = []
        self.rows_written = 0
        self._current: _OpenFile | None = None
        self._ratio: float | None = None  # file bytes per Arrow byte, learnt from finished files
        self._closed = False

    # -- public -----------------------------------------------------------------------------

    def write(self, batch: pa.Table | pa.RecordBatch) -> None:
        """Append rows (already in output order) to the current file, rolling as needed."""
        import pyarrow as pa

        if self._closed:
            raise InvalidInput("RollingFileWriter: already closed")
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        n = table.num_rows
        if n == 0:
            return
        if self.kind == APPEND and SEQUENCE_NUMBER not in table.column_names:
            import numpy as np

            seq = pa.array(np.arange(self.next_sequence, self.next_sequence + n, dtype=np.int64))
            table = table.append_column(SEQUENCE_NUMBER, seq)
        self.next_sequence += n if self.kind == APPEND else 0
        start = 0
        per_row = max(table.nbytes / n, 1.0)
        while start < n:
            f = self._current or self._open()
            remaining = self.target_file_size - f.writer.estimated_size(self._ratio or 0.3)
            ratio = f.writer.compression_ratio or self._ratio or 0.3
            fit = int(remaining / max(per_row * ratio, 1e-9)) if remaining > 0 else 0
            # as Java: at least the next check interval of records goes in before a roll
            rows = min(n - start, max(fit, _CHECK_ROWS))
            self._write_chunk(f, table.slice(start, rows))
            start += rows
            if f.writer.estimated_size(self._ratio or 0.3) >= self.target_file_size:
                self._close_current()

    def close(self) -> list[DataFileMeta]:
        """Finish the last file; the metadata of every file written, in order."""
        if not self._closed:
            try:
                if self._current is not None:
                    self._close_current()
            except BaseException:
                self.abort()
                raise
            self._closed = True
        return list(self.result)

    def abort(self) -> None:
        """Delete every file this writer created (best effort)."""
        if self._current is not None:
            self._current.writer.abort()
            self._current = None
        discard(self.table.file_io, self.written)
        self.result = []
        self._closed = True

    # -- internals ----------------------------------------------------------------------------

    def _none_mode_columns(self) -> set[str]:
        modes = value_stats_modes(self.stats_fields, self.options)
        return {f.name for f, m in zip(self.stats_fields, modes, strict=True) if m.kind == "none"}

    def new_path(self, extension: str) -> tuple[str, str]:
        """(name, path) of this writer's next file ending ``extension``: its prefix, uuid and
        counter, in its bucket directory or external path (Java's ``DataFilePathFactory``,
        shared by the data file and the ``.blob`` files of one write)."""
        name = f"{self._prefix}{self._uuid}-{self._counter}{extension}"
        self._counter += 1
        path = self._external.next_path(name) if self._external is not None else join(self.bucket_path, name)
        return name, path

    @property
    def external(self) -> bool:
        return self._external is not None

    def _open(self) -> _OpenFile:
        name, path = self.new_path(f".{self._ext}")
        self.written.append(path)
        writer = DataFileWriter(self.table.file_io, path, self.file_fields, self.file_format, self.options,
                                row_group_bytes=min(32 << 20, max(self.target_file_size, 1 << 20)))
        values = StatsAccumulator(self.stats_fields, self.file_format, skip=self._value_skip)
        keys = StatsAccumulator(self.key_fields, self.file_format) if self.kind == KV else None
        builder = self.index_builder_factory(path) if self.index_builder_factory is not None else None
        self._current = _OpenFile(name, path, writer, values, keys, builder)
        return self._current

    def _file_table(self, t: pa.Table) -> pa.Table:
        import pyarrow as pa

        names = t.column_names
        arrays = []
        for f in self.file_fields:
            if f.name in names:
                arrays.append(t.column(f.name))
            elif f.name.startswith(KEY_PREFIX) and f.name[len(KEY_PREFIX):] in names:
                arrays.append(t.column(f.name[len(KEY_PREFIX):]))
            else:
                raise InvalidInput(f"RollingFileWriter: batch lacks column {f.name}")
        return pa.Table.from_arrays(arrays, names=[f.name for f in self.file_fields])

    def _write_chunk(self, f: _OpenFile, t: pa.Table) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        ft = self._file_table(t)
        f.writer.write(ft)
        n = t.num_rows
        f.values.update(ft)
        seq = t.column(SEQUENCE_NUMBER)
        mm = pc.min_max(seq)
        lo, hi = int(mm["min"].as_py()), int(mm["max"].as_py())
        f.min_seq = lo if f.min_seq is None else min(f.min_seq, lo)
        f.max_seq = hi if f.max_seq is None else max(f.max_seq, hi)
        if self.kind == KV:
            assert f.keys is not None
            key_cols = [self._key_column(t, k.name) for k in self.key_fields]
            f.keys.update(ft, dict(zip([k.name for k in self.key_fields], key_cols, strict=True)))
            if f.min_key is None:
                f.min_key = self._key_row(key_cols, 0)
            f.max_key = self._key_row(key_cols, n - 1)
            kinds = ft.column(VALUE_KIND)
            # typed scalars: a bare Python int makes pyarrow infer its type, which imports dateutil
            before, delete = pa.scalar(1, kinds.type), pa.scalar(3, kinds.type)
            f.deletes += int(pc.sum(pc.or_(pc.equal(kinds, before), pc.equal(kinds, delete))).as_py() or 0)
        if f.index_builder is not None:
            f.index_builder.write_batch(ft.select([v.name for v in self.value_fields]))
        if self.write_cols is not None and ROW_ID in self.write_cols:
            self._track_row_ids(f, t.column(ROW_ID))
        f.rows += n
        self.rows_written += n

    @staticmethod
    def _track_row_ids(f: _OpenFile, col: Any) -> None:
        import numpy as np

        if f.rows and f.next_row_id is None:
            return  # already not contiguous
        if col.null_count:
            f.next_row_id = None
            return
        ids = col.to_numpy()
        start = int(ids[0])
        if f.rows == 0:
            f.first_row_id = start
        elif start != f.next_row_id:
            f.next_row_id = None
            return
        f.next_row_id = start + len(ids) if bool((np.diff(ids) == 1).all()) else None

    @staticmethod
    def _key_column(t: pa.Table, name: str) -> Any:
        if name in t.column_names:
            return t.column(name)
        return t.column(name[len(KEY_PREFIX):])

    def _key_row(self, cols: list[Any], i: int) -> bytes:
        values = [py_value(c[i], kf.type) for c, kf in zip(cols, self.key_fields, strict=True)]
        return binary_row.serialize(values, self.key_types)

    def _close_current(self) -> None:
        f = self._current
        assert f is not None
        self._current = None
        size = f.writer.close()
        if f.writer.arrow_bytes_in:
            self._ratio = size / f.writer.arrow_bytes_in
        embedded: bytes | None = None
        extra: tuple[str, ...] = ()
        index_bytes: int | None = None
        if f.index_builder is not None:
            res = f.index_builder.finish()
            if res is not None:
                embedded, extra = res[0], tuple(res[1] or ())
                # extra files sit next to their data file (Java toAlignedPath)
                self.written.extend(join(parent(f.path), e) for e in extra)
                index_bytes = getattr(f.index_builder, "file_bytes", None)
        value_stats, cols = value_stats_from_raw(f.values.raw, self.stats_fields, self.options, self.file_format)
        if self.kind == KV:
            assert f.keys is not None
            key_stats = key_stats_from_raw(f.keys.raw, self.key_fields, self.options)
            min_key, max_key = f.min_key, f.max_key
            deletes = f.deletes
        else:
            key_stats = EMPTY_STATS
            min_key = max_key = binary_row.EMPTY_ROW
            deletes = 0
        self.result.append(DataFileMeta(
            file_name=f.name,
            file_size=size,
            row_count=f.rows,
            min_key=min_key or binary_row.EMPTY_ROW,
            max_key=max_key or binary_row.EMPTY_ROW,
            key_stats=key_stats,
            value_stats=value_stats,
            min_sequence_number=0 if self.sequence_per_file or f.min_seq is None else f.min_seq,
            max_sequence_number=f.rows - 1 if self.sequence_per_file else f.max_seq if f.max_seq is not None else 0,
            schema_id=self.schema.id,
            level=self.level,
            extra_files=extra,
            creation_time=creation_time_millis(),
            delete_row_count=deletes,
            embedded_index=embedded,
            file_source=self.file_source,
            value_stats_cols=cols,
            external_path=f.path if self._external is not None else None,
            write_cols=self.write_cols,
            first_row_id=f.first_row_id if f.next_row_id is not None else None,
            index_file_bytes=index_bytes,
        ))
        if self.on_file_closed is not None:
            self.on_file_closed(self.result[-1])


def written_index_note(options: Mapping[str, str], files: Iterable[DataFileMeta]) -> str | None:
    """:func:`core.fileindex.writer.index_size_note` over data files a job wrote (their
    ``index_file_bytes``): a line when their `.index` files outweigh them, else None."""
    sizes = [(f.file_size, f.index_file_bytes, f.row_count) for f in files if f.index_file_bytes]
    if not sizes:
        return None
    from ..fileindex.writer import index_size_note

    return index_size_note(options, sizes)


def external_paths_of(table: FileStoreTable, options: CoreOptions | None = None) -> ExternalPaths | None:
    """The ``data-file.external-paths`` new files of ``table`` go to; bad ones are refused."""
    return external_paths_for((options if options is not None else table.options).options, table.file_io.scheme)


def _table_index_factory(table: FileStoreTable, schema: TableSchema, options: CoreOptions) -> Any:
    """The table's ``file-index.*`` builder factory (package "fileindex"), None when it has none.

    The fileindex package (bloom, bitmap, BSI writers) loads only for a table that declares an
    index: most compactions and writes have none."""
    if not configured_indexes(options.options):
        return None
    from ..fileindex.writer import index_builder_factory

    return index_builder_factory(table.file_io, schema, options)


# Cores one compaction unit may use. The in-process engine leaves it None (use the machine);
# a Spark task sets it to its ``spark.task.cpus`` so N concurrent tasks do not each spread
# over every core of the executor (see core.compact.spark.limit_task_cores).
UNIT_CORES: int | None = None


def write_pipelined(writer: RollingFileWriter, tables: Any) -> int:
    """Write an iterable of tables with ``writer`` on a worker thread, one table in flight.

    Why: producing the next merged chunk (decode, sort, take) and encoding the previous one
    (Parquet/ORC compression) both run in pyarrow without the GIL, so they overlap; memory
    grows by one chunk. With one core per unit (:data:`UNIT_CORES` = 1) they run in turn.
    Returns the number of rows written.
    """
    rows = 0
    if UNIT_CORES == 1:
        for t in tables:
            if t is not None and t.num_rows:
                writer.write(t)
                rows += t.num_rows
        return rows
    # on any failure the pool is joined before the caller aborts the writer
    with worker_pool(1, "paimon-compact-write") as pool:
        pending = None
        for t in tables:
            if t is None or t.num_rows == 0:
                continue
            if pending is not None:
                pending.result()
            rows += t.num_rows
            pending = pool.submit(writer.write, t)
        if pending is not None:
            pending.result()
    return rows


__all__ = ["APPEND", "KV", "RollingFileWriter", "creation_time_millis", "external_paths_of", "output_format",
           "output_options", "partition_dir_of", "py_value", "row_values", "write_pipelined"]
