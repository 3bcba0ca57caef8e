"""Expiry of long-lived changelogs (``changelog/changelog-<id>``), as Java's ExpireChangelogImpl
with its ChangelogDeletion.

With a decoupled changelog lifecycle (``changelog.num-retained.*`` / ``changelog.time-retained``
above the snapshot settings) snapshot expiry moves expired snapshots to ``changelog/`` and
leaves their changelog files (and, when the table produces no changelog, the APPEND data
files and data manifest lists) in place; this module removes them once the changelog
retention allows. Same fail-closed reader, path rule and deletion order as every deleter
(:mod:`.file_deletion`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import UnsafeRefused
from ..io.fileio import join
from ..refs.snapshot import EARLIEST, LATEST, ChangelogManager, Snapshot
from .expire_plan import (
    ACTION,
    INT_MAX,
    ExpirePlan,
    ExpirePolicy,
    ResolvedPolicy,
    RetainedRefs,
    check_retention,
    plan_consumer_expiry,
    resolve_policy,
)
from .file_deletion import (
    CHANGELOG,
    CHANGELOG_FILE,
    OTHER,
    DeletionPlanner,
    FileDeletion,
    FilePaths,
    GuardedReader,
    added_in_changelog,
    beyond_latest,
    overlapped,
)
from .live_files import TagSkipper, deleted_in_delta

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable


@dataclass
class _Start:
    """What both changelog expiries read first: the refs, the snapshot and changelog ids."""

    reader: GuardedReader
    cm: ChangelogManager
    plan: ExpirePlan
    refs: RetainedRefs
    snap_ids: list[int]
    cl_ids: list[int]

    @classmethod
    def read(cls, table: FileStoreTable, rp: ResolvedPolicy) -> _Start:
        reader = GuardedReader(table.file_io, table.path, ACTION)
        cm = ChangelogManager(table.file_io, table.path, table.branch)
        plan = ExpirePlan(table.path, table.branch, "changelog", rp)
        refs = RetainedRefs.read(table, reader, branches=True,
                                 consumer_expire_before=rp.consumer_expire_before_millis)
        plan.fingerprint = refs.fingerprint()
        plan_consumer_expiry(table, reader, plan, refs)
        start = cls(reader, cm, plan, refs, reader.snapshot_ids(table.snapshot_manager), reader.snapshot_ids(cm))
        if start.cl_ids:
            plan.earliest_id, plan.latest_id = start.cl_ids[0], start.cl_ids[-1]
        return start

    def finish(self, planner: DeletionPlanner, expiring: list[Snapshot]) -> ExpirePlan:
        """The planned files, then the changelog files themselves."""
        plan = self.plan
        plan.expired_ids = [c.id for c in expiring]
        plan.deletions = planner.files
        plan.notes += planner.notes
        for c in expiring:
            p = self.cm.snapshot_path(c.id)
            plan.metadata_files.append(FileDeletion(p, CHANGELOG, self.reader.size(p) or 0, c.id))
        return plan


def plan_changelog_expire(table: FileStoreTable, rp: ResolvedPolicy) -> ExpirePlan:
    st = _Start.read(table, rp)
    reader, cm, plan, refs, snap_ids, cl_ids = st.reader, st.cm, st.plan, st.refs, st.snap_ids, st.cl_ids
    if not snap_ids or not cl_ids:
        return plan
    changelog = reader.cached_snapshots(cm)
    end = _changelog_range(snap_ids[-1], cl_ids, rp, refs.consumers, changelog)
    end_id = next((i for i in cl_ids if i >= end), None)
    if end_id is None or end <= cl_ids[0]:
        plan.end_id = cl_ids[0]
        return plan
    end_cl = changelog(end_id)
    if end_cl is None:
        raise reader.refuse(cm.snapshot_path(end_id), "the first retained changelog vanished while planning")
    expiring = [c for c in (changelog(i) for i in cl_ids if i < end_id) if c is not None]
    if not expiring:
        return plan
    plan.end_id = end_id
    planner = DeletionPlanner(reader, FilePaths(table))
    first_snap = reader.snapshot(table.snapshot_manager, snap_ids[0])
    _plan_files(planner, expiring, end_cl, first_snap, refs, cm, snap_ids[-1])
    st.finish(planner, expiring)
    plan.earliest_hint = end_id
    for sid in [i for i in cl_ids if i >= end_id]:
        plan.holds[sid] = [f"tag {n}" for n in refs.tag_names.get(sid, [])] or ["changelog retention"]
    return plan.finish()


def procedure_policy(table: FileStoreTable, retain_max: int | None = None, retain_min: int | None = None,
                     older_than_millis: int | None = None, max_deletes: int | None = None,
                     now_millis: int | None = None) -> ResolvedPolicy:
    """Java's ``expire_changelogs`` arguments (ExpireConfig builder defaults): an omitted one
    keeps everything it governs, and the table's changelog options do not apply."""
    cl_max = INT_MAX if retain_max is None else retain_max
    cl_min = 1 if retain_min is None else retain_min
    deletes = INT_MAX if max_deletes is None else max_deletes
    check_retention(cl_min, cl_max, deletes, 0)
    rp = resolve_policy(table, ExpirePolicy(now_millis=now_millis))
    return dataclasses.replace(
        rp, consumer_expire_before_millis=None, changelog_retain_max=cl_max, changelog_retain_min=cl_min,
        max_deletes=deletes,
        changelog_cutoff_millis=-(2**63) if older_than_millis is None else older_than_millis,
    )


def plan_expire_all_changelogs(table: FileStoreTable, rp: ResolvedPolicy) -> ExpirePlan:
    """``expire_changelogs(delete_all => true)``: every long-lived changelog (all must be older
    than the earliest snapshot, whose files stay), then the changelog EARLIEST / LATEST hints."""
    st = _Start.read(table, rp)
    reader, cm, plan, refs, snap_ids, cl_ids = st.reader, st.cm, st.plan, st.refs, st.snap_ids, st.cl_ids
    sm = table.snapshot_manager
    if not snap_ids or not cl_ids:
        return plan
    if cl_ids[-1] >= snap_ids[0]:
        raise UnsafeRefused(
            f"{table.path}: --delete-all needs every long-lived changelog older than the earliest snapshot, "
            f"but changelog {cl_ids[-1]} is not older than snapshot {snap_ids[0]} (nothing was deleted)"
        )
    first_snap = reader.snapshot(sm, snap_ids[0])
    if first_snap is None:
        raise reader.refuse(sm.snapshot_path(snap_ids[0]), "the earliest snapshot vanished while planning")
    changelog = reader.cached_snapshots(cm)
    expiring = [c for c in (changelog(i) for i in cl_ids) if c is not None]
    if not expiring:
        return plan
    plan.end_id = cl_ids[-1] + 1
    plan.kept_snapshot = first_snap.id
    planner = DeletionPlanner(reader, FilePaths(table))
    _plan_files(planner, expiring, first_snap, first_snap, refs, cm, snap_ids[-1])
    st.finish(planner, expiring)
    for hint in (EARLIEST, LATEST):
        p = join(cm.snapshot_dir, hint)
        size = reader.size(p)
        if size is not None:
            plan.metadata_files.append(FileDeletion(p, OTHER, size, None))
    return plan.finish()


def _changelog_range(latest_snap: int, cl_ids: list[int], rp: ResolvedPolicy, consumers: dict[str, int],
                     changelog: Callable[[int], Snapshot | None]) -> int:
    """The exclusive end of the expired changelogs, as ExpireChangelogImpl.expire."""
    lo = max(latest_snap - rp.changelog_retain_max + 1, cl_ids[0])
    max_excl = latest_snap - rp.changelog_retain_min + 1
    if consumers:
        max_excl = min(max_excl, min(consumers.values()))
    if len(cl_ids) > rp.max_deletes:
        max_excl = min(max_excl, cl_ids[rp.max_deletes])
    max_excl = min(max_excl, cl_ids[-1])
    for cid in cl_ids:
        if cid < lo:
            continue
        if cid > max_excl:
            break
        c = changelog(cid)
        if c is not None and c.time_millis >= rp.changelog_cutoff_millis:
            return cid
    return max_excl


def _plan_files(planner: DeletionPlanner, expiring: list[Snapshot], end_cl: Snapshot, first_snap: Snapshot | None,
                refs: RetainedRefs, cm: ChangelogManager, latest_snap: int) -> None:
    """Changelog files, the data files the deltas deleted (APPEND ones snapshot expiry left),
    then the lists: all unless the earliest snapshot, a tag or another branch still uses them
    (tags past the latest snapshot ``latest_snap`` keep everything they use)."""
    reader = planner.reader
    # what must survive: the earliest snapshot shares files with the newest changelogs
    guard = reader.live_keys(first_snap) if first_snap is not None else set()
    skipping = reader.skipping_names(end_cl, lists_missing_ok=True)
    if first_snap is not None:
        skipping |= reader.skipping_names(first_snap)
    for t in overlapped(refs.tags, expiring[0].id, end_cl.id) + beyond_latest(refs.tags, latest_snap):
        skipping |= reader.skipping_names(t, lists_missing_ok=True)
    skipping |= refs.branches.names
    tags = TagSkipper(reader, refs.tags, latest_snap)
    for c in expiring:
        skip = tags.keys_before(c.id)
        for e in added_in_changelog(reader, c) or []:
            if e.key not in refs.branches.data:
                planner.data_file(e, c.id, CHANGELOG_FILE)
        for k, e in (deleted_in_delta(reader, c, missing_ok=True) or {}).items():
            if k in skip or k in refs.branches.data:
                continue
            if k in guard and first_snap is not None:
                raise reader.refuse(cm.snapshot_path(c.id),
                                    f"deletes data file {e.file_name} that snapshot {first_snap.id} still lists")
            planner.data_file(e, c.id)
    for c in expiring:
        if c.changelog_manifest_list:
            planner.manifest_list(c.changelog_manifest_list, c.changelog_manifest_list_size, skipping, c.id)
        for ln, size in ((c.delta_manifest_list, c.delta_manifest_list_size),
                         (c.base_manifest_list, c.base_manifest_list_size)):
            if reader.manifest_list(ln, missing_ok=True) is not None:  # snapshot expiry may have taken them
                planner.manifest_list(ln, size, skipping, c.id)
