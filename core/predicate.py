"""``--where`` predicates: parse, type literals by column, filter rows, prune by stats.

A predicate is a tree of And/Or over leaves ``column op literal(s)``. NOT is pushed down to
the leaves while parsing (``NOT a = 1`` becomes ``a <> 1``, De Morgan for And/Or), exactly
as Java Paimon's ``Predicate.negate()`` does, so SQL's three-valued logic holds without a
NOT node: a NULL column value never satisfies any comparison.

Three uses, one tree:

* ``to_arrow_expression()`` filters rows (pyarrow.compute, vectorised).
* ``might_match(stats)`` answers "could any row of this file/partition match?" from
  (min, max, null_count, row_count) per column with Java's ``LeafPredicate`` rules; it is
  conservative (unknown stats -> True).
* ``bucket_key_values(keys)`` lists the bucket-key tuples an Equal/IN predicate pins, so a
  fixed-bucket table reads only the buckets those tuples hash to (Java's BucketSelectConverter).

Literal values are held in the same Python domain ``core.binary_row`` decodes stats into
(int, float, Decimal, str, bytes, date, time, ``Timestamp``, bool), so stats compare directly.
"""

from __future__ import annotations

import datetime as _dt
import decimal
import itertools
import re
import struct
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .errors import InvalidInput
from .types import (
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
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc

# (min, max, null_count, row_count); any of the first three may be None (unknown)
ColumnStats = tuple[Any, Any, "int | None", int]

# Java's BucketSelectConverter gives up above this many bucket-key combinations
MAX_BUCKET_VALUES = 1000

_NEGATE = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">",
           "in": "not in", "not in": "in", "is null": "is not null", "is not null": "is null"}
_FLIP = {"=": "=", "<>": "<>", "<": ">", ">": "<", "<=": ">=", ">=": "<="}


# ---------------------------------------------------------------------------------------
# the tree
# ---------------------------------------------------------------------------------------


class Predicate:
    """Base of the predicate tree (And, Or, Leaf, Constant)."""

    def columns(self) -> set[str]:
        raise NotImplementedError

    def negate(self) -> Predicate:
        raise NotImplementedError

    def to_arrow_expression(self) -> pc.Expression:
        raise NotImplementedError

    def might_match(self, stats: Mapping[str, ColumnStats]) -> bool:
        """False only when no row described by ``stats`` can match; missing columns are unknown."""
        raise NotImplementedError

    def conjuncts(self) -> list[Predicate]:
        return [self]

    def rename(self, mapping: Mapping[str, str]) -> Predicate:
        """The same predicate over renamed columns (e.g. ``id`` -> ``_KEY_id``)."""
        raise NotImplementedError

    def only_on(self, names: set[str] | Sequence[str]) -> Predicate | None:
        """The conjuncts that reference only ``names`` (None if there are none).

        Java pushes such parts down (partition filter, key filter); the rest stays for later.
        """
        keep = [c for c in self.conjuncts() if c.columns() <= set(names)]
        return and_(keep) if keep else None

    def bucket_key_values(self, keys: Sequence[str]) -> list[tuple[Any, ...]] | None:
        """Every bucket-key tuple the predicate allows, if it pins each key by = / IN; else None."""
        per_key: list[list[Any]] = []
        for k in keys:
            found: list[Any] | None = None
            for c in self.conjuncts():
                vals = c._equal_values(k)
                if vals is not None:
                    found = vals if found is None else [v for v in found if v in vals]
            if found is None:
                return None
            per_key.append(found)
        total = 1
        for v in per_key:
            total *= len(v)
        if total > MAX_BUCKET_VALUES:
            return None
        return list(itertools.product(*per_key))

    def _equal_values(self, column: str) -> list[Any] | None:
        """Values ``column`` must equal for this predicate to hold (None: not an equality on it)."""
        return None


@dataclass(frozen=True)
class Constant(Predicate):
    """TRUE / FALSE (e.g. ``x = NULL`` is never true)."""

    value: bool

    def columns(self) -> set[str]:
        return set()

    def negate(self) -> Predicate:
        # only produced for "never true" comparisons with NULL, whose negation is also never true
        return self if not self.value else Constant(False)

    def to_arrow_expression(self) -> pc.Expression:
        import pyarrow.compute as pc

        return pc.scalar(self.value)

    def might_match(self, stats: Mapping[str, ColumnStats]) -> bool:
        return self.value

    def rename(self, mapping: Mapping[str, str]) -> Predicate:
        return self

    def __str__(self) -> str:
        return "TRUE" if self.value else "FALSE"


@dataclass(frozen=True)
class And(Predicate):
    children: tuple[Predicate, ...]

    def columns(self) -> set[str]:
        return set().union(*(c.columns() for c in self.children))

    def negate(self) -> Predicate:
        return or_([c.negate() for c in self.children])

    def to_arrow_expression(self) -> pc.Expression:
        out = self.children[0].to_arrow_expression()
        for c in self.children[1:]:
            out = out & c.to_arrow_expression()
        return out

    def might_match(self, stats: Mapping[str, ColumnStats]) -> bool:
        return all(c.might_match(stats) for c in self.children)

    def conjuncts(self) -> list[Predicate]:
        return [x for c in self.children for x in c.conjuncts()]

    def rename(self, mapping: Mapping[str, str]) -> Predicate:
        return And(tuple(c.rename(mapping) for c in self.children))

    def __str__(self) -> str:
        return " AND ".join(f"({c})" if isinstance(c, Or) else str(c) for c in self.children)


@dataclass(frozen=True)
class Or(Predicate):
    children: tuple[Predicate, ...]

    def columns(self) -> set[str]:
        return set().union(*(c.columns() for c in self.children))

    def negate(self) -> Predicate:
        return and_([c.negate() for c in self.children])

    def to_arrow_expression(self) -> pc.Expression:
        out = self.children[0].to_arrow_expression()
        for c in self.children[1:]:
            out = out | c.to_arrow_expression()
        return out

    def might_match(self, stats: Mapping[str, ColumnStats]) -> bool:
        return any(c.might_match(stats) for c in self.children)

    def rename(self, mapping: Mapping[str, str]) -> Predicate:
        return Or(tuple(c.rename(mapping) for c in self.children))

    def _equal_values(self, column: str) -> list[Any] | None:
        out: list[Any] = []
        for c in self.children:
            vals = c._equal_values(column)
            if vals is None:
                return None
            out += [v for v in vals if v not in out]
        return out

    def __str__(self) -> str:
        return " OR ".join(f"({c})" if isinstance(c, And) else str(c) for c in self.children)


@dataclass(frozen=True)
class Leaf(Predicate):
    """``column op literal`` / ``column [NOT] IN (literals)`` / ``column IS [NOT] NULL``."""

    op: str
    column: str
    type: DataType
    literals: tuple[Any, ...] = ()

    def columns(self) -> set[str]:
        return {self.column}

    def negate(self) -> Predicate:
        return Leaf(_NEGATE[self.op], self.column, self.type, self.literals)

    def rename(self, mapping: Mapping[str, str]) -> Predicate:
        return Leaf(self.op, mapping.get(self.column, self.column), self.type, self.literals)

    @property
    def literal(self) -> Any:
        return self.literals[0]

    def _equal_values(self, column: str) -> list[Any] | None:
        if column != self.column:
            return None
        if self.op == "=":
            return [self.literal] if _fits(self.literal, self.type) else []
        if self.op == "in":
            return [v for v in dict.fromkeys(self.literals) if v is not None and _fits(v, self.type)]
        return None

    # -- rows -----------------------------------------------------------------------------

    def to_arrow_expression(self) -> pc.Expression:
        import pyarrow as pa
        import pyarrow.compute as pc

        f = pc.field(self.column)
        op = self.op
        if op == "is null":
            return f.is_null()
        if op == "is not null":
            return f.is_valid()
        if op in ("in", "not in"):
            values = [v for v in self.literals if v is not None]
            vals, at = _arrow_values(values, self.type)
            arr = pa.array(vals, type=at)
            if op == "in":
                return f.isin(arr) if values else pc.scalar(False)
            if len(values) != len(self.literals):  # NOT IN (.., NULL, ..) is never true
                return pc.scalar(False)
            return f.is_valid() & ~f.isin(arr)
        (val,), at = _arrow_values([self.literal], self.type)
        lit = pa.scalar(val, type=at)
        return {"=": f == lit, "<>": f != lit, "<": f < lit, "<=": f <= lit, ">": f > lit, ">=": f >= lit}[op]

    # -- stats ----------------------------------------------------------------------------

    def might_match(self, stats: Mapping[str, ColumnStats]) -> bool:
        st = stats.get(self.column)
        if st is None:
            return True
        lo, hi, nulls, rows = st
        op = self.op
        if op == "is null":
            return nulls is None or nulls > 0
        if op == "is not null":
            return nulls is None or nulls < rows
        all_null = nulls is not None and nulls == rows
        if all_null:
            return False
        if lo is None or hi is None:
            return True
        try:
            if op == "in":
                return any(v is not None and lo <= v <= hi for v in self.literals)
            if op == "not in":
                return all(v is not None and not (v == lo and v == hi) for v in self.literals)
            v = self.literal
            if op == "=":
                return lo <= v <= hi
            if op == "<>":
                return not (v == lo and v == hi)
            if op == "<":
                return v > lo
            if op == "<=":
                return v >= lo
            if op == ">":
                return v < hi
            return v <= hi  # >=
        except TypeError:  # stats of an unexpected type (e.g. evolved column): unknown
            return True

    def __str__(self) -> str:
        name = f"`{self.column}`" if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.column) else self.column
        if self.op in ("is null", "is not null"):
            return f"{name} {self.op.upper()}"
        if self.op in ("in", "not in"):
            return f"{name} {self.op.upper()} ({', '.join(_sql_literal(v) for v in self.literals)})"
        return f"{name} {self.op} {_sql_literal(self.literal)}"


def and_(preds: Sequence[Predicate]) -> Predicate:
    flat: list[Predicate] = []
    for p in preds:
        if isinstance(p, Constant) and p.value:
            continue
        flat.extend(p.children if isinstance(p, And) else [p])
    if any(isinstance(p, Constant) and not p.value for p in flat):
        return Constant(False)
    if not flat:
        return Constant(True)
    return flat[0] if len(flat) == 1 else And(tuple(flat))


def or_(preds: Sequence[Predicate]) -> Predicate:
    flat: list[Predicate] = []
    for p in preds:
        if isinstance(p, Constant) and not p.value:
            continue
        flat.extend(p.children if isinstance(p, Or) else [p])
    if any(isinstance(p, Constant) and p.value for p in flat):
        return Constant(True)
    if not flat:
        return Constant(False)
    return flat[0] if len(flat) == 1 else Or(tuple(flat))


def _sql_literal(v: Any) -> str:
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, float, decimal.Decimal)):
        return str(v)
    if isinstance(v, bytes):
        return f"X'{v.hex()}'"
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return f"DATE '{v.isoformat()}'"
    from .binary_row import Timestamp

    if isinstance(v, Timestamp):
        return f"TIMESTAMP '{str(v).replace('T', ' ')}'"
    if isinstance(v, _dt.time):
        return f"TIME '{v.isoformat()}'"
    return "'" + str(v).replace("'", "''") + "'"


# ---------------------------------------------------------------------------------------
# literals: typing and arrow conversion
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Raw:
    """An untyped literal as written: kind in int/num/str/date/time/timestamp/bool/null/hex."""

    kind: str
    text: str

    def show(self) -> str:
        if self.kind in ("str", "date", "time", "timestamp", "hex"):
            prefix = {"str": "", "date": "DATE ", "time": "TIME ", "timestamp": "TIMESTAMP ", "hex": "X"}[self.kind]
            return f"{prefix}'{self.text}'"
        return self.text


_INT_RANGES = {TinyIntType: 8, SmallIntType: 16, IntType: 32, BigIntType: 64}
_TS_RE = re.compile(
    r"\s*(\d{4,})-(\d{1,2})-(\d{1,2})(?:[ T](\d{1,2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?\s*", re.IGNORECASE)


def _bad(column: str, raw: _Raw, t: DataType, why: str = "") -> InvalidInput:
    extra = f": {why}" if why else ""
    return InvalidInput(f"--where: literal {raw.show()} does not fit column {column} {t.as_sql()}{extra}")


def coerce_literal(raw: _Raw, t: DataType, column: str) -> Any:
    """The literal as a value of the column's type (binary_row's Python domain); InvalidInput if not."""
    if raw.kind == "null":
        return None
    text = raw.text
    if isinstance(t, BooleanType):
        if raw.kind == "bool" or (raw.kind == "str" and text.lower() in ("true", "false")):
            return text.lower() == "true"
        raise _bad(column, raw, t, "expected TRUE or FALSE")
    if type(t) in _INT_RANGES:
        if raw.kind not in ("int", "num", "str"):
            raise _bad(column, raw, t)
        try:
            d = decimal.Decimal(text.strip())
        except decimal.InvalidOperation:
            raise _bad(column, raw, t, "not a number") from None
        if not d.is_finite() or d != d.to_integral_value():
            raise _bad(column, raw, t, "not an integer")
        bits = _INT_RANGES[type(t)]
        v = int(d)
        if not -(2 ** (bits - 1)) <= v < 2 ** (bits - 1):
            raise _bad(column, raw, t, "out of range")
        return v
    if isinstance(t, (FloatType, DoubleType)):
        if raw.kind not in ("int", "num", "str"):
            raise _bad(column, raw, t)
        try:
            v = float(text.strip())
        except ValueError:
            raise _bad(column, raw, t, "not a number") from None
        if isinstance(t, FloatType):
            v = struct.unpack("<f", struct.pack("<f", v))[0]
        return v
    if isinstance(t, DecimalType):
        if raw.kind not in ("int", "num", "str"):
            raise _bad(column, raw, t)
        try:
            d = decimal.Decimal(text.strip())
        except decimal.InvalidOperation:
            raise _bad(column, raw, t, "not a number") from None
        if not d.is_finite():
            raise _bad(column, raw, t, "not a finite number")
        if abs(d) >= decimal.Decimal(10) ** (t.precision - t.scale):
            raise _bad(column, raw, t, "out of range")
        return d
    if isinstance(t, (CharType, VarCharType)):
        if raw.kind in ("str", "int", "num"):
            return text
        raise _bad(column, raw, t, "expected a string")
    if isinstance(t, (BinaryType, VarBinaryType)):
        if raw.kind == "hex":
            try:
                return bytes.fromhex(text)
            except ValueError:
                raise _bad(column, raw, t, "bad hex") from None
        if raw.kind == "str":
            return text.encode("utf-8")
        raise _bad(column, raw, t, "expected X'hex' or a string")
    if isinstance(t, DateType):
        if raw.kind in ("date", "str"):
            try:
                return _dt.date.fromisoformat(text.strip())
            except ValueError:
                raise _bad(column, raw, t, "expected yyyy-mm-dd") from None
        raise _bad(column, raw, t, "expected DATE 'yyyy-mm-dd'")
    if isinstance(t, TimeType):
        if raw.kind in ("time", "str"):
            try:
                return _dt.time.fromisoformat(text.strip())
            except ValueError:
                raise _bad(column, raw, t, "expected hh:mm:ss[.fff]") from None
        raise _bad(column, raw, t, "expected TIME 'hh:mm:ss'")
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        if raw.kind in ("timestamp", "str", "date"):
            ts = _parse_timestamp(text, isinstance(t, LocalZonedTimestampType))
            if ts is None:
                raise _bad(column, raw, t, "expected yyyy-mm-dd[ hh:mm[:ss[.fffffffff]]]")
            return ts
        raise _bad(column, raw, t, "expected TIMESTAMP 'yyyy-mm-dd hh:mm:ss'")
    raise InvalidInput(f"--where: column {column} of type {t.as_sql()} cannot be compared with a literal")


def _parse_timestamp(text: str, ltz: bool) -> Any:
    """Exact (nanosecond) timestamp; an offset is only meaningful (and allowed) for LTZ columns.

    TIMESTAMP holds a wall clock, so a literal is one too. TIMESTAMP_LTZ holds an instant: a
    literal with an offset is converted to UTC, one without is taken as UTC.
    """
    from .binary_row import Timestamp

    m = _TS_RE.fullmatch(text)
    if not m:
        return None
    y, mo, d, h, mi, s, frac, off = m.groups()
    if off and not ltz:
        return None
    try:
        base = _dt.datetime(int(y), int(mo), int(d), int(h or 0), int(mi or 0), int(s or 0))
    except ValueError:
        return None
    nanos = int((frac or "").ljust(9, "0")) if frac else 0
    if off and off.upper() != "Z":
        sign = -1 if off[0] == "-" else 1
        digits = off[1:].replace(":", "")
        base -= sign * _dt.timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    ts = Timestamp.from_datetime(base)
    return Timestamp(ts.millisecond + nanos // 1_000_000, nanos % 1_000_000)


def _fits(v: Any, t: DataType) -> bool:
    """Whether an (already range-checked) literal is exactly a value of ``t`` (decimal scale)."""
    if isinstance(t, DecimalType) and isinstance(v, decimal.Decimal):
        return v == v.quantize(decimal.Decimal(1).scaleb(-t.scale))
    return True


def _ts_unit(t: DataType, values: Sequence[Any]) -> str:
    p = getattr(t, "precision", 6)
    unit = "ms" if p <= 3 else "us" if p <= 6 else "ns"
    for v in values:  # a literal finer than the column keeps its precision (never equal, but ordered)
        if v is not None:
            if v.nano_of_millisecond % 1000 and unit != "ns":
                unit = "ns"
            elif v.nano_of_millisecond and unit == "ms":
                unit = "us"
    return unit


def _literal_arrow_type(values: Sequence[Any], t: DataType) -> pa.DataType:
    import pyarrow as pa

    if isinstance(t, BooleanType):
        return pa.bool_()
    if isinstance(t, TinyIntType):
        return pa.int8()
    if isinstance(t, SmallIntType):
        return pa.int16()
    if isinstance(t, IntType):
        return pa.int32()
    if isinstance(t, BigIntType):
        return pa.int64()
    if isinstance(t, FloatType):
        return pa.float32()
    if isinstance(t, DoubleType):
        return pa.float64()
    if isinstance(t, DecimalType):
        scale = max([t.scale] + [-v.as_tuple().exponent for v in values if v is not None])
        return pa.decimal128(min(38, t.precision - t.scale + scale), scale)
    if isinstance(t, (CharType, VarCharType)):
        return pa.string()
    if isinstance(t, (BinaryType, VarBinaryType)):
        return pa.binary()
    if isinstance(t, DateType):
        return pa.date32()
    if isinstance(t, TimeType):
        return pa.time32("ms") if t.precision <= 3 else pa.time64("us")
    if isinstance(t, LocalZonedTimestampType):
        return pa.timestamp(_ts_unit(t, values), tz="UTC")
    if isinstance(t, TimestampType):
        return pa.timestamp(_ts_unit(t, values))
    raise InvalidInput(f"--where: no arrow literal for type {t.as_sql()}")


def _arrow_values(values: Sequence[Any], t: DataType) -> tuple[list[Any], pa.DataType]:
    """Literals as pyarrow accepts them, with one arrow type for all (timestamps as epoch ints)."""
    at = _literal_arrow_type(values, t)
    if isinstance(t, (TimestampType, LocalZonedTimestampType)):
        div = {"ms": 1_000_000, "us": 1000, "ns": 1}[at.unit]
        return [(v.millisecond * 1_000_000 + v.nano_of_millisecond) // div for v in values], at
    return list(values), at


# ---------------------------------------------------------------------------------------
# parser
# ---------------------------------------------------------------------------------------

_TOKEN = re.compile(
    r"\s*(?:"
    r"(?P<bq>`(?:[^`]|``)*`)"
    r"|(?P<hex>[xX]'[0-9a-fA-F\s]*')"
    r"|(?P<str>'(?:[^']|'')*')"
    r"|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)"
    r"|(?P<op><>|!=|<=|>=|==|=|<|>|\(|\)|,|-|\+)"
    r"|(?P<word>[A-Za-z_$][A-Za-z0-9_$]*)"
    r")"
)


def _tokenize(text: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise InvalidInput(f"--where: cannot parse at {text[pos:pos + 20].strip()!r} (position {pos + 1})")
        kind = m.lastgroup or ""
        val = m.group(kind)
        if kind == "bq":
            val = val[1:-1].replace("``", "`")
        elif kind == "str":
            val = val[1:-1].replace("''", "'")
        elif kind == "hex":
            val = re.sub(r"\s", "", val[2:-1])
        out.append((kind, val))
        pos = m.end()
    return out


# parenthesised levels a predicate may nest: the parser recurses a few frames per level, and
# the predicate tree it builds is walked recursively too
MAX_WHERE_NESTING = 100


class _Parser:
    """Recursive descent: or_expr := and_expr (OR and_expr)*; and_expr := not_expr (AND not_expr)*.

    NOT chains are read in a loop and parentheses may nest MAX_WHERE_NESTING deep, so no input
    can exhaust the stack."""

    def __init__(self, text: str, fields: Sequence[DataField]) -> None:
        self.text = text
        self.toks = _tokenize(text)
        self.i = 0
        self.depth = 0
        self.fields = {f.name: f for f in fields}
        self.lower: dict[str, list[DataField]] = {}
        for f in fields:
            self.lower.setdefault(f.name.lower(), []).append(f)

    # -- token helpers --------------------------------------------------------------------

    def peek(self, k: int = 0) -> tuple[str, str] | None:
        j = self.i + k
        return self.toks[j] if j < len(self.toks) else None

    def at_word(self, *words: str, k: int = 0) -> bool:
        t = self.peek(k)
        return t is not None and t[0] == "word" and t[1].upper() in words

    def at_op(self, *ops: str) -> bool:
        t = self.peek()
        return t is not None and t[0] == "op" and t[1] in ops

    def take(self) -> tuple[str, str]:
        t = self.peek()
        if t is None:
            raise InvalidInput(f"--where: unexpected end of {self.text!r}")
        self.i += 1
        return t

    def expect_op(self, op: str) -> None:
        t = self.take()
        if t != ("op", op):
            raise InvalidInput(f"--where: expected {op!r} but found {t[1]!r} in {self.text!r}")

    def expect_word(self, word: str) -> None:
        t = self.take()
        if t[0] != "word" or t[1].upper() != word:
            raise InvalidInput(f"--where: expected {word} but found {t[1]!r} in {self.text!r}")

    # -- grammar --------------------------------------------------------------------------

    def parse(self) -> Predicate:
        if not self.toks:
            raise InvalidInput("--where: empty predicate")
        p = self.or_expr()
        if self.i != len(self.toks):
            raise InvalidInput(f"--where: unexpected {self.toks[self.i][1]!r} in {self.text!r}")
        return p

    def or_expr(self) -> Predicate:
        parts = [self.and_expr()]
        while self.at_word("OR"):
            self.take()
            parts.append(self.and_expr())
        return or_(parts)

    def and_expr(self) -> Predicate:
        parts = [self.not_expr()]
        while self.at_word("AND"):
            self.take()
            parts.append(self.not_expr())
        return and_(parts)

    def not_expr(self) -> Predicate:
        nots = 0
        while self.at_word("NOT"):
            self.take()
            nots += 1
        p = self.primary()
        return p.negate() if nots % 2 else p

    def primary(self) -> Predicate:
        if self.at_op("("):
            self.take()
            self.depth += 1
            if self.depth > MAX_WHERE_NESTING:
                raise InvalidInput(f"--where: parentheses nest more than {MAX_WHERE_NESTING} levels deep")
            p = self.or_expr()
            self.expect_op(")")
            self.depth -= 1
            return p
        if self.at_word("TRUE", "FALSE") and not self._is_column_here():
            return Constant(self.take()[1].upper() == "TRUE")
        if self._is_column_here():
            return self.column_predicate()
        # literal op column
        raw = self.literal()
        t = self.take()
        if t[0] != "op" or t[1] not in ("=", "==", "<>", "!=", "<", "<=", ">", ">="):
            raise InvalidInput(f"--where: expected a comparison after {raw.show()} in {self.text!r}")
        f = self.column()
        op = _FLIP[_norm_op(t[1])]
        return self._compare(op, f, raw)

    def _is_column_here(self) -> bool:
        t = self.peek()
        if t is None:
            return False
        if t[0] == "bq":
            return True
        if t[0] != "word":
            return False
        if t[1].upper() in ("DATE", "TIME", "TIMESTAMP") and (self.peek(1) or ("", ""))[0] == "str":
            return False
        if t[1].upper() in ("NULL", "TRUE", "FALSE"):
            return self._resolve(t[1], quiet=True) is not None
        return True

    def _resolve(self, name: str, quiet: bool = False) -> DataField | None:
        f = self.fields.get(name)
        if f is None:
            cands = self.lower.get(name.lower(), [])
            f = cands[0] if len(cands) == 1 else None
        if f is None and not quiet:
            raise InvalidInput(f"--where: unknown column {name!r}; columns: {', '.join(self.fields)}")
        return f

    def column(self) -> DataField:
        kind, name = self.take()
        if kind not in ("word", "bq"):
            raise InvalidInput(f"--where: expected a column name but found {name!r} in {self.text!r}")
        f = self._resolve(name)
        assert f is not None
        return f

    def column_predicate(self) -> Predicate:
        f = self.column()
        if self.at_word("IS"):
            self.take()
            neg = False
            if self.at_word("NOT"):
                self.take()
                neg = True
            self.expect_word("NULL")
            return Leaf("is not null" if neg else "is null", f.name, f.type)
        neg = False
        if self.at_word("NOT") and self.at_word("IN", "BETWEEN", k=1):
            self.take()
            neg = True
        if self.at_word("IN"):
            self.take()
            self.expect_op("(")
            raws = [self.literal()]
            while self.at_op(","):
                self.take()
                raws.append(self.literal())
            self.expect_op(")")
            lits = tuple(coerce_literal(r, f.type, f.name) for r in raws)
            return Leaf("not in" if neg else "in", f.name, f.type, lits)
        if self.at_word("BETWEEN"):
            self.take()
            lo = self.literal()
            self.expect_word("AND")
            hi = self.literal()
            p = and_([self._compare(">=", f, lo), self._compare("<=", f, hi)])
            return p.negate() if neg else p
        t = self.peek()
        if t is None or t[0] != "op" or t[1] not in ("=", "==", "<>", "!=", "<", "<=", ">", ">="):
            if isinstance(f.type, BooleanType):  # a bare boolean column means "is true"
                return Leaf("=", f.name, f.type, (True,))
            found = "end of input" if t is None else repr(t[1])
            raise InvalidInput(f"--where: expected a comparison after column {f.name} but found {found}")
        self.take()
        if self._is_column_here():
            raise InvalidInput(f"--where: comparing two columns is not supported ({f.name} {t[1]} ...)")
        return self._compare(_norm_op(t[1]), f, self.literal())

    def _compare(self, op: str, f: DataField, raw: _Raw) -> Predicate:
        v = coerce_literal(raw, f.type, f.name)
        if v is None:
            return Constant(False)  # comparison with NULL is never true
        return Leaf(op, f.name, f.type, (v,))

    def literal(self) -> _Raw:
        kind, val = self.take()
        if kind == "op" and val in ("-", "+"):
            k2, v2 = self.take()
            if k2 != "num":
                raise InvalidInput(f"--where: expected a number after {val!r} in {self.text!r}")
            return _Raw("num" if "." in v2 or "e" in v2.lower() else "int", ("-" if val == "-" else "") + v2)
        if kind == "num":
            return _Raw("num" if "." in val or "e" in val.lower() else "int", val)
        if kind == "str":
            return _Raw("str", val)
        if kind == "hex":
            return _Raw("hex", val)
        if kind == "word":
            up = val.upper()
            if up in ("TRUE", "FALSE"):
                return _Raw("bool", up.lower())
            if up == "NULL":
                return _Raw("null", "NULL")
            if up in ("DATE", "TIME", "TIMESTAMP"):
                k2, v2 = self.take()
                if k2 != "str":
                    raise InvalidInput(f"--where: expected a quoted value after {up} in {self.text!r}")
                return _Raw(up.lower(), v2)
        raise InvalidInput(f"--where: expected a literal but found {val!r} in {self.text!r}")


def _norm_op(op: str) -> str:
    return {"==": "=", "!=": "<>"}.get(op, op)


def parse_predicate(text: str, fields: Sequence[DataField]) -> Predicate:
    """Parse ``--where`` text against the table's columns (literals typed by column)."""
    return _Parser(text, fields).parse()
