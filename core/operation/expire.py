"""Snapshot and changelog expiration, as Java's ExpireSnapshotsImpl / ExpireChangelogImpl.

Expiration is where lake tools destroy data (apache/paimon#7710, #5229, #6978, #4743), so
the work is split in two:

* :func:`plan_expire` is PURE (reads only). It picks the range exactly as Java does and lists
  every file a run deletes, in deletion order, with its size, plus what holds each retained
  snapshot (:mod:`.snapshot_deletion`, :mod:`.changelog_expire`). Anything that decides what
  is still used (a snapshot in the range, the end snapshot, a tag, a branch, a consumer,
  their manifests) that cannot be read makes it raise :class:`UnsafeRefused` naming the file,
  before anything is deleted -- unless another run expired the snapshot that named it while
  this one planned: that is a race, raised as :class:`CommitConflict` (exit 5, run it again).
* :func:`apply_expire` deletes exactly the plan's list in the one deletion order of
  :mod:`.file_deletion` (data, changelog and index files, manifests, lists, statistics), then
  the snapshot files (copied to ``changelog/`` first when the changelog lifecycle is
  decoupled), then the EARLIEST hint. A kill at any point leaves only files no retained
  snapshot needs, and a re-run finishes the job (files already gone are skipped).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..data.java_format import local_datetime_from_millis
from ..errors import CommitConflict, CorruptMetadata, MissingMetadata, NotFound, PaimonError, UnsafeRefused
from ..io.fileio import basename, join
from ..refs.consumers import CONSUMER_PREFIX
from ..refs.snapshot import ChangelogManager, SnapshotManager
from ..schema.options import CoreOptions
from ..utils.progress import StepProgress, Ticker
from ..utils.rows import Rows
from .changelog_expire import plan_changelog_expire
from .expire_plan import ACTION, ExpirePlan, ExpirePolicy, RetainedRefs, resolve_policy
from .file_deletion import PHASE, FileDeletion, GuardedReader, delete_in_order, remove_empty_bucket_dirs
from .snapshot_deletion import DeltaReader, plan_snapshot_expire

if TYPE_CHECKING:
    from ..io.fileio import FileIO
    from ..table.file_store_table import FileStoreTable

# delete_in_order's signature: (file io, files, phase of a file, called per deleted file)
DeleteInOrder = Callable[["FileIO", list[FileDeletion], Callable[[FileDeletion], int],
                          Callable[[FileDeletion], None]], None]


@dataclass
class ExpireResult:
    plan: ExpirePlan | None
    deleted_files: int = 0
    deleted_bytes: int = 0
    expired: int = 0
    seconds: float = 0.0
    changelog: ExpireResult | None = None  # the automatic changelog expiry that followed
    error: str | None = None  # expire_after_commit: why expiry was refused (commit stands)


def plan_expire(table: FileStoreTable, policy: ExpirePolicy | None = None,
                options: dict[str, str] | None = None, *, explain: bool = False,
                deltas: DeltaReader | None = None) -> ExpirePlan:
    """Decide what a run deletes (reads only). See the module docs for the rules; ``deltas``
    reads the expiring snapshots' own manifests (the Spark engine's tasks)."""
    rp = resolve_policy(table, policy, options)
    changelog = policy is not None and policy.changelog
    sm = _manager(table, "changelog" if changelog else "snapshot")
    earliest = sm.earliest_snapshot_id()
    try:
        if changelog:
            return plan_changelog_expire(table, rp)
        plan = plan_snapshot_expire(table, rp, explain, deltas)
    except UnsafeRefused as e:
        # files of an expiring snapshot vanish when another expire (a second cron, `maintain`)
        # runs at the same time; corrupt metadata would leave that snapshot in place
        if earliest is not None and not sm.snapshot_exists(earliest):
            raise CommitConflict(
                f"{table.identifier}: another run expired {sm.what} {earliest} while this one planned ({e}); "
                "nothing was deleted, run it again") from e
        raise
    if plan.expired_ids:
        from ..iceberg.callback import plan_iceberg_expiry  # the Iceberg room loads once something expires

        plan.iceberg = plan_iceberg_expiry(table, plan.end_id)
        note = plan.iceberg.note()
        if note is not None:
            plan.notes.append(note)
    return plan


# ---------------------------------------------------------------------------------------
# apply
# ---------------------------------------------------------------------------------------


def _manager(table: FileStoreTable, mode: str) -> SnapshotManager:
    if mode == "changelog":
        return ChangelogManager(table.file_io, table.path, table.branch)
    return table.snapshot_manager


def _revalidate(table: FileStoreTable, plan: ExpirePlan) -> RetainedRefs:
    """Refuse if tags, consumers or branches changed since planning (a new tag on an expiring
    snapshot would otherwise lose its files); returns the references as they are now."""
    refs = RetainedRefs.read(table, GuardedReader(table.file_io, table.path, ACTION), branches=True,
                             consumer_expire_before=plan.policy.consumer_expire_before_millis)
    now = refs.fingerprint()
    # consumers move forward all the time (streaming readers); only one now reading below the
    # range end matters (a consumer expired while planning that moved since holds again)
    volatile = ("consumers", "expired_consumers")
    same = {k: v for k, v in now.items() if k not in volatile} == {
        k: v for k, v in plan.fingerprint.items() if k not in volatile}
    behind = [c for c, nxt in refs.consumers.items()
              if plan.end_id is not None and nxt < plan.end_id and not plan.policy.consumer_changelog_only
              and plan.mode == "snapshot"]
    if not same or behind:
        what = f"consumer {behind[0]} now reads below snapshot {plan.end_id}" if behind and same else \
            "tags or branches changed"
        raise UnsafeRefused(
            f"{table.path}: {what} since the expire plan was made; re-run expire (nothing was deleted)"
        )
    # a snapshot the plan keeps that is gone now: another expire (or a rollback) got there first
    if plan.kept_snapshot is not None and not table.snapshot_manager.snapshot_exists(plan.kept_snapshot):
        raise CommitConflict(
            f"{table.snapshot_manager.snapshot_path(plan.kept_snapshot)}: the earliest snapshot is gone since "
            "planning (another run expired it); re-run (nothing was deleted)"
        )
    if plan.end_id is not None and plan.expired_ids and plan.kept_snapshot is None:
        sm = _manager(table, plan.mode)
        if not sm.snapshot_exists(plan.end_id):
            raise CommitConflict(
                f"{sm.snapshot_path(plan.end_id)}: the first retained {sm.what} is gone since planning (another "
                "run expired it); re-run expire (nothing was deleted)"
            )
    return refs


def _expire_consumers(table: FileStoreTable, plan: ExpirePlan, refs: RetainedRefs,
                      deleted: Callable[[FileDeletion], None]) -> None:
    """The planned consumer files that are still expired (one that moved since planning is a
    live reader again and stays), under the catalog's lock."""
    cm = table.consumer_manager
    for f in plan.consumer_files:
        cid = basename(f.path)[len(CONSUMER_PREFIX):]
        if cid in refs.expired_consumers:
            cm.delete_quietly(cid)
            deleted(f)


def apply_expire(table: FileStoreTable, plan: ExpirePlan,
                 on_delete: Callable[[FileDeletion], None] | None = None,
                 progress: StepProgress | None = None, delete: DeleteInOrder = delete_in_order) -> ExpireResult:
    """Delete exactly the plan's files in its order, then move/delete metadata, then EARLIEST;
    ``progress`` counts the files; ``delete`` deletes the files before the metadata, phase by
    phase (the Spark engine: in tasks)."""
    started = time.monotonic()
    result = ExpireResult(plan)
    lock = threading.Lock()
    ticker = Ticker(progress, len(plan.files))

    def deleted(f: FileDeletion) -> None:
        with lock:
            result.deleted_files += 1
            result.deleted_bytes += f.bytes
        if on_delete is not None:
            on_delete(f)
        ticker.tick()

    if plan.consumer_files and not plan.expired_ids:
        refs = RetainedRefs.read(table, GuardedReader(table.file_io, table.path, ACTION), branches=False,
                                 consumer_expire_before=plan.policy.consumer_expire_before_millis)
        _expire_consumers(table, plan, refs, deleted)
    if plan.expired_ids:
        refs = _revalidate(table, plan)
        if plan.iceberg is not None:  # first: Iceberg readers must never meet a snapshot whose files go
            from ..iceberg.callback import apply_iceberg_expiry

            apply_iceberg_expiry(table, plan.iceberg)
        _expire_consumers(table, plan, refs, deleted)
        delete(table.file_io, plan.deletions, lambda f: PHASE[f.kind], deleted)
        remove_empty_bucket_dirs(table, plan.empty_dir_candidates)
        _retire_metadata(table, plan, deleted)
        result.expired = len(plan.expired_ids)
    _write_earliest(table, plan)
    result.seconds = time.monotonic() - started
    return result


def _retire_metadata(table: FileStoreTable, plan: ExpirePlan, deleted: Callable[[FileDeletion], None]) -> None:
    """The snapshot (or changelog) files, ascending; with a decoupled changelog lifecycle each
    expired snapshot is first copied to ``changelog/`` (it is the changelog from then on)."""
    fio = table.file_io
    cm = ChangelogManager(fio, table.path, table.branch)
    copies = set(plan.changelog_copies)
    for f in plan.metadata_files:
        if f.snapshot_id is not None and f.snapshot_id in copies:
            try:
                data = fio.read_bytes(f.path)
            except NotFound:
                data = None  # moved by an earlier interrupted run
            if data is not None:
                fio.write_bytes(cm.snapshot_path(f.snapshot_id), data, overwrite=True)
                cm.commit_latest_hint(f.snapshot_id)
        fio.delete(f.path)
        deleted(f)


def _write_earliest(table: FileStoreTable, plan: ExpirePlan) -> None:
    if plan.earliest_hint is not None:
        _manager(table, plan.mode).commit_earliest_hint(plan.earliest_hint)


def expire(table: FileStoreTable, policy: ExpirePolicy | None = None,
           options: dict[str, str] | None = None) -> ExpireResult:
    """Plan and apply in one go."""
    plan = plan_expire(table, policy, options)
    return apply_expire(table, plan)


def expire_after_commit(table: FileStoreTable, options_overrides: dict[str, str] | None = None) -> ExpireResult | None:
    """What Java writers do after a commit: expire snapshots, then changelogs when decoupled.

    Skipped (None) with ``write-only=true``. A refusal does not undo the commit: it is
    returned in ``error`` for the caller to show as a warning.
    """
    opts = CoreOptions({**table.schema.options, **(options_overrides or {})})
    if opts.write_only:
        return None
    try:
        res = expire(table, ExpirePolicy(), options_overrides)
        if res.plan is not None and res.plan.policy.changelog_decoupled:
            res.changelog = expire(table, ExpirePolicy(changelog=True), options_overrides)
        return res
    except PaimonError as e:  # the commit stands; the caller shows this as a warning
        return ExpireResult(None, error=str(e))


# ---------------------------------------------------------------------------------------
# explain: inspect expiry / inspect table
# ---------------------------------------------------------------------------------------

EXPIRY_COLUMNS = ["snapshot_id", "commit_kind", "commit_time", "will_expire", "held_by",
                  "delete_files", "delete_bytes"]


def expiry_report(table: FileStoreTable, at: Any = None, policy: ExpirePolicy | None = None) -> Rows:
    """Per snapshot: expires on the next run (and what it frees), or what holds it."""
    try:
        plan = plan_expire(table, policy, explain=True)
    except UnsafeRefused as e:
        if isinstance(e.__cause__, (CorruptMetadata, MissingMetadata, NotFound)):
            raise e.__cause__ from None  # a report says what is wrong (exit 4), it refuses nothing
        raise
    sm = table.snapshot_manager
    expired = set(plan.expired_ids)
    rows = []
    for sid in sm.snapshot_ids():
        s = sm.try_snapshot(sid)
        if s is None:
            continue
        n, b = plan.per_snapshot.get(sid, (0, 0))
        rows.append({
            "snapshot_id": sid,
            "commit_kind": s.commit_kind,
            "commit_time": local_datetime_from_millis(s.time_millis),
            "will_expire": sid in expired,
            "held_by": None if sid in expired else ", ".join(plan.holds.get(sid, [])) or "-",
            "delete_files": n if sid in expired else 0,
            "delete_bytes": b if sid in expired else 0,
        })
    return Rows(EXPIRY_COLUMNS, rows)


def snapshot_health(table: FileStoreTable) -> list[str]:
    """Problems ``inspect table`` flags: id gaps, wrong EARLIEST/LATEST hints (apache/paimon#4743)."""
    out: list[str] = []
    for sm, what in ((table.snapshot_manager, "snapshot"),
                     (ChangelogManager(table.file_io, table.path, table.branch), "changelog")):
        ids = sm.snapshot_ids()
        hints: dict[str, int | None] = {}
        for name in ("EARLIEST", "LATEST"):
            p = join(sm.snapshot_dir, name)
            try:
                text = table.file_io.read_bytes(p).decode("utf-8", "replace").strip()
            except NotFound:
                hints[name] = None
                continue
            if not text.lstrip("-").isdigit():
                out.append(f"{what} {name} hint is not a number: {text[:20]!r}")
                hints[name] = None
            else:
                hints[name] = int(text)
        if not ids:
            continue
        gaps = [(a, b) for a, b in zip(ids, ids[1:], strict=False) if b != a + 1]  # neighbours: one shorter
        for a, b in gaps[:10]:
            rng = f"{a + 1}" if b - a == 2 else f"{a + 1}..{b - 1}"
            out.append(f"{what} gap: {what}s {rng} are missing between {a} and {b}")
        if len(gaps) > 10:
            out.append(f"{what} gaps: {len(gaps) - 10} more")
        e, l = hints.get("EARLIEST"), hints.get("LATEST")
        if e is not None and e != ids[0]:
            stranded = sum(1 for i in ids if i < e)
            extra = f" ({stranded} {what} files below it are never expired by Java)" if stranded else ""
            out.append(f"{what} EARLIEST hint is {e} but the earliest {what} file is {ids[0]}{extra}")
        if l is not None and l != ids[-1]:
            out.append(f"{what} LATEST hint is {l} but the latest {what} file is {ids[-1]}")
    return out
