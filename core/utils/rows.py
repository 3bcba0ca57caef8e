"""A tabular result: what a system table, a dry-run plan or a command report returns.

A leaf, so every room can return one; rendering (table, JSON, CSV) is the CLI's business.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .values import FACTORY, Value

if TYPE_CHECKING:
    import pyarrow as pa


class JavaText(str):
    """A value shown as Java's system tables print it (text tables, csv, comparisons with
    Java) that carries the value itself, ``typed``, for JSON output: a partition as
    ``{column: value}``, stats keyed by column, a schema's fields as a list. One source: both
    are made together from the decoded value."""

    typed: Any

    def __new__(cls, text: str, typed: Any) -> JavaText:
        self = super().__new__(cls, text)
        self.typed = typed
        return self

    def __reduce__(self) -> Any:
        return (JavaText, (str(self), self.typed))


class Rows(Value):
    """Ordered column names and one dict per row; ``brief`` names the columns that matter
    most (what a terminal shows by default; None: all). Two more hints for a person's
    terminal, which machine formats ignore: ``root``, the table directory, under which a
    terminal shows paths relative to it; ``wrap``, columns of prose a terminal may wrap
    between words to keep a table within its width."""

    columns: list[str]
    rows: list[dict[str, Any]]
    brief: list[str] | None
    root: str | None
    wrap: list[str] | None
    FIELDS = __match_args__ = ("columns", "rows", "brief", "root", "wrap")

    def __init__(self, columns: list[str], rows: list[dict[str, Any]] = FACTORY, brief: list[str] | None = None,
                 root: str | None = None, wrap: list[str] | None = None) -> None:
        self.columns = columns
        self.rows = [] if rows is FACTORY else rows
        self.brief = brief
        self.root = root
        self.wrap = wrap

    def to_arrow(self) -> pa.Table:
        """The rows as an Arrow table, for library callers that go on in Arrow or pandas.

        Column types are inferred from the values (all-NULL or empty columns are of Arrow's
        null type); a column mixing types (``inspect table``'s values) becomes strings.
        """
        import pyarrow as pa

        def column(values: list[Any]) -> pa.Array:
            try:
                return pa.array(values)
            except (pa.ArrowInvalid, pa.ArrowTypeError):
                return pa.array([None if v is None else str(v) for v in values], pa.string())

        return pa.table({c: column([r.get(c) for r in self.rows]) for c in self.columns})


class Picked(Value):
    """A column of Python values, row ``i`` being ``values[index[i]]`` (``index`` None:
    ``values[i]``): values computed once per distinct input and spread by index."""

    values: list[Any]
    index: Any  # numpy integer array
    FIELDS = __match_args__ = ("values", "index")

    def __init__(self, values: list[Any], index: Any = None) -> None:
        self.values = values
        self.index = index


class Composite(Value):
    """A column of maps (``keys``, in order) or of lists (``keys`` None) held by parts, one
    column per key or list position (a ``pa.Array`` or :class:`Picked`): what the ``typed``
    values of a :class:`JavaText` column are, kept columnar so JSON is rendered vectorised.
    ``valid``: numpy booleans, False where the row's value is None (None: every row has one)."""

    keys: list[str] | None
    parts: list[Any]
    length: int
    valid: Any
    FIELDS = __match_args__ = ("keys", "parts", "length", "valid")

    def __init__(self, keys: list[str] | None, parts: list[Any], length: int, valid: Any = None) -> None:
        self.keys = keys
        self.parts = parts
        self.length = length
        self.valid = valid


@dataclass
class RowStream:
    """A result too large to hold at once (``inspect files`` of a million files): its column
    names, and ``chunks(columns, typed)`` yielding rows with only those columns, a chunk at a
    time, so a pipe gets the first rows at once and memory stays bounded. Columns not asked
    for are never computed (the stats of a file are most of its cost); ``typed=True`` gives
    what would be a :class:`JavaText` as its ``typed`` value only (JSON needs no Java text)."""

    columns: list[str]
    chunks: Callable[[list[str], bool], Iterator[list[dict[str, Any]]]]
    brief: list[str] | None = None
    root: str | None = None  # as Rows.root
    # the chunks as columns, rows the same as ``chunks(columns, typed)``: name -> pa.Array,
    # Picked or (typed) Composite; renderers turn them into text vectorised. A third argument
    # ``merge=True`` lets a chunk span what would be several (a renderer whose text does not
    # depend on where chunks end: fewer, larger Arrow calls)
    column_chunks: Callable[..., Iterator[dict[str, Any]]] | None = None

    def collect(self, columns: list[str] | None = None, limit: int | None = None) -> Rows:
        """The stream as Rows (at most ``limit`` rows; reading stops there)."""
        cols = list(self.columns) if columns is None else columns
        rows: list[dict[str, Any]] = []
        if limit is not None and limit <= 0:
            return Rows(cols, rows, self.brief, self.root)
        chunks = self.chunks(cols, False)
        try:
            for chunk in chunks:
                rows += chunk
                if limit is not None and len(rows) >= limit:
                    del rows[limit:]
                    break
        finally:
            getattr(chunks, "close", lambda: None)()  # a generator's manifests close now
        return Rows(cols, rows, self.brief, self.root)


__all__ = ["Composite", "JavaText", "Picked", "RowStream", "Rows"]
