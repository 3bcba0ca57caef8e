"""Java Paimon 2.0's lifecycle semantics (issue 25), one test per upstream change.

Each test asserts what Java 2.x does (read from the upstream source of release-2.0.0), where
Java 0.9 differed; the CLI-level ones are in tests/cli/test_semantics_2_0_cli.py.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import IntType, VarCharType
from paimon_cli.core.manifest.index_manifest import IndexManifestFile
from paimon_cli.core.operation.expire import expire, plan_expire
from paimon_cli.core.operation.expire_plan import ExpirePolicy
from paimon_cli.core.operation.orphans import plan_remove_orphans, remove_orphans
from paimon_cli.core.operation.partition_expire import expire_partitions, plan_partition_expire
from paimon_cli.core.operation.read import TableRead
from tests.core import test_orphans_support as orphans_support
from tests.core.test_expire import files_of, history, make_table, put, reload, rows_at
from tests.core.test_partition_expire import NOW, _table, _write

# ------------------------------------------------------------- orphan removal (apache/paimon#7920)


def test_orphan_removal_never_deletes_a_directory(tmp_path: Path) -> None:
    """2.x filters directories out of every candidate listing and deletes files one by one
    (no recursive directory delete). Old stray directories holding files survive a run,
    files and all, wherever they sit: a bucket, manifest/, index/, snapshot/."""
    t = orphans_support.make_table(tmp_path / "wh")
    orphans_support.write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    root = Path(t.path)
    bucket = next(p for p in (root / "dt=a").iterdir() if p.name.startswith("bucket-"))
    strays = [
        orphans_support.plant(bucket / "data-stray.parquet" / "part-0"),  # a directory named like a data file
        orphans_support.plant(root / "manifest" / "manifest-stray" / "x"),
        orphans_support.plant(root / "index" / "index-stray" / "x"),
        orphans_support.plant(root / "snapshot" / ".snapshot-9.tmp" / "x"),
        orphans_support.plant(root / "dt=a" / "not-a-bucket" / "x"),
    ]
    orphan = orphans_support.plant(bucket / "data-00000000-dead-beef-0000-000000000000-0.parquet")
    orphans_support.age_all(t.path)
    plan = plan_remove_orphans(t)
    assert [f.path for f in plan.files] == [orphan]
    result = remove_orphans(t, plan)
    assert [f.path for f in result.deleted] == [orphan]
    for s in strays:
        assert os.path.isfile(s), s
    assert orphans_support.read_rows(orphans_support.reload(t)) == [
        {"id": 1, "dt": "a", "v": "x"}, {"id": 2, "dt": "b", "v": "y"}]


# ------------------------------------------------- time retention, next snapshot (apache/paimon#7706)


def _set_times(t: Any, times: dict[int, int]) -> None:
    for sid, millis in times.items():
        p = t.snapshot_manager.snapshot_path(sid)
        doc = json.loads(Path(p).read_text())
        doc["timeMillis"] = millis
        Path(p).write_text(json.dumps(doc))


def test_time_retention_compares_the_next_snapshots_time(tmp_path: Path) -> None:
    """2.x expires a snapshot only once its successor is older than the retention, so every
    snapshot stays readable for the whole ``snapshot.time-retained``; 0.9 compared the
    snapshot's own time and expired snapshot 1 below (its successor is still young)."""
    t = history(str(tmp_path), 3)
    hour = 3_600_000
    now = 100 * hour
    _set_times(t, {1: now - 3 * hour, 2: now - 30 * 60_000, 3: now - 60_000})
    t = reload(t)
    policy = ExpirePolicy(retain_min=1, time_retained_millis=hour, now_millis=now)
    assert plan_expire(t, policy).expired_ids == []  # 1 is old, but 2 (its successor) is young
    _set_times(t, {2: now - 2 * hour})
    t = reload(t)
    plan = plan_expire(t, policy)
    assert plan.expired_ids == [1]  # 2 is old, but 3 is young: 2 stays
    assert plan.end_id == 2


# -------------------------------------------------- expiry deletes every index kind (apache/paimon#7523)


def test_expiry_deletes_index_files_of_any_index_type(tmp_path: Path) -> None:
    """2.x deletes an expired snapshot's index files whatever their index type (before, Java
    knew only HASH and DELETION_VECTORS and failed on a global index). Index files of expired
    snapshots typed as a 2.x global index kind go like deletion vectors do."""
    t = make_table(str(tmp_path), options={"deletion-vectors.enabled": "true", "write-only": "false",
                                           "bucket": "1"})
    for i in range(6):  # from the 4th compaction on, each replaces the bucket's deletion-vector file
        put(t, [1, 2, 3, 10 + i], v=i)
    t = reload(t)
    sm = t.snapshot_manager
    latest = sm.latest_snapshot()
    assert latest is not None and latest.index_manifest
    imf = IndexManifestFile(t.file_io, os.path.join(t.path, "manifest"))
    live = {e.index_file.file_name for e in imf.read(latest.index_manifest)}
    retyped: set[str] = set()
    for sid in sm.snapshot_ids()[:-1]:
        snap = sm.snapshot(sid)
        if not snap.index_manifest or snap.index_manifest == latest.index_manifest:
            continue
        entries = imf.read(snap.index_manifest)
        new = [dataclasses.replace(e, index_file=dataclasses.replace(e.index_file, index_type="btree"))
               if e.index_file.file_name not in live else e for e in entries]
        retyped |= {e.index_file.file_name for e in entries if e.index_file.file_name not in live}
        name = imf.write(new)
        os.replace(os.path.join(t.path, "manifest", name), os.path.join(t.path, "manifest", snap.index_manifest))
    assert retyped and all(any(f.endswith("/" + n) for f in files_of(t)) for n in retyped)
    rows = rows_at(t)
    expire(reload(t), ExpirePolicy(retain_min=1, time_retained_millis=0))
    left = {os.path.basename(f) for f in files_of(t)}
    assert not retyped & left
    assert live <= left
    assert rows_at(t) == rows


# -------------------------------------------------------- partition.expiration-batch-size / max-num


def test_partition_expiry_drops_at_most_max_num_by_default(tmp_path: Path) -> None:
    """2.x limits every partition expiration to ``partition.expiration-max-num`` (default 100)
    and commits it in batches of ``partition.expiration-batch-size`` (default: that limit);
    0.9 had neither option and dropped every expired partition in one commit."""
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = _table(cat, "many", [("id", IntType()), ("dt", VarCharType(20))], ["dt"])
    days = [f"2023-{m:02d}-{d:02d}" for m in range(1, 6) for d in range(1, 26)][:105]
    _write(t, [{"id": i, "dt": d} for i, d in enumerate(days)])
    t = cat.get_table("db.many")
    plan = plan_partition_expire(t, 86400, now=NOW)
    assert [p.spec["dt"] for p in plan.partitions] == days[:100]
    expire_partitions(t, 86400, now=NOW)
    t = cat.get_table("db.many")
    assert t.snapshot_manager.latest_snapshot().commit_kind == "OVERWRITE"
    assert sorted(r["dt"] for r in TableRead(t).to_arrow().to_pylist()) == days[100:]


@pytest.mark.parametrize("options, snapshots", [
    ({"partition.expiration-batch-size": "2"}, [2, 3, 4]),
    ({"partition.expiration-batch-size": "2", "partition.expiration-max-num": "3"}, [2, 3]),
    ({"partition.expiration-max-num": "3"}, [2]),
])
def test_partition_expiry_batches(tmp_path: Path, options: dict[str, str], snapshots: list[int]) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = _table(cat, "bt", [("id", IntType()), ("dt", VarCharType(20))], ["dt"], options)
    _write(t, [{"id": i, "dt": f"2024-01-0{i}"} for i in range(1, 6)])
    plan = expire_partitions(cat.get_table("db.bt"), 86400, now=NOW)
    assert plan.snapshots == snapshots
    limit = int(options.get("partition.expiration-max-num", "100"))
    assert TableRead(cat.get_table("db.bt")).to_arrow().num_rows == max(0, 5 - limit)


# ----------------------------------------- compaction skips expired partitions (apache/paimon#9021)


@pytest.mark.parametrize("pk, options, compacted", [
    (True, {"compaction.skip-expired-partitions": "true"}, ["dt=2999-01-01"]),
    (True, {"compaction.skip-expired-partitions": "true", "bucket": "-1"}, ["dt=2999-01-01"]),  # dynamic bucket
    (True, {}, ["dt=2020-01-01", "dt=2999-01-01"]),  # the option defaults to false
    (True, {"compaction.skip-expired-partitions": "true", "partition.expiration-strategy": "update-time"},
     ["dt=2020-01-01", "dt=2999-01-01"]),  # values-time only
    (False, {"compaction.skip-expired-partitions": "true", "bucket": "-1"},
     ["dt=2020-01-01", "dt=2999-01-01"]),  # Java ignores it for bucket-unaware tables
])
def test_compaction_skips_expired_partitions(tmp_path: Path, pk: bool, options: dict[str, str],
                                             compacted: list[str]) -> None:
    """2.x's ``compaction.skip-expired-partitions``: with ``partition.expiration-time`` and the
    ``values-time`` strategy, a compaction of a bucketed table leaves partitions already
    expired alone (they are about to be dropped)."""
    from paimon_cli.core.compact.plan import plan_compaction

    t = make_table(str(tmp_path), pk=pk, options={"partition.expiration-time": "1 d", **options})
    for i in range(3):
        for dt in ("2020-01-01", "2999-01-01"):
            put(t, [1 + i, 2 + i], dt=dt, v=i)
    plan = plan_compaction(reload(t), full=True)
    assert sorted({r.partition for r in plan.rows}) == compacted


# ------------------------------------------------------------ commit.strict-mode.last-safe-snapshot


def _strict_put(t: Any, tmp: Path, dt: str, last_safe: int, overwrite: bool = False) -> Any:
    """Commit one row into ``dt`` with the option set for this commit (Java's ``table.copy``)."""
    import pyarrow as pa

    from paimon_cli.core.format.arrow_schema import arrow_schema
    from paimon_cli.core.operation.commit import FileStoreCommit
    from paimon_cli.core.operation.write import TableWrite

    table = reload(t).copy({"commit.strict-mode.last-safe-snapshot": str(last_safe)})
    tw = TableWrite(table, overwrite=overwrite)
    tw.write_arrow(pa.Table.from_pylist([{"id": 7, "dt": dt, "v": 7}], schema=arrow_schema(table.schema.fields)))
    kind = {"overwrite": {"dt": dt}} if overwrite else {}
    return FileStoreCommit(table).commit(tw.prepare_commit(), **kind)


def test_strict_mode_gives_up_after_another_users_compaction(tmp_path: Path) -> None:
    """2.x's ``commit.strict-mode.last-safe-snapshot``: a COMPACT (or OVERWRITE) by another
    commit user after the safe snapshot in a partition this commit changes aborts the commit
    (exit 5, nothing published); other partitions, and snapshots up to the safe one, pass."""
    from paimon_cli.core.compact.job import compact_table
    from paimon_cli.core.errors import CommitConflict

    t = make_table(str(tmp_path))
    put(t, [1, 2], dt="a")
    put(t, [1, 3], dt="a")
    compact_table(reload(t), full=True)  # snapshot 3, another commit user
    assert reload(t).snapshot_manager.latest_snapshot().commit_kind == "COMPACT"
    with pytest.raises(CommitConflict, match=r"COMPACT snapshot 3 .*commit.strict-mode.last-safe-snapshot"):
        _strict_put(t, tmp_path, "a", 2)
    assert reload(t).snapshot_manager.latest_snapshot_id() == 3
    assert _strict_put(t, tmp_path, "b", 2).id == 4  # another partition
    assert _strict_put(t, tmp_path, "a", 3).id == 5  # the compaction is at or below the safe snapshot
    assert _strict_put(t, tmp_path, "a", -1).id == 6  # -1: the first commit is not checked


def test_strict_mode_overwrite_gives_up_after_another_users_append(tmp_path: Path) -> None:
    from paimon_cli.core.errors import CommitConflict

    t = make_table(str(tmp_path))
    put(t, [1], dt="a")
    put(t, [2], dt="a")  # APPEND by another user into a fixed bucket of dt=a
    with pytest.raises(CommitConflict, match=r"APPEND snapshot 2 .*fixed bucket"):
        _strict_put(t, tmp_path, "a", 1, overwrite=True)
    assert _strict_put(t, tmp_path, "a", 1).id == 3  # an APPEND is not checked against appends
    assert _strict_put(t, tmp_path, "a", 3, overwrite=True).commit_kind == "OVERWRITE"


def test_health_counts_every_expired_partition_not_one_runs_worth(tmp_path: Path) -> None:
    """The limit is per expiration run; ``health`` still reports how many partitions expired."""
    from paimon_cli.core.maintain.findings import FindingKind
    from paimon_cli.core.maintain.health import assess_table

    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = _table(cat, "hp", [("id", IntType()), ("dt", VarCharType(20))], ["dt"],
               {"partition.expiration-time": "1 d", "partition.expiration-max-num": "2"})
    _write(t, [{"id": i, "dt": f"2020-01-0{i}"} for i in range(1, 6)])
    (f,) = [f for f in assess_table(cat.get_table("db.hp")).findings if f.kind == FindingKind.EXPIRED_PARTITIONS]
    assert f.value == 5
