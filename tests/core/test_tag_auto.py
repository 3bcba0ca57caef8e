"""Automatic tag creation (Java's TagAutoCreation): periods, name formats, delay, completion,
retention, and that manual tags are never touched."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import IntType
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.tag_ops import auto_create_tags, create_tag, tag_maintenance_after_commit
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.refs.tag_period import TagPeriod
from paimon_cli.core.schema.options import CoreOptions
from paimon_cli.core.schema.table_schema import Schema

UTC = dt.timezone.utc


def _wm(text: str) -> int:
    return int(dt.datetime.fromisoformat(text).replace(tzinfo=UTC).timestamp() * 1000)


def _table(catalog: FileSystemCatalog, name: str, options: dict[str, str]) -> Any:
    schema = Schema.of([("id", IntType(nullable=False), None)], primary_keys=["id"],
                       options={"bucket": "1", **options})
    catalog.create_table(f"db.{name}", schema)
    return catalog.get_table(f"db.{name}")


def _commit(table: Any, i: int, watermark: int | None) -> None:
    tw = TableWrite(table)
    tw.write_arrow(pa.Table.from_pylist([{"id": i}], schema=arrow_schema(table.schema.fields)))
    assert FileStoreCommit(table).commit(tw.prepare_commit(), watermark=watermark) is not None


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def _tags(table: Any) -> list[tuple[str, int]]:
    return [(t.name, t.snapshot.id) for t in table.tag_manager.tags()]


def test_hourly_watermark_tags_and_retention(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "h", {"tag.automatic-creation": "watermark", "tag.creation-period": "hourly"})
    for i, wm in enumerate(["2024-01-01T10:30", "2024-01-01T10:50", "2024-01-01T11:30"], 1):
        _commit(t, i, _wm(wm))
    create_tag(t, "manual", 1)
    assert auto_create_tags(t) == ["2024-01-01 09", "2024-01-01 10"]
    assert _tags(t) == [("2024-01-01 09", 1), ("manual", 1), ("2024-01-01 10", 3)]
    assert auto_create_tags(t) == []  # idempotent: continues after the last auto tag
    _commit(t, 4, None)  # no watermark: no tag
    _commit(t, 5, _wm("2024-01-01T13:05"))
    assert auto_create_tags(t) == ["2024-01-01 12"]
    # num-retained-max keeps the newest auto tags, manual ones are not counted
    t2 = _table(catalog, "h2", {"tag.automatic-creation": "watermark", "tag.creation-period": "hourly",
                                "tag.num-retained-max": "2", "tag.default-time-retained": "1 d"})
    for i, wm in enumerate(["2024-01-01T10:30", "2024-01-01T11:30", "2024-01-01T12:30", "2024-01-01T13:30"], 1):
        _commit(t2, i, _wm(wm))
    create_tag(t2, "manual", 1)
    res = tag_maintenance_after_commit(t2)
    assert res == {"created": ["2024-01-01 09", "2024-01-01 10", "2024-01-01 11", "2024-01-01 12"], "expired": []}
    assert _tags(t2) == [("manual", 1), ("2024-01-01 11", 3), ("2024-01-01 12", 4)]
    assert t2.tag_manager.tag("2024-01-01 12").time_retained_seconds == 86400.0


def test_delay_and_completion(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "d", {"tag.automatic-creation": "watermark", "tag.creation-period": "daily",
                              "tag.creation-delay": "2 h", "tag.automatic-completion": "true",
                              "tag.period-formatter": "without_dashes"})
    for i, wm in enumerate(["2024-01-01T05:00", "2024-01-02T01:00", "2024-01-02T02:00", "2024-01-05T03:00"], 1):
        _commit(t, i, _wm(wm))
    # s1 -> 20231231; s2 is before 01-02 + 2 h; s3 reaches it -> 20240101; s4: completion tags the
    # next missing day (20240102) rather than jumping to 20240104
    assert auto_create_tags(t) == ["20231231", "20240101", "20240102"]
    assert _tags(t) == [("20231231", 1), ("20240101", 3), ("20240102", 4)]


def test_process_time_daily(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "p", {"tag.automatic-creation": "process-time"})
    _commit(t, 1, None)
    _commit(t, 2, None)
    yesterday = (dt.datetime.fromtimestamp(t.snapshot_manager.snapshot(1).time_millis / 1000)
                 - dt.timedelta(days=1)).date().isoformat()
    assert auto_create_tags(t) == [yesterday]
    assert _tags(t) == [(yesterday, 1)]


def test_period_names_round_trip() -> None:
    at = dt.datetime(2024, 3, 5, 7, 0)
    cases = [({}, "2024-03-05"), ({"tag.period-formatter": "without_dashes"}, "20240305"),
             ({"tag.creation-period": "hourly"}, "2024-03-05 07"),
             ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes"}, "20240305 07"),
             ({"tag.creation-period": "hourly", "tag.period-formatter": "without_dashes_and_spaces"}, "2024030507"),
             ({"tag.creation-period": "two-hours"}, "2024-03-05 07"),
             ({"tag.creation-period-duration": "30 min"}, "202403050700")]
    for opts, name in cases:
        p = TagPeriod.of(CoreOptions(opts))
        assert p.to_tag(at) == name
        assert p.to_time(name) is not None
        assert p.to_time("release-1") is None
    daily = TagPeriod.of(CoreOptions({}))
    assert daily.to_time("2024-03-05 07") == dt.datetime(2024, 3, 5)  # hourly names count as daily tags
    assert daily.previous_tag(dt.datetime(2024, 3, 5, 23, 59)) == dt.datetime(2024, 3, 4)
    assert TagPeriod.of(CoreOptions({"tag.creation-period": "two-hours"})).previous_tag(
        dt.datetime(2024, 3, 5, 7, 59)) == dt.datetime(2024, 3, 5, 4)
    with pytest.raises(InvalidInput):
        TagPeriod.of(CoreOptions({"tag.creation-period": "weekly"}))


def test_write_only_and_none_do_nothing(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "n", {})
    _commit(t, 1, None)
    assert auto_create_tags(t) == []
    t2 = _table(catalog, "w", {"tag.automatic-creation": "process-time", "write-only": "true"})
    _commit(t2, 1, None)
    assert tag_maintenance_after_commit(t2) is None and _tags(t2) == []


def test_manual_auto_shaped_tag_on_auto_tagged_snapshot_is_refused(catalog: FileSystemCatalog) -> None:
    t = _table(catalog, "v", {"tag.automatic-creation": "watermark", "tag.creation-period": "daily"})
    _commit(t, 1, _wm("2024-01-02T10:00"))
    assert auto_create_tags(t) == ["2024-01-01"]
    with pytest.raises(InvalidInput, match="already auto-tagged"):
        create_tag(t, "2023-05-05", 1)
    create_tag(t, "release", 1)  # not auto-shaped: fine


def test_resume_after_the_latest_auto_tag_by_time(catalog: FileSystemCatalog) -> None:
    """Java 2.x resumes after the auto tag whose TIME is latest (0.9 / 1.x: the one on the
    highest snapshot, refusing two auto tags there)."""
    t = _table(catalog, "r", {"tag.automatic-creation": "watermark", "tag.creation-period": "hourly"})
    for i, wm in enumerate(["2024-01-01T10:30", "2024-01-01T11:30", "2024-01-01T12:30"], 1):
        _commit(t, i, _wm(wm))
    s2 = t.snapshot_manager.snapshot(2)
    t.tag_manager.create_tag("2024-01-01 10", s2)
    t.tag_manager.create_tag("2023-06-01 00", s2)  # two auto-shaped tags on snapshot 2
    assert auto_create_tags(t) == ["2024-01-01 11"]
    assert ("2024-01-01 11", 3) in _tags(t)


def test_process_time_in_sink_process_time_zone(catalog: FileSystemCatalog) -> None:
    local = dt.datetime.now().astimezone().utcoffset() or dt.timedelta()
    hours = (int((local + dt.timedelta(hours=7)).total_seconds() // 3600) + 12) % 24 - 12
    zone = dt.timezone(dt.timedelta(hours=hours))
    t = _table(catalog, "z", {"tag.automatic-creation": "process-time", "tag.creation-period": "hourly",
                              "sink.process-time-zone": f"GMT{'+' if hours >= 0 else '-'}{abs(hours)}"})
    _commit(t, 1, None)
    at = dt.datetime.fromtimestamp(t.snapshot_manager.snapshot(1).time_millis / 1000, zone).replace(tzinfo=None)
    want = (at.replace(minute=0, second=0, microsecond=0) - dt.timedelta(hours=1)).strftime("%Y-%m-%d %H")
    assert auto_create_tags(t) == [want]
