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
from typing import Any

from ..data.binary_row import Timestamp
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


def _type_object(dt: DataType, field_id: int, depth: int) -> Any:
    if isinstance(dt, BooleanType):
        return "boolean"
    if isinstance(dt, (TinyIntType, SmallIntType, IntType)):
        return "int"
    if isinstance(dt, BigIntType):
        return "long"
    if isinstance(dt, FloatType):
        return "float"
    if isinstance(dt, DoubleType):
        return "double"
    if isinstance(dt, DateType):
        return "date"
    if isinstance(dt, TimeType):
        return "time"
    if isinstance(dt, (CharType, VarCharType)):
        return "string"
    if isinstance(dt, (BinaryType, VarBinaryType)):
        return "binary"
    if isinstance(dt, DecimalType):
        return f"decimal({dt.precision}, {dt.scale})"
    if isinstance(dt, TimestampType):
        return "timestamp"
    if isinstance(dt, LocalZonedTimestampType):
        return "timestamptz"
    if isinstance(dt, ArrayType):
        return {"type": "list", "element-id": array_element_field_id(field_id, depth + 1),
                "element-required": not dt.element.nullable, "element": _type_object(dt.element, field_id, depth + 1)}
    if isinstance(dt, MapType):
        return {"type": "map", "key-id": map_key_field_id(field_id, depth + 1),
                "key": _type_object(dt.key, field_id, depth + 1),
                "value-id": map_value_field_id(field_id, depth + 1), "value-required": not dt.value.nullable,
                "value": _type_object(dt.value, field_id, depth + 1)}
    if isinstance(dt, MultisetType):
        return {"type": "map", "key-id": map_key_field_id(field_id, depth + 1),
                "key": _type_object(dt.element, field_id, depth + 1),
                "value-id": map_value_field_id(field_id, depth + 1), "value-required": True, "value": "int"}
    if isinstance(dt, RowType):
        return {"type": "struct", "fields": [iceberg_field(f) for f in dt.fields]}
    raise NotYetSupported(f"Iceberg metadata: column type {dt.as_sql()} has no Iceberg type")


def iceberg_field(f: DataField) -> dict[str, Any]:
    """One schema field as Java's ``IcebergDataField`` serializes it (``doc`` only when set)."""
    bad = unmappable_type(f.type)
    if bad is not None:
        raise NotYetSupported(f"Iceberg metadata: column {f.name!r} of type {bad} cannot be published")
    out: dict[str, Any] = {"id": f.id, "name": f.name, "required": not f.type.nullable,
                           "type": _type_object(f.type, f.id, 0)}
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

    def nested(dt: DataType, field_id: int, depth: int) -> list[dict[str, Any]] | None:
        if isinstance(dt, RowType):
            return [mapped(f) for f in dt.fields]
        if isinstance(dt, ArrayType):
            return [_entry(array_element_field_id(field_id, depth + 1), ["element"],
                           nested(dt.element, field_id, depth + 1))]
        if isinstance(dt, (MapType, MultisetType)):
            key_t = dt.key if isinstance(dt, MapType) else dt.element
            value_t = dt.value if isinstance(dt, MapType) else IntType()
            return [_entry(map_key_field_id(field_id, depth + 1), ["key"], nested(key_t, field_id, depth + 1)),
                    _entry(map_value_field_id(field_id, depth + 1), ["value"], nested(value_t, field_id, depth + 1))]
        return None

    def mapped(f: DataField) -> dict[str, Any]:
        return _entry(f.id, names.get(f.id, [f.name]), nested(f.type, f.id, 0))

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
    if isinstance(dt, DateType):
        return (v - _EPOCH_DATE).days if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime) else int(v)
    if isinstance(dt, TimeType):
        if isinstance(v, _dt.time):
            return ((v.hour * 60 + v.minute) * 60 + v.second) * 1000 + v.microsecond // 1000
        return int(v)
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)):
        if isinstance(v, Timestamp):
            return v.to_epoch_micros()
        if isinstance(v, _dt.datetime):
            aware = v if v.tzinfo is not None else v.replace(tzinfo=_dt.timezone.utc)
            delta = aware - _UTC_EPOCH
            return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds
        return int(v) if dt.precision > 3 else int(v) * 1000  # a raw Avro long: millis up to precision 3
    if isinstance(dt, DecimalType):
        return v if isinstance(v, decimal.Decimal) else decimal.Decimal(v)
    return v


def avro_value(dt: DataType, v: Any) -> Any:
    """The canonical value as Paimon's Avro writer stores it (millis for precision <= 3)."""
    if v is None:
        return None
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)) and dt.precision <= 3:
        return v // 1000
    return v


def avro_type(dt: DataType) -> Any:
    """Paimon's ``AvroSchemaConverter`` for an atomic type (partition fields), nullability aside."""
    if isinstance(dt, BooleanType):
        return "boolean"
    if isinstance(dt, (TinyIntType, SmallIntType, IntType)):
        return "int"
    if isinstance(dt, BigIntType):
        return "long"
    if isinstance(dt, FloatType):
        return "float"
    if isinstance(dt, DoubleType):
        return "double"
    if isinstance(dt, (CharType, VarCharType)):
        return "string"
    if isinstance(dt, (BinaryType, VarBinaryType)):
        return "bytes"
    if isinstance(dt, DateType):
        return {"type": "int", "logicalType": "date"}
    if isinstance(dt, TimeType):
        return {"type": "int", "logicalType": "time-millis"}
    if isinstance(dt, DecimalType):
        return {"type": "bytes", "logicalType": "decimal", "precision": dt.precision, "scale": dt.scale}
    if isinstance(dt, TimestampType):
        return {"type": "long", "logicalType": "timestamp-millis" if dt.precision <= 3 else "timestamp-micros"}
    if isinstance(dt, LocalZonedTimestampType):
        return {"type": "long",
                "logicalType": "local-timestamp-millis" if dt.precision <= 3 else "local-timestamp-micros"}
    raise NotYetSupported(f"Iceberg metadata: partition type {dt.as_sql()} is not supported")


def _unscaled(v: decimal.Decimal, scale: int) -> int:
    return int(v.scaleb(scale).to_integral_value())


def to_bound(dt: DataType, v: Any) -> bytes:
    """Iceberg's single-value serialization of a canonical value (Java ``IcebergConversions.toByteBuffer``)."""
    if isinstance(dt, BooleanType):
        return b"\x01" if v else b"\x00"
    if isinstance(dt, (TinyIntType, SmallIntType, IntType, DateType)):
        return struct.pack("<i", int(v))
    if isinstance(dt, BigIntType):
        return struct.pack("<q", int(v))
    if isinstance(dt, FloatType):
        return struct.pack("<f", float(v))
    if isinstance(dt, DoubleType):
        return struct.pack("<d", float(v))
    if isinstance(dt, (CharType, VarCharType)):
        return str(v).encode("utf-8")
    if isinstance(dt, (BinaryType, VarBinaryType)):
        return bytes(v)
    if isinstance(dt, DecimalType):
        n = _unscaled(v, dt.scale)
        return n.to_bytes(((n if n >= 0 else ~n).bit_length() // 8) + 1, "big", signed=True)  # BigInteger.toByteArray
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)):
        return struct.pack("<q", int(v))
    if isinstance(dt, TimeType):
        return struct.pack("<q", int(v) * 1000)
    raise NotYetSupported(f"Iceberg metadata: no bound for type {dt.as_sql()}")


def has_bounds(dt: DataType) -> bool:
    return isinstance(dt, (BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType,
                           CharType, VarCharType, BinaryType, VarBinaryType, DecimalType, DateType, TimeType,
                           TimestampType, LocalZonedTimestampType))



def from_bound(dt: DataType, b: bytes) -> Any:
    """Iceberg's single-value bytes back to the canonical value (see ``types.canonical``)."""
    if isinstance(dt, BooleanType):
        return b[0] != 0
    if isinstance(dt, (TinyIntType, SmallIntType, IntType, DateType)):
        return struct.unpack("<i", b[:4])[0]
    if isinstance(dt, BigIntType):
        return struct.unpack("<q", b)[0] if len(b) == 8 else struct.unpack("<i", b)[0]
    if isinstance(dt, FloatType):
        return struct.unpack("<f", b)[0]
    if isinstance(dt, DoubleType):
        return struct.unpack("<d", b)[0] if len(b) == 8 else struct.unpack("<f", b)[0]
    if isinstance(dt, (CharType, VarCharType)):
        return b.decode("utf-8")
    if isinstance(dt, (BinaryType, VarBinaryType)):
        return bytes(b)
    if isinstance(dt, DecimalType):
        return decimal.Decimal(int.from_bytes(b, "big", signed=True)).scaleb(-dt.scale)
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)):
        return struct.unpack("<q", b)[0]
    if isinstance(dt, TimeType):
        return struct.unpack("<q", b)[0] // 1000
    raise ValueError(f"no bound decoding for {dt}")

