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

import io
import json
from collections.abc import Iterator, Sequence
from contextlib import closing
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from ..errors import CorruptMetadata, MissingMetadata, NotFound
from ..io.fileio import FileIO, join
from ..io.paths import MAX_NAME_BYTES
from ..utils.workers import prefetch
from .avro import _convert, check_unknown_fields, epoch_millis, read_avro, unknown_fields
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

_MAGIC = b"Obj\x01"
_PREFETCH = 8  # manifests decoded ahead on object stores (bounded memory)

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


def _writer_schema(raw: bytes) -> Any | None:
    """The ``avro.schema`` of the container header (None if the header does not parse)."""
    import fastavro  # header only: the blocks are not decoded

    try:
        return json.loads(fastavro.reader(io.BytesIO(raw)).metadata["avro.schema"])
    except Exception:  # a broken header: the object path names the problem
        return None


def _plain_layout(writer: Any) -> bool:
    """A top-level record whose ``_FILE`` is a record and whose fields we all know."""
    if not isinstance(writer, dict) or writer.get("type") != "record":
        return False
    fields = {f["name"]: f["type"] for f in writer.get("fields", [])}
    return isinstance(fields.get("_FILE"), dict) and not unknown_fields(writer, MANIFEST_SCHEMA)


def _decode(raw: bytes) -> pa.Table | None:
    """polars-avro's decode (None if it cannot: the object path decides)."""
    import polars_avro

    try:
        return polars_avro.read_avro(io.BytesIO(raw)).to_arrow()
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
    file = decoded.column("_FILE").combine_chunks()
    struct = pa.table({f.name: file.field(f.name) for f in file.type})
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
    if raw[:4] != _MAGIC:
        raise CorruptMetadata(path, f"not an Avro container file (magic {raw[:4].hex() or 'empty'})")
    decoded = _decode(raw) if _plain_layout(_writer_schema(raw)) else None
    if decoded is None or "_FILE" not in decoded.column_names:
        return _from_records(raw, path)
    try:
        table = _normalise(decoded)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, KeyError):
        return _from_records(raw, path)
    if _suspect(decoded, table):
        return _from_records(raw, path)
    return table


def read_manifest_table(file_io: FileIO, manifest_dir: str, name: str,
                        columns: Sequence[str] | None = None) -> pa.Table:
    """One manifest file as a flat Arrow table, one row per entry (see the module doc)."""
    path = join(manifest_dir, name)
    try:
        raw = bytes(file_io.read_bytes(path))
    except NotFound as e:
        raise MissingMetadata(str(e)) from e
    table = manifest_table_from_bytes(raw, path)
    return table if columns is None else table.select(list(columns))


def iter_manifest_tables(file_io: FileIO, manifest_dir: str, metas: Sequence[ManifestFileMeta],
                         columns: Sequence[str] | None = None) -> Iterator[pa.Table]:
    """The manifests' tables in order, one at a time (decoded ahead only on object stores,
    where the wait is the store's, not the CPU's)."""
    def read(m: ManifestFileMeta) -> pa.Table:
        return read_manifest_table(file_io, manifest_dir, m.file_name, columns)

    if len(metas) <= 1 or file_io.is_local:
        for m in metas:
            yield read(m)
        return
    with closing(prefetch(read, metas, min(_PREFETCH, len(metas)), "paimon-manifests")) as tables:
        yield from tables


# ---------------------------------------------------------------------------------------
# Merging
# ---------------------------------------------------------------------------------------


def _group_ids(keys: pa.Table) -> Any:
    """An exact group id per row of ``keys`` (rows with equal identifiers share one)."""
    import numpy as np
    import polars as pl

    df = pl.from_arrow(keys)
    assert isinstance(df, pl.DataFrame)
    groups = (df.with_row_index("__row").group_by(list(keys.column_names)).agg(pl.col("__row"))
              .with_row_index("__gid").select("__gid", "__row").explode("__row"))
    gid = np.empty(keys.num_rows, dtype=np.int64)
    gid[groups["__row"].to_numpy()] = groups["__gid"].to_numpy()
    return gid, (int(gid.max()) + 1 if keys.num_rows else 0)


def merge_live(tables: Sequence[pa.Table] | pa.Table) -> pa.Table:
    """The live ADD rows once every DELETE cancelled its ADD, as ``merge_entries`` keeps them.

    Per identifier: the last DELETE cancels every ADD before it; of the ADDs after it, the
    last one is kept at the position of the first (a dict keeps a key where it was inserted).
    """
    import numpy as np

    table = tables if isinstance(tables, pa.Table) else (
        pa.concat_tables(tables) if tables else ENTRY_SCHEMA.empty_table())
    n = table.num_rows
    if n == 0:
        return table
    kind = table.column("_KIND").to_numpy()
    delete = kind == FileKind.DELETE
    if not delete.any() and _unique(table):
        return table
    gid, groups = _group_ids(table.select(list(IDENTIFIER)))
    idx = np.arange(n, dtype=np.int64)
    last_delete = np.full(groups, -1, dtype=np.int64)
    np.maximum.at(last_delete, gid[delete], idx[delete])
    after = ~delete & (idx > last_delete[gid])
    first = np.full(groups, n, dtype=np.int64)
    last = np.full(groups, -1, dtype=np.int64)
    np.minimum.at(first, gid[after], idx[after])
    np.maximum.at(last, gid[after], idx[after])
    live = last >= 0
    order = np.argsort(first[live], kind="stable")
    return table.take(pa.array(last[live][order]))


def _unique(table: pa.Table) -> bool:
    """Every file name appears once (then no identifier repeats: names are part of it)."""
    names = table.column("_FILE_NAME")
    return bool(pc.count_distinct(names).as_py() == len(names))


# ---------------------------------------------------------------------------------------
# Objects
# ---------------------------------------------------------------------------------------


def _stats(s: dict[str, Any] | None) -> SimpleStats:
    if s is None:
        return EMPTY_STATS
    return SimpleStats(s["_MIN_VALUES"], s["_MAX_VALUES"], s["_NULL_COUNTS"])


def _tuple(v: Any) -> tuple[Any, ...] | None:
    return None if v is None else tuple(v)


def entries_from_table(table: pa.Table) -> list[ManifestEntry]:
    """``ManifestEntry`` objects for the rows (what ``ManifestFile.read`` gives)."""
    out: list[ManifestEntry] = []
    for r in table.to_pylist():
        f = DataFileMeta(
            file_name=r["_FILE_NAME"], file_size=r["_FILE_SIZE"], row_count=r["_ROW_COUNT"],
            min_key=r["_MIN_KEY"], max_key=r["_MAX_KEY"], key_stats=_stats(r["_KEY_STATS"]),
            value_stats=_stats(r["_VALUE_STATS"]), min_sequence_number=r["_MIN_SEQUENCE_NUMBER"],
            max_sequence_number=r["_MAX_SEQUENCE_NUMBER"], schema_id=r["_SCHEMA_ID"], level=r["_LEVEL"],
            extra_files=tuple(r["_EXTRA_FILES"] or ()), creation_time=r["_CREATION_TIME"],
            delete_row_count=r["_DELETE_ROW_COUNT"], embedded_index=r["_EMBEDDED_FILE_INDEX"],
            file_source=r["_FILE_SOURCE"], value_stats_cols=_tuple(r["_VALUE_STATS_COLS"]),
            external_path=r["_EXTERNAL_PATH"], first_row_id=r["_FIRST_ROW_ID"], write_cols=_tuple(r["_WRITE_COLS"]),
            write_cols_sequences=_tuple(r["_WRITE_COLS_SEQUENCES"]),
        )
        out.append(ManifestEntry(FileKind(r["_KIND"]), r["_PARTITION"], r["_BUCKET"], r["_TOTAL_BUCKETS"], f))
    return out
