"""Publishing a built snapshot, the step of a commit that may race (Java's ``SnapshotCommit``:
``RenamingSnapshotCommit`` writes ``snapshot-N`` if absent under the catalog's lock, then
LATEST; ``CatalogSnapshotCommit`` posts it to a catalog server with the commit's partition
statistics), and the clean-up of what a lost attempt wrote (Java's ``CommitCleaner``).

:class:`SnapshotPublishing` is a part of ``commit.FileStoreCommit`` (its state lives there):
a lost race raises :class:`LostRace`, an outcome the catalog server could not tell raises
:class:`OutcomeOpen` and is looked for before the next attempt (``_landed_earlier``).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..data.java_format import utc_wall_clock_from_millis
from ..errors import CommitConflict, OutcomeUnknown
from ..io import paths
from ..io.fileio import join
from ..manifest.manifest import FileKind, ManifestEntry
from ..refs.snapshot import Snapshot
from ..table.catalog_environment import PartitionStatistics

if TYPE_CHECKING:
    from ..io.fileio import FileIO
    from ..refs.snapshot import SnapshotManager
    from ..table.catalog_environment import SnapshotCommit
    from ..table.file_store_table import FileStoreTable

log = logging.getLogger(__name__)

# rounds of re-reading (and re-putting) a snapshot whose publish outcome is open, with the
# commit's retry back-off between them (10 ms .. 1.3 s, about 2.5 s in all, by default)
_PUBLISH_VERIFY_ROUNDS = 8


class LostRace(Exception):
    """snapshot-N was published by someone else; this attempt's files are already cleaned."""


class OutcomeOpen(Exception):
    """The catalog server could not tell whether this attempt was published; its files stay and
    the next attempt first looks whether it landed (Java's retry after a commit exception)."""


@dataclass
class OpenAttempt:
    """An attempt whose publish outcome is unknown: its base, its snapshot and the files it wrote."""

    base_id: int  # 0: the table had no snapshot
    snapshot: Snapshot
    written: list[str]


def partition_statistics(schema: Any, entries: Sequence[ManifestEntry]) -> list[PartitionStatistics]:
    """Java's ``PartitionEntry.merge`` of a commit's data file changes, per partition in order of
    first appearance: records, bytes and files added minus removed, the newest file's creation
    time in epoch millis (Java ``creationTimeEpochMillis``: the stored wall clock read in the
    local zone), the last entry's bucket count; partitions named as the metastore names them."""
    merged: dict[bytes, list[int]] = {}
    for e in entries:
        sign = -1 if e.kind == FileKind.DELETE else 1
        created = e.file.creation_time
        created_ms = (int(utc_wall_clock_from_millis(created).timestamp() * 1000) if created is not None
                      else _NO_CREATION_TIME)
        cur = merged.get(e.partition)
        if cur is None:
            merged[e.partition] = [sign * e.file.row_count, sign * e.file.file_size, sign, created_ms,
                                   e.total_buckets]
        else:
            cur[0] += sign * e.file.row_count
            cur[1] += sign * e.file.file_size
            cur[2] += sign
            cur[3] = max(cur[3], created_ms)
            cur[4] = e.total_buckets
    return [PartitionStatistics(paths.partition_spec_of(schema, part), *vals) for part, vals in merged.items()]


_NO_CREATION_TIME = -(2**63)  # Long.MIN_VALUE: a file without a creation time never is the newest


class SnapshotPublishing:
    """Publishes the snapshots of ``commit.FileStoreCommit`` (which sets these attributes)."""

    table: FileStoreTable
    file_io: FileIO
    snapshot_manager: SnapshotManager
    manifest_dir: str
    published: list[int]
    outcome_unknown: bool
    _open: list[OpenAttempt]
    _before_publish: Callable[[int], None] | None

    if TYPE_CHECKING:
        def _retry_wait_ms(self, retry: int) -> float: ...

    def _publish_snapshot(self, snapshot: Snapshot, written: list[str], base: Snapshot | None,
                          entries: Sequence[ManifestEntry]) -> Snapshot:
        """Publish a built snapshot on ``base``: through the catalog server where it commits,
        else snapshot-N then LATEST; raises LostRace (files cleaned) if another writer's
        snapshot took its place. ``entries``: the commit's data file changes (the server's
        partition statistics)."""
        new_id = snapshot.id
        if self._before_publish is not None:
            self._before_publish(new_id)
        server = self.table.catalog_environment.snapshot_commit
        if server is not None:
            return self._publish_through(server, snapshot, written, base, entries)
        path = self.snapshot_manager.snapshot_path(new_id)
        data = snapshot.to_json().encode("utf-8")

        def publish() -> bool:  # under the catalog's lock, as Java: snapshot, then the hint
            if not self._publish(path, data, new_id, written):
                return False
            self.published.append(new_id)
            try:
                self.snapshot_manager.commit_latest_hint(new_id)
            except Exception as e:  # readers fall back to listing; the commit itself stands
                log.warning("snapshot %d committed but the LATEST hint could not be written: %s", new_id, e)
            return True

        if not self.table.lock.run_with_lock(publish):
            self._cleanup(written)  # snapshot-N verified to be another writer's
            raise LostRace()
        return snapshot

    def _publish_through(self, server: SnapshotCommit, snapshot: Snapshot, written: list[str], base: Snapshot | None,
                         entries: Sequence[ManifestEntry]) -> Snapshot:
        """The catalog server publishes (Java ``CatalogSnapshotCommit``; it writes snapshot-N and
        LATEST itself). Refused (the base moved) or a 409 is a lost race; an outcome the server
        cannot tell keeps this attempt's files and raises OutcomeOpen; any other error was
        certainly not published: the files go and the error stands."""
        stats = partition_statistics(self.table.schema, entries)
        self.outcome_unknown = True
        try:
            ours = server.commit(base, snapshot, self.table.branch, stats)
        except OutcomeUnknown as e:
            self._open.append(OpenAttempt(0 if base is None else base.id, snapshot, list(written)))
            log.warning("commit to %s: %s; looking whether it landed before trying again", self.table.identifier, e)
            raise OutcomeOpen(str(e)) from e
        except CommitConflict:
            self.outcome_unknown = bool(self._open)
            self._cleanup(written)
            raise LostRace() from None
        except BaseException:
            self.outcome_unknown = bool(self._open)
            self._cleanup(written)
            raise
        if not ours:
            self.outcome_unknown = bool(self._open)
            self._cleanup(written)
            raise LostRace()
        self.published.append(snapshot.id)
        self._close_open_attempts(None)
        return snapshot

    def _landed_earlier(self, latest: Snapshot | None) -> Snapshot | None:
        """Before planning again after attempts whose outcome stayed unknown (Java's check in
        ``tryCommitOnce``): the snapshot one of them published after all, found by its uuid
        among the snapshots after its base; None when none did (yet)."""
        if not self._open or latest is None:
            return None
        ours = {a.snapshot.uuid for a in self._open}
        for sid in range(min(a.base_id for a in self._open) + 1, latest.id + 1):
            snap = latest if sid == latest.id else self.snapshot_manager.try_snapshot(sid)
            if snap is not None and snap.uuid in ours:
                self.published.append(snap.id)
                self._close_open_attempts(snap.uuid)
                return snap
        return None

    def _close_open_attempts(self, landed: str | None) -> None:
        """A snapshot of this commit is published: no other open attempt can land any more (its id
        is taken or its base moved), so the files only they wrote go."""
        for a in self._open:
            if a.snapshot.uuid != landed:
                self._cleanup(a.written)
        self._open.clear()
        self.outcome_unknown = False

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

    def _cleanup(self, written: Iterable[str]) -> None:
        for name in written:
            self._quiet_delete(join(self.manifest_dir, name))

    def _quiet_delete(self, path: str) -> None:
        try:
            self.file_io.delete(path)
        except Exception as e:  # best effort: an orphan is harmless, a crash here is not
            log.warning("could not delete %s: %s", path, e)
