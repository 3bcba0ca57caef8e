"""TableWrite: Arrow rows into level-0 data files and CommitMessages, as Java Paimon writes them.

Java's writer (``TableWriteImpl`` -> ``MergeTreeWriter`` / ``AppendOnlyWriter``) routes every
row to a (partition, bucket) writer, numbers it with the bucket's next sequence number (in
input order), buffers it, and on flush sorts the buffer by (key, sequence), folds records of
the same key with the merge function and writes one sorted run as level-0 files rolled at
``target-file-size``. This module does the same column-wise:

* partition values are grouped with pyarrow (one BinaryRow per DISTINCT partition),
  buckets come from :mod:`core.index.bucket` (fixed) or :mod:`core.index.hash_index` (dynamic);
* sequence numbers continue from the bucket's max ``_MAX_SEQUENCE_NUMBER`` in the latest
  snapshot (one scan), except where Java ignores previous files (overwrite, bucket-unaware
  append tables) and starts at 0;
* buffers are bounded by ``write-buffer-size`` (Arrow bytes); a full buffer flushes the
  largest writer, so big inputs become several level-0 sorted runs;
* ``changelog-producer=input`` also writes the raw sorted records as ``changelog-*`` files.

Nothing is committed here: the write job (:func:`core.compact.write_job.write_table`) reads
inputs, writes them with :class:`TableWrite`, compacts, commits with
:class:`core.operation.commit.FileStoreCommit`, and deletes its files again on any failure
before the snapshot is published.
"""

from __future__ import annotations

import os
import threading
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..data import binary_row
from ..errors import InvalidInput, NotYetSupported
from ..format.arrow_schema import SEQUENCE_NUMBER, VALUE_KIND
from ..index.bucket import bucket_hashes, bucket_ids
from ..index.hash_index import DynamicBucketAssigner
from ..io import paths
from ..io.fileio import parent
from ..manifest.manifest import FileSource
from ..mergetree.blob_file_writer import BlobRollingFileWriter
from ..mergetree.commit_message import CommitMessage
from ..mergetree.file_writer import APPEND, KV, RollingFileWriter, external_paths_of, row_values
from ..mergetree.merge_function import merge
from ..schema.option_keys import check_option_keys
from ..schema.options import CoreOptions
from ..table.features import Action, check_schema_features
from ..table.file_store_table import FileStoreTable
from ..utils.interrupt import discard
from ..utils.workers import worker_pool
from . import postpone
from .blob_read import blob_columns
from .bucket_layout import check_bucket_layout
from .data_evolution import check_blob_writable
from .row_tracking import check_row_tracking_table, is_data_evolution
from .scan import FileStoreScan, ScanFilter

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

    from ..manifest.manifest import DataFileMeta
    from ..refs.snapshot import Snapshot
    from ..schema.table_schema import TableSchema

_KIND_NAMES = ("+I", "-U", "+U", "-D")
_FLUSH_THREADS = min(4, os.cpu_count() or 1)  # parallel bucket flushes at commit time


# ---------------------------------------------------------------------------------------
# What this writer refuses
# ---------------------------------------------------------------------------------------


def check_writable(schema: TableSchema, options: CoreOptions) -> None:
    """Refuse tables whose writes would not be readable as written (before any input is read).

    Deletion-vector and first-row tables hide level 0 from readers; they are writable because
    the write job compacts level 0 upward (see :mod:`core.compact.write_job`), except
    with ``write-only=true``, where -- as in Java -- a separate ``compact`` makes rows visible.
    """
    check_row_tracking_table(schema, options, "write")  # the commit numbers the rows
    check_blob_writable(schema, "write")  # BLOB columns go to .blob files of their own
    bucket = schema.bucket
    if bucket == 0 or bucket < -2:
        raise InvalidInput(f"write: table option bucket={bucket} is invalid (use -1 or a positive count)")
    if schema.primary_keys and bucket == -1 and schema.cross_partition_update:
        raise NotYetSupported(
            "write: dynamic-bucket table whose primary key lacks partition columns "
            f"{[p for p in schema.partition_keys if p not in schema.primary_keys]} (cross-partition "
            "upsert) needs a global key index; not supported yet"
        )
    if not schema.primary_keys and bucket > 0 and not schema.original_bucket_keys:
        raise InvalidInput("write: an append table with a fixed bucket count needs option 'bucket-key'")
    fmt = level0_format(options)
    if fmt not in ("parquet", "orc", "avro"):
        raise NotYetSupported(f"write: file.format={fmt} is not supported (parquet, orc, avro)")


def level0_format(options: CoreOptions) -> str:
    """Format of level-0 files: ``file.format.per.level`` for level 0, else ``file.format``."""
    return options.file_format_per_level().get(0, options.file_format).lower()


# ---------------------------------------------------------------------------------------
# Per (partition, bucket) writer
# ---------------------------------------------------------------------------------------


@dataclass
class _Bucket:
    """Buffered records of one (partition, bucket) and the files already flushed."""

    partition: bytes
    partition_dir: str
    bucket: int
    next_seq: int
    chunks: list[pa.Table] = field(default_factory=list)
    buffered_bytes: int = 0
    new_files: list[DataFileMeta] = field(default_factory=list)
    changelog_files: list[DataFileMeta] = field(default_factory=list)
    staged: RollingFileWriter | BlobRollingFileWriter | None = None  # postpone-bucket writer, open until prepare_commit


@dataclass
class WriteSummary:
    """What a write produced (for the CLI's result line)."""

    rows: int = 0  # input rows accepted (after ignore-delete)
    files: int = 0
    changelog_files: int = 0
    bytes: int = 0
    record_count: int = 0  # records in the new data files (after merging duplicates)


class TableWrite:
    """Writes Arrow rows of one table into data files; ``prepare_commit`` hands out the messages.

    ``overwrite=True`` makes writers start from an empty bucket as Java's overwrite does
    (sequence numbers from 0, no previous HASH index). Call :meth:`abort` to delete every file
    written so far when the write will not be committed.
    """

    def __init__(
        self,
        table: FileStoreTable,
        options_overrides: Mapping[str, str] | None = None,
        overwrite: bool = False,
        *,
        commit_user: str | None = None,
        bucket_nums: Callable[[bytes], int] | None = None,
    ) -> None:
        """``commit_user`` names staged postpone-bucket files (the commit must use the same);
        ``bucket_nums`` makes a postpone table's writer hash rows into real buckets with the
        given bucket number per partition (postpone compaction) instead of its own choice."""
        overrides = {k: str(v) for k, v in (options_overrides or {}).items()}
        if overrides:
            check_option_keys(overrides)
            from ..schema.option_keys import IMMUTABLE_OPTIONS

            fixed = sorted(k for k in overrides if k in IMMUTABLE_OPTIONS or k in ("bucket", "primary-key",
                                                                                  "partition"))
            if fixed:
                raise InvalidInput(f"option {fixed[0]!r} is part of the table's layout and cannot be set per write")
        schema = table.schema
        if overrides:
            schema = schema.copy(options={**schema.options, **overrides})
            # the gate saw the table's own options; a feature switched on for this write only
            # (metadata.iceberg.storage=hive-catalog, sequence.snapshot-ordering, ...) is refused the same way
            check_schema_features(schema, Action.WRITE, table.identifier.full_name)
        self.table = table
        self.schema = schema
        self.options = CoreOptions(schema.options)
        check_writable(schema, self.options)
        self.blob_fields = blob_columns(schema)  # check_writable refused the layouts we do not write
        self.data_evolution = is_data_evolution(self.options)
        external_paths_of(table, self.options)  # bad data-file.external-paths: refused, nothing written
        from ..schema.file_index_options import validate_file_index_options

        validate_file_index_options(schema.fields, schema.options)  # bad file-index options: exit 4, nothing written
        self.file_io = table.file_io
        self.overwrite = overwrite
        self.is_pk = bool(schema.primary_keys)
        self.num_buckets = schema.bucket
        self.total_buckets = schema.bucket
        self.unaware = not self.is_pk and self.num_buckets == -1
        # postpone tables (bucket = -2): staged into bucket-postpone/, or hashed into each
        # partition's real buckets (core.operation.postpone)
        self.postpone = postpone.is_postpone(schema)
        self.staged = self.postpone and bucket_nums is None and not postpone.writes_fixed_buckets(self.options)
        self._bucket_nums = bucket_nums
        self._staged_options: CoreOptions | None = None
        if self.staged:
            self._staged_options = CoreOptions(postpone.staged_options(self.options, commit_user or str(uuid.uuid4())))
        self.buffer_limit = self.options.get_memory_bytes("write-buffer-size") or (256 << 20)
        self.target_file_size = self.options.target_file_size(self.is_pk)
        self.ignore_delete = self.options.ignore_delete
        self.changelog_input = self.is_pk and self.options.changelog_producer == "input"
        self.trimmed_pk = schema.trimmed_primary_keys if self.is_pk else []
        self.trimmed_pk_fields = [schema.field(k) for k in self.trimmed_pk]
        self.partition_fields = [schema.field(k) for k in schema.partition_keys]
        self.partition_types = [f.type for f in self.partition_fields]
        self.buckets: dict[tuple[bytes, int], _Bucket] = {}
        self.buffered_bytes = 0
        self.written: list[str] = []  # every data/changelog file path written (for abort)
        self.summary = WriteSummary()
        self._max_seqs: dict[tuple[bytes, int], int] | None = None
        # live files per (partition, bucket) of the snapshot the sequence numbers came from:
        # the levels auto-compaction starts from (empty for overwrite / unaware writers)
        self._base_snapshot: Snapshot | None = None
        self._base_files: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        self._base_files_partitions: set[bytes] = set()  # partitions _base_files holds
        # _TOTAL_BUCKETS of each partition's live files: a fixed-bucket writer refuses a
        # partition laid out with another bucket number (Java's restore check)
        self._base_total_buckets: dict[bytes, set[int]] = {}
        self._layout_checked: set[bytes] = set()
        self._partition_cache: dict[tuple[Any, ...], tuple[bytes, str]] = {}
        self._assigner: Any = None
        self._closed = False
        self._lock = threading.Lock()  # summary / written / buffered_bytes under parallel flushes

    # -- routing -----------------------------------------------------------------------

    def write_arrow(
        self,
        batch: pa.Table | pa.RecordBatch,
        row_kinds: Any = None,
        source: str = "input",
        first_row: int = 1,
    ) -> None:
        """Route ``batch`` (the table's columns, already of the table's Arrow types) to buckets.

        ``row_kinds``: int8 RowKind bytes per row (numpy or Arrow; None = all +I).
        ``source``/``first_row`` only name rows in error messages.
        """
        import numpy as np
        import pyarrow as pa

        if self._closed:
            raise InvalidInput("write: this TableWrite was already committed or aborted")
        data = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        missing = [n for n in self.schema.field_names if n not in data.column_names]
        if missing:
            raise InvalidInput(f"{source}: batch lacks column(s) {missing}")
        data = data.select(self.schema.field_names)
        n = data.num_rows
        if n == 0:
            return
        kinds = self._kinds_array(row_kinds, n)
        if n > 1 and data.nbytes > self.buffer_limit // 2:
            # a batch bigger than the buffer is taken in pieces so flushes happen inside it, as
            # Java's buffer flushes whenever it fills up
            step = max(1, int(n * (self.buffer_limit // 4) / data.nbytes))
            for start in range(0, n, step):
                piece = data.slice(start, step)
                self.write_arrow(piece, None if kinds is None else kinds[start : start + piece.num_rows],
                                 source, first_row + start)
            return
        if kinds is not None and self.ignore_delete:
            keep = (kinds != 1) & (kinds != 3)
            if not keep.all():
                data = data.filter(pa.array(keep))
                kinds = kinds[keep]
                n = data.num_rows
                if n == 0:
                    return
        if not self.is_pk and kinds is not None:
            bad = (kinds == 1) | (kinds == 3)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InvalidInput(
                    f"{source}: row {first_row + i}: an append table takes only +I/+U rows, got "
                    f"{_KIND_NAMES[int(kinds[i])]} (set 'ignore-delete' to drop retractions)"
                )
        self.summary.rows += n
        for partition, part_dir, bucket, rows in self._route(data):
            # one copy per (partition, bucket): its own buffers, freed when the bucket flushes
            b_data = data if rows is None else data.take(pa.array(rows))
            b_kinds = kinds if (kinds is None or rows is None) else kinds[rows]
            self._append(partition, part_dir, bucket, b_data, b_kinds)
        while self.buffered_bytes > self.buffer_limit:
            self._flush(max(self.buckets.values(), key=lambda b: b.buffered_bytes))

    @staticmethod
    def _kinds_array(row_kinds: Any, n: int) -> np.ndarray | None:
        import numpy as np
        import pyarrow as pa

        if row_kinds is None:
            return None
        if isinstance(row_kinds, (pa.Array, pa.ChunkedArray)):
            arr = np.asarray(row_kinds.to_numpy(zero_copy_only=False), dtype=np.int8)
        else:
            arr = np.asarray(row_kinds, dtype=np.int8)
        if arr.shape != (n,):
            raise InvalidInput(f"write: {arr.shape[0] if arr.ndim else 0} row kinds for {n} rows")
        if ((arr < 0) | (arr > 3)).any():
            raise InvalidInput("write: row kinds must be 0 (+I), 1 (-U), 2 (+U) or 3 (-D)")
        if not (arr != 0).any():
            return None
        return arr

    def split_partitions(self, data: pa.Table) -> list[tuple[bytes, str, Any]]:
        """[(partition BinaryRow, partition dir, row indices or None for all rows)]."""
        import numpy as np
        import pyarrow as pa

        if not self.partition_fields:
            return [(binary_row.EMPTY_ROW, "", None)]
        names = [f.name for f in self.partition_fields]
        part = data.select(names)
        if part.num_rows and all(_single_value(part.column(c)) for c in names):
            groups = [(part.slice(0, 1), None)]
        else:
            idx_col = "__paimon_row__"
            while idx_col in names:
                idx_col += "_"
            grouped = part.append_column(idx_col, pa.array(np.arange(part.num_rows, dtype=np.int64))).group_by(
                names, use_threads=False
            ).aggregate([(idx_col, "list")])
            lists = grouped.column(f"{idx_col}_list")
            keys = grouped.select(names)
            groups = [(keys.slice(i, 1), lists[i].values.to_numpy()) for i in range(grouped.num_rows)]
        out = []
        for key_row, rows in groups:
            values = row_values(key_row, 0, self.partition_fields)
            cache_key = tuple(repr(v) for v in values)
            hit = self._partition_cache.get(cache_key)
            if hit is None:
                hit = (
                    binary_row.serialize(values, self.partition_types),
                    paths.check_partition_dir(paths.partition_path_for(self.schema, values)),
                )
                self._partition_cache[cache_key] = hit
            out.append((hit[0], hit[1], rows))
        return out

    def _route(self, data: pa.Table) -> list[tuple[bytes, str, int, Any]]:
        """[(partition, partition dir, bucket, row indices in input order or None for all)].

        One combined (partition, bucket) group id per row and one stable argsort, so every
        row is copied once (by the caller's take) instead of once per partition and again
        per bucket.
        """
        import numpy as np

        parts = self.split_partitions(data)
        if self.staged:  # one postpone bucket per partition, rows in arrival order
            return [(partition, part_dir, paths.POSTPONE_BUCKET, rows) for partition, part_dir, rows in parts]
        n = data.num_rows
        buckets = self._bucket_ids_all(data, parts)
        if len(parts) == 1:
            partition, part_dir, _ = parts[0]
            return [(partition, part_dir, bucket, sel) for bucket, sel in _split_buckets(buckets)]
        code = np.empty(n, dtype=np.int64)
        for i, (_, _, rows) in enumerate(parts):
            code[rows] = i
        width = int(buckets.max()) + 1 if n else 1
        gid = code * width + buckets.astype(np.int64)
        out = []
        for g, sel in _split_buckets(gid):
            partition, part_dir, _ = parts[g // width]
            out.append((partition, part_dir, g % width, sel))
        return out

    def _bucket_ids_all(self, data: pa.Table, parts: list[tuple[bytes, str, Any]]) -> np.ndarray:
        """Bucket of every row of ``data`` (``parts`` from :meth:`split_partitions`)."""
        import numpy as np

        if self.unaware:
            return np.zeros(data.num_rows, dtype=np.int32)
        if self.postpone:
            fields = [self.schema.field(k) for k in self.schema.bucket_keys]
            hashes = bucket_hashes(data, fields)
            out = np.empty(data.num_rows, dtype=np.int32)
            for partition, _, rows in parts:
                sel = slice(None) if rows is None else rows
                out[sel] = bucket_ids(hashes[sel], self._partition_buckets(partition))
            return out
        if self.num_buckets > 0:  # fixed buckets do not depend on the partition
            fields = [self.schema.field(k) for k in self.schema.bucket_keys]
            return bucket_ids(bucket_hashes(data, fields), self.num_buckets)
        hashes = bucket_hashes(data, self.trimmed_pk_fields)
        if len(parts) == 1:
            return np.asarray(self._dynamic_assigner().assign(parts[0][0], hashes), dtype=np.int32)
        out = np.empty(data.num_rows, dtype=np.int32)
        for partition, _, rows in parts:  # each partition's rows in input order, as before
            out[rows] = self._dynamic_assigner().assign(partition, hashes[rows])
        return out

    def _partition_buckets(self, partition: bytes) -> int:
        """The real bucket number of a postpone table's partition (known layout first)."""
        if self._bucket_nums is None:
            entries = FileStoreScan(self.table).plan(self.table.snapshot_manager.latest_snapshot())
            self._bucket_nums = postpone.BucketNums.of(self.table, entries)
        return self._bucket_nums(partition)

    def total_buckets_of(self, partition: bytes) -> int:
        """``_TOTAL_BUCKETS`` of the files written into ``partition``."""
        if self.postpone and not self.staged:
            return self._partition_buckets(partition)
        return self.total_buckets

    def _dynamic_assigner(self) -> Any:
        if self._assigner is None:
            # Java's overwrite ignores previous files: no HASH index is loaded or replaced
            self._assigner = DynamicBucketAssigner(self.table, ignore_existing=self.overwrite)
        return self._assigner

    # -- buffering ----------------------------------------------------------------------

    def _max_sequence_numbers(self) -> dict[tuple[bytes, int], int]:
        """Max ``_MAX_SEQUENCE_NUMBER`` per (partition, bucket) of the latest snapshot.

        Read on the columnar plan, four columns grouped in Arrow: a write into a table of a
        million files builds no entry objects (only :meth:`base_files` does, for the written
        partitions)."""
        if self._max_seqs is None:
            out: dict[tuple[bytes, int], int] = {}
            ignore_previous = self.overwrite or self.unaware or self.staged  # Java: writers start empty
            snapshot = None if ignore_previous else self.table.snapshot_manager.latest_snapshot()
            if snapshot is not None:
                live = FileStoreScan(self.table).plan_table(
                    snapshot, columns=["_PARTITION", "_BUCKET", "_TOTAL_BUCKETS", "_MAX_SEQUENCE_NUMBER"])
                seqs = live.group_by(["_PARTITION", "_BUCKET"], use_threads=False).aggregate(
                    [("_MAX_SEQUENCE_NUMBER", "max")])
                out = dict(zip(zip(seqs.column("_PARTITION").to_pylist(), seqs.column("_BUCKET").to_pylist(),
                                   strict=True),
                               seqs.column("_MAX_SEQUENCE_NUMBER_max").to_pylist(), strict=True))
                layouts = live.group_by(["_PARTITION", "_TOTAL_BUCKETS"], use_threads=False).aggregate([])
                for part, total in zip(layouts.column("_PARTITION").to_pylist(),
                                       layouts.column("_TOTAL_BUCKETS").to_pylist(), strict=True):
                    self._base_total_buckets.setdefault(part, set()).add(total)
            self._base_snapshot = snapshot
            self._max_seqs = out
        return self._max_seqs

    def _append(self, partition: bytes, part_dir: str, bucket: int, data: pa.Table, kinds: Any) -> None:
        import numpy as np
        import pyarrow as pa

        key = (partition, bucket)
        b = self.buckets.get(key)
        if b is None:
            start = self._max_sequence_numbers().get(key, -1) + 1
            fixed = self.num_buckets > 0 or (self.postpone and not self.staged)
            if fixed and partition not in self._layout_checked:
                check_bucket_layout(self.table, partition, self._base_total_buckets.get(partition, ()), "write",
                                    self.total_buckets_of(partition))
                self._layout_checked.add(partition)
            b = self.buckets[key] = _Bucket(partition, part_dir, bucket, start)
        n = data.num_rows
        if self.staged:  # Java's postpone writer numbers nothing: compaction replays file order
            seq = pa.array(np.full(n, postpone.STAGED_SEQUENCE, dtype=np.int64))
        else:
            seq = pa.array(np.arange(b.next_seq, b.next_seq + n, dtype=np.int64))
            b.next_seq += n
        kind_arr = pa.array(np.zeros(n, dtype=np.int8) if kinds is None else kinds, type=pa.int8())
        chunk = data.append_column(SEQUENCE_NUMBER, seq).append_column(VALUE_KIND, kind_arr)
        size = chunk.nbytes
        b.chunks.append(chunk)
        b.buffered_bytes += size
        self.buffered_bytes += size

    # -- flushing -----------------------------------------------------------------------

    def _flush(self, b: _Bucket) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if not b.chunks:
            return
        chunks, b.chunks = b.chunks, []
        with self._lock:
            self.buffered_bytes -= b.buffered_bytes
        b.buffered_bytes = 0
        records = pa.concat_tables(chunks).combine_chunks()
        del chunks
        if not self.is_pk:
            self._write_run(b, records.drop_columns([VALUE_KIND]), changelog=False)
            return
        if self.staged:  # neither sorted nor merged (Java's PostponeBucketWriter)
            self._write_run(b, records, changelog=False)
            return
        order = pc.sort_indices(
            records, sort_keys=[(k, "ascending") for k in self.trimmed_pk] + [(SEQUENCE_NUMBER, "ascending")]
        )
        records = records.take(order)
        if self.changelog_input:
            self._write_run(b, records, changelog=True)
        merged = merge(records, list(self.trimmed_pk), self.schema, self.options, drop_deletes=False,
                       lone_records_as_is=True, presorted=True)
        self._write_run(b, merged, changelog=False)

    def _flush_all(self, buckets: list[_Bucket]) -> None:
        """Flush independent buckets on a few threads: pyarrow's sort, take and Parquet
        encoding release the GIL, so the files of one commit are encoded in parallel."""
        if len(buckets) <= 1 or _FLUSH_THREADS <= 1:
            for b in buckets:
                self._flush(b)
            return
        # largest first, so the long ones do not start last
        buckets = sorted(buckets, key=lambda b: -b.buffered_bytes)
        # joined however this ends, so abort() sees every file the flushes wrote
        with worker_pool(min(_FLUSH_THREADS, len(buckets)), "paimon-flush") as pool:
            futures = [pool.submit(self._flush, b) for b in buckets]
        for f in futures:  # all have finished here; re-raise the first failure
            f.result()

    def _write_run(self, b: _Bucket, records: pa.Table, changelog: bool) -> None:
        """One sorted run as level-0 files through the merge tree's rolling writer: rolled at
        ``target-file-size``, stats and key range as Java's writer, the configured file
        indexes, ``changelog-file.*`` options for changelog files."""
        if records.num_rows == 0:
            return
        if self.staged:
            # one writer per bucket for the whole write, as Java's postpone writer: its files
            # share one uuid and count up, the order postpone compaction replays them in
            if b.staged is None:
                b.staged = self._rolling_writer(b, changelog)
            b.staged.write(records)  # abort() aborts it; prepare_commit() closes it
            return
        w = self._rolling_writer(b, changelog)
        try:
            w.write(records)
            metas = w.close()
        finally:
            with self._lock:
                self.written.extend(w.written)  # abort() deletes them if the write is not committed
        self._record(b, metas, changelog)

    def _rolling_writer(self, b: _Bucket, changelog: bool) -> RollingFileWriter | BlobRollingFileWriter:
        if self.blob_fields:
            return BlobRollingFileWriter(self.table, b.partition, b.bucket, schema=self.schema, options=self.options,
                                         blob_fields=self.blob_fields, partition_dir=b.partition_dir,
                                         target_file_size=self.target_file_size)
        return RollingFileWriter(
            self.table, b.partition, b.bucket, kind=KV if self.is_pk else APPEND, level=0,
            file_source=FileSource.APPEND, schema=self.schema, options=self._staged_options or self.options,
            target_file_size=self.target_file_size, changelog=changelog, partition_dir=b.partition_dir,
            file_format=postpone.STAGED_FORMAT if self.staged else None,
            sequence_per_file=self.data_evolution,  # Java: a new counter from 0 per data-evolution file
        )

    def _record(self, b: _Bucket, metas: list[DataFileMeta], changelog: bool) -> None:
        with self._lock:
            for meta in metas:
                if changelog:
                    b.changelog_files.append(meta)
                    self.summary.changelog_files += 1
                else:
                    b.new_files.append(meta)
                    self.summary.files += 1
                    self.summary.record_count += meta.row_count
                self.summary.bytes += meta.file_size

    # -- commit side --------------------------------------------------------------------

    def prepare_commit(self) -> list[CommitMessage]:
        """Flush everything; one CommitMessage per (partition, bucket) written (+ index changes)."""
        self._flush_all([b for b in self.buckets.values() if b.chunks])
        for b in self.buckets.values():
            if b.staged is not None:
                w, b.staged = b.staged, None
                try:
                    metas = w.close()
                finally:
                    self.written.extend(w.written)
                self._record(b, metas, changelog=False)
        messages: dict[tuple[bytes, int], CommitMessage] = {}
        for key, b in self.buckets.items():
            if b.new_files or b.changelog_files:
                messages[key] = CommitMessage(
                    b.partition, b.bucket, self.total_buckets_of(b.partition), list(b.new_files), [],
                    list(b.changelog_files)
                )
        if self._assigner is not None:
            for partition, bucket, new_index, old_index in self._assigner.index_changes():
                m = messages.get((partition, bucket))
                if m is None:
                    m = messages[(partition, bucket)] = CommitMessage(partition, bucket, self.total_buckets)
                m.new_index_files.append(new_index)
                if old_index is not None:
                    m.deleted_index_files.append(old_index)
        self._closed = True
        return list(messages.values())

    @property
    def restored_snapshot_id(self) -> int | None:
        """The snapshot this fixed-bucket writer restored its buckets from (0: the table was
        empty), for the commit's layout check; None when the write does not build on the
        existing layout (overwrite, dynamic or unaware buckets) or restored nothing yet."""
        fixed = self.num_buckets > 0 or (self.postpone and not self.staged)
        if self.overwrite or not fixed or self._max_seqs is None:
            return None
        return self._base_snapshot.id if self._base_snapshot is not None else 0

    def compaction_table(self) -> FileStoreTable:
        """The table as this writer sees it (dynamic options applied) for compaction executors."""
        if self.schema is self.table.schema:
            return self.table
        return self.table.with_schema(self.schema)

    @property
    def base_snapshot(self) -> Snapshot | None:
        """The snapshot the writers restored their buckets from (None: an overwrite, a
        bucket-unaware writer or an empty table), read with the first row written."""
        return self._base_snapshot

    def base_files(self, partition: bytes, bucket: int) -> list[DataFileMeta]:
        """Live files of a bucket in :attr:`base_snapshot`: the levels a compaction of the
        written bucket starts from (read once for every written partition)."""
        snapshot = self._base_snapshot
        if snapshot is None:
            return []
        if partition not in self._base_files_partitions:
            wanted = ({p for p, _ in self.buckets} | {partition}) - self._base_files_partitions
            for e in FileStoreScan(self.table).plan(snapshot, ScanFilter(partition=wanted.__contains__)):
                self._base_files.setdefault((e.partition, e.bucket), []).append(e.file)
            self._base_files_partitions |= wanted
        return self._base_files.get((partition, bucket), [])

    def abort(self) -> None:
        """Delete every file this writer wrote (best effort); the write is then void."""
        self._closed = True
        for b in self.buckets.values():
            b.chunks = []
            if b.staged is not None:
                self.written.extend(b.staged.written)
                b.staged.abort()
                b.staged = None
        self.buffered_bytes = 0
        discard(self.file_io, self.written)
        self._remove_empty_dirs(self.written)
        self.written = []
        if self._assigner is not None:
            self._assigner.abort()

    def _remove_empty_dirs(self, paths: list[str]) -> None:
        """Bucket and partition directories this write created and left empty, deepest first."""
        root = self.table.data_root.rstrip("/")
        dirs: set[str] = set()
        for p in paths:
            d = parent(p)
            while d.rstrip("/") != root and d.startswith(root + "/"):
                dirs.add(d)
                d = parent(d)
        for d in sorted(dirs, key=lambda x: x.count("/"), reverse=True):
            self.file_io.delete_empty_dir(d)

    def close(self) -> None:
        """Release buffers (files stay; pair with :meth:`abort` when not committing)."""
        for b in self.buckets.values():
            b.chunks = []
            if b.staged is not None:  # an unfinished staged file is of no use to anyone
                self.written.extend(b.staged.written)
                b.staged.abort()
                b.staged = None
        self.buffered_bytes = 0
        self._closed = True


def _single_value(col: Any) -> bool:
    """True when a column holds one distinct value (incl. all-null) -- the common one-partition case."""
    import pyarrow.compute as pc

    if col.null_count == len(col):
        return True
    if col.null_count:
        return False
    mm = pc.min_max(col)
    lo, hi = mm["min"], mm["max"]
    return lo.is_valid and lo == hi and not _is_nan(lo)


def _is_nan(s: Any) -> bool:
    v = s.as_py()
    return isinstance(v, float) and v != v


def _split_buckets(ids: np.ndarray) -> list[tuple[int, np.ndarray | None]]:
    """[(bucket, row indices in input order or None for all rows)]."""
    import numpy as np

    if len(ids) == 0:
        return []
    first = int(ids[0])
    if (ids == first).all():
        return [(first, None)]
    small = ids.astype(np.int16) if 0 <= int(ids.min()) and int(ids.max()) < (1 << 15) else ids
    order = np.argsort(small, kind="stable")  # a radix sort for int16 keys
    sorted_ids = ids[order]
    cuts = np.flatnonzero(np.diff(sorted_ids)) + 1
    out: list[tuple[int, np.ndarray | None]] = []
    for part in np.split(order, cuts):
        out.append((int(ids[part[0]]), part))
    return out
