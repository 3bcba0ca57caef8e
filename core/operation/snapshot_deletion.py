"""Planning a snapshot expiry, as Java's ExpireSnapshotsImpl with its SnapshotDeletion.

Pure (reads only): picks the range exactly as Java does and lists every file a run deletes,
in deletion order, with its size, plus what holds each retained snapshot. Deviations from
Java, all on the safe side: the range starts at the earliest snapshot FILE (not the EARLIEST
hint, so snapshots stranded below a wrong hint or a gap are not kept forever,
apache/paimon#4743) and the expire limit counts existing snapshots; the time rule is Java
2.x's (apache/paimon#7706: a snapshot is kept while its successor is younger than the
retention, so time travel to ``now - time-retained`` keeps working; 0.9 and 1.x compared the
snapshot's own time); files used by other branches are protected; a
data file the end snapshot still lists is never deleted.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

from ..io.fileio import join
from ..manifest.expire_file_entry import ExpireFileEntry, FileKey
from ..manifest.manifest import FileSource
from ..refs.snapshot import Snapshot, SnapshotManager
from .expire_plan import ACTION, ExpirePlan, ResolvedPolicy, RetainedRefs, plan_consumer_expiry
from .file_deletion import (
    CHANGELOG_FILE,
    SNAPSHOT,
    DeletionPlanner,
    FileDeletion,
    FilePaths,
    GuardedReader,
    added_in_changelog,
    beyond_latest,
    overlapped,
)
from .live_files import PendingDeletes, TagSkipper, deleted_in_delta, rows_in

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable


class DeltaReader:
    """What each expiring snapshot's own manifests say: the data files its delta deletes and the
    changelog files it adds. Read here, snapshot by snapshot; the Spark engine reads them all
    in tasks in :meth:`prepare` (``core.spark.expire``)."""

    def prepare(self, reader: GuardedReader, data: list[tuple[Snapshot, bool]], changelog: list[Snapshot]) -> None:
        """Called once before the lookups: ``data`` (snapshot, missing_ok), ``changelog`` snapshots."""

    def deleted(self, reader: GuardedReader, snap: Snapshot, missing_ok: bool) -> dict[FileKey, ExpireFileEntry] | None:
        return deleted_in_delta(reader, snap, missing_ok)

    def changelog_added(self, reader: GuardedReader, snap: Snapshot) -> list[ExpireFileEntry] | None:
        return added_in_changelog(reader, snap)


def plan_snapshot_expire(table: FileStoreTable, rp: ResolvedPolicy, explain: bool = False,
                         deltas: DeltaReader | None = None) -> ExpirePlan:
    """Decide what a run deletes; ``explain`` also reads other branches when nothing expires."""
    reader = GuardedReader(table.file_io, table.path, ACTION)
    sm = table.snapshot_manager
    plan = ExpirePlan(table.path, table.branch, "snapshot", rp)
    ids = reader.snapshot_ids(sm)
    # writers run this after every commit: other branches are read only when needed
    refs = RetainedRefs.read(table, reader, branches=explain,
                             consumer_expire_before=rp.consumer_expire_before_millis)
    plan.fingerprint = refs.fingerprint()
    plan_consumer_expiry(table, reader, plan, refs)
    if not ids:
        return plan
    latest, earliest = ids[-1], ids[0]
    plan.latest_id, plan.earliest_id = latest, earliest
    _gap_notes(plan, ids, sm)
    snap = reader.cached_snapshots(sm)
    end, why = _expire_range(ids, rp, refs.consumers, snap)
    end_id = next((i for i in ids if i >= end), None)
    if end_id is None or end <= earliest:
        plan.end_id = earliest
        _fill_holds(plan, ids, why, refs, latest)
        if not reader.file_io.exists(join(sm.snapshot_dir, "EARLIEST")):
            plan.earliest_hint = earliest  # as Java: write the hint so readers find it directly
        return plan
    plan.end_id = end_id
    end_snap = snap(end_id)
    if end_snap is None:
        raise reader.refuse(sm.snapshot_path(end_id), "the first retained snapshot vanished while planning")
    expiring = [s for s in (snap(i) for i in ids if i < end_id) if s is not None]
    if not expiring:
        return plan
    plan.expired_ids = [s.id for s in expiring]
    if not explain:
        refs.read_branches(reader, table.branch)
        plan.fingerprint = refs.fingerprint()
    _fill_holds(plan, ids, why, refs, latest)
    with cyclic_gc_paused():  # ~40% of decoding many small Avro files is the cyclic GC's scans
        _plan_files(plan, DeletionPlanner(reader, FilePaths(table)), expiring, end_snap, refs, sm, latest,
                    deltas or DeltaReader())
    for s in expiring:
        p = sm.snapshot_path(s.id)
        plan.metadata_files.append(FileDeletion(p, SNAPSHOT, reader.size(p) or 0, s.id))
        if rp.changelog_decoupled:
            plan.changelog_copies.append(s.id)
    plan.earliest_hint = end_id
    return plan.finish()


@contextmanager
def cyclic_gc_paused() -> Iterator[None]:
    """Planning builds millions of short-lived, acyclic objects (records, metas): reference
    counting frees them; the cyclic collector only rescans them (as it was, afterwards)."""
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _expire_range(ids: list[int], rp: ResolvedPolicy, consumers: dict[str, int],
                  snap: Callable[[int], Snapshot | None]) -> tuple[int, dict[str, int]]:
    """(exclusive end of the range, first id each rule holds) as ExpireSnapshotsImpl.expire."""
    latest, earliest = ids[-1], ids[0]
    lo = max(latest - rp.retain_max + 1, earliest)
    max_excl = latest - rp.retain_min + 1
    why: dict[str, int] = {"retain-min": max_excl}
    if consumers and not rp.consumer_changelog_only:
        c_min = min(consumers.values())
        max_excl = min(max_excl, c_min)
        why["consumer"] = c_min
    why["expire-limit"] = ids[rp.max_deletes] if len(ids) > rp.max_deletes else latest + 1
    max_excl = min(max_excl, why["expire-limit"])
    for i, sid in enumerate(ids):
        if sid < lo:
            continue
        if sid >= max_excl:
            break
        nxt = snap(ids[i + 1])
        if nxt is not None and nxt.time_millis >= rp.cutoff_millis:
            why["time-retained"] = sid
            return sid, why
    # the first snapshot whose successor is young (for explaining holds only)
    why["time-retained"] = _first_time_held(ids, snap, rp.cutoff_millis, latest)
    return max_excl, why


def _first_time_held(ids: list[int], snap: Callable[[int], Snapshot | None], cutoff: int, latest: int) -> int:
    """Smallest id held by the time rule (its successor is younger than the cut-off);
    ``latest + 1`` when none is (the latest itself is held by retain-min, never by time)."""
    # binary search over positions: commit times grow with ids
    lo, hi = 0, len(ids) - 2
    ans = latest + 1
    while lo <= hi:
        mid = (lo + hi) // 2
        nxt = snap(ids[mid + 1])
        if nxt is None or nxt.time_millis >= cutoff:
            ans = ids[mid]
            hi = mid - 1
        else:
            lo = mid + 1
    return ans


def _fill_holds(plan: ExpirePlan, ids: list[int], why: dict[str, int], refs: RetainedRefs, latest: int) -> None:
    rp = plan.policy
    first_kept = plan.end_id if plan.end_id is not None else ids[0]
    consumers = sorted(refs.consumers.items(), key=lambda kv: kv[1])
    for sid in ids:
        if sid < first_kept:
            continue
        reasons: list[str] = []
        if sid == latest:
            reasons.append("latest")
        if sid >= why["retain-min"]:
            reasons.append(f"retain-min ({rp.retain_min})")
        if sid >= why.get("time-retained", latest + 1):
            reasons.append("time-retained")
        reasons += [f"consumer {cid}" for cid, nxt in consumers if sid >= nxt and not rp.consumer_changelog_only]
        if sid >= why["expire-limit"]:
            reasons.append(f"expire-limit ({rp.max_deletes} per run)")
        reasons += [f"tag {name}" for name in refs.tag_names.get(sid, [])]
        reasons += refs.branches.holders.get(sid, [])
        plan.holds[sid] = reasons


def _gap_notes(plan: ExpirePlan, ids: list[int], sm: SnapshotManager) -> None:
    gaps = [(a, b) for a, b in zip(ids, ids[1:], strict=False) if b != a + 1]  # neighbours: one shorter
    for a, b in gaps[:5]:
        plan.notes.append(f"snapshot gap: {a + 1}..{b - 1} missing; expiry continues across it")
    hint = sm.read_hint("EARLIEST")
    if hint is not None and hint > ids[0] and hint in ids:
        plan.notes.append(
            f"EARLIEST hint says {hint} but snapshot files from {ids[0]} exist; they are expired too"
        )


# ---------------------------------------------------------------------------------------
# the files
# ---------------------------------------------------------------------------------------


def _plan_files(plan: ExpirePlan, planner: DeletionPlanner, expiring: list[Snapshot], end_snap: Snapshot,
                refs: RetainedRefs, sm: SnapshotManager, latest: int, deltas: DeltaReader) -> None:
    rp = plan.policy
    _plan_data_files(planner, expiring, end_snap, refs, rp, sm, latest, deltas)
    if not rp.changelog_decoupled:
        _plan_changelog_files(planner, expiring, refs, deltas)
    _plan_metadata(planner, expiring, end_snap, refs, rp, latest)
    plan.deletions = planner.files
    plan.notes += planner.notes
    if rp.clean_empty_directories:
        plan.empty_dir_candidates = list(planner.bucket_dirs)


def _plan_data_files(planner: DeletionPlanner, expiring: list[Snapshot], end_snap: Snapshot, refs: RetainedRefs,
                     rp: ResolvedPolicy, sm: SnapshotManager, latest: int, deltas: DeltaReader) -> None:
    """Data files deleted by the deltas of (begin, end], unless the last tag before the deleting
    snapshot, a tag past the ``latest`` snapshot, another branch or the end snapshot still lists them.

    The live sets stay Arrow key tables; membership is asked once per tag segment."""
    reader = planner.reader
    end_live = reader.live_table(end_snap)
    if end_live.num_rows == 0 and (end_snap.total_record_count or 0) > 0:
        raise reader.refuse(
            sm.snapshot_path(end_snap.id),
            f"reports {end_snap.total_record_count} records but its manifests list no live data file "
            "(an empty used-file set on a table with data)",
        )
    tags = TagSkipper(reader, refs.tags, latest)
    deltas.prepare(reader, [(s, s.id != end_snap.id) for s in [*expiring[1:], end_snap]],
                   [] if rp.changelog_decoupled else expiring)
    pending = PendingDeletes()
    for s in [*expiring[1:], end_snap]:
        segment = tags.segment(s.id)
        deleted = deltas.deleted(reader, s, missing_ok=s.id != end_snap.id)
        if deleted is None:
            planner.notes.append(
                f"snapshot {s.id}: a delta manifest is already gone (an interrupted run?); "
                "its deleted data files, if any are left, are orphans now"
            )
            continue
        pending.add(s.id, segment, deleted)
    keys = pending.keys()
    skipped = pending.skipped(keys, tags)
    listed = rows_in(keys, end_live)
    del end_live, keys
    for i, (sid, e) in enumerate(zip(pending.owners, pending.entries, strict=True)):
        if skipped[i]:
            continue
        if rp.changelog_decoupled and not rp.produce_changelog and e.file_source in (None, FileSource.APPEND):
            continue  # left to changelog expiration
        if listed[i]:
            raise reader.refuse(
                sm.snapshot_path(sid),
                f"deletes data file {e.file_name} that retained snapshot {end_snap.id} still lists "
                "(inconsistent history)",
            )
        if e.key not in refs.branches.data:  # another branch still uses it
            planner.data_file(e, sid)


def _plan_changelog_files(planner: DeletionPlanner, expiring: list[Snapshot], refs: RetainedRefs,
                          deltas: DeltaReader) -> None:
    """Changelog files of [begin, end) (coupled lifecycle), unless another branch names them."""
    for s in expiring:
        entries = deltas.changelog_added(planner.reader, s)
        if entries is None:
            planner.notes.append(f"snapshot {s.id}: changelog manifests already gone")
            continue
        for e in entries:
            if e.key not in refs.branches.data:
                planner.data_file(e, s.id, CHANGELOG_FILE)


def _plan_metadata(planner: DeletionPlanner, expiring: list[Snapshot], end_snap: Snapshot, refs: RetainedRefs,
                   rp: ResolvedPolicy, latest: int) -> None:
    """Manifests, lists, index files and statistics the end snapshot, the overlapped tags, the
    tags past the ``latest`` snapshot and the other branches do not use."""
    reader = planner.reader
    skipping = reader.skipping_names(end_snap)
    for t in overlapped(refs.tags, expiring[0].id, end_snap.id) + beyond_latest(refs.tags, latest):
        skipping |= reader.skipping_names(t)
    skipping |= refs.branches.names
    for s in expiring:
        planner.manifests(s, skipping, s.id, data_lists=not rp.changelog_decoupled or rp.produce_changelog,
                          changelog_list=not rp.changelog_decoupled, cache=False)
