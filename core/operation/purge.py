"""purge-files: Java 1.1+'s ``FileStoreTable.purgeFiles()``, built from the operations that exist.

Java drops every branch, deletes every tag (with the files only it used) and every consumer,
truncates the table (one OVERWRITE snapshot deleting every data file and index entry),
deletes the ``changelog/`` directory, expires snapshots keeping exactly one, then removes
orphan files as of now. The schema and the last (empty) snapshot remain, so Java and
pypaimon read an empty table and write to it again.

Differences, towards failing closed:

* :func:`plan_purge` reads everything the later steps depend on first (every branch, tag,
  consumer, snapshot, changelog and their manifests, as orphan removal reads them), so an
  unreadable file refuses (exit 6) before anything changes; its file list is what a run
  deletes (the steps re-plan on the state they meet and delete exactly that);
* only the main branch is purged: Java on a branch table drops that branch's own directory
  first and then commits into it.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import NotYetSupported
from ..io.paths import table_relative
from ..manifest.manifest import ManifestEntry, ManifestFile, ManifestFileMeta
from ..refs.branches import BranchManager
from ..refs.snapshot import ChangelogManager
from ..utils.rows import Rows
from . import branch_ops, tag_ops
from .commit import FileStoreCommit
from .expire import apply_expire, plan_expire
from .expire_plan import INT_MAX, ExpirePolicy
from .external_roots import configured_roots
from .file_deletion import CHANGELOG, PHASE, FileDeletion, FilePaths, GuardedReader, delete_in_order
from .manifest_merge import ManifestFileMerger
from .orphans import plan_remove_orphans, remove_orphans, scan_candidates
from .used_files import DirLister

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

ACTION = "purge files"
FILE_COLUMNS = ["path", "kind", "bytes"]
RESULT_COLUMNS = ["snapshot_id", "branches", "tags", "consumers", "files", "bytes", "seconds"]
# expiry as purgeFiles configures it: one snapshot, no time retention, no limit, changelogs coupled
_EXPIRE_OPTIONS = {"changelog.num-retained.max": "1", "changelog.num-retained.min": "1",
                   "changelog.time-retained": "0 ms"}


@dataclass
class PurgePlan:
    """What a purge removes: the refs by name, and every file with its size (deletion order)."""

    table_path: str
    branches: list[str]
    tags: list[str]
    consumers: list[str]
    live_files: int  # data files the truncate drops
    live_rows: int
    latest_id: int | None
    files: list[FileDeletion] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)  # old metadata the truncate snapshot still names

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def rows(self) -> Rows:
        return Rows(FILE_COLUMNS, [{"path": table_relative(f.path, self.table_path), "kind": f.kind,
                                    "bytes": f.bytes} for f in self.files])

    def describe(self) -> str:
        refs = [f"{len(self.branches)} branches", f"{len(self.tags)} tags", f"{len(self.consumers)} consumers"]
        return (f"would drop {', '.join(refs)}; truncate {self.live_files} data files ({self.live_rows} rows); "
                f"delete {len(self.files)} files, {self.total_bytes} bytes (dry run)")


@dataclass
class PurgeResult:
    plan: PurgePlan
    snapshot_id: int
    deleted: dict[str, int] = field(default_factory=dict)  # path -> bytes
    seconds: float = 0.0

    def rows(self) -> Rows:
        return Rows(RESULT_COLUMNS, [{
            "snapshot_id": self.snapshot_id, "branches": len(self.plan.branches), "tags": len(self.plan.tags),
            "consumers": len(self.plan.consumers), "files": len(self.deleted), "bytes": sum(self.deleted.values()),
            "seconds": round(self.seconds, 3),
        }])


# ---------------------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------------------


def plan_purge(table: FileStoreTable) -> PurgePlan:
    """Decide what a purge removes (reads only; anything unreadable it depends on refuses)."""
    if table.branch is not None:
        raise NotYetSupported(f"purge-files on branch {table.branch!r}: only a whole table (its main branch) can "
                              "be purged; delete the branch with `branch delete` instead")
    fio = table.file_io
    reader = GuardedReader(fio, table.path, ACTION)
    now = int(time.time() * 1000)
    # every branch, tag, snapshot, changelog and manifest read fail closed, as orphan removal reads them
    plan_remove_orphans(table, "0 ms", force=True, now_millis=now)
    _check_latest_schema(table, reader)
    bm = BranchManager(fio, table.path)
    branches = reader.guarded(bm.branch_dir, bm.branch_names) or []
    tags = reader.tags(table.tag_manager)
    consumers = reader.consumers(table.consumer_manager)
    sm = table.snapshot_manager
    snap_ids = reader.snapshot_ids(sm)
    latest = reader.snapshot(sm, snap_ids[-1]) if snap_ids else None
    commit = FileStoreCommit(table)
    live = commit.live.data(latest, None) if latest is not None else []
    plan = PurgePlan(table.path, branches, sorted(tags), sorted(consumers), len(live),
                     sum(e.file.row_count for e in live), latest.id if latest is not None else None)
    if latest is not None and (latest.total_record_count or 0) > plan.live_rows:
        # the truncate snapshot would report the difference as records while listing no file
        raise reader.refuse(sm.snapshot_path(latest.id), f"reports {latest.total_record_count} records but its "
                            f"live data files hold {plan.live_rows}")
    planned: dict[str, FileDeletion] = {}

    def add(path: str, kind: str, size: int) -> None:
        planned.setdefault(path, FileDeletion(path, kind, size, None))

    for name in branches:
        for c in branch_ops.plan_delete_branch(table, name).changes:
            add(c.path, "branch-file", c.size or 0)
    for name in plan.tags:
        add(table.tag_manager.tag_path(name), "tag", reader.size(table.tag_manager.tag_path(name)) or 0)
    for cid in plan.consumers:
        add(table.consumer_manager.consumer_path(cid), "consumer", reader.size(table.consumer_manager.consumer_path(cid)) or 0)
    cm = ChangelogManager(fio, table.path, table.branch)
    for s in DirLister(fio).list(cm.snapshot_dir):
        if not s.is_dir:
            add(s.path, "long-lived-changelog", s.size)
    for sid in snap_ids:
        add(sm.snapshot_path(sid), "snapshot", reader.size(sm.snapshot_path(sid)) or 0)
    plan.kept = _kept_by_truncate(table, commit, reader, latest)
    kept = set(plan.kept)
    for f in scan_candidates(table, now + 1):
        if f.path.rsplit("/", 1)[-1] not in kept:
            add(f.path, f.kind, f.size)
    for path, size in _external_files(table, reader, snap_ids, tags.values()).items():
        add(path, "external", size)
    plan.files = sorted(planned.values(), key=lambda f: (_order(f.kind), f.path))
    return plan


def _check_latest_schema(table: FileStoreTable, reader: GuardedReader) -> None:
    """The truncate snapshot names the latest schema: a schema file that says another id
    would leave the table unreadable."""
    sm = table.schema_manager
    ids = reader.guarded(sm.schema_dir, sm.list_ids) or []
    latest = reader.guarded(sm.schema_dir, sm.latest)
    if ids and (latest is None or latest.id != ids[-1]):
        raise reader.refuse(sm.schema_path(ids[-1]), f"says schema id {getattr(latest, 'id', None)}")


_REFS_FIRST = {"branch-file": 0, "tag": 1, "consumer": 1, "long-lived-changelog": 2}


def _order(kind: str) -> int:
    """Branches, tags and consumers, the changelog directory, then what expiry and orphan removal delete."""
    return _REFS_FIRST.get(kind, 3)


def _kept_by_truncate(table: FileStoreTable, commit: FileStoreCommit, reader: GuardedReader,
                      latest: Any) -> list[str]:
    """Old metadata the truncate snapshot still names: the previous manifests its base list
    keeps (the commit's own merge, run without writing), the inherited statistics file, and
    the index manifest when there is no index entry to delete."""
    if latest is None:
        return []
    merger = ManifestFileMerger(_PlannedManifests(table.file_io, commit.manifest_dir, commit.partition_type), commit.manifest_dir, commit.options,
                                commit.partition_types, lambda _p: None)
    old = (reader.manifest_list(latest.base_manifest_list) or []) + (reader.manifest_list(latest.delta_manifest_list) or [])
    schema_id = table.schema.id
    names = {m.file_name for m in old}
    kept = [m.file_name for m in reader.guarded(commit.manifest_dir, lambda: merger.merge(old, [], schema_id)) or []
            if m.file_name in names]
    stats = reader.guarded(commit.manifest_dir, lambda: commit._inherited_statistics(latest, schema_id))
    if stats:
        kept.append(stats)
    if latest.index_manifest and not commit.live.index(latest):
        kept.append(latest.index_manifest)
    return kept


class _PlannedManifests(ManifestFile):
    """The commit's manifest file, reading for real and writing nothing (a planned merge)."""

    def write(self, entries: list[ManifestEntry], schema_id: int) -> ManifestFileMeta:
        return self.meta_of("(new)", 0, entries, schema_id)


def _external_files(table: FileStoreTable, reader: GuardedReader, snap_ids: list[int], tags: Any) -> dict[str, int]:
    """Files outside the table directory that truncate + expiry (or tag deletion) delete: the
    data, changelog, extra and index files of every snapshot and tag with a recorded external
    path. Orphan removal never looks there (as Java), so nothing else there goes."""
    opts = table.schema.options
    if not (configured_roots(opts) or opts.get("global-index.external-path")):
        return {}
    fp = FilePaths(table)
    out: dict[str, int] = {}
    snaps = [s for s in (reader.snapshot(table.snapshot_manager, i) for i in snap_ids) if s is not None]
    for s, is_snapshot in [*((s, True) for s in snaps), *((t.snapshot, False) for t in tags)]:
        entries = list(reader.live_entries(s))
        if is_snapshot and s.changelog_manifest_list:
            entries += reader.entries_of_lists([s.changelog_manifest_list], missing_ok=True) or []
        for e in entries:
            if e.external_path:
                out[fp.data_file(e)] = e.file_size
                for x in e.extra_files:
                    p = fp.extra_file(e, x)
                    out[p] = reader.size(p) or 0
        for ie in (reader.index_manifest(s.index_manifest, missing_ok=True) or []) if s.index_manifest else []:
            if ie.index_file.external_path:
                out[ie.index_file.external_path] = ie.index_file.file_size
    return {p: n for p, n in out.items() if reader.size(p) is not None}


# ---------------------------------------------------------------------------------------
# purge
# ---------------------------------------------------------------------------------------


def purge(table: FileStoreTable, plan: PurgePlan) -> PurgeResult:
    """Java's purgeFiles steps, each through its existing operation; returns what went."""
    started = time.monotonic()
    fio = table.file_io
    deleted: dict[str, int] = {}
    for name in plan.branches:
        for c in branch_ops.delete_branch(table, name).changes:
            deleted[c.path] = c.size or 0
    if plan.tags:
        for t in tag_ops.delete_tags(table, plan.tags).files:
            deleted[t.path] = t.size or 0
    cons = table.consumer_manager
    for cid in plan.consumers:
        size = fio.file_size(cons.consumer_path(cid))
        cons.delete_consumer(cid)
        deleted[cons.consumer_path(cid)] = size
    snap = FileStoreCommit(table).truncate()
    cm = ChangelogManager(fio, table.path, table.branch)
    changelog = [FileDeletion(s.path, CHANGELOG, s.size, None) for s in fio.list_status(cm.snapshot_dir) if not s.is_dir]
    delete_in_order(fio, changelog, lambda f: PHASE[f.kind], lambda f: deleted.__setitem__(f.path, f.bytes))
    fio.delete_empty_dir(cm.snapshot_dir)
    policy = ExpirePolicy(retain_max=1, retain_min=1, older_than_millis=snap.time_millis + 1, max_deletes=INT_MAX)
    expired = apply_expire(table, plan_expire(table, policy, _EXPIRE_OPTIONS))
    for f in (expired.plan.files if expired.plan is not None else []):
        deleted[f.path] = f.bytes
    orphans = remove_orphans(table, plan_remove_orphans(table, "0 ms", force=True))
    for o in orphans.deleted:
        deleted[o.path] = o.size
    return PurgeResult(plan, snap.id, deleted, time.monotonic() - started)

