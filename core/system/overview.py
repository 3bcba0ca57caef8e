"""``inspect table`` (our one-screen overview of a table) and ``inspect expiry``."""

from __future__ import annotations

from typing import Any

from ..data.java_format import local_datetime_from_millis
from ..manifest.manifest import DataFileMeta, ManifestEntry
from ..operation.data_evolution import logical_row_count
from ..operation.expire import expiry_report, snapshot_health
from ..operation.row_tracking import is_data_evolution
from ..operation.scan import FileStoreScan, is_postpone_table, split_postponed
from ..refs.snapshot import Snapshot
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import Rows
from .file_indexes import file_index_warnings

Props = list[tuple[str, Any]]


def table_overview(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """One screen about a table: schema, keys, options, snapshot range, live files, levels."""
    snap = table.resolve_snapshot(at)
    entries, postponed = split_postponed(table.schema, FileStoreScan(table).plan(snap))
    props = _schema_props(table) + _snapshot_props(table, snap) + _file_props(table, entries)
    if is_postpone_table(table.schema):  # written, not yet readable: the live_* counts leave them out
        props += [
            ("postponed_files", len(postponed)),
            ("postponed_rows", sum(e.file.row_count for e in postponed)),
            ("postponed_bytes", sum(e.file.file_size for e in postponed)),
            ("postponed_partitions", len({e.partition for e in postponed})),
        ]
    props += [
        ("tags", len(table.tag_manager.tags())),
        ("branches", len(table.branch_manager.branches())),
    ]
    props += [("warning", problem) for problem in snapshot_health(table)]
    props += [("warning", problem) for problem in file_index_warnings(table)]
    return Rows(["property", "value"], [{"property": k, "value": v} for k, v in props])


def _schema_props(table: FileStoreTable) -> Props:
    s = table.schema
    return [
        ("table", str(table.identifier) + (f" (branch {table.branch})" if table.branch else "")),
        ("path", table.path),
        ("schema_id", s.id),
        ("columns", ", ".join(f"{f.name} {f.type.as_sql()}" for f in s.fields)),
        ("primary_keys", ", ".join(s.primary_keys) or "(none: append table)"),
        ("partition_keys", ", ".join(s.partition_keys) or "(unpartitioned)"),
        ("bucket", s.options.get("bucket", "-1" if not s.primary_keys else "-1")),
        ("comment", s.comment),
        ("options", ", ".join(f"{k}={v}" for k, v in s.options.items())),
    ]


def _snapshot_props(table: FileStoreTable, snap: Snapshot | None) -> Props:
    sm = table.snapshot_manager
    earliest, latest = sm.earliest_snapshot_id(), sm.latest_snapshot_id()
    return [
        ("snapshots", f"{earliest}..{latest}" if latest is not None else "(none)"),
        ("snapshot", snap.id if snap else None),
        ("snapshot_time", local_datetime_from_millis(snap.time_millis) if snap else None),
        ("commit_kind", snap.commit_kind if snap else None),
        ("total_record_count", snap.total_record_count if snap else 0),
    ]


def _file_props(table: FileStoreTable, entries: list[ManifestEntry]) -> Props:
    target = table.options.target_file_size(bool(table.schema.primary_keys))
    levels: dict[int, int] = {}
    buckets_seen = set()
    for e in entries:
        levels[e.file.level] = levels.get(e.file.level, 0) + 1
        buckets_seen.add((e.partition, e.bucket))
    small = sum(1 for e in entries if e.file.file_size < target)
    return [
        ("live_files", len(entries)),
        ("live_bytes", sum(e.file.file_size for e in entries)),
        ("live_rows", _live_rows(table, entries)),
        ("partitions", len({e.partition for e in entries})),
        ("buckets", len(buckets_seen)),
        ("levels", ", ".join(f"L{lv}: {n}" for lv, n in sorted(levels.items())) or "(no files)"),
        ("small_files", f"{small} below target-file-size ({target} bytes)"),
    ]


def _live_rows(table: FileStoreTable, entries: list[ManifestEntry]) -> int:
    """Rows the files hold; a data-evolution table's partial-column files repeat the rows of
    their range, so each range counts once (Java's ``DataSplit`` row count)."""
    if not is_data_evolution(table.options):
        return sum(e.file.row_count for e in entries)
    by_partition: dict[bytes, list[DataFileMeta]] = {}
    for e in entries:
        by_partition.setdefault(e.partition, []).append(e.file)
    return sum(logical_row_count(files) for files in by_partition.values())


def expiry(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """``inspect expiry``: per snapshot, whether the next ``expire`` removes it and what it
    frees, or what holds it (retain-min, time-retained, a consumer, a tag, a branch)."""
    return expiry_report(table)
