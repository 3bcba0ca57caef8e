"""What a schema change does, as rows: the listing of ``alter --dry-run`` and of its prompt."""

from __future__ import annotations

from ..utils.rows import Rows
from .table_schema import TableSchema

DIFF_COLUMNS = ["change", "name", "before", "after"]


def schema_diff(old: TableSchema, new: TableSchema) -> Rows:
    """Columns matched by field id (a rename keeps its id), then options, then the comment."""
    rows: list[dict[str, object]] = []
    before = {f.id: f for f in old.fields}
    after = {f.id: f for f in new.fields}
    for fid, f in before.items():
        g = after.get(fid)
        if g is None:
            rows.append({"change": "drop column", "name": f.name, "before": f.as_sql(), "after": None})
            continue
        if g.name != f.name:
            rows.append({"change": "rename column", "name": f.name, "before": f.name, "after": g.name})
        if g.as_sql().split(" ", 1)[1:] != f.as_sql().split(" ", 1)[1:]:
            rows.append({"change": "alter column", "name": g.name, "before": f.as_sql(), "after": g.as_sql()})
    for fid, g in after.items():
        if fid not in before:
            rows.append({"change": "add column", "name": g.name, "before": None, "after": g.as_sql()})
    for key in [*old.options, *(k for k in new.options if k not in old.options)]:
        was, now = old.options.get(key), new.options.get(key)
        if was != now:
            change = "unset option" if now is None else "set option"
            rows.append({"change": change, "name": key, "before": was, "after": now})
    if old.comment != new.comment:
        rows.append({"change": "comment", "name": None, "before": old.comment, "after": new.comment})
    return Rows(DIFF_COLUMNS, rows)
