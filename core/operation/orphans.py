"""remove-orphan-files: delete files no snapshot, tag or changelog of any branch uses.

Candidates and "used" names follow Java's OrphanFilesClean / LocalOrphanFilesClean
(FORMAT-FACTS §15): files older than a cutoff in ``manifest/``, ``index/``, ``statistics/``,
every ``bucket-*`` directory under the partition directories, plus leftovers (e.g.
``.snapshot-7.<uuid>.tmp``) in each branch's ``snapshot/`` and ``changelog/``. Differences,
all towards keeping data:

* ``data-file.external-paths`` roots are not scanned unless asked for, and then only when no
  other table of the warehouse uses an overlapping location (core/operation/external_roots.py: Java
  scans them always, and deletes the live files of every table sharing the root); inside
  them only ``<partition keys>/bucket-N/`` files named like Paimon data files are candidates;
* fail closed (core/operation/used_files.py): anything unreadable stops the run with exit 6;
* an empty used set while the table holds files is refused (apache/paimon#7710);
* the latest snapshot and the tags of every branch are re-read just before deleting and
  any candidate they use is dropped (apache/paimon#3074);
* directories are never deleted recursively: a bucket or partition directory goes only
  when the plan empties it and it was old enough itself (``rmdir``, which fails if a file
  appeared meanwhile).

``plan_remove_orphans`` is pure (reads only); ``remove_orphans`` executes a plan, so a dry
run prints exactly the list a real run right after deletes.
"""

from __future__ import annotations

import time
from array import array
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import UnsafeRefused
from ..io.fileio import FileStatus, basename, join, parent
from ..io.paths import MAIN_BRANCH, branch_path
from ..io.paths import data_root as paths_data_root
from ..utils.durations import parse_point_in_time
from ..utils.progress import StepProgress, Ticker
from .external_roots import (
    ExternalLayout,
    check_unshared,
    configured_roots,
    location_key,
    scan_location,
    warehouse_claims,
)
from .file_deletion import (
    CHANGELOG,
    CHANGELOG_FILE,
    DATA_FILE,
    EXTRA_FILE,
    INDEX_FILE,
    INDEX_MANIFEST,
    MANIFEST,
    MANIFEST_LIST,
    OTHER,
    SNAPSHOT,
    STATISTICS,
    GuardedReader,
    delete_in_order,
    label_phases,
    remove_empty_dirs,
)
from .used_files import (
    CandidateNames,
    DirLister,
    UsedFiles,
    collect_used_files,
    list_branches,
    refresh_used_files,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from ..table.file_store_table import FileStoreTable

DAY_MILLIS = 86_400_000
HOUR_MILLIS = 3_600_000
_MANAGED_BLOB_SUFFIX = ".managed.blob"  # Java master never cleans these (blob tables)
_HINTS = ("EARLIEST", "LATEST")
_UNCHECKED = ("snapshot-dir", "changelog-dir")  # leftovers by name pattern, as Java
ACTION = "remove orphan files"
# what ``remove-orphan-files`` calls each kind of file
LABELS = {DATA_FILE: "data", EXTRA_FILE: "file-index", CHANGELOG_FILE: "changelog", INDEX_FILE: "index",
          MANIFEST: "manifest", MANIFEST_LIST: "manifest-list", INDEX_MANIFEST: "index-manifest",
          STATISTICS: "statistics", SNAPSHOT: "snapshot-dir", CHANGELOG: "changelog-dir", OTHER: "manifest-dir-file"}
_PHASES = label_phases(LABELS)


@dataclass(frozen=True)
class OrphanFile:
    path: str
    kind: str
    size: int
    mtime_millis: int | None


@dataclass
class OrphanPlan:
    table_path: str
    cutoff_millis: int
    planned_at_millis: int
    files: list[OrphanFile]
    dirs: list[str]  # empty directories to remove, deepest first
    used: UsedFiles
    candidates: int  # old-enough files looked at
    dirs_listed: int  # listings made
    dirs_distinct: int = 0  # distinct directories listed (== dirs_listed: each listed once)
    external_roots: list[str] = field(default_factory=list)  # scanned (--external-paths)
    unscanned_external_roots: list[str] = field(default_factory=list)  # configured, left alone
    tables_checked: int = 0  # other tables of the warehouse whose locations were compared

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files)


@dataclass
class OrphanResult:
    plan: OrphanPlan
    deleted: list[OrphanFile] = field(default_factory=list)
    kept: list[OrphanFile] = field(default_factory=list)  # became used between plan and delete
    dirs_removed: list[str] = field(default_factory=list)

    @property
    def deleted_bytes(self) -> int:
        return sum(f.size for f in self.deleted)


# ---------------------------------------------------------------------------------------
# cutoff
# ---------------------------------------------------------------------------------------

def resolve_cutoff(older_than: str | None, now_millis: int, force: bool = False) -> int:
    """``--older-than`` (core.utils.durations' point-in-time grammar; one later than now is invalid,
    as in Java) to an epoch-millis cutoff, default now - 1 day. One less than an hour ago is
    refused unless ``force``: files of writes in progress could be deleted.
    """
    if older_than is None:
        cutoff = now_millis - DAY_MILLIS
    else:
        cutoff = parse_point_in_time(older_than, "--older-than", now_millis)
    if now_millis - cutoff < HOUR_MILLIS and not force:
        raise UnsafeRefused(
            f"--older-than {older_than!r} is less than 1 hour ago: files of writes still in progress could be "
            "deleted; pass --force if no writer is running"
        )
    return cutoff


# ---------------------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------------------


def _kind_of(area: str, name: str) -> str:
    if area == "manifest":
        for prefix, kind in (("manifest-list-", "manifest-list"), ("index-manifest-", "index-manifest"),
                             ("manifest-", "manifest")):
            if name.startswith(prefix):
                return kind
        return "manifest-dir-file"
    if area == "data":
        if name.endswith(".index"):
            return "file-index"
        if name.startswith("changelog-"):
            return "changelog"
        return "data"
    return area


def _old(s: FileStatus, cutoff: int) -> bool:
    # a listing without a modification time cannot prove the file is old: keep it
    return s.mtime_millis is not None and s.mtime_millis < cutoff


def _data_root(table: FileStoreTable, base: str) -> str:
    """The partition/bucket tree under ``base`` (the table or an external root): Java writes
    ``<root>[/<data-file.path-directory>]/...`` under both (its orphan clean forgets the
    directory on external roots and would never see those files; we look where they are)."""
    return paths_data_root(base, table.options.data_file_path_directory)


class _Scan:
    """The candidates of one run: old files where Java looks for orphans, each directory
    listed once; remembers the directories whose emptiness the plan may exploit.

    Candidates are kept compact (names as Arrow per directory, sizes and times in arrays),
    never as one object per file: a table of millions of files is planned in bounded memory
    and only the orphans become :class:`OrphanFile` objects.
    """

    def __init__(self, table: FileStoreTable, lister: DirLister, cutoff: int) -> None:
        self.table = table
        self.lister = lister
        self.cutoff = cutoff
        self.nparts = len(table.schema.partition_keys)
        self.leftover_files: list[OrphanFile] = []  # snapshot-dir / changelog-dir: orphans by name pattern
        self.candidates = 0
        self.saw_files = False
        self.dirs: list[tuple[str, str]] = []  # (directory, area) of every considered directory
        self._names: list[pa.Array] = []  # candidate names, one chunk per considered directory
        self._dir_of = array("i")  # per candidate: index into ``dirs``
        self._sizes = array("q")
        self._mtimes = array("q")
        self.dir_files: dict[str, int] = {}  # plain files listed in a directory
        self.dir_subdirs: dict[str, list[str]] = {}
        self.dir_status: dict[str, FileStatus] = {}
        self.bucket_dirs: list[str] = []
        self.partition_dirs: list[list[str]] = [[] for _ in range(self.nparts)]

    def _remember(self, directory: str, entries: list[FileStatus]) -> None:
        self.dir_files[directory] = sum(1 for s in entries if not s.is_dir)
        self.dir_subdirs[directory] = [s.path for s in entries if s.is_dir]

    def consider(self, directory: str, area: str, layout: ExternalLayout | None = None) -> None:
        import pyarrow as pa

        entries = self.lister.list(directory, keep=False)
        self._remember(directory, entries)
        self.saw_files = self.saw_files or self.dir_files[directory] > 0
        names: list[str] = []
        for s in entries:
            if s.is_dir or not _old(s, self.cutoff) or s.name.endswith(_MANAGED_BLOB_SUFFIX):
                continue
            if layout is not None and not layout.is_data_file(s.name):
                continue
            names.append(s.name)
            self._sizes.append(s.size)
            self._mtimes.append(s.mtime_millis or 0)
        self._dir_of.extend([len(self.dirs)] * len(names))
        self.dirs.append((directory, area))
        self._names.append(pa.array(names, pa.large_string()))
        self.candidates += len(names)

    def walk(self, directory: str, level: int, into: list[str], layout: ExternalLayout | None = None) -> None:
        """Partition directories down to the bucket directories (into ``into``)."""
        entries = self.lister.list(directory)
        self._remember(directory, entries)
        depth = self.nparts - level
        for s in entries:
            if not s.is_dir:
                continue
            if level == 0:
                if layout.is_bucket_dir(s.name) if layout is not None else s.name.startswith("bucket-"):
                    self.dir_status[s.path] = s
                    into.append(s.path)
            elif layout.is_partition_dir(depth, s.name) if layout is not None else "=" in s.name:
                self.dir_status[s.path] = s
                self.partition_dirs[depth].append(s.path)
                self.walk(s.path, level - 1, into, layout)

    def table_files(self) -> None:
        root = self.table.path
        for area in ("manifest", "index", "statistics"):
            self.consider(join(root, area), area)
        self.walk(_data_root(self.table, root), self.nparts, self.bucket_dirs)
        for b in self.bucket_dirs:
            self.consider(b, "data")

    def external_files(self, scan_roots: list[str]) -> None:
        """Inside external roots only ``<partition keys>/bucket-N/`` files named like data files."""
        layout = ExternalLayout.of(self.table.schema)
        buckets: list[str] = []
        own = location_key(self.table.file_io.absolute(_data_root(self.table, self.table.path)))
        for ext in scan_roots:
            if location_key(_data_root(self.table, ext)) != own:  # the table directory is walked already
                self.walk(_data_root(self.table, ext), self.nparts, buckets, layout)
        for b in buckets:
            self.consider(b, "data", layout)
        self.bucket_dirs += buckets

    def leftovers(self, branches: list[str]) -> None:
        """Leftovers of interrupted commits in each branch's ``snapshot/`` and ``changelog/``."""
        for br in branches:
            broot = branch_path(self.table.path, None if br == MAIN_BRANCH else br)
            for sub, prefix, area in (("snapshot", "snapshot-", "snapshot-dir"),
                                      ("changelog", "changelog-", "changelog-dir")):
                for s in self.lister.list(join(broot, sub)):
                    if s.is_dir or s.name.startswith(prefix) or s.name in _HINTS or not _old(s, self.cutoff):
                        continue
                    self.candidates += 1
                    self.leftover_files.append(OrphanFile(s.path, area, s.size, s.mtime_millis))

    def names(self) -> pa.Array:
        """Every considered candidate's name, in listing order (leftovers are not matched)."""
        import pyarrow as pa

        if len(self._names) != 1:  # concatenated once, then kept as the one chunk
            self._names = [pa.concat_arrays(self._names) if self._names else pa.array([], pa.large_string())]
        return self._names[0]

    def _file(self, i: int, name: str) -> OrphanFile:
        directory, area = self.dirs[self._dir_of[i]]
        return OrphanFile(join(directory, name), _kind_of(area, name), self._sizes[i], self._mtimes[i])

    def files(self, unused: Any = None) -> list[OrphanFile]:
        """The candidates (``unused``: a numpy bool per candidate keeping only those), then the leftovers."""
        import numpy as np

        names = self.names()
        picked = range(len(names)) if unused is None else np.flatnonzero(unused).tolist()
        return [self._file(i, names[i].as_py()) for i in picked] + self.leftover_files

    def orphans(self, used: UsedFiles) -> list[OrphanFile]:
        """Candidates no name match keeps, plus the leftovers; sorted by path."""
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc

        names = self.names()
        meta = pa.array(sorted(used.names), pa.large_string())
        unused = ~pc.is_in(names, value_set=meta).to_numpy(zero_copy_only=False)
        if used.among is not None:
            unused &= ~used.among.used_mask()
        else:
            unused &= ~np.asarray(used.uses(names.to_pylist()), dtype=bool)
        return sorted(self.files(unused), key=lambda f: f.path)


def _external_roots(table: FileStoreTable, lister: DirLister, external_paths: bool) -> tuple[list[str], int]:
    """(roots to scan, other tables compared): ``--external-paths`` scans the configured roots
    unless another table of the warehouse claims an overlapping location."""
    configured = configured_roots(table.schema.options)
    if not (external_paths and configured):
        return [], 0
    fio = table.file_io
    # the cutoff also covers a table created or altered onto the root meanwhile: its files
    # there are younger than the cutoff, so they are no candidates
    claims, tables_checked = warehouse_claims(fio, table.path, lister)
    check_unshared(configured, claims, table.identifier.full_name)
    return list(dict.fromkeys(scan_location(fio, r) for r in configured)), tables_checked


def plan_remove_orphans(
    table: FileStoreTable,
    older_than: str | None = None,
    force: bool = False,
    now_millis: int | None = None,
    external_paths: bool = False,
) -> OrphanPlan:
    """What a run would delete right now (reads only; each directory listed once).

    ``external_paths`` also scans the table's ``data-file.external-paths`` roots, refused
    (UnsafeRefused) when another table of the warehouse claims an overlapping location.
    """
    now = int(time.time() * 1000) if now_millis is None else now_millis
    cutoff = resolve_cutoff(older_than, now, force)
    fio = table.file_io
    lister = DirLister(fio)
    root = table.path
    scan_roots, tables_checked = _external_roots(table, lister, external_paths)
    # candidates first, used names second (as Java since apache/paimon#3074): a commit landing
    # in between is then seen by the used-name pass; remove_orphans re-checks once more
    branches = list_branches(GuardedReader(fio, root, ACTION), lister)
    scan = _Scan(table, lister, cutoff)
    scan.table_files()
    if scan_roots:
        scan.external_files(scan_roots)
    scan.leftovers(branches)
    used = collect_used_files(fio, root, lister, action=ACTION, among=CandidateNames(scan.names()))
    files = scan.orphans(used)
    if not used.has_metadata and scan.saw_files:
        raise no_metadata_refusal(root)
    return OrphanPlan(
        root, cutoff, now, files, _empty_dirs(fio.is_local, files, scan), used, scan.candidates, lister.listings,
        lister.distinct, external_roots=scan_roots,
        unscanned_external_roots=[] if external_paths else configured_roots(table.schema.options),
        tables_checked=tables_checked,
    )


def no_metadata_refusal(root: str) -> UnsafeRefused:
    return UnsafeRefused(
        f"{root}: no snapshot, tag or changelog could be found in any branch, yet the table holds data and "
        "manifest files; refusing to treat them all as orphans (if the table really never committed, "
        "drop its directory instead)"
    )


def scan_candidates(table: FileStoreTable, cutoff_millis: int) -> list[OrphanFile]:
    """Every file older than the cutoff where a removal looks (table areas, each branch's
    leftovers), used or not: what it deletes once nothing old is used (purge-files)."""
    lister = DirLister(table.file_io)
    scan = _Scan(table, lister, cutoff_millis)
    scan.table_files()
    scan.leftovers(list_branches(GuardedReader(table.file_io, table.path, ACTION), lister))
    return scan.files()


def _empty_dirs(is_local: bool, files: list[OrphanFile], scan: _Scan) -> list[str]:
    """Bucket and partition directories the plan leaves empty (or that already are), deepest
    first; only if the directory itself was last changed before the cutoff (a writer that
    just created it is about to put a file there). Object stores have no directories."""
    if not is_local:
        return []
    going = Counter(parent(f.path) for f in files if f.kind not in _UNCHECKED)
    gone: set[str] = set()

    def empties(d: str) -> bool:
        st = scan.dir_status.get(d)
        if st is None or not _old(st, scan.cutoff):
            return False
        return going[d.rstrip("/")] == scan.dir_files.get(d, 0) and all(s in gone for s in scan.dir_subdirs.get(d, []))

    out: list[str] = []
    for b in sorted(scan.bucket_dirs):
        if empties(b):
            gone.add(b)
            out.append(b)
    for level in reversed(scan.partition_dirs):  # deepest partition level first
        for p in sorted(level):
            if p in scan.dir_files and empties(p):
                gone.add(p)
                out.append(p)
    return out


# ---------------------------------------------------------------------------------------
# execute
# ---------------------------------------------------------------------------------------


def remove_orphans(table: FileStoreTable, plan: OrphanPlan, progress: StepProgress | None = None,
                   delete: Callable[..., None] = delete_in_order) -> OrphanResult:
    """Delete the plan's files after re-reading what the table uses now; then its empty dirs.
    ``progress`` counts the files deleted; ``delete`` is :func:`delete_in_order` or its Spark twin."""
    fio = table.file_io
    result = OrphanResult(plan)
    refresh_used_files(fio, plan.table_path, plan.used, ACTION)
    in_use = plan.used.uses([basename(f.path) for f in plan.files])
    for f, now_used in zip(plan.files, in_use, strict=True):
        used = f.kind not in _UNCHECKED and now_used
        # a directory is never a candidate by construction (listings filter them)
        (result.kept if used or (fio.is_local and fio.is_dir(f.path)) else result.deleted).append(f)
    delete(fio, result.deleted, lambda f: _PHASES[f.kind], Ticker(progress, len(result.deleted)).tick)
    dirs = plan.dirs
    if result.kept:
        kept_paths = {f.path for f in result.kept}
        dirs = [d for d in plan.dirs if not any(k.startswith(d.rstrip("/") + "/") for k in kept_paths)]
    roots = {r.rstrip("/") for r in (plan.table_path, parent(plan.table_path), *plan.external_roots)}
    result.dirs_removed = remove_empty_dirs(fio, dirs, keep=roots)
    return result
