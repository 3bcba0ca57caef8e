"""Avro data files as Java Paimon writes and reads them (Java ``AvroFileFormat``).

The schema follows ``AvroSchemaConverter``: ``["null", T]`` unions, records named
``org.apache.paimon.avro.generated.record`` + ``_<field>``, decimals as bytes, maps with
non-string keys as arrays of {key, value} records with logicalType ``map``. Rows go through
Python dicts (fastavro has no columnar reader or writer).
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any, cast

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
from .arrow_schema import arrow_field

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.fileio import FileIO
    from ..schema.options import CoreOptions

_AVRO_CODECS = {"zstd": "zstandard", "zstandard": "zstandard", "snappy": "snappy", "deflate": "deflate",
                "gzip": "deflate", "none": "null", "null": "null", "uncompressed": "null"}
AVRO_ROOT = "org.apache.paimon.avro.generated.record"
_SYNC_INTERVAL = 64_000


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


def avro_records(table: pa.Table, fields: list[DataField]) -> Iterator[dict[str, Any]]:
    """The rows of ``table`` as fastavro writes them for a file of ``fields``.

    Time types are handed over as their raw ints (fastavro passes ints through its
    date/time/timestamp logical writers), which keeps nanosecond-exact values and avoids
    naive-datetime zone guessing.
    """
    import pyarrow as pa

    phys = pa.schema([f.with_type(_avro_physical(f.type)) for f in table.schema])
    table = table.cast(phys)
    fixups = _map_fixups(fields)
    for batch in table.to_batches(max_chunksize=4096):
        rows = batch.to_pylist()
        if fixups:
            rows = [dict(r, **{n: _fix_maps(r[n], t) for n, t in fixups}) for r in rows]
        yield from rows


def _avro_codec(options: CoreOptions) -> str:
    codec_name = options.file_compression.lower()
    if codec_name not in _AVRO_CODECS:
        raise InvalidInput(f"file.compression={codec_name!r} is not supported for avro (use {', '.join(_AVRO_CODECS)})")
    return _AVRO_CODECS[codec_name]


def write_avro(table: pa.Table, fields: list[DataField], options: CoreOptions) -> bytes:
    """One whole Avro file holding ``table`` (already conformed to the file schema)."""
    import fastavro

    codec = _avro_codec(options)
    out = io.BytesIO()
    fastavro.writer(
        out,
        avro_schema(fields),
        avro_records(table, fields),
        codec=codec,
        sync_interval=_SYNC_INTERVAL,
        codec_compression_level=options.file_compression_zstd_level if codec == "zstandard" else None,
    )
    return out.getvalue()


def open_avro_writer(sink: Any, fields: list[DataField], options: CoreOptions) -> Any:
    """A streaming fastavro writer on ``sink``, fed :func:`avro_records` rows."""
    import fastavro

    codec = _avro_codec(options)
    parsed = fastavro.parse_schema(avro_schema(fields))
    return fastavro.write.Writer(
        sink, parsed, codec=codec, sync_interval=_SYNC_INTERVAL,
        compression_level=options.file_compression_zstd_level if codec == "zstandard" else None,
    )


def _records(reader: Any) -> Iterator[dict[str, Any]]:
    """fastavro types a datum as any Avro value; a data file's top-level schema is a record,
    so each datum is a dict."""
    return cast("Iterator[dict[str, Any]]", reader)


def read_avro_records(data: bytes, path: str) -> list[dict[str, Any]]:
    import fastavro

    try:
        return list(_records(fastavro.reader(io.BytesIO(data))))
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


def avro_table(records: list[dict[str, Any]], wanted: list[DataField], path: str) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema([arrow_field(f) for f in wanted])
    fix = [(f.name, f.type) for f in wanted if _needs_map_fix(f.type)]
    if fix:
        records = [dict(r, **{n: _avro_fix_maps(r.get(n), t) for n, t in fix}) for r in records]
    try:
        return pa.Table.from_pylist(records, schema=schema)
    except (pa.ArrowInvalid, pa.ArrowTypeError) as e:
        raise CorruptMetadata(path, f"avro records do not fit the file schema: {e}") from e


def iter_avro_streaming(file_io: FileIO, path: str, wanted: list[DataField], batch_rows: int) -> Iterator[pa.RecordBatch]:
    """Avro records decoded block by block from the stream (never the whole file as dicts)."""
    import fastavro

    with file_io.open_input(path) as f:
        try:
            reader = iter(_records(fastavro.reader(f)))
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
            yield from avro_table(buf, wanted, path).to_batches()
            if len(buf) < batch_rows:
                return
