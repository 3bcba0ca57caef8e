"""Merge-on-read of a primary-key split (Java's ``MergeFileSplitRead``).

The split's files are read with their sequence and kind columns, stripped of the rows their
deletion vectors mark, evolved to the read schema by field id, prefiltered on key
conjuncts, concatenated and merged by the table's merge engine (deletes dropped unless
kept), given their partition columns from the split's partition (not decoded, as Java does,
where the merge keeps whole records), then filtered and projected. Decoding
(:meth:`MergeFileSplitRead.load`) and merging (:meth:`MergeFileSplitRead.merge`) are
separate steps; a read runs both for a split on a worker thread
(:meth:`MergeFileSplitRead.load_and_merge`), several splits at once.

A split whose files would decode to more than :data:`STREAM_SPLIT_BYTES` is not loaded
whole: it is read through the compaction's bounded k-way merge of its sorted runs
(:class:`core.mergetree.sort_merge.MergeReader`, the runs from Java's ``IntervalPartition``),
a key range at a time (:meth:`MergeFileSplitRead.read_streamed`), so a bucket bigger than
memory can be read as it can be compacted. Same rows, columns and order as the in-memory
path: each key range is complete (every record of its keys) and merged by the same
``merge()``; ranges come in key order, as the in-memory merge sorts. Every merge engine
streams.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa

from ..data.predicate import Predicate
from ..format.arrow_schema import KEY_PREFIX, arrow_field, key_fields, key_value_file_fields, system_fields
from ..format.data_file import evolve, read_data_file
from ..mergetree.changelog import LEVEL, keep_one_high_level
from ..mergetree.merge_function import merge
from ..mergetree.sort_merge import ARROW_PER_FILE_BYTE
from ..table.file_store_table import FileStoreTable
from .read_plan import Split
from .split_read import SplitRead, drop_deleted, file_columns

# A split whose files' estimated decoded size (file sizes x the Parquet/ORC-to-Arrow ratio the
# merge reader sizes its batches by) exceeds this is merged streaming: the in-memory merge
# holds the decoded records, their sorted copy and the result at once (~3x).
STREAM_SPLIT_BYTES = 256 << 20
STREAM_BATCH_ROWS: int | None = None  # rows per run batch of a streamed split (None: the reader's budget)


class MergeFileSplitRead(SplitRead):
    """Primary-key tables: one row per key. ``keep_deletes`` keeps the retract rows of the
    merge (``$audit_log``)."""

    def __init__(self, table: FileStoreTable, projection: list[str], predicate: Predicate | None, *,
                 with_row_kind: bool = False, keep_deletes: bool = False) -> None:
        super().__init__(table, projection, predicate, with_row_kind=with_row_kind)
        self.keep_deletes = keep_deletes

    def read(self, split: Split) -> Iterator[pa.Table]:
        if self.streams(split):
            yield from self.read_streamed(split)
            return
        t = self.load_and_merge(split)
        if t is not None:
            yield t

    def streams(self, split: Split) -> bool:
        """Whether ``split`` is merged streaming (:meth:`read_streamed`) rather than in memory."""
        return estimated_decoded_bytes(split) > STREAM_SPLIT_BYTES

    def read_streamed(self, split: Split) -> Iterator[pa.Table]:
        """The split's finished rows, a key range at a time, memory bounded by the merge
        reader's budget whatever the split's size; the rows of :meth:`load_and_merge`. The
        key prefilter is left to :meth:`finish`'s filter after the merge (a key's records all
        agree on its key columns, so the same keys go)."""
        from ..io import paths
        from ..mergetree.levels import interval_partition, key_function
        from ..mergetree.sort_merge import MergeReader

        from_row = set(self.partition_columns_from_row())
        need = [n for n in self.needed_columns() if n not in from_row]
        key_values = [kf.name[len(KEY_PREFIX):] for kf in key_fields(self.schema)]
        need += [k for k in key_values if k not in need]
        fields = [self.schema.field(n) for n in self.schema.field_names if n in need]
        key = key_function([f.type.copy(nullable=False)
                            for f in self.schema.logical_trimmed_primary_keys_type.fields])
        part_dir = paths.partition_path_for(self.schema, split.partition_values)
        dvs = self.deletion_vectors(split)
        one_high = self._keeps_one_high_level_record()
        for section in interval_partition(split.files, key):  # key ranges no file spans, in key order
            reader = MergeReader(self.table, part_dir, split.bucket, [list(r.files) for r in section],
                                 drop_delete=not self.keep_deletes, deletion_vectors=dvs,
                                 batch_rows=STREAM_BATCH_ROWS, schema=self.schema, options=self.options,
                                 fields=fields, one_high_level=one_high)
            for chunk in reader:
                if chunk.merged is not None and chunk.merged.num_rows:
                    yield self._finish_merged(chunk.merged, split)

    def load_and_merge(self, split: Split) -> pa.Table | None:
        """The split's rows, finished: what a worker thread computes per split."""
        return self.merge(self.load(split), split)

    def partition_columns_from_row(self) -> list[str]:
        """Partition columns filled from the split's partition row instead of decoded, as
        Java's ``KeyValueFileReaderFactory`` fills them (``PartitionUtils``): one value per
        split, so where the merge keeps whole records (deduplicate, first-row) and no
        ``sequence.field`` or key names them, every merged row holds that value anyway."""
        if self.options.merge_engine not in ("deduplicate", "first-row"):
            return []
        keys = {kf.name[len(KEY_PREFIX):] for kf in key_fields(self.schema)}
        taken = keys | set(self.options.sequence_field)
        return [k for k in self.schema.partition_keys if k not in taken]

    def merge_columns(self) -> set[str] | None:
        engine = self.options.merge_engine
        if engine not in ("deduplicate", "first-row"):
            return None
        return set(self.schema.primary_keys) | set(self.options.sequence_field)

    def load(self, split: Split) -> pa.Table | None:
        """The records of a split's files (deletion vectors applied, evolved, key-prefiltered),
        concatenated in file order: the decode half of a primary-key split.

        Keys come from the VALUE columns, never from the files' ``_KEY_<k>`` copies, as Java
        1.x's reader does (``FormatReaderMapping.trimKeyFields``): thin-mode files and
        pypaimon-rust 0.4's files have no ``_KEY_`` columns at all (without the table
        option saying so), and where both exist they hold the same values.
        """
        from_row = set(self.partition_columns_from_row())
        need = [n for n in self.needed_columns() if n not in from_row]
        keys = key_fields(self.schema)
        key_values = [kf.name[len(KEY_PREFIX):] for kf in keys]
        need += [k for k in key_values if k not in need]  # keys are read from the value columns
        target = system_fields() + [self.schema.field(n) for n in need]
        dvs = self.deletion_vectors(split)
        key_pred = self._key_prefilter("")
        one_high = self._keeps_one_high_level_record()
        parts = []
        for meta in split.files:
            fs = self.file_schemas.schema(meta.schema_id)
            file_fields = [f for f in key_value_file_fields(fs) if not f.name.startswith(KEY_PREFIX)]
            cols = file_columns(file_fields, target)
            t = read_data_file(self.table.file_io, self.file_path(split, meta), file_fields, cols)
            dv = dvs.get(meta.file_name)
            if dv is not None:
                t = drop_deleted(t, dv, 0)
            t = evolve(t, file_fields, target)
            if key_pred is not None:
                t = key_pred.filter(t)
            if one_high:
                t = t.append_column(LEVEL, pa.repeat(pa.scalar(meta.level, pa.int32()), t.num_rows))
            parts.append(t)
        if not parts:
            return None
        data = pa.concat_tables(parts) if len(parts) > 1 else parts[0]
        if data.num_rows == 0:
            return None
        # merge input: _KEY_ columns (copies of the key values), system columns, values
        arrays = [data.column(v) for v in key_values] + list(data.columns)
        merged_input = pa.Table.from_arrays(arrays, names=[k.name for k in keys] + data.column_names)
        if one_high:
            merged_input = keep_one_high_level(merged_input, [k.name for k in keys], self.options)
            merged_input = merged_input.drop_columns([LEVEL])
        return merged_input

    def merge(self, data: pa.Table | None, split: Split) -> pa.Table | None:
        """The merge half of a primary-key split (``data`` from :meth:`load`): one row per
        key, deletes dropped, partition columns filled, finished."""
        if data is None:
            return None
        key_names = [f.name for f in key_fields(self.schema)]
        merged = merge(data, key_names, self.schema, self.options, drop_deletes=not self.keep_deletes,
                       lone_records_as_is=True)
        del data
        return self._finish_merged(merged, split)

    def _finish_merged(self, merged: pa.Table, split: Split) -> pa.Table:
        """Merged records (merge layout) -> the read's rows: partition columns, filter, projection."""
        needed = set(self.needed_columns())
        from_row = [self.schema.field(n) for n in self.partition_columns_from_row() if n in needed]
        for name, value in self._partition_constants(split, from_row).items():
            typ = arrow_field(self.schema.field(name)).type
            merged = merged.append_column(name, pa.repeat(value.cast(typ), merged.num_rows))
        return self.finish(merged)

    def _keeps_one_high_level_record(self) -> bool:
        """Java wraps the merge function in ``LookupMergeFunction`` when the table needs lookup
        (not first-row): every record above level 0 already holds the merged value of the
        levels below it, so only one of a key's high-level records may take part, or
        aggregation / partial-update would count older values twice."""
        from ..mergetree.compact_strategy import lookup_mode
        return lookup_mode(self.options) and self.options.merge_engine != "first-row"

    def _key_prefilter(self, prefix: str) -> Predicate | None:
        """Conjuncts on trimmed key columns, applied before merging (all versions of a key agree)."""
        if self.predicate is None or self.keep_deletes:
            return None
        trimmed = self.schema.trimmed_primary_keys
        kp = self.predicate.only_on(trimmed)
        if kp is None:
            return None
        return kp.rename({k: prefix + k for k in trimmed})


def estimated_decoded_bytes(split: Split) -> int:
    """What the split's files take decoded (Arrow), estimated from their sizes on disk."""
    return int(sum(f.file_size for f in split.files) * ARROW_PER_FILE_BYTE)


def stream_split_mib() -> float:
    """:data:`STREAM_SPLIT_BYTES` in MiB (what ``read --explain`` says)."""
    return round(STREAM_SPLIT_BYTES / (1 << 20), 1)
