"""Iceberg metadata on tables Java Paimon 0.9 writes with ``metadata.iceberg-compatible=true``.

Java 0.9 writes its own Iceberg metadata; we write, compact and expire the table and our
commits move that metadata on to our snapshots; Java 0.9 keeps writing on top of ours and reads
the table. pyiceberg cannot read 0.9's own manifests (a top-level ``["null", record]`` union,
no field ids), so pyiceberg judges the metadata we write and Java judges the table: after each
of our commits pyiceberg's rows, our read and Java's read are the same.

The replay test is the parity check: on a copy of a Java-written table, our callback replays
Java's commits one by one and must publish the same Iceberg snapshots (ids, data files,
operations) as Java's own callback did.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

from paimon_cli.core.api import Warehouse
from paimon_cli.core.iceberg.callback import IcebergCommitCallback
from paimon_cli.core.iceberg.metadata_files import IcebergMetadataFiles
from paimon_cli.core.io import paths
from paimon_cli.core.manifest.manifest import ManifestFile, ManifestList

from .conftest import sort_rows
from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
COLS = [("id", "INT"), ("dt", "STRING"), ("v", "STRING")]
ON = {"metadata.iceberg-compatible": "true", "file.format": "parquet"}


def _iceberg(loc: Path) -> list[dict[str, Any]]:
    return sort_rows(StaticTable.from_metadata(str(loc)).scan().to_arrow().to_pylist())


def _arrow(rows: list[tuple[int, str, str]]) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int32()), "dt": [r[1] for r in rows],
                     "v": [r[2] for r in rows]})


def _same_everywhere(jp: JavaPaimon, wh: Path, name: str, t: Any) -> list[dict[str, Any]]:
    java = sort_rows(jp.read(wh, DB, name, row_kind=False))
    ours = sort_rows(t.read().to_pylist())
    assert _iceberg(wh / f"{DB}.db" / name) == ours == java
    return ours


def test_java09_append_table_continues_under_our_commits(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    jp, wh = java_paimon, tmp_path / "wh"
    jp.create_table(wh, DB, "a", COLS, [], ["dt"], {"bucket": "-1", **ON})
    jp.write(wh, DB, "a", [{"id": 1, "dt": "a", "v": "x"}, {"id": 2, "dt": "b", "v": "y"}])
    jp.write(wh, DB, "a", [{"id": 3, "dt": "a", "v": "z"}])
    loc = wh / f"{DB}.db" / "a"
    assert (loc / "metadata" / "v2.metadata.json").exists()  # Java 0.9's own
    t = Warehouse(str(wh)).table(f"{DB}.a")
    t.write(_arrow([(4, "c", "q")]))
    md = IcebergMetadataFiles(t.open()).read(3)
    assert md is not None and [s.snapshot_id for s in md.snapshots] == [3]  # 0.9's layout is rebuilt
    assert len(_same_everywhere(jp, wh, "a", t)) == 4

    jp.write(wh, DB, "a", [{"id": 5, "dt": "a", "v": "w"}])  # Java 0.9 extends our version 3
    assert (loc / "metadata" / "v4.metadata.json").exists()
    t.compact(full=True)
    assert len(_same_everywhere(jp, wh, "a", t)) == 5
    t.write(_arrow([(6, "b", "u")]))
    t.expire(retain_max=1, retain_min=1)
    rows = _same_everywhere(jp, wh, "a", t)
    assert [r["id"] for r in rows] == [1, 3, 5, 2, 6, 4]
    latest = t.open().snapshot_manager.latest_snapshot_id()
    assert [(s["snapshot_id"], s["paimon_snapshot"]) for s in t.inspect("iceberg").rows] == [(latest, True)]
    jp.write(wh, DB, "a", [{"id": 7, "dt": "c", "v": "t"}])
    t.write(_arrow([(8, "a", "s")]))
    assert len(_same_everywhere(jp, wh, "a", t)) == 8


def test_java09_primary_key_table_under_our_compaction(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    jp, wh = java_paimon, tmp_path / "wh"
    jp.create_table(wh, DB, "p", COLS, ["id", "dt"], ["dt"], {"bucket": "2", **ON})
    jp.write(wh, DB, "p", [{"id": i, "dt": "a" if i % 2 else "b", "v": f"v{i}"} for i in range(1, 9)])
    jp.compact(wh, DB, "p")  # Java's full compaction: the files reach the highest level
    jp.write(wh, DB, "p", [{"id": 1, "dt": "a", "v": "new"}, {"id": 2, "dt": "b", "v": "new"}])
    t = Warehouse(str(wh)).table(f"{DB}.p")
    t.write(_arrow([(3, "a", "ours"), (10, "b", "ours")]))
    t.compact(full=True)
    rows = _same_everywhere(jp, wh, "p", t)
    assert {r["id"]: r["v"] for r in rows} == {1: "new", 2: "new", 3: "ours", 4: "v4", 5: "v5", 6: "v6", 7: "v7",
                                               8: "v8", 10: "ours"}
    t.expire(retain_max=1, retain_min=1)
    _same_everywhere(jp, wh, "p", t)
    jp.write(wh, DB, "p", [{"id": 4, "dt": "b", "v": "java"}])
    jp.compact(wh, DB, "p")
    t.write(_arrow([(5, "a", "again")]))
    t.compact(full=True)
    rows = _same_everywhere(jp, wh, "p", t)
    assert {r["id"]: r["v"] for r in rows}[4] == "java"


def _iceberg_files(loc: Path) -> dict[int, tuple[str, set[str]]]:
    """Per Iceberg snapshot of the current version: (operation, live data file names)."""
    st = StaticTable.from_metadata(str(loc))
    return {s.snapshot_id: (s.summary.operation.value if s.summary else "", {
        Path(t.file.file_path).name for t in st.scan(snapshot_id=s.snapshot_id).plan_files()})
        for s in st.metadata.snapshots}


def _java_files(t: Any, loc: Path) -> dict[int, tuple[str, set[str]]]:
    """The same from Java 0.9's metadata, read with our reader (pyiceberg cannot read it)."""
    files = IcebergMetadataFiles(t.open())
    md = files.read(files.versions()[-1])
    assert md is not None
    out = {}
    for s in md.snapshots:
        names = set()
        for meta in files.manifests.read_list(s.manifest_list):
            names |= {Path(e.file.file_path).name for e in files.manifests.read_entries(meta) if e.live}
        out[s.snapshot_id] = (s.operation, names)
    return out


@pytest.mark.parametrize("pk", [False, True], ids=["append", "primary-key"])
def test_our_callback_publishes_what_javas_did_for_the_same_commits(java_paimon: JavaPaimon, tmp_path: Path,
                                                                     pk: bool) -> None:
    jp, wh = java_paimon, tmp_path / "wh"
    opts = {"bucket": "2", **ON} if pk else {"bucket": "-1", **ON, "compaction.min.file-num": "2"}
    jp.create_table(wh, DB, "r", COLS, ["id", "dt"] if pk else [], ["dt"], opts)
    jp.write(wh, DB, "r", [{"id": 1, "dt": "a", "v": "x"}, {"id": 2, "dt": "b", "v": "y"}])
    if pk:
        jp.compact(wh, DB, "r")  # the first files reach the highest level: Java publishes them
    jp.write(wh, DB, "r", [{"id": 3, "dt": "a", "v": "z"}])
    jp.write(wh, DB, "r", [{"id": 4, "dt": "b", "v": "o"}], overwrite={"dt": "b"})
    if not pk:
        jp.write(wh, DB, "r", [{"id": 5, "dt": "c", "v": "w"}])
    jp.compact(wh, DB, "r", options={"compaction.min.file-num": "2", "compaction.max.file-num": "2"})
    loc = wh / f"{DB}.db" / "r"
    t = Warehouse(str(wh)).table(f"{DB}.r")
    java = _java_files(t, loc)

    copy = tmp_path / "copy"
    shutil.copytree(wh, copy)
    ct = Warehouse(str(copy)).table(f"{DB}.r").open()
    shutil.rmtree(copy / f"{DB}.db" / "r" / "metadata")
    sm = ct.snapshot_manager
    lists = ManifestList(ct.file_io, paths.manifest_dir(ct.path))
    manifests = ManifestFile(ct.file_io, paths.manifest_dir(ct.path))
    for sid in sm.snapshot_ids():  # Java's commits, one callback each, in order
        snap = sm.snapshot(sid)
        delta = [e for m in lists.read(snap.delta_manifest_list) for e in manifests.read(m.file_name)]
        IcebergCommitCallback(ct).call(snap, delta)
    ours = _iceberg_files(copy / f"{DB}.db" / "r")

    assert sorted(ours) == sorted(java) == [1, 2, 3, 4, 5]
    for sid in java:
        assert ours[sid][1] == java[sid][1], sid
    ops = {sid: (ours[sid][0], java[sid][0]) for sid in java}
    # Java 1.x+ (apache/paimon#7702) names a compaction "replace"; 0.9 still said "overwrite"
    if pk:
        kinds = {sid: ct.snapshot_manager.snapshot(sid).commit_kind for sid in java}
        for sid, (o, j) in ops.items():
            assert o == j or (o, j, kinds[sid]) == ("replace", "overwrite", "COMPACT"), (sid, o, j)
        assert java[5][1] and ours[5][1] == java[5][1]
    else:
        assert ops == {1: ("append", "append"), 2: ("append", "append"), 3: ("overwrite", "overwrite"),
                       4: ("append", "append"), 5: ("replace", "overwrite")}


def test_a_table_we_create_reads_the_same_in_java_and_pyiceberg(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Our table with metadata.iceberg.storage (Java 0.9 ignores the 1.x key): written,
    compacted, rescaled, expired and rolled back by us, read by Java 0.9 and pyiceberg."""
    wh = tmp_path / "wh"
    w = Warehouse(str(wh))
    t = w.create_table(f"{DB}.o", "id INT NOT NULL, dt STRING NOT NULL, v STRING", primary_key="id,dt",
                       partition_by="dt", options={"bucket": "2", "metadata.iceberg.storage": "table-location"})
    t.write(_arrow([(i, "a" if i % 2 else "b", f"v{i}") for i in range(20)]))
    t.compact(full=True)
    _same_everywhere(java_paimon, wh, "o", t)
    t.write(_arrow([(i, "a" if i % 2 else "b", f"w{i}") for i in range(10, 30)]))
    t.compact(full=True)
    t.create_tag("t1")
    _same_everywhere(java_paimon, wh, "o", t)
    t.rescale(bucket_num=3)
    rows = _same_everywhere(java_paimon, wh, "o", t)
    assert len(rows) == 30
    t.write(_arrow([(99, "a", "x")]))
    t.compact(full=True)
    t.expire(retain_max=1, retain_min=1)
    assert len(_same_everywhere(java_paimon, wh, "o", t)) == 31
    t.rollback(tag="t1")
    assert len(_same_everywhere(java_paimon, wh, "o", t)) == 30
