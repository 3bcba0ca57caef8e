"""FileStoreCommit: turn written data files into a new snapshot, the way Java Paimon commits.

One ``commit`` call publishes at most one snapshot (FORMAT-FACTS 7):

1. read the data manifests of the latest snapshot and merge them into the new **base manifest
   list** (ManifestFileMerger policy: full compaction of small/has-deletes manifests past
   ``manifest.full-compaction-threshold-size``, otherwise adjacent small manifests merged at
   ``manifest.target-file-size`` or when ``manifest.merge-min-count`` remain) -- always written;
2. write the new entries into delta manifest(s) and the **delta manifest list**;
3. the **changelog manifest list** when there are changelog files;
4. the **index manifest** (a full listing; its name is reused when nothing changed);
5. ``snapshot-N`` published with write-if-absent (``FileIO.try_write_atomic``), then LATEST.

A lost race (``snapshot-N`` verified to hold another writer's snapshot) deletes what this
attempt wrote, re-reads the latest snapshot, re-checks conflicts and retries with Java's
back-off (``min(commit.min-retry-wait * 2^n, commit.max-retry-wait)`` + up to 20 % jitter) up
to ``commit.max-retries``. A publish whose outcome cannot be learnt (the put failed, timed out
or met an S3 409, and reading snapshot-N back did not settle it) raises OutcomeUnknown: nothing
is deleted and nothing is retried under another id. A real conflict (deleting a file that is
gone, adding one twice, LSM key ranges overlapping on a level >= 1, bucket count changing
without overwrite) raises ``CommitConflict`` with nothing committed. Files referenced by a
published snapshot are never deleted.
"""

from __future__ import annotations

import logging
import math
import random
import time
import uuid
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import CommitConflict, CorruptMetadata, InvalidInput, NotYetSupported, OutcomeUnknown, PaimonError
from ..io import paths
from ..io.fileio import join
from ..manifest.index_manifest import (
    DELETION_VECTORS_INDEX,
    HASH_INDEX,
    IndexManifestEntry,
    IndexManifestFile,
)
from ..manifest.manifest import FileKind, ManifestEntry, ManifestFile, ManifestFileMeta, ManifestList
from ..mergetree.commit_message import CommitMessage
from ..mergetree.file_writer import partition_dir_of
from ..refs.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from ..utils.interrupt import commit_attempt

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

log = logging.getLogger(__name__)

_AVRO_CODECS = {
    "zstd": "zstandard",
    "zstandard": "zstandard",
    "none": "null",
    "null": "null",
    "uncompressed": "null",
    "snappy": "snappy",
    "deflate": "deflate",
    "gzip": "deflate",
}
COMMIT_KINDS = ("APPEND", "COMPACT", "OVERWRITE")


@dataclass
class _Changes:
    """The manifest entries of one attempt."""

    table: list[ManifestEntry]
    changelog: list[ManifestEntry]
    index: list[IndexManifestEntry]


# rounds of re-reading (and re-putting) a snapshot whose publish outcome is open, with the
# commit's retry back-off between them (10 ms .. 1.3 s, about 2.5 s in all, by default)
_PUBLISH_VERIFY_ROUNDS = 8


class _LostRace(Exception):
    """snapshot-N was published by someone else; this attempt's files are already cleaned."""


# ---------------------------------------------------------------------------------------


class FileStoreCommit:
    """Commits CommitMessages of one table (or branch) into new snapshots.

    One instance has one ``commit_user`` (a fresh UUID unless given), like one Java job.
    """

    def __init__(self, table: FileStoreTable, commit_user: str | None = None) -> None:
        self.table = table
        self.file_io = table.file_io
        self.commit_user = commit_user or str(uuid.uuid4())
        self.options = table.options
        self.snapshot_manager = table.snapshot_manager
        self.manifest_dir = paths.manifest_dir(table.path)
        schema = table.schema
        self.partition_type = schema.logical_partition_type
        self.partition_types = [f.type for f in self.partition_type.fields]
        self.key_types = (
            [f.type for f in schema.logical_trimmed_primary_keys_type.fields] if schema.primary_keys else None
        )
        fmt = self.options.manifest_format
        if fmt != "avro":
            raise NotYetSupported(f"manifest.format={fmt}: only avro manifests can be written")
        if self.options.get_bool("row-tracking.enabled") or self.options.get_bool("data-evolution.enabled"):
            raise NotYetSupported("row-tracking / data-evolution tables: committing row ids is not supported yet")
        comp = self.options.manifest_compression.lower()
        codec = _AVRO_CODECS.get(comp)
        if codec is None:
            raise NotYetSupported(f"manifest.compression={comp}: not an Avro codec this toolkit writes")
        self.manifest_file = ManifestFile(self.file_io, self.manifest_dir, self.partition_type, codec)
        self.manifest_list = ManifestList(self.file_io, self.manifest_dir, codec)
        self.index_manifest_file = IndexManifestFile(self.file_io, self.manifest_dir, codec)
        self.target_manifest_size = self.options.manifest_target_file_size
        self.merge_min_count = self.options.manifest_merge_min_count
        self.full_compaction_size = self.options.manifest_full_compaction_threshold_size
        self.max_retries = self.options.commit_max_retries
        self.min_retry_wait_ms = self.options.get_duration_millis("commit.min-retry-wait") or 10
        self.max_retry_wait_ms = self.options.get_duration_millis("commit.max-retry-wait") or 10_000
        self.timeout_ms = self.options.get_duration_millis("commit.timeout")
        self.bucket_unaware = schema.bucket == -1 and not schema.primary_keys
        # test hook: called with the target snapshot id right before each publish
        self._before_publish: Callable[[int], None] | None = None
        self.attempts = 0  # attempts of the last commit() (for callers' reports and tests)
        self._key_fn: Callable[[bytes], Any] | None = None
        self.published: list[int] = []  # snapshot ids this instance published
        self.outcome_unknown = False  # a publish failed in a way that may still have landed

    # -- public API ---------------------------------------------------------------------

    def commit(
        self,
        messages: Sequence[CommitMessage],
        commit_kind: str = "APPEND",
        overwrite: Mapping[str, Any] | None = None,
        properties: Mapping[str, str] | None = None,
        *,
        dynamic: bool | None = None,
        identifier: int = BATCH_COMMIT_IDENTIFIER,
        watermark: int | None = None,
        base_snapshot_id: int | None = None,
        restored_snapshot_id: int | None = None,
    ) -> Snapshot | None:
        """Publish one snapshot; returns it, or None when there was nothing to commit.

        ``overwrite``: None appends (or compacts); ``{}`` overwrites the whole table and
        ``{col: value}`` a static partition. On a partitioned table with
        ``dynamic-partition-overwrite`` (default true; ``dynamic`` overrides the option) only
        the partitions the new files touch are replaced, and an overwrite without new files
        changes nothing (Java's behaviour).

        ``base_snapshot_id`` pins an overwrite to the snapshot its new files were computed
        from: if any later non-COMPACT snapshot added data files in the overwritten scope, the
        commit fails with CommitConflict instead of silently deleting them (apache/paimon#4802).

        ``restored_snapshot_id`` (appends of fixed-bucket writers): the snapshot the writer
        restored its buckets from; a partition re-laid out with another bucket number since
        fails the commit with CommitConflict.
        """
        kind = commit_kind.upper()
        if kind not in COMMIT_KINDS:
            raise InvalidInput(f"commit kind {commit_kind!r}: expected one of {', '.join(COMMIT_KINDS)}")
        if overwrite is not None and kind == "COMPACT":
            raise InvalidInput("a COMPACT commit cannot overwrite")
        self._validate(messages)
        table_entries, changelog_entries, index_entries = self._collect(messages)
        props = dict(properties) if properties else None

        if overwrite is not None:
            return self._overwrite(
                overwrite, table_entries, index_entries, dynamic, identifier, watermark, props, base_snapshot_id
            )
        if base_snapshot_id is not None:
            raise InvalidInput("base_snapshot_id pins an overwrite; it needs overwrite=")

        if not table_entries and not changelog_entries and not index_entries:
            return None
        has_delete = any(e.kind == FileKind.DELETE for e in table_entries)
        has_dv = any(e.index_file.index_type == DELETION_VECTORS_INDEX for e in index_entries)
        if kind == "APPEND" and (has_delete or has_dv):
            kind = "OVERWRITE"  # Java 1.3+ labelling: the append rewrote or deleted something
        check = kind != "APPEND"
        changes = _Changes(table_entries, changelog_entries, index_entries)

        def build(latest: Snapshot | None) -> _Changes:
            if restored_snapshot_id is not None:
                self._check_layout_kept(restored_snapshot_id, latest, table_entries)
            return changes

        return self._try_commit(build, kind, check, identifier, watermark, props)

    def commit_increments(
        self,
        append: Sequence[CommitMessage],
        compact: Sequence[CommitMessage],
        properties: Mapping[str, str] | None = None,
        restored_snapshot_id: int | None = None,
    ) -> list[Snapshot]:
        """A writer's two increments as Java commits them: an APPEND snapshot, then a COMPACT one.

        The snapshots are separate (as in Java), so a failed compact commit leaves the append
        committed; the raised error then carries it as ``committed`` for the caller's report.
        """
        out: list[Snapshot] = []
        snap = (self.commit(append, "APPEND", properties=properties, restored_snapshot_id=restored_snapshot_id)
                if append else None)
        if snap is not None:
            out.append(snap)
        try:
            snap = self.commit(compact, "COMPACT", properties=properties) if compact else None
        except Exception as e:
            e.committed = list(out)  # type: ignore[attr-defined]
            raise
        if snap is not None:
            out.append(snap)
        return out

    def drop_partitions(self, specs: Sequence[Mapping[str, Any]]) -> Snapshot:
        """One OVERWRITE snapshot deleting every live data and index file of the partitions (Java's dropPartitions).

        Each spec must name every partition key (a full partition), as Java requires.
        """
        keys = self.table.schema.partition_keys
        if not keys:
            raise InvalidInput("drop partitions: the table is not partitioned")
        if not specs:
            raise InvalidInput("drop partitions: no partition given")
        filters = []
        for spec in specs:
            missing = [k for k in keys if k not in spec]
            if missing:
                raise InvalidInput(f"drop partition {dict(spec)}: partition key {missing[0]!r} has no value")
            f = self._static_partition_filter(spec)
            assert f is not None
            filters.append(f)

        def any_of(partition: bytes) -> bool:
            return any(f(partition) for f in filters)

        return self._overwrite_filtered(any_of, [], [], BATCH_COMMIT_IDENTIFIER, None, None, None)

    def may_have_published(self) -> bool:
        """Whether files handed to this committer may be referenced by a snapshot now: a
        caller cleaning up after a failure must keep them then (another writer's later
        snapshot does not make ours vanish, so this does not look at LATEST)."""
        return bool(self.published) or self.outcome_unknown

    def truncate(self) -> Snapshot:
        """Overwrite the whole table with nothing (an OVERWRITE snapshot with only DELETEs)."""
        snap = self.commit([], overwrite={}, dynamic=False)
        assert snap is not None
        return snap

    def abort(self, messages: Sequence[CommitMessage]) -> None:
        """Delete the data and changelog files the messages added (best effort)."""
        schema = self.table.schema
        for m in messages:
            part_dir = partition_dir_of(schema, m.partition)
            for f in [*m.new_files, *m.changelog_files]:
                path = paths.data_file_path(self.table.path, part_dir, m.bucket, f.file_name, f.external_path)
                self._quiet_delete(path)
                if not f.external_path:
                    for extra in f.extra_files:
                        self._quiet_delete(
                            paths.data_file_path(self.table.path, part_dir, m.bucket, extra)
                        )

    # -- building entries ----------------------------------------------------------------

    def _validate(self, messages: Sequence[CommitMessage]) -> None:
        arity = len(self.partition_types)
        from ..data.binary_row import serialized_arity

        for m in messages:
            try:
                got = serialized_arity(m.partition)
            except InvalidInput as e:
                raise InvalidInput(f"commit message partition: {e}") from e
            if got != arity:
                raise InvalidInput(
                    f"commit message partition has {got} fields, the table has {arity} partition keys"
                )
            for f in m.new_index_files:
                if f.index_type not in (HASH_INDEX, DELETION_VECTORS_INDEX) and f.global_index is None:
                    raise InvalidInput(f"index file {f.file_name}: unknown index type {f.index_type!r}")

    @staticmethod
    def _collect(
        messages: Sequence[CommitMessage],
    ) -> tuple[list[ManifestEntry], list[ManifestEntry], list[IndexManifestEntry]]:
        """Entries per message: DELETEs before ADDs (level upgrades keep that order, section 7)."""
        table: list[ManifestEntry] = []
        changelog: list[ManifestEntry] = []
        index: list[IndexManifestEntry] = []
        for m in messages:
            for f in m.deleted_files:
                table.append(ManifestEntry(FileKind.DELETE, m.partition, m.bucket, m.total_buckets, f))
            for f in m.new_files:
                table.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
            for f in m.changelog_files:
                changelog.append(ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f))
            for i in m.deleted_index_files:
                index.append(IndexManifestEntry(FileKind.DELETE, m.partition, m.bucket, i))
            for i in m.new_index_files:
                index.append(IndexManifestEntry(FileKind.ADD, m.partition, m.bucket, i))
        return table, changelog, index

    # -- overwrite -------------------------------------------------------------------------

    def _overwrite(
        self,
        spec: Mapping[str, Any],
        table_entries: list[ManifestEntry],
        index_entries: list[IndexManifestEntry],
        dynamic: bool | None,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        base_snapshot_id: int | None = None,
    ) -> Snapshot | None:
        """Delete every live file (and index file) the filter selects, then add the new ones."""
        partitioned = bool(self.partition_types)
        if dynamic is None:
            dynamic = self.options.get_bool("dynamic-partition-overwrite", True)
        dynamic = dynamic and partitioned
        part_filter: Callable[[bytes], bool] | None
        static = self._static_partition_filter(spec)
        if static is not None:
            for e in table_entries:
                if e.kind == FileKind.ADD and not static(e.partition):
                    raise InvalidInput(
                        f"overwrite of partition {dict(spec)}: new file {e.file.file_name} is in partition "
                        f"{self._partition_str(e.partition)}, outside the overwritten partition"
                    )
        if dynamic:
            touched = {e.partition for e in table_entries if e.kind == FileKind.ADD}
            if not touched:
                return None  # dynamic mode: nothing new, nothing deleted (as Java)
            part_filter = touched.__contains__
        else:
            part_filter = static  # None = whole table
        return self._overwrite_filtered(
            part_filter, table_entries, index_entries, identifier, watermark, props, base_snapshot_id
        )

    def _overwrite_filtered(
        self,
        part_filter: Callable[[bytes], bool] | None,
        table_entries: list[ManifestEntry],
        index_entries: list[IndexManifestEntry],
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        base_snapshot_id: int | None,
    ) -> Snapshot:
        adds = [e for e in table_entries if e.kind == FileKind.ADD]
        extra_deletes = [e for e in table_entries if e.kind == FileKind.DELETE]

        def build(latest: Snapshot | None) -> _Changes:
            if base_snapshot_id is not None:
                self._check_nothing_added_since(base_snapshot_id, latest, part_filter)
            deletes: list[ManifestEntry] = []
            index_deletes: list[IndexManifestEntry] = []
            if latest is not None:
                for e in self._live_entries(latest, part_filter):
                    deletes.append(ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file))
                for ie in self._index_entries(latest):
                    if part_filter is None or part_filter(ie.partition):
                        index_deletes.append(
                            IndexManifestEntry(FileKind.DELETE, ie.partition, ie.bucket, ie.index_file)
                        )
            seen = {d.identifier() for d in deletes}
            deletes += [d for d in extra_deletes if d.identifier() not in seen]
            return _Changes(deletes + adds, [], index_deletes + index_entries)

        return self._try_commit(build, "OVERWRITE", True, identifier, watermark, props)

    def _check_nothing_added_since(
        self, base_id: int, latest: Snapshot | None, part_filter: Callable[[bytes], bool] | None
    ) -> None:
        """CommitConflict if a non-COMPACT snapshot after ``base_id`` added files in the scope."""
        if latest is None or latest.id <= base_id:
            if latest is None or latest.id < base_id:
                raise CommitConflict(f"the base snapshot {base_id} of this overwrite is no longer the table's history")
            return
        scan = self.table.store_scan
        for sid in range(base_id + 1, latest.id + 1):
            snap = self.snapshot_manager.snapshot(sid)
            if snap.commit_kind == "COMPACT":
                continue  # compactions rearrange data the base already had
            for e in scan.delta(snap):
                if e.kind == FileKind.ADD and (part_filter is None or part_filter(e.partition)):
                    raise CommitConflict(
                        f"snapshot {sid} ({snap.commit_kind}) added {e.file.file_name} in partition "
                        f"{self._partition_str(e.partition)} after base snapshot {base_id}; overwriting would "
                        "lose it, give up committing"
                    )

    def _static_partition_filter(self, spec: Mapping[str, Any]) -> Callable[[bytes], bool] | None:
        """A predicate for a (possibly partial) static partition spec; None for ``{}``."""
        if not spec:
            return None
        keys = self.table.schema.partition_keys
        unknown = [k for k in spec if k not in keys]
        if unknown:
            if not keys:
                raise InvalidInput(f"overwrite partition {dict(spec)}: the table is not partitioned")
            raise InvalidInput(f"overwrite partition: {unknown[0]!r} is not a partition key (keys: {keys})")
        default = self.options.partition_default_name
        wanted = [(keys.index(k), None if v is None else str(v)) for k, v in spec.items()]
        types = self.partition_types
        from ..data.binary_row import deserialize

        cache: dict[bytes, bool] = {}

        def matches(partition: bytes) -> bool:
            hit = cache.get(partition)
            if hit is not None:
                return hit
            values = deserialize(partition, types)
            ok = True
            for i, want in wanted:
                v = values[i]
                if v is None:
                    ok = want is None or want == default
                elif want is None or want == default:
                    ok = False
                else:
                    ok = want in _renderings(v, types[i])
                if not ok:
                    break
            cache[partition] = ok
            return ok

        return matches

    # -- the retry loop ----------------------------------------------------------------------

    def _try_commit(
        self,
        build: Callable[[Snapshot | None], _Changes],
        kind: str,
        check_conflicts: bool,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
    ) -> Snapshot:
        start = time.monotonic()
        retry = 0
        self.attempts = 0
        while True:
            latest = self.snapshot_manager.latest_snapshot()
            changes = build(latest)
            self.attempts += 1
            try:
                return self._try_commit_once(latest, changes, kind, check_conflicts, identifier, watermark, props)
            except _LostRace:
                pass
            elapsed_ms = (time.monotonic() - start) * 1000
            if retry >= self.max_retries or (self.timeout_ms is not None and elapsed_ms > self.timeout_ms):
                raise CommitConflict(
                    f"commit to {self.table.path} gave up after {retry + 1} attempts: other writers kept "
                    f"publishing snapshot {self._next_id(latest)} first (commit.max-retries={self.max_retries})"
                )
            self._retry_wait(retry)
            retry += 1

    def _retry_wait(self, retry: int) -> None:
        time.sleep(self._retry_wait_ms(retry) / 1000.0)

    def _retry_wait_ms(self, retry: int) -> float:
        wait = min(self.min_retry_wait_ms * (2**retry), self.max_retry_wait_ms)
        return wait + random.randrange(max(1, int(wait * 0.2)))

    @staticmethod
    def _next_id(latest: Snapshot | None) -> int:
        return 1 if latest is None else latest.id + 1

    @commit_attempt  # SIGINT / SIGTERM wait until the attempt is decided
    def _try_commit_once(
        self,
        latest: Snapshot | None,
        changes: _Changes,
        kind: str,
        check_conflicts: bool,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
    ) -> Snapshot:
        new_id = self._next_id(latest)
        if check_conflicts:
            self._check_conflicts(latest, changes.table, kind)
            self._check_deletion_vector_conflicts(latest, changes)

        written: list[str] = []  # manifest-dir file names this attempt created
        try:
            snapshot = self._write_metadata(latest, new_id, changes, kind, identifier, watermark, props, written)
        except BaseException:
            self._cleanup(written)
            raise

        path = self.snapshot_manager.snapshot_path(new_id)
        data = snapshot.to_json().encode("utf-8")
        if self._before_publish is not None:
            self._before_publish(new_id)
        if not self._publish(path, data, new_id, written):
            self._cleanup(written)  # snapshot-N verified to be another writer's
            raise _LostRace()
        self.published.append(new_id)
        try:
            self.snapshot_manager.commit_latest_hint(new_id)
        except Exception as e:  # readers fall back to listing; the commit itself stands
            log.warning("snapshot %d committed but the LATEST hint could not be written: %s", new_id, e)
        return snapshot

    def _publish(self, path: str, data: bytes, new_id: int, written: list[str]) -> bool:
        """Publish snapshot-N: True if it is ours, False if another writer's (both verified).

        Between sending the put and learning its outcome ``outcome_unknown`` is set, so a
        caller cleaning up after an interrupt keeps everything the snapshot may reference.
        An outcome that stays unknown raises OutcomeUnknown and deletes nothing; it is not
        retried under the next id either, which could publish the same change twice.
        """
        was_unknown = self.outcome_unknown
        self.outcome_unknown = True
        waits = [self._retry_wait_ms(i) for i in range(_PUBLISH_VERIFY_ROUNDS)]
        try:
            ours = self.file_io.try_write_atomic(path, data, waits)
        except OutcomeUnknown as e:
            cause = e.__cause__
            detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(e)
            raise OutcomeUnknown(
                f"commit to {self.table.identifier}: the outcome of publishing snapshot {new_id} is unknown "
                f"({detail}); "
                f"nothing was deleted (if snapshot {new_id} is not this commit's, its files are orphans for "
                f"remove-orphan-files); check `inspect snapshots {self.table.identifier}` before committing again"
            ) from e
        except Exception:
            self.outcome_unknown = was_unknown
            self._cleanup(written)  # FileIO's contract: nothing was written
            raise
        self.outcome_unknown = was_unknown
        return ours

    # -- metadata writing ------------------------------------------------------------------

    def _write_metadata(
        self,
        latest: Snapshot | None,
        new_id: int,
        changes: _Changes,
        kind: str,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        written: list[str],
    ) -> Snapshot:
        schema_id = self._latest_schema_id()
        old_metas: list[ManifestFileMeta] = []
        previous_total = 0
        previous_index: str | None = None
        statistics: str | None = None
        next_row_id: int | None = 0
        if latest is not None:
            old_metas = self.manifest_list.read(latest.base_manifest_list) + self.manifest_list.read(
                latest.delta_manifest_list
            )
            if latest.total_record_count is not None:
                previous_total = latest.total_record_count
            else:
                previous_total = sum(e.file.row_count for e in self._live_entries(latest, None))
            if latest.watermark is not None:
                watermark = latest.watermark if watermark is None else max(watermark, latest.watermark)
            previous_index = latest.index_manifest
            statistics = self._inherited_statistics(latest, schema_id)
            if latest.next_row_id is not None:
                next_row_id = latest.next_row_id

        base_metas = self._merge_manifests(old_metas, written, schema_id)
        base_name, base_size = self.manifest_list.write(base_metas)
        written.append(base_name)

        delta_metas = self._write_manifests(changes.table, written, schema_id)
        delta_name, delta_size = self.manifest_list.write(delta_metas)
        written.append(delta_name)

        changelog_name = changelog_size = None
        changelog_count: int | None = None
        if changes.changelog:
            cl_metas = self._write_manifests(changes.changelog, written, schema_id)
            changelog_name, changelog_size = self.manifest_list.write(cl_metas)
            written.append(changelog_name)
            changelog_count = sum(e.file.row_count for e in changes.changelog)

        index_name = previous_index
        if changes.index:
            index_name = self._write_index_manifest(previous_index, changes.index)
            written.append(index_name)

        added = sum(e.file.row_count for e in changes.table if e.kind == FileKind.ADD)
        deleted = sum(e.file.row_count for e in changes.table if e.kind == FileKind.DELETE)
        delta_count = added - deleted
        now = int(time.time() * 1000)
        if latest is not None and latest.time_millis > now:
            now = latest.time_millis  # keep commit times monotonic for time travel
        return Snapshot(
            id=new_id,
            schema_id=schema_id,
            base_manifest_list=base_name,
            base_manifest_list_size=base_size,
            delta_manifest_list=delta_name,
            delta_manifest_list_size=delta_size,
            changelog_manifest_list=changelog_name,
            changelog_manifest_list_size=changelog_size,
            index_manifest=index_name,
            commit_user=self.commit_user,
            commit_identifier=identifier,
            commit_kind=kind,
            time_millis=now,
            total_record_count=previous_total + delta_count,
            delta_record_count=delta_count,
            changelog_record_count=changelog_count,
            watermark=watermark,
            statistics=statistics,
            properties=props,
            next_row_id=next_row_id,
        )

    def _latest_schema_id(self) -> int:
        latest = self.table.schema_manager.latest()
        if latest is None:
            raise CorruptMetadata(self.table.path, "table has no schema file")
        return latest.id

    def _inherited_statistics(self, latest: Snapshot, schema_id: int) -> str | None:
        """Java keeps the previous ANALYZE result unless the schema changed since."""
        if not latest.statistics:
            return None
        from ..refs.statistics import read_statistics

        try:
            stats = read_statistics(self.file_io, self.table.path, latest.statistics)
        except PaimonError:
            return None
        return latest.statistics if stats.schema_id == schema_id else None

    def _write_manifests(
        self, entries: list[ManifestEntry], written: list[str], schema_id: int
    ) -> list[ManifestFileMeta]:
        """Write entries rolling at ``manifest.target-file-size`` (as Java's rolling writer)."""
        if not entries:
            return []
        meta = self.manifest_file.write(entries, schema_id)
        written.append(meta.file_name)
        if meta.file_size <= self.target_manifest_size or len(entries) == 1:
            return [meta]
        self._quiet_delete(join(self.manifest_dir, meta.file_name))
        written.remove(meta.file_name)
        chunks = min(len(entries), math.ceil(meta.file_size / self.target_manifest_size))
        per = math.ceil(len(entries) / chunks)
        out = []
        for i in range(0, len(entries), per):
            m = self.manifest_file.write(entries[i : i + per], schema_id)
            written.append(m.file_name)
            out.append(m)
        return out

    def _write_index_manifest(self, previous: str | None, changes: list[IndexManifestEntry]) -> str:
        """Full listing: previous entries combined with the changes per Java's combiners."""
        prev = self.index_manifest_file.read(previous) if previous else []
        for e in prev:
            if e.kind != FileKind.ADD:
                raise CorruptMetadata(join(self.manifest_dir, previous or ""), "index manifest holds a DELETE entry")
        by_type_prev: dict[str, list[IndexManifestEntry]] = {}
        by_type_new: dict[str, list[IndexManifestEntry]] = {}
        for e in prev:
            by_type_prev.setdefault(e.index_file.index_type, []).append(e)
        for e in changes:
            by_type_new.setdefault(e.index_file.index_type, []).append(e)
        out: list[IndexManifestEntry] = []
        for itype in list(dict.fromkeys([*by_type_prev, *by_type_new])):
            p = by_type_prev.get(itype, [])
            n = by_type_new.get(itype, [])
            if itype in (HASH_INDEX, DELETION_VECTORS_INDEX) and not (
                itype == DELETION_VECTORS_INDEX and self.bucket_unaware
            ):
                out += _combine_bucketed(p, n)
            else:
                out += _combine_by_file_name(p, n, strict=itype == DELETION_VECTORS_INDEX)
        return self.index_manifest_file.write(out)

    def _cleanup(self, written: Iterable[str]) -> None:
        for name in written:
            self._quiet_delete(join(self.manifest_dir, name))

    def _quiet_delete(self, path: str) -> None:
        try:
            self.file_io.delete(path)
        except Exception as e:  # best effort: an orphan is harmless, a crash here is not
            log.warning("could not delete %s: %s", path, e)

    # -- manifest merging (ManifestFileMerger, 0.9 policy) -------------------------------------

    def _merge_manifests(
        self, inputs: list[ManifestFileMeta], written: list[str], schema_id: int
    ) -> list[ManifestFileMeta]:
        full = self._try_full_compaction(inputs, written, schema_id)
        if full is not None:
            return full
        result: list[ManifestFileMeta] = []
        candidates: list[ManifestFileMeta] = []
        total = 0
        for m in inputs:
            total += m.file_size
            candidates.append(m)
            if total >= self.target_manifest_size:
                self._merge_candidates(candidates, result, written, schema_id)
                candidates = []
                total = 0
        if len(candidates) >= self.merge_min_count:
            self._merge_candidates(candidates, result, written, schema_id)
        else:
            result.extend(candidates)
        return result

    def _merge_candidates(
        self, candidates: list[ManifestFileMeta], result: list[ManifestFileMeta], written: list[str], schema_id: int
    ) -> None:
        if len(candidates) == 1:
            result.append(candidates[0])
            return
        merged = self._merge_entry_map(candidates)
        if merged:
            result.extend(self._write_manifests(list(merged.values()), written, schema_id))

    def _merge_entry_map(self, manifests: list[ManifestFileMeta]) -> dict[tuple[Any, ...], ManifestEntry]:
        """Java FileEntry.mergeEntries: ADD then DELETE cancel; an unmatched DELETE is kept."""
        out: dict[tuple[Any, ...], ManifestEntry] = {}
        for m in manifests:
            for e in self.manifest_file.read(m.file_name):
                ident = e.identifier()
                if e.kind == FileKind.ADD:
                    if ident in out:
                        raise CorruptMetadata(
                            join(self.manifest_dir, m.file_name), f"data file {e.file.file_name} is added twice"
                        )
                    out[ident] = e
                elif ident in out:
                    del out[ident]
                else:
                    out[ident] = e
        return out

    def _try_full_compaction(
        self, inputs: list[ManifestFileMeta], written: list[str], schema_id: int
    ) -> list[ManifestFileMeta] | None:
        """Rewrite everything after the leading run of big, delete-free manifests once the rest
        reaches ``manifest.full-compaction-threshold-size``; DELETEs are resolved and dropped."""
        i = 0
        while i < len(inputs) and inputs[i].num_deleted_files == 0 and inputs[i].file_size >= self.target_manifest_size:
            i += 1
        base, delta = inputs[:i], inputs[i:]
        if sum(m.file_size for m in delta) < self.full_compaction_size:
            return None
        delta_merged = self._merge_entry_map(delta)
        deletes = {k for k, e in delta_merged.items() if e.kind == FileKind.DELETE}
        result: list[ManifestFileMeta] = []
        j = 0
        if self.partition_types:
            delete_parts = {k[0] for k in deletes}
            if not delete_parts:
                result.extend(base)
                j = len(base)
            else:
                while j < len(base) and not self._may_contain(base[j], delete_parts):
                    result.append(base[j])
                    j += 1
        # skip further base files that hold none of the deleted files
        carried: list[ManifestEntry] = []
        while j < len(base):
            entries = self.manifest_file.read(base[j].file_name)
            kept = [e for e in entries if e.identifier() not in deletes]
            j += 1
            if len(kept) != len(entries):
                carried = kept
                break
            result.append(base[j - 1])
        rest: list[ManifestEntry] = list(carried)
        for m in base[j:]:
            rest += [e for e in self.manifest_file.read(m.file_name) if e.identifier() not in deletes]
        rest += [e for e in delta_merged.values() if e.kind == FileKind.ADD]
        result.extend(self._write_manifests(rest, written, schema_id))
        return result

    def _may_contain(self, meta: ManifestFileMeta, partitions: set[bytes]) -> bool:
        """Whether a manifest's partition stats admit any of ``partitions`` (True if unsure)."""
        if not self.partition_types:
            return True
        from ..data.binary_row import deserialize

        try:
            nullable = [t.copy(nullable=True) for t in self.partition_types]
            mins = deserialize(meta.partition_stats.min_values, nullable)
            maxs = deserialize(meta.partition_stats.max_values, nullable)
            nulls = meta.partition_stats.null_counts
            for p in partitions:
                values = deserialize(p, self.partition_types)
                ok = True
                for k, v in enumerate(values):
                    if v is None:
                        if nulls is not None and nulls[k] == 0:
                            ok = False
                    elif mins[k] is None or maxs[k] is None or not (mins[k] <= v <= maxs[k]):
                        ok = False
                    if not ok:
                        break
                if ok:
                    return True
            return False
        except Exception:
            return True

    # -- reading the latest snapshot --------------------------------------------------------

    def _live_entries(
        self, snapshot: Snapshot, part_filter: Callable[[bytes], bool] | None, partitions: set[bytes] | None = None
    ) -> list[ManifestEntry]:
        """Live (merged) data files of the snapshot, optionally restricted to partitions."""
        from .scan import merge_entries

        metas = self.manifest_list.read(snapshot.base_manifest_list) + self.manifest_list.read(
            snapshot.delta_manifest_list
        )
        if partitions is not None:
            metas = [m for m in metas if self._may_contain(m, partitions)]
        entries = self.table.store_scan.read_entries(metas)  # concurrent reads on object stores
        if partitions is not None:
            entries = [e for e in entries if e.partition in partitions]
        if part_filter is not None:
            entries = [e for e in entries if part_filter(e.partition)]
        return merge_entries(entries)

    def _index_entries(self, snapshot: Snapshot) -> list[IndexManifestEntry]:
        if not snapshot.index_manifest:
            return []
        return [e for e in self.index_manifest_file.read(snapshot.index_manifest) if e.kind == FileKind.ADD]

    # -- conflicts ---------------------------------------------------------------------------

    def _check_conflicts(self, latest: Snapshot | None, delta: list[ManifestEntry], kind: str) -> None:
        """FORMAT-FACTS 7 conflict checks against the latest snapshot's changed partitions."""
        seen: set[tuple[Any, ...]] = set()
        for e in delta:
            ident = e.identifier()
            if ident in seen:
                raise CommitConflict(
                    f"commit adds or deletes data file {e.file.file_name} "
                    f"(partition {self._partition_str(e.partition)}, bucket {e.bucket}) more than once"
                )
            seen.add(ident)
        partitions = {e.partition for e in delta}
        base = self._live_entries(latest, None, partitions) if latest is not None and partitions else []
        where = f"snapshot {latest.id}" if latest is not None else "the empty table"

        if kind != "OVERWRITE":
            self._check_same_total_buckets(base, delta)

        live: dict[tuple[Any, ...], ManifestEntry] = {e.identifier(): e for e in base}
        for e in delta:
            ident = e.identifier()
            if e.kind == FileKind.ADD:
                if ident in live:
                    raise CommitConflict(
                        f"data file {e.file.file_name} (partition {self._partition_str(e.partition)}, bucket "
                        f"{e.bucket}) is already in {where}; give up committing"
                    )
                live[ident] = e
            else:
                if ident not in live:
                    raise CommitConflict(
                        f"data file {e.file.file_name} (partition {self._partition_str(e.partition)}, bucket "
                        f"{e.bucket}, level {e.file.level}) to delete is not in {where} (a concurrent commit "
                        "removed it); give up committing"
                    )
                del live[ident]

        if self.key_types is None:
            return
        levels: dict[tuple[bytes, int, int], list[ManifestEntry]] = {}
        for e in live.values():
            if e.file.level >= 1:
                levels.setdefault((e.partition, e.bucket, e.file.level), []).append(e)
        for (part, bucket, level), files in levels.items():
            if len(files) < 2:
                continue
            keyed = sorted(
                ((self._key(f.file.min_key), self._key(f.file.max_key), f) for f in files), key=lambda t: t[0]
            )
            for a, b in zip(keyed, keyed[1:]):
                if a[1] >= b[0]:
                    raise CommitConflict(
                        f"LSM conflict in partition {self._partition_str(part)}, bucket {bucket}, level {level}: "
                        f"key ranges of {a[2].file.file_name} and {b[2].file.file_name} overlap; give up committing"
                    )

    def _check_same_total_buckets(self, base: list[ManifestEntry], delta: list[ManifestEntry]) -> None:
        """A fixed-bucket partition keeps one bucket number until it is overwritten."""
        buckets: dict[bytes, int] = {}
        for e in [*base, *delta]:
            if e.total_buckets <= 0:
                continue
            old = buckets.setdefault(e.partition, e.total_buckets)
            if old != e.total_buckets:
                raise CommitConflict(
                    f"total buckets of partition {self._partition_str(e.partition)} changed from {old} to "
                    f"{e.total_buckets} without overwrite; give up committing"
                )

    def _check_layout_kept(self, restored_id: int, latest: Snapshot | None, delta: list[ManifestEntry]) -> None:
        """A fixed-bucket writer hashed its rows with the bucket numbers it restored at snapshot
        ``restored_id`` (0: the empty table); when a partition it writes was re-laid out since
        (a rescale or overwrite with another bucket number), its files would put keys in a
        second bucket. APPENDs skip the conflict checks, so this is their only guard."""
        if latest is None or latest.id == restored_id:
            return
        adds = [e for e in delta if e.kind == FileKind.ADD and e.total_buckets > 0]
        if adds:
            self._check_same_total_buckets(self._live_entries(latest, None, {e.partition for e in adds}), adds)

    def _check_deletion_vector_conflicts(self, latest: Snapshot | None, changes: _Changes) -> None:
        """Deletion vectors written meanwhile must not be lost: their rows would come back.

        A commit may only replace a DV index file that is still live, and may only delete a
        data file whose live deletion vector it replaces too (a compaction that read the file
        before a concurrent DELETE marked rows in it would otherwise resurrect them).
        """
        dv_deletes = [
            e for e in changes.index
            if e.kind == FileKind.DELETE and e.index_file.index_type == DELETION_VECTORS_INDEX
        ]
        data_deletes = [e for e in changes.table if e.kind == FileKind.DELETE]
        dv_adds = any(
            e.kind == FileKind.ADD and e.index_file.index_type == DELETION_VECTORS_INDEX for e in changes.index
        )
        if latest is None or not (dv_deletes or data_deletes or dv_adds):
            return
        live = [e for e in self._index_entries(latest) if e.index_file.index_type == DELETION_VECTORS_INDEX]
        if not live and not dv_deletes:
            return  # nothing live to lose
        live_names = {e.index_file.file_name for e in live}
        for e in dv_deletes:
            if e.index_file.file_name not in live_names:
                raise CommitConflict(
                    f"deletion-vector index file {e.index_file.file_name} (partition "
                    f"{self._partition_str(e.partition)}, bucket {e.bucket}) to replace is not in snapshot {latest.id} "
                    "(a concurrent commit replaced it); give up committing"
                )
        replaced = {e.index_file.file_name for e in dv_deletes}
        if not self.bucket_unaware:
            # one DV index file per bucket: a new one must replace whatever is live there now
            live_in_bucket: dict[tuple[bytes, int], set[str]] = {}
            for e in live:
                live_in_bucket.setdefault((e.partition, e.bucket), set()).add(e.index_file.file_name)
            for e in changes.index:
                if e.kind != FileKind.ADD or e.index_file.index_type != DELETION_VECTORS_INDEX:
                    continue
                kept = live_in_bucket.get((e.partition, e.bucket), set()) - replaced
                if kept:
                    raise CommitConflict(
                        f"deletion vectors of partition {self._partition_str(e.partition)}, bucket {e.bucket} "
                        f"changed concurrently ({sorted(kept)[0]} is live and this commit does not replace it); "
                        "give up committing"
                    )
        covered: dict[tuple[bytes, int, str], str] = {}
        for e in live:
            if e.index_file.file_name in replaced:
                continue
            for r in e.index_file.dv_ranges or ():
                covered[(e.partition, e.bucket if not self.bucket_unaware else 0, r.data_file_name)] = (
                    e.index_file.file_name
                )
        if not covered:
            return
        for e in data_deletes:
            index_name = covered.get((e.partition, e.bucket if not self.bucket_unaware else 0, e.file.file_name))
            if index_name is not None:
                raise CommitConflict(
                    f"data file {e.file.file_name} (partition {self._partition_str(e.partition)}, bucket {e.bucket}) "
                    f"gained deletion vectors in {index_name} after it was read; give up committing"
                )

    def _key(self, data: bytes) -> tuple[Any, ...]:
        """A sortable form of a serialized trimmed-PK row, ordered as the key comparator orders
        it (nulls first; NaN last and equal to NaN; -0.0 == 0.0)."""
        if self._key_fn is None:
            from ..mergetree.levels import key_function

            assert self.key_types is not None
            self._key_fn = key_function(self.key_types)
        return self._key_fn(data)  # type: ignore[no-any-return]

    # -- rendering -------------------------------------------------------------------------

    def _partition_str(self, partition: bytes) -> str:
        if not self.partition_types:
            return "(none)"
        try:
            return partition_dir_of(self.table.schema, partition) or "(none)"
        except Exception:
            return partition.hex()


# ---------------------------------------------------------------------------------------
# index manifest combiners (IndexManifestFileHandler)
# ---------------------------------------------------------------------------------------


def _combine_bucketed(prev: list[IndexManifestEntry], new: list[IndexManifestEntry]) -> list[IndexManifestEntry]:
    """At most one file per (partition, bucket, type): DELETEs first, then ADDs replace."""
    out: dict[tuple[bytes, int, str], IndexManifestEntry] = {}
    for e in prev:
        out[(e.partition, e.bucket, e.index_file.index_type)] = e
    for e in new:
        if e.kind == FileKind.DELETE:
            out.pop((e.partition, e.bucket, e.index_file.index_type), None)
    for e in new:
        if e.kind == FileKind.ADD:
            out[(e.partition, e.bucket, e.index_file.index_type)] = e
    return list(out.values())


def _combine_by_file_name(
    prev: list[IndexManifestEntry], new: list[IndexManifestEntry], strict: bool
) -> list[IndexManifestEntry]:
    """Bucket-unaware DV (strict) and global indexes: combined per index file name."""
    out: dict[str, IndexManifestEntry] = {e.index_file.file_name: e for e in prev}
    # Java's GlobalCombiner (unaware DV) applies changes in order; GlobalIndexCombiner deletes first
    ordered = list(new) if strict else sorted(new, key=lambda e: e.kind != FileKind.DELETE)
    for e in ordered:
        name = e.index_file.file_name
        if e.kind == FileKind.ADD:
            if strict and name in out:
                raise CommitConflict(f"index file {name} is already in the index manifest")
            out[name] = e
        else:
            if name not in out:
                raise CommitConflict(f"index file {name} to delete is not in the index manifest")
            del out[name]
    return list(out.values())


def _renderings(value: Any, data_type: Any) -> set[str]:
    """The strings a user may give for a partition value (legacy and SQL-cast forms)."""
    out: set[str] = set()
    for legacy in (True, False):
        try:
            s = paths.partition_value_to_str(value, data_type, legacy)
        except Exception:
            continue
        if s is not None:
            out.add(s)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        out.add(str(value))
    return out
