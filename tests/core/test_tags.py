from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from paimon_cli.core.errors import AlreadyExists, CorruptMetadata, InvalidInput, NotFound
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.refs.snapshot import Snapshot
from paimon_cli.core.refs.tags import Tag, TagManager, java_duration_decimal, java_duration_str
from paimon_cli.core.utils.durations import parse_iso_duration

SNAP = """{
  "version" : 3,
  "id" : 5,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-a-0",
  "baseManifestListSize" : 100,
  "deltaManifestList" : "manifest-list-a-1",
  "deltaManifestListSize" : 101,
  "commitUser" : "u",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "APPEND",
  "timeMillis" : 1700000000000,
  "totalRecordCount" : 2,
  "deltaRecordCount" : 2,
  "nextRowId" : 2"""

TAG_WITH_TTL = SNAP + """,
  "tagCreateTime" : [ 2024, 3, 5, 10, 20, 30, 123000000 ],
  "tagTimeRetained" : 86400.000000000
}"""


def _snap(i: int) -> Snapshot:
    return Snapshot(
        id=i, schema_id=0, base_manifest_list=f"b-{i}", delta_manifest_list=f"d-{i}", commit_user="u",
        commit_kind="APPEND", time_millis=1000 * i, total_record_count=i, delta_record_count=1,
    )


def test_parse_and_write_tag_with_retention_byte_exact() -> None:
    t = Tag.from_json("daily", TAG_WITH_TTL, "tag-daily")
    assert t.snapshot.id == 5
    assert t.create_time == datetime.datetime(2024, 3, 5, 10, 20, 30, 123000)
    assert t.time_retained_seconds == 86400.0
    assert t.time_retained_java == "PT24H"
    assert t.snapshot.extra == {}
    assert t.to_json() == TAG_WITH_TTL


def test_tag_without_retention_is_plain_snapshot() -> None:
    t = Tag.from_json("x", SNAP + "\n}", "tag-x")
    assert t.create_time is None and t.time_retained_seconds is None
    assert t.to_json() == SNAP + "\n}"


def test_create_time_array_forms() -> None:
    base = SNAP + ',\n  "tagCreateTime" : %s,\n  "tagTimeRetained" : %s\n}'
    t = Tag.from_json("a", base % ("[ 2024, 1, 2, 3, 4 ]", "3600"), "p")
    assert t.create_time == datetime.datetime(2024, 1, 2, 3, 4) and t.time_retained_seconds == 3600.0
    assert '"tagCreateTime" : [ 2024, 1, 2, 3, 4 ]' in t.to_json()
    assert '"tagTimeRetained" : 3600.000000000' in t.to_json()
    t = Tag.from_json("a", base % ("[ 2024, 1, 2, 3, 4, 5 ]", '"PT1H30M"'), "p")
    assert t.create_time == datetime.datetime(2024, 1, 2, 3, 4, 5) and t.time_retained_seconds == 5400.0
    t = Tag.from_json("a", base % ('"2024-01-02T03:04:05"', "0.5"), "p")
    assert t.create_time == datetime.datetime(2024, 1, 2, 3, 4, 5)
    with pytest.raises(CorruptMetadata, match="tagCreateTime"):
        Tag.from_json("a", base % ("[ 2024, 1 ]", "1"), "p")
    with pytest.raises(CorruptMetadata, match="tagTimeRetained"):
        Tag.from_json("a", base % ("[ 2024, 1, 2, 3, 4 ]", '"soon"'), "p")


def test_duration_helpers() -> None:
    assert java_duration_str(86400) == "PT24H"
    assert java_duration_str(5400) == "PT1H30M"
    assert java_duration_str(90061.25) == "PT25H1M1.25S"
    assert java_duration_str(0) == "PT0S"
    assert java_duration_str(0.5) == "PT0.5S"
    assert java_duration_decimal(0) == "0.0"
    assert java_duration_decimal(1.5) == "1.500000000"
    assert parse_iso_duration("P1DT2H") == 93600
    assert parse_iso_duration("PT0.25S") == 0.25
    assert parse_iso_duration("nope") is None


def _with_schema(tm: TagManager) -> TagManager:
    """Tags name schema 0: a real table has that file (readers check it exists)."""
    schema = Path(tm.tag_dir).parent / "schema" / "schema-0"
    schema.parent.mkdir(parents=True, exist_ok=True)
    schema.write_text("{}")
    return tm


def test_manager_create_list_read(tmp_path: Path) -> None:
    fio = FileIO(str(tmp_path))
    tm = _with_schema(TagManager(fio, str(tmp_path / "t")))
    assert tm.tags() == []
    tm.create_tag("b", _snap(3))
    tm.create_tag("a", _snap(3), time_retained=datetime.timedelta(hours=1),
                  create_time=datetime.datetime(2024, 1, 1, 0, 0))
    tm.create_tag("z", _snap(1))
    tm.create_tag("42", _snap(2))  # numeric names are legal in Java
    Path(tm.tag_dir, ".tag-q.123.tmp").write_text("junk")
    assert [(t.name, t.snapshot.id) for t in tm.tags()] == [("z", 1), ("42", 2), ("a", 3), ("b", 3)]
    assert tm.tag_exists("a") and not tm.tag_exists("nope")
    a = tm.tag("a")
    assert a.time_retained_seconds == 3600.0 and a.create_time == datetime.datetime(2024, 1, 1)
    raw = Path(tm.tag_path("a")).read_text()
    assert '"tagCreateTime" : [ 2024, 1, 1, 0, 0 ]' in raw and '"tagTimeRetained" : 3600.000000000' in raw
    assert "tagCreateTime" not in Path(tm.tag_path("b")).read_text()
    assert tm.tag_path("a") == str(tmp_path / "t" / "tag" / "tag-a")
    assert tm.tagged_snapshot_ids() == {1: ["z"], 2: ["42"], 3: ["a", "b"]}


def test_existing_tag_refused(tmp_path: Path) -> None:
    tm = _with_schema(TagManager(FileIO(str(tmp_path)), str(tmp_path / "t")))
    tm.create_tag("x", _snap(1))
    with pytest.raises(AlreadyExists, match="'x' already exists"):
        tm.create_tag("x", _snap(2))
    assert tm.create_tag("x", _snap(2), ignore_if_exists=True).snapshot.id == 1
    tm.replace_tag("x", _snap(2))
    assert tm.tag("x").snapshot.id == 2
    tm.delete_tag("x")
    assert not tm.tag_exists("x")
    with pytest.raises(NotFound):
        tm.delete_tag("x")


@pytest.mark.parametrize("bad", ["", "  ", "a/b", "a\\b", "a\nb", "x\x00"])
def test_invalid_tag_names(tmp_path: Path, bad: str) -> None:
    tm = TagManager(FileIO(str(tmp_path)), str(tmp_path / "t"))
    with pytest.raises(InvalidInput):
        tm.create_tag(bad, _snap(1))


def test_tag_not_found_lists_existing(tmp_path: Path) -> None:
    tm = TagManager(FileIO(str(tmp_path)), str(tmp_path / "t"))
    tm.create_tag("t1", _snap(1))
    with pytest.raises(NotFound) as ei:
        tm.tag("missing")
    assert "'missing' not found" in str(ei.value) and "t1" in str(ei.value)


def test_branch_tags_and_corrupt_tag(tmp_path: Path) -> None:
    fio = FileIO(str(tmp_path))
    tm = TagManager(fio, str(tmp_path / "t"), branch="dev")
    assert tm.tag_dir == str(tmp_path / "t" / "branch" / "branch-dev" / "tag")
    tm.create_tag("t", _snap(1))
    assert TagManager(fio, str(tmp_path / "t")).tags() == []
    Path(tm.tag_path("bad")).write_text("{")
    with pytest.raises(CorruptMetadata) as ei:
        tm.tags()
    assert "tag-bad" in str(ei.value)
