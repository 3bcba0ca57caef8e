"""``health``: a warehouse of tables in known bad states gets exactly the findings it should.

Every table is built with our own ``write`` / ``compact`` / ``alter`` / ``tag``; the state each
one is in is the one a real operator meets (small files of a writer without compaction, a
level-0 backlog, snapshots nobody expired, ...). Time-based retention is checked two hours
ahead (``now_millis``), so nothing depends on the wall clock.
"""

from __future__ import annotations

import time
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.errors import NotFound
from paimon_cli.core.maintain.findings import FindingKind, MaintenanceAction, Severity, TableHealth
from paimon_cli.core.maintain.health import assess_table, fix_command, score_of

COLUMNS = "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING"
LATER = 2 * 3600 * 1000  # assess two hours ahead: past the default snapshot.time-retained (1 h)


def rows(ids: list[int], dt: str = "2024-05-01", v: str = "v") -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "dt": [dt] * len(ids), "v": [f"{v}{i}" for i in ids]})


def build_bad_warehouse(root: Path) -> Warehouse:
    """One table per state; ``corrupt`` has a latest snapshot that is not JSON."""
    w = Warehouse(str(root))
    t = w.create_table("db.healthy_pk", COLUMNS, primary_key="id", options={"bucket": "1"})
    t.write(rows([1, 2]))
    t.write(rows([2, 3]))
    w.create_table("db.healthy_log", COLUMNS).write(rows([1, 2]))
    t = w.create_table("db.small", COLUMNS, options={"bucket": "1", "bucket-key": "id"})
    for i in range(6):  # a writer without compaction: one small file per commit
        t.write(rows([i]), write_only=True)
    t = w.create_table("db.l0", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(8):  # 8 level-0 runs: Java's writer stalls at stop-trigger 5 + 3
        t.write(rows([i]), write_only=True)
    t = w.create_table("db.l0_warn", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(6):  # above compaction-trigger 5, below stop-trigger 8
        t.write(rows([i]), write_only=True)
    t = w.create_table("db.many_snapshots", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(12):
        t.write(rows([i % 3]), expire=False)
    t = w.create_table("db.parts", COLUMNS, partition_by="dt")
    t.write(rows([1], "2020-01-01"))
    t.write(rows([2], "2099-01-01"))
    t.alter(set_options={"partition.expiration-time": "7 d"})
    t = w.create_table("db.idx", COLUMNS)
    t.write(rows([1, 2]))
    t.alter(set_options={"file-index.bloom-filter.columns": "v"})  # configured after the data
    t = w.create_table("db.manifests", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(3):
        t.write(rows([i]), write_only=True)
    t.alter(set_options={"manifest.merge-min-count": "3"})
    t = w.create_table("db.deletes", COLUMNS, primary_key="id", options={"bucket": "1"})
    t.write(rows([1, 2, 3]), write_only=True)
    t.write(rows([1, 2]), delete=True, write_only=True)
    t = w.create_table("db.amplified", COLUMNS, primary_key="id", options={"bucket": "1"})
    t.write(rows([1]))
    t.compact(full=True)
    for _ in range(4):  # 5 runs (Java checks size amplification from compaction-trigger on):
        t.write(rows([1]), write_only=True)  # four on top of a compacted base of the same size, 400 %
    t = w.create_table("db.tags", COLUMNS)
    t.write(rows([1]))
    t.create_tag("short", time_retained="1 min")
    t.create_tag("forever")
    t = w.create_table("db.corrupt", COLUMNS)
    t.write(rows([1]))
    t.write(rows([2]))
    (root / "db.db" / "corrupt" / "snapshot" / "snapshot-2").write_text("{ not json")
    return w


@pytest.fixture(scope="module")
def bad(tmp_path_factory: pytest.TempPathFactory) -> tuple[Warehouse, dict[str, TableHealth]]:
    w = build_bad_warehouse(tmp_path_factory.mktemp("health") / "wh")
    report = w.health(now_millis=int(time.time() * 1000) + LATER)
    return w, {h.table: h for h in report.tables}


def kinds(h: TableHealth) -> list[tuple[FindingKind, Severity]]:
    return [(f.kind, f.severity) for f in h.findings]


EXPECTED = {
    "healthy_pk": [],
    "healthy_log": [],
    "small": [(FindingKind.SMALL_FILES, Severity.WARNING)],
    "l0": [(FindingKind.SORTED_RUNS, Severity.CRITICAL)],
    "l0_warn": [(FindingKind.SORTED_RUNS, Severity.WARNING)],
    "many_snapshots": [(FindingKind.SNAPSHOTS, Severity.WARNING)],
    "parts": [(FindingKind.EXPIRED_PARTITIONS, Severity.WARNING)],
    "idx": [(FindingKind.MISSING_FILE_INDEX, Severity.WARNING)],
    "manifests": [(FindingKind.MANIFESTS, Severity.WARNING)],
    "deletes": [(FindingKind.DELETE_RATIO, Severity.WARNING)],
    "amplified": [(FindingKind.SIZE_AMPLIFICATION, Severity.WARNING)],
    "tags": [(FindingKind.EXPIRED_TAGS, Severity.WARNING)],
    "corrupt": [(FindingKind.UNREADABLE_METADATA, Severity.CRITICAL)],
}


def test_each_table_gets_exactly_its_findings(bad: tuple[Warehouse, dict[str, TableHealth]]) -> None:
    _, by_name = bad
    assert sorted(by_name) == sorted(EXPECTED)
    got = {name: kinds(h) for name, h in by_name.items()}
    assert got == EXPECTED


def test_scores(bad: tuple[Warehouse, dict[str, TableHealth]]) -> None:
    _, by_name = bad
    assert by_name["healthy_pk"].score == by_name["healthy_log"].score == 100
    assert by_name["small"].score == 90  # one warning
    assert by_name["l0"].score == 70  # one critical
    corrupt = by_name["corrupt"]
    assert corrupt.score == 0 and corrupt.error_code == 4
    assert corrupt.error is not None and "snapshot-2" in corrupt.error
    assert all(h.error is None for n, h in by_name.items() if n != "corrupt")  # the others were assessed


def test_measured_values_and_thresholds(bad: tuple[Warehouse, dict[str, TableHealth]]) -> None:
    _, by_name = bad

    def one(name: str):  # type: ignore[no-untyped-def]
        (f,) = by_name[name].findings
        return f

    f = one("small")
    assert (f.value, f.threshold, f.unit) == (6, 5, "files")  # compaction.min.file-num's default
    f = one("l0")
    assert (f.value, f.threshold, f.unit) == (8, 8, "sorted runs")  # stop-trigger = trigger + 3
    f = one("l0_warn")
    assert (f.value, f.threshold) == (6, 5)  # num-sorted-run.compaction-trigger
    f = one("many_snapshots")
    assert f.unit == "snapshots" and f.value > 0
    wh, _ = bad
    sm = wh.table("db.many_snapshots").open().snapshot_manager
    assert f.value == len(sm.snapshot_ids()) - 10  # all but snapshot.num-retained.min
    f = one("parts")
    assert f.value == 1 and "dt=2020-01-01" in f.message
    f = one("idx")
    assert f.value == 1 and "bloom-filter(v)" in f.message
    f = one("manifests")
    assert f.value >= 3 and f.threshold == 3
    f = one("deletes")
    assert f.value == pytest.approx(2 / 5) and f.threshold == 0.2
    f = one("amplified")
    assert f.threshold == 200 and f.value > 200
    f = one("tags")
    assert f.value == 1 and "short" in f.message and "forever" not in f.message


def test_each_finding_names_the_command_that_fixes_it(bad: tuple[Warehouse, dict[str, TableHealth]]) -> None:
    wh, by_name = bad
    fixes = {name: [f.fix for f in h.findings] for name, h in by_name.items()}
    w = wh.path
    assert fixes["small"] == [f"paimon-cli compact db.small --warehouse {w}"]
    assert fixes["amplified"] == [f"paimon-cli compact db.amplified --full --warehouse {w}"]
    assert fixes["manifests"] == [f"paimon-cli compact-manifest db.manifests --warehouse {w}"]
    assert fixes["many_snapshots"] == [f"paimon-cli expire db.many_snapshots --warehouse {w}"]
    assert fixes["parts"] == [f"paimon-cli expire-partitions db.parts --warehouse {w}"]
    assert fixes["tags"] == [f"paimon-cli tag expire db.tags --warehouse {w}"]
    assert fixes["idx"] == [f"paimon-cli rewrite-file-index db.idx --warehouse {w}"]
    assert fixes["corrupt"] == [""]  # nothing automatic may fix unreadable metadata
    assert fix_command(MaintenanceAction.EXPIRE_CHANGELOGS, "a.b", "/w x") == \
        "paimon-cli expire a.b --changelog --warehouse '/w x'"


def test_the_fixes_fix(tmp_path: Path) -> None:
    """Running each finding's fix clears it (what ``maintain`` relies on)."""
    w = Warehouse(str(tmp_path / "wh"))
    t = w.create_table("db.l0", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(8):
        t.write(rows([i]), write_only=True)
    t2 = w.create_table("db.idx", COLUMNS)
    t2.write(rows([1, 2]))
    t2.alter(set_options={"file-index.bloom-filter.columns": "v"})
    before = {h.table: kinds(h) for h in w.health().tables}
    assert before == {"l0": [(FindingKind.SORTED_RUNS, Severity.CRITICAL)],
                      "idx": [(FindingKind.MISSING_FILE_INDEX, Severity.WARNING)]}
    t.compact()
    t2.rewrite_file_index()
    after = w.health().tables
    assert [(h.table, h.score, h.findings) for h in after] == [("idx", 100, ()), ("l0", 100, ())]


def test_time_retention_follows_the_clock(bad: tuple[Warehouse, dict[str, TableHealth]]) -> None:
    """Assessed now, nothing is past the 1-hour retention or the tag's minute yet."""
    wh, _ = bad
    table = wh.table("db.many_snapshots").open()
    assert assess_table(table).findings == ()
    tags = assess_table(wh.table("db.tags").open())
    assert tags.findings == ()


def test_selectors(bad: tuple[Warehouse, dict[str, TableHealth]]) -> None:
    wh, _ = bad
    assert [h.identifier for h in wh.health(["db.small", "db.l0", "db.small"]).tables] == ["db.small", "db.l0"]
    assert len(wh.health("db").tables) == len(EXPECTED)
    with pytest.raises(NotFound):
        wh.health(["nodb"])
    with pytest.raises(NotFound):
        wh.health(["db.nope"])


def test_unreadable_schema_is_a_result_not_a_crash(tmp_path: Path) -> None:
    w = Warehouse(str(tmp_path / "wh"))
    w.create_table("db.ok", COLUMNS).write(rows([1]))
    w.create_table("db.bad", COLUMNS)
    (tmp_path / "wh" / "db.db" / "bad" / "schema" / "schema-0").write_text("garbage")
    report = w.health()
    by = {h.table: h for h in report.tables}
    assert by["ok"].score == 100 and by["bad"].score == 0 and by["bad"].error
    assert report.exit_code == 4 and [h.table for h in report.unassessed] == ["bad"]


def test_dynamic_options_change_the_thresholds(bad: tuple[Warehouse, dict[str, TableHealth]]) -> None:
    """Thresholds come from the table's own options (a job's overrides included)."""
    wh, _ = bad
    table = wh.table("db.healthy_pk").open()
    h = assess_table(table.copy({"num-sorted-run.compaction-trigger": "1"}), warehouse="/w")
    assert kinds(h) == [(FindingKind.SORTED_RUNS, Severity.WARNING)]
    assert h.findings[0].threshold == 1


def test_orphans_only_when_asked(tmp_path: Path) -> None:
    import os

    w = Warehouse(str(tmp_path / "wh"))
    w.create_table("db.t", COLUMNS).write(rows([1]))
    stray = tmp_path / "wh" / "db.db" / "t" / "bucket-0" / "data-stray.parquet"
    stray.write_bytes(b"x" * 1000)
    then = time.time() - 3 * 86400
    os.utime(stray, (then, then))
    assert w.health().tables[0].findings == ()
    (f,) = w.health(scan_orphans=True).tables[0].findings
    assert (f.kind, f.value, f.unit) == (FindingKind.ORPHAN_FILES, 1000, "bytes")
    assert f.fix.startswith("paimon-cli remove-orphan-files db.t ")


def test_score_of() -> None:
    from paimon_cli.core.maintain.findings import Finding

    def f(kind: FindingKind, sev: Severity) -> Finding:
        return Finding(kind, sev, 1, 0, "x", "", "")

    assert score_of([]) == 100
    assert score_of([f(FindingKind.SMALL_FILES, Severity.INFO)]) == 100
    assert score_of([f(FindingKind.SMALL_FILES, Severity.WARNING), f(FindingKind.SORTED_RUNS, Severity.CRITICAL)]) == 60
    assert score_of([f(FindingKind.SORTED_RUNS, Severity.CRITICAL)] * 4) == 0
    assert score_of([f(FindingKind.UNREADABLE_METADATA, Severity.CRITICAL)]) == 0


def test_changelogs_and_deletion_vectors(tmp_path: Path) -> None:
    """Long-lived changelogs past their retention; rows deletion vectors mark (the cardinality
    our index manifest records), cleared by the full compaction the finding names."""
    w = Warehouse(str(tmp_path / "wh"))
    cl = w.create_table("db.cl", "id BIGINT NOT NULL, v STRING", primary_key="id", options={
        "bucket": "1", "changelog-producer": "input", "snapshot.num-retained.min": "1",
        "snapshot.num-retained.max": "1", "changelog.num-retained.min": "1", "changelog.num-retained.max": "10"})
    for i in range(4):  # inline expiry moves snapshots 1..3 to changelog/ (decoupled retention)
        cl.write(pa.table({"id": pa.array([i], pa.int64()), "v": ["x"]}))
    dv = w.create_table("db.dv", "id BIGINT NOT NULL, v STRING", primary_key="id",
                        options={"bucket": "1", "deletion-vectors.enabled": "true"})
    dv.write(pa.table({"id": pa.array(range(10), pa.int64()), "v": ["a"] * 10}))
    dv.compact(full=True)
    dv.write(pa.table({"id": pa.array(range(6), pa.int64()), "v": ["b"] * 6}))
    dv.compact()  # marks the 6 overwritten rows of the compacted file in a deletion vector
    by = {h.table: h for h in w.health(now_millis=int(time.time() * 1000) + LATER).tables}
    (f,) = by["cl"].findings
    # changelog 3 is the latest one, which Java keeps; 1 and 2 are past changelog retention
    assert (f.kind, f.value, f.unit) == (FindingKind.CHANGELOGS, 2, "changelogs")
    assert f.fix == f"paimon-cli expire db.cl --changelog --warehouse {w.path}"
    (f,) = by["dv"].findings
    assert (f.kind, f.value, f.threshold) == (FindingKind.DELETE_RATIO, pytest.approx(6 / 16), 0.2)
    assert f.action is MaintenanceAction.FULL_COMPACT
    dv.compact(full=True)
    assert w.health(["db.dv"]).tables[0].findings == ()


def test_an_index_added_on_another_column_is_missing(tmp_path: Path) -> None:
    """Files indexed on one column lack the index configured later on another; after the
    rewrite they have both and the finding is gone."""
    w = Warehouse(str(tmp_path / "wh"))
    t = w.create_table("db.idx2", COLUMNS, options={"file-index.bloom-filter.columns": "id",
                                                   "file-index.in-manifest-threshold": "1 mb"})  # embedded
    t.write(rows([1, 2]))
    assert w.health().tables[0].findings == ()
    t.alter(set_options={"file-index.bloom-filter.columns": "id,v"})
    [f] = w.health().tables[0].findings
    assert (f.kind, f.value) == (FindingKind.MISSING_FILE_INDEX, 1)
    t.rewrite_file_index()
    assert w.health().tables[0].findings == ()


def test_consumers_that_pin_snapshots(tmp_path: Path) -> None:
    """A consumer below what retention keeps is named with its age and the snapshots it holds;
    its fix deletes it (never run by ``maintain``) and clears the finding. A consumer
    ``consumer.expiration-time`` expires pins nothing (the next expire removes it)."""
    import os

    w = Warehouse(str(tmp_path / "wh"))
    t = w.create_table("db.c", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(14):
        t.write(rows([i % 3]), expire=False)
    latest = t.open().snapshot_manager.latest_snapshot_id()
    assert latest is not None
    keep_from = latest - 10 + 1  # snapshot.num-retained.min
    t.reset_consumer("gone-job", snapshot=2)
    t.reset_consumer("live-job", snapshot=latest)
    cm = t.open().consumer_manager
    old = time.time() - 3 * 86400
    os.utime(cm.consumer_path("gone-job"), (old, old))
    now = int(time.time() * 1000) + LATER
    (h,) = w.health(["db.c"], now_millis=now).tables
    # snapshot 1 still expires; gone-job keeps 2 .. keep_from - 1
    assert kinds(h) == [(FindingKind.SNAPSHOTS, Severity.WARNING), (FindingKind.CONSUMERS, Severity.WARNING)]
    f = h.findings[1]
    assert f.value == keep_from - 2 and f.unit == "snapshots"
    assert "gone-job (next snapshot 2, last moved 3 days" in f.message and f"holds {keep_from - 2})" in f.message
    assert "live-job" not in f.message
    assert f.fix == f"paimon-cli consumer reset db.c gone-job --warehouse {w.path}"
    assert f.action is None  # maintain never drops a reader's progress
    t.alter(set_options={"consumer.expiration-time": "1 d"})
    (h,) = w.health(["db.c"], now_millis=now).tables
    assert [k for k, _ in kinds(h)] == [FindingKind.SNAPSHOTS]  # expire removes it, then 2..4 go
    t.alter(unset="consumer.expiration-time")
    t.reset_consumer("gone-job")
    (h,) = w.health(["db.c"], now_millis=now).tables
    assert [k for k, _ in kinds(h)] == [FindingKind.SNAPSHOTS]


def test_several_consumers_fix_clears_them_all(tmp_path: Path) -> None:
    import shlex
    import subprocess
    import sys

    w = Warehouse(str(tmp_path / "wh"))
    t = w.create_table("db.c", COLUMNS, primary_key="id", options={"bucket": "1"})
    for i in range(12):
        t.write(rows([i % 3]), expire=False)
    latest = t.open().snapshot_manager.latest_snapshot_id()
    assert latest is not None
    for cid, sid in (("a.1", 1), ("b-2", 2), ("keep", latest)):
        t.reset_consumer(cid, snapshot=sid)
    (h,) = w.health(["db.c"], now_millis=int(time.time() * 1000) + LATER).tables
    (f,) = h.findings
    assert f.kind is FindingKind.CONSUMERS and f.value == latest - 10  # 1 .. latest - 10
    assert "b-2 (next snapshot 2" in f.message and "a.1 (next snapshot 1" in f.message
    args = shlex.split(f.fix)
    assert args[:4] == ["paimon-cli", "consumer", "clear", "db.c"]
    subprocess.run([sys.executable, "-m", "paimon_cli", *args[1:], "--yes"], check=True, capture_output=True)
    assert t.open().consumer_manager.consumers() == {"keep": latest}
