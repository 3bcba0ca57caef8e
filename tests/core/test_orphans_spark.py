"""remove-orphan-files --engine spark (core/spark/orphans.py) on a local Spark session: the same
plan, report and deletions as the local engine on a copy of the same table, and the same
fail-closed refusals when an executor cannot read a manifest (nothing deleted).

One ``local[2]`` session is shared by the module (the engine reuses an active session and
leaves it running), so each test pays only for its Spark jobs.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.errors import InvalidInput, UnsafeRefused
from paimon_cli.core.operation.orphans import plan_remove_orphans, remove_orphans
from paimon_cli.core.spark.orphans import (
    _delete_in_tasks,
    _Job,
    choose_orphans_engine,
    plan_remove_orphans_spark,
    remove_orphan_files_spark,
)
from tests.core.test_orphans_support import (
    age_all,
    copy_file,
    files_under,
    make_table,
    plant,
    read_rows,
    reload,
    write_rows,
)

pytestmark = pytest.mark.slow  # a Spark session (~10 s to start on 2 shared cores)

NOW = int(time.time() * 1000)
UUID_ORPHAN = "data-0a0a0a0a-1111-2222-3333-444444444444-0.parquet"


def _rich_warehouse(wh: Path, tmp: Path) -> list[Any]:
    """Tables that use every kind of file the used set names, plus an orphan of each area."""
    t = make_table(wh, "t", **{"file-index.bloom-filter.columns": "v", "file-index.in-manifest-threshold": "1"})
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp)
    write_rows(t, [(1, "a", "x2"), (3, "c", "z")], tmp)
    write_rows(t, [(2, "b", None), (4, "a", "w")], tmp)
    t.tag_manager.create_tag("t2", t.snapshot_manager.snapshot(2))
    root = Path(t.path)
    b = root / "branch" / "branch-b1"  # a branch from tag t2, written to
    shutil.copytree(root / "schema", b / "schema")
    (b / "snapshot").mkdir(parents=True)
    (b / "snapshot" / "snapshot-2").write_text(t.tag_manager.tag("t2").snapshot.to_json())
    (b / "snapshot" / "LATEST").write_text("2")
    write_rows(reload(t, "b1"), [(9, "z", "only-in-branch")], tmp)
    (root / "changelog").mkdir(exist_ok=True)  # a long-lived changelog
    shutil.copyfile(root / "snapshot" / "snapshot-1", root / "changelog" / "changelog-1")
    stats = plant(root / "statistics" / "stat-11111111-0000-0000-0000-000000000000-0", b'{"snapshotId": 3}')
    snap3 = json.loads((root / "snapshot" / "snapshot-3").read_text())
    snap3["statistics"] = os.path.basename(stats)
    (root / "snapshot" / "snapshot-3").write_text(json.dumps(snap3))
    bucket = next(p for p in (root / "dt=a").iterdir() if p.name.startswith("bucket-"))
    manifest = next(p for p in (root / "manifest").iterdir() if p.name.startswith("manifest-") and "list" not in p.name)
    plant(bucket / UUID_ORPHAN)
    plant(bucket / (UUID_ORPHAN + ".index"))
    copy_file(manifest, root / "manifest" / "manifest-11111111-2222-3333-4444-555555555555-0")
    plant(root / "snapshot" / ".snapshot-4.0f0f0f0f.tmp")
    plant(root / "changelog" / "junk.tmp")
    plant(root / "index" / "index-99999999-0000-0000-0000-000000000000-0")
    plant(root / "statistics" / "stat-99999999-0000-0000-0000-000000000000-0")
    plant(root / "dt=zz" / "bucket-0" / "data-lone-0.parquet")  # its directories go too
    (root / "dt=empty" / "bucket-3").mkdir(parents=True)
    dyn = make_table(wh, "dyn", bucket="-1")  # dynamic bucket: HASH index files
    write_rows(dyn, [(1, "a", "x"), (2, "a", "y")], tmp)
    write_rows(dyn, [(1, "a", "x2")], tmp)
    plant(Path(dyn.path) / "index" / "index-88888888-0000-0000-0000-000000000000-0")
    age_all(wh)
    plant(bucket / "data-young-0.parquet")  # too young: no candidate
    return [t, dyn]


def _rel(paths: list[str], root: str) -> list[str]:
    return [os.path.relpath(p, root) for p in paths]


def _summary(plan: Any) -> tuple[Any, ...]:
    files = [(os.path.relpath(f.path, plan.table_path), f.kind, f.size, f.mtime_millis) for f in plan.files]
    used = plan.used.name_count
    return (files, _rel(plan.dirs, plan.table_path), plan.candidates, plan.dirs_listed, plan.dirs_distinct, used,
            sorted(plan.used.read_lists), sorted(plan.used.read_manifests), [str(r) for r in plan.used.refs])


def _copies(wh: Path, tmp: Path) -> tuple[Path, Path]:
    a, b = tmp / "local", tmp / "spark"
    shutil.copytree(wh, a)
    shutil.copytree(wh, b)
    return a, b


def test_same_plan_report_and_deletions_as_the_local_engine(spark: Any, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    tables = _rich_warehouse(wh, tmp_path)
    a, b = _copies(wh, tmp_path)
    catalogs = FileSystemCatalog(str(a)), FileSystemCatalog(str(b))
    for t in tables:
        name = t.identifier.full_name
        la, sb = catalogs[0].get_table(name), catalogs[1].get_table(name)
        plan_l = plan_remove_orphans(la, now_millis=NOW)
        plan_s, none = remove_orphan_files_spark(sb, dry_run=True, now_millis=NOW)
        assert none is None
        assert _summary(plan_s) == _summary(plan_l)
        assert plan_l.files, "every table has orphans"
        done_l = remove_orphans(la, plan_l)
        plan_s2, done_s = remove_orphan_files_spark(sb, now_millis=NOW)
        assert _summary(plan_s2) == _summary(plan_s)
        assert done_s is not None
        assert _rel([f.path for f in done_s.deleted], sb.path) == _rel([f.path for f in done_l.deleted], la.path)
        assert _rel(done_s.dirs_removed, sb.path) == _rel(done_l.dirs_removed, la.path)
        assert not done_s.kept and not done_l.kept
    assert files_under(a) == files_under(b)
    t = catalogs[1].get_table("db.t")
    assert read_rows(t, tag="t2") == read_rows(catalogs[0].get_table("db.t"), tag="t2")
    assert [r["v"] for r in read_rows(reload(t, "b1")) if r["id"] == 9] == ["only-in-branch"]
    plan_again, _ = remove_orphan_files_spark(t, dry_run=True)
    assert plan_again.files == [] and plan_again.dirs == []


def test_cli_reports_the_same_rows_as_the_local_engine(spark: Any, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _rich_warehouse(wh, tmp_path)
    a, b = _copies(wh, tmp_path)
    runner = CliRunner()
    outs = []
    for where, extra in ((a, ["--engine", "local"]), (b, ["--engine", "spark", "--parallelism", "3"])):
        r = runner.invoke(app, ["remove-orphan-files", "db.t", "-w", str(where), "-o", "json", "--yes", *extra])
        assert r.exit_code == 0, r.output
        notes = re.sub(r"older than \S+", "older than T", r.stderr.replace(str(where), "WH"))
        outs.append((json.loads(r.stdout), notes))
    assert outs[0] == outs[1]
    assert any(row["kind"] == "directory" for row in outs[0][0])
    assert files_under(a) == files_under(b)


def test_external_roots_equal_the_local_engine(spark: Any, tmp_path: Path) -> None:
    wh, ext = tmp_path / "wh", tmp_path / "ext"
    t = make_table(wh, "a", **{"data-file.external-paths": f"file://{ext}/a"})
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    bucket = ext / "a" / "dt=a" / "bucket-0"
    plant(bucket / UUID_ORPHAN)
    plant(bucket / "notes.txt")  # not a Paimon file name: never a candidate
    plant(ext / "a" / "dt=q" / "bucket-1" / UUID_ORPHAN.replace("0a", "0c"))
    age_all(wh)
    age_all(ext)
    plan_l = plan_remove_orphans(t, external_paths=True, now_millis=10**13)
    plan_s, _ = remove_orphan_files_spark(t, external_paths=True, dry_run=True, now_millis=10**13)
    assert _summary(plan_s) == _summary(plan_l)
    assert plan_s.external_roots == plan_l.external_roots == [f"{ext}/a"]
    assert sorted(f.path for f in plan_s.files) == sorted([str(bucket / UUID_ORPHAN),
                                                           str(ext / "a" / "dt=q" / "bucket-1" / UUID_ORPHAN.replace("0a", "0c"))])
    _, done = remove_orphan_files_spark(t, external_paths=True, now_millis=10**13)
    assert done is not None and sorted(f.path for f in done.deleted) == sorted(f.path for f in plan_s.files)
    assert (bucket / "notes.txt").exists() and not (bucket / UUID_ORPHAN).exists()
    assert _rel(done.dirs_removed, str(ext)) == ["a/dt=q/bucket-1", "a/dt=q"]


# ------------------------------------------------------------------ fail closed


@pytest.fixture
def table(tmp_path: Path) -> Any:
    t = make_table(tmp_path / "wh")
    write_rows(t, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    write_rows(t, [(1, "a", "x2"), (3, "c", "z")], tmp_path)
    t.tag_manager.create_tag("t1", t.snapshot_manager.snapshot(1))
    plant(Path(t.path) / "dt=a" / "bucket-0" / UUID_ORPHAN)
    age_all(t.path)
    return t


def _used_manifest(t: Any) -> Path:
    used = plan_remove_orphans(t).used.names
    root = Path(t.path) / "manifest"
    return next(p for p in sorted(root.iterdir()) if p.name.startswith("manifest-") and "list" not in p.name
                and p.name in used)


@pytest.mark.parametrize("what", ["corrupt manifest", "missing manifest", "corrupt manifest list",
                                  "missing manifest list", "corrupt snapshot"])
def test_unreadable_metadata_refuses_like_the_local_engine(spark: Any, table: Any, what: str) -> None:
    root = Path(table.path)
    snap = json.loads((root / "snapshot" / "snapshot-2").read_text())
    if what.endswith(" manifest"):
        bad = _used_manifest(table)
    elif what.endswith("manifest list"):
        bad = root / "manifest" / snap["deltaManifestList"]
    else:
        bad = root / "snapshot" / "snapshot-2"
    if what.startswith("missing"):
        bad.unlink()
    else:
        bad.write_bytes(b"Obj\x01garbage" if "manifest" in what else b"{ not json")
    before = files_under(table.path)
    with pytest.raises(UnsafeRefused) as local:
        plan_remove_orphans(table)
    with pytest.raises(UnsafeRefused) as remote:
        remove_orphan_files_spark(table)
    assert str(remote.value) == str(local.value) and bad.name in str(remote.value)
    assert files_under(table.path) == before
    if what == "corrupt manifest":  # read by an executor: the CLI exits 6
        r = CliRunner().invoke(app, ["remove-orphan-files", "db.t", "-w", str(root.parent.parent), "--yes",
                                     "--engine", "spark"])
        assert r.exit_code == 6 and r.stderr.startswith("error: ") and "refusing to remove orphan files" in r.stderr
        assert files_under(table.path) == before


def test_file_committed_between_plan_and_delete_is_kept(spark: Any, table: Any) -> None:
    """The latest snapshot is re-read just before the deletion tasks run (apache/paimon#3074)."""
    import pyarrow as pa

    from paimon_cli.core.operation.commit import FileStoreCommit
    from paimon_cli.core.operation.write import TableWrite

    tw = TableWrite(table)
    tw.write_arrow(pa.table({"id": pa.array([7], pa.int32()), "dt": ["a"], "v": ["late"]}))
    messages = tw.prepare_commit()
    age_all(table.path)
    job = _Job(spark, table, None)
    plan = plan_remove_orphans_spark(job, table, None, False, 10**13, False)
    late = {f.path for f in plan.files} - {str(Path(table.path) / "dt=a" / "bucket-0" / UUID_ORPHAN)}
    assert late
    FileStoreCommit(table).commit(messages, "APPEND")
    result = remove_orphans(table, plan, delete=partial(_delete_in_tasks, job))
    assert {f.path for f in result.kept} == late
    assert [f.path for f in result.deleted] == [str(Path(table.path) / "dt=a" / "bucket-0" / UUID_ORPHAN)]
    assert [r["v"] for r in read_rows(reload(table)) if r["id"] == 7] == ["late"]


def test_no_snapshot_but_files_refuses(spark: Any, table: Any) -> None:
    root = Path(table.path)
    for p in [*(root / "snapshot").glob("snapshot-*"), root / "tag" / "tag-t1"]:
        p.unlink()
    before = files_under(table.path)
    # the LATEST hint still names a snapshot: that alone refuses, on both engines (issue 27)
    with pytest.raises(UnsafeRefused) as local:
        plan_remove_orphans(table)
    with pytest.raises(UnsafeRefused) as remote:
        remove_orphan_files_spark(table)
    assert str(remote.value) == str(local.value) and "the LATEST hint names snapshot" in str(local.value)
    assert files_under(table.path) == before
    for hint in ("LATEST", "EARLIEST"):
        (root / "snapshot" / hint).unlink(missing_ok=True)
    before = files_under(table.path)
    with pytest.raises(UnsafeRefused) as local:
        plan_remove_orphans(table)
    with pytest.raises(UnsafeRefused) as remote:
        remove_orphan_files_spark(table)
    assert str(remote.value) == str(local.value) and "no snapshot, tag or changelog" in str(local.value)
    assert files_under(table.path) == before


def test_engine_choice_and_guards(table: Any) -> None:
    assert choose_orphans_engine("auto", None, None) == "local"
    assert choose_orphans_engine("AUTO", "local[1]", None) == "spark"
    assert choose_orphans_engine("spark", None, None) == "spark"
    with pytest.raises(InvalidInput, match="need --engine spark"):
        choose_orphans_engine("local", "spark://h:7077", None)
    with pytest.raises(InvalidInput, match="--parallelism needs --engine spark"):
        choose_orphans_engine("auto", None, None, parallelism=4)
    assert choose_orphans_engine("spark", None, None, parallelism=4) == "spark"
    with pytest.raises(InvalidInput, match="expected one of"):
        choose_orphans_engine("flink", None, None)
    with pytest.raises(UnsafeRefused, match="less than 1 hour"):  # refused before a JVM starts
        remove_orphan_files_spark(table, older_than="10min")
