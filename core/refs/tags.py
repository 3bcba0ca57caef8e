"""Tags: named, retained snapshots stored as ``<branch root>/tag/tag-<name>``.

A tag file is the snapshot JSON, optionally followed by ``tagCreateTime`` (a Jackson
LocalDateTime array) and ``tagTimeRetained`` (a Duration in decimal seconds). Java only
writes those two when a retention is given, so that Paimon <= 0.7 readers still parse
tags without one; we follow the same rule.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import AlreadyExists, CorruptMetadata, InvalidInput, NotFound, UnsafeRefused
from ..io.commit_lock import NO_LOCK, CommitLock
from ..io.fileio import FileIO, join
from ..io.paths import branch_path, check_name_length
from ..utils.durations import parse_iso_duration
from ..utils.json_util import dumps_jackson, loads_metadata
from .snapshot import Snapshot, SnapshotManager

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


class TagCallback(Protocol):
    """Told of every tag created or deleted (Java ``TagCallback``): a metastore that mirrors
    tags as partitions (``metastore.tag-to-partition``)."""

    def notify_creation(self, name: str) -> None: ...

    def notify_deletion(self, name: str) -> None: ...


class TagManager:
    """Tags of one branch (main when ``branch`` is None)."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None,
                 lock: CommitLock = NO_LOCK, callbacks: Sequence[TagCallback] = ()) -> None:
        self.file_io = file_io
        self.lock = lock  # the catalog's commit lock: tag files are published and deleted under it
        self.callbacks = tuple(callbacks)
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
        snapshot_text: str | None = None,
    ) -> Tag:
        """Overwrite an existing tag (under the lock); ``snapshot_text`` as in :meth:`create_tag`."""
        validate_tag_name(name)
        if not self.tag_exists(name):
            raise NotFound(f"tag {name!r} not found in {self.table_path}")
        return self._write(name, snapshot, time_retained, None, snapshot_text)

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
        data = text.encode("utf-8")
        if new:
            if not self.publish_new(name, data):
                raise AlreadyExists(f"tag {name!r} already exists in {self.table_path}")
        else:
            self.lock.run_with_lock(lambda: self.file_io.write_bytes(self.tag_path(name), data, overwrite=True))
        self.notify_created(name)
        return tag

    def notify_created(self, name: str) -> None:
        """After a tag file is published: the callbacks learn of it (a failure leaves the tag,
        which ``repair`` mirrors again)."""
        for cb in self.callbacks:
            cb.notify_creation(name)

    def notify_deleted(self, name: str) -> None:
        """Before a tag file is deleted: the callbacks forget it first, so a mirror never names
        a tag that is gone."""
        for cb in self.callbacks:
            cb.notify_deletion(name)

    def delete_tag(self, name: str) -> None:
        if not self.tag_exists(name):
            raise NotFound(f"tag {name!r} not found in {self.table_path}")
        self.notify_deleted(name)
        self.lock.run_with_lock(lambda: self.file_io.delete(self.tag_path(name)))

    def publish_new(self, name: str, data: bytes) -> bool:
        """Write ``tag-<name>`` if absent (False if it exists). Java writes new tags with
        overwrite=false: write-if-absent where the store supports it, elsewhere an existence
        check then a plain write, as Java's own FileIO does on such stores."""
        return self.lock.run_with_lock(lambda: self._publish_new(self.tag_path(name), data))

    def _publish_new(self, path: str, data: bytes) -> bool:
        try:
            return self.file_io.try_write_atomic(path, data)
        except UnsafeRefused:
            if self.file_io.exists(path):
                return False
            self.file_io.write_bytes(path, data, overwrite=True)
            return True
