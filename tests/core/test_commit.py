"""core/operation/commit.py: snapshots, manifests, merging, overwrite, conflicts, retries, cleanup.

Data files here are metadata only (no bytes on disk): the commit never opens them, and a
structurally valid DataFileMeta is all the manifests need.
"""

from __future__ import annotations

import multiprocessing
import os
import uuid
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import parse_data_type
from paimon_cli.core.errors import CommitConflict, InvalidInput
from paimon_cli.core.manifest.index_manifest import DeletionVectorMeta, IndexFileMeta
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta, FileKind
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.refs.snapshot import BATCH_COMMIT_IDENTIFIER, Snapshot
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import FileStoreTable

INT = parse_data_type("INT")
STRING = parse_data_type("STRING")


# ---------------------------------------------------------------------------- helpers


def make_table(wh: str, name: str = "t", *, partitioned: bool = True, pk: bool = False,
               options: dict[str, str] | None = None) -> FileStoreTable:
    cols = [("id", INT, None), ("dt", STRING, None), ("v", STRING, None)]
    schema = Schema.of(
        cols,
        partition_keys=["dt"] if partitioned else [],
        primary_keys=(["id", "dt"] if partitioned else ["id"]) if pk else [],
        options={"bucket": "2" if pk else "-1", **(options or {})},
    )
    return FileSystemCatalog(wh).create_table(f"db.{name}", schema)


def reload(table: FileStoreTable) -> FileStoreTable:
    return FileStoreTable.load(table.file_io, table.path, table.identifier)


def part(table: FileStoreTable, value: str | None) -> bytes:
    if not table.schema.partition_keys:
        return binary_row.EMPTY_ROW
    return binary_row.serialize([value], table.schema.partition_types)


def key(i: int) -> bytes:
    return binary_row.serialize([i], [INT.copy(nullable=False)])


def dfile(rows: int = 10, level: int = 0, lo: int = 0, hi: int = 0, name: str | None = None) -> DataFileMeta:
    return DataFileMeta(
        file_name=name or f"data-{uuid.uuid4()}-0.parquet",
        file_size=1000 + rows,
        row_count=rows,
        min_key=key(lo),
        max_key=key(hi),
        key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS,
        min_sequence_number=0,
        max_sequence_number=max(rows - 1, 0),
        schema_id=0,
        level=level,
        creation_time=1_700_000_000_000,
        delete_row_count=0,
        file_source=0,
    )


def msg(table: FileStoreTable, files: list[DataFileMeta], dt: str | None = "a", bucket: int = 0,
        **kw: Any) -> CommitMessage:
    total = table.schema.bucket
    return CommitMessage(part(table, dt), bucket, total, files, **kw)


def live_names(table: FileStoreTable, snap: Snapshot | None = None) -> set[str]:
    snap = snap or table.snapshot_manager.latest_snapshot()
    return {e.file.file_name for e in FileStoreScan(table).plan(snap)}


def referenced_manifest_files(table: FileStoreTable) -> set[str]:
    """Every file in manifest/ that some snapshot references."""
    scan = FileStoreScan(table)
    out: set[str] = set()
    for snap in table.snapshot_manager.snapshots():
        for lst in snap.manifest_lists():
            out.add(lst)
            out.update(m.file_name for m in scan._manifest_list().read(lst))
        if snap.index_manifest:
            out.add(snap.index_manifest)
    return out


def manifest_dir_files(table: FileStoreTable) -> set[str]:
    d = Path(table.path) / "manifest"
    return set(os.listdir(d)) if d.exists() else set()


@pytest.fixture
def wh(tmp_path: Path) -> str:
    return str(tmp_path / "wh")


# ---------------------------------------------------------------------------- append


def test_first_append_writes_java_layout(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    f1, f2 = dfile(3), dfile(4)
    snap = c.commit([msg(t, [f1, f2])])
    assert snap is not None
    assert (snap.id, snap.commit_kind, snap.schema_id, snap.version) == (1, "APPEND", 0, 3)
    assert snap.commit_identifier == BATCH_COMMIT_IDENTIFIER
    assert snap.commit_user == c.commit_user
    assert (snap.total_record_count, snap.delta_record_count, snap.changelog_record_count) == (7, 7, None)
    assert snap.changelog_manifest_list is None and snap.index_manifest is None

    # the file on disk is that snapshot, Jackson layout, with the 1.1+ list sizes and Java 2.0's
    # uuid right after the version (a fresh one per snapshot)
    text = (Path(t.path) / "snapshot" / "snapshot-1").read_text()
    assert Snapshot.from_json(text, "x") == snap
    assert text.startswith(f'{{\n  "version" : 3,\n  "uuid" : "{snap.uuid}",\n  "id" : 1,\n')
    assert str(uuid.UUID(str(snap.uuid))) == snap.uuid
    assert '"baseManifestListSize"' in text and '"deltaManifestListSize"' in text
    assert '"properties"' not in text and "changelogManifestList" not in text
    assert (Path(t.path) / "snapshot" / "LATEST").read_bytes() == b"1"

    ml = FileStoreScan(t)._manifest_list()
    assert ml.read(snap.base_manifest_list) == []  # empty base list is still written
    assert snap.base_manifest_list_size == (Path(t.path) / "manifest" / snap.base_manifest_list).stat().st_size
    delta = ml.read(snap.delta_manifest_list)
    assert len(delta) == 1 and delta[0].num_added_files == 2 and delta[0].num_deleted_files == 0
    entries = FileStoreScan(t).delta(snap)
    assert [(e.kind, e.file, e.bucket, e.total_buckets, e.partition) for e in entries] == [
        (FileKind.ADD, f1, 0, -1, part(t, "a")), (FileKind.ADD, f2, 0, -1, part(t, "a"))]
    # nothing but referenced metadata in manifest/
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_appends_accumulate_and_update_hint(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    names: set[str] = set()
    for i in range(1, 6):
        f = dfile(i)
        names.add(f.file_name)
        snap = c.commit([msg(t, [f], dt=f"p{i % 2}")])
        assert snap is not None and snap.id == i
        assert (Path(t.path) / "snapshot" / "LATEST").read_text() == str(i)
        assert snap.total_record_count == sum(range(1, i + 1))
        assert snap.delta_record_count == i
    assert live_names(t) == names
    assert t.snapshot_manager.snapshot_ids() == [1, 2, 3, 4, 5]


def test_empty_commit_creates_no_snapshot(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    assert c.commit([]) is None
    assert c.commit([msg(t, [])]) is None
    assert t.snapshot_manager.latest_snapshot_id() is None
    assert manifest_dir_files(t) == set()


def test_changelog_manifest_list(wh: str) -> None:
    t = make_table(wh)
    cl = dfile(6, name=f"changelog-{uuid.uuid4()}-0.parquet")
    snap = FileStoreCommit(t).commit([msg(t, [dfile(6)], changelog_files=[cl])])
    assert snap is not None
    assert snap.changelog_manifest_list is not None and snap.changelog_record_count == 6
    assert snap.changelog_manifest_list_size is not None
    assert [e.file for e in FileStoreScan(t).changelog(snap)] == [cl]
    assert cl.file_name not in live_names(t)


def test_properties_and_watermark(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t, commit_user="me")
    s1 = c.commit([msg(t, [dfile()])], properties={"k": "v"}, watermark=100)
    s2 = c.commit([msg(t, [dfile()])], watermark=50)
    assert s1 is not None and s2 is not None
    assert s1.properties == {"k": "v"} and s1.commit_user == "me"
    assert s2.properties is None and s2.watermark == 100  # the max watermark is kept
    assert s2.time_millis >= s1.time_millis


def test_schema_id_is_the_latest_schema(wh: str) -> None:
    from paimon_cli.core.schema.schema_change import SetOption

    t = make_table(wh)
    FileSystemCatalog(wh).alter_table("db.t", [SetOption("snapshot.num-retained.min", "5")])
    snap = FileStoreCommit(t).commit([msg(t, [dfile()])])
    assert snap is not None and snap.schema_id == 1


# ---------------------------------------------------------------------------- manifest merging


def test_base_manifest_list_stays_bounded_over_100_commits(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    names = set()
    sizes = []
    for i in range(100):
        f = dfile(1)
        names.add(f.file_name)
        snap = c.commit([msg(t, [f], dt=f"p{i % 7}")])
        assert snap is not None
        base = FileStoreScan(t)._manifest_list().read(snap.base_manifest_list)
        sizes.append(len(base))
    # manifest.merge-min-count (30): small manifests are merged once 30 pile up
    assert max(sizes) == 29
    assert sizes[29] == 29 and sizes[30] == 1  # snapshot 31 merged the 30 manifests of 1..30
    assert live_names(t) == names
    assert snap.total_record_count == 100
    # every manifest in manifest/ that no snapshot references would be a leak
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_minor_merge_cancels_add_and_delete(wh: str) -> None:
    t = make_table(wh, options={"manifest.merge-min-count": "3"})
    c = FileStoreCommit(t)
    a, b = dfile(5), dfile(6)
    c.commit([msg(t, [a])])
    c.commit([msg(t, [b])])
    c.commit([msg(t, [dfile(7)], deleted_files=[a])])
    snap = c.commit([msg(t, [dfile(1)])])  # base = merge of 3 manifests
    assert snap is not None
    ml = FileStoreScan(t)._manifest_list()
    base = ml.read(snap.base_manifest_list)
    assert len(base) == 1 and base[0].num_deleted_files == 0 and base[0].num_added_files == 2
    assert a.file_name not in live_names(t)
    assert snap.total_record_count == 6 + 7 + 1


def test_full_compaction_drops_deletes(wh: str) -> None:
    t = make_table(wh, options={"manifest.full-compaction-threshold-size": "1 b",
                                "manifest.merge-min-count": "1000"})
    c = FileStoreCommit(t)
    files = [dfile(i + 1) for i in range(4)]
    for f in files:
        c.commit([msg(t, [f])])
    c.commit([msg(t, [], deleted_files=files[:2])], commit_kind="COMPACT")
    snap = c.commit([msg(t, [dfile(1)])])
    assert snap is not None
    base = FileStoreScan(t)._manifest_list().read(snap.base_manifest_list)
    assert sum(m.num_deleted_files for m in base) == 0
    entries = FileStoreScan(t).read_entries(base)
    assert {e.file.file_name for e in entries} == {f.file_name for f in files[2:]}


def test_full_compaction_keeps_untouched_partitions_manifests(wh: str) -> None:
    """Big delete-free manifests whose partition stats exclude every DELETE are kept as is."""
    t = make_table(wh, options={"manifest.full-compaction-threshold-size": "1 b",
                                "manifest.target-file-size": "1 b"})
    c = FileStoreCommit(t)
    files = {p: dfile(n) for p, n in (("a", 1), ("b", 2), ("c", 4))}
    metas = {}
    for p, f in files.items():
        snap = c.commit([msg(t, [f], dt=p)])
        assert snap is not None
        metas[p] = FileStoreScan(t)._manifest_list().read(snap.delta_manifest_list)[0].file_name
    out = dfile(2)
    c.commit([msg(t, [out], dt="b", deleted_files=[files["b"]])], commit_kind="COMPACT")
    snap = c.commit([msg(t, [dfile(1)], dt="d")])
    assert snap is not None
    base = [m.file_name for m in FileStoreScan(t)._manifest_list().read(snap.base_manifest_list)]
    assert base[0] == metas["a"]  # skipped by its partition stats
    assert metas["b"] not in base and metas["c"] not in base  # rewritten from the first hit on
    entries = FileStoreScan(t).read_entries(FileStoreScan(t)._manifest_list().read(snap.base_manifest_list))
    assert all(e.kind == FileKind.ADD for e in entries)
    assert {e.file.file_name for e in entries} == {files["a"].file_name, files["c"].file_name, out.file_name}
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_delta_manifests_roll_at_target_size(wh: str) -> None:
    t = make_table(wh, options={"manifest.target-file-size": "2 kb"})
    files = [dfile(i + 1) for i in range(60)]
    snap = FileStoreCommit(t).commit([msg(t, files)])
    assert snap is not None
    delta = FileStoreScan(t)._manifest_list().read(snap.delta_manifest_list)
    assert len(delta) > 1
    assert sum(m.num_added_files for m in delta) == 60
    assert [e.file for e in FileStoreScan(t).delta(snap)] == files
    assert manifest_dir_files(t) == referenced_manifest_files(t)


# ---------------------------------------------------------------------------- compaction and conflicts


def test_compact_commit_counts_and_kind(wh: str) -> None:
    t = make_table(wh, pk=True)
    c = FileStoreCommit(t)
    a, b = dfile(10, lo=1, hi=5), dfile(20, lo=3, hi=9)
    c.commit([msg(t, [a, b])])
    out = dfile(25, level=5, lo=1, hi=9)
    snap = c.commit([msg(t, [out], deleted_files=[a, b])], commit_kind="COMPACT")
    assert snap is not None and snap.commit_kind == "COMPACT"
    assert (snap.delta_record_count, snap.total_record_count) == (-5, 25)
    assert live_names(t) == {out.file_name}
    kinds = [e.kind for e in FileStoreScan(t).delta(snap)]
    assert kinds == [FileKind.DELETE, FileKind.DELETE, FileKind.ADD]


def test_append_with_deletes_is_labelled_overwrite(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    a = dfile(4)
    c.commit([msg(t, [a])])
    snap = c.commit([msg(t, [dfile(2)], deleted_files=[a])])
    assert snap is not None and snap.commit_kind == "OVERWRITE"


def _assert_nothing_committed(t: FileStoreTable, before: set[str], latest: int | None) -> None:
    assert t.snapshot_manager.latest_snapshot_id() == latest
    assert manifest_dir_files(t) == before


def test_conflict_delete_of_missing_file(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    a = dfile()
    c.commit([msg(t, [a])])
    before = manifest_dir_files(t)
    with pytest.raises(CommitConflict, match="not in snapshot 1"):
        c.commit([msg(t, [dfile()], deleted_files=[dfile()])], commit_kind="COMPACT")
    _assert_nothing_committed(t, before, 1)
    # the same file deleted by two compactions: the second one loses
    c.commit([msg(t, [dfile()], deleted_files=[a])], commit_kind="COMPACT")
    before = manifest_dir_files(t)
    with pytest.raises(CommitConflict, match=a.file_name):
        FileStoreCommit(t).commit([msg(t, [dfile()], deleted_files=[a])], commit_kind="COMPACT")
    _assert_nothing_committed(t, before, 2)


def test_conflict_duplicate_identifiers(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    a = dfile()
    c.commit([msg(t, [a])])
    with pytest.raises(CommitConflict, match="more than once"):
        c.commit([msg(t, [a], deleted_files=[a])], commit_kind="COMPACT")
    with pytest.raises(CommitConflict, match="already in snapshot 1"):
        c.commit([msg(t, [a])], commit_kind="COMPACT")
    assert t.snapshot_manager.latest_snapshot_id() == 1


def test_conflict_lsm_key_ranges_overlap(wh: str) -> None:
    t = make_table(wh, pk=True)
    c = FileStoreCommit(t)
    l0 = [dfile(lo=1, hi=10), dfile(lo=5, hi=20)]
    c.commit([msg(t, l0)])
    c.commit([msg(t, [dfile(level=4, lo=1, hi=10)], deleted_files=[l0[0]])], commit_kind="COMPACT")
    # a concurrent compaction produced an overlapping file on the same level
    with pytest.raises(CommitConflict, match="LSM conflict"):
        c.commit([msg(t, [dfile(level=4, lo=10, hi=20)], deleted_files=[l0[1]])], commit_kind="COMPACT")
    # disjoint ranges on the level, or overlap on another bucket / level, are fine
    snap = c.commit([msg(t, [dfile(level=4, lo=11, hi=20)], deleted_files=[l0[1]])], commit_kind="COMPACT")
    assert snap is not None and snap.id == 3
    snap = c.commit([msg(t, [dfile(level=3, lo=1, hi=20)]), msg(t, [dfile(level=4, lo=1, hi=20)], bucket=1)],
                    commit_kind="COMPACT")
    assert snap is not None and snap.id == 4


def test_conflict_total_buckets_change(wh: str) -> None:
    t = make_table(wh, pk=True)
    c = FileStoreCommit(t)
    c.commit([msg(t, [dfile()])])
    m = msg(t, [dfile(level=5)])
    m.total_buckets = 4
    with pytest.raises(CommitConflict, match="total buckets"):
        c.commit([m], commit_kind="COMPACT")
    snap = c.commit([m], overwrite={})  # allowed with overwrite (rescale)
    assert snap is not None and snap.commit_kind == "OVERWRITE"


def test_bad_commit_kind(wh: str) -> None:
    t = make_table(wh)
    with pytest.raises(InvalidInput, match="commit kind"):
        FileStoreCommit(t).commit([msg(t, [dfile()])], commit_kind="ANALYZE")
    with pytest.raises(InvalidInput, match="cannot overwrite"):
        FileStoreCommit(t).commit([msg(t, [dfile()])], commit_kind="COMPACT", overwrite={})


def test_partition_arity_checked(wh: str) -> None:
    t = make_table(wh)
    with pytest.raises(InvalidInput, match="partition"):
        FileStoreCommit(t).commit([CommitMessage(binary_row.EMPTY_ROW, 0, -1, [dfile()])])


# ---------------------------------------------------------------------------- overwrite


def _three_partitions(t: FileStoreTable) -> tuple[FileStoreCommit, dict[str, DataFileMeta]]:
    c = FileStoreCommit(t)
    files = {p: dfile(n) for p, n in (("a", 1), ("b", 2), ("c", 4))}
    c.commit([msg(t, [f], dt=p) for p, f in files.items()])
    return c, files


def test_dynamic_partition_overwrite_is_default(wh: str) -> None:
    t = make_table(wh)
    c, files = _three_partitions(t)
    new = dfile(8)
    snap = c.commit([msg(t, [new], dt="b")], overwrite={})
    assert snap is not None and snap.commit_kind == "OVERWRITE"
    assert live_names(t) == {files["a"].file_name, new.file_name, files["c"].file_name}
    assert (snap.delta_record_count, snap.total_record_count) == (6, 13)
    # nothing new: dynamic overwrite changes nothing
    assert c.commit([], overwrite={}) is None
    assert t.snapshot_manager.latest_snapshot_id() == 2


def test_static_overwrite_whole_table(wh: str) -> None:
    t = make_table(wh)
    c, files = _three_partitions(t)
    new = dfile(8)
    snap = c.commit([msg(t, [new], dt="b")], overwrite={}, dynamic=False)
    assert snap is not None
    assert live_names(t) == {new.file_name}
    assert snap.total_record_count == 8
    # option-driven as well
    t2 = make_table(wh, "t2", options={"dynamic-partition-overwrite": "false"})
    c2, _ = _three_partitions(t2)
    c2.commit([msg(t2, [new], dt="b")], overwrite={})
    assert live_names(t2) == {new.file_name}


def test_static_partition_overwrite(wh: str) -> None:
    t = make_table(wh)
    c, files = _three_partitions(t)
    snap = c.commit([], overwrite={"dt": "c"}, dynamic=False)  # purge one partition
    assert snap is not None and snap.delta_record_count == -4
    assert live_names(t) == {files["a"].file_name, files["b"].file_name}
    new = dfile(3)
    c.commit([msg(t, [new], dt="a")], overwrite={"dt": "a"}, dynamic=False)
    assert live_names(t) == {new.file_name, files["b"].file_name}
    with pytest.raises(InvalidInput, match="outside the overwritten partition"):
        c.commit([msg(t, [dfile()], dt="b")], overwrite={"dt": "a"})
    with pytest.raises(InvalidInput, match="not a partition key"):
        c.commit([], overwrite={"id": "1"})


def test_pinned_overwrite_refuses_data_appended_after_its_base(wh: str) -> None:
    t = make_table(wh)
    c, files = _three_partitions(t)
    base = t.snapshot_manager.latest_snapshot_id()
    assert base is not None
    # a compaction in between is fine: it only rearranges data the base had
    c.commit([msg(t, [dfile(1, level=1)], dt="a", deleted_files=[files["a"]])], "COMPACT")
    late = dfile(5)
    c.commit([msg(t, [late], dt="b")])  # appended after the base, in the overwritten partition
    before = live_names(t)
    with pytest.raises(CommitConflict, match="after base snapshot"):
        c.commit([msg(t, [dfile(3)], dt="b")], overwrite={}, base_snapshot_id=base)
    assert live_names(t) == before
    # another partition's overwrite is not affected by that append
    new_c = dfile(4)
    snap = c.commit([msg(t, [new_c], dt="c")], overwrite={}, base_snapshot_id=base)
    assert snap is not None and new_c.file_name in live_names(t) and late.file_name in live_names(t)
    with pytest.raises(InvalidInput, match="pins an overwrite"):
        c.commit([msg(t, [dfile(3)], dt="b")], base_snapshot_id=base)


def test_drop_partitions_is_one_overwrite(wh: str) -> None:
    t = make_table(wh)
    c, files = _three_partitions(t)
    snap = c.drop_partitions([{"dt": "a"}, {"dt": "c"}])
    assert snap.commit_kind == "OVERWRITE" and snap.delta_record_count == -5
    assert live_names(t) == {files["b"].file_name}
    with pytest.raises(InvalidInput, match="not partitioned"):
        FileStoreCommit(make_table(wh, "u", partitioned=False)).drop_partitions([{"dt": "a"}])
    with pytest.raises(InvalidInput, match="no partition given"):
        c.drop_partitions([])


def test_commit_increments_append_then_compact(wh: str) -> None:
    t = make_table(wh, pk=True)
    c = FileStoreCommit(t)
    f0 = dfile(3, level=0, lo=1, hi=3)
    up = dfile(3, level=5, lo=1, hi=3)
    snaps = c.commit_increments([msg(t, [f0])], [msg(t, [up], deleted_files=[f0])])
    assert [s.commit_kind for s in snaps] == ["APPEND", "COMPACT"]
    assert live_names(t) == {up.file_name}
    # a failing compact increment leaves the append committed and says so
    f1 = dfile(2, level=0, lo=4, hi=5)
    gone = dfile(2, level=0, lo=6, hi=7)
    with pytest.raises(CommitConflict) as err:
        c.commit_increments([msg(t, [f1])], [msg(t, [dfile(2, level=5, lo=6, hi=7)], deleted_files=[gone])])
    assert [s.commit_kind for s in err.value.committed] == ["APPEND"]  # type: ignore[attr-defined]
    assert live_names(t) == {up.file_name, f1.file_name}


def test_overwrite_unpartitioned_and_truncate(wh: str) -> None:
    t = make_table(wh, partitioned=False)
    c = FileStoreCommit(t)
    c.commit([msg(t, [dfile(5), dfile(6)], dt=None)])
    new = dfile(1)
    snap = c.commit([msg(t, [new], dt=None)], overwrite={})  # dynamic needs partitions: whole table
    assert snap is not None and live_names(t) == {new.file_name} and snap.total_record_count == 1
    snap = c.truncate()
    assert snap.total_record_count == 0 and live_names(t) == set()
    assert snap.commit_kind == "OVERWRITE"


def test_overwrite_null_partition(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    fnull, fa = dfile(), dfile()
    c.commit([msg(t, [fnull], dt=None), msg(t, [fa], dt="a")])
    c.commit([], overwrite={"dt": "__DEFAULT_PARTITION__"}, dynamic=False)
    assert live_names(t) == {fa.file_name}


def test_overwrite_deletes_index_files_of_the_partitions(wh: str) -> None:
    t = make_table(wh, pk=True, options={"bucket": "-1"})
    c = FileStoreCommit(t)
    ha = IndexFileMeta("HASH", f"index-{uuid.uuid4()}-0", 40, 10)
    hb = IndexFileMeta("HASH", f"index-{uuid.uuid4()}-0", 40, 10)
    c.commit([msg(t, [dfile()], dt="a", new_index_files=[ha]), msg(t, [dfile()], dt="b", new_index_files=[hb])])
    hn = IndexFileMeta("HASH", f"index-{uuid.uuid4()}-0", 8, 2)
    snap = c.commit([msg(t, [dfile()], dt="a", new_index_files=[hn])], overwrite={})
    assert snap is not None
    idx = FileStoreScan(t).index_entries(snap)
    assert sorted(e.index_file.file_name for e in idx) == sorted([hn.file_name, hb.file_name])


# ---------------------------------------------------------------------------- index manifest


def test_index_manifest_full_listing_and_reuse(wh: str) -> None:
    t = make_table(wh, pk=True, options={"bucket": "-1"})
    c = FileStoreCommit(t)
    h0 = IndexFileMeta("HASH", "index-a-0", 40, 10)
    s1 = c.commit([msg(t, [dfile()], bucket=0, new_index_files=[h0])])
    s2 = c.commit([msg(t, [dfile()], bucket=1)])
    assert s1 is not None and s2 is not None
    assert s1.index_manifest is not None and s2.index_manifest == s1.index_manifest  # reused
    # a new HASH file of bucket 0 replaces the old one; bucket 1 gets its first
    h0b, h1 = IndexFileMeta("HASH", "index-a-1", 44, 11), IndexFileMeta("HASH", "index-b-0", 4, 1)
    s3 = c.commit([msg(t, [dfile()], bucket=0, new_index_files=[h0b], deleted_index_files=[h0]),
                   msg(t, [dfile()], bucket=1, new_index_files=[h1])])
    assert s3 is not None and s3.index_manifest != s1.index_manifest
    idx = FileStoreScan(t).index_entries(s3)
    assert {(e.bucket, e.index_file.file_name) for e in idx} == {(0, "index-a-1"), (1, "index-b-0")}
    assert all(e.kind == FileKind.ADD for e in idx)


def test_deletion_vector_index_makes_overwrite_kind(wh: str) -> None:
    t = make_table(wh, pk=True, options={"deletion-vectors.enabled": "true"})
    c = FileStoreCommit(t)
    f = dfile(10, level=5, lo=1, hi=9)
    c.commit([msg(t, [f])])
    dv = IndexFileMeta("DELETION_VECTORS", "index-dv-0", 30, 1, (DeletionVectorMeta(f.file_name, 1, 20, 2),))
    snap = c.commit([msg(t, [], new_index_files=[dv])])
    assert snap is not None and snap.commit_kind == "OVERWRITE"
    assert [e.index_file for e in FileStoreScan(t).index_entries(snap)] == [dv]


def test_unaware_dv_index_combined_by_file_name(wh: str) -> None:
    t = make_table(wh, options={"deletion-vectors.enabled": "true"})
    c = FileStoreCommit(t)
    f = dfile()
    c.commit([msg(t, [f])])
    dv1 = IndexFileMeta("DELETION_VECTORS", "index-dv-1", 30, 1, (DeletionVectorMeta(f.file_name, 1, 20, 2),))
    c.commit([msg(t, [], new_index_files=[dv1])])
    with pytest.raises(CommitConflict, match="already in the index manifest"):
        c.commit([msg(t, [], new_index_files=[dv1])])
    dv2 = IndexFileMeta("DELETION_VECTORS", "index-dv-2", 30, 1, (DeletionVectorMeta(f.file_name, 1, 20, 3),))
    snap = c.commit([msg(t, [], new_index_files=[dv2], deleted_index_files=[dv1])])
    assert snap is not None
    assert [e.index_file.file_name for e in FileStoreScan(t).index_entries(snap)] == ["index-dv-2"]


def test_compaction_must_not_lose_deletion_vectors_written_meanwhile(wh: str) -> None:
    t = make_table(wh, pk=True, options={"deletion-vectors.enabled": "true"})
    c = FileStoreCommit(t)
    f = dfile(10, level=5, lo=1, hi=9)
    c.commit([msg(t, [f])])
    # a concurrent delete marks rows of f after a compaction read it
    dv1 = IndexFileMeta("DELETION_VECTORS", "index-dv-1", 30, 1, (DeletionVectorMeta(f.file_name, 1, 20, 2),))
    c.commit([msg(t, [], new_index_files=[dv1])])
    rewritten = dfile(10, level=5, lo=1, hi=9)
    with pytest.raises(CommitConflict, match="gained deletion vectors in index-dv-1"):
        c.commit([msg(t, [rewritten], deleted_files=[f])], "COMPACT")
    # a compaction that saw dv1 and replaces it is fine
    snap = c.commit([msg(t, [rewritten], deleted_files=[f], deleted_index_files=[dv1])], "COMPACT")
    assert snap is not None and FileStoreScan(t).index_entries(snap) == []
    # replacing an index file that is no longer live loses someone's vectors
    dv2 = IndexFileMeta("DELETION_VECTORS", "index-dv-2", 30, 1,
                        (DeletionVectorMeta(rewritten.file_name, 1, 20, 2),))
    dv3 = IndexFileMeta("DELETION_VECTORS", "index-dv-3", 30, 1,
                        (DeletionVectorMeta(rewritten.file_name, 1, 20, 4),))
    c.commit([msg(t, [], new_index_files=[dv2])])
    c.commit([msg(t, [], new_index_files=[dv3], deleted_index_files=[dv2])])
    dv4 = IndexFileMeta("DELETION_VECTORS", "index-dv-4", 30, 1,
                        (DeletionVectorMeta(rewritten.file_name, 1, 20, 3),))
    with pytest.raises(CommitConflict, match="index-dv-2 .* to replace is not in snapshot"):
        c.commit([msg(t, [], new_index_files=[dv4], deleted_index_files=[dv2])])


# ---------------------------------------------------------------------------- races, retries, cleanup


def test_retry_after_lost_race(wh: str) -> None:
    t = make_table(wh)
    ours, theirs = FileStoreCommit(t), FileStoreCommit(t)
    a = dfile(3)
    ours.commit([msg(t, [a])])
    other = dfile(4)
    calls: list[int] = []

    def race(snapshot_id: int) -> None:
        calls.append(snapshot_id)
        if len(calls) == 1:  # another writer publishes snapshot-2 between our build and publish
            theirs.commit([msg(t, [other])])

    ours._before_publish = race
    mine = dfile(5)
    snap = ours.commit([msg(t, [mine])])
    assert snap is not None and snap.id == 3 and calls == [2, 3] and ours.attempts == 2
    assert live_names(t) == {a.file_name, other.file_name, mine.file_name}
    assert snap.total_record_count == 12 and snap.delta_record_count == 5
    assert (Path(t.path) / "snapshot" / "LATEST").read_text() == "3"
    # the losing attempt's manifests and lists are gone
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_lost_race_rechecks_conflicts(wh: str) -> None:
    t = make_table(wh)
    ours, theirs = FileStoreCommit(t), FileStoreCommit(t)
    a = dfile(3)
    ours.commit([msg(t, [a])])

    def race(snapshot_id: int) -> None:
        if snapshot_id == 2:  # a concurrent compaction removes the file we compact too
            theirs.commit([msg(t, [dfile(3)], deleted_files=[a])], commit_kind="COMPACT")

    ours._before_publish = race
    with pytest.raises(CommitConflict, match="not in snapshot 2"):
        ours.commit([msg(t, [dfile(3)], deleted_files=[a])], commit_kind="COMPACT")
    assert t.snapshot_manager.latest_snapshot_id() == 2
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_gives_up_after_max_retries(wh: str) -> None:
    t = make_table(wh, options={"commit.max-retries": "2", "commit.min-retry-wait": "1 ms"})
    ours, theirs = FileStoreCommit(t), FileStoreCommit(t)
    ours._before_publish = lambda sid: theirs.commit([msg(t, [dfile()])])
    with pytest.raises(CommitConflict, match="gave up after 3 attempts"):
        ours.commit([msg(t, [dfile()])])
    assert ours.attempts == 3
    assert t.snapshot_manager.latest_snapshot_id() == 3  # only the other writer's snapshots
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_pre_created_snapshot_file_is_never_overwritten(wh: str) -> None:
    """A squatter file at snapshot-N (e.g. a crashed writer's) is skipped, not replaced."""
    t = make_table(wh)
    c = FileStoreCommit(t)
    c.commit([msg(t, [dfile()])])
    ours = FileStoreCommit(t)
    original = {}

    def squat(sid: int) -> None:
        if not original:
            snap1 = (Path(t.path) / "snapshot" / "snapshot-1").read_text()
            other = Snapshot.from_json(snap1, "x")
            other.id = sid
            (Path(t.path) / "snapshot" / f"snapshot-{sid}").write_text(other.to_json())
            original["text"] = other.to_json()

    ours._before_publish = squat
    snap = ours.commit([msg(t, [dfile()])])
    assert snap is not None and snap.id == 3
    assert (Path(t.path) / "snapshot" / "snapshot-2").read_text() == original["text"]


def test_failure_before_publish_cleans_up(wh: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    c.commit([msg(t, [dfile()])])
    before = manifest_dir_files(t)

    def boom(entries: Any) -> str:
        # base list, delta manifest and delta list are written by now
        assert len(manifest_dir_files(t)) == len(before) + 3
        raise OSError("disk full")

    monkeypatch.setattr(c.index_manifest_file, "write", boom)
    with pytest.raises(OSError, match="disk full"):
        c.commit([msg(t, [dfile()], new_index_files=[IndexFileMeta("HASH", "index-x-0", 4, 1)])])
    _assert_nothing_committed(t, before, 1)


FAST = {"commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "4 ms"}


def _assert_readable(t: FileStoreTable) -> None:
    """Every manifest a snapshot references exists, and the latest snapshot plans."""
    assert referenced_manifest_files(t) <= manifest_dir_files(t)
    live_names(t)


@pytest.mark.parametrize("lands", [True, False])
def test_failed_publish_of_unknown_outcome_keeps_manifests(
    wh: str, monkeypatch: pytest.MonkeyPatch, snapshot_publish_fault: Any, lands: bool
) -> None:
    from paimon_cli.core.errors import OutcomeUnknown

    t = make_table(wh, options=FAST)
    c = FileStoreCommit(t)
    c.commit([msg(t, [dfile()])])
    calls = snapshot_publish_fault(lands=lands, error=TimeoutError("network"), failing_reads=-1)
    f = dfile()
    with pytest.raises(OutcomeUnknown, match="outcome of publishing snapshot 2 is unknown .*remove-orphan-files"):
        c.commit([msg(t, [f])])
    assert c.may_have_published() and c.attempts == 1
    assert calls.count("read failed") == 9  # re-read with back-off before giving up
    monkeypatch.undo()
    _assert_readable(t)
    if lands:  # ours after all: whole and readable
        assert t.snapshot_manager.snapshot_ids() == [1, 2] and f.file_name in live_names(t)
    else:  # the attempt's manifests stay behind as orphans; no snapshot under another id
        assert t.snapshot_manager.snapshot_ids() == [1]
        assert len(manifest_dir_files(t)) > len(referenced_manifest_files(t))


def test_publish_whose_response_was_lost_counts_as_success(wh: str, snapshot_publish_fault: Any) -> None:
    t = make_table(wh, options=FAST)
    c = FileStoreCommit(t)
    calls = snapshot_publish_fault(lands=True, error=ConnectionError("reset after the write landed"),
                                   failing_reads=1)
    snap = c.commit([msg(t, [dfile()])])
    assert snap is not None and snap.id == 1 and c.attempts == 1 and c.published == [1]
    assert "read failed" in calls  # the first read-back failed too; the next one settled it
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_publish_failing_before_it_landed_cleans_up(wh: str, snapshot_publish_fault: Any) -> None:
    """A local put is synchronous: absent after the error means it did not land."""
    t = make_table(wh, options=FAST)
    c = FileStoreCommit(t)
    c.commit([msg(t, [dfile()])])
    before = manifest_dir_files(t)
    snapshot_publish_fault(lands=False, error=OSError("disk full"))
    with pytest.raises(OSError, match="disk full"):
        c.commit([msg(t, [dfile()])])
    assert c.published == [1] and not c.outcome_unknown
    _assert_nothing_committed(t, before, 1)


def test_interrupt_while_publishing_keeps_what_the_snapshot_may_reference(
    wh: str, monkeypatch: pytest.MonkeyPatch, snapshot_publish_fault: Any
) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    snapshot_publish_fault(lands=True, error=KeyboardInterrupt())
    with pytest.raises(KeyboardInterrupt):
        c.commit([msg(t, [dfile()])])
    assert c.may_have_published()  # callers must not delete the data files
    monkeypatch.undo()
    assert t.snapshot_manager.snapshot_ids() == [1]
    _assert_readable(t)


def test_latest_hint_failure_does_not_fail_the_commit(wh: str, monkeypatch: pytest.MonkeyPatch) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    c.commit([msg(t, [dfile()])])

    def broken(snapshot_id: int) -> None:
        raise OSError("hint not writable")

    monkeypatch.setattr(t.snapshot_manager, "commit_latest_hint", broken)
    snap = c.commit([msg(t, [dfile()])])
    assert snap is not None and snap.id == 2 and c.published == [1, 2]
    assert (Path(t.path) / "snapshot" / "LATEST").read_text() == "1"
    assert reload(t).snapshot_manager.latest_snapshot_id() == 2
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_abort_deletes_new_files(wh: str) -> None:
    t = make_table(wh)
    f = dfile()
    bucket_dir = Path(t.path) / "dt=a" / "bucket-0"
    bucket_dir.mkdir(parents=True)
    (bucket_dir / f.file_name).write_bytes(b"x")
    keep = bucket_dir / "other.parquet"
    keep.write_bytes(b"y")
    FileStoreCommit(t).abort([msg(t, [f])])
    assert not (bucket_dir / f.file_name).exists() and keep.exists()


# ---------------------------------------------------------------------------- concurrency


def _gather(procs: list[Any], out: Any, timeout: float) -> list[Any]:
    """One report per process; fail fast (not after the timeout) when a worker dies."""
    import queue
    import time

    reports: list[Any] = []
    deadline = time.monotonic() + timeout
    while len(reports) < len(procs):
        try:
            reports.append(out.get(timeout=0.5))
        except queue.Empty:
            dead = [p.exitcode for p in procs if p.exitcode not in (None, 0)]
            assert not dead, f"a worker process failed (exit codes {dead}); see its traceback above"
            assert time.monotonic() < deadline, "workers did not finish in time"
    for p in procs:
        p.join(timeout=60)
        assert p.exitcode == 0
    return reports


def _worker(wh: str, worker: int, commits: int, barrier: Any, out: Any) -> None:
    table = FileSystemCatalog(wh).get_table("db.t")
    c = FileStoreCommit(table)
    names, attempts = [], 0
    barrier.wait()  # start together so the commits really race
    for i in range(commits):
        f = dfile(worker * 100 + i + 1)
        names.append(f.file_name)
        snap = c.commit([msg(table, [f], dt=f"w{worker}", bucket=0)])
        assert snap is not None
        attempts += c.attempts
    out.put((names, attempts))


def test_four_processes_commit_concurrently(wh: str) -> None:
    t = make_table(wh)
    workers, per = 4, 10
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(wh, w, per, barrier, out)) for w in range(workers)]
    for p in procs:
        p.start()
    reports = _gather(procs, out, timeout=120)
    results = [names for names, _ in reports]
    attempts = sum(a for _, a in reports)
    assert attempts >= workers * per
    print(f"{workers} processes x {per} commits: {attempts} attempts ({attempts - workers * per} lost races)")
    committed = {n for names in results for n in names}
    assert len(committed) == workers * per
    sm = reload(t).snapshot_manager
    assert sm.snapshot_ids() == list(range(1, workers * per + 1))  # dense, no gaps
    snaps = sm.snapshots()
    assert len({s.commit_user for s in snaps}) == workers
    assert [s.delta_record_count for s in snaps if s.delta_record_count is not None]
    final = snaps[-1]
    entries = FileStoreScan(t).plan(final)
    assert [e.file.file_name for e in entries].__len__() == workers * per  # no duplicates
    assert {e.file.file_name for e in entries} == committed
    assert final.total_record_count == sum(w * 100 + i + 1 for w in range(workers) for i in range(per))
    # every snapshot adds exactly one file
    assert all(s.delta_record_count is not None and s.delta_record_count > 0 for s in snaps)
    assert manifest_dir_files(t) == referenced_manifest_files(t)


def test_store_without_conditional_put_is_refused(wh: str) -> None:
    """memory:// has no verified write-if-absent: nothing is published, nothing is left behind."""
    from paimon_cli.core.errors import UnsafeRefused
    from paimon_cli.core.io.fileio import FileIO

    local = make_table(wh)
    mem = FileIO(f"memory://commit-{uuid.uuid4().hex}")
    path = f"{mem.root}/db.db/t"
    mem.write_bytes(f"{path}/schema/schema-0", (Path(local.path) / "schema" / "schema-0").read_bytes())
    t = FileStoreTable.load(mem, path, local.identifier)
    with pytest.raises(UnsafeRefused):
        FileStoreCommit(t).commit([msg(t, [dfile()])])
    assert mem.list_names(f"{path}/manifest") == []
    assert mem.list_names(f"{path}/snapshot") == []


def test_lsm_overlap_check_orders_nan_keys_like_java(wh: str) -> None:
    """NaN equals NaN and sorts last: two level-1 files ending and starting at NaN overlap."""
    dbl = parse_data_type("DOUBLE NOT NULL")
    t = FileSystemCatalog(wh).create_table("db.f", Schema.of(
        [("k", dbl, None), ("v", STRING, None)], primary_keys=["k"], options={"bucket": "1"},
    ))

    def f(lo: float, hi: float) -> DataFileMeta:
        d = dfile(2, level=1)
        return DataFileMeta(**{**d.__dict__, "min_key": binary_row.serialize([lo], [dbl]),
                               "max_key": binary_row.serialize([hi], [dbl])})

    c = FileStoreCommit(t)
    c.commit([CommitMessage(binary_row.EMPTY_ROW, 0, 1, [f(1.0, float("nan"))])], "COMPACT")
    with pytest.raises(CommitConflict, match="overlap"):
        c.commit([CommitMessage(binary_row.EMPTY_ROW, 0, 1, [f(float("nan"), float("nan"))])], "COMPACT")
    c.commit([CommitMessage(binary_row.EMPTY_ROW, 0, 1, [f(-5.0, -0.5)])], "COMPACT")
    with pytest.raises(CommitConflict, match="overlap"):  # -0.0 == 0.0
        c.commit([CommitMessage(binary_row.EMPTY_ROW, 0, 1, [f(-0.4, -0.0)]),
                  CommitMessage(binary_row.EMPTY_ROW, 0, 1, [f(0.0, 0.5)])], "COMPACT")
    c.commit([CommitMessage(binary_row.EMPTY_ROW, 0, 1, [f(-0.4, -0.1)]),
              CommitMessage(binary_row.EMPTY_ROW, 0, 1, [f(0.0, 0.5)])], "COMPACT")  # disjoint: fine


def test_may_have_published_tracks_this_committer_not_latest(wh: str) -> None:
    t = make_table(wh)
    c = FileStoreCommit(t)
    assert not c.may_have_published()
    snap = c.commit([msg(t, [dfile()])])
    assert snap is not None and c.published == [snap.id] and c.may_have_published()
    other = FileStoreCommit(t)
    other.commit([msg(t, [dfile()])])  # someone else is LATEST now; ours is still published
    assert c.may_have_published() and not FileStoreCommit(t).may_have_published()


def test_new_bucket_dv_index_must_replace_the_live_one(wh: str) -> None:
    t = make_table(wh, pk=True, options={"deletion-vectors.enabled": "true"})
    c = FileStoreCommit(t)
    f = dfile(10, level=5, lo=1, hi=9)
    c.commit([msg(t, [f])])
    dv1 = IndexFileMeta("DELETION_VECTORS", "index-dv-1", 30, 1, (DeletionVectorMeta(f.file_name, 1, 20, 2),))
    c.commit([msg(t, [], new_index_files=[dv1])])
    # a job that planned on the empty index would drop dv1's vectors by adding its own file
    dv2 = IndexFileMeta("DELETION_VECTORS", "index-dv-2", 30, 1, (DeletionVectorMeta(f.file_name, 1, 20, 3),))
    with pytest.raises(CommitConflict, match="index-dv-1 is live and this commit does not replace it"):
        c.commit([msg(t, [], new_index_files=[dv2])])
    assert c.commit([msg(t, [], new_index_files=[dv2], deleted_index_files=[dv1])]) is not None
    # another bucket is independent
    dv3 = IndexFileMeta("DELETION_VECTORS", "index-dv-3", 30, 1, (DeletionVectorMeta("x", 1, 20, 3),))
    assert c.commit([msg(t, [], bucket=1, new_index_files=[dv3])]) is not None


# ---------------------------------------------------------------------------- row ids preset


def test_check_latest_sees_each_attempts_base_and_can_refuse(wh: str) -> None:
    t = make_table(wh)
    FileStoreCommit(t).commit([msg(t, [dfile()])])
    seen: list[int | None] = []
    c = FileStoreCommit(t)
    c._before_publish = lambda new_id: (  # another writer wins the first attempt's snapshot id
        FileStoreCommit(t).commit([msg(t, [dfile()])]) if not seen[1:] else None)

    def check(latest: Snapshot | None) -> None:
        seen.append(latest.id if latest else None)
        if len(seen) > 2:
            raise CommitConflict("refused")

    snap = c.commit([msg(t, [dfile()])], check_latest=check)
    assert snap is not None and snap.id == 3 and seen == [1, 2]  # retried on the new latest, checked again
    with pytest.raises(CommitConflict, match="refused"):
        c.commit([msg(t, [dfile()])], check_latest=check)
    assert t.snapshot_manager.latest_snapshot_id() == 3


def test_data_evolution_commit_numbers_rows_as_row_tracking(wh: str) -> None:
    """Java's RowTrackingCommitUtils on a data-evolution table: a new file gets ids from
    nextRowId; a partial-column file that carries its range's first row id keeps it (nextRowId
    stays) and gets the snapshot id as sequence number; a compaction output keeps its range."""
    t = make_table(wh, partitioned=False,
                   options={"row-tracking.enabled": "true", "data-evolution.enabled": "true"})
    c = FileStoreCommit(t)
    base = replace(dfile(rows=4), max_sequence_number=0)
    s1 = c.commit([msg(t, [base], dt=None)])
    assert s1 is not None and s1.next_row_id == 4
    partial = replace(dfile(rows=4), max_sequence_number=0, first_row_id=0, write_cols=("v",))
    kept = replace(dfile(), min_sequence_number=3, max_sequence_number=5, first_row_id=10, file_source=1)
    s2 = c.commit([msg(t, [partial, kept], dt=None)])
    assert s2 is not None and s2.next_row_id == 4
    files = {e.file.file_name: e.file for e in FileStoreScan(t).plan(s2)}
    got = {n: (f.first_row_id, f.min_sequence_number, f.max_sequence_number) for n, f in files.items()}
    assert got == {base.file_name: (0, s1.id, s1.id), partial.file_name: (0, s2.id, s2.id),
                   kept.file_name: (10, 3, 5)}


def test_partition_statistics_are_the_commits_deltas_as_java_merges_them(wh: str, monkeypatch: pytest.MonkeyPatch
                                                                          ) -> None:
    """Java's PartitionEntry.merge: per partition +rows/+bytes/+1 per ADD, minus per DELETE, the
    newest creation time read in the local zone (creationTimeEpochMillis), the last bucket
    count; a null partition value named partition.default-name, an unpartitioned table {}."""
    import time as _time

    from paimon_cli.core.manifest.manifest import ManifestEntry
    from paimon_cli.core.operation.snapshot_commit import partition_statistics

    monkeypatch.setenv("TZ", "Asia/Shanghai")  # +08:00: the stored wall clock is 8 h ahead of UTC
    _time.tzset()
    try:
        t = make_table(wh)
        a, b, gone = dfile(3), replace(dfile(4), creation_time=1_700_000_360_000), dfile(5)
        entries = [ManifestEntry(FileKind.ADD, part(t, "x"), 0, 2, a), ManifestEntry(FileKind.ADD, part(t, None), 0, 2, b),
                   ManifestEntry(FileKind.DELETE, part(t, "x"), 1, 4, gone),
                   ManifestEntry(FileKind.ADD, part(t, None), 1, 4, a)]
        stats = partition_statistics(t.schema, entries)
        eight_hours = 8 * 3600 * 1000
        assert [(s.spec, s.record_count, s.file_size_in_bytes, s.file_count, s.last_file_creation_time,
                 s.total_buckets) for s in stats] == [
            ({"dt": "x"}, 3 - 5, 1003 - 1005, 0, 1_700_000_000_000 - eight_hours, 4),
            ({"dt": "__DEFAULT_PARTITION__"}, 4 + 3, 1004 + 1003, 2, 1_700_000_360_000 - eight_hours, 4)]
        assert stats[0].to_json() == {"spec": {"dt": "x"}, "recordCount": -2, "fileSizeInBytes": -2, "fileCount": 0,
                                      "lastFileCreationTime": 1_700_000_000_000 - eight_hours, "totalBuckets": 4}
        flat = make_table(wh, "flat", partitioned=False)
        (only,) = partition_statistics(flat.schema, [ManifestEntry(FileKind.ADD, part(flat, None), 0, -1, a)])
        assert only.spec == {} and only.record_count == 3
    finally:
        monkeypatch.delenv("TZ")
        _time.tzset()
