"""One dispatch over Paimon's data types (Java's ``DataTypeVisitor``, pyiceberg's ``SchemaVisitor``).

A conversion over types subclasses :class:`DataTypeVisitor` and implements a ``visit_*`` method
per type it maps. ``visit`` finds that method in one table keyed by the concrete type class,
built once per visitor class, so no conversion walks an isinstance chain. A nested type is
handed over whole: its method visits the children it needs, with whatever context (field ids,
names, depth) the conversion carries.

Nothing falls through: a type whose method a visitor does not implement, and a class the
table does not know (a type added to ``data.types`` but not here), reach ``unsupported``,
which must raise (it is typed ``NoReturn``). Atomic types first reach ``visit_atomic``, so a
conversion that treats them all alike overrides that one method.

Queries over types live here too, as visitors: ``holds_blob``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, NoReturn, TypeVar

from ..errors import NotYetSupported
from .types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BlobType,
    BooleanType,
    CharType,
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
    VariantType,
)

T = TypeVar("T")

# every concrete type class and the method that visits it
VISIT_METHODS: dict[type[DataType], str] = {
    BooleanType: "visit_boolean",
    TinyIntType: "visit_tinyint",
    SmallIntType: "visit_smallint",
    IntType: "visit_int",
    BigIntType: "visit_bigint",
    FloatType: "visit_float",
    DoubleType: "visit_double",
    DecimalType: "visit_decimal",
    CharType: "visit_char",
    VarCharType: "visit_varchar",
    BinaryType: "visit_binary",
    VarBinaryType: "visit_varbinary",
    DateType: "visit_date",
    TimeType: "visit_time",
    TimestampType: "visit_timestamp",
    LocalZonedTimestampType: "visit_local_zoned_timestamp",
    VariantType: "visit_variant",
    BlobType: "visit_blob",
    ArrayType: "visit_array",
    MultisetType: "visit_multiset",
    MapType: "visit_map",
    RowType: "visit_row",
}


class DataTypeVisitor(Generic[T]):
    """Maps a Paimon type to a ``T``; subclasses implement the ``visit_*`` methods they map."""

    # concrete type class -> the (possibly overridden) visit function of this visitor class
    _dispatch: ClassVar[dict[type, Callable[[Any, Any], Any]]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = _dispatch_table(cls)

    def visit(self, dt: DataType) -> T:
        method = self._dispatch.get(type(dt))
        if method is None:
            self.unsupported(dt)
        return method(self, dt)

    def unsupported(self, dt: DataType) -> NoReturn:
        """A type this visitor does not map; conversions raise their own error here."""
        raise NotYetSupported(f"{type(self).__name__}: data type {dt.as_sql()} is not supported")

    def visit_atomic(self, dt: DataType) -> T:
        """Where every atomic type's method goes unless overridden."""
        self.unsupported(dt)

    def visit_boolean(self, dt: BooleanType) -> T:
        return self.visit_atomic(dt)

    def visit_tinyint(self, dt: TinyIntType) -> T:
        return self.visit_atomic(dt)

    def visit_smallint(self, dt: SmallIntType) -> T:
        return self.visit_atomic(dt)

    def visit_int(self, dt: IntType) -> T:
        return self.visit_atomic(dt)

    def visit_bigint(self, dt: BigIntType) -> T:
        return self.visit_atomic(dt)

    def visit_float(self, dt: FloatType) -> T:
        return self.visit_atomic(dt)

    def visit_double(self, dt: DoubleType) -> T:
        return self.visit_atomic(dt)

    def visit_decimal(self, dt: DecimalType) -> T:
        return self.visit_atomic(dt)

    def visit_char(self, dt: CharType) -> T:
        return self.visit_atomic(dt)

    def visit_varchar(self, dt: VarCharType) -> T:
        return self.visit_atomic(dt)

    def visit_binary(self, dt: BinaryType) -> T:
        return self.visit_atomic(dt)

    def visit_varbinary(self, dt: VarBinaryType) -> T:
        return self.visit_atomic(dt)

    def visit_date(self, dt: DateType) -> T:
        return self.visit_atomic(dt)

    def visit_time(self, dt: TimeType) -> T:
        return self.visit_atomic(dt)

    def visit_timestamp(self, dt: TimestampType) -> T:
        return self.visit_atomic(dt)

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> T:
        return self.visit_atomic(dt)

    def visit_variant(self, dt: VariantType) -> T:
        return self.visit_atomic(dt)

    def visit_blob(self, dt: BlobType) -> T:
        return self.visit_atomic(dt)

    def visit_array(self, dt: ArrayType) -> T:
        self.unsupported(dt)

    def visit_multiset(self, dt: MultisetType) -> T:
        self.unsupported(dt)

    def visit_map(self, dt: MapType) -> T:
        self.unsupported(dt)

    def visit_row(self, dt: RowType) -> T:
        self.unsupported(dt)


def _dispatch_table(cls: type) -> dict[type, Callable[[Any, Any], Any]]:
    return {type_class: getattr(cls, name) for type_class, name in VISIT_METHODS.items()}


DataTypeVisitor._dispatch = _dispatch_table(DataTypeVisitor)


class _BlobFinder(DataTypeVisitor[bool]):
    """Whether a type is a BLOB or nests one (ARRAY / MULTISET / MAP / ROW)."""

    def visit_atomic(self, dt: DataType) -> bool:
        return False

    def visit_blob(self, dt: BlobType) -> bool:
        return True

    def visit_array(self, dt: ArrayType) -> bool:
        return self.visit(dt.element)

    def visit_multiset(self, dt: MultisetType) -> bool:
        return self.visit(dt.element)

    def visit_map(self, dt: MapType) -> bool:
        return self.visit(dt.key) or self.visit(dt.value)

    def visit_row(self, dt: RowType) -> bool:
        return any(self.visit(f.type) for f in dt.fields)


_BLOB_FINDER = _BlobFinder()


def holds_blob(dt: DataType) -> bool:
    """Whether ``dt`` is a BLOB or nests one (ARRAY / MULTISET / MAP / ROW): BLOB values live
    in ``.blob`` files, so every reader and writer must know before it touches a file."""
    return _BLOB_FINDER.visit(dt)
