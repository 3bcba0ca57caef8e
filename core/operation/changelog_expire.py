"""Expiry of long-lived changelogs (``changelog/changelog-<id>``), as Java's ExpireChangelogImpl.

With a decoupled changelog lifecycle (``changelog.num-retained.*`` / ``changelog.time-retained``
above the snapshot settings) snapshot expiry moves expired snapshots to ``changelog/`` and
leaves their changelog files (and, when the table produces no changelog, the APPEND data
files and data manifest lists) in place; this module removes them once the changelog
retention allows. Same fail-closed planning and deletion order as :mod:`.expire`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..io.fileio import join
from .expire import (
    CHANGELOG,
    CHANGELOG_FILE,
    DATA_FILE,
    EXTRA_FILE,
    ExpirePlan,
    FileDeletion,
    ResolvedPolicy,
    _beyond_latest,
    _cached_snapshots,
    _consumers,
    _fingerprint,
    _manifest_names,
    _other_refs,
    _overlapped,
    _per_snapshot,
    _plan_list,
    _read_snapshot,
    _Reader,
    _tag_skipper,
    _tagged_snapshots,
)

if TYPE_CHECKING:
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable


def _names_if_present(reader: _Reader, snap: Snapshot) -> set[str]:
    """ChangelogDeletion.manifestSkippingSet: data lists only when they still exist."""
    out: set[str] = set()
    for ln in (snap.base_manifest_list, snap.delta_manifest_list):
        metas = reader.manifest_list(ln, missing_ok=True)
        if metas is not None:
            out.add(ln)
            out |= {m.file_name for m in metas}
    if snap.index_manifest:
        out.add(snap.index_manifest)
        for ie in reader.index_entries(snap.index_manifest) or []:
            out.add(ie.index_file.file_name)
    if snap.statistics:
        out.add(snap.statistics)
    return out


def plan_changelog_expire(table: FileStoreTable, rp: ResolvedPolicy) -> ExpirePlan:
    from ..manifest.manifest import FileKind
    from ..refs.snapshot import ChangelogManager

    reader = _Reader(table)
    sm = table.snapshot_manager
    cm = ChangelogManager(table.file_io, table.path, table.branch)
    plan = ExpirePlan(table.path, table.branch, "changelog", rp)
    tags, tag_names = _tagged_snapshots(table, reader)
    consumers = _consumers(table, reader)
    prot = _other_refs(table, reader)
    plan.fingerprint = _fingerprint(tag_names, consumers, prot)
    snap_ids = reader.guarded(sm.snapshot_dir, sm.snapshot_ids) or []
    cl_ids = reader.guarded(cm.snapshot_dir, cm.snapshot_ids) or []
    if not snap_ids or not cl_ids:
        return plan
    latest_snap = snap_ids[-1]
    earliest_cl, latest_cl = cl_ids[0], cl_ids[-1]
    plan.earliest_id, plan.latest_id = earliest_cl, latest_cl
    lo = max(latest_snap - rp.changelog_retain_max + 1, earliest_cl)
    max_excl = latest_snap - rp.changelog_retain_min + 1
    if consumers:
        max_excl = min(max_excl, min(consumers.values()))
    if len(cl_ids) > rp.max_deletes:
        max_excl = min(max_excl, cl_ids[rp.max_deletes])
    max_excl = min(max_excl, latest_cl)
    end = max_excl
    changelog = _cached_snapshots(reader, cm)

    for cid in cl_ids:
        if cid < lo:
            continue
        if cid > max_excl:
            break
        c = changelog(cid)
        if c is not None and c.time_millis >= rp.changelog_cutoff_millis:
            end = cid
            break
    end_id = next((i for i in cl_ids if i >= end), None)
    if end_id is None or end <= earliest_cl:
        plan.end_id = earliest_cl
        return plan
    end_cl = changelog(end_id)
    if end_cl is None:
        raise reader.refuse(cm.snapshot_path(end_id), "the first retained changelog vanished while planning")
    exp = [c for c in (changelog(i) for i in cl_ids if i < end_id) if c is not None]
    if not exp:
        return plan
    plan.end_id = end_id
    plan.expired_ids = [c.id for c in exp]

    # what must survive: the earliest snapshot (shares files with the newest changelogs)
    first_snap = _read_snapshot(reader, sm, snap_ids[0])
    guard: set[tuple[bytes, int, str]] = set()
    skipping = _names_if_present(reader, end_cl)
    if first_snap is not None:
        guard = reader.live_files(first_snap)
        skipping |= _manifest_names(reader, first_snap)
    beyond = _beyond_latest(tags, latest_snap)
    for t in _overlapped(tags, exp[0].id, end_id) + beyond:
        skipping |= _names_if_present(reader, t)
    skipping |= prot.names
    seen: set[str] = set()

    def add(path: str, kind: str, size: int, sid: int) -> None:
        if path not in seen:
            seen.add(path)
            plan.deletions.append(FileDeletion(path, kind, int(size), sid))

    tag_skip = _tag_skipper(reader, tags, beyond)
    for c in exp:
        skip = tag_skip(c.id)
        if c.changelog_manifest_list:
            for e in reader.entries_of_lists([c.changelog_manifest_list], missing_ok=True) or []:
                if e.kind == FileKind.ADD:
                    add(join(reader.bucket_path(e.partition, e.bucket), e.file.file_name), CHANGELOG_FILE,
                        e.file.file_size, c.id)
        entries = reader.entries_of_lists([c.delta_manifest_list], missing_ok=True)
        if entries is None:
            continue
        pending: dict[tuple[bytes, int, str], Any] = {}
        for e in entries:
            k = (e.partition, e.bucket, e.file.file_name)
            if e.kind == FileKind.ADD:
                pending.pop(k, None)
            else:
                pending[k] = e
        for k, e in pending.items():
            if k in skip or k in prot.data:
                continue
            if k in guard:
                raise reader.refuse(
                    cm.snapshot_path(c.id),
                    f"deletes data file {e.file.file_name} that snapshot {snap_ids[0]} still lists",
                )
            bp = reader.bucket_path(e.partition, e.bucket)
            add(reader.data_path(e), DATA_FILE, e.file.file_size, c.id)
            for x in e.file.extra_files:
                xp = join(bp, x)
                add(xp, EXTRA_FILE, reader.size(xp), c.id)
    for c in exp:
        if c.changelog_manifest_list:
            _plan_list(plan, reader, c.changelog_manifest_list, c.changelog_manifest_list_size, skipping, seen, c.id)
        for ln, size in ((c.delta_manifest_list, c.delta_manifest_list_size),
                         (c.base_manifest_list, c.base_manifest_list_size)):
            if reader.manifest_list(ln, missing_ok=True) is not None:
                _plan_list(plan, reader, ln, size, skipping, seen, c.id)
    for c in exp:
        p = cm.snapshot_path(c.id)
        plan.metadata_files.append(FileDeletion(p, CHANGELOG, reader.size(p), c.id))
    plan.earliest_hint = end_id
    for sid in [i for i in cl_ids if i >= end_id]:
        plan.holds[sid] = [f"tag {n}" for n in tag_names.get(sid, [])] or ["changelog retention"]
    _per_snapshot(plan)
    return plan
