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
"""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any

from .errors import InvalidInput, NotFound
from .types import (
    BinaryType,
    BooleanType,
    CharType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    TimestampType,
    TimeType,
    VarBinaryType,
    VarCharType,
    MAX_LENGTH,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from .fileio import FileIO
    from .schema import TableSchema

FORMATS = ("parquet", "csv", "json", "arrow")
ROW_KIND_NAMES = ("+I", "-U", "+U", "-D")  # index = RowKind byte
STDIN = "-"

_EXTENSIONS = {
    "parquet": "parquet", "pq": "parquet",
    "csv": "csv", "tsv": "csv", "txt": "csv",
    "json": "json", "jsonl": "json", "ndjson": "json",
    "arrow": "arrow", "feather": "arrow", "ipc": "arrow", "arrows": "arrow",
}
_COMPRESSION_SUFFIXES = {"gz": "gzip", "bz2": "bz2", "zst": "zstd", "lz4": "lz4"}
_GLOB_CHARS = re.compile(r"[*?\[]")
_BATCH_ROWS = 65_536
_ROW_GROUP_BYTES = 64 << 20  # uncompressed size up to which a row group is read whole
_TEXT_CHUNK_BYTES = 16 << 20
_CSV_NULLS = ["", "NULL", "null", "\\N"]
# a zone offset after a clock time: "...10:00Z", "...10:00:00.5+02:00", "... 10:00 -0130"
_OFFSET_RE = r"\d:\d\d(?::\d\d(?:[.,]\d*)?)?\s*(?:[Zz]|[+-]\d\d(?::?\d\d)?)$"


@dataclass
class InputChunk:
    """One piece of input, converted: the table's columns in schema order and Arrow types."""

    data: pa.Table
    row_kinds: pa.Array | None  # int8 RowKind bytes (0 +I, 1 -U, 2 +U, 3 -D); None = all +I
    source: str  # file path, or "-" for stdin
    first_row: int  # 1-based row number of data's first row within source


@dataclass(frozen=True)
class InputFile:
    """An expanded input: its FileIO (None for stdin), path and format (None = sniff)."""

    file_io: FileIO | None
    path: str
    fmt: str | None
    compression: str | None = None


# ---------------------------------------------------------------------------------------
# Formats and expansion
# ---------------------------------------------------------------------------------------


def normalize_format(fmt: str | None) -> str | None:
    if fmt is None:
        return None
    f = fmt.strip().lower()
    f = {"jsonl": "json", "ndjson": "json", "ipc": "arrow", "feather": "arrow", "pq": "parquet", "tsv": "csv"}.get(f, f)
    if f not in FORMATS:
        raise InvalidInput(f"--format {fmt!r}: expected one of {', '.join(FORMATS)}")
    return f


def format_of_path(path: str) -> tuple[str | None, str | None]:
    """(format, compression codec) from the file name: ``x.csv.gz`` -> ("csv", "gzip")."""
    name = path.rstrip("/").rsplit("/", 1)[-1].lower()
    parts = name.split(".")
    compression = None
    if len(parts) > 2 and parts[-1] in _COMPRESSION_SUFFIXES:
        compression = _COMPRESSION_SUFFIXES[parts[-1]]
        parts = parts[:-1]
    if len(parts) < 2:
        return None, compression
    return _EXTENSIONS.get(parts[-1]), compression


def _is_hidden(name: str) -> bool:
    return name.startswith((".", "_"))


def expand_inputs(
    inputs: Iterable[str], fmt: str | None = None, storage_options: dict[str, Any] | None = None
) -> list[InputFile]:
    """Paths, globs (``data/*.parquet``, ``s3://b/p/*.csv``), directories and ``-`` to files.

    Globs and directories are listed through the input's FileIO (fsspec), sorted by name;
    hidden files (``.x``, ``_SUCCESS``) inside directories are skipped. A glob that matches
    nothing is an error, so a typo never writes an empty commit.
    """
    from .fileio import load_file_io

    forced = normalize_format(fmt)
    out: list[InputFile] = []
    ios: dict[str, FileIO] = {}
    for raw in inputs:
        if raw == STDIN:
            out.append(InputFile(None, STDIN, forced))
            continue
        scheme = raw.split("://", 1)[0] if "://" in raw else "file"
        fio = ios.get(scheme)
        if fio is None:
            fio = ios[scheme] = load_file_io(raw, storage_options)
        for path in _expand_one(fio, raw):
            f, comp = format_of_path(path)
            out.append(InputFile(fio, path, forced or f, comp))
    if not out:
        raise InvalidInput("no input files given")
    return out


def _with_scheme(raw: str, listed: str) -> str:
    if "://" not in raw:
        return listed
    scheme = raw.split("://", 1)[0]
    if scheme in ("file", "local"):
        return f"{scheme}://{listed}" if listed.startswith("/") else listed
    return f"{scheme}://{listed.lstrip('/')}" if "://" not in listed else listed


def _expand_one(fio: FileIO, raw: str) -> list[str]:
    if _GLOB_CHARS.search(raw):
        matches = fio.glob(raw)
        if not matches:
            raise NotFound(f"{raw}: no files match this pattern")
        return [_with_scheme(raw, m) for m in matches]
    if fio.is_dir(raw):
        files = sorted(s.path for s in fio.list_status(raw) if not s.is_dir and not _is_hidden(s.name))
        if not files:
            raise NotFound(f"{raw}: directory has no input files")
        return files
    if not fio.exists(raw):
        raise NotFound(f"{raw}: no such file")
    return [raw]


# ---------------------------------------------------------------------------------------
# Sniffing and opening
# ---------------------------------------------------------------------------------------


def sniff_format(head: bytes) -> str | None:
    """Format from the first bytes: Parquet/Arrow magic, ``{``/``[`` JSON, else text = CSV."""
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ARROW1") or head.startswith(b"\xff\xff\xff\xff"):
        return "arrow"
    text = head.lstrip(b" \t\r\n\xef\xbb\xbf")
    if text.startswith((b"{", b"[")):
        return "json"
    if not head:
        return "csv"
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as e:
        if e.start < len(head) - 4:  # not just a multi-byte char cut at the end
            return None
    return "csv"


class _Replay(io.RawIOBase):
    """A stream that first returns ``head`` and then the rest of ``stream`` (for sniffed stdin)."""

    def __init__(self, head: bytes, stream: IO[bytes]) -> None:
        self._head = head
        self._stream = stream

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        if self._head:
            n = min(len(b), len(self._head))
            b[:n] = self._head[:n]
            self._head = self._head[n:]
            return n
        data = self._stream.read(len(b))
        n = len(data)
        b[:n] = data
        return n


def _open(f: InputFile, stdin: IO[bytes] | None) -> tuple[IO[bytes], str]:
    """(binary stream, format); decompresses ``.gz``/``.zst``/... and sniffs when needed."""
    import pyarrow as pa

    if f.path == STDIN:
        raw: IO[bytes] = stdin if stdin is not None else sys.stdin.buffer
        head = raw.peek(8)[:8] if hasattr(raw, "peek") else raw.read(8)
        stream: Any = raw if hasattr(raw, "peek") else io.BufferedReader(_Replay(head, raw))
        fmt = f.fmt or sniff_format(head)
        if fmt is None:
            raise InvalidInput("-: cannot tell the format of stdin; pass --format parquet|csv|json|arrow")
        if fmt in ("parquet", "arrow") and not head.startswith(b"\xff\xff\xff\xff"):
            stream = _native_reader(stream.read())  # these readers seek; stdin cannot
        return stream, fmt
    assert f.file_io is not None
    handle: Any = f.file_io.open_arrow_input(f.path)  # see there, and _native_reader
    if f.compression:
        handle = pa.CompressedInputStream(handle, f.compression)
    fmt = f.fmt
    if fmt is None:
        if f.compression:
            raise InvalidInput(f"{f.path}: cannot tell the format from the name; pass --format")
        head = handle.read(8)
        handle.seek(0)
        fmt = sniff_format(head)
        if fmt is None:
            raise InvalidInput(f"{f.path}: cannot tell the format from the name or content; pass --format")
    return handle, fmt


# ---------------------------------------------------------------------------------------
# Reading raw batches (before conversion)
# ---------------------------------------------------------------------------------------


def _text_read_type(dt: DataType) -> pa.DataType | None:
    """Arrow type text formats read a column as before our checked cast (None = let it infer)."""
    import pyarrow as pa

    if isinstance(dt, (CharType, VarCharType, BinaryType, VarBinaryType, DateType, TimeType, TimestampType,
                       LocalZonedTimestampType)):
        return pa.string()
    if isinstance(dt, DecimalType):
        # widest scale that still holds every integer digit the column can: exact text, any loss
        # is then reported by the checked cast (with its row)
        return pa.decimal128(38, 38 - (dt.precision - dt.scale))
    return None


def _read_parquet(stream: IO[bytes], source: str, wanted: set[str]) -> Iterator[pa.Table]:
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
    try:
        for i in range(pf.num_row_groups):
            rg = meta.row_group(i)
            # use_threads=False: see _native_reader (the stream is a Python object)
            if rg.num_rows <= 4 * _BATCH_ROWS and rg.total_byte_size <= _ROW_GROUP_BYTES:
                # a small row group is decoded whole, then cut into batches
                for batch in pf.read_row_group(i, use_threads=False).to_batches(max_chunksize=_BATCH_ROWS):
                    yield pa.Table.from_batches([batch])
            else:  # a big one is streamed so one row group never has to fit in memory
                for batch in pf.iter_batches(batch_size=_BATCH_ROWS, row_groups=[i], use_threads=False):
                    yield pa.Table.from_batches([batch])
    except (pa.ArrowException, OSError) as e:
        raise InvalidInput(f"{source}: cannot read Parquet data ({e})") from e


def _read_arrow(stream: IO[bytes], source: str, wanted: set[str]) -> Iterator[pa.Table]:
    import pyarrow as pa

    try:
        seekable = hasattr(stream, "seekable") and stream.seekable()
        head = stream.read(6)
        if seekable:
            stream.seek(0)
        serial = pa.ipc.IpcReadOptions(use_threads=False)  # see _native_reader
        if head == b"ARROW1":
            reader = pa.ipc.open_file(stream, options=serial)
            _check_columns(reader.schema.names, wanted, source)
            for i in range(reader.num_record_batches):
                yield pa.Table.from_batches([reader.get_batch(i)])
            return
        if not seekable:
            stream = io.BufferedReader(_Replay(head, stream))  # type: ignore[arg-type]
        sreader = pa.ipc.open_stream(stream, options=serial)
        _check_columns(sreader.schema.names, wanted, source)
        for batch in sreader:
            yield pa.Table.from_batches([batch])
    except pa.ArrowException as e:
        raise InvalidInput(f"{source}: not a readable Arrow IPC file or stream ({e})") from e


def _native_reader(data: bytes) -> pa.BufferReader:
    """``data`` copied into Arrow memory, as a stream Arrow's readers can own.

    Why: the CSV and JSON readers read ahead on Arrow's I/O threads and Parquet/IPC decode on
    its CPU threads. Over a Python object (a file, ``BytesIO``, ``bytes``) those threads take
    the GIL to read it and to drop it -- sometimes after the call returned or raised -- and a
    thread that does so while the interpreter exits aborts the process ("terminate called
    without an active exception"). Python streams are therefore read here in chunks and
    handed over as Arrow buffers, or decoded with ``use_threads=False``.
    """
    import pyarrow as pa

    buf = pa.allocate_buffer(len(data))
    memoryview(buf).cast("B")[:] = data
    return pa.BufferReader(buf)


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


def _read_csv(stream: IO[bytes], source: str, wanted: set[str], read_types: dict[str, pa.DataType]) -> Iterator[pa.Table]:
    """CSV in line-cut chunks (:func:`_native_reader`), each parsed by pyarrow's reader; the
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
    parse = pcsv.ParseOptions(delimiter=delimiter)
    names: list[str] | None = None
    rows = 0
    for chunk in _line_chunks(stream):
        if not chunk.endswith((b"\n", b"\r")):
            # pyarrow calls a text without any newline an "Empty CSV file", so a header-only
            # file (or one-line garbage) would silently be zero rows, its names unchecked
            chunk += b"\n"
        if names is None:
            try:
                reader = pcsv.open_csv(_native_reader(chunk), read_options=pcsv.ReadOptions(block_size=_TEXT_CHUNK_BYTES),
                                       parse_options=parse, convert_options=convert)
            except StopIteration:
                return
            except pa.ArrowException as e:
                if "Empty CSV file" in str(e):
                    return
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
                    _native_reader(chunk),
                    read_options=pcsv.ReadOptions(block_size=_TEXT_CHUNK_BYTES, column_names=names),
                    parse_options=parse, convert_options=convert)
            except pa.ArrowException as e:
                raise InvalidInput(f"{source}: CSV data after row {rows}: {e}") from e
        while True:
            try:
                batch = reader.read_next_batch()
            except StopIteration:
                break
            except pa.ArrowException as e:
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


def _read_json(stream: IO[bytes], source: str, wanted: set[str], read_types: dict[str, pa.DataType]) -> Iterator[pa.Table]:
    import pyarrow as pa
    import pyarrow.json as pj

    explicit = pa.schema(list(read_types.items()))
    rows = 0
    for chunk in _json_chunks(stream, source):
        try:
            t = pj.read_json(
                _native_reader(chunk),
                read_options=pj.ReadOptions(block_size=max(len(chunk) + 1, 1 << 20)),
                parse_options=pj.ParseOptions(explicit_schema=explicit, unexpected_field_behavior="infer"),
            )
        except pa.ArrowException as e:
            raise InvalidInput(f"{source}: JSON after row {rows}: {e}") from e
        _check_columns(t.column_names, wanted, source)
        rows += t.num_rows
        yield t


def _check_columns(names: list[str], wanted: set[str], source: str) -> None:
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise InvalidInput(f"{source}: column {dup[0]!r} appears more than once")
    extra = [n for n in names if n not in wanted]
    if extra:
        lower = {w.lower(): w for w in wanted}
        hint = ""
        if extra[0].lower() in lower:
            hint = f" (did you mean {lower[extra[0].lower()]!r}? names are case-sensitive)"
        raise InvalidInput(
            f"{source}: column {extra[0]!r} is not a column of the table{hint}; "
            f"table columns are {sorted(wanted)}" if len(extra) == 1 else
            f"{source}: columns {extra} are not columns of the table; table columns are {sorted(wanted)}"
        )


# ---------------------------------------------------------------------------------------
# Checked conversion
# ---------------------------------------------------------------------------------------


class _BadValue(Exception):
    def __init__(self, index: int, message: str) -> None:
        super().__init__(message)
        self.index = index
        self.message = message


def _display(arr: pa.Array, i: int) -> str:
    import decimal

    try:
        v = arr[i].as_py()
    except Exception:  # noqa: BLE001 - only for the message
        v = str(arr[i])
    if isinstance(v, decimal.Decimal):
        s = format(v, "f")
        s = s.rstrip("0").rstrip(".") if "." in s else s
    else:
        s = repr(v)
    return s if len(s) <= 60 else s[:57] + "..."


def _first_true(mask: pa.Array) -> int:
    import pyarrow.compute as pc

    return int(pc.index(pc.fill_null(mask, False), True).as_py())


def _first_failing(arr: pa.Array, fn: Callable[[pa.Array], pa.Array]) -> tuple[int, str]:
    """Index and message of the first element ``fn`` fails on (fn fails element-wise)."""
    lo, hi = 0, len(arr)
    while hi - lo > 1:
        mid = (lo + hi) // 2
        try:
            fn(arr.slice(lo, mid - lo))
        except Exception:  # noqa: BLE001 - any failure narrows the search
            hi = mid
        else:
            lo = mid
    try:
        fn(arr.slice(lo, 1))
        return lo, "cannot be converted"
    except Exception as e:  # noqa: BLE001
        return lo, _reason(e)


def _reason(e: Exception) -> str:
    msg = str(e).split("\n", 1)[0]
    msg = re.sub(r"^(Invalid|NotImplemented): ", "", msg)
    msg = msg.split(". If these timestamps", 1)[0]
    return msg if len(msg) <= 160 else msg[:157] + "..."


def _checked(arr: pa.Array, fn: Callable[[pa.Array], pa.Array], sql: str) -> pa.Array:
    import pyarrow as pa

    try:
        return fn(arr)
    except (pa.ArrowInvalid, ValueError, OverflowError, _ConversionError):
        i, why = _first_failing(arr, fn)
        raise _BadValue(i, f"value {_display(arr, i)} cannot be stored as {sql} ({why})") from None
    except pa.ArrowNotImplementedError:
        raise _BadValue(-1, f"cannot convert {arr.type} values to {sql}") from None


class _ConversionError(ValueError):
    pass


def _is_string(t: pa.DataType) -> bool:
    import pyarrow as pa

    return pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t)


def _cast(arr: pa.Array, target: pa.DataType) -> pa.Array:
    import pyarrow.compute as pc

    return pc.cast(arr, target, safe=True)


def _float_to_decimal(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """pyarrow rounds float -> decimal silently; refuse values that do not round-trip."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = _cast(arr, target)
    back = pc.cast(out, pa.float64())
    src = pc.cast(arr, pa.float64())
    if not pc.all(pc.fill_null(pc.equal(back, src), True)).as_py():
        raise _ConversionError("digits would be lost")
    return out


def _to_float32(arr: pa.Array) -> pa.Array:
    """float64 -> float32 rounds (as Java's cast does) but must not overflow to infinity."""
    import pyarrow as pa
    import pyarrow.compute as pc

    src = arr if pa.types.is_floating(arr.type) else _cast(arr, pa.float64())
    out = pc.cast(src, pa.float32())
    overflow = pc.and_(pc.is_finite(src), pc.invert(pc.is_finite(out)))
    if pc.any(pc.fill_null(overflow, False)).as_py():
        raise _ConversionError("out of FLOAT range")
    return out


def _parse_ts_text(arr: pa.Array, unit: str, aware: bool) -> pa.Array:
    """Text -> timestamp[unit] (UTC if ``aware``); more fraction digits than ``unit`` holds fail."""
    import pyarrow as pa
    import pyarrow.compute as pc

    tz = "UTC" if aware else None
    try:
        return pc.cast(arr, pa.timestamp(unit, tz))
    except pa.ArrowInvalid:
        if unit == "ns":
            raise
        # maybe just more fraction digits: parse at nanos, then a checked (lossless) cast
        return pc.cast(pc.cast(arr, pa.timestamp("ns", tz)), pa.timestamp(unit, tz), safe=True)


def _parse_timestamp(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """ISO-8601 text -> timestamp: naive text is wall clock (UTC for LTZ), offsets go to UTC."""
    import pyarrow as pa
    import pyarrow.compute as pc

    has_offset = pc.fill_null(pc.match_substring_regex(arr, _OFFSET_RE), False)
    null_text = pa.scalar(None, arr.type)
    parts = []
    for aware, mask in ((True, has_offset), (False, pc.invert(has_offset))):
        if not pc.any(mask).as_py():
            continue
        ts = _parse_ts_text(pc.if_else(mask, arr, null_text), target.unit, aware)
        parts.append((mask, pc.cast(ts, target)))  # naive <-> UTC only relabels the zone
    if not parts:
        return pa.nulls(len(arr), target)
    if len(parts) == 1:
        return parts[0][1]
    return pc.if_else(parts[0][0], parts[0][1], parts[1][1])


def _parse_time(arr: pa.Array, target: pa.DataType) -> pa.Array:
    """``HH:MM:SS[.fff]`` text -> time32[ms] (pyarrow has no string -> time cast)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    ts = pc.cast(pc.binary_join_element_wise("1970-01-01T", arr, ""), pa.timestamp("ns"))
    return pc.cast(pc.cast(ts, pa.time64("ns")), target, safe=True)


def _converter(source: pa.DataType, dt: DataType, target: pa.DataType) -> Callable[[pa.Array], pa.Array]:
    import pyarrow as pa

    if _is_string(source):
        if isinstance(dt, TimeType):
            return lambda a: _parse_time(a, target)
        if isinstance(dt, (TimestampType, LocalZonedTimestampType)):
            return lambda a: _parse_timestamp(a, target)
        if isinstance(dt, FloatType):
            return lambda a: _to_float32(_cast(a, pa.float64()))
        if isinstance(dt, BooleanType):
            return lambda a: _cast(pa.compute.utf8_lower(a), target)
        return lambda a: _cast(a, target)
    if isinstance(dt, DecimalType):
        if pa.types.is_floating(source):
            return lambda a: _float_to_decimal(a, target)
        if pa.types.is_integer(source):
            return lambda a: _cast(_cast(a, pa.decimal128(38, 0)), target)
    if isinstance(dt, FloatType) and (pa.types.is_floating(source) or pa.types.is_decimal(source)):
        return _to_float32
    if isinstance(dt, DoubleType) and pa.types.is_decimal(source):
        return lambda a: _cast(a, target)
    return lambda a: _cast(a, target)


def _has_strings(t: pa.DataType) -> bool:
    return _is_string(t) or any(_has_strings(t.field(i).type) for i in range(t.num_fields))


def _check_utf8(arr: pa.Array) -> None:
    """Strings must be valid UTF-8: text and JSON readers (and Arrow files) pass bytes through
    unchecked, and Java would fail on the data files we would write. One vectorised pass."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if not _has_strings(arr.type):
        return
    try:
        arr.validate(full=True)
        return
    except pa.ArrowInvalid:
        pass
    i, _ = _first_failing(arr, lambda a: a.validate(full=True))
    where = ""
    if _is_string(arr.type):
        raw = pc.cast(arr.slice(i, 1), pa.binary())[0].as_py()
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            where = f" at byte {e.start + 1} ({e.reason}: {raw[max(0, e.start - 8) : e.start + 8]!r})"
    raise _BadValue(i, f"value is not valid UTF-8{where}")


def convert_column(arr: pa.Array | pa.ChunkedArray, dt: DataType) -> pa.Array:
    """``arr`` as the Arrow type of ``dt``, refusing any value that would change (see module)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .arrow_schema import arrow_type

    target = arrow_type(dt)
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if isinstance(dt, (MapType, MultisetType)) and pa.types.is_struct(arr.type):
        raise _BadValue(-1, f"cannot convert {arr.type} values to {dt.as_sql()} (give maps as Arrow/Parquet maps)")
    sql = dt.as_sql().replace(" NOT NULL", "")
    if pa.types.is_null(arr.type):
        out = pa.nulls(len(arr), target)
    elif arr.type.equals(target, check_metadata=False):
        out = arr
    else:
        out = _checked(arr, _converter(arr.type, dt, target), sql)
    _check_utf8(out)
    if isinstance(dt, (CharType, VarCharType, BinaryType, VarBinaryType)) and dt.length < MAX_LENGTH:
        lengths = pc.utf8_length(out) if isinstance(dt, (CharType, VarCharType)) else pc.binary_length(out)
        too_long = pc.greater(lengths, dt.length)
        if pc.any(too_long).as_py():
            i = _first_true(too_long)
            unit = "characters" if isinstance(dt, (CharType, VarCharType)) else "bytes"
            raise _BadValue(i, f"value {_display(out, i)} is longer than {sql} ({lengths[i].as_py()} {unit})")
    return out


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
    constants: dict[str, str] = field(default_factory=dict)  # values for columns the input lacks

    @property
    def wanted(self) -> set[str]:
        names = set(self.schema.field_names)
        if self.row_kind_column:
            names.add(self.row_kind_column)
        return names

    def read_types(self, all_text: bool = False) -> dict[str, pa.DataType]:
        """Read types for text inputs; ``all_text`` (CSV) reads every atomic column as text so
        that a bad value anywhere is reported by the checked cast with its exact row."""
        import pyarrow as pa

        out: dict[str, pa.DataType] = {}
        for f in self.schema.fields:
            t = _text_read_type(f.type)
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
        text = arr if _is_string(arr.type) else pc.cast(arr, pa.string())
        kinds = pc.index_in(pc.utf8_trim_whitespace(text), value_set=pa.array(ROW_KIND_NAMES))
        bad = pc.is_null(kinds)
    if pc.any(pc.fill_null(bad, True)).as_py():
        i = _first_true(pc.fill_null(bad, True))
        raise InvalidInput(
            f"{source}: row {first_row + i}, column {column!r}: row kind {_display(arr, i)} "
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
            except _BadValue as e:
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
            from .arrow_schema import arrow_type

            arrays.append(pa.nulls(n, arrow_type(f.type)))
            continue
        try:
            col = convert_column(table.column(f.name), f.type)
        except _BadValue as e:
            where = f"row {first_row + e.index}, " if e.index >= 0 else ""
            raise InvalidInput(f"{source}: {where}column {f.name!r}: {e.message}") from None
        if f.name in plan.not_null and col.null_count:
            i = _first_true(pc.is_null(col))
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
    from .arrow_schema import arrow_schema

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
    files = inputs if inputs and isinstance(next(iter(inputs)), InputFile) else expand_inputs(inputs, fmt, storage_options)  # type: ignore[arg-type]
    for f in files:  # type: ignore[union-attr]
        yield from read_file(f, plan, stdin)


def read_file(f: InputFile, plan: _Plan, stdin: IO[bytes] | None = None) -> Iterator[InputChunk]:
    stream, fmt = _open(f, stdin)
    try:
        wanted = plan.wanted
        if fmt == "parquet":
            raw = _read_parquet(stream, f.path, wanted)
        elif fmt == "arrow":
            raw = _read_arrow(stream, f.path, wanted)
        elif fmt == "csv":
            raw = _read_csv(stream, f.path, wanted, plan.read_types(all_text=True))
        else:
            raw = _read_json(stream, f.path, wanted, plan.read_types())
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
