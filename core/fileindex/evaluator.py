"""Can a data file hold rows matching a predicate? Answered from its file-index container.

Mirrors Java's ``FileIndexPredicate``: a leaf is tested against every index of its column
(results AND-ed), And/Or combine children. A result is ``True`` (cannot tell, keep the
file), ``False`` (no row can match) or a ``BitMap`` of candidate rows (bitmap / BSI), so
``a = 1 AND b = 2`` over two bitmap columns prunes a file when the row sets do not meet.

Soundness rules beyond Java's (an index must never hide a matching row):

* an index is used only when the file's column has the same type as the table's column
  now (a type change since the file was written makes the stored keys incomparable);
* a literal that no stored value can equal exactly (``values.literal_key`` -> None) keeps
  the file;
* float/double equality tests both 0.0 and -0.0 (SQL equal, different bit patterns);
* ``NOT IN`` / ``<>`` keep NULL rows as candidates (Java's flip), which is conservative.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import TYPE_CHECKING, Any

from ..data.predicate import And, Constant, Leaf, Or, Predicate
from ..schema.file_index_options import BITMAP, BLOOM_FILTER, BSI
from .bitmap import BitmapReader
from .bloom import BloomFilterReader
from .bsi import BsiReader
from .format import FileIndexContainer, IndexEntry
from .values import DOUBLE, FLOAT, kind_of, literal_key

if TYPE_CHECKING:
    from ..data.types import DataField, DataType

Result = Any  # True | False | pyroaring.BitMap


def _and(a: Result, b: Result) -> Result:
    if a is False or b is False:
        return False
    if a is True:
        return b
    if b is True:
        return a
    r = a & b
    return r if len(r) else False


def _or(a: Result, b: Result) -> Result:
    if a is True or b is True:
        return True
    if a is False:
        return b
    if b is False:
        return a
    return a | b


def remains(r: Result) -> bool:
    return r is True or (r is not False and len(r) > 0)


def _plain(t: DataType) -> str:
    return t.as_sql().replace(" NOT NULL", "")


def _keys(literals: Collection[Any], t: DataType) -> list[Any] | None:
    """Index keys of literals (NULL literals dropped); None if one is not exactly representable."""
    out = []
    k = kind_of(t)
    for v in literals:
        if v is None:
            continue
        key = literal_key(v, t)
        if key is None:
            return None
        out.append(key)
        if k in (FLOAT, DOUBLE) and key == 0.0:
            out += [0.0, -0.0]  # equal in SQL, different bit patterns in the index
    return out


class _Readers:
    """Lazily parsed readers of one container's entries."""

    def __init__(self, container: FileIndexContainer) -> None:
        self.container = container
        self.cache: dict[tuple[str, str], Any] = {}

    def get(self, e: IndexEntry, t: DataType) -> Any:
        key = (e.column, e.index_type)
        r = self.cache.get(key)
        if r is None:
            payload = self.container.payload(e)
            if payload is None:
                r = False  # an empty index entry: nothing to test with -> treated as unknown below
            elif e.index_type == BLOOM_FILTER:
                r = BloomFilterReader(payload)
            elif e.index_type == BITMAP:
                r = BitmapReader(payload, t)
            elif e.index_type == BSI:
                r = BsiReader(payload)
            else:
                r = False
            self.cache[key] = r
        return r


def _leaf(op: str, literals: tuple[Any, ...], t: DataType, index_type: str, reader: Any) -> Result:
    if reader is False:
        return True
    if index_type == BLOOM_FILTER:
        if op not in ("=", "in"):
            return True
        keys = _keys(literals, t)
        if keys is None:
            return True
        kind = kind_of(t)
        return any(reader.might_contain(k, kind) for k in keys)
    if index_type == BITMAP:
        if op in ("is null", "is not null"):
            nulls = reader.rows_equal(None)
            return nulls if op == "is null" else reader.all_rows() - nulls
        if op not in ("=", "in", "<>", "not in"):
            return True
        if op == "not in" and any(v is None for v in literals):
            return True
        keys = _keys(literals, t)
        if keys is None:
            return True
        rows = reader.rows_in(keys)
        return rows if op in ("=", "in") else reader.all_rows() - rows
    if index_type == BSI:
        if op == "is null":
            return _all(reader.row_count) - reader.not_null()
        if op == "is not null":
            return reader.not_null()
        if op == "not in" and any(v is None for v in literals):
            return True
        keys = _keys(literals, t)
        if keys is None:
            return True
        if op in ("=", "<", "<=", ">", ">="):
            if not keys:
                return True
            return reader.rows(op, int(keys[0]))
        if op in ("in", "<>", "not in"):
            import pyroaring

            eq = pyroaring.BitMap()
            for k in keys:
                eq |= reader.rows("=", int(k))
            return eq if op == "in" else reader.not_null() - eq
        return True
    return True


def _all(n: int) -> Any:
    import pyroaring

    return pyroaring.BitMap(range(n))


def evaluate(
    container: FileIndexContainer,
    predicate: Predicate,
    file_fields: Mapping[str, DataField],
    name_in_file: Callable[[str], str | None],
    types: Collection[str] | None = None,
) -> Result:
    """Test ``predicate`` (over the table's current column names) against one file's indexes.

    ``name_in_file`` maps a current column name to the column's name in the file's schema
    (by field id; None if the file predates the column); ``file_fields`` are the file
    schema's fields by name. ``types`` restricts the index types used (explain attribution).
    """
    readers = _Readers(container)

    def visit(p: Predicate) -> Result:
        if isinstance(p, Constant):
            return True if p.value else False
        if isinstance(p, And):
            r: Result = True
            for c in p.children:
                r = _and(r, visit(c))
                if r is False:
                    return False
            return r
        if isinstance(p, Or):
            r = False
            for c in p.children:
                r = _or(r, visit(c))
                if r is True:
                    return True
            return r
        if isinstance(p, Leaf):
            fname = name_in_file(p.column)
            if fname is None:
                return True
            ff = file_fields.get(fname)
            if ff is None or _plain(ff.type) != _plain(p.type):
                return True
            r = True
            for e in container.column_entries(fname):
                if types is not None and e.index_type not in types:
                    continue
                try:
                    reader = readers.get(e, ff.type)
                    r = _and(r, _leaf(p.op, p.literals, ff.type, e.index_type, reader))
                except (ValueError, IndexError, KeyError, OverflowError):
                    continue  # an index we cannot parse never prunes
                if r is False:
                    return False
            return r
        return True

    return visit(predicate)


INDEX_KINDS = (BLOOM_FILTER, BITMAP, BSI)

# the operators each kind decides in :func:`_leaf` (any other condition keeps every file)
DECIDES: dict[str, frozenset[str]] = {
    BLOOM_FILTER: frozenset({"=", "in"}),
    BITMAP: frozenset({"=", "in", "<>", "not in", "is null", "is not null"}),
    BSI: frozenset({"=", "in", "<>", "not in", "is null", "is not null", "<", "<=", ">", ">="}),
}
DECIDES_TEXT = {BLOOM_FILTER: "= and IN", BITMAP: "=, <>, IN, NOT IN and IS [NOT] NULL",
                BSI: "comparisons, IN, NOT IN and IS [NOT] NULL"}


def decidable_columns(predicate: Predicate, kind: str) -> set[str]:
    """The columns of ``predicate``'s conditions an index of ``kind`` can decide."""
    if isinstance(predicate, Leaf):
        return {predicate.column} if predicate.op in DECIDES[kind] else set()
    if isinstance(predicate, (And, Or)):
        return set().union(*(decidable_columns(c, kind) for c in predicate.children))
    return set()
