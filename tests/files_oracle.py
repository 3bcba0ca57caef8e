"""The oracle for ``inspect files`` / ``partitions`` / ``buckets``: the object path as it
computed them before the columnar, streamed path; :func:`assert_same_files` checks the new
path against it (values, Java texts, typed values and order)."""

from __future__ import annotations

from typing import Any

from paimon_cli.core.data.java_format import java_map_string, utc_wall_clock_from_millis
from paimon_cli.core.io import paths
from paimon_cli.core.manifest.entry_decoder import EntryDecoder
from paimon_cli.core.manifest.manifest import FileKind
from paimon_cli.core.operation.scan import FileStoreScan, split_postponed
from paimon_cli.core.system.files import buckets, partitions
from paimon_cli.core.system.files_stream import FILES_COLUMNS, files, files_stream
from paimon_cli.core.table.file_store_table import FileStoreTable, TimeTravel
from paimon_cli.core.utils.rows import JavaText, Rows


def reference_files(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``$files`` as the object path computed it before the columnar path (the oracle)."""
    _, entries = FileStoreScan(table).batch_plan_at(at)
    dec = EntryDecoder(table)
    types_by_name = {f.name: f.type for f in table.schema.fields}
    rows = []
    for e in entries:
        m = e.file
        nc, lo, hi = dec.value_stats(m)
        path = paths.data_file_path(table.data_root, dec.partition_dir(e.partition), e.bucket, m.file_name,
                                    m.external_path)
        rows.append({
            "partition": dec.partition_string(e.partition), "bucket": e.bucket, "file_path": path,
            "file_format": m.file_name.rsplit(".", 1)[-1] if "." in m.file_name else "",
            "schema_id": m.schema_id, "level": m.level, "record_count": m.row_count,
            "file_size_in_bytes": m.file_size,
            "min_key": dec.key_string(m.min_key, m.schema_id), "max_key": dec.key_string(m.max_key, m.schema_id),
            "null_value_counts": JavaText(java_map_string(nc), dict(nc)),
            "min_value_stats": JavaText(java_map_string(lo, types_by_name), dict(lo)),
            "max_value_stats": JavaText(java_map_string(hi, types_by_name), dict(hi)),
            "min_sequence_number": m.min_sequence_number, "max_sequence_number": m.max_sequence_number,
            "creation_time": utc_wall_clock_from_millis(m.creation_time) if m.creation_time is not None else None,
            "deleteRowCount": m.delete_row_count,
            "file_source": {0: "APPEND", 1: "COMPACT"}.get(m.file_source) if m.file_source is not None else None,
            "first_row_id": m.first_row_id,
            "write_cols": list(m.write_cols) if m.write_cols is not None else None,
        })
    return Rows(FILES_COLUMNS, rows)


def reference_groups(table: FileStoreTable, at: TimeTravel | None, by_bucket: bool) -> list[dict[str, Any]]:
    """``$partitions`` / ``$buckets`` as the object path computed them (the oracle)."""
    snap = table.resolve_snapshot(at)
    scan = FileStoreScan(table)
    entries = scan.read_entries(scan.data_manifests(snap)) if snap is not None else []
    if not by_bucket:
        entries = split_postponed(table.schema, entries)[0]
    acc: dict[Any, list[int]] = {}
    for e in entries:
        sign = -1 if e.kind == FileKind.DELETE else 1
        a = acc.setdefault((e.partition, e.bucket) if by_bucket else e.partition, [0, 0, 0, -(2**63)])
        a[0] += sign * e.file.row_count
        a[1] += sign * e.file.file_size
        a[2] += sign
        if e.file.creation_time is not None:
            a[3] = max(a[3], e.file.creation_time)
    dec = EntryDecoder(table)
    rows = []
    for key, (rc, size, count, last) in acc.items():
        if count > 0:
            part, bucket = key if by_bucket else (key, None)
            rows.append({"partition": dec.partition_string(part), **({"bucket": bucket} if by_bucket else {}),
                         "record_count": rc, "file_size_in_bytes": size, "file_count": count,
                         "last_update_time": utc_wall_clock_from_millis(last) if last > -(2**63) else None})
    rows.sort(key=lambda r: (r["partition"], r.get("bucket", 0)))
    return rows


def _typed(v: Any) -> Any:
    return (type(v).__name__, str(v), v.typed) if isinstance(v, JavaText) else (type(v).__name__, v)


def assert_same_files(table: FileStoreTable, at: TimeTravel | None = None) -> list[dict[str, Any]]:
    """New == oracle: columns, order, values, Java texts and typed values; also chunk by chunk
    with a column subset (what ``--columns`` computes)."""
    old, new = reference_files(table, at), files(table, at)
    assert new.columns == old.columns
    assert [[_typed(r[c]) for c in old.columns] for r in new.rows] == \
        [[_typed(r[c]) for c in old.columns] for r in old.rows]
    some = ["file_path", "level", "max_key", "partition", "creation_time"]
    chunked = [r for chunk in files_stream(table, at).chunks(some, False) for r in chunk]
    assert chunked == [{c: r[c] for c in some} for r in old.rows]
    typed = [r for chunk in files_stream(table, at).chunks(list(FILES_COLUMNS), True) for r in chunk]
    assert typed == [{c: v.typed if isinstance(v, JavaText) else v for c, v in r.items()} for r in old.rows]
    assert not any(isinstance(v, JavaText) for r in typed for v in r.values())
    for by_bucket, fn in ((False, partitions), (True, buckets)):
        new_groups = fn(table, at)
        assert [[_typed(r[c]) for c in new_groups.columns] for r in new_groups.rows] == \
            [[_typed(r[c]) for c in new_groups.columns] for r in reference_groups(table, at, by_bucket)]
    return old.rows
