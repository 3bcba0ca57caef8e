"""compact-manifest: rewrite the data manifests of the latest snapshot into few (Java's
``compact_manifest`` procedure, ``FileStoreCommitImpl.compactManifest``).

Java forces a full manifest compaction (``manifest.merge-min-count`` 1, full-compaction
threshold 1 byte) over the base + delta manifests of the latest snapshot:

* a manifest *must change* when it holds DELETE entries or is smaller than
  ``manifest.target-file-size``;
* a manifest that need not change is kept as it is when its partition stats rule out every
  deleted file, or when reading it finds none of them;
* the other manifests are read, every DELETE and every ADD it cancels are dropped, and the
  surviving ADDs are written anew, rolled at the target size. We sort them by partition
  values and bucket first (stably, so a bucket's files keep their order), which keeps each
  new manifest's partition range narrow for readers' manifest pruning.

The result is one COMPACT snapshot (commit user ``Compact-Manifest-Procedure-Committer_<uuid>``)
with the new base list, an empty delta list and everything else of the latest snapshot;
nothing is deleted (the old manifests go with snapshot expiration). When nothing would
change no snapshot is written. :func:`plan_compact_manifest` decides, :func:`compact_manifest`
writes exactly that plan (re-planned only if another commit lands meanwhile).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..data import binary_row
from ..manifest.expire_file_entry import merge_entries
from ..manifest.manifest import FileKind, ManifestEntry, ManifestFileMeta
from ..utils.rows import Rows
from .commit import FileStoreCommit
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..data.types import DataType
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable

COMMIT_USER_PREFIX = "Compact-Manifest-Procedure-Committer"
PLAN_COLUMNS = ["manifest", "bytes", "added", "deleted", "action", "reason"]
RESULT_COLUMNS = ["snapshot_id", "manifests_before", "manifests_after", "entries", "dropped"]


@dataclass(frozen=True)
class ManifestAction:
    """What happens to one manifest of the latest snapshot."""

    manifest: ManifestFileMeta
    rewrite: bool
    reason: str

    def as_row(self) -> dict[str, Any]:
        m = self.manifest
        return {"manifest": f"manifest/{m.file_name}", "bytes": m.file_size, "added": m.num_added_files,
                "deleted": m.num_deleted_files, "action": "rewrite" if self.rewrite else "keep",
                "reason": self.reason}


@dataclass
class ManifestCompactPlan:
    """The manifests of snapshot ``snapshot_id`` and what a compaction does with each."""

    snapshot_id: int | None
    target_size: int
    actions: list[ManifestAction] = field(default_factory=list)
    dropped: int = 0  # DELETE entries and the ADDs they cancel
    message: str = ""
    survivors: list[ManifestEntry] = field(default_factory=list, repr=False)  # ADDs written anew, sorted

    @property
    def changes(self) -> bool:
        return any(a.rewrite for a in self.actions)

    def rows(self) -> Rows:
        return Rows(PLAN_COLUMNS, [a.as_row() for a in self.actions])

    def summary(self) -> str:
        if not self.changes:
            return self.message
        rewritten = [a for a in self.actions if a.rewrite]
        return (f"{len(rewritten)} of {len(self.actions)} manifests "
                f"({sum(a.manifest.file_size for a in rewritten)} bytes) rewritten: {len(self.survivors)} entries "
                f"kept, {self.dropped} DELETE and cancelled ADD entries dropped")


@dataclass
class ManifestCompactResult:
    plan: ManifestCompactPlan
    snapshot_id: int | None = None
    manifests_after: int | None = None

    def as_row(self) -> dict[str, Any]:
        return {"snapshot_id": self.snapshot_id, "manifests_before": len(self.plan.actions),
                "manifests_after": self.manifests_after, "entries": len(self.plan.survivors),
                "dropped": self.plan.dropped}


def _committer(table: FileStoreTable) -> FileStoreCommit:
    return FileStoreCommit(table, commit_user=f"{COMMIT_USER_PREFIX}_{uuid.uuid4()}")


def plan_compact_manifest(table: FileStoreTable) -> ManifestCompactPlan:
    """What compact-manifest would do to the latest snapshot (reads manifests, writes nothing)."""
    commit = _committer(table)  # refuses tables whose manifests we cannot write
    latest = table.snapshot_manager.latest_snapshot()
    if latest is None:
        return ManifestCompactPlan(None, commit.options.manifest_target_file_size, message="the table has no snapshot")
    return _plan(table, commit, latest)


def _plan(table: FileStoreTable, commit: FileStoreCommit, latest: Snapshot) -> ManifestCompactPlan:
    scan = FileStoreScan(table)
    target = commit.options.manifest_target_file_size
    metas = scan.data_manifests(latest)
    plan = ManifestCompactPlan(latest.id, target)

    def must_change(m: ManifestFileMeta) -> bool:
        return m.num_deleted_files > 0 or m.file_size < target

    if not any(must_change(m) for m in metas):
        plan.actions = [ManifestAction(m, False, "at target size, no DELETE") for m in metas]
        plan.message = (f"snapshot {latest.id}: all {len(metas)} manifests are at the target size "
                        f"({target} bytes) without DELETE entries; nothing to compact")
        return plan
    read: dict[str, list[ManifestEntry]] = {m.file_name: scan.read_entries([m]) for m in metas if m.num_deleted_files}
    deletes = {e.identifier() for entries in read.values() for e in entries if e.kind == FileKind.DELETE}
    delete_parts = {ident[0] for ident in deletes}
    partitioned = bool(table.schema.partition_keys)
    to_merge = [m for m in metas if must_change(m)
                or (deletes and (not partitioned or commit.merger.may_contain(m, delete_parts)))]
    if len(to_merge) <= 1 and not any(m.num_deleted_files for m in to_merge):
        plan.actions = [ManifestAction(m, False, "nothing to merge with") for m in metas]
        plan.message = f"snapshot {latest.id}: {len(metas)} manifests, none to merge; nothing to compact"
        return plan
    for m in to_merge:
        if m.file_name not in read:
            read[m.file_name] = scan.read_entries([m])
    _decide(plan, metas, read, must_change, deletes, table.schema.partition_types)
    return plan


def _decide(plan: ManifestCompactPlan, metas: list[ManifestFileMeta], read: dict[str, list[ManifestEntry]],
            must_change: Any, deletes: set[tuple[Any, ...]], types: list[DataType]) -> None:
    """Rewrite the candidate manifests (``read``) that must change or lose a cancelled ADD."""
    entries: list[ManifestEntry] = []
    for m in metas:
        if m.file_name not in read:
            plan.actions.append(ManifestAction(m, False, "no deleted file in its partitions"))
            continue
        own = read[m.file_name]
        cancelled = sum(1 for e in own if e.kind == FileKind.ADD and e.identifier() in deletes)
        if must_change(m) or cancelled:
            reason = ("holds DELETE entries" if m.num_deleted_files else
                      "smaller than the target size" if m.file_size < plan.target_size else
                      f"{cancelled} of its files were deleted later")
            plan.actions.append(ManifestAction(m, True, reason))
            entries.extend(own)
        else:
            plan.actions.append(ManifestAction(m, False, "no deleted file in it"))
    # DELETE/ADD pairs all live in rewritten manifests (kept ones hold none of the deleted
    # files), so resolving them in order here gives exactly the snapshot's live files
    survivors = merge_entries(entries)
    plan.dropped = len(entries) - len(survivors)
    plan.survivors = _sorted_by_partition_bucket(survivors, types)


def _sorted_by_partition_bucket(entries: list[ManifestEntry], types: list[DataType]) -> list[ManifestEntry]:
    """Stable sort by (partition values with nulls first, bucket)."""
    keys: dict[bytes, tuple[Any, ...]] = {}
    for e in entries:
        if e.partition not in keys:
            keys[e.partition] = tuple((v is None, 0 if v is None else v)
                                      for v in binary_row.deserialize(e.partition, types))
    return sorted(entries, key=lambda e: (keys[e.partition], e.bucket))


def compact_manifest(table: FileStoreTable, plan: ManifestCompactPlan | None = None) -> ManifestCompactResult:
    """Commit the plan (made now if not given) as one COMPACT snapshot; a plan for an older
    snapshot than the latest is made again for the latest."""
    commit = _committer(table)
    schema_id = table.schema.id
    result = ManifestCompactResult(plan or plan_compact_manifest(table))

    def rewrite(latest: Snapshot, written: list[str]) -> list[ManifestFileMeta] | None:
        p = result.plan if result.plan.snapshot_id == latest.id else _plan(table, commit, latest)
        result.plan = p
        if not p.changes:
            return None
        new = commit.merger.write(p.survivors, written, schema_id)
        metas = [a.manifest for a in p.actions if not a.rewrite] + new
        result.manifests_after = len(metas)
        return metas

    snapshot = commit.replace_manifests(rewrite, "COMPACT")
    result.snapshot_id = None if snapshot is None else snapshot.id
    return result
