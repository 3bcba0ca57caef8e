"""Materializing the deletion vectors of a data-evolution table (Java's
``materialize_deletion_vectors`` procedure, ``DataEvolutionDeletionVectorMaterializeCoordinator``).

A data-evolution table with ``deletion-vectors.enabled`` deletes rows by row id as deletion
vectors keyed by each range's anchor file. Materializing takes up to :data:`MAX_VECTORS`
vectors in partition order, widens each anchor to every file whose row-id range overlaps it
(transitively, until no new range joins), reads those ranges merged with the vectors applied
and writes the surviving rows as new APPEND files without ``_FIRST_ROW_ID``: the commit hands
them new row ids from the snapshot's ``nextRowId``. The replaced files and the index files
holding their vectors are deleted (vectors of other files move to one new index file), and
global indexes of a rewritten partition or over a rewritten row range are dropped (their row
ids no longer exist). A range or deletion-vector index that another commit changed since
planning fails the commit (exit 5). Run it again until it changes nothing.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa

from ..errors import CommitConflict, InvalidInput, NotYetSupported
from ..format.arrow_schema import SEQUENCE_NUMBER
from ..index.deletion_vectors import DeletionVector
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.index_manifest import DELETION_VECTORS_INDEX, IndexFileMeta
from ..manifest.manifest import DataFileMeta, FileSource
from ..mergetree.blob_file_writer import BlobRollingFileWriter
from ..mergetree.commit_message import CommitMessage
from ..mergetree.compact_unit import DATA_EVOLUTION, CompactUnit
from ..mergetree.file_writer import APPEND as APPEND_FILES
from ..mergetree.file_writer import RollingFileWriter
from ..operation.blob_read import is_blob_file
from ..operation.commit import FileStoreCommit
from ..operation.data_evolution import check_blob_writable, row_range_groups
from ..operation.data_evolution_read import DataEvolutionSplitRead, anchor_file
from ..operation.partition_spec import PartitionSelection, parse_partition_specs, partition_filter, selected_entries
from ..operation.read_plan import Split
from ..operation.row_tracking import is_data_evolution, is_row_tracking, is_vector_store_file
from ..operation.scan import FileStoreScan
from ..refs.snapshot import Snapshot
from ..table.file_store_table import FileStoreTable
from ..utils.interrupt import discard
from .append import bucket_dv_vectors, rewrite_unaware_dv_index
from .data_evolution import ranges_unchanged

MAX_VECTORS = 100_000  # Java's per-invocation bound on deletion vectors
PLAN_COLUMNS = ["partition", "bucket", "first_row_id", "last_row_id", "files", "deleted_rows", "rows_kept"]
RESULT_COLUMNS = ["snapshot_id", "ranges", "files_rewritten", "files_written", "rows_deleted", "rows_kept",
                  "global_indexes_dropped"]


@dataclass(frozen=True)
class RangeGroup:
    """One closed set of overlapping row-id ranges holding at least one deletion vector."""

    partition: bytes
    partition_text: str
    bucket: int
    total_buckets: int
    files: tuple[DataFileMeta, ...]
    deleted_rows: int

    @property
    def first_row_id(self) -> int:
        return min(f.first_row_id or 0 for f in self.files)

    @property
    def last_row_id(self) -> int:
        return max((f.first_row_id or 0) + f.row_count - 1 for f in self.files)

    @property
    def rows(self) -> int:
        return self.last_row_id - self.first_row_id + 1

    def as_row(self) -> dict[str, object]:
        return dict(zip(PLAN_COLUMNS, [self.partition_text, self.bucket, self.first_row_id, self.last_row_id,
                                       " ".join(f.file_name for f in self.files), self.deleted_rows,
                                       self.rows - self.deleted_rows], strict=True))


@dataclass
class MaterializeResult:
    groups: list[RangeGroup]
    dry_run: bool
    snapshot_id: int | None = None
    files_written: int = 0
    global_indexes_dropped: int = 0
    seconds: float = 0.0
    left_over: int = 0  # deletion vectors past the bound, for the next run
    written: list[str] = field(default_factory=list)

    def as_row(self) -> dict[str, object]:
        return dict(zip(RESULT_COLUMNS, [
            self.snapshot_id, len(self.groups), sum(len(g.files) for g in self.groups), self.files_written,
            sum(g.deleted_rows for g in self.groups), sum(g.rows - g.deleted_rows for g in self.groups),
            self.global_indexes_dropped], strict=True))


def check_materializable(table: FileStoreTable) -> None:
    """Java runs the procedure only on data-evolution tables with deletion vectors."""
    opts = table.options
    if not (is_data_evolution(opts) and is_row_tracking(opts)):
        raise InvalidInput(f"materialize-deletion-vectors: {table.identifier} is not a data-evolution table "
                           "(data-evolution.enabled and row-tracking.enabled)")
    if not opts.deletion_vectors_enabled:
        raise InvalidInput(f"materialize-deletion-vectors: {table.identifier} does not have deletion vectors "
                           "enabled (deletion-vectors.enabled)")
    check_blob_writable(table.schema, "materialize-deletion-vectors")  # the BLOB layouts the rewrite writes


def plan_materialize(
    table: FileStoreTable, snapshot: Snapshot | None, selection: PartitionSelection | None = None,
    max_vectors: int = MAX_VECTORS,
) -> tuple[list[RangeGroup], dict[tuple[bytes, int], tuple[IndexFileMeta, ...]], int]:
    """The range groups of the first ``max_vectors`` deletion vectors (partitions in order;
    a group that reaches the bound is taken whole),
    the live DV index files per (partition, bucket), and how many vectors were left over."""
    if snapshot is None:
        selected_entries(table, snapshot, selection)
        return [], {}, 0
    scan = FileStoreScan(table)
    index: dict[tuple[bytes, int], list[IndexFileMeta]] = {}
    for ie in scan.index_entries(snapshot):
        if ie.index_file.index_type == DELETION_VECTORS_INDEX:
            index.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    files: dict[tuple[bytes, int, int], list[DataFileMeta]] = {}
    for e in selected_entries(table, snapshot, selection):  # a selection matching nothing: exit 3
        files.setdefault((e.partition, e.bucket, e.total_buckets), []).append(e.file)
    dec = EntryDecoder(table)
    groups: list[RangeGroup] = []
    taken = left = 0
    for (partition, bucket, total), live in sorted(files.items(), key=lambda kv: (kv[0][0], kv[0][1])):
        vectors = {m.data_file_name: m.cardinality for f in index.get((partition, bucket), ())
                   for m in f.dv_ranges or ()}
        if not vectors:
            continue
        for g in row_range_groups(live):  # overlapping ranges, closed transitively
            anchors = [f for f in g if f.file_name in vectors]
            if not anchors:
                continue
            on_blobs = [f.file_name for f in anchors if is_blob_file(f)]
            if on_blobs:  # readers apply a range's vector by its normal anchor file: never these
                raise InvalidInput(f"materialize-deletion-vectors: deletion vector(s) keyed by .blob file(s) "
                                   f"{', '.join(on_blobs)}; a vector belongs to a normal data file (Java refuses too)")
            if taken >= max_vectors:  # a soft bound: a component is never split, so it may pass it
                left += len(anchors)
                continue
            vector_files = [f.file_name for f in g if is_vector_store_file(f.file_name)]
            if vector_files:
                raise NotYetSupported(f"materialize-deletion-vectors: vector-store file(s) {', '.join(vector_files)} "
                                      "are not supported")
            taken += len(anchors)
            deleted = sum(int(vectors[f.file_name] or 0) for f in anchors)
            groups.append(RangeGroup(partition, str(dec.partition_string(partition)), bucket, total, tuple(g), deleted))
    return groups, {k: tuple(v) for k, v in index.items()}, left


def materialize_deletion_vectors(
    table: FileStoreTable,
    *,
    partitions: Sequence[str] | None = None,
    where: str | None = None,
    dry_run: bool = False,
    max_vectors: int = MAX_VECTORS,
) -> MaterializeResult:
    """One bounded run (module doc); ``dry_run`` plans only."""
    started = time.monotonic()
    if partitions and where:
        raise InvalidInput("materialize-deletion-vectors: give --partition or --where, not both")
    check_materializable(table)
    specs = parse_partition_specs(partitions, table.schema) if partitions else None
    keep = partition_filter(table.schema, specs, where, command="materialize-deletion-vectors")
    base = table.snapshot_manager.latest_snapshot()
    groups, index, left = plan_materialize(table, base, keep, max_vectors)
    result = MaterializeResult(groups, dry_run, left_over=left)
    if dry_run or not groups or base is None:
        result.seconds = time.monotonic() - started
        return result
    messages, dropped = _rewrite(table, base, groups, index, result)
    result.global_indexes_dropped = dropped
    units = [CompactUnit(DATA_EVOLUTION, g.partition, g.bucket, g.total_buckets, g.files, reason="dv")
             for g in groups]
    ranges_check = ranges_unchanged(table, units, blobs=True, what="materialize-deletion-vectors")
    touched = {(g.partition, g.bucket) for g in groups}

    def check(latest: Snapshot | None) -> None:
        ranges_check(latest)
        now: dict[tuple[bytes, int], set[str]] = {}
        for ie in FileStoreScan(table).index_entries(latest):
            if ie.index_file.index_type == DELETION_VECTORS_INDEX and (ie.partition, ie.bucket) in touched:
                now.setdefault((ie.partition, ie.bucket), set()).add(ie.index_file.file_name)
        for key in touched:
            if now.get(key, set()) != {f.file_name for f in index.get(key, ())}:
                raise CommitConflict(f"materialize-deletion-vectors: deletion vectors of {table.identifier} changed "
                                     "while they were materialized; nothing was committed, run it again")

    commit = FileStoreCommit(table)
    try:
        snap = commit.commit(messages, "APPEND", check_latest=check)
    except BaseException:
        if not commit.may_have_published():
            discard(table.file_io, result.written)
        raise
    result.snapshot_id = None if snap is None else snap.id
    result.seconds = time.monotonic() - started
    return result


def _rewrite(
    table: FileStoreTable, base: Snapshot, groups: list[RangeGroup],
    index: dict[tuple[bytes, int], tuple[IndexFileMeta, ...]], result: MaterializeResult,
) -> tuple[list[CommitMessage], int]:
    """Write each group's surviving rows as new APPEND files (no row ids: the commit assigns
    them); the messages delete the group's files, their vectors and overlapping global indexes.

    BLOB columns are read as bytes from the group's ``.blob`` files and written to new ones
    beside each new data file (Java master rewrites every column of the range the same way):
    the old ``.blob`` files are replaced, since their rows' ids go with the deleted rows.
    A range reaches the writer batch by batch (``merged_range_batches``): memory stays bounded
    by a batch, not the range."""
    dec = EntryDecoder(table)
    blobs = check_blob_writable(table.schema, "materialize-deletion-vectors")
    reader = DataEvolutionSplitRead(table, table.schema.field_names, None)
    target = list(table.schema.fields)
    messages: list[CommitMessage] = []
    by_bucket: dict[tuple[bytes, int, int], list[RangeGroup]] = {}
    for g in groups:
        by_bucket.setdefault((g.partition, g.bucket, g.total_buckets), []).append(g)
    try:
        for (partition, bucket, total), gs in by_bucket.items():
            files = [f for g in gs for f in g.files]
            split = Split(partition, dec.partition_values(partition), bucket, files)
            names = {f.file_name for f in files}
            dvs: dict[str, DeletionVector] = bucket_dv_vectors(table, partition, bucket,
                                                               index.get((partition, bucket), ()), names)
            writer: RollingFileWriter | BlobRollingFileWriter
            if blobs:
                writer = BlobRollingFileWriter(table, partition, bucket, schema=table.schema,
                                               options=table.options, blob_fields=blobs,
                                               partition_dir=dec.partition_dir(partition))
            else:
                writer = RollingFileWriter(table, partition, bucket, kind=APPEND_FILES, level=0,
                                           file_source=FileSource.APPEND, partition_dir=dec.partition_dir(partition))
            try:
                for g in gs:
                    for rg in row_range_groups(g.files):
                        dv = dvs.get(anchor_file(rg).file_name)
                        for t in reader.merged_range_batches(split, rg, target, dv=dv):
                            if t.num_rows and blobs:  # each file numbers its rows from 0 (Java's blob writer)
                                writer.write(t)
                            elif t.num_rows:
                                zeros = pa.array(np.zeros(t.num_rows, dtype=np.int64))
                                writer.write(t.append_column(SEQUENCE_NUMBER, zeros))
                after = writer.close()
            except BaseException:
                writer.abort()
                raise
            result.written += list(writer.written)
            result.files_written += len(after)
            unit = CompactUnit(DATA_EVOLUTION, partition, bucket, total, tuple(files), reason="dv")
            new_index, deleted_index, index_written = rewrite_unaware_dv_index(
                table, unit, list(index.get((partition, bucket), ())), names)
            result.written += index_written
            messages.append(CommitMessage(partition, bucket, total, new_files=list(after), deleted_files=files,
                                          new_index_files=new_index, deleted_index_files=deleted_index))
        dropped = _global_index_drops(table, base, groups)
    except BaseException:
        discard(table.file_io, result.written)
        raise
    count = 0
    for (partition, bucket), metas in dropped.items():
        count += len(metas)
        messages.append(CommitMessage(partition, bucket, 0, deleted_index_files=metas))
    return messages, count


def _global_index_drops(table: FileStoreTable, base: Snapshot, groups: list[RangeGroup],
                        ) -> dict[tuple[bytes, int], list[IndexFileMeta]]:
    """Global index files of a rewritten partition or over a rewritten row range: those rows'
    ids are gone (Java invalidates the global indexes of the partitions it rewrites)."""
    spans = [(g.first_row_id, g.last_row_id) for g in groups]
    partitions = {g.partition for g in groups}
    out: dict[tuple[bytes, int], list[IndexFileMeta]] = {}
    for ie in FileStoreScan(table).index_entries(base):
        gi = ie.index_file.global_index
        if gi is None:
            continue
        if ie.partition in partitions or any(gi.row_range_start <= hi and gi.row_range_end >= lo for lo, hi in spans):
            out.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    return out


__all__ = ["MAX_VECTORS", "PLAN_COLUMNS", "RESULT_COLUMNS", "MaterializeResult", "RangeGroup",
           "check_materializable", "materialize_deletion_vectors", "plan_materialize"]
