"""BLOB columns of data-evolution tables (Paimon 1.4+): their values live in ``.blob`` files.

Each blob column has its own ``.blob`` files beside the data files (``_WRITE_COLS`` = the one
column); a file covers a sub-range of a data file's row-id range, so a range's values may
span several consecutive files, and a newer file (higher ``_MAX_SEQUENCE_NUMBER``) overrides
an older one except on its placeholder rows (Java's ``BlobFallbackRecordReader``). A read
returns each value as its bytes, its size, or a descriptor (file, offset, length), as asked.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from ..data.type_visitor import holds_blob
from ..data.types import BlobType, DataField
from ..errors import NotYetSupported
from ..format.blob_file import DESCRIPTOR_TYPE, PLACEHOLDER_LENGTH, BlobIndex, blob_values, read_blob_index
from ..io.fileio import FileIO
from ..manifest.manifest import DataFileMeta
from ..schema.table_schema import TableSchema

BLOB_SUFFIX = ".blob"
BLOB_AS = ("bytes", "size", "descriptor")


def is_blob_file(meta: DataFileMeta) -> bool:
    return meta.file_name.endswith(BLOB_SUFFIX)


def blob_columns(schema: TableSchema) -> list[str]:
    """Columns stored in ``.blob`` files: BLOB columns and the BYTES columns of ``blob-field``."""
    names = [f.name for f in schema.fields if isinstance(f.type, BlobType)]
    declared = schema.options.get("blob-field")
    if declared:
        names += [c.strip() for c in declared.split(",") if c.strip() and c.strip() not in names]
    return names


def check_blob_read(schema: TableSchema, what: str = "read") -> None:
    """Refuse the blob layouts a read (or write) does not handle yet: descriptors or blob views
    stored inline in data files, and blobs nested in ARRAY / MAP columns (2.0+), whose records differ."""
    for key in ("blob-descriptor-field", "blob.stored-descriptor-fields", "blob-view-field"):
        if schema.options.get(key, "").strip():
            raise NotYetSupported(f"{what}: {key} ({schema.options[key].strip()}): blob descriptors or views stored in "
                                  "data files are not supported yet")
    nested = [f.name for f in schema.fields if not isinstance(f.type, BlobType) and holds_blob(f.type)]
    if nested:
        raise NotYetSupported(f"{what}: BLOB values nested in ARRAY / MAP columns ({', '.join(nested)}) are not "
                              "supported yet")




def blob_arrow_type(mode: str) -> pa.DataType:
    """What a read returns for a blob column: bytes, a byte count, or a descriptor."""
    return {"bytes": pa.large_binary(), "size": pa.int64(), "descriptor": DESCRIPTOR_TYPE}[mode]


def blob_column(file_io: FileIO, files: list[DataFileMeta], path_of: Callable[[DataFileMeta], str], first: int,
                rows: int, mode: str) -> pa.Array:
    """One blob column for the ``rows`` rows from row id ``first``, from its ``.blob`` files
    (any order); rows no file holds read as NULL."""
    return BlobColumnReader(file_io, files, path_of, first, rows, mode).read(0, rows)


class BlobColumnReader:
    """One blob column of a row range read slice by slice: the files' indexes (lengths and
    offsets, no values) are read once, the values of a slice only when it is asked for, so a
    range whose blobs outgrow memory is still read batch by batch."""

    def __init__(self, file_io: FileIO, files: list[DataFileMeta], path_of: Callable[[DataFileMeta], str],
                 first: int, rows: int, mode: str) -> None:
        self.file_io, self.path_of, self.mode = file_io, path_of, mode
        self.indexes: list[tuple[DataFileMeta, BlobIndex, int]] = []
        for m in files:
            idx = read_blob_index(file_io, path_of(m))
            if idx.row_count != m.row_count:
                raise NotYetSupported(f"read: blob file {m.file_name} holds {idx.row_count} rows, its metadata says "
                                      f"{m.row_count}")
            if m.first_row_id is None or m.first_row_id < first or m.first_row_id + m.row_count > first + rows:
                raise NotYetSupported(f"read: blob file {m.file_name} covers row ids outside its data file's range")
            self.indexes.append((m, idx, m.first_row_id - first))
        self.owner = _owners(self.indexes, rows)

    def value_lengths(self) -> np.ndarray:
        """Per row of the range, the stored record length of its value (0: NULL or no file)."""
        out = np.zeros(len(self.owner), dtype=np.int64)
        for k, (_, idx, lo) in enumerate(self.indexes):
            mine = np.flatnonzero(self.owner == k)
            out[mine] = np.maximum(idx.lengths[mine - lo], 0)
        return out

    def read(self, start: int, end: int) -> pa.Array:
        """The values of the range's rows ``start..end`` (exclusive)."""
        owner = self.owner[start:end]
        parts: list[pa.Array] = []
        order: list[np.ndarray] = []
        for k, (m, idx, lo) in enumerate(self.indexes):
            mine = np.flatnonzero(owner == k)
            if len(mine):
                parts.append(blob_values(self.file_io, self.path_of(m), idx, mine + start - lo, self.mode))
                order.append(mine)
        typ = blob_arrow_type(self.mode)
        rows = end - start
        if not parts:
            return pa.nulls(rows, typ)
        values = pa.concat_arrays([p.cast(typ) for p in parts] + [pa.nulls(1, typ)])
        at = np.full(rows, len(values) - 1, dtype=np.int64)  # the trailing NULL
        at[np.concatenate(order)] = np.arange(len(values) - 1)
        return values.take(pa.array(at))


def _owners(indexes: list[tuple[DataFileMeta, BlobIndex, int]], rows: int) -> np.ndarray:
    """Per row, the position in ``indexes`` of the file supplying it (-1: none): the newest
    file (max sequence number; ties: the earlier file) whose entry is not a placeholder."""
    owner = np.full(rows, -1, dtype=np.int64)
    order = sorted(range(len(indexes)), key=lambda k: (indexes[k][0].max_sequence_number, -k))
    for k in order:  # oldest first: newer files overwrite
        _, idx, lo = indexes[k]
        owner[lo + np.flatnonzero(idx.lengths != PLACEHOLDER_LENGTH)] = k
    return owner


def blob_fields_of(target: list[DataField], schema: TableSchema) -> set[int]:
    """Field ids among ``target`` stored in ``.blob`` files."""
    names = set(blob_columns(schema))
    return {f.id for f in target if f.name in names}
