"""In-memory Arrow data as input of ``Table.write``.

The write path reads files (and stdin) through one checked conversion (names matched, types
converted with overflow / lost-digit / NOT NULL checks, the first bad row reported). Arrow
data goes through the same path: it is handed over as an Arrow IPC stream on the write's
stdin channel, serialized one batch at a time as the writer reads, so memory stays about
one batch whatever the size of the data. Errors name the input ``-``, as for stdin.
"""

from __future__ import annotations

import io
import itertools
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput

if TYPE_CHECKING:
    import pyarrow as pa

BATCH_ROWS = 65_536  # rows per batch taken from a Table (as the file readers' batches)


def is_arrow_data(data: object) -> bool:
    """Whether ``data`` is Arrow data rather than input paths (pyarrow is only loaded when it is)."""
    if isinstance(data, str) or hasattr(data, "__fspath__"):
        return False
    if isinstance(data, (list, tuple)) and all(isinstance(x, str) or hasattr(x, "__fspath__") for x in data):
        return False
    return True


def arrow_stream(data: Any) -> io.BufferedReader:
    """``data`` (a Table, RecordBatch, RecordBatchReader, or an iterable of RecordBatches or
    Tables of one schema) as a readable Arrow IPC stream."""
    schema, batches = _schema_and_batches(data)
    return io.BufferedReader(_IpcStream(_ipc_messages(schema, batches)), buffer_size=1 << 20)


def _schema_and_batches(data: Any) -> tuple[pa.Schema, Iterator[pa.RecordBatch]]:
    import pyarrow as pa

    if isinstance(data, pa.Table):
        return data.schema, iter(data.to_batches(max_chunksize=BATCH_ROWS))
    if isinstance(data, pa.RecordBatch):
        return data.schema, iter([data])
    if isinstance(data, pa.RecordBatchReader):
        return data.schema, iter(data)
    if not isinstance(data, Iterable):
        raise InvalidInput(f"write: cannot write a {type(data).__name__}; give input paths, a pyarrow Table, "
                           "RecordBatch or RecordBatchReader, or an iterable of record batches")
    items = iter(data)
    first = next(items, None)
    if first is None:
        raise InvalidInput("write: the iterable of record batches is empty (give a pyarrow Table with the "
                           "columns to write no rows)")

    def flat() -> Iterator[pa.RecordBatch]:
        for x in itertools.chain([first], items):
            if isinstance(x, pa.Table):
                yield from x.to_batches(max_chunksize=BATCH_ROWS)
            elif isinstance(x, pa.RecordBatch):
                yield x
            else:
                raise InvalidInput(f"write: expected record batches, got a {type(x).__name__}")

    if not isinstance(first, (pa.Table, pa.RecordBatch)):
        raise InvalidInput(f"write: expected record batches, got a {type(first).__name__}")
    return first.schema, flat()


def _ipc_messages(schema: pa.Schema, batches: Iterator[pa.RecordBatch]) -> Iterator[bytes]:
    """The IPC stream's bytes, a message (schema, each batch, end) at a time."""
    import pyarrow as pa

    sink = io.BytesIO()

    def drain() -> bytes:
        out = sink.getvalue()
        sink.seek(0)
        sink.truncate()
        return out

    writer = pa.ipc.new_stream(sink, schema)
    try:
        yield drain()
        for batch in batches:
            try:
                writer.write_batch(batch)
            except pa.ArrowInvalid as e:  # another schema than the first batch's
                raise InvalidInput(f"write: record batches of different schemas ({e})") from None
            yield drain()
    finally:
        writer.close()
    yield drain()


class _IpcStream(io.RawIOBase):
    """A raw stream over byte chunks produced on demand."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        self._chunks = chunks
        self._pending = memoryview(b"")

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while not self._pending:
            chunk = next(self._chunks, None)
            if chunk is None:
                return 0
            self._pending = memoryview(chunk)
        n = min(len(b), len(self._pending))
        b[:n] = self._pending[:n]
        self._pending = self._pending[n:]
        return n

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close is not None:
            close()
        super().close()
