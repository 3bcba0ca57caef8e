"""repair: make the ``EARLIEST`` / ``LATEST`` hints of ``snapshot/`` name what the directory holds.

Readers trust the hints the way Java's ``HintFileUtils`` does: ``LATEST`` = N whenever
``snapshot-(N+1)`` does not exist, ``EARLIEST`` = N whenever ``snapshot-N`` exists. So a stale
``LATEST`` below a missing snapshot hides newer snapshots, one past the last snapshot names
nothing, and an ``EARLIEST`` below a gap in the snapshot ids sends expiration and time travel
into snapshots that are gone. Java's hint text is a bare number (``Long.parseLong``: no
whitespace); anything else counts as no hint.

The repair (a plan first, so ``--dry-run`` prints exactly what is written):

* ``LATEST`` := the highest snapshot id in the directory;
* ``EARLIEST`` := the earliest snapshot as readers resolve it (the hint if its snapshot exists,
  else the lowest id), provided every snapshot from there to the latest exists;
* a gap between that earliest snapshot and the latest is not guessed over: it is refused
  unless ``earliest`` names the snapshot right after the gap, with Java's
  ``repair_earliest_snapshot`` preconditions (not before the current earliest, not after the
  latest, every snapshot from it to the latest exists, and it is the current earliest or
  ``snapshot-(N-1)`` is missing). The snapshots before the gap are left in place (their
  files stay protected from orphan removal) but are no longer reached;
* a directory without snapshots gets its hints deleted (they name snapshots that are gone).

Nothing but the two hint files is ever written or deleted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..errors import CommitConflict, InvalidInput, NotFound, UnsafeRefused
from ..io.fileio import join
from ..refs.snapshot import EARLIEST, LATEST, contiguous_start
from ..utils.rows import Rows
from .metastore_sync import PartitionSyncPlan, apply_partition_sync, plan_partition_sync

if TYPE_CHECKING:
    from ..refs.snapshot import SnapshotManager
    from ..table.file_store_table import FileStoreTable

PLAN_COLUMNS = ["hint", "current", "repaired", "action", "reason"]


@dataclass(frozen=True)
class HintFix:
    """One hint file: its text now (None: absent) and the id it should hold (None: delete)."""

    hint: str
    current: str | None
    target: int | None
    reason: str

    @property
    def action(self) -> str:
        if self.target is None:
            return "keep" if self.current is None else "delete"
        return "keep" if self.current == str(self.target) else "write"

    def as_row(self) -> dict[str, Any]:
        return {"hint": self.hint, "current": "(absent)" if self.current is None else self.current,
                "repaired": self.target, "action": self.action, "reason": self.reason}


@dataclass
class RepairPlan:
    """The snapshot ids of one branch and the hint files a repair writes."""

    snapshot_dir: str
    snapshot_ids: list[int]
    fixes: list[HintFix] = field(default_factory=list)
    earliest: int | None = None  # the earliest argument the plan was made for
    partitions: PartitionSyncPlan | None = None  # the metastore's partitions, when it keeps them
    metastore_schema: str | None = None  # how the metastore's copy of the schema drifted (None: it did not)

    @property
    def changes(self) -> list[HintFix]:
        return [f for f in self.fixes if f.action != "keep"]

    def rows(self) -> Rows:
        extra = self.partitions.as_rows() if self.partitions is not None else []
        if self.metastore_schema is not None:
            extra.append({"hint": "metastore table", "current": self.metastore_schema, "repaired": "in step",
                          "action": "update", "reason": "the table's schema files are the truth"})
        return Rows(PLAN_COLUMNS, [f.as_row() for f in self.fixes] + extra)

    @property
    def partition_changes(self) -> int:
        p = self.partitions
        return 0 if p is None else len(p.add) + len(p.drop)

    def describe_ids(self) -> str:
        ids = self.snapshot_ids
        if not ids:
            return "no snapshots"
        missing = len(range(ids[0], ids[-1] + 1)) - len(ids)
        return f"snapshots {ids[0]}..{ids[-1]}" + (f" ({missing} ids missing)" if missing else "")


def _raw_hint(sm: SnapshotManager, name: str) -> str | None:
    try:
        return sm.file_io.read_bytes(join(sm.snapshot_dir, name)).decode("utf-8", errors="replace")
    except NotFound:
        return None


def _parsed(raw: str | None) -> int | None:
    """The id Java reads from a hint (``Long.parseLong`` of the whole text), or None."""
    if raw is None or not raw.lstrip("-").isdigit() or not raw.isascii():
        return None
    return int(raw)


def plan_repair(table: FileStoreTable, earliest: int | None = None) -> RepairPlan:
    """Decide the hint files (reads the snapshot directory, writes nothing) and, when the
    catalog's metastore keeps the table's partitions, the partitions to add or drop there."""
    plan = _plan_hints(table, earliest)
    if table.branch is None:
        plan.partitions = plan_partition_sync(table)
    return plan


def _plan_hints(table: FileStoreTable, earliest: int | None) -> RepairPlan:
    sm = table.snapshot_manager
    ids = sm.snapshot_ids()
    raw_e, raw_l = _raw_hint(sm, EARLIEST), _raw_hint(sm, LATEST)
    plan = RepairPlan(sm.snapshot_dir, ids, earliest=earliest)
    if not ids:
        if earliest is not None:
            raise NotFound(f"repair --earliest {earliest}: {table.identifier.full_name} has no snapshots")
        plan.fixes = [HintFix(EARLIEST, raw_e, None, "no snapshot exists"),
                      HintFix(LATEST, raw_l, None, "no snapshot exists")]
        return plan
    latest = ids[-1]
    hinted = _parsed(raw_e)
    current = hinted if hinted is not None and hinted in set(ids) else ids[0]
    start = contiguous_start(ids)
    if earliest is not None:
        _check_earliest(earliest, current, latest, ids)
        reason = f"--earliest {earliest}: the first snapshot after the gap" if earliest != current else \
            "--earliest: the current earliest snapshot"
        target_e = earliest
    elif current < start:
        missing = sorted(set(range(current, latest + 1)) - set(ids))
        raise UnsafeRefused(
            f"repair: {table.identifier.full_name}: snapshot {_ids_text(missing)} between the earliest snapshot "
            f"{current} and the latest {latest} {'is' if len(missing) == 1 else 'are'} missing; "
            f"`repair --earliest {start}` makes snapshot {start} the earliest (snapshots before it are then "
            f"no longer read or expired); nothing changed")
    else:
        target_e = current
        reason = "the earliest snapshot" + (" (hint trusted: its snapshot exists)" if hinted == current else "")
    for sid in dict.fromkeys((target_e, latest)):
        sm.snapshot(sid)  # a hint must name a readable snapshot (CorruptMetadata otherwise)
    plan.fixes = [HintFix(EARLIEST, raw_e, target_e, reason),
                  HintFix(LATEST, raw_l, latest, "the highest snapshot id")]
    return plan


def _ids_text(ids: list[int]) -> str:
    if len(ids) <= 3:
        return ", ".join(map(str, ids))
    return f"{ids[0]}, {ids[1]}, ... {ids[-1]} ({len(ids)} ids)"


def _check_earliest(target: int, current: int, latest: int, ids: list[int]) -> None:
    """Java's ``SnapshotManager.repairEarliestSnapshot`` preconditions."""
    present = set(ids)
    if target < current:
        raise InvalidInput(f"repair --earliest {target}: must not be earlier than the current earliest "
                           f"snapshot {current}")
    if target > latest:
        raise InvalidInput(f"repair --earliest {target}: must not be later than the latest snapshot {latest}")
    for sid in range(target, latest + 1):
        if sid not in present:
            raise InvalidInput(f"repair --earliest {target}: snapshot {sid} does not exist (every snapshot from "
                               f"the new earliest to the latest {latest} must)")
    if target != current and target - 1 in present:
        raise InvalidInput(f"repair --earliest {target}: snapshot {target} does not immediately follow a "
                           f"snapshot gap (snapshot {target - 1} exists)")


def apply_repair(table: FileStoreTable, plan: RepairPlan) -> list[HintFix]:
    """Write (or delete) the hints the plan changes; the directory must still be as planned."""
    sm = table.snapshot_manager
    now = plan_repair(table, plan.earliest)
    if now.snapshot_ids != plan.snapshot_ids or now.fixes != plan.fixes:
        raise CommitConflict(f"repair: the snapshots of {table.identifier.full_name} changed while planning "
                             "(a concurrent commit or expiration); nothing changed, run it again")
    for fix in plan.changes:
        path = join(sm.snapshot_dir, fix.hint)
        if fix.target is None:
            sm.file_io.delete(path)
        elif fix.hint == EARLIEST:
            sm.commit_earliest_hint(fix.target)
        else:
            sm.commit_latest_hint(fix.target)
    if plan.partitions is not None:
        apply_partition_sync(table, plan.partitions)
    return plan.changes
