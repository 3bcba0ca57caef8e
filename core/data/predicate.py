"""``--where`` predicates: parse, type literals by column, filter rows, prune by stats.

A predicate is a tree of And/Or over leaves ``column op literal(s)``. NOT is pushed down to
the leaves while parsing (``NOT a = 1`` becomes ``a <> 1``, De Morgan for And/Or), exactly
as Java Paimon's ``Predicate.negate()`` does, so SQL's three-valued logic holds without a
NOT node: a NULL column value never satisfies any comparison.

Three uses, one tree:

* ``filter(table)`` keeps the matching rows: ``row_mask`` evaluates the tree with
  pyarrow.compute kernels on the calling thread, one kernel per leaf and one ``is_in`` per
  column for an OR of equalities, so the work is linear in the predicate's size (Arrow's own
  expression engine is quadratic in the number of OR terms). ``to_arrow_expression()`` gives
  the same rows as an Arrow expression, for callers that need one.
* ``might_match(stats)`` answers "could any row of this file/partition match?" from
  (min, max, null_count, row_count) per column with Java's ``LeafPredicate`` rules; it is
  conservative (unknown stats -> True).
* ``bucket_key_values(keys)`` lists the bucket-key tuples an Equal/IN predicate pins, so a
  fixed-bucket table reads only the buckets those tuples hash to (Java's BucketSelectConverter).

Parsing is :mod:`.predicate_parser`; literal typing and rendering :mod:`.predicate_literal`.
Literal values are held in the same Python domain ``core.data.binary_row`` decodes stats into
(int, float, Decimal, str, bytes, date, time, ``Timestamp``, bool), so stats compare directly.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .predicate_literal import arrow_values, literal_fits, sql_literal
from .types import DataType

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.compute as pc

# (min, max, null_count, row_count); any of the first three may be None (unknown)
ColumnStats = tuple[Any, Any, "int | None", int]

# Java's BucketSelectConverter gives up above this many bucket-key combinations
MAX_BUCKET_VALUES = 1000

_NEGATE = {"=": "<>", "<>": "=", "<": ">=", ">=": "<", ">": "<=", "<=": ">",
           "in": "not in", "not in": "in", "is null": "is not null", "is not null": "is null"}


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

    def row_mask(self, table: pa.Table) -> pa.ChunkedArray:
        """True where a row of ``table`` matches; false or null where it does not.

        NOT was pushed to the leaves, so masks are only ever combined by AND and OR: there a
        null (unknown) and a false mean the same, and a leaf may answer either."""
        raise NotImplementedError

    def filter(self, table: pa.Table) -> pa.Table:
        """The matching rows of ``table``, in order.

        Why a mask and not ``table.filter(expression)``: an expression filter runs as an Acero
        plan whose pool threads release the input after the call returned (an abort when the
        interpreter exits then), and its planning is quadratic in the number of OR terms; the
        mask's kernels run on the calling thread, linear in the predicate's size."""
        if table.num_rows == 0:
            return table
        return table.filter(self.row_mask(table))

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
                    if found is None:
                        found = vals
                    else:
                        allowed = set(vals)
                        found = [v for v in found if v in allowed]
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

    def row_mask(self, table: pa.Table) -> pa.ChunkedArray:
        import pyarrow as pa

        return pa.chunked_array([pa.repeat(pa.scalar(self.value), table.num_rows)])

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

    def row_mask(self, table: pa.Table) -> pa.ChunkedArray:
        return _combine("and_kleene", [c.row_mask(table) for c in self.children])

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

    def row_mask(self, table: pa.Table) -> pa.ChunkedArray:
        """Equalities (``=``, ``IN``) on one column become one ``is_in`` per column and literal
        type; every other child is one mask of its own."""
        import pyarrow as pa
        import pyarrow.compute as pc

        masks: list[pa.ChunkedArray] = []
        members: dict[tuple[str, str], list[Leaf]] = {}
        for c in self.children:
            if isinstance(c, Leaf) and (key := c._set_member_key(table)) is not None:
                members.setdefault(key, []).append(c)
            else:
                masks.append(c.row_mask(table))
        for leaves in members.values():
            if len(leaves) == 1:
                masks.append(leaves[0].row_mask(table))
                continue
            values = list(dict.fromkeys(v for leaf in leaves for v in leaf.literals if v is not None))
            vals, at = arrow_values(values, leaves[0].type)
            column = table.column(leaves[0].column)
            value_set = pa.array(vals, type=at)
            if value_set.type != column.type:  # another variant of the same text type (large, view)
                value_set = value_set.cast(column.type)
            masks.append(pc.is_in(column, value_set=value_set))
        return _combine("or_kleene", masks)

    def might_match(self, stats: Mapping[str, ColumnStats]) -> bool:
        return any(c.might_match(stats) for c in self.children)

    def rename(self, mapping: Mapping[str, str]) -> Predicate:
        return Or(tuple(c.rename(mapping) for c in self.children))

    def _equal_values(self, column: str) -> list[Any] | None:
        out: dict[Any, None] = {}  # ordered, and linear however many children
        for c in self.children:
            vals = c._equal_values(column)
            if vals is None:
                return None
            out.update(dict.fromkeys(vals))
        return list(out)

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
            return [self.literal] if literal_fits(self.literal, self.type) else []
        if self.op == "in":
            return [v for v in dict.fromkeys(self.literals) if v is not None and literal_fits(v, self.type)]
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
            vals, at = arrow_values(values, self.type)
            arr = pa.array(vals, type=at)
            if op == "in":
                return f.isin(arr) if values else pc.scalar(False)
            if len(values) != len(self.literals):  # NOT IN (.., NULL, ..) is never true
                return pc.scalar(False)
            return f.is_valid() & ~f.isin(arr)
        (val,), at = arrow_values([self.literal], self.type)
        lit = pa.scalar(val, type=at)
        return {"=": f == lit, "<>": f != lit, "<": f < lit, "<=": f <= lit, ">": f > lit, ">=": f >= lit}[op]

    def row_mask(self, table: pa.Table) -> pa.ChunkedArray:
        import pyarrow as pa
        import pyarrow.compute as pc

        col = table.column(self.column)
        op = self.op
        if op == "is null":
            return pc.is_null(col)
        if op == "is not null":
            return pc.is_valid(col)
        if op in ("in", "not in"):
            values = [v for v in self.literals if v is not None]
            if op == "in" and not values:
                return Constant(False).row_mask(table)
            if op == "not in" and len(values) != len(self.literals):  # NOT IN (.., NULL, ..) is never true
                return Constant(False).row_mask(table)
            vals, at = arrow_values(values, self.type)
            found = pc.is_in(col, value_set=pa.array(vals, type=at))
            return found if op == "in" else pc.and_kleene(pc.is_valid(col), pc.invert(found))
        (val,), at = arrow_values([self.literal], self.type)
        compare = {"=": pc.equal, "<>": pc.not_equal, "<": pc.less, "<=": pc.less_equal,
                   ">": pc.greater, ">=": pc.greater_equal}[op]
        return compare(col, pa.scalar(val, type=at))

    def _set_member_key(self, table: pa.Table) -> tuple[str, str] | None:
        """(column, literal type) when this leaf is an equality an OR may merge into one
        ``is_in``: its literals are exact values of the column and their Arrow type is the
        column's own, so the set lookup compares exactly what ``=`` would."""
        import pyarrow as pa

        if self.op not in ("=", "in") or not all(v is None or literal_fits(v, self.type) for v in self.literals):
            return None
        values = [v for v in self.literals if v is not None]
        if not values:
            return None
        _, at = arrow_values(values, self.type)
        if pa.types.is_floating(at):  # a set lookup finds NaN, ``=`` never matches it
            return None
        column_type = table.schema.field(self.column).type
        if at != column_type and (_text_family(at) is None or _text_family(at) != _text_family(column_type)):
            return None
        return self.column, str(at)

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
            return f"{name} {self.op.upper()} ({', '.join(sql_literal(v) for v in self.literals)})"
        return f"{name} {self.op} {sql_literal(self.literal)}"


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


def _combine(function: str, masks: list[pa.ChunkedArray]) -> pa.ChunkedArray:
    """``masks`` folded with ``and_kleene`` / ``or_kleene``: one kernel call per mask."""
    import pyarrow.compute as pc

    out = masks[0]
    for m in masks[1:]:
        out = pc.call_function(function, [out, m])
    return out


def _text_family(t: pa.DataType) -> str | None:
    """"string" / "binary" for Arrow's variants of each (plain, large, view), else None."""
    import pyarrow as pa

    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return "string"
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return "binary"
    return None
