"""Row tracking (``row-tracking.enabled``, Paimon 1.3+): the row ids and sequence numbers of rows.

Writers do not number rows; the commit does (Java's ``RowTrackingCommitUtils``):

* sequence numbers: a delta file whose ``_MIN_SEQUENCE_NUMBER`` is 0 (a new write) gets
  min = max = the new snapshot id; one whose ``_MAX_SEQUENCE_NUMBER`` is 0 keeps its min and
  gets max = the snapshot id; any other (a compaction output) keeps its range;
* row ids: walking the delta entries (grouped by partition unless
  ``row-tracking.partition-group-on-commit`` is false), each APPEND file without
  ``_FIRST_ROW_ID`` and without a physical ``_ROW_ID`` column gets ``_FIRST_ROW_ID`` = the
  running counter, which starts at the latest snapshot's ``nextRowId`` (0 when absent) and
  advances by the file's row count; ``.blob`` and vector-store files take sub-ranges of the
  preceding data file's range. The new snapshot's ``nextRowId`` is the counter at the end.

Readers expose the system columns ``_ROW_ID`` and ``_SEQUENCE_NUMBER``: a file's physical
column when it has one (row-tracking compaction stores both) and the value is not null, else
``_FIRST_ROW_ID`` + the row's physical position in the file (deleted rows count) and the
file's ``_MAX_SEQUENCE_NUMBER``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from ..errors import InvalidInput
from ..format.arrow_schema import ROW_ID, SEQUENCE_NUMBER, row_tracking_fields
from ..manifest.manifest import DataFileMeta, FileSource, ManifestEntry

if TYPE_CHECKING:
    import pyarrow as pa

    from ..data.types import DataField
    from ..refs.snapshot import Snapshot
    from ..schema.options import CoreOptions
    from ..schema.table_schema import TableSchema

ROW_TRACKING_ENABLED = "row-tracking.enabled"
DATA_EVOLUTION_ENABLED = "data-evolution.enabled"
SYSTEM_COLUMNS = (ROW_ID, SEQUENCE_NUMBER)
_BLOB_SUFFIX = ".blob"


def is_row_tracking(options: CoreOptions) -> bool:
    return options.get_bool(ROW_TRACKING_ENABLED)


def is_data_evolution(options: CoreOptions) -> bool:
    return options.get_bool(DATA_EVOLUTION_ENABLED)


def check_row_tracking_table(schema: TableSchema, options: CoreOptions, action: str) -> None:
    """Refuse a row-tracking or data-evolution table Java would not create (nothing for other
    tables): data evolution needs row tracking, row tracking an append table with bucket = -1."""
    if not is_row_tracking(options) and not is_data_evolution(options):
        return
    if not is_row_tracking(options):
        raise InvalidInput(f"{action}: data-evolution.enabled needs row-tracking.enabled (Java refuses this table)")
    if schema.primary_keys or schema.bucket != -1:
        raise InvalidInput(
            f"{action}: row-tracking.enabled needs an append table with bucket = -1 (Java refuses this table: "
            f"primary key {list(schema.primary_keys)}, bucket {schema.bucket})")


# ---------------------------------------------------------------------------------------
# Commit: sequence numbers and first row ids of the delta entries
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RowTrackingAssigned:
    """The delta entries with their row-tracking metadata, and the snapshot's ``nextRowId``."""

    entries: list[ManifestEntry]
    next_row_id: int


def next_row_id_start(latest: Snapshot | None) -> int:
    """The first row id a commit on ``latest`` hands out (Java treats a missing ``nextRowId`` as 0)."""
    if latest is None or latest.next_row_id is None:
        return 0
    return latest.next_row_id


def assign_row_tracking(
    snapshot_id: int, first_row_id_start: int, entries: Sequence[ManifestEntry], *, group_by_partition: bool = True
) -> RowTrackingAssigned:
    """Stamp sequence numbers with ``snapshot_id`` and hand out first row ids (module doc)."""
    stamped = assign_sequence_numbers(snapshot_id, entries)
    if group_by_partition:
        stamped = group_entries_by_partition(stamped)
    return assign_first_row_ids(first_row_id_start, stamped)


def assign_sequence_numbers(snapshot_id: int, entries: Sequence[ManifestEntry]) -> list[ManifestEntry]:
    out = []
    for e in entries:
        f = e.file
        if f.min_sequence_number == 0:
            f = replace(f, min_sequence_number=snapshot_id, max_sequence_number=snapshot_id)
        elif f.max_sequence_number == 0:
            f = replace(f, max_sequence_number=snapshot_id)
        out.append(e if f is e.file else replace(e, file=f))
    return out


def group_entries_by_partition(entries: Sequence[ManifestEntry]) -> list[ManifestEntry]:
    """Entries of one partition together, partitions in order of first appearance, each
    partition's entries in their order (Java groups into a HashMap: its partition order is
    unspecified; pypaimon keeps first appearance)."""
    groups: dict[bytes, list[ManifestEntry]] = {}
    for e in entries:
        groups.setdefault(e.partition, []).append(e)
    return [e for group in groups.values() for e in group]


def assign_first_row_ids(start: int, entries: Sequence[ManifestEntry]) -> RowTrackingAssigned:
    out: list[ManifestEntry] = []
    blob_default = vector_start = start
    blob_starts: dict[str, int] = {}
    for e in entries:
        f = e.file
        if f.file_source is None:
            raise InvalidInput(f"row tracking: data file {f.file_name} has no _FILE_SOURCE")
        if f.file_source != FileSource.APPEND or f.first_row_id is not None or has_physical_row_id(f):
            out.append(e)  # compaction outputs and files that already carry their ids
            continue
        if f.file_name.endswith(_BLOB_SUFFIX):
            field = f.write_cols[0] if f.write_cols else ""
            first = blob_starts.get(field, blob_default)
            if first >= start:
                raise InvalidInput(f"row tracking: blob file {f.file_name} does not follow a data file")
            blob_starts[field] = first + f.row_count
        elif is_vector_store_file(f.file_name):
            first = vector_start
            if first >= start:
                raise InvalidInput(f"row tracking: vector-store file {f.file_name} does not follow a data file")
            vector_start += f.row_count
        else:
            first = blob_default = start
            blob_starts.clear()
            start += f.row_count
        out.append(replace(e, file=replace(f, first_row_id=first)))
    return RowTrackingAssigned(out, start)


def is_vector_store_file(file_name: str) -> bool:
    """Java's ``VectorType.isVectorStoreFile``: ``data-<uuid>-<n>.vector.<format>``."""
    return ".vector." in file_name


def has_physical_row_id(f: DataFileMeta) -> bool:
    return f.write_cols is not None and ROW_ID in f.write_cols


# ---------------------------------------------------------------------------------------
# Read: the system columns of a file's rows
# ---------------------------------------------------------------------------------------


def readable_fields(schema: TableSchema) -> list[DataField]:
    """The columns a read of the table can select or filter on: the table's, then (row
    tracking or data evolution) ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` -- nullable, as Java
    reads them (SpecialFields.rowTypeWithRowTracking)."""
    fields = list(schema.fields)
    options = schema.core_options
    if is_row_tracking(options) or is_data_evolution(options):
        fields += [replace(f, type=f.type.copy(nullable=True)) for f in row_tracking_fields()]
    return fields


def check_system_columns_readable(schema: TableSchema, names: Sequence[str]) -> list[str]:
    """The system columns among ``names``; refused where this read cannot produce them."""
    wanted = [n for n in SYSTEM_COLUMNS if n in names]
    if wanted:
        check_row_tracking_table(schema, schema.core_options, "read")
    return wanted


def physical_system_fields(f: DataFileMeta) -> list[DataField]:
    """The row-tracking columns ``f`` stores physically (its ``_WRITE_COLS`` name them)."""
    if not f.write_cols:
        return []
    return [sf for sf in row_tracking_fields() if sf.name in f.write_cols]


def system_columns(f: DataFileMeta, batch: pa.Table, offset: int, names: Sequence[str]) -> dict[str, pa.Array]:
    """``names`` (of :data:`SYSTEM_COLUMNS`) for ``batch``: rows at physical positions
    ``offset..`` of ``f``, read before deletion vectors drop any; a physical column of the
    same name in ``batch`` wins where not null."""
    import pyarrow as pa
    import pyarrow.compute as pc

    n = batch.num_rows
    out: dict[str, pa.Array] = {}
    for name in names:
        derived = derived_system_column(f, name, offset, n)
        if name in batch.column_names:
            physical = batch.column(name).combine_chunks().cast(pa.int64())
            derived = physical if physical.null_count == 0 else pc.coalesce(physical, derived)
        out[name] = derived
    return out


def derived_system_column(f: DataFileMeta, name: str, offset: int, n: int) -> pa.Array:
    """``name`` for ``n`` rows at physical positions ``offset..`` of ``f`` from its metadata:
    ``_FIRST_ROW_ID`` + position (null without a first row id), or ``_MAX_SEQUENCE_NUMBER``."""
    import numpy as np
    import pyarrow as pa

    if name == ROW_ID:
        if f.first_row_id is None:
            return pa.nulls(n, pa.int64())
        return pa.array(np.arange(f.first_row_id + offset, f.first_row_id + offset + n, dtype=np.int64))
    if name == SEQUENCE_NUMBER:
        return pa.array(np.full(n, f.max_sequence_number, dtype=np.int64))
    raise InvalidInput(f"{name} is not a row-tracking system column")


def with_system_columns(t: pa.Table, system: Mapping[str, pa.Array]) -> pa.Table:
    """``t`` (rows of one batch) with the ``system`` columns appended; ``t`` may have no column."""
    import pyarrow as pa

    if not system:
        return t
    if t.num_columns == 0:
        return pa.table(dict(system))
    for name, col in system.items():
        t = t.append_column(name, col)
    return t


__all__ = [
    "DATA_EVOLUTION_ENABLED", "ROW_TRACKING_ENABLED", "SYSTEM_COLUMNS", "RowTrackingAssigned",
    "assign_first_row_ids", "assign_row_tracking", "assign_sequence_numbers", "check_row_tracking_table",
    "check_system_columns_readable", "derived_system_column", "group_entries_by_partition", "has_physical_row_id", "is_data_evolution",
    "is_row_tracking", "is_vector_store_file", "next_row_id_start", "physical_system_fields", "readable_fields",
    "system_columns", "with_system_columns",
]
