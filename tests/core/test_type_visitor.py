"""The one dispatch over Paimon types: every type class reaches its own method, nothing falls through."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any, NoReturn

import pytest

from paimon_cli.core.catalog.hms_table import hive_type_name
from paimon_cli.core.data import types as paimon_types
from paimon_cli.core.data.type_visitor import VISIT_METHODS, DataTypeVisitor
from paimon_cli.core.data.types import (
    ArrayType,
    DataField,
    DataType,
    DecimalType,
    IntType,
    MapType,
    MultisetType,
    RowType,
    VarCharType,
    parse_data_type,
)
from paimon_cli.core.errors import InvalidInput, NotYetSupported
from paimon_cli.core.format.arrow_schema import arrow_field, arrow_type
from paimon_cli.core.format.avro_format import avro_schema
from paimon_cli.core.iceberg.types import avro_type as iceberg_avro_type
from paimon_cli.core.iceberg.types import canonical, from_bound, has_bounds, iceberg_field, name_mapping, to_bound
from paimon_cli.core.schema.table_schema import TableSchema

NESTED = {ArrayType, MultisetType, MapType, RowType}


def _concrete_type_classes() -> list[type[DataType]]:
    """Every DataType subclass ``data.types`` defines, whatever it is built with."""
    return [c for _, c in inspect.getmembers(paimon_types, inspect.isclass)
            if issubclass(c, DataType) and c is not DataType and c.__module__ == paimon_types.__name__]


# a visitor answering the name of the method each type reached
_Names = type("_Names", (DataTypeVisitor,), {name: (lambda n: lambda self, dt: n)(name) for name in VISIT_METHODS.values()})


def test_every_type_class_has_its_own_method() -> None:
    classes = _concrete_type_classes()
    assert len(classes) >= 22
    assert set(classes) == set(VISIT_METHODS)
    assert len(set(VISIT_METHODS.values())) == len(VISIT_METHODS)  # no two classes share a method
    for c in classes:
        assert hasattr(DataTypeVisitor, VISIT_METHODS[c]), c
        assert _Names().visit(c()) == VISIT_METHODS[c]


def test_methods_defined_in_a_subclass_are_dispatched() -> None:
    class Sql(DataTypeVisitor[str]):
        def visit_atomic(self, dt: DataType) -> str:
            return "atomic " + dt.as_sql()

        def visit_decimal(self, dt: DecimalType) -> str:
            return f"dec {dt.precision}/{dt.scale}"

        def visit_array(self, dt: ArrayType) -> str:
            return f"[{self.visit(dt.element)}]"

    v = Sql()
    assert v.visit(parse_data_type("ARRAY<DECIMAL(12, 3)>")) == "[dec 12/3]"
    assert v.visit(parse_data_type("ARRAY<INT NOT NULL>")) == "[atomic INT NOT NULL]"
    assert v.visit(parse_data_type("VARIANT")) == "atomic VARIANT"
    # nested types are never "atomic": a visitor that does not map them refuses them
    for text in ("MAP<INT, INT>", "MULTISET<INT>", "ROW<a INT>", "ARRAY<MAP<INT, INT>>"):
        with pytest.raises(NotYetSupported, match=r"^Sql: data type .* is not supported$"):
            v.visit(parse_data_type(text))


def test_a_visitor_mapping_nothing_refuses_every_type() -> None:
    class Nothing(DataTypeVisitor[Any]):
        pass

    for c in _concrete_type_classes():
        with pytest.raises(NotYetSupported, match="Nothing: data type"):
            Nothing().visit(c())


def test_unsupported_raises_the_conversions_own_error() -> None:
    class Mine(DataTypeVisitor[int]):
        def visit_int(self, dt: IntType) -> int:
            return 4

        def unsupported(self, dt: DataType) -> NoReturn:
            raise InvalidInput(f"mine cannot map {dt}")

    assert Mine().visit(IntType()) == 4
    with pytest.raises(InvalidInput, match=r"^mine cannot map STRING NOT NULL$"):
        Mine().visit(VarCharType(nullable=False))


def test_a_type_class_the_table_does_not_know_fails_loudly() -> None:
    """A type added to data.types but not to the dispatch table, or a subclass of a known one,
    reaches ``unsupported``: never a neighbour's method, never a silent answer."""

    @dataclass(frozen=True)
    class GeometryType(DataType):
        root = "GEOMETRY"

    @dataclass(frozen=True)
    class MyInt(IntType):
        pass

    class Everything(DataTypeVisitor[str]):
        def visit_atomic(self, dt: DataType) -> str:
            return "atomic"

    assert Everything().visit(IntType()) == "atomic"
    for t in (GeometryType(), MyInt()):
        with pytest.raises(NotYetSupported, match=r"^Everything: data type .* is not supported$"):
            Everything().visit(t)
        with pytest.raises(NotYetSupported):
            _Names().visit(t)


@dataclass(frozen=True)
class _GeometryType(DataType):
    """A type newer Paimon has and this table does not know."""

    root = "GEOMETRY"


def _name_mapping(t: DataType) -> Any:
    fields = [DataField(0, "id", IntType(nullable=False)), DataField(1, "g", t)]
    return name_mapping([TableSchema(version=3, id=0, fields=fields, highest_field_id=1, partition_keys=[],
                                     primary_keys=[], options={}, comment=None, time_millis=0)])


# conversions of whole column types: an unknown type is refused however deep it nests
_CONVERTERS: dict[str, tuple[Callable[[DataType], Any], str]] = {
    "arrow": (arrow_type, r"^data files: type .*GEOMETRY.* has no Arrow mapping yet$"),
    "arrow field": (lambda t: arrow_field(DataField(1, "g", t)), r"^data files: type .*GEOMETRY.* has no Arrow mapping yet$"),
    "avro": (lambda t: avro_schema([DataField(1, "g", t)]), r"^avro data files: type .*GEOMETRY.* is not supported$"),
    "hive": (hive_type_name, r"^type .*GEOMETRY.* has no Hive column type$"),
    "hive3": (lambda t: hive_type_name(t, hive3=True), r"^type .*GEOMETRY.* has no Hive column type$"),
    "iceberg schema": (lambda t: iceberg_field(DataField(1, "g", t)), r"^Iceberg metadata: column type GEOMETRY has no Iceberg type$"),
    "iceberg name mapping": (_name_mapping, r"^Iceberg metadata: column type GEOMETRY has no Iceberg type$"),
}


@pytest.mark.parametrize("converter", sorted(_CONVERTERS))
@pytest.mark.parametrize("nest", ["{}", "ARRAY<{}>", "MAP<INT, {}>", "MAP<{}, INT>", "MULTISET<{}>", "ROW<a INT, b {}>"])
def test_every_conversion_refuses_an_unknown_type_with_its_own_message(converter: str, nest: str) -> None:
    """However deep it nests, a type a conversion does not know is refused by name, never mapped."""
    convert, message = _CONVERTERS[converter]
    with pytest.raises(NotYetSupported, match=message):
        convert(_nest(nest))


# conversions of atomic values (partition values and column bounds)
_VALUE_CONVERTERS: dict[str, tuple[Callable[[DataType], Any], type[Exception], str]] = {
    "iceberg partition avro type": (iceberg_avro_type, NotYetSupported,
                                    r"^Iceberg metadata: partition type GEOMETRY is not supported$"),
    "iceberg canonical value": (lambda t: canonical(t, 1), NotYetSupported,
                                r"^Iceberg metadata: column type GEOMETRY has no Iceberg type$"),
    "iceberg has bounds": (has_bounds, NotYetSupported, r"^Iceberg metadata: column type GEOMETRY has no Iceberg type$"),
    "iceberg to bound": (lambda t: to_bound(t, 1), NotYetSupported, r"^Iceberg metadata: no bound for type GEOMETRY$"),
    "iceberg from bound": (lambda t: from_bound(t, b"\x01"), ValueError, r"^no bound decoding for GEOMETRY$"),
}


@pytest.mark.parametrize("converter", sorted(_VALUE_CONVERTERS))
def test_every_value_conversion_refuses_an_unknown_type(converter: str) -> None:
    """Before the visitor, canonical values and has_bounds answered for a type they did not
    know (the value unchanged, no bounds); now they refuse it like the schema does."""
    convert, error, message = _VALUE_CONVERTERS[converter]
    with pytest.raises(error, match=message):
        convert(_GeometryType())


def _nest(nest: str) -> DataType:
    """``nest`` with the unknown type in place of ``{}`` (the parser cannot name it)."""
    if nest == "{}":
        return _GeometryType()
    outer = parse_data_type(nest.format("BOOLEAN"))
    g = _GeometryType()
    if isinstance(outer, (ArrayType, MultisetType)):
        return type(outer)(element=g)
    if isinstance(outer, MapType):
        return MapType(key=g, value=outer.value) if nest.startswith("MAP<{}") else MapType(key=outer.key, value=g)
    assert isinstance(outer, RowType)
    return RowType(fields=(outer.fields[0], replace(outer.fields[1], type=g)))


def _chain_holds_blob(dt: object) -> bool:
    """The isinstance chain ``holds_blob`` was before it dispatched on the type visitor, kept
    here as the reference the visitor must match for every type class."""
    from paimon_cli.core.data import types as ty

    if isinstance(dt, ty.BlobType):
        return True
    if isinstance(dt, (ty.ArrayType, ty.MultisetType)):
        return _chain_holds_blob(dt.element)
    if isinstance(dt, ty.MapType):
        return _chain_holds_blob(dt.key) or _chain_holds_blob(dt.value)
    if isinstance(dt, ty.RowType):
        return any(_chain_holds_blob(f.type) for f in dt.fields)
    return False


def test_holds_blob_of_every_type_class_is_the_former_isinstance_chain() -> None:
    from paimon_cli.core.data.type_visitor import holds_blob
    from tests.type_instances import EVERY_TYPE, covers_every_type_class, every_type

    assert covers_every_type_class(EVERY_TYPE)
    got = {t.as_sql(): holds_blob(t) for t in every_type()}
    assert got == {t.as_sql(): _chain_holds_blob(t) for t in every_type()}
    assert sum(got.values()) == 9  # BLOB (twice) and the seven nested types holding one
