"""``read --explain``: what each pruning step of a read plan removed, as rows."""

from __future__ import annotations

from ..schema.table_schema import TableSchema
from ..utils.rows import Rows
from .read_plan import Counts, ReadPlan
from .scan import is_postpone_table
from .split_read import RowGroupCounts

EXPLAIN_COLUMNS = ["step", "partitions", "buckets", "files", "records", "note"]
# a terminal shows the counts; the notes (why an index pruned nothing) follow the table as lines
EXPLAIN_BRIEF = EXPLAIN_COLUMNS[:-1]


def explain_rows(plan: ReadPlan, schema: TableSchema, top_level_only: bool = False,
                 row_groups: RowGroupCounts | None = None, streamed: tuple[Counts, str] | None = None) -> Rows:
    """One row per step: total, the postpone bucket (postpone tables), partition, bucket and
    level pruning, stats, each file index kind, with ``row_groups`` the Parquet row groups of
    the remaining files the read skips by their statistics (files: those skipped whole,
    records: the rows skipped; the note counts row groups) and of the rest those whose
    predicate columns, decoded first, match no row, and what remains to open; with
    ``streamed`` (primary-key tables: the remaining splits merged a key range at a time, and
    why) the step ``merged streaming`` after it."""
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
    if row_groups is not None:
        name = "pruned by row-group stats"
        steps.append((name, Counts(files=row_groups.skipped_files, records=row_groups.skipped_records)))
        notes[name] = (f"{row_groups.skipped_row_groups} of {row_groups.row_groups} row group(s) in "
                       f"{row_groups.files} Parquet file(s) of the remaining files skipped at read")
        if row_groups.probe_columns:
            name = "skipped by predicate columns"
            steps.append((name, Counts(files=row_groups.probe_skipped_files,
                                       records=row_groups.probe_skipped_records)))
            notes[name] = (f"{row_groups.probe_skipped_row_groups} of {row_groups.probed_row_groups} row group(s) "
                           f"kept by their statistics match no row in {', '.join(row_groups.probe_columns)} "
                           "(decoded first): their other columns are not decoded")
    steps.append(("remaining", plan.remaining))
    if streamed is not None:
        steps.append(("merged streaming", streamed[0]))
        notes["merged streaming"] = streamed[1]
    rows = [{"step": name, "partitions": c.partitions, "buckets": c.buckets, "files": c.files,
             "records": c.records, "note": notes.get(name)} for name, c in steps]
    return Rows(EXPLAIN_COLUMNS, rows, EXPLAIN_BRIEF)
