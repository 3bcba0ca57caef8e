"""Tags and branches against the real Java Paimon 0.9.

Why: a tag or branch is only useful if every engine agrees on it. Tags and branches we make
must be listed and read by Java (``$tags``, ``$branches``, reads at the tag / on the branch),
Java's must be managed by us, and where Java itself deletes files (deleting a tag whose
snapshot expired, time-retained expiry, fast-forward, branch deletion) we must leave exactly
the files Java leaves on an identical copy. Java side: PaimonTestHelper + RefsHelper.java.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.branch_ops import create_branch, delete_branch, fast_forward
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.tag_ops import create_tag, delete_tags, expire_tags, rename_tag
from paimon_cli.core.table.file_store_table import TimeTravel

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
COLS = [("id", "INT"), ("dt", "STRING"), ("v", "STRING")]


def _helper(jp: JavaPaimon) -> Any:
    return jp._gateway.jvm.RefsHelper


def _java_rows(jp: JavaPaimon, wh: Path, table: str, *, tag: str | None = None, branch: str | None = None) -> list:
    h = _helper(jp)
    text = h.readTag(str(wh), DB, table, branch, tag) if tag is not None else h.readLatest(str(wh), DB, table, branch)
    return sorted(json.loads(text), key=json.dumps)


def _our_rows(wh: Path, table: str, *, tag: str | None = None, branch: str | None = None,
              snapshot: int | None = None) -> list:
    t = FileSystemCatalog(str(wh)).get_table(f"{DB}.{table}", branch)
    at = TimeTravel(tag=tag) if tag else TimeTravel(snapshot_id=snapshot) if snapshot else None
    rows = TableRead(t, at).to_arrow().to_pylist()
    return sorted(([None if r[c] is None else str(r[c]) for c, _ in COLS] for r in rows), key=json.dumps)


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _make(jp: JavaPaimon, wh: Path, table: str, commits: int = 3, pk: bool = True,
          options: dict[str, str] | None = None, rows: int = 4, grow: bool = False) -> None:
    """Java table, PK (id, dt) by dt, bucket 2: commit i writes ids 1..rows (1..rows*i with
    ``grow``; v = "c<i>") in dt a/b."""
    jp.create_table(wh, DB, table, COLS, ["id", "dt"] if pk else [], ["dt"], {"bucket": "2", **(options or {})})
    for i in range(1, commits + 1):
        jp.write(wh, DB, table, [{"id": k + (0 if pk else 10 * i), "dt": "a" if k % 2 else "b", "v": f"c{i}"}
                                 for k in range(1, rows * (i if grow else 1) + 1)])


def _table(wh: Path, table: str, branch: str | None = None) -> Any:
    return FileSystemCatalog(str(wh)).get_table(f"{DB}.{table}", branch)


# ------------------------------------------------------------------------------ tags


def test_our_tags_are_byte_identical_and_read_by_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _make(java_paimon, wh, "t")
    java_paimon.create_tag(wh, DB, "t", "j1", 1)
    _helper(java_paimon).createTagRetained(str(wh), DB, "t", "j2", 2, 7 * 86400 * 1000)
    t = _table(wh, "t")
    create_tag(t, "o1", 1)
    create_tag(t, "o2", 2, time_retained_seconds=7 * 86400)
    tags = wh / "db.db" / "t" / "tag"
    assert (tags / "tag-o1").read_bytes() == (tags / "tag-j1").read_bytes()
    strip = re.compile(r'"tagCreateTime" : \[[^\]]*\]')
    ours, javas = (tags / "tag-o2").read_text(), (tags / "tag-j2").read_text()
    assert strip.sub("", ours) == strip.sub("", javas) and '"tagTimeRetained" : 604800.000000000' in ours
    res = java_paimon.system_table(wh, DB, "t", "tags")
    cols = res["columns"]
    by_name = {r[cols.index("tag_name")]: dict(zip(cols, r, strict=True)) for r in res["rows"]}
    assert set(by_name) == {"j1", "j2", "o1", "o2"}
    for ours_name, java_name in (("o1", "j1"), ("o2", "j2")):
        o, j = by_name[ours_name], by_name[java_name]
        assert {k: v for k, v in o.items() if k not in ("tag_name", "create_time")} == \
            {k: v for k, v in j.items() if k not in ("tag_name", "create_time")}
    assert by_name["o2"]["time_retained"] == "PT168H" and by_name["o1"]["time_retained"] is None
    for name, sid in (("o1", 1), ("o2", 2)):
        assert _java_rows(java_paimon, wh, "t", tag=name) == _our_rows(wh, "t", snapshot=sid)
    # our view of Java's retained tag
    j2 = t.tag_manager.tag("j2")
    assert j2.time_retained_java == "PT168H" and j2.create_time is not None


def test_java_tags_renamed_and_deleted_by_us(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _make(java_paimon, wh, "t")
    java_paimon.create_tag(wh, DB, "t", "ja", 1)
    t = _table(wh, "t")
    assert [(x.name, x.snapshot.id) for x in t.tag_manager.tags()] == [("ja", 1)]
    rename_tag(t, "ja", "jb")
    res = java_paimon.system_table(wh, DB, "t", "tags")
    assert [r[0] for r in res["rows"]] == ["jb"]
    assert _java_rows(java_paimon, wh, "t", tag="jb") == _our_rows(wh, "t", tag="jb")
    create_tag(t, "ours", 3)
    java_paimon.delete_tag(wh, DB, "t", "ours")  # Java deletes ours
    delete_tags(t, ["jb"])  # we delete Java's
    assert java_paimon.system_table(wh, DB, "t", "tags")["rows"] == []


def _expired_history(jp: JavaPaimon, wh: Path, options: dict[str, str] | None = None, rows: int = 4,
                     tags: tuple[int, int, int] = (1, 2, 4), grow: bool = False) -> None:
    """Java writes three commits, full-compacts, writes twice more; tags t1, t2, t4 on the
    given snapshots; then Java expires every snapshot but the latest (tags keep their files)."""
    _make(jp, wh, "t", commits=3, options=options, rows=rows, grow=grow)
    jp.compact(wh, DB, "t", full=True)
    for i in (5, 6):
        jp.write(wh, DB, "t", [{"id": k, "dt": "a" if k % 2 else "b", "v": f"c{i}"} for k in (1, 5)])
    for name, sid in zip(("t1", "t2", "t4"), tags, strict=True):
        jp.create_tag(wh, DB, "t", name, sid)
    assert jp.expire(wh, DB, "t", retain_max=1, retain_min=1, older_than_ms=1) > 0


@pytest.mark.parametrize("options, rows, grow, tags, index", [
    ({}, 4, False, (1, 2, 4), False),
    # every write is APPEND + COMPACT; the DV index file of snapshot 8 is replaced in 10
    ({"deletion-vectors.enabled": "true"}, 40, False, (4, 8, 10), True),
    # dynamic bucket: each commit adds keys, so each has its own HASH index files
    ({"bucket": "-1"}, 4, True, (1, 2, 4), True),
], ids=["pk", "dv", "dynamic-bucket"])
def test_tag_deletion_leaves_exactly_what_java_leaves(java_paimon: JavaPaimon, tmp_path: Path,
                                                      options: dict[str, str], rows: int, grow: bool,
                                                      tags: tuple[int, int, int], index: bool) -> None:
    base = tmp_path / "base"
    _expired_history(java_paimon, base, options, rows, tags, grow)
    wa, wb = tmp_path / "java", tmp_path / "ours"
    shutil.copytree(base, wa)
    shutil.copytree(base, wb)
    root_a, root_b = wa / "db.db" / "t", wb / "db.db" / "t"
    before = set(_files(root_b))
    expected_t4 = _java_rows(java_paimon, wa, "t", tag="t4")
    latest = _java_rows(java_paimon, wa, "t")
    kinds: set[str] = set()
    for name in ("t2", "t1"):
        java_paimon.delete_tag(wa, DB, "t", name)
        dry = delete_tags(_table(wb, "t"), [name], dry_run=True)
        real = delete_tags(_table(wb, "t"), [name])
        assert [f.path for f in dry.files] == [f.path for f in real.files]
        assert set(_files(root_a)) == set(_files(root_b)), name
        kinds |= {f.kind for f in real.files}
    assert before - set(_files(root_b))  # data and metadata really went
    assert {"data", "manifest-list"} <= kinds
    if index:
        assert {"index", "index-manifest"} <= kinds
    assert _java_rows(java_paimon, wb, "t", tag="t4") == expected_t4
    assert _java_rows(java_paimon, wb, "t") == latest


def test_time_retained_expiry_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    base = tmp_path / "base"
    _make(java_paimon, base, "t", commits=3)
    java_paimon.compact(base, DB, "t", full=True)
    h = _helper(java_paimon)
    h.createTagRetained(str(base), DB, "t", "short", 1, 1)
    h.createTagRetained(str(base), DB, "t", "keep", 2, 7 * 86400 * 1000)
    assert java_paimon.expire(base, DB, "t", retain_max=1, retain_min=1, older_than_ms=1) > 0
    wa, wb = tmp_path / "java", tmp_path / "ours"
    shutil.copytree(base, wa)
    shutil.copytree(base, wb)
    orig = set(_files(wb / "db.db" / "t"))
    # Java expires tags after a commit (TagAutoManager -> TagTimeExpire)
    java_paimon.write(wa, DB, "t", [{"id": 9, "dt": "a", "v": "x"}])
    plan = expire_tags(_table(wb, "t"))
    assert plan.tags == ["short"]
    gone_java = orig - set(_files(wa / "db.db" / "t"))
    gone_ours = orig - set(_files(wb / "db.db" / "t"))
    assert gone_ours == gone_java and any(p.startswith("tag/") for p in gone_ours) and len(gone_ours) > 1
    res = java_paimon.system_table(wb, DB, "t", "tags")
    assert [r[0] for r in res["rows"]] == ["keep"]
    assert _java_rows(java_paimon, wb, "t", tag="keep") == _java_rows(java_paimon, wa, "t", tag="keep")


# ------------------------------------------------------------------------------ branches


def test_our_branches_are_javas(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _make(java_paimon, wh, "t")
    java_paimon.create_tag(wh, DB, "t", "t2", 2)
    t = _table(wh, "t")
    create_branch(t, "ob", tag="t2")
    create_branch(t, "oe")
    res = java_paimon.system_table(wh, DB, "t", "branches")
    cols = res["columns"]
    got = sorted((r[cols.index("branch_name")], r[cols.index("created_from_tag")],
                  r[cols.index("created_from_snapshot")]) for r in res["rows"])
    assert got == [("oe", None, None), ("ob", "t2", 2)] or got == [("ob", "t2", 2), ("oe", None, None)]
    assert _java_rows(java_paimon, wh, "t", branch="ob") == _our_rows(wh, "t", snapshot=2)
    # Java writes on both branches and reads them back; so do we
    java_paimon.write(wh, DB, "t", [{"id": 7, "dt": "a", "v": "on-ob"}], branch="ob")
    java_paimon.write(wh, DB, "t", [{"id": 8, "dt": "b", "v": "on-oe"}], branch="oe")
    assert _our_rows(wh, "t", branch="ob") == _java_rows(java_paimon, wh, "t", branch="ob")
    assert _java_rows(java_paimon, wh, "t", branch="oe") == [["8", "b", "on-oe"]]
    assert _our_rows(wh, "t", branch="oe") == [["8", "b", "on-oe"]]
    # Java can delete a branch we made
    _helper(java_paimon).deleteBranch(str(wh), DB, "t", "oe")
    assert [n for n, _ in _table(wh, "t").branch_manager.branches()] == ["ob"]


def test_fast_forward_and_delete_match_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    base = tmp_path / "base"
    _make(java_paimon, base, "t", commits=3)
    java_paimon.create_tag(base, DB, "t", "t2", 2)
    java_paimon.create_tag(base, DB, "t", "t3", 3)
    java_paimon.create_branch(base, DB, "t", "jb", "t2")
    java_paimon.write(base, DB, "t", [{"id": 5, "dt": "a", "v": "b1"}], branch="jb")
    java_paimon.write(base, DB, "t", [{"id": 1, "dt": "b", "v": "b2"}], branch="jb")
    assert [n for n, _ in _table(base, "t").branch_manager.branches()] == ["jb"]
    assert _our_rows(base, "t", branch="jb") == _java_rows(java_paimon, base, "t", branch="jb")
    wa, wb = tmp_path / "java", tmp_path / "ours"
    shutil.copytree(base, wa)
    shutil.copytree(base, wb)
    _helper(java_paimon).fastForward(str(wa), DB, "t", "jb")
    fast_forward(_table(wb, "t"), "jb")
    fa, fb = _files(wa / "db.db" / "t"), _files(wb / "db.db" / "t")
    meta = re.compile(r"^(snapshot|schema|tag)/")
    a_meta = {k: v for k, v in fa.items() if meta.match(k) and k != "snapshot/EARLIEST"}
    b_meta = {k: v for k, v in fb.items() if meta.match(k) and k != "snapshot/EARLIEST"}
    assert a_meta == b_meta
    assert set(fa) == set(fb)
    assert _java_rows(java_paimon, wb, "t") == _java_rows(java_paimon, wa, "t") == _our_rows(wb, "t")
    # main keeps working in Java after our fast-forward
    java_paimon.write(wb, DB, "t", [{"id": 6, "dt": "b", "v": "after"}])
    assert ["6", "b", "after"] in _java_rows(java_paimon, wb, "t")
    # branch deletion: same files left as Java's
    _helper(java_paimon).deleteBranch(str(wa), DB, "t", "jb")
    delete_branch(_table(wb, "t"), "jb")
    assert {k for k in _files(wa / "db.db" / "t") if k.startswith("branch")} == set()
    assert not (wb / "db.db" / "t" / "branch" / "branch-jb").exists()
    assert java_paimon.system_table(wb, DB, "t", "branches")["rows"] == []


def test_auto_tags_match_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """process-time daily auto tags: Java creates them after its next commit, we after ours."""
    from paimon_cli.core.operation.tag_ops import auto_create_tags

    base = tmp_path / "base"
    _make(java_paimon, base, "t", commits=3)
    java_paimon.alter_table(base, DB, "t", [{"set": {"tag.automatic-creation": "process-time",
                                                      "tag.default-time-retained": "1 d"}}])
    wa, wb = tmp_path / "java", tmp_path / "ours"
    shutil.copytree(base, wa)
    shutil.copytree(base, wb)
    java_paimon.write(wa, DB, "t", [{"id": 9, "dt": "a", "v": "x"}])
    created = auto_create_tags(_table(wb, "t"))
    ta, tb = wa / "db.db" / "t" / "tag", wb / "db.db" / "t" / "tag"
    assert sorted(p.name for p in ta.iterdir()) == sorted(p.name for p in tb.iterdir()) == [f"tag-{created[0]}"]
    strip = re.compile(r'"tagCreateTime" : \[[^\]]*\]')
    assert strip.sub("", (tb / f"tag-{created[0]}").read_text()) == strip.sub("", (ta / f"tag-{created[0]}").read_text())
    res = java_paimon.system_table(wb, DB, "t", "tags")
    assert [r[0] for r in res["rows"]] == created
