"""Branches: ``<table>/branch/branch-<name>/`` directories with their own metadata.

Java keeps no branch metadata file. Its ``$branches`` system table derives everything
from the directory tree:

* master (1.x+): columns ``branch_name, create_time``; create time is the modification
  time of the branch directory (``FileIO.getFileStatus(branchPath)``).
* 0.9: ``branch_name, created_from_tag, created_from_snapshot, create_time``; the two
  ``created_from`` columns are inferred from the branch's own tags and earliest snapshot
  (see :meth:`BranchManager.branch_origin`).

Object stores have no directory mtime, so we fall back to the oldest schema file in the
branch (written when the branch was created).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import AlreadyExists, InvalidInput, NotFound, UnsafeRefused
from ..io.fileio import FileIO, join
from ..io.paths import BRANCH_PREFIX, MAIN_BRANCH, branch_dir, branch_path, check_name_length
from ..utils.interrupt import deferred

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable


def validate_branch_name(name: str) -> None:
    """Java's rules (not ``main``, not blank, not all digits) plus path safety."""
    if name is None or not name.strip():
        raise InvalidInput(f"branch name {name!r} is blank")
    check_name_length("branch", name)
    if name == MAIN_BRANCH:
        raise InvalidInput("branch name 'main' is the default branch and cannot be used")
    if name.isdigit() and name.isascii():
        raise InvalidInput(f"branch name cannot be a pure numeric string but is {name!r}")
    if "/" in name or "\\" in name or any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise InvalidInput(f"branch name {name!r} must not contain '/', '\\' or control characters")


class BranchManager:
    def __init__(self, file_io: FileIO, table_path: str) -> None:
        self.file_io = file_io
        self.table_path = table_path

    @property
    def branch_dir(self) -> str:
        return branch_dir(self.table_path)

    def branch_path(self, name: str) -> str:
        return branch_path(self.table_path, name)

    def branch_names(self) -> list[str]:
        return sorted(
            s.name[len(BRANCH_PREFIX) :]
            for s in self.file_io.list_status(self.branch_dir)
            if s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > len(BRANCH_PREFIX)
        )

    def branches(self) -> list[tuple[str, int]]:
        """(name, create time in epoch millis) sorted by name."""
        out = []
        for s in self.file_io.list_status(self.branch_dir):
            if not (s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > len(BRANCH_PREFIX)):
                continue
            name = s.name[len(BRANCH_PREFIX) :]
            mtime = s.mtime_millis
            if not mtime:
                mtime = self._schema_mtime(name)
            out.append((name, mtime or 0))
        out.sort()
        return out

    def create_time_millis(self, name: str) -> int | None:
        for n, t in self.branches():
            if n == name:
                return t
        return None

    def _schema_mtime(self, name: str) -> int | None:
        times = [
            s.mtime_millis
            for s in self.file_io.list_status(join(self.branch_path(name), "schema"))
            if s.name.startswith("schema-") and s.mtime_millis
        ]
        return min(times) if times else None  # type: ignore[type-var]

    def branch_exists(self, name: str) -> bool:
        if not name or name == MAIN_BRANCH or "/" in name:
            return name == MAIN_BRANCH
        return self.file_io.exists(self.branch_path(name))

    def branch_origin(self, name: str) -> tuple[str | None, int | None]:
        """(created_from_tag, created_from_snapshot) inferred as Java 0.9's ``$branches`` does.

        Only branches with a schema get values. With no tags the snapshot is the branch's
        earliest snapshot id. If the first tag (lowest snapshot id) sits on the earliest
        snapshot, the branch was created from that tag. Java asserts one tag per snapshot
        there; we take the first name instead of failing.
        """
        from .snapshot import SnapshotManager
        from .tags import TagManager

        schema_dir = join(self.branch_path(name), "schema")
        if not any(n.startswith("schema-") for n in self.file_io.list_names(schema_dir)):
            return None, None
        earliest = SnapshotManager(self.file_io, self.table_path, name).earliest_snapshot_id()
        tags = TagManager(self.file_io, self.table_path, name).tags()
        if tags and tags[0].snapshot.id == earliest:
            return tags[0].name, earliest
        return None, earliest


# ---------------------------------------------------------------------------------------
# Table-level branch operations: create / delete / fast-forward
# ---------------------------------------------------------------------------------------


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

    def rows(self) -> Any:
        from ..utils.rows import Rows

        return Rows(
            ["action", "kind", "path", "source", "bytes"],
            [{"action": c.action, "kind": c.kind, "path": c.path, "source": c.source, "bytes": c.size}
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
    from ..schema.schema_manager import SchemaManager
    from .snapshot import SnapshotManager
    from .tags import TagManager

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
    with deferred():  # SIGINT / SIGTERM wait: never a branch with its schemas but not its snapshot
        for sid in src_schemas.list_ids():
            if sid <= upto:
                _copy(fio, src_schemas.schema_path(sid), dst_schemas.schema_path(sid))
        if snap_json is not None:
            fio.write_bytes(snap_json[0], snap_json[1], overwrite=True)
        if tag_copy is not None:
            _copy(fio, tag_copy[0], tag_copy[1])
    return bm.branch_path(name)


def _walk_files(fio: FileIO, directory: str) -> tuple[list[Any], list[str]]:
    """(files, directories deepest first) under ``directory``."""
    files: list[Any] = []
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
    plan = BranchPlan()
    for s in sorted(files, key=lambda s: s.path):
        plan.changes.append(BranchChange("delete", _kind_of(s.name), s.path, None, s.size))
    return plan


def delete_branch(table: FileStoreTable, name: str, dry_run: bool = False) -> BranchPlan:
    """Java's ``deleteBranch`` (the branch directory goes), file by file, then the empty
    directories: tags first, schemas last, so a crash never leaves a branch whose snapshots
    or tags lack their schema."""
    plan = plan_delete_branch(table, name)
    if dry_run:
        return plan
    fio = table.file_io
    order = {"tag": 0, "consumer": 0, "changelog": 1, "snapshot": 2, "other": 3, "schema": 4}
    for c in sorted(plan.changes, key=lambda c: order.get(c.kind, 3)):
        fio.delete(c.path)
    path = BranchManager(fio, table.path).branch_path(name)
    _, dirs = _walk_files(fio, path)
    for d in dirs:
        fio.delete_empty_dir(d)
    if fio.exists(path) and fio.is_local and not fio.list_status(path):
        fio.delete_empty_dir(path)
    return plan


def _kind_of(name: str) -> str:
    for prefix, kind in (("snapshot-", "snapshot"), ("schema-", "schema"), ("tag-", "tag"),
                         ("consumer-", "consumer"), ("changelog-", "changelog")):
        if name.startswith(prefix):
            return kind
    if name in ("LATEST", "EARLIEST"):
        return "snapshot"
    return "other"


def plan_fast_forward(table: FileStoreTable, name: str) -> BranchPlan:
    """Java's ``fastForward`` of branch ``name`` into the table's branch (main by default).

    The target loses every snapshot and tag from the branch's earliest snapshot id on and
    every schema from that snapshot's schema id on, then receives copies of the branch's
    snapshots, schemas and tags (a file the copy replaces is overwritten, not deleted first,
    so the target never lacks it). Data files are shared, so only metadata moves. Every tag
    of the target is read first: an unreadable one is a refusal (exit 6), as it could not be
    told whether fast-forward replaces it.
    """
    from ..schema.schema_manager import SchemaManager
    from .snapshot import SnapshotManager
    from .tags import TagManager

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
    for tname in dst_tags.tag_names():
        path = dst_tags.tag_path(tname)
        try:
            t = dst_tags.try_tag(tname)
        except Exception as e:  # noqa: BLE001
            raise UnsafeRefused(
                f"cannot read tag file {path} ({' '.join(str(e).split())}); nothing was changed"
            ) from e
        if t is not None and t.snapshot.id >= first_id and path not in overwritten:
            deletes.append(BranchChange("delete", "tag", path))
    for sid in sorted(dst_sm.snapshot_ids(), reverse=True):
        path = dst_sm.snapshot_path(sid)
        if sid >= first_id and path not in overwritten:
            deletes.append(BranchChange("delete", "snapshot", path))
    for sid in sorted(dst_schemas.list_ids(), reverse=True):
        path = dst_schemas.schema_path(sid)
        if sid >= first_schema and path not in overwritten:
            deletes.append(BranchChange("delete", "schema", path))
    plan = BranchPlan(deletes + copies)
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
    return plan
