"""Manifests as Arrow tables: the columnar path for planning at millions of files.

Why: fastavro decodes a manifest entry in ~18 µs and building ``ManifestEntry`` objects
doubles that; polars-avro (arrow-rs ``arrow-avro``) decodes the same entry in ~0.7 µs,
exactly (nested records, bytes, nullable arrays, all four codecs). Planning then stays in
Arrow: the ADD/DELETE merge, partition/bucket/level filters and per-file columns are
vectorised, and objects are built only for consumers that need them.

One row per entry, the ``_FILE`` record flattened (``_KIND``, ``_PARTITION``, ``_BUCKET``,
``_TOTAL_BUCKETS``, ``_FILE_NAME``, ... ``_WRITE_COLS_SEQUENCES``); every layout from 0.8 to
2.1 is normalised to :data:`ENTRY_SCHEMA` (fields a file lacks are null; a 0.2-era null
``_KEY_STATS``/``_VALUE_STATS`` record stays null); ``_CREATION_TIME`` is the raw int64
millis (:func:`~.avro.epoch_millis`).

Refusals are the object path's: anything the vectorised checks find suspicious (a
``_VERSION``, ``_KIND``, missing ``_FILE`` or bad file name, a field we do not know, a layout
polars-avro cannot decode) is decoded again by the object path, which raises its exact
error; if it accepts the file, the table is built from its records.
"""

from __future__ import annotations

import dataclasses
import io
from collections.abc import Iterable, Iterator, Sequence
from contextlib import closing
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptMetadata, MissingMetadata, NotFound
from ..io.fileio import FileIO, join
from ..io.paths import MAX_NAME_BYTES
from ..utils.workers import prefetch
from .avro import _convert, check_unknown_fields, epoch_millis, read_avro, unknown_fields
from .avro_blocks import MAGIC, container_info
from .manifest import (
    DATA_FILE_SCHEMA,
    EMPTY_STATS,
    MANIFEST_SCHEMA,
    MANIFEST_VERSION,
    DataFileMeta,
    FileKind,
    ManifestEntry,
    SimpleStats,
    entry_from_record,
)

if TYPE_CHECKING:
    from .manifest import ManifestFileMeta

T = TypeVar("T")

_BATCH = 16  # manifests per polars-avro call: a third less CPU than one call per 1,000-entry file
_PREFETCH = 16  # manifest files fetched ahead on object stores (bounded memory)
# Runs of up to this many entries decode through the object path (~0.1 ms an entry, about what
# one polars-avro call costs at this size): a small table's read then never imports polars
# (~0.1-0.2 s of a ~0.3 s command).
_OBJECTS_UP_TO = 64

_STATS = pa.struct([("_MIN_VALUES", pa.large_binary()), ("_MAX_VALUES", pa.large_binary()),
                    ("_NULL_COUNTS", pa.large_list(pa.int64()))])
_STRINGS = pa.large_list(pa.large_string())

ENTRY_SCHEMA = pa.schema([
    ("_KIND", pa.int32()), ("_PARTITION", pa.large_binary()), ("_BUCKET", pa.int32()),
    ("_TOTAL_BUCKETS", pa.int32()),
    ("_FILE_NAME", pa.large_string()), ("_FILE_SIZE", pa.int64()), ("_ROW_COUNT", pa.int64()),
    ("_MIN_KEY", pa.large_binary()), ("_MAX_KEY", pa.large_binary()), ("_KEY_STATS", _STATS),
    ("_VALUE_STATS", _STATS), ("_MIN_SEQUENCE_NUMBER", pa.int64()), ("_MAX_SEQUENCE_NUMBER", pa.int64()),
    ("_SCHEMA_ID", pa.int64()), ("_LEVEL", pa.int32()), ("_EXTRA_FILES", _STRINGS),
    ("_CREATION_TIME", pa.int64()), ("_DELETE_ROW_COUNT", pa.int64()), ("_EMBEDDED_FILE_INDEX", pa.large_binary()),
    ("_FILE_SOURCE", pa.int32()), ("_VALUE_STATS_COLS", _STRINGS), ("_EXTERNAL_PATH", pa.large_string()),
    ("_FIRST_ROW_ID", pa.int64()), ("_WRITE_COLS", _STRINGS), ("_WRITE_COLS_SEQUENCES", pa.large_list(pa.int64())),
])
_TOP = ("_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS")
_FILE_FIELDS = tuple(f["name"] for f in DATA_FILE_SCHEMA["fields"])
# Java's FileEntry.Identifier: what ADD and DELETE entries cancel on
IDENTIFIER = ("_PARTITION", "_BUCKET", "_LEVEL", "_FILE_NAME", "_EXTRA_FILES", "_EMBEDDED_FILE_INDEX",
              "_EXTERNAL_PATH")


# ---------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------


def _plain_layout(writer: Any) -> bool:
    """A top-level record whose ``_FILE`` is a record and whose fields we all know."""
    if not isinstance(writer, dict) or writer.get("type") != "record":
        return False
    fields = {f["name"]: f["type"] for f in writer.get("fields", [])}
    return isinstance(fields.get("_FILE"), dict) and not unknown_fields(writer, MANIFEST_SCHEMA)


def _decode(raws: Sequence[bytes]) -> pa.Table | None:
    """polars-avro's decode of the files, in order, as one table (None if it cannot: the
    object path decides). Its Rust decoder is called without polars when it can be
    (:mod:`..utils.avro_native`); through ``polars_avro.read_avro`` otherwise."""
    from ..utils.avro_native import read_avro_arrow

    try:
        table = read_avro_arrow(raws)
    except Exception:  # the private API moved, or the files are bad: read_avro tells
        table = None
    if table is not None:
        return table
    from ..utils.native import polars_avro

    try:
        return polars_avro.read_avro([io.BytesIO(r) for r in raws]).to_arrow()
    except Exception:  # polars / arrow-rs raise their own kinds; the fastavro path names the problem
        return None


def _column(table: pa.Table, name: str, n: int, t: pa.DataType) -> pa.ChunkedArray:
    if name not in table.column_names:
        return pa.chunked_array([pa.nulls(n, t)], t)
    col = table.column(name)
    if pa.types.is_timestamp(col.type):
        col = col.cast(pa.int64())
    return col if col.type == t else col.cast(t)


def _normalise(decoded: pa.Table) -> pa.Table:
    """Flatten ``_FILE`` and cast every layout to :data:`ENTRY_SCHEMA`."""
    n = decoded.num_rows
    file = decoded.column("_FILE")  # its children are taken as they are: no copy
    struct = pa.table({f.name: pa.chunked_array([c.field(f.name) for c in file.chunks], f.type) for f in file.type})
    cols = [_column(decoded if f.name in _TOP else struct, f.name, n, f.type) for f in ENTRY_SCHEMA]
    return pa.Table.from_arrays(cols, schema=ENTRY_SCHEMA)


def _bad_names(names: pa.Array | pa.ChunkedArray) -> bool:
    """True if any name fails :func:`~..io.paths.check_file_name`'s rules."""
    if len(names) == 0:
        return False
    if names.null_count:
        return True
    bad = pc.or_(pc.is_in(names, pa.array(["", ".", ".."], names.type)),
                 pc.match_substring_regex(names, r"[/\\\x00-\x1f\x7f]"))
    bad = pc.or_(bad, pc.greater(pc.binary_length(names), MAX_NAME_BYTES))
    return bool(pc.any(bad).as_py())


def _suspect(decoded: pa.Table, table: pa.Table) -> bool:
    """Anything the object path would refuse (it then names the problem)."""
    version = decoded.column("_VERSION") if "_VERSION" in decoded.column_names else None
    if version is not None and pc.any(pc.not_equal(version, MANIFEST_VERSION)).as_py():
        return True
    if decoded.column("_FILE").null_count:
        return True
    required = ("_KIND", "_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_FILE_SIZE", "_ROW_COUNT", "_MIN_KEY",
                "_MAX_KEY", "_MIN_SEQUENCE_NUMBER", "_MAX_SEQUENCE_NUMBER", "_SCHEMA_ID", "_LEVEL")
    if any(table.column(c).null_count for c in required):
        return True
    if not pc.all(pc.is_in(table.column("_KIND"), pa.array([FileKind.ADD, FileKind.DELETE], pa.int32()))).as_py():
        return True
    return _bad_names(table.column("_FILE_NAME")) or _bad_names(pc.list_flatten(table.column("_EXTRA_FILES")))


def _from_records(raw: bytes, path: str) -> pa.Table:
    """The object path's decode and checks (its exact refusals); the table from its records."""
    writer, records = read_avro(raw, path)
    _convert(records, entry_from_record, path)  # its refusals, in its order
    check_unknown_fields(writer, MANIFEST_SCHEMA, records, path)
    rows = []
    for r in records:
        f = r["_FILE"]
        row = {k: r.get(k) for k in _TOP}
        row.update({k: f.get(k) for k in _FILE_FIELDS})
        row["_CREATION_TIME"] = epoch_millis(row["_CREATION_TIME"])
        rows.append(row)
    return pa.Table.from_pylist(rows, schema=ENTRY_SCHEMA)


def manifest_table_from_bytes(raw: bytes, path: str) -> pa.Table:
    """One manifest's bytes as an :data:`ENTRY_SCHEMA` table (refusing what the object path refuses)."""
    return manifest_tables_from_bytes([raw], [path])[0]


def manifest_tables_from_bytes(raws: Sequence[bytes], paths: Sequence[str]) -> list[pa.Table]:
    """Several manifests' tables, in order. Consecutive files with one known writer schema
    are decoded in one polars-avro call and cut back into files by their block counts; a
    file of another layout, or one the checks doubt, goes through the object path alone (so
    the first bad file raises the object path's error)."""
    infos = [container_info(r) for r in raws]
    out: list[pa.Table] = []
    i = 0
    while i < len(raws):
        info = infos[i]
        if info is None or not _plain_layout(info.schema):
            out.append(_by_objects(raws[i], paths[i]))
            i += 1
            continue
        j = i + 1
        while j < len(raws) and (other := infos[j]) is not None and other.schema_text == info.schema_text:
            j += 1
        out += _decode_run(raws[i:j], paths[i:j], [x.records for x in infos[i:j] if x is not None])
        i = j
    return out


def _by_objects(raw: bytes, path: str) -> pa.Table:
    if raw[:4] != MAGIC:
        raise CorruptMetadata(path, f"not an Avro container file (magic {raw[:4].hex() or 'empty'})")
    return _from_records(raw, path)


def _decode_run(raws: Sequence[bytes], paths: Sequence[str], counts: list[int]) -> list[pa.Table]:
    """Files of one plain layout, decoded together (one by one if polars-avro fails on them;
    by the object path when they hold few entries)."""
    if sum(counts) <= _OBJECTS_UP_TO:
        return [_by_objects(r, p) for r, p in zip(raws, paths, strict=True)]
    decoded = _decode(raws)
    table = None
    if decoded is not None and decoded.num_rows == sum(counts) and "_FILE" in decoded.column_names:
        try:
            table = _normalise(decoded)
        except (pa.ArrowInvalid, pa.ArrowNotImplementedError, KeyError):
            table = None
    if table is None or decoded is None:
        if len(raws) == 1:
            return [_by_objects(raws[0], paths[0])]
        return [t for r, p, n in zip(raws, paths, counts, strict=True) for t in _decode_run([r], [p], [n])]
    return _cut(decoded, table, counts, raws, paths)


def _cut(decoded: pa.Table, table: pa.Table, counts: list[int], raws: Sequence[bytes],
         paths: Sequence[str]) -> list[pa.Table]:
    """The batch's rows back per file; a file the checks doubt goes through the object path."""
    doubtful = _suspect(decoded, table)
    out, offset = [], 0
    for n, raw, path in zip(counts, raws, paths, strict=True):
        part = table.slice(offset, n)
        if doubtful and _suspect(decoded.slice(offset, n), part):
            part = _from_records(raw, path)
        out.append(part)
        offset += n
    return out


def _read_bytes(file_io: FileIO, path: str) -> bytes:
    try:
        return bytes(file_io.read_bytes(path))
    except NotFound as e:
        raise MissingMetadata(str(e)) from e


def read_manifest_table(file_io: FileIO, manifest_dir: str, name: str,
                        columns: Sequence[str] | None = None) -> pa.Table:
    """One manifest file as a flat Arrow table, one row per entry (see the module doc)."""
    path = join(manifest_dir, name)
    table = manifest_table_from_bytes(_read_bytes(file_io, path), path)
    return table if columns is None else table.select(list(columns))


def iter_manifest_tables(file_io: FileIO, manifest_dir: str, metas: Sequence[ManifestFileMeta],
                         columns: Sequence[str] | None = None) -> Iterator[pa.Table]:
    """The manifests' tables in order, decoded :data:`_BATCH` files at a time, so memory
    stays bounded by a batch (on object stores the files' bytes are fetched ahead: the wait
    is the store's, not the CPU's)."""
    paths = [join(manifest_dir, m.file_name) for m in metas]

    def fetch(path: str) -> bytes:
        return _read_bytes(file_io, path)

    if len(paths) <= 1 or file_io.is_local:
        yield from _decode_batches(map(fetch, paths), paths, columns)
        return
    with closing(prefetch(fetch, paths, min(_PREFETCH, len(paths)), "paimon-manifests")) as raws:
        yield from _decode_batches(raws, paths, columns)


def detached(table: pa.Table) -> pa.Table:
    """``table`` copied into memory of its own. A decoded batch comes from polars as one
    allocation, so a few columns kept from it keep the whole batch alive (a million files'
    identifiers held 1.2 GB instead of 130 MB); a copy lets the batch go."""
    return pa.Table.from_arrays([pa.concat_arrays(c.chunks) if c.num_chunks else pa.array([], c.type)
                                 for c in table.columns], schema=table.schema)


def _decode_batches(raws: Iterator[bytes], paths: list[str], columns: Sequence[str] | None) -> Iterator[pa.Table]:
    """Batches of 1, 2, 4, ... up to :data:`_BATCH` files: the first table comes after one
    manifest (a stream's first row, ``--limit``, a closed pipe read no more than they need),
    the bulk at the batched speed. A projection (``columns``) is :func:`detached`: callers
    that ask for a few columns keep them."""
    i, size = 0, 1
    while i < len(paths):
        batch = paths[i:i + size]
        for table in manifest_tables_from_bytes([next(raws) for _ in batch], batch):
            yield table if columns is None else detached(table.select(list(columns)))
        i += len(batch)
        size = min(2 * size, _BATCH)


# ---------------------------------------------------------------------------------------
# Merging
# ---------------------------------------------------------------------------------------


def _group_ids(keys: pa.Table) -> Any:
    """An exact group id per row of ``keys`` (rows with equal identifiers share one)."""
    import numpy as np

    from ..utils.native import pl

    df = pl.from_arrow(keys)
    assert isinstance(df, pl.DataFrame)
    groups = (df.with_row_index("__row").group_by(list(keys.column_names)).agg(pl.col("__row"))
              .with_row_index("__gid").select("__gid", "__row").explode("__row"))
    gid = np.empty(keys.num_rows, dtype=np.int64)
    gid[groups["__row"].to_numpy()] = groups["__gid"].to_numpy()
    return gid, (int(gid.max()) + 1 if keys.num_rows else 0)


def merge_live(tables: Iterable[pa.Table] | pa.Table) -> pa.Table:
    """The live ADD rows once every DELETE cancelled its ADD, as ``merge_entries`` keeps them.

    Per identifier: the last DELETE cancels every ADD before it; of the ADDs after it, the
    last one is kept at the position of the first (a dict keeps a key where it was inserted).
    Only rows whose file name occurs more than once need that work (a name is part of the
    identifier); the others are kept as they are, and manifests with nothing cancelled are
    passed through without a copy. Pass a generator to let each input table go once filtered.
    """
    import numpy as np

    parts = [tables] if isinstance(tables, pa.Table) else list(tables)
    if not parts:
        return ENTRY_SCHEMA.empty_table()
    if sum(t.num_rows for t in parts) == 0:
        return parts[0].schema.empty_table()
    kind = np.concatenate([t.column("_KIND").to_numpy() for t in parts])
    delete = kind == FileKind.DELETE
    repeated = _repeated(pa.chunked_array([c for t in parts for c in t.column("_FILE_NAME").chunks],
                                          parts[0].schema.field("_FILE_NAME").type))
    keep = ~repeated & ~delete
    if repeated.any():
        at = np.flatnonzero(repeated)
        first, last = _merge_repeated(pa.concat_tables([t.select(list(IDENTIFIER)) for t in parts]).take(at),
                                      at, delete[at])
        if not np.array_equal(first, last):  # an ADD of a live identifier: its row, the first's place
            single = np.flatnonzero(keep)
            order = np.argsort(np.concatenate([single, first]), kind="stable")
            return pa.concat_tables(parts).take(pa.array(np.concatenate([single, last])[order]))
        keep[last] = True
    return _filter_parts(parts, keep)


# Up to this many names, Arrow's hash counts them: a write into a small table then never
# imports polars (~0.35 s of a ~3 s `paimon-cli write`); above it polars' is_duplicated is
# about twice as fast (and polars is loaded anyway: such manifests decode through polars-avro).
_ARROW_DUPLICATES_UP_TO = 65_536


def _repeated(names: pa.ChunkedArray) -> Any:
    """Per row: does its file name occur more than once."""
    import numpy as np

    if len(names) <= _ARROW_DUPLICATES_UP_TO:
        codes = pc.dictionary_encode(names.combine_chunks()).indices.to_numpy(zero_copy_only=False)
        return np.bincount(codes)[codes] > 1
    from ..utils.native import pl

    series = pl.from_arrow(names)
    assert isinstance(series, pl.Series)
    return series.is_duplicated().to_numpy()


def _merge_repeated(keys: pa.Table, at: Any, delete: Any) -> tuple[Any, Any]:
    """(first, last) global rows of the identifiers still live among the rows ``at``, in
    order of first rows."""
    import numpy as np

    gid, groups = _group_ids(keys)
    last_delete = np.full(groups, -1, dtype=np.int64)
    np.maximum.at(last_delete, gid[delete], at[delete])
    after = ~delete & (at > last_delete[gid])
    neg_first = np.full(groups, np.iinfo(np.int64).min, dtype=np.int64)
    last = np.full(groups, -1, dtype=np.int64)
    np.maximum.at(last, gid[after], at[after])
    np.maximum.at(neg_first, gid[after], -at[after])  # the smallest row, as a max of negatives
    live = last >= 0
    first = -neg_first[live]
    order = np.argsort(first, kind="stable")
    return first[order], last[live][order]


def _filter_parts(parts: list[pa.Table], keep: Any) -> pa.Table:
    """The kept rows, table by table: a table kept whole is not copied, and each one filtered
    is released at once, so the peak stays near the size of the result."""
    offset = 0
    for i, t in enumerate(parts):
        m = keep[offset:offset + t.num_rows]
        offset += t.num_rows
        if not m.all():
            parts[i] = t.filter(pa.array(m))
    return pa.concat_tables(parts)


# ---------------------------------------------------------------------------------------
# Objects
# ---------------------------------------------------------------------------------------


_KINDS = (FileKind.ADD, FileKind.DELETE)


def _build(cls: type[T], names: tuple[str, ...], columns: list[list[Any]]) -> list[T]:
    """Instances of a plain frozen dataclass from its field columns.

    A frozen dataclass's ``__init__`` sets each field through ``object.__setattr__`` (about
    9 µs for DataFileMeta's 21 fields); filling ``__dict__`` gives the identical object in a
    fraction of that, which matters at a million entries.
    """
    new = object.__new__
    out: list[T] = []
    for values in zip(*columns, strict=True):
        obj = new(cls)
        obj.__dict__.update(zip(names, values, strict=True))
        out.append(obj)
    return out


def _names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _stats_column(table: pa.Table, name: str) -> list[SimpleStats]:
    col = table.column(name)
    if col.null_count:  # 0.2-era null records read as empty stats, as the object path does
        return [EMPTY_STATS if s is None else SimpleStats(s["_MIN_VALUES"], s["_MAX_VALUES"], s["_NULL_COUNTS"])
                for s in col.to_pylist()]
    return _build(SimpleStats, _names(SimpleStats), [pc.struct_field(col, [i]).to_pylist() for i in range(3)])


def _tuples(table: pa.Table, name: str) -> list[tuple[Any, ...] | None]:
    return [None if v is None else tuple(v) for v in table.column(name).to_pylist()]


def entries_from_table(table: pa.Table) -> list[ManifestEntry]:
    """``ManifestEntry`` objects for the rows (what ``ManifestFile.read`` gives), built
    column by column."""
    def col(name: str) -> list[Any]:
        return table.column(name).to_pylist()

    files = _build(DataFileMeta, _names(DataFileMeta), [
        col("_FILE_NAME"), col("_FILE_SIZE"), col("_ROW_COUNT"), col("_MIN_KEY"), col("_MAX_KEY"),
        _stats_column(table, "_KEY_STATS"), _stats_column(table, "_VALUE_STATS"), col("_MIN_SEQUENCE_NUMBER"),
        col("_MAX_SEQUENCE_NUMBER"), col("_SCHEMA_ID"), col("_LEVEL"), [tuple(v or ()) for v in col("_EXTRA_FILES")],
        col("_CREATION_TIME"), col("_DELETE_ROW_COUNT"), col("_EMBEDDED_FILE_INDEX"), col("_FILE_SOURCE"),
        _tuples(table, "_VALUE_STATS_COLS"), col("_EXTERNAL_PATH"), col("_FIRST_ROW_ID"),
        _tuples(table, "_WRITE_COLS"), _tuples(table, "_WRITE_COLS_SEQUENCES"),
        [None] * table.num_rows])  # index_file_bytes: not in manifests
    kinds = [_KINDS[k] for k in col("_KIND")]  # validated when read
    return _build(ManifestEntry, _names(ManifestEntry),
                  [kinds, col("_PARTITION"), col("_BUCKET"), col("_TOTAL_BUCKETS"), files])
