"""Branch operations on a table: create, delete and fast-forward, as Java's BranchManager.

Data files are shared between branches, so only metadata moves. Deleting a branch removes
its directory file by file in the one deletion order of :mod:`.file_deletion` (tags and
consumers, changelogs, snapshots, then schemas: a crash never leaves a branch whose
snapshots or tags lack their schema), then its empty directories.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import AlreadyExists, InvalidInput, NotFound, PaimonError
from ..iceberg.callback import resync as resync_iceberg
from ..io.fileio import FileIO, FileStatus, join
from ..io.paths import MAIN_BRANCH, table_relative
from ..refs.branches import BranchManager, validate_branch_name
from ..refs.snapshot import SnapshotManager
from ..refs.tags import TagManager
from ..schema.schema_manager import SchemaManager
from ..utils.interrupt import deferred
from ..utils.rows import Rows
from .file_deletion import (
    CHANGELOG,
    CONSUMER,
    OTHER,
    SCHEMA,
    SNAPSHOT,
    TAG,
    GuardedReader,
    delete_in_order,
    label_phases,
    remove_empty_dirs,
)

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

# what ``branch delete --dry-run`` calls each kind of file
LABELS = {TAG: "tag", CONSUMER: "consumer", CHANGELOG: "changelog", SNAPSHOT: "snapshot", OTHER: "other",
          SCHEMA: "schema"}
_PHASES = label_phases(LABELS)


@dataclass
class BranchChange:
    """One file a branch operation deletes or writes (``action``: delete, copy, write)."""

    action: str
    kind: str
    path: str
    source: str | None = None
    size: int | None = None


@dataclass
class BranchPlan:
    changes: list[BranchChange] = field(default_factory=list)
    table_path: str = ""  # listings show paths relative to it

    def rows(self) -> Rows:
        return Rows(
            ["action", "kind", "path", "source", "bytes"],
            [{"action": c.action, "kind": c.kind, "path": table_relative(c.path, self.table_path),
              "source": None if c.source is None else table_relative(c.source, self.table_path), "bytes": c.size}
             for c in self.changes],
        )


def _copy(fio: FileIO, src: str, dst: str) -> None:
    fio.write_bytes(dst, fio.read_bytes(src), overwrite=True)


def create_branch(table: FileStoreTable, name: str, tag: str | None = None) -> str:
    """Java's ``createBranch``: empty (the schemas only) or from a tag of the current branch.

    As Java 1.x, every schema up to the latest (or the tag's) is copied, and a tag whose
    snapshot has expired still works: its snapshot is written from the tag content. The
    schema goes first, so a branch directory never exists without a readable schema.
    """
    validate_branch_name(name)
    fio = table.file_io
    bm = BranchManager(fio, table.path)
    if bm.branch_exists(name):
        raise AlreadyExists(f"branch {name!r} already exists in {table.identifier}")
    src_schemas = table.schema_manager
    dst_schemas = SchemaManager(fio, table.path, name)
    if tag is None:
        upto = table.schema.id
        snap_json: tuple[str, bytes] | None = None
        tag_copy: tuple[str, str] | None = None
    else:
        t = table.tag_manager.tag(tag)
        upto = t.snapshot.schema_id
        sm = table.snapshot_manager
        dst_snap = SnapshotManager(fio, table.path, name).snapshot_path(t.snapshot.id)
        if sm.snapshot_exists(t.snapshot.id):
            snap_json = (dst_snap, fio.read_bytes(sm.snapshot_path(t.snapshot.id)))
        else:
            snap_json = (dst_snap, t.snapshot.to_json().encode("utf-8"))
        tag_copy = (table.tag_manager.tag_path(tag), TagManager(fio, table.path, name).tag_path(tag))
    def publish() -> None:
        with deferred():  # SIGINT / SIGTERM wait: never a branch with its schemas but not its snapshot
            for sid in src_schemas.list_ids():
                if sid <= upto:
                    _copy(fio, src_schemas.schema_path(sid), dst_schemas.schema_path(sid))
            if snap_json is not None:
                fio.write_bytes(snap_json[0], snap_json[1], overwrite=True)
            if tag_copy is not None:
                _copy(fio, tag_copy[0], tag_copy[1])

    table.lock.run_with_lock(publish)
    return bm.branch_path(name)


def _walk_files(fio: FileIO, directory: str) -> tuple[list[FileStatus], list[str]]:
    """(files, directories deepest first) under ``directory``."""
    files: list[FileStatus] = []
    dirs: list[str] = []
    stack = [directory]
    while stack:
        d = stack.pop()
        dirs.append(d)
        for s in fio.list_status(d):
            if s.is_dir:
                stack.append(s.path)
            else:
                files.append(s)
    dirs.sort(key=lambda p: -p.count("/"))
    return files, dirs


def plan_delete_branch(table: FileStoreTable, name: str) -> BranchPlan:
    """Every file of the branch directory (metadata only: data files stay shared, as Java)."""
    validate_branch_name(name)
    fio = table.file_io
    bm = BranchManager(fio, table.path)
    if not bm.branch_exists(name):
        have = ", ".join(bm.branch_names()) or "none"
        raise NotFound(f"branch {name!r} not found in {table.identifier}: existing branches: {have}")
    fallback = table.options.get("scan.fallback-branch")
    if fallback and fallback == name:
        raise InvalidInput(
            f"cannot delete branch {name!r}: it is the table's scan.fallback-branch; unset that option first"
        )
    files, _ = _walk_files(fio, bm.branch_path(name))
    plan = BranchPlan(table_path=table.path)
    for s in sorted(files, key=lambda s: s.path):
        plan.changes.append(BranchChange("delete", _kind_of(s.name), s.path, None, s.size))
    return plan


def delete_branch(table: FileStoreTable, name: str, dry_run: bool = False) -> BranchPlan:
    """Java's ``deleteBranch`` (the branch directory goes), file by file in the one deletion
    order, then the empty directories."""
    plan = plan_delete_branch(table, name)
    if dry_run:
        return plan
    fio = table.file_io

    def delete() -> None:
        delete_in_order(fio, plan.changes, lambda c: _PHASES[c.kind])
        _, dirs = _walk_files(fio, BranchManager(fio, table.path).branch_path(name))
        remove_empty_dirs(fio, dirs)

    table.lock.run_with_lock(delete)
    return plan


def _kind_of(name: str) -> str:
    for prefix, kind in (("snapshot-", SNAPSHOT), ("schema-", SCHEMA), ("tag-", TAG),
                         ("consumer-", CONSUMER), ("changelog-", CHANGELOG)):
        if name.startswith(prefix):
            return LABELS[kind]
    if name in ("LATEST", "EARLIEST"):
        return LABELS[SNAPSHOT]
    return LABELS[OTHER]


def plan_fast_forward(table: FileStoreTable, name: str) -> BranchPlan:
    """Java's ``fastForward`` of branch ``name`` into the table's branch (main by default).

    The target loses every snapshot and tag from the branch's earliest snapshot id on and
    every schema from that snapshot's schema id on, then receives copies of the branch's
    snapshots, schemas and tags (a file the copy replaces is overwritten, not deleted first,
    so the target never lacks it). Data files are shared, so only metadata moves. Every tag
    of the target is read first: an unreadable one is a refusal (exit 6), as it could not be
    told whether fast-forward replaces it.
    """
    validate_branch_name(name)
    current = table.branch or MAIN_BRANCH
    if name == current:
        raise InvalidInput(f"cannot fast-forward branch {name!r} into itself")
    fio = table.file_io
    bm = BranchManager(fio, table.path)
    if not bm.branch_exists(name):
        have = ", ".join(bm.branch_names()) or "none"
        raise NotFound(f"branch {name!r} not found in {table.identifier}: existing branches: {have}")
    src_sm = SnapshotManager(fio, table.path, name)
    src_ids = src_sm.snapshot_ids()
    if not src_ids:
        raise InvalidInput(f"cannot fast-forward branch {name!r}: it has no snapshot")
    earliest = src_sm.snapshot(src_ids[0])
    first_id, first_schema = earliest.id, earliest.schema_id
    dst_sm = table.snapshot_manager
    dst_schemas = table.schema_manager
    dst_tags = table.tag_manager
    src_schemas = SchemaManager(fio, table.path, name)
    src_tags = TagManager(fio, table.path, name)
    copies: list[BranchChange] = []
    for sid in src_schemas.list_ids():
        copies.append(BranchChange("copy", "schema", dst_schemas.schema_path(sid), src_schemas.schema_path(sid)))
    for sid in src_ids:
        copies.append(BranchChange("copy", "snapshot", dst_sm.snapshot_path(sid), src_sm.snapshot_path(sid)))
    for tname in src_tags.tag_names():
        copies.append(BranchChange("copy", "tag", dst_tags.tag_path(tname), src_tags.tag_path(tname)))
    overwritten = {c.path for c in copies}
    deletes: list[BranchChange] = []
    for tname, t in GuardedReader(fio, table.path, "fast-forward").tags(dst_tags).items():
        path = dst_tags.tag_path(tname)
        if t.snapshot.id >= first_id and path not in overwritten:
            deletes.append(BranchChange("delete", "tag", path))
    for sid in sorted(dst_sm.snapshot_ids(), reverse=True):
        path = dst_sm.snapshot_path(sid)
        if sid >= first_id and path not in overwritten:
            deletes.append(BranchChange("delete", "snapshot", path))
    for sid in sorted(dst_schemas.list_ids(), reverse=True):
        path = dst_schemas.schema_path(sid)
        if sid >= first_schema and path not in overwritten:
            deletes.append(BranchChange("delete", "schema", path))
    plan = BranchPlan(deletes + copies, table.path)
    for c in plan.changes:
        try:
            c.size = fio.file_size(c.source or c.path)
        except NotFound:
            c.size = None
    return plan


def fast_forward(table: FileStoreTable, name: str, dry_run: bool = False) -> BranchPlan:
    """Apply :func:`plan_fast_forward`: deletions newest first (the target stays a readable
    prefix), then copies oldest first, then the LATEST (and EARLIEST) hints."""
    plan = plan_fast_forward(table, name)
    if dry_run:
        return plan
    table.lock.run_with_lock(lambda: _apply_fast_forward(table, plan))
    try:
        resync_iceberg(table)  # the Iceberg metadata describes the new latest snapshot
    except Exception as e:
        raise PaimonError(f"{table.identifier}: fast-forwarded to branch {name}, but the Iceberg metadata could not "
                          f"be moved ({e}); the next commit rebuilds it") from e
    return plan


def _apply_fast_forward(table: FileStoreTable, plan: BranchPlan) -> None:
    fio = table.file_io
    sm = table.snapshot_manager
    latest_hint = join(sm.snapshot_dir, "LATEST")
    earliest_hint = join(sm.snapshot_dir, "EARLIEST")
    had_earliest = fio.exists(earliest_hint)
    fio.delete(latest_hint)  # as Java: the hint must not name a snapshot about to vanish
    for c in plan.changes:
        if c.action == "delete":
            fio.delete(c.path)
    for c in plan.changes:
        if c.action == "copy":
            assert c.source is not None
            _copy(fio, c.source, c.path)
    ids = sm.snapshot_ids()
    if ids:
        sm.commit_latest_hint(ids[-1])
        if had_earliest:
            sm.commit_earliest_hint(ids[0])
