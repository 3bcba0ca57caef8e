"""ORC data files as Java Paimon writes and reads them (Java ``OrcFileFormat``): TIME is stored
as ORC int millis, since pyarrow's ORC writer has no TIME type."""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from ..errors import CorruptMetadata, InvalidInput, NotYetSupported
from .orc_timestamps import check_orc_timestamps, check_orc_writable, refusal_for, timestamp_columns

if TYPE_CHECKING:
    import pyarrow as pa

    from ..io.fileio import FileIO
    from ..schema.options import CoreOptions

_ORC_CODECS = {"zstd": "zstd", "snappy": "snappy", "lz4": "lz4", "zlib": "zlib", "gzip": "zlib",
               "none": "uncompressed", "uncompressed": "uncompressed"}


def orc_compression(options: CoreOptions) -> str:
    """pyarrow's name of the table's ``file.compression`` for ORC (InvalidInput if it has none)."""
    codec = options.file_compression.lower()
    if codec not in _ORC_CODECS:
        raise InvalidInput(f"file.compression={codec!r} is not supported for orc (use {', '.join(_ORC_CODECS)})")
    return _ORC_CODECS[codec]


def _orc_physical(t: pa.DataType) -> pa.DataType:
    """pyarrow's ORC writer has no TIME type; Java stores TIME as ORC int millis."""
    import pyarrow as pa

    if pa.types.is_time32(t):
        return pa.int32()
    if pa.types.is_struct(t):
        return pa.struct([t.field(i).with_type(_orc_physical(t.field(i).type)) for i in range(t.num_fields)])
    if pa.types.is_map(t):
        return pa.map_(t.key_field.with_type(_orc_physical(t.key_type)), t.item_field.with_type(_orc_physical(t.item_type)))
    if pa.types.is_list(t):
        return pa.list_(t.value_field.with_type(_orc_physical(t.value_type)))
    return t


def orc_physical(table: pa.Table) -> pa.Table:
    """``table`` with the column types the ORC writer stores (TIME as int32, no field metadata);
    a timestamp it would store wrong is refused (:func:`.orc_timestamps.check_orc_writable`)."""
    import pyarrow as pa

    check_orc_writable(table)
    schema = pa.schema([f.with_type(_orc_physical(f.type)).remove_metadata() for f in table.schema])
    return table if schema.equals(table.schema) else table.cast(schema)


def write_orc(table: pa.Table, options: CoreOptions) -> pa.Buffer:
    """One whole ORC file holding ``table`` (already conformed to the file schema)."""
    import pyarrow as pa
    import pyarrow.orc as orc

    compression = orc_compression(options)
    table = orc_physical(table)
    sink = pa.BufferOutputStream()
    orc.write_table(table, sink, compression=compression)
    return sink.getvalue()


def open_orc_writer(sink: Any, options: CoreOptions) -> Any:
    """A streaming ORC writer on ``sink`` (fed :func:`orc_physical` tables)."""
    import pyarrow.orc as orc

    return orc.ORCWriter(sink, compression=orc_compression(options))


def iter_orc(
    file_io: FileIO, path: str, names: list[str], batch_rows: int, convert: Callable[[pa.Table], pa.Table]
) -> Iterator[pa.RecordBatch]:
    """The file's ``names`` columns stripe by stripe, each typed by ``convert``."""
    import pyarrow.orc as orc

    with file_io.open_arrow_input(path) as f:
        try:
            of = orc.ORCFile(f)
            stamps = _checked(of, f, path, names)
            for i in range(of.nstripes):
                try:
                    stripe = of.read_stripe(i, columns=names)
                except (OSError, ValueError) as e:
                    refusal = _overflow(e, path, stamps, functools.partial(_read_stripe_of, of, i))
                    if refusal is None:
                        raise
                    raise refusal from e
                yield from convert(stripe).to_batches(max_chunksize=batch_rows)
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise CorruptMetadata(path, f"cannot read ORC: {e}") from e


def read_orc(file_io: FileIO, path: str, names: list[str]) -> pa.Table:
    import pyarrow.orc as orc

    with file_io.open_arrow_input(path) as f:
        try:
            of = orc.ORCFile(f)
            stamps = _checked(of, f, path, names)
            try:
                return of.read(columns=names)
            except (OSError, ValueError) as e:
                refusal = _overflow(e, path, stamps, lambda c: of.read(columns=[c]))
                if refusal is None:
                    raise
                raise refusal from e
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise CorruptMetadata(path, f"cannot read ORC: {e}") from e


def _read_stripe_of(of: Any, i: int, column: str) -> Any:
    return of.read_stripe(i, columns=[column])


def _checked(of: Any, f: Any, path: str, names: list[str] | None) -> list[str]:
    """The timestamp columns of ``names``, once their statistics show every value fits
    pyarrow's nanoseconds (:mod:`.orc_timestamps`); a file without any is not looked at again."""
    stamps = timestamp_columns(of.schema, names)
    if stamps:
        check_orc_timestamps(f, path, stamps)
    return stamps


def _overflow(error: Exception, path: str, stamps: list[str], read_one: Callable[[str], Any]) -> NotYetSupported | None:
    """pyarrow 26's refusal of a timestamp beyond its nanoseconds (missed by the statistics),
    naming the column; None for any other error."""
    if refusal_for(error, path, "?") is None:
        return None
    for column in stamps:
        try:
            read_one(column)
        except (OSError, ValueError) as e:
            refusal = refusal_for(e, path, column)
            if refusal is not None:
                return refusal
    return refusal_for(error, path, ", ".join(stamps))
