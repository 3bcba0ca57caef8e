"""Which files the snapshots, tags and changelogs of a table still use, across branches.

Orphan removal and rollback delete what is *not* in the set, expire and tag deletion keep
what other branches use, so the set must never be too small. Everything is read through
the one :class:`~.file_deletion.GuardedReader`: any snapshot, tag, changelog, consumer,
branch, manifest list, manifest or index manifest that cannot be read or parsed refuses.
The one tolerated gap is a file whose every referrer has itself disappeared meanwhile (a
concurrent expire or rollback removed it), and the latest snapshot of each branch must
always be read in full.

Names are collected exactly as Java does: data file names are unique UUIDs, and a name
match anywhere keeps the file, which errs on the side of keeping.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import PaimonError, UnsafeRefused
from ..io.fileio import FileIO, FileStatus, join
from ..io.paths import BRANCH_PREFIX, MAIN_BRANCH, branch_dir, branch_path, schema_dir
from ..manifest.expire_file_entry import FileKey
from ..manifest.manifest import FileKind
from ..refs.consumers import CONSUMER_PREFIX, parse_consumer
from ..refs.snapshot import ChangelogManager, Snapshot, SnapshotManager, changelog_lacks_data_lists
from ..refs.tags import TAG_PREFIX, TagManager
from ..utils.workers import prefetch
from .file_deletion import GuardedReader

if TYPE_CHECKING:
    import pyarrow as pa

_SNAPSHOT_RE = re.compile(r"snapshot-(\d+)")
_CHANGELOG_RE = re.compile(r"changelog-(\d+)")


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


class CandidateNames:
    """The names of the files a removal may delete, and which of them are used.

    Java's LocalOrphanFilesClean trick: with the candidates listed first, the names the
    manifests yield are only matched against them, never kept, so memory follows the
    candidates plus one batch of names, not every name ever written. Matching is
    vectorised (``index_in`` per batch of up to :attr:`BATCH` names); equal names in two
    directories are one name, as in a set.
    """

    BATCH = 1 << 20

    def __init__(self, names: pa.Array) -> None:
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        encoded = pc.dictionary_encode(names.cast(pa.large_string()))  # one hash pass: distinct + positions
        self.distinct = encoded.dictionary
        self._of = encoded.indices.to_numpy()  # candidate -> distinct
        self._used = np.zeros(len(self.distinct), dtype=bool)
        self._pending: list[pa.Array] = []
        self._pending_len = 0

    def __len__(self) -> int:
        return len(self._of)

    def mark(self, names: pa.Array | pa.ChunkedArray) -> None:
        """Names a referrer uses (matched in batches: call :meth:`flush` before asking)."""
        import pyarrow as pa

        chunks = names.chunks if isinstance(names, pa.ChunkedArray) else [names]
        for c in chunks:
            if len(c):
                self._pending.append(c.cast(pa.large_string()))
                self._pending_len += len(c)
        if self._pending_len >= self.BATCH:
            self.flush()

    def flush(self) -> None:
        import pyarrow as pa
        import pyarrow.compute as pc

        if not self._pending:
            return
        batch = pa.chunked_array(self._pending, pa.large_string())
        self._pending, self._pending_len = [], 0
        hit = pc.index_in(batch, value_set=self.distinct).drop_null()
        if len(hit):
            self._used[hit.to_numpy()] = True

    def used_mask(self) -> Any:
        """A numpy bool per candidate (in the order given): is its name used?"""
        self.flush()
        return self._used[self._of]

    def used_count(self) -> int:
        self.flush()
        return int(self._used.sum())

    def is_used(self, names: Sequence[str]) -> list[bool]:
        """For a few names (the plan's files): used by what was marked so far?"""
        import pyarrow as pa
        import pyarrow.compute as pc

        self.flush()
        idx = pc.index_in(pa.array(list(names), pa.large_string()), value_set=self.distinct).to_pylist()
        return [i is not None and bool(self._used[i]) for i in idx]


@dataclass
class UsedFiles:
    """The used names plus what was read to get them (for reports and the pre-delete re-check).

    With ``among`` set, the data and extra file names of manifests are only matched against
    those candidates (``names`` then holds the metadata names alone): ask :meth:`uses`.
    """

    names: set[str] = field(default_factory=set)
    among: CandidateNames | None = None
    data: set[FileKey] = field(default_factory=set)  # ADDed data and changelog files (with keys=True)
    refs: list[Ref] = field(default_factory=list)
    # manifest lists / manifests / index manifests whose content is already in ``names``
    read_lists: set[str] = field(default_factory=set)
    read_manifests: set[str] = field(default_factory=set)
    read_index_manifests: set[str] = field(default_factory=set)
    branches: list[str] = field(default_factory=list)
    latest_ids: dict[str, int | None] = field(default_factory=dict)
    vanished: list[str] = field(default_factory=list)  # referrers that disappeared while reading
    holders: dict[int, list[str]] = field(default_factory=dict)  # snapshot id -> "branch x" (expire explains)

    @property
    def has_metadata(self) -> bool:
        return bool(self.refs)

    @property
    def name_count(self) -> int:
        """Used names known: every one, or with ``among`` the metadata names plus the used candidates."""
        return len(self.names) + (self.among.used_count() if self.among is not None else 0)

    def uses(self, names: Sequence[str]) -> list[bool]:
        """Whether each name is used (by name, anywhere, as Java matches)."""
        marked = self.among.is_used(names) if self.among is not None else [False] * len(names)
        return [m or n in self.names for n, m in zip(names, marked, strict=True)]

    def add_entry_names(self, names: pa.Array | pa.ChunkedArray) -> None:
        """Data and extra file names a manifest names."""
        if self.among is not None:
            self.among.mark(names)
        else:
            self.names.update(names.to_pylist())


class DirLister:
    """Lists each directory at most once per operation (and counts listings for the bench)."""

    def __init__(self, file_io: FileIO) -> None:
        self.file_io = file_io
        self._cache: dict[str, list[FileStatus]] = {}
        self._seen: set[str] = set()
        self.listings = 0

    def list(self, directory: str, keep: bool = True) -> list[FileStatus]:
        """The entries (``keep=False``: not remembered, for the many big data directories a
        caller reads once; memory then follows one directory, not the table)."""
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
            self._seen.add(key)
            if keep:
                self._cache[key] = got
        return got

    @property
    def distinct(self) -> int:
        """Directories listed (equals ``listings`` unless a race forced a re-list)."""
        return len(self._seen)

    def forget(self, directory: str) -> None:
        self._cache.pop(directory.rstrip("/"), None)


def list_branches(reader: GuardedReader, lister: DirLister) -> list[str]:
    """``main`` plus every ``branch/branch-<name>`` directory; a branch without a schema is
    refused, as Java's validBranches does (its files cannot be told apart from orphans)."""
    table_path = reader.table_path
    names = sorted(
        s.name[len(BRANCH_PREFIX) :]
        for s in lister.list(branch_dir(table_path))
        if s.is_dir and s.name.startswith(BRANCH_PREFIX) and len(s.name) > len(BRANCH_PREFIX)
    )
    for name in names:
        schemas = join(branch_path(table_path, name), "schema")
        if not any(s.name.startswith("schema-") and not s.is_dir for s in lister.list(schemas)):
            raise reader.refuse(branch_path(table_path, name), "branch has no schema (Java refuses too)")
    return [MAIN_BRANCH, *names]


# ---------------------------------------------------------------------------------------
# the referrers of one branch
# ---------------------------------------------------------------------------------------


def _branch_arg(branch: str) -> str | None:
    return None if branch == MAIN_BRANCH else branch


def _root(reader: GuardedReader, branch: str) -> str:
    return branch_path(reader.table_path, _branch_arg(branch))


def _branch_snapshots(reader: GuardedReader, branch: str, lister: DirLister, keep: Callable[[Ref], bool],
                      used: UsedFiles | None) -> list[tuple[Ref, Snapshot]]:
    """The readable snapshots, newest one always included: if the listed maximum vanished
    (rolled back, or the listing raced a commit) the directory is listed again, up to three
    times, before refusing. Older snapshots that vanish were expired meanwhile."""
    snap_dir = join(_root(reader, branch), "snapshot")
    sm = SnapshotManager(reader.file_io, reader.table_path, _branch_arg(branch))
    for attempt in range(3):
        ids = sorted(int(m.group(1)) for s in lister.list(snap_dir)
                     if not s.is_dir and (m := _SNAPSHOT_RE.fullmatch(s.name)))
        hint = sm.read_hint("LATEST")
        newer = hint is not None and (not ids or hint > ids[-1])
        if hint is not None and newer and reader.file_io.exists(join(snap_dir, f"snapshot-{hint}")):
            ids.append(hint)  # committed after the listing
        # a LATEST hint naming a snapshot that is gone, or a gap: what only it used is not unused
        reader.guarded(snap_dir, functools.partial(sm.check_complete, ids))
        got: list[tuple[Ref, Snapshot]] = []
        for i, sid in enumerate(reversed(ids)):
            ref = Ref(branch, "snapshot", str(sid), join(snap_dir, f"snapshot-{sid}"))
            if i > 0 and not keep(ref):
                continue
            snap = reader.snapshot(sm, sid)
            if snap is None and i == 0:
                break  # the latest vanished: list again
            if snap is None:
                if used is not None:
                    used.vanished.append(str(ref))
            elif keep(ref):
                got.append((ref, snap))
        else:
            if used is not None:
                used.latest_ids[branch] = ids[-1] if ids else None
            return list(reversed(got))
        lister.forget(snap_dir)
        time.sleep(0.05 * (attempt + 1))
    raise reader.refuse(snap_dir, "the latest snapshot vanished while reading three times in a row")


def _branch_files(reader: GuardedReader, branch: str, lister: DirLister, kind: str, keep: Callable[[Ref], bool],
                  used: UsedFiles | None) -> list[tuple[Ref, Snapshot]]:
    """The readable tags (``kind`` tag) or long-lived changelogs of one branch."""
    directory = join(_root(reader, branch), kind)
    tm = TagManager(reader.file_io, reader.table_path, _branch_arg(branch))
    cm = ChangelogManager(reader.file_io, reader.table_path, _branch_arg(branch))
    out: list[tuple[Ref, Snapshot]] = []
    for s in lister.list(directory):
        if kind == "tag":
            key = s.name[len(TAG_PREFIX) :] if s.name.startswith(TAG_PREFIX) else ""
        else:
            m = _CHANGELOG_RE.fullmatch(s.name)
            key = m.group(1) if m else ""
        ref = Ref(branch, kind, key, s.path)
        if s.is_dir or not key or not keep(ref):
            continue
        if kind == "tag":
            tag = reader.tag(tm, key)
            snap = None if tag is None else tag.snapshot
        else:
            snap = reader.snapshot(cm, int(key))
        if snap is None:
            if used is not None:
                used.vanished.append(str(ref))
            continue
        out.append((ref, snap))
    return out


def _read_consumer(file_io: FileIO, path: str) -> int:
    return parse_consumer(file_io.read_text(path), path)


def branch_refs(
    reader: GuardedReader,
    branch: str,
    lister: DirLister,
    skip: Callable[[Ref], bool] | None = None,
    used: UsedFiles | None = None,
) -> list[tuple[Ref, Snapshot]]:
    """(ref, snapshot) for every readable snapshot, tag and changelog of one branch; every
    consumer is read too (an unreadable one means the table is not what we think)."""

    def keep(ref: Ref) -> bool:
        return skip is None or not skip(ref)

    out = _branch_snapshots(reader, branch, lister, keep, used)
    out += _branch_files(reader, branch, lister, "tag", keep, used)
    out += _branch_files(reader, branch, lister, "changelog", keep, used)
    for s in lister.list(join(_root(reader, branch), "consumer")):
        if not s.is_dir and s.name.startswith(CONSUMER_PREFIX):
            reader.guarded(s.path, functools.partial(_read_consumer, reader.file_io, s.path), missing_ok=True)
    return out


# ---------------------------------------------------------------------------------------
# what the referrers use
# ---------------------------------------------------------------------------------------


class _References:
    """One pass over the lists, manifests and index manifests of many referrers: each distinct
    file read once (threads on object stores)."""

    def __init__(self, reader: GuardedReader, used: UsedFiles, keys: bool) -> None:
        self.reader = reader
        self.used = used
        self.keys = keys
        # (file, referrer) pairs where the referrer may lack the file: expire deletes the index
        # manifest of a snapshot it moves to changelog/ (and its data manifest lists when a
        # changelog producer is set), as Java's SnapshotDeletion does; the names stay used
        self._optional: set[tuple[str, Ref]] = set()
        self._lacking: dict[str, bool] = {}

    def _lacks_data_lists(self, branch: str) -> bool:
        if branch not in self._lacking:
            reader, br = self.reader, _branch_arg(branch)
            self._lacking[branch] = bool(reader.guarded(
                schema_dir(reader.table_path, br),
                functools.partial(changelog_lacks_data_lists, reader.file_io, reader.table_path, br)))
        return self._lacking[branch]

    def read(self, pinned: list[tuple[Ref, Snapshot]], changelog_missing_ok: bool) -> None:
        used = self.used
        data_lists: dict[str, list[Ref]] = {}
        changelog_lists: dict[str, list[Ref]] = {}
        index_refs: dict[str, list[Ref]] = {}
        for ref, snap in pinned:
            used.refs.append(ref)
            is_changelog = ref.kind == "changelog"
            for ml, into in ((snap.base_manifest_list, data_lists), (snap.delta_manifest_list, data_lists),
                             (snap.changelog_manifest_list, changelog_lists)):
                if ml:
                    used.names.add(ml)
                    if ml not in used.read_lists:
                        into.setdefault(ml, []).append(ref)
                        if is_changelog and into is data_lists and self._lacks_data_lists(ref.branch):
                            self._optional.add((ml, ref))
            if snap.index_manifest:
                used.names.add(snap.index_manifest)
                if snap.index_manifest not in used.read_index_manifests:
                    index_refs.setdefault(snap.index_manifest, []).append(ref)
                    if is_changelog:
                        self._optional.add((snap.index_manifest, ref))
            if snap.statistics:
                used.names.add(snap.statistics)
        for ml in data_lists:
            changelog_lists.pop(ml, None)  # named as a data list too: strict
        self._lists(data_lists, tolerant=False)
        self._lists(changelog_lists, tolerant=changelog_missing_ok)
        self._index_manifests(index_refs)

    def _lists(self, list_refs: dict[str, list[Ref]], tolerant: bool) -> None:
        used = self.used
        todo = sorted(list_refs)
        manifest_refs: dict[str, list[Ref]] = {}
        for ml, metas in zip(todo, self._manifest_names(todo), strict=True):
            if metas is None:
                if not tolerant:
                    self._missing(ml, self._required(ml, list_refs[ml]), "manifest list")
                continue
            used.read_lists.add(ml)
            for m in metas:
                used.names.add(m)
                if m not in used.read_manifests:
                    manifest_refs.setdefault(m, []).extend(list_refs[ml])
        names = sorted(manifest_refs)
        for name, table in zip(names, self._manifest_tables(names), strict=True):
            if table is None:
                if not tolerant:
                    self._missing(name, manifest_refs[name], "manifest")
                continue
            used.read_manifests.add(name)
            self._use(table)

    def _manifest_names(self, lists: list[str]) -> list[list[str] | None]:
        """The manifests each list names, None if it is missing (the Spark engine reads them in tasks)."""
        reader = self.reader
        read = reader.read_all(lambda n: reader.manifest_list(n, missing_ok=True, cache=False), lists)
        return [None if metas is None else [m.file_name for m in metas] for metas in read]

    _COLUMNS = ("_KIND", "_PARTITION", "_BUCKET", "_FILE_NAME", "_EXTRA_FILES")

    def _manifest_tables(self, names: list[str]) -> Iterator[pa.Table | None]:
        """Each manifest's name columns (columnar path), None if missing; one at a time
        (a few ahead on object stores), so memory stays flat however many there are."""
        from ..manifest.columnar import read_manifest_table

        reader = self.reader
        columns = self._COLUMNS if self.keys else self._COLUMNS[3:]

        def read(name: str) -> pa.Table | None:
            return reader.guarded(join(reader.manifest_dir, name), functools.partial(
                read_manifest_table, reader.file_io, reader.manifest_dir, name, columns), missing_ok=True)

        if len(names) <= 1 or reader.file_io.is_local:
            yield from map(read, names)
            return
        with closing(prefetch(read, names, min(reader.REMOTE_THREADS, len(names)), "paimon-used-files")) as tables:
            yield from tables

    def _use(self, table: pa.Table) -> None:
        import pyarrow.compute as pc

        used = self.used
        used.add_entry_names(table.column("_FILE_NAME"))
        used.add_entry_names(pc.list_flatten(table.column("_EXTRA_FILES")))
        if self.keys:
            adds = table.filter(pc.equal(table.column("_KIND"), int(FileKind.ADD)))
            used.data.update(zip(adds.column("_PARTITION").to_pylist(), adds.column("_BUCKET").to_pylist(),
                                 adds.column("_FILE_NAME").to_pylist(), strict=True))

    def _index_manifests(self, index_refs: dict[str, list[Ref]]) -> None:
        reader = self.reader
        todo = sorted(index_refs)
        for im, entries in zip(todo, reader.read_all(lambda n: reader.index_manifest(n, missing_ok=True), todo),
                               strict=True):
            if entries is None:
                self._missing(im, self._required(im, index_refs[im]), "index manifest")
                continue
            self.used.read_index_manifests.add(im)
            self.used.names.update(e.index_file.file_name for e in entries)

    def _required(self, name: str, refs: list[Ref]) -> list[Ref]:
        return [r for r in refs if (name, r) not in self._optional]

    def _missing(self, name: str, refs: list[Ref], what: str) -> None:
        """A referenced file is gone: fine only if every object referencing it is gone too
        (or may lack it)."""
        if not refs:
            return
        alive = _referrer_alive(self.reader.file_io, refs)
        for attempt in range(3):  # a concurrent expire deletes manifests first, snapshot files last
            if alive is None:
                break
            time.sleep(0.1 * (attempt + 1))
            alive = _referrer_alive(self.reader.file_io, refs)
        if alive is not None:
            raise self.reader.refuse(join(self.reader.manifest_dir, name),
                                     f"{what} referenced by {alive} does not exist")
        self.used.vanished.extend(str(r) for r in refs)


def _referrer_alive(file_io: FileIO, refs: Iterable[Ref]) -> Ref | None:
    for ref in refs:
        if file_io.exists(ref.path):
            return ref
    return None


def collect_used_files(
    file_io: FileIO,
    table_path: str,
    lister: DirLister | None = None,
    skip: Callable[[Ref], bool] | None = None,
    action: str = "delete unused files",
    among: CandidateNames | None = None,
) -> UsedFiles:
    """Names used by every snapshot, tag and changelog of every branch (``skip`` leaves
    chosen refs out, e.g. the snapshots a rollback is about to remove; ``among`` keeps only
    which of those candidates manifests use, see :class:`CandidateNames`)."""
    reader = GuardedReader(file_io, table_path, action)
    lister = lister or DirLister(file_io)
    used = UsedFiles(among=among)
    used.branches = list_branches(reader, lister)
    pinned: list[tuple[Ref, Snapshot]] = []
    for br in used.branches:
        pinned.extend(branch_refs(reader, br, lister, skip, used))
    _References(reader, used, keys=False).read(pinned, changelog_missing_ok=False)
    return used


def refresh_used_files(file_io: FileIO, table_path: str, used: UsedFiles,
                       action: str = "delete unused files") -> set[str]:
    """Re-read, just before deleting, the latest snapshot and every tag of every branch and add
    whatever they use that the first pass did not see; returns the names added.

    Closes the window between collecting and deleting (apache/paimon#3074): a commit or
    tag created meanwhile can only reference files through these objects. Manifests are
    immutable, so only manifest lists and manifests not read before are opened. With
    ``used.among`` the names the new manifests use are marked there (not returned).
    """
    reader = GuardedReader(file_io, table_path, action)
    before = set(used.names)
    lister = DirLister(file_io)
    pinned: list[tuple[Ref, Snapshot]] = []
    for br in list_branches(reader, lister):
        pinned.extend(_latest_of(reader, br, used))
        pinned.extend(_branch_files(reader, br, lister, "tag", lambda ref: True, None))
    refs_before = list(used.refs)
    _References(reader, used, keys=False).read(pinned, changelog_missing_ok=False)
    used.refs = refs_before
    return used.names - before


def _latest_of(reader: GuardedReader, branch: str, used: UsedFiles) -> list[tuple[Ref, Snapshot]]:
    sm = SnapshotManager(reader.file_io, reader.table_path, _branch_arg(branch))
    for attempt in range(3):
        latest = sm.latest_snapshot_id()
        if latest is None:
            if used.latest_ids.get(branch) is not None:
                raise reader.refuse(sm.snapshot_dir, "all snapshots disappeared while removing orphans")
            return []
        snap = reader.snapshot(sm, latest)
        if snap is not None:
            return [(Ref(branch, "snapshot", str(latest), sm.snapshot_path(latest)), snap)]
        time.sleep(0.05 * (attempt + 1))
    raise reader.refuse(sm.snapshot_dir, "the latest snapshot vanished while re-checking")


def protect_other_branches(reader: GuardedReader, branch: str | None) -> UsedFiles:
    """What every OTHER branch (and main, for a branch) references: data and changelog files
    by key, metadata by name. Java's deleters ignore branches; we refuse to break them.

    Each distinct list and manifest is read once, so the cost follows the number of
    manifests, not snapshots x files. A changelog list a branch or tag copied may be gone
    (Java never protects it), which is tolerated: what only it named is unreachable.
    """
    lister = DirLister(reader.file_io)
    used = UsedFiles()
    current = branch or MAIN_BRANCH
    pinned: list[tuple[Ref, Snapshot]] = []
    used.branches = list_branches(reader, lister)
    for br in used.branches:
        if br == current:
            continue
        refs = branch_refs(reader, br, lister, used=used)
        snaps = [s.id for r, s in refs if r.kind == "snapshot"]
        held = ([min(snaps)] if snaps else []) + [s.id for r, s in refs if r.kind == "tag"]
        for sid in held:  # the snapshot a branch was created from (same id in our history)
            used.holders.setdefault(sid, []).append(f"branch {br}")
        pinned += refs
    _References(reader, used, keys=True).read(pinned, changelog_missing_ok=True)
    return used


def protect_refs(reader: GuardedReader, pinned: list[tuple[Ref, Snapshot]], into: UsedFiles) -> None:
    """Add what ``pinned`` references to ``into`` (keys and names), as :func:`protect_other_branches`."""
    _References(reader, into, keys=True).read(pinned, changelog_missing_ok=True)
