"""TableRead: the rows of a table at a snapshot, as Java Paimon's batch read returns them.

Plan (metadata only): the snapshot's live files -- of a postpone-bucket table only those in
real buckets, as Java's batch scan -- pruned in Java's order: partition values,
bucket (an Equal/IN predicate on every bucket-key column), level 0 for deletion-vector and
first-row primary-key tables (Java's batch scan hides it), then file stats:

* append tables: each file's value stats against the whole predicate;
* primary-key tables (``KeyValueFileStoreScan``): value stats only where a key cannot hide in
  another file -- level > 0 files of DV / first-row tables, or a bucket whose files all sit in
  one level > 0 run; otherwise key stats against the key-only conjuncts, and a bucket is
  dropped whole when no file's value stats can match (except partial-update/aggregation
  without DVs, whose merged rows mix files);

then file indexes (``file-index.read.enabled``): a file whose bloom filter / bitmap / BSI
proves that no row matches is skipped (append files; level > 0 files of DV / first-row
tables), counted per index kind for ``--explain``.

Read: one (partition, bucket) at a time, so memory is bounded by the largest bucket. Append
files are streamed batch by batch. Primary-key files are read with their key, sequence and
kind columns, evolved to the current schema by field id, stripped of rows their deletion
vectors mark, concatenated and merged by the table's merge engine (deletes dropped), then
filtered and projected. Everything on the data path is pyarrow compute.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotYetSupported
from ..io import paths
from .scan import is_postpone_table, split_postponed

if TYPE_CHECKING:
    import pyarrow as pa

    from ..data.predicate import Predicate
    from ..data.types import DataField
    from ..index.deletion_vectors import DeletionVector
    from ..manifest.index_manifest import DeletionVectorMeta
    from ..manifest.manifest import DataFileMeta, ManifestEntry
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable, TimeTravel
    from ..utils.rows import Rows

ROW_KIND_COLUMN = "rowkind"
ROW_KINDS = ("+I", "-U", "+U", "-D")
_DV_INDEX_TYPE = "DELETION_VECTORS"
_PREFETCH = 2  # primary-key splits decoded ahead of the merge (worker threads)


@dataclass
class Split:
    """The files of one (partition, bucket) to read, with their deletion vectors' locations."""

    partition: bytes
    partition_values: list[Any]
    bucket: int
    files: list[DataFileMeta]
    # data file name -> (DV index file path, range in it)
    deletion_files: dict[str, tuple[str, DeletionVectorMeta]] = field(default_factory=dict)

    @property
    def row_count(self) -> int:
        return sum(f.row_count for f in self.files)


@dataclass
class Counts:
    partitions: int = 0
    buckets: int = 0
    files: int = 0
    records: int = 0

    @staticmethod
    def of(entries: list[ManifestEntry]) -> Counts:
        return Counts(
            len({e.partition for e in entries}),
            len({(e.partition, e.bucket) for e in entries}),
            len(entries),
            sum(e.file.row_count for e in entries),
        )

    def minus(self, other: Counts) -> Counts:
        return Counts(self.partitions - other.partitions, self.buckets - other.buckets,
                      self.files - other.files, self.records - other.records)


@dataclass
class ReadPlan:
    """What a read will touch, and what each pruning step removed."""

    snapshot: Snapshot | None
    splits: list[Split]
    total: Counts = field(default_factory=Counts)
    # postpone-bucket files (bucket = -2): invisible to batch reads until compaction
    skipped_postponed: Counts = field(default_factory=Counts)
    postponed_selected: Counts = field(default_factory=Counts)  # of those, in the partitions read
    pruned_by_partition: Counts = field(default_factory=Counts)
    pruned_by_bucket: Counts = field(default_factory=Counts)
    skipped_level0: Counts = field(default_factory=Counts)
    pruned_by_stats: Counts = field(default_factory=Counts)
    # files the file indexes proved empty of matches, per index kind (bloom-filter, bitmap,
    # bsi; "file index" when only their combination did)
    pruned_by_index: dict[str, Counts] = field(default_factory=dict)
    remaining: Counts = field(default_factory=Counts)


class TableRead:
    """Read ``table`` at ``at`` (latest by default): projection, ``--where`` predicate, limit.

    ``keep_deletes`` keeps retract rows of the merge (``$audit_log``), ``with_row_kind`` adds
    a leading ``rowkind`` column, ``top_level_only`` reads only the max level of primary-key
    tables (``$ro``), ``all_levels`` reads level 0 of deletion-vector / first-row tables too
    (the rows a full compaction would merge, for rewrites that must not lose them).
    """

    def __init__(
        self,
        table: FileStoreTable,
        at: TimeTravel | None = None,
        projection: list[str] | None = None,
        predicate: Predicate | None = None,
        limit: int | None = None,
        *,
        keep_deletes: bool = False,
        with_row_kind: bool = False,
        top_level_only: bool = False,
        all_levels: bool = False,
    ) -> None:
        self.snapshot = table.resolve_snapshot(at)
        if at is not None and not at.is_latest:
            table = _with_schema(table, table.schema_at(self.snapshot))  # Java time travel reads that schema
        self.table = table
        self.schema = table.schema
        self.options = table.options
        names = self.schema.field_names
        if projection is not None:
            unknown = [c for c in projection if c not in names]
            if unknown:
                raise InvalidInput(f"--select: unknown column(s) {', '.join(unknown)}; columns: {', '.join(names)}")
            if not projection:
                raise InvalidInput("--select: no columns given")
        self.projection = list(projection) if projection is not None else list(names)
        if predicate is not None:
            unknown = sorted(predicate.columns() - set(names))
            if unknown:
                raise InvalidInput(f"--where: unknown column(s) {', '.join(unknown)}")
        self.predicate = predicate
        if limit is not None and limit < 0:
            raise InvalidInput(f"--limit must be >= 0, got {limit}")
        self.limit = limit
        self.keep_deletes = keep_deletes
        self.with_row_kind = with_row_kind
        self.top_level_only = top_level_only
        self.all_levels = all_levels
        self.is_pk = bool(self.schema.primary_keys)
        self._plan: ReadPlan | None = None

    # -- output schema -------------------------------------------------------------------

    def _field(self, name: str) -> DataField:
        return self.schema.field(name)

    def output_schema(self) -> pa.Schema:
        import pyarrow as pa

        from ..format.arrow_schema import arrow_field

        fields = [arrow_field(self._field(n)) for n in self.projection]
        if self.with_row_kind:
            fields.insert(0, pa.field(ROW_KIND_COLUMN, pa.string(), nullable=False))
        return pa.schema(fields)

    # -- planning ------------------------------------------------------------------------

    def plan(self) -> ReadPlan:
        if self._plan is None:
            self._plan = self._make_plan()
        return self._plan

    def _partition_values(self) -> Any:
        from ..data.binary_row import deserialize

        types = [f.type for f in self.schema.logical_partition_type.fields]
        cache: dict[bytes, list[Any]] = {}

        def values(part: bytes) -> list[Any]:
            v = cache.get(part)
            if v is None:
                v = cache[part] = deserialize(part, types) if types else []
            return v

        return values

    def _make_plan(self) -> ReadPlan:
        snap = self.snapshot
        entries = self.table.store_scan.plan(snap)
        plan = ReadPlan(snap, [], total=Counts.of(entries))
        entries, postponed = split_postponed(self.schema, entries)
        plan.skipped_postponed = plan.total.minus(Counts.of(entries))
        values_of = self._partition_values()
        pred = self.predicate
        stats_pred = self._stats_predicate()

        # 1. partitions
        if pred is not None and self.schema.partition_keys:
            pkeys = self.schema.partition_keys
            verdict: dict[bytes, bool] = {}

            def partition_ok(part: bytes) -> bool:
                ok = verdict.get(part)
                if ok is None:
                    st = {k: (v, v, 1 if v is None else 0, 1) for k, v in zip(pkeys, values_of(part))}
                    ok = verdict[part] = pred.might_match(st)
                return ok

            kept = [e for e in entries if partition_ok(e.partition)]
            plan.pruned_by_partition = Counts.of(entries).minus(Counts.of(kept))
            entries = kept
            postponed = [e for e in postponed if partition_ok(e.partition)]
        plan.postponed_selected = Counts.of(postponed)

        # 2. buckets
        selector = self._bucket_selector()
        if selector is not None:
            kept = [e for e in entries if selector(e.bucket, e.total_buckets)]
            plan.pruned_by_bucket = Counts.of(entries).minus(Counts.of(kept))
            entries = kept

        # 3. levels (Java's batch scan of DV / first-row tables; $ro's top level)
        if self.is_pk:
            before = Counts.of(entries)
            if self.top_level_only:
                top = self.options.num_levels - 1
                entries = [e for e in entries if e.file.level == top]
            elif self._skip_level0():
                entries = [e for e in entries if e.file.level > 0]
            plan.skipped_level0 = before.minus(Counts.of(entries))

        # 4. stats
        if stats_pred is not None:
            before = Counts.of(entries)
            entries = self._filter_by_stats(entries, stats_pred)
            plan.pruned_by_stats = before.minus(Counts.of(entries))

        # 5. file indexes (bloom filter / bitmap / BSI), embedded or in `.index` extra files
        if stats_pred is not None and self.options.file_index_read_enabled:
            entries, by_kind = self._filter_by_index(entries, stats_pred)
            plan.pruned_by_index = {k: Counts.of(v) for k, v in by_kind.items()}

        plan.remaining = Counts.of(entries)
        plan.splits = self._splits(entries, values_of)
        return plan

    def _skip_level0(self) -> bool:
        if self.all_levels:
            return False
        return self.options.deletion_vectors_enabled or self.options.merge_engine == "first-row"

    def _stats_predicate(self) -> Predicate | None:
        """The predicate minus conjuncts on columns with a default value (stats see their NULLs)."""
        if self.predicate is None:
            return None
        defaults = set(self.options.field_default_values())
        if not defaults:
            return self.predicate
        from ..data.predicate import and_

        keep = [c for c in self.predicate.conjuncts() if not (c.columns() & defaults)]
        return and_(keep) if keep else None

    def _bucket_selector(self) -> Any:
        """``(bucket, total_buckets) -> keep?`` for a predicate pinning the bucket key, else None."""
        if self.predicate is None or self.schema.bucket <= 0:
            return None
        keys = self.schema.bucket_keys
        if not keys:
            return None
        tuples = self.predicate.bucket_key_values(keys)
        if tuples is None:
            return None
        from ..data.binary_row import bucket_of

        types = [self._field(k).type for k in keys]
        selected: dict[int, set[int]] = {}

        def keep(bucket: int, total: int) -> bool:
            if total <= 0:
                return True
            s = selected.get(total)
            if s is None:
                s = selected[total] = {bucket_of(list(t), types, total) for t in tuples}
            return bucket in s

        return keep

    def _filter_by_stats(self, entries: list[ManifestEntry], pred: Predicate) -> list[ManifestEntry]:
        from ..manifest.stats_reader import StatsReader

        sr = StatsReader(self.table)

        def value_ok(e: ManifestEntry) -> bool:
            return pred.might_match(sr.value_column_stats(e.file))

        if not self.is_pk:
            return [e for e in entries if value_ok(e)]

        dv_or_first_row = self._skip_level0()
        key_pred = pred.only_on(self.schema.trimmed_primary_keys)

        def file_ok(e: ManifestEntry) -> bool:  # KeyValueFileStoreScan.filterByStats
            if dv_or_first_row and e.file.level > 0:
                return value_ok(e)
            if key_pred is not None:
                return key_pred.might_match(sr.key_column_stats(e.file))
            return True

        kept = [e for e in entries if file_ok(e)]
        groups: dict[tuple[bytes, int], list[ManifestEntry]] = {}
        for e in kept:
            groups.setdefault((e.partition, e.bucket), []).append(e)
        engine = self.options.merge_engine
        mixing = not self.options.deletion_vectors_enabled and engine in ("partial-update", "aggregation")
        out: list[ManifestEntry] = []
        for group in groups.values():  # filterWholeBucketByStats
            levels = {e.file.level for e in group}
            if len(group) <= 1 or (len(levels) == 1 and 0 not in levels):
                out += [e for e in group if value_ok(e)]
            elif mixing or any(value_ok(e) for e in group):
                out += group
        return out

    def _filter_by_index(
        self, entries: list[ManifestEntry], pred: Predicate
    ) -> tuple[list[ManifestEntry], dict[str, list[ManifestEntry]]]:
        """Drop files whose file index proves no row matches (Java: the embedded index at scan,
        the ``.index`` file at read). Primary-key files only where a file is filtered on its
        own values (level > 0 of DV / first-row tables): elsewhere a row may be merged away."""
        from ..fileindex.evaluator import INDEX_KINDS, evaluate, remains
        from ..fileindex.format import FileIndexContainer, index_file_names
        from ..manifest.stats_reader import StatsReader

        sr = StatsReader(self.table)
        current = {f.name: f for f in self.schema.fields}
        values_of = self._partition_values()
        per_file = self.is_pk and self._skip_level0()

        def candidate(e: ManifestEntry) -> bool:
            m = e.file
            if self.is_pk and not (per_file and m.level > 0):
                return False
            return m.embedded_index is not None or bool(index_file_names(m.extra_files))

        def verdict(e: ManifestEntry) -> str | None:
            """None: keep; else the index kind that pruned it."""
            m = e.file
            try:
                if m.embedded_index is not None:
                    container = FileIndexContainer(m.embedded_index)
                else:
                    name = index_file_names(m.extra_files)[0]
                    part_dir = paths.partition_path_for(self.schema, values_of(e.partition))
                    path = paths.data_file_path(self.table.path, part_dir, e.bucket, name)
                    container = FileIndexContainer(self.table.file_io.read_bytes(path), path)
                fs = sr.schema(m.schema_id)
                by_id = {f.id: f for f in fs.fields}
                file_fields = {f.name: f for f in fs.fields}

                def name_in_file(n: str) -> str | None:
                    f = current.get(n)
                    ff = by_id.get(f.id) if f is not None else None
                    return ff.name if ff is not None else None

                if remains(evaluate(container, pred, file_fields, name_in_file)):
                    return None
                for kind in INDEX_KINDS:
                    if not remains(evaluate(container, pred, file_fields, name_in_file, types={kind})):
                        return kind
                return "file index"
            except Exception:  # noqa: BLE001 - an index we cannot read never hides rows
                return None

        todo = [e for e in entries if candidate(e)]
        if not todo:
            return entries, {}
        if len(todo) > 8:
            from ..utils.workers import map_ordered

            verdicts = dict(zip((id(e) for e in todo), map_ordered(verdict, todo, 4, "paimon-index")))
        else:
            verdicts = {id(e): verdict(e) for e in todo}
        kept: list[ManifestEntry] = []
        pruned: dict[str, list[ManifestEntry]] = {}
        for e in entries:
            v = verdicts.get(id(e))
            if v is None:
                kept.append(e)
            else:
                pruned.setdefault(v, []).append(e)
        return kept, pruned

    def _splits(self, entries: list[ManifestEntry], values_of: Any) -> list[Split]:
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e.file)
        dvs = self._deletion_files() if groups else {}
        splits = []
        for (part, bucket), files in groups.items():
            files.sort(key=lambda f: f.min_sequence_number)  # stable: ties keep commit order, as Java
            splits.append(Split(part, values_of(part), bucket, files, dvs.get((part, bucket), {})))
        return splits

    def _deletion_files(self) -> dict[tuple[bytes, int], dict[str, tuple[str, DeletionVectorMeta]]]:
        """DV ranges per (partition, bucket); Java applies them only when the option is on."""
        if not self.options.deletion_vectors_enabled:
            return {}
        out: dict[tuple[bytes, int], dict[str, tuple[str, DeletionVectorMeta]]] = {}
        in_bucket_dir = self.options.index_file_in_data_file_dir
        values_of = self._partition_values()
        for ie in self.table.store_scan.index_entries(self.snapshot):
            f = ie.index_file
            if f.index_type != _DV_INDEX_TYPE or not f.dv_ranges:
                continue
            if f.external_path:
                path = f.external_path
            elif in_bucket_dir:  # 1.x index-file-in-data-file-dir: next to the data files
                part_dir = paths.partition_path_for(self.schema, values_of(ie.partition))
                path = paths.data_file_path(self.table.path, part_dir, ie.bucket, f.file_name)
            else:
                path = paths.join(paths.index_dir(self.table.path), f.file_name)
            per = out.setdefault((ie.partition, ie.bucket), {})
            for m in f.dv_ranges:
                per[m.data_file_name] = (path, m)
        return out

    # -- explain -------------------------------------------------------------------------

    def explain(self) -> Rows:
        from ..utils.rows import Rows

        p = self.plan()
        steps = [("total", p.total)]
        if is_postpone_table(self.schema):
            steps.append(("skipped postpone bucket", p.skipped_postponed))
        steps += [
            ("pruned by partition", p.pruned_by_partition),
            ("pruned by bucket", p.pruned_by_bucket),
            ("skipped level 0" if not self.top_level_only else "skipped below top level", p.skipped_level0),
            ("pruned by stats", p.pruned_by_stats),
        ]
        for kind in ("bloom-filter", "bitmap", "bsi", "file index"):
            steps.append((f"pruned by {kind} index" if kind != "file index" else "pruned by file indexes combined",
                          p.pruned_by_index.get(kind, Counts())))
        steps.append(("remaining", p.remaining))
        rows = [{"step": name, "partitions": c.partitions, "buckets": c.buckets, "files": c.files,
                 "records": c.records} for name, c in steps]
        return Rows(["step", "partitions", "buckets", "files", "records"], rows)

    # -- reading -------------------------------------------------------------------------

    def iter_batches(self) -> Iterator[pa.RecordBatch]:
        """Result batches, one (partition, bucket) at a time, stopping at the limit."""
        self._check_postpone_merge_on_read()  # before the caller opens any output
        return self._iter_batches()

    def _check_postpone_merge_on_read(self) -> None:
        """Refuse a table read that ``postpone.merge-on-read`` asks to merge postponed rows into.

        Java 2.x merges them only in its Flink / Spark batch sources (routing each postponed
        record to its real bucket); its core scan, system tables and pypaimon leave them out.
        Without them our rows would differ from what the table's owner configured.
        """
        if self.keep_deletes or self.with_row_kind or self.top_level_only:
            return  # $audit_log / $binlog / $ro: Java's system tables never merge the postpone bucket
        n = self.plan().postponed_selected.files
        if n and self.options.get_bool("postpone.merge-on-read"):
            raise NotYetSupported(
                f"read: {self.table.identifier} sets postpone.merge-on-read = true and {n} postponed file(s) "
                "(bucket = -2) await compaction; merging the postpone bucket into reads is not supported: "
                "compact the table with Java Paimon first, or set postpone.merge-on-read = false to read only the "
                "compacted rows")

    def _iter_batches(self) -> Iterator[pa.RecordBatch]:
        remaining = self.limit
        if remaining == 0:
            return
        schema = self.output_schema()
        with contextlib.closing(self._split_tables()) as tables:  # its prefetch pool ends with us
            for t in tables:
                if t.num_rows == 0:
                    continue
                if remaining is not None and t.num_rows > remaining:
                    t = t.slice(0, remaining)
                t = t.cast(schema) if not t.schema.equals(schema) else t
                yield from t.to_batches()
                if remaining is not None:
                    remaining -= t.num_rows
                    if remaining <= 0:
                        return

    def to_arrow(self) -> pa.Table:
        import pyarrow as pa

        schema = self.output_schema()
        return pa.Table.from_batches(list(self.iter_batches()), schema=schema)

    def _split_tables(self) -> Iterator[pa.Table]:
        """Result tables split by split. Primary-key splits are decoded ahead on worker
        threads while the current one merges (pyarrow's Parquet decode, sort and take release
        the GIL); at most ``_PREFETCH`` decoded splits wait, so memory stays bounded."""
        splits = self.plan().splits
        if not self.is_pk or len(splits) <= 1:
            for split in splits:
                yield from self._read_split(split)
            return
        from ..utils.workers import prefetch

        with contextlib.closing(prefetch(self._load_pk_split, splits, _PREFETCH, "paimon-read")) as loaded:
            for data in loaded:
                t = self._merge_pk(data)
                del data
                if t is not None:
                    yield t

    def _read_split(self, split: Split) -> Iterator[pa.Table]:
        if self.is_pk:
            t = self._read_pk_split(split)
            if t is not None:
                yield t
        else:
            yield from self._read_append_split(split)

    # value columns to read: output, predicate, and what the merge engine needs
    def _needed_columns(self) -> list[str]:
        names = self.schema.field_names
        need = set(self.projection)
        if self.predicate is not None:
            need |= self.predicate.columns()
        if self.is_pk:
            engine = self.options.merge_engine
            if engine not in ("deduplicate", "first-row"):
                return list(names)
            need |= set(self.schema.primary_keys)
            need |= set(self.options.sequence_field)
        return [n for n in names if n in need]

    def _file_path(self, split: Split, meta: DataFileMeta) -> str:
        part_dir = paths.partition_path_for(self.schema, split.partition_values)
        return paths.data_file_path(self.table.path, part_dir, split.bucket, meta.file_name, meta.external_path)

    def _deletion_vectors(self, split: Split) -> dict[str, DeletionVector]:
        if not split.deletion_files:
            return {}
        from ..index.deletion_vectors import read_deletion_vectors

        names = {f.file_name for f in split.files}
        by_index: dict[str, list[DeletionVectorMeta]] = {}
        for name, (path, meta) in split.deletion_files.items():
            if name in names:
                by_index.setdefault(path, []).append(meta)
        out: dict[str, DeletionVector] = {}
        for path, metas in by_index.items():
            out.update(read_deletion_vectors(self.table.file_io, path, metas))
        return out

    def _finish(self, t: pa.Table) -> pa.Table:
        """Defaults, filter, projection, row kind: the tail shared by both table kinds."""
        import pyarrow as pa
        import pyarrow.compute as pc

        t = self._fill_defaults(t)
        if self.predicate is not None:
            t = t.filter(self.predicate.to_arrow_expression())
        cols = [t.column(n) for n in self.projection]
        names = list(self.projection)
        if self.with_row_kind:
            if "_VALUE_KIND" in t.column_names:  # merged primary-key rows carry their kind
                kind = pc.take(pa.array(ROW_KINDS), t.column("_VALUE_KIND").cast(pa.int8()))
            else:  # append rows are all inserts
                kind = pa.repeat(pa.scalar("+I"), t.num_rows)
            cols.insert(0, kind)
            names.insert(0, ROW_KIND_COLUMN)
        return pa.Table.from_arrays(cols, names=names)

    def _fill_defaults(self, t: pa.Table) -> pa.Table:
        """``fields.<c>.default-value``: Java's read fills a NULL with the column's default."""
        defaults = self.options.field_default_values()
        if not defaults:
            return t
        import pyarrow as pa
        import pyarrow.compute as pc

        from ..data.predicate_literal import RawLiteral as _Raw
        from ..data.predicate_literal import arrow_values as _arrow_values
        from ..data.predicate_literal import coerce_literal

        for name, text in defaults.items():
            if name not in t.column_names:
                continue
            f = self._field(name)
            v = coerce_literal(_Raw("str", text), f.type, name)
            vals, at = _arrow_values([v], f.type)
            col = t.column(name)
            filled = pc.fill_null(col, pa.scalar(vals[0], type=at).cast(col.type))
            t = t.set_column(t.column_names.index(name), name, filled)
        return t

    # -- append tables ---------------------------------------------------------------------

    def _read_append_split(self, split: Split) -> Iterator[pa.Table]:
        import pyarrow as pa

        from ..format.data_file import evolve, iter_data_file_batches
        from ..manifest.stats_reader import StatsReader

        sr = StatsReader(self.table)
        need = self._needed_columns()
        target = [self._field(n) for n in need]
        dvs = self._deletion_vectors(split)
        for meta in split.files:
            file_fields = list(sr.schema(meta.schema_id).fields)
            cols = _file_columns(file_fields, target)
            dv = dvs.get(meta.file_name)
            offset = 0
            for batch in iter_data_file_batches(self.table.file_io, self._file_path(split, meta), file_fields, cols):
                t = pa.Table.from_batches([batch])
                n = t.num_rows
                if dv is not None:
                    t = _drop_deleted(t, dv, offset)
                offset += n
                yield self._finish(evolve(t, file_fields, target))

    # -- primary-key tables ------------------------------------------------------------------

    def _read_pk_split(self, split: Split) -> pa.Table | None:
        return self._merge_pk(self._load_pk_split(split))

    def _load_pk_split(self, split: Split) -> pa.Table | None:
        """The records of a split's files (deletion vectors applied, evolved, key-prefiltered),
        concatenated in file order: the decode half of a primary-key split, which
        :meth:`iter_batches` runs on a worker thread for the next split.

        Keys come from the VALUE columns, never from the files' ``_KEY_<k>`` copies, as Java
        1.x's reader does (``FormatReaderMapping.trimKeyFields``): thin-mode files and
        pypaimon-rust 0.4's files have no ``_KEY_`` columns at all (without the table
        option saying so), and where both exist they hold the same values.
        """
        import pyarrow as pa

        from ..format.arrow_schema import KEY_PREFIX, key_fields, key_value_file_fields, system_fields
        from ..format.data_file import evolve, read_data_file
        from ..manifest.stats_reader import StatsReader

        sr = StatsReader(self.table)
        need = list(self._needed_columns())
        keys = key_fields(self.schema)
        key_values = [kf.name[len(KEY_PREFIX):] for kf in keys]
        need += [k for k in key_values if k not in need]  # keys are read from the value columns
        target = system_fields() + [self._field(n) for n in need]
        dvs = self._deletion_vectors(split)
        key_pred = self._key_prefilter("")
        one_high = self._keeps_one_high_level_record()
        from ..mergetree.changelog import LEVEL as _LEVEL
        parts = []
        for meta in split.files:
            fs = sr.schema(meta.schema_id)
            file_fields = [f for f in key_value_file_fields(fs) if not f.name.startswith(KEY_PREFIX)]
            cols = _file_columns(file_fields, target)
            t = read_data_file(self.table.file_io, self._file_path(split, meta), file_fields, cols)
            dv = dvs.get(meta.file_name)
            if dv is not None:
                t = _drop_deleted(t, dv, 0)
            t = evolve(t, file_fields, target)
            if key_pred is not None:
                t = t.filter(key_pred)
            if one_high:
                t = t.append_column(_LEVEL, pa.repeat(pa.scalar(meta.level, pa.int32()), t.num_rows))
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
            from ..mergetree.changelog import keep_one_high_level

            merged_input = keep_one_high_level(merged_input, [k.name for k in keys], self.options)
            merged_input = merged_input.drop_columns([_LEVEL])
        return merged_input

    def _keeps_one_high_level_record(self) -> bool:
        """Java wraps the merge function in ``LookupMergeFunction`` when the table needs lookup
        (not first-row): every record above level 0 already holds the merged value of the
        levels below it, so only one of a key's high-level records may take part, or
        aggregation / partial-update would count older values twice."""
        from ..mergetree.compact_strategy import lookup_mode

        return lookup_mode(self.options) and self.options.merge_engine != "first-row"

    def _merge_pk(self, data: pa.Table | None) -> pa.Table | None:
        """The merge half of a primary-key split: one row per key, deletes dropped, finished."""
        if data is None:
            return None
        from ..format.arrow_schema import key_fields
        from ..mergetree.merge_function import merge

        key_names = [f.name for f in key_fields(self.schema)]
        merged = merge(data, key_names, self.schema, self.options, drop_deletes=not self.keep_deletes,
                       lone_records_as_is=True)
        del data
        return self._finish(merged)

    def _key_prefilter(self, prefix: str) -> Any:
        """Conjuncts on trimmed key columns, applied before merging (all versions of a key agree)."""
        if self.predicate is None or self.keep_deletes:
            return None
        trimmed = self.schema.trimmed_primary_keys
        kp = self.predicate.only_on(trimmed)
        if kp is None:
            return None
        return kp.rename({k: prefix + k for k in trimmed}).to_arrow_expression()


# ---------------------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------------------


def _with_schema(table: FileStoreTable, schema: Any) -> FileStoreTable:
    if schema is table.schema:
        return table
    from ..table.file_store_table import FileStoreTable

    return FileStoreTable(table.file_io, table.path, table.identifier, table.branch, schema)


def _file_columns(file_fields: list[DataField], target: list[DataField]) -> list[str]:
    """Names (in the file) of the file's columns that feed ``target``, matched by field id."""
    ids = {f.id for f in target}
    return [f.name for f in file_fields if f.id in ids]


def _drop_deleted(t: pa.Table, dv: DeletionVector, offset: int) -> pa.Table:
    """Rows of ``t`` (file positions ``offset..``) whose positions the DV does not mark."""
    import pyarrow as pa

    n = t.num_rows
    if n == 0 or dv.is_empty():
        return t
    bm = dv.bitmap
    full = type(bm)(range(offset, offset + n))
    keep = full - bm
    if len(keep) == n:
        return t
    arr = keep.to_array()
    typ = pa.uint64() if arr.itemsize == 8 else pa.uint32()
    idx = pa.Array.from_buffers(typ, len(arr), [None, pa.py_buffer(arr)])
    if offset:
        import pyarrow.compute as pc

        idx = pc.subtract(idx, pa.scalar(offset, typ))
    return t.take(idx)


__all__ = ["Counts", "ReadPlan", "Split", "TableRead", "ROW_KIND_COLUMN"]
