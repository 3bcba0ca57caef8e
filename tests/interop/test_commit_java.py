"""Snapshots committed by our FileStoreCommit are read and extended by the real Java Paimon 0.9.

Why: the commit writes every piece of metadata a reader starts from (snapshot JSON, manifest
lists, manifests, index manifest, LATEST hint). The proof: Java writes data files into a
source table; we copy those files into a FRESH table of the same schema and commit them with
our FileStoreCommit; Java must read the fresh table exactly like the source, then write on
top of our snapshots (its writer restores sequence numbers, buckets and HASH indexes from
our manifests) and read correctly again. Overwrites committed by us are read by Java too.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.manifest.manifest import FileKind, ManifestEntry
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.table.file_store_table import FileStoreTable

from .conftest import sort_rows
from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
D1, D2, D3 = "2024-01-01", "2024-01-02", "2024-01-03"
APPEND_COLS = [("id", "INT"), ("dt", "STRING"), ("name", "STRING"), ("v", "BIGINT")]
PK_COLS = [("id", "INT"), ("dt", "STRING"), ("name", "STRING"), ("v", "BIGINT")]


@pytest.fixture
def wh(tmp_path: Path) -> str:
    path = tmp_path / "wh"
    path.mkdir()
    return str(path)


def _rows(ids: range | list[int], dt: str, tag: str) -> list[dict[str, Any]]:
    return [{"id": i, "dt": dt, "name": f"{tag}-{i}", "v": i * 10} for i in ids]


def _java_rows(jp: JavaPaimon, wh: str, table: str) -> list[dict[str, Any]]:
    return sort_rows(jp.read(wh, DB, table, row_kind=False))


def _table(wh: str, name: str) -> FileStoreTable:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}")


def _file_index(table_path: str) -> dict[str, str]:
    """file name -> path relative to the table root, for every data and index file."""
    out: dict[str, str] = {}
    for root, _dirs, files in os.walk(table_path):
        rel = os.path.relpath(root, table_path)
        if rel.split(os.sep)[0] in ("manifest", "snapshot", "schema", "tag", "branch", "consumer", "statistics"):
            continue
        for f in files:
            out[f] = os.path.join(rel, f)
    return out


def _copy_and_group(src: FileStoreTable, dst: FileStoreTable, entries: list[ManifestEntry],
                    with_index: bool = False) -> list[CommitMessage]:
    """Copy the entries' data files (and live index files) into dst; one message per bucket."""
    where = _file_index(src.path)
    groups: dict[tuple[bytes, int], CommitMessage] = {}
    for e in entries:
        assert e.kind == FileKind.ADD
        rel = where[e.file.file_name]
        os.makedirs(os.path.dirname(os.path.join(dst.path, rel)), exist_ok=True)
        shutil.copyfile(os.path.join(src.path, rel), os.path.join(dst.path, rel))
        for extra in e.file.extra_files:
            shutil.copyfile(os.path.join(src.path, where[extra]), os.path.join(dst.path, where[extra]))
        msg = groups.setdefault((e.partition, e.bucket), CommitMessage(e.partition, e.bucket, e.total_buckets, []))
        msg.new_files.append(e.file)
    if with_index:
        snap = src.snapshot_manager.latest_snapshot()
        for ie in FileStoreScan(src).index_entries(snap):
            rel = where[ie.index_file.file_name]
            os.makedirs(os.path.dirname(os.path.join(dst.path, rel)), exist_ok=True)
            shutil.copyfile(os.path.join(src.path, rel), os.path.join(dst.path, rel))
            msg = groups.setdefault((ie.partition, ie.bucket),
                                    CommitMessage(ie.partition, ie.bucket, int(dst.schema.bucket), []))
            msg.new_index_files.append(ie.index_file)
    return list(groups.values())


def _snapshot_rows(jp: JavaPaimon, wh: str, table: str) -> list[dict[str, Any]]:
    res = jp.system_table(wh, DB, table, "snapshots")
    cols = res["columns"]
    return sorted((dict(zip(cols, r, strict=True)) for r in res["rows"]), key=lambda r: r["snapshot_id"])


# ---------------------------------------------------------------------------- append table


def test_append_commits_read_and_extended_by_java(java_paimon: JavaPaimon, wh: str) -> None:
    jp = java_paimon
    opts = {"bucket": "-1", "file.format": "parquet"}
    jp.create_table(wh, DB, "src", APPEND_COLS, [], ["dt"], opts)
    jp.create_table(wh, DB, "dst", APPEND_COLS, [], ["dt"], opts)
    jp.write(wh, DB, "src", _rows(range(1, 6), D1, "a") + _rows(range(1, 4), D2, "a"))
    jp.write(wh, DB, "src", _rows(range(6, 9), D1, "b"))
    src, dst = _table(wh, "src"), _table(wh, "dst")

    # replay the source snapshot by snapshot: two commits of ours
    commit = FileStoreCommit(dst)
    for sid in (1, 2):
        delta = FileStoreScan(src).delta(src.snapshot_manager.snapshot(sid))
        snap = commit.commit(_copy_and_group(src, dst, delta))
        assert snap is not None and snap.id == sid
    assert _java_rows(jp, wh, "dst") == _java_rows(jp, wh, "src")
    assert (Path(dst.path) / "snapshot" / "LATEST").read_text() == "2"
    # our snapshots carry Java 2.0's uuid; Java 0.9 reads past it (and writes none itself, below)
    assert all('"uuid" : ' in (Path(dst.path) / "snapshot" / f"snapshot-{i}").read_text() for i in (1, 2))

    snaps = _snapshot_rows(jp, wh, "dst")
    assert [s["commit_kind"] for s in snaps] == ["APPEND", "APPEND"]
    assert [s["total_record_count"] for s in snaps] == [8, 11]
    assert [s["delta_record_count"] for s in snaps] == [8, 3]
    assert snaps[0]["commit_user"] == commit.commit_user

    # Java writes on top of our snapshot, then we commit on top of Java's
    sid = jp.write(wh, DB, "dst", _rows(range(20, 23), D3, "java"))
    assert sid == 3 and _table(wh, "dst").snapshot_manager.snapshot(3).uuid is None
    expected = sort_rows(_java_rows(jp, wh, "src") + _rows(range(20, 23), D3, "java"))
    assert _java_rows(jp, wh, "dst") == expected

    jp.create_table(wh, DB, "more", APPEND_COLS, [], ["dt"], opts)
    jp.write(wh, DB, "more", _rows(range(30, 32), D2, "m"))
    more = _table(wh, "more")
    snap = FileStoreCommit(_table(wh, "dst")).commit(_copy_and_group(more, dst, FileStoreScan(more).plan(
        more.snapshot_manager.latest_snapshot())))
    assert snap is not None and snap.id == 4 and snap.total_record_count == 16
    assert _java_rows(jp, wh, "dst") == sort_rows(expected + _rows(range(30, 32), D2, "m"))


# ---------------------------------------------------------------------------- primary-key table


def test_pk_files_with_levels_committed_then_java_upserts(java_paimon: JavaPaimon, wh: str) -> None:
    jp = java_paimon
    opts = {"bucket": "2", "file.format": "parquet"}
    jp.create_table(wh, DB, "pk_src", PK_COLS, ["id", "dt"], ["dt"], opts)
    jp.create_table(wh, DB, "pk_dst", PK_COLS, ["id", "dt"], ["dt"], opts)
    jp.write(wh, DB, "pk_src", _rows(range(1, 11), D1, "v1") + _rows(range(1, 6), D2, "v1"))
    jp.compact(wh, DB, "pk_src", full=True)  # files on the top level
    jp.write(wh, DB, "pk_src", _rows([2, 4, 6], D1, "v2"))  # level-0 files over them
    src, dst = _table(wh, "pk_src"), _table(wh, "pk_dst")
    live = FileStoreScan(src).plan(src.snapshot_manager.latest_snapshot())
    assert {e.file.level for e in live} >= {0, 5}

    snap = FileStoreCommit(dst).commit(_copy_and_group(src, dst, live))
    assert snap is not None and snap.id == 1
    expected = _java_rows(jp, wh, "pk_src")
    assert len(expected) == 15
    assert _java_rows(jp, wh, "pk_dst") == expected

    # Java's writer restores the buckets' max sequence numbers from our manifests:
    # its updates must win over every copied row
    jp.write(wh, DB, "pk_dst", _rows([2, 3, 10], D1, "v3") + _rows([5], D2, "v3"), ["+U", "+U", "-D", "+U"])
    want = {(r["id"], r["dt"]): r for r in expected}
    for r in _rows([2, 3], D1, "v3") + _rows([5], D2, "v3"):
        want[(r["id"], r["dt"])] = r
    del want[(10, D1)]
    assert _java_rows(jp, wh, "pk_dst") == sort_rows(list(want.values()))

    # a Java full compaction on top of our metadata keeps the same content
    jp.compact(wh, DB, "pk_dst", full=True)
    assert _java_rows(jp, wh, "pk_dst") == sort_rows(list(want.values()))


def test_dynamic_bucket_hash_index_is_used_by_java(java_paimon: JavaPaimon, wh: str) -> None:
    """Our index manifest (HASH files copied from Java) tells Java's assigner where keys live."""
    jp = java_paimon
    opts = {"bucket": "-1", "dynamic-bucket.target-row-num": "3", "file.format": "parquet"}
    cols = [("id", "INT"), ("dt", "STRING"), ("v", "STRING")]
    jp.create_table(wh, DB, "dyn_src", cols, ["id", "dt"], ["dt"], opts)
    jp.create_table(wh, DB, "dyn_dst", cols, ["id", "dt"], ["dt"], opts)
    jp.write(wh, DB, "dyn_src", [{"id": i, "dt": D1, "v": f"a{i}"} for i in range(1, 10)])
    src, dst = _table(wh, "dyn_src"), _table(wh, "dyn_dst")
    snap_src = src.snapshot_manager.latest_snapshot()
    assert FileStoreScan(src).index_entries(snap_src)

    snap = FileStoreCommit(dst).commit(_copy_and_group(src, dst, FileStoreScan(src).plan(snap_src), with_index=True))
    assert snap is not None and snap.index_manifest is not None
    assert len(FileStoreScan(dst).index_entries(snap)) == len(FileStoreScan(src).index_entries(snap_src))
    assert _java_rows(jp, wh, "dyn_dst") == _java_rows(jp, wh, "dyn_src")

    # updating existing keys must land in their old buckets (else the read shows duplicates)
    jp.write(wh, DB, "dyn_dst", [{"id": i, "dt": D1, "v": f"b{i}"} for i in (1, 5, 9)])
    rows = _java_rows(jp, wh, "dyn_dst")
    assert len(rows) == 9
    assert {r["id"]: r["v"] for r in rows} == {i: (f"b{i}" if i in (1, 5, 9) else f"a{i}") for i in range(1, 10)}


# ---------------------------------------------------------------------------- overwrite


def test_overwrite_commits_read_by_java(java_paimon: JavaPaimon, wh: str) -> None:
    jp = java_paimon
    opts = {"bucket": "-1", "file.format": "parquet"}
    for name in ("ow_src", "ow_new", "ow_dst"):
        jp.create_table(wh, DB, name, APPEND_COLS, [], ["dt"], opts)
    jp.write(wh, DB, "ow_src", _rows(range(1, 5), D1, "old") + _rows(range(1, 4), D2, "old"))
    jp.write(wh, DB, "ow_new", _rows(range(50, 53), D1, "new"))
    src, new, dst = _table(wh, "ow_src"), _table(wh, "ow_new"), _table(wh, "ow_dst")
    commit = FileStoreCommit(dst)
    commit.commit(_copy_and_group(src, dst, FileStoreScan(src).plan(src.snapshot_manager.latest_snapshot())))

    # dynamic partition overwrite (the default): only D1 is replaced
    msgs = _copy_and_group(new, dst, FileStoreScan(new).plan(new.snapshot_manager.latest_snapshot()))
    snap = commit.commit(msgs, overwrite={})
    assert snap is not None and snap.commit_kind == "OVERWRITE"
    assert snap.total_record_count == 3 + 3
    assert _java_rows(jp, wh, "ow_dst") == sort_rows(_rows(range(50, 53), D1, "new") + _rows(range(1, 4), D2, "old"))

    # static partition overwrite with nothing new: purges D2 only
    snap = commit.commit([], overwrite={"dt": D2}, dynamic=False)
    assert snap is not None and snap.delta_record_count == -3
    assert _java_rows(jp, wh, "ow_dst") == sort_rows(_rows(range(50, 53), D1, "new"))
    assert [s["commit_kind"] for s in _snapshot_rows(jp, wh, "ow_dst")] == ["APPEND", "OVERWRITE", "OVERWRITE"]

    # Java appends after our overwrites, then we truncate the whole table
    jp.write(wh, DB, "ow_dst", _rows([7], D3, "java"))
    assert _java_rows(jp, wh, "ow_dst") == sort_rows(_rows(range(50, 53), D1, "new") + _rows([7], D3, "java"))
    snap = FileStoreCommit(_table(wh, "ow_dst")).truncate()
    assert snap.total_record_count == 0
    assert _java_rows(jp, wh, "ow_dst") == []
    jp.write(wh, DB, "ow_dst", _rows([8], D1, "after"))
    assert _java_rows(jp, wh, "ow_dst") == _rows([8], D1, "after")


def test_compact_commit_read_by_java(java_paimon: JavaPaimon, wh: str) -> None:
    """A COMPACT snapshot of ours (two level-0 files replaced by one upper-level file)."""
    jp = java_paimon
    opts = {"bucket": "1", "file.format": "parquet"}
    for name in ("c_src", "c_full", "c_dst"):
        jp.create_table(wh, DB, name, PK_COLS, ["id", "dt"], ["dt"], opts)
    batches = [_rows(range(1, 6), D1, "x"), _rows(range(3, 9), D1, "y")]
    for b in batches:
        jp.write(wh, DB, "c_src", b)
        jp.write(wh, DB, "c_full", b)
    jp.compact(wh, DB, "c_full", full=True)
    src, full, dst = _table(wh, "c_src"), _table(wh, "c_full"), _table(wh, "c_dst")
    commit = FileStoreCommit(dst)
    level0 = FileStoreScan(src).plan(src.snapshot_manager.latest_snapshot())
    commit.commit(_copy_and_group(src, dst, level0))
    compacted = FileStoreScan(full).plan(full.snapshot_manager.latest_snapshot())
    assert len(compacted) == 1 and compacted[0].file.level > 0
    msg = _copy_and_group(full, dst, compacted)[0]
    msg.deleted_files = [e.file for e in level0]
    snap = commit.commit([msg], commit_kind="COMPACT")
    assert snap is not None and snap.commit_kind == "COMPACT"
    assert snap.total_record_count == compacted[0].file.row_count
    assert [e.file.file_name for e in FileStoreScan(dst).plan(snap)] == [compacted[0].file.file_name]
    assert _java_rows(jp, wh, "c_dst") == _java_rows(jp, wh, "c_full")
    assert _java_rows(jp, wh, "c_dst") == sort_rows(_rows([1, 2], D1, "x") + _rows(range(3, 9), D1, "y"))


def test_merged_and_fully_compacted_manifests_read_by_java(java_paimon: JavaPaimon, wh: str) -> None:
    """35 commits (the base list gets minor-merged at 30), then deletes resolved by a manifest
    full compaction: Java reads the merged manifests and appends on top of them."""
    import dataclasses
    import uuid

    jp = java_paimon
    opts = {"bucket": "-1", "file.format": "parquet", "manifest.full-compaction-threshold-size": "2 kb"}
    jp.create_table(wh, DB, "m_src", APPEND_COLS, [], ["dt"], opts)
    jp.create_table(wh, DB, "m_dst", APPEND_COLS, [], ["dt"], opts)
    jp.write(wh, DB, "m_src", _rows(range(1, 3), D1, "r"))
    src, dst = _table(wh, "m_src"), _table(wh, "m_dst")
    [entry] = FileStoreScan(src).plan(src.snapshot_manager.latest_snapshot())
    rel = _file_index(src.path)[entry.file.file_name]
    commit = FileStoreCommit(dst)
    copies = []
    for _ in range(35):  # the same rows under 35 file names, one commit each
        f = dataclasses.replace(entry.file, file_name=f"data-{uuid.uuid4()}-0.parquet")
        target = os.path.join(dst.path, os.path.dirname(rel), f.file_name)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        shutil.copyfile(os.path.join(src.path, rel), target)
        commit.commit([CommitMessage(entry.partition, entry.bucket, entry.total_buckets, [f])])
        copies.append(f)
    ml = FileStoreScan(dst)._manifest_list()
    latest = dst.snapshot_manager.latest_snapshot()
    assert latest is not None and len(ml.read(latest.base_manifest_list)) < 30
    assert len(_java_rows(jp, wh, "m_dst")) == 70

    # drop 20 copies (a rewrite); our next commit resolves the DELETEs by manifest full compaction
    commit.commit([CommitMessage(entry.partition, entry.bucket, entry.total_buckets, [], copies[:20])],
                  commit_kind="COMPACT")
    extra = dataclasses.replace(entry.file, file_name=f"data-{uuid.uuid4()}-0.parquet")
    shutil.copyfile(os.path.join(src.path, rel), os.path.join(dst.path, os.path.dirname(rel), extra.file_name))
    snap = commit.commit([CommitMessage(entry.partition, entry.bucket, entry.total_buckets, [extra])])
    assert snap is not None and snap.id == 37 and snap.total_record_count == 32
    base = ml.read(snap.base_manifest_list)
    assert sum(m.num_deleted_files for m in base) == 0
    assert len(_java_rows(jp, wh, "m_dst")) == 32

    jp.write(wh, DB, "m_dst", _rows([99], D2, "java"))
    rows = _java_rows(jp, wh, "m_dst")
    assert len(rows) == 33 and rows[-1] == _rows([99], D2, "java")[0]
    assert [s["total_record_count"] for s in _snapshot_rows(jp, wh, "m_dst")][-3:] == [30, 32, 33]
