"""Which files a ``write`` reads: paths, globs, directories and stdin expanded to
:class:`InputFile`, each format told from the name or sniffed from the first bytes, and opened
(decompressing ``.gz``/``.zst``/...)."""

from __future__ import annotations

import io
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import IO, TYPE_CHECKING, Any

from ..errors import InvalidInput, NotFound
from ..io.fileio import load_file_io

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.fileio import FileIO

FORMATS = ("parquet", "csv", "json", "arrow")
STDIN = "-"

_EXTENSIONS = {
    "parquet": "parquet", "pq": "parquet",
    "csv": "csv", "tsv": "csv", "txt": "csv",
    "json": "json", "jsonl": "json", "ndjson": "json",
    "arrow": "arrow", "feather": "arrow", "ipc": "arrow", "arrows": "arrow",
}
_COMPRESSION_SUFFIXES = {"gz": "gzip", "bz2": "bz2", "zst": "zstd", "lz4": "lz4"}
_GLOB_CHARS = re.compile(r"[*?\[]")

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


def _extension_of(path: str) -> tuple[str | None, str | None]:
    """(extension, compression codec) of the file name: ``x.CSV.gz`` -> ("csv", "gzip"),
    ``x.gz`` -> (None, "gzip"), ``part-0`` -> (None, None)."""
    name = path.rstrip("/").rsplit("/", 1)[-1].lower()
    parts = name.split(".")
    compression = None
    if len(parts) >= 2 and parts[-1] in _COMPRESSION_SUFFIXES:
        compression = _COMPRESSION_SUFFIXES[parts[-1]]
        parts = parts[:-1]
    return (parts[-1] if len(parts) >= 2 else None), compression


def format_of_path(path: str) -> tuple[str | None, str | None]:
    """(format, compression codec) from the file name: ``x.csv.gz`` -> ("csv", "gzip")."""
    ext, compression = _extension_of(path)
    return (None if ext is None else _EXTENSIONS.get(ext)), compression


def _check_extension(path: str) -> None:
    """A name whose extension is no input format is refused, not guessed at: ``gen.py`` or
    ``notes.md`` sniffed as text would load as CSV (their first line taken as a header).
    Names without an extension (``part-00000``) are still sniffed: their content decides."""
    ext, _ = _extension_of(path)
    if ext is not None and ext not in _EXTENSIONS:
        raise InvalidInput(f"{path}: unknown format; use --format parquet|csv|tsv|json|jsonl|arrow "
                           f"('.{ext}' is not an input extension)")


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
            if forced is None:
                _check_extension(path)
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


class Replay(io.RawIOBase):
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


def open_input(f: InputFile, stdin: IO[bytes] | None) -> tuple[IO[bytes], str]:
    """(binary stream, format); decompresses ``.gz``/``.zst``/... and sniffs when needed."""
    import pyarrow as pa

    if f.path == STDIN:
        raw: IO[bytes] = stdin if stdin is not None else sys.stdin.buffer
        head = raw.peek(8)[:8] if hasattr(raw, "peek") else raw.read(8)
        stream: Any = raw if hasattr(raw, "peek") else io.BufferedReader(Replay(head, raw))
        fmt = f.fmt or sniff_format(head)
        if fmt is None:
            raise InvalidInput("-: cannot tell the format of stdin; pass --format parquet|csv|json|arrow")
        if fmt in ("parquet", "arrow") and not head.startswith(b"\xff\xff\xff\xff"):
            stream = native_reader(stream.read())  # these readers seek; stdin cannot
        return stream, fmt
    assert f.file_io is not None
    handle: Any = f.file_io.open_arrow_input(f.path)  # see there, and native_reader
    if f.compression:
        handle = pa.CompressedInputStream(handle, f.compression)
    fmt = f.fmt
    if fmt is None:
        if f.compression:
            raise InvalidInput(f"{f.path}: unknown format; use --format parquet|csv|tsv|json|jsonl|arrow (compressed "
                               "content is not sniffed)")
        head = handle.read(8)
        handle.seek(0)
        fmt = sniff_format(head)
        if fmt is None:
            raise InvalidInput(f"{f.path}: cannot tell the format from the name or content; pass --format")
    return handle, fmt


def native_reader(data: bytes) -> pa.BufferReader:
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
