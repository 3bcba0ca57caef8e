"""FileStoreCommit on an S3-compatible store (moto on loopback, tests/s3_fixtures.py).

Object stores have no atomic rename; the commit relies on FileIO's conditional put
(``If-None-Match: *``) so the *server* picks the one winner of snapshot-N. Four separate
processes commit concurrently into one table and every commit must land exactly once.
"""

from __future__ import annotations

import multiprocessing
import uuid
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import parse_data_type
from paimon_cli.core.errors import CommitConflict
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.refs.snapshot import Snapshot
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import FileStoreTable

pytestmark = pytest.mark.s3


def _dfile(rows: int) -> DataFileMeta:
    return DataFileMeta(
        file_name=f"data-{uuid.uuid4()}-0.parquet", file_size=1000, row_count=rows,
        min_key=binary_row.EMPTY_ROW, max_key=binary_row.EMPTY_ROW, key_stats=EMPTY_STATS,
        value_stats=EMPTY_STATS, min_sequence_number=0, max_sequence_number=rows - 1, schema_id=0,
        level=0, creation_time=1_700_000_000_000, delete_row_count=0, file_source=0,
    )


def _msg(table: FileStoreTable, dt: str, files: list[DataFileMeta], **kw: Any) -> CommitMessage:
    return CommitMessage(binary_row.serialize([dt], table.schema.partition_types), 0, -1, files, **kw)


def _create(warehouse: str, storage_options: dict[str, Any], **options: str) -> FileStoreTable:
    schema = Schema.of([("id", parse_data_type("INT"), None), ("dt", parse_data_type("STRING"), None)],
                       partition_keys=["dt"], options={"bucket": "-1", **options})
    return FileSystemCatalog(warehouse, storage_options).create_table("db.t", schema)


def _keys(s3_server: Any, prefix_uri: str) -> list[str]:
    prefix = prefix_uri[len(f"s3://{s3_server.bucket}/"):]
    client = s3_server.boto3_client()
    out: list[str] = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=s3_server.bucket, Prefix=prefix):
        out += [o["Key"][len(prefix):].lstrip("/") for o in page.get("Contents", [])]
    return sorted(out)


def _referenced(table: FileStoreTable) -> set[str]:
    ml = FileStoreScan(table)._manifest_list()
    out: set[str] = set()
    for snap in table.snapshot_manager.snapshots():
        for lst in snap.manifest_lists():
            out.add(lst)
            out.update(m.file_name for m in ml.read(lst))
        if snap.index_manifest:
            out.add(snap.index_manifest)
    return out


def test_commit_append_and_overwrite_on_s3(s3_server: Any, s3_warehouse: str) -> None:
    t = _create(s3_warehouse, s3_server.storage_options)
    c = FileStoreCommit(t)
    a, b = _dfile(3), _dfile(4)
    s1 = c.commit([_msg(t, "x", [a]), _msg(t, "y", [b])])
    assert s1 is not None and s1.id == 1
    new = _dfile(5)
    s2 = c.commit([_msg(t, "x", [new])], overwrite={})
    assert s2 is not None and s2.commit_kind == "OVERWRITE" and s2.total_record_count == 9
    assert {e.file.file_name for e in FileStoreScan(t).plan(s2)} == {b.file_name, new.file_name}

    # what the server holds: the snapshot JSON, the LATEST hint, only referenced manifests
    client = s3_server.boto3_client()
    key = f"{t.path[len(f's3://{s3_server.bucket}/'):]}/snapshot/"
    body = client.get_object(Bucket=s3_server.bucket, Key=key + "snapshot-2")["Body"].read().decode()
    assert Snapshot.from_json(body, "s3") == s2
    assert client.get_object(Bucket=s3_server.bucket, Key=key + "LATEST")["Body"].read() == b"2"
    assert set(_keys(s3_server, f"{t.path}/manifest")) == _referenced(t)


def test_lost_race_on_s3_retries(s3_server: Any, s3_warehouse: str) -> None:
    t = _create(s3_warehouse, s3_server.storage_options)
    ours, theirs = FileStoreCommit(t), FileStoreCommit(t)
    seen: list[int] = []

    def race(sid: int) -> None:
        seen.append(sid)
        if len(seen) == 1:
            theirs.commit([_msg(t, "x", [_dfile(1)])])

    ours._before_publish = race
    snap = ours.commit([_msg(t, "x", [_dfile(2)])])
    assert snap is not None and snap.id == 2 and seen == [1, 2]
    assert set(_keys(s3_server, f"{t.path}/manifest")) == _referenced(t)

    # a conflict detected after the lost race leaves nothing behind either
    victim = FileStoreScan(t).plan(snap)[0].file
    ours._before_publish = lambda sid: (
        theirs.commit([_msg(t, "x", [_dfile(1)], deleted_files=[victim])], commit_kind="COMPACT")
        if sid == 3 else None
    )
    with pytest.raises(CommitConflict):
        ours.commit([_msg(t, "x", [_dfile(1)], deleted_files=[victim])], commit_kind="COMPACT")
    assert t.snapshot_manager.latest_snapshot_id() == 3
    assert set(_keys(s3_server, f"{t.path}/manifest")) == _referenced(t)


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


def _worker(warehouse: str, storage_options: dict[str, Any], worker: int, commits: int,
            barrier: Any, out: Any) -> None:
    table = FileSystemCatalog(warehouse, storage_options).get_table("db.t")
    c = FileStoreCommit(table)
    names, attempts = [], 0
    barrier.wait()
    for i in range(commits):
        f = _dfile(worker * 100 + i + 1)
        snap = c.commit([_msg(table, f"w{worker}", [f])])
        assert snap is not None
        names.append(f.file_name)
        attempts += c.attempts
    out.put((names, attempts))


def test_four_processes_commit_concurrently_on_s3(s3_server: Any, s3_warehouse: str) -> None:
    t = _create(s3_warehouse, s3_server.storage_options)
    workers, per = 4, 10
    ctx = multiprocessing.get_context("spawn")
    barrier, out = ctx.Barrier(workers), ctx.Queue()
    procs = [ctx.Process(target=_worker, args=(s3_warehouse, s3_server.storage_options, w, per, barrier, out))
             for w in range(workers)]
    for p in procs:
        p.start()
    reports = _gather(procs, out, timeout=300)
    committed = {n for names, _ in reports for n in names}
    attempts = sum(a for _, a in reports)
    print(f"S3: {workers} processes x {per} commits: {attempts} attempts ({attempts - workers * per} lost races)")
    assert len(committed) == workers * per

    sm = t.snapshot_manager
    assert sm.snapshot_ids() == list(range(1, workers * per + 1))
    snaps = sm.snapshots()
    assert len({s.commit_user for s in snaps}) == workers
    assert all(s.delta_record_count is not None and s.delta_record_count > 0 for s in snaps)
    final = snaps[-1]
    entries = FileStoreScan(t).plan(final)
    assert len(entries) == workers * per
    assert {e.file.file_name for e in entries} == committed
    assert final.total_record_count == sum(w * 100 + i + 1 for w in range(workers) for i in range(per))
    assert set(_keys(s3_server, f"{t.path}/manifest")) == _referenced(t)


# ---------------------------------------------------------------------------------------
# faults at each step of a commit (tests/s3_fixtures.S3Faults: botocore hooks, real S3 path)
# ---------------------------------------------------------------------------------------

FAST = {"commit.min-retry-wait": "1 ms", "commit.max-retry-wait": "4 ms"}
SNAPSHOT_2 = r"/snapshot/snapshot-2$"
READS = "GetObject"  # a HEAD of the key comes first, in the commit's own existence checks too


def _one_commit_done(s3_server: Any, s3_warehouse: str, s3_faults: Any) -> tuple[FileStoreTable, Any, Any]:
    """A table holding snapshot 1, and faults on its client."""
    t = _create(s3_warehouse, s3_server.storage_options, **FAST)
    FileStoreCommit(t).commit([_msg(t, "x", [_dfile(1)])])
    return t, s3_faults(t.file_io.fs), _dfile(2)


def _assert_intact(s3_server: Any, t: FileStoreTable, *, leftovers: bool = False) -> None:
    """Every manifest any snapshot references exists (none was deleted under a published
    snapshot) and the latest reads; without ``leftovers`` no unreferenced manifest is left."""
    keys = set(_keys(s3_server, f"{t.path}/manifest"))
    referenced = _referenced(t)
    assert referenced <= keys, f"deleted while referenced: {sorted(referenced - keys)}"
    if not leftovers:
        assert keys == referenced
    FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())


def _files_of(t: FileStoreTable, sid: int) -> list[str]:
    return [e.file.file_name for e in FileStoreScan(t).plan(t.snapshot_manager.snapshot(sid))]


def test_409_after_our_put_landed_is_our_commit(s3_server: Any, s3_warehouse: str, s3_faults: Any) -> None:
    """The put landed, the client saw 409 ConditionalRequestConflict, and the first read-back
    failed too: the commit still learns it is published (no clean-up, no second snapshot)."""
    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", SNAPSHOT_2, "after", "conflict")
    faults.add(READS, SNAPSHOT_2, "before", "disconnect")
    c = FileStoreCommit(t)
    snap = c.commit([_msg(t, "x", [f])])
    assert snap is not None and snap.id == 2 and c.attempts == 1 and c.published == [2]
    assert [hit[2] for hit in faults.log] == ["after:conflict", "before:disconnect"]
    assert t.snapshot_manager.snapshot_ids() == [1, 2]
    assert f.file_name in _files_of(t, 2)
    _assert_intact(s3_server, t)


def test_409_while_our_slow_put_lands_publishes_once(s3_server: Any, s3_warehouse: str, s3_faults: Any) -> None:
    """409 and snapshot-2 not there yet: our first put is still landing. Taking that for a lost
    race would delete the manifests it references and commit the same files again as 3."""
    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.hold_put(SNAPSHOT_2)
    c = FileStoreCommit(t)
    snap = c.commit([_msg(t, "x", [f])])
    assert snap is not None and snap.id == 2 and c.attempts == 1
    assert [hit[2] for hit in faults.log] == ["before:hold", "held put landed"]
    assert t.snapshot_manager.snapshot_ids() == [1, 2]
    assert _files_of(t, 2).count(f.file_name) == 1
    _assert_intact(s3_server, t)


def test_409_when_another_writer_won_retries_cleanly(s3_server: Any, s3_warehouse: str, s3_faults: Any) -> None:
    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    ours, theirs = FileStoreCommit(t), FileStoreCommit(t)

    def race(sid: int) -> None:
        if sid == 2:
            theirs.commit([_msg(t, "y", [_dfile(3)])])
            faults.add("PutObject", SNAPSHOT_2, "before", "conflict")

    ours._before_publish = race
    snap = ours.commit([_msg(t, "x", [f])])
    assert snap is not None and snap.id == 3 and ours.attempts == 2
    assert [hit[2] for hit in faults.log] == ["before:conflict"]
    assert f.file_name not in _files_of(t, 2) and _files_of(t, 3).count(f.file_name) == 1
    _assert_intact(s3_server, t)  # the losing attempt's manifests were deleted


def test_timeout_after_our_put_landed_is_our_commit(s3_server: Any, s3_warehouse: str, s3_faults: Any) -> None:
    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", SNAPSHOT_2, "after", "timeout")
    snap = FileStoreCommit(t).commit([_msg(t, "x", [f])])
    assert snap is not None and snap.id == 2
    assert t.snapshot_manager.snapshot_ids() == [1, 2]
    _assert_intact(s3_server, t)


def test_put_failing_before_it_was_sent_is_sent_again(s3_server: Any, s3_warehouse: str, s3_faults: Any) -> None:
    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", SNAPSHOT_2, "before", "disconnect")
    c = FileStoreCommit(t)
    snap = c.commit([_msg(t, "x", [f])])
    assert snap is not None and snap.id == 2 and c.attempts == 1
    assert t.snapshot_manager.snapshot_ids() == [1, 2]
    _assert_intact(s3_server, t)


def test_published_snapshot_whose_outcome_stays_unknown_keeps_its_files(
    s3_server: Any, s3_warehouse: str, s3_faults: Any
) -> None:
    """The defect: 409 after the put landed and snapshot-2 unreadable. The commit must fail as
    unknown and delete nothing; snapshot 2 (ours after all) stays whole and readable."""
    from paimon_cli.core.errors import OutcomeUnknown

    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", SNAPSHOT_2, "after", "conflict")
    faults.add(READS, SNAPSHOT_2, "before", "disconnect", times=-1)
    c = FileStoreCommit(t)
    with pytest.raises(OutcomeUnknown, match=r"the outcome of publishing snapshot 2 is unknown \(EndpointConnectionError"):
        c.commit([_msg(t, "x", [f])])
    assert c.may_have_published() and c.attempts == 1
    assert not any(op == "PutObject" and key.endswith("snapshot-3") for op, key, _ in faults.log)
    faults.clear()
    assert t.snapshot_manager.snapshot_ids() == [1, 2]
    assert f.file_name in _files_of(t, 2)
    _assert_intact(s3_server, t)


def test_snapshot_that_never_lands_fails_as_unknown_and_leaves_orphans(
    s3_server: Any, s3_warehouse: str, s3_faults: Any
) -> None:
    from paimon_cli.core.errors import OutcomeUnknown

    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", SNAPSHOT_2, "before", "disconnect", times=-1)
    c = FileStoreCommit(t)
    with pytest.raises(OutcomeUnknown, match="remove-orphan-files"):
        c.commit([_msg(t, "x", [f])])
    assert c.may_have_published()
    assert t.snapshot_manager.snapshot_ids() == [1]
    _assert_intact(s3_server, t, leftovers=True)  # the attempt's manifests are kept (orphans)


@pytest.mark.parametrize("target, skip", [
    (r"/manifest/manifest-list-", 0),  # the base manifest list
    (r"/manifest/manifest-[0-9a-f]{8}-", 0),  # the delta manifest
    (r"/manifest/manifest-list-", 1),  # the delta manifest list
])
def test_metadata_write_failure_cleans_the_attempt(
    s3_server: Any, s3_warehouse: str, s3_faults: Any, target: str, skip: int
) -> None:
    from botocore.exceptions import EndpointConnectionError

    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", target, "before", "disconnect", skip=skip)
    c = FileStoreCommit(t)
    with pytest.raises(EndpointConnectionError):
        c.commit([_msg(t, "x", [f])])
    assert not c.may_have_published() and len(faults.log) == 1
    assert t.snapshot_manager.snapshot_ids() == [1]
    _assert_intact(s3_server, t)


def test_latest_hint_failure_does_not_fail_the_commit(s3_server: Any, s3_warehouse: str, s3_faults: Any) -> None:
    t, faults, f = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", r"/snapshot/LATEST$", "before", "disconnect", times=-1)
    snap = FileStoreCommit(t).commit([_msg(t, "x", [f])])
    assert snap is not None and snap.id == 2 and faults.log
    assert t.snapshot_manager.latest_snapshot_id() == 2
    _assert_intact(s3_server, t)


def test_tags_and_schemas_publish_through_a_409_after_landing(
    s3_server: Any, s3_warehouse: str, s3_faults: Any
) -> None:
    """The other write-if-absent publishers get the same read-back: a landed tag or schema
    answered with 409 is theirs (ours), not a conflict to retry into AlreadyExists."""
    from paimon_cli.core.operation.tag_ops import create_tag
    from paimon_cli.core.schema.schema_change import SetOption

    t, faults, _ = _one_commit_done(s3_server, s3_warehouse, s3_faults)
    faults.add("PutObject", r"/tag/tag-t1$", "after", "conflict")
    faults.add("PutObject", r"/schema/schema-1$", "after", "conflict")
    create_tag(t, "t1", 1)
    schema = FileSystemCatalog(s3_warehouse, s3_server.storage_options).alter_table(
        "db.t", [SetOption("snapshot.num-retained.max", "50")])
    assert [hit[2] for hit in faults.log] == ["after:conflict", "after:conflict"]
    assert schema.id == 1 and t.tag_manager.tag("t1").snapshot.id == 1
