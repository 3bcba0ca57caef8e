"""Split reading: the rows of one split (one partition and bucket) as a read returns them.

What every table kind shares lives in :class:`SplitRead`: which columns to read, where a
file is, its deletion vector, and the tail of a read (defaults, filter, projection, row
kind). Append tables stream their files batch by batch (:class:`RawFileSplitRead`);
primary-key tables merge (``merge_split_read``). Everything on the data path is pyarrow
compute.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import pyarrow as pa
import pyarrow.compute as pc

from ..data.predicate import Predicate
from ..data.predicate_literal import RawLiteral, arrow_values, coerce_literal
from ..data.types import DataField
from ..format.arrow_schema import VALUE_KIND
from ..format.data_file import evolve, iter_data_file_batches
from ..format.input import ROW_KIND_NAMES
from ..index.deletion_vectors import DeletionVector, read_deletion_vectors
from ..io import paths
from ..manifest.index_manifest import DeletionVectorMeta
from ..manifest.manifest import DataFileMeta
from ..manifest.stats_reader import StatsReader
from ..table.file_store_table import FileStoreTable
from .read_plan import Split
from .row_tracking import physical_system_fields, system_columns, with_system_columns

ROW_KIND_COLUMN = "rowkind"


class SplitRead:
    """Reads splits of ``table`` (whose schema is the one read) into ``projection`` columns,
    rows matching ``predicate``; ``with_row_kind`` adds a leading ``rowkind`` column;
    ``system_columns`` (row-tracking ``_ROW_ID`` / ``_SEQUENCE_NUMBER``) are produced for the
    projection and the predicate."""

    def __init__(self, table: FileStoreTable, projection: list[str], predicate: Predicate | None, *,
                 with_row_kind: bool = False, system_columns: Sequence[str] = ()) -> None:
        self.table = table
        self.schema = table.schema
        self.options = table.options
        self.projection = projection
        self.predicate = predicate
        self.with_row_kind = with_row_kind
        self.system_columns = list(system_columns)
        self.file_schemas = StatsReader(table)

    def read(self, split: Split) -> Iterator[pa.Table]:
        raise NotImplementedError

    def needed_columns(self) -> list[str]:
        """Value columns to read: output, predicate, and what merging needs."""
        names = self.schema.field_names
        need = set(self.projection)
        if self.predicate is not None:
            need |= self.predicate.columns()
        merge_needs = self.merge_columns()
        if merge_needs is None:
            return list(names)
        return [n for n in names if n in need | merge_needs]

    def merge_columns(self) -> set[str] | None:
        """Columns merging the split's records needs besides the output (None: all)."""
        return set()

    def file_path(self, split: Split, meta: DataFileMeta) -> str:
        part_dir = paths.partition_path_for(self.schema, split.partition_values)
        return paths.data_file_path(self.table.data_root, part_dir, split.bucket, meta.file_name, meta.external_path)

    def deletion_vectors(self, split: Split) -> dict[str, DeletionVector]:
        """The deletion vectors of the split's files, by data file name."""
        if not split.deletion_files:
            return {}
        names = {f.file_name for f in split.files}
        by_index: dict[str, list[DeletionVectorMeta]] = {}
        for name, (path, meta) in split.deletion_files.items():
            if name in names:
                by_index.setdefault(path, []).append(meta)
        out: dict[str, DeletionVector] = {}
        for path, metas in by_index.items():
            out.update(read_deletion_vectors(self.table.file_io, path, metas))
        return out

    def finish(self, t: pa.Table) -> pa.Table:
        """Defaults, filter, projection, row kind: the tail shared by both table kinds."""
        t = self._fill_defaults(t)
        if self.predicate is not None:
            t = self.predicate.filter(t)
        cols = [t.column(n) for n in self.projection]
        names = list(self.projection)
        if self.with_row_kind:
            if VALUE_KIND in t.column_names:  # merged primary-key rows carry their kind
                kind = pc.take(pa.array(ROW_KIND_NAMES), t.column(VALUE_KIND).cast(pa.int8()))
            else:  # append rows are all inserts
                kind = pa.repeat(pa.scalar("+I"), t.num_rows)
            cols.insert(0, kind)
            names.insert(0, ROW_KIND_COLUMN)
        return pa.Table.from_arrays(cols, names=names)

    def _fill_defaults(self, t: pa.Table) -> pa.Table:
        """``fields.<c>.default-value``: Java's read fills a NULL with the column's default."""
        defaults = self.options.field_default_values()
        for name, text in defaults.items():
            if name not in t.column_names:
                continue
            f = self.schema.field(name)
            v = coerce_literal(RawLiteral("str", text), f.type, name)
            vals, at = arrow_values([v], f.type)
            col = t.column(name)
            filled = pc.fill_null(col, pa.scalar(vals[0], type=at).cast(col.type))
            t = t.set_column(t.column_names.index(name), name, filled)
        return t


class RawFileSplitRead(SplitRead):
    """Append tables: each file streamed batch by batch, evolved to the read schema by field id,
    minus the rows its deletion vector marks."""

    def read(self, split: Split) -> Iterator[pa.Table]:
        need = self.needed_columns()
        target = [self.schema.field(n) for n in need]
        keys = self.schema.partition_keys
        from_files = [f for f in target if f.name not in keys]
        dvs = self.deletion_vectors(split)
        for meta in split.files:
            file_fields = list(self.file_schemas.schema(meta.schema_id).fields)
            cols = file_columns(file_fields, from_files)
            stored = [f for f in physical_system_fields(meta) if f.name in self.system_columns]
            if not cols and not stored and file_fields:
                cols = [file_fields[0].name]  # zero columns would read zero rows: read one to count them
            dv = dvs.get(meta.file_name)
            offset = 0
            for batch in iter_data_file_batches(self.table.file_io, self.file_path(split, meta), file_fields + stored,
                                                cols + [f.name for f in stored]):
                t = pa.Table.from_batches([batch])
                n = t.num_rows
                system = system_columns(meta, t, offset, self.system_columns) if self.system_columns else {}
                # by physical position: taken before the deletion vector drops rows
                t = with_system_columns(self._with_partition(evolve(t, file_fields, target), split), system)
                if dv is not None:
                    t = drop_deleted(t, dv, offset)
                offset += n
                yield self.finish(t)


    def _with_partition(self, t: pa.Table, split: Split) -> pa.Table:
        """Partition columns from the split's partition, never from the file (Java's
        ``PartitionUtils`` mapping): files a Hive migration moved in hold no partition column."""
        for name, value in zip(self.schema.partition_keys, split.partition_values, strict=True):
            if name not in t.column_names:
                continue
            i = t.column_names.index(name)
            typ = t.schema.field(i).type
            if value is None:
                col = pa.nulls(t.num_rows, typ)
            else:
                vals, at = arrow_values([value], self.schema.field(name).type)
                col = pa.repeat(pa.scalar(vals[0], type=at).cast(typ), t.num_rows)
            t = t.set_column(i, t.schema.field(i), col)
        return t


def file_columns(file_fields: list[DataField], target: list[DataField]) -> list[str]:
    """Names (in the file) of the file's columns that feed ``target``, matched by field id."""
    ids = {f.id for f in target}
    return [f.name for f in file_fields if f.id in ids]


def drop_deleted(t: pa.Table, dv: DeletionVector, offset: int) -> pa.Table:
    """Rows of ``t`` (file positions ``offset..``) whose positions the DV does not mark."""
    n = t.num_rows
    if n == 0 or dv.is_empty():
        return t
    bm = dv.bitmap
    full = type(bm)(range(offset, offset + n))
    keep = full - bm
    if len(keep) == n:
        return t
    arr = keep.to_array()
    typ = pa.uint64() if arr.itemsize == 8 else pa.uint32()
    idx = pa.Array.from_buffers(typ, len(arr), [None, pa.py_buffer(arr)])
    if offset:
        idx = pc.subtract(idx, pa.scalar(offset, typ))
    return t.take(idx)
