"""``$files`` streamed: the live files of a snapshot, manifest by manifest, on the columnar
manifest path (:mod:`..manifest.columnar`).

A file is live unless a later entry DELETEs its identifier, and a DELETE may sit in any later
manifest, so the DELETEs come first: only manifests whose list entry counts deleted files are
read, projected to the identifier columns, into ``identifier -> position of its last DELETE``.
Then each manifest's ADD rows stream out in manifest order, an ADD dropped when a DELETE of
its identifier comes after it. That is :func:`..manifest.expire_file_entry.merge_entries`
(a file deleted and added again is live at its re-add, a level upgrade is a DELETE then an
ADD of the same name) in the same order, with memory bounded by one manifest plus the
DELETEs. Postponed files of a postpone table are left out, as Java's batch scan does.

The cheap columns are computed with Arrow kernels (partition text and directory once per
distinct partition); the keys and value stats are BinaryRows decoded per file, only when asked.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from contextlib import closing
from typing import TYPE_CHECKING, Any, NamedTuple, cast

from ..data.binary_row_columns import decode_serialized
from ..data.java_format import java_map_string, java_string
from ..errors import CorruptMetadata
from ..io import paths
from ..io.fileio import join
from ..manifest.columnar import IDENTIFIER, iter_manifest_tables, read_manifest_table
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.manifest import EMPTY_STATS, DataFileMeta, FileKind, ManifestFileMeta, SimpleStats
from ..operation.scan import FileStoreScan, is_postpone_table
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import Composite, JavaText, Picked, Rows, RowStream

if TYPE_CHECKING:
    import pyarrow as pa

FILES_COLUMNS = [
    "partition", "bucket", "file_path", "file_format", "schema_id", "level", "record_count",
    "file_size_in_bytes", "min_key", "max_key", "null_value_counts", "min_value_stats",
    "max_value_stats", "min_sequence_number", "max_sequence_number", "creation_time",
    "deleteRowCount", "file_source", "first_row_id", "write_cols",
]
# output column -> the manifest columns it is computed from
_SOURCES: dict[str, list[str]] = {
    "partition": [], "bucket": [], "file_path": [], "file_format": [],
    "schema_id": ["_SCHEMA_ID"], "level": [], "record_count": ["_ROW_COUNT"], "file_size_in_bytes": ["_FILE_SIZE"],
    "min_key": ["_MIN_KEY", "_SCHEMA_ID"], "max_key": ["_MAX_KEY", "_SCHEMA_ID"],
    "min_sequence_number": ["_MIN_SEQUENCE_NUMBER"], "max_sequence_number": ["_MAX_SEQUENCE_NUMBER"],
    "creation_time": ["_CREATION_TIME"], "deleteRowCount": ["_DELETE_ROW_COUNT"], "file_source": ["_FILE_SOURCE"],
    "first_row_id": ["_FIRST_ROW_ID"], "write_cols": ["_WRITE_COLS"],
}
_STATS = ("null_value_counts", "min_value_stats", "max_value_stats")
_PLAIN = {"schema_id": "_SCHEMA_ID", "level": "_LEVEL", "record_count": "_ROW_COUNT",
          "file_size_in_bytes": "_FILE_SIZE", "min_sequence_number": "_MIN_SEQUENCE_NUMBER",
          "max_sequence_number": "_MAX_SEQUENCE_NUMBER", "deleteRowCount": "_DELETE_ROW_COUNT",
          "first_row_id": "_FIRST_ROW_ID", "write_cols": "_WRITE_COLS", "bucket": "_BUCKET"}

Position = tuple[int, int]  # (manifest index, row index): the order of entries in a snapshot


def files(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Java's ``$files``, every row at once (:func:`files_stream` streams it)."""
    return files_stream(table, at).collect()


def files_stream(table: FileStoreTable, at: TimeTravel | None = None) -> RowStream:
    """Java's ``$files`` of the snapshot ``at`` picks (latest by default), as a stream.

    The snapshot and its manifest lists are read now (a bad time travel fails before any
    output); the manifests as the chunks are read."""
    snapshot = table.resolve_snapshot(at)
    scan = FileStoreScan(table)
    metas = scan.data_manifests(snapshot) if snapshot is not None else []

    def chunks(columns: list[str], typed: bool = False) -> Iterator[list[dict[str, Any]]]:
        return live_file_chunks(table, scan, metas, columns, typed)

    def column_chunks(columns: list[str], typed: bool = False, merge: bool = False) -> Iterator[dict[str, Any]]:
        return live_file_column_chunks(table, scan, metas, columns, typed, merge)

    return RowStream(list(FILES_COLUMNS), chunks, column_chunks=column_chunks)


def live_file_chunks(table: FileStoreTable, scan: FileStoreScan, metas: list[ManifestFileMeta],
                     columns: list[str], typed: bool = False) -> Iterator[list[dict[str, Any]]]:
    """The ``$files`` rows of the live files of ``metas`` (a snapshot's base + delta
    manifests), one list per manifest that has any, with only ``columns``; ``typed``: the
    Java-text columns (partition, keys, stats) as their typed values only (for JSON)."""
    rows = _RowBuilder(table, columns, typed)
    for live in _live_tables(table, scan, metas, columns):
        yield rows.build(live)


def live_file_column_chunks(table: FileStoreTable, scan: FileStoreScan, metas: list[ManifestFileMeta],
                            columns: list[str], typed: bool = False, merge: bool = False) -> Iterator[dict[str, Any]]:
    """:func:`live_file_chunks` as columns (``RowStream.column_chunks``): keys and stats
    decoded a column at a time, partitions once per distinct value; ``merge``: consecutive
    manifests share a chunk (:func:`_coalesced`), else one chunk per manifest."""
    rows = _RowBuilder(table, columns, typed)
    tables = _live_tables(table, scan, metas, columns)
    for live in _coalesced(tables, columns) if merge else tables:
        yield rows.build_columns(live)


_CHUNK_ROWS = 16_384  # rows per column chunk: a manifest holds ~1,000 files; Arrow kernels
# over 16 of them at once cost a third of the CPU of 16 calls each (decode and JSON rendering)


def _coalesced(tables: Iterator[pa.Table], columns: list[str]) -> Iterator[pa.Table]:
    """Consecutive manifests' live rows joined into one table while they share one layout
    (:func:`_layout`) and stay under a size that doubles from one manifest (the first rows
    of a pipe come after one manifest) to :data:`_CHUNK_ROWS`: the same rows in the same
    order, decoded and rendered in fewer, larger Arrow calls."""
    import pyarrow as pa

    wanted = set(columns)
    layout_matters = bool(wanted & {"min_key", "max_key", *_STATS})
    pending: list[pa.Table] = []
    pending_layout: Any = None
    rows, target = 0, 0

    def joined() -> pa.Table:  # no copy: build_columns combines only the columns it uses
        return pending[0] if len(pending) == 1 else pa.concat_tables(pending)

    for tbl in tables:
        layout = _layout(tbl) if layout_matters else ()
        if pending and (layout is None or layout != pending_layout or rows + tbl.num_rows > target):
            yield joined()
            pending, rows, target = [], 0, min(max(2 * target, 1024), _CHUNK_ROWS)
        pending.append(tbl)
        pending_layout = layout
        rows += tbl.num_rows
        if rows >= target:
            yield joined()
            pending, rows, target = [], 0, min(max(2 * target, 1024), _CHUNK_ROWS)
    if pending:
        yield joined()


def _layout(tbl: pa.Table) -> tuple[Any, ...] | None:
    """What decides how :meth:`_RowBuilder.build_columns` decodes a table's keys and stats
    a column at a time: one schema id, one stats-columns list, one write-columns list, no
    NULL keys or stats (None when a table has more than one: it stays a chunk of its own)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    key: list[Any] = []
    for c in ("_SCHEMA_ID", "_VALUE_STATS_COLS", "_WRITE_COLS"):
        if c not in tbl.column_names:
            key.append(None)
            continue
        col = tbl.column(c).combine_chunks()
        first = col[0].as_py()
        if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
            if not _all_equal_lists(col, first):
                return None
            key.append(None if first is None else tuple(first))
        elif col.null_count or pc.min_max(col).as_py() != {"min": first, "max": first}:
            return None
        else:
            key.append(first)
    for c in ("_MIN_KEY", "_MAX_KEY", "_VALUE_STATS"):
        key.append(c in tbl.column_names and tbl.column(c).null_count == 0)
    return tuple(key)


def _live_tables(table: FileStoreTable, scan: FileStoreScan, metas: list[ManifestFileMeta],
                 columns: list[str]) -> Iterator[pa.Table]:
    """Per manifest with live files, its live ADD rows with what ``columns`` are computed from."""
    wanted = set(columns)
    read_all = any(c in wanted for c in _STATS)  # stats need whole entries
    projection = None if read_all else sorted(
        {"_KIND", *IDENTIFIER, *(s for c in wanted for s in _SOURCES.get(c, []))})
    import pyarrow as pa

    deleted = deleted_identifiers(scan, metas)
    deleted_names = pa.array(sorted({ident[3] for ident in deleted}), pa.large_string())
    drop_postponed = is_postpone_table(table.schema)
    tables = cast("Generator[pa.Table, None, None]",  # a generator: closing it ends the prefetch
                  iter_manifest_tables(scan.file_io, scan.manifest_dir, metas, projection))
    with closing(tables):  # a stop (--limit, a closed pipe) ends the prefetch too
        for i, (meta, tbl) in enumerate(zip(metas, tables, strict=True)):
            if meta.num_deleted_files == 0:
                _check_no_deletes(scan, meta, tbl)
            live = _live_adds(tbl, i, deleted, deleted_names, drop_postponed)
            if live.num_rows:
                yield live


def deleted_identifiers(scan: FileStoreScan, metas: list[ManifestFileMeta]) -> dict[tuple[Any, ...], Position]:
    """Identifier -> position of its last DELETE, over the manifests that delete anything."""
    import numpy as np

    out: dict[tuple[Any, ...], Position] = {}
    for i, meta in enumerate(metas):
        if meta.num_deleted_files == 0:
            continue
        tbl = read_manifest_table(scan.file_io, scan.manifest_dir, meta.file_name, ["_KIND", *IDENTIFIER])
        rows = np.flatnonzero(tbl.column("_KIND").to_numpy(zero_copy_only=False) == FileKind.DELETE)
        for r, ident in zip(rows.tolist(), _identifiers(tbl.take(rows)), strict=True):
            out[ident] = (i, r)
    return out


def _check_no_deletes(scan: FileStoreScan, meta: ManifestFileMeta, tbl: pa.Table) -> None:
    """The DELETE pass trusted the list's ``_NUM_DELETED_FILES = 0``: a DELETE here would
    have cancelled files already printed, so it is refused, never shown wrong."""
    import pyarrow.compute as pc

    found = pc.sum(pc.equal(tbl.column("_KIND"), int(FileKind.DELETE))).as_py() or 0
    if found:
        raise CorruptMetadata(join(scan.manifest_dir, meta.file_name),
                              f"{found} DELETE entries, but its manifest list counts no deleted files")


def _identifiers(tbl: pa.Table) -> Iterator[tuple[Any, ...]]:
    """ManifestEntry.identifier() of each row (few rows: DELETEs and the ADDs they may cancel)."""
    cols = [tbl.column(c).to_pylist() for c in IDENTIFIER]
    for part, bucket, level, name, extra, index, external in zip(*cols, strict=True):
        yield (part, bucket, level, name, tuple(extra or ()), index, external)


def _live_adds(tbl: pa.Table, i: int, deleted: dict[tuple[Any, ...], Position], deleted_names: pa.Array,
               drop_postponed: bool) -> pa.Table:
    """The ADD rows of manifest ``i`` that no later DELETE cancels (and no postponed file)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    keep = tbl.column("_KIND").to_numpy(zero_copy_only=False) == FileKind.ADD
    if drop_postponed:
        keep &= tbl.column("_BUCKET").to_numpy(zero_copy_only=False) >= 0
    if deleted:
        maybe = keep & pc.is_in(tbl.column("_FILE_NAME"), value_set=deleted_names).to_numpy(zero_copy_only=False)
        rows = np.flatnonzero(maybe)
        for r, ident in zip(rows.tolist(), _identifiers(tbl.take(rows)), strict=True):
            if deleted.get(ident, (-1, -1)) > (i, r):
                keep[r] = False
    return tbl if keep.all() else tbl.filter(pa.array(keep))


class _RowBuilder:
    """One manifest's live files as ``$files`` rows with ``columns``."""

    def __init__(self, table: FileStoreTable, columns: list[str], typed: bool) -> None:
        self.table = table
        self.columns = columns
        self.wanted = set(columns)
        self.typed = typed
        self.dec = EntryDecoder(table)
        self.types_by_name = {f.name: f.type for f in table.schema.fields}

    def build(self, tbl: pa.Table) -> list[dict[str, Any]]:
        values: dict[str, list[Any]] = {}
        wanted = self.wanted
        for name, source in _PLAIN.items():
            if name in wanted:
                values[name] = tbl.column(source).to_pylist()
        if "partition" in wanted or "file_path" in wanted:
            values.update(_partition_columns(self.table, self.dec, tbl, wanted, self.typed))
        if "file_format" in wanted:
            values["file_format"] = _file_formats(tbl.column("_FILE_NAME")).to_pylist()
        if "creation_time" in wanted:
            import pyarrow as pa

            values["creation_time"] = tbl.column("_CREATION_TIME").cast(pa.timestamp("ms")).to_pylist()
        if "file_source" in wanted:
            values["file_source"] = _file_sources(tbl.column("_FILE_SOURCE")).to_pylist()
        if wanted & {"min_key", "max_key"}:
            values.update(self._keys(tbl))
        if wanted & set(_STATS):
            values.update(self._stats(tbl))
        cols = self.columns
        return [dict(zip(cols, row, strict=True)) for row in zip(*(values[c] for c in cols), strict=True)]

    def build_columns(self, tbl: pa.Table) -> dict[str, Any]:
        """:meth:`build` as columns: ``pa.Array``, :class:`Picked` or :class:`Composite`; not
        ``typed``, the Java-text columns are string arrays (or Picked :class:`JavaText`)."""
        import pyarrow as pa

        values: dict[str, Any] = {}
        wanted = self.wanted
        for name, source in _PLAIN.items():
            if name in wanted:
                values[name] = tbl.column(source).combine_chunks()
        if "partition" in wanted or "file_path" in wanted:
            parts, index, paths_ = _partitions(self.table, self.dec, tbl, wanted)
            if "partition" in wanted and not self.typed:
                values["partition"] = Picked([self.dec.partition_string(p) for p in parts], index)
            elif "partition" in wanted:
                values["partition"] = Composite(
                    list(self.dec.partition_names),
                    [Picked([self.dec.partition_values(p)[j] for p in parts], index)
                     for j in range(len(self.dec.partition_names))], tbl.num_rows)
            if paths_ is not None:
                values["file_path"] = paths_
        if "file_format" in wanted:
            values["file_format"] = _file_formats(tbl.column("_FILE_NAME").combine_chunks())
        if "creation_time" in wanted:
            values["creation_time"] = tbl.column("_CREATION_TIME").combine_chunks().cast(pa.timestamp("ms"))
        if "file_source" in wanted:
            values["file_source"] = _file_sources(tbl.column("_FILE_SOURCE").combine_chunks())
        for name, source in (("min_key", "_MIN_KEY"), ("max_key", "_MAX_KEY")):
            if name in wanted:
                values[name] = self._key_column(tbl, source)
        if wanted & set(_STATS):
            values.update(self._stats_columns(tbl))
        return {c: values[c] for c in self.columns}

    def _text(self, comp: Composite, types: list[Any]) -> pa.Array:
        """Java's text of a typed column (:func:`..data.java_format.java_array_string`, or
        ``java_map_string`` with keys), NULL where the value is None."""
        import pyarrow as pa
        import pyarrow.compute as pc

        n = comp.length
        if comp.keys is None:
            order = list(range(len(comp.parts)))
            prefixes = [""] * len(order)
            opening, closing = "[", "]"
        else:
            keys = comp.keys
            order = sorted(range(len(comp.parts)), key=lambda j: keys[j])
            prefixes = [f"{keys[j]}=" for j in order]
            opening, closing = "{", "}"
        if not order:
            texts = pa.array([opening + closing] * n, pa.string())
        else:
            pieces: list[Any] = []
            for k, (j, prefix) in enumerate(zip(order, prefixes, strict=True)):
                pieces.append(pa.scalar((opening if k == 0 else ", ") + prefix))
                pieces.append(_java_texts(comp.parts[j], types[j], n))
            pieces.append(pa.scalar(closing))
            texts = pc.binary_join_element_wise(*pieces, "")
        if comp.valid is not None:
            texts = pc.if_else(pa.array(comp.valid), texts, pa.scalar(None, pa.string()))
        return texts

    def _key_column(self, tbl: pa.Table, source: str) -> Any:
        """A key column: decoded a column at a time per schema (None for an empty key);
        row by row where the fast path declines (:mod:`..data.binary_row_columns`)."""
        import numpy as np

        keys = tbl.column(source).combine_chunks()
        schema_ids = tbl.column("_SCHEMA_ID").to_numpy(zero_copy_only=False)
        if len(np.unique(schema_ids)) == 1 and not keys.null_count:
            arity = _arities(keys)
            if arity is not None and (arity <= 0).all():
                return Picked([None], np.zeros(tbl.num_rows, np.int64))
            if arity is not None and (arity > 0).all():
                types = self.dec.key_types(int(schema_ids[0]))
                parts = decode_serialized(keys, types) if (arity == len(types)).all() else None
                if parts is not None:
                    comp = Composite(None, [_part(p) for p in parts], tbl.num_rows)
                    return comp if self.typed else self._text(comp, types)
        decode = self.dec.key_values if self.typed else self.dec.key_string
        return Picked([decode(k, s) for k, s in zip(keys.to_pylist(), schema_ids.tolist(), strict=True)])

    def _stats_columns(self, tbl: pa.Table) -> dict[str, Any]:
        """Null counts, mins and maxes per current column, a column at a time when every file
        has the same stats layout and stats; else file by file (:meth:`_stats`)."""
        fast = self._stats_fast(tbl)
        if fast is not None:
            return fast
        return {k: Picked(v) for k, v in self._stats(tbl).items()}

    def _stats_fast(self, tbl: pa.Table) -> dict[str, Any] | None:
        import pyarrow as pa

        stats = tbl.column("_VALUE_STATS").combine_chunks()
        if stats.null_count or tbl.num_rows == 0:
            return None
        layout_cols = ("_SCHEMA_ID", "_VALUE_STATS_COLS", "_WRITE_COLS")
        first = {c: tbl.column(c)[0].as_py() for c in layout_cols}
        for c in layout_cols:  # one layout for every file of the manifest
            col = tbl.column(c).combine_chunks()
            if pa.types.is_list(col.type) or pa.types.is_large_list(col.type):
                if not _all_equal_lists(col, first[c]):
                    return None
            elif col.null_count or col.unique().to_pylist() != [first[c]]:
                return None
        meta = cast(DataFileMeta, _StatsMeta(
            first["_SCHEMA_ID"], None if first["_VALUE_STATS_COLS"] is None else tuple(first["_VALUE_STATS_COLS"]),
            None if first["_WRITE_COLS"] is None else tuple(first["_WRITE_COLS"]), EMPTY_STATS, 0))
        types, layout = self.dec._stats_layout(meta)
        if not types:
            return None
        mins = decode_serialized(stats.field("_MIN_VALUES"), types)
        maxs = decode_serialized(stats.field("_MAX_VALUES"), types)
        if mins is None or maxs is None:
            return None
        counts = stats.field("_NULL_COUNTS")
        n = tbl.num_rows
        row_count = tbl.column("_ROW_COUNT").combine_chunks()
        none = pa.nulls(n)
        keys = [name for name, _, _ in layout]
        nc: list[Any] = []
        lo: list[Any] = []
        hi: list[Any] = []
        for _, i, in_file in layout:
            if i is None:
                nc.append(none if in_file else row_count)
                lo.append(none)
                hi.append(none)
            else:
                nc.append(_list_element(counts, i))
                lo.append(_part(mins[i]))
                hi.append(_part(maxs[i]))
        out = {"null_value_counts": Composite(keys, nc, n), "min_value_stats": Composite(keys, lo, n),
               "max_value_stats": Composite(keys, hi, n)}
        if self.typed:
            return out
        by_name = [self.types_by_name.get(k) for k in keys]
        return {"null_value_counts": self._text(out["null_value_counts"], [None] * len(keys)),
                "min_value_stats": self._text(out["min_value_stats"], by_name),
                "max_value_stats": self._text(out["max_value_stats"], by_name)}

    def _keys(self, tbl: pa.Table) -> dict[str, list[Any]]:
        """``min_key`` / ``max_key`` as ``[k1, k2]`` in each file's own schema."""
        schema_ids = tbl.column("_SCHEMA_ID").to_pylist()
        decode = self.dec.key_values if self.typed else self.dec.key_string
        out: dict[str, list[Any]] = {}
        for name, source in (("min_key", "_MIN_KEY"), ("max_key", "_MAX_KEY")):
            if name in self.wanted:
                keys = tbl.column(source).to_pylist()
                out[name] = [decode(k, s) for k, s in zip(keys, schema_ids, strict=True)]
        return out

    def _stats(self, tbl: pa.Table) -> dict[str, list[Any]]:
        """Null counts, mins and maxes per current column (evolved by field id), Java's text."""
        nulls: list[Any] = []
        mins: list[Any] = []
        maxs: list[Any] = []
        by_name = self.types_by_name
        for meta in _stats_metas(tbl):
            nc, lo, hi = self.dec.value_stats(meta)
            if self.typed:
                nulls.append(nc)
                mins.append(lo)
                maxs.append(hi)
            else:
                nulls.append(JavaText(java_map_string(nc), dict(nc)))
                mins.append(JavaText(java_map_string(lo, by_name), dict(lo)))
                maxs.append(JavaText(java_map_string(hi, by_name), dict(hi)))
        return {"null_value_counts": nulls, "min_value_stats": mins, "max_value_stats": maxs}


def _stats_metas(tbl: pa.Table) -> Iterator[DataFileMeta]:
    """What decoding a file's value stats reads of it, without building whole entries."""
    cols = [tbl.column(c).to_pylist() for c in
            ("_VALUE_STATS", "_SCHEMA_ID", "_VALUE_STATS_COLS", "_WRITE_COLS", "_ROW_COUNT")]
    for stats, schema_id, stats_cols, write_cols, row_count in zip(*cols, strict=True):
        value_stats = EMPTY_STATS if stats is None else SimpleStats(
            stats["_MIN_VALUES"], stats["_MAX_VALUES"], stats["_NULL_COUNTS"])
        yield cast(DataFileMeta, _StatsMeta(
            schema_id, None if stats_cols is None else tuple(stats_cols),
            None if write_cols is None else tuple(write_cols), value_stats, row_count))


class _StatsMeta(NamedTuple):
    """The fields of a DataFileMeta that StatsReader.value_stats reads."""

    schema_id: int
    value_stats_cols: tuple[str, ...] | None
    write_cols: tuple[str, ...] | None
    value_stats: SimpleStats
    row_count: int


def _partition_columns(table: FileStoreTable, dec: EntryDecoder, tbl: pa.Table, wanted: set[str],
                       typed: bool) -> dict[str, list[Any]]:
    """``partition`` (Java's text, typed) and ``file_path`` as lists (:func:`_partitions`)."""
    import numpy as np

    parts, index, built = _partitions(table, dec, tbl, wanted)
    out: dict[str, list[Any]] = {}
    if "partition" in wanted:
        texts = np.empty(len(parts), dtype=object)
        texts[:] = [dec.partition_string(p).typed if typed else dec.partition_string(p) for p in parts]
        out["partition"] = texts[index].tolist()
    if built is not None:
        out["file_path"] = built.to_pylist()
    return out


def _partitions(table: FileStoreTable, dec: EntryDecoder, tbl: pa.Table,
                wanted: set[str]) -> tuple[list[bytes], Any, pa.Array | None]:
    """The distinct partitions, each row's index into them, and (if wanted) ``file_path``:
    directories built once per distinct partition and bucket, spread over the rows by index."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    encoded = tbl.column("_PARTITION").combine_chunks().dictionary_encode()
    parts: list[bytes] = encoded.dictionary.to_pylist()
    index = encoded.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    file_path = None
    if "file_path" in wanted:
        buckets = tbl.column("_BUCKET").to_numpy(zero_copy_only=False).astype(np.int64)
        pairs, where = np.unique(index * (1 << 32) + (buckets & 0xFFFFFFFF), return_inverse=True)
        dirs = [paths.data_file_path(table.data_root, dec.partition_dir(parts[int(p) >> 32]),
                                     _signed32(int(p) & 0xFFFFFFFF), "_")[:-1] for p in pairs.tolist()]
        built = pc.binary_join_element_wise(pa.array(dirs, pa.large_string()).take(pa.array(where.reshape(-1))),
                                            tbl.column("_FILE_NAME").combine_chunks(), pa.scalar("", pa.large_string()))
        external = tbl.column("_EXTERNAL_PATH").combine_chunks()
        has_external = pc.fill_null(pc.greater(pc.utf8_length(external), 0), False)
        file_path = pc.if_else(has_external, external, built)
    return parts, index, file_path


def _java_texts(part: Any, dtype: Any, n: int) -> pa.Array:
    """``java_string`` of each value of a column part ("null" for NULL): Arrow casts for
    integers and strings (their text is the value's own), the Python function otherwise."""
    import pyarrow as pa
    import pyarrow.compute as pc

    null = pa.scalar("null")
    if isinstance(part, Picked):
        texts = pa.array([java_string(v, dtype) for v in part.values], pa.string())
        return texts if part.index is None else texts.take(pa.array(part.index))
    t = part.type
    if pa.types.is_integer(t) or pa.types.is_string(t) or pa.types.is_large_string(t):
        return pc.fill_null(part.cast(pa.string()), null)
    if pa.types.is_null(t):
        return pa.array(["null"] * n, pa.string())
    return pa.array([java_string(v, dtype) for v in part.to_pylist()], pa.string())


def _part(values: Any) -> Any:
    """A decoded field as a column part: Python values (decoded per row) as :class:`Picked`."""
    return Picked(values) if isinstance(values, list) else values


def _arities(rows: pa.Array) -> Any:
    """The arity prefix (big-endian int) of each serialized row; None if one is too short for it."""
    import numpy as np
    import pyarrow as pa

    rows = rows.cast(pa.large_binary())
    n = len(rows)
    offsets = np.frombuffer(rows.buffers()[1], dtype=np.int64, count=rows.offset + n + 1)[rows.offset:]
    buf = rows.buffers()[2]
    data = np.frombuffer(buf, dtype=np.uint8) if buf is not None else np.zeros(0, np.uint8)
    short = (offsets[1:] - offsets[:-1]) < 4
    if short.any():
        return None  # the row decoder reports these
    b = data[offsets[:-1, None] + np.arange(4)].astype(np.int64)
    return (b[:, 0] << 24 | b[:, 1] << 16 | b[:, 2] << 8 | b[:, 3]).astype(np.int32)


def _all_equal_lists(lists: pa.Array, first: list[Any] | None) -> bool:
    """Whether every list is ``first`` (every one NULL, if it is None)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if first is None:
        return lists.null_count == len(lists)
    if lists.null_count or pc.any(pc.not_equal(pc.list_value_length(lists), len(first))).as_py():
        return False
    flat = lists.flatten()
    return len(flat) == 0 or bool(pc.all(pc.fill_null(pc.equal(flat, pa.array(first * len(lists), flat.type)),
                                                     False)).as_py())


def _list_element(lists: pa.Array, i: int) -> pa.Array:
    """Element ``i`` of each list, NULL where the list is NULL or shorter."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    n = len(lists)
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_numpy(zero_copy_only=False)
    has = lengths > i
    if not has.any():
        return pa.nulls(n, lists.type.value_type)
    offsets = lists.offsets.to_numpy(zero_copy_only=False)[:n]
    taken = lists.values.take(pa.array(np.where(has, offsets + i, 0)))
    return pc.if_else(pa.array(has), taken, pa.scalar(None, taken.type))


def _signed32(v: int) -> int:
    return v - (1 << 32) if v >= 1 << 31 else v


def _file_formats(names: Any) -> pa.Array:
    """The extension of each file name ("" without a dot)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    empty = pa.scalar("", names.type)
    return pc.if_else(pc.match_substring(names, "."), pc.replace_substring_regex(names, r"(?s)^.*\.", ""), empty)


def _file_sources(codes: Any) -> pa.Array:
    import pyarrow as pa
    import pyarrow.compute as pc

    known = pc.if_else(pc.is_in(codes, value_set=pa.array([0, 1], codes.type)), codes, None)
    return pa.array(["APPEND", "COMPACT"]).take(known.cast(pa.int32()))
