"""``expire --engine spark`` gives exactly the local engine's result, and fails as closed.

Why: expiry deletes files; the Spark engine moves the reading of the expiring snapshots'
manifests and the deletes into tasks, so every table shape the local engine handles is
expired twice here -- the local engine on one copy, Spark tasks (``local[2]``, one session
shared by the module) on another -- and the plans (files, order, sizes, notes), the reports
and the files left must be equal. Broken metadata read by a task or by the driver refuses
(exit 6) with nothing deleted; a failed delete stops the later phases, so the table stays
readable and a re-run finishes the job.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.errors import InvalidInput, PaimonError, UnsafeRefused
from paimon_cli.core.manifest.manifest import ManifestList
from paimon_cli.core.operation.branch_ops import create_branch
from paimon_cli.core.operation.expire import apply_expire, plan_expire
from paimon_cli.core.operation.expire_plan import ExpirePlan, ExpirePolicy
from paimon_cli.core.spark.expire import expire_on_spark, use_spark
from paimon_cli.core.table.file_store_table import FileStoreTable, TimeTravel
from tests.core.test_expire import files_of, history, make_table, put, reload, rows_at, snapshot_ids

pytestmark = pytest.mark.slow


def policy(**kw: Any) -> ExpirePolicy:
    """Every snapshot counts as old; one fixed clock for both engines."""
    return ExpirePolicy(time_retained_millis=0, now_millis=int(time.time() * 1000), **kw)


def table_at(wh: Path) -> FileStoreTable:
    return FileSystemCatalog(str(wh)).get_table("db.t")


def plan_view(plan: ExpirePlan, root: str) -> dict[str, Any]:
    """Everything a plan says, with paths relative to ``root`` (the two copies differ there)."""
    return {
        "files": [(os.path.relpath(f.path, root), f.kind, f.bytes, f.snapshot_id) for f in plan.files],
        "expired": plan.expired_ids, "end": plan.end_id, "earliest_hint": plan.earliest_hint,
        "copies": plan.changelog_copies, "notes": plan.notes, "holds": plan.holds,
        "empty_dirs": [os.path.relpath(d, root) for d in plan.empty_dir_candidates],
    }


def tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def twin_expire(tmp_path: Path, pol: ExpirePolicy) -> tuple[ExpirePlan, ExpirePlan]:
    """Expire ``tmp_path/wh`` copied twice: locally and on Spark; assert equal, return the plans."""
    for side in ("local", "spark"):
        shutil.copytree(tmp_path / "wh", tmp_path / side)
    local, remote = table_at(tmp_path / "local"), table_at(tmp_path / "spark")
    before = {i: rows_at(local, TimeTravel(snapshot_id=i)) for i in snapshot_ids(local)}
    p_local = plan_expire(local, pol)
    r_local = apply_expire(local, p_local)
    p_spark, r_spark = expire_on_spark(remote, pol, dry_run=False)
    assert r_spark is not None
    assert plan_view(p_spark, str(tmp_path / "spark")) == plan_view(p_local, str(tmp_path / "local"))
    assert (r_spark.deleted_files, r_spark.deleted_bytes, r_spark.expired) == \
        (r_local.deleted_files, r_local.deleted_bytes, r_local.expired)
    assert tree(tmp_path / "spark") == tree(tmp_path / "local")
    for i in snapshot_ids(remote):
        assert rows_at(remote, TimeTravel(snapshot_id=i)) == before[i]
    return p_local, p_spark


def _pk_tags_consumer(wh: Path) -> None:
    t = history(str(wh), 12)
    t.tag_manager.create_tag("v3", t.snapshot_manager.snapshot(3))
    t.tag_manager.create_tag("v5", t.snapshot_manager.snapshot(5))
    t.consumer_manager.reset_consumer("reader", 11)


def _append(wh: Path) -> None:
    history(str(wh), 10, pk=False)


def _compacted(wh: Path) -> None:
    t = history(str(wh), 6)
    compact_table(reload(t), full=True)
    for i in range(3):
        put(t, [i, 50 + i], dt="b", v=100 + i)
    compact_table(reload(t), full=True)


def _changelog_input(wh: Path) -> None:
    history(str(wh), 9, options={"changelog-producer": "input"})


def _decoupled(wh: Path) -> None:
    history(str(wh), 9, options={"changelog.num-retained.min": "4", "changelog.num-retained.max": "6"})


def _branch(wh: Path) -> None:
    t = history(str(wh), 9)
    t.tag_manager.create_tag("base", t.snapshot_manager.snapshot(3))
    create_branch(t, "audit", tag="base")
    t.tag_manager.delete_tag("base")  # only the branch still needs snapshot 3's files


def _dv_index_in_bucket(wh: Path) -> None:
    t = make_table(str(wh), options={"deletion-vectors.enabled": "true", "index-file-in-data-file-dir": "true",
                                     "write-only": "false", "bucket": "1", "snapshot.num-retained.min": "100"})
    for i in range(6):
        put(t, [1, 2, 3, 10 + i], v=i)


def _file_index(wh: Path) -> None:
    history(str(wh), 8, options={"file-index.bloom-filter.columns": "v", "file-index.in-manifest-threshold": "1b"})


SHAPES: dict[str, tuple[Callable[[Path], None], dict[str, Any]]] = {
    "pk-overwrites-tags-consumer": (_pk_tags_consumer, {"retain_min": 2}),
    "append": (_append, {"retain_min": 3}),
    "full-compactions": (_compacted, {"retain_min": 1}),
    "changelog-producer-input": (_changelog_input, {"retain_min": 2}),
    "changelog-decoupled": (_decoupled, {"retain_min": 2, "retain_max": 2}),
    "branch": (_branch, {"retain_min": 1}),
    "dv-index-in-bucket": (_dv_index_in_bucket, {"retain_min": 1}),
    "file-index-extra-files": (_file_index, {"retain_min": 1}),
    "expire-limit": (_append, {"retain_min": 1, "max_deletes": 4}),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_same_result_as_local_engine(spark: Any, tmp_path: Path, shape: str) -> None:
    build, kw = SHAPES[shape]
    build(tmp_path / "wh")
    p_local, _ = twin_expire(tmp_path, policy(**kw))
    assert p_local.expired_ids  # every shape expires something
    if shape != "changelog-decoupled":  # there data files wait for changelog expiry
        assert any(f.kind in ("data-file", "changelog-file", "index-file") for f in p_local.files), shape


def test_changelog_mode_same_result(spark: Any, tmp_path: Path) -> None:
    """--changelog plans on the driver and deletes in tasks: the same as the local engine."""
    _decoupled(tmp_path / "wh")
    t = table_at(tmp_path / "wh")
    apply_expire(t, plan_expire(t, policy(retain_min=2, retain_max=2)))  # fills changelog/
    p_local, _ = twin_expire(tmp_path, policy(retain_min=2, retain_max=2, changelog=True))
    assert p_local.mode == "changelog" and p_local.expired_ids


def test_external_paths_deleted_where_they_live(spark: Any, tmp_path: Path) -> None:
    """Files on external roots: Spark plans exactly the local plan and deletes those paths."""
    roots = [f"file://{tmp_path}/ext{i}" for i in range(2)]
    t = make_table(str(tmp_path / "wh"), options={"data-file.external-paths": ",".join(roots),
                                                  "data-file.external-paths.strategy": "round-robin",
                                                  "changelog-producer": "input"})
    for i in range(8):
        put(t, [i, i + 1], dt="a", v=i, overwrite=i % 3 == 2)
    t = reload(t)
    pol = policy(retain_min=2)
    p_local = plan_expire(t, pol)
    ext = [f.path for f in p_local.files if "/ext" in f.path]
    assert ext and all(os.path.exists(p.removeprefix("file:")) for p in ext)
    rows = rows_at(t)
    p_spark, res = expire_on_spark(t, pol, dry_run=False)
    assert plan_view(p_spark, t.path) == plan_view(p_local, t.path)
    assert res is not None and res.deleted_files == len(p_local.files)
    assert not any(os.path.exists(p.removeprefix("file:")) for p in ext)
    assert rows_at(reload(t)) == rows


def test_dry_run_lists_exactly_what_the_run_deletes(spark: Any, tmp_path: Path) -> None:
    t = history(str(tmp_path), 9)
    before = files_of(t)
    dry, none = expire_on_spark(t, policy(retain_min=2), dry_run=True)
    assert none is None and files_of(t) == before
    real, res = expire_on_spark(reload(t), policy(retain_min=2), dry_run=False)
    assert [f.to_dict() for f in real.files] == [f.to_dict() for f in dry.files]
    assert before - files_of(t) == {os.path.relpath(f.path, t.path) for f in dry.files}
    assert res is not None and res.deleted_bytes == dry.total_bytes


def _delta_manifest(t: FileStoreTable, sid: int) -> str:
    mdir = os.path.join(t.path, "manifest")
    metas = ManifestList(t.file_io, mdir).read(t.snapshot_manager.snapshot(sid).delta_manifest_list)
    return os.path.join(mdir, metas[0].file_name)


@pytest.mark.parametrize("what", ["task-delta-manifest", "task-delta-list", "driver-end-manifest", "driver-tag"])
def test_unreadable_metadata_refuses_as_local_and_deletes_nothing(spark: Any, tmp_path: Path, what: str) -> None:
    t = history(str(tmp_path), 8)
    sm = t.snapshot_manager
    t.tag_manager.create_tag("keep", sm.snapshot(4))
    if what == "task-delta-manifest":  # read by a Spark task
        target = _delta_manifest(t, 5)
    elif what == "task-delta-list":
        target = os.path.join(t.path, "manifest", sm.snapshot(6).delta_manifest_list)
    elif what == "driver-end-manifest":
        target = _delta_manifest(t, 8)
    else:
        target = t.tag_manager.tag_path("keep")
    Path(target).write_bytes(b"\x00garbage{")
    before = tree(Path(t.path))
    with pytest.raises(UnsafeRefused) as local_err:
        plan_expire(t, policy(retain_min=1))
    with pytest.raises(UnsafeRefused) as spark_err:
        expire_on_spark(t, policy(retain_min=1), dry_run=False)
    assert str(spark_err.value) == str(local_err.value)
    assert os.path.basename(target) in str(spark_err.value) and spark_err.value.exit_code == 6
    assert tree(Path(t.path)) == before


def test_cli_refusal_exit_6(spark: Any, tmp_path: Path) -> None:
    t = history(str(tmp_path), 6)
    target = _delta_manifest(t, 4)
    Path(target).write_bytes(b"\x00garbage{")
    before = tree(Path(t.path))
    r = CliRunner().invoke(app, ["expire", "db.t", "-w", str(tmp_path), "--retain-min", "1", "--older-than", "0 ms",
                                 "--engine", "spark", "--yes"])
    assert r.exit_code == 6, r.output
    assert os.path.basename(target) in r.output and "nothing was deleted" in r.output
    assert tree(Path(t.path)) == before


def test_failed_delete_stops_later_phases_and_rerun_finishes(spark: Any, tmp_path: Path) -> None:
    """A data file that cannot be deleted (a directory stands in its place) fails its task:
    no manifest, list or snapshot is deleted after it, every retained snapshot still reads,
    and once the obstacle is gone a re-run deletes exactly what the local engine would."""
    t = history(str(tmp_path / "wh"), 9)
    pol = policy(retain_min=2)
    plan = plan_expire(t, pol)
    data = [f for f in plan.files if f.kind == "data-file"]
    assert data
    rows = {i: rows_at(t, TimeTravel(snapshot_id=i)) for i in (8, 9)}
    victim = data[len(data) // 2].path
    os.remove(victim)
    os.makedirs(os.path.join(victim, "blocker"))
    with pytest.raises(PaimonError, match="a Spark task failed: IsADirectoryError") as err:
        expire_on_spark(t, pol, dry_run=False)
    assert err.value.exit_code == 1
    metadata = [f.path for f in plan.files if f.kind != "data-file"]
    assert all(os.path.exists(p) for p in metadata)  # later phases never started
    assert snapshot_ids(t) == list(range(1, 10))
    for i in (8, 9):
        assert rows_at(reload(t), TimeTravel(snapshot_id=i)) == rows[i]
    shutil.rmtree(victim)
    shutil.copytree(tmp_path / "wh", tmp_path / "again")
    twin_dir = tmp_path / "again"
    p_local = plan_expire(table_at(twin_dir), pol)
    p_spark, res = expire_on_spark(reload(t), pol, dry_run=False)
    assert plan_view(p_spark, t.path) == plan_view(p_local, str(table_at(twin_dir).path))
    assert snapshot_ids(t) == [8, 9] and res is not None


def test_cli_json_equals_local_engine(spark: Any, tmp_path: Path) -> None:
    history(str(tmp_path / "wh"), 8)
    shutil.copytree(tmp_path / "wh", tmp_path / "b")
    args = ["expire", "db.t", "--retain-min", "2", "--older-than", "0 ms", "-o", "json"]
    dry_local = CliRunner().invoke(app, [*args, "-w", str(tmp_path / "wh"), "--dry-run"])
    dry_spark = CliRunner().invoke(app, [*args, "-w", str(tmp_path / "b"), "--dry-run", "--engine", "spark"])
    assert dry_local.exit_code == dry_spark.exit_code == 0, dry_spark.output
    assert json.loads(dry_spark.stdout) == json.loads(dry_local.stdout)
    run_local = CliRunner().invoke(app, [*args, "-w", str(tmp_path / "wh"), "--yes"])
    run_spark = CliRunner().invoke(app, [*args, "-w", str(tmp_path / "b"), "--yes", "--engine", "spark"])
    assert run_local.exit_code == run_spark.exit_code == 0, run_spark.output
    strip = [{k: v for k, v in r.items() if k != "seconds"} for r in json.loads(run_spark.stdout)]
    assert strip == [{k: v for k, v in r.items() if k != "seconds"} for r in json.loads(run_local.stdout)]
    assert tree(tmp_path / "b") == tree(tmp_path / "wh")


def test_engine_flags() -> None:
    assert use_spark("auto", None, None) is False
    assert use_spark("local", None, None) is False
    assert use_spark("spark", None, None) is True
    assert use_spark("auto", "local[1]", None) is True
    with pytest.raises(InvalidInput, match="need --engine spark"):
        use_spark("local", "local[1]", None)
    with pytest.raises(InvalidInput, match="expected one of"):
        use_spark("ray", None, None)


def test_cli_local_engine_with_master_is_invalid_input(tmp_path: Path) -> None:
    history(str(tmp_path), 3)
    r = CliRunner().invoke(app, ["expire", "db.t", "-w", str(tmp_path), "--engine", "local",
                                 "--spark-master", "local[1]"])
    assert r.exit_code == 4, r.output
    assert "need --engine spark" in r.output
