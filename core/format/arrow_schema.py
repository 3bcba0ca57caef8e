"""Paimon types as Arrow types, and the column layout of primary-key data files.

Data files are written and read through pyarrow, so every Paimon type needs one Arrow type
that pyarrow turns into the same Parquet/ORC physical and logical type Java Paimon writes
(``ParquetSchemaConverter``): TIMESTAMP(p<=3) millis, p<=6 micros, p>6 nanos (INT96 in
Parquet); TIMESTAMP_LTZ the same with tz UTC (isAdjustedToUTC); TIME millis.
Field ids travel as ``PARQUET:field_id`` metadata; nested ids follow Java's SpecialFields.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn

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


class _ArrowType(DataTypeVisitor["pa.DataType"]):
    """``field_id``: the Paimon field id whose nested ids to stamp (None: no ids); ``depth``: the
    nesting level below that field (Java's SpecialFields ids count it)."""

    def __init__(self, field_id: int | None, depth: int) -> None:
        self.field_id = field_id
        self.depth = depth

    def unsupported(self, dt: DataType) -> NoReturn:
        raise NotYetSupported(f"data files: type {dt} has no Arrow mapping yet")

    def visit_boolean(self, dt: BooleanType) -> pa.DataType:
        import pyarrow as pa

        return pa.bool_()

    def visit_tinyint(self, dt: TinyIntType) -> pa.DataType:
        import pyarrow as pa

        return pa.int8()

    def visit_smallint(self, dt: SmallIntType) -> pa.DataType:
        import pyarrow as pa

        return pa.int16()

    def visit_int(self, dt: IntType) -> pa.DataType:
        import pyarrow as pa

        return pa.int32()

    def visit_bigint(self, dt: BigIntType) -> pa.DataType:
        import pyarrow as pa

        return pa.int64()

    def visit_float(self, dt: FloatType) -> pa.DataType:
        import pyarrow as pa

        return pa.float32()

    def visit_double(self, dt: DoubleType) -> pa.DataType:
        import pyarrow as pa

        return pa.float64()

    def visit_decimal(self, dt: DecimalType) -> pa.DataType:
        import pyarrow as pa

        return pa.decimal128(dt.precision, dt.scale)

    def visit_varchar(self, dt: VarCharType | CharType) -> pa.DataType:
        import pyarrow as pa

        return pa.string()

    visit_char = visit_varchar

    def visit_varbinary(self, dt: VarBinaryType | BinaryType | BlobType) -> pa.DataType:
        import pyarrow as pa

        return pa.binary()

    visit_binary = visit_blob = visit_varbinary

    def visit_date(self, dt: DateType) -> pa.DataType:
        import pyarrow as pa

        return pa.date32()

    def visit_time(self, dt: TimeType) -> pa.DataType:
        import pyarrow as pa

        return pa.time32("ms")

    def visit_timestamp(self, dt: TimestampType) -> pa.DataType:
        import pyarrow as pa

        return pa.timestamp(_ts_unit(dt.precision))

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> pa.DataType:
        import pyarrow as pa

        return pa.timestamp(_ts_unit(dt.precision), tz="UTC")

    def _child_meta(self, nested_id: Callable[[int, int], int]) -> dict[bytes, bytes] | None:
        return None if self.field_id is None else _meta(nested_id(self.field_id, self.depth + 1))

    def visit_array(self, dt: ArrayType) -> pa.DataType:
        import pyarrow as pa

        child = _ArrowType(self.field_id, self.depth + 1)
        elem = pa.field("element", child.visit(dt.element), nullable=dt.element.nullable,
                        metadata=self._child_meta(array_element_field_id))
        return pa.list_(elem)

    def visit_map(self, dt: MapType) -> pa.DataType:
        return self._map(dt.key, dt.value)

    def visit_multiset(self, dt: MultisetType) -> pa.DataType:
        return self._map(dt.element, IntType(nullable=False))

    def _map(self, key_t: DataType, val_t: DataType) -> pa.DataType:
        import pyarrow as pa

        child = _ArrowType(self.field_id, self.depth + 1)
        key = pa.field("key", child.visit(key_t), nullable=False, metadata=self._child_meta(map_key_field_id))
        value = pa.field("value", child.visit(val_t), nullable=val_t.nullable,
                         metadata=self._child_meta(map_value_field_id))
        return pa.map_(key, value)

    def visit_row(self, dt: RowType) -> pa.DataType:
        import pyarrow as pa

        return pa.struct([_field(f, with_ids=self.field_id is not None) for f in dt.fields])


_NO_IDS = _ArrowType(None, 0)


def arrow_type(dt: DataType) -> pa.DataType:
    """The Arrow type pyarrow writes as Java Paimon's Parquet/ORC type for ``dt`` (no field ids)."""
    return _NO_IDS.visit(dt)


def _field(f: DataField, with_ids: bool) -> pa.Field:
    import pyarrow as pa

    t = (_ArrowType(f.id, 0) if with_ids else _NO_IDS).visit(f.type)
    return pa.field(f.name, t, nullable=f.type.nullable, metadata=_meta(f.id) if with_ids else None)


def arrow_field(f: DataField) -> pa.Field:
    """Arrow field with nullability from the type and the Paimon field id as ``PARQUET:field_id``."""
    return _field(f, with_ids=True)


def arrow_schema(fields: list[DataField]) -> pa.Schema:
    """The Arrow schema of ``fields`` (:func:`arrow_field` each). Schemas are immutable and
    a read converts the same few field lists once per data file (twice: as read, then
    evolved), ~1 ms of GIL-held Python a file on a wide table: built once per distinct list."""
    return _arrow_schema(tuple(fields))


@functools.lru_cache(maxsize=256)
def _arrow_schema(fields: tuple[DataField, ...]) -> pa.Schema:
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
