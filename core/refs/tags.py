"""Tags: named, retained snapshots stored as ``<branch root>/tag/tag-<name>``.

A tag file is the snapshot JSON, optionally followed by ``tagCreateTime`` (a Jackson
LocalDateTime array) and ``tagTimeRetained`` (a Duration in decimal seconds). Java only
writes those two when a retention is given, so that Paimon <= 0.7 readers still parse
tags without one; we follow the same rule.
"""

from __future__ import annotations

import datetime
import decimal
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import AlreadyExists, CorruptMetadata, InvalidInput, NotFound, UnsafeRefused
from ..io.fileio import FileIO, join
from ..io.paths import branch_path, check_name_length, schema_dir
from ..utils.durations import parse_iso_duration
from ..utils.json_util import dumps_jackson, loads_metadata
from .snapshot import Snapshot, SnapshotManager, changelog_lacks_data_lists

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

TAG_PREFIX = "tag-"
_CREATE_TIME = "tagCreateTime"
_TIME_RETAINED = "tagTimeRetained"


@dataclass
class Tag:
    name: str
    snapshot: Snapshot
    create_time: datetime.datetime | None = None
    time_retained_seconds: float | None = None

    @property
    def time_retained_java(self) -> str | None:
        """``Duration.toString`` (``PT24H``), the form Java's ``$tags.time_retained`` shows."""
        if self.time_retained_seconds is None:
            return None
        return java_duration_str(self.time_retained_seconds)

    @classmethod
    def from_json(cls, name: str, text: str, path: str) -> Tag:
        obj = loads_metadata(text, path)
        snap = Snapshot.from_dict(obj, path)
        create = snap.extra.pop(_CREATE_TIME, None)
        retained = snap.extra.pop(_TIME_RETAINED, None)
        return cls(
            name=name,
            snapshot=snap,
            create_time=None if create is None else _parse_local_date_time(create, path),
            time_retained_seconds=None if retained is None else _parse_duration(retained, path),
        )

    def to_json(self) -> str:
        """Snapshot JSON plus the tag fields (only when a retention is set, as in Java)."""
        d = self.snapshot.to_dict()
        if self.time_retained_seconds is None:
            return dumps_jackson(d)
        create = self.create_time or datetime.datetime.now()
        # tag fields follow the snapshot's own fields but precede unknown extras
        extras = {k: d.pop(k) for k in list(self.snapshot.extra) if k in d}
        d[_CREATE_TIME] = _local_date_time_array(create)
        d[_TIME_RETAINED] = decimal.Decimal(java_duration_decimal(self.time_retained_seconds))
        d.update(extras)
        return dumps_jackson(d)


def _tag_text_from_snapshot_text(text: str, tag: Tag) -> str | None:
    """The snapshot file's JSON, plus the tag fields before the closing brace (Jackson layout);
    None if the text is not a pretty-printed JSON object (then the tag is re-serialized)."""
    body = text.rstrip()
    if not body.startswith("{") or not body.endswith("\n}"):
        return None
    if tag.time_retained_seconds is None:
        return text
    create = tag.create_time or datetime.datetime.now()
    arr = "[ " + ", ".join(str(x) for x in _local_date_time_array(create)) + " ]"
    retained = java_duration_decimal(tag.time_retained_seconds)
    head = body[: -len("\n}")].rstrip()
    return f'{head},\n  "{_CREATE_TIME}" : {arr},\n  "{_TIME_RETAINED}" : {retained}\n}}'


def _local_date_time_array(dt: datetime.datetime) -> list[int]:
    """Jackson's LocalDateTime array: seconds only if non-zero (or nanos), nanos if non-zero."""
    out = [dt.year, dt.month, dt.day, dt.hour, dt.minute]
    nanos = dt.microsecond * 1000
    if dt.second or nanos:
        out.append(dt.second)
        if nanos:
            out.append(nanos)
    return out


def _parse_local_date_time(v: Any, path: str) -> datetime.datetime:
    try:
        if isinstance(v, list):
            if not 5 <= len(v) <= 7 or not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
                raise ValueError(f"expected [y, mo, d, h, mi(, s(, nanos))], got {v!r}")
            parts = list(v) + [0] * (7 - len(v))
            y, mo, d, h, mi, s, nanos = parts
            return datetime.datetime(y, mo, d, h, mi, s, nanos // 1000)
        if isinstance(v, str):
            return datetime.datetime.fromisoformat(v)
        raise ValueError(f"expected an array or string, got {v!r}")
    except ValueError as e:
        raise CorruptMetadata(path, f"bad {_CREATE_TIME}: {e}") from e


def _parse_duration(v: Any, path: str) -> float:
    if isinstance(v, bool):
        raise CorruptMetadata(path, f"bad {_TIME_RETAINED}: {v!r}")
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        secs = parse_iso_duration(v)
        if secs is not None:
            return float(secs)
    raise CorruptMetadata(path, f"bad {_TIME_RETAINED}: {v!r} (expected seconds or ISO-8601 PT...)")


def java_duration_decimal(seconds: float) -> str:
    """Jackson's Duration number: ``0.0`` for zero, else seconds with 9 fraction digits."""
    d = decimal.Decimal(repr(float(seconds)))
    if d == 0:
        return "0.0"
    return str(d.quantize(decimal.Decimal("1.000000000")))


def java_duration_str(seconds: float) -> str:
    """``java.time.Duration.toString`` (e.g. ``PT24H``, ``PT1H30M``, ``PT0.5S``)."""
    total = decimal.Decimal(repr(float(seconds))).quantize(decimal.Decimal("1.000000000"))
    if total == 0:
        return "PT0S"
    # Duration keeps floor seconds plus a non-negative nano part
    secs_floor = int(total.to_integral_value(rounding=decimal.ROUND_FLOOR))
    nanos = int((total - secs_floor) * 1_000_000_000)
    eff = secs_floor + 1 if secs_floor < 0 and nanos > 0 else secs_floor
    hours = _jdiv(eff, 3600)
    minutes = _jdiv(_jmod(eff, 3600), 60)
    secs = _jmod(eff, 60)
    out = "PT"
    if hours:
        out += f"{hours}H"
    if minutes:
        out += f"{minutes}M"
    if secs == 0 and nanos == 0 and len(out) > 2:
        return out
    if secs_floor < 0 and nanos > 0 and secs == 0:
        out += "-0"
    else:
        out += str(secs)
    if nanos > 0:
        frac = str(2_000_000_000 - nanos if secs_floor < 0 else nanos + 1_000_000_000)
        out += "." + frac[1:].rstrip("0")
    return out + "S"


def _jdiv(a: int, b: int) -> int:
    """Java long division (truncates toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _jmod(a: int, b: int) -> int:
    return a - _jdiv(a, b) * b


def validate_tag_name(name: str) -> None:
    """Java only refuses blank names; we also refuse what would escape the tag directory.

    Purely numeric names are legal in Java (but ``scan.version`` then prefers the tag over a
    snapshot id), so they are allowed here too.
    """
    if name is None or not name.strip():
        raise InvalidInput("tag name must not be blank")
    check_name_length("tag", name)
    if "/" in name or "\\" in name:
        raise InvalidInput(f"tag name {name!r} must not contain '/' or '\\'")
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in name):
        raise InvalidInput(f"tag name {name!r} must not contain control characters")


class TagManager:
    """Tags of one branch (main when ``branch`` is None)."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.branch = branch
        self._snapshots = SnapshotManager(file_io, table_path, branch)  # checks each tag read

    @property
    def tag_dir(self) -> str:
        return join(branch_path(self.table_path, self.branch), "tag")

    def tag_path(self, name: str) -> str:
        return join(self.tag_dir, TAG_PREFIX + name)

    def tag_exists(self, name: str) -> bool:
        if not name or "/" in name:
            return False
        return self.file_io.exists(self.tag_path(name))

    def tag_names(self) -> list[str]:
        return sorted(
            n[len(TAG_PREFIX) :]
            for n in self.file_io.list_names(self.tag_dir)
            if n.startswith(TAG_PREFIX) and len(n) > len(TAG_PREFIX)
        )

    def try_tag(self, name: str) -> Tag | None:
        path = self.tag_path(name)
        try:
            text = self.file_io.read_text(path)
        except NotFound:
            return None
        tag = Tag.from_json(name, text, path)
        self._snapshots.check_tagged(tag.snapshot, path)
        return tag

    def tag(self, name: str) -> Tag:
        if not name or not name.strip():
            raise InvalidInput("tag name must not be blank")
        check_name_length("tag", name)
        t = self.try_tag(name) if "/" not in name else None
        if t is None:
            names = self.tag_names()
            have = ", ".join(names[:10]) + (" ..." if len(names) > 10 else "") if names else "none"
            raise NotFound(f"tag {name!r} not found in {self.table_path}: existing tags: {have}")
        return t

    def tags(self) -> list[Tag]:
        """All tags sorted by (snapshot id, name); a tag deleted while listing is skipped."""
        out = []
        for name in self.tag_names():
            t = self.try_tag(name)
            if t is not None:
                out.append(t)
        out.sort(key=lambda t: (t.snapshot.id, t.name))
        return out

    def tagged_snapshot_ids(self) -> dict[int, list[str]]:
        """Snapshot id -> tag names (what expiration must keep)."""
        out: dict[int, list[str]] = {}
        for t in self.tags():
            out.setdefault(t.snapshot.id, []).append(t.name)
        return out

    def create_tag(
        self,
        name: str,
        snapshot: Snapshot,
        time_retained: float | datetime.timedelta | None = None,
        ignore_if_exists: bool = False,
        create_time: datetime.datetime | None = None,
        snapshot_text: str | None = None,
    ) -> Tag:
        """Write ``tag-<name>`` (plain overwrite, as Java); an existing name is AlreadyExists.

        ``snapshot_text``: the snapshot file's own JSON. Java writes ``snapshot.toJson()``,
        i.e. the snapshot in the layout of the Java version that wrote it (0.9 adds
        ``"changelogManifestList" : null`` and ``"logOffsets" : { }``); keeping the file's
        text is the only way to be byte-identical to whichever version that was.
        """
        validate_tag_name(name)
        if self.tag_exists(name):
            if ignore_if_exists:
                return self.tag(name)
            raise AlreadyExists(f"tag {name!r} already exists in {self.table_path}")
        return self._write(name, snapshot, time_retained, create_time, snapshot_text, new=True)

    def replace_tag(
        self,
        name: str,
        snapshot: Snapshot,
        time_retained: float | datetime.timedelta | None = None,
    ) -> Tag:
        validate_tag_name(name)
        if not self.tag_exists(name):
            raise NotFound(f"tag {name!r} not found in {self.table_path}")
        return self._write(name, snapshot, time_retained, None)

    def _write(
        self,
        name: str,
        snapshot: Snapshot,
        time_retained: float | datetime.timedelta | None,
        create_time: datetime.datetime | None,
        snapshot_text: str | None = None,
        new: bool = False,
    ) -> Tag:
        if isinstance(time_retained, datetime.timedelta):
            time_retained = time_retained.total_seconds()
        tag = Tag(
            name=name,
            snapshot=snapshot,
            create_time=(create_time or datetime.datetime.now()) if time_retained is not None else None,
            time_retained_seconds=time_retained,
        )
        text = _tag_text_from_snapshot_text(snapshot_text, tag) if snapshot_text is not None else None
        if text is None:
            text = tag.to_json()
        if new:
            if not _publish_new(self.file_io, self.tag_path(name), text.encode("utf-8")):
                raise AlreadyExists(f"tag {name!r} already exists in {self.table_path}")
        else:
            self.file_io.write_bytes(self.tag_path(name), text.encode("utf-8"), overwrite=True)
        return tag

    def delete_tag(self, name: str) -> None:
        if not self.tag_exists(name):
            raise NotFound(f"tag {name!r} not found in {self.table_path}")
        self.file_io.delete(self.tag_path(name))


# ---------------------------------------------------------------------------------------
# Table-level tag operations: create / rename / delete with file cleanup / time expiry
# ---------------------------------------------------------------------------------------


def parse_time_retained(text: str, key: str) -> float:
    """A table option's retention (Java's duration grammar: a bare number is milliseconds) to
    seconds; must be positive. The command line's ``--time-retained`` is core.utils.durations'."""
    from ..utils.durations import parse_duration_millis

    millis = parse_duration_millis(text, key)
    if millis <= 0:
        raise InvalidInput(f"option {key}={text!r}: must be a positive duration")
    return millis / 1000.0


def create_tag(
    table: FileStoreTable,
    name: str,
    snapshot_id: int | None = None,
    time_retained_seconds: float | None = None,
) -> Tag:
    """Tag a snapshot of the table's branch (latest when None), as Java's ``createTag``.

    Without an explicit retention the table's ``tag.default-time-retained`` applies, so a
    tag made here expires exactly like one made by a Java job with the same options.
    """
    validate_tag_name(name)
    tm = table.tag_manager
    if tm.tag_exists(name):
        raise AlreadyExists(f"tag {name!r} already exists in {table.identifier}")
    sm = table.snapshot_manager
    if snapshot_id is None:
        snap = sm.latest_snapshot()
        if snap is None:
            raise NotFound(f"cannot create tag {name!r}: {table.identifier} has no snapshot yet")
    else:
        snap = sm.try_snapshot(snapshot_id)
        if snap is None:
            # Java's findSnapshot: an expired snapshot can still be tagged from a tag holding it
            holder = next((t for t in _read_all_tags(table).values() if t.snapshot.id == snapshot_id), None)
            if holder is None:
                sm.snapshot(snapshot_id)  # raises NotFound naming the ids that exist
            assert holder is not None
            raw = None
            if holder.create_time is None and holder.time_retained_seconds is None:
                raw = table.file_io.read_text(tm.tag_path(holder.name))
            return tm.create_tag(name, holder.snapshot, time_retained_seconds
                                 if time_retained_seconds is not None else _default_retained(table),
                                 snapshot_text=raw)
    if _tag_time_extractor(table.options) is not None:
        # Java 1.x validateNoAutoTag: one auto-shaped tag per snapshot while auto-tagging runs
        period = TagPeriod.of(table.options)
        if period.to_time(name) is not None:
            taken = sorted(t.name for t in _read_all_tags(table).values()
                           if t.snapshot.id == snap.id and period.to_time(t.name) is not None)
            if taken:
                raise InvalidInput(f"snapshot {snap.id} is already auto-tagged with {', '.join(taken)}")
    if time_retained_seconds is None:
        time_retained_seconds = _default_retained(table)
    try:
        raw = table.file_io.read_text(sm.snapshot_path(snap.id))
    except NotFound:
        raw = None
    return tm.create_tag(name, snap, time_retained_seconds, snapshot_text=raw)


def _publish_new(fio: FileIO, path: str, data: bytes) -> bool:
    """Write-if-absent where the store supports it (Java writes new tags with overwrite=false);
    elsewhere an existence check then a plain write, as Java's own FileIO does on such stores."""
    try:
        return fio.try_write_atomic(path, data)
    except UnsafeRefused:
        if fio.exists(path):
            return False
        fio.write_bytes(path, data, overwrite=True)
        return True


def _default_retained(table: FileStoreTable) -> float | None:
    default = table.options.get("tag.default-time-retained")
    return parse_time_retained(default, "tag.default-time-retained") if default else None


def rename_tag(table: FileStoreTable, name: str, new_name: str) -> Tag:
    """Java 1.x ``renameTag``: same content under the new name; the target must not exist.

    The new file is published write-if-absent before the old one is removed, so a crash in
    between leaves two tags on the same snapshot, never zero.
    """
    validate_tag_name(new_name)
    tm = table.tag_manager
    tag = tm.tag(name)
    if tm.tag_exists(new_name):
        raise AlreadyExists(f"tag {new_name!r} already exists in {table.identifier}")
    data = tm.file_io.read_bytes(tm.tag_path(name))
    if not _publish_new(tm.file_io, tm.tag_path(new_name), data):
        raise AlreadyExists(f"tag {new_name!r} already exists in {table.identifier}")
    tm.file_io.delete(tm.tag_path(name))
    return Tag(new_name, tag.snapshot, tag.create_time, tag.time_retained_seconds)


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
    """Exactly what deleting ``tags`` removes, in deletion order (tag file, data, metadata)."""

    tags: list[str]
    files: list[DeletedFile]
    branches: list[str] | None = None  # branches seen while planning (re-checked before deleting)

    @property
    def total_bytes(self) -> int:
        return sum(f.size or 0 for f in self.files)

    def rows(self) -> Any:
        from ..utils.rows import Rows

        return Rows(
            ["tag", "kind", "path", "bytes"],
            [{"tag": f.tag, "kind": f.kind, "path": f.path, "bytes": f.size} for f in self.files],
        )


class _RefReader:
    """Reads the files a snapshot or tag references; every failure is a refusal (fail closed).

    Manifest reads are cached by name: neighbouring snapshots share most manifests.
    """

    def __init__(self, table: FileStoreTable) -> None:
        from ..io import paths
        from ..manifest.index_manifest import IndexManifestFile
        from ..manifest.manifest import ManifestFile, ManifestList

        self.table = table
        self.file_io = table.file_io
        self.manifest_dir = paths.manifest_dir(table.path)
        self.ml = ManifestList(self.file_io, self.manifest_dir)
        self.mf = ManifestFile(self.file_io, self.manifest_dir, table.schema.logical_partition_type)
        self.imf = IndexManifestFile(self.file_io, self.manifest_dir)
        self._lists: dict[str, list[Any]] = {}
        self._manifests: dict[str, list[Any]] = {}
        self._index: dict[str, list[Any]] = {}

    def _guard(self, path: str, fn: Any) -> Any:
        try:
            return fn()
        except UnsafeRefused:
            raise
        except Exception as e:  # noqa: BLE001 - anything unreadable decides nothing: refuse
            raise UnsafeRefused(
                f"cannot read {path} ({' '.join(str(e).split())}); it decides which files are still used, "
                "so nothing was deleted"
            ) from e

    def manifest_list(self, name: str) -> list[Any]:
        if name not in self._lists:
            self._lists[name] = self._guard(join(self.manifest_dir, name), lambda: self.ml.read(name))
        return self._lists[name]

    def manifest(self, name: str) -> list[Any]:
        if name not in self._manifests:
            self._manifests[name] = self._guard(join(self.manifest_dir, name), lambda: self.mf.read(name))
        return self._manifests[name]

    def index_manifest(self, name: str) -> list[Any]:
        if name not in self._index:
            self._index[name] = self._guard(join(self.manifest_dir, name), lambda: self.imf.read(name))
        return self._index[name]

    def data_manifests(self, snap: Snapshot) -> list[Any]:
        return list(self.manifest_list(snap.base_manifest_list)) + list(self.manifest_list(snap.delta_manifest_list))

    def live_entries(self, snap: Snapshot) -> list[Any]:
        """Merged (live) data files, as Java's ``readMergedDataFiles``."""
        from ..operation.scan import merge_entries

        return merge_entries(e for m in self.data_manifests(snap) for e in self.manifest(m.file_name))

    def live_keys(self, snap: Snapshot) -> set[tuple[bytes, int, str]]:
        return {(e.partition, e.bucket, e.file.file_name) for e in self.live_entries(snap)}

    def metadata_names(self, snap: Snapshot) -> set[str]:
        """Java's ``manifestSkippingSet`` for one snapshot."""
        out = {snap.base_manifest_list, snap.delta_manifest_list}
        out.update(m.file_name for m in self.data_manifests(snap))
        if snap.index_manifest:
            out.add(snap.index_manifest)
            out.update(e.index_file.file_name for e in self.index_manifest(snap.index_manifest))
        if snap.statistics:
            out.add(snap.statistics)
        return out


@dataclass
class _Protected:
    """Files that must survive whatever the neighbours say."""

    data: set[tuple[bytes, int, str]]
    names: set[str]


def _holder_refs(table: FileStoreTable, branch: str | None, reader: _RefReader) -> list[tuple[Snapshot, bool]]:
    """Every snapshot, tag and changelog of one branch (main = None), read fail-closed;
    (object, whether it is a long-lived changelog)."""
    from .snapshot import ChangelogManager, SnapshotManager

    out: list[tuple[Snapshot, bool]] = []
    for mgr in (SnapshotManager(table.file_io, table.path, branch), ChangelogManager(table.file_io, table.path, branch)):
        for sid in mgr.snapshot_ids():
            path = mgr.snapshot_path(sid)
            snap = reader._guard(path, lambda m=mgr, i=sid: m.try_snapshot(i))
            if snap is not None:
                out.append((snap, isinstance(mgr, ChangelogManager)))
    tm = TagManager(table.file_io, table.path, branch)
    for name in reader._guard(tm.tag_dir, tm.tag_names):
        t = reader._guard(tm.tag_path(name), lambda n=name: tm.try_tag(n))
        if t is not None:
            out.append((t.snapshot, False))
    return out


def _extra_protection(table: FileStoreTable, reader: _RefReader) -> _Protected:
    """Beyond Java's two neighbours: the other branches' (or main's) snapshots, tags and
    changelogs, and this branch's decoupled changelogs.

    Java's TagDeletion only looks at the neighbours of the deleted tag, which is exact for
    one linear history but not for a branch created from that tag, whose snapshots share
    the tag's data files. Every file any of those ADDs is kept (a superset of what they keep
    alive); each distinct manifest list and manifest is read once, so the cost follows the
    number of manifests, not snapshots x files. Deleting less than Java only leaves orphans.
    """
    from ..manifest.manifest import FileKind
    from .branches import BranchManager
    from .snapshot import ChangelogManager

    current = table.branch
    refs: list[tuple[Snapshot, bool, str | None]] = []  # (object, is a long-lived changelog, branch)
    for holder in [None] + BranchManager(table.file_io, table.path).branch_names():
        if holder != current:
            refs.extend((s, c, holder) for s, c in _holder_refs(table, holder, reader))
    cm = ChangelogManager(table.file_io, table.path, current)
    for sid in cm.snapshot_ids():
        snap = reader._guard(cm.snapshot_path(sid), lambda i=sid: cm.try_snapshot(i))
        if snap is not None:
            refs.append((snap, True, current))
    prot = _Protected(set(), set())
    lists: set[str] = set()

    def present(name: str) -> bool:
        return reader.file_io.exists(join(reader.manifest_dir, name))

    lacking: dict[str | None, bool] = {}
    for snap, is_changelog, branch in refs:
        data_lists = [x for x in (snap.base_manifest_list, snap.delta_manifest_list) if x]
        # expire deletes the index manifest (and, with a changelog producer, the data lists) of
        # a snapshot it moves to changelog/, as Java's SnapshotDeletion does
        if is_changelog and branch not in lacking:
            lacking[branch] = reader._guard(
                schema_dir(table.path, branch), lambda b=branch: changelog_lacks_data_lists(table.file_io, table.path, b))
        if is_changelog and lacking[branch]:
            prot.names.update(data_lists)
            data_lists = [x for x in data_lists if present(x)]
        lists.update(data_lists)
        if snap.changelog_manifest_list:
            lists.add(snap.changelog_manifest_list)
        if snap.index_manifest:
            prot.names.add(snap.index_manifest)
            if not is_changelog or present(snap.index_manifest):
                prot.names.update(e.index_file.file_name for e in reader.index_manifest(snap.index_manifest))
        if snap.statistics:
            prot.names.add(snap.statistics)
    manifests = {m.file_name for lst in sorted(lists) for m in reader.manifest_list(lst)}
    prot.names |= lists | manifests
    for name in sorted(manifests):
        prot.data.update((e.partition, e.bucket, e.file.file_name) for e in reader.manifest(name) if e.kind == FileKind.ADD)
    return prot


def _read_all_tags(table: FileStoreTable) -> dict[str, Tag]:
    tm = table.tag_manager
    out: dict[str, Tag] = {}
    for name in tm.tag_names():
        try:
            t = tm.try_tag(name)
        except Exception as e:  # noqa: BLE001
            raise UnsafeRefused(
                f"cannot read tag file {tm.tag_path(name)} ({' '.join(str(e).split())}); tags decide which files "
                "are still used, so nothing was deleted"
            ) from e
        if t is not None:
            out[name] = t
    return out


def plan_tag_deletion(table: FileStoreTable, names: list[str]) -> TagDeletionPlan:
    """What deleting ``names`` one after the other removes, as Java's TagManager.deleteTag.

    For each tag: if its snapshot still exists, or another tag sits on the same snapshot,
    only the tag file goes. Otherwise its live data files not live in the left neighbour tag
    or the nearest right neighbour (earliest snapshot or right tag) go too, then its manifest
    lists, manifests, index manifest, index files and statistics file unless a neighbour uses
    them. Changelog files are left to changelog expiration (as Java). Anything unreadable
    that decides "used" raises UnsafeRefused before anything is deleted.
    """
    from ..data.binary_row import deserialize
    from ..io import paths

    if not names:
        raise InvalidInput("no tag name given")
    seen: set[str] = set()
    for n in names:
        validate_tag_name(n)
        if n in seen:
            raise InvalidInput(f"tag {n!r} given twice")
        seen.add(n)
    tm = table.tag_manager
    tags = _read_all_tags(table)
    for n in names:
        if n not in tags:
            have = ", ".join(sorted(tags)[:10]) or "none"
            raise NotFound(f"tag {n!r} not found in {table.identifier}: existing tags: {have}")
    sm = table.snapshot_manager
    reader = _RefReader(table)
    earliest = reader._guard(sm.snapshot_dir, sm.earliest_snapshot)
    schema = table.schema
    part_types = schema.partition_types
    extra: _Protected | None = None
    done: set[str] = set()
    files: list[DeletedFile] = []
    remaining = dict(tags)

    def add(tag: str, kind: str, path: str, size: int | None) -> None:
        if path in done:
            return
        done.add(path)
        if size is None:
            try:
                size = table.file_io.file_size(path)
            except NotFound:
                return  # already gone: nothing to delete
        files.append(DeletedFile(tag, kind, path, size))

    part_dirs: dict[bytes, str] = {}

    def part_dir(partition: bytes) -> str:
        if partition not in part_dirs:
            part_dirs[partition] = (
                paths.partition_path_for(schema, deserialize(partition, part_types)) if part_types else ""
            )
        return part_dirs[partition]

    for name in sorted(names, key=lambda n: (tags[n].snapshot.id, n)):
        tag = remaining.pop(name)
        add(name, "tag", tm.tag_path(name), None)
        sid = tag.snapshot.id
        if sm.snapshot_exists(sid) or any(t.snapshot.id == sid for t in remaining.values()):
            continue  # the snapshot (or another tag) still holds every file
        lefts = [t.snapshot for t in remaining.values() if t.snapshot.id < sid]
        rights = [t.snapshot for t in remaining.values() if t.snapshot.id > sid]
        skipped: list[Snapshot] = []
        if lefts:
            skipped.append(max(lefts, key=lambda s: s.id))
        right = earliest
        if rights:
            right_tag = min(rights, key=lambda s: s.id)
            if right is None or right_tag.id < right.id:
                right = right_tag
        if right is not None:
            skipped.append(right)
        if extra is None:
            extra = _extra_protection(table, reader)
        keep_data: set[tuple[bytes, int, str]] = set(extra.data)
        keep_names: set[str] = set(extra.names)
        for s in skipped:
            keep_data |= reader.live_keys(s)
            keep_names |= reader.metadata_names(s)
        snap = tag.snapshot
        for e in reader.live_entries(snap):
            if (e.partition, e.bucket, e.file.file_name) in keep_data:
                continue
            pdir = part_dir(e.partition)
            add(name, "data", paths.data_file_path(table.path, pdir, e.bucket, e.file.file_name, e.file.external_path),
                e.file.file_size)
            for x in e.file.extra_files:
                add(name, "extra", paths.data_file_path(table.path, pdir, e.bucket, x), None)
        mdir = paths.manifest_dir(table.path)
        for lst in (snap.base_manifest_list, snap.delta_manifest_list):
            for m in reader.manifest_list(lst):
                if m.file_name not in keep_names:
                    add(name, "manifest", join(mdir, m.file_name), m.file_size)
            if lst not in keep_names:
                add(name, "manifest-list", join(mdir, lst), None)
        if snap.index_manifest:
            for ie in reader.index_manifest(snap.index_manifest):
                f = ie.index_file
                if f.file_name not in keep_names:
                    add(name, "index", f.external_path or join(paths.index_dir(table.path), f.file_name), f.file_size)
            if snap.index_manifest not in keep_names:
                add(name, "index-manifest", join(mdir, snap.index_manifest), None)
        if snap.statistics and snap.statistics not in keep_names:
            add(name, "statistics", join(paths.statistics_dir(table.path), snap.statistics), None)
    from .branches import BranchManager

    return TagDeletionPlan(list(names), files, BranchManager(table.file_io, table.path).branch_names())


def apply_tag_deletion(table: FileStoreTable, plan: TagDeletionPlan) -> None:
    """Delete in plan order: a tag's file first (no reader trusts it any more), then its data
    files, then its metadata, so a crash leaves only orphans behind."""
    fio = table.file_io
    if plan.branches is not None and any(f.kind != "tag" for f in plan.files):
        from .branches import BranchManager

        now = BranchManager(fio, table.path).branch_names()
        if now != plan.branches:
            raise UnsafeRefused(
                f"branches of {table.identifier} changed while planning the tag deletion "
                f"({', '.join(plan.branches) or 'none'} -> {', '.join(now) or 'none'}); nothing was deleted, retry"
            )
    bucket_dirs: set[str] = set()
    for f in plan.files:
        fio.delete(f.path)
        if f.kind == "data":
            bucket_dirs.add(f.path.rsplit("/", 1)[0])
    if table.options.get_bool("snapshot.clean-empty-directories", False):
        _clean_empty_dirs(table, bucket_dirs)


def _clean_empty_dirs(table: FileStoreTable, bucket_dirs: set[str]) -> None:
    """Java's cleanEmptyDirectories: bucket dirs, then partition dirs deepest first."""
    fio = table.file_io
    root = table.path.rstrip("/")
    parents: set[str] = set()
    for d in bucket_dirs:
        if fio.delete_empty_dir(d):
            p = d.rsplit("/", 1)[0]
            while p.rstrip("/") != root and p.startswith(root + "/"):
                parents.add(p)
                p = p.rsplit("/", 1)[0]
    for p in sorted(parents, key=lambda s: -s.count("/")):
        fio.delete_empty_dir(p)


def delete_tags(table: FileStoreTable, names: list[str], dry_run: bool = False) -> TagDeletionPlan:
    plan = plan_tag_deletion(table, names)
    if not dry_run:
        apply_tag_deletion(table, plan)
    return plan


def expired_tag_names(
    table: FileStoreTable,
    now: datetime.datetime | None = None,
    older_than: datetime.datetime | None = None,
) -> list[str]:
    """Tags whose ``tagCreateTime + tagTimeRetained`` has passed (Java's TagTimeExpire).

    ``older_than`` (Java 1.x ``expire_tags`` procedure) also expires tags created before
    that local time; a tag without a create time then uses its file's modification time.
    """
    now = now or datetime.datetime.now()
    tm = table.tag_manager
    out: list[tuple[int, str]] = []
    for name, tag in _read_all_tags(table).items():
        create = tag.create_time
        retained = tag.time_retained_seconds
        if create is None or retained is None:
            if older_than is None:
                continue
            if create is None:
                mtime = next((s.mtime_millis for s in tm.file_io.list_status(tm.tag_dir)
                              if s.name == TAG_PREFIX + name), None)
                if not mtime:
                    continue
                create = datetime.datetime.fromtimestamp(mtime / 1000)
        reached = retained is not None and now > create + datetime.timedelta(seconds=retained)
        older = older_than is not None and older_than > create
        if reached or older:
            out.append((tag.snapshot.id, name))
    return [n for _, n in sorted(out)]


def expire_tags(
    table: FileStoreTable,
    dry_run: bool = False,
    now: datetime.datetime | None = None,
    older_than: datetime.datetime | None = None,
) -> TagDeletionPlan:
    """Delete every expired tag (with Java's file cleanup); an empty plan when none expired."""
    names = expired_tag_names(table, now, older_than)
    if not names:
        return TagDeletionPlan([], [])
    return delete_tags(table, names, dry_run)


def expire_tags_after_commit(table: FileStoreTable) -> TagDeletionPlan | None:
    """The tag half of Java's post-commit maintenance (TagAutoManager -> TagTimeExpire):
    skipped for ``write-only`` tables and when ``tag.time-expire-enabled`` is false."""
    opts = table.options
    if opts.get_bool("write-only", False) or not opts.get_bool("tag.time-expire-enabled", True):
        return None
    return expire_tags(table)


# ---------------------------------------------------------------------------------------
# Automatic tag creation (Java's TagAutoCreation with its TagPeriodHandler / TagTimeExtractor)
# ---------------------------------------------------------------------------------------


class TagPeriod:
    """One ``tag.creation-period`` with its ``tag.period-formatter`` (0.9 and 1.x names).

    Java formats the tag time with fixed patterns and parses names back to tell auto tags
    from manual ones; the 0.9 patterns resolve leniently (a 13th month rolls over), the
    1.x-only ones (``without_dashes_and_spaces``, ``tag.creation-period-duration``) strictly.
    """

    def __init__(self, seconds: int, layout: str, daily: bool = False) -> None:
        self.seconds = seconds
        self.layout = layout  # dashes | nodashes | compact-hour | minute (+ " HH" in dashes/nodashes when hourly)
        self.daily = daily

    @classmethod
    def of(cls, options: Any) -> TagPeriod:
        from ..utils.durations import parse_duration_millis

        duration = options.get("tag.creation-period-duration")
        if duration:
            return cls(parse_duration_millis(duration, "tag.creation-period-duration") // 1000, "minute")
        period = (options.get("tag.creation-period") or "daily").lower()
        fmt = (options.get("tag.period-formatter") or "with_dashes").lower()
        if fmt not in ("with_dashes", "without_dashes", "without_dashes_and_spaces"):
            raise InvalidInput(f"tag.period-formatter={fmt!r}: expected with_dashes or without_dashes")
        if period == "daily":
            return cls(86400, "dashes" if fmt == "with_dashes" else "nodashes", daily=True)
        if period == "hourly":
            layout = {"with_dashes": "dashes-hour", "without_dashes": "nodashes-hour"}.get(fmt, "compact-hour")
            return cls(3600, layout)
        if period == "two-hours":
            return cls(7200, "dashes-hour")
        raise InvalidInput(f"tag.creation-period={period!r}: expected daily, hourly or two-hours")

    def to_tag(self, t: datetime.datetime) -> str:
        y = str(t.year)
        if self.layout == "dashes":
            return f"{y}-{t.month:02d}-{t.day:02d}"
        if self.layout == "nodashes":
            return f"{y}{t.month:02d}{t.day:02d}"
        if self.layout == "dashes-hour":
            return f"{y}-{t.month:02d}-{t.day:02d} {t.hour:02d}"
        if self.layout == "nodashes-hour":
            return f"{y}{t.month:02d}{t.day:02d} {t.hour:02d}"
        if self.layout == "compact-hour":
            return f"{t.year:04d}{t.month:02d}{t.day:02d}{t.hour:02d}"
        return f"{t.year:04d}{t.month:02d}{t.day:02d}{t.hour:02d}{t.minute:02d}"

    _PATTERNS = {
        "dashes": (r"(\d{1,10})-(\d{2})-(\d{2})", True),
        "nodashes": (r"(\d{1,10})(\d{2})(\d{2})", True),
        "dashes-hour": (r"(\d{1,10})-(\d{2})-(\d{2}) (\d{2})", True),
        "nodashes-hour": (r"(\d{1,10})(\d{2})(\d{2}) (\d{2})", True),
        "compact-hour": (r"(\d{4})(\d{2})(\d{2})(\d{2})", False),
        "minute": (r"(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})", False),
    }

    def to_time(self, name: str) -> datetime.datetime | None:
        """The tag's time, or None if ``name`` is not an auto tag of this period."""
        if self.daily:
            name = name.split(" ")[0]
        pattern, lenient = self._PATTERNS[self.layout]
        m = re.fullmatch(pattern, name)
        if m is None:
            return None
        parts = [int(g) for g in m.groups()] + [0, 0]
        y, mo, d, h, mi = parts[:5]
        try:
            if lenient:
                months = y * 12 + mo - 1
                base = datetime.datetime(months // 12, months % 12 + 1, 1)
                return base + datetime.timedelta(days=d - 1, hours=h, minutes=mi)
            return datetime.datetime(y, mo, d, h, mi)
        except (ValueError, OverflowError):
            return None

    def previous_tag(self, t: datetime.datetime) -> datetime.datetime:
        """Java's normalizeToPreviousTag: floor the wall clock to the period, minus one period."""
        epoch = datetime.datetime(1970, 1, 1)
        millis = (t - epoch) // datetime.timedelta(milliseconds=1)
        period_ms = self.seconds * 1000
        q = abs(millis) // period_ms
        floored = (q if millis >= 0 else -q) * period_ms  # Java long division truncates
        return epoch + datetime.timedelta(milliseconds=floored) - datetime.timedelta(seconds=self.seconds)

    def next_tag(self, t: datetime.datetime) -> datetime.datetime:
        return t + datetime.timedelta(seconds=self.seconds)


def _tag_time_extractor(options: Any) -> Any:
    """``tag.automatic-creation``: None for none/batch (batch tags are Flink's), else a function
    snapshot -> local tag time or None."""
    mode = (options.get("tag.automatic-creation") or "none").lower()
    if mode in ("none", "batch"):
        return None
    if mode == "process-time":
        return lambda s: datetime.datetime.fromtimestamp(s.time_millis / 1000)
    if mode == "watermark":
        import zoneinfo

        zone_name = options.get("sink.watermark-time-zone") or "UTC"
        try:
            zone = zoneinfo.ZoneInfo(zone_name)
        except Exception as e:  # noqa: BLE001
            raise InvalidInput(f"sink.watermark-time-zone={zone_name!r}: unknown time zone") from e
        long_min = -(2**63)

        def from_watermark(s: Snapshot) -> datetime.datetime | None:
            if s.watermark is None or s.watermark == long_min:
                return None
            utc = datetime.datetime.fromtimestamp(s.watermark / 1000, datetime.timezone.utc)
            return utc.astimezone(zone).replace(tzinfo=None)

        return from_watermark
    raise InvalidInput(f"tag.automatic-creation={mode!r}: expected none, process-time, watermark or batch")


def auto_create_tags(table: FileStoreTable) -> list[str]:
    """Java's TagAutoCreation.run() for one (short-lived) writer: continue after the last auto
    tag, tag each period once, honour ``tag.creation-delay``, ``tag.automatic-completion``,
    ``tag.default-time-retained`` and ``tag.num-retained-max``. Returns the tags created."""
    opts = table.options
    extract = _tag_time_extractor(opts)
    if extract is None:
        return []
    period = TagPeriod.of(opts)
    delay = datetime.timedelta(milliseconds=opts.get_duration_millis("tag.creation-delay") or 0)
    if delay >= datetime.timedelta(seconds=period.seconds):
        raise InvalidInput("tag.creation-delay must be shorter than one tag.creation-period")
    completion = opts.get_bool("tag.automatic-completion", False)
    max_keep = opts.get_int("tag.num-retained-max") if opts.contains("tag.num-retained-max") else None
    retained_text = opts.get("tag.default-time-retained")
    retained = parse_time_retained(retained_text, "tag.default-time-retained") if retained_text else None
    tm = table.tag_manager
    sm = table.snapshot_manager

    def auto_tags() -> list[Tag]:
        return [t for t in _read_all_tags(table).values() if period.to_time(t.name) is not None]

    autos = auto_tags()
    next_tag: datetime.datetime | None = None
    if autos:
        last_id = max(t.snapshot.id for t in autos)
        on_last = sorted(t.name for t in autos if t.snapshot.id == last_id)
        if len(on_last) != 1:
            raise UnsafeRefused(
                f"more than one auto-created tag on snapshot {last_id}: {', '.join(on_last)} (Java refuses too)"
            )
        start = last_id + 1
        next_tag = period.next_tag(period.to_time(on_last[0]))  # type: ignore[arg-type]
    else:
        start = sm.earliest_snapshot_id() or 1
    created: list[str] = []
    for sid in [i for i in sm.snapshot_ids() if i >= start]:
        snap = sm.try_snapshot(sid)
        if snap is None:
            continue
        t = extract(snap)
        if t is None:
            continue
        if next_tag is not None and t - delay < period.next_tag(next_tag):
            continue
        this_tag = next_tag if (completion and next_tag is not None) else period.previous_tag(t)
        name = period.to_tag(this_tag)
        if not tm.tag_exists(name):
            create_tag(table, name, sid, retained)
            created.append(name)
        next_tag = period.next_tag(this_tag)
        if max_keep is not None:
            autos = sorted(auto_tags(), key=lambda x: (x.snapshot.id, x.name))
            excess = len(autos) - max_keep
            if excess > 0:
                delete_tags(table, [x.name for x in autos[:excess]])
    return created


def tag_maintenance_after_commit(table: FileStoreTable) -> dict[str, list[str]] | None:
    """Java's TagAutoManager after a commit: auto-create tags, then expire by time-retained.
    Skipped for ``write-only`` tables (as Java)."""
    if table.options.get_bool("write-only", False):
        return None
    created = auto_create_tags(table)
    expired = expire_tags_after_commit(table)
    return {"created": created, "expired": expired.tags if expired else []}
