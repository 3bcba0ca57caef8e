"""Our rollback vs Java Paimon 0.9's ``rollbackTo`` on identical copies of Java-written tables.

Why: rollback deletes snapshots, tags and files; the files left must be those Java leaves
(minus the orphans Java leaves behind) and Java must read the rolled-back table, every
remaining tag and every branch exactly as before, and keep writing on top of it.

Where Java 0.9 and we differ, the difference is asserted, not tolerated:
* files Java keeps and we delete: exactly the orphans Java leaves (no remaining snapshot,
  tag or branch references them); in these histories only rolling back to a tag whose
  snapshot expired leaves one (a data file of a removed snapshot); for an append table the
  two file sets are identical;
* files we keep and Java deletes: files the target snapshot still reads, because a later
  full compaction upgraded them (DELETE + ADD of the same file) and 0.9 deletes every ADD
  of a removed snapshot's delta. Java's own rolled-back copy then fails to read; ours reads;
* Java 0.9 deletes the data files that a branch created from a later tag reads; we keep
  them (test_branch_from_later_tag_survives).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.orphans import plan_remove_orphans
from paimon_cli.core.operation.rollback import rollback

from .conftest import sort_rows
from .java_harness import JavaPaimon, JavaPaimonError

pytestmark = pytest.mark.java

DB = "db"
COLS = [("id", "INT"), ("dt", "STRING"), ("v", "STRING")]


def _files(table_path: str) -> set[str]:
    out = set()
    for root, _dirs, files in os.walk(table_path):
        for f in files:
            out.add(os.path.relpath(os.path.join(root, f), table_path))
    return out


def _rows(jp: JavaPaimon, wh: str, name: str, **kw: Any) -> list[dict[str, Any]]:
    return sort_rows(jp.read(wh, DB, name, row_kind=False, **kw))


def _java_history(jp: JavaPaimon, wh: str, name: str, pk: bool, options: dict[str, str] | None = None) -> None:
    """7 snapshots: writes, a full compaction (snapshot 4), more writes; tags t2 -> 2, t5 -> 5."""
    opts = {"bucket": "2", "file.format": "parquet"} if pk else {"bucket": "-1", "file.format": "parquet"}
    opts.update(options or {})
    jp.create_table(wh, DB, name, COLS, ["id", "dt"] if pk else [], ["dt"], opts)
    jp.write(wh, DB, name, [{"id": i, "dt": "a" if i % 2 else "b", "v": f"v{i}"} for i in range(1, 9)])
    jp.write(wh, DB, name, [{"id": i, "dt": "a", "v": f"w{i}"} for i in (1, 3)])
    jp.write(wh, DB, name, [{"id": 20, "dt": "c", "v": "c20"}])
    jp.compact(wh, DB, name, full=True, options={"compaction.min.file-num": "2"})
    jp.write(wh, DB, name, [{"id": 5, "dt": "a", "v": "x5"}, {"id": 30, "dt": "d", "v": "d30"}])
    jp.write(wh, DB, name, [{"id": 6, "dt": "b", "v": "x6"}])
    jp.write(wh, DB, name, [{"id": 40, "dt": "e", "v": "e40"}])
    jp.create_tag(wh, DB, name, "t2", 2)
    jp.create_tag(wh, DB, name, "t5", 5)


def _copies(src_wh: str, tmp: Path) -> tuple[str, str]:
    java_wh, ours_wh = str(tmp / "java-copy"), str(tmp / "ours-copy")
    shutil.copytree(src_wh, java_wh)
    shutil.copytree(src_wh, ours_wh)
    return java_wh, ours_wh


def _orphans(wh: str, name: str) -> list[str]:
    import time

    t = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    plan = plan_remove_orphans(t, "P0D", force=True, now_millis=int(time.time() * 1000) + 2000)
    return sorted(os.path.relpath(f.path, t.path) for f in plan.files)


def _compare_files(
    jp: JavaPaimon, java_wh: str, ours_wh: str, java_read_fails: bool = True
) -> tuple[set[str], set[str]]:
    java_files, our_files = _files(f"{java_wh}/{DB}.db/t"), _files(f"{ours_wh}/{DB}.db/t")
    # everything Java keeps and we do not is an orphan on Java's side
    assert sorted(java_files - our_files) == _orphans(java_wh, "t")
    # we leave no orphans at all
    assert _orphans(ours_wh, "t") == []
    # everything we keep and Java deletes is a data file the remaining snapshots still read
    ours_only = our_files - java_files
    assert all(f.startswith("dt=") and f.endswith(".parquet") for f in ours_only), ours_only
    if ours_only and java_read_fails:
        with pytest.raises(JavaPaimonError, match="FileNotFound|No such file|does not exist"):
            jp.read(java_wh, DB, "t")
    return java_files - our_files, ours_only


@pytest.mark.parametrize(
    ("pk", "options"),
    [
        (True, {}),
        (False, {}),
        (True, {"deletion-vectors.enabled": "true"}),
        (True, {"changelog-producer": "input"}),  # changelog files of removed snapshots go too
        (True, {"bucket": "-1"}),  # dynamic bucket: HASH index files
    ],
    ids=["pk", "append", "pk-dv", "pk-changelog-input", "pk-dynamic-bucket"],
)
def test_rollback_to_snapshot_matches_java(
    java_paimon: JavaPaimon, tmp_path: Path, pk: bool, options: dict[str, str]
) -> None:
    jp = java_paimon
    src = str(tmp_path / "src")
    _java_history(jp, src, "t", pk, options)
    expected = {sid: _rows(jp, src, "t", snapshot_id=sid) for sid in (1, 2, 3)}
    java_wh, ours_wh = _copies(src, tmp_path)

    jp.rollback_to(java_wh, DB, "t", snapshot_id=3)
    rollback(FileSystemCatalog(ours_wh).get_table(f"{DB}.t"), snapshot_id=3)

    # a DV table reads no level-0 files, so Java's copy still reads although the files are gone
    dv = options.get("deletion-vectors.enabled") == "true"
    java_only, ours_only = _compare_files(jp, java_wh, ours_wh, java_read_fails=not dv)
    if pk:
        assert ours_only, "the full compaction upgraded files the target reads; Java 0.9 deletes them"
    else:
        assert java_only == ours_only == set()  # append table: exactly the files Java leaves
    # Java reads our rolled-back table exactly like its own, at every remaining snapshot and tag
    for sid in (1, 2, 3):
        assert _rows(jp, ours_wh, "t", snapshot_id=sid) == expected[sid]
    assert _rows(jp, ours_wh, "t") == expected[3]
    assert jp.system_table(ours_wh, DB, "t", "tags")["rows"] == jp.system_table(java_wh, DB, "t", "tags")["rows"]
    # and keeps writing on top of it
    sid = jp.write(ours_wh, DB, "t", [{"id": 99, "dt": "a", "v": "after"}])
    assert sid >= 4  # DV tables commit APPEND + COMPACT
    assert {"id": 99, "dt": "a", "v": "after"} in _rows(jp, ours_wh, "t")


def test_rollback_to_tag_with_expired_snapshot_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    jp = java_paimon
    src = str(tmp_path / "src")
    _java_history(jp, src, "t", pk=True)
    expected = _rows(jp, src, "t", snapshot_id=2)
    assert jp.expire(src, DB, "t", retain_max=2, retain_min=1, older_than_ms=0) > 0
    java_wh, ours_wh = _copies(src, tmp_path)
    assert not os.path.exists(f"{ours_wh}/{DB}.db/t/snapshot/snapshot-2")

    jp.rollback_to(java_wh, DB, "t", tag="t2")
    plan = rollback(FileSystemCatalog(ours_wh).get_table(f"{DB}.t"), tag="t2")
    assert plan.create_snapshot

    java_only, ours_only = _compare_files(jp, java_wh, ours_wh)
    assert len(java_only) == 1 and not ours_only  # Java leaves one data file of snapshot 4 as an orphan
    for wh in (java_wh, ours_wh):
        snap_dir = f"{wh}/{DB}.db/t/snapshot"
        assert sorted(os.listdir(snap_dir)) == ["EARLIEST", "LATEST", "snapshot-2"]
        assert Path(snap_dir, "EARLIEST").read_text() == "2"
    assert _rows(jp, ours_wh, "t") == expected
    assert jp.write(ours_wh, DB, "t", [{"id": 77, "dt": "b", "v": "on-top"}]) == 3


def test_branch_from_later_tag_survives(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Java 0.9 deletes the data files a branch (made from a later tag) reads; we keep them."""
    jp = java_paimon
    src = str(tmp_path / "src")
    _java_history(jp, src, "t", pk=False)
    jp.create_branch(src, DB, "t", "b5", "t5")
    branch_rows = _rows(jp, src, "t", branch="b5")
    java_wh, ours_wh = _copies(src, tmp_path)

    rollback(FileSystemCatalog(ours_wh).get_table(f"{DB}.t"), snapshot_id=2)
    assert _rows(jp, ours_wh, "t", branch="b5") == branch_rows
    assert _orphans(ours_wh, "t") == []

    jp.rollback_to(java_wh, DB, "t", snapshot_id=2)
    with pytest.raises(JavaPaimonError):
        _rows(jp, java_wh, "t", branch="b5")  # the files of snapshots 3..5 are gone in Java's copy
