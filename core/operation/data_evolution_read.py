"""The split read of a data-evolution table (Java's ``DataEvolutionSplitRead``).

A split's files are grouped by row-id range; a group is read as one table: its files ordered
by ``_MAX_SEQUENCE_NUMBER`` descending (ties keep the split's order), each requested column
taken from the first file whose write columns hold its field id, columns no file holds read
as NULL; BLOB columns come from the range's ``.blob`` files (``blob_read``). The system
columns ``_ROW_ID`` / ``_SEQUENCE_NUMBER`` come from the first file, as any file's do (row
tracking's rule: the group's first row id plus the position, the file's max sequence number
-- the newest of the group -- unless stored physically). A deletion vector belongs to the
group's anchor file (the oldest data file by max sequence number, then file name). Memory is
bounded by one group (one file's row range), read column-wise with pyarrow.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from ..data.types import DataField
from ..errors import NotYetSupported
from ..format.arrow_schema import arrow_field
from ..format.data_file import FORMATS, evolve, read_data_file
from ..manifest.manifest import DataFileMeta
from .blob_read import blob_column, blob_fields_of, check_blob_read, is_blob_file
from .data_evolution import row_range_groups
from .read_plan import Split
from .row_tracking import derived_system_column, physical_system_fields, system_columns
from .split_read import SplitRead, drop_deleted


class DataEvolutionSplitRead(SplitRead):
    """Reads a data-evolution split: one merged table per row-id range. ``blob_as`` is what a
    BLOB column reads as: its ``bytes``, ``size`` or ``descriptor`` (``blob_read``)."""

    blob_as = "bytes"

    def read(self, split: Split) -> Iterator[pa.Table]:
        check_blob_read(self.schema)
        target = [self.schema.field(n) for n in self.needed_columns()]
        dvs = self.deletion_vectors(split)
        for group in row_range_groups(split.files):
            t = self.merged_range(split, group, target, self.system_columns)
            dv = dvs.get(anchor_file(group).file_name)
            if dv is not None:
                t = drop_deleted(t, dv, 0)
            if t.num_rows:
                yield self.finish(t)

    def merged_range(self, split: Split, group: list[DataFileMeta], target: list[DataField],
                     system: Sequence[str] = ()) -> pa.Table:
        """The ``target`` columns, then the ``system`` columns, of every row of one row-id range,
        deleted rows too."""
        files = _checked_group([m for m in group if not is_blob_file(m)])
        rows = files[0].row_count
        columns: dict[int, pa.ChunkedArray | pa.Array] = {}
        blob_ids = blob_fields_of(target, self.schema)
        todo = {f.id: f for f in target if f.id not in blob_ids}
        for meta in files:
            fields = self.file_schemas.file_fields(meta)
            mine = [f for f in fields if f.id in todo]
            if not mine:
                continue
            path = self.file_path(split, meta)
            file_fields = list(self.file_schemas.schema(meta.schema_id).fields)
            t = read_data_file(self.table.file_io, path, file_fields, [f.name for f in mine])
            if t.num_rows != rows:
                raise NotYetSupported(f"read: data file {meta.file_name} holds {t.num_rows} rows, its metadata says "
                                      f"{rows}; cannot merge the columns of its row range")
            wanted = [todo.pop(f.id) for f in mine]
            evolved = evolve(t, file_fields, wanted)
            for f, col in zip(wanted, evolved.columns, strict=True):
                columns[f.id] = col
            if not todo:
                break
        blobs = [m for m in group if is_blob_file(m)]
        for fid in blob_ids:
            mine_blobs = [m for m in blobs if any(f.id == fid for f in self.file_schemas.file_fields(m))]
            columns[fid] = blob_column(self.table.file_io, mine_blobs, lambda m: self.file_path(split, m),
                                       files[0].first_row_id or 0, rows, self.blob_as)
        cols = [columns[f.id] if f.id in columns else pa.nulls(rows, arrow_field(f).type) for f in target]
        t = pa.Table.from_arrays(cols, names=[f.name for f in target])
        for name, col in self._system_columns(split, files[0], rows, system).items():
            t = t.append_column(name, col)
        return t

    def _system_columns(self, split: Split, meta: DataFileMeta, rows: int, names: Sequence[str]) -> dict[str, Any]:
        """``names`` of the range's rows from its newest file, stored values winning."""
        stored = [f for f in physical_system_fields(meta) if f.name in names]
        if not stored:
            return {n: derived_system_column(meta, n, 0, rows) for n in names}
        fields = list(self.file_schemas.schema(meta.schema_id).fields) + stored
        t = read_data_file(self.table.file_io, self.file_path(split, meta), fields, [f.name for f in stored])
        return system_columns(meta, t, 0, names)


def _checked_group(group: list[DataFileMeta]) -> list[DataFileMeta]:
    """The group's data files, newest first; every one must cover the same range in a known format."""
    if not group:
        raise NotYetSupported("read: a row-id range holds only .blob files and no data file")
    for meta in group:
        parts = meta.file_name.lower().split(".")[1:]
        if not any(p in FORMATS for p in parts):
            raise NotYetSupported(f"read: data-evolution file {meta.file_name} (.{parts[-1] if parts else ''} file) "
                                  "is not supported yet")
    first = group[0]
    if any(m.first_row_id != first.first_row_id or m.row_count != first.row_count for m in group):
        names = ", ".join(m.file_name for m in group)
        raise NotYetSupported(f"read: data-evolution files {names} overlap with different row-id ranges; "
                              "Java Paimon refuses such a group too")
    return sorted(group, key=lambda m: -m.max_sequence_number)  # stable: ties keep the split's order


def anchor_file(files: list[DataFileMeta]) -> DataFileMeta:
    """The file a range's deletion vector is keyed by (Java's ``DataEvolutionUtils``): the
    oldest data file, never a ``.blob`` file."""
    return min((m for m in files if not is_blob_file(m)), key=lambda m: (m.max_sequence_number, m.file_name))
