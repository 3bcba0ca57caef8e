"""Avro data files as Java Paimon writes and reads them (Java ``AvroFileFormat``).

The schema follows ``AvroSchemaConverter``: ``["null", T]`` unions, records named
``org.apache.paimon.avro.generated.record`` + ``_<field>``, decimals as bytes, maps with
non-string keys as arrays of {key, value} records with logicalType ``map``. Rows go through
Python dicts (fastavro has no columnar reader or writer).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, NoReturn, cast

from ..data.type_visitor import DataTypeVisitor
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
    return _nullable(_AvroSchema(row_name).visit(dt), dt)


def _no_avro_type(dt: DataType) -> NoReturn:
    raise NotYetSupported(f"avro data files: type {dt} is not supported")


class _AvroSchema(DataTypeVisitor[Any]):
    """One type's Avro schema, nullability aside; ``row_name``: the record name a ROW gets
    (nested records append ``_<field>``, map entries ``_key`` / ``_value``)."""

    def __init__(self, row_name: str) -> None:
        self.row_name = row_name

    def unsupported(self, dt: DataType) -> NoReturn:
        _no_avro_type(dt)

    def visit_boolean(self, dt: BooleanType) -> Any:
        return "boolean"

    def visit_int(self, dt: TinyIntType | SmallIntType | IntType) -> Any:
        return "int"

    visit_tinyint = visit_smallint = visit_int

    def visit_bigint(self, dt: BigIntType) -> Any:
        return "long"

    def visit_float(self, dt: FloatType) -> Any:
        return "float"

    def visit_double(self, dt: DoubleType) -> Any:
        return "double"

    def visit_varchar(self, dt: CharType | VarCharType) -> Any:
        return "string"

    visit_char = visit_varchar

    def visit_varbinary(self, dt: BinaryType | VarBinaryType | BlobType) -> Any:
        return "bytes"

    visit_binary = visit_blob = visit_varbinary

    def visit_timestamp(self, dt: TimestampType) -> Any:
        return self._timestamp(dt, "")

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> Any:
        return self._timestamp(dt, "local-")

    def _timestamp(self, dt: TimestampType | LocalZonedTimestampType, local: str) -> Any:
        if dt.precision > 6:
            raise NotYetSupported(f"avro data files cannot hold {dt} (precision above 6), as in Java")
        return {"type": "long", "logicalType": f"{local}timestamp-{'millis' if dt.precision <= 3 else 'micros'}"}

    def visit_date(self, dt: DateType) -> Any:
        return {"type": "int", "logicalType": "date"}

    def visit_time(self, dt: TimeType) -> Any:
        if dt.precision > 3:
            raise NotYetSupported(f"avro data files cannot hold {dt} (precision above 3), as in Java")
        return {"type": "int", "logicalType": "time-millis"}

    def visit_decimal(self, dt: DecimalType) -> Any:
        return {"type": "bytes", "logicalType": "decimal", "precision": dt.precision, "scale": dt.scale}

    def visit_row(self, dt: RowType) -> Any:
        row_name = self.row_name
        flds = []
        for f in dt.fields:
            fd: dict[str, Any] = {"name": f.name, "type": _avro_type(f.type, f"{row_name}_{f.name}")}
            if f.type.nullable:
                fd["default"] = None
            flds.append(fd)
        if "." in row_name:
            ns, _, name = row_name.rpartition(".")
            return {"type": "record", "name": name, "namespace": ns, "fields": flds}
        return {"type": "record", "name": row_name, "fields": flds}

    def visit_map(self, dt: MapType) -> Any:
        return self._map(dt.key, dt.value)

    def visit_multiset(self, dt: MultisetType) -> Any:
        return self._map(dt.element, IntType())

    def _map(self, key_t: DataType, val_t: DataType) -> Any:
        row_name = self.row_name
        if isinstance(key_t, (CharType, VarCharType)):
            return {"type": "map", "values": _avro_type(val_t, row_name)}
        vf: dict[str, Any] = {"name": "value", "type": _avro_type(val_t, row_name + "_value")}
        if val_t.nullable:
            vf["default"] = None
        rec = {"type": "record", "name": row_name.rpartition(".")[2], "fields": [
            {"name": "key", "type": _avro_type(key_t, row_name + "_key")}, vf]}
        return {"type": "array", "items": rec, "logicalType": "map"}

    def visit_array(self, dt: ArrayType) -> Any:
        return {"type": "array", "items": _avro_type(dt.element, self.row_name)}


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


def _map_fixups(fields: list[DataField]) -> list[tuple[str, Fix]]:
    """The columns whose values need map fixing, each with its fixer (Arrow to Avro)."""
    return [(f.name, _TO_AVRO.visit(f.type)) for f in fields if _NEEDS_MAP_FIX.visit(f.type)]


class _NeedsMapFix(DataTypeVisitor[bool]):
    """Whether a type holds a MAP or MULTISET, whose values Arrow and Avro shape differently."""

    def unsupported(self, dt: DataType) -> NoReturn:
        _no_avro_type(dt)

    def visit_atomic(self, dt: DataType) -> bool:
        return False

    def visit_map(self, dt: MapType | MultisetType) -> bool:
        return True

    visit_multiset = visit_map

    def visit_array(self, dt: ArrayType) -> bool:
        return self.visit(dt.element)

    def visit_row(self, dt: RowType) -> bool:
        return any(self.visit(f.type) for f in dt.fields)


_NEEDS_MAP_FIX = _NeedsMapFix()
Fix = Callable[[Any], Any]


def _same(v: Any) -> Any:
    return v


class _MapFixer(DataTypeVisitor[Fix]):
    """The function that reshapes one column's values between Arrow and Avro, built once per
    type (``None`` stays ``None``; rows are rebuilt with their fields, arrays copied)."""

    def unsupported(self, dt: DataType) -> NoReturn:
        _no_avro_type(dt)

    def visit_atomic(self, dt: DataType) -> Fix:
        return _same

    def visit_array(self, dt: ArrayType) -> Fix:
        element = self.visit(dt.element)
        return lambda v: None if v is None else [element(x) for x in v]

    def visit_row(self, dt: RowType) -> Fix:
        fields = [(f.name, self.visit(f.type)) for f in dt.fields]
        return lambda v: None if v is None else {name: fix(v.get(name)) for name, fix in fields}

    def visit_map(self, dt: MapType) -> Fix:
        return self._map(dt.key, dt.value)

    def visit_multiset(self, dt: MultisetType) -> Fix:
        return self._map(dt.element, IntType())

    def _map(self, key_t: DataType, val_t: DataType) -> Fix:
        raise NotImplementedError


class _ToAvro(_MapFixer):
    """Arrow gives maps as lists of (key, value) tuples; Avro wants a dict or {key, value} records."""

    def _map(self, key_t: DataType, val_t: DataType) -> Fix:
        key, value = self.visit(key_t), self.visit(val_t)
        if isinstance(key_t, (CharType, VarCharType)):
            return lambda v: None if v is None else {k: value(x) for k, x in v}
        return lambda v: None if v is None else [{"key": key(k), "value": value(x)} for k, x in v]


class _FromAvro(_MapFixer):
    """Avro maps (dicts) and {key, value} record arrays back to Arrow's (key, value) tuples."""

    def _map(self, key_t: DataType, val_t: DataType) -> Fix:
        key, value = self.visit(key_t), self.visit(val_t)

        def fix(v: Any) -> Any:
            if v is None:
                return None
            if isinstance(v, dict):
                return [(k, value(x)) for k, x in v.items()]
            return [(key(e["key"]), value(e["value"])) for e in v]

        return fix


_TO_AVRO = _ToAvro()
_FROM_AVRO = _FromAvro()


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
            rows = [dict(r, **{n: fix(r[n]) for n, fix in fixups}) for r in rows]
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


def avro_table(records: list[dict[str, Any]], wanted: list[DataField], path: str) -> pa.Table:
    import pyarrow as pa

    schema = pa.schema([arrow_field(f) for f in wanted])
    fixups = [(f.name, _FROM_AVRO.visit(f.type)) for f in wanted if _NEEDS_MAP_FIX.visit(f.type)]
    if fixups:
        records = [dict(r, **{n: fix(r.get(n)) for n, fix in fixups}) for r in records]
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
