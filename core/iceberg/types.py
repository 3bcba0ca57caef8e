"""Paimon types as Iceberg sees them: schema JSON, partition spec and single-value bounds.

Java's ``IcebergDataField`` / ``IcebergConversions`` decide the mapping; Iceberg readers
resolve columns by field id, so a Paimon field keeps its id, a list element / map key /
map value gets Paimon's structured-type ids (the ids its Parquet and ORC writers stamp) and a
partition field gets ``1000 + position``. Bounds use Iceberg's single-value serialization
(little-endian numbers, UTF-8 strings, big-endian unscaled decimals, micros for time values).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import struct
from collections.abc import Callable
from typing import Any, NoReturn

from ..data.binary_row import Timestamp
from ..data.type_visitor import DataTypeVisitor
from ..data.types import (
    ArrayType,
    BigIntType,
    BinaryType,
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
from ..errors import NotYetSupported
from ..format.arrow_schema import (
    KEY_FIELD_ID_START,
    KEY_PREFIX,
    ROW_ID,
    ROW_ID_ID,
    SEQUENCE_NUMBER,
    SEQUENCE_NUMBER_ID,
    VALUE_KIND,
    VALUE_KIND_ID,
    array_element_field_id,
    map_key_field_id,
    map_value_field_id,
)
from ..schema.iceberg_options import unmappable_type
from ..schema.table_schema import TableSchema

FIRST_PARTITION_FIELD_ID = 1000  # Java IcebergPartitionField.FIRST_FIELD_ID (Iceberg's own convention)
PARTITION_SPEC_ID = 0
NESTED = (ArrayType, MapType, MultisetType, RowType)
_EPOCH_DATE = _dt.date(1970, 1, 1)
_UTC_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=_dt.timezone.utc)


def _no_iceberg_type(dt: DataType) -> NoReturn:
    raise NotYetSupported(f"Iceberg metadata: column type {dt.as_sql()} has no Iceberg type")


class _IcebergType(DataTypeVisitor[Any]):
    """A column type as Iceberg's schema JSON writes it; ``field_id`` / ``depth``: the column
    whose structured-type ids (list element, map key and value) nested types get, and how deep."""

    def __init__(self, field_id: int, depth: int) -> None:
        self.field_id = field_id
        self.depth = depth

    def unsupported(self, dt: DataType) -> NoReturn:
        _no_iceberg_type(dt)

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

    def visit_date(self, dt: DateType) -> Any:
        return "date"

    def visit_time(self, dt: TimeType) -> Any:
        return "time"

    def visit_varchar(self, dt: CharType | VarCharType) -> Any:
        return "string"

    visit_char = visit_varchar

    def visit_varbinary(self, dt: BinaryType | VarBinaryType) -> Any:
        return "binary"

    visit_binary = visit_varbinary

    def visit_decimal(self, dt: DecimalType) -> Any:
        return f"decimal({dt.precision}, {dt.scale})"

    def visit_timestamp(self, dt: TimestampType) -> Any:
        return "timestamp"

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> Any:
        return "timestamptz"

    def visit_array(self, dt: ArrayType) -> Any:
        fid, depth = self.field_id, self.depth + 1
        return {"type": "list", "element-id": array_element_field_id(fid, depth),
                "element-required": not dt.element.nullable, "element": _IcebergType(fid, depth).visit(dt.element)}

    def visit_map(self, dt: MapType) -> Any:
        fid, depth = self.field_id, self.depth + 1
        child = _IcebergType(fid, depth)
        return {"type": "map", "key-id": map_key_field_id(fid, depth), "key": child.visit(dt.key),
                "value-id": map_value_field_id(fid, depth), "value-required": not dt.value.nullable,
                "value": child.visit(dt.value)}

    def visit_multiset(self, dt: MultisetType) -> Any:
        fid, depth = self.field_id, self.depth + 1
        return {"type": "map", "key-id": map_key_field_id(fid, depth),
                "key": _IcebergType(fid, depth).visit(dt.element),
                "value-id": map_value_field_id(fid, depth), "value-required": True, "value": "int"}

    def visit_row(self, dt: RowType) -> Any:
        return {"type": "struct", "fields": [iceberg_field(f) for f in dt.fields]}


def iceberg_field(f: DataField) -> dict[str, Any]:
    """One schema field as Java's ``IcebergDataField`` serializes it (``doc`` only when set)."""
    bad = unmappable_type(f.type)
    if bad is not None:
        raise NotYetSupported(f"Iceberg metadata: column {f.name!r} of type {bad} cannot be published")
    out: dict[str, Any] = {"id": f.id, "name": f.name, "required": not f.type.nullable,
                           "type": _IcebergType(f.id, 0).visit(f.type)}
    if f.description is not None:
        out["doc"] = f.description
    return out


def iceberg_schema(schema: TableSchema) -> dict[str, Any]:
    return {"type": "struct", "schema-id": schema.id, "fields": [iceberg_field(f) for f in schema.fields]}


NAME_MAPPING = "schema.name-mapping.default"


def name_mapping(schemas: list[TableSchema]) -> list[dict[str, Any]]:
    """Iceberg's ``schema.name-mapping.default``: how readers find columns in data files
    without field ids (Paimon 0.9's Parquet files have none), by every name a field had.

    Java does not write it, so Iceberg readers cannot read 0.9's files; it is only consulted
    for files without ids, so files that have them read exactly as before."""
    names: dict[int, list[str]] = {}

    def collect(fields: tuple[DataField, ...] | list[DataField]) -> None:
        for f in fields:
            known = names.setdefault(f.id, [])
            if f.name not in known:
                known.append(f.name)
            if isinstance(f.type, RowType):
                collect(f.type.fields)

    for s in reversed(schemas):  # the latest name first
        collect(s.fields)

    def mapped(f: DataField) -> dict[str, Any]:
        return _entry(f.id, names.get(f.id, [f.name]), _NestedNames(mapped, f.id, 0).visit(f.type))

    latest = schemas[-1]
    out = [mapped(f) for f in latest.fields]
    # Paimon's system columns in the same files (keys, sequence number, row kind, row id): mapped
    # to the ids Paimon stamps on them, so a reader can place every column; Iceberg reads none
    if latest.primary_keys:
        out += [_entry(KEY_FIELD_ID_START + f.id, [KEY_PREFIX + n for n in names.get(f.id, [f.name])], None)
                for f in latest.fields if f.name in latest.primary_keys]
        out.append(_entry(VALUE_KIND_ID, [VALUE_KIND], None))
    out += [_entry(SEQUENCE_NUMBER_ID, [SEQUENCE_NUMBER], None), _entry(ROW_ID_ID, [ROW_ID], None)]
    return out


class _NestedNames(DataTypeVisitor["list[dict[str, Any]] | None"]):
    """The name-mapping entries under a column's type (None for atomic types): ROW fields by
    their names (``mapped``), list elements and map keys and values by their structured ids."""

    def __init__(self, mapped: Callable[[DataField], dict[str, Any]], field_id: int, depth: int) -> None:
        self.mapped = mapped
        self.field_id = field_id
        self.depth = depth

    def unsupported(self, dt: DataType) -> NoReturn:
        _no_iceberg_type(dt)

    def visit_atomic(self, dt: DataType) -> list[dict[str, Any]] | None:
        return None

    def visit_row(self, dt: RowType) -> list[dict[str, Any]] | None:
        return [self.mapped(f) for f in dt.fields]

    def visit_array(self, dt: ArrayType) -> list[dict[str, Any]] | None:
        fid, depth = self.field_id, self.depth + 1
        return [_entry(array_element_field_id(fid, depth), ["element"],
                       _NestedNames(self.mapped, fid, depth).visit(dt.element))]

    def visit_map(self, dt: MapType) -> list[dict[str, Any]] | None:
        return self._map(dt.key, dt.value)

    def visit_multiset(self, dt: MultisetType) -> list[dict[str, Any]] | None:
        return self._map(dt.element, IntType())

    def _map(self, key_t: DataType, value_t: DataType) -> list[dict[str, Any]]:
        fid, depth = self.field_id, self.depth + 1
        child = _NestedNames(self.mapped, fid, depth)
        return [_entry(map_key_field_id(fid, depth), ["key"], child.visit(key_t)),
                _entry(map_value_field_id(fid, depth), ["value"], child.visit(value_t))]


def _entry(field_id: int, names: list[str], fields: list[dict[str, Any]] | None) -> dict[str, Any]:
    out: dict[str, Any] = {"field-id": field_id, "names": names}
    if fields:
        out["fields"] = fields
    return out


def highest_field_id(iceberg_schema_json: dict[str, Any]) -> int:
    """Java's ``IcebergSchema.highestFieldId``: the largest top-level field id."""
    return max((int(f["id"]) for f in iceberg_schema_json.get("fields", [])), default=0)


def partition_spec(schema: TableSchema) -> dict[str, Any]:
    """The one identity partition spec (id 0): Paimon partitions are identity partitions."""
    fields = []
    for i, key in enumerate(schema.partition_keys):
        source = schema.field(key)
        fields.append({"name": key, "transform": "identity", "source-id": source.id,
                       "field-id": FIRST_PARTITION_FIELD_ID + i})
    return {"spec-id": PARTITION_SPEC_ID, "fields": fields}


def last_partition_id(spec: dict[str, Any]) -> int:
    # Java: the largest partition field id, or 999 ("a result tested by hand") when unpartitioned
    return max((int(f["field-id"]) for f in spec.get("fields", [])), default=FIRST_PARTITION_FIELD_ID - 1)


# ---------------------------------------------------------------------------------------
# values: one canonical Python form per type, its Avro form and its Iceberg bound bytes
# ---------------------------------------------------------------------------------------


def canonical(dt: DataType, v: Any) -> Any:
    """A value of ``dt`` from a BinaryRow or a decoded Avro record, in one form: DATE as epoch
    days, TIME as millis of day, timestamps as epoch micros, DECIMAL as ``Decimal``."""
    if v is None:
        return None
    return _CANONICAL.visit(dt)(v)


def _same(v: Any) -> Any:
    return v


def _canonical_date(v: Any) -> Any:
    return (v - _EPOCH_DATE).days if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime) else int(v)


def _canonical_time(v: Any) -> Any:
    if isinstance(v, _dt.time):
        return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
    return int(v)


def _epoch_micros(v: Any) -> int | None:
    """A timestamp object as epoch micros (None: a raw number)."""
    if isinstance(v, Timestamp):
        return v.to_epoch_micros()
    if isinstance(v, _dt.datetime):
        aware = v if v.tzinfo is not None else v.replace(tzinfo=_dt.timezone.utc)
        delta = aware - _UTC_EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
    return None


def _canonical_timestamp_millis(v: Any) -> Any:
    micros = _epoch_micros(v)
    return int(v) * 1000 if micros is None else micros  # a raw Avro long: millis up to precision 3


def _canonical_timestamp_micros(v: Any) -> Any:
    micros = _epoch_micros(v)
    return int(v) if micros is None else micros


def _canonical_decimal(v: Any) -> Any:
    return v if isinstance(v, decimal.Decimal) else decimal.Decimal(v)


Codec = Callable[[Any], Any]


class _Canonical(DataTypeVisitor[Codec]):
    """The function that puts one type's values in their canonical form (the rest pass as they are)."""

    def unsupported(self, dt: DataType) -> NoReturn:
        _no_iceberg_type(dt)

    def visit_atomic(self, dt: DataType) -> Codec:
        return _same

    visit_array = visit_multiset = visit_map = visit_row = visit_atomic

    def visit_date(self, dt: DateType) -> Codec:
        return _canonical_date

    def visit_time(self, dt: TimeType) -> Codec:
        return _canonical_time

    def visit_timestamp(self, dt: TimestampType | LocalZonedTimestampType) -> Codec:
        return _canonical_timestamp_micros if dt.precision > 3 else _canonical_timestamp_millis

    visit_local_zoned_timestamp = visit_timestamp

    def visit_decimal(self, dt: DecimalType) -> Codec:
        return _canonical_decimal


_CANONICAL = _Canonical()


def avro_value(dt: DataType, v: Any) -> Any:
    """The canonical value as Paimon's Avro writer stores it (millis for precision <= 3)."""
    if v is None:
        return None
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)) and dt.precision <= 3:
        return v // 1000
    return v


def avro_type(dt: DataType) -> Any:
    """Paimon's ``AvroSchemaConverter`` for an atomic type (partition fields), nullability aside."""
    return _PARTITION_AVRO_TYPE.visit(dt)


class _PartitionAvroType(DataTypeVisitor[Any]):
    def unsupported(self, dt: DataType) -> NoReturn:
        raise NotYetSupported(f"Iceberg metadata: partition type {dt.as_sql()} is not supported")

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

    def visit_varbinary(self, dt: BinaryType | VarBinaryType) -> Any:
        return "bytes"

    visit_binary = visit_varbinary

    def visit_date(self, dt: DateType) -> Any:
        return {"type": "int", "logicalType": "date"}

    def visit_time(self, dt: TimeType) -> Any:
        return {"type": "int", "logicalType": "time-millis"}

    def visit_decimal(self, dt: DecimalType) -> Any:
        return {"type": "bytes", "logicalType": "decimal", "precision": dt.precision, "scale": dt.scale}

    def visit_timestamp(self, dt: TimestampType) -> Any:
        return {"type": "long", "logicalType": "timestamp-millis" if dt.precision <= 3 else "timestamp-micros"}

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> Any:
        return {"type": "long",
                "logicalType": "local-timestamp-millis" if dt.precision <= 3 else "local-timestamp-micros"}


_PARTITION_AVRO_TYPE = _PartitionAvroType()


def _unscaled(v: decimal.Decimal, scale: int) -> int:
    return int(v.scaleb(scale).to_integral_value())


def to_bound(dt: DataType, v: Any) -> bytes:
    """Iceberg's single-value serialization of a canonical value (Java ``IcebergConversions.toByteBuffer``)."""
    return _TO_BOUND.visit(dt)(v)


def has_bounds(dt: DataType) -> bool:
    return _HAS_BOUNDS.visit(dt)


def from_bound(dt: DataType, b: bytes) -> Any:
    """Iceberg's single-value bytes back to the canonical value (see ``types.canonical``)."""
    return _FROM_BOUND.visit(dt)(b)


def _decimal_to_bound(scale: int) -> Codec:
    def to_bytes(v: Any) -> bytes:
        n = _unscaled(v, scale)
        return n.to_bytes(((n if n >= 0 else ~n).bit_length() // 8) + 1, "big", signed=True)  # BigInteger.toByteArray

    return to_bytes


class _ToBound(DataTypeVisitor[Codec]):
    def unsupported(self, dt: DataType) -> NoReturn:
        raise NotYetSupported(f"Iceberg metadata: no bound for type {dt.as_sql()}")

    def visit_boolean(self, dt: BooleanType) -> Codec:
        return lambda v: b"\x01" if v else b"\x00"

    def visit_int(self, dt: TinyIntType | SmallIntType | IntType | DateType) -> Codec:
        return lambda v: struct.pack("<i", int(v))

    visit_tinyint = visit_smallint = visit_date = visit_int

    def visit_bigint(self, dt: BigIntType | TimestampType | LocalZonedTimestampType) -> Codec:
        return lambda v: struct.pack("<q", int(v))

    visit_timestamp = visit_local_zoned_timestamp = visit_bigint

    def visit_float(self, dt: FloatType) -> Codec:
        return lambda v: struct.pack("<f", float(v))

    def visit_double(self, dt: DoubleType) -> Codec:
        return lambda v: struct.pack("<d", float(v))

    def visit_varchar(self, dt: CharType | VarCharType) -> Codec:
        return lambda v: str(v).encode("utf-8")

    visit_char = visit_varchar

    def visit_varbinary(self, dt: BinaryType | VarBinaryType) -> Codec:
        return bytes

    visit_binary = visit_varbinary

    def visit_decimal(self, dt: DecimalType) -> Codec:
        return _decimal_to_bound(dt.scale)

    def visit_time(self, dt: TimeType) -> Codec:
        return lambda v: struct.pack("<q", int(v) * 1000)


class _HasBounds(DataTypeVisitor[bool]):
    """Whether Iceberg keeps bounds for a type: the ones ``_ToBound`` serializes."""

    def unsupported(self, dt: DataType) -> NoReturn:
        _no_iceberg_type(dt)

    def visit_atomic(self, dt: DataType) -> bool:
        return True

    def _no_bounds(self, dt: DataType) -> bool:
        return False

    visit_variant = visit_blob = visit_array = visit_multiset = visit_map = visit_row = _no_bounds


def _decimal_from_bound(scale: int) -> Codec:
    return lambda b: decimal.Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-scale)


class _FromBound(DataTypeVisitor[Codec]):
    def unsupported(self, dt: DataType) -> NoReturn:
        raise ValueError(f"no bound decoding for {dt}")

    def visit_boolean(self, dt: BooleanType) -> Codec:
        return lambda b: b[0] != 0

    def visit_int(self, dt: TinyIntType | SmallIntType | IntType | DateType) -> Codec:
        return lambda b: struct.unpack("<i", b[:4])[0]

    visit_tinyint = visit_smallint = visit_date = visit_int

    def visit_bigint(self, dt: BigIntType) -> Codec:
        return lambda b: struct.unpack("<q", b)[0] if len(b) == 8 else struct.unpack("<i", b)[0]

    def visit_float(self, dt: FloatType) -> Codec:
        return lambda b: struct.unpack("<f", b)[0]

    def visit_double(self, dt: DoubleType) -> Codec:
        return lambda b: struct.unpack("<d", b)[0] if len(b) == 8 else struct.unpack("<f", b)[0]

    def visit_varchar(self, dt: CharType | VarCharType) -> Codec:
        return lambda b: b.decode("utf-8")

    visit_char = visit_varchar

    def visit_varbinary(self, dt: BinaryType | VarBinaryType) -> Codec:
        return bytes

    visit_binary = visit_varbinary

    def visit_decimal(self, dt: DecimalType) -> Codec:
        return _decimal_from_bound(dt.scale)

    def visit_timestamp(self, dt: TimestampType | LocalZonedTimestampType) -> Codec:
        return lambda b: struct.unpack("<q", b)[0]

    visit_local_zoned_timestamp = visit_timestamp

    def visit_time(self, dt: TimeType) -> Codec:
        return lambda b: struct.unpack("<q", b)[0] // 1000


_TO_BOUND = _ToBound()
_HAS_BOUNDS = _HasBounds()
_FROM_BOUND = _FromBound()
