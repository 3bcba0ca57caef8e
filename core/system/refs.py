"""``$tags``, ``$branches`` and ``$consumers``: the references that keep snapshots alive."""

from __future__ import annotations

import datetime as _dt

from ..data.java_format import local_datetime_from_millis
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import JavaText, Rows


def tags(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    cols = ["tag_name", "snapshot_id", "schema_id", "commit_time", "record_count", "create_time", "time_retained"]
    rows = []
    for t in table.tag_manager.tags():
        rows.append({
            "tag_name": t.name,
            "snapshot_id": t.snapshot.id,
            "schema_id": t.snapshot.schema_id,
            "commit_time": local_datetime_from_millis(t.snapshot.time_millis),
            "record_count": t.snapshot.total_record_count,
            "create_time": t.create_time,
            "time_retained": None if t.time_retained_seconds is None else JavaText(
                t.time_retained_java or "", _dt.timedelta(seconds=t.time_retained_seconds)),
        })
    return Rows(cols, rows)


def branches(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    """Java 0.9's columns; 1.x dropped ``created_from_*`` but keeps the other two."""
    bm = table.branch_manager
    rows = []
    for name, millis in bm.branches():
        tag, snap = bm.branch_origin(name)
        rows.append({
            "branch_name": name,
            "created_from_tag": tag,
            "created_from_snapshot": snap,
            "create_time": local_datetime_from_millis(millis) if millis else None,
        })
    return Rows(["branch_name", "created_from_tag", "created_from_snapshot", "create_time"], rows)


def consumers(table: FileStoreTable, at: TimeTravel | None = None) -> Rows:
    rows = [{"consumer_id": k, "next_snapshot_id": v} for k, v in table.consumer_manager.consumers().items()]
    return Rows(["consumer_id", "next_snapshot_id"], rows)
