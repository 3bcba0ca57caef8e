"""Planning: findings under the policy -> ordered actions with reasons; the full-compaction schedule."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa

from paimon_cli.core.api import Warehouse
from paimon_cli.core.maintain.findings import Finding, FindingKind, MaintenanceAction, Severity, TableHealth
from paimon_cli.core.maintain.plan import last_full_compaction_millis, plan_table
from paimon_cli.core.maintain.policy import DAY_MILLIS, TableRules
from paimon_cli.core.mergetree.file_writer import creation_time_millis


def finding(kind: FindingKind, message: str = "") -> Finding:
    return Finding(kind, Severity.WARNING, 1, 0, "count", message or kind.value, f"fix {kind.value}")


def health(*kinds: FindingKind, error: str | None = None) -> TableHealth:
    return TableHealth("db", "t", 50, tuple(finding(k) for k in kinds), error=error)


def actions(plan: object) -> list[str]:
    return [a.action.value for a in plan.actions]  # type: ignore[attr-defined]


def test_each_finding_becomes_its_action_in_run_order_with_its_reason() -> None:
    h = health(FindingKind.MANIFESTS, FindingKind.SNAPSHOTS, FindingKind.SMALL_FILES, FindingKind.EXPIRED_PARTITIONS,
               FindingKind.MISSING_FILE_INDEX, FindingKind.SORTED_RUNS, FindingKind.EXPIRED_TAGS)
    plan = plan_table(h, TableRules())
    assert actions(plan) == ["expire-partitions", "compact", "rewrite-file-index", "tag expire", "expire",
                             "compact-manifest"]
    compact = plan.actions[1]
    assert compact.reason == "small_files; sorted_runs" and compact.kinds == (FindingKind.SMALL_FILES,
                                                                              FindingKind.SORTED_RUNS)


def test_policy_holds_actions_back_and_full_compaction_covers_compaction() -> None:
    h = health(FindingKind.SMALL_FILES, FindingKind.SIZE_AMPLIFICATION, FindingKind.EXPIRED_TAGS,
               FindingKind.ORPHAN_FILES)
    plan = plan_table(h, TableRules(expire_tags=False))
    assert actions(plan) == ["compact --full"]
    assert plan.actions[0].kinds == (FindingKind.SIZE_AMPLIFICATION, FindingKind.SMALL_FILES)
    assert [a.action for a in plan.held_back] == [MaintenanceAction.EXPIRE_TAGS, MaintenanceAction.REMOVE_ORPHAN_FILES]
    assert actions(plan_table(h, TableRules(remove_orphan_files=True, expire_tags=False)))[-1] == "remove-orphan-files"


def test_unreadable_tables_are_never_planned() -> None:
    assert plan_table(health(FindingKind.SMALL_FILES, error="bad snapshot"), TableRules()).actions == []
    assert plan_table(health(FindingKind.UNREADABLE_METADATA, FindingKind.SNAPSHOTS), TableRules()).actions == []


def test_full_compaction_schedule() -> None:
    week = 7 * DAY_MILLIS
    rules = TableRules(full_compaction_interval_millis=week)
    now = 100 * DAY_MILLIS
    assert actions(plan_table(health(), rules, now - week + 1, True, now)) == []
    due = plan_table(health(FindingKind.SMALL_FILES), rules, now - week - DAY_MILLIS, True, now)
    assert actions(due) == ["compact --full"]
    assert due.actions[0].reason.startswith("last full compaction 8d ago; interval 7d")
    assert "no full compaction known" in plan_table(health(), rules, None, True, now).actions[0].reason
    assert actions(plan_table(health(), rules, None, False, now)) == []  # no data: nothing to compact
    assert actions(plan_table(health(), TableRules(), None, True, now)) == []  # no interval: no schedule


def test_last_full_compaction_is_the_top_level_files_creation_time(tmp_path: Path) -> None:
    wh = Warehouse(str(tmp_path))
    t = wh.create_table("db.pk", "id BIGINT NOT NULL, v STRING", primary_key="id",
                        options={"bucket": "2", "write-only": "true"})
    assert last_full_compaction_millis(t.open()) == (None, False)
    t.write(pa.table({"id": pa.array(range(20), pa.int64()), "v": pa.array(["a"] * 20)}))
    assert last_full_compaction_millis(t.open()) == (None, True)  # level 0 only: never fully compacted
    before = creation_time_millis()
    t.compact(full=True)
    after = creation_time_millis()
    t.write(pa.table({"id": pa.array([1], pa.int64()), "v": pa.array(["b"])}))  # a new level-0 file
    last, has_data = last_full_compaction_millis(t.open())
    assert has_data and last is not None and before - 1000 <= last <= after + 1000
    a = wh.create_table("db.append", "id BIGINT", options={"bucket": "-1"})
    a.write(pa.table({"id": pa.array([1], pa.int64())}))
    assert last_full_compaction_millis(a.open()) == (None, False)  # append tables have no schedule
