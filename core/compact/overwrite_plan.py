"""``write --overwrite --dry-run``: what an overwrite would replace, with nothing written.

The input is read and checked exactly as a real write reads it (every cast, NOT NULL, row
kinds), its rows are routed to partitions as the writer routes them, and the commit's own
overwrite selection (:meth:`FileStoreCommit.overwrite_deletes`) names the live data and index
files that would go. No data file is written and nothing is committed, so the new files'
names do not exist yet: the plan lists the rows per partition instead.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..format.input import InputChunk, read_inputs
from ..index.index_paths import index_file_path
from ..io import paths
from ..operation.commit import FileStoreCommit
from ..operation.partition_spec import no_match_message, spec_spelling
from ..utils.rows import Rows

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

PLAN_COLUMNS = ["action", "path", "partition", "bucket", "rows", "bytes"]


@dataclass
class OverwritePlan:
    table_path: str
    snapshot_id: int | None  # the snapshot the files would be deleted from
    input_rows: int = 0
    written: dict[str, int] = field(default_factory=dict)  # partition directory -> input rows
    deleted: list[dict[str, Any]] = field(default_factory=list)  # rows of PLAN_COLUMNS
    notes: list[str] = field(default_factory=list)  # e.g. a static partition that does not exist yet

    def rows(self) -> Rows:
        adds = [{"action": "write", "path": None, "partition": p or "(none)", "bucket": None, "rows": n,
                 "bytes": None} for p, n in self.written.items()]
        return Rows(PLAN_COLUMNS, self.deleted + adds)

    def describe(self) -> str:
        deleted = [d for d in self.deleted if d["rows"] is not None]
        return (f"would write {self.input_rows} rows into {len(self.written)} partition(s) and delete "
                f"{len(deleted)} data file(s) ({sum(d['rows'] for d in deleted)} rows, "
                f"{sum(d['bytes'] for d in self.deleted)} bytes) and {len(self.deleted) - len(deleted)} index "
                f"file(s) of snapshot {self.snapshot_id}; nothing written")


def plan_overwrite(tw: Any, table: FileStoreTable, inputs: list[Any], fmt: str | None, row_kind_column: str | None,
                   spec: Mapping[str, Any], storage_options: dict[str, Any] | None, stdin: Any) -> OverwritePlan:
    """Read and route every input row through ``tw`` (an overwriting TableWrite that writes
    nothing here), then select what the commit would delete."""
    chunks = read_inputs(inputs, tw.schema, fmt, row_kind_column, False, storage_options, stdin, dict(spec))
    touched: dict[bytes, str] = {}
    written: dict[str, int] = {}
    total = 0
    with contextlib.closing(cast(Generator[InputChunk, None, None], chunks)):
        for chunk in chunks:
            data = chunk.data.select(tw.schema.field_names)
            total += data.num_rows
            for partition, part_dir, rows in tw.split_partitions(data):
                touched.setdefault(partition, f"{chunk.source} (rows of {part_dir or 'the table'})")
                written[part_dir] = written.get(part_dir, 0) + (data.num_rows if rows is None else len(rows))
    latest, deletes, index_deletes = FileStoreCommit(table).overwrite_deletes(
        spec, touched, tw.options.get_bool("dynamic-partition-overwrite", True) and not spec)
    plan = OverwritePlan(table.path, None if latest is None else latest.id, total, written)
    if spec and not deletes:
        plan.notes.append(no_match_message(spec_spelling(spec), table, ": the overwrite would add it and replace "
                                           "nothing"))
    for e in deletes:
        part = paths.partition_dir_of(table.schema, e.partition)
        path = paths.data_file_path(table.data_root, part, e.bucket, e.file.file_name, e.file.external_path)
        plan.deleted.append({"action": "delete", "path": paths.table_relative(path, table.path),
                             "partition": part or "(none)", "bucket": e.bucket, "rows": e.file.row_count,
                             "bytes": e.file.file_size})
    for ie in index_deletes:
        path = index_file_path(table, ie.partition, ie.bucket, ie.index_file)
        plan.deleted.append({"action": "delete", "path": paths.table_relative(path, table.path),
                             "partition": paths.partition_dir_of(table.schema, ie.partition) or "(none)",
                             "bucket": ie.bucket, "rows": None, "bytes": ie.index_file.file_size})
    return plan
