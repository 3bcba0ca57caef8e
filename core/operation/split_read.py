"""Split reading: the rows of one split (one partition and bucket) as a read returns them.

What every table kind shares lives in :class:`SplitRead`: which columns to read, where a
file is, its deletion vector, and the tail of a read (defaults, filter, projection, row
kind). Append tables stream their files batch by batch (:class:`RawFileSplitRead`);
primary-key tables merge (``merge_split_read``). Everything on the data path is pyarrow
compute.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

import pyarrow as pa
import pyarrow.compute as pc

from ..data.predicate import Predicate
from ..data.predicate_literal import RawLiteral, arrow_values, coerce_literal
from ..data.types import DataField
from ..format.arrow_schema import VALUE_KIND, arrow_field
from ..format.data_file import evolve, format_of, iter_data_file_batches, read_row_group
from ..format.input import ROW_KIND_NAMES
from ..format.parquet_format import parquet_metadata, row_group_stats, stats_type_supported
from ..index.deletion_vectors import DeletionVector, read_deletion_vectors
from ..io import paths
from ..manifest.index_manifest import DeletionVectorMeta
from ..manifest.manifest import DataFileMeta
from ..manifest.stats_reader import StatsReader
from ..table.file_store_table import FileStoreTable
from ..utils.workers import prefetch
from .read_plan import Split
from .row_tracking import physical_system_fields, system_columns, with_system_columns

if TYPE_CHECKING:
    import pyarrow.parquet as pq

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

    def finish(self, t: pa.Table, constants: dict[str, pa.Scalar] | None = None) -> pa.Table:
        """Defaults, filter, projection, row kind: the tail shared by both table kinds.
        ``constants`` (columns the predicate does not name) are added after the filter, so
        only the rows it keeps get them."""
        t = self._fill_defaults(t)
        if self.predicate is not None:
            t = self.predicate.filter(t)
        if constants:
            t = with_constants(t, constants)
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

    def _partition_constants(self, split: Split, target: list[DataField]) -> dict[str, pa.Scalar]:
        """The read's partition columns, from the split's partition value and never decoded:
        Java's read fills them from the partition row (``PartitionUtils``), and files a Hive
        migration moved in hold no partition column at all."""
        wanted = {f.name: f for f in target}
        out: dict[str, pa.Scalar] = {}
        for key, value in zip(self.schema.partition_keys, split.partition_values, strict=True):
            f = wanted.get(key)
            if f is None:
                continue
            if value is None:
                out[key] = pa.scalar(None, type=arrow_field(f).type)
                continue
            vals, lit_type = arrow_values([value], f.type)
            out[key] = pa.scalar(vals[0], type=lit_type).cast(arrow_field(f).type)
        return out

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


_AHEAD = 3  # row groups (or non-Parquet files) decoded ahead on worker threads
_BATCH_ROWS = 65536  # rows per batch of iter_data_file_batches


@dataclass
class _Unit:
    """One piece of an append read, decoded on a worker: a Parquet row group (``index`` of the
    footer ``metadata``, starting at file row ``offset``) or a whole ORC / Avro file."""

    path: str
    meta: DataFileMeta
    file_fields: list[DataField]
    read_fields: list[DataField]
    columns: list[str]
    dv: DeletionVector | None
    metadata: pq.FileMetaData | None = None
    index: int = 0
    offset: int = 0
    constants: dict[str, pa.Scalar] = field(default_factory=dict)  # partition column -> its value


@dataclass
class RowGroupCounts:
    """Parquet row groups of the files a read opens, and those their statistics ruled out."""

    files: int = 0
    row_groups: int = 0
    skipped_row_groups: int = 0
    skipped_files: int = 0  # every row group skipped
    skipped_records: int = 0
    probed_row_groups: int = 0  # of the rest: row groups whose predicate columns were decoded first
    probe_columns: list[str] = field(default_factory=list)  # those columns (read schema names)
    probe_skipped_row_groups: int = 0  # of those: no row matched, the other columns not decoded
    probe_skipped_records: int = 0
    probe_skipped_files: int = 0  # every row group skipped by statistics or by the probe


class RawFileSplitRead(SplitRead):
    """Append tables: each file evolved to the read schema by field id, minus the rows its
    deletion vector marks. Parquet row groups the predicate's statistics rule out are not
    read; the rest are decoded up to ``_AHEAD`` at a time on worker threads (pyarrow decodes
    without the GIL) and returned in file order, so the output is the sequential read's.

    A row group the statistics keep is probed first when the predicate is on stored value
    columns and other columns are read too: the predicate columns alone are decoded and the
    predicate evaluated; if no row matches, the other columns are not decoded at all
    (pyarrow 26 decodes whole column chunks: it has no row selection, page index or
    dictionary filter to hand a predicate to, so a row group that does match is decoded in
    full). The rows returned are those of the plain read: the probe only decides to skip.

    ``streaming`` (a read with a limit, which may stop after a few rows): pieces are read
    batch by batch on the calling thread instead, so the first rows come without decoding
    whole row groups ahead (the probe still decodes a row group's predicate columns whole).
    """

    streaming = False

    def read(self, split: Split) -> Iterator[pa.Table]:
        return self.read_splits([split])

    def read_splits(self, splits: Sequence[Split]) -> Generator[pa.Table, None, None]:
        target = [self.schema.field(n) for n in self.needed_columns()]
        if self.streaming:
            for unit in self._units(splits, target, None):
                yield from self._pieces(unit, target)
            return
        with contextlib.closing(prefetch(lambda u: self._load(u, target), self._units(splits, target, None),
                                         _AHEAD, "paimon-read")) as loaded:
            for tables in loaded:
                yield from tables

    def row_group_counts(self, splits: Sequence[Split]) -> RowGroupCounts:
        """What the predicate's row-group pruning and the probe skip in ``splits`` (``read
        --explain``); reads the Parquet footers and the predicate columns of the row groups
        their statistics keep."""
        counts = RowGroupCounts(probe_columns=sorted(self._probe_fields_names()))
        target = [self.schema.field(n) for n in self.needed_columns()]
        kept: dict[str, int] = {}  # file -> row groups the statistics keep
        probed_out: dict[str, int] = {}  # file -> of those, row groups the probe skips
        for unit in self._units(splits, target, counts):
            assert unit.metadata is not None
            kept[unit.path] = kept.get(unit.path, 0) + 1
            match = self._probe(unit)
            if match is None:
                continue
            counts.probed_row_groups += 1
            if not match:
                counts.probe_skipped_row_groups += 1
                counts.probe_skipped_records += unit.metadata.row_group(unit.index).num_rows
                probed_out[unit.path] = probed_out.get(unit.path, 0) + 1
        counts.probe_skipped_files = sum(1 for path, n in probed_out.items() if n == kept[path])
        return counts

    def _units(self, splits: Sequence[Split], target: list[DataField],
               counts: RowGroupCounts | None) -> Iterator[_Unit]:
        """The pieces to decode, in output order; Parquet footers are read here (on the
        consumer's thread, one file ahead of the decoding at most ``_AHEAD`` pieces)."""
        keys = set(self.schema.partition_keys)
        from_files = [f for f in target if f.name not in keys]
        for split in splits:
            dvs = self.deletion_vectors(split) if counts is None else {}
            constants = self._partition_constants(split, target) if counts is None else {}
            for meta in split.files:
                file_fields = list(self.file_schemas.schema(meta.schema_id).fields)
                cols = file_columns(file_fields, from_files)
                stored = [f for f in physical_system_fields(meta) if f.name in self.system_columns]
                if not cols and not stored and file_fields:
                    cols = [file_fields[0].name]  # zero columns would read zero rows: read one to count them
                path = self.file_path(split, meta)
                unit = _Unit(path, meta, file_fields, file_fields + stored, cols + [f.name for f in stored],
                             dvs.get(meta.file_name), constants=constants)
                if format_of(path) != "parquet":
                    if counts is None:
                        yield unit
                    continue
                md = parquet_metadata(self.table.file_io, path)
                prune = self._stats_columns(file_fields)
                offset = skipped = 0
                for i in range(md.num_row_groups):
                    rows = md.row_group(i).num_rows
                    if prune and self.predicate is not None \
                            and not self.predicate.might_match(row_group_stats(md, i, prune)):
                        skipped += 1
                        if counts is not None:
                            counts.skipped_records += rows
                    else:  # explain (``counts``) probes what the statistics keep
                        yield replace(unit, metadata=md, index=i, offset=offset)
                    offset += rows
                if counts is not None:
                    counts.files += 1
                    counts.row_groups += md.num_row_groups
                    counts.skipped_row_groups += skipped
                    counts.skipped_files += int(skipped > 0 and skipped == md.num_row_groups)

    def _stats_columns(self, file_fields: list[DataField]) -> dict[str, tuple[str, str]]:
        """Predicate columns whose row-group statistics may prune: predicate column -> (file
        column, type root). Only a column stored with exactly its read type (same field id,
        same type), of a type whose statistics decode exactly, and without a default value
        (a NULL read back as the default would not be in the statistics)."""
        if self.predicate is None:
            return {}
        by_id = {f.id: f for f in file_fields}
        defaults = self.options.field_default_values()
        out = {}
        for name in self.predicate.columns():
            if name in defaults or name not in self.schema.field_names:
                continue
            want = self.schema.field(name)
            have = by_id.get(want.id)
            if have is None or have.type.copy(nullable=True) != want.type.copy(nullable=True):
                continue
            if stats_type_supported(want.type.root):
                out[name] = (have.name, want.type.root)
        return out

    def _pieces(self, unit: _Unit, target: list[DataField]) -> Iterator[pa.Table]:
        """A piece decoded, evolved, minus deleted rows, filtered and projected; streamed
        batch by batch (a worker collects them, see :meth:`read_splits`). A row group whose
        predicate columns match no row (:meth:`_probe`) yields nothing; one that matches
        decodes them again batch by batch (only ``streaming`` comes here for row groups)."""
        if self._probe(unit) is False:
            return
        row_groups = None if unit.metadata is None else [unit.index]
        offset = unit.offset
        for batch in iter_data_file_batches(self.table.file_io, unit.path, unit.read_fields, unit.columns,
                                            row_groups=row_groups):
            t = pa.Table.from_batches([batch])
            n = t.num_rows
            yield self._finish_piece(unit, t, offset, target)
            offset += n

    def _probe_predicate(self) -> Predicate | None:
        """What a row group is probed with: the predicate's conjuncts on value columns of the
        table (not partition columns, whose value is the split's, nor system columns). Every
        row the predicate keeps matches them, so no match there means no match at all."""
        if self.predicate is None:
            return None
        value_columns = set(self.schema.field_names) - set(self.schema.partition_keys)
        probe = self.predicate.only_on(value_columns)
        return probe if probe is not None and probe.columns() else None

    def _probe_fields_names(self) -> set[str]:
        probe = self._probe_predicate()
        return set() if probe is None else probe.columns()

    def _probe_split(self, unit: _Unit) -> tuple[list[str], list[str]] | None:
        """(file columns of the predicate, the unit's other columns) when the row group is
        worth probing: both non-empty (a predicate on columns the file lacks reads nothing)."""
        names = self._probe_fields_names()
        if not names or unit.metadata is None:
            return None
        first = file_columns(unit.file_fields, [self.schema.field(n) for n in names])
        first = [c for c in unit.columns if c in first]
        rest = [c for c in unit.columns if c not in first]
        if not first or not rest:
            return None
        return first, rest

    def _probe(self, unit: _Unit, keep: list[pa.Table] | None = None) -> bool | None:
        """Whether any row of the unit's row group matches the predicate, decided on its
        predicate columns alone (None: not probed); the decoded columns go to ``keep``.

        Deletion vectors are not applied here: a deleted row that matches only means the
        other columns are read, and the plain path drops it."""
        cols = self._probe_split(unit)
        predicate = self._probe_predicate()
        if cols is None or predicate is None:
            return None
        assert unit.metadata is not None
        head = read_row_group(self.table.file_io, unit.path, unit.read_fields, cols[0], unit.metadata, unit.index)
        fields = [self.schema.field(n) for n in sorted(self._probe_fields_names())]
        probe = self._fill_defaults(evolve(head, unit.file_fields, fields))
        match = bool(probe.num_rows) and bool(pc.any(predicate.row_mask(probe)).as_py())
        if keep is not None:
            keep.append(head)
        return match

    def _load(self, unit: _Unit, target: list[DataField]) -> list[pa.Table]:
        """:meth:`_pieces` at once (worker thread); a Parquet row group is decoded whole, or
        after :meth:`_probe` not at all."""
        if unit.metadata is None:
            return list(self._pieces(unit, target))
        head: list[pa.Table] = []
        match = self._probe(unit, head)
        if match is False:
            return []
        if match is None:
            t = read_row_group(self.table.file_io, unit.path, unit.read_fields, unit.columns,
                               unit.metadata, unit.index)
        else:
            rest = [c for c in unit.columns if c not in head[0].column_names]
            t = read_row_group(self.table.file_io, unit.path, unit.read_fields, rest, unit.metadata, unit.index)
            both = {f.name: (f, c) for part in (head[0], t) for f, c in zip(part.schema, part.columns, strict=True)}
            t = pa.Table.from_arrays([both[c][1] for c in unit.columns],
                                     schema=pa.schema([both[c][0] for c in unit.columns]))
        # in the streamed read's batches (``_BATCH_ROWS``), so the result batches -- and what
        # ``read --to`` writes of them -- are the same whichever way the file was read
        return [self._finish_piece(unit, t.slice(start, _BATCH_ROWS), unit.offset + start, target)
                for start in range(0, t.num_rows, _BATCH_ROWS)]

    def _finish_piece(self, unit: _Unit, t: pa.Table, offset: int, target: list[DataField]) -> pa.Table:
        system = system_columns(unit.meta, t, offset, self.system_columns) if self.system_columns else {}
        late = self._late_constants(unit.constants)
        t = evolve(t, unit.file_fields, [f for f in target if f.name not in late] if late else target)
        t = with_constants(t, {k: v for k, v in unit.constants.items() if k not in late})
        # by physical position: taken before the deletion vector drops rows
        t = with_system_columns(t, system)
        if unit.dv is not None:
            t = drop_deleted(t, unit.dv, offset)
        return self.finish(t, late)

    def _late_constants(self, constants: dict[str, pa.Scalar]) -> dict[str, pa.Scalar]:
        """The partition constants a filtering read adds after its filter: those the
        predicate does not name, and not NULL (a NULL may still take the column's default
        value before the filter). A selective read then repeats them for the kept rows only."""
        if self.predicate is None or not constants:
            return {}
        named = self.predicate.columns()
        return {k: v for k, v in constants.items() if k not in named and v.is_valid}


def with_constants(t: pa.Table, constants: dict[str, pa.Scalar]) -> pa.Table:
    """``t`` with each ``constants`` column holding its value in every row (replaced in
    place where ``t`` has the column, appended otherwise)."""
    for name, value in constants.items():
        if name in t.column_names:
            i = t.column_names.index(name)
            t = t.set_column(i, t.schema.field(i), pa.repeat(value.cast(t.schema.field(i).type), t.num_rows))
        else:
            t = t.append_column(name, pa.repeat(value, t.num_rows))
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
