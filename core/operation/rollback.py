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
  hint, then the now-unreferenced files. 1.x writes the re-created snapshot last, which
  leaves a table without any snapshot if killed in between.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..data import binary_row
from ..errors import CommitConflict, CorruptMetadata, InvalidInput, NotFound, UnsafeRefused
from ..io import paths
from ..io.fileio import join, parent
from ..io.paths import MAIN_BRANCH
from ..utils.interrupt import deferred
from .used_files import Ref, collect_used_files

if TYPE_CHECKING:
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable


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

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


def _size(fio: Any, path: str) -> int | None:
    try:
        return fio.file_size(path)
    except NotFound:
        return None


def _resolve_target(table: FileStoreTable, snapshot_id: int | None, tag: str | None) -> tuple[Snapshot, str | None]:
    sm = table.snapshot_manager
    if (snapshot_id is None) == (tag is None):
        raise InvalidInput("give exactly one of --snapshot and --tag")
    if tag is not None:
        t = table.tag_manager.tag(tag)
        return t.snapshot, tag
    assert snapshot_id is not None
    snap = sm.try_snapshot(snapshot_id)
    if snap is not None:
        return snap, None
    # 1.x: a snapshot that expired but is tagged rolls back to the (first) tag
    for t in table.tag_manager.tags():
        if t.snapshot.id == snapshot_id:
            return t.snapshot, t.name
    sm.snapshot(snapshot_id)  # raises NotFound naming what exists
    raise NotFound(f"snapshot {snapshot_id} not found")  # pragma: no cover - snapshot() raised


def plan_rollback(table: FileStoreTable, snapshot_id: int | None = None, tag: str | None = None) -> RollbackPlan:
    """What a rollback would delete (reads only); unreadable metadata refuses (exit 6)."""
    try:
        return _plan(table, snapshot_id, tag)
    except UnsafeRefused:
        raise
    except CorruptMetadata as e:
        raise UnsafeRefused(f"{e.path}: {e.problem}; refusing to roll back (nothing was changed)") from e


def _plan(table: FileStoreTable, snapshot_id: int | None, tag: str | None) -> RollbackPlan:
    from ..refs.snapshot import ChangelogManager

    fio = table.file_io
    sm = table.snapshot_manager
    target, from_tag = _resolve_target(table, snapshot_id, tag)
    latest = sm.latest_snapshot_id()
    where = f"{table.identifier}" + (f" (branch {table.branch})" if table.branch else "")
    if latest is None:
        raise InvalidInput(f"{where} has no snapshots to roll back")
    if target.id > latest:
        raise InvalidInput(
            f"cannot roll back {where} to snapshot {target.id}: it is later than the latest snapshot {latest}"
        )
    create = not sm.snapshot_exists(target.id)
    removed_snaps = sorted((i for i in sm.snapshot_ids() if i > target.id), reverse=True)
    if latest > target.id and latest not in removed_snaps:
        removed_snaps.insert(0, latest)
    cm = ChangelogManager(fio, table.path, table.branch)
    removed_cls = sorted((i for i in cm.snapshot_ids() if i > target.id), reverse=True)
    removed_tags = sorted(t.name for t in table.tag_manager.tags() if t.snapshot.id > target.id)

    branch = table.branch or MAIN_BRANCH
    snap_set, cl_set, tag_set = set(map(str, removed_snaps)), set(map(str, removed_cls)), set(removed_tags)

    def removed(ref: Ref) -> bool:
        if ref.branch != branch:
            return False
        if ref.kind == "snapshot":
            return ref.key in snap_set
        if ref.kind == "changelog":
            return ref.key in cl_set
        return ref.key in tag_set

    used = collect_used_files(fio, table.path, skip=removed)

    plan = RollbackPlan(
        table_path=table.path, branch=table.branch, target_id=target.id, from_tag=from_tag, target=target,
        create_snapshot=create, latest_id=latest, snapshots=removed_snaps, changelogs=removed_cls,
        tags=removed_tags, files=[], branches=list(used.branches),
    )
    objs: list[Snapshot] = []
    for sid in removed_snaps:
        path = sm.snapshot_path(sid)
        s = sm.try_snapshot(sid)
        if s is None:
            continue
        objs.append(s)
        plan.files.append(RemovedFile(path, "snapshot", _size(fio, path) or 0))
    for cid in removed_cls:
        path = cm.snapshot_path(cid)
        s = cm.try_snapshot(cid)
        if s is None:
            continue
        objs.append(s)
        plan.files.append(RemovedFile(path, "changelog-meta", _size(fio, path) or 0))
    for name in removed_tags:
        t = table.tag_manager.try_tag(name)
        if t is None:
            continue
        objs.append(t.snapshot)
        path = table.tag_manager.tag_path(name)
        plan.files.append(RemovedFile(path, "tag", _size(fio, path) or 0))
    plan.files.extend(_unreferenced_files(table, objs, used.names, plan.warnings))
    return plan


def _unreferenced_files(table: FileStoreTable, objs: list[Snapshot], used: set[str], warnings: list[str]) -> list[RemovedFile]:
    """Files the removed objects reference that nothing else uses, with their full paths."""
    from ..manifest.index_manifest import IndexManifestFile
    from ..manifest.manifest import ManifestFile, ManifestList

    fio = table.file_io
    mdir = paths.manifest_dir(table.path)
    ml_reader = ManifestList(fio, mdir)
    mf_reader = ManifestFile(fio, mdir, table.schema.logical_partition_type)
    part_types = table.schema.partition_types
    in_bucket_dir = table.options.index_file_in_data_file_dir
    out: dict[str, RemovedFile] = {}
    part_dirs: dict[bytes, str] = {}

    def part_dir(partition: bytes) -> str:
        d = part_dirs.get(partition)
        if d is None:
            d = paths.partition_path_for(table.schema, binary_row.deserialize(partition, part_types))
            part_dirs[partition] = d
        return d

    def add(path: str, kind: str, size: int | None) -> None:
        name = path.rsplit("/", 1)[-1]
        if name in used or path in out:
            return
        real = _size(fio, path)
        if real is None:
            return  # already gone (an earlier, interrupted run)
        out[path] = RemovedFile(path, kind, real if size is None else size)

    def guarded(what: str, path: str, fn: Any) -> Any:
        try:
            return fn()
        except NotFound:
            warnings.append(f"{path}: {what} already missing; files only it referenced stay as orphans")
            return None
        except CorruptMetadata as e:
            raise UnsafeRefused(f"{e.path}: {e.problem}; refusing to roll back (its files cannot be told apart)") from e

    seen_lists: set[str] = set()
    seen_manifests: set[str] = set()
    seen_index: set[str] = set()
    for s in objs:
        for ml, is_changelog in ((s.base_manifest_list, False), (s.delta_manifest_list, False),
                                 (s.changelog_manifest_list, True)):
            if not ml or ml in seen_lists:
                continue
            seen_lists.add(ml)
            metas = guarded("manifest list", join(mdir, ml), lambda ml=ml: ml_reader.read(ml))
            add(join(mdir, ml), "manifest-list", None)
            for m in metas or []:
                if m.file_name in seen_manifests:
                    continue
                seen_manifests.add(m.file_name)
                entries = guarded("manifest", join(mdir, m.file_name), lambda m=m: mf_reader.read(m.file_name))
                add(join(mdir, m.file_name), "manifest", m.file_size)
                for e in entries or []:
                    f = e.file
                    bdir = join(table.path, part_dir(e.partition), paths.bucket_dir(e.bucket))
                    fpath = f.external_path or join(bdir, f.file_name)
                    kind = "changelog" if is_changelog else "data"
                    add(fpath, kind, f.file_size)
                    for x in f.extra_files:
                        add(join(parent(fpath), x), "file-index", None)
        if s.index_manifest and s.index_manifest not in seen_index:
            seen_index.add(s.index_manifest)
            ipath = join(mdir, s.index_manifest)
            ientries = guarded("index manifest", ipath, lambda s=s: IndexManifestFile(fio, mdir).read(s.index_manifest))
            add(ipath, "index-manifest", None)
            for ie in ientries or []:
                f = ie.index_file
                if f.external_path:
                    p = f.external_path
                elif in_bucket_dir:
                    p = join(table.path, part_dir(ie.partition), paths.bucket_dir(ie.bucket), f.file_name)
                else:
                    p = join(paths.index_dir(table.path), f.file_name)
                add(p, "index", f.file_size)
        if s.statistics:
            add(join(paths.statistics_dir(table.path), s.statistics), "statistics", None)
    order = {"data": 0, "changelog": 0, "file-index": 0, "index": 1, "statistics": 2, "manifest": 3,
             "index-manifest": 4, "manifest-list": 5}
    return sorted(out.values(), key=lambda f: (order.get(f.kind, 9), f.path))


def rollback(
    table: FileStoreTable,
    snapshot_id: int | None = None,
    tag: str | None = None,
    dry_run: bool = False,
) -> RollbackPlan:
    """Roll back (or, with ``dry_run``, only plan); returns the plan that was carried out."""
    plan = plan_rollback(table, snapshot_id, tag)
    if not dry_run:
        apply_rollback(table, plan)
    return plan


def apply_rollback(table: FileStoreTable, plan: RollbackPlan) -> None:
    from ..refs.snapshot import ChangelogManager

    fio = table.file_io
    sm = table.snapshot_manager
    now_latest = sm.latest_snapshot_id()
    if now_latest != plan.latest_id:
        raise CommitConflict(
            f"{table.identifier}: snapshot {now_latest} was committed while planning the rollback "
            f"(planned against {plan.latest_id}); nothing was changed, run it again"
        )
    # a branch or tag created meanwhile could use files only the removed snapshots used
    from .used_files import list_branches

    new_branches = sorted(set(list_branches(fio, table.path)) - set(plan.branches))
    new_tags = sorted(
        t.name for t in table.tag_manager.tags() if t.snapshot.id > plan.target_id and t.name not in plan.tags
    )
    if new_branches or new_tags:
        what = f"branch {new_branches[0]}" if new_branches else f"tag {new_tags[0]}"
        raise CommitConflict(f"{table.identifier}: {what} was created while planning the rollback; "
                             "nothing was changed, run it again")
    with deferred():  # SIGINT / SIGTERM wait for the metadata: never half a rollback
        if plan.create_snapshot:
            # the tag's snapshot JSON (tag fields trimmed, as Java 1.x) as a new, never-replaced file
            if not fio.try_write_atomic(sm.snapshot_path(plan.target_id), plan.target.to_json().encode("utf-8")):
                raise CommitConflict(f"{sm.snapshot_path(plan.target_id)} appeared while rolling back; run it again")
        sm.commit_latest_hint(plan.target_id)
        for sid in plan.snapshots:  # newest first: the remaining maximum is always a valid latest
            fio.delete(sm.snapshot_path(sid))
        if plan.changelogs:
            cm = ChangelogManager(fio, table.path, table.branch)
            remaining = [i for i in cm.snapshot_ids() if i <= plan.target_id]
            hint = str(remaining[-1]) if remaining else "-1"  # Java writes -1 when none is left
            fio.write_bytes(join(cm.snapshot_dir, "LATEST"), hint.encode(), overwrite=True)
            for cid in plan.changelogs:
                fio.delete(cm.snapshot_path(cid))
        for name in plan.tags:
            fio.delete(table.tag_manager.tag_path(name))
        if plan.create_snapshot:
            sm.commit_earliest_hint(plan.target_id)
    touched_dirs: set[str] = set()
    for f in plan.files:
        if f.kind in ("snapshot", "changelog-meta", "tag"):
            continue
        fio.delete(f.path)
        if f.kind in ("data", "changelog", "file-index"):
            touched_dirs.add(parent(f.path))
    if touched_dirs and table.options.snapshot_clean_empty_directories:
        _clean_empty_dirs(table, touched_dirs)


def _clean_empty_dirs(table: FileStoreTable, bucket_dirs: set[str]) -> None:
    """``snapshot.clean-empty-directories``: bucket then partition directories, only if empty."""
    root = table.path.rstrip("/")
    level = {d.rstrip("/") for d in bucket_dirs}
    for _ in range(len(table.schema.partition_keys) + 1):
        nxt = set()
        for d in level:
            if d == root or not d.startswith(root + "/"):
                continue
            if table.file_io.delete_empty_dir(d):
                nxt.add(parent(d))
        level = nxt
