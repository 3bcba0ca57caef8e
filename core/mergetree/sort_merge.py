"""Bounded-memory k-way merge of sorted runs, read as record batches.

Java merges the sorted runs of a compaction section with a loser tree, one record at a
time. Here each run is streamed in record batches and merged a chunk at a time:

* every run keeps a buffer (the rest of its current batch); the *watermark* is the
  smallest "last buffered key" over the runs that still have batches to read;
* everything <= watermark is taken from every buffer (all records of those keys are
  buffered: a run is sorted and holds each key once), concatenated and folded with
  :func:`core.mergetree.merge_function.merge` (one row per key, the table's merge engine,
  ``sequence.field``, ``lone_records_as_is`` as Java's ``ReducerMergeFunctionWrapper``);
* what is above the watermark stays buffered for the next chunk.

Memory is bounded by about two batches per run, whatever the size of the bucket. A chunk
fed by a single run is passed through without sorting (it is sorted and key-unique
already). Files are read with their own schema and evolved to the table's current schema
by field id; deletion vectors of input files drop their rows.

For lookup / deletion-vector maintenance (package "lookup") a chunk can also carry its
un-merged records with ``_RUN_`` (run index), ``_LEVEL_``, ``_FILE_`` (index into
:attr:`MergeReader.files`) and ``_POS_`` (row position in that file) columns.

Reads of big splits (:mod:`core.operation.merge_split_read`) merge through the same reader:
``fields`` narrows the value columns decoded, ``one_high_level`` keeps one high-level record
per key before merging (lookup-mode tables, as the in-memory read does).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..format import data_file  # called through the module: tests spy on its readers
from ..format.arrow_schema import (
    KEY_PREFIX,
    VALUE_KIND,
    key_fields,
    key_value_file_fields,
    system_fields,
)
from ..io import paths
from .merge_function import merge

if TYPE_CHECKING:
    import pyarrow as pa

    from ..data.types import DataField
    from ..index.deletion_vectors import DeletionVector
    from ..manifest.manifest import DataFileMeta
    from ..schema.options import CoreOptions
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable

RUN_COL = "_RUN_"
LEVEL_COL = "_LEVEL_"
FILE_COL = "_FILE_"
POS_COL = "_POS_"
ANNOTATIONS = (RUN_COL, LEVEL_COL, FILE_COL, POS_COL)
HIGH_LEVEL_COL = "_LEVEL"  # the file's level for ``one_high_level`` (core.mergetree.changelog.LEVEL)
BUDGET_ROWS = 1 << 20  # buffered rows over all runs (about)
BUDGET_BYTES = 64 << 20  # buffered Arrow bytes over all runs (about; wide rows read smaller batches)
ARROW_PER_FILE_BYTE = 4.0  # rough decoded/compressed ratio to size batches before reading
MIN_BATCH_ROWS = 512
MAX_BATCH_ROWS = 65536


@dataclass
class MergedChunk:
    """One key range: ``merged`` (one row per key, key-sorted, merge layout: ``_KEY_<k>``,
    ``_SEQUENCE_NUMBER``, ``_VALUE_KIND``, value columns) and, when asked for, ``raw``: the
    chunk's input records (same columns plus the annotation columns), not sorted."""

    merged: pa.Table | None
    raw: pa.Table | None
    single_run: bool


class MergeReader:
    """Merges ``runs`` (each a list of files in key order, newest run first is not required).

    ``levels``: the level of each run (annotations only). ``drop_delete``: drop keys whose
    merged record is a retraction. ``merge_records=False`` skips merging (``merged`` is
    None; for callers that fold ``raw`` themselves). ``deletion_vectors`` by file name.
    ``fields``: the value columns to decode (default: all; must hold the trimmed keys and what
    the merge engine reads). ``one_high_level``: of a key's records on levels > 0 only one
    takes part in the merge (:func:`core.mergetree.changelog.keep_one_high_level`).
    """

    def __init__(
        self,
        table: FileStoreTable,
        partition_dir: str,
        bucket: int,
        runs: list[list[DataFileMeta]],
        *,
        levels: list[int] | None = None,
        drop_delete: bool = False,
        with_raw: bool = False,
        merge_records: bool = True,
        deletion_vectors: dict[str, DeletionVector] | None = None,
        batch_rows: int | None = None,
        schema: TableSchema | None = None,
        options: CoreOptions | None = None,
        fields: list[DataField] | None = None,
        one_high_level: bool = False,
    ) -> None:
        if one_high_level and with_raw:
            raise ValueError("one_high_level merges the chunk itself: not with with_raw")
        self.table = table
        self.schema = schema if schema is not None else table.schema
        self.options = options if options is not None else self.schema.core_options
        self.partition_dir = partition_dir
        self.bucket = bucket
        self.runs = [list(r) for r in runs if r]
        self.levels = list(levels) if levels is not None else [0] * len(self.runs)
        if levels is not None:
            self.levels = [lv for r, lv in zip(runs, levels, strict=True) if r]
        self.files: list[DataFileMeta] = [f for r in self.runs for f in r]
        self.drop_delete = drop_delete
        self.with_raw = with_raw
        self.merge_records = merge_records
        self.dvs = deletion_vectors or {}
        self._fixed_batch_rows = batch_rows
        self.batch_rows = batch_rows or self._rows_per_batch(None)
        self.key_fields = key_fields(self.schema)
        self.key_names = [f.name for f in self.key_fields]
        self.key_values = [f.name[len(KEY_PREFIX):] for f in self.key_fields]
        self.target = system_fields() + list(fields if fields is not None else self.schema.fields)
        self.one_high_level = one_high_level
        self._schemas: dict[int, TableSchema] = {}
        self._run_rows = [self.batch_rows] * len(self.runs)  # batch rows of each run's current file
        self.rows_read = 0

    # -- reading one run ------------------------------------------------------------------

    def _rows_per_batch(self, f: DataFileMeta | None) -> int:
        """Batch rows per run: the row and byte budgets shared by the runs (wide rows -> fewer)."""
        if self._fixed_batch_rows:
            return self._fixed_batch_rows
        n = max(1, len(self.runs))
        rows = BUDGET_ROWS // n
        if f is not None and f.row_count > 0:
            width = max(8.0, f.file_size / f.row_count * ARROW_PER_FILE_BYTE)
            rows = min(rows, int(BUDGET_BYTES / n / width))
        return max(MIN_BATCH_ROWS, min(MAX_BATCH_ROWS, rows))

    def _file_schema(self, schema_id: int) -> TableSchema:
        s = self._schemas.get(schema_id)
        if s is None:
            s = self.schema if schema_id == self.schema.id else self.table.schema_manager.schema(schema_id)
            self._schemas[schema_id] = s
        return s

    def file_path(self, f: DataFileMeta) -> str:
        return paths.data_file_path(self.table.data_root, self.partition_dir, self.bucket, f.file_name, f.external_path)

    def _run_batches(self, run_idx: int) -> Iterator[pa.Table]:
        """The run's records as merge-layout tables (evolved, DVs applied, annotated if asked)."""
        import numpy as np
        import pyarrow as pa

        base = sum(len(r) for r in self.runs[:run_idx])
        level = self.levels[run_idx]
        for fi, f in enumerate(self.runs[run_idx]):
            fs = self._file_schema(f.schema_id)
            file_fields = [x for x in key_value_file_fields(fs) if not x.name.startswith(KEY_PREFIX)]
            ids = {x.id for x in self.target}
            cols = [x.name for x in file_fields if x.id in ids]
            dv = self.dvs.get(f.file_name)
            dv_pos = None
            if dv is not None and not dv.is_empty():
                dv_pos = np.frombuffer(dv.positions(), dtype=np.uint64 if dv.is_64 else np.uint32).astype(np.int64)
            offset = 0
            rows = self._rows_per_batch(f)
            self._run_rows[run_idx] = rows
            for batch in data_file.iter_data_file_batches(self.table.file_io, self.file_path(f), file_fields, cols,
                                                rows, low_memory=True):
                n = batch.num_rows
                if n == 0:
                    continue
                t = pa.Table.from_batches([batch])
                pos = None
                if self.with_raw or dv_pos is not None:
                    pos = np.arange(offset, offset + n, dtype=np.int64)
                if dv_pos is not None:
                    assert pos is not None
                    lo, hi = np.searchsorted(dv_pos, [offset, offset + n])
                    if hi > lo:
                        keep = np.ones(n, dtype=bool)
                        keep[dv_pos[lo:hi] - offset] = False
                        t = t.filter(pa.array(keep))
                        pos = pos[keep]
                offset += n
                if t.num_rows == 0:
                    continue
                if fs.id != self.schema.id:
                    t = data_file.evolve(t, file_fields, self.target)
                else:
                    t = t.select([x.name for x in self.target])
                arrays = [t.column(v) for v in self.key_values] + list(t.columns)
                names = self.key_names + t.column_names
                if self.with_raw:
                    m = t.num_rows
                    arrays += [pa.array(np.full(m, run_idx, dtype=np.int32)),
                               pa.array(np.full(m, level, dtype=np.int32)),
                               pa.array(np.full(m, base + fi, dtype=np.int32)),
                               pa.array(pos)]
                    names += list(ANNOTATIONS)
                elif self.one_high_level:
                    arrays.append(pa.repeat(pa.scalar(f.level, pa.int32()), t.num_rows))
                    names.append(HIGH_LEVEL_COL)
                self.rows_read += t.num_rows
                yield pa.Table.from_arrays(arrays, names=names)

    # -- merging ----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[MergedChunk]:

        k = len(self.runs)
        iters = [self._run_batches(i) for i in range(k)]
        bufs: list[pa.Table | None] = [None] * k
        done = [False] * k
        while True:
            for i in range(k):
                bufs[i] = self._top_up(i, iters[i], bufs[i], done)
            live = {i: b for i, b in enumerate(bufs) if b is not None and b.num_rows}
            if not live:
                return
            bounding = [i for i in live if not done[i]]
            parts: list[pa.Table] = []
            if not bounding:
                parts = list(live.values())
                for i in live:
                    bufs[i] = None
            else:
                wm_run = min(bounding, key=lambda i: self._last_key(live[i]))
                wm = self._last_key(live[wm_run])
                for i, b in live.items():
                    cut = b.num_rows if i == wm_run else self._count_le(b, wm)
                    if cut:
                        parts.append(b.slice(0, cut))
                        bufs[i] = b.slice(cut)
            if parts:
                yield self._chunk(parts)

    def _top_up(self, i: int, batches: Iterator[pa.Table], buf: pa.Table | None, done: list[bool]) -> pa.Table | None:
        """Run ``i``'s buffer filled to half a batch at least (``done[i]`` once it has no more).

        A short leftover is topped up too: a run whose leftover is tiny would otherwise set a
        low watermark and make a tiny chunk every other step."""
        import pyarrow as pa

        while not done[i] and (buf is None or buf.num_rows < max(1, self._run_rows[i] // 2)):
            nxt = next(batches, None)
            if nxt is None:
                done[i] = True
            elif buf is None or buf.num_rows == 0:
                buf = nxt
            else:
                buf = pa.concat_tables([buf, nxt])
        return buf

    def _last_key(self, t: pa.Table) -> tuple[Any, ...]:
        n = t.num_rows - 1
        return tuple(_sortable(t.column(k)[n]) for k in self.key_names)

    def _count_le(self, t: pa.Table, wm: tuple[Any, ...]) -> int:
        """Rows of the key-sorted ``t`` whose key <= ``wm`` (a prefix)."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        if t.num_rows == 0:
            return 0
        # quick exits on the first / last row
        if self._last_key(t) <= wm:
            return t.num_rows
        first = tuple(_sortable(t.column(k)[0]) for k in self.key_names)
        if first > wm:
            return 0
        cols = [t.column(k) for k in self.key_names]
        if len(cols) == 1:
            col = cols[0].combine_chunks() if isinstance(cols[0], pa.ChunkedArray) else cols[0]
            if pa.types.is_integer(col.type) or pa.types.is_floating(col.type):
                # numpy orders NaN after +inf and -0.0 == 0.0, as the key order here does
                return int(np.searchsorted(col.to_numpy(zero_copy_only=False), _value(wm[0]), side="right"))
        le: Any = None
        for col, v in reversed(list(zip(cols, wm, strict=True))):
            s = _scalar(v, col.type)
            if le is None:
                le = pc.or_(key_less(col, s), key_equal(col, s))
            else:
                le = pc.or_(key_less(col, s), pc.and_(key_equal(col, s), le))
        return int(pc.sum(le).as_py() or 0)

    def _chunk(self, parts: list[pa.Table]) -> MergedChunk:
        import pyarrow as pa

        single = len(parts) == 1
        raw = pa.concat_tables(parts) if not single else parts[0]
        merged = None
        if self.merge_records:
            data = raw.drop_columns(list(ANNOTATIONS)) if self.with_raw else raw
            if self.one_high_level:
                if not single:  # a single run holds each key once: nothing to drop
                    from .changelog import keep_one_high_level
                    data = keep_one_high_level(data, self.key_names, self.options)
                data = data.drop_columns([HIGH_LEVEL_COL])
            merged = self._merge(data, single)
        return MergedChunk(merged, raw if self.with_raw else None, single)

    def _merge(self, data: pa.Table, single: bool) -> pa.Table:
        import pyarrow as pa
        import pyarrow.compute as pc

        if single:
            # one sorted run: one record per key already; Java's reducer passes lone records on
            ignore = self.options.ignore_delete and self.options.merge_engine != "aggregation"
            if self.drop_delete or ignore:
                kinds = data.column(VALUE_KIND)
                retract = pc.or_(pc.equal(kinds, pa.scalar(1, kinds.type)), pc.equal(kinds, pa.scalar(3, kinds.type)))
                if pc.any(retract).as_py():
                    data = data.filter(pc.invert(retract))
            return data
        return merge(data, self.key_names, self.schema, self.options, drop_deletes=self.drop_delete,
                     lone_records_as_is=True)


def _sortable(scalar: Any) -> Any:
    """A Python value of a key scalar that orders as Arrow (and Java) order the key; temporal
    values as their raw integers (nanosecond timestamps have no exact Python datetime);
    floats as ``(is_nan, value)`` so NaN sorts last and equals NaN (Python's NaN compares
    false with everything), while -0.0 == 0.0 (see :func:`core.mergetree.merge_function.adjacent_differs`)."""
    import pyarrow as pa

    if not scalar.is_valid:
        return None
    t = scalar.type
    if pa.types.is_timestamp(t) or pa.types.is_date(t) or pa.types.is_time(t):
        return scalar.cast(pa.int64() if not pa.types.is_time32(t) and not pa.types.is_date32(t)
                           else pa.int32()).as_py()
    v = scalar.as_py()
    if pa.types.is_floating(t):
        return (1, 0.0) if v != v else (0, v)
    return v


def _value(v: Any) -> Any:
    """The plain Python value of a :func:`_sortable` key component."""
    if isinstance(v, tuple):
        return float("nan") if v[0] else v[1]
    return v


def _scalar(v: Any, typ: Any) -> Any:
    import pyarrow as pa

    if pa.types.is_timestamp(typ) or pa.types.is_date(typ) or pa.types.is_time(typ):
        return pa.scalar(v, type=pa.int64() if not pa.types.is_time32(typ) and not pa.types.is_date32(typ)
                         else pa.int32()).cast(typ)
    return pa.scalar(_value(v), type=typ)


def _is_nan_scalar(s: Any) -> bool:
    import pyarrow as pa

    return bool(pa.types.is_floating(s.type) and s.is_valid and s.as_py() != s.as_py())


def key_less(col: Any, s: Any) -> Any:
    """Per row ``col < s`` in key order (Arrow scalar ``s``): for floats NaN is the largest
    value and equal to NaN, -0.0 == 0.0 (Java's comparator for keys, never NULL here)."""
    import pyarrow.compute as pc

    if _is_nan_scalar(s):
        return pc.invert(pc.fill_null(pc.is_nan(col), False))
    return pc.less(col, s)


def key_equal(col: Any, s: Any) -> Any:
    """Per row ``col == s`` in key order (see :func:`key_less`)."""
    import pyarrow.compute as pc

    if _is_nan_scalar(s):
        return pc.fill_null(pc.is_nan(col), False)
    return pc.equal(col, s)


def merge_runs(
    table: FileStoreTable,
    partition_dir: str,
    bucket: int,
    runs: list[list[DataFileMeta]],
    **kwargs: Any,
) -> Iterator[MergedChunk]:
    """Convenience: iterate a :class:`MergeReader`."""
    return iter(MergeReader(table, partition_dir, bucket, runs, **kwargs))


__all__ = ["ANNOTATIONS", "FILE_COL", "LEVEL_COL", "MergeReader", "MergedChunk", "POS_COL", "RUN_COL",
           "key_equal", "key_less", "merge_runs"]
