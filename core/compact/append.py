"""Small-file compaction of append tables (bucket-unaware and fixed-bucket), with deletion vectors.

Why: every append commit adds at least one file per written bucket, so a table fed by
frequent small writes ends up with thousands of tiny files; reads pay per file. Java
compacts them two ways, and this module plans and executes both as :class:`CompactUnit` s:

* **bucket-unaware** tables (``bucket = -1``): Java's ``AppendCompactCoordinator`` (1.x;
  ``UnawareAppendTableCompactionCoordinator`` in 0.9) per partition. A file joins when it is
  smaller than ``target-file-size * compaction.small-file-ratio`` (0.7; 0.9's fixed 7/10), or
  -- with ``deletion-vectors.enabled`` -- when its deletion vector hides more than
  ``compaction.delete-ratio-threshold`` of its rows. Candidates are packed smallest first into
  bins; a bin is emitted once it holds >1 file and ``2 * target-file-size`` bytes (each file
  counted with ``source.split.open-file-cost``), and the leftover bin when it has at least
  ``compaction.min.file-num`` files. Files whose vectors share an index file stay in one bin
  (the unit rewrites that index file), and such bins are always compacted. The 0.9 coordinator
  in batch mode only emitted bins reaching ``target-file-size`` or ``compaction.max.file-num``
  files, i.e. practically never for small tables; the 1.x packing is what is used here.
  ``--full``: every file below ``target-file-size`` or with a deletion vector, leftover
  bins of two or more files included.
* **fixed-bucket** append tables: ``BucketedAppendCompactManager`` per bucket, files in
  sequence order. Minor: a sliding window that picks the first ``compaction.min.file-num``
  consecutive files while dropping the oldest once the window holds ``2 * target-file-size``
  bytes (1.x). ``--full``: leading big files (``>= target * small-file-ratio``) without a
  deletion vector are skipped, then the rest is rewritten when deletion vectors are enabled,
  or when small files outnumber big ones and at least 3 files remain
  (``compaction.force-rewrite-all-files`` rewrites everything). A lone remaining file
  without a deletion vector is not rewritten (Java would rewrite it unchanged).

Execution (:func:`run_append_unit`) reads the unit's files in order with their deletion
vectors applied, evolves old schemas to the current one by field id, and streams the rows
into :class:`core.mergetree.file_writer.RollingFileWriter` (files rolled at
``target-file-size``, ``file_source`` COMPACT, value stats as Java, sequence numbers counted
from the first input file's minimum, as Java's ``compactRewrite``). The inputs' deletion
vectors are dropped: a fixed bucket's DV index file is rewritten with the vectors that remain
(Java ``BucketedDvMaintainer``); a bucket-unaware partition's touched index files are deleted
and their other vectors written to a new index file (``UnawareAppendDeletionFileMaintainer``).
Nothing is committed here; the job commits every unit's result in one COMPACT snapshot.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..format import data_file  # called through the module: tests spy on its readers
from ..format.arrow_schema import row_tracking_fields
from ..index.deletion_vectors import read_deletion_vectors, write_deletion_vector_index
from ..index.index_paths import index_file_path, new_index_file_path
from ..io import paths
from ..io.fileio import parent
from ..manifest.index_manifest import DELETION_VECTORS_INDEX
from ..manifest.index_manifest import IndexFileMeta as Meta
from ..manifest.manifest import FileSource
from ..manifest.stats_reader import StatsReader
from ..mergetree.compact_unit import APPEND, CompactUnit, UnitResult
from ..mergetree.dv_maintainer import DvMaintainer
from ..mergetree.file_writer import APPEND as APPEND_FILES
from ..mergetree.file_writer import RollingFileWriter, partition_dir_of
from ..operation.row_tracking import (
    SYSTEM_COLUMNS,
    is_row_tracking,
    physical_system_fields,
    system_columns,
    with_system_columns,
)
from ..operation.scan import FileStoreScan
from ..operation.split_read import drop_deleted
from ..utils.interrupt import discard

if TYPE_CHECKING:
    import pyarrow as pa

    from ..index.deletion_vectors import DeletionVector
    from ..manifest.index_manifest import IndexFileMeta
    from ..manifest.manifest import DataFileMeta, ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..schema.options import CoreOptions
    from ..table.file_store_table import FileStoreTable

FULL_COMPACT_MIN_FILE = 3  # BucketedAppendCompactManager


# ---------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------


def _float_option(options: CoreOptions, key: str, default: float) -> float:
    raw = options.options.get(key)
    if raw is None:
        return default
    try:
        return float(raw)
    except ValueError as e:
        raise InvalidInput(f"table option {key}={raw!r}: expected a number") from e


class AppendCompactOptions:
    """The thresholds of the append planners, read once from the table options."""

    def __init__(self, options: CoreOptions) -> None:
        self.target = options.target_file_size(False)
        ratio = _float_option(options, "compaction.small-file-ratio", 0.7)
        self.small_file_size = int(self.target * ratio)  # CoreOptions.compactionFileSize(false)
        self.min_file_num = options.get_int("compaction.min.file-num") or 5
        self.open_file_cost = options.get_memory_bytes("source.split.open-file-cost") or (4 << 20)
        self.delete_ratio = _float_option(options, "compaction.delete-ratio-threshold", 0.2)
        self.force_rewrite_all = options.get_bool("compaction.force-rewrite-all-files", False)
        self.dv_enabled = options.deletion_vectors_enabled


# ---------------------------------------------------------------------------------------
# Deletion-vector index files
# ---------------------------------------------------------------------------------------


def dv_index_by_bucket(table: FileStoreTable, snapshot: Snapshot | None) -> dict[tuple[bytes, int], list[IndexFileMeta]]:
    """Live DV index files per (partition, bucket); empty when the table has DVs off (as Java
    readers, which then ignore them)."""
    if snapshot is None or not table.options.deletion_vectors_enabled:
        return {}
    out: dict[tuple[bytes, int], list[IndexFileMeta]] = {}
    for ie in FileStoreScan(table).index_entries(snapshot):
        if ie.index_file.index_type == DELETION_VECTORS_INDEX:
            out.setdefault((ie.partition, ie.bucket), []).append(ie.index_file)
    return out


def dv_index_by_partition(table: FileStoreTable, snapshot: Snapshot | None) -> dict[bytes, list[IndexFileMeta]]:
    """Live DV index files per partition (bucket-unaware tables keep them under bucket 0)."""
    out: dict[bytes, list[IndexFileMeta]] = {}
    for (partition, _bucket), files in dv_index_by_bucket(table, snapshot).items():
        out.setdefault(partition, []).extend(files)
    return out


def bucket_dv_vectors(
    table: FileStoreTable, partition: bytes, bucket: int, index_files: Sequence[IndexFileMeta],
    only: set[str] | None = None,
) -> dict[str, DeletionVector]:
    """Data file name -> DeletionVector from ``index_files`` (optionally only for ``only``)."""
    out: dict[str, DeletionVector] = {}
    for f in index_files:
        metas = [m for m in (f.dv_ranges or ()) if only is None or m.data_file_name in only]
        if metas:
            path = index_file_path(table, partition, bucket, f)
            out.update(read_deletion_vectors(table.file_io, path, metas))
    return out


def _dv_file_of(index_files: Sequence[IndexFileMeta]) -> dict[str, tuple[IndexFileMeta, Any]]:
    """Data file name -> (index file, its DeletionVectorMeta)."""
    out: dict[str, tuple[IndexFileMeta, Any]] = {}
    for f in index_files:
        for m in f.dv_ranges or ():
            out[m.data_file_name] = (f, m)
    return out


# ---------------------------------------------------------------------------------------
# Planning
# ---------------------------------------------------------------------------------------


def plan_append_units(
    table: FileStoreTable,
    entries: Sequence[ManifestEntry],
    full: bool,
    *,
    snapshot: Snapshot | None = None,
    index_files: Mapping[tuple[bytes, int], Sequence[IndexFileMeta]] | None = None,
) -> list[CompactUnit]:
    """Compaction units for the live ``entries`` of an append table (already restricted to the
    partitions the user selected). DV index files come from ``index_files`` when given, else
    from ``snapshot`` (default: the latest snapshot)."""

    if table.schema.primary_keys:
        raise InvalidInput(f"{table.identifier} has a primary key; append compaction is for append tables")
    opts = AppendCompactOptions(table.options)
    if index_files is None:
        snap = snapshot if snapshot is not None else table.snapshot_manager.latest_snapshot()
        index = dv_index_by_bucket(table, snap)
    else:
        index = {k: list(v) for k, v in index_files.items()} if opts.dv_enabled else {}
    by_bucket: dict[tuple[bytes, int], list[ManifestEntry]] = {}
    for e in entries:
        by_bucket.setdefault((e.partition, e.bucket), []).append(e)
    units: list[CompactUnit] = []
    unaware = table.schema.bucket == -1
    if unaware:
        by_part: dict[bytes, list[ManifestEntry]] = {}
        for (partition, _bucket), es in by_bucket.items():
            by_part.setdefault(partition, []).extend(es)
        for partition in sorted(by_part):
            es = by_part[partition]
            idx = [f for (p, _b), fs in index.items() if p == partition for f in fs]
            units += _plan_unaware_partition(partition, es, idx, opts, full)
    else:
        for (partition, bucket) in sorted(by_bucket):
            es = by_bucket[(partition, bucket)]
            unit = _plan_fixed_bucket(partition, bucket, es, index.get((partition, bucket), []), opts, full)
            if unit is not None:
                units.append(unit)
    return units


def _by_size(files: Sequence[DataFileMeta]) -> list[DataFileMeta]:
    return sorted(files, key=lambda f: (f.file_size, f.file_name))


class _Bin:
    """AppendCompactCoordinator's FileBin: sizes counted with the open-file cost."""

    def __init__(self, opts: AppendCompactOptions) -> None:
        self.opts = opts
        self.files: list[DataFileMeta] = []
        self.size = 0

    def add(self, f: DataFileMeta) -> None:
        self.files.append(f)
        self.size += f.file_size + self.opts.open_file_cost

    def enough_content(self) -> bool:
        return len(self.files) > 1 and self.size >= self.opts.target * 2

    def drain(self) -> list[DataFileMeta]:
        out, self.files, self.size = self.files, [], 0
        return out


def _pack(files: Sequence[DataFileMeta], opts: AppendCompactOptions, min_files: int) -> list[list[DataFileMeta]]:
    out: list[list[DataFileMeta]] = []
    b = _Bin(opts)
    for f in _by_size(files):
        b.add(f)
        if b.enough_content():
            out.append(b.drain())
    if len(b.files) >= min_files:
        out.append(b.drain())
    return out


def _plan_unaware_partition(
    partition: bytes, entries: list[ManifestEntry], index_files: list[IndexFileMeta],
    opts: AppendCompactOptions, full: bool,
) -> list[CompactUnit]:
    bucket = entries[0].bucket
    total_buckets = entries[0].total_buckets
    dv_of = _dv_file_of(index_files)

    def candidate(f: DataFileMeta) -> bool:
        if opts.force_rewrite_all and full:
            return True
        dv = dv_of.get(f.file_name)
        if full:
            return f.file_size < opts.target or dv is not None
        if f.file_size < opts.small_file_size:
            return True
        if dv is not None:
            card = dv[1].cardinality
            return card is None or card > f.row_count * opts.delete_ratio
        return False

    files = [e.file for e in entries if candidate(e.file)]
    bins: list[tuple[list[DataFileMeta], str]] = []
    with_dv: dict[str, list[DataFileMeta]] = {}
    rest: list[DataFileMeta] = []
    for f in files:
        dv = dv_of.get(f.file_name)
        if dv is None:
            rest.append(f)
        else:
            with_dv.setdefault(dv[0].file_name, []).append(f)
    if with_dv:
        # files sharing an index file stay together; bins of such groups are always compacted
        groups = sorted(with_dv.values(), key=lambda g: (sum(f.file_size for f in g), g[0].file_name))
        b = _Bin(opts)
        for g in groups:
            for f in g:
                b.add(f)
            if b.enough_content():
                bins.append((b.drain(), "deletion-vectors"))
        if b.files:
            bins.append((b.drain(), "deletion-vectors"))
    min_files = 2 if full else opts.min_file_num
    if len(rest) > 1:
        bins += [(x, "full" if full else "small-files") for x in _pack(rest, opts, min_files)]
    units = []
    for files_in, reason in bins:
        names = {f.file_name for f in files_in}
        touched = {dv_of[n][0].file_name: dv_of[n][0] for n in names if n in dv_of}
        units.append(CompactUnit(
            kind=APPEND, partition=partition, bucket=bucket, total_buckets=total_buckets,
            files=tuple(files_in), full=full, index_files=tuple(touched.values()), reason=reason,
        ))
    return units


def _plan_fixed_bucket(
    partition: bytes, bucket: int, entries: list[ManifestEntry], index_files: list[IndexFileMeta],
    opts: AppendCompactOptions, full: bool,
) -> CompactUnit | None:
    files = sorted((e.file for e in entries), key=lambda f: (f.min_sequence_number, f.file_name))
    dv_names = set(_dv_file_of(index_files))
    picked: list[DataFileMeta] | None = None
    reason = "full" if full else "small-files"
    if full:
        if not opts.force_rewrite_all and (not files or (not opts.dv_enabled and len(files) < FULL_COMPACT_MIN_FILE)):
            return None
        rest = list(files)
        if not opts.force_rewrite_all:
            while rest and rest[0].file_size >= opts.small_file_size and rest[0].file_name not in dv_names:
                rest.pop(0)
        if opts.force_rewrite_all or opts.dv_enabled:
            picked = rest
        else:
            big = sum(1 for f in rest if f.file_size >= opts.small_file_size)
            if len(rest) - big > big and len(rest) >= FULL_COMPACT_MIN_FILE:
                picked = rest
        if picked is not None and len(picked) == 1 and picked[0].file_name not in dv_names \
                and not opts.force_rewrite_all:
            picked = None  # rewriting one file without deletions changes nothing
        if picked and any(f.file_name in dv_names for f in picked):
            reason = "full, deletion-vectors"
    else:
        window: list[DataFileMeta] = []
        total = 0
        for f in files:
            window.append(f)
            total += f.file_size
            if len(window) >= opts.min_file_num:
                picked = window
                break
            if total >= opts.target * 2:
                total -= window.pop(0).file_size
    if not picked:
        return None
    return CompactUnit(
        kind=APPEND, partition=partition, bucket=bucket, total_buckets=entries[0].total_buckets,
        files=tuple(picked), full=full, bucket_files=tuple(files),
        index_files=tuple(index_files), reason=reason,
    )


# ---------------------------------------------------------------------------------------
# Reading and writing
# ---------------------------------------------------------------------------------------


def read_file_tables(
    table: FileStoreTable,
    partition: bytes,
    bucket: int,
    files: Sequence[DataFileMeta],
    vectors: Mapping[str, DeletionVector],
) -> Iterator[pa.Table]:
    """The rows of ``files`` in order, deletion vectors applied, as the table's current schema.

    Row-tracking tables: each row also carries its ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (taken
    before deletion vectors drop rows, which keep their positions), so rewritten rows keep them.
    """
    import pyarrow as pa

    sr = StatsReader(table)
    target = list(table.schema.fields)
    ids = {f.id for f in target}
    tracking = is_row_tracking(table.options)
    part_dir = partition_dir_of(table.schema, partition)
    for meta in files:
        file_fields = list(sr.schema(meta.schema_id).fields)
        cols = [f.name for f in file_fields if f.id in ids]
        stored = physical_system_fields(meta) if tracking else []
        path = paths.data_file_path(table.data_root, part_dir, bucket, meta.file_name, meta.external_path)
        dv = vectors.get(meta.file_name)
        offset = 0
        for batch in data_file.iter_data_file_batches(table.file_io, path, file_fields + stored,
                                                      cols + [f.name for f in stored]):
            t = pa.Table.from_batches([batch])
            n = t.num_rows
            system = system_columns(meta, t, offset, SYSTEM_COLUMNS) if tracking else {}
            t = with_system_columns(data_file.evolve(t, file_fields, target), system)
            if dv is not None:
                t = drop_deleted(t, dv, offset)
            offset += n
            if t.num_rows:
                yield t


def output_writer(table: FileStoreTable, partition: bytes, bucket: int, seq_start: int = 0) -> RollingFileWriter:
    """The writer compaction output of an append bucket goes through (level 0, COMPACT files);
    on row-tracking tables it stores ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` (ids are not
    contiguous in a compacted file, so they cannot be derived from a first row id)."""
    system = row_tracking_fields() if is_row_tracking(table.options) else []
    return RollingFileWriter(table, partition, bucket, kind=APPEND_FILES, level=0,
                             file_source=FileSource.COMPACT, sequence_start=seq_start, system_fields=system)


# ---------------------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------------------


def run_append_unit(table: FileStoreTable, unit: CompactUnit) -> UnitResult:
    """Rewrite the unit's files into new ones; the DV changes of the bucket; nothing committed."""
    if unit.kind != APPEND:
        raise InvalidInput(f"run_append_unit: unit of kind {unit.kind!r}")
    started = time.monotonic()
    files = list(unit.files)
    if is_row_tracking(table.options):
        # in row-id order, so output files hold contiguous ids where the inputs do
        files.sort(key=lambda f: (f.first_row_id is None, f.first_row_id or 0))
    names = {f.file_name for f in files}
    dv_enabled = table.options.deletion_vectors_enabled
    index_files = list(unit.index_files) if dv_enabled else []
    vectors = bucket_dv_vectors(table, unit.partition, unit.bucket, index_files, names) if index_files else {}
    writer = output_writer(table, unit.partition, unit.bucket,
                         seq_start=files[0].min_sequence_number if files else 0)
    index_written: list[str] = []
    try:
        for t in read_file_tables(table, unit.partition, unit.bucket, files, vectors):
            writer.write(t)
        after = writer.close()
        new_index: list[IndexFileMeta] = []
        deleted_index: list[IndexFileMeta] = []
        if index_files and vectors:
            if table.schema.bucket == -1:
                new_index, deleted_index, index_written = rewrite_unaware_dv_index(table, unit, index_files, names)
            else:
                m = DvMaintainer(table, unit.partition, unit.bucket, index_files)
                for n in names:
                    m.remove(n)
                new_index, deleted_index, index_written = m.write()
    except BaseException:
        writer.abort()
        discard(table.file_io, index_written)
        raise
    return UnitResult(
        unit=unit, before=files, after=list(after), new_index_files=new_index,
        deleted_index_files=deleted_index, written=[*writer.written, *index_written],
        rows_out=sum(f.row_count for f in after), seconds=time.monotonic() - started,
    )


def rewrite_unaware_dv_index(
    table: FileStoreTable, unit: CompactUnit, index_files: list[IndexFileMeta], removed: set[str],
) -> tuple[list[IndexFileMeta], list[IndexFileMeta], list[str]]:
    """Every index file holding a vector of a rewritten file is deleted; the vectors of other
    data files it held go to one new index file (Java writeUnchangedDeletionVector)."""
    touched = [f for f in index_files if any(m.data_file_name in removed for m in f.dv_ranges or ())]
    if not touched:
        return [], [], []
    keep: dict[str, DeletionVector] = {}
    for f in touched:
        others = {m.data_file_name for m in f.dv_ranges or ()} - removed
        if others:
            keep.update(bucket_dv_vectors(table, unit.partition, unit.bucket, [f], others))
    if not keep:
        return [], touched, []
    name = f"index-{uuid.uuid4()}-0"
    path, external = new_index_file_path(table, unit.partition, unit.bucket, name)
    table.file_io.mkdirs(parent(path))
    size, metas = write_deletion_vector_index(table.file_io, path, dict(sorted(keep.items())),
                                              table.options.deletion_vectors_bitmap64)
    meta = Meta(DELETION_VECTORS_INDEX, name, size, len(metas), tuple(metas), external)
    return [meta], touched, [path]


__all__ = [
    "AppendCompactOptions",
    "bucket_dv_vectors",
    "dv_index_by_bucket",
    "dv_index_by_partition",
    "output_writer",
    "plan_append_units",
    "read_file_tables",
    "rewrite_unaware_dv_index",
    "run_append_unit",
]
