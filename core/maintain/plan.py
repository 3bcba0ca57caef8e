"""Deciding what ``maintain`` does to one table: health findings under the policy -> actions.

Nothing here writes. A plan lists each action with the reason (the finding, or the schedule)
and the actions the policy held back, so ``--dry-run`` prints exactly what a run would do.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..mergetree.file_writer import creation_time_millis
from ..operation.scan import FileStoreScan
from .findings import FindingKind, MaintenanceAction, TableHealth
from .policy import TableRules

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

# the order actions run in: drop what is going anyway first, rewrite, then clean up after the
# rewrite (compaction leaves old files for expiry and new manifests for compact-manifest)
ORDER = (
    MaintenanceAction.EXPIRE_PARTITIONS,
    MaintenanceAction.FULL_COMPACT,
    MaintenanceAction.COMPACT,
    MaintenanceAction.REWRITE_FILE_INDEX,
    MaintenanceAction.EXPIRE_TAGS,
    MaintenanceAction.EXPIRE_SNAPSHOTS,
    MaintenanceAction.EXPIRE_CHANGELOGS,
    MaintenanceAction.COMPACT_MANIFEST,
    MaintenanceAction.REMOVE_ORPHAN_FILES,
)

# the policy switch of each action
_SWITCH = {
    MaintenanceAction.COMPACT: "compact",
    MaintenanceAction.FULL_COMPACT: "compact",
    MaintenanceAction.COMPACT_MANIFEST: "compact_manifest",
    MaintenanceAction.EXPIRE_SNAPSHOTS: "expire_snapshots",
    MaintenanceAction.EXPIRE_CHANGELOGS: "expire_changelogs",
    MaintenanceAction.EXPIRE_PARTITIONS: "expire_partitions",
    MaintenanceAction.EXPIRE_TAGS: "expire_tags",
    MaintenanceAction.REWRITE_FILE_INDEX: "rewrite_file_index",
    MaintenanceAction.REMOVE_ORPHAN_FILES: "remove_orphan_files",
}


@dataclass(frozen=True)
class PlannedAction:
    """One procedure to run on a table, and why."""

    action: MaintenanceAction
    reason: str
    kinds: tuple[FindingKind, ...] = ()  # the findings it fixes (none: scheduled)

    def as_dict(self) -> dict[str, Any]:
        return {"action": self.action.value, "reason": self.reason, "fixes": [k.value for k in self.kinds]}


@dataclass
class TablePlan:
    """What ``maintain`` would do to one table."""

    health: TableHealth
    rules: TableRules | None
    actions: list[PlannedAction] = field(default_factory=list)
    held_back: list[PlannedAction] = field(default_factory=list)  # called for, but off by policy

    @property
    def identifier(self) -> str:
        return self.health.identifier


def plan_table(health: TableHealth, rules: TableRules, last_full_compaction: int | None = None,
               has_data: bool = True, now: int | None = None) -> TablePlan:
    """The actions ``health``'s findings call for under ``rules``, plus a scheduled full
    compaction when ``rules`` names an interval and ``last_full_compaction`` (creation-time
    millis, see :func:`last_full_compaction_millis`) is older than it (or unknown)."""
    plan = TablePlan(health, rules)
    if health.error is not None or any(f.kind is FindingKind.UNREADABLE_METADATA for f in health.findings):
        return plan  # never touched: an operator must look first
    wanted: dict[MaintenanceAction, list[tuple[FindingKind | None, str]]] = {}
    for f in health.findings:
        if f.action is not None:
            wanted.setdefault(f.action, []).append((f.kind, f.message))
    interval = rules.full_compaction_interval_millis
    if interval is not None and has_data and MaintenanceAction.FULL_COMPACT not in wanted:
        current = creation_time_millis() if now is None else now
        if last_full_compaction is None:
            wanted[MaintenanceAction.FULL_COMPACT] = [(None, f"no full compaction known; interval {_dur(interval)}")]
        elif current - last_full_compaction > interval:
            wanted[MaintenanceAction.FULL_COMPACT] = [(None, (
                f"last full compaction {_dur(current - last_full_compaction)} ago; interval {_dur(interval)}"))]
    if MaintenanceAction.FULL_COMPACT in wanted and MaintenanceAction.COMPACT in wanted:
        wanted[MaintenanceAction.FULL_COMPACT] += wanted.pop(MaintenanceAction.COMPACT)  # full covers it
    for action in ORDER:
        if action not in wanted:
            continue
        reasons = wanted[action]
        planned = PlannedAction(action, "; ".join(r for _, r in reasons), tuple(k for k, _ in reasons if k is not None))
        (plan.actions if getattr(rules, _SWITCH[action]) else plan.held_back).append(planned)
    return plan


def _dur(millis: int) -> str:
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("min", 60_000)):
        if millis >= size:
            return f"{millis / size:.1f}{unit}".replace(".0" + unit, unit)
    return f"{millis / 1000:.0f}s"


def last_full_compaction_millis(table: FileStoreTable) -> tuple[int | None, bool]:
    """(when the least recently fully compacted bucket was last fully compacted, has data).

    A primary-key bucket's last full compaction is the creation time of its top-level files
    (a compaction that reaches the top level rewrites the whole top run): Java 1.x restores
    the optimization interval's clock the same way (``EarlyFullCompaction``). A bucket with no
    top-level file was never fully compacted (None). Append tables have no levels to judge:
    their schedule is not applied (None with has_data False keeps them out of the plan).
    """
    snapshot = table.snapshot_manager.latest_snapshot()
    if snapshot is None or not table.is_primary_key_table:
        return None, False
    top = table.options.num_levels - 1
    newest: dict[tuple[bytes, int], int | None] = {}
    for e in FileStoreScan(table).batch_plan(snapshot):
        key = (e.partition, e.bucket)
        at_top = e.file.creation_time if e.file.level == top else None
        prev = newest.get(key)
        newest[key] = at_top if prev is None else (prev if at_top is None else max(prev, at_top))
    if not newest:
        return None, False
    times = list(newest.values())
    return (None if any(t is None for t in times) else min(t for t in times if t is not None)), True
