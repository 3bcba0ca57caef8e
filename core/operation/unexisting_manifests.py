"""remove-unexisting-manifests: republish the latest snapshot without the data manifests that
no longer exist (Java 1.4+'s ``remove_unexisting_manifests`` procedure,
``RemoveUnexistingManifestsAction``), so a table whose manifest was deleted reads again.

As Java: every data manifest of the latest snapshot (base and delta lists) is checked; when
one is missing, the ones that exist become the new base manifest list (unchanged, in order),
with an empty delta list, the latest snapshot's index manifest, watermark, statistics,
properties and next row id, ``totalRecordCount`` recounted from the kept manifests (ADD rows
minus DELETE rows), commit kind OVERWRITE and commit user ``Repair-table-<uuid>``. The files
the missing manifests added are gone for readers of the new snapshot (older snapshots still
name them). Changelog and index manifests are not checked, as in Java.

Unlike Java, a missing manifest that held DELETE entries (its manifest-list entry counts
them) is refused (exit 6) unless ``force``: without them the files those entries deleted --
compaction inputs, overwritten files -- are live again, rows readers would see a second time
or from stale files. ``force`` does as Java does. Fails closed: a manifest whose existence
cannot be told, or a kept one that cannot be read, stops the run with nothing written.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import pyarrow.compute as pc

from ..errors import NotFound, PaimonError, UnsafeRefused
from ..io.fileio import join
from ..manifest.columnar import iter_manifest_tables
from ..manifest.manifest import FileKind
from ..utils.rows import Rows
from .commit import FileStoreCommit
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestFileMeta
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable

COMMIT_USER_PREFIX = "Repair-table-"  # Java's RemoveUnexistingManifestsAction
PLAN_COLUMNS = ["manifest", "bytes", "added", "deleted", "schema_id"]


@dataclass
class UnexistingManifestsPlan:
    """The data manifests of snapshot ``snapshot_id`` that do not exist."""

    snapshot_id: int | None
    checked: int = 0
    missing: list[ManifestFileMeta] = field(default_factory=list)
    kept: list[ManifestFileMeta] = field(default_factory=list, repr=False)
    total_record_count: int | None = None  # of the kept manifests
    snapshot: int | None = None  # the new snapshot (a real run)

    @property
    def revived(self) -> int:
        """DELETE entries the missing manifests held: files they deleted become live again."""
        return sum(m.num_deleted_files for m in self.missing)

    @property
    def files_lost(self) -> int:
        return sum(m.num_added_files for m in self.missing)

    def rows(self) -> Rows:
        return Rows(PLAN_COLUMNS, [{"manifest": f"manifest/{m.file_name}", "bytes": m.file_size,
                                    "added": m.num_added_files, "deleted": m.num_deleted_files,
                                    "schema_id": m.schema_id} for m in self.missing])


def _plan(table: FileStoreTable, latest: Snapshot, force: bool) -> UnexistingManifestsPlan:
    scan = FileStoreScan(table)
    try:
        metas = scan.data_manifests(latest)
    except PaimonError as e:
        raise UnsafeRefused(f"remove-unexisting-manifests: cannot read the manifest lists of snapshot {latest.id} "
                            f"({e}); nothing changed") from e
    plan = UnexistingManifestsPlan(latest.id, checked=len(metas))
    fio = table.file_io
    manifest_dir = scan.manifest_dir
    for m in metas:
        path = join(manifest_dir, m.file_name)
        try:
            fio.file_size(path)  # not exists(): a permission error must not count as missing
        except NotFound:
            plan.missing.append(m)
            continue
        except Exception as e:
            raise UnsafeRefused(f"remove-unexisting-manifests: cannot tell whether {path} exists ({e}); "
                                "nothing changed") from e
        plan.kept.append(m)
    if not plan.missing:
        return plan
    if plan.revived and not force:
        names = ", ".join(m.file_name for m in plan.missing if m.num_deleted_files)
        raise UnsafeRefused(
            f"remove-unexisting-manifests: the missing manifest(s) {names} of snapshot {latest.id} held "
            f"{plan.revived} DELETE entries: without them the files those entries deleted would be live again "
            "(their rows read twice or from stale files); nothing changed (--force drops them as Java does; "
            "`paimon-cli rollback` to an earlier snapshot may be the better repair)")
    plan.total_record_count = _record_count(table, manifest_dir, plan.kept)
    return plan


def _record_count(table: FileStoreTable, manifest_dir: str, metas: list[ManifestFileMeta]) -> int:
    """Java's ``ManifestEntry.recordCount`` of the kept manifests: ADD rows minus DELETE rows."""
    total = 0
    try:
        for t in iter_manifest_tables(table.file_io, manifest_dir, metas, ["_KIND", "_ROW_COUNT"]):
            rows = t.column("_ROW_COUNT")
            added = pc.sum(pc.if_else(pc.equal(t.column("_KIND"), FileKind.ADD), rows, 0)).as_py() or 0
            deleted = pc.sum(pc.if_else(pc.equal(t.column("_KIND"), FileKind.DELETE), rows, 0)).as_py() or 0
            total += added - deleted
    except PaimonError as e:
        raise UnsafeRefused(f"remove-unexisting-manifests: cannot read a kept manifest ({e}); nothing changed"
                            ) from e
    return total


def plan_remove_unexisting_manifests(table: FileStoreTable, force: bool = False) -> UnexistingManifestsPlan:
    """Check the latest snapshot's data manifests; nothing is written."""
    FileStoreCommit(table)  # refuse, before any I/O, tables whose manifests we cannot write
    latest = table.snapshot_manager.latest_snapshot()
    if latest is None:
        return UnexistingManifestsPlan(None)
    return _plan(table, latest, force)


def remove_unexisting_manifests(table: FileStoreTable, plan: UnexistingManifestsPlan,
                                force: bool = False) -> UnexistingManifestsPlan:
    """Commit the plan: the kept manifests as the new base list (re-planned if another commit
    lands meanwhile). Returns the plan the commit used, with ``snapshot`` set."""
    if not plan.missing:
        return plan
    commit = FileStoreCommit(table, commit_user=f"{COMMIT_USER_PREFIX}{uuid.uuid4()}")
    used: dict[str, Any] = {"plan": plan}

    def rewrite(latest: Snapshot, written: list[str]) -> list[ManifestFileMeta] | None:
        p = used["plan"] if used["plan"].snapshot_id == latest.id else _plan(table, latest, force)
        used["plan"] = p
        return list(p.kept) if p.missing else None

    snap = commit.replace_manifests(rewrite, "OVERWRITE",
                                    total_record_count=lambda: used["plan"].total_record_count)
    done: UnexistingManifestsPlan = used["plan"]
    done.snapshot = None if snap is None else snap.id
    return done
