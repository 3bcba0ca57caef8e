"""``read --explain``: what each pruning step of a read plan removed, as rows."""

from __future__ import annotations

from ..schema.table_schema import TableSchema
from ..utils.rows import Rows
from .read_plan import Counts, ReadPlan
from .scan import is_postpone_table

EXPLAIN_COLUMNS = ["step", "partitions", "buckets", "files", "records", "note"]
# a terminal shows the counts; the notes (why an index pruned nothing) follow the table as lines
EXPLAIN_BRIEF = EXPLAIN_COLUMNS[:-1]


def explain_rows(plan: ReadPlan, schema: TableSchema, top_level_only: bool = False) -> Rows:
    """One row per step: total, the postpone bucket (postpone tables), partition, bucket and
    level pruning, stats, each file index kind, and what remains."""
    steps = [("total", plan.total)]
    if is_postpone_table(schema):
        steps.append(("skipped postpone bucket", plan.skipped_postponed))
    steps += [
        ("pruned by partition", plan.pruned_by_partition),
        ("pruned by bucket", plan.pruned_by_bucket),
        ("skipped level 0" if not top_level_only else "skipped below top level", plan.skipped_level0),
        ("pruned by stats", plan.pruned_by_stats),
    ]
    notes = {}
    for kind in ("bloom-filter", "bitmap", "bsi", "file index"):
        name = f"pruned by {kind} index" if kind != "file index" else "pruned by file indexes combined"
        steps.append((name, plan.pruned_by_index.get(kind, Counts())))
        notes[name] = plan.index_notes.get(kind)
    steps.append(("remaining", plan.remaining))
    rows = [{"step": name, "partitions": c.partitions, "buckets": c.buckets, "files": c.files,
             "records": c.records, "note": notes.get(name)} for name, c in steps]
    return Rows(EXPLAIN_COLUMNS, rows, EXPLAIN_BRIEF)
