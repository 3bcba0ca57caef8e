"""Every file name a table still needs, across all branches, snapshots, tags and changelogs.

Orphan removal and rollback delete what is *not* in this set, so the set must never be too
small. Java's collector treats an unreadable file as "empty" (apache/paimon#7710: a
concurrent expire emptied the set and every data file older than a day was deleted;
#5229 / #6479: an unreadable tag's files were deleted). Here any snapshot, tag, changelog,
consumer, branch, manifest list, manifest or index manifest that cannot be read or parsed
raises :class:`UnsafeRefused` naming the file. The one tolerated gap is a file whose every
referrer has itself disappeared meanwhile (a concurrent expire or rollback removed it), and
the latest snapshot of each branch must always be read in full.

Names are collected, not paths, exactly as Java does: data file names are unique UUIDs, and
a name match anywhere keeps the file, which errs on the side of keeping.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from ..errors import CorruptMetadata, NotFound, PaimonError, UnsafeRefused
from ..io.fileio import FileIO, FileStatus, join
from ..io.paths import BRANCH_PREFIX, MAIN_BRANCH, branch_dir, branch_path, check_file_name, manifest_dir
from ..utils.workers import map_ordered

_SNAPSHOT_RE = re.compile(r"snapshot-(\d+)")
_CHANGELOG_RE = re.compile(r"changelog-(\d+)")
_TAG_PREFIX = "tag-"
_CONSUMER_PREFIX = "consumer-"
_REMOTE_THREADS = 16


@dataclass(frozen=True)
class Ref:
    """One metadata object that pins files: a snapshot, tag or long-lived changelog of a branch."""

    branch: str  # "main" or the branch name
    kind: str  # "snapshot" | "tag" | "changelog"
    key: str  # snapshot/changelog id as text, or the tag name
    path: str

    def __str__(self) -> str:
        where = "" if self.branch == MAIN_BRANCH else f" of branch {self.branch}"
        return f"{self.kind} {self.key}{where}"


@dataclass
class UsedFiles:
    """The used names plus what was read to get them (for reports and the pre-delete re-check)."""

    names: set[str] = field(default_factory=set)
    refs: list[Ref] = field(default_factory=list)
    # manifest lists / manifests / index manifests whose content is already in ``names``
    read_lists: set[str] = field(default_factory=set)
    read_manifests: set[str] = field(default_factory=set)
    read_index_manifests: set[str] = field(default_factory=set)
    branches: list[str] = field(default_factory=list)
    latest_ids: dict[str, int | None] = field(default_factory=dict)
    vanished: list[str] = field(default_factory=list)  # referrers that disappeared while reading

    @property
    def has_metadata(self) -> bool:
        return bool(self.refs)


class DirLister:
    """Lists each directory at most once per operation (and counts listings for the bench)."""

    def __init__(self, file_io: FileIO) -> None:
        self.file_io = file_io
        self._cache: dict[str, list[FileStatus]] = {}
        self.listings = 0

    def list(self, directory: str) -> list[FileStatus]:
        key = directory.rstrip("/")
        got = self._cache.get(key)
        if got is None:
            try:
                got = self.file_io.list_status(key)
            except PaimonError:
                raise
            except Exception as e:  # noqa: BLE001 - a listing error must not read as "empty"
                raise UnsafeRefused(f"{key}: cannot list directory ({type(e).__name__}: {e}); refusing") from e
            self.listings += 1
            self._cache[key] = got
        return got

    @property
    def distinct(self) -> int:
        """Directories listed (equals ``listings`` unless a race forced a re-list)."""
        return len(self._cache)

    def forget(self, directory: str) -> None:
        self._cache.pop(directory.rstrip("/"), None)


def _refuse(path: str, problem: str) -> UnsafeRefused:
    return UnsafeRefused(
        f"{path}: {problem}; refusing to delete anything because the files it references "
        "could be taken for unused"
    )


def list_branches(file_io: FileIO, table_path: str, lister: DirLister | None = None) -> list[str]:
    """``main`` plus every ``branch/branch-<name>`` directory; a branch without a schema is
    refused, as Java's validBranches does (its files cannot be told apart from orphans)."""
    lister = lister or DirLister(file_io)
    names = sorted(
        s.name[len(BRANCH_PREFIX) :]
        for s in lister.list(branch_dir(table_path))
        if s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > len(BRANCH_PREFIX)
    )
    for name in names:
        schema_dir = join(branch_path(table_path, name), "schema")
        if not any(s.name.startswith("schema-") and not s.is_dir for s in lister.list(schema_dir)):
            raise _refuse(branch_path(table_path, name), "branch has no schema (Java refuses too)")
    return [MAIN_BRANCH, *names]


# ---------------------------------------------------------------------------------------
# reading snapshots, tags, changelogs
# ---------------------------------------------------------------------------------------


def _read_ref(read: Callable[..., Any], *args: Any) -> Any:
    """A snapshot, tag or changelog read (and checked) by its branch's manager, ``read(*args)``;
    None if the file is gone; unparsable or inconsistent -> UnsafeRefused."""
    try:
        return read(*args)
    except CorruptMetadata as e:
        raise _refuse(e.path, e.problem) from e


def _hint(file_io: FileIO, directory: str, name: str) -> int | None:
    try:
        text = file_io.read_bytes(join(directory, name)).decode("utf-8", errors="replace").strip()
    except NotFound:
        return None
    return int(text) if re.fullmatch(r"\d+", text) else None


def branch_refs(
    file_io: FileIO,
    table_path: str,
    branch: str,
    lister: DirLister,
    skip: Callable[[Ref], bool] | None = None,
    used: UsedFiles | None = None,
) -> list[tuple[Ref, Any]]:
    """(ref, snapshot) for every readable snapshot, tag and changelog of one branch.

    The latest snapshot must be readable: if the listed maximum vanished (rolled back or a
    listing raced a commit) the directory is listed again, up to three times, before refusing.
    Older snapshots that vanish were expired meanwhile and are skipped.
    """
    from ..refs.snapshot import ChangelogManager, SnapshotManager
    from ..refs.tags import TagManager

    br = None if branch == MAIN_BRANCH else branch
    root = branch_path(table_path, br)
    sm, cm, tm = (SnapshotManager(file_io, table_path, br), ChangelogManager(file_io, table_path, br),
                  TagManager(file_io, table_path, br))
    out: list[tuple[Ref, Any]] = []

    def keep(ref: Ref) -> bool:
        return skip is None or not skip(ref)

    # snapshots
    snap_dir = join(root, "snapshot")
    latest_id: int | None = None
    for attempt in range(3):
        ids = sorted(
            int(m.group(1))
            for s in lister.list(snap_dir)
            if not s.is_dir and (m := _SNAPSHOT_RE.fullmatch(s.name))
        )
        hint = _hint(file_io, snap_dir, "LATEST")
        if hint is not None and (not ids or hint > ids[-1]) and file_io.exists(join(snap_dir, f"snapshot-{hint}")):
            ids.append(hint)  # committed after the listing
        got: list[tuple[Ref, Any]] = []
        latest_ok = True
        for i, sid in enumerate(reversed(ids)):
            path = join(snap_dir, f"snapshot-{sid}")
            ref = Ref(branch, "snapshot", str(sid), path)
            if i > 0 and not keep(ref):
                continue
            snap = _read_ref(sm.try_snapshot, sid)
            if snap is None:
                if i == 0:
                    latest_ok = False
                    break
                if used is not None:
                    used.vanished.append(str(ref))
                continue
            if keep(ref):
                got.append((ref, snap))
        if latest_ok:
            out.extend(reversed(got))
            latest_id = ids[-1] if ids else None
            break
        lister.forget(snap_dir)
        time.sleep(0.05 * (attempt + 1))
    else:
        raise _refuse(snap_dir, "the latest snapshot vanished while reading three times in a row")
    if used is not None:
        used.latest_ids[branch] = latest_id

    # tags
    tag_dir = join(root, "tag")
    for s in lister.list(tag_dir):
        if s.is_dir or not s.name.startswith(_TAG_PREFIX) or len(s.name) == len(_TAG_PREFIX):
            continue
        ref = Ref(branch, "tag", s.name[len(_TAG_PREFIX) :], s.path)
        if not keep(ref):
            continue
        tag = _read_ref(tm.try_tag, ref.key)
        if tag is None:
            if used is not None:
                used.vanished.append(str(ref))
            continue
        out.append((ref, tag.snapshot))

    # long-lived changelogs (decoupled changelog lifecycle)
    cl_dir = join(root, "changelog")
    for s in lister.list(cl_dir):
        m = _CHANGELOG_RE.fullmatch(s.name)
        if s.is_dir or not m:
            continue
        ref = Ref(branch, "changelog", m.group(1), s.path)
        if not keep(ref):
            continue
        snap = _read_ref(cm.try_snapshot, int(ref.key))
        if snap is None:
            if used is not None:
                used.vanished.append(str(ref))
            continue
        out.append((ref, snap))

    # consumers decide nothing here, but an unreadable one means the table is not what we think
    from ..refs.consumers import parse_consumer

    for s in lister.list(join(root, "consumer")):
        if s.is_dir or not s.name.startswith(_CONSUMER_PREFIX):
            continue
        try:
            parse_consumer(file_io.read_text(s.path), s.path)
        except NotFound:
            continue
        except CorruptMetadata as e:
            raise _refuse(s.path, e.problem) from e
    return out


# ---------------------------------------------------------------------------------------
# reading manifests (names only)
# ---------------------------------------------------------------------------------------


def _read_records(file_io: FileIO, path: str) -> list[dict[str, Any]]:
    from ..manifest.avro import read_avro

    _, records = read_avro(file_io.read_bytes(path), path)
    return records


def manifest_list_names(file_io: FileIO, path: str) -> list[str]:
    """Manifest file names of a manifest list (NotFound if missing, CorruptMetadata if bad)."""
    try:
        return [check_file_name(r["_FILE_NAME"], "_FILE_NAME", path) for r in _read_records(file_io, path)]
    except (KeyError, TypeError) as e:
        raise CorruptMetadata(path, f"manifest list record without _FILE_NAME ({e})") from e


def manifest_file_names(file_io: FileIO, path: str) -> list[str]:
    """Data/changelog file names plus their extra files (e.g. ``.index``) of one manifest."""
    out: list[str] = []
    try:
        for r in _read_records(file_io, path):
            f = r["_FILE"]
            out.append(check_file_name(f["_FILE_NAME"], "_FILE_NAME", path))
            extra = f.get("_EXTRA_FILES")
            if extra:
                out.extend(check_file_name(x, "_EXTRA_FILES entry", path) for x in extra)
    except (KeyError, TypeError) as e:
        raise CorruptMetadata(path, f"manifest entry without _FILE._FILE_NAME ({e})") from e
    return out


def index_manifest_names(file_io: FileIO, path: str) -> list[str]:
    try:
        return [check_file_name(r["_FILE_NAME"], "_FILE_NAME", path) for r in _read_records(file_io, path)]
    except (KeyError, TypeError) as e:
        raise CorruptMetadata(path, f"index manifest record without _FILE_NAME ({e})") from e


def _referrer_alive(file_io: FileIO, refs: Iterable[Ref]) -> Ref | None:
    for ref in refs:
        if file_io.exists(ref.path):
            return ref
    return None


class _Reader:
    """Reads each distinct metadata file once (threads on object stores) with the fail-closed rules."""

    def __init__(self, file_io: FileIO, table_path: str, used: UsedFiles) -> None:
        self.file_io = file_io
        self.mdir = manifest_dir(table_path)
        self.used = used

    def _map(self, fn: Callable[[str], Any], names: list[str]) -> list[Any]:
        if len(names) <= 1 or self.file_io.is_local:
            return [fn(n) for n in names]
        return map_ordered(fn, names, min(_REMOTE_THREADS, len(names)), "paimon-used-files")

    def _one(self, reader: Callable[[FileIO, str], list[str]], name: str) -> list[str] | None:
        path = join(self.mdir, name)
        try:
            return reader(self.file_io, path)
        except NotFound:
            return None
        except CorruptMetadata as e:
            raise _refuse(path, e.problem) from e

    def read_all(self, pinned: list[tuple[Ref, Any]], changelogs_lack_data_lists: frozenset[str] = frozenset()) -> None:
        used = self.used
        names = used.names
        # manifest lists -> referrers
        list_refs: dict[str, list[Ref]] = {}
        index_refs: dict[str, list[Ref]] = {}
        # expire deletes the index manifest of a snapshot it moves to changelog/ (and its data
        # manifest lists when a changelog producer is set), as Java's SnapshotDeletion does: a
        # long-lived changelog may lack those, and what they named is not kept for it
        optional: set[tuple[str, Ref]] = set()
        for ref, snap in pinned:
            used.refs.append(ref)
            for ml in (snap.base_manifest_list, snap.delta_manifest_list, snap.changelog_manifest_list):
                if ml:
                    names.add(ml)
                    if ml not in used.read_lists:
                        list_refs.setdefault(ml, []).append(ref)
                        if (ref.kind == "changelog" and ml != snap.changelog_manifest_list
                                and ref.branch in changelogs_lack_data_lists):
                            optional.add((ml, ref))
            if ref.kind == "changelog" and snap.index_manifest:
                optional.add((snap.index_manifest, ref))
            if snap.index_manifest:
                names.add(snap.index_manifest)
                if snap.index_manifest not in used.read_index_manifests:
                    index_refs.setdefault(snap.index_manifest, []).append(ref)
            if snap.statistics:
                names.add(snap.statistics)

        todo = sorted(list_refs)
        manifest_refs: dict[str, list[Ref]] = {}
        for ml, content in zip(todo, self._map(lambda n: self._one(manifest_list_names, n), todo)):
            if content is None:
                self._missing(ml, [r for r in list_refs[ml] if (ml, r) not in optional], "manifest list")
                continue
            used.read_lists.add(ml)
            for m in content:
                names.add(m)
                if m not in used.read_manifests:
                    manifest_refs.setdefault(m, []).extend(list_refs[ml])

        todo = sorted(manifest_refs)
        for m, content in zip(todo, self._map(lambda n: self._one(manifest_file_names, n), todo)):
            if content is None:
                self._missing(m, manifest_refs[m], "manifest")
                continue
            used.read_manifests.add(m)
            names.update(content)

        todo = sorted(index_refs)
        for im, content in zip(todo, self._map(lambda n: self._one(index_manifest_names, n), todo)):
            if content is None:
                self._missing(im, [r for r in index_refs[im] if (im, r) not in optional], "index manifest")
                continue
            used.read_index_manifests.add(im)
            names.update(content)

    def _missing(self, name: str, refs: list[Ref], what: str) -> None:
        """A referenced file is gone: fine only if every object referencing it is gone too."""
        if not refs:
            return  # only referrers that may lack it
        alive = _referrer_alive(self.file_io, refs)
        for attempt in range(3):  # a concurrent expire deletes manifests first, snapshot files last
            if alive is None:
                break
            time.sleep(0.1 * (attempt + 1))
            alive = _referrer_alive(self.file_io, refs)
        if alive is not None:
            raise _refuse(join(self.mdir, name), f"{what} referenced by {alive} does not exist")
        self.used.vanished.extend(str(r) for r in refs)


def collect_used_files(
    file_io: FileIO,
    table_path: str,
    lister: DirLister | None = None,
    skip: Callable[[Ref], bool] | None = None,
) -> UsedFiles:
    """Names used by every snapshot, tag and changelog of every branch (``skip`` leaves
    chosen refs out, e.g. the snapshots a rollback is about to remove)."""
    from ..refs.snapshot import changelog_lacks_data_lists

    lister = lister or DirLister(file_io)
    used = UsedFiles()
    used.branches = list_branches(file_io, table_path, lister)
    pinned: list[tuple[Ref, Any]] = []
    for br in used.branches:
        pinned.extend(branch_refs(file_io, table_path, br, lister, skip, used))
    producers = frozenset(br for br in {r.branch for r, _ in pinned if r.kind == "changelog"}
                          if _read_ref(changelog_lacks_data_lists, file_io, table_path, br))
    _Reader(file_io, table_path, used).read_all(pinned, producers)
    return used


def refresh_used_files(file_io: FileIO, table_path: str, used: UsedFiles) -> set[str]:
    """Re-read, just before deleting, the latest snapshot and every tag of every branch and add
    whatever they use that the first pass did not see; returns the names added.

    Closes the window between collecting and deleting (apache/paimon#3074): a commit or
    tag created meanwhile can only reference files through these objects. Manifests are
    immutable, so only manifest lists and manifests not read before are opened.
    """
    before = set(used.names)
    lister = DirLister(file_io)
    branches = list_branches(file_io, table_path, lister)
    pinned: list[tuple[Ref, Any]] = []
    for br in branches:
        root = branch_path(table_path, None if br == MAIN_BRANCH else br)
        from ..refs.snapshot import SnapshotManager
        from ..refs.tags import TagManager

        sm = SnapshotManager(file_io, table_path, None if br == MAIN_BRANCH else br)
        tm = TagManager(file_io, table_path, None if br == MAIN_BRANCH else br)
        for attempt in range(3):
            latest = sm.latest_snapshot_id()
            if latest is None:
                break
            path = sm.snapshot_path(latest)
            snap = _read_ref(sm.try_snapshot, latest)
            if snap is not None:
                pinned.append((Ref(br, "snapshot", str(latest), path), snap))
                break
            time.sleep(0.05 * (attempt + 1))
        else:
            raise _refuse(join(root, "snapshot"), "the latest snapshot vanished while re-checking")
        if used.latest_ids.get(br) is not None and latest is None:
            raise _refuse(join(root, "snapshot"), "all snapshots disappeared while removing orphans")
        for s in lister.list(join(root, "tag")):
            if s.is_dir or not s.name.startswith(_TAG_PREFIX) or len(s.name) == len(_TAG_PREFIX):
                continue
            tag = _read_ref(tm.try_tag, s.name[len(_TAG_PREFIX) :])
            if tag is not None:
                pinned.append((Ref(br, "tag", s.name[len(_TAG_PREFIX) :], s.path), tag.snapshot))
    refs_before = list(used.refs)
    _Reader(file_io, table_path, used).read_all(pinned)
    used.refs = refs_before
    return used.names - before
