"""The type classes behave exactly as the frozen dataclasses they were: equality, hashing, repr,
immutability, construction and pickling (issue 28: generating 24 dataclasses' methods was
~16 ms of every command that parses a schema, so they are written out by hand).

The reference below is the dataclass form of every type class (fields, defaults, validation).
"""

from __future__ import annotations

import copy
import dataclasses
import inspect
import pickle
from dataclasses import dataclass, field
from typing import Any, ClassVar

import pytest

from paimon_cli.core.data import types as T
from paimon_cli.core.errors import InvalidInput

MAX = T.MAX_LENGTH


@dataclass(frozen=True)
class DataType:
    nullable: bool = field(default=True, kw_only=True)


def _simple(name: str) -> type:
    return dataclass(frozen=True)(type(name, (DataType,), {"__qualname__": name, "__module__": __name__}))


def _one(name: str, attr: str, default: Any, check: tuple[int, int] | None = None) -> type:
    def post_init(self: Any) -> None:
        if check is not None and not check[0] <= getattr(self, attr) <= check[1]:
            raise InvalidInput("out of range")

    ns = {"__qualname__": name, "__module__": __name__, "__annotations__": {attr: int}, attr: default,
          "__post_init__": post_init}
    return dataclass(frozen=True)(type(name, (DataType,), ns))


BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType, DateType, VariantType, \
    BlobType = (_simple(n) for n in ("BooleanType", "TinyIntType", "SmallIntType", "IntType", "BigIntType",
                                     "FloatType", "DoubleType", "DateType", "VariantType", "BlobType"))
CharType = _one("CharType", "length", 1, (1, MAX))
VarCharType = _one("VarCharType", "length", MAX, (1, MAX))
BinaryType = _one("BinaryType", "length", 1, (1, MAX))
VarBinaryType = _one("VarBinaryType", "length", MAX, (1, MAX))
TimeType = _one("TimeType", "precision", 0, (0, 9))
TimestampType = _one("TimestampType", "precision", 6, (0, 9))
LocalZonedTimestampType = _one("LocalZonedTimestampType", "precision", 6, (0, 9))


@dataclass(frozen=True)
class DecimalType(DataType):
    precision: int = 10
    scale: int = 0
    MAX_COMPACT_PRECISION: ClassVar[int] = 18

    def __post_init__(self) -> None:
        if not 1 <= self.precision <= 38 or not 0 <= self.scale <= self.precision:
            raise InvalidInput("out of range")


@dataclass(frozen=True)
class ArrayType(DataType):
    element: Any = field(default_factory=lambda: IntType())


@dataclass(frozen=True)
class MultisetType(DataType):
    element: Any = field(default_factory=lambda: IntType())


@dataclass(frozen=True)
class MapType(DataType):
    key: Any = field(default_factory=lambda: VarCharType())
    value: Any = field(default_factory=lambda: VarCharType())


@dataclass(frozen=True)
class RowType(DataType):
    fields: tuple[Any, ...] = ()


REF = {c.__name__: c for c in (
    DataType, BooleanType, TinyIntType, SmallIntType, IntType, BigIntType, FloatType, DoubleType, DecimalType,
    CharType, VarCharType, BinaryType, VarBinaryType, DateType, TimeType, TimestampType, LocalZonedTimestampType,
    VariantType, BlobType, ArrayType, MultisetType, MapType, RowType)}


def test_every_type_class_is_compared() -> None:
    ours = {n for n, c in vars(T).items() if isinstance(c, type) and issubclass(c, T.DataType)}
    assert ours == set(REF)


def _ref_of(value: Any) -> Any:
    """The reference twin of one of our values (types nested in ARRAY/MAP/ROW, fields' types)."""
    if isinstance(value, T.DataType):
        ref = REF[type(value).__name__]
        kwargs = {n: _ref_of(getattr(value, n)) for n in ("nullable", *value.__match_args__)}
        nullable = kwargs.pop("nullable")
        return ref(**kwargs, nullable=nullable)
    if isinstance(value, T.DataField):
        return dataclasses.replace(value, type=_ref_of(value.type))
    if isinstance(value, tuple):
        return tuple(_ref_of(v) for v in value)
    return value


# (class name, positional arguments): every class, default and non-default, nested
ROW = T.RowType((T.DataField(0, "a", T.IntType(nullable=False)), T.DataField(1, "b", T.VarCharType(5), "c")))
CASES: list[tuple[str, tuple[Any, ...]]] = [
    *[(n, ()) for n in REF],
    ("DecimalType", (20, 4)), ("DecimalType", (5,)), ("CharType", (3,)), ("VarCharType", (7,)),
    ("BinaryType", (16,)), ("VarBinaryType", (9,)), ("TimeType", (3,)), ("TimestampType", (9,)),
    ("LocalZonedTimestampType", (0,)), ("ArrayType", (T.BigIntType(nullable=False),)),
    ("MultisetType", (T.ArrayType(T.DateType()),)), ("MapType", (T.IntType(), T.RowType()),),
    ("RowType", (ROW.fields,)), ("ArrayType", (ROW,)),
]


def _pair(name: str, args: tuple[Any, ...], nullable: bool) -> tuple[Any, Any]:
    ours = getattr(T, name)(*args, nullable=nullable)
    return ours, REF[name](*(_ref_of(a) for a in args), nullable=nullable)


@pytest.mark.parametrize("nullable", [True, False])
@pytest.mark.parametrize(("name", "args"), CASES)
def test_repr_hash_fields_and_state_are_the_dataclass_ones(name: str, args: tuple[Any, ...], nullable: bool) -> None:
    ours, ref = _pair(name, args, nullable)
    assert repr(ours).replace("paimon_cli.core.data.types.", "") == repr(ref)
    assert hash(ours) == hash(ref)
    assert list(vars(ours)) == list(vars(ref))  # the instance dict, in the same order
    assert type(ours).__match_args__ == type(ref).__match_args__
    assert ours == getattr(T, name)(*args, nullable=nullable) and hash(ours) == hash(copy.copy(ours))
    assert not (ours != getattr(T, name)(*args, nullable=nullable))
    assert ours.__eq__(object()) is NotImplemented and ref.__eq__(object()) is NotImplemented
    assert ours != _pair(name, args, not nullable)[0]
    assert ours.__reduce_ex__(2)[0] is ref.__reduce_ex__(2)[0]  # copyreg.__newobj__, state = __dict__
    assert list(ours.__reduce_ex__(2)[2]) == list(ref.__reduce_ex__(2)[2])


@pytest.mark.parametrize(("name", "args"), CASES)
def test_pickle_and_copies_round_trip(name: str, args: tuple[Any, ...]) -> None:
    ours = getattr(T, name)(*args, nullable=False)
    for proto in range(pickle.HIGHEST_PROTOCOL + 1):
        back = pickle.loads(pickle.dumps(ours, protocol=proto))
        assert back == ours and type(back) is type(ours) and hash(back) == hash(ours) and repr(back) == repr(ours)
    assert copy.copy(ours) == ours and copy.deepcopy(ours) == ours
    assert {ours: 1}[getattr(T, name)(*args, nullable=False)] == 1


@pytest.mark.parametrize("name", list(REF))
def test_equality_across_classes_is_the_dataclass_one(name: str) -> None:
    """Equal only to the same class with equal fields (IntType() != BigIntType(), != a subclass's)."""
    ours = getattr(T, name)()
    for other in REF:
        expect = REF[name]() == REF[other]()
        assert (ours == getattr(T, other)()) is expect, other
        assert (ours != getattr(T, other)()) is (not expect), other


@pytest.mark.parametrize("name", list(REF))
def test_immutable_like_a_frozen_dataclass(name: str) -> None:
    ours, ref = getattr(T, name)(), REF[name]()
    for attr in ("nullable", *type(ref).__match_args__, "other"):
        for obj in (ours, ref):
            with pytest.raises(dataclasses.FrozenInstanceError) as set_err:
                setattr(obj, attr, 1)
            with pytest.raises(dataclasses.FrozenInstanceError) as del_err:
                delattr(obj, attr)
            assert str(set_err.value) == f"cannot assign to field {attr!r}"
            assert str(del_err.value) == f"cannot delete field {attr!r}"
    assert ours == getattr(T, name)()


@pytest.mark.parametrize("name", list(REF))
def test_constructor_signature_is_the_dataclass_one(name: str) -> None:
    """Same parameters, order, kinds (nullable keyword-only), defaults and class defaults."""
    ours, ref = inspect.signature(getattr(T, name)), inspect.signature(REF[name])
    assert [(p.name, p.kind) for p in ours.parameters.values()] == [(p.name, p.kind) for p in ref.parameters.values()]
    for p in ref.parameters.values():
        if p.default is not inspect.Parameter.empty and not repr(p.default).startswith("<factory>"):
            assert ours.parameters[p.name].default == p.default
            assert getattr(getattr(T, name), p.name) == getattr(REF[name], p.name)  # the class attribute
    if REF[name].__match_args__:
        with pytest.raises(TypeError):
            getattr(T, name)(*([1] * (len(REF[name].__match_args__) + 1)))  # nullable is not positional
    with pytest.raises(TypeError):
        getattr(T, name)(nope=1)
    assert getattr(T, name)().nullable is True


def test_default_elements_are_fresh_and_equal() -> None:
    a, b = T.ArrayType(), T.ArrayType()
    assert a == b and a.element == T.IntType() and a.element is not b.element
    assert T.MapType() == T.MapType(T.VarCharType(), T.VarCharType())
    assert T.MultisetType().element == T.IntType()


@pytest.mark.parametrize(("name", "args"), [
    ("DecimalType", (0,)), ("DecimalType", (39,)), ("DecimalType", (5, 6)), ("DecimalType", (5, -1)),
    ("CharType", (0,)), ("VarCharType", (MAX + 1,)), ("BinaryType", (0,)), ("VarBinaryType", (0,)),
    ("TimeType", (10,)), ("TimestampType", (-1,)), ("LocalZonedTimestampType", (10,)),
])
def test_out_of_range_parameters_are_refused_as_before(name: str, args: tuple[Any, ...]) -> None:
    with pytest.raises(InvalidInput):
        REF[name](*args)
    with pytest.raises(InvalidInput):
        getattr(T, name)(*args)


def test_copy_keeps_the_class_and_fields() -> None:
    for name, args in CASES:
        ours = getattr(T, name)(*args)
        flipped = ours.copy(nullable=False)
        assert type(flipped) is type(ours) and flipped == getattr(T, name)(*args, nullable=False)
        assert ours.copy(nullable=True) == ours
