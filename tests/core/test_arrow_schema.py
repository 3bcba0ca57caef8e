"""Arrow mapping of Paimon types and the column layout of primary-key data files."""

from __future__ import annotations

import pyarrow as pa
import pytest

from paimon_cli.core.data.types import (
    ArrayType,
    DataField,
    IntType,
    MapType,
    MultisetType,
    RowType,
    VariantType,
    parse_data_type,
)
from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.format.arrow_schema import (
    FIELD_ID_KEY,
    KEY_PREFIX,
    SEQUENCE_NUMBER,
    VALUE_KIND,
    array_element_field_id,
    arrow_field,
    arrow_schema,
    arrow_type,
    field_id_of,
    key_value_file_fields,
    map_key_field_id,
    map_value_field_id,
)
from paimon_cli.core.schema.table_schema import TableSchema


@pytest.mark.parametrize(
    "sql, expected",
    [
        ("BOOLEAN", pa.bool_()),
        ("TINYINT", pa.int8()),
        ("SMALLINT", pa.int16()),
        ("INT", pa.int32()),
        ("BIGINT", pa.int64()),
        ("FLOAT", pa.float32()),
        ("DOUBLE", pa.float64()),
        ("DECIMAL(5, 2)", pa.decimal128(5, 2)),
        ("DECIMAL(38, 10)", pa.decimal128(38, 10)),
        ("CHAR(3)", pa.string()),
        ("STRING", pa.string()),
        ("BINARY(4)", pa.binary()),
        ("BYTES", pa.binary()),
        ("DATE", pa.date32()),
        ("TIME", pa.time32("ms")),
        ("TIMESTAMP(0)", pa.timestamp("ms")),
        ("TIMESTAMP(3)", pa.timestamp("ms")),
        ("TIMESTAMP(4)", pa.timestamp("us")),
        ("TIMESTAMP(6)", pa.timestamp("us")),
        ("TIMESTAMP(7)", pa.timestamp("ns")),
        ("TIMESTAMP(9)", pa.timestamp("ns")),
        ("TIMESTAMP(3) WITH LOCAL TIME ZONE", pa.timestamp("ms", tz="UTC")),
        ("TIMESTAMP(6) WITH LOCAL TIME ZONE", pa.timestamp("us", tz="UTC")),
        ("ARRAY<INT>", pa.list_(pa.field("element", pa.int32()))),
        ("MAP<STRING, BIGINT>", pa.map_(pa.string(), pa.int64())),
        ("ROW<a INT NOT NULL, b STRING>", pa.struct([pa.field("a", pa.int32(), nullable=False), ("b", pa.string())])),
    ],
)
def test_arrow_type(sql: str, expected: pa.DataType) -> None:
    assert arrow_type(parse_data_type(sql)) == expected


def test_multiset_is_a_map_to_not_null_int() -> None:
    t = arrow_type(MultisetType(element=parse_data_type("STRING")))
    assert pa.types.is_map(t) and t.item_type == pa.int32() and not t.item_field.nullable


def test_variant_not_supported_yet() -> None:
    with pytest.raises(NotYetSupported):
        arrow_type(VariantType())


def test_field_nullability_and_ids() -> None:
    f = arrow_field(DataField(7, "x", IntType(nullable=False)))
    assert not f.nullable
    assert f.metadata[FIELD_ID_KEY] == b"7"
    assert field_id_of(f) == 7
    assert field_id_of(pa.field("y", pa.int32())) is None


def test_nested_ids_follow_java_special_fields() -> None:
    fields = [
        DataField(3, "tags", ArrayType(element=parse_data_type("STRING NOT NULL"))),
        DataField(4, "m", MapType(key=parse_data_type("STRING"), value=IntType())),
        DataField(5, "r", RowType((DataField(6, "a", IntType()),))),
    ]
    s = arrow_schema(fields)
    assert [field_id_of(f) for f in s] == [3, 4, 5]
    elem = s.field("tags").type.value_field
    assert not elem.nullable and field_id_of(elem) == array_element_field_id(3, 1)
    assert field_id_of(s.field("m").type.key_field) == map_key_field_id(4, 1)
    assert field_id_of(s.field("m").type.item_field) == map_value_field_id(4, 1)
    # MAP keys are NOT NULL in files even if the type says nullable (Parquet has no nullable keys)
    assert not s.field("m").type.key_field.nullable
    assert field_id_of(s.field("r").type.field("a")) == 6
    # Java's constants: Integer.MAX_VALUE / 4 + id * 1024 + depth, and minus for map keys
    assert array_element_field_id(3, 1) == 536870911 + 3 * 1024 + 1
    assert map_key_field_id(4, 1) == 536870911 - 4 * 1024 - 1


def _schema(options: dict[str, str] | None = None) -> TableSchema:
    fields = [
        DataField(0, "dt", parse_data_type("STRING NOT NULL")),
        DataField(1, "id", parse_data_type("BIGINT NOT NULL")),
        DataField(2, "v", parse_data_type("STRING")),
    ]
    return TableSchema(
        version=3, id=0, fields=fields, highest_field_id=2, partition_keys=["dt"],
        primary_keys=["dt", "id"], options=options or {"bucket": "2"}, comment=None, time_millis=0,
    )


def test_key_value_file_fields_java_order() -> None:
    got = key_value_file_fields(_schema())
    # trimmed PK (partition key dt removed), then _SEQUENCE_NUMBER, _VALUE_KIND, then values
    assert [f.name for f in got] == [KEY_PREFIX + "id", SEQUENCE_NUMBER, VALUE_KIND, "dt", "id", "v"]
    assert [f.id for f in got] == [1073741823 + 1, 2147483646, 2147483645, 0, 1, 2]
    assert all(not f.type.nullable for f in got[:3])
    assert got[1].type.as_sql() == "BIGINT NOT NULL" and got[2].type.as_sql() == "TINYINT NOT NULL"


def test_thin_mode_drops_key_copies() -> None:
    got = key_value_file_fields(_schema({"bucket": "2", "data-file.thin-mode": "true"}))
    assert [f.name for f in got] == [SEQUENCE_NUMBER, VALUE_KIND, "dt", "id", "v"]
