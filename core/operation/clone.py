"""Clone: the files of a table's latest snapshot copied into another table, committed once.

Java has three spellings of this (Flink ``clone``, its deprecated ``copy_files``, Spark
``copy``). Spark's ``copy`` copies the data and index files of the latest snapshot (optionally
only the partitions a ``where`` selects) and commits them into the target with one OVERWRITE;
this module does the same between any two file systems (each side's ``FileIO``).

Unlike Java, file names are kept: deletion-vector index files name the data files they apply
to, so renamed data files would lose their deletes; and kept names make a re-run after an
interruption idempotent (a file already at the target with the same size is not copied again,
and a target whose live files already are the planned ones is not committed again).
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from ..errors import InvalidInput, NotYetSupported, UnsafeRefused
from ..index.index_paths import index_file_path
from ..io import paths
from ..mergetree.commit_message import CommitMessage
from ..utils.rows import Rows
from ..utils.workers import map_ordered
from .commit import FileStoreCommit
from .scan import FileStoreScan, ScanFilter

if TYPE_CHECKING:
    from ..io.fileio import FileIO
    from ..manifest.index_manifest import IndexFileMeta
    from ..table.file_store_table import FileStoreTable

class HasFileIO(Protocol):
    """Where copied files are read from: a Paimon table, or a Hive table's file system."""

    @property
    def file_io(self) -> FileIO: ...


# what a target that already exists gets (Java's clone_if_exists: true = overwrite)
IF_EXISTS = ("overwrite", "skip")
CLONE_PLAN_COLUMNS = ["source", "target", "action", "kind", "file", "size", "state"]
CLONE_RESULT_COLUMNS = ["source", "target", "action", "files_copied", "files_present", "bytes_copied",
                        "source_snapshot", "snapshot_id"]
# options that say where one table lives; never carried to another (Java strips ``path``)
STRIPPED_OPTIONS = ("path",)
# options a clone may set on its target (Java's ``target_table_conf``): the files are copied as
# they are, so only what changes later maintenance and writes, never how a copied file or the
# table reads (merge engine, keys, buckets, deletion vectors, formats, defaults ...); anything
# not listed is refused
TARGET_TABLE_CONF = frozenset({
    "snapshot.num-retained.min", "snapshot.num-retained.max", "snapshot.time-retained", "snapshot.expire.limit",
    "snapshot.clean-empty-directories",
    "changelog.num-retained.min", "changelog.num-retained.max", "changelog.time-retained",
    "tag.automatic-creation", "tag.creation-period", "tag.creation-delay", "tag.num-retained-max",
    "tag.default-time-retained",
    "partition.expiration-time", "partition.expiration-check-interval", "partition.timestamp-formatter",
    "partition.timestamp-pattern",
    "consumer.expiration-time",
    "num-sorted-run.compaction-trigger", "num-sorted-run.stop-trigger", "compaction.max-size-amplification-percent",
    "compaction.size-ratio", "compaction.min.file-num", "compaction.max.file-num", "full-compaction.delta-commits",
    "write-only", "write-buffer-size", "write-buffer-spillable", "target-file-size", "sort-spill-threshold",
    "manifest.target-file-size", "manifest.merge-min-count", "manifest.full-compaction-threshold-size",
    "dynamic-partition-overwrite",
})
# options that decide how the copied files read; an existing target must agree on them
READ_SEMANTICS = ("merge-engine", "sequence.field", "deletion-vectors.enabled", "bucket-key")


@dataclass(frozen=True)
class CloneFile:
    kind: str  # data | extra | index
    source: str
    target: str
    size: int
    present: bool  # already at the target with the same size: not copied again


@dataclass
class TableClone:
    """What cloning one table does: ``action`` create | overwrite | skip | up-to-date."""

    source: str
    target: str
    action: str
    source_snapshot: int | None = None
    files: list[CloneFile] = field(default_factory=list)
    messages: list[CommitMessage] = field(default_factory=list)
    removed: list[CloneFile] = field(default_factory=list)  # target files the commit takes out
    snapshot_id: int | None = None  # the target snapshot committed by a run
    dry_run: bool = True

    @property
    def copies(self) -> list[CloneFile]:
        return [f for f in self.files if not f.present]

    def plan_rows(self) -> list[dict[str, Any]]:
        base = {"source": self.source, "target": self.target, "action": self.action}
        if not self.files and not self.removed:
            return [{**base, "kind": None, "file": None, "size": None, "state": None}]
        return [{**base, "kind": f.kind, "file": f.target, "size": f.size, "state": "present" if f.present else "copy"}
                for f in self.files] + [{**base, "kind": f.kind, "file": f.target, "size": f.size, "state": "remove"}
                                        for f in self.removed]

    def result_row(self) -> dict[str, Any]:
        copies = self.copies
        return {"source": self.source, "target": self.target, "action": self.action,
                "files_copied": len(copies), "files_present": len(self.files) - len(copies),
                "bytes_copied": sum(f.size for f in copies), "source_snapshot": self.source_snapshot,
                "snapshot_id": self.snapshot_id}


def clone_rows(clones: list[TableClone], dry_run: bool) -> Rows:
    if dry_run:
        return Rows(CLONE_PLAN_COLUMNS, [r for c in clones for r in c.plan_rows()])
    return Rows(CLONE_RESULT_COLUMNS, [c.result_row() for c in clones])


def check_cloneable(source: FileStoreTable) -> None:
    """Refuse what a byte copy cannot carry over faithfully, before anything is written."""
    for key in ("row-tracking.enabled", "data-evolution.enabled"):
        if source.schema.options.get(key, "false").strip().lower() == "true":
            raise NotYetSupported(f"clone of {source.identifier}: {key}=true is not supported (the copied files' "
                                  "row ids would have to be carried into the target's row-id sequence)")


def check_target_table_conf(conf: dict[str, str]) -> dict[str, str]:
    """``--target-table-conf`` with every key on :data:`TARGET_TABLE_CONF`; any other is refused
    by name before anything is read or written."""
    refused = sorted(k for k in conf if k not in TARGET_TABLE_CONF)
    if refused:
        raise UnsafeRefused(f"--target-table-conf {', '.join(refused)}: clone copies the files as they are, so it "
                            "sets only options that do not change how they read (see README: clone); "
                            "`paimon-cli alter` the target after the clone if you mean it")
    return dict(conf)


def check_target_conf_held(target: FileStoreTable, conf: dict[str, str]) -> None:
    """An existing target keeps its schema: it must already hold the requested options."""
    differ = sorted(k for k, v in conf.items() if target.schema.options.get(k) != v)
    if differ:
        raise InvalidInput(f"clone into existing {target.identifier}: --target-table-conf {', '.join(differ)} "
                           f"differs from the target's options; set them with `paimon-cli alter "
                           f"{target.identifier} --set KEY=VALUE`")


def _shape(schema: Any) -> list[tuple[int, str, str]]:
    return [(f.id, f.name, str(f.type)) for f in schema.fields]


def schema_ids(source: FileStoreTable, target: FileStoreTable, used: set[int]) -> dict[int, int]:
    """The target schema each source schema id the copied files were written with maps to:
    the same id when the target holds that schema with the same columns (a clone carries the
    history), the target's latest for the source's latest; anything else is refused."""
    out = {}
    for sid in sorted(used):
        src = source.schema if sid == source.schema.id else source.schema_manager.schema(sid)
        if target.schema_manager.schema_exists(sid) and _shape(target.schema_manager.schema(sid)) == _shape(src):
            out[sid] = sid
        elif sid == source.schema.id:
            out[sid] = target.schema.id
        else:
            raise NotYetSupported(
                f"clone {source.identifier} -> {target.identifier}: live files were written with schema {sid}, "
                f"which the target does not have with the same columns (an existing target keeps its schemas; "
                f"a new one gets the source's history only when its schema ids run 0..latest); clone into a "
                f"new table, or `paimon-cli compact {source.identifier} --full` the source first")
    return out


def check_compatible(source: FileStoreTable, target: FileStoreTable) -> None:
    """An existing target must read the source's files as they are (as Spark copy's check)."""
    s, t = source.schema, target.schema
    problems = []
    if _shape(s) != _shape(t):
        problems.append("columns (ids, names, types)")
    if list(s.partition_keys) != list(t.partition_keys):
        problems.append("partition keys")
    if list(s.primary_keys) != list(t.primary_keys):
        problems.append("primary keys")
    if s.options.get("bucket", "-1") != t.options.get("bucket", "-1"):
        problems.append("bucket")
    for key in READ_SEMANTICS:  # the copied files are read (merged, deletion vectors applied) by these
        if s.options.get(key) != t.options.get(key):
            problems.append(key)
    if problems:
        raise InvalidInput(f"clone {source.identifier} -> {target.identifier}: the existing target differs in "
                           f"{', '.join(problems)}; drop it or choose another target")


def plan_table_clone(source: FileStoreTable, target: FileStoreTable, action: str,
                     selection: Callable[[bytes], bool] | None = None, *, carried_history: bool = False
                     ) -> TableClone:
    """Decide the files to copy and the target commit; reads both tables, writes nothing.
    ``carried_history``: the target has (or, created, will have) every schema of the source
    under the same ids, so files keep their schema ids."""
    clone = TableClone(str(source.identifier), str(target.identifier), action)
    if action == "skip":
        return clone
    snapshot = source.snapshot_manager.latest_snapshot()
    if snapshot is None:
        return clone
    clone.source_snapshot = snapshot.id
    scan = FileStoreScan(source)
    entries = scan.plan(snapshot, ScanFilter(partition=selection))
    index_entries = [e for e in scan.index_entries(snapshot) if selection is None or selection(e.partition)]
    used = {e.file.schema_id for e in entries}
    ids = {i: i for i in used} if carried_history else schema_ids(source, target, used)
    groups: dict[tuple[bytes, int], CommitMessage] = {}
    files: list[CloneFile] = []
    for e in entries:
        f = e.file
        src_dir = paths.partition_dir_of(source.schema, e.partition)
        dst_dir = paths.partition_dir_of(target.schema, e.partition)
        msg = groups.setdefault((e.partition, e.bucket), CommitMessage(e.partition, e.bucket, e.total_buckets))
        msg.new_files.append(replace(f, schema_id=ids[f.schema_id], external_path=None))
        files.append(CloneFile(
            "data", paths.data_file_path(source.data_root, src_dir, e.bucket, f.file_name, f.external_path),
            paths.data_file_path(target.data_root, dst_dir, e.bucket, f.file_name), f.file_size, False))
        for extra in f.extra_files:
            files.append(CloneFile(
                "extra", paths.aligned_path(source.data_root, src_dir, e.bucket, extra, f.external_path),
                paths.aligned_path(target.data_root, dst_dir, e.bucket, extra), -1, False))
    for ie in index_entries:
        meta: IndexFileMeta = replace(ie.index_file, external_path=None)
        msg = groups.setdefault((ie.partition, ie.bucket), CommitMessage(ie.partition, ie.bucket, _buckets(source)))
        msg.new_index_files.append(meta)
        files.append(CloneFile("index", index_file_path(source, ie.partition, ie.bucket, ie.index_file),
                               index_file_path(target, ie.partition, ie.bucket, meta), ie.index_file.file_size, False))
    return finish_plan(source, target, clone, groups, files)


def finish_plan(source: HasFileIO, target: FileStoreTable, clone: TableClone,
                groups: dict[tuple[bytes, int], CommitMessage], files: list[CloneFile]) -> TableClone:
    """The planned copies with what the target already holds, and the commit that makes the
    touched partitions hold exactly them (a Hive clone plans its files and ends here too)."""
    clone.files = map_ordered(lambda f: _with_state(source, target, f), files, _threads(source, target, len(files)),
                              "paimon-clone-stat")
    clone.messages = _against_target(target, groups)
    clone.removed = _removed(target, clone.messages)
    if clone.action == "overwrite" and not clone.messages:
        clone.action = "up-to-date"
    return clone


def _removed(target: FileStoreTable, messages: list[CommitMessage]) -> list[CloneFile]:
    """The target's files the commit takes out of the table (they stay on storage for the
    snapshots that still use them, until expire)."""
    out = []
    for m in messages:
        part = paths.partition_dir_of(target.schema, m.partition)
        for f in m.deleted_files:
            path = paths.data_file_path(target.data_root, part, m.bucket, f.file_name, f.external_path)
            out.append(CloneFile("data", path, path, f.file_size, True))
        for i in m.deleted_index_files:
            path = index_file_path(target, m.partition, m.bucket, i)
            out.append(CloneFile("index", path, path, i.file_size, True))
    return out


def _threads(source: HasFileIO, target: FileStoreTable, n: int) -> int:
    """Object stores answer slowly per request, so copies overlap more there."""
    remote = source.file_io.is_object_store or target.file_io.is_object_store
    return max(1, min(n, 16 if remote else 4))


def _buckets(table: FileStoreTable) -> int:
    return int(table.schema.options.get("bucket", "-1"))


def _with_state(source: HasFileIO, target: FileStoreTable, f: CloneFile) -> CloneFile:
    size = f.size if f.size >= 0 else source.file_io.file_size(f.source)
    present = target.file_io.exists(f.target) and target.file_io.file_size(f.target) == size
    return replace(f, size=size, present=present)


def _against_target(target: FileStoreTable, groups: dict[tuple[bytes, int], CommitMessage]) -> list[CommitMessage]:
    """The commit that makes the touched partitions of the target hold exactly the planned
    files: files already live stay (a re-run adds nothing), the others there are deleted (as
    Java's overwrite of those partitions)."""
    snapshot = target.snapshot_manager.latest_snapshot()
    if snapshot is not None:
        scan = FileStoreScan(target)
        touched = {p for p, _ in groups}
        for e in scan.plan(snapshot, ScanFilter(partition=touched.__contains__)):
            msg = groups.setdefault((e.partition, e.bucket), CommitMessage(e.partition, e.bucket, e.total_buckets))
            # the same name at the same level is the same file; at another level (a compaction
            # upgraded it on one side) it is taken out and added again at the source's level
            kept = [f for f in msg.new_files if (f.file_name, f.level) != (e.file.file_name, e.file.level)]
            if len(kept) == len(msg.new_files):
                msg.deleted_files.append(e.file)
            msg.new_files = kept
        for ie in scan.index_entries(snapshot):
            if ie.partition not in touched:
                continue
            msg = groups.setdefault((ie.partition, ie.bucket), CommitMessage(ie.partition, ie.bucket, _buckets(target)))
            kept_index = [f for f in msg.new_index_files if f.file_name != ie.index_file.file_name]
            if len(kept_index) == len(msg.new_index_files):
                msg.deleted_index_files.append(ie.index_file)
            msg.new_index_files = kept_index
    return [m for m in groups.values() if not m.is_empty()]


def apply_table_clone(source: HasFileIO, target: FileStoreTable, clone: TableClone,
                      progress: Callable[[CloneFile], None] | None = None, parallelism: int | None = None
                      ) -> TableClone:
    """Copy the files not yet at the target, then commit them as one snapshot replacing the
    touched partitions (as Java's ``withOverwrite``); a re-run copies only what is missing."""
    clone.dry_run = False
    if clone.action in ("skip", "up-to-date"):
        return clone
    def one(f: CloneFile) -> None:
        copy_file(source, target, f)
        if progress is not None:
            progress(f)

    copies = clone.copies
    threads = _threads(source, target, len(copies)) if parallelism is None else max(1, parallelism)
    map_ordered(one, copies, threads, "paimon-clone-copy")
    if clone.messages:
        snap = FileStoreCommit(target).commit(clone.messages, "OVERWRITE")
        clone.snapshot_id = None if snap is None else snap.id
    return clone


def copy_file(source: HasFileIO, target: FileStoreTable, f: CloneFile) -> None:
    """A byte copy between two file systems; a partial file left by an interrupted run has
    another size and is overwritten."""
    with source.file_io.open_input(f.source) as src, target.file_io.open_output(f.target) as dst:
        shutil.copyfileobj(src, dst, 8 << 20)
