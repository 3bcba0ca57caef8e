"""core/operation/expire.py: range selection, deletion order, fail-closed refusals, crash safety, explain.

Tables here are written by our own writer (real data files), so "readable" means our reader
returns the same rows for every retained snapshot and tag after expiry.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.types import parse_data_type
from paimon_cli.core.errors import CommitConflict, CorruptMetadata, InvalidInput, UnsafeRefused
from paimon_cli.core.manifest.index_manifest import IndexManifestFile
from paimon_cli.core.manifest.manifest import ManifestList
from paimon_cli.core.operation.expire import (
    apply_expire,
    expire,
    expire_after_commit,
    expiry_report,
    plan_expire,
    snapshot_health,
)
from paimon_cli.core.operation.expire_plan import ExpirePolicy
from paimon_cli.core.operation.file_deletion import DATA_FILE, MANIFEST, MANIFEST_LIST, SNAPSHOT
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.repair import apply_repair, plan_repair
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import FileStoreTable, TimeTravel
from paimon_cli.core.utils.durations import parse_point_in_time

OLD = ExpirePolicy(time_retained_millis=0)  # every snapshot counts as old


def make_table(wh: str, name: str = "t", *, pk: bool = True, options: dict[str, str] | None = None) -> FileStoreTable:
    cat = FileSystemCatalog(wh)
    cat.create_database("db", True)
    schema = Schema.of(
        [("id", parse_data_type("INT NOT NULL"), None), ("dt", parse_data_type("STRING NOT NULL"), None),
         ("v", parse_data_type("BIGINT"), None)],
        partition_keys=["dt"], primary_keys=["id", "dt"] if pk else [],
        options={"bucket": "2" if pk else "-1", "write-only": "true", **(options or {})},
    )
    return cat.create_table(f"db.{name}", schema)


def reload(t: FileStoreTable) -> FileStoreTable:
    return FileStoreTable.load(t.file_io, t.path, t.identifier, t.branch)


_N = [0]


def put(t: FileStoreTable, ids: list[int], dt: str = "a", v: int = 0, overwrite: bool = False) -> int:
    _N[0] += 1
    f = os.path.join(os.path.dirname(os.path.dirname(t.path)), f"in-{_N[0]}.parquet")
    pq.write_table(pa.table({"id": pa.array(ids, pa.int32()), "dt": [dt] * len(ids),
                             "v": pa.array([v] * len(ids), pa.int64())}), f)
    snap = write_table(reload(t), [f], overwrite=overwrite, overwrite_partition={"dt": dt} if overwrite else None)
    os.remove(f)
    assert snap is not None
    return snap.id


def rows_at(t: FileStoreTable, at: TimeTravel | None = None) -> list[tuple[Any, ...]]:
    data = TableRead(reload(t), at).to_arrow().to_pylist()
    return sorted(tuple(r.values()) for r in data)


def files_of(t: FileStoreTable) -> set[str]:
    out = set()
    for root, _, names in os.walk(t.path):
        for n in names:
            out.add(os.path.relpath(os.path.join(root, n), t.path))
    return out


def history(wh: str, n: int = 10, **kw: Any) -> FileStoreTable:
    """n snapshots: appends into two partitions with an overwrite every 4th (DELETE entries)."""
    t = make_table(wh, **kw)
    for i in range(n):
        if i % 4 == 3:
            put(t, [i, i + 100], dt="a", v=i, overwrite=True)
        else:
            put(t, [i, i + 1], dt="a" if i % 2 else "b", v=i)
    # time retention expires a snapshot only when the next one is strictly older than the cut
    # (Java's rule): with 0 ms retained the latest snapshot must not share the plan's millisecond
    time.sleep(0.005)
    return reload(t)


def snapshot_ids(t: FileStoreTable) -> list[int]:
    return t.snapshot_manager.snapshot_ids()


# ---------------------------------------------------------------------------- range selection


def test_retain_min_keeps_newest(tmp_path: Path) -> None:
    t = history(str(tmp_path), 10)
    before = {i: rows_at(t, TimeTravel(snapshot_id=i)) for i in snapshot_ids(t)}
    res = expire(t, ExpirePolicy(retain_min=3, time_retained_millis=0))
    assert res.expired == 7
    assert snapshot_ids(t) == [8, 9, 10]
    assert t.file_io.read_text(os.path.join(t.snapshot_manager.snapshot_dir, "EARLIEST")).strip() == "8"
    for i in (8, 9, 10):
        assert rows_at(t, TimeTravel(snapshot_id=i)) == before[i]


def test_retain_max_forces_expiry_despite_time(tmp_path: Path) -> None:
    t = history(str(tmp_path), 8)
    # nothing is old (1 h retention) but at most 3 snapshots may stay
    plan = plan_expire(t, ExpirePolicy(retain_max=3, retain_min=1))
    assert plan.expired_ids == [1, 2, 3, 4, 5]
    # and with the default retention nothing goes
    assert plan_expire(t, ExpirePolicy(retain_min=1)).expired_ids == []


def test_max_deletes_limits_one_run(tmp_path: Path) -> None:
    t = history(str(tmp_path), 9)
    assert expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0, max_deletes=3)).expired == 3
    assert snapshot_ids(t)[0] == 4
    assert expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0, max_deletes=3)).expired == 3
    assert snapshot_ids(t)[0] == 7


def test_time_rule_keeps_snapshot_current_at_cutoff(tmp_path: Path) -> None:
    """Java 1.x's rule: a snapshot stays while its successor is younger than the retention, so
    time travel to ``now - time-retained`` still finds the snapshot that was current then."""
    import time

    t = make_table(str(tmp_path))
    for i in range(6):
        put(t, [i])
        time.sleep(0.005)
    t = reload(t)
    times = {s.id: s.time_millis for s in t.snapshot_manager.snapshots()}
    assert all(times[i] < times[i + 1] for i in range(1, 6))
    cutoff = times[3] + 1  # snapshot 3 was the current one at the cut-off
    now = times[6] + 10
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=now - cutoff, now_millis=now))
    assert plan.expired_ids == [1, 2]
    assert plan.end_id == 3
    assert "time-retained" in plan.holds[3]
    # an absolute --older-than time gives the same range
    plan2 = plan_expire(t, ExpirePolicy(retain_min=1, older_than_millis=cutoff, now_millis=now))
    assert plan2.expired_ids == [1, 2]


def test_older_than_parsing() -> None:
    now = 1_800_000_000_000
    assert parse_point_in_time("2h", "--older-than", now) == now - 7_200_000
    assert parse_point_in_time("30 min", "--older-than", now) == now - 1_800_000
    assert parse_point_in_time("2024-05-01T00:00:00Z", "--older-than", now) == 1714521600000
    with pytest.raises(InvalidInput):
        parse_point_in_time("yesterday", "--older-than", now)
    with pytest.raises(InvalidInput):
        parse_point_in_time("2999-01-01T00:00:00", "--older-than", now)
    with pytest.raises(InvalidInput, match="bare number"):
        parse_point_in_time("30", "--older-than", now)


def test_bad_policy_is_invalid_input(tmp_path: Path) -> None:
    t = history(str(tmp_path), 2)
    with pytest.raises(InvalidInput):
        plan_expire(t, ExpirePolicy(retain_max=2, retain_min=5))
    with pytest.raises(InvalidInput):
        plan_expire(t, ExpirePolicy(retain_min=0))


def test_consumer_clamps_range(tmp_path: Path) -> None:
    t = history(str(tmp_path), 10)
    t.consumer_manager.reset_consumer("job1", 4)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert plan.expired_ids == [1, 2, 3]
    assert "consumer job1" in plan.holds[4]


# ---------------------------------------------------------------------------- what is deleted


def test_tag_protects_its_files_and_stays_readable(tmp_path: Path) -> None:
    t = history(str(tmp_path), 10)
    t.tag_manager.create_tag("v3", t.snapshot_manager.snapshot(3))
    tag_rows = rows_at(t, TimeTravel(tag="v3"))
    plan = plan_expire(t, ExpirePolicy(retain_min=2, time_retained_millis=0))
    s3 = t.snapshot_manager.snapshot(3)
    planned = {os.path.basename(f.path) for f in plan.files}
    assert s3.base_manifest_list not in planned and s3.delta_manifest_list not in planned
    apply_expire(t, plan)
    assert rows_at(t, TimeTravel(tag="v3")) == tag_rows
    assert "tag v3" not in " ".join(sum(plan.holds.values(), []))  # snapshot 3 itself expired


def test_overwritten_files_are_deleted_in_order(tmp_path: Path) -> None:
    t = history(str(tmp_path), 8)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    kinds = [f.kind for f in plan.files]
    assert DATA_FILE in kinds  # the overwrites deleted files
    # data first, snapshots last; a manifest list always after the manifests it names
    order = {k: i for i, k in enumerate(["data-file", "extra-file", "changelog-file", "manifest", "manifest-list",
                                          "index-file", "index-manifest", "statistics", "snapshot"])}
    first_meta = min(i for i, k in enumerate(kinds) if k not in (DATA_FILE,))
    assert all(k == DATA_FILE for k in kinds[:first_meta])
    assert kinds[-len(plan.expired_ids):] == [SNAPSHOT] * len(plan.expired_ids)
    assert all(order[k] >= 0 for k in kinds)
    # no file the latest snapshot reads is planned
    latest = t.snapshot_manager.latest_snapshot()
    live = {e.file.file_name for e in FileStoreScan(t).plan(latest)}
    assert not live & {os.path.basename(f.path) for f in plan.files}


def test_plan_is_pure_and_dry_run_equals_real_run(tmp_path: Path) -> None:
    t = history(str(tmp_path), 9)
    before = files_of(t)
    p1 = plan_expire(t, ExpirePolicy(retain_min=2, time_retained_millis=0))
    assert files_of(t) == before  # planning deletes nothing
    p2 = plan_expire(t, ExpirePolicy(retain_min=2, time_retained_millis=0))
    assert [f.to_dict() for f in p1.files] == [f.to_dict() for f in p2.files]
    res = apply_expire(t, p1)
    gone = before - files_of(t)
    assert gone == {os.path.relpath(f.path, t.path) for f in p1.files}
    assert res.deleted_files == len(p1.files) and res.deleted_bytes == p1.total_bytes
    # the bytes reported are the real sizes (snapshots/lists/manifests/data)
    assert p1.total_bytes > 0


def test_cli_dry_run_json_then_real_run(tmp_path: Path) -> None:
    wh = str(tmp_path)
    t = history(wh, 7)
    runner = CliRunner()
    r = runner.invoke(app, ["expire", "db.t", "-w", wh, "--retain-min", "2", "--older-than", "0 ms",
                            "--dry-run", "-o", "json"])
    assert r.exit_code == 0, r.output
    listed = json.loads(r.stdout)
    assert listed and {"path", "kind", "bytes", "snapshot_id"} <= set(listed[0])
    before = files_of(t)
    assert files_of(t) == before
    r2 = runner.invoke(app, ["expire", "db.t", "-w", wh, "--retain-min", "2", "--older-than", "0 ms", "-o", "json"])
    assert r2.exit_code == 0, r2.output
    gone = before - files_of(t)
    assert gone == {x["path"] for x in listed}  # listed relative to the table directory
    out = json.loads(r2.stdout)[0]
    assert out["expired"] == 5 and out["files"] == len(listed)
    assert out["bytes"] == sum(x["bytes"] for x in listed)


# ---------------------------------------------------------------------------- fail closed


def _cli_expire(wh: str) -> Any:
    return CliRunner().invoke(app, ["expire", "db.t", "-w", wh, "--retain-min", "1", "--older-than", "0 ms"])


@pytest.mark.parametrize("what", ["snapshot", "end-snapshot", "tag", "consumer", "manifest", "end-manifest",
                                  "manifest-list", "index-of-tag", "branch-snapshot", "branch-tag"])
def test_unreadable_metadata_refuses_and_deletes_nothing(tmp_path: Path, what: str) -> None:
    wh = str(tmp_path)
    t = history(wh, 8)
    sm = t.snapshot_manager
    fio = t.file_io
    mdir = os.path.join(t.path, "manifest")
    t.tag_manager.create_tag("keep", sm.snapshot(4))
    if what == "snapshot":
        target = sm.snapshot_path(3)
    elif what == "end-snapshot":
        target = sm.snapshot_path(8)
    elif what == "tag":
        target = t.tag_manager.tag_path("keep")
    elif what == "consumer":
        t.consumer_manager.reset_consumer("c1", 8)
        target = t.consumer_manager.consumer_path("c1")
    elif what == "manifest":
        metas = ManifestList(fio, mdir).read(sm.snapshot(5).delta_manifest_list)
        target = os.path.join(mdir, metas[0].file_name)
    elif what == "end-manifest":
        metas = ManifestList(fio, mdir).read(sm.snapshot(8).base_manifest_list)
        target = os.path.join(mdir, metas[0].file_name)
    elif what in ("branch-snapshot", "branch-tag"):
        from paimon_cli.core.operation.branch_ops import create_branch

        create_branch(t, "dev", tag="keep")
        b = FileSystemCatalog(wh).get_table("db.t", "dev")
        if what == "branch-tag":
            b.tag_manager.create_tag("bt", b.snapshot_manager.latest_snapshot())
            target = b.tag_manager.tag_path("bt")
        else:
            target = b.snapshot_manager.snapshot_path(b.snapshot_manager.latest_snapshot_id())
    elif what == "manifest-list":
        target = os.path.join(mdir, sm.snapshot(4).base_manifest_list)  # the tag's list
    else:  # a manifest the tag needs
        metas = ManifestList(fio, mdir).read(sm.snapshot(4).base_manifest_list)
        target = os.path.join(mdir, metas[0].file_name)
    with open(target, "wb") as f:
        f.write(b"\x00garbage{")
    before = {p: os.path.getsize(os.path.join(t.path, p)) for p in files_of(t)}
    r = _cli_expire(wh)
    assert r.exit_code == 6, r.output
    assert os.path.basename(target) in r.output
    assert "nothing was deleted" in r.output
    after = {p: os.path.getsize(os.path.join(t.path, p)) for p in files_of(t)}
    assert after == before


def test_missing_manifest_of_retained_snapshot_refuses(tmp_path: Path) -> None:
    t = history(str(tmp_path), 6)
    mdir = os.path.join(t.path, "manifest")
    metas = ManifestList(t.file_io, mdir).read(t.snapshot_manager.snapshot(6).base_manifest_list)
    os.remove(os.path.join(mdir, metas[0].file_name))
    before = files_of(t)
    with pytest.raises(UnsafeRefused, match=metas[0].file_name):
        expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert files_of(t) == before


def test_empty_used_set_on_table_with_data_refuses(tmp_path: Path) -> None:
    """apache/paimon#7710: a snapshot that claims records but lists no files must not be trusted."""
    t = history(str(tmp_path), 5)
    sm = t.snapshot_manager
    empty, size = ManifestList(t.file_io, os.path.join(t.path, "manifest")).write([])
    path = sm.snapshot_path(5)
    obj = json.loads(Path(path).read_text())
    obj["baseManifestList"] = empty
    obj["deltaManifestList"] = empty
    assert obj["totalRecordCount"] > 0
    Path(path).write_text(json.dumps(obj))
    before = files_of(t)
    with pytest.raises(UnsafeRefused, match="empty used-file set"):
        expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert files_of(t) == before


def test_tag_created_between_plan_and_apply_refuses(tmp_path: Path) -> None:
    t = history(str(tmp_path), 6)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    t.tag_manager.create_tag("late", t.snapshot_manager.snapshot(2))
    before = files_of(t)
    with pytest.raises(UnsafeRefused, match="changed since"):
        apply_expire(t, plan)
    assert files_of(t) == before



def test_another_expire_between_plan_and_apply_is_a_conflict(tmp_path: Path) -> None:
    """Two expire runs at once (a cron and ``maintain``): the one that planned first finds its
    first retained snapshot gone; that is a race to retry (exit 5), not unsafe metadata."""
    t = history(str(tmp_path), 8)
    plan = plan_expire(t, ExpirePolicy(retain_min=3, time_retained_millis=0))
    assert plan.expired_ids == [1, 2, 3, 4, 5]
    assert expire(reload(t), ExpirePolicy(retain_min=1, time_retained_millis=0)).expired == 7
    before = files_of(t)
    with pytest.raises(CommitConflict, match="snapshot-6: the first retained snapshot is gone since planning"):
        apply_expire(t, plan)
    assert files_of(t) == before
    assert rows_at(t) == rows_at(t, TimeTravel(snapshot_id=8))


def test_another_expire_while_planning_is_a_conflict_a_missing_file_alone_refuses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The other run deletes an expiring snapshot's manifest list (and then the snapshot) while
    this one reads it: a conflict. The same file missing while its snapshot stays is refused."""
    from paimon_cli.core.io.fileio import FileIO

    t = history(str(tmp_path), 8)
    real = FileIO.read_bytes
    raced: list[str] = []

    def read_bytes(self: FileIO, path: str) -> Any:
        if "manifest-list-" in path and not raced:
            raced.append(path)  # the other run, right before this read
            expire(FileSystemCatalog(str(tmp_path)).get_table("db.t"), ExpirePolicy(retain_min=1, time_retained_millis=0))
        return real(self, path)

    monkeypatch.setattr(FileIO, "read_bytes", read_bytes)
    with pytest.raises(CommitConflict, match="another run expired snapshot 1 while this one planned"):
        plan_expire(t, ExpirePolicy(retain_min=3, time_retained_millis=0))
    assert raced and snapshot_ids(t) == [8]
    monkeypatch.undo()

    t = history(str(tmp_path / "b"), 8)
    os.remove(os.path.join(t.path, "manifest", t.snapshot_manager.snapshot(6).base_manifest_list))
    with pytest.raises(UnsafeRefused, match="cannot be read"):
        plan_expire(t, ExpirePolicy(retain_min=3, time_retained_millis=0))


# ---------------------------------------------------------------------------- crash safety


def test_interrupted_at_every_step_stays_readable_and_rerun_finishes(tmp_path: Path) -> None:
    """A kill after any number of deletions: every retained snapshot and the tag read as before,
    and a re-run ends with exactly the files an uninterrupted run leaves."""
    ref = history(str(tmp_path / "ref"), 9)
    ref.tag_manager.create_tag("t4", ref.snapshot_manager.snapshot(4))
    policy = ExpirePolicy(retain_min=3, time_retained_millis=0)
    ref_plan = plan_expire(ref, policy)
    n = len(ref_plan.files)
    expected_rows = {i: rows_at(ref, TimeTravel(snapshot_id=i)) for i in (7, 8, 9)}
    tag_rows = rows_at(ref, TimeTravel(tag="t4"))
    apply_expire(ref, ref_plan)
    final_ref = files_of(ref)

    class Killed(Exception):
        pass

    for k in sorted({0, 1, 2, n // 3, n // 2, n - 3, n - 2, n - 1}):
        t = history(str(tmp_path / f"k{k}"), 9)
        t.tag_manager.create_tag("t4", t.snapshot_manager.snapshot(4))
        plan = plan_expire(t, policy)
        count = [0]

        def boom(_: Any, count: list[int] = count, k: int = k) -> None:
            count[0] += 1
            if count[0] > k:
                raise Killed()

        with pytest.raises(Killed):
            apply_expire(t, plan, on_delete=boom)
        for i in (7, 8, 9):
            assert rows_at(t, TimeTravel(snapshot_id=i)) == expected_rows[i]
        assert rows_at(t, TimeTravel(tag="t4")) == tag_rows
        assert rows_at(t) == expected_rows[9]
        expire(t, policy)  # the re-run
        rel = {p for p in files_of(t)}
        # same shape as the uninterrupted run: same number of files of each kind left
        assert _shape(rel) == _shape(final_ref)
        assert snapshot_ids(t) == [7, 8, 9]


def _shape(files: set[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for f in files:
        base = os.path.basename(f)
        kind = base.split("-")[0] if "-" in base else base
        if base.startswith("manifest-list"):
            kind = "manifest-list"
        out[kind] = out.get(kind, 0) + 1
    return out


def test_index_files_in_the_data_directories_are_deleted(tmp_path: Path) -> None:
    """With index-file-in-data-file-dir the deletion-vector files sit in the bucket directory;
    expiry looked for them in <table>/index and left them behind."""
    t = make_table(str(tmp_path), options={"deletion-vectors.enabled": "true", "index-file-in-data-file-dir": "true",
                                           "write-only": "false", "bucket": "1"})
    for i in range(5):
        put(t, [1, 2, 3, 10 + i], v=i)
    t = reload(t)
    rows = rows_at(t)
    in_bucket = {f for f in files_of(t) if f.startswith("dt=a/bucket-0/index-")}
    assert len(in_bucket) > 1
    expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    t = reload(t)
    latest = t.snapshot_manager.latest_snapshot()
    assert latest is not None and latest.index_manifest
    kept = {f"dt=a/bucket-0/{e.index_file.file_name}" for e in IndexManifestFile(
        t.file_io, os.path.join(t.path, "manifest")).read(latest.index_manifest)}
    assert {f for f in files_of(t) if f.startswith("dt=a/bucket-0/index-")} == kept
    assert rows_at(t) == rows


# ---------------------------------------------------------------------------- gaps and hints


def test_snapshot_gap_refuses_expiry_until_repaired(tmp_path: Path) -> None:
    """Issue 27: snapshot 3 missing between the earliest and the newest hides what it used, so
    expire refuses (it expired across the gap; Java 0.9 never expires 1..2 again,
    apache/paimon#4743). Once `repair --earliest 4` says the table starts after the gap, the
    snapshots stranded below it are expired."""
    t = history(str(tmp_path), 10)
    os.remove(t.snapshot_manager.snapshot_path(3))
    health = snapshot_health(t)
    assert any("gap" in h and "3" in h for h in health)
    before = files_of(t)
    policy = ExpirePolicy(retain_min=2, time_retained_millis=0)
    with pytest.raises(UnsafeRefused, match=r"snapshot-3: snapshot 3 is missing between the earliest snapshot 1 and "
                                            r"the newest 10; restore it, or make snapshot 4 the earliest with "
                                            r"`paimon-cli repair --earliest 4`; refusing to expire"):
        plan_expire(t, policy)
    assert files_of(t) == before
    apply_repair(t, plan_repair(t, 4))
    plan = plan_expire(t, policy)
    assert plan.expired_ids == [1, 2, 4, 5, 6, 7, 8]
    assert any("gap" in n for n in plan.notes)
    apply_expire(t, plan)
    assert snapshot_ids(t) == [9, 10]
    assert rows_at(t, TimeTravel(snapshot_id=9))


def test_stranded_below_earliest_hint_are_expired_and_flagged(tmp_path: Path) -> None:
    t = history(str(tmp_path), 8)
    t.snapshot_manager.commit_earliest_hint(4)  # a wrong hint: 1..3 exist below it
    health = snapshot_health(t)
    assert any("EARLIEST hint is 4" in h for h in health)
    t.snapshot_manager.commit_latest_hint(5)
    assert any("LATEST hint is 5" in h for h in snapshot_health(t))
    res = expire(t, ExpirePolicy(retain_min=2, time_retained_millis=0))
    assert res.expired == 6 and snapshot_ids(t) == [7, 8]


# ---------------------------------------------------------------------------- explain / hooks


def test_expiry_report_explains_holds(tmp_path: Path) -> None:
    t = history(str(tmp_path), 12)
    t.tag_manager.create_tag("rel", t.snapshot_manager.snapshot(11))
    rows = expiry_report(t).rows
    by_id = {r["snapshot_id"]: r for r in rows}
    # defaults: retain-min 10 and 1 h: 1 and 2 are beyond retain-min but young -> held by time
    assert not by_id[1]["will_expire"]
    assert "time-retained" in by_id[1]["held_by"]
    assert "retain-min (10)" in by_id[5]["held_by"]
    assert "tag rel" in by_id[11]["held_by"]
    assert "latest" in by_id[12]["held_by"]
    rows = expiry_report(t, policy=ExpirePolicy(retain_min=3, time_retained_millis=0)).rows
    exp = [r for r in rows if r["will_expire"]]
    assert [r["snapshot_id"] for r in exp] == list(range(1, 10))
    assert all(r["delete_files"] > 0 and r["delete_bytes"] > 0 for r in exp)


def test_inspect_table_shows_health_warnings(tmp_path: Path) -> None:
    from paimon_cli.core.system.registry import SYSTEM_TABLES

    t = history(str(tmp_path), 5)
    assert SYSTEM_TABLES["expiry"](reload(t)).columns[0] == "snapshot_id"
    os.remove(t.snapshot_manager.snapshot_path(2))
    rows = SYSTEM_TABLES["table"](reload(t)).rows
    warnings = [r["value"] for r in rows if r["property"] == "warning"]
    assert any("gap" in w for w in warnings)
    # what a run would expire cannot be told across the gap: the report says what is missing
    with pytest.raises(CorruptMetadata, match="snapshot 2 is missing between the earliest snapshot 1"):
        SYSTEM_TABLES["expiry"](reload(t))


def test_expire_after_commit_honours_write_only_and_options(tmp_path: Path) -> None:
    t = history(str(tmp_path), 6)
    assert expire_after_commit(t) is None  # write-only=true
    res = expire_after_commit(t, {"write-only": "false"})  # defaults: 10 retained, 1 h
    assert res is not None and res.expired == 0
    res = expire_after_commit(t, {"write-only": "false", "snapshot.num-retained.min": "2",
                                  "snapshot.time-retained": "0 ms"})
    assert res is not None and res.expired == 4 and res.error is None
    assert snapshot_ids(t) == [5, 6]


def test_decoupled_changelog_moves_snapshots_then_expires_them(tmp_path: Path) -> None:
    t = history(str(tmp_path), 8, options={"changelog.num-retained.min": "4", "changelog.num-retained.max": "5"})
    res = expire(t, ExpirePolicy(retain_min=2, retain_max=2, time_retained_millis=0))
    assert res.plan is not None and res.plan.policy.changelog_decoupled
    assert snapshot_ids(t) == [7, 8]
    cl_dir = os.path.join(t.path, "changelog")
    assert sorted(os.listdir(cl_dir)) == sorted(["LATEST"] + [f"changelog-{i}" for i in range(1, 7)])
    # data manifest lists were kept for the changelogs (the table produces no changelog)
    c1 = json.loads(Path(cl_dir, "changelog-1").read_text())
    assert os.path.exists(os.path.join(t.path, "manifest", c1["baseManifestList"]))
    cres = expire(t, ExpirePolicy(retain_min=2, retain_max=2, time_retained_millis=0, changelog=True))
    assert cres.expired == 4  # changelog.num-retained.min 4 of latest 8 -> 5.. stay; changelogs 1..4 go
    assert sorted(n for n in os.listdir(cl_dir) if n.startswith("changelog-")) == ["changelog-5", "changelog-6"]
    assert Path(cl_dir, "EARLIEST").read_text().strip() == "5"
    for i in (7, 8):
        assert rows_at(t, TimeTravel(snapshot_id=i))


def test_branch_files_are_protected(tmp_path: Path) -> None:
    from paimon_cli.core.operation.branch_ops import create_branch

    t = history(str(tmp_path), 8)
    t.tag_manager.create_tag("base", t.snapshot_manager.snapshot(3))
    create_branch(t, "audit", tag="base")
    t.tag_manager.delete_tag("base")  # only the branch still needs snapshot 3's files
    b = FileSystemCatalog(str(tmp_path)).get_table("db.t", "audit")
    branch_rows = rows_at(b)
    plan = plan_expire(reload(t), ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert plan.expired_ids == list(range(1, 8))
    apply_expire(reload(t), plan)
    assert rows_at(FileSystemCatalog(str(tmp_path)).get_table("db.t", "audit")) == branch_rows


def test_manifest_kinds_present(tmp_path: Path) -> None:
    t = history(str(tmp_path), 6)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    kinds = {f.kind for f in plan.files}
    assert {MANIFEST_LIST, SNAPSHOT} <= kinds
    assert MANIFEST in kinds or DATA_FILE in kinds


def test_cli_branch_expires_only_that_branch_and_keeps_main(tmp_path: Path) -> None:
    from paimon_cli.core.operation.branch_ops import create_branch

    wh = str(tmp_path)
    t = history(wh, 5)
    t.tag_manager.create_tag("base", t.snapshot_manager.snapshot(5))
    create_branch(t, "dev", tag="base")
    b = FileSystemCatalog(wh).get_table("db.t", "dev")
    for i in range(6):
        put(b, [50 + i], dt="b", v=i, overwrite=i % 3 == 2)
    b = FileSystemCatalog(wh).get_table("db.t", "dev")
    main_rows = {i: rows_at(t, TimeTravel(snapshot_id=i)) for i in snapshot_ids(t)}
    dev_latest = rows_at(b)
    r = CliRunner().invoke(app, ["expire", "db.t", "-w", wh, "--branch", "dev", "--retain-min", "2",
                                 "--older-than", "0 ms", "-o", "json"])
    assert r.exit_code == 0, r.output
    assert json.loads(r.stdout)[0]["expired"] > 0
    b = FileSystemCatalog(wh).get_table("db.t", "dev")
    assert len(b.snapshot_manager.snapshot_ids()) == 2
    assert rows_at(b) == dev_latest
    for i, rows in main_rows.items():  # main is untouched and still reads
        assert rows_at(t, TimeTravel(snapshot_id=i)) == rows


def test_write_expires_after_its_commit_unless_write_only(tmp_path: Path) -> None:
    """Like Java writers: each write commit is followed by expiry per the table's options."""
    t = make_table(str(tmp_path), pk=False, options={"write-only": "false", "snapshot.num-retained.min": "2",
                                                     "snapshot.num-retained.max": "3"})
    for i in range(6):
        put(t, [i])
    assert len(snapshot_ids(reload(t))) <= 3
    assert rows_at(reload(t)) == [(i, "a", 0) for i in range(6)]
    w = make_table(str(tmp_path), "w", pk=False, options={"snapshot.num-retained.min": "2",
                                                         "snapshot.num-retained.max": "3"})
    for i in range(6):
        put(w, [i])  # write-only=true (make_table's default): nothing expires
    assert snapshot_ids(reload(w)) == [1, 2, 3, 4, 5, 6]


def test_consumer_moving_forward_between_plan_and_apply_is_fine(tmp_path: Path) -> None:
    t = history(str(tmp_path), 8)
    t.consumer_manager.reset_consumer("stream", 6)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert plan.expired_ids == [1, 2, 3, 4, 5]
    t.consumer_manager.reset_consumer("stream", 8)  # it read on
    assert apply_expire(t, plan).expired == 5
    t2 = history(str(tmp_path / "b"), 8)
    plan = plan_expire(t2, ExpirePolicy(retain_min=1, time_retained_millis=0))
    t2.consumer_manager.reset_consumer("late", 3)  # a new reader at an expiring snapshot
    before = files_of(t2)
    with pytest.raises(UnsafeRefused, match="consumer late"):
        apply_expire(t2, plan)
    assert files_of(t2) == before


# ---------------------------------------------------------------------------- consumers' options


def _age_consumer(t: FileStoreTable, cid: str, seconds: float) -> None:
    path = t.consumer_manager.consumer_path(cid)
    old = os.stat(path).st_mtime - seconds
    os.utime(path, (old, old))


def test_consumer_expiration_time_expires_stale_consumers_first(tmp_path: Path) -> None:
    """Java's writers delete consumer files not modified for ``consumer.expiration-time`` before
    expiring snapshots, so a dead reader stops pinning them (TableCommitImpl.maintain)."""
    t = history(str(tmp_path), 10, options={"consumer.expiration-time": "1 h"})
    t.consumer_manager.reset_consumer("dead", 3)
    t.consumer_manager.reset_consumer("live", 6)
    _age_consumer(t, "dead", 2 * 3600)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert plan.expired_ids == [1, 2, 3, 4, 5]  # held by "live" only
    assert [os.path.basename(f.path) for f in plan.files[:1]] == ["consumer-dead"]
    assert plan.files[0].kind == "consumer"
    assert "consumer live" in plan.holds[6]
    res = apply_expire(t, plan)
    assert res.expired == 5
    assert reload(t).consumer_manager.consumers() == {"live": 6}


def test_consumer_expiration_time_without_snapshots_to_expire(tmp_path: Path) -> None:
    t = history(str(tmp_path), 3, options={"consumer.expiration-time": "10 min"})
    t.consumer_manager.reset_consumer("dead", 1)
    _age_consumer(t, "dead", 3600)
    plan = plan_expire(t, ExpirePolicy(retain_min=10))
    assert plan.expired_ids == [] and [f.kind for f in plan.files] == ["consumer"]
    apply_expire(t, plan)
    assert reload(t).consumer_manager.consumers() == {}


def test_consumer_that_moves_after_planning_is_not_expired(tmp_path: Path) -> None:
    t = history(str(tmp_path), 6, options={"consumer.expiration-time": "1 h"})
    t.consumer_manager.reset_consumer("c", 2)
    _age_consumer(t, "c", 7200)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert plan.expired_ids == [1, 2, 3, 4, 5]
    t.consumer_manager.reset_consumer("c", 3)  # alive again, reading an expiring snapshot
    before = files_of(t)
    with pytest.raises(UnsafeRefused, match="consumer c"):
        apply_expire(t, plan)
    assert files_of(t) == before


def test_after_commit_expires_consumers(tmp_path: Path) -> None:
    t = history(str(tmp_path), 4, options={"consumer.expiration-time": "1 h", "snapshot.num-retained.min": "1",
                                         "snapshot.time-retained": "1 ms"})
    t.consumer_manager.reset_consumer("dead", 1)
    _age_consumer(t, "dead", 7200)
    time.sleep(0.01)  # the latest snapshot is older than snapshot.time-retained
    res = expire_after_commit(t, {"write-only": "false"})
    assert res is not None and res.error is None, res
    t = reload(t)
    assert (t.consumer_manager.consumers(), snapshot_ids(t)) == ({}, [4])


@pytest.mark.parametrize(("decoupled", "expired"), [(False, [1, 2]), (True, [1, 2, 3, 4, 5, 6, 7])])
def test_consumer_changelog_only_needs_a_decoupled_changelog(tmp_path: Path, decoupled: bool,
                                                              expired: list[int]) -> None:
    """Java's ``consumerChangelogOnly()`` is the option AND a decoupled changelog lifecycle: with
    changelogs expiring with their snapshots the consumer still needs the snapshots."""
    opts = {"consumer.changelog-only": "true"}
    if decoupled:
        opts["changelog.num-retained.min"] = "20"
    t = history(str(tmp_path), 8, options=opts)
    t.consumer_manager.reset_consumer("reader", 3)
    plan = plan_expire(t, ExpirePolicy(retain_min=1, time_retained_millis=0))
    assert plan.expired_ids == expired
