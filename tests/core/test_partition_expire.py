"""Partition expiration: Java's time extraction rules, typed partition columns, the OVERWRITE drop."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import DateType, IntType, TimestampType, VarCharType
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.partition_expire import (
    JavaDateTimePattern,
    PartitionTimeExtractor,
    expire_partitions,
    expire_partitions_after_commit,
    parse_default_timestamp,
    plan_partition_expire,
)
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema

D = dt.datetime


# ------------------------------------------------------------------------- time parsing


@pytest.mark.parametrize("text, want", [
    ("2024-01-05", D(2024, 1, 5)),
    ("2024-1-5", D(2024, 1, 5)),  # 1..2 digit month/day
    ("2024-01-05 07:08:09", D(2024, 1, 5, 7, 8, 9)),
    ("2024-01-05 7:8:9.123", D(2024, 1, 5, 7, 8, 9, 123000)),
    ("2024-13-01", D(2025, 1, 1)),  # LENIENT: the 13th month rolls over
    ("2024-02-30", D(2024, 3, 1)),
    ("2024-01-05 12:00", None),  # seconds are not optional once the time starts
    ("20240105", None),
    ("abc", None),
])
def test_default_formatter_is_javas_lenient_one(text: str, want: D | None) -> None:
    assert parse_default_timestamp(text) == want


@pytest.mark.parametrize("pattern, text, want", [
    ("yyyy-MM-dd", "2024-01-05", D(2024, 1, 5)),
    ("yyyy-MM-dd", "2024-1-5", None),  # MM is exactly two digits
    ("yyyyMMdd", "20240105", D(2024, 1, 5)),  # adjacent value parsing
    ("yyyyMMddHH", "2024010512", D(2024, 1, 5, 12)),
    ("yyyy-MM-dd HH:mm:ss", "2024-01-05 03:04:05", D(2024, 1, 5, 3, 4, 5)),
    ("yyyy-MM-dd H:mm:ss", "2024-01-05 3:00:00", D(2024, 1, 5, 3)),
    ("yyyy-MM-dd'T'HH:mm:ss.SSS", "2024-01-05T03:04:05.120", D(2024, 1, 5, 3, 4, 5, 120000)),
    ("yyyy/MM/dd", "2024/01/05", D(2024, 1, 5)),
    ("yyyy-MM-dd", "2024-02-30", D(2024, 2, 29)),  # SMART: clamps to the month's end
    ("yyyy-MM-dd", "2024-13-01", None),  # SMART: month 13 is an error
    ("yyyy-MM-dd HH:mm:ss", "2024-01-05", None),
    ("yyyy-MM-dd", "2024-01-05 00:00:00", None),  # trailing text
])
def test_java_formatter(pattern: str, text: str, want: D | None) -> None:
    assert JavaDateTimePattern(pattern).parse(text) == want


@pytest.mark.parametrize("pattern", ["yyyy-MMM-dd", "yyyy-MM-dd EEE", "yyyy-MM-dd'", "yyyy[-MM]", "yyyy-MM-dd-dd"])
def test_unsupported_formatter_is_invalid_input(pattern: str) -> None:
    with pytest.raises(InvalidInput):
        JavaDateTimePattern(pattern)


def test_pattern_prefers_longer_keys_and_typed_values() -> None:
    ex = PartitionTimeExtractor(["dt", "dt1"], [VarCharType(10), IntType()], "$dt $dt1:00:00", None)
    assert ex.extract(["2024-01-05", 7]) == D(2024, 1, 5, 7)
    assert ex.extract(["2024-01-05", None]) is None  # NULL never expires
    typed = PartitionTimeExtractor(["d"], [DateType()], None, "yyyyMMdd")
    assert typed.extract([dt.date(2024, 1, 5)]) == D(2024, 1, 5)  # DATE is a time by itself
    ts = PartitionTimeExtractor(["t", "h"], [TimestampType(3), IntType()], "$t", None)
    assert ts.extract([D(2024, 1, 5, 6, 7, 8), 1]) == D(2024, 1, 5, 6, 7, 8)
    compound = PartitionTimeExtractor(["d", "h"], [DateType(), IntType()], "$d $h:00:00", "yyyy-MM-dd H:mm:ss")
    assert compound.extract([dt.date(2024, 1, 5), 9]) == D(2024, 1, 5, 9)
    with pytest.raises(InvalidInput):
        PartitionTimeExtractor(["dt"], [VarCharType(10)], "dt", None)


# ------------------------------------------------------------------------- on tables


def _table(catalog: FileSystemCatalog, name: str, cols: list[tuple[str, Any]], parts: list[str],
           options: dict[str, str] | None = None) -> Any:
    schema = Schema.of([(n, t, None) for n, t in cols], partition_keys=parts, primary_keys=[],
                       options={"bucket": "-1", **(options or {})})
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _write(table: Any, rows: list[dict[str, Any]]) -> int:
    tw = TableWrite(table)
    tw.write_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(table.schema.fields)))
    snap = FileStoreCommit(table).commit(tw.prepare_commit())
    assert snap is not None
    return snap.id


def _rows(table: Any) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in TableRead(table).to_arrow().to_pylist())


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


NOW = D(2024, 1, 10, 12, 0, 0)


def test_values_time_drops_old_partitions_in_one_overwrite(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "s", [("id", IntType()), ("dt", VarCharType(20))], ["dt"])
    days = [f"2024-01-0{i}" for i in range(1, 10)] + ["not-a-date"]
    _write(t, [{"id": i, "dt": d} for i, d in enumerate(days)])
    _write(t, [{"id": 100, "dt": "2024-01-02"}])
    t = catalog.get_table("db.s")
    plan = plan_partition_expire(t, 5 * 86400, now=NOW)  # cutoff 2024-01-05 12:00
    assert [p.spec for p in plan.partitions] == [{"dt": f"2024-01-0{i}"} for i in range(1, 6)]
    assert plan.partitions[1].file_count == 2 and plan.partitions[1].record_count == 2
    assert catalog.get_table("db.s").snapshot_manager.latest_snapshot_id() == 2  # planning changes nothing
    expire_partitions(t, 5 * 86400, now=NOW)
    t = catalog.get_table("db.s")
    snap = t.snapshot_manager.latest_snapshot()
    assert snap.id == 3 and snap.commit_kind == "OVERWRITE"
    left = {r["dt"] for r in TableRead(t).to_arrow().to_pylist()}
    assert left == {"2024-01-06", "2024-01-07", "2024-01-08", "2024-01-09", "not-a-date"}
    # nothing left to expire: no new snapshot
    assert plan_partition_expire(t, 5 * 86400, now=NOW).partitions == []


def test_max_expires_takes_the_smallest_values_first(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "m", [("id", IntType()), ("dt", VarCharType(20))], ["dt"])
    _write(t, [{"id": i, "dt": f"2024-01-0{i}"} for i in (4, 1, 3, 2)])
    plan = plan_partition_expire(t, 86400, now=NOW, max_expires=2)
    assert [p.spec["dt"] for p in plan.partitions] == ["2024-01-01", "2024-01-02"]


def test_integer_partitions_with_formatter_and_pattern(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "i", [("id", IntType()), ("day", IntType()), ("hr", IntType())], ["day", "hr"])
    _write(t, [{"id": 1, "day": 20240105, "hr": 3}, {"id": 2, "day": 20240105, "hr": 13},
               {"id": 3, "day": 20240104, "hr": 23}, {"id": 4, "day": 20240109, "hr": 1}])
    plan = plan_partition_expire(t, 5 * 86400, now=NOW, timestamp_pattern="$day $hr:00:00",
                                 timestamp_formatter="yyyyMMdd H:mm:ss")
    assert [p.spec for p in plan.partitions] == [{"day": "20240104", "hr": "23"}, {"day": "20240105", "hr": "3"}]
    # the table's options are the defaults for unset arguments
    t2 = _table(catalog, "i2", [("id", IntType()), ("day", IntType())], ["day"],
                {"partition.timestamp-formatter": "yyyyMMdd"})
    _write(t2, [{"id": 1, "day": 20240101}, {"id": 2, "day": 20240110}])
    assert [p.spec for p in plan_partition_expire(t2, 86400, now=NOW).partitions] == [{"day": "20240101"}]


def test_date_partitions_are_typed(catalog: FileSystemCatalog) -> None:
    """apache/paimon#6439: Java sees a DATE partition as its day count and never expires it."""
    t = _table(catalog, "d", [("id", IntType()), ("d", DateType())], ["d"])
    _write(t, [{"id": i, "d": dt.date(2024, 1, i)} for i in range(1, 10)])
    for fmt, pattern in ((None, None), ("yyyy-MM-dd", "$d")):
        plan = plan_partition_expire(t, 5 * 86400, now=NOW, timestamp_formatter=fmt, timestamp_pattern=pattern)
        assert [p.values[0] for p in plan.partitions] == [dt.date(2024, 1, i) for i in range(1, 6)]
        assert plan.partitions[0].display == "d=2024-01-01"
    expire_partitions(t, 5 * 86400, now=NOW)
    left = sorted(r["d"] for r in TableRead(catalog.get_table("db.d")).to_arrow().to_pylist())
    assert left == [dt.date(2024, 1, i) for i in range(6, 10)]


def test_update_time_uses_newest_file(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "u", [("id", IntType()), ("k", VarCharType(5))], ["k"])
    _write(t, [{"id": 1, "k": "a"}, {"id": 2, "k": "b"}])
    future = D.now() + dt.timedelta(days=2)
    plan = plan_partition_expire(t, 86400, now=future, strategy="update-time")
    assert sorted(p.spec["k"] for p in plan.partitions) == ["a", "b"]
    assert plan_partition_expire(t, 86400, strategy="update-time").partitions == []
    # a value that is not a date never expires with values-time
    assert plan_partition_expire(t, 86400, now=future).partitions == []


def test_bad_input(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "b", [("id", IntType()), ("k", VarCharType(5))], ["k"])
    with pytest.raises(InvalidInput):
        plan_partition_expire(t, 86400, strategy="nope")
    with pytest.raises(InvalidInput):
        plan_partition_expire(t, 0)
    up = _table(catalog, "np", [("id", IntType())], [])
    with pytest.raises(InvalidInput, match="not partitioned"):
        plan_partition_expire(up, 86400)


def test_after_commit_follows_javas_check_interval(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "a", [("id", IntType()), ("dt", VarCharType(20))], ["dt"],
               {"partition.expiration-time": "1 d"})
    _write(t, [{"id": 1, "dt": "2024-01-01"}, {"id": 2, "dt": "2999-01-01"}])
    t = catalog.get_table("db.a")
    assert expire_partitions_after_commit(t) is None  # 1 h check interval not yet elapsed
    t2 = _table(catalog, "a2", [("id", IntType()), ("dt", VarCharType(20))], ["dt"],
                {"partition.expiration-time": "1 d", "partition.expiration-check-interval": "0 s"})
    _write(t2, [{"id": 1, "dt": "2024-01-01"}, {"id": 2, "dt": "2999-01-01"}])
    plan = expire_partitions_after_commit(catalog.get_table("db.a2"))
    assert plan is not None and [p.spec for p in plan.partitions] == [{"dt": "2024-01-01"}]
    assert [r["dt"] for r in TableRead(catalog.get_table("db.a2")).to_arrow().to_pylist()] == ["2999-01-01"]


def test_batches_commit_separately(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "bt", [("id", IntType()), ("dt", VarCharType(20))], ["dt"],
               {"partition.expiration-batch-size": "2"})
    _write(t, [{"id": i, "dt": f"2024-01-0{i}"} for i in range(1, 6)])
    plan = expire_partitions(catalog.get_table("db.bt"), 86400, now=NOW)
    assert plan.snapshots == [2, 3, 4]
    assert TableRead(catalog.get_table("db.bt")).to_arrow().num_rows == 0
