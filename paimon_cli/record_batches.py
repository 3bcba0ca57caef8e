"""``read``'s record batches: printed to stdout as they arrive (``render_batches``) and exported
to files (``read --to``: ``write_export``), with the value conventions of :mod:`.output`.

Kept apart from :mod:`.output`, which renders Rows (every command's tabular result); this
module depends on it, never the other way round.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import IO, TYPE_CHECKING, Any

from .output import (
    PLAIN_BLOCK_ROWS,
    JsonWriter,
    OutputFormat,
    PlainWriter,
    isatty,
    json_fragments,
    note,
    render,
    to_json_value,
)
from .terminal_table import TERMINAL_ROWS, more_rows_note

if TYPE_CHECKING:
    import pyarrow as pa

# -- record batches (``read``): streamed, vectorised, values at full precision ---------------------
#
# ``read`` prints batches as they arrive, so memory stays bounded by the largest bucket. Unlike
# Rows, values keep full precision: timestamps with all their fraction digits, decimals as exact
# strings (binary as hex and the rest as :func:`to_json_value`, like Rows). CSV goes through
# Arrow's writer, which quotes every string value (Rows' csv quotes only where needed).

EXPORT_FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
                  ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}
_JSON_SLICE_ROWS = 65_536  # rows rendered per vectorised step (bounds one string column's size)


def export_format(path: str) -> str:
    """The export format of ``read --to FILE``, from the file name's extension."""
    from .core.errors import InvalidInput

    name = path.rsplit("/", 1)[-1].lower()
    for ext, fmt in EXPORT_FORMATS.items():
        if name.endswith(ext):
            return fmt
    raise InvalidInput(f"--to {path!r}: unknown file type; use one of {', '.join(EXPORT_FORMATS)}")


def render_batches(batches: Iterator[pa.RecordBatch], schema: pa.Schema, fmt: OutputFormat | str,
                   wide: bool = False, limit: int | None = None, columns: str | None = None) -> None:
    """Batches to stdout in ``fmt``, as they arrive. ``table`` on a terminal collects the
    (few, see :func:`read_limit`) rows it shows; ``limit`` is the user's ``--limit``,
    ``columns`` the ``--columns`` to keep."""
    fmt = OutputFormat(fmt)
    out = sys.stdout
    if columns is not None:
        import pyarrow as pa

        from .terminal_table import pick_columns

        names = pick_columns(schema.names, columns)
        batches = (b.select(names) for b in batches)
        schema = pa.schema([schema.field(n) for n in names])
    numeric = _numeric_columns(schema)  # decimals arrive as text (_prepare): align them by type
    if fmt is OutputFormat.table and isatty(out):
        from .core.utils.rows import Rows

        rows: list[dict[str, Any]] = []
        for b in batches:
            rows += _prepare(b).to_pylist()
        more = limit is None and len(rows) > TERMINAL_ROWS
        render(Rows(list(schema.names), rows[:TERMINAL_ROWS] if more else rows), fmt, wide, limit=limit,
               numeric=numeric)
        if more:
            note(more_rows_note(TERMINAL_ROWS, None))
        return
    if fmt is OutputFormat.table:
        plain = PlainWriter(out, list(schema.names), numeric)
        for b in batches:
            for start in range(0, b.num_rows, PLAIN_BLOCK_ROWS):
                plain.write_rows(_prepare(b.slice(start, PLAIN_BLOCK_ROWS)).to_pylist())
                out.flush()
        if plain.widths is None:
            note("(no rows)")
    elif fmt is OutputFormat.csv:
        write_csv_batches(batches, schema, out)
    else:
        write_json_batches(batches, out, lines=fmt is OutputFormat.jsonl)
    out.flush()


def _numeric_columns(schema: pa.Schema) -> set[str]:
    """Columns of numbers (integers, floats, decimals): a text table aligns them right."""
    import pyarrow as pa

    return {f.name for f in schema if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)
            or pa.types.is_decimal(f.type)}


def write_export(batches: Iterator[pa.RecordBatch], schema: pa.Schema, fmt: str, out: IO[bytes]) -> int:
    """Batches into a binary file as ``fmt`` (see :data:`EXPORT_FORMATS`); returns the rows written."""
    import pyarrow as pa

    n = 0
    if fmt == "parquet":
        import pyarrow.parquet as pq

        from .core.format.parquet_format import dictionary_columns

        # Dictionary pages only for columns whose first rows repeat (as our data files
        # choose): pyarrow's default dictionary-encodes unique keys and measures too, which
        # took a third of a merged `read --to x.parquet` for no smaller file.
        w = None
        try:
            for b in batches:
                if w is None:
                    w = pq.ParquetWriter(out, schema, compression="zstd",
                                         use_dictionary=dictionary_columns(pa.Table.from_batches([b])))
                w.write_batch(b)
                n += b.num_rows
            if w is None:  # no rows: still a valid file with the schema
                w = pq.ParquetWriter(out, schema, compression="zstd")
        finally:
            if w is not None:
                w.close()
        return n
    if fmt == "arrow":
        with pa.ipc.new_file(out, schema) as w:
            for b in batches:
                w.write_batch(b)
                n += b.num_rows
        return n
    if fmt == "csv":
        return write_csv_batches(batches, schema, out, binary=True)
    import io

    text = io.TextIOWrapper(out, encoding="utf-8", newline="\n")
    try:
        return write_json_batches(batches, text, lines=fmt == "jsonl")
    finally:
        text.flush()
        text.detach()


def _text_type(t: pa.DataType) -> pa.DataType:
    """The arrow type a column is cast to before output: temporal/decimal leaves become strings."""
    import pyarrow as pa

    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t) or pa.types.is_decimal(t):
        return pa.string()
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return pa.list_(_text_type(t.value_type))
    if pa.types.is_map(t):
        return pa.map_(_text_type(t.key_type), _text_type(t.item_type))
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_text_type(t.field(i).type)) for i in range(t.num_fields)])
    return t


def _prepare(batch: pa.RecordBatch) -> pa.RecordBatch:
    """Temporal and decimal values as strings (vectorised casts keep full precision)."""
    import pyarrow as pa

    cols = []
    for col in batch.columns:
        target = _text_type(col.type)
        if not target.equals(col.type):
            try:
                col = col.cast(target)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                pass  # the renderer's own conversion takes over
        cols.append(col)
    return pa.RecordBatch.from_arrays(cols, names=batch.schema.names)


def write_json_batches(batches: Iterator[pa.RecordBatch], out: IO[str], lines: bool) -> int:
    """``-o jsonl`` / ``-o json`` of batches, streamed: the same text :class:`JsonWriter` gives
    per record. Rendering is column-wise: each column becomes an Arrow string array of JSON
    fragments (:func:`json_fragments`), the fragments and key prefixes are joined per row by
    one pyarrow kernel, and a slice's text is written at once; ``-o json``'s multi-line layout
    of nested values is built column-wise too (:func:`.column_text.json_texts` with an indent).
    """
    w = JsonWriter(out, lines)
    for b in batches:
        if b.num_rows == 0:
            continue
        names = b.schema.names
        vectorised = len(set(names)) == len(names)
        for start in range(0, b.num_rows, _JSON_SLICE_ROWS):
            part = b.slice(start, _JSON_SLICE_ROWS)
            text = _json_text(part, lines, w.compact) if vectorised else None
            if text is None:  # duplicate names (a dict keeps the last), overflow
                w.write_records([dict(zip(names, r, strict=True)) for r in zip(*_json_columns(part), strict=True)])
            else:
                w.write_text(text, part.num_rows)
    w.close()
    return w.count


def _json_text(batch: pa.RecordBatch, lines: bool, encode: Any) -> str | None:
    """The batch's records as JSON text (lines: ``{..}\\n`` each; array: ``,\\n  {..}`` each)."""
    import json

    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    cols = _prepare(batch).columns
    names = batch.schema.names
    if lines:
        key_sep, item_sep, opening, closing = ":", ",", "{", "}\n"
    else:
        key_sep, item_sep, opening, closing = ": ", ",\n    ", ",\n  {\n    ", "\n  }"
    parts: list[Any] = []
    for i, (name, col) in enumerate(zip(names, cols, strict=True)):
        key = json.dumps(name, ensure_ascii=False) + key_sep
        parts.append(pa.scalar((opening if i == 0 else item_sep) + key))
        parts.append(json_fragments(col, encode, None if lines else "    "))
    parts.append(pa.scalar(closing))
    try:
        rows = pc.binary_join_element_wise(*parts, "")
    except (pa.ArrowInvalid, pa.ArrowCapacityError):  # > 2 GiB of text in one slice
        return None
    if isinstance(rows, pa.ChunkedArray):
        rows = rows.combine_chunks()
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int32)[rows.offset: rows.offset + len(rows) + 1]
    data = rows.buffers()[2]
    return data[int(offsets[0]): int(offsets[-1])].to_pybytes().decode("utf-8")


def _json_columns(batch: pa.RecordBatch) -> list[list[Any]]:
    """The batch's columns as Python lists of JSON-ready values (the per-record fallback)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = []
    for col in _prepare(batch).columns:
        t = col.type
        vals = col.to_pylist()
        if pa.types.is_floating(t):
            native = not pc.any(pc.invert(pc.is_finite(col))).as_py()
        else:
            native = (pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t)
                      or pa.types.is_boolean(t) or pa.types.is_null(t))
        if not native:
            vals = [to_json_value(v) for v in vals]
        out.append(vals)
    return out


def _csv_column(col: Any) -> Any:
    """A csv-ready column: binary as hex, nested as compact JSON (:func:`.column_text.json_texts`),
    everything else as arrow writes it."""
    import pyarrow as pa

    t = col.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        from .column_text import hex_texts

        return hex_texts(col)
    if pa.types.is_nested(t):  # to_text of a list / dict: its compact JSON, built column-wise
        from .column_text import json_texts

        return json_texts(col)
    return col


def write_csv_batches(batches: Iterator[pa.RecordBatch], schema: pa.Schema, out: Any, binary: bool = False) -> int:
    """CSV with a header via pyarrow's writer (strings quoted, NULL empty, full-precision values).

    ``out`` is a text stream (stdout) or, with ``binary``, a byte stream (``--to``).
    """
    import io

    import pyarrow as pa
    import pyarrow.csv as pacsv

    n = 0
    writer = None
    sink: Any = out if binary else io.BytesIO()
    options = pacsv.WriteOptions(quoting_style="needed")

    def flush() -> None:
        if not binary:
            out.write(sink.getvalue().decode("utf-8"))
            sink.seek(0)
            sink.truncate()

    for b in batches:
        b = pa.RecordBatch.from_arrays([_csv_column(c) for c in b.columns], names=b.schema.names)
        if writer is None:
            writer = pacsv.CSVWriter(sink, b.schema, write_options=options)
        writer.write_batch(b)
        n += b.num_rows
        flush()
    if writer is None:  # no rows: the header only
        pacsv.write_csv(pa.table({c: pa.array([], pa.string()) for c in schema.names}), sink, write_options=options)
    else:
        writer.close()
    flush()
    return n
