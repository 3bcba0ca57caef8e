"""FileStoreCommit: turn written data files into a new snapshot, the way Java Paimon commits.

One ``commit`` call publishes at most one snapshot (FORMAT-FACTS 7):

1. read the data manifests of the latest snapshot and merge them into the new **base manifest
   list** (ManifestFileMerger policy: full compaction of small/has-deletes manifests past
   ``manifest.full-compaction-threshold-size``, otherwise adjacent small manifests merged at
   ``manifest.target-file-size`` or when ``manifest.merge-min-count`` remain) -- always written;
2. write the new entries into delta manifest(s) and the **delta manifest list**;
3. the **changelog manifest list** when there are changelog files;
4. the **index manifest** (a full listing; its name is reused when nothing changed);
5. ``snapshot-N`` published with write-if-absent (``FileIO.try_write_atomic``), then LATEST --
   or, where a catalog server commits (a REST catalog's ``SnapshotCommit``), posted to it with
   the base snapshot and the commit's partition statistics
   (``snapshot_commit.partition_statistics``; publishing is ``snapshot_commit``).

A lost race (``snapshot-N`` verified to hold another writer's snapshot) deletes what this
attempt wrote, re-reads the latest snapshot, re-checks conflicts and retries with Java's
back-off (``min(commit.min-retry-wait * 2^n, commit.max-retry-wait)`` + up to 20 % jitter) up
to ``commit.max-retries``. A publish whose outcome cannot be learnt (the put failed, timed out
or met an S3 409, and reading snapshot-N back did not settle it) raises OutcomeUnknown: nothing
is deleted and nothing is retried under another id. A real conflict (deleting a file that is
gone, adding one twice, LSM key ranges overlapping on a level >= 1, bucket count changing
without overwrite) raises ``CommitConflict`` with nothing committed. Files referenced by a
published snapshot are never deleted. What an overwrite deletes is ``commit_changes``;
conflict checks are ``commit_conflicts``, manifest merging ``manifest_merge``.
"""

from __future__ import annotations

import random
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..data.binary_row import serialized_arity
from ..errors import (
    CatalogUnavailable,
    CommitConflict,
    CorruptMetadata,
    InvalidInput,
    NotYetSupported,
    OutcomeUnknown,
    PaimonError,
)
from ..io import paths
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
from ..schema.iceberg_options import iceberg_enabled
from ..utils.interrupt import commit_attempt
from .commit_changes import CommitChanges, OverwriteChanges
from .commit_conflicts import ConflictDetection, LiveFiles, StrictModeChecker
from .manifest_merge import ManifestFileMerger, write_index_manifest
from .metastore_sync import metastore_partitions
from .partition_spec import static_partition_filter
from .row_tracking import assign_row_tracking, check_row_tracking_table, is_row_tracking, next_row_id_start
from .snapshot_commit import LostRace, OpenAttempt, OutcomeOpen, SnapshotPublishing

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

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
class _Lists:
    """The manifest lists (name, size) and the index manifest one attempt wrote."""

    base: tuple[str, int]
    delta: tuple[str, int]
    changelog: tuple[str | None, int | None] = (None, None)
    changelog_count: int | None = None
    index: str | None = None


class CommitCallback(Protocol):
    """Told of every snapshot a commit published, with the commit's data-file and index-file
    entries (Java ``CommitCallback``): the Iceberg metadata writer."""

    def call(self, snapshot: Snapshot, delta: Sequence[ManifestEntry], index: Sequence[IndexManifestEntry]) -> None:
        ...


def commit_callbacks(table: FileStoreTable) -> list[CommitCallback]:
    """The callbacks Java's ``AbstractFileStore.createCommitCallbacks`` adds for this table (the
    metastore's partitions are registered before the publish instead, see ``_register_partitions``)."""
    if table.branch is None and iceberg_enabled(table.schema.options):
        from ..iceberg.callback import IcebergCommitCallback  # only Iceberg-compatible tables pay its import

        return [IcebergCommitCallback(table)]
    return []



# ---------------------------------------------------------------------------------------


class FileStoreCommit(OverwriteChanges, SnapshotPublishing):
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
        fmt = self.options.manifest_format
        if fmt != "avro":
            raise NotYetSupported(f"manifest.format={fmt}: only avro manifests can be written")
        check_row_tracking_table(schema, self.options, "commit")
        self.row_tracking = is_row_tracking(self.options)  # data-evolution tables too (they need it)
        comp = self.options.manifest_compression.lower()
        codec = _AVRO_CODECS.get(comp)
        if codec is None:
            raise NotYetSupported(f"manifest.compression={comp}: not an Avro codec this toolkit writes")
        self.manifest_file = ManifestFile(self.file_io, self.manifest_dir, self.partition_type, codec)
        self.manifest_list = ManifestList(self.file_io, self.manifest_dir, codec)
        self.index_manifest_file = IndexManifestFile(self.file_io, self.manifest_dir, codec)
        self.max_retries = self.options.commit_max_retries
        self.min_retry_wait_ms = self.options.get_duration_millis("commit.min-retry-wait") or 10
        self.max_retry_wait_ms = self.options.get_duration_millis("commit.max-retry-wait") or 10_000
        self.timeout_ms = self.options.get_duration_millis("commit.timeout")
        self.bucket_unaware = schema.bucket == -1 and not schema.primary_keys
        self.merger = ManifestFileMerger(self.manifest_file, self.manifest_dir, self.options, self.partition_types,
                                         self._quiet_delete)
        self.live = LiveFiles(table, self.manifest_list, self.index_manifest_file, self.merger)
        self.conflicts = ConflictDetection(table, self.live, self.bucket_unaware)
        last_safe = self.options.get_int("commit.strict-mode.last-safe-snapshot")
        self.strict = None if last_safe is None else StrictModeChecker(table, self.commit_user, self.live, last_safe)
        self.callbacks = commit_callbacks(table)
        # test hook: called with the target snapshot id right before each publish
        self._before_publish: Callable[[int], None] | None = None
        self.attempts = 0  # attempts of the last commit() (for callers' reports and tests)
        self.overwritten_files = 0  # live data files the last OVERWRITE replaced (0: a new partition)
        self.published: list[int] = []  # snapshot ids this instance published
        self.outcome_unknown = False  # a publish failed in a way that may still have landed
        self.rollback_entries: list[ManifestEntry] = []  # the delta rollback_as_latest committed
        self._open: list[OpenAttempt] = []  # server publishes whose outcome is still unknown

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
        check_latest: Callable[[Snapshot | None], None] | None = None,
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
        A COMPACT commit pinned the same way (postpone compaction, whose new records are numbered
        after the base's sequence numbers) fails when the partitions it touches got new files.

        ``restored_snapshot_id`` (appends of fixed-bucket writers): the snapshot the writer
        restored its buckets from; a partition re-laid out with another bucket number since
        fails the commit with CommitConflict.

        ``check_latest`` runs on the snapshot each attempt builds on (raise CommitConflict to
        refuse it); a snapshot published meanwhile makes the attempt retry and check again.
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
        if base_snapshot_id is not None and kind != "COMPACT":
            raise InvalidInput("base_snapshot_id pins an overwrite or a compaction; an append cannot be pinned")

        if not table_entries and not changelog_entries and not index_entries:
            return None
        has_delete = any(e.kind == FileKind.DELETE for e in table_entries)
        has_dv = any(e.index_file.index_type == DELETION_VECTORS_INDEX for e in index_entries)
        if kind == "APPEND" and (has_delete or has_dv):
            kind = "OVERWRITE"  # Java 1.3+ labelling: the append rewrote or deleted something
        check = kind != "APPEND"
        changes = CommitChanges(table_entries, changelog_entries, index_entries)

        touched = {e.partition for e in table_entries}

        def build(latest: Snapshot | None) -> CommitChanges:
            if restored_snapshot_id is not None:
                self.conflicts.check_layout_kept(restored_snapshot_id, latest, table_entries)
            if check_latest is not None:
                check_latest(latest)
            if base_snapshot_id is not None:  # a compaction that numbered rows as of the base
                self.conflicts.check_nothing_added_since(base_snapshot_id, latest, touched.__contains__,
                                                        "compaction")
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

    def drop_partitions(self, specs: Sequence[Mapping[str, Any]], *, operation: str | None = None) -> Snapshot:
        """One OVERWRITE snapshot deleting every live data and index file of the partitions
        (Java's ``dropPartitions``). A spec may name the leading keys or any of them (a
        partial spec drops every partition it matches, as Java 0.9+ does)."""
        keys = self.table.schema.partition_keys
        if not keys:
            raise InvalidInput("drop partitions: the table is not partitioned")
        if not specs:
            raise InvalidInput("drop partitions: no partition given")
        filters = []
        for spec in specs:
            if not spec:
                raise InvalidInput("drop partitions: an empty partition spec would drop the whole table")
            f = static_partition_filter(self.table.schema, spec)
            assert f is not None
            filters.append(f)

        def any_of(partition: bytes) -> bool:
            return any(f(partition) for f in filters)

        return self.drop_partitions_matching(any_of, operation=operation)

    def drop_partitions_matching(self, selects: Callable[[bytes], bool], *, operation: str | None = None
                                 ) -> Snapshot:
        """:meth:`drop_partitions` of every partition ``selects`` accepts; ``operation`` is the
        snapshot's logical operation (Java 2.x writes ``TRUNCATE`` for a partition drop)."""
        metastore = self.table.catalog_environment.partitions
        if metastore is not None:
            # the metastore first: a crash before the data commit leaves partitions a re-run of
            # the drop removes again, never metastore partitions pointing at deleted folders
            metastore.drop_partitions(metastore_partitions(self.table, selects))
        return self._overwrite_filtered(selects, [], [], BATCH_COMMIT_IDENTIFIER, None, None, None,
                                        operation=operation)

    def replace_manifests(
        self, rewrite: Callable[[Snapshot, list[str]], list[ManifestFileMeta] | None], commit_kind: str = "COMPACT",
        *, total_record_count: Callable[[], int | None] | None = None,
    ) -> Snapshot | None:
        """Republish the latest snapshot's data under a new base manifest list (Java's
        ``compactManifest`` / ``replaceManifestList``): ``rewrite(latest, written)`` returns the
        new data manifests (files it writes go into ``written``) or None for "nothing to do".

        The new snapshot has an empty delta list and no changelog, and keeps the schema id,
        record count, index manifest, watermark, statistics, properties and next row id; it is
        published as any commit is (lost races re-run ``rewrite`` on the new latest snapshot).
        ``total_record_count``, asked after each ``rewrite``, replaces the record count when the
        rewrite dropped data (Java's ``replaceManifestList`` takes it). Returns None when the
        table has no snapshot or nothing was rewritten.
        """
        kind = commit_kind.upper()
        if kind not in COMMIT_KINDS:
            raise InvalidInput(f"commit kind {commit_kind!r}: expected one of {', '.join(COMMIT_KINDS)}")
        start = time.monotonic()
        retry = 0
        self.attempts = 0
        self._open.clear()
        while True:
            latest = self.snapshot_manager.latest_snapshot()
            landed = self._landed_earlier(latest)
            if landed is not None:
                return landed
            if latest is None:
                return None
            self.attempts += 1
            try:
                snap = self._replace_manifests_once(latest, rewrite, kind, total_record_count)
            except (LostRace, OutcomeOpen):
                pass
            else:
                if snap is not None:
                    self._after_publish(snap, [], [])
                return snap
            self._give_up_or_wait(start, retry, latest)
            retry += 1

    def rollback_delta(self, latest: Snapshot, target: Snapshot) -> tuple[list[ManifestEntry], list[ManifestEntry]]:
        """(DELETE entries of the latest's live files the target lacks, ADD entries of the target's
        live files the latest lacks), matched on Java's FileEntry.Identifier."""
        now = {e.identifier(): e for e in self.live.data(latest, None)}
        then = {e.identifier(): e for e in self.live.data(target, None)}
        deletes = [ManifestEntry(FileKind.DELETE, e.partition, e.bucket, e.total_buckets, e.file)
                   for k, e in now.items() if k not in then]
        adds = [ManifestEntry(FileKind.ADD, e.partition, e.bucket, e.total_buckets, e.file)
                for k, e in then.items() if k not in now]
        return deletes, adds

    def rollback_as_latest(self, target: Snapshot) -> Snapshot:
        """Java 2.x ``rollbackToAsLatest``: one OVERWRITE snapshot after the latest whose live
        files are the target's (its delta deletes what the target lacks and adds back what it
        had), with the target's index manifest, schema id, record count, watermark, statistics
        and properties; nothing is deleted, no snapshot or tag goes. A lost race recomputes the
        delta against the new latest snapshot."""
        start = time.monotonic()
        retry = 0
        self.attempts = 0
        registered = False
        while True:
            latest = self.snapshot_manager.latest_snapshot()
            if latest is None:
                raise InvalidInput(f"{self.table.identifier} has no snapshot to roll back")
            deletes, adds = self.rollback_delta(latest, target)
            if not registered:
                self._register_partitions(adds)  # partitions the target had come back
                registered = True
            self.attempts += 1
            try:
                snap = self._rollback_as_latest_once(latest, target, deletes + adds)
            except (LostRace, OutcomeOpen):
                pass
            else:
                self._after_publish(snap, deletes + adds, [])
                return snap
            self._give_up_or_wait(start, retry, latest)
            retry += 1

    @commit_attempt
    def _rollback_as_latest_once(self, latest: Snapshot, target: Snapshot, delta: list[ManifestEntry]) -> Snapshot:
        written: list[str] = []
        schema_id = target.schema_id
        try:
            old_metas = self.manifest_list.read(latest.base_manifest_list) + self.manifest_list.read(
                latest.delta_manifest_list)
            base = self.manifest_list.write(self.merger.merge(old_metas, written, schema_id))
            written.append(base[0])
            delta_list = self.manifest_list.write(self.merger.write(delta, written, schema_id))
            written.append(delta_list[0])
        except BaseException:
            self._cleanup(written)
            raise
        added = sum(e.file.row_count for e in delta if e.kind == FileKind.ADD)
        removed = sum(e.file.row_count for e in delta if e.kind == FileKind.DELETE)
        row_ids = [x for x in (latest.next_row_id, target.next_row_id) if x is not None]
        snapshot = Snapshot(
            id=latest.id + 1, schema_id=schema_id, base_manifest_list=base[0], base_manifest_list_size=base[1],
            delta_manifest_list=delta_list[0], delta_manifest_list_size=delta_list[1],
            index_manifest=target.index_manifest, commit_user=self.commit_user,
            commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind="OVERWRITE", uuid=str(uuid.uuid4()),
            time_millis=max(int(time.time() * 1000), latest.time_millis),
            total_record_count=target.total_record_count, delta_record_count=added - removed,
            watermark=target.watermark, statistics=target.statistics, properties=target.properties,
            # row ids stay unique: never move nextRowId backwards (Java keeps the larger)
            next_row_id=max(row_ids) if row_ids else None,
        )
        published = self._publish_snapshot(snapshot, written, latest, delta)
        self.rollback_entries = delta
        return published

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
                path = paths.data_file_path(self.table.data_root, part_dir, m.bucket, f.file_name, f.external_path)
                self._quiet_delete(path)
                for extra in f.extra_files:
                    self._quiet_delete(paths.aligned_path(self.table.data_root, part_dir, m.bucket, extra, f.external_path))

    # -- building entries ----------------------------------------------------------------

    def _validate(self, messages: Sequence[CommitMessage]) -> None:
        arity = len(self.partition_types)
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

    # -- the retry loop ----------------------------------------------------------------------

    def _try_commit(
        self,
        build: Callable[[Snapshot | None], CommitChanges],
        kind: str,
        check_conflicts: bool,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        operation: str | None = None,
    ) -> Snapshot:
        start = time.monotonic()
        retry = 0
        self.attempts = 0
        registered = False
        self._open.clear()
        while True:
            latest = self.snapshot_manager.latest_snapshot()
            landed = self._landed_earlier(latest)
            if landed is not None:
                return landed
            changes = build(latest)
            if not registered:
                self._register_partitions(changes.table)
                registered = True
            self.attempts += 1
            try:
                snap = self._try_commit_once(latest, changes, kind, check_conflicts, identifier, watermark, props,
                                             operation)
            except (LostRace, OutcomeOpen):
                pass
            else:
                if self.strict is not None:
                    self.strict.update(snap.id)
                self._after_publish(snap, changes.table, changes.index)
                return snap
            self._give_up_or_wait(start, retry, latest)
            retry += 1

    def _after_publish(self, snapshot: Snapshot, delta: Sequence[ManifestEntry],
                       index: Sequence[IndexManifestEntry]) -> None:
        """The commit callbacks, after the snapshot is published (as Java). A failure does not
        undo the commit: it is reported naming the committed snapshot; the next commit rebuilds
        Iceberg metadata it finds missing."""
        for cb in self.callbacks:
            try:
                cb.call(snapshot, delta, index)
            except Exception as e:
                raise PaimonError(
                    f"commit to {self.table.identifier}: snapshot {snapshot.id} was committed, but its Iceberg "
                    f"metadata could not be written or registered ({e}); Iceberg readers see the previous version "
                    "until the next commit rebuilds and registers it") from e

    def _give_up_or_wait(self, start: float, retry: int, latest: Snapshot | None) -> None:
        """After a lost race: CommitConflict past the retry budget, else Java's back-off."""
        elapsed_ms = (time.monotonic() - start) * 1000
        if retry >= self.max_retries or (self.timeout_ms is not None and elapsed_ms > self.timeout_ms):
            if self._open:
                ids = ", ".join(str(a.snapshot.id) for a in self._open)
                raise OutcomeUnknown(
                    f"commit to {self.table.identifier}: the catalog could not tell whether snapshot {ids} was "
                    f"published, {retry + 1} attempts; nothing was deleted -- check `inspect snapshots "
                    f"{self.table.identifier}` before committing again")
            raise CommitConflict(
                f"commit to {self.table.path} gave up after {retry + 1} attempts: other writers kept "
                f"publishing snapshot {self._next_id(latest)} first (commit.max-retries={self.max_retries})"
            )
        self._retry_wait(retry)

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
        changes: CommitChanges,
        kind: str,
        check_conflicts: bool,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        operation: str | None = None,
    ) -> Snapshot:
        new_id = self._next_id(latest)
        if check_conflicts:
            self.conflicts.check(latest, changes.table, kind)
            self.conflicts.check_deletion_vectors(latest, changes.table, changes.index)
        if self.strict is not None:  # Java checks it whatever the commit kind
            self.strict.check(new_id, kind, {e.partition for e in changes.table} | {e.partition for e in changes.index})

        next_row_id: int | None = None
        if self.row_tracking:  # ids depend on the snapshot this attempt builds on
            assigned = assign_row_tracking(
                new_id, next_row_id_start(latest), changes.table,
                group_by_partition=self.options.get_bool("row-tracking.partition-group-on-commit", True))
            changes = CommitChanges(assigned.entries, changes.changelog, changes.index)
            next_row_id = assigned.next_row_id

        written: list[str] = []  # manifest-dir file names this attempt created
        try:
            snapshot = self._write_metadata(latest, new_id, changes, kind, identifier, watermark, props, written,
                                            next_row_id, operation)
        except BaseException:
            self._cleanup(written)
            raise
        return self._publish_snapshot(snapshot, written, latest, changes.table)

    def _register_partitions(self, entries: Sequence[ManifestEntry]) -> None:
        """A metastore that tracks the table's partitions (``metastore.partitioned-table``) learns
        the partitions the commit adds files to (Java's ``AddPartitionCommitCallback``).

        Unlike Java, before the snapshot is published: a metastore that cannot be told fails
        the commit with nothing published (exit 8), instead of a committed table whose
        partitions the metastore does not list. A commit that then loses leaves at most a
        partition without data in the metastore (its folder holds the written files until they
        are cleaned up), which ``repair`` drops; adding is idempotent."""
        metastore = self.table.catalog_environment.partitions
        schema = self.table.schema
        if metastore is None or not schema.partition_keys:
            return
        added = sorted({e.partition for e in entries if e.kind == FileKind.ADD})
        if not added:
            return
        try:
            metastore.add_partitions([paths.partition_spec_of(schema, p) for p in added])
        except PaimonError as e:
            raise CatalogUnavailable(f"commit to {self.table.identifier}: the metastore could not add the "
                                     f"partitions the commit writes to ({e}); nothing was committed") from e

    @commit_attempt
    def _replace_manifests_once(
        self, latest: Snapshot, rewrite: Callable[[Snapshot, list[str]], list[ManifestFileMeta] | None], kind: str,
        total_record_count: Callable[[], int | None] | None = None,
    ) -> Snapshot | None:
        written: list[str] = []
        try:
            metas = rewrite(latest, written)
            if metas is None:
                return None
            base = self.manifest_list.write(metas)
            written.append(base[0])
            delta = self.manifest_list.write([])
            written.append(delta[0])
        except BaseException:
            self._cleanup(written)
            raise
        count = total_record_count() if total_record_count is not None else None
        snapshot = Snapshot(
            id=latest.id + 1, schema_id=latest.schema_id, base_manifest_list=base[0],
            base_manifest_list_size=base[1], delta_manifest_list=delta[0], delta_manifest_list_size=delta[1],
            index_manifest=latest.index_manifest, commit_user=self.commit_user,
            commit_identifier=BATCH_COMMIT_IDENTIFIER, commit_kind=kind, uuid=str(uuid.uuid4()),
            time_millis=max(int(time.time() * 1000), latest.time_millis),
            total_record_count=latest.total_record_count if count is None else count, delta_record_count=0,
            watermark=latest.watermark,
            statistics=latest.statistics, properties=latest.properties, next_row_id=latest.next_row_id,
        )
        return self._publish_snapshot(snapshot, written, latest, [])

    # -- metadata writing ------------------------------------------------------------------

    def _write_metadata(
        self,
        latest: Snapshot | None,
        new_id: int,
        changes: CommitChanges,
        kind: str,
        identifier: int,
        watermark: int | None,
        props: dict[str, str] | None,
        written: list[str],
        assigned_next_row_id: int | None = None,
        operation: str | None = None,
    ) -> Snapshot:
        """``assigned_next_row_id``: the row-tracking counter after this commit's files; other
        tables carry the latest ``nextRowId`` forward (0 when absent), as Java writes it."""
        schema_id = self._latest_schema_id()
        old_metas: list[ManifestFileMeta] = []
        previous_total = 0
        statistics: str | None = None
        next_row_id: int | None = 0
        if latest is not None:
            old_metas = self.manifest_list.read(latest.base_manifest_list) + self.manifest_list.read(
                latest.delta_manifest_list
            )
            if latest.total_record_count is not None:
                previous_total = latest.total_record_count
            else:
                previous_total = sum(e.file.row_count for e in self.live.data(latest, None))
            if latest.watermark is not None:
                watermark = latest.watermark if watermark is None else max(watermark, latest.watermark)
            statistics = self._inherited_statistics(latest, schema_id)
            if latest.next_row_id is not None:
                next_row_id = latest.next_row_id
        if assigned_next_row_id is not None:
            next_row_id = assigned_next_row_id
        lists = self._write_lists(old_metas, latest.index_manifest if latest is not None else None, changes,
                                  written, schema_id)
        added = sum(e.file.row_count for e in changes.table if e.kind == FileKind.ADD)
        deleted = sum(e.file.row_count for e in changes.table if e.kind == FileKind.DELETE)
        delta_count = added - deleted
        now = int(time.time() * 1000)
        if latest is not None and latest.time_millis > now:
            now = latest.time_millis  # keep commit times monotonic for time travel
        return Snapshot(
            uuid=str(uuid.uuid4()),  # Java 2.0+: a catalog server compares bases by it
            id=new_id,
            schema_id=schema_id,
            base_manifest_list=lists.base[0],
            base_manifest_list_size=lists.base[1],
            delta_manifest_list=lists.delta[0],
            delta_manifest_list_size=lists.delta[1],
            changelog_manifest_list=lists.changelog[0],
            changelog_manifest_list_size=lists.changelog[1],
            index_manifest=lists.index,
            commit_user=self.commit_user,
            commit_identifier=identifier,
            commit_kind=kind,
            time_millis=now,
            total_record_count=previous_total + delta_count,
            delta_record_count=delta_count,
            changelog_record_count=lists.changelog_count,
            watermark=watermark,
            statistics=statistics,
            properties=props,
            next_row_id=next_row_id,
            operation=operation,
        )

    def _write_lists(
        self, old_metas: list[ManifestFileMeta], previous_index: str | None, changes: CommitChanges, written: list[str],
        schema_id: int,
    ) -> _Lists:
        """The base, delta and changelog manifest lists and the index manifest of an attempt."""
        base = self.manifest_list.write(self.merger.merge(old_metas, written, schema_id))
        written.append(base[0])
        delta = self.manifest_list.write(self.merger.write(changes.table, written, schema_id))
        written.append(delta[0])
        lists = _Lists(base, delta, index=previous_index)
        if changes.changelog:
            changelog = self.manifest_list.write(self.merger.write(changes.changelog, written, schema_id))
            written.append(changelog[0])
            lists.changelog = changelog
            lists.changelog_count = sum(e.file.row_count for e in changes.changelog)
        if changes.index:
            lists.index = write_index_manifest(self.index_manifest_file, self.manifest_dir, previous_index,
                                               changes.index, self.bucket_unaware)
            written.append(lists.index)
        return lists

    def _latest_schema_id(self) -> int:
        latest = self.table.schema_manager.latest()
        if latest is None:
            raise CorruptMetadata(self.table.path, "table has no schema file")
        return latest.id

    def _inherited_statistics(self, latest: Snapshot, schema_id: int) -> str | None:
        """Java keeps the previous ANALYZE result unless the schema changed since."""
        if not latest.statistics:
            return None
        from ..refs.statistics import read_statistics  # a table with statistics is the exception

        try:
            stats = read_statistics(self.file_io, self.table.path, latest.statistics)
        except PaimonError:
            return None
        return latest.statistics if stats.schema_id == schema_id else None
