"""Raw batches of one input file, per format (Parquet, Arrow IPC, CSV, JSON/JSONL), in
bounded pieces and before conversion; text formats read spelling-sensitive columns as text."""

from __future__ import annotations

import io
from collections.abc import Iterator, Mapping, Sequence
from collections.abc import Set as AbstractSet
from typing import IO, TYPE_CHECKING, Any

from ..data.type_visitor import DataTypeVisitor
from ..data.types import (
    ArrayType,
    DataType,
    DecimalType,
    MapType,
    MultisetType,
    RowType,
)
from ..errors import InvalidInput
from ..utils.suggest import did_you_mean
from .input_errors import csv_row_error, json_error
from .input_files import Replay, native_reader
from .parquet_int96 import INPUT_FILE, check_int96, int96_columns

if TYPE_CHECKING:
    import pyarrow as pa

_BATCH_ROWS = 65_536
_ROW_GROUP_BYTES = 64 << 20  # uncompressed size up to which a row group is read whole
_TEXT_CHUNK_BYTES = 16 << 20
_CSV_NULLS = ["", "NULL", "null", "\\N"]


class InputColumns(frozenset[str]):
    """The columns an input may hold: the table's, plus the ``--row-kind-column`` when that
    column is not one of the table's (it is read, then dropped). ``table_columns`` keeps the
    schema's order, the order errors name them in."""

    row_kind: str | None
    table_columns: tuple[str, ...]

    def __new__(cls, table_columns: Sequence[str], row_kind: str | None) -> InputColumns:
        self = super().__new__(cls, {*table_columns, *([row_kind] if row_kind else [])})
        self.row_kind = row_kind if row_kind and row_kind not in table_columns else None
        self.table_columns = tuple(table_columns)
        return self


class _TextReadTypes(DataTypeVisitor["pa.DataType | None"]):
    """Arrow type text formats read a column as before our checked cast (None = let it infer)."""

    def __init__(self) -> None:
        import pyarrow as pa

        self.pa = pa

    def visit_atomic(self, dt: DataType) -> pa.DataType | None:
        return None

    def visit_array(self, dt: ArrayType) -> pa.DataType | None:
        return None

    def visit_multiset(self, dt: MultisetType) -> pa.DataType | None:
        return None

    def visit_map(self, dt: MapType) -> pa.DataType | None:
        return None

    def visit_row(self, dt: RowType) -> pa.DataType | None:
        return None

    def _text(self, dt: DataType) -> pa.DataType | None:
        return self.pa.string()

    visit_char = visit_varchar = visit_binary = visit_varbinary = _text
    visit_date = visit_time = visit_timestamp = visit_local_zoned_timestamp = _text

    def visit_decimal(self, dt: DecimalType) -> pa.DataType | None:
        # widest scale that still holds every integer digit the column can: exact text, any loss
        # is then reported by the checked cast (with its row)
        return self.pa.decimal128(38, 38 - (dt.precision - dt.scale))


def text_read_type(dt: DataType) -> pa.DataType | None:
    """Arrow type text formats read a column as before our checked cast (None = let it infer)."""
    return _TextReadTypes().visit(dt)


def read_parquet(stream: IO[bytes], source: str, wanted: AbstractSet[str]) -> Iterator[pa.Table]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        # pre_buffer (pyarrow's default) keeps read-ahead ranges of the whole file alive, so
        # RSS grew with the input size; without it and one row group at a time it stays flat
        pf = pq.ParquetFile(stream, pre_buffer=False)
    except (pa.ArrowException, OSError) as e:
        raise InvalidInput(f"{source}: not a readable Parquet file ({e})") from e
    names = pf.schema_arrow.names
    _check_columns(names, wanted, source)
    meta = pf.metadata
    int96 = int96_columns(pf.schema, None)
    if int96:  # pyarrow reads INT96 as nanoseconds and wraps beyond them: a wrong value written
        check_int96(pa.PythonFile(stream, mode="r"), source, meta, None, int96, INPUT_FILE)
    try:
        for i in range(pf.num_row_groups):
            rg = meta.row_group(i)
            # use_threads=False: see native_reader (the stream is a Python object)
            if rg.num_rows <= 4 * _BATCH_ROWS and rg.total_byte_size <= _ROW_GROUP_BYTES:
                # a small row group is decoded whole, then cut into batches
                for batch in pf.read_row_group(i, use_threads=False).to_batches(max_chunksize=_BATCH_ROWS):
                    yield pa.Table.from_batches([batch])
            else:  # a big one is streamed so one row group never has to fit in memory, in batches
                # of at most about _ROW_GROUP_BYTES (rows of large values, e.g. blobs, come fewer a batch)
                rows = max(1, min(_BATCH_ROWS, _ROW_GROUP_BYTES * rg.num_rows // max(1, rg.total_byte_size)))
                for batch in pf.iter_batches(batch_size=rows, row_groups=[i], use_threads=False):
                    yield pa.Table.from_batches([batch])
    except (pa.ArrowException, OSError) as e:
        raise InvalidInput(f"{source}: cannot read Parquet data ({e})") from e


def read_arrow(stream: IO[bytes], source: str, wanted: AbstractSet[str]) -> Iterator[pa.Table]:
    import pyarrow as pa

    try:
        seekable = hasattr(stream, "seekable") and stream.seekable()
        head = stream.read(6)
        if seekable:
            stream.seek(0)
        serial = pa.ipc.IpcReadOptions(use_threads=False)  # see native_reader
        if head == b"ARROW1":
            reader = pa.ipc.open_file(stream, options=serial)
            _check_columns(reader.schema.names, wanted, source)
            for i in range(reader.num_record_batches):
                yield pa.Table.from_batches([reader.get_batch(i)])
            return
        if not seekable:
            stream = io.BufferedReader(Replay(head, stream))
        sreader = pa.ipc.open_stream(stream, options=serial)
        _check_columns(sreader.schema.names, wanted, source)
        for batch in sreader:
            yield pa.Table.from_batches([batch])
    except pa.ArrowException as e:
        raise InvalidInput(f"{source}: not a readable Arrow IPC file or stream ({e})") from e


def _line_chunks(stream: IO[bytes], first: bytes = b"") -> Iterator[bytes]:
    """``first`` and the rest of the stream in chunks of about ``_TEXT_CHUNK_BYTES`` cut after
    a line end (the last chunk holds whatever follows the last one)."""
    buf = first
    while True:
        more = stream.read(_TEXT_CHUNK_BYTES)
        if not more:
            if buf:
                yield buf
            return
        buf += more
        cut = buf.rfind(b"\n")
        if cut >= 0:
            yield buf[: cut + 1]
            buf = buf[cut + 1 :]


def read_csv(stream: IO[bytes], source: str, wanted: AbstractSet[str], read_types: dict[str, pa.DataType]) -> Iterator[pa.Table]:
    """CSV in line-cut chunks (:func:`native_reader`), each parsed by pyarrow's reader; the
    header comes from the first chunk. Cutting at line ends is what pyarrow's own block
    chunker does (``newlines_in_values`` is off), so rows parse exactly as in one stream."""
    import pyarrow as pa
    import pyarrow.csv as pcsv

    delimiter = "\t" if source.lower().split(".gz")[0].endswith(".tsv") else ","
    # UTF-8 is checked per column by convert_column, which can name the row (pyarrow's own
    # check cannot say where the bad byte is)
    convert = pcsv.ConvertOptions(
        column_types=read_types, null_values=_CSV_NULLS, strings_can_be_null=True,
        quoted_strings_can_be_null=False, check_utf8=False,
    )
    bad_rows: list[str] = []  # a row with another number of fields than the header (the error names it)

    def invalid_row(row: Any) -> str:
        bad_rows.append(row.text)
        return "error"

    parse = pcsv.ParseOptions(delimiter=delimiter, invalid_row_handler=invalid_row)
    names: list[str] | None = None
    rows = 0
    for chunk in _line_chunks(stream):
        chunk_rows, header_chunk = rows, names is None
        if not chunk.endswith((b"\n", b"\r")):
            # pyarrow calls a text without any newline an "Empty CSV file", so a header-only
            # file (or one-line garbage) would silently be zero rows, its names unchecked
            chunk += b"\n"
        if names is None:
            try:
                reader = pcsv.open_csv(native_reader(chunk), read_options=pcsv.ReadOptions(block_size=_TEXT_CHUNK_BYTES),
                                       parse_options=parse, convert_options=convert)
            except StopIteration:
                return
            except pa.ArrowException as e:
                if "Empty CSV file" in str(e):
                    return
                if bad_rows:
                    raise csv_row_error(chunk, bad_rows[0], header_chunk, chunk_rows, source, e) from e
                raise InvalidInput(f"{source}: cannot read CSV ({e})") from e
            try:
                names = reader.schema.names
            except UnicodeDecodeError as e:
                raise InvalidInput(f"{source}: line 1 (the header) is not valid UTF-8 ({e.reason})") from None
            _check_columns(names, wanted, source)
        elif not chunk.strip(b"\r\n"):
            continue  # blank lines only (pyarrow skips them; alone they would be an "empty file")
        else:
            try:
                reader = pcsv.open_csv(
                    native_reader(chunk),
                    read_options=pcsv.ReadOptions(block_size=_TEXT_CHUNK_BYTES, column_names=names),
                    parse_options=parse, convert_options=convert)
            except pa.ArrowException as e:
                if bad_rows:
                    raise csv_row_error(chunk, bad_rows[0], header_chunk, chunk_rows, source, e) from e
                raise InvalidInput(f"{source}: CSV data after row {rows}: {e}") from e
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except pa.ArrowException as e:
                if bad_rows:
                    raise csv_row_error(chunk, bad_rows[0], header_chunk, chunk_rows, source, e) from e
                raise InvalidInput(f"{source}: CSV data after row {rows}: {e}") from e
            rows += batch.num_rows
            yield pa.Table.from_batches([batch])


def _json_chunks(stream: IO[bytes], source: str) -> Iterator[bytes]:
    """JSON lines in byte chunks cut at line ends; a JSON array file is turned into lines."""
    import json

    first = stream.read(_TEXT_CHUNK_BYTES)
    if first.lstrip(b" \t\r\n\xef\xbb\xbf").startswith(b"["):
        data = first + stream.read()
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            line = data.count(b"\n", 0, e.start) + 1
            col = e.start - data.rfind(b"\n", 0, e.start)
            raise InvalidInput(f"{source}: line {line}, byte {col} is not valid UTF-8 ({e.reason})") from None
        try:
            # parse_float=str keeps number text exact; the checked cast parses it per column
            items = json.loads(text, parse_float=str)
        except ValueError as e:
            raise InvalidInput(f"{source}: not valid JSON ({e})") from e
        except RecursionError:  # Python's parser recurses once per level
            raise InvalidInput(f"{source}: row {_deep_json_row(text)}: {_TOO_DEEP}") from None
        if not isinstance(items, list) or not all(isinstance(x, dict) for x in items):
            raise InvalidInput(f"{source}: a JSON array input must hold objects (one per row)")
        for i in range(0, len(items), _BATCH_ROWS):
            yield "\n".join(json.dumps(o, ensure_ascii=False) for o in items[i : i + _BATCH_ROWS]).encode()
        return
    lines = 0
    for chunk in _line_chunks(stream, first):
        _check_json_depth(chunk, source, lines)
        lines += chunk.count(b"\n")
        if chunk.strip():
            yield chunk


# pyarrow's JSON parser recurses once per level of nesting and crashes the process (SIGSEGV)
# somewhere past 10,000 levels; no Paimon type nests anywhere near this deep
_JSON_MAX_BRACKETS = 512
_TOO_DEEP = "JSON nested too deeply to be a row of a Paimon table"


def _check_json_depth(chunk: bytes, source: str, lines_before: int) -> None:
    """Refuse a JSON line nested deeper than Python's parser goes (about 900 levels), before
    pyarrow parses it. A line with fewer than _JSON_MAX_BRACKETS opening brackets cannot be
    that deep, so only the rare lines with more are parsed here (vectorised count first)."""
    import json

    import numpy as np

    a = np.frombuffer(chunk, np.uint8)
    opens = (a == 0x5B) | (a == 0x7B)
    if int(np.count_nonzero(opens)) <= _JSON_MAX_BRACKETS:
        return
    starts = np.concatenate(([0], np.flatnonzero(a == 0x0A) + 1))
    starts = starts[starts < len(a)]
    per_line = np.add.reduceat(opens.astype(np.int64), starts)
    ends = np.append(starts[1:], len(a))
    for i in np.flatnonzero(per_line > _JSON_MAX_BRACKETS):
        try:
            json.loads(chunk[starts[i] : ends[i]])
        except RecursionError:
            raise InvalidInput(f"{source}: line {lines_before + int(i) + 1}: {_TOO_DEEP}") from None
        except ValueError:
            pass  # not JSON at all: pyarrow says so, with its own message


def _deep_json_row(text: str) -> int | str:
    """1-based index of the first element of a JSON array text too deep for Python's parser
    (an error path: the elements are decoded one by one)."""
    import json

    dec = json.JSONDecoder()
    i = text.index("[") + 1
    row = 0
    while True:
        while i < len(text) and text[i] in " \t\r\n,":
            i += 1
        if i >= len(text) or text[i] == "]":
            return "?"
        row += 1
        try:
            _, i = dec.raw_decode(text, i)
        except RecursionError:
            return row
        except ValueError:
            return "?"


def read_json(stream: IO[bytes], source: str, wanted: AbstractSet[str], read_types: dict[str, pa.DataType],
              sql_types: Mapping[str, str] | None = None) -> Iterator[pa.Table]:
    """``sql_types`` (column -> the table's type) words the error of a value pyarrow cannot read."""
    import pyarrow as pa
    import pyarrow.json as pj

    explicit = pa.schema(list(read_types.items()))
    rows = 0
    for chunk in _json_chunks(stream, source):
        try:
            t = pj.read_json(
                native_reader(chunk),
                read_options=pj.ReadOptions(block_size=max(len(chunk) + 1, 1 << 20)),
                parse_options=pj.ParseOptions(explicit_schema=explicit, unexpected_field_behavior="infer"),
            )
        except pa.ArrowException as e:
            raise json_error(chunk, source, rows, explicit, sql_types or {}, e) from e
        _check_columns(t.column_names, wanted, source)
        rows += t.num_rows
        yield t


def _check_columns(names: list[str], wanted: AbstractSet[str], source: str) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidInput(f"{source}: column {dup[0]!r} appears more than once")
    row_kind = getattr(wanted, "row_kind", None)
    in_order = getattr(wanted, "table_columns", None)  # InputColumns: the schema's order
    if row_kind is not None and row_kind not in names:  # the name the user gave, not an input column's
        raise InvalidInput(f"{source}: row-kind column {row_kind!r} is missing{did_you_mean(row_kind, names)}")
    wanted = wanted - {row_kind} if row_kind is not None else wanted
    extra = [n for n in names if n not in wanted and n != row_kind]
    if extra:
        columns = list(in_order) if in_order is not None else sorted(wanted)
        lower = {w.lower(): w for w in wanted}
        hint = ""
        if extra[0].lower() in lower:
            hint = f" (did you mean {lower[extra[0].lower()]!r}? names are case-sensitive)"
        rk = ""
        if row_kind is not None:  # JSON reads an absent row-kind column as NULLs: name it here
            rk = f"; --row-kind-column names {row_kind!r}{did_you_mean(row_kind, extra)}"
        raise InvalidInput(
            f"{source}: column {extra[0]!r} is not a column of the table{hint}; "
            f"table columns are {columns}{rk}" if len(extra) == 1 else
            f"{source}: columns {extra} are not columns of the table; table columns are {columns}{rk}"
        )
