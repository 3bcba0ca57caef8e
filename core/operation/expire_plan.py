"""What an expiration decides before it deletes anything: the policy, the plan, and the
references that hold snapshots (tags, consumers, other branches).

Shared by snapshot expiry (:mod:`.snapshot_deletion`) and long-lived changelog expiry
(:mod:`.changelog_expire`); :mod:`.expire` applies the plan.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput
from ..refs.snapshot import Snapshot
from ..schema.options import CoreOptions, parse_int
from ..utils.durations import parse_duration_millis
from .file_deletion import CONSUMER, PHASE, FileDeletion, GuardedReader
from .used_files import UsedFiles, protect_other_branches

if TYPE_CHECKING:
    from ..iceberg.callback import IcebergExpiry
    from ..table.file_store_table import FileStoreTable

INT_MAX = 2147483647
ACTION = "expire"  # what refusals name


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
    # ``consumer.expiration-time``: consumers whose file is older than this are removed first
    # (Java's writers expire them before snapshots) and hold nothing; None: consumers never expire
    consumer_expire_before_millis: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "retain_max": self.retain_max, "retain_min": self.retain_min,
            "time_retained": self.time_retained, "cutoff_millis": self.cutoff_millis,
            "max_deletes": self.max_deletes, "changelog_decoupled": self.changelog_decoupled,
        }


class _Options:
    """Table options with the job's overrides, read as expiration reads them."""

    def __init__(self, table: FileStoreTable, overrides: dict[str, str] | None) -> None:
        self.core = CoreOptions({**table.schema.options, **(overrides or {})})
        self.raw = self.core.options

    def count(self, key: str, default: int) -> int:
        v = self.raw.get(key)
        if v is None or v.strip() == "":
            return default
        if v.strip().lower() == "infinite":
            return INT_MAX
        return parse_int(v, key)

    def millis(self, key: str, default: int) -> int:
        v = self.raw.get(key)
        return default if v is None else parse_duration_millis(v, key)


def resolve_policy(table: FileStoreTable, policy: ExpirePolicy | None = None,
                   options: dict[str, str] | None = None) -> ResolvedPolicy:
    """Flags over table options over Java's defaults; bad values are InvalidInput."""
    policy = policy or ExpirePolicy()
    opts = _Options(table, options)
    now = int(time.time() * 1000) if policy.now_millis is None else policy.now_millis
    retain_max = opts.count("snapshot.num-retained.max", INT_MAX) if policy.retain_max is None else policy.retain_max
    retain_min = opts.count("snapshot.num-retained.min", 10) if policy.retain_min is None else policy.retain_min
    max_deletes = opts.count("snapshot.expire.limit", 50) if policy.max_deletes is None else policy.max_deletes
    if policy.time_retained_millis is not None:
        time_ms = policy.time_retained_millis
        desc = f"{time_ms} ms"
    else:
        time_ms = opts.millis("snapshot.time-retained", 3_600_000)
        desc = f"snapshot.time-retained={opts.raw.get('snapshot.time-retained', '1 h')}"
    cutoff = now - time_ms
    if policy.older_than_millis is not None:
        cutoff = policy.older_than_millis
        desc = f"older than {policy.older_than_millis} (epoch ms)"
        time_ms = max(0, now - cutoff)
    check_retention(retain_min, retain_max, max_deletes, time_ms)
    cl_max = opts.count("changelog.num-retained.max", retain_max)
    cl_min = opts.count("changelog.num-retained.min", retain_min)
    cl_time = opts.millis("changelog.time-retained", time_ms)
    producer = (opts.raw.get("changelog-producer") or "none").strip().lower()
    decoupled = cl_max > retain_max or cl_min > retain_min or cl_time > time_ms
    consumer_ttl = opts.raw.get("consumer.expiration-time")
    consumer_before = None if consumer_ttl is None else now - parse_duration_millis(
        consumer_ttl, "consumer.expiration-time")
    return ResolvedPolicy(
        retain_max=retain_max, retain_min=retain_min, cutoff_millis=cutoff, time_retained=desc,
        max_deletes=max_deletes, changelog_retain_max=cl_max, changelog_retain_min=cl_min,
        changelog_cutoff_millis=now - cl_time,
        changelog_decoupled=decoupled,
        # Java's CoreOptions.consumerChangelogOnly: only with a decoupled changelog lifecycle do
        # consumers read changelog/ and release the snapshots
        consumer_changelog_only=opts.core.get_bool("consumer.changelog-only", False) and decoupled,
        produce_changelog=producer != "none", clean_empty_directories=opts.core.snapshot_clean_empty_directories,
        now_millis=now, consumer_expire_before_millis=consumer_before,
    )


def check_retention(retain_min: int, retain_max: int, max_deletes: int, time_ms: int) -> None:
    if retain_min < 1:
        raise InvalidInput(f"retain-min must be at least 1, got {retain_min}")
    if retain_max < retain_min:
        raise InvalidInput(f"retain-max ({retain_max}) must not be less than retain-min ({retain_min})")
    if max_deletes < 0:
        raise InvalidInput(f"max-deletes must not be negative, got {max_deletes}")
    if time_ms < 0:
        raise InvalidInput("time retained must not be negative")


# ---------------------------------------------------------------------------------------
# plan
# ---------------------------------------------------------------------------------------


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
    consumer_files: list[FileDeletion] = field(default_factory=list)  # expired consumers: deleted first
    deletions: list[FileDeletion] = field(default_factory=list)  # everything but the metadata files
    metadata_files: list[FileDeletion] = field(default_factory=list)  # snapshot/changelog files, ascending
    changelog_copies: list[int] = field(default_factory=list)  # ids moved to changelog/ (decoupled)
    earliest_hint: int | None = None  # EARLIEST value to write (None: leave it)
    holds: dict[int, list[str]] = field(default_factory=dict)  # retained id -> reasons
    per_snapshot: dict[int, tuple[int, int]] = field(default_factory=dict)  # id -> (files, bytes)
    notes: list[str] = field(default_factory=list)
    fingerprint: dict[str, Any] = field(default_factory=dict)
    empty_dir_candidates: list[str] = field(default_factory=list)
    kept_snapshot: int | None = None  # expire-changelogs --delete-all: the earliest snapshot, re-checked
    iceberg: IcebergExpiry | None = None  # the Iceberg snapshots that leave with the Paimon ones

    @property
    def files(self) -> list[FileDeletion]:
        return self.consumer_files + self.deletions + self.metadata_files

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

    def finish(self) -> ExpirePlan:
        """Put ``deletions`` in deletion order (phase by phase, stable) and count per snapshot."""
        self.deletions.sort(key=lambda f: PHASE[f.kind])
        for f in self.files:
            if f.snapshot_id is not None:
                n, b = self.per_snapshot.get(f.snapshot_id, (0, 0))
                self.per_snapshot[f.snapshot_id] = (n + 1, b + f.bytes)
        return self


# ---------------------------------------------------------------------------------------
# what holds snapshots
# ---------------------------------------------------------------------------------------


@dataclass
class RetainedRefs:
    """The tags, consumers and other branches of the table's branch, read fail closed."""

    tags: list[Snapshot]  # distinct tagged snapshots, by id
    tag_names: dict[int, list[str]]  # snapshot id -> tag names
    consumers: dict[str, int]  # consumer id -> next snapshot id (the ones that hold snapshots)
    branches: UsedFiles  # what the other branches use (empty until read)
    expired_consumers: dict[str, int] = field(default_factory=dict)  # consumer.expiration-time passed

    @classmethod
    def read(cls, table: FileStoreTable, reader: GuardedReader, branches: bool,
             consumer_expire_before: int | None = None) -> RetainedRefs:
        """``consumer_expire_before``: consumers whose file was last modified before this (epoch
        millis) are expired (Java's ``ConsumerManager.expire``) and hold nothing."""
        snaps: dict[int, Snapshot] = {}
        by_id: dict[int, list[str]] = {}
        for name, tag in reader.tags(table.tag_manager).items():
            snaps.setdefault(tag.snapshot.id, tag.snapshot)
            by_id.setdefault(tag.snapshot.id, []).append(name)
        consumers = reader.consumers(table.consumer_manager)
        expired: dict[str, int] = {}
        if consumer_expire_before is not None and consumers:
            mtimes = reader.consumer_mtimes(table.consumer_manager)
            expired = {c: n for c, n in consumers.items()
                       if (m := mtimes.get(c)) is not None and m < consumer_expire_before}
            consumers = {c: n for c, n in consumers.items() if c not in expired}
        refs = cls([snaps[i] for i in sorted(snaps)], by_id, consumers, UsedFiles(), expired)
        if branches:
            refs.read_branches(reader, table.branch)
        return refs

    def read_branches(self, reader: GuardedReader, branch: str | None) -> None:
        # writers expire after every commit: other branches are read only when something expires
        self.branches = protect_other_branches(reader, branch)

    def fingerprint(self) -> dict[str, Any]:
        """What must not change between planning and deleting (re-checked before deleting)."""
        return {
            "tags": sorted((n, i) for i, ns in self.tag_names.items() for n in ns),
            "consumers": sorted(self.consumers.items()),
            "expired_consumers": sorted(self.expired_consumers),
            "branch_files": len(self.branches.data),
            "branch_names": len(self.branches.names),
        }


def plan_consumer_expiry(table: FileStoreTable, reader: GuardedReader, plan: ExpirePlan, refs: RetainedRefs) -> None:
    """The files of the consumers ``consumer.expiration-time`` expired: deleted before anything
    else, as Java's writers do (so they stop holding snapshots)."""
    cm = table.consumer_manager
    for cid in sorted(refs.expired_consumers):
        path = cm.consumer_path(cid)
        plan.consumer_files.append(FileDeletion(path, CONSUMER, reader.size(path) or 0, None))
    if refs.expired_consumers:
        plan.notes.append(f"consumer.expiration-time: expiring consumer(s) {', '.join(sorted(refs.expired_consumers))} "
                          "(not moved for longer than that)")
