"""Deleting tags with their files, as Java's TagManager.deleteTag with its TagDeletion.

For each tag: if its snapshot still exists, or another tag sits on the same snapshot, only
the tag file goes. Otherwise its live data files not live in the left neighbour tag or the
nearest right neighbour (earliest snapshot or right tag) go too, then its manifest lists,
manifests, index manifest, index files and statistics file unless a neighbour uses them.
Changelog files are left to changelog expiration (as Java).

Beyond Java's two neighbours, every file another branch (or main, for a branch) references
and every file this branch's long-lived changelogs reference is kept: Java's TagDeletion is
exact for one linear history but breaks a branch created from the deleted tag, whose
snapshots share the tag's data files. Deleting less than Java only leaves orphans.

The tag files go first (no reader trusts them any more), then the files in the one deletion
order of :mod:`.file_deletion`, so a crash leaves only orphans behind.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import InvalidInput, NotFound, UnsafeRefused
from ..io.paths import table_relative
from ..refs.snapshot import ChangelogManager, Snapshot
from ..refs.tags import Tag, validate_tag_name
from ..schema.iceberg_options import iceberg_enabled
from ..utils.rows import Rows
from .file_deletion import (
    DATA_FILE,
    EXTRA_FILE,
    INDEX_FILE,
    INDEX_MANIFEST,
    MANIFEST,
    MANIFEST_LIST,
    STATISTICS,
    TAG,
    DeletionPlanner,
    FilePaths,
    GuardedReader,
    delete_in_order,
    label_phases,
    remove_empty_bucket_dirs,
)
from .live_files import KEY, LIGHT, expire_entries, rows_in
from .used_files import DirLister, Ref, UsedFiles, list_branches, protect_other_branches, protect_refs

if TYPE_CHECKING:
    import pyarrow as pa

    from ..manifest.expire_file_entry import ExpireFileEntry
    from ..table.file_store_table import FileStoreTable

ACTION = "delete the tag"
# what ``tag delete --dry-run`` calls each kind of file
LABELS = {TAG: "tag", DATA_FILE: "data", EXTRA_FILE: "extra", MANIFEST: "manifest", MANIFEST_LIST: "manifest-list",
          INDEX_FILE: "index", INDEX_MANIFEST: "index-manifest", STATISTICS: "statistics"}
_PHASES = label_phases(LABELS)


def sync_iceberg_tags(table: FileStoreTable) -> None:
    """After tags changed, the Iceberg refs follow them (Java's tag callback). The Iceberg room
    loads only for a table that writes Iceberg metadata: tag maintenance runs after every commit."""
    if table.branch is None and iceberg_enabled(table.schema.options):
        from ..iceberg.callback import sync_tags

        sync_tags(table)



@dataclass
class DeletedFile:
    """One file a tag deletion removes (``kind``: tag, data, extra, manifest-list, manifest,
    index-manifest, index, statistics)."""

    tag: str
    kind: str
    path: str
    size: int | None


@dataclass
class TagDeletionPlan:
    """Exactly what deleting ``tags`` removes, in deletion order (tag files, then the rest)."""

    tags: list[str]
    files: list[DeletedFile]
    branches: list[str] | None = None  # branches seen while planning (re-checked before deleting)
    bucket_dirs: list[str] = field(default_factory=list)  # emptied maybe (snapshot.clean-empty-directories)
    table_path: str = ""  # listings show paths relative to it


    @property
    def total_bytes(self) -> int:
        return sum(f.size or 0 for f in self.files)

    def rows(self) -> Rows:
        return Rows(
            ["tag", "kind", "path", "bytes"],
            [{"tag": f.tag, "kind": f.kind, "path": table_relative(f.path, self.table_path), "bytes": f.size}
             for f in self.files],
        )


def _check_names(names: list[str]) -> None:
    if not names:
        raise InvalidInput("no tag name given")
    seen: set[str] = set()
    for n in names:
        validate_tag_name(n)
        if n in seen:
            raise InvalidInput(f"tag {n!r} given twice")
        seen.add(n)


def _check_exist(names: list[str], tags: dict[str, Tag], table: FileStoreTable) -> None:
    for n in names:
        if n not in tags:
            have = ", ".join(sorted(tags)[:10]) or "none"
            raise NotFound(f"tag {n!r} not found in {table.identifier}: existing tags: {have}")


def _neighbours(sid: int, remaining: dict[str, Tag], earliest: Snapshot | None) -> list[Snapshot]:
    """Java's skipped snapshots: the left neighbour tag and the nearest right neighbour
    (the earliest snapshot or the right tag)."""
    lefts = [t.snapshot for t in remaining.values() if t.snapshot.id < sid]
    rights = [t.snapshot for t in remaining.values() if t.snapshot.id > sid]
    out = [max(lefts, key=lambda s: s.id)] if lefts else []
    right = earliest
    if rights:
        right_tag = min(rights, key=lambda s: s.id)
        if right is None or right_tag.id < right.id:
            right = right_tag
    return out + ([right] if right is not None else [])


def _protection(table: FileStoreTable, reader: GuardedReader) -> UsedFiles:
    """Other branches, plus this branch's long-lived changelogs."""
    used = protect_other_branches(reader, table.branch)
    cm = ChangelogManager(table.file_io, table.path, table.branch)
    own: list[tuple[Ref, Snapshot]] = []
    for cid in reader.snapshot_ids(cm):
        snap = reader.snapshot(cm, cid)
        if snap is not None:
            own.append((Ref(table.branch or "main", "changelog", str(cid), cm.snapshot_path(cid)), snap))
    protect_refs(reader, own, used)
    return used


def plan_tag_deletion(table: FileStoreTable, names: list[str], keeping: Snapshot | None = None) -> TagDeletionPlan:
    """What deleting ``names`` one after the other removes (reads only; anything unreadable
    that decides "used" raises UnsafeRefused). ``keeping``: a snapshot that stays referenced
    (a replaced tag's new one), whose files stay too."""
    _check_names(names)
    reader = GuardedReader(table.file_io, table.path, ACTION)
    tm = table.tag_manager
    tags = reader.tags(tm)
    _check_exist(names, tags, table)
    sm = table.snapshot_manager
    reader.snapshot_ids(sm)  # a snapshot the hints or neighbours need is missing: refuse
    earliest = reader.guarded(sm.snapshot_dir, sm.earliest_snapshot)
    planner = DeletionPlanner(reader, FilePaths(table))
    protection: UsedFiles | None = None
    tag_files: list[DeletedFile] = []
    owners: list[tuple[str, int]] = []  # (tag, index of its first planned file)
    remaining = dict(tags)
    for name in sorted(names, key=lambda n: (tags[n].snapshot.id, n)):
        tag = remaining.pop(name)
        size = reader.size(tm.tag_path(name))
        if size is not None:
            tag_files.append(DeletedFile(name, LABELS[TAG], tm.tag_path(name), size))
        sid = tag.snapshot.id
        if sm.snapshot_exists(sid) or any(t.snapshot.id == sid for t in remaining.values()) or (
                keeping is not None and keeping.id == sid):
            continue  # the snapshot (or another tag) still holds every file
        if protection is None:
            protection = _protection(table, reader)
        keep_names = set(protection.names)
        kept = []
        for s in _neighbours(sid, remaining, earliest) + ([keeping] if keeping is not None else []):
            kept.append(reader.live_table(s))
            keep_names |= reader.skipping_names(s)
        owners.append((name, len(planner.files)))
        for e in _freed(reader.live_table(tag.snapshot, LIGHT, ordered=True), kept, protection):
            planner.data_file(e, sid)
        planner.manifests(tag.snapshot, keep_names, sid)
    files = [DeletedFile(owner, LABELS[f.kind], f.path, f.bytes)
             for owner, f in zip(_owner_of(owners, len(planner.files)), planner.files, strict=True)]
    files.sort(key=lambda f: _PHASES[f.kind])
    return TagDeletionPlan(list(names), tag_files + files, None if protection is None else protection.branches,
                           list(planner.bucket_dirs), table.path)


def _freed(live: pa.Table, kept: list[pa.Table], protection: UsedFiles) -> list[ExpireFileEntry]:
    """The tag's live files (in order) that no neighbour lists and no other branch uses."""
    import numpy as np
    import pyarrow as pa

    keys = live.select(list(KEY))
    used = np.zeros(live.num_rows, dtype=bool)
    for k in kept:
        used |= rows_in(keys, k)
    entries = expire_entries(live.filter(pa.array(~used)))
    return [e for e in entries if e.key not in protection.data]


def _owner_of(owners: list[tuple[str, int]], total: int) -> list[str]:
    """The tag each planned file belongs to (``owners``: tag and its first file's index)."""
    out: list[str] = []
    for i, (name, start) in enumerate(owners):
        end = owners[i + 1][1] if i + 1 < len(owners) else total
        out += [name] * (end - start)
    return out


def apply_tag_deletion(table: FileStoreTable, plan: TagDeletionPlan) -> None:
    """Delete the tag files first (no reader trusts them any more), then their files in the
    one deletion order, so a crash leaves only orphans behind."""
    fio = table.file_io
    tag_files = [f for f in plan.files if f.kind == LABELS[TAG]]
    rest = [f for f in plan.files if f.kind != LABELS[TAG]]
    if plan.branches is not None and rest:
        now = list_branches(GuardedReader(fio, table.path, ACTION), DirLister(fio))
        if now != plan.branches:
            raise UnsafeRefused(
                f"branches of {table.identifier} changed while planning the tag deletion "
                f"({', '.join(plan.branches)} -> {', '.join(now)}); nothing was deleted, retry"
            )
    def delete_tag_files() -> None:
        for f in tag_files:
            table.tag_manager.notify_deleted(f.tag)
            fio.delete(f.path)
        sync_iceberg_tags(table)  # the Iceberg refs forget the tags before their files go

    versions = table.catalog_environment.versions
    if versions is None:
        table.lock.run_with_lock(delete_tag_files)
    else:  # the catalog server deletes its tags (REST); the files only they used go as below
        for f in tag_files:
            versions.delete_tag(table.branch, f.tag)
    delete_in_order(fio, rest, lambda f: _PHASES[f.kind])
    if table.options.snapshot_clean_empty_directories:
        remove_empty_bucket_dirs(table, plan.bucket_dirs)
