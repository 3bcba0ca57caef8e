"""Tag operations on a table: create, rename, delete, expire, and the automatic creation and
expiry Java writers run after each commit (TagAutoManager: TagAutoCreation, TagTimeExpire).

The tag files themselves are :class:`~..refs.tags.TagManager`'s; deleting a tag's files is
:mod:`.tag_deletion`'s (plan, then apply).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import AlreadyExists, CommitConflict, InvalidInput, NotFound
from ..refs.snapshot import Snapshot
from ..refs.tag_period import TagPeriod, TimeExtractor, tag_time_extractor
from ..refs.tags import TAG_PREFIX, Tag, java_duration_str, validate_tag_name
from ..table.features import refuse_on_catalog_server
from ..utils.durations import parse_duration_millis
from ..utils.rows import Rows
from .file_deletion import GuardedReader
from .tag_deletion import TagDeletionPlan, apply_tag_deletion, plan_tag_deletion, sync_iceberg_tags

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
    if table.catalog_environment.versions is not None:
        return _create_on_server(table, name, snap, retained)
    try:
        raw = table.file_io.read_text(sm.snapshot_path(snap.id))
    except NotFound:
        raw = None
    tag = tm.create_tag(name, snap, retained, snapshot_text=raw)
    sync_iceberg_tags(table)  # Java's Iceberg tag callback: the tag becomes an Iceberg ref
    return tag


def snapshot_from_time(table: FileStoreTable, timestamp_millis: int | None = None,
                       watermark: int | None = None) -> tuple[Snapshot, str]:
    """Java's ``create_tag_from_timestamp`` / ``create_tag_from_watermark``: the earliest snapshot
    committed (watermarked) at or after the value; a tag whose snapshot expired counts too, the
    first one (by snapshot id) at or after the value winning when it is earlier. Returns it
    and how it was chosen; none is NotFound."""
    if (timestamp_millis is None) == (watermark is None):
        raise InvalidInput("give exactly one of a timestamp and a watermark")
    sm = table.snapshot_manager
    tags = sorted(_all_tags(table, "create the tag").values(), key=lambda t: (t.snapshot.id, t.name))
    if timestamp_millis is not None:
        snap = sm.later_or_equal_time_millis(timestamp_millis)
        for t in tags:
            if timestamp_millis <= t.snapshot.time_millis:
                if snap is None or t.snapshot.time_millis < snap.time_millis:
                    snap = t.snapshot
                break
        if snap is None:
            raise NotFound(f"no snapshot or tag of {table.identifier} was committed at or after {timestamp_millis}")
        return snap, f"the earliest snapshot committed at or after {timestamp_millis}"
    assert watermark is not None
    snap = sm.later_or_equal_watermark(watermark)
    for t in tags:
        wm = t.snapshot.watermark
        if wm is not None and watermark <= wm:
            if snap is None or snap.watermark is None or wm < snap.watermark:
                snap = t.snapshot
            break
    if snap is None:
        raise NotFound(f"no snapshot or tag of {table.identifier} has a watermark at or above {watermark}")
    return snap, f"the earliest snapshot with a watermark at or above {watermark} (watermark {snap.watermark})"
def _create_on_server(table: FileStoreTable, name: str, snap: Snapshot, retained: float | None) -> Tag:
    """A catalog server that keeps the versions (REST) writes the tag (``POST .../tags`` with the
    snapshot checked here and the retention in milliseconds); the tag it wrote is read back."""
    versions = table.catalog_environment.versions
    assert versions is not None
    versions.create_tag(table.branch, name, snap.id, None if retained is None else round(retained * 1000))
    made = table.tag_manager.try_tag(name)
    return made if made is not None else Tag(name, snap, None, retained)


def _tag_from_tag(table: FileStoreTable, name: str, snapshot_id: int, retained: float | None) -> Tag:
    """Java's findSnapshot: an expired snapshot can still be tagged from a tag holding it."""
    tm = table.tag_manager
    holder = next((t for t in _all_tags(table, "create the tag").values() if t.snapshot.id == snapshot_id), None)
    if holder is None:
        table.snapshot_manager.snapshot(snapshot_id)  # raises NotFound naming the ids that exist
        raise NotFound(f"snapshot {snapshot_id} not found")  # pragma: no cover - snapshot() raised
    if table.catalog_environment.versions is not None:
        return _create_on_server(table, name, holder.snapshot, retained)
    raw = None
    if holder.create_time is None and holder.time_retained_seconds is None:
        raw = table.file_io.read_text(tm.tag_path(holder.name))
    tag = tm.create_tag(name, holder.snapshot, retained, snapshot_text=raw)
    sync_iceberg_tags(table)
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
    refuse_on_catalog_server(table, "tag rename", "the REST API has no call to rename a tag")
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
        sync_iceberg_tags(table)  # Java leaves the old name in the Iceberg refs; the refs follow the tags here

    table.lock.run_with_lock(publish)
    return Tag(new_name, tag.snapshot, tag.create_time, tag.time_retained_seconds)


@dataclass
class TagReplacePlan:
    """``tag replace`` (Java's ``replace_tag``): the tag's new snapshot and retention, and the
    files only its old snapshot held (deleted after the tag moves, as ``tag delete`` would)."""

    name: str
    old: Tag
    snapshot: Snapshot
    time_retained_seconds: float | None
    freed: TagDeletionPlan

    def rows(self) -> Rows:
        return self.freed.rows()

    def describe(self, done: bool) -> str:
        verb = "moved" if done else "would move"
        kept = "" if self.time_retained_seconds is None else f", retained {java_duration_str(self.time_retained_seconds)}"
        files = f"; {len(self.freed.files)} file(s) only snapshot {self.old.snapshot.id} held " + (
            "deleted" if done else "would be deleted") if self.freed.files else ""
        return f"{verb} tag {self.name!r} from snapshot {self.old.snapshot.id} to {self.snapshot.id}{kept}{files}"


def plan_replace_tag(table: FileStoreTable, name: str, snapshot_id: int | None = None,
                     time_retained_seconds: float | None = None) -> TagReplacePlan:
    """Java 2.x ``replaceTag``: the tag must exist; it then names ``snapshot_id`` (an expired one
    held by a tag too) or the latest snapshot, with the given retention (else the table's
    ``tag.default-time-retained``, as ``tag create``). Reads only."""
    validate_tag_name(name)
    tm = table.tag_manager
    old = tm.tag(name)  # NotFound naming the tags that exist
    sm = table.snapshot_manager
    if snapshot_id is None:
        snap = sm.latest_snapshot()
        if snap is None:
            raise NotFound(f"cannot replace tag {name!r}: {table.identifier} has no snapshot")
    else:
        snap = sm.try_snapshot(snapshot_id) or _tagged_snapshot(table, snapshot_id)
    retained = time_retained_seconds if time_retained_seconds is not None else _default_retained(table)
    others = [t for n, t in _all_tags(table, "replace the tag").items() if n != name]
    if TagPeriod.of(table.options).to_time(name) is not None and tag_time_extractor(table.options) is not None:
        taken = sorted(t.name for t in others if t.snapshot.id == snap.id
                       and TagPeriod.of(table.options).to_time(t.name) is not None)
        if taken:
            raise InvalidInput(f"snapshot {snap.id} is already auto-tagged with {', '.join(taken)}")
    freed = plan_tag_deletion(table, [name], keeping=snap)
    freed.files = [f for f in freed.files if f.kind != "tag"]  # the tag file is rewritten, not deleted
    return TagReplacePlan(name, old, snap, retained, freed)


def _tagged_snapshot(table: FileStoreTable, snapshot_id: int) -> Snapshot:
    """Java's findSnapshot: an expired snapshot a tag still holds."""
    for t in _all_tags(table, "replace the tag").values():
        if t.snapshot.id == snapshot_id:
            return t.snapshot
    table.snapshot_manager.snapshot(snapshot_id)  # raises NotFound naming the ids that exist
    raise NotFound(f"snapshot {snapshot_id} not found")  # pragma: no cover - snapshot() raised


def apply_replace_tag(table: FileStoreTable, plan: TagReplacePlan) -> Tag:
    """Rewrite the tag (under the commit lock; the mirror is told), then delete what only its old
    snapshot held. A tag changed since planning refuses (nothing changed)."""
    tm = table.tag_manager
    now = tm.try_tag(plan.name)
    if now is None or now.snapshot.id != plan.old.snapshot.id:
        raise CommitConflict(f"tag {plan.name!r} of {table.identifier} changed while planning the replace; "
                             "nothing was changed, run it again")
    try:
        raw = table.file_io.read_text(table.snapshot_manager.snapshot_path(plan.snapshot.id))
    except NotFound:
        raw = None
    tag = tm.replace_tag(plan.name, plan.snapshot, plan.time_retained_seconds, snapshot_text=raw)
    sync_iceberg_tags(table)  # the Iceberg ref follows the tag before the old snapshot's files go
    if plan.freed.files:
        apply_tag_deletion(table, plan.freed)
    return tag


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

    ``older_than`` (Java's ``expire_tags`` procedure: a local wall clock) also expires tags
    created before it; a tag lacking a create time or a retention is then dated by its file's
    modification time (in local time), as Java does.
    """
    now = now or datetime.datetime.now()
    tm = table.tag_manager
    mtimes: dict[str, int | None] | None = None
    out: list[tuple[int, str]] = []
    for name, tag in _all_tags(table, "expire tags").items():
        create = tag.create_time
        retained = tag.time_retained_seconds
        if create is None or retained is None:
            if older_than is None:
                continue
            if mtimes is None:
                mtimes = {st.name: st.mtime_millis for st in tm.file_io.list_status(tm.tag_dir)}
            mtime = mtimes.get(TAG_PREFIX + name)
            if not mtime:
                continue  # Java: the tag file is gone, skip it
            create = datetime.datetime.fromtimestamp(mtime / 1000)
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


@dataclass(frozen=True)
class AutoTagStep:
    """One step of an automatic-tag run, in order: ``create`` a tag on a snapshot, ``delete``
    the oldest auto tag past ``tag.num-retained-max``, ``expire`` a tag past its retention."""

    action: str
    tag: str
    snapshot_id: int


@dataclass
class AutoTagPlan:
    """What ``tag trigger`` (Java's ``trigger_tag_automatic_creation``) does: the tags
    ``tag.automatic-creation`` / ``tag.creation-period`` would have made up to now, the auto
    tags ``tag.num-retained-max`` then drops, and (``tag.time-expire-enabled``) the expired ones."""

    identifier: str
    steps: list[AutoTagStep]

    def rows(self) -> Rows:
        return Rows(["action", "tag", "snapshot_id"],
                    [{"action": s.action, "tag": s.tag, "snapshot_id": s.snapshot_id} for s in self.steps])

    def names(self, action: str) -> list[str]:
        return [s.tag for s in self.steps if s.action == action]


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

    def resume(self, autos: list[Tag]) -> tuple[int, datetime.datetime | None]:
        """(first snapshot id to look at, next tag time) after the auto tag with the latest
        time (Java 2.x; 0.9 and 1.x took the one on the highest snapshot and refused when it
        held more than one)."""
        if not autos:
            return self.table.snapshot_manager.earliest_snapshot_id() or 1, None
        last = max(autos, key=lambda t: (self.period.to_time(t.name), t.name))
        last_time = self.period.to_time(last.name)
        assert last_time is not None  # an auto tag by construction
        return last.snapshot.id + 1, self.period.next_tag(last_time)


def plan_auto_tags(table: FileStoreTable, expire: bool = False) -> AutoTagPlan:
    """Java's TagAutoCreation.run() (then, with ``expire``, TagTimeExpire when
    ``tag.time-expire-enabled``) simulated on the tags as they are: continue after the last
    auto tag, tag each period once, honour ``tag.creation-delay``, ``tag.automatic-completion``
    and ``tag.num-retained-max``. Reads only."""
    plan = AutoTagPlan(table.identifier.full_name, [])
    extract = tag_time_extractor(table.options)
    if extract is not None:
        _plan_creation(table, _AutoTagging(table, extract), extract, plan)
    if expire and table.options.get_bool("tag.time-expire-enabled", True):
        gone = set(plan.names("delete"))
        tags = _all_tags(table, "expire tags")
        plan.steps += [AutoTagStep("expire", n, tags[n].snapshot.id) for n in expired_tag_names(table)
                       if n not in gone]
    return plan


def _plan_creation(table: FileStoreTable, auto: _AutoTagging, extract: TimeExtractor, plan: AutoTagPlan) -> None:
    period = auto.period
    autos = auto.auto_tags()
    start, next_tag = auto.resume(autos)
    held = sorted((t.snapshot.id, t.name) for t in autos)  # auto tags by snapshot, as Java trims them
    names = set(table.tag_manager.tag_names())
    sm = table.snapshot_manager
    for sid in [i for i in sm.snapshot_ids() if i >= start]:
        snap = sm.try_snapshot(sid)
        t = None if snap is None else extract(snap)
        if t is None or (next_tag is not None and t - auto.delay < period.next_tag(next_tag)):
            continue
        this_tag = next_tag if (auto.completion and next_tag is not None) else period.previous_tag(t)
        name = period.to_tag(this_tag)
        if name not in names:  # Java: createTag(..., ignoreIfExists=true)
            plan.steps.append(AutoTagStep("create", name, sid))
            names.add(name)
            held.append((sid, name))
            held.sort()
        next_tag = period.next_tag(this_tag)
        if auto.max_keep is not None and len(held) > auto.max_keep:
            excess, held = held[:len(held) - auto.max_keep], held[len(held) - auto.max_keep:]
            for esid, ename in excess:
                plan.steps.append(AutoTagStep("delete", ename, esid))
                names.discard(ename)


def apply_auto_tags(table: FileStoreTable, plan: AutoTagPlan) -> AutoTagPlan:
    """Carry out the steps in order: tags created with ``tag.default-time-retained``, trimmed
    and expired ones deleted with their files as ``tag delete`` does."""
    auto_retained = _default_retained(table)
    for step in plan.steps:
        if step.action == "create":
            if not table.tag_manager.tag_exists(step.tag):
                create_tag(table, step.tag, step.snapshot_id, auto_retained)
        elif table.tag_manager.tag_exists(step.tag):
            delete_tags(table, [step.tag])
    return plan


def auto_create_tags(table: FileStoreTable) -> list[str]:
    """Java's TagAutoCreation.run() for one (short-lived) writer; returns the tags created."""
    return apply_auto_tags(table, plan_auto_tags(table)).names("create")


def trigger_tags(table: FileStoreTable, dry_run: bool = False) -> AutoTagPlan:
    """Java's ``trigger_tag_automatic_creation`` (TagAutoManager.run): the automatic tags up to
    now, then tag time expiry; regardless of ``write-only``, as the procedure."""
    plan = plan_auto_tags(table, expire=True)
    return plan if dry_run else apply_auto_tags(table, plan)


def tag_maintenance_after_commit(table: FileStoreTable) -> dict[str, list[str]] | None:
    """Java's TagAutoManager after a commit: auto-create tags, then expire by time-retained.
    Skipped for ``write-only`` tables (as Java)."""
    if table.options.get_bool("write-only", False):
        return None
    created = auto_create_tags(table)
    expired = expire_tags_after_commit(table)
    return {"created": created, "expired": expired.tags if expired else []}
