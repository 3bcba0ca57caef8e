"""Paimon's logical data types: the model, the SQL type strings and the schema-JSON form.

Type strings follow Java's ``DataType.asSQLString`` (``DECIMAL(10, 2)``, ``STRING`` for
VARCHAR of maximal length, ``TIMESTAMP(3) WITH LOCAL TIME ZONE``, `` NOT NULL`` suffix).
The parser also takes the aliases Paimon's own parser takes (INTEGER, DEC, NUMERIC,
TIMESTAMP_LTZ, BYTES, DOUBLE PRECISION, ...).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import FrozenInstanceError, dataclass
from reprlib import recursive_repr
from typing import Any, ClassVar

from ..errors import InvalidInput, NotYetSupported

MAX_LENGTH = 2147483647  # Integer.MAX_VALUE: VARCHAR/VARBINARY of this length print as STRING/BYTES


class DataType:
    """Base of all types. ``nullable`` is part of the type, as in Java.

    Types are immutable values that behave exactly as frozen dataclasses (equality and hash
    over ``FIELDS`` within one class, the dataclass repr, ``FrozenInstanceError`` on assignment,
    pickling of the instance dict; ``tests/core/test_data_types_behaviour.py``) but are written
    out by hand: generating 24 dataclasses' methods cost ~16 ms of every command that parses a
    schema (issue 28).
    """

    nullable: bool = True
    root: ClassVar[str] = ""
    FIELDS: ClassVar[tuple[str, ...]] = ("nullable",)  # the dataclass fields, in their order
    __match_args__: ClassVar[tuple[str, ...]] = ()

    def __init__(self, *, nullable: bool = True) -> None:
        _set(self, "nullable", nullable)

    def _values(self) -> tuple[Any, ...]:
        return tuple([getattr(self, n) for n in self.FIELDS])

    def __eq__(self, other: object) -> bool:
        if other.__class__ is self.__class__:
            return self._values() == other._values()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._values())

    @recursive_repr()
    def __repr__(self) -> str:
        return f"{self.__class__.__qualname__}(" + ", ".join(f"{n}={getattr(self, n)!r}" for n in self.FIELDS) + ")"

    def __setattr__(self, name: str, value: Any) -> None:
        raise FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise FrozenInstanceError(f"cannot delete field {name!r}")

    def copy(self, nullable: bool) -> DataType:
        return self.__class__(*(getattr(self, n) for n in self.__match_args__), nullable=nullable)

    def _sql(self) -> str:
        return self.root

    def as_sql(self) -> str:
        return self._sql() + ("" if self.nullable else " NOT NULL")

    def __str__(self) -> str:
        return self.as_sql()

    def to_json(self) -> Any:
        """The schema-file form: a string for atomic types, an object for nested ones."""
        return self.as_sql()

    @property
    def is_atomic(self) -> bool:
        return not isinstance(self, (ArrayType, MultisetType, MapType, RowType))


_set = object.__setattr__  # how __init__ sets a field of a frozen value


class _Factory:
    """The default of a nested type's element/key/value: a fresh type when the argument is
    omitted (a dataclass ``default_factory``; ``None`` stays ``None`` as it did there)."""

    def __repr__(self) -> str:
        return "<factory>"


_FACTORY: Any = _Factory()


class BooleanType(DataType):
    root: ClassVar[str] = "BOOLEAN"


class TinyIntType(DataType):
    root: ClassVar[str] = "TINYINT"


class SmallIntType(DataType):
    root: ClassVar[str] = "SMALLINT"


class IntType(DataType):
    root: ClassVar[str] = "INT"


class BigIntType(DataType):
    root: ClassVar[str] = "BIGINT"


class FloatType(DataType):
    root: ClassVar[str] = "FLOAT"


class DoubleType(DataType):
    root: ClassVar[str] = "DOUBLE"


class DecimalType(DataType):
    precision: int = 10
    scale: int = 0
    root: ClassVar[str] = "DECIMAL"
    MAX_COMPACT_PRECISION: ClassVar[int] = 18
    FIELDS = ("nullable", "precision", "scale")
    __match_args__ = ("precision", "scale")

    def __init__(self, precision: int = 10, scale: int = 0, *, nullable: bool = True) -> None:
        _set(self, "nullable", nullable)
        _set(self, "precision", precision)
        _set(self, "scale", scale)
        if not 1 <= self.precision <= 38:
            raise InvalidInput(f"DECIMAL precision must be between 1 and 38, got {self.precision}")
        if not 0 <= self.scale <= self.precision:
            raise InvalidInput(f"DECIMAL scale must be between 0 and the precision ({self.precision}), got {self.scale}")

    def _sql(self) -> str:
        return f"DECIMAL({self.precision}, {self.scale})"

    @property
    def is_compact(self) -> bool:
        return self.precision <= self.MAX_COMPACT_PRECISION


def _init_length(self: DataType, length: int, nullable: bool) -> None:
    _set(self, "nullable", nullable)
    _set(self, "length", length)
    if not 1 <= length <= MAX_LENGTH:
        raise InvalidInput(f"{self.root} length must be between 1 and {MAX_LENGTH}, got {length}")


class CharType(DataType):
    length: int = 1
    root: ClassVar[str] = "CHAR"
    FIELDS = ("nullable", "length")
    __match_args__ = ("length",)

    def __init__(self, length: int = 1, *, nullable: bool = True) -> None:
        _init_length(self, length, nullable)

    def _sql(self) -> str:
        return f"CHAR({self.length})"


class VarCharType(DataType):
    length: int = MAX_LENGTH
    root: ClassVar[str] = "VARCHAR"
    FIELDS = ("nullable", "length")
    __match_args__ = ("length",)

    def __init__(self, length: int = MAX_LENGTH, *, nullable: bool = True) -> None:
        _init_length(self, length, nullable)

    def _sql(self) -> str:
        return "STRING" if self.length == MAX_LENGTH else f"VARCHAR({self.length})"


class BinaryType(DataType):
    length: int = 1
    root: ClassVar[str] = "BINARY"
    FIELDS = ("nullable", "length")
    __match_args__ = ("length",)

    def __init__(self, length: int = 1, *, nullable: bool = True) -> None:
        _init_length(self, length, nullable)

    def _sql(self) -> str:
        return f"BINARY({self.length})"


class VarBinaryType(DataType):
    length: int = MAX_LENGTH
    root: ClassVar[str] = "VARBINARY"
    FIELDS = ("nullable", "length")
    __match_args__ = ("length",)

    def __init__(self, length: int = MAX_LENGTH, *, nullable: bool = True) -> None:
        _init_length(self, length, nullable)

    def _sql(self) -> str:
        return "BYTES" if self.length == MAX_LENGTH else f"VARBINARY({self.length})"


class DateType(DataType):
    root: ClassVar[str] = "DATE"


def _init_precision(self: DataType, precision: int, nullable: bool) -> None:
    _set(self, "nullable", nullable)
    _set(self, "precision", precision)
    if not 0 <= precision <= 9:
        raise InvalidInput(f"{self.root} precision must be between 0 and 9, got {precision}")


class TimeType(DataType):
    precision: int = 0
    root: ClassVar[str] = "TIME"
    FIELDS = ("nullable", "precision")
    __match_args__ = ("precision",)

    def __init__(self, precision: int = 0, *, nullable: bool = True) -> None:
        _init_precision(self, precision, nullable)

    def _sql(self) -> str:
        return f"TIME({self.precision})"


class TimestampType(DataType):
    precision: int = 6
    root: ClassVar[str] = "TIMESTAMP"
    FIELDS = ("nullable", "precision")
    __match_args__ = ("precision",)

    def __init__(self, precision: int = 6, *, nullable: bool = True) -> None:
        _init_precision(self, precision, nullable)

    def _sql(self) -> str:
        return f"TIMESTAMP({self.precision})"

    @property
    def is_compact(self) -> bool:
        return self.precision <= 3


class LocalZonedTimestampType(DataType):
    precision: int = 6
    root: ClassVar[str] = "TIMESTAMP_LTZ"
    FIELDS = ("nullable", "precision")
    __match_args__ = ("precision",)

    def __init__(self, precision: int = 6, *, nullable: bool = True) -> None:
        _init_precision(self, precision, nullable)

    def _sql(self) -> str:
        return f"TIMESTAMP({self.precision}) WITH LOCAL TIME ZONE"

    @property
    def is_compact(self) -> bool:
        return self.precision <= 3


class VariantType(DataType):
    root: ClassVar[str] = "VARIANT"


class BlobType(DataType):
    root: ClassVar[str] = "BLOB"


class ArrayType(DataType):
    element: DataType
    root: ClassVar[str] = "ARRAY"
    FIELDS = ("nullable", "element")
    __match_args__ = ("element",)

    def __init__(self, element: DataType = _FACTORY, *, nullable: bool = True) -> None:
        _set(self, "nullable", nullable)
        _set(self, "element", IntType() if element is _FACTORY else element)

    def _sql(self) -> str:
        return f"ARRAY<{self.element.as_sql()}>"

    def to_json(self) -> Any:
        return {"type": "ARRAY" + ("" if self.nullable else " NOT NULL"), "element": self.element.to_json()}


class MultisetType(DataType):
    element: DataType
    root: ClassVar[str] = "MULTISET"
    FIELDS = ("nullable", "element")
    __match_args__ = ("element",)

    def __init__(self, element: DataType = _FACTORY, *, nullable: bool = True) -> None:
        _set(self, "nullable", nullable)
        _set(self, "element", IntType() if element is _FACTORY else element)

    def _sql(self) -> str:
        return f"MULTISET<{self.element.as_sql()}>"

    def to_json(self) -> Any:
        return {"type": "MULTISET" + ("" if self.nullable else " NOT NULL"), "element": self.element.to_json()}


class MapType(DataType):
    key: DataType
    value: DataType
    root: ClassVar[str] = "MAP"
    FIELDS = ("nullable", "key", "value")
    __match_args__ = ("key", "value")

    def __init__(self, key: DataType = _FACTORY, value: DataType = _FACTORY, *, nullable: bool = True) -> None:
        _set(self, "nullable", nullable)
        _set(self, "key", VarCharType() if key is _FACTORY else key)
        _set(self, "value", VarCharType() if value is _FACTORY else value)

    def _sql(self) -> str:
        return f"MAP<{self.key.as_sql()}, {self.value.as_sql()}>"

    def to_json(self) -> Any:
        return {
            "type": "MAP" + ("" if self.nullable else " NOT NULL"),
            "key": self.key.to_json(),
            "value": self.value.to_json(),
        }


@dataclass(frozen=True)
class DataField:
    """A named, id'd column (table column or ROW field)."""

    id: int
    name: str
    type: DataType
    description: str | None = None
    default_value: str | None = None

    def as_sql(self) -> str:
        s = f"`{self.name.replace('`', '``')}` {self.type.as_sql()}"
        if self.description is not None:
            s += " '" + self.description.replace("'", "''") + "'"
        return s

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {"id": self.id, "name": self.name, "type": self.type.to_json()}
        if self.description is not None:
            d["description"] = self.description
        if self.default_value is not None:
            d["defaultValue"] = self.default_value
        return d

    @staticmethod
    def from_json(d: dict[str, Any], depth: int = 0) -> DataField:
        try:
            return DataField(
                id=int(d["id"]),
                name=str(d["name"]),
                type=data_type_from_json(d["type"], depth),
                description=d.get("description"),
                default_value=d.get("defaultValue"),
            )
        except KeyError as e:
            raise InvalidInput(f"schema field {d!r} lacks {e.args[0]!r}") from e


class RowType(DataType):
    fields: tuple[DataField, ...] = ()
    root: ClassVar[str] = "ROW"
    FIELDS = ("nullable", "fields")
    __match_args__ = ("fields",)

    def __init__(self, fields: tuple[DataField, ...] = (), *, nullable: bool = True) -> None:
        _set(self, "nullable", nullable)
        _set(self, "fields", fields)

    def _sql(self) -> str:
        return "ROW<" + ", ".join(f.as_sql() for f in self.fields) + ">"

    def to_json(self) -> Any:
        return {"type": "ROW" + ("" if self.nullable else " NOT NULL"), "fields": [f.to_json() for f in self.fields]}

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(name)


# ---------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:(?P<num>\d+)|(?P<word>[A-Za-z_][A-Za-z0-9_$]*)|(?P<quoted>`(?:[^`]|``)*`)"
    r"|(?P<str>'(?:[^']|'')*')|(?P<sym>[<>(),:]))"
)


# ARRAY / MULTISET / MAP / ROW levels a type may nest: far beyond any real schema, and well
# inside Python's stack (the parsers below recurse once per level)
MAX_TYPE_NESTING = 64


def _too_deep(what: str) -> InvalidInput:
    return InvalidInput(f"{what}: types nest more than {MAX_TYPE_NESTING} levels deep (ARRAY, MULTISET, MAP, ROW)")


class _Tokens:
    def __init__(self, text: str) -> None:
        self.text = text
        self.depth = 0
        self.toks: list[tuple[str, str]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                raise InvalidInput(f"cannot parse type {text!r}: unexpected {text[pos:].strip()[:20]!r}")
            kind = m.lastgroup or ""
            self.toks.append((kind, m.group(kind)))
            pos = m.end()
        self.i = 0

    def peek(self, k: int = 0) -> tuple[str, str] | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def peek_word(self, k: int = 0) -> str | None:
        t = self.peek(k)
        return t[1].upper() if t and t[0] == "word" else None

    def take(self) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise InvalidInput(f"cannot parse type {self.text!r}: unexpected end")
        self.i += 1
        return t

    def expect_sym(self, s: str) -> None:
        t = self.take()
        if t != ("sym", s):
            raise InvalidInput(f"cannot parse type {self.text!r}: expected {s!r}, got {t[1]!r}")

    def take_word(self, w: str) -> bool:
        if self.peek_word() == w:
            self.i += 1
            return True
        return False

    def at_sym(self, s: str) -> bool:
        return self.peek() == ("sym", s)

    def take_int(self) -> int:
        t = self.take()
        if t[0] != "num":
            raise InvalidInput(f"cannot parse type {self.text!r}: expected a number, got {t[1]!r}")
        return int(t[1])

    def done(self) -> bool:
        return self.i >= len(self.toks)


def _params(t: _Tokens, n_max: int) -> list[int]:
    if not t.at_sym("("):
        return []
    t.expect_sym("(")
    out = [t.take_int()]
    while t.at_sym(","):
        t.take()
        out.append(t.take_int())
    t.expect_sym(")")
    if len(out) > n_max:
        raise InvalidInput(f"cannot parse type {t.text!r}: too many parameters")
    return out


# parameterless type names
_SIMPLE_TYPES: dict[str, Callable[[], DataType]] = {
    "BOOLEAN": BooleanType, "TINYINT": TinyIntType, "SMALLINT": SmallIntType, "INT": IntType,
    "INTEGER": IntType, "BIGINT": BigIntType, "FLOAT": FloatType, "DATE": DateType,
    "STRING": lambda: VarCharType(length=MAX_LENGTH), "BYTES": lambda: VarBinaryType(length=MAX_LENGTH),
    "VARIANT": VariantType, "BLOB": BlobType,
}
# types with a (length) parameter defaulting to 1
_LENGTH_TYPES: dict[str, Callable[[int], DataType]] = {
    "CHAR": lambda n: CharType(length=n), "VARCHAR": lambda n: VarCharType(length=n),
    "BINARY": lambda n: BinaryType(length=n), "VARBINARY": lambda n: VarBinaryType(length=n),
}


# Types newer Paimon releases define that this toolkit cannot hold yet (VECTOR 1.4, GEOMETRY and
# GEOGRAPHY 2.1): a schema naming one is refused by name, not reported as unreadable.
NEWER_TYPE_ROOTS: dict[str, str] = {"VECTOR": "1.4", "GEOMETRY": "2.1", "GEOGRAPHY": "2.1"}


def _refuse_newer_type(root: str) -> None:
    since = NEWER_TYPE_ROOTS.get(root)
    if since is not None:
        raise NotYetSupported(f"data type {root} (Paimon {since}+) is not supported")


def _parse_type(t: _Tokens) -> DataType:
    kind, word = t.take()
    if kind != "word":
        raise InvalidInput(f"cannot parse type {t.text!r}: expected a type name, got {word!r}")
    w = word.upper()
    dt: DataType
    if w in _SIMPLE_TYPES:
        dt = _SIMPLE_TYPES[w]()
    elif w in _LENGTH_TYPES:
        p = _params(t, 1)
        dt = _LENGTH_TYPES[w](p[0] if p else 1)
    elif w == "DOUBLE":
        t.take_word("PRECISION")
        dt = DoubleType()
    elif w in ("DECIMAL", "DEC", "NUMERIC"):
        p = _params(t, 2)
        dt = DecimalType(precision=p[0] if p else 10, scale=p[1] if len(p) > 1 else 0)
    elif w in ("TIME", "TIMESTAMP", "TIMESTAMP_LTZ"):
        dt = _parse_time_type(t, w)
    elif w in ("ARRAY", "MULTISET", "MAP", "ROW"):
        dt = _parse_nested_type(t, w)
    else:
        _refuse_newer_type(w)
        raise InvalidInput(f"unknown data type {word!r} in {t.text!r}")
    if t.peek_word() == "NOT" and t.peek_word(1) == "NULL":
        t.i += 2
        dt = dt.copy(nullable=False)
    elif t.peek_word() == "NULL":
        t.i += 1
    return dt


def _parse_time_type(t: _Tokens, w: str) -> DataType:
    """TIME(p) [WITHOUT TIME ZONE], TIMESTAMP(p) [WITH LOCAL | WITHOUT TIME ZONE], TIMESTAMP_LTZ(p)."""
    p = _params(t, 1)
    if w == "TIME":
        if t.peek_word() == "WITHOUT" and t.peek_word(1) == "TIME" and t.peek_word(2) == "ZONE":
            t.i += 3
        return TimeType(precision=p[0] if p else 0)
    prec = p[0] if p else 6
    if w == "TIMESTAMP_LTZ":
        return LocalZonedTimestampType(precision=prec)
    if t.peek_word() == "WITH" and t.peek_word(1) == "LOCAL":
        t.i += 2
        if not (t.take_word("TIME") and t.take_word("ZONE")):
            raise InvalidInput(f"cannot parse type {t.text!r}: expected WITH LOCAL TIME ZONE")
        return LocalZonedTimestampType(precision=prec)
    if t.peek_word() == "WITHOUT":
        t.i += 1
        if not (t.take_word("TIME") and t.take_word("ZONE")):
            raise InvalidInput(f"cannot parse type {t.text!r}: expected WITHOUT TIME ZONE")
    return TimestampType(precision=prec)


def _parse_nested_type(t: _Tokens, w: str) -> DataType:
    """ARRAY<t>, MULTISET<t>, MAP<k, v>, ROW<name [:] type ['comment'], ...>."""
    t.depth += 1
    if t.depth > MAX_TYPE_NESTING:
        raise _too_deep(f"cannot parse type {t.text[:40]!r}...")
    t.expect_sym("<")
    dt: DataType
    if w in ("ARRAY", "MULTISET"):
        el = _parse_type(t)
        dt = ArrayType(element=el) if w == "ARRAY" else MultisetType(element=el)
    elif w == "MAP":
        k = _parse_type(t)
        t.expect_sym(",")
        dt = MapType(key=k, value=_parse_type(t))
    else:
        fields: list[DataField] = []
        if not t.at_sym(">"):
            while True:
                name = _take_name(t)
                if t.at_sym(":"):
                    t.take()
                ftype = _parse_type(t)
                desc = _take_comment(t)
                fields.append(DataField(id=len(fields), name=name, type=ftype, description=desc))
                if t.at_sym(","):
                    t.take()
                    continue
                break
        dt = RowType(fields=tuple(fields))
    t.expect_sym(">")
    t.depth -= 1
    return dt


def _take_name(t: _Tokens) -> str:
    kind, val = t.take()
    if kind == "quoted":
        return val[1:-1].replace("``", "`")
    if kind == "word":
        return val
    raise InvalidInput(f"cannot parse {t.text!r}: expected a column name, got {val!r}")


def _take_comment(t: _Tokens) -> str | None:
    if t.peek_word() == "COMMENT":
        t.take()
    nxt = t.peek()
    if nxt and nxt[0] == "str":
        t.take()
        return nxt[1][1:-1].replace("''", "'")
    return None


def parse_data_type(text: str) -> DataType:
    """Parse one SQL type string (``DECIMAL(10, 2) NOT NULL``, ``ARRAY<INT>``, ...)."""
    t = _Tokens(text)
    dt = _parse_type(t)
    if not t.done():
        raise InvalidInput(f"cannot parse type {text!r}: unexpected {t.peek()[1]!r}")  # type: ignore[index]
    return dt


def parse_columns(text: str) -> list[tuple[str, DataType, str | None]]:
    """Parse a column list ``id BIGINT NOT NULL, name STRING COMMENT 'who'``."""
    t = _Tokens(text)
    out: list[tuple[str, DataType, str | None]] = []
    if t.done():
        raise InvalidInput("empty schema: give at least one column, e.g. \"id BIGINT NOT NULL\"")
    while True:
        name = _take_name(t)
        dtype = _parse_type(t)
        desc = _take_comment(t)
        out.append((name, dtype, desc))
        if t.done():
            break
        t.expect_sym(",")
    return out


def data_type_from_json(j: Any, depth: int = 0) -> DataType:
    """The schema-file form (string or object) to a type (``depth``: levels nested so far)."""
    if isinstance(j, str):
        return parse_data_type(j)
    if isinstance(j, dict):
        if depth >= MAX_TYPE_NESTING:
            raise _too_deep("schema field type")
        raw = str(j.get("type", ""))
        parts = raw.split()
        root = parts[0].upper() if parts else ""
        nullable = not raw.upper().endswith("NOT NULL")
        if root in ("ARRAY", "MULTISET"):
            el = data_type_from_json(j["element"], depth + 1)
            return ArrayType(element=el, nullable=nullable) if root == "ARRAY" else MultisetType(element=el, nullable=nullable)
        if root == "MAP":
            return MapType(key=data_type_from_json(j["key"], depth + 1), value=data_type_from_json(j["value"], depth + 1),
                           nullable=nullable)
        if root == "ROW":
            return RowType(fields=tuple(DataField.from_json(f, depth + 1) for f in j.get("fields", [])),
                           nullable=nullable)
        _refuse_newer_type(root)
        raise InvalidInput(f"unknown nested type {raw!r}")
    raise InvalidInput(f"cannot read type {j!r}")
