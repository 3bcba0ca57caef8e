"""Compaction of data-evolution tables, as Java 1.4+ compacts them
(``DataEvolutionCompactCoordinator`` / ``DataEvolutionNormalCompactTask``).

Per partition, the row-id ranges are taken in row-id order; contiguous ranges are packed into
bins of ``target-file-size`` (weight of a file: max(size, ``source.split.open-file-cost``)),
a range heavier than the target alone. A bin with at least ``compaction.min.file-num`` files
(partial-column files count) becomes one unit: its ranges are read merged (newest column
wins) and written as exactly one full file -- ``_FIRST_ROW_ID`` of the first range, sequence
numbers min/max of the inputs, ``_FILE_SOURCE`` COMPACT, no ``_WRITE_COLS`` -- so every row
keeps its id. The commit deletes the inputs and adds that file (a COMPACT snapshot); a range
another commit changed since planning fails it (exit 5). ``.blob`` files are not rewritten
(Java rewrites them only with ``blob-compaction.enabled``, refused here): the new file holds
the other columns (``_WRITE_COLS``) and the blob files keep supplying theirs by row id.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace

import numpy as np
import pyarrow as pa

from ..errors import CommitConflict, NotYetSupported
from ..format.arrow_schema import SEQUENCE_NUMBER
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.manifest import DataFileMeta, FileSource, ManifestEntry
from ..mergetree.compact_unit import DATA_EVOLUTION, CompactUnit, UnitResult
from ..mergetree.file_writer import APPEND as APPEND_FILES
from ..mergetree.file_writer import RollingFileWriter
from ..operation.blob_read import blob_columns, is_blob_file
from ..operation.data_evolution import check_blob_writable, row_range_groups
from ..operation.data_evolution_read import DataEvolutionSplitRead
from ..operation.read_plan import Split
from ..operation.scan import FileStoreScan
from ..refs.snapshot import Snapshot
from ..table.file_store_table import FileStoreTable
from .append import AppendCompactOptions

_NO_ROLL = 1 << 62  # Java: target-file-size 99999 G -- one output file per unit


def check_data_evolution_compactable(table: FileStoreTable) -> None:
    """What Java's data-evolution compaction does not do, or we do not yet."""
    opts = table.options
    if check_blob_writable(table.schema, "compact") and opts.get_bool("blob-compaction.enabled"):
        raise NotYetSupported("compact: blob-compaction.enabled=true (rewriting .blob files) is not supported yet; "
                              "without it .blob files are kept as they are, as Java does")
    if opts.deletion_vectors_enabled:
        raise NotYetSupported("compact: data-evolution tables with deletion vectors are not supported yet")
    if opts.get_bool("data-evolution.compaction.rewrite-row-ids"):
        raise NotYetSupported("compact: data-evolution.compaction.rewrite-row-ids = true is no longer supported "
                              "by Paimon (row ids are kept)")
    if any(k.startswith("global-index.") for k in table.schema.options):
        raise NotYetSupported("compact: data-evolution tables with global indexes are not supported yet")


def plan_data_evolution_units(table: FileStoreTable, entries: Sequence[ManifestEntry]) -> list[CompactUnit]:
    opts = AppendCompactOptions(table.options)
    by_partition: dict[tuple[bytes, int, int], list[DataFileMeta]] = {}
    for e in entries:
        if not is_blob_file(e.file):  # .blob files keep their rows' ids and are not rewritten
            by_partition.setdefault((e.partition, e.bucket, e.total_buckets), []).append(e.file)
    units = []
    for (partition, bucket, total), files in by_partition.items():
        for bin_files in _bins(row_range_groups(files), opts):
            if len(bin_files) >= opts.min_file_num:
                units.append(CompactUnit(DATA_EVOLUTION, partition, bucket, total, tuple(bin_files),
                                         reason="row-ranges"))
    return units


def _bins(groups: list[list[DataFileMeta]], opts: AppendCompactOptions) -> Iterable[list[DataFileMeta]]:
    """Contiguous range groups packed up to the target size (``CompactPlanner.compactPlan``)."""
    files: list[DataFileMeta] = []
    weight = 0
    end = None  # one past the last row id of the bin
    for g in groups:
        first = g[0].first_row_id or 0
        w = sum(max(f.file_size, opts.open_file_cost) for f in g)
        if files and first != end:  # not contiguous: a new run of ranges
            yield files
            files, weight = [], 0
        end = first + max(f.row_count for f in g)
        if w > opts.target:
            if files:
                yield files
            yield list(g)
            files, weight = [], 0
            continue
        files += g
        weight += w
        if weight > opts.target:
            yield files
            files, weight = [], 0
    if files:
        yield files


def run_data_evolution_unit(table: FileStoreTable, unit: CompactUnit) -> UnitResult:
    """Merge the unit's ranges into one full file that keeps every row id; nothing committed."""
    started = time.monotonic()
    groups = row_range_groups(unit.files)
    reader = DataEvolutionSplitRead(table, table.schema.field_names, None)
    decoder = EntryDecoder(table)
    split = Split(unit.partition, decoder.partition_values(unit.partition), unit.bucket, list(unit.files))
    blobs = set(blob_columns(table.schema))
    target = [f for f in table.schema.fields if f.name not in blobs]  # blob columns stay in their files
    writer = RollingFileWriter(table, unit.partition, unit.bucket, kind=APPEND_FILES, level=0,
                               file_source=FileSource.COMPACT, target_file_size=_NO_ROLL,
                               partition_dir=decoder.partition_dir(unit.partition),
                               schema=table.schema.copy(fields=target) if blobs else None,
                               write_cols=[f.name for f in target] if blobs else None)
    try:
        for g in groups:  # batch by batch: a range larger than memory still compacts
            for t in reader.merged_range_batches(split, g, target):
                writer.write(t.append_column(SEQUENCE_NUMBER, pa.array(np.zeros(t.num_rows, dtype=np.int64))))
        after = writer.close()
        rows = sum(max(f.row_count for f in g) for g in groups)
        if len(after) != 1 or after[0].row_count != rows:
            raise NotYetSupported("compact: a data-evolution unit could not be written as one file")
    except BaseException:
        writer.abort()
        raise
    out = replace(after[0], first_row_id=groups[0][0].first_row_id,
                  min_sequence_number=min(f.min_sequence_number for f in unit.files),
                  max_sequence_number=max(f.max_sequence_number for f in unit.files))
    return UnitResult(unit=unit, before=list(unit.files), after=[out], written=list(writer.written),
                      rows_out=rows, seconds=time.monotonic() - started)


def ranges_unchanged(table: FileStoreTable, units: Sequence[CompactUnit], *, blobs: bool = False,
                     what: str = "compact") -> Callable[[Snapshot | None], None]:
    """The commit's check: every unit's row ranges still hold exactly the files it read
    (Java's ``DataEvolutionConflictDetection``: a concurrent update or compaction of the
    same rows fails the commit instead of leaving files that no longer line up). ``blobs``:
    the units replace their ranges' ``.blob`` files too, so a new one over them conflicts."""
    spans = [(u.partition, _span(u.files), {f.file_name for f in u.files}) for u in units]

    def check(latest: Snapshot | None) -> None:
        live: dict[bytes, list[DataFileMeta]] = {}
        for e in FileStoreScan(table).plan(latest):
            live.setdefault(e.partition, []).append(e.file)
        for partition, (lo, hi), names in spans:
            now = {f.file_name for f in live.get(partition, ())
                   if (blobs or not is_blob_file(f)) and f.first_row_id is not None and f.first_row_id <= hi
                   and f.first_row_id + f.row_count - 1 >= lo}
            if now != names:
                raise CommitConflict(f"{what}: rows {lo}..{hi} of {table.identifier} changed while they were "
                                     "rewritten; nothing was committed, run it again")

    return check


def _span(files: Iterable[DataFileMeta]) -> tuple[int, int]:
    fs = list(files)
    return (min(f.first_row_id or 0 for f in fs), max((f.first_row_id or 0) + f.row_count - 1 for f in fs))
