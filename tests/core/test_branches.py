from __future__ import annotations

import os
from pathlib import Path

import pytest

from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.refs.branches import BranchManager, validate_branch_name
from paimon_cli.core.refs.snapshot import Snapshot, SnapshotManager
from paimon_cli.core.refs.tags import TagManager


def _snap(i: int) -> Snapshot:
    return Snapshot(id=i, schema_id=0, base_manifest_list="b", delta_manifest_list="d", commit_user="u",
                    commit_kind="APPEND", time_millis=i, total_record_count=0, delta_record_count=0)


def _mkbranch(root: Path, name: str, mtime: float, schema: bool = True) -> Path:
    p = root / "branch" / f"branch-{name}"
    (p / "schema").mkdir(parents=True)
    if schema:
        (p / "schema" / "schema-0").write_text("{}")
    os.utime(p, (mtime, mtime))
    return p


def test_branches_sorted_with_dir_mtime(tmp_path: Path) -> None:
    t = tmp_path / "t"
    _mkbranch(t, "b2", 1_700_000_100)
    _mkbranch(t, "a1", 1_700_000_000)
    (t / "branch" / "not-a-branch").mkdir()
    (t / "branch" / "branch-zfile").write_text("a file, not a branch")
    bm = BranchManager(FileIO(str(tmp_path)), str(t))
    assert bm.branches() == [("a1", 1_700_000_000_000), ("b2", 1_700_000_100_000)]
    assert bm.branch_names() == ["a1", "b2"]
    assert bm.branch_exists("a1") and not bm.branch_exists("nope") and bm.branch_exists("main")
    assert bm.create_time_millis("b2") == 1_700_000_100_000
    assert bm.branch_path("a1") == str(t / "branch" / "branch-a1")


def test_no_branch_dir(tmp_path: Path) -> None:
    bm = BranchManager(FileIO(str(tmp_path)), str(tmp_path / "t"))
    assert bm.branches() == []


def test_branch_origin_like_java_09(tmp_path: Path) -> None:
    fio = FileIO(str(tmp_path))
    t = tmp_path / "t"
    bm = BranchManager(fio, str(t))
    # created from a tag: tag copied along with its snapshot
    _mkbranch(t, "fromtag", 1)
    fio.write_bytes(SnapshotManager(fio, str(t), "fromtag").snapshot_path(3), _snap(3).to_json().encode())
    TagManager(fio, str(t), "fromtag").create_tag("v1", _snap(3))
    assert bm.branch_origin("fromtag") == ("v1", 3)
    # plain branch: only a schema, no snapshots yet
    _mkbranch(t, "plain", 1)
    assert bm.branch_origin("plain") == (None, None)
    # branch with snapshots whose first tag is later than the earliest snapshot
    _mkbranch(t, "grown", 1)
    sm = SnapshotManager(fio, str(t), "grown")
    for i in (3, 4):
        fio.write_bytes(sm.snapshot_path(i), _snap(i).to_json().encode())
    TagManager(fio, str(t), "grown").create_tag("later", _snap(4))
    assert bm.branch_origin("grown") == (None, 3)
    # no schema file: Java leaves both null
    _mkbranch(t, "empty", 1, schema=False)
    assert bm.branch_origin("empty") == (None, None)


@pytest.mark.parametrize("bad", ["main", "", "  ", "123", "a/b", "a\tb"])
def test_invalid_branch_names(bad: str) -> None:
    with pytest.raises(InvalidInput):
        validate_branch_name(bad)


def test_valid_branch_names() -> None:
    for ok in ["dev", "v1", "feature-x", "1a"]:
        validate_branch_name(ok)
