"""The one file-deletion base of every command that deletes table files (Java's FileDeletionBase).

Expire, changelog expire, tag deletion, rollback, orphan removal and branch deletion share:

* one guarded reader (:class:`GuardedReader`). Whatever decides which files are still used (a
  retained snapshot, tag, changelog, consumer, branch, and their manifest lists, manifests and
  index manifests) is read fail closed: unreadable or corrupt refuses with UnsafeRefused (exit
  6) before anything is deleted. Java treats such a failure as "empty" and deletes used files
  (apache/paimon#7710, #5229, #6479). Only a file of an object being removed may be missing (an
  interrupted run deleted it): what only it named is left as orphans, never deleted wrongly;
* one path rule (:class:`FilePaths`): a recorded ``_EXTERNAL_PATH`` wins, extra files sit
  beside their data file, index files follow ``index-file-in-data-file-dir``;
* one delete order (:data:`DELETE_ORDER`): files before the manifests naming them, manifests
  before their lists, then the referrers (tags, changelogs, snapshots, schemas). A kill between
  any two deletions leaves only files nothing readable needs. An operation either keeps its
  referrers for last (expire: the expired snapshot is the to-do list a re-run finishes) or
  retracts them first (rollback, tag deletion: no reader ever meets a tag or snapshot whose
  files are going); empty bucket and partition directories go at the end.

Each command plans first (what would go: its ``--dry-run`` list, in this order) and then
executes exactly that plan with :func:`delete_in_order`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from ..data.binary_row import deserialize
from ..errors import CorruptMetadata, MissingMetadata, NotFound, NotYetSupported, PaimonError, UnsafeRefused
from ..io import paths
from ..io.fileio import FileIO, join, parent
from ..manifest.expire_file_entry import (
    ExpireFileEntry,
    FileKey,
    read_expire_file_entries,
)
from ..manifest.index_manifest import IndexManifestEntry, IndexManifestFile
from ..manifest.manifest import FileKind, ManifestFileMeta, ManifestList
from ..refs.consumers import ConsumerManager
from ..refs.snapshot import Snapshot, SnapshotManager
from ..refs.tags import Tag, TagManager
from ..utils.workers import map_ordered, worker_pool
from .live_files import KEY, fresh_copy, live_rows

if TYPE_CHECKING:
    import pyarrow as pa

    from ..table.file_store_table import FileStoreTable

T = TypeVar("T")

# -- what a file is, in deletion order -------------------------------------------------------

DATA_FILE = "data-file"
EXTRA_FILE = "extra-file"  # e.g. a data file's ``.index`` file index
CHANGELOG_FILE = "changelog-file"
INDEX_FILE = "index-file"  # hash index, deletion vectors
MANIFEST = "manifest"
MANIFEST_LIST = "manifest-list"
INDEX_MANIFEST = "index-manifest"
STATISTICS = "statistics"
TAG = "tag"
CONSUMER = "consumer"
CHANGELOG = "changelog"  # a long-lived ``changelog/changelog-<id>`` metadata file
SNAPSHOT = "snapshot"
OTHER = "other"  # hints, leftovers of interrupted writes
SCHEMA = "schema"

DELETE_ORDER: tuple[tuple[str, ...], ...] = (
    (DATA_FILE, EXTRA_FILE, CHANGELOG_FILE, INDEX_FILE),  # what manifests and index manifests name
    (MANIFEST,),
    (MANIFEST_LIST, INDEX_MANIFEST),
    (STATISTICS,),
    # referrers: what names the files above (a branch is a directory of these)
    (TAG, CONSUMER),
    (CHANGELOG,),
    (SNAPSHOT,),
    (OTHER,),
    (SCHEMA,),
)
PHASE = {kind: i for i, kinds in enumerate(DELETE_ORDER) for kind in kinds}
REFERRERS = frozenset(k for kinds in DELETE_ORDER[4:] for k in kinds)


def label_phases(labels: dict[str, str]) -> dict[str, int]:
    """Phase of each label of a command's own vocabulary (``labels``: kind -> label)."""
    return {label: PHASE[kind] for kind, label in labels.items()}


@dataclass(frozen=True)
class FileDeletion:
    path: str
    kind: str
    bytes: int
    snapshot_id: int | None  # the snapshot (or changelog) whose removal frees the file

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "bytes": self.bytes, "snapshot_id": self.snapshot_id}


# -- the guarded reader -------------------------------------------------------------------------


class GuardedReader:
    """Reads what decides which files are still used, fail closed (see the module docs).

    Manifest lists, manifests and index manifests are cached by name: neighbouring
    snapshots share most of them. ``action`` names the refused operation in messages.
    """

    REMOTE_THREADS = 16

    def __init__(self, file_io: FileIO, table_path: str, action: str) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.action = action
        self.manifest_dir = paths.manifest_dir(table_path)
        self._list_file = ManifestList(file_io, self.manifest_dir)
        self._index_file = IndexManifestFile(file_io, self.manifest_dir)
        self._lists: dict[str, list[ManifestFileMeta] | None] = {}
        self._manifests: dict[str, list[ExpireFileEntry] | None] = {}
        self._index: dict[str, list[IndexManifestEntry] | None] = {}
        self._sizes: dict[str, int | None] = {}

    def refuse(self, path: str, problem: str) -> UnsafeRefused:
        return UnsafeRefused(
            f"{path}: {problem}; refusing to {self.action} because it decides which files are still used "
            "(nothing was deleted)"
        )

    def guarded(self, path: str, fn: Callable[[], T], missing_ok: bool = False) -> T | None:
        """``fn()``; None if ``path`` is missing and that is ok; any other failure refuses."""
        try:
            return fn()
        except CorruptMetadata as e:
            raise self.refuse(e.path, e.problem) from e
        except (NotFound, MissingMetadata) as e:
            if missing_ok:
                return None
            raise self.refuse(path, "cannot be read (missing)") from e
        except (UnsafeRefused, NotYetSupported):
            raise  # a feature refused by name stays that refusal (exit 1), not "unsafe"
        except PaimonError as e:
            raise self.refuse(path, f"cannot be read ({e})") from e
        except Exception as e:  # noqa: BLE001 - any failure to read must stop deletion
            raise self.refuse(path, f"cannot be read ({type(e).__name__}: {e})") from e

    def read_all(self, fn: Callable[[str], T], names: Sequence[str]) -> list[T]:
        """``[fn(n) for n in names]``, on threads for object stores (each GET waits on the network)."""
        if len(names) <= 1 or self.file_io.is_local:
            return [fn(n) for n in names]
        return map_ordered(fn, names, min(self.REMOTE_THREADS, len(names)), "paimon-file-deletion")

    # -- snapshots, tags, consumers ------------------------------------------------------------

    def snapshot_ids(self, manager: SnapshotManager) -> list[int]:
        """Every id, refusing when a snapshot the hints or neighbours need is missing (what
        only it used would look unused)."""
        return self.guarded(manager.snapshot_dir, manager.check_complete) or []

    def snapshot(self, manager: SnapshotManager, sid: int) -> Snapshot | None:
        """A snapshot or changelog, read and checked by its manager; None if it vanished
        (expired meanwhile)."""
        return self.guarded(manager.snapshot_path(sid), functools.partial(manager.try_snapshot, sid), missing_ok=True)

    def tag(self, tm: TagManager, name: str) -> Tag | None:
        """A tag, read and checked by its manager; None if it vanished (deleted meanwhile)."""
        return self.guarded(tm.tag_path(name), functools.partial(tm.try_tag, name), missing_ok=True)

    def cached_snapshots(self, manager: SnapshotManager) -> Callable[[int], Snapshot | None]:
        """:meth:`snapshot` remembered per id: planning walks a range more than once."""
        cache: dict[int, Snapshot] = {}

        def read(sid: int) -> Snapshot | None:
            s = cache.get(sid)
            if s is None:
                s = self.snapshot(manager, sid)
                if s is not None:
                    cache[sid] = s
            return s

        return read

    def tags(self, tm: TagManager) -> dict[str, Tag]:
        """Every tag by name; a tag deleted while listing is skipped, an unreadable one refuses."""
        out: dict[str, Tag] = {}
        for name in self.guarded(tm.tag_dir, tm.tag_names) or []:
            tag = self.tag(tm, name)
            if tag is not None:
                out[name] = tag
        return out

    def consumers(self, cm: ConsumerManager) -> dict[str, int]:
        out: dict[str, int] = {}
        for cid in self.guarded(cm.consumer_dir, cm.consumer_ids) or []:
            nxt = self.guarded(cm.consumer_path(cid), functools.partial(cm.consumer, cid), missing_ok=True)
            if nxt is not None:
                out[cid] = nxt
        return out

    def consumer_mtimes(self, cm: ConsumerManager) -> dict[str, int | None]:
        """consumer id -> last modified (epoch millis), what ``consumer.expiration-time`` reads."""
        return self.guarded(cm.consumer_dir, cm.consumer_mtimes) or {}

    # -- manifests ----------------------------------------------------------------------------

    def _read(self, cache: dict[str, Any], name: str, read: Callable[[str], Any], missing_ok: bool,
              keep: bool) -> Any:
        path = join(self.manifest_dir, name)
        if name in cache:
            value = cache[name]
        else:
            value = self.guarded(path, lambda: read(name), missing_ok=True)
            if keep:
                cache[name] = value
        if value is None and not missing_ok:
            raise self.refuse(path, "cannot be read (missing)")
        return value

    def manifest_list(self, name: str, missing_ok: bool = False, cache: bool = True) -> list[ManifestFileMeta] | None:
        """A list's manifests; ``cache=False`` for one-pass reads of many (memory stays flat)."""
        return self._read(self._lists, name, self._list_file.read, missing_ok, cache)

    def _read_manifest(self, name: str) -> list[ExpireFileEntry]:
        path = join(self.manifest_dir, name)
        return read_expire_file_entries(self.file_io.read_bytes(path), path)

    def manifest(self, name: str, missing_ok: bool = False, cache: bool = True) -> list[ExpireFileEntry] | None:
        return self._read(self._manifests, name, self._read_manifest, missing_ok, cache)

    def index_manifest(self, name: str, missing_ok: bool = False) -> list[IndexManifestEntry] | None:
        return self._read(self._index, name, self._index_file.read, missing_ok, True)

    def entries_of_lists(self, names: Iterable[str], missing_ok: bool = False) -> list[ExpireFileEntry] | None:
        """Every entry of the manifests of these lists; None if any piece is missing (missing_ok):
        ADDs and DELETEs cancel across manifests, so a partial read would decide wrongly."""
        out: list[ExpireFileEntry] = []
        for ln in names:
            metas = self.manifest_list(ln, missing_ok)
            if metas is None:
                return None
            for m in metas:
                entries = self.manifest(m.file_name, missing_ok)
                if entries is None:
                    return None
                out.extend(entries)
        return out

    def manifest_table(self, name: str, columns: Sequence[str], missing_ok: bool = False) -> pa.Table | None:
        """A manifest's ``columns`` as an Arrow table in fresh buffers (the decoded manifest is
        freed at once); never cached: memory stays flat."""
        from ..manifest.columnar import read_manifest_table

        path = join(self.manifest_dir, name)
        table = self.guarded(path, lambda: read_manifest_table(self.file_io, self.manifest_dir, name, columns),
                             missing_ok=True)
        if table is None and not missing_ok:
            raise self.refuse(path, "cannot be read (missing)")
        return None if table is None else fresh_copy(table)

    def manifest_tables(self, snap: Snapshot, columns: Sequence[str]) -> list[pa.Table]:
        """The ``columns`` of every entry of the snapshot's base and delta manifests."""
        return [self.manifest_table(m.file_name, columns)  # missing refuses: never None
                for ln in (snap.base_manifest_list, snap.delta_manifest_list) for m in self.manifest_list(ln) or []]

    def live_table(self, snap: Snapshot, columns: Sequence[str] = KEY, ordered: bool = False) -> pa.Table:
        """The snapshot's live data files (Java's readMergedDataFiles) as Arrow ``columns``, by
        default their FileKeys; ``ordered`` keeps ``merge_entries``' order (else any order, leaner)."""
        from ..manifest.columnar import IDENTIFIER, merge_live

        read = list(dict.fromkeys(("_KIND", *IDENTIFIER, *columns)))
        if ordered:
            return merge_live(self.manifest_tables(snap, read)).select(list(columns))
        live = live_rows(self.manifest_tables(snap, read), columns)
        if live is None:  # a file added twice without a DELETE between: the exact merge decides
            live = merge_live(self.manifest_tables(snap, read)).select(list(columns))
        return live

    def live_entries(self, snap: Snapshot) -> list[ExpireFileEntry]:
        """The snapshot's live data files as objects (for consumers of a few)."""
        from .live_files import LIGHT, expire_entries

        return expire_entries(self.live_table(snap, LIGHT, ordered=True))

    def live_keys(self, snap: Snapshot) -> set[FileKey]:
        t = self.live_table(snap)
        return set(zip(*(t.column(c).to_pylist() for c in t.column_names), strict=True))

    def skipping_names(self, snap: Snapshot, *, changelog: bool = False, lists_missing_ok: bool = False) -> set[str]:
        """Java's manifestSkippingSet: the snapshot's lists, their manifests, index manifest,
        index files and statistics. ``changelog`` adds the changelog list, if it still exists
        (Java never protects it, so a copy in a branch or tag may be gone)."""
        out: set[str] = set()
        lists = [(snap.base_manifest_list, lists_missing_ok), (snap.delta_manifest_list, lists_missing_ok)]
        if changelog and snap.changelog_manifest_list:
            lists.append((snap.changelog_manifest_list, True))
        for ln, missing_ok in lists:
            metas = self.manifest_list(ln, missing_ok)
            if metas is not None:
                out.add(ln)
                out.update(m.file_name for m in metas)
        if snap.index_manifest:
            out.add(snap.index_manifest)
            out.update(e.index_file.file_name for e in self.index_manifest(snap.index_manifest) or [])
        if snap.statistics:
            out.add(snap.statistics)
        return out

    def size(self, path: str) -> int | None:
        """The file's size; None if it does not exist."""
        if path not in self._sizes:
            try:
                self._sizes[path] = self.file_io.file_size(path)
            except NotFound:
                self._sizes[path] = None
        return self._sizes[path]


# -- the path rule ------------------------------------------------------------------------------


class FilePaths:
    """Where a table's files live (Java's FileStorePathFactory), for every deleter."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table_path = table.path
        self.data_root = table.data_root
        self._schema = table.schema
        self._index_in_bucket = table.options.index_file_in_data_file_dir
        self._partitions: dict[bytes, str] = {}

    def bucket_dir(self, partition: bytes, bucket: int) -> str:
        """The bucket directory under the table's data root (empty-directory cleanup looks only here)."""
        part = self._partitions.get(partition)
        if part is None:
            values = deserialize(partition, self._schema.partition_types) if self._schema.partition_keys else []
            part = paths.partition_path_for(self._schema, values) if values else ""
            self._partitions[partition] = part
        return paths.bucket_path(self.data_root, part, bucket)

    def data_file(self, e: ExpireFileEntry) -> str:
        return e.external_path or join(self.bucket_dir(e.partition, e.bucket), e.file_name)

    def extra_file(self, e: ExpireFileEntry, name: str) -> str:
        """Extra files sit beside their data file, external or not (Java's toAlignedPath)."""
        return join(parent(self.data_file(e)), name)

    def index_file(self, e: IndexManifestEntry) -> str:
        f = e.index_file
        if f.external_path:
            return f.external_path
        if self._index_in_bucket:
            return join(self.bucket_dir(e.partition, e.bucket), f.file_name)
        return join(paths.index_dir(self.table_path), f.file_name)

    def manifest(self, name: str) -> str:
        return join(paths.manifest_dir(self.table_path), name)

    def statistics(self, name: str) -> str:
        return join(paths.statistics_dir(self.table_path), name)


# -- planning -----------------------------------------------------------------------------------


class DeletionPlanner:
    """Collects what one run deletes, each file once, with the shared rules of what a snapshot
    frees (Java's FileDeletionBase planning half)."""

    def __init__(self, reader: GuardedReader, file_paths: FilePaths) -> None:
        self.reader = reader
        self.paths = file_paths
        self.files: list[FileDeletion] = []
        self.bucket_dirs: dict[str, None] = {}  # emptied maybe: candidates for cleanup
        self.notes: list[str] = []
        self._seen: set[str] = set()

    def add(self, path: str, kind: str, size: int | None, owner: int | None) -> None:
        """Plan ``path``; a file of unknown size that does not exist is already gone."""
        if path in self._seen:
            return
        self._seen.add(path)
        if size is None:
            size = self.reader.size(path)
            if size is None:
                return
        self.files.append(FileDeletion(path, kind, int(size), owner))

    def data_file(self, e: ExpireFileEntry, owner: int | None, kind: str = DATA_FILE,
                  used: Collection[str] = ()) -> None:
        """A data or changelog file with its extra files (those ``used`` does not name)."""
        self.bucket_dirs[self.paths.bucket_dir(e.partition, e.bucket)] = None
        self.add(self.paths.data_file(e), kind, e.file_size, owner)
        for x in e.extra_files:
            if x not in used:
                self.add(self.paths.extra_file(e, x), EXTRA_FILE, None, owner)

    def manifest_list(self, name: str, size: int | None, skipping: Collection[str], owner: int | None,
                      cache: bool = True) -> None:
        """A list's manifests, then the list itself, unless ``skipping`` names them; ``cache=False``
        for lists read once (an expiry's base lists: memory stays flat)."""
        metas = self.reader.manifest_list(name, missing_ok=True, cache=cache)
        if metas is None:
            if name not in skipping:
                of = "" if owner is None else f"snapshot {owner}: "
                self.notes.append(f"{of}manifest list {name} is already gone (an interrupted run?); "
                                  "files only it named stay as orphans")
            return
        for m in metas:
            if m.file_name not in skipping:
                self.add(self.paths.manifest(m.file_name), MANIFEST, m.file_size, owner)
        if name not in skipping:
            self.add(self.paths.manifest(name), MANIFEST_LIST, size, owner)

    def index_files(self, snap: Snapshot, skipping: Collection[str], owner: int | None) -> None:
        if not snap.index_manifest:
            return
        entries = self.reader.index_manifest(snap.index_manifest, missing_ok=True)
        if entries is None:
            return  # Java skips a missing index manifest too
        for ie in entries:
            if ie.index_file.file_name not in skipping:
                self.add(self.paths.index_file(ie), INDEX_FILE, ie.index_file.file_size, owner)
        if snap.index_manifest not in skipping:
            self.add(self.paths.manifest(snap.index_manifest), INDEX_MANIFEST, None, owner)

    def manifests(self, snap: Snapshot, skipping: Collection[str], owner: int | None, *,
                  data_lists: bool = True, changelog_list: bool = False, cache: bool = True) -> None:
        """Java's planManifestsCleaner: the snapshot's metadata that ``skipping`` does not name."""
        if data_lists:
            self.manifest_list(snap.base_manifest_list, snap.base_manifest_list_size, skipping, owner, cache)
            self.manifest_list(snap.delta_manifest_list, snap.delta_manifest_list_size, skipping, owner, cache)
        if changelog_list and snap.changelog_manifest_list:
            self.manifest_list(snap.changelog_manifest_list, snap.changelog_manifest_list_size, skipping, owner,
                               cache)
        self.index_files(snap, skipping, owner)
        if snap.statistics and snap.statistics not in skipping:
            self.add(self.paths.statistics(snap.statistics), STATISTICS, None, owner)

    def ordered(self) -> list[FileDeletion]:
        """The planned files in deletion order (stable: planning order inside a phase)."""
        return sorted(self.files, key=lambda f: PHASE[f.kind])


def added_in_changelog(reader: GuardedReader, snap: Snapshot) -> list[ExpireFileEntry] | None:
    """The changelog files a snapshot's changelog list ADDs (Java's planAddedInChangelogManifest);
    None if a manifest is gone."""
    if not snap.changelog_manifest_list:
        return []
    entries = reader.entries_of_lists([snap.changelog_manifest_list], missing_ok=True)
    return None if entries is None else [e for e in entries if e.kind == FileKind.ADD]


def previous_index(snaps: Sequence[Snapshot], target: int, or_equal: bool = False) -> int:
    """Index of the last of ``snaps`` (sorted by id) before ``target``; -1 if none."""
    for i in range(len(snaps) - 1, -1, -1):
        sid = snaps[i].id
        if sid < target or (or_equal and sid == target):
            return i
    return -1


def overlapped(tags: Sequence[Snapshot], begin: int, end_excl: int) -> list[Snapshot]:
    """Java's findOverlappedSnapshots: tags from the last one <= begin up to the last < end."""
    right = previous_index(tags, end_excl)
    if right < 0:
        return []
    left = max(previous_index(tags, begin, or_equal=True), 0)
    return list(tags[left : right + 1])


def beyond_latest(tags: Sequence[Snapshot], latest: int) -> list[Snapshot]:
    """Tags past the latest snapshot (a killed rollback leaves them): they have no place in the
    history, so everything they use is kept."""
    return [t for t in tags if t.id > latest]


# -- doing --------------------------------------------------------------------------------------


class _HasPath(Protocol):
    @property
    def path(self) -> str: ...


F = TypeVar("F", bound=_HasPath)

_PARALLEL_FROM = 64


def delete_in_order(file_io: FileIO, files: Sequence[F], phase: Callable[[F], int],
                    on_delete: Callable[[F], None] | None = None) -> None:
    """Delete ``files`` phase by phase. Inside a phase order does not matter, so large phases
    go in parallel (deletes wait on I/O: 120,000 local unlinks take ~25 s one by one); the first
    failure stops the phase, and a later phase never starts after it. A file already gone
    (an interrupted earlier run) counts as deleted."""
    groups: dict[int, list[F]] = {}
    for f in files:
        groups.setdefault(phase(f), []).append(f)

    def delete(f: F) -> None:
        file_io.delete(f.path)
        if on_delete is not None:
            on_delete(f)

    workers = 8 if file_io.is_local else 16
    for p in sorted(groups):
        group = groups[p]
        if len(group) < _PARALLEL_FROM:
            for f in group:
                delete(f)
            continue
        chunk = max(16, len(group) // (workers * 8))
        parts = [group[i : i + chunk] for i in range(0, len(group), chunk)]
        with worker_pool(workers, "paimon-delete") as pool:
            for fu in [pool.submit(_each, delete, part) for part in parts]:
                fu.result()


def _each(fn: Callable[[F], None], items: Sequence[F]) -> None:
    for item in items:
        fn(item)


def remove_empty_bucket_dirs(table: FileStoreTable, dirs: Iterable[str]) -> list[str]:
    """Java's cleanEmptyDirectories after data files went: emptied bucket directories, then the
    partition directories they leave empty, up to (never including) the table's data root."""
    root = table.data_root
    return remove_empty_dirs(table.file_io, dirs, keep=[table.path, root], climb_below=root)


def remove_empty_dirs(file_io: FileIO, dirs: Iterable[str], *, keep: Collection[str] = (),
                      climb_below: str | None = None) -> list[str]:
    """Remove each of ``dirs`` (deepest first) that is empty, never one in ``keep``; with
    ``climb_below``, then every parent strictly below that root the removals leave empty
    (Java's cleanEmptyDirectories: buckets, then partitions). Object stores have no directories."""
    if not file_io.is_local:
        return []
    kept = {k.rstrip("/") for k in keep}
    root = climb_below.rstrip("/") + "/" if climb_below is not None else None
    removed: list[str] = []
    level = list(dict.fromkeys(d.rstrip("/") for d in dirs))
    while level:
        parents: set[str] = set()
        for d in level:
            if d in kept or not file_io.delete_empty_dir(d):
                continue
            removed.append(d)
            up = parent(d)
            if root is not None and up.startswith(root):
                parents.add(up)
        level = sorted(parents, key=lambda p: (-p.count("/"), p))
    return removed
