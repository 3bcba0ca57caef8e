"""``rewrite_file_index``: bring every live data file's file index in line with the table's
current ``file-index.*`` options, as Paimon's ``sys.rewrite_file_index`` procedure does
(``FileIndexProcessor``), committing one COMPACT snapshot of DELETE(old meta) + ADD(new
meta) per changed file (same data file name and level; only ``_EXTRA_FILES`` /
``_EMBEDDED_FILE_INDEX`` change).

Per file:

* the wanted indexes are the configured ones, each current column mapped BY FIELD ID to
  the column's name in the file's own schema (columns the file predates are skipped, like
  Java); index entries are keyed by those file-schema names, as every writer keys them;
* an existing entry is kept when it is wanted and matches its options (bloom-filter size
  and hash count from items/fpp, bitmap version); everything else is dropped -- including
  entries of columns that no longer exist or are no longer configured;
* missing entries are built from the data file (only the needed columns are read, batch by
  batch);
* a file whose set of entries would not change (and whose placement stays) is skipped;
* data evolution: a partial-column file wants only the indexes of its ``_WRITE_COLS``, a
  ``.blob`` file none (Java 2.0+ reads evaluate a file's index only on the columns it wrote,
  1.3/1.4 not at all; Java's ``FileIndexProcessor`` reads the single file through the
  data-evolution reader and so also indexes the absent columns as all null -- entries no
  reader consults, which we do not write). Row ids and sequence numbers stay (same meta).

The container is embedded when it is at most ``file-index.in-manifest-threshold`` bytes,
else written as a NEW ``.index`` file (``x.index`` -> ``x-1.index`` ...; a name already
present on storage is never overwritten, since a tag may still reference it). The old
``.index`` files stay for ``remove-orphan-files``: older snapshots still reference them.

Java 0.9 compatibility: 0.9's file identifier ignores extra files and the embedded index,
so the DELETE and ADD of a file share it. 0.9 batch reads merge manifests in order and
read the result correctly (tested). 0.9's manifest compaction can still trip over such a
pair when the file's original ADD sits in a full (>= 8 MB) base manifest; Java >= 1.0 has
no such limit.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field, replace
from typing import Any

from ..data.types import DataField
from ..errors import InvalidInput
from ..fileindex.format import INDEX_SUFFIX, FileIndexContainer, index_file_names, new_index_file_name, write_container
from ..fileindex.writer import DataFileIndexWriter
from ..format.data_file import iter_data_file_batches
from ..io import paths
from ..manifest.entry_decoder import EntryDecoder
from ..manifest.manifest import DataFileMeta, ManifestEntry
from ..mergetree.commit_message import CommitMessage
from ..mergetree.file_writer import written_index_note
from ..operation.blob_read import is_blob_file
from ..operation.commit import FileStoreCommit
from ..schema.file_index_options import (
    BITMAP,
    BLOOM_FILTER,
    IndexSpec,
    bitmap_options,
    bloom_size,
    configured_indexes,
    validate_file_index_options,
)
from ..schema.file_index_options import bloom_filter_options as bloom_options
from ..table.file_store_table import FileStoreTable
from ..utils.interrupt import discard
from ..utils.progress import StepProgress, Ticker
from ..utils.workers import worker_pool

RESULT_COLUMNS = ["snapshot_id", "files_scanned", "files_changed", "files_unchanged", "indexes_built",
                  "indexes_dropped", "index_files_written", "embedded", "rows_read", "seconds"]
PLAN_COLUMNS = ["partition", "bucket", "file_name", "action", "keep", "build", "drop", "storage"]


@dataclass
class FilePlan:
    """What happens to one data file's index."""

    entry: ManifestEntry
    partition_text: str
    keep: list[tuple[str, str]] = field(default_factory=list)
    build: list[IndexSpec] = field(default_factory=list)  # column names as in the FILE schema
    drop: list[tuple[str, str]] = field(default_factory=list)
    old_storage: str = "none"  # none | embedded | file
    relocate: bool = False  # same entries, but the threshold now wants the other storage

    @property
    def changes(self) -> bool:
        return bool(self.build or self.drop or self.relocate)

    @property
    def action(self) -> str:
        if not self.changes:
            return "unchanged"
        if self.relocate and not (self.build or self.drop):
            return "move to manifest" if self.old_storage == "file" else "move to file"
        if not self.keep and not self.build:
            return "drop"
        return "build" if self.old_storage == "none" else "rewrite"

    def as_row(self) -> dict[str, Any]:
        return {
            "partition": self.partition_text,
            "bucket": self.entry.bucket,
            "file_name": self.entry.file.file_name,
            "action": self.action,
            "keep": ", ".join(f"{c}:{t}" for c, t in self.keep) or None,
            "build": ", ".join(f"{s.column}:{s.index_type}" for s in self.build) or None,
            "drop": ", ".join(f"{c}:{t}" for c, t in self.drop) or None,
            "storage": self.old_storage,
        }


@dataclass
class RewriteResult:
    snapshot_id: int | None
    plans: list[FilePlan]
    dry_run: bool
    indexes_built: int = 0
    indexes_dropped: int = 0
    index_files_written: int = 0
    embedded: int = 0
    rows_read: int = 0
    seconds: float = 0.0
    index_note: str | None = None  # the written .index files outweigh their data files

    @property
    def changed(self) -> list[FilePlan]:
        return [p for p in self.plans if p.changes]

    def as_row(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "files_scanned": len(self.plans),
            "files_changed": len(self.changed),
            "files_unchanged": len(self.plans) - len(self.changed),
            "indexes_built": self.indexes_built,
            "indexes_dropped": self.indexes_dropped,
            "index_files_written": self.index_files_written,
            "embedded": self.embedded,
            "rows_read": self.rows_read,
            "seconds": round(self.seconds, 3),
        }


def payload_matches(spec: IndexSpec, payload: bytes | None) -> bool:
    """Does an existing payload honour the options it would be built with now?"""
    if payload is None:
        return False
    try:
        if spec.index_type == BLOOM_FILTER:
            nb, k = bloom_size(*bloom_options(spec.column, spec.opts))
            return len(payload) == 4 + nb // 8 and struct.unpack_from(">i", payload, 0)[0] == k
        if spec.index_type == BITMAP:
            version, _ = bitmap_options(spec.column, spec.opts)
            return payload[0] == version
        return payload[0] == 1  # bsi version 1
    except (IndexError, ValueError):
        return False


class _SchemaInfo:
    """Per file schema id: the wanted indexes in the file's column names."""

    def __init__(self, table: FileStoreTable, specs: list[IndexSpec]) -> None:
        self.table = table
        self.current = {f.name: f for f in table.schema.fields}
        self.specs = specs
        self.cache: dict[int, tuple[list[DataField], dict[tuple[str, str], IndexSpec]]] = {}

    def wanted(self, schema_id: int) -> tuple[list[DataField], dict[tuple[str, str], IndexSpec]]:
        hit = self.cache.get(schema_id)
        if hit is None:
            fs = self.table.schema_manager.schema(schema_id) if schema_id != self.table.schema.id else self.table.schema
            by_id = {f.id: f for f in fs.fields}
            want: dict[tuple[str, str], IndexSpec] = {}
            for s in self.specs:
                cur = self.current[s.column]
                ff = by_id.get(cur.id)
                if ff is None:
                    continue  # the file predates the column
                want[(ff.name, s.index_type)] = IndexSpec(ff.name, s.index_type, s.options)
            hit = self.cache[schema_id] = (list(fs.fields), want)
        return hit

    def wanted_for(self, meta: DataFileMeta) -> tuple[list[DataField], dict[tuple[str, str], IndexSpec]]:
        """As ``wanted``, for the columns ``meta`` holds: a data-evolution partial-column file
        (``_WRITE_COLS``) indexes only its own columns and a ``.blob`` file none -- Java's reads
        consult a file's index only for the columns it wrote (2.0+) or not at all (1.3/1.4),
        while Java's own rewrite would index the absent columns as all null."""
        fields, want = self.wanted(meta.schema_id)
        if is_blob_file(meta):
            return fields, {}
        if meta.write_cols is None:
            return fields, want
        written = set(meta.write_cols)
        return fields, {k: s for k, s in want.items() if k[0] in written}


def _bucket_dir(table: FileStoreTable, dec: EntryDecoder, entry: ManifestEntry) -> str:
    """Where the data file and its index file are (an external data file's own directory)."""
    return paths.data_file_dir(table.data_root, dec.partition_dir(entry.partition), entry.bucket, entry.file.external_path)


def _read_container(table: FileStoreTable, bucket_dir: str, meta: DataFileMeta) -> tuple[FileIndexContainer | None, str]:
    if meta.embedded_index is not None:
        return FileIndexContainer(meta.embedded_index, f"{meta.file_name} (embedded index)"), "embedded"
    names = index_file_names(meta.extra_files)
    if names:
        p = f"{bucket_dir}/{names[0]}"
        return FileIndexContainer(table.file_io.read_bytes(p), p), "file"
    return None, "none"


def plan_rewrite(table: FileStoreTable, entries: Sequence[ManifestEntry],
                 dec: EntryDecoder) -> tuple[list[FilePlan], dict[str, FileIndexContainer]]:
    """What happens to each file's index (and the containers read to decide it, by file name)."""
    info = _SchemaInfo(table, configured_indexes(table.schema.options))
    threshold = table.options.file_index_in_manifest_threshold
    plans: list[FilePlan] = []
    containers: dict[str, FileIndexContainer] = {}
    for e in entries:
        m = e.file
        _, want = info.wanted_for(m)
        container, storage = _read_container(table, _bucket_dir(table, dec, e), m)
        plan = FilePlan(e, dec.partition_string(e.partition), old_storage=storage)
        have: dict[tuple[str, str], bytes | None] = {}
        if container is not None:
            containers[m.file_name] = container
            for ent in container.entries:
                have[(ent.column, ent.index_type)] = container.payload(ent)
        for key, payload in have.items():
            spec = want.get(key)
            if spec is not None and payload_matches(spec, payload):
                plan.keep.append(key)
            else:
                plan.drop.append(key)
        kept = set(plan.keep)
        plan.build = [s for k, s in want.items() if k not in kept]
        if container is not None and not plan.build and not plan.drop:
            fits = len(container.data) <= threshold
            plan.relocate = fits != (storage == "embedded")
        plans.append(plan)
    return plans, containers


def rewrite_file_index(
    table: FileStoreTable,
    *,
    partitions: Sequence[str] | None = None,
    where: str | None = None,
    dry_run: bool = False,
    parallelism: int | None = None,
    progress: StepProgress | None = None,
) -> RewriteResult:
    """Rewrite the file indexes of ``table``'s live files (see module doc); one COMPACT snapshot.
    ``progress`` counts the files rewritten."""
    from ..operation.partition_spec import parse_partition_specs, partition_filter, selected_entries
    started = time.monotonic()
    schema = table.schema
    validate_file_index_options(schema.fields, schema.options)
    specs = parse_partition_specs(partitions, schema) if partitions else None
    keep_part = partition_filter(schema, specs, where, command="rewrite-file-index")
    snap = table.snapshot_manager.latest_snapshot()
    entries = selected_entries(table, snap, keep_part)
    if snap is None:
        return RewriteResult(None, [], dry_run, seconds=time.monotonic() - started)
    dec = EntryDecoder(table)
    plans, containers = plan_rewrite(table, entries, dec)
    result = RewriteResult(None, plans, dry_run)
    changed = result.changed
    result.indexes_dropped = sum(len([d for d in p.drop if d not in {(s.column, s.index_type) for s in p.build}])
                                 for p in changed)
    result.indexes_built = sum(len(p.build) for p in changed)
    if not dry_run and changed:
        _IndexRewrite(table, dec, containers, Ticker(progress, len(changed))).run(changed, parallelism, result)
    result.seconds = time.monotonic() - started
    return result


# one rewritten file: its plan, its new meta, the rows read to build its indexes
_Outcome = tuple[FilePlan, DataFileMeta, int]


class _IndexRewrite:
    """Executes the plans of the changed files: new containers, then one COMPACT commit."""

    def __init__(self, table: FileStoreTable, dec: EntryDecoder, containers: dict[str, FileIndexContainer],
                 ticker: Ticker) -> None:
        self.table = table
        self.ticker = ticker
        self.dec = dec
        self.containers = containers
        self.threshold = table.options.file_index_in_manifest_threshold
        self.info = _SchemaInfo(table, configured_indexes(table.schema.options))
        self.written: list[str] = []  # at once: deleted if anything stops the rewrite

    def run(self, changed: list[FilePlan], parallelism: int | None, result: RewriteResult) -> None:
        commit = None
        try:
            outcomes = self._rewrite_all(changed, parallelism)
            commit = FileStoreCommit(self.table)
            snapshot = commit.commit(_commit_messages(outcomes), "COMPACT")
        except BaseException:
            if commit is None or not commit.may_have_published():  # else the snapshot may reference them
                discard(self.table.file_io, self.written)
            raise
        result.snapshot_id = snapshot.id if snapshot is not None else None
        result.index_files_written = len(self.written)
        result.embedded = sum(1 for _, new, _ in outcomes if new.embedded_index is not None)
        result.rows_read = sum(r for _, _, r in outcomes)
        result.index_note = written_index_note(self.table.options.options, [new for _, new, _ in outcomes])

    def _rewrite_all(self, changed: list[FilePlan], parallelism: int | None) -> list[_Outcome]:
        # sequential by default: measured, threads lose to GIL and memory-bandwidth contention
        workers = max(1, parallelism or 1)
        if workers == 1 or len(changed) == 1:
            return [self._rewrite(p) for p in changed]
        futures: list[Future[_Outcome]] = []
        # joined however it ends: `written` then holds every index file the tasks wrote
        with worker_pool(workers, "paimon-fileindex") as pool:
            futures = [pool.submit(self._rewrite, p) for p in changed]
            for f in futures:
                f.exception()  # wait for all
        for f in futures:
            error = f.exception()
            if error is not None:
                raise error
        return [f.result() for f in futures]

    def _rewrite(self, plan: FilePlan) -> _Outcome:
        """One file: its kept payloads plus the indexes to build, placed in or beside the manifest."""
        outcome = self._rewrite_one(plan)
        self.ticker.tick()
        return outcome

    def _rewrite_one(self, plan: FilePlan) -> _Outcome:
        m = plan.entry.file
        indexes: dict[str, dict[str, bytes | None]] = {}
        old = self.containers.get(m.file_name)
        if old is not None:
            for ent in old.entries:
                if (ent.column, ent.index_type) in plan.keep:
                    indexes.setdefault(ent.column, {})[ent.index_type] = old.payload(ent)
        rows = self._build(plan, indexes) if plan.build else 0
        return plan, self._place(plan.entry, write_container(indexes)), rows

    def _build(self, plan: FilePlan, indexes: dict[str, dict[str, bytes | None]]) -> int:
        """Build the missing indexes from the data file into ``indexes``; returns the rows read."""
        e = plan.entry
        m = e.file
        file_fields, _ = self.info.wanted_for(m)
        w = DataFileIndexWriter(plan.build, file_fields)
        path = paths.data_file_path(self.table.data_root, self.dec.partition_dir(e.partition), e.bucket, m.file_name,
                                    m.external_path)
        rows = 0
        for batch in iter_data_file_batches(self.table.file_io, path, file_fields, w.column_names, batch_rows=1 << 20):
            w.write_batch(batch)
            rows += batch.num_rows
        if w.rows != m.row_count:
            raise InvalidInput(f"{path}: read {w.rows} rows but the manifest says {m.row_count}")
        for col, per in w.serialized().items():
            indexes.setdefault(col, {}).update(per)
        return rows

    def _place(self, e: ManifestEntry, data: bytes) -> DataFileMeta:
        """The file's new meta: no index, the container embedded, or a NEW ``.index`` file."""
        m = e.file
        extras = [x for x in m.extra_files if not x.endswith(INDEX_SUFFIX)]
        if not data:
            return replace(m, extra_files=tuple(extras), embedded_index=None)
        if len(data) <= self.threshold:
            return replace(m, extra_files=tuple(extras), embedded_index=data)
        bdir = _bucket_dir(self.table, self.dec, e)
        olds = index_file_names(m.extra_files)
        name = new_index_file_name(olds[0] if olds else None, m.file_name)
        file_io = self.table.file_io
        while file_io.exists(f"{bdir}/{name}"):
            name = new_index_file_name(name, m.file_name)
        file_io.write_bytes(f"{bdir}/{name}", data, overwrite=False)
        self.written.append(f"{bdir}/{name}")
        return replace(m, extra_files=tuple(extras + [name]), embedded_index=None, index_file_bytes=len(data))


def _commit_messages(outcomes: list[_Outcome]) -> list[CommitMessage]:
    """DELETE(old meta) + ADD(new meta) per file, one message per (partition, bucket)."""
    msgs: dict[tuple[bytes, int], CommitMessage] = {}
    for plan, new, _ in outcomes:
        e = plan.entry
        msg = msgs.get((e.partition, e.bucket))
        if msg is None:
            msg = msgs[(e.partition, e.bucket)] = CommitMessage(e.partition, e.bucket, e.total_buckets)
        msg.deleted_files.append(e.file)
        msg.new_files.append(new)
    return list(msgs.values())
