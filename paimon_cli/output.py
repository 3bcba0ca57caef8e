"""One renderer for every command's output: ``table``, ``json``, ``jsonl`` and ``csv`` of Rows,
(``read``'s record batches and ``read --to`` files: :mod:`.record_batches`).

stdout carries only data; notes go to stderr. Value conventions (also in README "Output
formats"), chosen so that machine formats are exact and stable:

* ``datetime``: an instant (aware; commit and update times) -> ISO-8601 in UTC,
  ``"YYYY-MM-DDTHH:MM:SS.fff+00:00"`` (the same text under any ``TZ``); a wall clock
  (naive; file creation times, which Paimon stores without a zone) ->
  ``"YYYY-MM-DD HH:MM:SS.fff"``. Millisecond precision, like Paimon's TIMESTAMP(3)
  system-table columns. ``date`` -> ``"YYYY-MM-DD"``; ``time`` -> ``"HH:MM:SS.fff"``.
* ``JavaText`` (``core.utils.rows``: partitions, stats, schema fields, keys) -> its typed
  value in json/jsonl (``{"dt": "2024-05-04"}``), Java's text in csv and text tables.
* ``Decimal`` -> a JSON *string* (exact; JSON numbers are doubles for many readers).
* ``bytes`` -> lowercase hex without prefix.
* NaN / infinities -> the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.
* ``list`` / ``dict`` -> nested JSON in json/jsonl, compact JSON text in csv and table cells.
* ``None`` -> ``null`` (json), empty field (csv), ``null`` (table).
* ``bool`` -> ``true`` / ``false`` in every format.
"""

from __future__ import annotations

import datetime as _dt
import math
import sys
from collections.abc import Collection, Iterator, Sequence
from decimal import Decimal
from enum import Enum
from typing import IO, TYPE_CHECKING, Any, Protocol

from . import terminal
from .core.utils.rows import JavaText
from .terminal_table import TERMINAL_ROWS, chosen_columns, is_numeric, more_rows_note, render_terminal

if TYPE_CHECKING:
    import pyarrow as pa


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


class RowsLike(Protocol):
    """What the renderer needs; ``paimon_cli.core.utils.rows.Rows`` is the concrete type."""

    columns: list[str]
    rows: list[dict[str, Any]]
    brief: list[str] | None


# -- value conversion -----------------------------------------------------------------------


def _fmt_datetime(v: _dt.datetime) -> str:
    if v.utcoffset() is not None:
        return v.astimezone(_dt.timezone.utc).isoformat(timespec="milliseconds")
    return v.strftime("%Y-%m-%d %H:%M:%S") + f".{v.microsecond // 1000:03d}"


def to_json_value(v: Any) -> Any:
    """A value as it appears inside JSON output (see module docstring)."""
    if isinstance(v, JavaText):  # a duration keeps Java's ISO-8601 text (PT168H)
        return str.__str__(v) if isinstance(v.typed, _dt.timedelta) else to_json_value(v.typed)
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, _dt.datetime):
        return _fmt_datetime(v)
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, _dt.time):
        return v.strftime("%H:%M:%S") + f".{v.microsecond // 1000:03d}"
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return {str(k): to_json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [to_json_value(x) for x in v]
    if isinstance(v, Enum):
        return to_json_value(v.value)
    return str(v)


def to_text(v: Any, null: str = "null") -> str:
    """A value as one table cell / csv field."""
    if v is None:
        return null
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, JavaText):
        return str.__str__(v)
    j = to_json_value(v)
    if isinstance(j, (dict, list)):
        import json

        return json.dumps(j, ensure_ascii=False, separators=(",", ":"))
    return str(j)


# -- renderers --------------------------------------------------------------------------------


def _records(rows: RowsLike) -> list[dict[str, Any]]:
    return [{c: to_json_value(r.get(c)) for c in rows.columns} for r in rows.rows]


class JsonWriter:
    """JSON Lines, or one JSON array laid out as ``json.dumps(records, indent=2)``, written a
    piece at a time: what ``-o json|jsonl`` prints for Rows and for ``read``'s streamed batches.

    Pieces are record texts: ``{..}\\n`` each for lines, ``,\\n  {..}`` each inside the array.
    """

    def __init__(self, out: IO[str], lines: bool) -> None:
        import json

        self.out = out
        self.lines = lines
        self.count = 0
        self.compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
        self.pretty = json.JSONEncoder(ensure_ascii=False, indent=2).encode
        if not lines:
            out.write("[")

    def write_records(self, records: Sequence[dict[str, Any]]) -> None:
        """Records of JSON-ready values (see :func:`to_json_value`)."""
        if self.lines:
            text = "".join(self.compact(r) + "\n" for r in records)
        else:
            text = "".join(",\n  " + self.pretty(r).replace("\n", "\n  ") for r in records)
        self.write_text(text, len(records))

    def write_text(self, text: str, count: int) -> None:
        """``count`` records already rendered as pieces."""
        if count:
            self.out.write(text if self.lines or self.count else text[1:])  # the array's first has no comma
            self.count += count

    def write_utf8(self, data: Any, count: int) -> None:
        """:meth:`write_text` of pieces given as UTF-8 bytes (any buffer): written to the
        stream's byte layer as they are when the stream would encode them to the same bytes,
        so tens of MB of records are not decoded only to be encoded again."""
        if not count:
            return
        view = memoryview(data)
        if not self.lines and not self.count:
            view = view[1:]  # the array's first has no comma (one byte)
        raw = _utf8_bytes_layer(self.out)
        if raw is None:
            self.out.write(bytes(view).decode("utf-8"))
        else:
            self.out.flush()
            raw.write(view)
        self.count += count

    def close(self) -> None:
        if not self.lines:
            self.out.write("\n]\n" if self.count else "]\n")


def _utf8_bytes_layer(out: IO[str]) -> Any:
    """The byte stream under a text stream that writes text as UTF-8 without changing it
    (no newline translation), or None (a StringIO, another encoding, Windows newlines)."""
    import codecs
    import os

    raw = getattr(out, "buffer", None)
    encoding = getattr(out, "encoding", None)
    if raw is None or not isinstance(encoding, str) or os.linesep != "\n":
        return None
    try:
        return raw if codecs.lookup(encoding).name == "utf-8" else None
    except LookupError:
        return None


def render_json(rows: RowsLike, out: IO[str]) -> None:
    w = JsonWriter(out, lines=False)
    w.write_records(_records(rows))
    w.close()


def render_jsonl(rows: RowsLike, out: IO[str]) -> None:
    w = JsonWriter(out, lines=True)
    w.write_records(_records(rows))
    w.close()


def render_csv(rows: RowsLike, out: IO[str]) -> None:
    import csv

    w = csv.writer(out, lineterminator="\n")
    w.writerow(rows.columns)
    _write_csv_rows(w, rows.columns, rows.rows)


def _write_csv_rows(w: Any, columns: list[str], rows: Sequence[dict[str, Any]]) -> None:
    for r in rows:
        w.writerow([to_text(r.get(c), null="") for c in columns])


def render_plain(rows: RowsLike, out: IO[str], numeric: Collection[str] = ()) -> None:
    """An aligned text table for pipes and files: never truncated, numbers right-aligned
    (``numeric``: columns that are numbers whatever their values, a decimal read as text)."""
    w = PlainWriter(out, rows.columns, numeric)
    w.write_rows(rows.rows)


class PlainWriter:
    """The aligned text table, written a block of rows at a time. The first block sets the
    header's widths and which columns align right; a later, wider value widens its column
    from there on (earlier lines are already out), so a pipe gets rows as they are read."""

    def __init__(self, out: IO[str], columns: list[str], numeric: Collection[str] = ()) -> None:
        self.out = out
        self.columns = columns
        self.numeric = numeric
        self.widths: list[int] | None = None
        self.right: list[bool] = []

    def write_rows(self, rows: Sequence[dict[str, Any]]) -> None:
        cols = self.columns
        cells = [[to_text(r.get(c)).replace("\n", "\\n") for c in cols] for r in rows]
        self._write(cells, lambda: [c in self.numeric or is_numeric([r.get(c) for r in rows]) for c in cols])

    def write_cells(self, columns: list[list[str]], numbers: list[bool]) -> None:
        """A block given as each column's cell texts; ``numbers``: the columns whose values
        are all numbers (:func:`is_numeric`), aligned right if this is the first block."""
        self._write([list(row) for row in zip(*columns, strict=True)],
                    lambda: [c in self.numeric or n for c, n in zip(self.columns, numbers, strict=True)])

    def _write(self, cells: list[list[str]], right: Any) -> None:
        cols = self.columns
        widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
        lines = []
        if self.widths is None:
            self.right = right()
            self.widths = widths
            lines.append(self._line(list(cols)))
            lines.append("  ".join("-" * w for w in widths))
        else:
            self.widths = [max(a, b) for a, b in zip(self.widths, widths, strict=True)]
        lines += [self._line(row) for row in cells]
        self.out.write("".join(line + "\n" for line in lines))

    def _line(self, values: list[str]) -> str:
        assert self.widths is not None
        parts = [v.rjust(w) if rj else v.ljust(w) for v, w, rj in zip(values, self.widths, self.right, strict=True)]
        return "  ".join(parts).rstrip()


def note(message: str) -> None:
    """A human message: always stderr, so stdout stays pure data; none under ``--quiet``."""
    if terminal.quiet():
        return
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def render(
    rows: RowsLike,
    fmt: OutputFormat | str = OutputFormat.table,
    wide: bool = False,
    out: IO[str] | None = None,
    title: str | None = None,
    limit: int | None = None,
    columns: str | None = None,
    numeric: Collection[str] = (),
) -> None:
    """Write ``rows`` to stdout in ``fmt``. Empty results: ``[]``, header-only csv, or a note.

    ``limit``: at most that many rows (``--limit``); ``columns``: ``--columns a,b,c``. On a
    terminal ``-o table`` shows the brief columns and the first :data:`TERMINAL_ROWS` rows
    (``paimon_cli.terminal_table``). Text tables align numbers right, and the ``numeric``
    columns (typed as numbers, their values text)."""
    fmt = OutputFormat(fmt)
    out = out if out is not None else sys.stdout
    on_terminal = fmt is OutputFormat.table and out is sys.stdout and isatty(out)
    shown = rows.rows if limit is None else rows.rows[:limit]
    capped = on_terminal and limit is None and len(shown) > TERMINAL_ROWS
    if capped:
        shown = shown[:TERMINAL_ROWS]
    total = len(rows.rows)
    cols = chosen_columns(rows.columns, getattr(rows, "brief", None), columns, wide, on_terminal)
    if cols != rows.columns or shown is not rows.rows:
        from .core.utils.rows import Rows

        rows = Rows(cols, shown, root=getattr(rows, "root", None), wrap=getattr(rows, "wrap", None))
    if fmt is OutputFormat.json:
        render_json(rows, out)
    elif fmt is OutputFormat.jsonl:
        render_jsonl(rows, out)
    elif fmt is OutputFormat.csv:
        render_csv(rows, out)
    elif not rows.rows:
        note(f"({title}: no rows)" if title else "(no rows)")
    elif on_terminal:
        render_terminal(rows.columns, rows.rows, wide, title, to_text, root=getattr(rows, "root", None),
                        wrap=getattr(rows, "wrap", None), numeric=numeric)
    else:
        if title:
            note(f"== {title}")
        render_plain(rows, out, numeric)
    out.flush()
    if capped:
        note(more_rows_note(TERMINAL_ROWS, total))


class RowStreamLike(Protocol):
    """What :func:`render_stream` needs; ``paimon_cli.core.utils.rows.RowStream`` is the concrete type."""

    columns: list[str]
    brief: list[str] | None

    def chunks(self, columns: list[str], typed: bool) -> Iterator[list[dict[str, Any]]]: ...

    @property
    def column_chunks(self) -> Any: ...

    def collect(self, columns: list[str] | None = None, limit: int | None = None) -> RowsLike: ...


def render_stream(stream: RowStreamLike, fmt: OutputFormat | str = OutputFormat.table, wide: bool = False,
                  limit: int | None = None, columns: str | None = None) -> None:
    """A :class:`RowStreamLike` to stdout: the same text :func:`render` writes for its rows,
    written chunk by chunk as they are computed (only the columns shown), stopping at
    ``limit`` (or when a pipe closes). A piped text table takes its widths from the first
    :data:`PLAIN_BLOCK_ROWS` rows (as ``read``'s); a terminal shows what :func:`render` shows."""
    from .core.utils.rows import Rows

    fmt = OutputFormat(fmt)
    out = sys.stdout
    on_terminal = fmt is OutputFormat.table and isatty(out)
    cols = chosen_columns(stream.columns, stream.brief, columns, wide, on_terminal)
    if on_terminal:  # the count of all rows is part of the note: the terminal reads them all
        render(Rows(cols, stream.collect(cols, limit).rows, root=getattr(stream, "root", None)), fmt, wide,
               limit=limit)
        return
    if stream.column_chunks is not None:
        # a piped table widens its columns where a chunk starts: its chunks stay one per manifest
        columnar = (stream.column_chunks(cols, fmt in (OutputFormat.json, OutputFormat.jsonl), True)
                    if fmt is not OutputFormat.table else stream.column_chunks(cols, False))
        try:
            _write_column_chunks(columnar, cols, fmt, limit, out)
        finally:
            getattr(columnar, "close", lambda: None)()
        return
    chunks = stream.chunks(cols, fmt in (OutputFormat.json, OutputFormat.jsonl))
    try:
        _write_chunks(_limited(chunks, limit), cols, fmt, out)
    finally:
        getattr(chunks, "close", lambda: None)()


def _limited(chunks: Iterator[list[dict[str, Any]]], limit: int | None) -> Iterator[list[dict[str, Any]]]:
    if limit is None:
        yield from chunks
        return
    left = limit
    while left > 0:  # never asks for a chunk past the limit (it would read a manifest)
        chunk = next(chunks, None)
        if chunk is None:
            return
        chunk = chunk[:left]
        left -= len(chunk)
        yield chunk


_JSON_NATIVE = (int, str, type(None))  # bool is an int: json writes both as they are


def _json_records(cols: list[str], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """:func:`_records` column by column: a column of JSON-native values is taken as it is."""
    columns = []
    for c in cols:
        values = [r[c] for r in rows]
        if not all(isinstance(v, _JSON_NATIVE) for v in values):
            values = [to_json_value(v) for v in values]
        columns.append(values)
    return [dict(zip(cols, vals, strict=True)) for vals in zip(*columns, strict=True)]


def _write_chunks(chunks: Iterator[list[dict[str, Any]]], cols: list[str], fmt: OutputFormat, out: IO[str]) -> None:

    if fmt in (OutputFormat.json, OutputFormat.jsonl):
        jw = JsonWriter(out, lines=fmt is OutputFormat.jsonl)
        for chunk in chunks:
            jw.write_records(_json_records(cols, chunk))
            out.flush()
        jw.close()
    elif fmt is OutputFormat.csv:
        import csv

        cw = csv.writer(out, lineterminator="\n")
        cw.writerow(cols)
        for chunk in chunks:
            _write_csv_rows(cw, cols, chunk)
            out.flush()
    else:
        plain = PlainWriter(out, cols)
        pending: list[dict[str, Any]] = []  # the first block sets the widths
        for chunk in chunks:
            pending += chunk
            if plain.widths is not None or len(pending) >= PLAIN_BLOCK_ROWS:
                plain.write_rows(pending)
                pending = []
                out.flush()
        if pending:
            plain.write_rows(pending)
        elif plain.widths is None:
            note("(no rows)")
    out.flush()


def _write_column_chunks(chunks: Iterator[dict[str, Any]], cols: list[str], fmt: OutputFormat, limit: int | None,
                         out: IO[str]) -> None:
    """A stream's column chunks (``RowStream.column_chunks``; typed for JSON) in ``fmt``:
    the text :func:`_write_chunks` writes for the same rows. JSON records and csv lines are
    joined by Arrow kernels; table cells are made a column at a time."""
    import csv

    from .column_text import csv_fields, csv_lines

    if fmt in (OutputFormat.json, OutputFormat.jsonl):
        jw = JsonWriter(out, fmt is OutputFormat.jsonl)
    elif fmt is OutputFormat.csv:
        csv.writer(out, lineterminator="\n").writerow(cols)
        raw = _utf8_bytes_layer(out)
    else:
        plain = PlainWriter(out, cols)
        pending: list[list[list[str]]] = []  # blocks of cells per column; the first 1000 rows set the widths
        present = [False] * len(cols)
        numbers = [True] * len(cols)
        waiting = 0
    left = limit
    for chunk in chunks if limit is None or limit > 0 else ():
        n = _column_length(chunk[cols[0]]) if cols else 0
        if left is not None and left < n:
            chunk = {c: _head(v, left) for c, v in chunk.items()}
            n = left
        if left is not None:
            left -= n
        if n == 0:
            continue
        if fmt in (OutputFormat.json, OutputFormat.jsonl):
            jw.write_utf8(_column_records(chunk, cols, fmt is OutputFormat.jsonl, n, jw.compact), n)
        elif fmt is OutputFormat.csv:
            lines = csv_lines([csv_fields(_text_column(chunk[c], ""), len(cols) == 1) for c in cols])
            if raw is None:
                out.write(lines.to_pybytes().decode("utf-8"))
            else:
                out.flush()
                raw.write(memoryview(lines))
        else:
            cells = [_text_cells(chunk[c], "null", table=True) for c in cols]
            if plain.widths is None:  # the first block aligns right its columns of numbers (is_numeric)
                for i, c in enumerate(cols):
                    some, only = _numbers(chunk[c])
                    present[i] = present[i] or some
                    numbers[i] = numbers[i] and only
                pending.append(cells)
                waiting += n
                if waiting < PLAIN_BLOCK_ROWS and left != 0:
                    continue
                cells = [sum((block[i] for block in pending), []) for i in range(len(cols))]
                pending = []
            plain.write_cells(cells, [a and b for a, b in zip(present, numbers, strict=True)])
        out.flush()
        if left == 0:
            break  # never asks for a chunk past the limit (it would read a manifest)
    if fmt in (OutputFormat.json, OutputFormat.jsonl):
        jw.close()
    elif fmt is OutputFormat.table:
        if pending:
            plain.write_cells([sum((block[i] for block in pending), []) for i in range(len(cols))],
                              [a and b for a, b in zip(present, numbers, strict=True)])
        elif plain.widths is None:
            note("(no rows)")
    out.flush()


def _column_records(chunk: dict[str, Any], cols: list[str], lines: bool, n: int, encode: Any) -> Any:
    """The ``n`` records of one column chunk as :meth:`JsonWriter.write_utf8` pieces (a
    buffer of UTF-8 bytes)."""
    import json

    import numpy as np
    import pyarrow.compute as pc

    if lines:
        key_sep, item_sep, opening, closing, indent = ":", ",", "{", "}\n", None
    else:
        key_sep, item_sep, opening, closing, indent = ": ", ",\n    ", ",\n  {\n    ", "\n  }", "    "
    parts: list[Any] = []
    for i, name in enumerate(cols):
        key = json.dumps(name, ensure_ascii=False) + key_sep
        parts.append((opening if i == 0 else item_sep) + key)
        parts += _column_pieces(chunk[name], n, encode, indent)
    parts.append(closing)
    rows = pc.binary_join_element_wise(*_joined_constants(parts), "")
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int32)[rows.offset: rows.offset + len(rows) + 1]
    data = rows.buffers()[2]
    return data[int(offsets[0]): int(offsets[-1])]


def _text_cells(col: Any, null: str, table: bool = False) -> list[str]:
    """:func:`to_text` of each value of a column chunk's column (``table``: with newlines
    escaped, as a text table's cells)."""
    import pyarrow.compute as pc

    texts = _text_column(col, null)
    if table:
        texts = pc.replace_substring(texts, "\n", "\\n")
    return list(texts.to_pylist())


def _text_column(col: Any, null: str) -> pa.Array:
    """:func:`to_text` of each value of a column chunk's column, as a string array without
    NULL: Arrow casts for integers, strings and millisecond timestamps, :func:`float_texts`
    for floats, :func:`.column_text.hex_texts` for binary, :func:`.column_text.json_texts`
    for nested values and (unquoted) dates, times, timestamps and decimals; a :class:`Picked`
    column converts each distinct value once. Other types (unions, durations) keep :func:`to_text`."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .column_text import float_texts, hex_texts, json_texts
    from .core.utils.rows import Picked

    if isinstance(col, Picked):
        texts = pa.array([to_text(v, null) for v in col.values], pa.string())
        return texts if col.index is None else texts.take(pa.array(col.index))
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    t = col.type
    fill = pa.scalar(null)
    if (pa.types.is_integer(t) or (pa.types.is_timestamp(t) and t.unit == "ms" and t.tz is None and _plain_years(col))):
        return pc.fill_null(col.cast(pa.string()), fill)
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.fill_null(col.cast(pa.string()), fill)
    if pa.types.is_floating(t):
        return float_texts(col, "NaN", "Infinity", "-Infinity", null)
    if pa.types.is_boolean(t):
        return pc.fill_null(pc.if_else(col, "true", "false"), fill)
    if pa.types.is_null(t):
        return pa.array([null] * len(col), pa.string())
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pc.fill_null(hex_texts(col), fill)
    texts = json_texts(col)  # to_text of a list / dict is its compact JSON
    if pa.types.is_decimal(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_timestamp(t):
        # a JSON string of digits, dashes and colons: to_text is its content
        texts = pc.utf8_slice_codeunits(texts, 1, -1)
    elif not pa.types.is_nested(t):
        return pa.array([to_text(v, null) for v in col.to_pylist()], pa.string())
    return pc.fill_null(texts, fill)


def _numbers(col: Any) -> tuple[bool, bool]:
    """(any value present, every present value a number): :func:`is_numeric` in two parts."""
    import numpy as np
    import pyarrow as pa

    from .core.utils.rows import Picked

    if isinstance(col, Picked):
        used = col.values if col.index is None else [col.values[i] for i in np.unique(col.index).tolist()]
        present = [v for v in used if v is not None]
        return bool(present), is_numeric(present) or not present
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    some = col.null_count < len(col)
    t = col.type
    return some, (not some or (pa.types.is_integer(t) or pa.types.is_floating(t) or pa.types.is_decimal(t)))


def _column_length(col: Any) -> int:
    from .core.utils.rows import Composite, Picked

    if isinstance(col, Composite):
        return col.length
    if isinstance(col, Picked):
        return len(col.values) if col.index is None else len(col.index)
    return len(col)


def _head(col: Any, n: int) -> Any:
    """The first ``n`` rows of a column chunk's column."""
    from .core.utils.rows import Composite, Picked

    if isinstance(col, Composite):
        return Composite(col.keys, [_head(p, n) for p in col.parts], min(n, col.length),
                         None if col.valid is None else col.valid[:n])
    if isinstance(col, Picked):
        return Picked(col.values[:n]) if col.index is None else Picked(col.values, col.index[:n])
    return col.slice(0, n)


def _column_pieces(col: Any, n: int, encode: Any, indent: str | None) -> list[Any]:
    """A column's JSON value texts (``indent``: the line indent of ``-o json``'s layout, None
    for compact lines), as ``json`` writes the column's values in a record, given as pieces
    whose row-wise concatenation is each value's text: ``str`` constants and string arrays.
    A map or list with no NULL row, and a string column with no NULL, are spliced into the
    record's pieces (their braces and quotes become constants), so a record is joined in one
    Arrow call without intermediate texts."""
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    from .core.utils.rows import Composite, Picked

    if isinstance(col, Picked):
        texts = pa.array([_json_value_text(v, encode, indent) for v in col.values], pa.string())
        return [texts if col.index is None else texts.take(pa.array(col.index))]
    if not isinstance(col, Composite):
        if isinstance(col, pa.ChunkedArray):
            col = col.combine_chunks()
        if pa.types.is_nested(col.type) and indent is not None:
            return [json_fragments(col, encode, indent)]
        if pa.types.is_timestamp(col.type) and col.type.unit == "ms" and col.type.tz is None and _plain_years(col):
            if not col.null_count:
                return ['"', col.cast(pa.string()), '"']
            quoted = pc.binary_join_element_wise(pa.scalar('"'), col.cast(pa.string()), pa.scalar('"'), "")
            return [pc.fill_null(quoted, pa.scalar("null"))]
        if ((pa.types.is_string(col.type) or pa.types.is_large_string(col.type)) and not col.null_count
                and not _needs_escape(col)):
            return ['"', col.cast(pa.string()), '"']
        return [json_fragments(col, encode).cast(pa.string())]
    inner = "" if indent is None else indent + "  "
    if not col.parts:
        return [pa.array(["{}" if col.keys is not None else "[]"] * n, pa.string())]
    open_, close = ("{", "}") if col.keys is not None else ("[", "]")
    if indent is None:
        sep, key_sep, first, last = ",", ":", open_, close
    else:
        sep, key_sep, first, last = ",\n" + inner, ": ", open_ + "\n" + inner, "\n" + indent + close
    pieces: list[Any] = []
    for j, part in enumerate(col.parts):
        key = "" if col.keys is None else json.dumps(col.keys[j], ensure_ascii=False) + key_sep
        pieces.append((first if j == 0 else sep) + key)
        pieces += _column_pieces(part, n, encode, None if indent is None else inner)
    pieces.append(last)
    if col.valid is None:
        return pieces
    texts = pc.binary_join_element_wise(*_joined_constants(pieces), pa.scalar(""))
    return [pc.if_else(pa.array(col.valid), texts, pa.scalar("null"))]


def _joined_constants(pieces: list[Any]) -> list[Any]:
    """The pieces with adjacent constants joined, as arguments of ``binary_join_element_wise``."""
    import pyarrow as pa

    out: list[Any] = []
    for p in pieces:
        if isinstance(p, str) and out and isinstance(out[-1], str):
            out[-1] += p
        else:
            out.append(p)
    return [pa.scalar(p) if isinstance(p, str) else p for p in out]


def _needs_escape(col: Any) -> bool:
    """Whether any string of a column has a character JSON escapes (control, quote, backslash)."""
    import pyarrow.compute as pc

    return bool(pc.any(pc.match_substring_regex(col, r'[\x00-\x1f"\\]')).as_py())


def _json_value_text(v: Any, encode: Any, indent: str | None) -> str:
    """One value's JSON text inside a record: compact, or laid out as ``json.dumps(record,
    indent=2)`` lays out a nested value whose key line is indented by ``indent``."""
    j = to_json_value(v)
    if indent is not None and isinstance(j, (dict, list)) and j:
        import json

        return json.dumps(j, ensure_ascii=False, indent=2).replace("\n", "\n" + indent)
    return str(encode(j))


def _plain_years(col: Any) -> bool:
    """Whether every (millisecond, naive) timestamp has a four-digit year: Arrow's text is
    then the renderer's ``YYYY-MM-DD HH:MM:SS.fff``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    lo, hi = pc.min_max(col.cast(pa.int64())).values()
    if lo.as_py() is None:
        return True
    return bool(_MIN_PLAIN_MS <= lo.as_py() and hi.as_py() <= _MAX_PLAIN_MS)


_MIN_PLAIN_MS = -30_610_224_000_000  # 1000-01-01T00:00:00
_MAX_PLAIN_MS = 253_402_300_799_999  # 9999-12-31T23:59:59.999


def render_outcome(rows: RowsLike, fmt: OutputFormat | str = OutputFormat.table, wide: bool = False,
                   preview: bool = False, limit: int | None = None, columns: str | None = None) -> None:
    """What a real run changed (``compact``'s result row, ``write``'s): like :func:`render`, but
    not under ``--quiet``. A ``preview`` (``--plan``, ``--dry-run``) is data asked for: always shown."""
    if preview or not terminal.quiet():
        render(rows, fmt, wide, limit=limit, columns=columns)


def to_terminal(fmt: OutputFormat | str) -> bool:
    """Whether ``fmt`` to stdout is a table for a person (``-o table``, stdout a terminal)."""
    return OutputFormat(fmt) is OutputFormat.table and isatty(sys.stdout)


def isatty(out: IO[str]) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False


def shows_brief(fmt: OutputFormat | str, wide: bool) -> bool:
    """Whether :func:`render` shows only a result's ``brief`` columns (``-o table`` on a
    terminal without ``--wide``): a command then says what the other columns hold otherwise."""
    return OutputFormat(fmt) is OutputFormat.table and not wide and isatty(sys.stdout)


def read_limit(fmt: OutputFormat | str, limit: int | None) -> int | None:
    """The rows to read for ``--limit`` (None: all): ``-o table`` on a terminal reads one more
    than it shows (:data:`TERMINAL_ROWS`), to know whether to say there are more."""
    if limit is None and OutputFormat(fmt) is OutputFormat.table and isatty(sys.stdout):
        return TERMINAL_ROWS + 1
    return limit


def json_fragments(col: Any, encode: Any, indent: str | None = None) -> pa.Array:
    """One column as JSON value texts (``null`` for NULL), as ``json.dumps`` writes them.

    Integers and booleans are cast by Arrow; strings are quoted and escaped by Arrow kernels
    (:func:`.column_text.json_strings`); floats are Python's ``repr`` laid out from Arrow's
    text (:func:`.column_text.float_texts`; NaN and infinities as their strings); binary is
    hex (:func:`.column_text.hex_texts`); nested, temporal and decimal values are
    :func:`.column_text.json_texts` (the text of :func:`to_json_value`, built column-wise).
    ``read``'s temporal and decimal columns arrive as strings (:func:`_prepare`). ``indent``:
    nested values laid out as in ``-o json`` under a key line indented so (see
    :func:`.column_text.json_texts`), None for compact lines.
    """
    import pyarrow as pa

    from .column_text import json_value_texts

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    return json_value_texts(col, indent)


PLAIN_BLOCK_ROWS = 1000  # rows per block of a piped text table (the first block sets the widths)
