"""Where pyarrow's reader failed in a text input: the 1-based row and the column, as every
other input error names them (``rows.jsonl: row 7, column 'amount': ...``).

pyarrow's JSON reader says ``Failed to convert JSON to decimal128(38, 30)`` or ``Column(/x)
changed from string to number in row 1`` (a row of its block, not of the file). On that error
path only, the chunk is bisected with the same reader to the first line that fails, and that
line is read again without each explicitly typed column to find the column.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput

if TYPE_CHECKING:
    import pyarrow as pa

_COLUMN = re.compile(r"Column\(/([^)/]+)\)")


def _first_failing_line(lines: list[bytes], fails: Callable[[bytes], bool]) -> int | None:
    """Index of the line whose prefix first makes ``fails`` true (None: no prefix fails)."""
    lo, hi = 1, len(lines)
    if not fails(b"".join(lines)):
        return None
    while lo < hi:  # smallest prefix length that fails
        mid = (lo + hi) // 2
        if fails(b"".join(lines[:mid])):
            hi = mid
        else:
            lo = mid + 1
    return lo - 1


def json_error(chunk: bytes, source: str, rows_before: int, explicit: pa.Schema,
               sql_types: Mapping[str, str], exc: Exception) -> InvalidInput:
    """The error for a chunk pyarrow could not read: row, column, value and pyarrow's reason."""
    import json
    from decimal import Decimal

    import pyarrow as pa
    import pyarrow.json as pj

    def read(data: bytes, schema: pa.Schema) -> Any:
        opts = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
        return pj.read_json(pa.py_buffer(data), read_options=pj.ReadOptions(block_size=max(len(data) + 1, 1 << 20)),
                            parse_options=opts)

    def fails(data: bytes, schema: pa.Schema = explicit) -> bool:
        try:
            read(data, schema)
        except pa.ArrowException:
            return True
        return False

    reason = " ".join(str(exc).split())
    lines = chunk.splitlines(keepends=True)
    i = _first_failing_line(lines, fails)
    if i is None:
        return InvalidInput(f"{source}: JSON after row {rows_before}: {reason}")
    row = rows_before + sum(1 for line in lines[:i] if line.strip()) + 1
    column = None
    if fails(lines[i]):  # the line itself does not convert: find the typed column that fails it
        column = next((name for name in explicit.names
                       if not fails(lines[i], pa.schema([g for g in explicit if g.name != name]))), None)
    if column is None:  # a value of another JSON type than in the lines before it
        named = _COLUMN.search(reason)
        column = named.group(1) if named else None
    if column is None:
        return InvalidInput(f"{source}: row {row}: {reason}")
    try:
        value: Any = json.loads(lines[i], parse_float=Decimal).get(column)
    except (ValueError, AttributeError):
        value = None
    shown = repr(value) if isinstance(value, str) else str(value) if isinstance(value, Decimal) else json.dumps(value)
    what = f"cannot be stored as {sql_types[column]}" if column in sql_types else "cannot be read"
    return InvalidInput(f"{source}: row {row}, column {column!r}: value {shown} {what} ({reason})")


def csv_row_error(chunk: bytes, text: str, has_header: bool, rows_before: int, source: str,
                  exc: Exception) -> InvalidInput:
    """A CSV row with another number of fields than the header: pyarrow quotes its text, not
    its number, so the row is found by its text among the chunk's non-blank lines."""
    reason = " ".join(str(exc).split())
    lines = [line for line in chunk.decode("utf-8", "replace").splitlines() if line.strip()]
    if has_header:
        lines = lines[1:]
    try:
        row = rows_before + lines.index(text) + 1
    except ValueError:
        return InvalidInput(f"{source}: CSV data after row {rows_before}: {reason}")
    return InvalidInput(f"{source}: row {row}: {reason}")
