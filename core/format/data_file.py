"""Read and write Paimon data files (Parquet, ORC, Avro) as Arrow tables.

Java Paimon reads data-file columns by NAME with its own schema (``ParquetReaderFactory``,
ORC schema evolution, Avro field resolution), so what must match Java is each column's
name, physical type and logical annotation; ids are written (Parquet) because Java 1.0+
does and engines use them for evolution. Quirks pinned to Java 0.9's readers:

* TIMESTAMP(p>6) must be Parquet INT96 (0.9 refuses INT64 nanos). pyarrow can only write
  INT96 for every timestamp column of a file at once, and 0.9 refuses INT96 for p<=6, so a
  file that mixes both stores its p<=6 columns as bare INT64 millis/micros, which 0.9 reads
  by precision (``ParquetTimestampVector``).
* Decimals use INT32/INT64/FIXED by precision (``store_decimal_as_integer``), like Java.
* Avro follows ``AvroSchemaConverter``: ``["null", T]`` unions, records named
  ``org.apache.paimon.avro.generated.record`` + ``_<field>``, decimals as bytes, maps with
  non-string keys as arrays of {key, value} records with logicalType ``map``.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..data.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BlobType,
    BooleanType,
    CharType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)
from ..errors import CorruptMetadata, InvalidInput, NotYetSupported
from ..utils.interrupt import check, discard, reached
from .arrow_schema import arrow_field, arrow_schema, field_id_of

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.fileio import FileIO
    from ..schema.options import CoreOptions

FORMATS = ("parquet", "orc", "avro")
_PARQUET_CODECS = {"zstd": "zstd", "snappy": "snappy", "gzip": "gzip", "lz4": "lz4", "brotli": "brotli",
                   "none": "none", "uncompressed": "none"}
_ORC_CODECS = {"zstd": "zstd", "snappy": "snappy", "lz4": "lz4", "zlib": "zlib", "gzip": "zlib",
               "none": "uncompressed", "uncompressed": "uncompressed"}
_AVRO_CODECS = {"zstd": "zstandard", "zstandard": "zstandard", "snappy": "snappy", "deflate": "deflate",
                "gzip": "deflate", "none": "null", "null": "null", "uncompressed": "null"}
AVRO_ROOT = "org.apache.paimon.avro.generated.record"


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
    for f, af in zip(fields, schema):
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


_DICT_SAMPLE_ROWS = 8192


def _dictionary_columns(table: pa.Table) -> bool | list[str]:
    """Columns worth dictionary encoding, as parquet-mr decides after its first page.

    Why: parquet-cpp dictionary-encodes every column until the dictionary passes 1 MB, so
    unique columns (keys, ``_SEQUENCE_NUMBER``, measures) of a typical data file were stored
    as dictionary + indices: twice the encode time and ~1.7x the bytes. Java's writer drops
    the dictionary when it does not pay (``isCompressionSatisfying``); here a column keeps
    it when a sample of its first rows repeats values (at most half of them distinct).
    Nested columns keep pyarrow's default (their leaf paths are not listed here).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0 or any(pa.types.is_nested(f.type) for f in table.schema):
        return True
    out = []
    for name, col in zip(table.column_names, table.columns):
        sample = col.slice(0, _DICT_SAMPLE_ROWS)
        valid = len(sample) - sample.null_count
        if valid == 0 or pc.count_distinct(sample).as_py() * 2 <= valid:
            out.append(name)
    return out


def _has_nanos(t: pa.DataType) -> bool:
    import pyarrow as pa

    if pa.types.is_timestamp(t):
        return t.unit == "ns"
    if pa.types.is_struct(t):
        return any(_has_nanos(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_nanos(t.key_type) or _has_nanos(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_nanos(t.value_type)
    return False


def _write_parquet(table: pa.Table, options: CoreOptions) -> pa.Buffer:
    import pyarrow as pa
    import pyarrow.parquet as pq

    codec = options.file_compression.lower()
    if codec not in _PARQUET_CODECS:
        raise InvalidInput(f"file.compression={codec!r} is not supported for parquet (use {', '.join(_PARQUET_CODECS)})")
    int96 = any(_has_nanos(f.type) for f in table.schema)
    if int96:
        # Keep p<=6 columns INT64 (see the module docstring); nested ones cannot be split.
        cols, flds = [], []
        for col, f in zip(table.columns, table.schema):
            if pa.types.is_timestamp(f.type) and f.type.unit != "ns":
                col = col.cast(pa.int64())
                f = f.with_type(pa.int64())
            cols.append(col)
            flds.append(f)
        table = pa.Table.from_arrays(cols, schema=pa.schema(flds))
    kwargs: dict[str, Any] = {"use_dictionary": _dictionary_columns(table)}
    if _PARQUET_CODECS[codec] == "zstd":
        kwargs["compression_level"] = options.file_compression_zstd_level
    page_size = options.get_memory_bytes("page-size") or 64 * 1024
    sink = pa.BufferOutputStream()
    pq.write_table(
        table,
        sink,
        compression=_PARQUET_CODECS[codec],
        use_compliant_nested_type=True,
        store_decimal_as_integer=True,
        use_deprecated_int96_timestamps=int96,
        data_page_size=page_size,
        write_statistics=True,
        **kwargs,
    )
    return sink.getvalue()


def _orc_physical(t: pa.DataType) -> pa.DataType:
    """pyarrow's ORC writer has no TIME type; Java stores TIME as ORC int millis."""
    import pyarrow as pa

    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_orc_physical(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_orc_physical(t.key_type)), t.item_field.with_type(_orc_physical(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_orc_physical(t.value_type)))
    return t


def _write_orc(table: pa.Table, options: CoreOptions) -> pa.Buffer:
    import pyarrow as pa
    import pyarrow.orc as orc

    codec = options.file_compression.lower()
    if codec not in _ORC_CODECS:
        raise InvalidInput(f"file.compression={codec!r} is not supported for orc (use {', '.join(_ORC_CODECS)})")
    schema = pa.schema([f.with_type(_orc_physical(f.type)).remove_metadata() for f in table.schema])
    if not schema.equals(table.schema):
        table = table.cast(schema)
    sink = pa.BufferOutputStream()
    orc.write_table(table, sink, compression=_ORC_CODECS[codec])
    return sink.getvalue()


def avro_schema(fields: list[DataField]) -> dict[str, Any]:
    """The Avro schema Java's ``AvroSchemaConverter`` derives for a data file of ``fields``."""
    return _avro_type(RowType(tuple(fields), nullable=False), AVRO_ROOT)


def _nullable(schema: Any, dt: DataType) -> Any:
    return ["null", schema] if dt.nullable else schema


def _avro_type(dt: DataType, row_name: str) -> Any:
    if isinstance(dt, BooleanType):
        s: Any = "boolean"
    elif isinstance(dt, (TinyIntType, SmallIntType, IntType)):
        s = "int"
    elif isinstance(dt, BigIntType):
        s = "long"
    elif isinstance(dt, FloatType):
        s = "float"
    elif isinstance(dt, DoubleType):
        s = "double"
    elif isinstance(dt, (CharType, VarCharType)):
        s = "string"
    elif isinstance(dt, (BinaryType, VarBinaryType, BlobType)):
        s = "bytes"
    elif isinstance(dt, (TimestampType, LocalZonedTimestampType)):
        if dt.precision > 6:
            raise NotYetSupported(f"avro data files cannot hold {dt} (precision above 6), as in Java")
        local = "local-" if isinstance(dt, LocalZonedTimestampType) else ""
        s = {"type": "long", "logicalType": f"{local}timestamp-{'millis' if dt.precision <= 3 else 'micros'}"}
    elif isinstance(dt, DateType):
        s = {"type": "int", "logicalType": "date"}
    elif isinstance(dt, TimeType):
        if dt.precision > 3:
            raise NotYetSupported(f"avro data files cannot hold {dt} (precision above 3), as in Java")
        s = {"type": "int", "logicalType": "time-millis"}
    elif isinstance(dt, DecimalType):
        s = {"type": "bytes", "logicalType": "decimal", "precision": dt.precision, "scale": dt.scale}
    elif isinstance(dt, RowType):
        flds = []
        for f in dt.fields:
            fd: dict[str, Any] = {"name": f.name, "type": _avro_type(f.type, f"{row_name}_{f.name}")}
            if f.type.nullable:
                fd["default"] = None
            flds.append(fd)
        if "." in row_name:
            ns, _, name = row_name.rpartition(".")
            s = {"type": "record", "name": name, "namespace": ns, "fields": flds}
        else:
            s = {"type": "record", "name": row_name, "fields": flds}
    elif isinstance(dt, (MapType, MultisetType)):
        key_t = dt.key if isinstance(dt, MapType) else dt.element
        val_t = dt.value if isinstance(dt, MapType) else IntType()
        if isinstance(key_t, (CharType, VarCharType)):
            s = {"type": "map", "values": _avro_type(val_t, row_name)}
        else:
            vf: dict[str, Any] = {"name": "value", "type": _avro_type(val_t, row_name + "_value")}
            if val_t.nullable:
                vf["default"] = None
            rec = {"type": "record", "name": row_name.rpartition(".")[2], "fields": [
                {"name": "key", "type": _avro_type(key_t, row_name + "_key")}, vf]}
            s = {"type": "array", "items": rec, "logicalType": "map"}
    elif isinstance(dt, ArrayType):
        s = {"type": "array", "items": _avro_type(dt.element, row_name)}
    else:
        raise NotYetSupported(f"avro data files: type {dt} is not supported")
    return _nullable(s, dt)


def _avro_physical(t: pa.DataType) -> pa.DataType:
    """Arrow type whose Python values fastavro encodes as Java does: ints for time types."""
    import pyarrow as pa

    if pa.types.is_timestamp(t):
        return pa.int64()
    if pa.types.is_date32(t) or pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_avro_physical(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_avro_physical(t.key_type)), t.item_field.with_type(_avro_physical(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_avro_physical(t.value_type)))
    return t


def _map_fixups(fields: list[DataField]) -> list[tuple[str, DataType]]:
    return [(f.name, f.type) for f in fields if _needs_map_fix(f.type)]


def _needs_map_fix(dt: DataType) -> bool:
    if isinstance(dt, (MapType, MultisetType)):
        return True
    if isinstance(dt, ArrayType):
        return _needs_map_fix(dt.element)
    if isinstance(dt, RowType):
        return any(_needs_map_fix(f.type) for f in dt.fields)
    return False


def _fix_maps(v: Any, dt: DataType) -> Any:
    """Arrow gives maps as lists of (key, value) tuples; Avro wants a dict or {key, value} records."""
    if v is None:
        return None
    if isinstance(dt, (MapType, MultisetType)):
        key_t = dt.key if isinstance(dt, MapType) else dt.element
        val_t = dt.value if isinstance(dt, MapType) else IntType()
        if isinstance(key_t, (CharType, VarCharType)):
            return {k: _fix_maps(x, val_t) for k, x in v}
        return [{"key": _fix_maps(k, key_t), "value": _fix_maps(x, val_t)} for k, x in v]
    if isinstance(dt, ArrayType):
        return [_fix_maps(x, dt.element) for x in v]
    if isinstance(dt, RowType):
        return {f.name: _fix_maps(v.get(f.name), f.type) for f in dt.fields}
    return v


def _write_avro(table: pa.Table, fields: list[DataField], options: CoreOptions) -> bytes:
    """Avro data files: rows go through Python dicts (fastavro has no columnar writer).

    Time types are handed over as their raw ints (fastavro passes ints through its
    date/time/timestamp logical writers), which keeps nanosecond-exact values and avoids
    naive-datetime zone guessing.
    """
    import fastavro
    import pyarrow as pa

    codec_name = options.file_compression.lower()
    if codec_name not in _AVRO_CODECS:
        raise InvalidInput(f"file.compression={codec_name!r} is not supported for avro (use {', '.join(_AVRO_CODECS)})")
    codec = _AVRO_CODECS[codec_name]
    schema = avro_schema(fields)
    phys = pa.schema([f.with_type(_avro_physical(f.type)) for f in table.schema])
    table = table.cast(phys)
    fixups = _map_fixups(fields)

    def records() -> Iterator[dict[str, Any]]:
        for batch in table.to_batches(max_chunksize=4096):
            rows = batch.to_pylist()
            if fixups:
                rows = [dict(r, **{n: _fix_maps(r[n], t) for n, t in fixups}) for r in rows]
            yield from rows

    out = io.BytesIO()
    fastavro.writer(
        out,
        schema,
        records(),
        codec=codec,
        sync_interval=64_000,
        codec_compression_level=options.file_compression_zstd_level if codec == "zstandard" else None,
    )
    return out.getvalue()


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
            self._sink = self.file_io.open_output(self.path)
            reached("file")
            if self.fmt == "avro":
                self._open_avro()
            elif self.fmt == "orc" and self._writer is None:
                import pyarrow.orc as orc

                codec = self.options.file_compression.lower()
                if codec not in _ORC_CODECS:
                    raise InvalidInput(
                        f"file.compression={codec!r} is not supported for orc (use {', '.join(_ORC_CODECS)})")
                self._writer = orc.ORCWriter(self._sink, compression=_ORC_CODECS[codec])

    def _flush_parquet(self) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        if not self._pending:
            if self._writer is None:  # an empty file still needs a valid footer
                self._ensure_open()
                empty = pa.Table.from_batches([], schema=self.schema)
                kwargs, self._int96 = _parquet_kwargs(empty, self.options)
                self._phys = _parquet_physical(empty, self._int96).schema
                self._writer = pq.ParquetWriter(self._sink, self._phys, **kwargs)
            return
        table = pa.concat_tables(self._pending) if len(self._pending) > 1 else self._pending[0]
        self._pending = []
        self._pending_bytes = 0
        if self._writer is None:
            self._ensure_open()
            kwargs, self._int96 = _parquet_kwargs(table, self.options)
            first = _parquet_physical(table, self._int96)
            self._phys = first.schema
            self._writer = pq.ParquetWriter(self._sink, self._phys, **kwargs)
        phys = _parquet_physical(table, self._int96)
        self._writer.write_table(phys, row_group_size=max(1, phys.num_rows))
        self.arrow_bytes_in += table.nbytes

    def _write_orc(self, table: pa.Table) -> None:
        import pyarrow as pa

        self._ensure_open()
        schema = pa.schema([f.with_type(_orc_physical(f.type)).remove_metadata() for f in table.schema])
        if not schema.equals(table.schema):
            table = table.cast(schema)
        self._writer.write(table)
        self.arrow_bytes_in += table.nbytes

    def _open_avro(self) -> None:
        import fastavro

        codec_name = self.options.file_compression.lower()
        if codec_name not in _AVRO_CODECS:
            raise InvalidInput(
                f"file.compression={codec_name!r} is not supported for avro (use {', '.join(_AVRO_CODECS)})")
        codec = _AVRO_CODECS[codec_name]
        parsed = fastavro.parse_schema(avro_schema(self.fields))
        self._writer = fastavro.write.Writer(
            self._sink, parsed, codec=codec, sync_interval=64_000,
            compression_level=self.options.file_compression_zstd_level if codec == "zstandard" else None,
        )

    def _write_avro(self, table: pa.Table) -> None:
        import pyarrow as pa

        self._ensure_open()
        phys = pa.schema([f.with_type(_avro_physical(f.type)) for f in table.schema])
        t = table.cast(phys)
        fixups = _map_fixups(self.fields)
        for batch in t.to_batches(max_chunksize=4096):
            rows = batch.to_pylist()
            if fixups:
                rows = [dict(r, **{n: _fix_maps(r[n], ty) for n, ty in fixups}) for r in rows]
            for r in rows:
                self._writer.write(r)
        self.arrow_bytes_in += table.nbytes


def _parquet_kwargs(table: pa.Table, options: CoreOptions) -> tuple[dict[str, Any], bool]:
    """ParquetWriter settings of :func:`_write_parquet` (dictionary choice from ``table``)."""
    codec = options.file_compression.lower()
    if codec not in _PARQUET_CODECS:
        raise InvalidInput(f"file.compression={codec!r} is not supported for parquet (use {', '.join(_PARQUET_CODECS)})")
    int96 = any(_has_nanos(f.type) for f in table.schema)
    phys = _parquet_physical(table, int96)
    kwargs: dict[str, Any] = {"use_dictionary": _dictionary_columns(phys)}
    if _PARQUET_CODECS[codec] == "zstd":
        kwargs["compression_level"] = options.file_compression_zstd_level
    kwargs.update(
        compression=_PARQUET_CODECS[codec],
        use_compliant_nested_type=True,
        store_decimal_as_integer=True,
        use_deprecated_int96_timestamps=int96,
        data_page_size=options.get_memory_bytes("page-size") or 64 * 1024,
        write_statistics=True,
    )
    return kwargs, int96


def _parquet_physical(table: pa.Table, int96: bool) -> pa.Table:
    """With INT96 in the file, p<=6 timestamp columns are stored as bare INT64 (module docstring)."""
    import pyarrow as pa

    if not int96:
        return table
    cols, flds = [], []
    for col, f in zip(table.columns, table.schema):
        if pa.types.is_timestamp(f.type) and f.type.unit != "ns":
            col = col.cast(pa.int64())
            f = f.with_type(pa.int64())
        cols.append(col)
        flds.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(flds))


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
        return _write_parquet(table, options)
    if fmt == "orc":
        return _write_orc(table, options)
    return _write_avro(table, fields, options)


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

    cols = []
    schema = pa.schema([arrow_field(f) for f in wanted])
    names = batch.schema.names
    for f, af in zip(wanted, schema):
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


def _read_avro_records(data: bytes, path: str) -> list[dict[str, Any]]:
    import fastavro

    try:
        return list(fastavro.reader(io.BytesIO(data)))
    except Exception as e:  # fastavro raises many kinds
        raise CorruptMetadata(path, f"cannot decode Avro data file: {e}") from e


def _avro_fix_maps(v: Any, dt: DataType) -> Any:
    if v is None:
        return None
    if isinstance(dt, (MapType, MultisetType)):
        key_t = dt.key if isinstance(dt, MapType) else dt.element
        val_t = dt.value if isinstance(dt, MapType) else IntType()
        if isinstance(v, dict):
            return [(k, _avro_fix_maps(x, val_t)) for k, x in v.items()]
        return [(_avro_fix_maps(e["key"], key_t), _avro_fix_maps(e["value"], val_t)) for e in v]
    if isinstance(dt, ArrayType):
        return [_avro_fix_maps(x, dt.element) for x in v]
    if isinstance(dt, RowType):
        return {f.name: _avro_fix_maps(v.get(f.name), f.type) for f in dt.fields}
    return v


def _avro_table(records: list[dict[str, Any]], wanted: list[DataField], path: str) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema([arrow_field(f) for f in wanted])
    fix = [(f.name, f.type) for f in wanted if _needs_map_fix(f.type)]
    if fix:
        records = [dict(r, **{n: _avro_fix_maps(r.get(n), t) for n, t in fix}) for r in records]
    try:
        return pa.Table.from_pylist(records, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise CorruptMetadata(path, f"avro records do not fit the file schema: {e}") from e


def iter_data_file_batches(
    file_io: FileIO,
    path: str,
    fields: list[DataField],
    columns: list[str] | None = None,
    batch_rows: int = 65536,
    *,
    low_memory: bool = False,
) -> Iterator[pa.RecordBatch]:
    """Stream a data file as record batches typed by ``fields`` (the file's schema).

    ``low_memory``: Parquet pages are read through a small buffer instead of whole column
    chunks (row groups of Java files are up to 128 MB; compaction keeps one per run open).
    """
    wanted = _select(fields, columns, path)
    names = [f.name for f in wanted]
    fmt = format_of(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with file_io.open_arrow_input(path) as f:
            try:
                pf = (pq.ParquetFile(f, buffer_size=1 << 20, pre_buffer=False) if low_memory
                      else pq.ParquetFile(f))
                for b in pf.iter_batches(batch_size=batch_rows, columns=names, use_threads=False):
                    yield from _to_target(b, wanted, path).to_batches()
            except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
                raise CorruptMetadata(path, f"cannot read Parquet: {e}") from e
    elif fmt == "orc":
        import pyarrow.orc as orc

        with file_io.open_arrow_input(path) as f:
            try:
                of = orc.ORCFile(f)
                for i in range(of.nstripes):
                    t = _to_target(of.read_stripe(i, columns=names), wanted, path)
                    yield from t.to_batches(max_chunksize=batch_rows)
            except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
                raise CorruptMetadata(path, f"cannot read ORC: {e}") from e
    elif low_memory:
        yield from _iter_avro_streaming(file_io, path, wanted, batch_rows)
    else:
        records = _read_avro_records(file_io.read_bytes(path), path)
        for start in range(0, len(records), batch_rows):
            yield from _avro_table(records[start : start + batch_rows], wanted, path).to_batches()


def _iter_avro_streaming(file_io: FileIO, path: str, wanted: list[DataField], batch_rows: int) -> Iterator[pa.RecordBatch]:
    """Avro records decoded block by block from the stream (never the whole file as dicts)."""
    import fastavro

    with file_io.open_input(path) as f:
        try:
            reader = iter(fastavro.reader(f))
        except Exception as e:  # fastavro raises many kinds
            raise CorruptMetadata(path, f"cannot decode Avro data file: {e}") from e
        while True:
            buf: list[dict[str, Any]] = []
            try:
                for rec in reader:
                    buf.append(rec)
                    if len(buf) >= batch_rows:
                        break
            except Exception as e:  # fastavro raises many kinds
                raise CorruptMetadata(path, f"cannot decode Avro data file: {e}") from e
            if not buf:
                return
            yield from _avro_table(buf, wanted, path).to_batches()
            if len(buf) < batch_rows:
                return


def read_data_file(
    file_io: FileIO, path: str, fields: list[DataField], columns: list[str] | None = None
) -> pa.Table:
    """Read a whole data file (Java's or ours) as a table typed by ``fields`` (the file's schema)."""
    import pyarrow as pa

    wanted = _select(fields, columns, path)
    fmt = format_of(path)
    if fmt == "parquet":
        import pyarrow.parquet as pq

        with file_io.open_arrow_input(path) as f:
            try:
                # not pq.read_table: its dataset scan leaves tasks running after it returns or
                # raises (see FileIO.open_arrow_input)
                pf = pq.ParquetFile(f)
                present = set(pf.schema_arrow.names)  # a missing one is _to_target's error
                t = pf.read(columns=[x.name for x in wanted if x.name in present], use_threads=False)
            except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
                raise CorruptMetadata(path, f"cannot read Parquet: {e}") from e
        return _to_target(t, wanted, path)
    if fmt == "orc":
        import pyarrow.orc as orc

        with file_io.open_arrow_input(path) as f:
            try:
                t = orc.ORCFile(f).read(columns=[x.name for x in wanted])
            except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
                raise CorruptMetadata(path, f"cannot read ORC: {e}") from e
        return _to_target(t, wanted, path)
    records = _read_avro_records(file_io.read_bytes(path), path)
    if not records:
        return pa.Table.from_pylist([], schema=pa.schema([arrow_field(f) for f in wanted]))
    return _avro_table(records, wanted, path)


# ---------------------------------------------------------------------------------------
# Schema evolution
# ---------------------------------------------------------------------------------------


def evolve(table: pa.Table, file_fields: list[DataField], target_fields: list[DataField]) -> pa.Table:
    """Map a table read with an old schema onto ``target_fields`` by FIELD ID.

    Renamed columns keep their data (same id), dropped ones disappear, added ones are all
    NULL, and widened types (INT -> BIGINT, ...) are cast.
    """
    import pyarrow as pa

    by_id = {f.id: f for f in file_fields}
    cols = []
    schema = pa.schema([arrow_field(f) for f in target_fields])
    for f, af in zip(target_fields, schema):
        old = by_id.get(f.id)
        if old is None or old.name not in table.column_names:
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


__all__ = [
    "DataFileWriter",
    "FORMATS",
    "avro_schema",
    "encode_data_file",
    "evolve",
    "field_id_of",
    "format_of",
    "iter_data_file_batches",
    "read_data_file",
    "write_data_file",
]
