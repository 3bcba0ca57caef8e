"""Tag operations on a table: create, rename, delete, expire, and the automatic creation and
expiry Java writers run after each commit (TagAutoManager: TagAutoCreation, TagTimeExpire).

The tag files themselves are :class:`~..refs.tags.TagManager`'s; deleting a tag's files is
:mod:`.tag_deletion`'s (plan, then apply).
"""

from __future__ import annotations

import datetime
from typing import TYPE_CHECKING

from ..errors import AlreadyExists, InvalidInput, NotFound, UnsafeRefused
from ..iceberg.callback import sync_tags
from ..refs.snapshot import Snapshot
from ..refs.tag_period import TagPeriod, TimeExtractor, tag_time_extractor
from ..refs.tags import TAG_PREFIX, Tag, validate_tag_name
from ..utils.durations import parse_duration_millis
from .file_deletion import GuardedReader
from .tag_deletion import TagDeletionPlan, apply_tag_deletion, plan_tag_deletion

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable


def parse_time_retained(text: str, key: str) -> float:
    """A table option's retention (Java's duration grammar: a bare number is milliseconds) to
    seconds; must be positive. The command line's ``--time-retained`` is core.utils.durations'."""
    millis = parse_duration_millis(text, key)
    if millis <= 0:
        raise InvalidInput(f"option {key}={text!r}: must be a positive duration")
    return millis / 1000.0


def _default_retained(table: FileStoreTable) -> float | None:
    default = table.options.get("tag.default-time-retained")
    return parse_time_retained(default, "tag.default-time-retained") if default else None


def _all_tags(table: FileStoreTable, action: str) -> dict[str, Tag]:
    """Every tag of the table's branch; an unreadable one refuses (it could hold anything)."""
    return GuardedReader(table.file_io, table.path, action).tags(table.tag_manager)


# ---------------------------------------------------------------------------------------
# create, rename
# ---------------------------------------------------------------------------------------


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
    retained = time_retained_seconds if time_retained_seconds is not None else _default_retained(table)
    sm = table.snapshot_manager
    if snapshot_id is None:
        snap = sm.latest_snapshot()
        if snap is None:
            raise NotFound(f"cannot create tag {name!r}: {table.identifier} has no snapshot yet")
    else:
        snap = sm.try_snapshot(snapshot_id)
        if snap is None:
            return _tag_from_tag(table, name, snapshot_id, retained)
    _check_no_auto_tag(table, name, snap)
    try:
        raw = table.file_io.read_text(sm.snapshot_path(snap.id))
    except NotFound:
        raw = None
    tag = tm.create_tag(name, snap, retained, snapshot_text=raw)
    sync_tags(table)  # Java's Iceberg tag callback: the tag becomes an Iceberg ref
    return tag


def _tag_from_tag(table: FileStoreTable, name: str, snapshot_id: int, retained: float | None) -> Tag:
    """Java's findSnapshot: an expired snapshot can still be tagged from a tag holding it."""
    tm = table.tag_manager
    holder = next((t for t in _all_tags(table, "create the tag").values() if t.snapshot.id == snapshot_id), None)
    if holder is None:
        table.snapshot_manager.snapshot(snapshot_id)  # raises NotFound naming the ids that exist
        raise NotFound(f"snapshot {snapshot_id} not found")  # pragma: no cover - snapshot() raised
    raw = None
    if holder.create_time is None and holder.time_retained_seconds is None:
        raw = table.file_io.read_text(tm.tag_path(holder.name))
    tag = tm.create_tag(name, holder.snapshot, retained, snapshot_text=raw)
    sync_tags(table)
    return tag


def _check_no_auto_tag(table: FileStoreTable, name: str, snap: Snapshot) -> None:
    """Java 1.x validateNoAutoTag: one auto-shaped tag per snapshot while auto-tagging runs."""
    if tag_time_extractor(table.options) is None:
        return
    period = TagPeriod.of(table.options)
    if period.to_time(name) is None:
        return
    taken = sorted(t.name for t in _all_tags(table, "create the tag").values()
                   if t.snapshot.id == snap.id and period.to_time(t.name) is not None)
    if taken:
        raise InvalidInput(f"snapshot {snap.id} is already auto-tagged with {', '.join(taken)}")


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
    def publish() -> None:
        if not tm.publish_new(new_name, tm.file_io.read_bytes(tm.tag_path(name))):
            raise AlreadyExists(f"tag {new_name!r} already exists in {table.identifier}")
        tm.notify_created(new_name)
        tm.notify_deleted(name)
        tm.file_io.delete(tm.tag_path(name))
        sync_tags(table)  # Java leaves the old name in the Iceberg refs; the refs follow the tags here

    table.lock.run_with_lock(publish)
    return Tag(new_name, tag.snapshot, tag.create_time, tag.time_retained_seconds)


# ---------------------------------------------------------------------------------------
# delete, expire
# ---------------------------------------------------------------------------------------


def delete_tags(table: FileStoreTable, names: list[str], dry_run: bool = False) -> TagDeletionPlan:
    """Delete tags with Java's file cleanup (see :mod:`.tag_deletion`); returns the plan."""
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
    for name, tag in _all_tags(table, "expire tags").items():
        create = tag.create_time
        retained = tag.time_retained_seconds
        if create is None and older_than is not None:
            mtime = next((s.mtime_millis for s in tm.file_io.list_status(tm.tag_dir) if s.name == TAG_PREFIX + name),
                         None)
            create = datetime.datetime.fromtimestamp(mtime / 1000) if mtime else None
        if create is None or (retained is None and older_than is None):
            continue
        reached = retained is not None and now > create + datetime.timedelta(seconds=retained)
        if reached or (older_than is not None and older_than > create):
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
# automatic creation (Java's TagAutoCreation with its TagPeriodHandler / TagTimeExtractor)
# ---------------------------------------------------------------------------------------


class _AutoTagging:
    """The options of one auto-tagging run."""

    def __init__(self, table: FileStoreTable, extract: TimeExtractor) -> None:
        opts = table.options
        self.table = table
        self.extract = extract
        self.period = TagPeriod.of(opts)
        self.delay = datetime.timedelta(milliseconds=opts.get_duration_millis("tag.creation-delay") or 0)
        if self.delay >= datetime.timedelta(seconds=self.period.seconds):
            raise InvalidInput("tag.creation-delay must be shorter than one tag.creation-period")
        self.completion = opts.get_bool("tag.automatic-completion", False)
        self.max_keep = opts.get_int("tag.num-retained-max") if opts.contains("tag.num-retained-max") else None
        retained = opts.get("tag.default-time-retained")
        self.retained = parse_time_retained(retained, "tag.default-time-retained") if retained else None

    def auto_tags(self) -> list[Tag]:
        tags = _all_tags(self.table, "create tags").values()
        return sorted((t for t in tags if self.period.to_time(t.name) is not None), key=lambda t: (t.snapshot.id, t.name))

    def resume(self) -> tuple[int, datetime.datetime | None]:
        """(first snapshot id to look at, next tag time) after the last auto tag."""
        autos = self.auto_tags()
        if not autos:
            return self.table.snapshot_manager.earliest_snapshot_id() or 1, None
        last_id = autos[-1].snapshot.id
        on_last = sorted(t.name for t in autos if t.snapshot.id == last_id)
        if len(on_last) != 1:
            raise UnsafeRefused(
                f"more than one auto-created tag on snapshot {last_id}: {', '.join(on_last)} (Java refuses too)"
            )
        last_time = self.period.to_time(on_last[0])
        assert last_time is not None  # an auto tag by construction
        return last_id + 1, self.period.next_tag(last_time)

    def trim(self) -> None:
        """``tag.num-retained-max``: delete the oldest auto tags beyond it."""
        if self.max_keep is None:
            return
        autos = self.auto_tags()
        excess = len(autos) - self.max_keep
        if excess > 0:
            delete_tags(self.table, [x.name for x in autos[:excess]])


def auto_create_tags(table: FileStoreTable) -> list[str]:
    """Java's TagAutoCreation.run() for one (short-lived) writer: continue after the last auto
    tag, tag each period once, honour ``tag.creation-delay``, ``tag.automatic-completion``,
    ``tag.default-time-retained`` and ``tag.num-retained-max``. Returns the tags created."""
    extract = tag_time_extractor(table.options)
    if extract is None:
        return []
    auto = _AutoTagging(table, extract)
    period = auto.period
    start, next_tag = auto.resume()
    sm = table.snapshot_manager
    created: list[str] = []
    for sid in [i for i in sm.snapshot_ids() if i >= start]:
        snap = sm.try_snapshot(sid)
        t = None if snap is None else extract(snap)
        if t is None or (next_tag is not None and t - auto.delay < period.next_tag(next_tag)):
            continue
        this_tag = next_tag if (auto.completion and next_tag is not None) else period.previous_tag(t)
        name = period.to_tag(this_tag)
        if not table.tag_manager.tag_exists(name):
            create_tag(table, name, sid, auto.retained)
            created.append(name)
        next_tag = period.next_tag(this_tag)
        auto.trim()
    return created


def tag_maintenance_after_commit(table: FileStoreTable) -> dict[str, list[str]] | None:
    """Java's TagAutoManager after a commit: auto-create tags, then expire by time-retained.
    Skipped for ``write-only`` tables (as Java)."""
    if table.options.get_bool("write-only", False):
        return None
    created = auto_create_tags(table)
    expired = expire_tags_after_commit(table)
    return {"created": created, "expired": expired.tags if expired else []}
