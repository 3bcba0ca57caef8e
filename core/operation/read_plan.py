"""Split planning: which files of a snapshot a read touches, grouped into splits.

The snapshot's live files -- of a postpone-bucket table only those in real buckets, as
Java's batch scan -- are pruned in Java's order: partition values, bucket (an Equal/IN
predicate on every bucket-key column), level 0 for deletion-vector and first-row
primary-key tables (Java's batch scan hides it), then file stats:

* append tables: each file's value stats against the whole predicate;
* primary-key tables (``KeyValueFileStoreScan``): value stats only where a key cannot hide in
  another file -- level > 0 files of DV / first-row tables, or a bucket whose files all sit in
  one level > 0 run; otherwise key stats against the key-only conjuncts, and a bucket is
  dropped whole when no file's value stats can match (except partial-update/aggregation
  without DVs, whose merged rows mix files);

then file indexes (``file-index.read.enabled``): a file whose bloom filter / bitmap / BSI
proves that no row matches is skipped (append files; level > 0 files of DV / first-row
tables), counted per index kind for ``--explain``. What remains is grouped into one split
per (partition, bucket), with the deletion vectors of its files. Metadata only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..data.binary_row import bucket_of
from ..data.predicate import Predicate, and_
from ..fileindex.evaluator import DECIDES_TEXT, INDEX_KINDS, decidable_columns, evaluate, remains
from ..fileindex.format import FileIndexContainer, index_file_names
from ..index.index_paths import index_file_path
from ..io import paths
from ..manifest.columnar import IDENTIFIER, detached, entries_from_table, merge_live
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.index_manifest import DELETION_VECTORS_INDEX, DeletionVectorMeta
from ..manifest.manifest import DataFileMeta, ManifestEntry
from ..refs.snapshot import Snapshot
from ..schema.file_index_options import configured_indexes
from ..table.file_store_table import FileStoreTable
from ..utils.workers import map_ordered
from .row_tracking import is_data_evolution
from .scan import FileStoreScan, is_postpone_table, split_postponed

if TYPE_CHECKING:
    import pyarrow as pa

# data file name -> (DV index file path, range in it)
DeletionFiles = dict[str, tuple[str, DeletionVectorMeta]]


@dataclass
class Split:
    """The files of one (partition, bucket) to read, with their deletion vectors' locations."""

    partition: bytes
    partition_values: list[Any]
    bucket: int
    files: list[DataFileMeta]
    deletion_files: DeletionFiles = field(default_factory=dict)

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

    @staticmethod
    def of_table(live: pa.Table) -> Counts:
        """:meth:`of` for live files as a columnar plan table (``columnar.ENTRY_SCHEMA`` rows)."""
        import pyarrow.compute as pc

        if live.num_rows == 0:
            return Counts()
        return Counts(
            pc.count_distinct(live.column("_PARTITION")).as_py(),
            live.group_by(["_PARTITION", "_BUCKET"], use_threads=False).aggregate([]).num_rows,
            live.num_rows,
            pc.sum(live.column("_ROW_COUNT")).as_py() or 0,
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
    # per index kind, why it pruned nothing (or which files it could not check)
    index_notes: dict[str, str] = field(default_factory=dict)
    remaining: Counts = field(default_factory=Counts)

    @property
    def no_partition_left(self) -> bool:
        """The predicate's partition conditions removed every partition the table has (staged
        postpone files count as a partition matched)."""
        p = self.pruned_by_partition.partitions
        real = self.total.partitions - self.skipped_postponed.partitions
        return p > 0 and p == real and not self.postponed_selected.partitions


@dataclass
class IndexCheck:
    """What the file-index step saw, for ``--explain``'s reasons."""

    files: int = 0  # files that reached the step
    merged: int = 0  # primary-key files no index may skip on its own (merge on read)
    unindexed: int = 0  # files without any file index
    checked: int = 0  # files whose index was consulted
    unreadable: int = 0  # of those, indexes that could not be read (kept the file)
    holding: dict[str, int] = field(default_factory=dict)  # checked files with that kind on a decidable column


MERGE_ON_READ = ("merge-on-read: a primary-key row may be replaced by a newer file of its key range, so a file is "
                 "skipped on its own index only at level > 0 with deletion-vectors.enabled or merge-engine=first-row")


class ReadPlanner:
    """Plans a read of ``table`` (whose schema is the one read) at ``snapshot``.

    ``top_level_only`` keeps only the max level of primary-key tables (``$ro``);
    ``all_levels`` keeps level 0 of deletion-vector / first-row tables too.
    """

    def __init__(self, table: FileStoreTable, snapshot: Snapshot | None, predicate: Predicate | None, *,
                 top_level_only: bool = False, all_levels: bool = False) -> None:
        self.table = table
        self.schema = table.schema
        self.options = table.options
        self.snapshot = snapshot
        self.predicate = predicate
        self.top_level_only = top_level_only
        self.all_levels = all_levels
        self.is_pk = bool(self.schema.primary_keys)
        self.decoder = EntryDecoder(table)
        self._fields = {f.name: f for f in self.schema.fields}

    def plan(self) -> ReadPlan:
        if self._partition_predicate() is not None:
            plan, entries = self._plan_partitions_columnar()
        else:
            entries = FileStoreScan(self.table).plan(self.snapshot)
            plan = ReadPlan(self.snapshot, [], total=Counts.of(entries))
            entries, postponed = split_postponed(self.schema, entries)
            plan.skipped_postponed = plan.total.minus(Counts.of(entries))
            plan.postponed_selected = Counts.of(postponed)
        entries = self._prune_buckets(plan, entries)
        entries = self._prune_levels(plan, entries)
        stats_pred = self._stats_predicate()
        if stats_pred is not None and not is_data_evolution(self.options):
            before = Counts.of(entries)
            entries = self._filter_by_stats(entries, stats_pred)
            plan.pruned_by_stats = before.minus(Counts.of(entries))
        # file indexes (bloom filter / bitmap / BSI), embedded or in `.index` extra files
        check = None
        if stats_pred is not None and self.options.file_index_read_enabled and not is_data_evolution(self.options):
            entries, by_kind, check = self._filter_by_index(entries, stats_pred)
            plan.pruned_by_index = {k: Counts.of(v) for k, v in by_kind.items()}
        plan.index_notes = self._index_notes(stats_pred, check, plan.pruned_by_index)
        plan.remaining = Counts.of(entries)
        plan.splits = self._splits(entries)
        return plan

    def skip_level0(self) -> bool:
        """Java's batch scan of DV / first-row tables reads no level-0 file."""
        if self.all_levels:
            return False
        return self.options.deletion_vectors_enabled or self.options.merge_engine == "first-row"

    # -- pruning steps -----------------------------------------------------------------

    def _partition_predicate(self) -> Predicate | None:
        """The predicate, when it names a partition column (so partitions can be pruned)."""
        pred = self.predicate
        if pred is None or not self.schema.partition_keys or not pred.columns() & set(self.schema.partition_keys):
            return None
        return pred

    def _plan_partitions_columnar(self) -> tuple[ReadPlan, list[ManifestEntry]]:
        """Live files, postponed files left out and partitions pruned on the columnar plan:
        each manifest's table gives its counting columns to one merge and its rows in the
        partitions read to another, so entry objects (and all columns) are kept for the
        partitions read only. The counts are :meth:`plan`'s."""
        import pyarrow as pa
        import pyarrow.compute as pc

        pred = self._partition_predicate()
        assert pred is not None
        pkeys = self.schema.partition_keys
        verdict: dict[bytes, bool] = {}

        def partition_ok(part: bytes) -> bool:  # the predicate runs once per partition
            ok = verdict.get(part)
            if ok is None:
                values = self.decoder.partition_values(part)
                st = {k: (v, v, 1 if v is None else 0, 1) for k, v in zip(pkeys, values, strict=True)}
                ok = verdict[part] = pred.might_match(st)
            return ok

        def kept(table: pa.Table) -> pa.Table:
            parts = table.column("_PARTITION")
            ok = [p for p in pc.unique(parts).to_pylist() if partition_ok(p)]
            return table.filter(pc.is_in(parts, value_set=pa.array(ok, parts.type)))

        counting, selected = [], []
        if self.snapshot is not None:
            for t in FileStoreScan(self.table).entry_tables(self.snapshot):
                counting.append(detached(t.select(["_KIND", *IDENTIFIER, "_ROW_COUNT"])))
                selected.append(kept(t))
        every, live = merge_live(counting), merge_live(selected)
        plan = ReadPlan(self.snapshot, [], total=Counts.of_table(every))
        staged = live.slice(0, 0)
        if is_postpone_table(self.schema):
            every = every.filter(pc.greater_equal(every.column("_BUCKET"), 0))
            is_staged = pc.less(live.column("_BUCKET"), 0)
            live, staged = live.filter(pc.invert(is_staged)), live.filter(is_staged)
        real = Counts.of_table(every)
        plan.skipped_postponed = plan.total.minus(real)
        plan.pruned_by_partition = real.minus(Counts.of_table(live))
        plan.postponed_selected = Counts.of_table(staged)
        return plan, entries_from_table(live)

    def _prune_buckets(self, plan: ReadPlan, entries: list[ManifestEntry]) -> list[ManifestEntry]:
        selector = self._bucket_selector()
        if selector is None:
            return entries
        kept = [e for e in entries if selector(e.bucket, e.total_buckets)]
        plan.pruned_by_bucket = Counts.of(entries).minus(Counts.of(kept))
        return kept

    def _prune_levels(self, plan: ReadPlan, entries: list[ManifestEntry]) -> list[ManifestEntry]:
        """Java's batch scan of DV / first-row tables; ``$ro``'s top level."""
        if not self.is_pk:
            return entries
        before = Counts.of(entries)
        if self.top_level_only:
            top = self.options.num_levels - 1
            entries = [e for e in entries if e.file.level == top]
        elif self.skip_level0():
            entries = [e for e in entries if e.file.level > 0]
        plan.skipped_level0 = before.minus(Counts.of(entries))
        return entries

    def _stats_predicate(self) -> Predicate | None:
        """The predicate minus conjuncts on columns with a default value (stats see their NULLs)."""
        if self.predicate is None:
            return None
        defaults = set(self.options.field_default_values())
        if not defaults:
            return self.predicate
        keep = [c for c in self.predicate.conjuncts() if not (c.columns() & defaults)]
        return and_(keep) if keep else None

    def _bucket_selector(self) -> Callable[[int, int], bool] | None:
        """``(bucket, total_buckets) -> keep?`` for a predicate pinning the bucket key, else None."""
        if self.predicate is None or self.schema.bucket <= 0:
            return None
        keys = self.schema.bucket_keys
        if not keys:
            return None
        tuples = self.predicate.bucket_key_values(keys)
        if tuples is None:
            return None
        types = [self.schema.field(k).type for k in keys]
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
        sr = self.decoder

        def value_ok(e: ManifestEntry) -> bool:
            return pred.might_match(sr.value_column_stats(e.file))

        if not self.is_pk:
            return [e for e in entries if value_ok(e)]

        dv_or_first_row = self.skip_level0()
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

    # -- file indexes --------------------------------------------------------------------

    def _filter_by_index(
        self, entries: list[ManifestEntry], pred: Predicate
    ) -> tuple[list[ManifestEntry], dict[str, list[ManifestEntry]], IndexCheck]:
        """Drop files whose file index proves no row matches (Java: the embedded index at scan,
        the ``.index`` file at read). Primary-key files only where a file is filtered on its
        own values (level > 0 of DV / first-row tables): elsewhere a row may be merged away."""
        per_file = self.is_pk and self.skip_level0()
        check = IndexCheck(files=len(entries))
        todo = []
        for e in entries:
            m = e.file
            if self.is_pk and not (per_file and m.level > 0):
                check.merged += 1
            elif m.embedded_index is None and not index_file_names(m.extra_files):
                check.unindexed += 1
            else:
                todo.append(e)
        check.checked = len(todo)
        if not todo:
            return entries, {}, check
        wanted = {kind: decidable_columns(pred, kind) for kind in INDEX_KINDS}

        def verdict(e: ManifestEntry) -> tuple[str | None, set[str] | None]:
            return self._index_verdict(e, pred, wanted)

        if len(todo) > 8:
            verdicts = dict(zip((id(e) for e in todo), map_ordered(verdict, todo, 4, "paimon-index"), strict=True))
        else:
            verdicts = {id(e): verdict(e) for e in todo}
        for _, held in verdicts.values():
            if held is None:
                check.unreadable += 1
            for kind in held or ():
                check.holding[kind] = check.holding.get(kind, 0) + 1
        kept: list[ManifestEntry] = []
        pruned: dict[str, list[ManifestEntry]] = {}
        for e in entries:
            v = verdicts.get(id(e), (None, None))[0]
            if v is None:
                kept.append(e)
            else:
                pruned.setdefault(v, []).append(e)
        return kept, pruned, check

    def _index_notes(self, pred: Predicate | None, check: IndexCheck | None,
                     pruned: dict[str, Counts]) -> dict[str, str]:
        """Per index kind, why it pruned no file -- or, when it did, which files it could not check."""
        out = {}
        for kind in INDEX_KINDS:
            if kind in pruned:
                if check is not None and check.merged:
                    out[kind] = f"{check.merged} file(s) not checked: {MERGE_ON_READ}"
                continue
            out[kind] = self._why_no_pruning(kind, pred, check)
        return out

    def _why_no_pruning(self, kind: str, pred: Predicate | None, check: IndexCheck | None) -> str:
        if self.predicate is None:
            return "no --where"
        if pred is None:
            return "the --where names only columns with default values (a file may store them as NULL)"
        if not self.options.file_index_read_enabled:
            return "file-index.read.enabled = false"
        if is_data_evolution(self.options):
            return "not used on data-evolution tables (a row's columns may come from several files)"
        cols = sorted(decidable_columns(pred, kind))
        if not cols:
            return f"the --where has no condition a {kind} index decides ({DECIDES_TEXT[kind]} only)"
        assert check is not None
        held = check.holding.get(kind, 0)
        configured = sorted(s.column for s in configured_indexes(self.schema.options) if s.index_type == kind)
        on = ", ".join(cols)
        if not held and not set(cols) & set(configured):
            where = f" (file-index.{kind}.columns = {','.join(configured)})" if configured else ""
            return f"no {kind} index on {on}{where}"
        if not check.files:
            return "no file left to check"
        if not check.checked and check.merged:
            return MERGE_ON_READ
        not_checked = []
        if check.merged:
            not_checked.append(f"{check.merged} not checked: {MERGE_ON_READ}")
        if check.unindexed:
            not_checked.append(f"{check.unindexed} without any file index")
        if check.unreadable:
            not_checked.append(f"{check.unreadable} whose index could not be read")
        rest = f" ({'; '.join(not_checked)})" if not_checked else ""
        if not held:
            return (f"none of the {check.files} file(s) holds a {kind} index on {on} (written before it was "
                    f"configured, or with other options: rewrite-file-index builds it){rest}")
        return f"{held} file(s) checked: their {kind} index on {on} allows a match in each{rest}"

    def _index_verdict(self, e: ManifestEntry, pred: Predicate,
                       wanted: dict[str, set[str]]) -> tuple[str | None, set[str] | None]:
        """(None: keep the file, else the index kind that pruned it; the kinds the file holds on
        a column they could decide, None when its index could not be read)."""
        m = e.file
        try:
            if m.embedded_index is not None:
                container = FileIndexContainer(m.embedded_index)
            else:
                name = index_file_names(m.extra_files)[0]
                path = paths.aligned_path(self.table.data_root, self.decoder.partition_dir(e.partition), e.bucket, name,
                                          m.external_path)
                container = FileIndexContainer(self.table.file_io.read_bytes(path), path)
            fs = self.decoder.schema(m.schema_id)
            by_id = {f.id: f for f in fs.fields}
            file_fields = {f.name: f for f in fs.fields}

            def name_in_file(n: str) -> str | None:
                f = self._fields.get(n)
                ff = by_id.get(f.id) if f is not None else None
                return ff.name if ff is not None else None

            held = set()
            for kind, cols in wanted.items():
                names = [n for n in (name_in_file(c) for c in cols) if n is not None]
                if any(x.index_type == kind for n in names for x in container.column_entries(n)):
                    held.add(kind)
            if remains(evaluate(container, pred, file_fields, name_in_file)):
                return None, held
            for kind in INDEX_KINDS:
                if not remains(evaluate(container, pred, file_fields, name_in_file, types={kind})):
                    return kind, held
            return "file index", held
        except Exception:  # noqa: BLE001 - an index we cannot read never hides rows
            return None, None

    # -- splits --------------------------------------------------------------------------

    def _splits(self, entries: list[ManifestEntry]) -> list[Split]:
        groups: dict[tuple[bytes, int], list[DataFileMeta]] = {}
        for e in entries:
            groups.setdefault((e.partition, e.bucket), []).append(e.file)
        dvs = self._deletion_files() if groups else {}
        splits = []
        for (part, bucket), files in groups.items():
            files.sort(key=lambda f: f.min_sequence_number)  # stable: ties keep commit order, as Java
            splits.append(Split(part, self.decoder.partition_values(part), bucket, files, dvs.get((part, bucket), {})))
        return splits

    def _deletion_files(self) -> dict[tuple[bytes, int], DeletionFiles]:
        """DV ranges per (partition, bucket); Java applies them only when the option is on."""
        if not self.options.deletion_vectors_enabled:
            return {}
        out: dict[tuple[bytes, int], DeletionFiles] = {}
        for ie in FileStoreScan(self.table).index_entries(self.snapshot):
            f = ie.index_file
            if f.index_type != DELETION_VECTORS_INDEX or not f.dv_ranges:
                continue
            path = index_file_path(self.table, ie.partition, ie.bucket, f)
            per = out.setdefault((ie.partition, ie.bucket), {})
            for m in f.dv_ranges:
                per[m.data_file_name] = (path, m)
        return out
