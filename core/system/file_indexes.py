"""``inspect file-indexes`` rows and the file-index warnings of ``inspect table``."""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

from ..compact.rewrite_file_index import payload_matches
from ..fileindex.format import FileIndexContainer, index_file_names
from ..io import paths
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.manifest import ManifestEntry
from ..operation.scan import FileStoreScan
from ..schema.file_index_options import BITMAP, BLOOM_FILTER, configured_indexes
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import Rows

# a live file with its decoder, its index container (None: no index), where the container is
# stored (none / EMBEDDED / FILE) and the path of its ``.index`` file
IndexedFile = tuple[ManifestEntry, EntryDecoder, "FileIndexContainer | None", str, "str | None"]

COLUMNS = ["partition", "bucket", "file_path", "file_size_in_bytes", "record_count", "schema_id",
           "column_name", "current_column", "index_type", "storage_type", "index_file_path",
           "index_size_in_bytes", "index_container_size_in_bytes", "is_empty", "distinct_values",
           "bloom_hash_functions"]


def _containers(table: FileStoreTable, at: TimeTravel | None) -> Iterator[IndexedFile]:
    """Every live file a batch read sees, with its file index container if it has one."""
    _, entries = FileStoreScan(table).batch_plan_at(at)
    dec = EntryDecoder(table)
    for e in entries:
        m = e.file
        names = index_file_names(m.extra_files)
        if m.embedded_index is None and not names:
            yield e, dec, None, "none", None
            continue
        bucket_dir = paths.data_file_dir(table.data_root, dec.partition_dir(e.partition), e.bucket, m.external_path)
        if m.embedded_index is not None:
            yield e, dec, FileIndexContainer(m.embedded_index, m.file_name), "EMBEDDED", None
        else:
            p = f"{bucket_dir}/{names[0]}"
            yield e, dec, FileIndexContainer(table.file_io.read_bytes(p), p), "FILE", p


def _current_name(table: FileStoreTable, schema_id: int, file_column: str) -> str | None:
    """The table's current name of a file-schema column (by field id); None if dropped."""
    try:
        fs = table.schema_manager.schema(schema_id) if schema_id != table.schema.id else table.schema
    except Exception:  # noqa: BLE001 - a missing old schema: cannot map
        return None
    col = file_column.split("[", 1)[0]
    ff = next((f for f in fs.fields if f.name == col), None)
    if ff is None:
        return None
    cur = next((f for f in table.schema.fields if f.id == ff.id), None)
    if cur is None:
        return None
    return cur.name + file_column[len(col):]


def file_index_rows(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Per live file and indexed column: index type, sizes, where stored, distinct values."""
    rows: list[dict[str, Any]] = []
    names_cache: dict[tuple[int, str], str | None] = {}
    for e, dec, c, storage, index_path in _containers(table, at):
        if c is None:
            continue
        m = e.file
        bucket_dir = paths.data_file_dir(table.data_root, dec.partition_dir(e.partition), e.bucket, m.external_path)
        for ent in c.entries:
            key = (m.schema_id, ent.column)
            if key not in names_cache:
                names_cache[key] = _current_name(table, m.schema_id, ent.column)
            distinct = hashes = None
            payload = c.payload(ent)
            if payload is not None and ent.index_type == BITMAP:
                distinct = _bitmap_distinct(payload)
            elif payload is not None and ent.index_type == BLOOM_FILTER and len(payload) >= 4:
                hashes = int.from_bytes(payload[:4], "big", signed=True)
            rows.append({
                "partition": dec.partition_string(e.partition),
                "bucket": e.bucket,
                "file_path": f"{bucket_dir}/{m.file_name}",
                "file_size_in_bytes": m.file_size,
                "record_count": m.row_count,
                "schema_id": m.schema_id,
                "column_name": ent.column,
                "current_column": names_cache[key],
                "index_type": ent.index_type,
                "storage_type": storage,
                "index_file_path": index_path,
                "index_size_in_bytes": ent.length,
                "index_container_size_in_bytes": len(c.data),
                "is_empty": ent.empty,
                "distinct_values": distinct,
                "bloom_hash_functions": hashes,
            })
    return Rows(COLUMNS, rows)


def _bitmap_distinct(payload: bytes) -> int | None:
    try:
        return struct.unpack_from(">i", payload, 5)[0]  # version byte, rowCount, nonNullBitmapNumber
    except struct.error:
        return None


def file_index_warnings(table: FileStoreTable) -> list[str]:
    """Problems ``inspect table`` reports: configured indexes some files lack, stale indexes
    (options changed), and indexes on columns that no longer exist or are no longer configured."""
    try:
        specs = [s for s in configured_indexes(table.schema.options) if "[" not in s.column]
    except Exception as exc:  # noqa: BLE001 - bad options are reported, not raised, here
        return [f"file-index options are invalid: {exc}"]
    current = {f.name: f for f in table.schema.fields}
    missing: dict[tuple[str, str], int] = {}
    stale: dict[tuple[str, str], int] = {}
    dropped: dict[tuple[str, str], int] = {}
    unconfigured: dict[tuple[str, str], int] = {}
    wanted = {(s.column, s.index_type): s for s in specs}
    schema_cache: dict[int, Any] = {}
    try:
        for e, _, c, _, _ in _containers(table, None):
            m = e.file
            fs = schema_cache.get(m.schema_id)
            if fs is None:
                fs = schema_cache[m.schema_id] = (table.schema_manager.schema(m.schema_id)
                                                  if m.schema_id != table.schema.id else table.schema)
            file_ids = {f.id for f in fs.fields}
            have: dict[tuple[str, str], bytes | None] = {}
            if c is not None:
                for ent in c.entries:
                    cur = _current_name(table, m.schema_id, ent.column)
                    if cur is None:
                        dropped[(ent.column, ent.index_type)] = dropped.get((ent.column, ent.index_type), 0) + 1
                        continue
                    have[(cur, ent.index_type)] = c.payload(ent)
            for key, spec in wanted.items():
                f = current.get(spec.column)
                if f is None or f.id not in file_ids:
                    continue  # the file predates the column: nothing to index
                if key not in have:
                    missing[key] = missing.get(key, 0) + 1
                elif not payload_matches(spec, have[key]):
                    stale[key] = stale.get(key, 0) + 1
            for key in have:
                if key not in wanted:
                    unconfigured[key] = unconfigured.get(key, 0) + 1
    except Exception as exc:  # noqa: BLE001
        return [f"file indexes could not be checked: {exc}"]
    out = []
    hint = "; run rewrite-file-index"
    for (col, typ), n in sorted(missing.items()):
        out.append(f"{n} live file(s) lack the configured {typ} index on column {col!r}{hint}")
    for (col, typ), n in sorted(stale.items()):
        out.append(f"{n} live file(s) have a {typ} index on {col!r} built with other options{hint}")
    for (col, typ), n in sorted(dropped.items()):
        out.append(f"{n} live file(s) have a {typ} index on column {col!r}, which no longer exists{hint}")
    for (col, typ), n in sorted(unconfigured.items()):
        out.append(f"{n} live file(s) have a {typ} index on {col!r} that the table no longer configures{hint}")
    return out
