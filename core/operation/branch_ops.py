"""Branch operations on a table: create, delete, rename, fast-forward and merge, as Java's BranchManager.

Data files are shared between branches, so only metadata moves. Deleting a branch removes
its directory file by file in the one deletion order of :mod:`.file_deletion` (tags and
consumers, changelogs, snapshots, then schemas: a crash never leaves a branch whose
snapshots or tags lack their schema), then its empty directories.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from ..errors import AlreadyExists, InvalidInput, NotFound, NotYetSupported, PaimonError
from ..iceberg.callback import resync as resync_iceberg
from ..io.fileio import FileIO, FileStatus, join
from ..io.paths import MAIN_BRANCH, data_file_path, partition_dir_of, table_relative
from ..manifest.manifest import FileKind, ManifestEntry
from ..mergetree.commit_message import CommitMessage
from ..refs.branches import BranchManager, validate_branch_name
from ..refs.snapshot import Snapshot, SnapshotManager
from ..refs.tags import TagManager
from ..schema.schema_manager import SchemaManager
from ..table.features import refuse_on_catalog_server
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
from .scan import FileStoreScan

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
    versions = table.catalog_environment.versions
    if versions is not None:  # the catalog server makes the branch (REST: from a tag of main only)
        if table.branch is not None:
            refuse_on_catalog_server(table, "branch create", f"the REST API creates branches from tags of the "
                                     f"main branch only, not of branch {table.branch}")
        if tag is not None:
            table.tag_manager.tag(tag)  # NotFound naming the tag before anything is sent
        versions.create_branch(name, tag)
        return bm.branch_path(name)
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
    versions = table.catalog_environment.versions
    if versions is not None:  # the catalog server deletes the branch directory (REST)
        versions.drop_branch(name)
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
    versions = table.catalog_environment.versions
    if versions is not None:  # the catalog server moves the metadata (REST: into main only)
        if table.branch is not None:
            refuse_on_catalog_server(table, "branch fast-forward", f"the REST API fast-forwards the main branch "
                                     f"only, not branch {table.branch}")
        versions.fast_forward(name)
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


def plan_rename_branch(table: FileStoreTable, name: str, new_name: str) -> BranchPlan:
    """Java 2.x's ``renameBranch``: the branch directory is renamed, nothing else changes.

    As Java: main cannot be renamed, the branch must exist and the new name must not. Unlike
    Java, the ``scan.fallback-branch`` is refused (main's reads would lose it, as ``branch
    delete`` refuses), and so is an object store, where a directory "rename" is a copy file by
    file that readers could see half done (``rename`` of a table refuses it alike).
    """
    validate_branch_name(name)
    validate_branch_name(new_name)
    if name == new_name:
        raise InvalidInput(f"cannot rename branch {name!r} to itself")
    fio = table.file_io
    bm = BranchManager(fio, table.path)
    if not bm.branch_exists(name):
        have = ", ".join(bm.branch_names()) or "none"
        raise NotFound(f"branch {name!r} not found in {table.identifier}: existing branches: {have}")
    if bm.branch_exists(new_name):
        raise AlreadyExists(f"branch {new_name!r} already exists in {table.identifier}")
    fallback = table.options.get("scan.fallback-branch")
    if fallback and fallback == name:
        raise InvalidInput(
            f"cannot rename branch {name!r}: it is the table's scan.fallback-branch; unset that option first"
        )
    if not fio.is_local:
        raise NotYetSupported(f"branch rename on {fio.scheme}://: the branch directory would be copied file by "
                              "file, not renamed (readers could see it half moved); nothing changed")
    return BranchPlan([BranchChange("rename", "branch", bm.branch_path(new_name), bm.branch_path(name))], table.path)


def rename_branch(table: FileStoreTable, name: str, new_name: str, dry_run: bool = False) -> BranchPlan:
    """Apply :func:`plan_rename_branch`: one directory rename, under the catalog's commit lock."""
    plan = plan_rename_branch(table, name, new_name)
    if dry_run:
        return plan
    change = plan.changes[0]
    assert change.source is not None
    src, dst = change.source, change.path

    def rename() -> None:
        with deferred():
            table.file_io.rename_dir(src, dst)

    table.lock.run_with_lock(rename)
    return plan


# --------------------------------------------------------------------------------------
# merge (Java 2.x ``mergeBranch``)
# --------------------------------------------------------------------------------------

MERGE_COLUMNS = ["path", "partition", "bucket", "level", "rows", "bytes"]
# the commit kinds a branch's history may hold for a merge (Java's validateCompleteAppendOnly)
_APPEND_ONLY_KINDS = ("APPEND", "ANALYZE")


@dataclass
class MergePlan:
    """The data files of ``source``'s latest snapshot that ``target``'s lacks (Java's
    ``computeMergeDiff``), committed to ``target`` as one APPEND snapshot."""

    source: str
    target: str
    table_path: str
    data_root: str
    entries: list[ManifestEntry] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)  # each entry's partition, as --partition spells it
    paths: list[str] = field(default_factory=list)  # each entry's data file
    snapshot_id: int | None = None  # set by the merge

    @property
    def rows_added(self) -> int:
        return sum(e.file.row_count for e in self.entries)

    def rows(self) -> Rows:
        return Rows(MERGE_COLUMNS, [
            {"path": table_relative(p, self.table_path), "partition": label, "bucket": e.bucket, "level": e.file.level,
             "rows": e.file.row_count, "bytes": e.file.file_size}
            for e, label, p in zip(self.entries, self.labels, self.paths, strict=True)])


def _check_append_history(sm: SnapshotManager, branch: str) -> None:
    """Java's ``validateCompleteAppendOnly``: snapshot 1 to the latest all exist, each an
    APPEND (or ANALYZE): without lineage metadata, only then is "files the target lacks" the
    source's own additions (a compaction or overwrite would make them rewrites of shared rows)."""
    ids = sm.snapshot_ids()
    if not ids:
        raise InvalidInput(f"cannot merge: branch {branch!r} has no snapshot")
    if ids[0] != 1:
        raise InvalidInput(f"cannot merge: branch {branch!r} does not start at snapshot 1 (earliest is {ids[0]}); "
                           "branch merge requires the complete append-only snapshot history")
    missing = sorted(set(range(1, ids[-1] + 1)) - set(ids))
    if missing:
        raise InvalidInput(f"cannot merge: snapshot {missing[0]} is missing on branch {branch!r}; branch merge "
                           "requires the complete append-only snapshot history")
    for snap in sm.snapshots():
        if snap.commit_kind not in _APPEND_ONLY_KINDS:
            raise InvalidInput(f"cannot merge: snapshot {snap.id} on branch {branch!r} has commit kind "
                               f"{snap.commit_kind}; branch merge requires the complete append-only snapshot history")


def plan_merge_branch(table: FileStoreTable, source: str) -> MergePlan:
    """Java 2.x's ``mergeBranch(source, target)`` into ``table``'s branch (main by default):
    every check Java makes, then the source's live files the target lacks; nothing is written.

    Refused as Java refuses (exit 4): a missing branch or snapshot, the same branch twice, a
    history that is not append-only from snapshot 1, primary keys, data evolution, differing
    row tracking, differing latest fields, or a file whose schema the target lacks or has in
    another version. Also refused, as upstream's documentation says and its code does not
    check: deletion vectors (the source's vectors are not merged, so rows it deleted would come
    back in the target).
    """
    from ..table.file_store_table import FileStoreTable as _Table
    from .partition_spec import partition_label
    from .row_tracking import is_data_evolution, is_row_tracking

    target = table.branch or MAIN_BRANCH
    if not source or not source.strip():
        raise InvalidInput(f"source branch name {source!r} is blank")
    if source != MAIN_BRANCH:
        validate_branch_name(source)
    if source == target:
        raise InvalidInput(f"cannot merge branch {source!r} into itself")
    fio = table.file_io
    bm = BranchManager(fio, table.path)
    if not bm.branch_exists(source):
        have = ", ".join(bm.branch_names()) or "none"
        raise NotFound(f"branch {source!r} not found in {table.identifier}: existing branches: {have}")
    src = _Table.load(fio, table.path, table.identifier, source, table.catalog_environment)
    for t, name in ((src, source), (table, target)):
        if t.snapshot_manager.latest_snapshot_id() is None:
            raise InvalidInput(f"cannot merge branch {source!r} into {target!r}: branch {name!r} has no snapshot")
    for t, name in ((src, source), (table, target)):
        _check_append_history(t.snapshot_manager, name)
    for t, name in ((src, source), (table, target)):
        if t.schema.primary_keys:
            raise InvalidInput(f"branch merge is only supported for append tables, but branch {name!r} has "
                               "primary keys")
        if is_data_evolution(t.options):
            raise InvalidInput(f"branch merge is not supported for data-evolution tables (branch {name!r})")
        if t.options.deletion_vectors_enabled:
            raise InvalidInput(f"branch merge is not supported with deletion vectors (branch {name!r}): the "
                               "source's vectors would not follow its files")
    if is_row_tracking(src.options) != is_row_tracking(table.options):
        raise InvalidInput(f"cannot merge branch {source!r} into {target!r}: row-tracking settings must match "
                           f"(source={is_row_tracking(src.options)}, target={is_row_tracking(table.options)})")
    if src.schema.fields != table.schema.fields:
        raise InvalidInput(f"cannot merge branch {source!r} into {target!r}: schema mismatch (their latest "
                           "schemas have different fields)")
    target_ids = {e.identifier() for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())}
    entries = [e for e in FileStoreScan(src).plan(src.snapshot_manager.latest_snapshot())
               if e.kind == FileKind.ADD and e.identifier() not in target_ids]
    for sid in sorted({e.file.schema_id for e in entries}):
        if not table.schema_manager.schema_exists(sid):
            raise InvalidInput(f"cannot merge branch {source!r} into {target!r}: the target lacks schema {sid}, "
                               "which files of the source were written with")
        if src.schema_manager.schema(sid) != table.schema_manager.schema(sid):
            raise InvalidInput(f"cannot merge branch {source!r} into {target!r}: schema history mismatch for "
                               f"schema {sid}")
    plan = MergePlan(source, target, table.path, table.data_root, entries)
    schema = table.schema
    for e in entries:
        part = partition_dir_of(schema, e.partition)
        plan.paths.append(data_file_path(table.data_root, part, e.bucket, e.file.file_name, e.file.external_path))
        plan.labels.append(partition_label(schema, e.partition))
    return plan


def merge_branch(table: FileStoreTable, source: str, dry_run: bool = False) -> MergePlan:
    """Commit :func:`plan_merge_branch`'s files to the target as one APPEND snapshot (Java's
    ``BranchMergeHandler.commit``): files keep their partition, bucket and bucket count; with
    row tracking their row ids are assigned afresh by the target's commit. The commit checks
    conflicts as Java's ``appendCommitCheckConflict(true)`` does: a file the target gained
    meanwhile, or a changed bucket count, ends it with exit 5 and nothing committed."""
    from .commit import FileStoreCommit

    plan = plan_merge_branch(table, source)
    if dry_run or not plan.entries:
        return plan
    messages: dict[tuple[bytes, int, int], CommitMessage] = {}
    adds: list[ManifestEntry] = []
    for e in plan.entries:
        f = e.file if e.file.first_row_id is None else replace(e.file, first_row_id=None)
        key = (e.partition, e.bucket, e.total_buckets)
        messages.setdefault(key, CommitMessage(e.partition, e.bucket, e.total_buckets)).new_files.append(f)
        adds.append(ManifestEntry(FileKind.ADD, e.partition, e.bucket, e.total_buckets, f))
    commit = FileStoreCommit(table)

    def check(latest: Snapshot | None) -> None:
        commit.conflicts.check(latest, adds, "APPEND")

    snap = commit.commit(list(messages.values()), "APPEND", check_latest=check)
    plan.snapshot_id = None if snap is None else snap.id
    return plan
