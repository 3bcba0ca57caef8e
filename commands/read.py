"""``paimon-cli read``: the rows of a table (merged like Java Paimon's batch read).

Results stream one (partition, bucket) at a time: ``-o json|jsonl|csv`` and ``--to FILE``
write each batch as it arrives, so memory stays bounded by the largest bucket. Values keep
full precision: timestamps print with all their fraction digits, decimals as exact strings,
binary as hex (the renderer's conventions otherwise).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import closing
from typing import IO, TYPE_CHECKING, Annotated, Any

import typer

from paimon_cli.options import (
    BranchOpt,
    DebugOpt,
    FsOpt,
    OutputOpt,
    SnapshotOpt,
    TagOpt,
    TimestampOpt,
    WarehouseOpt,
    WideOpt,
    open_catalog,
    parse_branch,
    parse_identifier,
    time_travel,
)
from paimon_cli.output import OutputFormat, note, render

if TYPE_CHECKING:
    import pyarrow as pa

EXPORT_FORMATS = {".parquet": "parquet", ".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".json": "json",
                  ".arrow": "arrow", ".feather": "arrow", ".ipc": "arrow"}


def read(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to read.")],
    select: Annotated[
        str | None, typer.Option("--select", metavar="COLS", help="Comma-separated columns (default: all).")
    ] = None,
    where: Annotated[
        str | None,
        typer.Option("--where", metavar="PREDICATE",
                     help="Row filter, e.g. \"dt = '2024-01-01' AND id IN (1, 2) AND name IS NOT NULL\"."),
    ] = None,
    limit: Annotated[int | None, typer.Option("--limit", metavar="N", min=0, help="At most N rows.")] = None,
    to: Annotated[
        str | None,
        typer.Option("--to", metavar="FILE", help="Write the rows to FILE (.parquet, .csv, .jsonl, .json, .arrow) "
                     "instead of stdout."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show what the read would touch and what pruning removed; read no data.")
    ] = False,
    snapshot: SnapshotOpt = None,
    tag: TagOpt = None,
    timestamp: TimestampOpt = None,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Read DB.TABLE (merged for primary-key tables), optionally as of a snapshot/tag/time.

    \b
    Example:
        paimon-cli read shop.orders --where "dt = '2024-05-01' AND amount > 10" --limit 20
        paimon-cli read shop.orders --select id,amount -o jsonl --tag release-1
        paimon-cli read shop.orders --to orders.parquet
        paimon-cli read shop.orders --where "id = 7" --explain
    """
    ident = parse_identifier(identifier)
    branch_name = parse_branch(branch)
    at = time_travel(snapshot, tag, timestamp)
    export = _export_format(to) if to is not None else None
    table = open_catalog(warehouse, fs_option).get_table(ident.full_name, branch_name)

    from paimon_cli.core.data.predicate_parser import parse_predicate
    from paimon_cli.core.operation.read import TableRead

    projection = _columns(select) if select is not None else None
    predicate = parse_predicate(where, table.schema.fields) if where is not None else None
    reader = TableRead(table, at, projection=projection, predicate=predicate, limit=limit)
    if explain:
        render(reader.explain(), output, wide, title=_explain_title(reader))
        return
    if to is not None and export is not None:
        n = _export(reader, to, export, fs_option)
        note(f"wrote {n} row(s) to {to}")
        return
    _print(reader, OutputFormat(output), wide)


def _columns(text: str) -> list[str]:
    out = [c.strip().strip("`") for c in text.split(",")]
    from paimon_cli.core.errors import InvalidInput

    if not all(out):
        raise InvalidInput(f"--select {text!r}: empty column name")
    return out


def _export_format(path: str) -> str:
    from paimon_cli.core.errors import InvalidInput

    name = path.rsplit("/", 1)[-1].lower()
    for ext, fmt in EXPORT_FORMATS.items():
        if name.endswith(ext):
            return fmt
    raise InvalidInput(f"--to {path!r}: unknown file type; use one of {', '.join(EXPORT_FORMATS)}")


def _explain_title(reader: Any) -> str:
    snap = reader.plan().snapshot
    where = f" where {reader.predicate}" if reader.predicate is not None else ""
    return f"{reader.table.identifier} at snapshot {snap.id if snap else '(none)'}{where}"


# ---------------------------------------------------------------------------------------
# value preparation: vectorised casts so temporal and decimal values keep full precision
# ---------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------
# stdout
# ---------------------------------------------------------------------------------------


def _print(reader: Any, fmt: OutputFormat, wide: bool) -> None:
    out = sys.stdout
    # closed on every way out (a closed pipe, an error, Ctrl-C): its read-ahead threads end here
    with closing(reader.iter_batches()) as batches:
        if fmt is OutputFormat.table:
            from paimon_cli.core.utils.rows import Rows

            rows: list[dict[str, Any]] = []
            for b in batches:
                rows += _prepare(b).to_pylist()
            render(Rows(list(reader.output_schema().names), rows), fmt, wide)
            return
        if fmt is OutputFormat.csv:
            _write_csv(batches, reader.output_schema(), out)
        else:
            _write_json(batches, out, lines=fmt is OutputFormat.jsonl)
    out.flush()


_JSON_SLICE_ROWS = 65_536  # rows rendered per vectorised step (bounds one string column's size)


def _write_json(batches: Iterator[pa.RecordBatch], out: IO[str], lines: bool) -> int:
    """JSON Lines, or one JSON array laid out as the renderer's ``-o json`` (indent 2), streamed.

    Rendering is column-wise: each column becomes an Arrow string array of JSON fragments
    (:func:`_json_fragments`), the fragments and the key prefixes are joined per row by one
    pyarrow kernel, and the batch's text is written with one ``write``. The output is the
    same text ``json.dumps`` gives per record (compact for lines; ``indent=2`` inside the
    array); ``-o json`` with nested columns keeps the per-record encoder, whose multi-line
    layout of nested values is not rebuilt here.
    """
    import json

    import pyarrow as pa

    n = 0
    if not lines:
        out.write("[")
    compact = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    pretty = json.JSONEncoder(ensure_ascii=False, indent=2).encode
    for b in batches:
        if b.num_rows == 0:
            continue
        names = b.schema.names
        vectorised = len(set(names)) == len(names) and (
            lines or not any(pa.types.is_nested(t) for t in b.schema.types))
        for start in range(0, b.num_rows, _JSON_SLICE_ROWS):
            part = b.slice(start, _JSON_SLICE_ROWS)
            text = _json_text(part, lines, compact) if vectorised else None
            if text is None:  # duplicate names (a dict keeps the last), nested -o json, overflow
                rows = [dict(zip(names, r)) for r in zip(*_json_columns(part))]
                if lines:
                    text = "".join(compact(r) + "\n" for r in rows)
                else:
                    text = "".join(",\n  " + pretty(r).replace("\n", "\n  ") for r in rows)
            out.write(text if lines or n else text[1:])  # the array's first record has no comma
            n += part.num_rows
    if not lines:
        out.write("\n]\n" if n else "]\n")
    return n


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
    for i, (name, col) in enumerate(zip(names, cols)):
        key = json.dumps(name, ensure_ascii=False) + key_sep
        parts.append(pa.scalar((opening if i == 0 else item_sep) + key))
        parts.append(_json_fragments(col, encode))
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


def _json_fragments(col: Any, encode: Any) -> pa.Array:
    """One column as JSON value texts (``null`` for NULL), as ``json.dumps`` writes them.

    Integers and booleans are cast by Arrow; strings are quoted by Arrow unless a value
    needs escaping; finite floats use Python's ``repr`` (Arrow prints ``489`` and
    ``0.00001`` where JSON output has ``489.0`` and ``1e-05``); binary, nested and
    non-finite values go through the renderer's ``to_json_value``. Temporal and decimal
    columns arrive as strings (:func:`_prepare`).
    """
    import json

    import pyarrow as pa
    import pyarrow.compute as pc

    from paimon_cli.output import to_json_value

    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks()
    t = col.type
    null = pa.scalar("null")
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return pc.fill_null(col.cast(pa.string()), null)
    if pa.types.is_null(t):
        return pa.array(["null"] * len(col), pa.string())
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        s = col.cast(pa.string())
        if not pc.any(pc.match_substring_regex(s, r'[\x00-\x1f"\\]')).as_py():
            return pc.fill_null(pc.binary_join_element_wise(pa.scalar('"'), s, pa.scalar('"'), ""), null)
        quote = json.encoder.encode_basestring  # type: ignore[attr-defined]
        return pa.array(["null" if v is None else quote(v) for v in s.to_pylist()], pa.string())
    if pa.types.is_floating(t) and not pc.any(pc.invert(pc.is_finite(col))).as_py():
        mask = col.is_null()
        texts = list(map(float.__repr__, pc.fill_null(col, 0).cast(pa.float64()).to_pylist()))
        return pc.fill_null(pa.array(texts, pa.string(), mask=mask.to_numpy(zero_copy_only=False)), null)
    return pa.array(["null" if v is None else encode(to_json_value(v)) for v in col.to_pylist()], pa.string())


def _json_columns(batch: pa.RecordBatch) -> list[list[Any]]:
    """The batch's columns as Python lists of JSON-ready values (the per-record fallback)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from paimon_cli.output import to_json_value

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
    """A csv-ready column: binary as hex, nested as compact JSON, everything else as arrow writes it."""
    import json

    import pyarrow as pa

    from paimon_cli.output import to_json_value

    t = col.type
    if pa.types.is_binary(t) or pa.types.is_large_binary(t) or pa.types.is_fixed_size_binary(t):
        return pa.array([None if v is None else v.hex() for v in col.to_pylist()], pa.string())
    if pa.types.is_nested(t):
        return pa.array([None if v is None else json.dumps(to_json_value(v), ensure_ascii=False, separators=(",", ":"))
                         for v in col.to_pylist()], pa.string())
    return col


def _write_csv(batches: Iterator[pa.RecordBatch], schema: pa.Schema, out: Any, binary: bool = False) -> int:
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


# ---------------------------------------------------------------------------------------
# --to FILE
# ---------------------------------------------------------------------------------------


def _export(reader: Any, path: str, fmt: str, fs_option: list[str] | None) -> int:
    from paimon_cli.core.io.fileio import FileIO, parent, parse_storage_options

    fio = FileIO(path, parse_storage_options(fs_option or []))
    fio.mkdirs(parent(path))
    schema = reader.output_schema()
    # FileIO has no streaming writer; its fsspec filesystem opens one
    with closing(reader.iter_batches()) as batches, fio.open_output(path) as f:
        if fmt == "parquet":
            import pyarrow.parquet as pq

            n = 0
            with pq.ParquetWriter(f, schema, compression="zstd") as w:
                for b in batches:
                    w.write_batch(b)
                    n += b.num_rows
            return n
        if fmt == "arrow":
            import pyarrow as pa

            n = 0
            with pa.ipc.new_file(f, schema) as w:
                for b in batches:
                    w.write_batch(b)
                    n += b.num_rows
            return n
        if fmt == "csv":
            return _write_csv(batches, schema, f, binary=True)
        import io

        text = io.TextIOWrapper(f, encoding="utf-8", newline="\n")
        try:
            return _write_json(batches, text, lines=fmt == "jsonl")
        finally:
            text.flush()
            text.detach()
