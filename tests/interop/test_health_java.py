"""``health`` of tables Java Paimon 0.9 wrote: every table is assessed (none unreadable), and
the levels, retention and thresholds are read from Java's own metadata and options."""

from __future__ import annotations

import time

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.maintain.findings import FindingKind, Severity
from paimon_cli.core.maintain.health import assess_table

from .conftest import JavaTables

pytestmark = pytest.mark.java

LATER = 2 * 3600 * 1000


def test_every_java_table_is_assessed(java_tables: JavaTables) -> None:
    report = Warehouse(java_tables.warehouse).health(now_millis=int(time.time() * 1000) + LATER)
    by = {h.table: h for h in report.tables}
    assert sorted(by) == sorted(java_tables.tables)
    assert report.exit_code == 0 and report.unassessed == []
    got = {name: [(f.kind, f.severity) for f in h.findings] for name, h in by.items()}
    assert got == EXPECTED, got
    assert {name: h.score for name, h in by.items()} == {name: 100 - 10 * len(f) for name, f in EXPECTED.items()}


# Java 0.9's tables are small and fresh: nothing crosses Java's own thresholds
EXPECTED: dict[str, list[tuple[FindingKind, Severity]]] = {
    "pk_part": [], "append_t": [], "dv_t": [], "dyn_t": [], "nested_t": [],
}


def test_java_levels_and_retention_feed_the_rules(java_tables: JavaTables) -> None:
    """pk_part: a full compaction (snapshot 5) then one more commit: 2 sorted runs in the
    buckets that commit touched; with compaction-trigger 1 those buckets are over it. Its
    consumer c1 holds snapshot 4, so with num-retained.min 1 and every snapshot old, expire
    would remove snapshots 1..3 only; the consumer finding names c1 and what it holds."""
    table = Warehouse(java_tables.warehouse).table(java_tables.pk_part.identifier).open()
    h = assess_table(table.copy({"num-sorted-run.compaction-trigger": "1", "snapshot.num-retained.min": "1"}),
                     now_millis=int(time.time() * 1000) + LATER)
    by = {f.kind: f for f in h.findings}
    assert set(by) == {FindingKind.SORTED_RUNS, FindingKind.SNAPSHOTS, FindingKind.CONSUMERS}, h.findings
    latest = table.snapshot_manager.latest_snapshot_id()
    assert latest is not None
    held = by[FindingKind.CONSUMERS]
    assert held.value == latest - 4 and "c1 (next snapshot 4" in held.message  # 4 .. latest - 1
    runs = by[FindingKind.SORTED_RUNS]
    assert (runs.value, runs.threshold, runs.severity) == (2, 1, Severity.WARNING)
    snaps = by[FindingKind.SNAPSHOTS]
    assert snaps.value == 3 and "earliest 1" in snaps.message
