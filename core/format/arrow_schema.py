"""Paimon types as Arrow types, and the column layout of primary-key data files.

Data files are written and read through pyarrow, so every Paimon type needs one Arrow type
that pyarrow turns into the same Parquet/ORC physical and logical type Java Paimon writes
(``ParquetSchemaConverter``): TIMESTAMP(p<=3) millis, p<=6 micros, p>6 nanos (INT96 in
Parquet); TIMESTAMP_LTZ the same with tz UTC (isAdjustedToUTC); TIME millis.
Field ids travel as ``PARQUET:field_id`` metadata; nested ids follow Java's SpecialFields.
"""

from __future__ import annotations

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
from ..errors import NotYetSupported

if TYPE_CHECKING:
    import pyarrow as pa

    from ..schema.table_schema import TableSchema

KEY_PREFIX = "_KEY_"
SEQUENCE_NUMBER = "_SEQUENCE_NUMBER"
VALUE_KIND = "_VALUE_KIND"
KEY_FIELD_ID_START = 2147483647 // 2  # 1073741823
SEQUENCE_NUMBER_ID = 2147483646
VALUE_KIND_ID = 2147483645
ROW_ID = "_ROW_ID"  # row tracking (1.3+): Java's SpecialFields.ROW_ID
ROW_ID_ID = 2147483647 - 5  # 2147483642
STRUCTURED_TYPE_FIELD_ID_BASE = 2147483647 // 4
STRUCTURED_TYPE_FIELD_DEPTH_LIMIT = 1 << 10
FIELD_ID_KEY = b"PARQUET:field_id"


def array_element_field_id(field_id: int, depth: int) -> int:
    """Java ``SpecialFields.getArrayElementFieldId``: the id Java gives a list element."""
    return STRUCTURED_TYPE_FIELD_ID_BASE + field_id * STRUCTURED_TYPE_FIELD_DEPTH_LIMIT + depth


def map_key_field_id(field_id: int, depth: int) -> int:
    return STRUCTURED_TYPE_FIELD_ID_BASE - field_id * STRUCTURED_TYPE_FIELD_DEPTH_LIMIT - depth


def map_value_field_id(field_id: int, depth: int) -> int:
    return STRUCTURED_TYPE_FIELD_ID_BASE + field_id * STRUCTURED_TYPE_FIELD_DEPTH_LIMIT + depth


def _ts_unit(precision: int) -> str:
    return "ms" if precision <= 3 else "us" if precision <= 6 else "ns"


def _meta(field_id: int | None) -> dict[bytes, bytes] | None:
    return None if field_id is None else {FIELD_ID_KEY: str(field_id).encode()}


def _arrow(dt: DataType, field_id: int | None, depth: int) -> pa.DataType:
    import pyarrow as pa

    if isinstance(dt, BooleanType):
        return pa.bool_()
    if isinstance(dt, TinyIntType):
        return pa.int8()
    if isinstance(dt, SmallIntType):
        return pa.int16()
    if isinstance(dt, IntType):
        return pa.int32()
    if isinstance(dt, BigIntType):
        return pa.int64()
    if isinstance(dt, FloatType):
        return pa.float32()
    if isinstance(dt, DoubleType):
        return pa.float64()
    if isinstance(dt, DecimalType):
        return pa.decimal128(dt.precision, dt.scale)
    if isinstance(dt, (CharType, VarCharType)):
        return pa.string()
    if isinstance(dt, (BinaryType, VarBinaryType, BlobType)):
        return pa.binary()
    if isinstance(dt, DateType):
        return pa.date32()
    if isinstance(dt, TimeType):
        return pa.time32("ms")
    if isinstance(dt, TimestampType):
        return pa.timestamp(_ts_unit(dt.precision))
    if isinstance(dt, LocalZonedTimestampType):
        return pa.timestamp(_ts_unit(dt.precision), tz="UTC")
    fid = -1 if field_id is None else field_id
    if isinstance(dt, ArrayType):
        elem = pa.field(
            "element", _arrow(dt.element, field_id, depth + 1), nullable=dt.element.nullable,
            metadata=None if field_id is None else _meta(array_element_field_id(fid, depth + 1)),
        )
        return pa.list_(elem)
    if isinstance(dt, (MapType, MultisetType)):
        key_t = dt.key if isinstance(dt, MapType) else dt.element
        val_t = dt.value if isinstance(dt, MapType) else IntType(nullable=False)
        key = pa.field(
            "key", _arrow(key_t, field_id, depth + 1), nullable=False,
            metadata=None if field_id is None else _meta(map_key_field_id(fid, depth + 1)),
        )
        value = pa.field(
            "value", _arrow(val_t, field_id, depth + 1), nullable=val_t.nullable,
            metadata=None if field_id is None else _meta(map_value_field_id(fid, depth + 1)),
        )
        return pa.map_(key, value)
    if isinstance(dt, RowType):
        return pa.struct([_field(f, with_ids=field_id is not None) for f in dt.fields])
    raise NotYetSupported(f"data files: type {dt} has no Arrow mapping yet")


def arrow_type(dt: DataType) -> pa.DataType:
    """The Arrow type pyarrow writes as Java Paimon's Parquet/ORC type for ``dt`` (no field ids)."""
    return _arrow(dt, None, 0)


def _field(f: DataField, with_ids: bool) -> pa.Field:
    import pyarrow as pa

    t = _arrow(f.type, f.id if with_ids else None, 0)
    return pa.field(f.name, t, nullable=f.type.nullable, metadata=_meta(f.id) if with_ids else None)


def arrow_field(f: DataField) -> pa.Field:
    """Arrow field with nullability from the type and the Paimon field id as ``PARQUET:field_id``."""
    return _field(f, with_ids=True)


def arrow_schema(fields: list[DataField]) -> pa.Schema:
    import pyarrow as pa

    return pa.schema([arrow_field(f) for f in fields])


def field_id_of(field: pa.Field) -> int | None:
    """The ``PARQUET:field_id`` of an Arrow field (as pyarrow reads it back), or None."""
    md: dict[Any, Any] = field.metadata or {}
    v = md.get(FIELD_ID_KEY)
    return None if v is None else int(v)


def key_fields(table_schema: TableSchema) -> list[DataField]:
    """The ``_KEY_<pk>`` columns: trimmed primary keys, NOT NULL, id shifted by 1073741823."""
    out = []
    for name in table_schema.trimmed_primary_keys:
        f = table_schema.field(name)
        out.append(DataField(KEY_FIELD_ID_START + f.id, KEY_PREFIX + f.name, f.type.copy(nullable=False)))
    return out


def system_fields() -> list[DataField]:
    return [
        DataField(SEQUENCE_NUMBER_ID, SEQUENCE_NUMBER, BigIntType(nullable=False)),
        DataField(VALUE_KIND_ID, VALUE_KIND, TinyIntType(nullable=False)),
    ]


def row_tracking_fields() -> list[DataField]:
    """``_ROW_ID`` and ``_SEQUENCE_NUMBER`` as row-tracking files store them (NOT NULL BIGINT,
    after the table columns; SpecialFields.rowTypeWithRowTracking)."""
    return [
        DataField(ROW_ID_ID, ROW_ID, BigIntType(nullable=False)),
        DataField(SEQUENCE_NUMBER_ID, SEQUENCE_NUMBER, BigIntType(nullable=False)),
    ]


def key_value_file_fields(table_schema: TableSchema) -> list[DataField]:
    """Columns of a primary-key data file in Java's order: keys, sequence, value kind, values.

    ``data-file.thin-mode`` (1.0+) drops the ``_KEY_`` copies because the trimmed keys are
    value columns anyway; readers then take the key from the value columns.
    """
    thin = table_schema.core_options.get_bool("data-file.thin-mode", False)
    keys = [] if thin else key_fields(table_schema)
    return keys + system_fields() + list(table_schema.fields)
