"""Read and write Paimon data files (Parquet, ORC, Avro) as Arrow tables.

Java Paimon reads data-file columns by NAME with its own schema (``ParquetReaderFactory``,
ORC schema evolution, Avro field resolution), so what must match Java is each column's
name, physical type and logical annotation. This module conforms tables to the file schema,
types what readers return, and maps old files onto the current schema by field id; each
format's encoding and quirks are in :mod:`.parquet_format`, :mod:`.orc_format` and
:mod:`.avro_format`.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..data.types import DataField
from ..errors import CorruptMetadata, InvalidInput
from ..utils.interrupt import check, discard, reached
from .arrow_schema import arrow_field, arrow_schema
from .avro_format import (
    avro_records,
    avro_table,
    iter_avro_streaming,
    open_avro_writer,
    read_avro_records,
    write_avro,
)
from .orc_format import iter_orc, open_orc_writer, orc_physical, read_orc, write_orc
from .parquet_format import (
    iter_parquet,
    parquet_physical,
    parquet_writer_options,
    read_parquet,
    read_parquet_row_group,
    write_parquet,
)

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..io.fileio import FileIO
    from ..schema.options import CoreOptions

FORMATS = ("parquet", "orc", "avro")


def format_of(path: str) -> str:
    """The file format from the file extension (Java does the same); compression suffixes are skipped."""
    name = path.rsplit("/", 1)[-1].lower()
    for part in reversed(name.split(".")[1:]):
        if part in FORMATS:
            return part
    raise InvalidInput(f"{path}: cannot tell the data file format from the extension (expected .parquet/.orc/.avro)")


# ---------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------


def _conform(table: pa.Table, fields: list[DataField], schema: pa.Schema) -> pa.Table:
    """Select and cast the columns of ``table`` to the file schema (by name), keeping ids."""
    import pyarrow as pa

    missing = [f.name for f in fields if f.name not in table.column_names]
    if missing:
        raise InvalidInput(f"data file: input lacks column(s) {', '.join(missing)}")
    cols = []
    for f, af in zip(fields, schema, strict=True):
        col = table.column(f.name)
        if not col.type.equals(af.type):
            try:
                col = col.cast(af.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise InvalidInput(f"data file: column {f.name} of type {col.type} does not fit {f.type}: {e}") from e
        if not f.type.nullable and col.null_count:
            raise InvalidInput(f"data file: column {f.name} is {f.type} but has {col.null_count} null(s)")
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=schema)


class DataFileWriter:
    """Streams tables into ONE data file (Parquet/ORC/Avro) with the same encoding as
    :func:`encode_data_file`, so a file never has to be held in memory as a whole.

    Why: compaction output files are up to ``target-file-size`` and a bucket can be many
    GB; the rolling writer (core/mergetree/file_writer.py) pushes merged batches here.
    Parquet row groups are buffered up to ``row_group_bytes`` Arrow bytes (the first one
    smaller, so :attr:`compression_ratio` is known early for rolling decisions).
    """

    FIRST_ROW_GROUP_BYTES = 4 << 20

    def __init__(
        self,
        file_io: FileIO,
        path: str,
        fields: list[DataField],
        file_format: str,
        options: CoreOptions,
        row_group_bytes: int = 64 << 20,
    ) -> None:
        fmt = file_format.lower()
        if fmt not in FORMATS:
            raise InvalidInput(f"file.format={file_format!r} is not supported (use parquet, orc or avro)")
        self.file_io = file_io
        self.path = path
        self.fields = list(fields)
        self.fmt = fmt
        self.options = options
        self.schema = arrow_schema(self.fields)
        self.row_group_bytes = row_group_bytes
        self._sink: Any = None
        self._writer: Any = None
        self._pending: list[pa.Table] = []
        self._pending_bytes = 0
        self.arrow_bytes_in = 0  # Arrow bytes handed to the encoder (flushed to the sink)
        self.rows = 0
        self._closed = False
        self._int96 = False
        self._phys: Any = None

    # -- public ---------------------------------------------------------------------------

    def write(self, table: pa.Table | pa.RecordBatch) -> None:
        import pyarrow as pa

        check()  # a worker writing files stops here once SIGINT / SIGTERM arrived
        if isinstance(table, pa.RecordBatch):
            table = pa.Table.from_batches([table])
        if table.num_rows == 0:
            return
        table = _conform(table, self.fields, self.schema)
        self.rows += table.num_rows
        if self.fmt == "parquet":
            self._pending.append(table)
            self._pending_bytes += table.nbytes
            limit = self.FIRST_ROW_GROUP_BYTES if self.arrow_bytes_in == 0 else self.row_group_bytes
            if self._pending_bytes >= limit:
                self._flush_parquet()
        elif self.fmt == "orc":
            self._write_orc(table)
        else:
            self._write_avro(table)

    @property
    def compression_ratio(self) -> float | None:
        """File bytes per Arrow byte seen so far (None until something reached the sink, and
        for ORC, whose writer holds whole stripes back)."""
        if self.fmt == "orc":
            return None
        pos = self.position
        if pos <= 0 or self.arrow_bytes_in <= 0:
            return None
        return pos / self.arrow_bytes_in

    @property
    def position(self) -> int:
        if self._sink is None:
            return 0
        try:
            return int(self._sink.tell())
        except Exception:  # noqa: BLE001 - some streams cannot tell
            return 0

    def estimated_size(self, default_ratio: float = 0.3) -> int:
        """Current file size including what is still buffered (estimated with the ratio)."""
        ratio = self.compression_ratio or default_ratio
        if self.fmt == "parquet":
            return self.position + int(self._pending_bytes * ratio)
        if self.fmt == "orc":
            return int(self.arrow_bytes_in * ratio)
        return int(max(self.position, self.arrow_bytes_in * ratio))

    def close(self) -> int:
        """Finish the file; returns its size in bytes."""
        if self._closed:
            raise InvalidInput(f"{self.path}: data file writer already closed")
        if self.fmt == "parquet":
            self._flush_parquet()
        self._ensure_open()
        if self._writer is not None:
            if self.fmt == "avro":
                self._writer.flush()
            else:
                self._writer.close()
        size = self.position
        self._sink.close()
        self._closed = True
        return size

    def abort(self) -> None:
        """Drop the file (best effort)."""
        try:
            if self._writer is not None and self.fmt != "avro":
                self._writer.close()
        except Exception:  # noqa: BLE001
            pass
        try:
            if self._sink is not None:
                self._sink.close()
        except Exception:  # noqa: BLE001
            pass
        self._closed = True
        discard(self.file_io, [self.path])

    # -- formats ----------------------------------------------------------------------------

    def _ensure_open(self) -> None:
        if self._sink is None:
            # fastavro writes through a Python stream; pyarrow's encoders take a native one
            self._sink = (self.file_io.open_output(self.path) if self.fmt == "avro"
                          else self.file_io.open_arrow_output(self.path))
            reached("file")
            if self.fmt == "avro":
                self._writer = open_avro_writer(self._sink, self.fields, self.options)
            elif self.fmt == "orc" and self._writer is None:
                self._writer = open_orc_writer(self._sink, self.options)

    def _flush_parquet(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._pending:
            if self._writer is None:  # an empty file still needs a valid footer
                self._ensure_open()
                empty = pa.Table.from_batches([], schema=self.schema)
                kwargs, self._int96 = parquet_writer_options(empty, self.options)
                self._phys = parquet_physical(empty, self._int96).schema
                self._writer = pq.ParquetWriter(self._sink, self._phys, **kwargs)
            return
        table = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending = []
        self._pending_bytes = 0
        if self._writer is None:
            self._ensure_open()
            kwargs, self._int96 = parquet_writer_options(table, self.options)
            first = parquet_physical(table, self._int96)
            self._phys = first.schema
            self._writer = pq.ParquetWriter(self._sink, self._phys, **kwargs)
        phys = parquet_physical(table, self._int96)
        self._writer.write_table(phys, row_group_size=max(1, phys.num_rows))
        self.arrow_bytes_in += table.nbytes

    def _write_orc(self, table: pa.Table) -> None:
        table = orc_physical(table)  # refuses what it would store wrong before a file exists
        self._ensure_open()
        self._writer.write(table)
        self.arrow_bytes_in += table.nbytes

    def _write_avro(self, table: pa.Table) -> None:
        self._ensure_open()
        for r in avro_records(table, self.fields):
            self._writer.write(r)
        self.arrow_bytes_in += table.nbytes


def encode_data_file(table: pa.Table, fields: list[DataField], file_format: str, options: CoreOptions) -> bytes:
    """The bytes of one data file holding ``table`` (columns cast to ``fields`` by name)."""
    data = _encode(table, fields, file_format, options)
    return data if isinstance(data, bytes) else data.to_pybytes()


def _encode(table: pa.Table, fields: list[DataField], file_format: str, options: CoreOptions) -> Any:
    """:func:`encode_data_file` as bytes or a ``pyarrow.Buffer`` (no copy into Python bytes)."""
    fmt = file_format.lower()
    if fmt not in FORMATS:
        raise InvalidInput(f"file.format={file_format!r} is not supported (use parquet, orc or avro)")
    schema = arrow_schema(fields)
    table = _conform(table, fields, schema)
    if fmt == "parquet":
        return write_parquet(table, options)
    if fmt == "orc":
        return write_orc(table, options)
    return write_avro(table, fields, options)


def write_data_file(
    file_io: FileIO, path: str, table: pa.Table, fields: list[DataField], file_format: str, options: CoreOptions
) -> int:
    """Write one data file at ``path``; returns its size in bytes (DataFileMeta ``_FILE_SIZE``)."""
    data = _encode(table, fields, file_format, options)
    file_io.write_new_file(path, data)  # a new unique name, referenced only once committed
    return len(data) if isinstance(data, bytes) else data.size


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------


def _select(fields: list[DataField], columns: list[str] | None, path: str) -> list[DataField]:
    if columns is None:
        return list(fields)
    by_name = {f.name: f for f in fields}
    unknown = [c for c in columns if c not in by_name]
    if unknown:
        raise InvalidInput(f"{path}: no column(s) {', '.join(unknown)} in the file schema")
    return [by_name[c] for c in columns]


def _to_target(batch: pa.RecordBatch | pa.Table, wanted: list[DataField], path: str) -> pa.Table:
    """Cast what a reader returned to the Paimon types of ``wanted`` (matched by name)."""
    import pyarrow as pa

    schema = arrow_schema(wanted)
    if batch.schema.equals(schema, check_metadata=True):
        return batch if isinstance(batch, pa.Table) else pa.Table.from_batches([batch])
    cols = []
    names = batch.schema.names
    for f, af in zip(wanted, schema, strict=True):
        if f.name not in names:
            raise CorruptMetadata(path, f"data file has no column {f.name}")
        col = batch.column(names.index(f.name))
        if not col.type.equals(af.type):
            try:
                col = _cast_read(col, af.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as e:
                raise CorruptMetadata(path, f"column {f.name} ({col.type}) cannot be read as {f.type}: {e}") from e
        cols.append(col)
    if isinstance(batch, pa.RecordBatch):
        return pa.Table.from_batches([pa.RecordBatch.from_arrays(cols, schema=schema)])
    return pa.Table.from_arrays(cols, schema=schema)


def _cast_read(col: Any, target: pa.DataType) -> Any:
    import pyarrow as pa

    src = col.type
    if pa.types.is_timestamp(target) and pa.types.is_timestamp(src) and src.tz != target.tz:
        # ORC TIMESTAMP_INSTANT / LTZ read back with a zone, or the other way round: same instant.
        col = col.cast(pa.timestamp(src.unit, tz=target.tz))
    return col.cast(target, safe=False) if pa.types.is_timestamp(target) else col.cast(target)


def iter_data_file_batches(
    file_io: FileIO,
    path: str,
    fields: list[DataField],
    columns: list[str] | None = None,
    batch_rows: int = 65536,
    *,
    low_memory: bool = False,
    row_groups: list[int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """Stream a data file as record batches typed by ``fields`` (the file's schema).

    ``row_groups``: only these row groups of a Parquet file (all by default).

    ``low_memory``: Parquet pages are read through a small buffer instead of whole column
    chunks, Avro records block by block (compaction keeps one reader per run open).
    """
    wanted = _select(fields, columns, path)
    names = [f.name for f in wanted]
    fmt = format_of(path)

    def convert(batch: pa.RecordBatch | pa.Table) -> pa.Table:
        return _to_target(batch, wanted, path)

    if fmt == "parquet":
        yield from iter_parquet(file_io, path, names, batch_rows, low_memory, convert, row_groups)
    elif fmt == "orc":
        yield from iter_orc(file_io, path, names, batch_rows, convert)
    elif low_memory:
        yield from iter_avro_streaming(file_io, path, wanted, batch_rows)
    else:
        records = read_avro_records(file_io.read_bytes(path), path)
        for start in range(0, len(records), batch_rows):
            yield from avro_table(records[start : start + batch_rows], wanted, path).to_batches()


def read_data_file(
    file_io: FileIO, path: str, fields: list[DataField], columns: list[str] | None = None
) -> pa.Table:
    """Read a whole data file (Java's or ours) as a table typed by ``fields`` (the file's schema)."""
    import pyarrow as pa

    wanted = _select(fields, columns, path)
    fmt = format_of(path)
    if fmt == "parquet":
        return _to_target(read_parquet(file_io, path, [x.name for x in wanted]), wanted, path)
    if fmt == "orc":
        return _to_target(read_orc(file_io, path, [x.name for x in wanted]), wanted, path)
    records = read_avro_records(file_io.read_bytes(path), path)
    if not records:
        return pa.Table.from_pylist([], schema=pa.schema([arrow_field(f) for f in wanted]))
    return avro_table(records, wanted, path)


def read_row_group(
    file_io: FileIO, path: str, fields: list[DataField], columns: list[str] | None,
    metadata: pq.FileMetaData, index: int,
) -> pa.Table:
    """Row group ``index`` of a Parquet data file (footer ``metadata``), typed by ``fields``."""
    wanted = _select(fields, columns, path)
    return _to_target(read_parquet_row_group(file_io, path, metadata, index, [f.name for f in wanted]), wanted, path)


# ---------------------------------------------------------------------------------------
# Schema evolution
# ---------------------------------------------------------------------------------------


def evolve(table: pa.Table, file_fields: list[DataField], target_fields: list[DataField]) -> pa.Table:
    """Map a table read with an old schema onto ``target_fields`` by FIELD ID.

    Renamed columns keep their data (same id), dropped ones disappear, added ones are all
    NULL, and widened types (INT -> BIGINT, ...) are cast.
    """
    import pyarrow as pa

    schema = arrow_schema(target_fields)
    by_id = {f.id: f for f in file_fields}
    if table.schema.equals(schema, check_metadata=True) and all(
            (old := by_id.get(f.id)) is not None and old.name == f.name for f in target_fields):
        return table  # already the target's columns (names, ids, types): nothing renamed, added or widened
    present = set(table.column_names)
    cols = []
    for f, af in zip(target_fields, schema, strict=True):
        old = by_id.get(f.id)
        if old is None or old.name not in present:
            cols.append(pa.nulls(table.num_rows, af.type))
            continue
        col = table.column(old.name)
        if not col.type.equals(af.type):
            try:
                col = col.cast(af.type)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as e:
                raise InvalidInput(f"column {f.name}: cannot evolve {old.type} to {f.type}: {e}") from e
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=schema)
