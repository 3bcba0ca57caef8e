"""rollback --as-latest: Java 2.x ``rollback_to_as_latest``.

Instead of deleting everything newer than the target (``rollback``), one new OVERWRITE snapshot
is committed after the latest whose live files, index manifest, schema id, record count,
watermark, statistics and properties are the target's: its delta deletes the files the target
lacks and adds back the ones it had. No snapshot, tag or file is deleted, so the rollback can
itself be rolled back, and readers of the newer snapshots are not cut off.

The files added back were deleted by snapshots between the target and the old latest; an
expiration of those snapshots would delete them while the new snapshot still reads them
(Java's and ours plan such deletes from the expired deltas). Java 2.x therefore tags the target
first (``rollback-to-as-latest-<id>-<uuid>``, never expiring) when it is given by snapshot id;
a target given by tag is protected by that tag. We do the same, for time and watermark targets
too. Deleting that tag while snapshots between the target and the rollback remain lets the next
expire delete files the rolled-back table reads.
"""

from __future__ import annotations

import logging
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidInput, NotFound
from ..manifest.manifest import FileKind, ManifestEntry
from ..refs.snapshot import Snapshot
from ..utils.rows import Rows
from .commit import FileStoreCommit
from .commit_conflicts import partition_text
from .rollback import RollbackTarget, resolve_target
from .tag_ops import auto_create_tags

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

log = logging.getLogger(__name__)

PROTECTION_TAG_PREFIX = "rollback-to-as-latest-"
COLUMNS = ["kind", "partition", "bucket", "level", "file_name", "row_count"]


@dataclass
class AsLatestPlan:
    """What ``rollback --as-latest`` commits: the delta from the latest snapshot to the target."""

    identifier: str
    target: Snapshot
    from_tag: str | None  # the tag the target comes from (it protects the target's files)
    chosen: str | None  # how a time or watermark chose the target
    latest_id: int
    entries: list[ManifestEntry]  # DELETEs of the latest's files, then ADDs of the target's
    partition_names: dict[bytes, str]
    protection_tag: str | None = None  # the tag created by the run (None: planned only, or from a tag)
    snapshot: Snapshot | None = None  # the snapshot committed (None: dry run)

    @property
    def protects_with_tag(self) -> bool:
        return self.from_tag is None

    def rows(self) -> Rows:
        return Rows(COLUMNS, [{"kind": "delete" if e.kind == FileKind.DELETE else "add",
                               "partition": self.partition_names.get(e.partition), "bucket": e.bucket,
                               "level": e.file.level, "file_name": e.file.file_name, "row_count": e.file.row_count}
                              for e in self.entries])

    def notes(self) -> list[str]:
        t = self.target
        what = f"tag {self.from_tag} (snapshot {t.id})" if self.from_tag else f"snapshot {t.id}"
        chosen = f", {self.chosen}" if self.chosen else ""
        adds = sum(1 for e in self.entries if e.kind == FileKind.ADD)
        deletes = len(self.entries) - adds
        if self.snapshot is None:
            tag = (f"; would first create tag {PROTECTION_TAG_PREFIX}{t.id}-<uuid> to keep its files"
                   if self.protects_with_tag else "")
            head = (f"{self.identifier}: would commit snapshot {self.latest_id + 1} (OVERWRITE) equal to {what}"
                    f"{chosen}: {deletes} file(s) out, {adds} back; snapshots up to {self.latest_id} and every "
                    f"tag stay{tag}")
            return [head]
        tag = f"; tag {self.protection_tag} keeps its files" if self.protection_tag else ""
        return [f"{self.identifier}: committed snapshot {self.snapshot.id} (OVERWRITE) equal to {what}{chosen}: "
                f"{deletes} file(s) out, {adds} back; nothing was deleted{tag}"]


def plan_rollback_as_latest(table: FileStoreTable, target: RollbackTarget) -> AsLatestPlan:
    """Resolve the target as ``rollback`` does and compute the delta (reads only)."""
    latest = table.snapshot_manager.latest_snapshot()
    if latest is None:
        raise InvalidInput(f"{table.identifier} has no snapshot to roll back")
    snap, from_tag, chosen = resolve_target(table, target)
    commit = FileStoreCommit(table)
    deletes, adds = commit.rollback_delta(latest, snap)
    schema = table.schema
    names = {e.partition: partition_text(schema, e.partition) for e in (*deletes, *adds)}
    return AsLatestPlan(table.identifier.full_name, snap, from_tag, chosen, latest.id, deletes + adds, names)


def apply_rollback_as_latest(table: FileStoreTable, plan: AsLatestPlan) -> AsLatestPlan:
    """Tag the target (unless it is a tag already), commit, then create the automatic tags a
    Java committer would (it skips expiration after this commit, and so do we). If the commit
    fails, the tag it created is removed again."""
    tm = table.tag_manager
    tag = None
    if plan.protects_with_tag:
        tag = f"{PROTECTION_TAG_PREFIX}{plan.target.id}-{uuid.uuid4()}"
        try:
            raw = table.file_io.read_text(table.snapshot_manager.snapshot_path(plan.target.id))
        except NotFound:
            raw = None  # expired: the tag is made from the snapshot a tag holds
        tm.create_tag(tag, plan.target, snapshot_text=raw)
    commit = FileStoreCommit(table, commit_user=f"{PROTECTION_TAG_PREFIX}{uuid.uuid4()}")
    try:
        snap = commit.rollback_as_latest(plan.target)
    except BaseException:
        if tag is not None and not commit.may_have_published():
            tm.delete_tag(tag)
        raise
    plan.protection_tag, plan.snapshot = tag, snap
    if snap.id != plan.latest_id + 1:  # another commit came first: the delta was recomputed
        plan.latest_id = snap.id - 1
        plan.entries = commit.rollback_entries
        plan.partition_names.update({e.partition: partition_text(table.schema, e.partition) for e in plan.entries})
    if not table.options.get_bool("write-only", False):
        try:
            auto_create_tags(table)
        except Exception as e:  # noqa: BLE001 - the rollback stands, as after any commit
            log.warning("automatic tag creation failed after the rollback: %s", e)
    return plan


def rollback_as_latest(table: FileStoreTable, target: RollbackTarget, dry_run: bool = False) -> AsLatestPlan:
    plan = plan_rollback_as_latest(table, target)
    return plan if dry_run else apply_rollback_as_latest(table, plan)
