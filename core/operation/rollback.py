"""rollback: make an earlier snapshot (or a tag) the latest again, as Java's ``rollbackTo``.

Java changed behaviour between versions; we follow 1.x for the metadata and go further for
the files:

* Target: ``--snapshot N`` (if snapshot N is gone but a tag points at N, 1.x rolls back to
  that tag) or ``--tag T``. Snapshots and long-lived changelogs with a larger id are deleted
  newest first, tags on larger snapshots are deleted, the LATEST hint names the target
  (both versions).
* Rolling back to a tag whose snapshot has expired re-creates ``snapshot-<id>`` from the
  tag (its snapshot JSON without the tag fields, as 1.x ``trimToSnapshot``; 0.9 copied the
  tag file verbatim) and sets EARLIEST to it.
* Files: 0.9 deleted the data files ADDed by the removed snapshots' deltas plus manifests
  not used by the target; that also deleted files still used by the target after a level
  upgrade (DELETE+ADD of the same file) and by branches, and left extra files (``.index``)
  behind. 1.2+ deletes no files at all and leaves everything to remove-orphan-files. We
  delete exactly the files the removed snapshots, changelogs and tags referenced that no
  remaining snapshot, tag or changelog of any branch uses (core/operation/used_files.py, fail closed),
  so nothing becomes an orphan and nothing still used goes.
* Order (each step leaves a readable table; a kill leaves only orphans): re-created
  snapshot file first, LATEST hint, snapshot files newest first, changelogs, tags, EARLIEST
  hint (the references are retracted first), then the now-unreferenced files in the one
  deletion order of core/operation/file_deletion.py. 1.x writes the re-created snapshot
  last, which leaves a table without any snapshot if killed in between.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..data.java_format import local_datetime_from_millis
from ..errors import CommitConflict, CorruptMetadata, InvalidInput, NotFound, PaimonError, UnsafeRefused
from ..iceberg.callback import resync as resync_iceberg
from ..io.fileio import basename, join
from ..io.paths import MAIN_BRANCH
from ..refs.snapshot import ChangelogManager, Snapshot, SnapshotManager
from ..schema.iceberg_options import iceberg_enabled
from ..utils.interrupt import deferred
from .file_deletion import (
    CHANGELOG,
    CHANGELOG_FILE,
    DATA_FILE,
    EXTRA_FILE,
    INDEX_FILE,
    INDEX_MANIFEST,
    MANIFEST,
    MANIFEST_LIST,
    PHASE,
    SNAPSHOT,
    STATISTICS,
    TAG,
    DeletionPlanner,
    FilePaths,
    GuardedReader,
    delete_in_order,
    label_phases,
    remove_empty_bucket_dirs,
)
from .live_files import unused_entries
from .used_files import DirLister, collect_used_files, list_branches

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestFileMeta
    from ..table.file_store_table import FileStoreTable

ACTION = "roll back"
# what ``rollback --dry-run`` calls each kind of file
LABELS = {SNAPSHOT: "snapshot", CHANGELOG: "changelog-meta", TAG: "tag", DATA_FILE: "data",
          CHANGELOG_FILE: "changelog", EXTRA_FILE: "file-index", INDEX_FILE: "index", STATISTICS: "statistics",
          MANIFEST: "manifest", INDEX_MANIFEST: "index-manifest", MANIFEST_LIST: "manifest-list"}
_PHASES = label_phases(LABELS)
_METADATA = frozenset(LABELS[k] for k in (SNAPSHOT, CHANGELOG, TAG))


@dataclass(frozen=True)
class RemovedFile:
    path: str
    kind: str  # snapshot | changelog-meta | tag | data | changelog | file-index | manifest-list | ...
    size: int


@dataclass
class RollbackPlan:
    table_path: str
    branch: str | None
    target_id: int
    from_tag: str | None
    target: Snapshot
    create_snapshot: bool
    latest_id: int
    snapshots: list[int]  # newest first
    changelogs: list[int]  # newest first
    tags: list[str]
    files: list[RemovedFile]  # metadata files first, then the files only they referenced
    warnings: list[str] = field(default_factory=list)
    branches: list[str] = field(default_factory=list)  # every branch seen while planning
    bucket_dirs: list[str] = field(default_factory=list)  # emptied maybe (snapshot.clean-empty-directories)
    chosen: str | None = None  # how a time or watermark chose the target (for the dry run)
    iceberg: str | None = None  # what happens to the table's Iceberg metadata

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


@dataclass(frozen=True)
class RollbackTarget:
    """What the user named: exactly one of a snapshot id, a tag, a commit time (epoch millis:
    the latest snapshot committed at or before it, Java's ``rollback_to_timestamp``) or a
    watermark (the latest snapshot whose watermark is at or below it, ``rollback_to_watermark``)."""

    snapshot_id: int | None = None
    tag: str | None = None
    timestamp_millis: int | None = None
    watermark: int | None = None

    def __post_init__(self) -> None:
        given = [x for x in (self.snapshot_id, self.tag, self.timestamp_millis, self.watermark) if x is not None]
        if len(given) != 1:
            raise InvalidInput("give exactly one of --snapshot, --tag, --to-timestamp and --to-watermark")


def resolve_target(table: FileStoreTable, target: RollbackTarget) -> tuple[Snapshot, str | None, str | None]:
    """(the snapshot to roll back to, the tag it comes from, how it was chosen) as Java resolves
    each form; a time or watermark no snapshot is at or before is NotFound."""
    sm = table.snapshot_manager
    if target.tag is not None:
        t = table.tag_manager.tag(target.tag)
        return t.snapshot, target.tag, None
    if target.timestamp_millis is not None:
        snap = sm.earlier_or_equal_time_millis(target.timestamp_millis)
        when = _local_time(target.timestamp_millis)
        if snap is None:
            first = sm.earliest_snapshot()
            have = "the table has no snapshot" if first is None else (
                f"the earliest, snapshot {first.id}, was committed {_local_time(first.time_millis)}")
            raise NotFound(f"no snapshot of {table.identifier} was committed at or before {when} "
                           f"({target.timestamp_millis}): {have}")
        at = _local_time(snap.time_millis)
        return snap, None, f"the latest snapshot committed at or before {when} (committed {at})"
    if target.watermark is not None:
        snap = sm.earlier_or_equal_watermark(target.watermark)
        if snap is None:
            raise NotFound(f"no snapshot of {table.identifier} has a watermark at or below {target.watermark}")
        return snap, None, (f"the latest snapshot with a watermark at or below {target.watermark} "
                            f"(watermark {snap.watermark})")
    snapshot_id = target.snapshot_id
    assert snapshot_id is not None
    snap = sm.try_snapshot(snapshot_id)
    if snap is not None:
        return snap, None, None
    # 1.x: a snapshot that expired but is tagged rolls back to the (first) tag
    for t in table.tag_manager.tags():
        if t.snapshot.id == snapshot_id:
            return t.snapshot, t.name, None
    sm.snapshot(snapshot_id)  # raises NotFound naming what exists
    raise NotFound(f"snapshot {snapshot_id} not found")  # pragma: no cover - snapshot() raised


def _local_time(millis: int) -> str:
    return local_datetime_from_millis(millis).isoformat(sep=" ", timespec="milliseconds")


def plan_rollback(table: FileStoreTable, snapshot_id: int | None = None, tag: str | None = None, *,
                  target: RollbackTarget | None = None) -> RollbackPlan:
    """What a rollback would delete (reads only); unreadable metadata refuses (exit 6)."""
    try:
        return _plan(table, target or RollbackTarget(snapshot_id=snapshot_id, tag=tag))
    except UnsafeRefused:
        raise
    except CorruptMetadata as e:
        raise UnsafeRefused(f"{e.path}: {e.problem}; refusing to roll back (nothing was changed)") from e


def _plan(table: FileStoreTable, wanted: RollbackTarget) -> RollbackPlan:
    sm = table.snapshot_manager
    target, from_tag, chosen = resolve_target(table, wanted)
    latest = sm.latest_snapshot_id()
    where = f"{table.identifier}" + (f" (branch {table.branch})" if table.branch else "")
    if latest is None:
        raise InvalidInput(f"{where} has no snapshots to roll back")
    if target.id > latest:
        raise InvalidInput(
            f"cannot roll back {where} to snapshot {target.id}: it is later than the latest snapshot {latest}"
        )
    removed_snaps = sorted((i for i in sm.snapshot_ids() if i > target.id), reverse=True)
    if latest > target.id and latest not in removed_snaps:
        removed_snaps.insert(0, latest)
    cm = ChangelogManager(table.file_io, table.path, table.branch)
    removed_cls = sorted((i for i in cm.snapshot_ids() if i > target.id), reverse=True)
    removed_tags = sorted(t.name for t in table.tag_manager.tags() if t.snapshot.id > target.id)
    branch = table.branch or MAIN_BRANCH
    removed = {("snapshot", str(i)) for i in removed_snaps} | {("changelog", str(i)) for i in removed_cls} | {
        ("tag", n) for n in removed_tags}
    used = collect_used_files(table.file_io, table.path,
                              skip=lambda ref: ref.branch == branch and (ref.kind, ref.key) in removed, action=ACTION)
    plan = RollbackPlan(
        table_path=table.path, branch=table.branch, target_id=target.id, from_tag=from_tag, target=target,
        create_snapshot=not sm.snapshot_exists(target.id), latest_id=latest, snapshots=removed_snaps,
        changelogs=removed_cls, tags=removed_tags, files=[], branches=list(used.branches), chosen=chosen,
    )
    _plan_files(table, plan, used.names)
    if iceberg_enabled(table.schema.options) and table.branch is None:
        plan.iceberg = (f"Iceberg metadata moves to snapshot {target.id} before any file goes; its versions above "
                        f"{target.id} and the files only they name are deleted")
    return plan


def _plan_files(table: FileStoreTable, plan: RollbackPlan, used: set[str]) -> None:
    """The removed snapshots, changelogs and tags, then the files they reference that nothing
    else uses, with their full paths."""
    reader = GuardedReader(table.file_io, table.path, ACTION)
    sm, tm = table.snapshot_manager, table.tag_manager
    cm = ChangelogManager(table.file_io, table.path, table.branch)
    objs: list[Snapshot] = []
    for kind, ids, mgr in ((SNAPSHOT, plan.snapshots, sm), (CHANGELOG, plan.changelogs, cm)):
        for sid in ids:
            s = reader.snapshot(mgr, sid)
            if s is not None:
                objs.append(s)
                path = mgr.snapshot_path(sid)
                plan.files.append(RemovedFile(path, LABELS[kind], reader.size(path) or 0))
    for name in plan.tags:
        t = reader.guarded(tm.tag_path(name), functools.partial(tm.try_tag, name), missing_ok=True)
        if t is not None:
            objs.append(t.snapshot)
            plan.files.append(RemovedFile(tm.tag_path(name), LABELS[TAG], reader.size(tm.tag_path(name)) or 0))
    planner = DeletionPlanner(reader, FilePaths(table))
    _unreferenced(planner, objs, used)
    plan.warnings += planner.notes
    plan.bucket_dirs = list(planner.bucket_dirs)
    freed = sorted(planner.files, key=lambda f: (PHASE[f.kind], f.path))
    plan.files += [RemovedFile(f.path, LABELS[f.kind], f.bytes) for f in freed]


def _unreferenced(planner: DeletionPlanner, objs: list[Snapshot], used: set[str]) -> None:
    """Every file the removed objects reference (ADDed or DELETEd, data or changelog) whose
    name nothing else uses; a missing list or manifest leaves what only it named as orphans."""
    reader = planner.reader
    seen: set[str] = set()
    for s in objs:
        for ml, kind in ((s.base_manifest_list, DATA_FILE), (s.delta_manifest_list, DATA_FILE),
                         (s.changelog_manifest_list, CHANGELOG_FILE)):
            if not ml or ml in seen:
                continue
            seen.add(ml)
            planner.manifest_list(ml, None, used, None)  # the list and its manifests
            for m in reader.manifest_list(ml, missing_ok=True) or []:
                if m.file_name not in seen:
                    seen.add(m.file_name)
                    _data_files(planner, m, kind, used)
        planner.manifests(s, used, None, data_lists=False)


def _data_files(planner: DeletionPlanner, manifest: ManifestFileMeta, kind: str, used: set[str]) -> None:
    """The manifest's files nothing else uses; a large manifest is decoded columnar and only
    those rows become objects."""
    entries = unused_entries(planner.reader, manifest, used)
    if entries is None:
        planner.notes.append(f"{planner.paths.manifest(manifest.file_name)}: manifest already missing; "
                             "files only it referenced stay as orphans")
        return
    for e in entries:
        planner.data_file(e, None, kind, used)


def rollback(
    table: FileStoreTable,
    snapshot_id: int | None = None,
    tag: str | None = None,
    dry_run: bool = False,
    *,
    target: RollbackTarget | None = None,
) -> RollbackPlan:
    """Roll back (or, with ``dry_run``, only plan); returns the plan that was carried out."""
    plan = plan_rollback(table, snapshot_id, tag, target=target)
    if not dry_run:
        apply_rollback(table, plan)
    return plan


def _check_unchanged(table: FileStoreTable, plan: RollbackPlan) -> None:
    """A commit, branch or tag that appeared while planning could use files only the removed
    snapshots used: refuse (retry)."""
    now_latest = table.snapshot_manager.latest_snapshot_id()
    if now_latest != plan.latest_id:
        raise CommitConflict(
            f"{table.identifier}: snapshot {now_latest} was committed while planning the rollback "
            f"(planned against {plan.latest_id}); nothing was changed, run it again"
        )
    fio = table.file_io
    new_branches = sorted(set(list_branches(GuardedReader(fio, table.path, ACTION), DirLister(fio)))
                          - set(plan.branches))
    new_tags = sorted(
        t.name for t in table.tag_manager.tags() if t.snapshot.id > plan.target_id and t.name not in plan.tags
    )
    if new_branches or new_tags:
        what = f"branch {new_branches[0]}" if new_branches else f"tag {new_tags[0]}"
        raise CommitConflict(f"{table.identifier}: {what} was created while planning the rollback; "
                             "nothing was changed, run it again")


def apply_rollback(table: FileStoreTable, plan: RollbackPlan) -> None:
    files = [f for f in plan.files if f.kind not in _METADATA]
    versions = table.catalog_environment.versions
    if versions is None:
        table.lock.run_with_lock(lambda: _rollback_metadata(table, plan))
    else:
        files = _rollback_on_server(table, plan, files)
    # Iceberg readers move to the target before any file of the removed snapshots goes
    try:
        resync_iceberg(table)
    except Exception as e:
        raise PaimonError(
            f"{table.identifier}: rolled back to snapshot {plan.target_id}, but the Iceberg metadata could not be "
            f"moved ({e}); the files of the removed snapshots were kept (remove-orphan-files deletes them) and "
            "the next commit rebuilds the Iceberg metadata") from e
    delete_in_order(table.file_io, files, lambda f: _PHASES[f.kind])
    if table.options.snapshot_clean_empty_directories:
        remove_empty_bucket_dirs(table, plan.bucket_dirs)


def _rollback_on_server(table: FileStoreTable, plan: RollbackPlan, files: list[RemovedFile]) -> list[RemovedFile]:
    """A catalog server that keeps the versions (REST) rolls the metadata back itself (Java's
    ``rollbackTo`` through the catalog), from the planned latest snapshot only. The files it
    left unused are then deleted as a local rollback deletes them -- those no snapshot, tag or
    changelog of any branch uses now (read again after the server's rollback, so whatever the
    server kept keeps its files); a file the server deleted already counts as deleted."""
    versions = table.catalog_environment.versions
    assert versions is not None
    _check_unchanged(table, plan)
    with deferred():  # SIGINT / SIGTERM wait for the server's answer
        versions.rollback_to(table.branch, plan.target_id, tag=plan.from_tag, from_snapshot=plan.latest_id)
    if not files:
        return files
    used = collect_used_files(table.file_io, table.path, action=ACTION).names
    return [f for f in files if basename(f.path) not in used]


def _rollback_metadata(table: FileStoreTable, plan: RollbackPlan) -> None:
    """The metadata half, under the catalog's lock: checked unchanged, then hints, snapshots,
    changelogs and tags in an order where every moment is a readable table."""
    _check_unchanged(table, plan)
    fio = table.file_io
    sm = table.snapshot_manager
    with deferred():  # SIGINT / SIGTERM wait for the metadata: never half a rollback
        if plan.create_snapshot:
            # the tag's snapshot JSON (tag fields trimmed, as Java 1.x) as a new, never-replaced file
            if not fio.try_write_atomic(sm.snapshot_path(plan.target_id), plan.target.to_json().encode("utf-8")):
                raise CommitConflict(f"{sm.snapshot_path(plan.target_id)} appeared while rolling back; run it again")
        sm.commit_latest_hint(plan.target_id)
        for sid in plan.snapshots:  # newest first: the remaining maximum is always a valid latest
            fio.delete(sm.snapshot_path(sid))
        if plan.changelogs:
            _retract_changelogs(table, plan)
        for name in plan.tags:
            table.tag_manager.notify_deleted(name)
            fio.delete(table.tag_manager.tag_path(name))
        if plan.create_snapshot:
            sm.commit_earliest_hint(plan.target_id)


def _retract_changelogs(table: FileStoreTable, plan: RollbackPlan) -> None:
    cm: SnapshotManager = ChangelogManager(table.file_io, table.path, table.branch)
    remaining = [i for i in cm.snapshot_ids() if i <= plan.target_id]
    hint = str(remaining[-1]) if remaining else "-1"  # Java writes -1 when none is left
    table.file_io.write_bytes(join(cm.snapshot_dir, "LATEST"), hint.encode(), overwrite=True)
    for cid in plan.changelogs:
        table.file_io.delete(cm.snapshot_path(cid))
