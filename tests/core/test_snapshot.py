from __future__ import annotations

import os
from pathlib import Path

import pytest

from paimon_cli.core.errors import CorruptMetadata, NotFound
from paimon_cli.core.io.fileio import FileIO, join
from paimon_cli.core.refs.snapshot import BATCH_COMMIT_IDENTIFIER, ChangelogManager, Snapshot, SnapshotManager

# Hand-built in Java 1.x/2.0 layout (Jackson default pretty printer, no trailing newline).
JAVA_1X = """{
  "version" : 3,
  "id" : 7,
  "schemaId" : 1,
  "baseManifestList" : "manifest-list-aaaa-4",
  "baseManifestListSize" : 1024,
  "deltaManifestList" : "manifest-list-aaaa-5",
  "deltaManifestListSize" : 998,
  "indexManifest" : "index-manifest-bbbb-0",
  "commitUser" : "user-1",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "COMPACT",
  "timeMillis" : 1700000000123,
  "totalRecordCount" : 12,
  "deltaRecordCount" : 0,
  "nextRowId" : 0
}"""

# Everything master can write, in declaration order.
FULL = """{
  "version" : 3,
  "uuid" : "0f0e-uuid",
  "id" : 3,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-a-0",
  "baseManifestListSize" : 10,
  "deltaManifestList" : "manifest-list-a-1",
  "deltaManifestListSize" : 11,
  "changelogManifestList" : "manifest-list-a-2",
  "changelogManifestListSize" : 12,
  "indexManifest" : "index-manifest-x-0",
  "commitUser" : "u",
  "writerVersion" : "2.1",
  "commitIdentifier" : 5,
  "commitKind" : "APPEND",
  "timeMillis" : 1,
  "totalRecordCount" : 3,
  "deltaRecordCount" : 3,
  "changelogRecordCount" : 3,
  "watermark" : -5,
  "statistics" : "stat-x-0",
  "properties" : {
    "k" : "v"
  },
  "nextRowId" : 3,
  "operation" : "OVERWRITE"
}"""

# Table Store 0.2: no version, string commitIdentifier, logOffsets {}.
V02 = """{
  "id" : 2,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-c-2",
  "deltaManifestList" : "manifest-list-c-3",
  "commitUser" : "user",
  "commitIdentifier" : "1",
  "commitKind" : "APPEND",
  "timeMillis" : 1665573686464,
  "logOffsets" : { }
}"""

# Java 0.9: changelogManifestList written as null, logOffsets {}.
V09 = """{
  "version" : 3,
  "id" : 4,
  "schemaId" : 0,
  "baseManifestList" : "manifest-list-d-6",
  "deltaManifestList" : "manifest-list-d-7",
  "changelogManifestList" : null,
  "commitUser" : "c7c1",
  "commitIdentifier" : 9223372036854775807,
  "commitKind" : "OVERWRITE",
  "timeMillis" : 1720000000000,
  "logOffsets" : { },
  "totalRecordCount" : 4,
  "deltaRecordCount" : -1,
  "changelogRecordCount" : 0,
  "watermark" : 1719999999000
}"""


def test_java_layout_round_trip_byte_exact() -> None:
    s = Snapshot.from_json(JAVA_1X, "snapshot-7")
    assert s.id == 7 and s.schema_id == 1 and s.commit_kind == "COMPACT"
    assert s.commit_identifier == BATCH_COMMIT_IDENTIFIER
    assert s.base_manifest_list_size == 1024 and s.next_row_id == 0
    assert s.to_json() == JAVA_1X
    full = Snapshot.from_json(FULL, "snapshot-3")
    assert full.properties == {"k": "v"} and full.operation == "OVERWRITE" and full.writer_version == "2.1"
    assert full.to_json() == FULL


def test_new_snapshot_layout() -> None:
    s = Snapshot(
        id=1, schema_id=0, base_manifest_list="b", delta_manifest_list="d", commit_user="u",
        commit_kind="APPEND", time_millis=5, total_record_count=1, delta_record_count=1, properties={},
    )
    text = s.to_json()
    assert text.startswith('{\n  "version" : 3,\n  "id" : 1,')
    assert "logOffsets" not in text and "properties" not in text and "changelogManifestList" not in text
    assert not text.endswith("\n")
    assert '"commitIdentifier" : 9223372036854775807' in text


def test_table_store_02_snapshot() -> None:
    s = Snapshot.from_json(V02, "snapshot-2")
    assert s.version == 1
    assert s.commit_identifier == 1
    assert s.log_offsets == {}
    assert s.total_record_count is None
    out = s.to_json()
    assert "logOffsets" not in out and '"commitIdentifier" : 1,' in out


def test_09_snapshot() -> None:
    s = Snapshot.from_json(V09, "snapshot-4")
    assert s.changelog_manifest_list is None
    assert s.watermark == 1719999999000
    assert s.delta_record_count == -1
    assert s.manifest_lists() == ["manifest-list-d-6", "manifest-list-d-7"]
    assert '"changelogManifestList"' not in s.to_json()


def test_unknown_keys_kept() -> None:
    text = JAVA_1X[:-2] + ',\n  "futureField" : [ 1, 2 ]\n}'
    s = Snapshot.from_json(text, "p")
    assert s.extra == {"futureField": [1, 2]}
    assert s.to_json() == text


@pytest.mark.parametrize(
    "mutate, problem",
    [
        (lambda t: t.replace('"id" : 7,', ""), "'id'"),
        (lambda t: t.replace('"schemaId" : 1,', ""), "'schemaId'"),
        (lambda t: t.replace('"commitKind" : "COMPACT",', ""), "'commitKind'"),
        (lambda t: t.replace('"timeMillis" : 1700000000123,', ""), "'timeMillis'"),
        (lambda t: t.replace('"baseManifestList" : "manifest-list-aaaa-4",', ""), "'baseManifestList'"),
        (lambda t: t.replace('"id" : 7', '"id" : "seven"'), "'id'"),
        (lambda t: t.replace('"id" : 7', '"id" : true'), "'id'"),
        (lambda t: t.replace('"COMPACT"', '"MERGE"'), "commitKind"),
        (lambda t: t.replace('"deltaManifestList" : "manifest-list-aaaa-5"', '"deltaManifestList" : 5'), "'deltaManifestList'"),
        (lambda t: t[: len(t) // 2], "invalid JSON"),
        (lambda t: "", "empty"),
        (lambda t: "[1, 2]", "object"),
    ],
)
def test_corrupt_snapshot(mutate, problem) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(CorruptMetadata) as ei:
        Snapshot.from_json(mutate(JAVA_1X), "/t/snapshot/snapshot-7")
    msg = str(ei.value)
    assert "/t/snapshot/snapshot-7" in msg and problem in msg and "\n" not in msg


@pytest.mark.parametrize(
    "mutate, expected_id, problem",
    [
        (lambda t: t, 6, "says id 7 but its file name says 6"),
        (lambda t: t.replace('"id" : 7', '"id" : 424242'), 7, "says id 424242 but its file name says 7"),
        (lambda t: t.replace('"id" : 7', '"id" : 0'), None, "snapshot id 0 is not positive"),
        (lambda t: t.replace('"schemaId" : 1', '"schemaId" : -1'), 7, "schemaId -1 is negative"),
        (lambda t: t.replace('"manifest-list-aaaa-4"', '"../snapshot/snapshot-5"'), 7,
         "baseManifestList '../snapshot/snapshot-5' is a path"),
        (lambda t: t.replace('"manifest-list-aaaa-5"', '"manifest-list\\u0000x"'), 7,
         "deltaManifestList 'manifest-list\\x00x' contains control characters"),
        (lambda t: t.replace('"manifest-list-aaaa-5"', '".."'), 7, "deltaManifestList '..' is a path"),
        (lambda t: t.replace('"manifest-list-aaaa-5"', '""'), 7, "deltaManifestList '' is empty"),
        (lambda t: t.replace('"index-manifest-bbbb-0"', '"/etc/passwd"'), 7, "indexManifest '/etc/passwd' is a path"),
        (lambda t: t.replace('"baseManifestListSize" : 1024', '"baseManifestListSize" : -3'), 7,
         "baseManifestListSize -3 is negative"),
    ],
)
def test_inconsistent_snapshot(mutate, expected_id, problem) -> None:  # type: ignore[no-untyped-def]
    """Issue 16: fields deletion decisions rest on must agree with the file name and be plain
    file names; each problem is one line naming the file."""
    text = mutate(JAVA_1X)
    with pytest.raises(CorruptMetadata) as ei:
        Snapshot.from_json(text, "/t/snapshot/snapshot-x", expected_id)
    msg = str(ei.value)
    assert msg.startswith("/t/snapshot/snapshot-x: ") and problem in msg and "\n" not in msg


def test_consistent_snapshot_with_expected_id() -> None:
    assert Snapshot.from_json(JAVA_1X, "snapshot-7", 7).id == 7


# -- SnapshotManager ----------------------------------------------------------------------


def _snap(i: int, t: int | None = None) -> Snapshot:
    return Snapshot(
        id=i, schema_id=0, base_manifest_list=f"b-{i}", delta_manifest_list=f"d-{i}", commit_user="u",
        commit_kind="APPEND", time_millis=1000 * i if t is None else t, total_record_count=i, delta_record_count=1,
    )


def _schema_file(sm: SnapshotManager) -> None:
    """Snapshots name schema 0: a real table has that file (readers check it exists)."""
    schema = Path(sm.snapshot_dir).parent / "schema" / "schema-0"
    schema.parent.mkdir(parents=True, exist_ok=True)
    schema.write_text("{}")


def _table(tmp_path: Path, ids, branch: str | None = None, times=None) -> SnapshotManager:  # type: ignore[no-untyped-def]
    fio = FileIO(str(tmp_path))
    sm = SnapshotManager(fio, str(tmp_path / "db.db" / "t"), branch)
    _schema_file(sm)
    for i in ids:
        t = None if times is None else times[i]
        fio.write_bytes(sm.snapshot_path(i), _snap(i, t).to_json().encode())
    return sm


def test_listing_without_hints(tmp_path: Path) -> None:
    sm = _table(tmp_path, [3, 4, 5, 10])
    d = sm.snapshot_dir
    # junk that must be ignored
    for junk in [".snapshot-11.1234-abcd.tmp", "snapshot-", "snapshot-x1", "snapshot-12.bak", "README"]:
        Path(d, junk).write_text("junk")
    assert sm.snapshot_ids() == [3, 4, 5, 10]
    assert sm.latest_snapshot_id() == 10
    assert sm.earliest_snapshot_id() == 3
    assert [s.id for s in sm.snapshots()] == [3, 4, 5, 10]
    assert sm.latest_snapshot().id == 10  # type: ignore[union-attr]


def test_empty_table(tmp_path: Path) -> None:
    sm = SnapshotManager(FileIO(str(tmp_path)), str(tmp_path / "t"))
    assert sm.latest_snapshot_id() is None and sm.earliest_snapshot_id() is None
    assert sm.latest_snapshot() is None and sm.snapshots() == []
    assert sm.earlier_or_equal_time_millis(5) is None and sm.later_or_equal_time_millis(5) is None
    with pytest.raises(NotFound, match="has no snapshots"):
        sm.snapshot(1)


def test_hints_trusted_and_written_without_newline(tmp_path: Path) -> None:
    sm = _table(tmp_path, range(1, 6))
    sm.commit_latest_hint(5)
    sm.commit_earliest_hint(1)
    assert Path(sm.snapshot_dir, "LATEST").read_bytes() == b"5"
    assert Path(sm.snapshot_dir, "EARLIEST").read_bytes() == b"1"
    assert sm.latest_snapshot_id() == 5 and sm.earliest_snapshot_id() == 1


def test_stale_latest_hint_falls_back(tmp_path: Path) -> None:
    sm = _table(tmp_path, range(1, 8))
    sm.commit_latest_hint(4)  # snapshot-5 exists, so the hint is stale
    assert sm.latest_snapshot_id() == 7


def test_latest_hint_pointing_to_missing_snapshot(tmp_path: Path) -> None:
    """Issue 27: the hint names a snapshot that is gone; the newest file left is not the table's
    latest (Java reads the hinted file and fails too), so readers say what is missing."""
    sm = _table(tmp_path, range(1, 4))
    sm.commit_latest_hint(9)
    with pytest.raises(CorruptMetadata) as ei:
        sm.latest_snapshot_id()
    assert str(ei.value) == (f"{sm.snapshot_path(9)}: the LATEST hint names snapshot 9 but its file is missing (the "
                             "newest snapshot file is 3; restore the file, or make 3 the latest with `paimon-cli repair`)")
    assert ei.value.exit_code == 4
    empty = _table(tmp_path / "empty", [])
    empty.commit_latest_hint(2)
    with pytest.raises(CorruptMetadata, match="the LATEST hint names snapshot 2 but its file is missing "
                                              r"\(no snapshot file exists\)"):
        empty.latest_snapshot_id()
    sm.commit_latest_hint(3)  # what `repair` writes
    assert sm.latest_snapshot_id() == 3 and sm.check_complete() == [1, 2, 3]


def test_check_complete_refuses_what_hides_a_snapshot(tmp_path: Path) -> None:
    """Commands that delete must see every snapshot: a LATEST hint past the newest file or a
    gap between the earliest snapshot and the newest is CorruptMetadata naming it; a gap below
    the EARLIEST hint (`repair --earliest`) and changelogs' gaps are not."""
    sm = _table(tmp_path, [1, 2, 3, 5, 6, 7])
    with pytest.raises(CorruptMetadata) as ei:
        sm.check_complete()
    assert str(ei.value) == (f"{sm.snapshot_path(4)}: snapshot 4 is missing between the earliest snapshot 1 and the "
                             "newest 7; restore it, or make snapshot 5 the earliest with `paimon-cli repair "
                             "--earliest 5`")
    assert sm.latest_snapshot_id() == 7  # a reader of the latest does not need snapshot 4
    os.remove(sm.snapshot_path(3))
    with pytest.raises(CorruptMetadata, match="snapshots 3..4 are missing between the earliest snapshot 1"):
        sm.check_complete()
    sm.commit_earliest_hint(5)  # the user chose: the table starts after the gap
    assert sm.check_complete() == [1, 2, 5, 6, 7]
    sm.commit_latest_hint(9)
    with pytest.raises(CorruptMetadata, match="the LATEST hint names snapshot 9"):
        sm.check_complete()
    # races: a listing older than a commit (hint and file newer than the listing) or than an
    # expiration (the snapshot below a listed gap is gone meanwhile) is no damage
    sm.file_io.write_bytes(sm.snapshot_path(8), _snap(8).to_json().encode())
    sm.file_io.write_bytes(sm.snapshot_path(9), _snap(9).to_json().encode())
    assert sm.check_complete([5, 6, 7]) == [5, 6, 7]
    assert sm.check_complete([1, 2, 5, 6, 7, 8, 9]) == [1, 2, 5, 6, 7, 8, 9]
    sm.file_io.delete(join(sm.snapshot_dir, "EARLIEST"))
    with pytest.raises(CorruptMetadata, match="snapshots 3..4 are missing"):
        sm.check_complete()
    assert sm.check_complete([0, 5, 6, 7, 8, 9]) == [0, 5, 6, 7, 8, 9]  # snapshot 0 expired meanwhile
    cm = ChangelogManager(sm.file_io, sm.table_path)
    for i in (1, 2, 6):
        sm.file_io.write_bytes(cm.snapshot_path(i), _snap(i).to_json().encode())
    cm.commit_latest_hint(9)
    assert cm.check_complete() == [1, 2, 6]


def test_earliest_hint_expired_falls_back(tmp_path: Path) -> None:
    sm = _table(tmp_path, range(4, 8))
    sm.commit_earliest_hint(2)  # snapshot-2 was expired
    assert sm.earliest_snapshot_id() == 4


@pytest.mark.parametrize("content", [b"abc", b"", b"\x00\xff", b"1.5"])
def test_corrupt_hints_fall_back(tmp_path: Path, content: bytes) -> None:
    sm = _table(tmp_path, range(2, 6))
    Path(sm.snapshot_dir, "LATEST").write_bytes(content)
    Path(sm.snapshot_dir, "EARLIEST").write_bytes(content)
    assert sm.latest_snapshot_id() == 5 and sm.earliest_snapshot_id() == 2


def test_hint_with_trailing_newline_is_accepted(tmp_path: Path) -> None:
    sm = _table(tmp_path, range(1, 4))
    Path(sm.snapshot_dir, "LATEST").write_bytes(b"3\n")
    assert sm.latest_snapshot_id() == 3


def test_not_found_message(tmp_path: Path) -> None:
    sm = _table(tmp_path, range(1, 11))
    with pytest.raises(NotFound) as ei:
        sm.snapshot(42)
    msg = str(ei.value)
    assert msg == f"snapshot 42 not found in {tmp_path / 'db.db' / 't'}: available 1..10"
    assert ei.value.exit_code == 3


def test_corrupt_snapshot_file_names_the_file(tmp_path: Path) -> None:
    sm = _table(tmp_path, range(1, 4))
    Path(sm.snapshot_path(2)).write_text('{\n  "version" : 3,\n  "id" : 2,')
    with pytest.raises(CorruptMetadata) as ei:
        sm.snapshot(2)
    assert sm.snapshot_path(2) in str(ei.value)
    with pytest.raises(CorruptMetadata):
        sm.snapshots()


def test_branch_snapshot_dir(tmp_path: Path) -> None:
    sm = _table(tmp_path, [1, 2], branch="dev")
    assert sm.snapshot_dir == str(tmp_path / "db.db" / "t" / "branch" / "branch-dev" / "snapshot")
    assert sm.latest_snapshot_id() == 2
    main = sm.copy_with_branch(None)
    assert main.latest_snapshot_id() is None
    with pytest.raises(NotFound, match="branch dev"):
        sm.snapshot(5)


def test_time_travel(tmp_path: Path) -> None:
    sm = _table(tmp_path, range(3, 13))  # times 3000 .. 12000
    assert sm.earlier_or_equal_time_millis(2999) is None
    assert sm.earlier_or_equal_time_millis(3000).id == 3  # type: ignore[union-attr]
    assert sm.earlier_or_equal_time_millis(7500).id == 7  # type: ignore[union-attr]
    assert sm.earlier_or_equal_time_millis(8000).id == 8  # type: ignore[union-attr]
    assert sm.earlier_or_equal_time_millis(10**12).id == 12  # type: ignore[union-attr]
    assert sm.later_or_equal_time_millis(1).id == 3  # type: ignore[union-attr]
    assert sm.later_or_equal_time_millis(7500).id == 8  # type: ignore[union-attr]
    assert sm.later_or_equal_time_millis(8000).id == 8  # type: ignore[union-attr]
    assert sm.later_or_equal_time_millis(12001) is None


def test_time_travel_exhaustive_against_linear_scan(tmp_path: Path) -> None:
    times = dict(enumerate([10, 10, 20, 30, 30, 30, 40, 55, 60, 60, 61, 70, 70, 80, 90, 95, 99, 99, 100], start=1))
    sm = _table(tmp_path, range(1, 20), times=times)
    for ts in range(0, 105):
        le = [i for i in times if times[i] <= ts]
        ge = [i for i in times if times[i] >= ts]
        got_le = sm.earlier_or_equal_time_millis(ts)
        got_ge = sm.later_or_equal_time_millis(ts)
        assert (got_le.time_millis if got_le else None) == (times[max(le)] if le else None)
        assert (got_ge.time_millis if got_ge else None) == (times[min(ge)] if ge else None)


def test_time_travel_with_gap(tmp_path: Path) -> None:
    sm = _table(tmp_path, [1, 2, 3, 5, 6, 7, 8, 9])  # snapshot-4 missing
    assert sm.earlier_or_equal_time_millis(4500).id == 3  # type: ignore[union-attr]
    assert sm.later_or_equal_time_millis(3500).id == 5  # type: ignore[union-attr]


def test_changelog_manager(tmp_path: Path) -> None:
    fio = FileIO(str(tmp_path))
    cm = ChangelogManager(fio, str(tmp_path / "t"))
    fio.write_bytes(cm.snapshot_path(4), _snap(4).to_json().encode())
    assert cm.snapshot_path(4).endswith("/t/changelog/changelog-4")
    assert cm.latest_snapshot_id() == 4
    with pytest.raises(NotFound, match="changelog 5 not found"):
        cm.snapshot(5)


def test_snapshots_many_in_order(tmp_path: Path) -> None:
    """10,000 snapshots list complete and ordered on both read paths (speed: bench/)."""
    n = 10_000
    fio = FileIO(str(tmp_path))
    sm = SnapshotManager(fio, str(tmp_path / "t"))
    os.makedirs(sm.snapshot_dir)
    _schema_file(sm)
    for i in range(1, n + 1):
        with open(sm.snapshot_path(i), "w") as f:
            f.write(_snap(i).to_json())
    snaps = sm.snapshots()
    assert [s.id for s in snaps] == list(range(1, n + 1))
    # the threaded path (used for object stores) gives the same result
    assert [s.id for s in sm.snapshots(threads=16)] == list(range(1, n + 1))
