"""Input files for ``write``: Parquet, CSV, JSON/JSONL and Arrow IPC, as checked Arrow chunks.

A write must never store a value the user did not give, so every column is converted to the
table's Arrow type with *checked* casts (overflow, lost decimal digits, lost timestamp
precision, unparsable text, strings longer than CHAR/VARCHAR(n), NULL into NOT NULL) and the
first bad value is reported with its file, 1-based row number and column. Conversion is
vectorised (pyarrow.compute); the row of a failure is located by bisecting the failing
column, which touches each value O(1) times, only on the error path.

Inputs are read in bounded pieces (Parquet row batches, streaming CSV, JSON lines in byte
chunks, Arrow record batches) so a large file never has to fit in memory. Text formats are
read as text for every column with a table type whose spelling matters (strings, dates,
times, timestamps, decimals) so that e.g. ``"007"`` stays ``"007"`` in a STRING column.

Files and formats: :mod:`.input_files`; raw readers per format: :mod:`.input_readers`; checked
casts: :mod:`.input_convert`. This module plans a write's columns and row kinds and runs the three.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, cast

from ..data.types import CharType, VarCharType
from ..errors import InvalidInput
from .arrow_schema import arrow_schema, arrow_type
from .input_convert import BadValue, convert_column, display_value, first_true, is_string_type
from .input_files import STDIN, InputFile, expand_inputs, open_input
from .input_readers import InputColumns, read_arrow, read_csv, read_json, read_parquet, text_read_type

if TYPE_CHECKING:
    import pyarrow as pa

    from ..schema.table_schema import TableSchema

ROW_KIND_NAMES = ("+I", "-U", "+U", "-D")  # index = RowKind byte


@dataclass
class InputChunk:
    """One piece of input, converted: the table's columns in schema order and Arrow types."""

    data: pa.Table
    row_kinds: pa.Array | None  # int8 RowKind bytes (0 +I, 1 -U, 2 +U, 3 -D); None = all +I
    source: str  # file path, or "-" for stdin
    first_row: int  # 1-based row number of data's first row within source


# ---------------------------------------------------------------------------------------
# Chunks of one file -> InputChunk
# ---------------------------------------------------------------------------------------


@dataclass
class _Plan:
    """What to do with input columns, decided once per write from the table schema."""

    schema: TableSchema
    row_kind_column: str | None  # input column holding +I/-U/+U/-D
    row_kind_is_table_column: bool
    delete: bool
    not_null: set[str]
    key_columns: set[str]
    constants: dict[str, str | None] = field(default_factory=dict)  # values for columns the input lacks

    @property
    def wanted(self) -> InputColumns:
        return InputColumns(list(self.schema.field_names), self.row_kind_column)

    def read_types(self, all_text: bool = False) -> dict[str, pa.DataType]:
        """Read types for text inputs; ``all_text`` (CSV) reads every atomic column as text so
        that a bad value anywhere is reported by the checked cast with its exact row."""
        import pyarrow as pa

        out: dict[str, pa.DataType] = {}
        for f in self.schema.fields:
            t = text_read_type(f.type)
            if all_text and f.type.is_atomic:
                t = pa.string()
            if t is not None:
                out[f.name] = t
        if self.row_kind_column and not self.row_kind_is_table_column:
            out[self.row_kind_column] = pa.string()
        return out


def make_plan(
    schema: TableSchema,
    row_kind_column: str | None = None,
    delete: bool = False,
    constants: dict[str, Any] | None = None,
) -> _Plan:
    """Validate the row-kind settings against the table (before any input is read).

    ``constants`` fill columns the input lacks (a static partition being overwritten).
    """
    names = set(schema.field_names)
    option_col = schema.core_options.rowkind_field
    if delete and row_kind_column:
        raise InvalidInput("give either --delete or --row-kind-column, not both")
    col = row_kind_column or (None if delete else option_col)
    if option_col and option_col not in names:
        raise InvalidInput(f"table option rowkind.field names {option_col!r}, which is not a column")
    is_table_col = bool(col) and col in names
    if col and is_table_col:
        t = schema.field(col).type
        if not isinstance(t, (CharType, VarCharType)):
            raise InvalidInput(f"row-kind column {col!r} must be a string column, not {t.as_sql()}")
    not_null = {f.name for f in schema.fields if not f.type.nullable}
    keys = set(schema.primary_keys)
    consts = {k: (None if v is None else str(v)) for k, v in (constants or {}).items()}
    for k in consts:
        if k not in names:
            raise InvalidInput(f"{k!r} is not a column of the table")
    return _Plan(schema, col, is_table_col, delete, not_null | keys, keys, consts)


def row_kinds_of(arr: pa.Array, source: str, first_row: int, column: str) -> pa.Array:
    """``+I/-U/+U/-D`` text (or 0..3 integers) to int8 RowKind bytes; anything else is refused."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks()
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if pa.types.is_integer(arr.type):
        kinds = arr
        bad = pc.or_kleene(pc.is_null(arr), pc.or_(pc.less(arr, 0), pc.greater(arr, 3)))
    else:
        text = arr if is_string_type(arr.type) else pc.cast(arr, pa.string())
        kinds = pc.index_in(pc.utf8_trim_whitespace(text), value_set=pa.array(ROW_KIND_NAMES))
        bad = pc.is_null(kinds)
    if pc.any(pc.fill_null(bad, True)).as_py():
        i = first_true(pc.fill_null(bad, True))
        raise InvalidInput(
            f"{source}: row {first_row + i}, column {column!r}: row kind {display_value(arr, i)} "
            f"is not one of {', '.join(ROW_KIND_NAMES)}"
        )
    return pc.cast(kinds, pa.int8())


def conform(table: pa.Table, plan: _Plan, source: str, first_row: int) -> InputChunk:
    """One raw piece of input -> the table's columns with checked types and row kinds."""
    import pyarrow as pa
    import pyarrow.compute as pc

    schema = plan.schema
    n = table.num_rows
    present = set(table.column_names)
    kinds: pa.Array | None = None
    if plan.delete:
        kinds = pc.fill_null(pa.nulls(n, pa.int8()), 3)
    elif plan.row_kind_column:
        if plan.row_kind_column not in present:
            raise InvalidInput(f"{source}: row-kind column {plan.row_kind_column!r} is missing")
        kinds = row_kinds_of(table.column(plan.row_kind_column), source, first_row, plan.row_kind_column)
    arrays = []
    for f in schema.fields:
        if f.name not in present and f.name in plan.constants:
            try:
                one = convert_column(pa.array([plan.constants[f.name]], pa.string()), f.type)
            except BadValue as e:
                raise InvalidInput(f"partition value for column {f.name!r}: {e.message}") from None
            col = one.take(_zeros(n))
            if f.name in plan.not_null and col.null_count:
                raise InvalidInput(f"partition value for NOT NULL column {f.name!r} cannot be NULL")
            arrays.append(col)
            continue
        if f.name not in present:
            if f.name in plan.not_null:
                what = "primary-key" if f.name in plan.key_columns else "NOT NULL"
                raise InvalidInput(f"{source}: input has no column {f.name!r}, a {what} column of the table")
            arrays.append(pa.nulls(n, arrow_type(f.type)))
            continue
        try:
            col = convert_column(table.column(f.name), f.type)
        except BadValue as e:
            where = f"row {first_row + e.index}, " if e.index >= 0 else ""
            raise InvalidInput(f"{source}: {where}column {f.name!r}: {e.message}") from None
        if f.name in plan.not_null and col.null_count:
            i = first_true(pc.is_null(col))
            what = "primary-key" if f.name in plan.key_columns else "NOT NULL"
            raise InvalidInput(f"{source}: row {first_row + i}, column {f.name!r}: NULL in {what} column")
        arrays.append(col)
    data = pa.Table.from_arrays(arrays, schema=_plain_schema(schema))
    return InputChunk(data, kinds, source, first_row)


def _zeros(n: int) -> pa.Array:
    import numpy as np
    import pyarrow as pa

    return pa.array(np.zeros(n, dtype=np.int64))


def _plain_schema(schema: TableSchema) -> pa.Schema:
    """Arrow schema of the table's columns (field ids included, nullability from the types)."""
    return arrow_schema(list(schema.fields))


# ---------------------------------------------------------------------------------------
# Entry point
# ---------------------------------------------------------------------------------------


def read_inputs(
    inputs: Iterable[str] | list[InputFile],
    schema: TableSchema,
    fmt: str | None = None,
    row_kind_column: str | None = None,
    delete: bool = False,
    storage_options: dict[str, Any] | None = None,
    stdin: IO[bytes] | None = None,
    constants: dict[str, Any] | None = None,
) -> Iterator[InputChunk]:
    """Every input as checked chunks, file by file, in bounded memory.

    ``inputs``: paths, globs, directories or ``-`` (stdin; ``stdin`` overrides the stream).
    Raises InvalidInput naming the file, row and column of the first bad value.
    """
    plan = make_plan(schema, row_kind_column, delete, constants)
    items = list(inputs)
    if items and isinstance(items[0], InputFile):
        files = cast("list[InputFile]", items)
    else:
        files = expand_inputs(cast("list[str]", items), fmt, storage_options)
    for f in files:
        yield from read_file(f, plan, stdin)


def read_file(f: InputFile, plan: _Plan, stdin: IO[bytes] | None = None) -> Iterator[InputChunk]:
    stream, fmt = open_input(f, stdin)
    try:
        wanted = plan.wanted
        if fmt == "parquet":
            raw = read_parquet(stream, f.path, wanted)
        elif fmt == "arrow":
            raw = read_arrow(stream, f.path, wanted)
        elif fmt == "csv":
            raw = read_csv(stream, f.path, wanted, plan.read_types(all_text=True))
        else:
            raw = read_json(stream, f.path, wanted, plan.read_types(), {c.name: c.type.as_sql() for c in plan.schema.fields})
        row = 1
        for t in raw:
            if t.num_rows == 0:
                continue
            yield conform(t, plan, f.path, row)
            row += t.num_rows
    finally:
        if f.path != STDIN:
            try:
                stream.close()
            except Exception:  # noqa: BLE001 - closing a read stream
                pass
