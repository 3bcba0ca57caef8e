"""Snapshot and changelog expiration, as Java's ExpireSnapshotsImpl / ExpireChangelogImpl.

Expiration is where lake tools destroy data (apache/paimon#7710, #5229, #6978, #4743), so
the work is split in two:

* :func:`plan_expire` is PURE (reads only). It picks the range exactly as Java does and lists
  every file a run deletes, in deletion order, with its size, plus what holds each
  retained snapshot. Anything that decides what is still used (a snapshot in the range,
  the end snapshot, a tag, a branch, a consumer, their manifests) that cannot be read
  makes it raise :class:`UnsafeRefused` naming the file, before anything is deleted.
* :func:`apply_expire` deletes exactly the plan's list, in the order that keeps every
  retained snapshot and tag readable at every instant: data files, changelog files,
  manifests (contents before the list naming them), index files, statistics, then the
  snapshot files (copied to ``changelog/`` first when the changelog lifecycle is
  decoupled), then the EARLIEST hint. A kill at any point leaves only files no retained
  snapshot needs, and a re-run finishes the job (files already gone are skipped).

Deviations from Java, all on the safe side: the range starts at the earliest snapshot
FILE (not the EARLIEST hint, so snapshots stranded below a wrong hint or a gap are not
kept forever, apache/paimon#4743) and the expire limit counts existing snapshots; the
time rule is Java 1.x's (a snapshot is kept while its successor is younger than the
retention, so time travel to ``now - time-retained`` keeps working); files used by other
branches are protected; a data file the end snapshot still lists is never deleted.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..errors import CorruptMetadata, InvalidInput, NotFound, PaimonError, UnsafeRefused
from ..io import paths
from ..io.fileio import join

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexManifestEntry
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable
    from ..utils.rows import Rows

T = TypeVar("T")
INT_MAX = 2147483647

# kinds of planned deletions, in the order apply_expire runs them
DATA_FILE = "data-file"
EXTRA_FILE = "extra-file"
CHANGELOG_FILE = "changelog-file"
MANIFEST = "manifest"
MANIFEST_LIST = "manifest-list"
INDEX_FILE = "index-file"
INDEX_MANIFEST = "index-manifest"
STATISTICS = "statistics"
SNAPSHOT = "snapshot"
CHANGELOG = "changelog"  # a long-lived changelog/changelog-<id> metadata file

# deletion phases: files a retained snapshot could need only through a later phase's file
# come first (a manifest before the list naming it, an index file before its manifest)
PHASES = {DATA_FILE: 0, EXTRA_FILE: 0, CHANGELOG_FILE: 0, MANIFEST: 1, MANIFEST_LIST: 2, INDEX_FILE: 3,
          INDEX_MANIFEST: 4, STATISTICS: 5}


# ---------------------------------------------------------------------------------------
# policy
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ExpirePolicy:
    """What the user asked for; None falls back to the table's options (then Java's defaults)."""

    retain_max: int | None = None
    retain_min: int | None = None
    time_retained_millis: int | None = None  # a retention: cut-off now - this
    older_than_millis: int | None = None  # an absolute cut-off (``--older-than``)
    max_deletes: int | None = None
    changelog: bool = False  # expire long-lived changelogs instead of snapshots
    now_millis: int | None = None  # for tests; default: the clock


@dataclass(frozen=True)
class ResolvedPolicy:
    retain_max: int
    retain_min: int
    cutoff_millis: int  # snapshots committed before this are "old"
    time_retained: str  # how the cut-off was given (for messages)
    max_deletes: int
    changelog_retain_max: int
    changelog_retain_min: int
    changelog_cutoff_millis: int
    changelog_decoupled: bool
    consumer_changelog_only: bool
    produce_changelog: bool
    clean_empty_directories: bool
    now_millis: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "retain_max": self.retain_max, "retain_min": self.retain_min,
            "time_retained": self.time_retained, "cutoff_millis": self.cutoff_millis,
            "max_deletes": self.max_deletes, "changelog_decoupled": self.changelog_decoupled,
        }


def resolve_policy(table: FileStoreTable, policy: ExpirePolicy | None = None,
                   options: dict[str, str] | None = None) -> ResolvedPolicy:
    """Flags over table options over Java's defaults; bad values are InvalidInput."""
    from ..schema.options import CoreOptions, parse_int
    from ..utils.durations import parse_duration_millis

    policy = policy or ExpirePolicy()
    opts = CoreOptions({**table.schema.options, **(options or {})})

    def opt_int(key: str, default: int) -> int:
        v = opts.options.get(key)
        if v is None or v.strip() == "":
            return default
        if v.strip().lower() == "infinite":
            return INT_MAX
        return parse_int(v, key)

    def opt_dur(key: str, default: int) -> int:
        v = opts.options.get(key)
        return default if v is None else parse_duration_millis(v, key)

    now = int(time.time() * 1000) if policy.now_millis is None else policy.now_millis
    retain_max = policy.retain_max if policy.retain_max is not None else opt_int("snapshot.num-retained.max", INT_MAX)
    retain_min = policy.retain_min if policy.retain_min is not None else opt_int("snapshot.num-retained.min", 10)
    max_deletes = policy.max_deletes if policy.max_deletes is not None else opt_int("snapshot.expire.limit", 50)
    if policy.time_retained_millis is not None:
        time_ms = policy.time_retained_millis
        desc = f"{time_ms} ms"
    else:
        time_ms = opt_dur("snapshot.time-retained", 3_600_000)
        desc = f"snapshot.time-retained={opts.options.get('snapshot.time-retained', '1 h')}"
    cutoff = now - time_ms
    if policy.older_than_millis is not None:
        cutoff = policy.older_than_millis
        desc = f"older than {policy.older_than_millis} (epoch ms)"
        time_ms = max(0, now - cutoff)
    if retain_min < 1:
        raise InvalidInput(f"retain-min must be at least 1, got {retain_min}")
    if retain_max < retain_min:
        raise InvalidInput(f"retain-max ({retain_max}) must not be less than retain-min ({retain_min})")
    if max_deletes < 0:
        raise InvalidInput(f"max-deletes must not be negative, got {max_deletes}")
    if time_ms < 0:
        raise InvalidInput("time retained must not be negative")
    cl_max = opt_int("changelog.num-retained.max", retain_max)
    cl_min = opt_int("changelog.num-retained.min", retain_min)
    cl_time = opt_dur("changelog.time-retained", time_ms) if "changelog.time-retained" in opts.options else time_ms
    decoupled = cl_max > retain_max or cl_min > retain_min or cl_time > time_ms
    producer = (opts.options.get("changelog-producer") or "none").strip().lower()
    clean = opts.snapshot_clean_empty_directories
    return ResolvedPolicy(
        retain_max=retain_max, retain_min=retain_min, cutoff_millis=cutoff, time_retained=desc,
        max_deletes=max_deletes, changelog_retain_max=cl_max, changelog_retain_min=cl_min,
        changelog_cutoff_millis=now - cl_time, changelog_decoupled=decoupled,
        consumer_changelog_only=opts.get_bool("consumer.changelog-only", False),
        produce_changelog=producer != "none", clean_empty_directories=clean, now_millis=now,
    )


# ---------------------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FileDeletion:
    path: str
    kind: str
    bytes: int
    snapshot_id: int | None  # the snapshot (or changelog) whose expiry frees the file

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "kind": self.kind, "bytes": self.bytes, "snapshot_id": self.snapshot_id}


@dataclass
class ExpirePlan:
    """Everything a run will do, decided up front; ``files`` is the exact deletion order."""

    table_path: str
    branch: str | None
    mode: str  # "snapshot" | "changelog"
    policy: ResolvedPolicy
    earliest_id: int | None = None
    latest_id: int | None = None
    end_id: int | None = None  # first retained snapshot (exclusive end of the range)
    expired_ids: list[int] = field(default_factory=list)
    deletions: list[FileDeletion] = field(default_factory=list)  # everything but the metadata files
    metadata_files: list[FileDeletion] = field(default_factory=list)  # snapshot/changelog files, ascending
    changelog_copies: list[int] = field(default_factory=list)  # ids moved to changelog/ (decoupled)
    earliest_hint: int | None = None  # EARLIEST value to write (None: leave it)
    holds: dict[int, list[str]] = field(default_factory=dict)  # retained id -> reasons
    per_snapshot: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (files, bytes)
    notes: list[str] = field(default_factory=list)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    empty_dir_candidates: list[str] = field(default_factory=list)

    @property
    def files(self) -> list[FileDeletion]:
        return self.deletions + self.metadata_files

    @property
    def total_bytes(self) -> int:
        return sum(f.bytes for f in self.files)

    def summary(self) -> dict[str, Any]:
        return {
            "mode": self.mode, "earliest": self.earliest_id, "latest": self.latest_id,
            "expired": len(self.expired_ids),
            "range": [self.expired_ids[0], self.end_id] if self.expired_ids else None,
            "files": len(self.files), "bytes": self.total_bytes,
        }


@dataclass
class ExpireResult:
    plan: ExpirePlan | None
    deleted_files: int = 0
    deleted_bytes: int = 0
    expired: int = 0
    seconds: float = 0.0
    changelog: ExpireResult | None = None  # the automatic changelog expiry that followed
    error: str | None = None  # expire_after_commit: why expiry was refused (commit stands)


@dataclass(frozen=True)
class _LightFile:
    """The DataFileMeta fields expiry needs (names match DataFileMeta)."""

    file_name: str
    file_size: int
    extra_files: tuple[str, ...]
    file_source: int | None
    external_path: str | None


@dataclass(frozen=True)
class _LightEntry:
    kind: int
    partition: bytes
    bucket: int
    file: _LightFile


def read_light_manifest(data: bytes, path: str) -> list[_LightEntry]:
    """Decode a manifest reading only kind/partition/bucket/name/size/extra/source/path.

    Expiry reads many manifests (5,000 snapshots = thousands of Avro files); not building
    DataFileMeta objects (stats, keys) halves the cost of each.
    """
    import io

    import fastavro
    from fastavro.read import MAGIC

    raw = bytes(data)
    if raw[:4] != MAGIC:
        raise CorruptMetadata(path, f"not an Avro container file (magic {raw[:4].hex() or 'empty'})")
    try:
        records = [r for r in fastavro.reader(io.BytesIO(raw)) if r is not None]
    except Exception as e:  # noqa: BLE001 - any decode failure is corrupt metadata
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CorruptMetadata(path, f"cannot decode Avro: {msg}") from e
    out = []
    for r in records:
        v = r.get("_VERSION")
        if v is not None and v != 2:
            raise CorruptMetadata(path, f"unsupported manifest _VERSION {v}, expected 2")
        f = r.get("_FILE")
        if f is None or r.get("_KIND") not in (0, 1):
            raise CorruptMetadata(path, "manifest entry has no _FILE record or a bad _KIND")
        extra = tuple(paths.check_file_name(x, "_EXTRA_FILES entry", path) for x in f.get("_EXTRA_FILES") or ())
        out.append(_LightEntry(
            kind=r["_KIND"], partition=bytes(r["_PARTITION"]), bucket=r["_BUCKET"],
            file=_LightFile(paths.check_file_name(f["_FILE_NAME"], "_FILE_NAME", path), f["_FILE_SIZE"], extra,
                            f.get("_FILE_SOURCE"), f.get("_EXTERNAL_PATH")),
        ))
    return out


@dataclass(frozen=True)
class _LightMeta:
    file_name: str
    file_size: int
    num_deleted_files: int | None = None


def read_light_list(data: bytes, path: str) -> list[_LightMeta]:
    """A manifest list reading only the manifest names and sizes (see read_light_manifest)."""
    import io

    import fastavro
    from fastavro.read import MAGIC

    raw = bytes(data)
    if raw[:4] != MAGIC:
        raise CorruptMetadata(path, f"not an Avro container file (magic {raw[:4].hex() or 'empty'})")
    try:
        records = [r for r in fastavro.reader(io.BytesIO(raw)) if r is not None]
        metas = [_LightMeta(r["_FILE_NAME"], r["_FILE_SIZE"], r.get("_NUM_DELETED_FILES")) for r in records]
    except Exception as e:  # noqa: BLE001 - any decode failure is corrupt metadata
        msg = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        raise CorruptMetadata(path, f"cannot decode Avro: {msg}") from e
    for m in metas:
        paths.check_file_name(m.file_name, "_FILE_NAME", path)
    return metas


class _Reader:
    """Metadata reads for planning: fail-closed by default, tolerant for expiring files."""

    def __init__(self, table: FileStoreTable) -> None:
        self.table = table
        self.file_io = table.file_io
        self.manifest_dir = paths.manifest_dir(table.path)
        self._lists: dict[str, list[_LightMeta] | None] = {}
        self._manifests: dict[str, list[_LightEntry] | None] = {}
        self._part_dirs: dict[bytes, str] = {}
        self._sizes: dict[str, int] = {}

    # -- fail-closed wrappers ----------------------------------------------------------------

    @staticmethod
    def refuse(path: str, problem: str) -> UnsafeRefused:
        return UnsafeRefused(f"{path}: {problem}; refusing to expire (nothing was deleted)")

    def guarded(self, path: str, fn: Callable[[], T], missing_ok: bool = False) -> T | None:
        try:
            return fn()
        except CorruptMetadata as e:
            raise self.refuse(e.path, e.problem) from e
        except NotFound as e:
            if missing_ok:
                return None
            raise self.refuse(path, "cannot be read (missing)") from e
        except UnsafeRefused:
            raise
        except PaimonError as e:
            raise self.refuse(path, f"cannot be read ({e})") from e
        except Exception as e:  # noqa: BLE001 - any decode failure must stop deletion
            raise self.refuse(path, f"cannot be read ({type(e).__name__}: {e})") from e

    def manifest_list(self, name: str, missing_ok: bool = False) -> list[_LightMeta] | None:
        if name not in self._lists:
            path = join(self.manifest_dir, name)
            self._lists[name] = self.guarded(  # type: ignore[assignment]
                path, lambda: read_light_list(self.file_io.read_bytes(path), path), missing_ok)
        return self._lists[name]

    def manifest(self, name: str, missing_ok: bool = False) -> list[_LightEntry] | None:
        if name in self._manifests:
            return self._manifests[name]
        path = join(self.manifest_dir, name)
        out = self.guarded(path, lambda: read_light_manifest(self.file_io.read_bytes(path), path), missing_ok)
        self._manifests[name] = out  # type: ignore[assignment]
        return out  # type: ignore[return-value]

    def entries_of_lists(self, names: Iterable[str], missing_ok: bool = False) -> list[_LightEntry] | None:
        """All entries of the manifests of these lists; None if any piece is missing (missing_ok)."""
        out: list[_LightEntry] = []
        for ln in names:
            metas = self.manifest_list(ln, missing_ok)
            if metas is None:
                return None
            for m in metas:
                es = self.manifest(m.file_name, missing_ok)
                if es is None:
                    return None
                out.extend(es)
        return out

    def live_files(self, snap: Snapshot) -> set[tuple[bytes, int, str]]:
        """(partition, bucket, file name) of the snapshot's live data files (fail-closed)."""
        from ..manifest.manifest import FileKind

        entries = self.entries_of_lists([snap.base_manifest_list, snap.delta_manifest_list])
        assert entries is not None
        live: dict[tuple[bytes, int, str], int] = {}
        for e in entries:
            k = (e.partition, e.bucket, e.file.file_name)
            if e.kind == FileKind.ADD:
                live[k] = 1
            else:
                live.pop(k, None)
        return set(live)

    def index_entries(self, name: str, missing_ok: bool = False) -> list[IndexManifestEntry] | None:
        from ..manifest.index_manifest import IndexManifestFile

        path = join(self.manifest_dir, name)
        return self.guarded(path, lambda: IndexManifestFile(self.file_io, self.manifest_dir).read(name), missing_ok)

    def size(self, path: str, known: int | None = None) -> int:
        if known is not None:
            return int(known)
        if path not in self._sizes:
            try:
                self._sizes[path] = self.file_io.file_size(path)
            except NotFound:
                self._sizes[path] = 0
        return self._sizes[path]

    # -- paths -------------------------------------------------------------------------------

    def bucket_path(self, partition: bytes, bucket: int) -> str:
        part = self._part_dirs.get(partition)
        if part is None:
            schema = self.table.schema
            if schema.partition_keys:
                from ..data.binary_row import deserialize

                part = paths.partition_path_for(schema, deserialize(partition, schema.partition_types))
            else:
                part = ""
            self._part_dirs[partition] = part
        return join(self.table.path, part, paths.bucket_dir(bucket)) if part else join(
            self.table.path, paths.bucket_dir(bucket)
        )

    def data_path(self, e: _LightEntry) -> str:
        if e.file.external_path:
            return e.file.external_path
        return join(self.bucket_path(e.partition, e.bucket), e.file.file_name)

    def index_path(self, meta: Any) -> str:
        return meta.external_path or join(paths.index_dir(self.table.path), meta.file_name)


def _snapshot_reader(table: FileStoreTable, reader: _Reader, changelog: bool = False) -> Any:
    from ..refs.snapshot import ChangelogManager

    sm = table.snapshot_manager
    if changelog:
        sm = ChangelogManager(table.file_io, table.path, table.branch)
    return sm


def _read_snapshot(reader: _Reader, sm: Any, sid: int) -> Snapshot | None:
    """A snapshot of the range (None if it vanished: a concurrent expire); corrupt -> refuse."""
    return reader.guarded(sm.snapshot_path(sid), lambda: sm.try_snapshot(sid), missing_ok=True)


def _cached_snapshots(reader: _Reader, sm: Any) -> Callable[[int], Snapshot | None]:
    """:func:`_read_snapshot` remembered per id: planning walks the range more than once."""
    cache: dict[int, Snapshot] = {}

    def read(sid: int) -> Snapshot | None:
        s = cache.get(sid)
        if s is None:
            s = _read_snapshot(reader, sm, sid)
            if s is not None:
                cache[sid] = s
        return s

    return read


def _tagged_snapshots(table: FileStoreTable, reader: _Reader) -> tuple[list[Snapshot], dict[int, list[str]]]:
    """Distinct tagged snapshots sorted by id, and id -> tag names; any unreadable tag refuses."""
    tm = table.tag_manager
    names = reader.guarded(tm.tag_dir, tm.tag_names)
    snaps: dict[int, Snapshot] = {}
    by_id: dict[int, list[str]] = {}
    for name in names or []:
        tag = reader.guarded(tm.tag_path(name), lambda n=name: tm.try_tag(n), missing_ok=True)
        if tag is None:
            continue  # deleted while listing
        snaps.setdefault(tag.snapshot.id, tag.snapshot)
        by_id.setdefault(tag.snapshot.id, []).append(name)
    return [snaps[i] for i in sorted(snaps)], by_id


def _consumers(table: FileStoreTable, reader: _Reader) -> dict[str, int]:
    cm = table.consumer_manager
    ids = reader.guarded(cm.consumer_dir, cm.consumer_ids) or []
    out: dict[str, int] = {}
    for cid in ids:
        nxt = reader.guarded(cm.consumer_path(cid), lambda c=cid: cm.consumer(c), missing_ok=True)
        if nxt is not None:
            out[cid] = nxt
    return out


@dataclass
class _Protected:
    """Files other branches (and, expiring a branch, main) still use: never deleted."""

    data: set[tuple[bytes, int, str]] = field(default_factory=set)
    names: set[str] = field(default_factory=set)  # manifest lists, manifests, index files, stats
    holders: dict[int, list[str]] = field(default_factory=dict)  # our snapshot id -> "branch x"


def _other_refs(table: FileStoreTable, reader: _Reader) -> _Protected:
    """What every OTHER branch references (Java ignores branches; we refuse to break them).

    Files a branch shares with us come from the snapshot it was created from, so its
    earliest snapshot's live files, the files later snapshots added, its tags' live files,
    and every manifest/index/statistics name its snapshots and tags reference cover them.
    """
    from ..refs.branches import BranchManager
    from ..refs.snapshot import SnapshotManager
    from ..refs.tags import TagManager

    prot = _Protected()
    bm = BranchManager(table.file_io, table.path)
    names = reader.guarded(bm.branch_dir, bm.branch_names) or []
    others: list[str | None] = [b for b in names if b != table.branch]
    if table.branch is not None:
        others.append(None)  # main
    if not others:
        return prot
    from ..manifest.manifest import FileKind

    for br in others:
        label = "main" if br is None else br
        sm = SnapshotManager(table.file_io, table.path, br)
        ids = reader.guarded(sm.snapshot_dir, sm.snapshot_ids) or []
        tm = TagManager(table.file_io, table.path, br)
        snaps: list[Snapshot] = []
        for sid in ids:
            s = _read_snapshot(reader, sm, sid)
            if s is not None:
                snaps.append(s)
        tag_snaps: list[Snapshot] = []
        for tn in reader.guarded(tm.tag_dir, tm.tag_names) or []:
            t = reader.guarded(tm.tag_path(tn), lambda n=tn: tm.try_tag(n), missing_ok=True)
            if t is not None:
                tag_snaps.append(t.snapshot)
        full = ([snaps[0]] if snaps else []) + tag_snaps
        for s in full:
            prot.data |= reader.live_files(s)
        for s in snaps[1:]:
            for e in reader.entries_of_lists([s.delta_manifest_list]) or []:
                if e.kind == FileKind.ADD:
                    prot.data.add((e.partition, e.bucket, e.file.file_name))
        for s in snaps + tag_snaps:
            prot.names |= _manifest_names(reader, s, include_changelog=True)
        if snaps:
            # the snapshot the branch was created from (same id in our history) is held by it
            prot.holders.setdefault(snaps[0].id, []).append(f"branch {label}")
        for t in tag_snaps:
            prot.holders.setdefault(t.id, []).append(f"branch {label}")
    return prot


def _manifest_names(reader: _Reader, snap: Snapshot, include_changelog: bool = False) -> set[str]:
    """Java's manifestSkippingSet for one snapshot: lists, their manifests, index, statistics."""
    out = {snap.base_manifest_list, snap.delta_manifest_list}
    for ln in (snap.base_manifest_list, snap.delta_manifest_list):
        for m in reader.manifest_list(ln) or []:
            out.add(m.file_name)
    if include_changelog and snap.changelog_manifest_list:
        # Java never protects a tag's changelog list, so one copied into a branch may be gone
        out.add(snap.changelog_manifest_list)
        for m in reader.manifest_list(snap.changelog_manifest_list, missing_ok=True) or []:
            out.add(m.file_name)
    if snap.index_manifest:
        out.add(snap.index_manifest)
        for ie in reader.index_entries(snap.index_manifest) or []:
            out.add(ie.index_file.file_name)
    if snap.statistics:
        out.add(snap.statistics)
    return out


def _beyond_latest(tags: list[Snapshot], latest: int) -> list[Snapshot]:
    """Tags past the latest snapshot (a killed rollback leaves them): they have no place in the
    history, so everything they use is kept."""
    return [t for t in tags if t.id > latest]


def _tag_skipper(reader: _Reader, tags: list[Snapshot], beyond: list[Snapshot]
                 ) -> Callable[[int], set[tuple[bytes, int, str]]]:
    """Java's tag data-file skipper: for an expiring snapshot, the live files of the tag before
    it (read once per tag), plus those of the tags past the latest snapshot."""
    cache: dict[int, set[tuple[bytes, int, str]]] = {}
    beyond_live: set[tuple[bytes, int, str]] = set().union(*(reader.live_files(t) for t in beyond))

    def skip(sid: int) -> set[tuple[bytes, int, str]]:
        ti = _previous_index(tags, sid)
        if ti < 0:
            return beyond_live
        t = tags[ti]
        if t.id not in cache:
            cache[t.id] = reader.live_files(t)
        return cache[t.id] | beyond_live if beyond_live else cache[t.id]

    return skip


def _previous_index(sorted_snaps: list[Snapshot], target: int, or_equal: bool = False) -> int:
    for i in range(len(sorted_snaps) - 1, -1, -1):
        sid = sorted_snaps[i].id
        if sid < target or (or_equal and sid == target):
            return i
    return -1


def _overlapped(tags: list[Snapshot], begin: int, end_excl: int) -> list[Snapshot]:
    """Java's findOverlappedSnapshots: tags from the last one <= begin up to the last < end."""
    right = _previous_index(tags, end_excl)
    if right < 0:
        return []
    left = max(_previous_index(tags, begin, or_equal=True), 0)
    return tags[left : right + 1]


def plan_expire(table: FileStoreTable, policy: ExpirePolicy | None = None,
                options: dict[str, str] | None = None, *, explain: bool = False) -> ExpirePlan:
    """Decide what a run deletes (reads only). See the module docs for the rules."""
    rp = resolve_policy(table, policy, options)
    if policy is not None and policy.changelog:
        from .changelog_expire import plan_changelog_expire

        return plan_changelog_expire(table, rp)
    return _plan_snapshots(table, rp, explain)


def _plan_snapshots(table: FileStoreTable, rp: ResolvedPolicy, explain: bool = False) -> ExpirePlan:
    from ..manifest.manifest import FileKind, FileSource

    reader = _Reader(table)
    sm = table.snapshot_manager
    plan = ExpirePlan(table.path, table.branch, "snapshot", rp)
    ids = reader.guarded(sm.snapshot_dir, sm.snapshot_ids) or []
    tags, tag_names = _tagged_snapshots(table, reader)
    consumers = _consumers(table, reader)
    # other branches are read only when something expires (or to explain holds): writers
    # run this after every commit
    prot = _other_refs(table, reader) if explain else _Protected()
    plan.fingerprint = _fingerprint(tag_names, consumers, prot)
    if not ids:
        return plan
    latest, earliest = ids[-1], ids[0]
    plan.latest_id, plan.earliest_id = latest, earliest
    _gap_notes(plan, ids, sm, reader)

    # -- range (ExpireSnapshotsImpl.expire) ---------------------------------------------------
    lo = max(latest - rp.retain_max + 1, earliest)
    max_excl = latest - rp.retain_min + 1
    why: dict[str, int] = {"retain-min": max_excl}
    if consumers and not rp.consumer_changelog_only:
        c_min = min(consumers.values())
        if c_min < max_excl:
            max_excl = c_min
        why["consumer"] = c_min
    if len(ids) > rp.max_deletes:
        lim = ids[rp.max_deletes]
        why["expire-limit"] = lim
        max_excl = min(max_excl, lim)
    else:
        why["expire-limit"] = latest + 1
    snap = _cached_snapshots(reader, sm)

    end = max_excl
    time_end: int | None = None
    for i, sid in enumerate(ids):
        if sid < lo:
            continue
        if sid >= max_excl:
            break
        nxt = snap(ids[i + 1])
        if nxt is not None and nxt.time_millis >= rp.cutoff_millis:
            end = sid
            time_end = sid
            break
    if time_end is not None:
        why["time-retained"] = time_end
    else:
        # the first snapshot whose successor is young (for explaining holds only)
        why["time-retained"] = _first_time_held(ids, snap, rp.cutoff_millis, latest)
    end_id = next((i for i in ids if i >= end), None)
    if end_id is None or end <= earliest:
        plan.end_id = earliest
        _fill_holds(plan, ids, why, consumers, tag_names, prot, latest)
        if not reader.file_io.exists(join(sm.snapshot_dir, "EARLIEST")):
            plan.earliest_hint = earliest  # as Java: write the hint so readers find it directly
        return plan
    expired = [i for i in ids if i < end_id]
    plan.end_id = end_id
    end_snap = snap(end_id)
    if end_snap is None:
        raise reader.refuse(sm.snapshot_path(end_id), "the first retained snapshot vanished while planning")
    exp_snaps: list[Snapshot] = []
    for sid in expired:
        s = snap(sid)
        if s is not None:
            exp_snaps.append(s)
    if not exp_snaps:
        return plan
    begin = exp_snaps[0].id
    plan.expired_ids = [s.id for s in exp_snaps]
    if not explain:
        prot = _other_refs(table, reader)
        plan.fingerprint = _fingerprint(tag_names, consumers, prot)
    _fill_holds(plan, ids, why, consumers, tag_names, prot, latest)

    # -- what must survive (fail closed) ---------------------------------------------------
    end_live = reader.live_files(end_snap)
    if not end_live and (end_snap.total_record_count or 0) > 0:
        raise reader.refuse(
            sm.snapshot_path(end_id),
            f"reports {end_snap.total_record_count} records but its manifests list no live data file "
            "(an empty used-file set on a table with data)",
        )
    seen: set[str] = set()

    def add(path: str, kind: str, size: int, sid: int | None) -> None:
        if path in seen:
            return
        seen.add(path)
        plan.deletions.append(FileDeletion(path, kind, int(size), sid))

    # -- 1. data files deleted by the deltas of (begin, end] ----------------------------------
    data_snaps = [s for s in exp_snaps if s.id != begin] + [end_snap]
    touched_buckets: dict[str, None] = {}
    beyond = _beyond_latest(tags, latest)
    tag_skip = _tag_skipper(reader, tags, beyond)
    for s in data_snaps:
        skip = tag_skip(s.id)
        metas = reader.manifest_list(s.delta_manifest_list, missing_ok=s.id != end_id)
        if metas is not None and all(m.num_deleted_files == 0 for m in metas):
            continue  # an append-only delta deletes nothing (its ADDs can only cancel its own DELETEs)
        entries = reader.entries_of_lists([s.delta_manifest_list], missing_ok=s.id != end_id)
        if entries is None:
            plan.notes.append(
                f"snapshot {s.id}: a delta manifest is already gone (an interrupted run?); "
                "its deleted data files, if any are left, are orphans now"
            )
            continue
        pending: dict[tuple[bytes, int, str], _LightEntry] = {}
        for e in entries:
            k = (e.partition, e.bucket, e.file.file_name)
            if e.kind == FileKind.ADD:
                pending.pop(k, None)
            else:
                pending[k] = e
        for k, e in pending.items():
            if k in skip:
                continue
            if rp.changelog_decoupled and not rp.produce_changelog:
                src = e.file.file_source
                if src is None or src == FileSource.APPEND:
                    continue  # left to changelog expiration
            if k in end_live:
                raise reader.refuse(
                    sm.snapshot_path(s.id),
                    f"deletes data file {e.file.file_name} that retained snapshot {end_id} still lists "
                    "(inconsistent history)",
                )
            if k in prot.data:
                continue  # another branch still uses it
            bp = reader.bucket_path(e.partition, e.bucket)
            touched_buckets[bp] = None
            add(reader.data_path(e), DATA_FILE, e.file.file_size, s.id)
            for x in e.file.extra_files:
                xp = join(bp, x)
                add(xp, EXTRA_FILE, reader.size(xp), s.id)

    # -- 2. changelog files of [begin, end) (coupled lifecycle) -------------------------------
    if not rp.changelog_decoupled:
        for s in exp_snaps:
            if not s.changelog_manifest_list:
                continue
            entries = reader.entries_of_lists([s.changelog_manifest_list], missing_ok=True)
            if entries is None:
                plan.notes.append(f"snapshot {s.id}: changelog manifests already gone")
                continue
            for e in entries:
                if e.kind == FileKind.ADD:
                    bp = reader.bucket_path(e.partition, e.bucket)
                    touched_buckets[bp] = None
                    add(join(bp, e.file.file_name), CHANGELOG_FILE, e.file.file_size, s.id)
    if rp.clean_empty_directories:
        plan.empty_dir_candidates = list(touched_buckets)

    # -- 3. manifests, lists, index files, statistics not used by the end snapshot / tags -----
    skipping = _manifest_names(reader, end_snap)
    for t in _overlapped(tags, begin, end_id) + beyond:
        skipping |= _manifest_names(reader, t)
    skipping |= prot.names
    delete_data_lists = not rp.changelog_decoupled or rp.produce_changelog
    delete_changelog_list = not rp.changelog_decoupled
    for s in exp_snaps:
        lists: list[tuple[str, int | None]] = []
        if delete_data_lists:
            lists += [(s.base_manifest_list, s.base_manifest_list_size),
                      (s.delta_manifest_list, s.delta_manifest_list_size)]
        if delete_changelog_list and s.changelog_manifest_list:
            lists.append((s.changelog_manifest_list, s.changelog_manifest_list_size))
        for ln, lsize in lists:
            _plan_list(plan, reader, ln, lsize, skipping, seen, s.id)
        _plan_index(plan, reader, s, skipping, seen)
        if s.statistics and s.statistics not in skipping:
            p = join(paths.statistics_dir(table.path), s.statistics)
            if p not in seen:
                seen.add(p)
                plan.deletions.append(FileDeletion(p, STATISTICS, reader.size(p), s.id))

    # -- 4./5. snapshot files, EARLIEST ---------------------------------------------------------
    for s in exp_snaps:
        p = sm.snapshot_path(s.id)
        plan.metadata_files.append(FileDeletion(p, SNAPSHOT, reader.size(p), s.id))
        if rp.changelog_decoupled:
            plan.changelog_copies.append(s.id)
    plan.earliest_hint = end_id
    _per_snapshot(plan)
    return plan


def _plan_list(plan: ExpirePlan, reader: _Reader, name: str, size: int | None, skipping: set[str],
               seen: set[str], sid: int) -> None:
    """A manifest list: its manifests first, then the list itself (contents before container)."""
    metas = reader.manifest_list(name, missing_ok=True)
    if metas is None:
        if name not in skipping:
            plan.notes.append(f"snapshot {sid}: manifest list {name} is already gone")
        return
    for m in metas:
        if m.file_name in skipping:
            continue
        p = join(reader.manifest_dir, m.file_name)
        if p not in seen:
            seen.add(p)
            plan.deletions.append(FileDeletion(p, MANIFEST, int(m.file_size), sid))
    if name not in skipping:
        p = join(reader.manifest_dir, name)
        if p not in seen:
            seen.add(p)
            plan.deletions.append(FileDeletion(p, MANIFEST_LIST, reader.size(p, size), sid))


def _plan_index(plan: ExpirePlan, reader: _Reader, s: Snapshot, skipping: set[str], seen: set[str]) -> None:
    if not s.index_manifest:
        return
    entries = reader.index_entries(s.index_manifest, missing_ok=True)
    if entries is None:
        return  # Java skips a missing index manifest too
    for ie in entries:
        f = ie.index_file
        if f.file_name in skipping:
            continue
        p = reader.index_path(f)
        if p not in seen:
            seen.add(p)
            plan.deletions.append(FileDeletion(p, INDEX_FILE, int(f.file_size), s.id))
    if s.index_manifest not in skipping:
        p = join(reader.manifest_dir, s.index_manifest)
        if p not in seen:
            seen.add(p)
            plan.deletions.append(FileDeletion(p, INDEX_MANIFEST, reader.size(p), s.id))


def _first_time_held(ids: list[int], snap: Callable[[int], Snapshot | None], cutoff: int, latest: int) -> int:
    """Smallest id held by the time rule (its successor is younger than the cut-off);
    ``latest + 1`` when none is (the latest itself is held by retain-min, never by time)."""
    # binary search over positions: commit times grow with ids
    lo, hi = 0, len(ids) - 2
    ans = latest + 1
    while lo <= hi:
        mid = (lo + hi) // 2
        nxt = snap(ids[mid + 1])
        if nxt is None or nxt.time_millis >= cutoff:
            ans = ids[mid]
            hi = mid - 1
        else:
            lo = mid + 1
    return ans


def _fill_holds(plan: ExpirePlan, ids: list[int], why: dict[str, int], consumers: dict[str, int],
                tag_names: dict[int, list[str]], prot: _Protected, latest: int) -> None:
    rp = plan.policy
    first_kept = plan.end_id if plan.end_id is not None else ids[0]
    c_sorted = sorted(consumers.items(), key=lambda kv: kv[1])
    for sid in ids:
        if sid < first_kept:
            continue
        reasons: list[str] = []
        if sid == latest:
            reasons.append("latest")
        if sid >= why["retain-min"]:
            reasons.append(f"retain-min ({rp.retain_min})")
        if sid >= why.get("time-retained", latest + 1):
            reasons.append("time-retained")
        for cid, nxt in c_sorted:
            if sid >= nxt and not rp.consumer_changelog_only:
                reasons.append(f"consumer {cid}")
        if sid >= why["expire-limit"]:
            reasons.append(f"expire-limit ({rp.max_deletes} per run)")
        for name in tag_names.get(sid, []):
            reasons.append(f"tag {name}")
        for h in prot.holders.get(sid, []):
            reasons.append(h)
        plan.holds[sid] = reasons


def _per_snapshot(plan: ExpirePlan) -> None:
    """Also puts ``deletions`` in execution order (phase by phase, stable)."""
    plan.deletions.sort(key=lambda f: PHASES[f.kind])
    for f in plan.files:
        if f.snapshot_id is None:
            continue
        n, b = plan.per_snapshot.get(f.snapshot_id, (0, 0))
        plan.per_snapshot[f.snapshot_id] = (n + 1, b + f.bytes)


def _gap_notes(plan: ExpirePlan, ids: list[int], sm: Any, reader: _Reader) -> None:
    gaps = [(a, b) for a, b in zip(ids, ids[1:]) if b != a + 1]
    for a, b in gaps[:5]:
        plan.notes.append(f"snapshot gap: {a + 1}..{b - 1} missing; expiry continues across it")
    hint = sm._read_hint("EARLIEST")
    if hint is not None and hint > ids[0] and hint in ids:
        plan.notes.append(
            f"EARLIEST hint says {hint} but snapshot files from {ids[0]} exist; they are expired too"
        )


def _fingerprint(tag_names: dict[int, list[str]], consumers: dict[str, int], prot: _Protected) -> dict[str, Any]:
    return {
        "tags": sorted((n, i) for i, ns in tag_names.items() for n in ns),
        "consumers": sorted(consumers.items()),
        "branch_files": len(prot.data),
        "branch_names": len(prot.names),
    }


# ---------------------------------------------------------------------------------------
# apply
# ---------------------------------------------------------------------------------------


def _revalidate(table: FileStoreTable, plan: ExpirePlan) -> None:
    """Refuse if tags, consumers or branches changed since planning (a new tag on an expiring
    snapshot would otherwise lose its files)."""
    reader = _Reader(table)
    _, tag_names = _tagged_snapshots(table, reader)
    consumers = _consumers(table, reader)
    prot = _other_refs(table, reader)
    now = _fingerprint(tag_names, consumers, prot)
    # consumers move forward all the time (streaming readers); only one now reading below the
    # range end matters
    same = {k: v for k, v in now.items() if k != "consumers"} == {
        k: v for k, v in plan.fingerprint.items() if k != "consumers"}
    behind = [c for c, nxt in consumers.items()
              if plan.end_id is not None and nxt < plan.end_id and not plan.policy.consumer_changelog_only
              and plan.mode == "snapshot"]
    if not same or behind:
        what = f"consumer {behind[0]} now reads below snapshot {plan.end_id}" if behind and same else \
            "tags or branches changed"
        raise UnsafeRefused(
            f"{table.path}: {what} since the expire plan was made; re-run expire (nothing was deleted)"
        )
    if plan.end_id is not None and plan.expired_ids:
        sm = _snapshot_reader(table, reader, plan.mode == "changelog")
        if not sm.snapshot_exists(plan.end_id):
            raise UnsafeRefused(
                f"{sm.snapshot_path(plan.end_id)}: the first retained {sm.what} is gone since planning; "
                "re-run expire (nothing was deleted)"
            )


def apply_expire(table: FileStoreTable, plan: ExpirePlan,
                 on_delete: Callable[[FileDeletion], None] | None = None) -> ExpireResult:
    """Delete exactly the plan's files in its order, then move/delete metadata, then EARLIEST."""
    from ..refs.snapshot import ChangelogManager

    started = time.monotonic()
    fio = table.file_io
    result = ExpireResult(plan)
    if not plan.expired_ids:
        if plan.earliest_hint is not None:
            _write_earliest(table, plan)
        result.seconds = time.monotonic() - started
        return result
    _revalidate(table, plan)

    import threading

    lock = threading.Lock()

    def delete(f: FileDeletion) -> None:
        fio.delete(f.path)  # a file already gone (an earlier interrupted run) is fine
        with lock:
            result.deleted_files += 1
            result.deleted_bytes += f.bytes
        if on_delete is not None:
            on_delete(f)

    # phase by phase (see PHASES); inside a phase the order does not matter, so the files go
    # in parallel (deletes are latency-bound: 120,000 local unlinks take ~25 s one by one)
    workers = 16 if not fio.is_local else 8
    groups: dict[int, list[FileDeletion]] = {}
    for f in plan.deletions:
        groups.setdefault(PHASES[f.kind], []).append(f)
    for phase in sorted(groups):
        _delete_group(groups[phase], delete, workers)
        if phase == 0:
            for d in plan.empty_dir_candidates:
                if fio.delete_empty_dir(d):
                    parent = d.rsplit("/", 1)[0]
                    while parent.rstrip("/") != table.path.rstrip("/") and fio.delete_empty_dir(parent):
                        parent = parent.rsplit("/", 1)[0]
    cm = ChangelogManager(fio, table.path, table.branch) if plan.changelog_copies else None
    copies = set(plan.changelog_copies)
    for f in plan.metadata_files:
        if cm is not None and f.snapshot_id in copies:
            try:
                data_bytes = fio.read_bytes(f.path)
            except NotFound:
                data_bytes = None  # moved by an earlier interrupted run
            if data_bytes is not None:
                fio.write_bytes(cm.snapshot_path(f.snapshot_id), data_bytes, overwrite=True)
                cm.commit_latest_hint(f.snapshot_id)
        delete(f)
    result.expired = len(plan.expired_ids)
    _write_earliest(table, plan)
    result.seconds = time.monotonic() - started
    return result


def _delete_group(files: list[FileDeletion], delete: Callable[[FileDeletion], None], workers: int) -> None:
    """Delete one phase's files with a thread pool; the first failure stops the phase (queued
    chunks are cancelled) so a later phase never starts after an error."""
    if workers <= 1 or len(files) < 64:
        for f in files:
            delete(f)
        return
    from ..utils.workers import worker_pool

    chunk = max(16, len(files) // (workers * 8))
    parts = [files[i : i + chunk] for i in range(0, len(files), chunk)]

    def run(part: list[FileDeletion]) -> None:
        for f in part:
            delete(f)

    with worker_pool(workers, "paimon-expire") as pool:
        futures = [pool.submit(run, p) for p in parts]
        for fu in futures:
            fu.result()


def _write_earliest(table: FileStoreTable, plan: ExpirePlan) -> None:
    if plan.earliest_hint is None:
        return
    from ..refs.snapshot import ChangelogManager

    if plan.mode == "changelog":
        ChangelogManager(table.file_io, table.path, table.branch).commit_earliest_hint(plan.earliest_hint)
    else:
        table.snapshot_manager.commit_earliest_hint(plan.earliest_hint)


def expire(table: FileStoreTable, policy: ExpirePolicy | None = None,
           options: dict[str, str] | None = None) -> ExpireResult:
    """Plan and apply in one go."""
    plan = plan_expire(table, policy, options)
    return apply_expire(table, plan)


def expire_after_commit(table: FileStoreTable, options_overrides: dict[str, str] | None = None) -> ExpireResult | None:
    """What Java writers do after a commit: expire snapshots, then changelogs when decoupled.

    Skipped (None) with ``write-only=true``. A refusal does not undo the commit: it is
    returned in ``error`` for the caller to show as a warning.
    """
    from ..schema.options import CoreOptions

    opts = CoreOptions({**table.schema.options, **(options_overrides or {})})
    if opts.write_only:
        return None
    try:
        res = expire(table, ExpirePolicy(), options_overrides)
        if res.plan is not None and res.plan.policy.changelog_decoupled:
            res.changelog = expire(table, ExpirePolicy(changelog=True), options_overrides)
        return res
    except PaimonError as e:  # the commit stands; the caller shows this as a warning
        return ExpireResult(None, error=str(e))


# ---------------------------------------------------------------------------------------
# explain: inspect expiry / inspect table
# ---------------------------------------------------------------------------------------

EXPIRY_COLUMNS = ["snapshot_id", "commit_kind", "commit_time", "will_expire", "held_by",
                  "delete_files", "delete_bytes"]


def expiry_report(table: FileStoreTable, at: Any = None, policy: ExpirePolicy | None = None) -> Rows:
    """Per snapshot: expires on the next run (and what it frees), or what holds it."""
    from ..data.java_format import local_datetime_from_millis
    from ..utils.rows import Rows

    try:
        plan = plan_expire(table, policy, explain=True)
    except UnsafeRefused as e:
        if isinstance(e.__cause__, (CorruptMetadata, NotFound)):
            raise e.__cause__ from None  # a report says what is wrong (exit 4), it refuses nothing
        raise
    sm = table.snapshot_manager
    expired = set(plan.expired_ids)
    rows = []
    for sid in sm.snapshot_ids():
        s = sm.try_snapshot(sid)
        if s is None:
            continue
        n, b = plan.per_snapshot.get(sid, (0, 0))
        rows.append({
            "snapshot_id": sid,
            "commit_kind": s.commit_kind,
            "commit_time": local_datetime_from_millis(s.time_millis),
            "will_expire": sid in expired,
            "held_by": None if sid in expired else ", ".join(plan.holds.get(sid, [])) or "-",
            "delete_files": n if sid in expired else 0,
            "delete_bytes": b if sid in expired else 0,
        })
    return Rows(EXPIRY_COLUMNS, rows)


def snapshot_health(table: FileStoreTable) -> list[str]:
    """Problems ``inspect table`` flags: id gaps, wrong EARLIEST/LATEST hints (apache/paimon#4743)."""
    from ..refs.snapshot import ChangelogManager

    out: list[str] = []
    for sm, what in ((table.snapshot_manager, "snapshot"),
                     (ChangelogManager(table.file_io, table.path, table.branch), "changelog")):
        ids = sm.snapshot_ids()
        hints = {}
        for name in ("EARLIEST", "LATEST"):
            p = join(sm.snapshot_dir, name)
            try:
                text = table.file_io.read_bytes(p).decode("utf-8", "replace").strip()
            except NotFound:
                hints[name] = None
                continue
            if not text.lstrip("-").isdigit():
                out.append(f"{what} {name} hint is not a number: {text[:20]!r}")
                hints[name] = None
            else:
                hints[name] = int(text)
        if not ids:
            continue
        gaps = [(a, b) for a, b in zip(ids, ids[1:]) if b != a + 1]
        for a, b in gaps[:10]:
            rng = f"{a + 1}" if b - a == 2 else f"{a + 1}..{b - 1}"
            out.append(f"{what} gap: {what}s {rng} are missing between {a} and {b}")
        if len(gaps) > 10:
            out.append(f"{what} gaps: {len(gaps) - 10} more")
        e, l = hints.get("EARLIEST"), hints.get("LATEST")
        if e is not None and e != ids[0]:
            stranded = sum(1 for i in ids if i < e)
            extra = f" ({stranded} {what} files below it are never expired by Java)" if stranded else ""
            out.append(f"{what} EARLIEST hint is {e} but the earliest {what} file is {ids[0]}{extra}")
        if l is not None and l != ids[-1]:
            out.append(f"{what} LATEST hint is {l} but the latest {what} file is {ids[-1]}")
    return out
