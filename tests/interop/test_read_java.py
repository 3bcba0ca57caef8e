"""`read` of tables Java Paimon 0.9 wrote returns exactly what Java's batch read returns.

Java reads through its own ``ReadBuilder`` (merge-on-read, deletion vectors, level-0 skip of
DV tables); we read the same files with ``TableRead``. Compared at the latest snapshot, at
every snapshot, at a tag, with ``--where`` filters (Java's unfiltered read, filtered here by
the same rule Java's ``Predicate.test`` uses: a NULL never matches) and projections. Java's
``$audit_log`` and ``$ro`` are compared with ours too.
"""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import json
from collections.abc import Callable
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.java_format import java_local_datetime
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.system.registry import SYSTEM_TABLES
from paimon_cli.core.table.file_store_table import TimeTravel

pytestmark = pytest.mark.java

TABLES = ["pk_part", "append_t", "dv_t", "dyn_t", "nested_t"]


def _canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _java_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "_row_kind"} for r in rows]


def _ours(table: Any, **kw: Any) -> list[dict[str, Any]]:
    return TableRead(table, **kw).to_arrow().to_pylist()


@pytest.fixture(scope="module")
def catalog(java_tables) -> FileSystemCatalog:
    return FileSystemCatalog(str(java_tables.warehouse))


@pytest.mark.parametrize("name", TABLES)
def test_latest_equals_java(java_paimon, java_tables, catalog, name: str) -> None:
    jt = java_tables[name]
    java = _java_rows(java_paimon.read(java_tables.warehouse, jt.db, jt.name))
    ours = _ours(catalog.get_table(jt.identifier))
    assert len(ours) == len(java)
    assert _canon(ours) == _canon(java)
    if jt.expected:  # and both equal the modelled content
        assert _canon(ours) == _canon(jt.latest_expected)


@pytest.mark.parametrize("name", TABLES)
def test_every_snapshot_equals_java(java_paimon, java_tables, catalog, name: str) -> None:
    jt = java_tables[name]
    table = catalog.get_table(jt.identifier)
    for sid in range(1, len(jt.snapshot_kinds) + 1):
        java = _java_rows(java_paimon.read(java_tables.warehouse, jt.db, jt.name, sid))
        ours = _ours(table, at=TimeTravel(snapshot_id=sid))
        assert _canon(ours) == _canon(java), f"{name} at snapshot {sid}"


def test_dv_table_hides_level0_like_java(java_paimon, java_tables, catalog) -> None:
    """Snapshot 1 of dv_t is a write without its compaction: Java shows nothing, nor do we."""
    jt = java_tables.dv_t
    assert jt.snapshot_kinds[:2] == ["APPEND", "COMPACT"]
    assert java_paimon.read(java_tables.warehouse, jt.db, jt.name, 1) == []
    table = catalog.get_table(jt.identifier)
    assert _ours(table, at=TimeTravel(snapshot_id=1)) == []
    plan = TableRead(table, TimeTravel(snapshot_id=1)).plan()
    assert plan.total.files > 0 and plan.skipped_level0.files == plan.total.files and not plan.splits


def test_tag_equals_its_snapshot(java_paimon, java_tables, catalog) -> None:
    jt = java_tables.pk_part
    table = catalog.get_table(jt.identifier)
    java = _java_rows(java_paimon.read(java_tables.warehouse, jt.db, jt.name, 2))
    assert _canon(_ours(table, at=TimeTravel(tag="t1"))) == _canon(java)


def test_branch_equals_java(java_paimon, java_tables, catalog) -> None:
    jt = java_tables.pk_part
    java = _java_rows(java_paimon.read(java_tables.warehouse, jt.db, jt.name, branch="b1"))
    assert _canon(_ours(catalog.get_table(jt.identifier, "b1"))) == _canon(java)


# -- filters and projections --------------------------------------------------------------

# (table, --where text, the same filter as a Python function over Java's rows)
WHERES: list[tuple[str, str, Callable[[dict[str, Any]], bool]]] = [
    ("pk_part", "dt = '2024-01-01'", lambda r: r["dt"] == "2024-01-01"),
    ("pk_part", "id = 2", lambda r: r["id"] == 2),
    ("pk_part", "id IN (1, 3) AND dt <> '2024-01-02'", lambda r: r["id"] in (1, 3) and r["dt"] != "2024-01-02"),
    ("pk_part", "c_bigint > 50000000000", lambda r: r["c_bigint"] is not None and r["c_bigint"] > 50_000_000_000),
    ("pk_part", "c_bigint IS NULL", lambda r: r["c_bigint"] is None),
    ("pk_part", "NOT (c_bool = TRUE)", lambda r: r["c_bool"] is False),
    ("pk_part", "c_dec10 >= 400.5 OR c_string = 'name-1-v5-ünï'",
     lambda r: (r["c_dec10"] is not None and r["c_dec10"] >= decimal.Decimal("400.5"))
     or r["c_string"] == "name-1-v5-ünï"),
    ("pk_part", "c_date BETWEEN DATE '2024-01-05' AND '2024-01-12'",
     lambda r: r["c_date"] is not None and dt.date(2024, 1, 5) <= r["c_date"] <= dt.date(2024, 1, 12)),
    ("pk_part", "c_ts6 < TIMESTAMP '2024-03-01 00:03:00.654322'",
     lambda r: r["c_ts6"] is not None and r["c_ts6"] < dt.datetime(2024, 3, 1, 0, 3, 0, 654322)),
    ("pk_part", "c_float > 2.25 AND c_tiny NOT IN (-122, -121)",
     lambda r: r["c_float"] is not None and r["c_float"] > 2.25 and r["c_tiny"] not in (-122, -121, None)),
    ("append_t", "name IS NULL OR amount > 12", lambda r: r["name"] is None or r["amount"] > 12),
    ("append_t", "dt = '2024-01-02' AND flag", lambda r: r["dt"] == "2024-01-02" and r["flag"] is True),
    ("append_t", "ts >= '2024-05-01 08:00:10.000010'", lambda r: r["ts"] >= dt.datetime(2024, 5, 1, 8, 0, 10, 10)),
    ("dv_t", "v > 100", lambda r: r["v"] is not None and r["v"] > 100),
    ("dv_t", "id IN (6, 7, 8)", lambda r: r["id"] in (6, 7, 8)),
    ("dyn_t", "dt = '2024-01-02' AND id >= 4", lambda r: r["dt"] == "2024-01-02" and r["id"] >= 4),
    ("nested_t", "id > 1", lambda r: r["id"] > 1),
]


@pytest.mark.parametrize("name,where,ref", WHERES, ids=[f"{n}: {w}" for n, w, _ in WHERES])
def test_where_equals_java_filtered(java_paimon, java_tables, catalog, name: str, where: str, ref: Any) -> None:
    jt = java_tables[name]
    table = catalog.get_table(jt.identifier)
    java = [r for r in _java_rows(java_paimon.read(java_tables.warehouse, jt.db, jt.name)) if ref(r)]
    ours = _ours(table, predicate=parse_predicate(where, table.schema.fields))
    assert _canon(ours) == _canon(java)
    # pruning never changes the answer: the same filter over an unpruned read agrees
    unpruned = [r for r in _ours(table) if ref(r)]
    assert _canon(ours) == _canon(unpruned)


def test_projection_equals_java(java_paimon, java_tables, catalog) -> None:
    jt = java_tables.pk_part
    table = catalog.get_table(jt.identifier)
    cols = ["c_string", "id", "c_ts3"]
    java = [{c: r[c] for c in cols} for r in java_paimon.read(java_tables.warehouse, jt.db, jt.name)]
    data = TableRead(table, projection=cols).to_arrow()
    assert data.column_names == cols
    assert _canon(data.to_pylist()) == _canon(java)


def test_projection_where_and_time_travel(java_paimon, java_tables, catalog) -> None:
    jt = java_tables.pk_part
    table = catalog.get_table(jt.identifier)
    java = [{"id": r["id"]} for r in java_paimon.read(java_tables.warehouse, jt.db, jt.name, 3)
            if r["dt"] == "2024-01-02" and r["c_string"] is not None]
    pred = parse_predicate("dt = '2024-01-02' AND c_string IS NOT NULL", table.schema.fields)
    ours = _ours(table, at=TimeTravel(snapshot_id=3), projection=["id"], predicate=pred)
    assert sorted(r["id"] for r in ours) == sorted(r["id"] for r in java)


def test_pruning_counts_on_java_tables(java_tables, catalog) -> None:
    """Partition and bucket pruning remove what they should and no more."""
    table = catalog.get_table(java_tables.pk_part.identifier)
    tr = TableRead(table, predicate=parse_predicate("dt = '2024-01-03' AND id = 2", table.schema.fields))
    p = tr.plan()
    assert p.remaining.partitions == 1 and p.remaining.buckets == 1
    assert p.pruned_by_partition.partitions == p.total.partitions - 1
    assert p.pruned_by_bucket.buckets >= 1
    assert [r["id"] for r in tr.to_arrow().to_pylist()] == [2]
    explain = {r["step"]: r for r in tr.explain().rows}
    assert explain["remaining"]["files"] == p.remaining.files
    assert explain["total"]["files"] == p.total.files


def test_limit(java_tables, catalog) -> None:
    table = catalog.get_table(java_tables.pk_part.identifier)
    full = _ours(table)
    limited = _ours(table, limit=5)
    assert len(limited) == 5
    assert all(r in full for r in limited)


# -- $audit_log and $ro ---------------------------------------------------------------------


def _as_java(v: Any) -> Any:
    """Our Python value in the harness's JSON rendering of Java values."""
    if isinstance(v, decimal.Decimal):
        return format(v, "f")
    if isinstance(v, dt.datetime):
        return java_local_datetime(v)
    if isinstance(v, dt.date):
        return v.isoformat()
    if isinstance(v, bytes):
        return base64.b64encode(v).decode("ascii")
    if isinstance(v, (list, tuple)):
        return [_as_java(x) for x in v]
    if isinstance(v, dict):
        return {k: _as_java(x) for k, x in v.items()}
    return v


def _compare_system_table(java: dict[str, Any], ours: Any) -> None:
    assert ours.columns == java["columns"]
    mine = [[_as_java(r[c]) for c in ours.columns] for r in ours.rows]
    assert sorted(json.dumps(r, sort_keys=True) for r in mine) == sorted(
        json.dumps(r, sort_keys=True) for r in java["rows"])


@pytest.mark.parametrize("name", TABLES)
def test_audit_log_equals_java(java_paimon, java_tables, catalog, name: str) -> None:
    jt = java_tables[name]
    java = java_paimon.system_table(java_tables.warehouse, jt.db, jt.name, "audit_log")
    _compare_system_table(java, SYSTEM_TABLES["audit-log"](catalog.get_table(jt.identifier)))


def test_audit_log_keeps_the_latest_delete(java_tables, catalog) -> None:
    """pk_part's last commit deletes (3, 2024-01-02): merged reads drop it, the audit log shows -D."""
    table = catalog.get_table(java_tables.pk_part.identifier)
    rows = SYSTEM_TABLES["audit-log"](table).rows
    deletes = [(r["id"], r["dt"]) for r in rows if r["rowkind"] == "-D"]
    assert deletes == [(3, "2024-01-02")]
    assert len(rows) == len(_ours(table)) + 1


@pytest.mark.parametrize("name", ["pk_part", "append_t", "dyn_t", "nested_t"])
def test_ro_equals_java(java_paimon, java_tables, catalog, name: str) -> None:
    jt = java_tables[name]
    java = java_paimon.system_table(java_tables.warehouse, jt.db, jt.name, "ro")
    _compare_system_table(java, SYSTEM_TABLES["ro"](catalog.get_table(jt.identifier)))


def test_ro_of_dv_table_reads_top_level_only(java_paimon, java_tables, catalog) -> None:
    """Java 0.9's $ro of a DV table lets the batch scan's ``level > 0`` filter replace its
    ``level == max`` filter, so it returns every level; Java fixed that (apache/paimon#5412,
    ``withLevel``) and we follow the fix: only max-level rows, with deletion vectors applied.
    """
    jt = java_tables.dv_t
    table = catalog.get_table(jt.identifier)
    java = java_paimon.system_table(java_tables.warehouse, jt.db, jt.name, "ro")
    assert len(java["rows"]) == len(_ours(table))  # 0.9: the whole merged table
    ours = SYSTEM_TABLES["ro"](table).rows
    top = table.options.num_levels - 1
    plan = TableRead(table, top_level_only=True).plan()
    assert plan.splits and all(f.level == top for s in plan.splits for f in s.files)
    full = _canon(_ours(table))
    assert 0 < len(ours) < len(java["rows"]) and all(x in full for x in _canon(ours))


def test_binlog_wraps_audit_log(java_tables, catalog) -> None:
    table = catalog.get_table(java_tables.pk_part.identifier)
    audit = SYSTEM_TABLES["audit-log"](table)
    binlog = SYSTEM_TABLES["binlog"](table)
    assert binlog.columns == audit.columns
    unwrapped = [{c: (r[c] if c == "rowkind" else r[c][0]) for c in binlog.columns} for r in binlog.rows]
    assert unwrapped == audit.rows
