"""Conflict detection of a commit (Java's ``ConflictDetection``): give up rather than publish a
table that lost or doubled data (FORMAT-FACTS 7).

Checked against the latest snapshot on every attempt (:class:`ConflictDetection`):

* a data file added twice, or deleted while it is no longer live (a concurrent commit
  removed it);
* LSM key ranges overlapping on a level >= 1 of a primary-key bucket;
* a fixed-bucket partition whose bucket number changes without an overwrite, or that was
  re-laid out since a writer restored its buckets;
* deletion vectors written meanwhile that this commit would lose (their rows would come back);
* an overwrite pinned to a base snapshot whose scope gained files since.

:class:`LiveFiles` reads the latest snapshot's live files for these checks (restricted to the
partitions a commit touches) and for the commit itself.
"""

from __future__ import annotations

from collections.abc import Callable
from itertools import pairwise
from typing import TYPE_CHECKING, Any

from ..errors import CommitConflict
from ..manifest.expire_file_entry import merge_entries
from ..manifest.index_manifest import DELETION_VECTORS_INDEX, IndexManifestEntry, IndexManifestFile
from ..manifest.manifest import FileKind, ManifestEntry, ManifestList
from ..mergetree.file_writer import partition_dir_of
from ..mergetree.levels import key_function
from .manifest_merge import ManifestFileMerger
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..refs.snapshot import Snapshot
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable


def partition_text(schema: TableSchema, partition: bytes) -> str:
    """A partition as commit messages name it: its directory, ``(none)`` when unpartitioned."""
    if not schema.partition_keys:
        return "(none)"
    try:
        return partition_dir_of(schema, partition) or "(none)"
    except Exception:
        return partition.hex()


class LiveFiles:
    """The live data and index files of a snapshot, as a commit reads them."""

    def __init__(
        self, table: FileStoreTable, manifest_list: ManifestList, index_manifest_file: IndexManifestFile,
        merger: ManifestFileMerger,
    ) -> None:
        self.scan = FileStoreScan(table)
        self.manifest_list = manifest_list
        self.index_manifest_file = index_manifest_file
        self.merger = merger

    def data(
        self, snapshot: Snapshot, part_filter: Callable[[bytes], bool] | None, partitions: set[bytes] | None = None
    ) -> list[ManifestEntry]:
        """Live (merged) data files of the snapshot, optionally restricted to partitions."""
        metas = self.manifest_list.read(snapshot.base_manifest_list) + self.manifest_list.read(
            snapshot.delta_manifest_list
        )
        if partitions is not None:
            metas = [m for m in metas if self.merger.may_contain(m, partitions)]
        entries = self.scan.read_entries(metas)  # concurrent reads on object stores
        if partitions is not None:
            entries = [e for e in entries if e.partition in partitions]
        if part_filter is not None:
            entries = [e for e in entries if part_filter(e.partition)]
        return merge_entries(entries)

    def index(self, snapshot: Snapshot) -> list[IndexManifestEntry]:
        if not snapshot.index_manifest:
            return []
        return [e for e in self.index_manifest_file.read(snapshot.index_manifest) if e.kind == FileKind.ADD]


class ConflictDetection:
    """The checks one commit attempt runs against the latest snapshot (see the module doc)."""

    def __init__(self, table: FileStoreTable, live: LiveFiles, bucket_unaware: bool) -> None:
        self.table = table
        self.schema = table.schema
        self.live = live
        self.bucket_unaware = bucket_unaware
        schema = table.schema
        self.key_types = (
            [f.type for f in schema.logical_trimmed_primary_keys_type.fields] if schema.primary_keys else None
        )
        self._key_fn: Callable[[bytes], Any] | None = None

    def _where(self, partition: bytes) -> str:
        return partition_text(self.schema, partition)

    # -- data files ------------------------------------------------------------------------

    def check(self, latest: Snapshot | None, delta: list[ManifestEntry], kind: str) -> None:
        """FORMAT-FACTS 7 conflict checks against the latest snapshot's changed partitions."""
        self._check_unique(delta)
        partitions = {e.partition for e in delta}
        base = self.live.data(latest, None, partitions) if latest is not None and partitions else []
        if kind != "OVERWRITE":
            self.check_same_total_buckets(base, delta)
        live = self._apply(base, delta, f"snapshot {latest.id}" if latest is not None else "the empty table")
        if self.key_types is not None:
            self._check_lsm_levels(live)

    def _check_unique(self, delta: list[ManifestEntry]) -> None:
        seen: set[tuple[Any, ...]] = set()
        for e in delta:
            ident = e.identifier()
            if ident in seen:
                raise CommitConflict(
                    f"commit adds or deletes data file {e.file.file_name} "
                    f"(partition {self._where(e.partition)}, bucket {e.bucket}) more than once"
                )
            seen.add(ident)

    def _apply(
        self, base: list[ManifestEntry], delta: list[ManifestEntry], where: str
    ) -> dict[tuple[Any, ...], ManifestEntry]:
        """The live files after ``delta``: an ADD must be new, a DELETE must still be live."""
        live: dict[tuple[Any, ...], ManifestEntry] = {e.identifier(): e for e in base}
        for e in delta:
            ident = e.identifier()
            if e.kind == FileKind.ADD:
                if ident in live:
                    raise CommitConflict(
                        f"data file {e.file.file_name} (partition {self._where(e.partition)}, bucket "
                        f"{e.bucket}) is already in {where}; give up committing"
                    )
                live[ident] = e
            else:
                if ident not in live:
                    raise CommitConflict(
                        f"data file {e.file.file_name} (partition {self._where(e.partition)}, bucket "
                        f"{e.bucket}, level {e.file.level}) to delete is not in {where} (a concurrent commit "
                        "removed it); give up committing"
                    )
                del live[ident]
        return live

    def _check_lsm_levels(self, live: dict[tuple[Any, ...], ManifestEntry]) -> None:
        """Files of one level >= 1 of a bucket must not overlap in key range."""
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
            for a, b in pairwise(keyed):
                if a[1] >= b[0]:
                    raise CommitConflict(
                        f"LSM conflict in partition {self._where(part)}, bucket {bucket}, level {level}: "
                        f"key ranges of {a[2].file.file_name} and {b[2].file.file_name} overlap; give up committing"
                    )

    def _key(self, data: bytes) -> tuple[Any, ...]:
        """A sortable form of a serialized trimmed-PK row, ordered as the key comparator orders
        it (nulls first; NaN last and equal to NaN; -0.0 == 0.0)."""
        if self._key_fn is None:
            assert self.key_types is not None
            self._key_fn = key_function(self.key_types)
        return self._key_fn(data)

    # -- bucket layout ---------------------------------------------------------------------

    def check_same_total_buckets(self, base: list[ManifestEntry], delta: list[ManifestEntry]) -> None:
        """A fixed-bucket partition keeps one bucket number until it is overwritten."""
        buckets: dict[bytes, int] = {}
        for e in [*base, *delta]:
            if e.total_buckets <= 0:
                continue
            old = buckets.setdefault(e.partition, e.total_buckets)
            if old != e.total_buckets:
                raise CommitConflict(
                    f"total buckets of partition {self._where(e.partition)} changed from {old} to "
                    f"{e.total_buckets} without overwrite; give up committing"
                )

    def check_layout_kept(self, restored_id: int, latest: Snapshot | None, delta: list[ManifestEntry]) -> None:
        """A fixed-bucket writer hashed its rows with the bucket numbers it restored at snapshot
        ``restored_id`` (0: the empty table); when a partition it writes was re-laid out since
        (a rescale or overwrite with another bucket number), its files would put keys in a
        second bucket. APPENDs skip the conflict checks, so this is their only guard."""
        if latest is None or latest.id == restored_id:
            return
        adds = [e for e in delta if e.kind == FileKind.ADD and e.total_buckets > 0]
        if adds:
            self.check_same_total_buckets(self.live.data(latest, None, {e.partition for e in adds}), adds)

    # -- overwrite pinned to a base snapshot -----------------------------------------------

    def check_nothing_added_since(
        self, base_id: int, latest: Snapshot | None, part_filter: Callable[[bytes], bool] | None,
        what: str = "overwrite",
    ) -> None:
        """CommitConflict if a non-COMPACT snapshot after ``base_id`` added files in the scope
        (``what``: the pinned commit, for the message)."""
        if latest is None or latest.id <= base_id:
            if latest is None or latest.id < base_id:
                raise CommitConflict(f"the base snapshot {base_id} of this {what} is no longer the table's history")
            return
        sm = self.table.snapshot_manager
        for sid in range(base_id + 1, latest.id + 1):
            snap = sm.snapshot(sid)
            if snap.commit_kind == "COMPACT":
                continue  # compactions rearrange data the base already had
            for e in self.live.scan.delta(snap):
                if e.kind == FileKind.ADD and (part_filter is None or part_filter(e.partition)):
                    raise CommitConflict(
                        f"snapshot {sid} ({snap.commit_kind}) added {e.file.file_name} in partition "
                        f"{self._where(e.partition)} after base snapshot {base_id}; "
                        + ("overwriting would lose it" if what == "overwrite" else f"the {what} did not see it")
                        + ", give up committing"
                    )

    # -- deletion vectors ------------------------------------------------------------------

    def check_deletion_vectors(
        self, latest: Snapshot | None, table_changes: list[ManifestEntry], index_changes: list[IndexManifestEntry]
    ) -> None:
        """Deletion vectors written meanwhile must not be lost: their rows would come back.

        A commit may only replace a DV index file that is still live, and may only delete a
        data file whose live deletion vector it replaces too (a compaction that read the file
        before a concurrent DELETE marked rows in it would otherwise resurrect them).
        """
        dv_changes = [e for e in index_changes if e.index_file.index_type == DELETION_VECTORS_INDEX]
        dv_deletes = [e for e in dv_changes if e.kind == FileKind.DELETE]
        # a DELETE whose file is ADDed again under the same name (rewrite-file-index replaces
        # only the meta) keeps the file, and so its deletion vector, which is keyed by name
        re_added = {(e.partition, e.bucket, e.file.file_name) for e in table_changes if e.kind == FileKind.ADD}
        data_deletes = [e for e in table_changes if e.kind == FileKind.DELETE
                        and (e.partition, e.bucket, e.file.file_name) not in re_added]
        dv_adds = [e for e in dv_changes if e.kind == FileKind.ADD]
        if latest is None or not (dv_deletes or data_deletes or dv_adds):
            return
        live = [e for e in self.live.index(latest) if e.index_file.index_type == DELETION_VECTORS_INDEX]
        if not live and not dv_deletes:
            return  # nothing live to lose
        live_names = {e.index_file.file_name for e in live}
        for e in dv_deletes:
            if e.index_file.file_name not in live_names:
                raise CommitConflict(
                    f"deletion-vector index file {e.index_file.file_name} (partition "
                    f"{self._where(e.partition)}, bucket {e.bucket}) to replace is not in snapshot {latest.id} "
                    "(a concurrent commit replaced it); give up committing"
                )
        replaced = {e.index_file.file_name for e in dv_deletes}
        if not self.bucket_unaware:
            self._check_one_dv_file_per_bucket(live, dv_adds, replaced)
        self._check_deleted_files_keep_no_dv(live, data_deletes, replaced)

    def _check_one_dv_file_per_bucket(
        self, live: list[IndexManifestEntry], dv_adds: list[IndexManifestEntry], replaced: set[str]
    ) -> None:
        """One DV index file per bucket: a new one must replace whatever is live there now."""
        live_in_bucket: dict[tuple[bytes, int], set[str]] = {}
        for e in live:
            live_in_bucket.setdefault((e.partition, e.bucket), set()).add(e.index_file.file_name)
        for e in dv_adds:
            kept = live_in_bucket.get((e.partition, e.bucket), set()) - replaced
            if kept:
                raise CommitConflict(
                    f"deletion vectors of partition {self._where(e.partition)}, bucket {e.bucket} "
                    f"changed concurrently ({sorted(kept)[0]} is live and this commit does not replace it); "
                    "give up committing"
                )

    def _check_deleted_files_keep_no_dv(
        self, live: list[IndexManifestEntry], data_deletes: list[ManifestEntry], replaced: set[str]
    ) -> None:
        """A deleted data file must not have a live deletion vector this commit keeps."""
        covered: dict[tuple[bytes, int, str], str] = {}
        for ie in live:
            if ie.index_file.file_name in replaced:
                continue
            for r in ie.index_file.dv_ranges or ():
                covered[(ie.partition, ie.bucket if not self.bucket_unaware else 0, r.data_file_name)] = (
                    ie.index_file.file_name
                )
        if not covered:
            return
        for e in data_deletes:
            index_name = covered.get((e.partition, e.bucket if not self.bucket_unaware else 0, e.file.file_name))
            if index_name is not None:
                raise CommitConflict(
                    f"data file {e.file.file_name} (partition {self._where(e.partition)}, bucket {e.bucket}) "
                    f"gained deletion vectors in {index_name} after it was read; give up committing"
                )


class StrictModeChecker:
    """Java 2.x's ``commit.strict-mode.last-safe-snapshot`` (StrictModeChecker): a commit gives
    up when a snapshot after the last safe one, committed by another user, is a COMPACT or
    OVERWRITE touching a partition this commit changes, or (when this commit overwrites) an
    APPEND that added files to a real bucket of such a partition. ``-1``: the first commit is
    not checked. The safe snapshot moves to each snapshot this commit user publishes."""

    def __init__(self, table: FileStoreTable, commit_user: str, live: LiveFiles, last_safe: int) -> None:
        self.table = table
        self.commit_user = commit_user
        self.live = live
        self.last_safe = last_safe

    def check(self, new_id: int, kind: str, partitions: set[bytes]) -> None:
        if self.last_safe < 0:  # -1: nothing to check for the first commit
            self.last_safe = new_id - 1
            return
        sm = self.table.snapshot_manager
        for sid in range(self.last_safe + 1, new_id):
            snap = sm.try_snapshot(sid)
            if snap is None:
                raise CommitConflict(
                    f"commit to {self.table.identifier}: snapshot {sid} after "
                    f"commit.strict-mode.last-safe-snapshot={self.last_safe} is missing, so it cannot be "
                    "checked; nothing was committed")
            if snap.commit_user == self.commit_user:
                continue
            if snap.commit_kind in ("COMPACT", "OVERWRITE") and self._touches(snap, partitions):
                self._give_up(new_id, snap, "modified the same partition")
            if snap.commit_kind == "APPEND" and kind == "OVERWRITE" and partitions and any(
                    e.partition in partitions and e.bucket >= 0 for e in self._delta(snap)):
                self._give_up(new_id, snap, "committed files to a fixed bucket of the same partition")
        self.last_safe = new_id - 1

    def update(self, published: int) -> None:
        self.last_safe = published

    def _delta(self, snap: Snapshot) -> list[ManifestEntry]:
        return self.live.scan.read_entries(self.live.manifest_list.read(snap.delta_manifest_list))

    def _touches(self, snap: Snapshot, partitions: set[bytes]) -> bool:
        if not partitions:
            return False
        if any(e.partition in partitions for e in self._delta(snap)):
            return True
        if not snap.index_manifest:
            return False
        prev = self.table.snapshot_manager.try_snapshot(snap.id - 1)
        if prev is not None and prev.index_manifest == snap.index_manifest:
            return False  # no index file added or removed by this snapshot
        return any(e.partition in partitions for e in self.live.index_manifest_file.read(snap.index_manifest))

    def _give_up(self, new_id: int, snap: Snapshot, what: str) -> None:
        raise CommitConflict(
            f"commit to {self.table.identifier}: a {snap.commit_kind} snapshot {snap.id} by another commit user "
            f"{what}; giving up snapshot {new_id} as commit.strict-mode.last-safe-snapshot is set")
