"""Parquet data files as Java Paimon writes and reads them (Java ``ParquetFileFormat``).

* TIMESTAMP(p>6) must be Parquet INT96 (0.9 refuses INT64 nanos). pyarrow can only write
  INT96 for every timestamp column of a file at once, and 0.9 refuses INT96 for p<=6, so a
  file that mixes both stores its p<=6 columns as bare INT64 millis/micros, which 0.9 reads
  by precision (``ParquetTimestampVector``).
* Decimals use INT32/INT64/FIXED by precision (``store_decimal_as_integer``), like Java.
* Field ids are written because Java 1.0+ does and engines use them for evolution.
* Reading INT96: pyarrow's nanoseconds wrap silently outside 1677-09-21..2262-04-11, so the raw
  values of INT96 columns are checked first and a file holding one outside is refused
  (:mod:`.parquet_int96`); files without INT96 pay a scan of their footer's leaf columns.
"""

from __future__ import annotations

import datetime as _dt
from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from ..errors import CorruptMetadata, InvalidInput
from .parquet_int96 import check_int96, int96_columns

if TYPE_CHECKING:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from ..io.fileio import FileIO
    from ..schema.options import CoreOptions

_PARQUET_CODECS = {"zstd": "zstd", "snappy": "snappy", "gzip": "gzip", "lz4": "lz4", "brotli": "brotli",
                   "none": "none", "uncompressed": "none"}
_DICT_SAMPLE_ROWS = 8192


def dictionary_columns(table: pa.Table) -> bool | list[str]:
    """Columns worth dictionary encoding, as parquet-mr decides after its first page.

    Why: parquet-cpp dictionary-encodes every column until the dictionary passes 1 MB, so
    unique columns (keys, ``_SEQUENCE_NUMBER``, measures) of a typical data file were stored
    as dictionary + indices: twice the encode time and ~1.7x the bytes. Java's writer drops
    the dictionary when it does not pay (``isCompressionSatisfying``); here a column keeps
    it when a sample of its first rows repeats values (at most half of them distinct).
    Nested columns keep pyarrow's default (their leaf paths are not listed here).
    """
    import pyarrow as pa
    import pyarrow.compute as pc

    if table.num_rows == 0 or any(pa.types.is_nested(f.type) for f in table.schema):
        return True
    out = []
    for name, col in zip(table.column_names, table.columns, strict=True):
        sample = col.slice(0, _DICT_SAMPLE_ROWS)
        valid = len(sample) - sample.null_count
        if valid == 0 or pc.count_distinct(sample).as_py() * 2 <= valid:
            out.append(name)
    return out


def _has_nanos(t: pa.DataType) -> bool:
    import pyarrow as pa

    if pa.types.is_timestamp(t):
        return t.unit == "ns"
    if pa.types.is_struct(t):
        return any(_has_nanos(t.field(i).type) for i in range(t.num_fields))
    if pa.types.is_map(t):
        return _has_nanos(t.key_type) or _has_nanos(t.item_type)
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _has_nanos(t.value_type)
    return False


def parquet_writer_options(table: pa.Table, options: CoreOptions) -> tuple[dict[str, Any], bool]:
    """``pyarrow.parquet`` writer settings for the table's options (dictionary choice from
    ``table``), and whether the file stores INT96 timestamps."""
    codec = options.file_compression.lower()
    if codec not in _PARQUET_CODECS:
        raise InvalidInput(f"file.compression={codec!r} is not supported for parquet (use {', '.join(_PARQUET_CODECS)})")
    int96 = any(_has_nanos(f.type) for f in table.schema)
    phys = parquet_physical(table, int96)
    kwargs: dict[str, Any] = {"use_dictionary": dictionary_columns(phys)}
    if _PARQUET_CODECS[codec] == "zstd":
        kwargs["compression_level"] = options.file_compression_zstd_level
    kwargs.update(
        compression=_PARQUET_CODECS[codec],
        use_compliant_nested_type=True,
        store_decimal_as_integer=True,
        use_deprecated_int96_timestamps=int96,
        data_page_size=options.get_memory_bytes("page-size") or 64 * 1024,
        write_statistics=True,
    )
    return kwargs, int96


def parquet_physical(table: pa.Table, int96: bool) -> pa.Table:
    """With INT96 in the file, p<=6 timestamp columns are stored as bare INT64 (module docstring)."""
    import pyarrow as pa

    if not int96:
        return table
    cols, flds = [], []
    for col, f in zip(table.columns, table.schema, strict=True):
        if pa.types.is_timestamp(f.type) and f.type.unit != "ns":
            col = col.cast(pa.int64())
            f = f.with_type(pa.int64())
        cols.append(col)
        flds.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(flds))


def write_parquet(table: pa.Table, options: CoreOptions) -> pa.Buffer:
    """One whole Parquet file holding ``table`` (already conformed to the file schema)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    kwargs, int96 = parquet_writer_options(table, options)
    sink = pa.BufferOutputStream()
    pq.write_table(parquet_physical(table, int96), sink, **kwargs)
    return sink.getvalue()


def iter_parquet(
    file_io: FileIO, path: str, names: list[str], batch_rows: int, low_memory: bool,
    convert: Callable[[pa.RecordBatch], pa.Table], row_groups: list[int] | None = None,
) -> Iterator[pa.RecordBatch]:
    """The file's ``names`` columns batch by batch (of ``row_groups``, all by default), each
    typed by ``convert``.

    ``low_memory``: pages are read through a small buffer instead of whole column chunks
    (row groups of Java files are up to 128 MB; compaction keeps one per run open).
    """
    import pyarrow.parquet as pq

    with file_io.open_arrow_input(path) as f:
        try:
            pf = (pq.ParquetFile(f, buffer_size=1 << 20, pre_buffer=False) if low_memory
                  else pq.ParquetFile(f))
            int96 = int96_columns(pf.schema, names)
            if int96:
                check_int96(f, path, pf.metadata, row_groups, int96)
            for b in pf.iter_batches(batch_size=batch_rows, row_groups=row_groups, columns=names,
                                      use_threads=False):
                yield from convert(b).to_batches()
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise CorruptMetadata(path, f"cannot read Parquet: {e}") from e


def read_parquet(file_io: FileIO, path: str, names: list[str]) -> pa.Table:
    """The file's ``names`` columns (those present; a missing one is the caller's error)."""
    import pyarrow.parquet as pq

    with file_io.open_arrow_input(path) as f:
        try:
            # not pq.read_table: its dataset scan leaves tasks running after it returns or
            # raises (see FileIO.open_arrow_input)
            pf = pq.ParquetFile(f)
            present = set(pf.schema_arrow.names)
            columns = [n for n in names if n in present]
            int96 = int96_columns(pf.schema, columns)
            if int96:
                check_int96(f, path, pf.metadata, None, int96)
            return pf.read(columns=columns, use_threads=False)
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise CorruptMetadata(path, f"cannot read Parquet: {e}") from e


def parquet_metadata(file_io: FileIO, path: str) -> pq.FileMetaData:
    """The file's footer: row groups with their column statistics (read once, handed to
    :func:`read_parquet_row_group` so the footer is not parsed again per row group)."""
    import pyarrow.parquet as pq

    with file_io.open_arrow_input(path) as f:
        try:
            return pq.ParquetFile(f).metadata
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise CorruptMetadata(path, f"cannot read Parquet: {e}") from e


def read_parquet_row_group(
    file_io: FileIO, path: str, metadata: pq.FileMetaData, index: int, names: list[str]
) -> pa.Table:
    """Row group ``index`` of the file, its ``names`` columns. Columns decode on Arrow's
    threads for local files only (a wrapped Python stream is read by the calling thread; see
    ``FileIO.open_arrow_input``); the call returns only once every thread is done."""
    import pyarrow.parquet as pq

    with file_io.open_arrow_input(path) as f:
        try:
            int96 = int96_columns(metadata.schema, names)
            if int96:
                check_int96(f, path, metadata, [index], int96)
            pf = pq.ParquetFile(f, metadata=metadata)
            return pf.read_row_group(index, columns=names, use_threads=file_io.is_local)
        except (OSError, ValueError) as e:  # pyarrow's ArrowInvalid is a ValueError
            raise CorruptMetadata(path, f"cannot read Parquet: {e}") from e


# Parquet statistics pyarrow decodes into the Python values predicates compare with, by the
# Paimon type root and the Parquet physical type. Others (floats: NaN is left out of the
# min/max; timestamps: INT96 and unit choices; decimals, CHAR padding, binary) are not used.
_STATS_TYPES = {
    "BOOLEAN": ("BOOLEAN", bool),
    "TINYINT": ("INT32", int),
    "SMALLINT": ("INT32", int),
    "INT": ("INT32", int),
    "BIGINT": ("INT64", int),
    "DATE": ("INT32", _dt.date),
    "VARCHAR": ("BYTE_ARRAY", str),
}


def stats_type_supported(root: str) -> bool:
    """Whether row groups can be pruned by the Parquet statistics of a column of this type."""
    return root in _STATS_TYPES


def row_group_stats(
    metadata: pq.FileMetaData, index: int, columns: Mapping[str, tuple[str, str]]
) -> dict[str, tuple[Any, Any, int | None, int]]:
    """``(min, max, null_count, row_count)`` of row group ``index`` for ``columns``
    (predicate column -> (file column, Paimon type root)), in the predicate's value domain.

    A column whose statistics are missing, not of the expected physical type or not decoded
    to the expected Python type is left out (unknown: the row group is kept)."""
    rg = metadata.row_group(index)
    rows = rg.num_rows
    by_path = {rg.column(j).path_in_schema: j for j in range(rg.num_columns)}
    out: dict[str, tuple[Any, Any, int | None, int]] = {}
    for name, (file_name, root) in columns.items():
        j = by_path.get(file_name)
        expected = _STATS_TYPES.get(root)
        if j is None or expected is None:
            continue
        col = rg.column(j)
        st = col.statistics
        if st is None or col.physical_type != expected[0]:
            continue
        nulls = st.null_count if st.has_null_count else None
        lo = hi = None
        if st.has_min_max:
            lo, hi = st.min, st.max
            if not (isinstance(lo, expected[1]) and isinstance(hi, expected[1])) or (
                    expected[1] is int and isinstance(lo, bool)):
                continue
            if expected[1] is _dt.date and isinstance(lo, _dt.datetime):
                continue
        out[name] = (lo, hi, nulls, rows)
    return out
