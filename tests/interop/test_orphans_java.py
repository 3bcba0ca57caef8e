"""remove-orphan-files on Java-written tables with planted orphans, compared with Java 0.9.

Why: the orphan cleaner decides what to delete from Java's metadata (every branch, tag,
snapshot, changelog, index and statistics file). Planted orphans of each kind a crash leaves
(a written-but-never-committed data file, a manifest of a failed commit, a half-written
``.snapshot-N.<uuid>.tmp``, leftovers in index/ and statistics/) must go, and nothing else:
Java must still read every snapshot and branch as before. Java 0.9's own OrphanFilesClean
(tests/interop/java/OrphansHelper.java) run on an identical copy deletes the same files.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.errors import UnsafeRefused
from paimon_cli.core.operation.orphans import plan_remove_orphans, remove_orphans

from .conftest import JavaTables, sort_rows
from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
OLD = 2 * 86_400


def _age(root: str) -> None:
    t = time.time() - OLD
    for d, dirs, files in os.walk(root, topdown=False):
        for n in files + dirs:
            os.utime(os.path.join(d, n), (t, t))


def _files(root: str) -> set[str]:
    return {os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root) for f in fs}


def _plant(table_path: str) -> set[str]:
    """Orphans of every kind a crash leaves behind; returns their paths relative to the table."""
    root = Path(table_path)
    out: set[str] = set()

    def put(rel: str, data: bytes) -> None:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
        out.add(rel)

    bucket = next(p for p in sorted(root.glob("**/bucket-*")) if "branch" not in p.parts)
    some_data = next(p for p in sorted(bucket.iterdir()) if p.name.startswith("data-"))
    bucket_rel = os.path.relpath(bucket, root)
    # a data file written by a writer that died before committing (real Parquet bytes)
    put(f"{bucket_rel}/data-0badf00d-0000-4000-8000-000000000000-0.{some_data.name.rsplit('.', 1)[-1]}",
        some_data.read_bytes())
    # a manifest (and manifest list) written by a commit that then failed
    manifest = next(p for p in sorted((root / "manifest").iterdir()) if p.name.startswith("manifest-") and "list" not in p.name)
    put("manifest/manifest-0badf00d-0000-4000-8000-000000000000-0", manifest.read_bytes())
    mlist = next(p for p in sorted((root / "manifest").iterdir()) if p.name.startswith("manifest-list-"))
    put("manifest/manifest-list-0badf00d-0000-4000-8000-000000000000-0", mlist.read_bytes())
    # half-written snapshot files of a commit that was killed (main and a branch)
    put("snapshot/.snapshot-99.0badf00d-0000-4000-8000-000000000000.tmp", b'{"version" : 3, "id" : 9')
    for b in sorted(root.glob("branch/branch-*")):
        put(f"{os.path.relpath(b, root)}/snapshot/.snapshot-99.0badf00d.tmp", b"{")
    # index and statistics files of failed commits
    put("index/index-0badf00d-0000-4000-8000-000000000000-0", b"\x00\x01")
    put("statistics/stat-0badf00d-0000-4000-8000-000000000000-0", b'{"snapshotId" : 1}')
    return out


def _java_clean(jp: JavaPaimon, table_path: str) -> set[str]:
    cutoff = (dt.datetime.now() - dt.timedelta(days=1)).strftime("%Y-%m-%d %H:%M:%S")
    out = jp._gateway.jvm.OrphansHelper.removeOrphanFiles(table_path, cutoff, False)
    return {os.path.relpath(p, table_path) for p in str(out).splitlines() if p}


def _snapshot_ids(table_path: str, branch: str | None = None) -> list[int]:
    d = Path(table_path) / (f"branch/branch-{branch}/snapshot" if branch else "snapshot")
    return sorted(int(p.name.split("-")[1]) for p in d.glob("snapshot-*"))


def _java_view(jp: JavaPaimon, wh: str, name: str, table_path: str) -> dict[str, Any]:
    """Everything Java reads: every snapshot of main and of each branch, plus the tag list."""
    view: dict[str, Any] = {}
    for sid in _snapshot_ids(table_path):
        view[f"main@{sid}"] = sort_rows(jp.read(wh, DB, name, sid, row_kind=False))
    for b in sorted(p.name[len("branch-"):] for p in Path(table_path).glob("branch/branch-*")):
        view[f"{b}@latest"] = sort_rows(jp.read(wh, DB, name, branch=b, row_kind=False))
    view["tags"] = jp.system_table(wh, DB, name, "tags")["rows"]
    return view


@pytest.mark.parametrize("name", ["pk_part", "append_t", "dv_t", "dyn_t"])
def test_planted_orphans_removed_exactly_like_java(
    java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path: Path, name: str
) -> None:
    jp = java_paimon
    ours_wh, java_wh = str(tmp_path / "ours"), str(tmp_path / "java")
    shutil.copytree(java_tables.warehouse, ours_wh)
    ours_path, java_path = f"{ours_wh}/{DB}.db/{name}", f"{java_wh}/{DB}.db/{name}"
    before = _java_view(jp, ours_wh, name, ours_path)
    planted = _plant(ours_path)
    _age(ours_path)
    shutil.copytree(ours_wh, java_wh)  # identical copy, mtimes included
    legit = _files(ours_path) - planted

    table = FileSystemCatalog(ours_wh).get_table(f"{DB}.{name}")
    plan = plan_remove_orphans(table)
    assert {os.path.relpath(f.path, ours_path) for f in plan.files} == planted
    result = remove_orphans(table, plan)
    assert {os.path.relpath(f.path, ours_path) for f in result.deleted} == planted
    assert _files(ours_path) == legit

    assert _java_clean(jp, java_path) == planted  # Java 0.9 deletes the very same files
    assert _files(java_path) == legit
    assert _java_view(jp, ours_wh, name, ours_path) == before


def test_used_set_spans_branches_tags_and_consumers(java_tables: JavaTables, tmp_path: Path) -> None:
    """pk_part has tag t1, branch b1 (from t1) and consumer c1: nothing legit is a candidate."""
    wh = str(tmp_path / "wh")
    shutil.copytree(java_tables.warehouse, wh)
    path = f"{wh}/{DB}.db/pk_part"
    _age(path)
    plan = plan_remove_orphans(FileSystemCatalog(wh).get_table(f"{DB}.pk_part"))
    assert plan.files == [] and plan.dirs == []
    assert plan.used.branches == ["main", "b1"]
    refs = {str(r) for r in plan.used.refs}
    assert {"tag t1", "snapshot 6"} <= refs and any(r.endswith("of branch b1") for r in refs)


@pytest.mark.parametrize("broken", ["tag", "branch-snapshot", "manifest", "consumer"])
def test_unreadable_java_metadata_refuses(java_tables: JavaTables, tmp_path: Path, broken: str) -> None:
    wh = str(tmp_path / "wh")
    shutil.copytree(java_tables.warehouse, wh)
    path = Path(f"{wh}/{DB}.db/pk_part")
    _plant(str(path))
    if broken == "tag":
        bad = path / "tag" / "tag-t1"
    elif broken == "branch-snapshot":
        bad = sorted((path / "branch" / "branch-b1" / "snapshot").glob("snapshot-*"))[-1]
    elif broken == "manifest":
        snap = json.loads((path / "snapshot" / "snapshot-6").read_text())
        bad = path / "manifest" / snap["deltaManifestList"]
    else:
        bad = path / "consumer" / "consumer-c1"
    bad.write_bytes(b"\x00garbage")
    _age(str(path))
    before = _files(str(path))
    with pytest.raises(UnsafeRefused, match=bad.name):
        plan_remove_orphans(FileSystemCatalog(wh).get_table(f"{DB}.pk_part"))
    assert _files(str(path)) == before


def test_tag_with_lost_manifest_refuses_where_java_deletes(java_paimon: JavaPaimon, java_tables: JavaTables,
                                                           tmp_path: Path) -> None:
    """apache/paimon#5229 shape: snapshots 1-4 expired, so tag t1 (on 2) alone holds its metadata;
    its base manifest list is lost. Java 0.9 reads the tag as 'uses nothing' and deletes the rest
    of the tag's metadata (its delta manifest list), making it unrecoverable; we refuse."""
    jp = java_paimon
    ours_wh, java_wh = str(tmp_path / "ours"), str(tmp_path / "java")
    shutil.copytree(java_tables.warehouse, ours_wh)
    path = Path(f"{ours_wh}/{DB}.db/pk_part")
    shutil.rmtree(path / "branch")  # the branch from t1 would otherwise still pin the files
    for i in (1, 2, 3, 4):  # "expired" (snapshot 5 is the full compaction)
        (path / "snapshot" / f"snapshot-{i}").unlink()
    (path / "snapshot" / "EARLIEST").write_text("5")
    tag = json.loads((path / "tag" / "tag-t1").read_text())
    (path / "manifest" / tag["baseManifestList"]).unlink()
    _age(str(path))
    shutil.copytree(ours_wh, java_wh)
    before = _files(str(path))
    with pytest.raises(UnsafeRefused, match=r"referenced by tag t1 does not exist"):
        plan_remove_orphans(FileSystemCatalog(ours_wh).get_table(f"{DB}.pk_part"))
    assert _files(str(path)) == before
    java_deleted = _java_clean(jp, f"{java_wh}/{DB}.db/pk_part")
    assert f"manifest/{tag['deltaManifestList']}" in java_deleted
