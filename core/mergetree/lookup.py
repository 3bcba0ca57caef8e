"""Look keys up in the LSM levels a compaction does not rewrite (Java ``LookupLevels``).

Why: in lookup mode (deletion vectors, ``changelog-producer=lookup``, first-row,
``force-lookup``) a compaction that moves level-0 records up must know each key's current
record on the levels above the output level: to mark it deleted (DV), to emit -U/+U against
it (lookup changelog), or to drop a duplicate (first-row). Java builds a local hash file per
looked-up data file; here the same answer comes from streaming: the merged keys of a
compaction arrive in ascending key order, and every level >= 1 is one sorted run, so each
level is read ONCE, file by file and batch by batch, only the files whose key range reaches
the keys asked for, only the columns needed, with the file's deletion vector applied (Java's
lookup reader applies it too). Matching is a vectorised hash join per chunk of keys.

Memory: per level one record batch (plus its unconsumed tail) at a time.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from ..data.binary_row import Timestamp, deserialize
from ..format import data_file  # called through the module: tests spy on its readers
from ..format.arrow_schema import KEY_PREFIX, arrow_type, key_value_file_fields, system_fields
from ..io import paths
from ..manifest.stats_reader import StatsReader
from .key_groups import adjacent_differs
from .sort_merge import key_equal, key_less

if TYPE_CHECKING:
    import pyarrow as pa

    from ..manifest.manifest import DataFileMeta
    from ..table.file_store_table import FileStoreTable
    from .dv_maintainer import DvMaintainer

ROW = "_LOOKUP_ROW"  # index of the looked-up key in the request
LEVEL = "_LEVEL"
FILE = "_FILE"
POS = "_POS"
_BATCH_ROWS = 32768


# ---------------------------------------------------------------------------------------
# vectorised lexicographic comparison against one key
# ---------------------------------------------------------------------------------------


def lex_compare(cols: list[Any], bound: list[Any], strict: bool) -> Any:
    """Per row: (cols...) < bound (``strict``) or <= bound, lexicographically (Java key order;
    float NaN largest and equal to NaN, see :func:`core.mergetree.sort_merge.key_less`)."""
    import pyarrow.compute as pc

    last = len(cols) - 1
    acc = key_less(cols[last], bound[last])
    if not strict:
        acc = pc.or_(acc, key_equal(cols[last], bound[last]))
    for i in range(last - 1, -1, -1):
        acc = pc.or_(key_less(cols[i], bound[i]), pc.and_(key_equal(cols[i], bound[i]), acc))
    return acc


def match_keys(request: pa.Table, rows: pa.Table) -> Any:
    """Per row of ``rows``: the index of the row of ``request`` (unique keys) with the same key,
    or -1. One hash lookup for a single key column; for composite keys a joint sort gives
    every distinct key a group id and rows are matched through it."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    names = request.column_names
    if len(names) == 1:
        col = rows.column(0)
        vs = request.column(0).combine_chunks()
        if not col.type.equals(vs.type):
            vs = vs.cast(col.type)
        idx = pc.index_in(col, value_set=vs)
        return pc.fill_null(idx, -1).to_numpy(zero_copy_only=False).astype(np.int64)
    n, m = request.num_rows, rows.num_rows
    both = pa.concat_tables([request, rows.select(names).cast(request.schema)])
    order = pc.sort_indices(both, sort_keys=[(k, "ascending") for k in names]).to_numpy()
    st = both.take(pa.array(order))
    new = np.zeros(n + m, dtype=bool)
    if n + m:
        new[0] = True
    for k in names:
        new[1:] |= adjacent_differs(st.column(k))
    gid_sorted = np.cumsum(new) - 1
    gid = np.empty(n + m, dtype=np.int64)
    gid[order] = gid_sorted
    req_of_group = np.full(int(gid_sorted[-1]) + 1 if n + m else 0, -1, dtype=np.int64)
    req_of_group[gid[:n]] = np.arange(n, dtype=np.int64)
    return req_of_group[gid[n:]]


def _prefix_len(mask: Any) -> int:
    """Rows of a key-sorted table satisfying a monotone (true-then-false) mask."""
    import pyarrow.compute as pc

    return int(pc.sum(pc.cast(mask, "int64")).as_py() or 0)


def key_scalars(table: pa.Table, names: list[str], row: int) -> list[Any]:
    return [table.column(n)[row] for n in names]


# ---------------------------------------------------------------------------------------
# one level: its files in key order, streamed
# ---------------------------------------------------------------------------------------


class _LevelCursor:
    """Rows of one sorted run (a level >= 1), consumed in ascending key order."""

    def __init__(self, owner: LevelLookup, level: int, files: list[DataFileMeta]) -> None:
        self.owner = owner
        self.level = level
        self.files = files  # sorted by min key
        self.next_file = 0
        self.batches: Iterator[pa.Table] | None = None
        self.pending: pa.Table | None = None  # read rows not consumed yet (keys > last bound)
        self.bounds = owner.file_key_bounds(files)  # (min keys table, max keys table)

    def _file_reaches(self, i: int, bound: list[Any], lo: list[Any] | None) -> tuple[bool, bool]:
        """(file i starts at or before ``bound``, file i ends before ``lo``)."""
        mins, maxs = self.bounds
        names = self.owner.key_names
        starts = lex_compare([mins.column(n).slice(i, 1) for n in names], bound, strict=False)[0].as_py()
        ends_before = False
        if lo is not None:
            ends_before = lex_compare([maxs.column(n).slice(i, 1) for n in names], lo, strict=True)[0].as_py()
        return bool(starts), bool(ends_before)

    def take(self, lo: list[Any], hi: list[Any]) -> list[pa.Table]:
        """Rows with key <= ``hi`` (rows < ``lo`` are dropped unread where a whole file is)."""
        out: list[pa.Table] = []
        names = self.owner.key_names
        while True:
            if self.pending is None:
                if self.batches is not None:
                    self.pending = next(self.batches, None)
                    if self.pending is None:
                        self.batches = None
                        continue
                else:
                    if self.next_file >= len(self.files):
                        return out
                    starts, ends_before = self._file_reaches(self.next_file, hi, lo)
                    if not starts:
                        return out  # the next file begins after this chunk's keys
                    f = self.files[self.next_file]
                    self.next_file += 1
                    if ends_before:
                        continue  # the whole file lies below the keys asked for: never read
                    self.batches = self.owner.read_file(f, self.level)
                    continue
            t = self.pending
            if t.num_rows == 0:
                self.pending = None
                continue
            n = _prefix_len(lex_compare([t.column(k) for k in names], hi, strict=False))
            if n == t.num_rows:
                out.append(t)
                self.pending = None
                continue
            if n:
                out.append(t.slice(0, n))
            self.pending = t.slice(n)
            return out


class LevelLookup:
    """Answers "which record does key k have on levels >= ``start_level``?" for ascending key chunks.

    ``key_names`` are the trimmed primary-key VALUE column names. ``value_columns``: value
    columns to return (plus ``_SEQUENCE_NUMBER``/``_VALUE_KIND``); ``None`` returns only where
    the record is (level, file, position) -- enough for deduplicate DV marking and first-row.
    The first level holding the key wins (Java ``LookupUtils.lookup``).
    """

    def __init__(self, table: FileStoreTable, partition: bytes, bucket: int, files: list[DataFileMeta],
                 start_level: int, key_names: list[str], value_columns: list[str] | None,
                 dv: DvMaintainer | None = None) -> None:
        self.table = table
        self.partition = partition
        self.bucket = bucket
        self.key_names = list(key_names)
        self.value_columns = value_columns
        self.dv = dv
        self.files_read: list[str] = []
        self.rows_read = 0
        self._sr = StatsReader(table)
        self._key_types = [table.schema.field(k).type for k in self.key_names]
        self._part_dir: str | None = None
        by_level: dict[int, list[DataFileMeta]] = {}
        for f in files:
            if f.level >= max(start_level, 1):
                by_level.setdefault(f.level, []).append(f)
        self.cursors = []
        for level in sorted(by_level):
            fs = by_level[level]
            mins = self.file_key_bounds(fs)[0]
            import pyarrow.compute as pc

            order = pc.sort_indices(mins, sort_keys=[(k, "ascending") for k in self.key_names]).to_pylist()
            self.cursors.append(_LevelCursor(self, level, [fs[i] for i in order]))

    @property
    def empty(self) -> bool:
        return not self.cursors

    # -- metadata -------------------------------------------------------------------------

    def file_key_bounds(self, files: list[DataFileMeta]) -> tuple[pa.Table, pa.Table]:
        """Min and max keys of ``files`` as two Arrow tables (one row per file)."""
        import pyarrow as pa

        types = [arrow_type(t) for t in self._key_types]

        def conv(v: Any, at: pa.DataType) -> Any:
            if isinstance(v, Timestamp):  # exact, nanoseconds included, in the column's unit
                ns = v.millisecond * 1_000_000 + v.nano_of_millisecond
                return ns // {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}[at.unit]
            return v

        rows_min = [deserialize(f.min_key, self._key_types) for f in files]
        rows_max = [deserialize(f.max_key, self._key_types) for f in files]

        def table(rows: list[list[Any]]) -> pa.Table:
            arrays = []
            for i, at in enumerate(types):
                vals = [conv(r[i], at) for r in rows]
                if pa.types.is_timestamp(at):
                    arrays.append(pa.array(vals, type=pa.int64()).cast(at))
                else:
                    arrays.append(pa.array(vals, type=at))
            return pa.Table.from_arrays(arrays, names=self.key_names)

        return table(rows_min), table(rows_max)

    # -- reading ----------------------------------------------------------------------------

    def _file_path(self, meta: DataFileMeta) -> str:
        if self._part_dir is None:
            schema = self.table.schema
            values = deserialize(self.partition, schema.partition_types) if schema.partition_keys else []
            self._part_dir = paths.partition_path_for(schema, values)
        return paths.data_file_path(self.table.data_root, self._part_dir, self.bucket, meta.file_name, meta.external_path)

    def read_file(self, meta: DataFileMeta, level: int) -> Iterator[pa.Table]:
        """The file's rows as tables of key columns (+ values), ``_POS``, ``_LEVEL``, ``_FILE``,
        rows its deletion vector marks left out."""
        import numpy as np
        import pyarrow as pa

        self.files_read.append(meta.file_name)
        schema = self.table.schema
        fs = self._sr.schema(meta.schema_id)
        file_fields = [f for f in key_value_file_fields(fs) if not f.name.startswith(KEY_PREFIX)]
        target = [schema.field(k) for k in self.key_names]
        if self.value_columns is not None:
            target = system_fields() + target + [schema.field(c) for c in self.value_columns
                                                 if c not in self.key_names]
        ids = {f.id for f in target}
        cols = [f.name for f in file_fields if f.id in ids]
        dv = self.dv.vector_of(meta.file_name) if self.dv is not None else None
        offset = 0
        for batch in data_file.iter_data_file_batches(self.table.file_io, self._file_path(meta), file_fields, cols,
                                            batch_rows=_BATCH_ROWS):
            n = batch.num_rows
            if n == 0:
                continue
            t = data_file.evolve(pa.Table.from_batches([batch]), file_fields, target)
            pos = np.arange(offset, offset + n, dtype=np.int64)
            offset += n
            if dv is not None and not dv.is_empty():
                bm = dv.bitmap
                keep = np.asarray((type(bm)(range(int(pos[0]), int(pos[0]) + n)) - bm).to_array(), dtype=np.int64)
                if len(keep) != n:
                    t = t.take(pa.array(keep - pos[0]))
                    pos = keep
            self.rows_read += t.num_rows
            t = t.append_column(POS, pa.array(pos, type=pa.int64()))
            t = t.append_column(LEVEL, pa.array(np.full(len(pos), level, dtype=np.int32)))
            t = t.append_column(FILE, pa.repeat(pa.scalar(meta.file_name, type=pa.string()), len(pos)))
            yield t

    # -- lookups ---------------------------------------------------------------------------

    def lookup(self, keys: pa.Table) -> pa.Table | None:
        """Records of the unique, ascending ``keys`` (columns ``key_names``) on the levels.

        Returns a table with ``_LOOKUP_ROW`` (row of ``keys``), ``_LEVEL``, ``_FILE``, ``_POS``,
        the key columns and the requested value columns; None when nothing matched. Calls must
        come in ascending key order (chunks of one compaction).
        """
        import numpy as np
        import pyarrow as pa

        if keys.num_rows == 0 or not self.cursors:
            return None
        keys = keys.select(self.key_names)
        lo = key_scalars(keys, self.key_names, 0)
        hi = key_scalars(keys, self.key_names, keys.num_rows - 1)
        remaining = keys.append_column(ROW, pa.array(np.arange(keys.num_rows, dtype=np.int64)))
        found: list[pa.Table] = []
        for cursor in self.cursors:
            parts = cursor.take(lo, hi)
            if not parts or remaining.num_rows == 0:
                continue
            rows = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
            if rows.num_rows == 0:
                continue
            match = match_keys(remaining.select(self.key_names), rows.select(self.key_names))
            sel = np.flatnonzero(match >= 0)
            if len(sel) == 0:
                continue
            hit = rows.take(pa.array(sel))
            req = remaining.column(ROW).to_numpy()[match[sel]]
            hit = hit.append_column(ROW, pa.array(req, type=pa.int64()))
            found.append(hit)
            got = hit.column(ROW).to_numpy()
            mask = np.ones(keys.num_rows, dtype=bool)
            mask[got] = False
            rem_rows = remaining.column(ROW).to_numpy()
            remaining = remaining.filter(pa.array(mask[rem_rows]))
        if not found:
            return None
        out = pa.concat_tables(found, promote_options="none") if len(found) > 1 else found[0]
        return out.sort_by([(ROW, "ascending")])


__all__ = ["LevelLookup", "lex_compare", "match_keys", "ROW", "LEVEL", "FILE", "POS"]
