"""Issue 25's branch, partition and database procedures against the real Java Paimon 0.9.

Why: each of these changes a table Java must go on reading. Where 0.9 has the procedure's
core (a partition drop through ``Catalog.dropPartition``, the ``success-file`` mark-done
action), both run on identical copies and must leave the same files / snapshot kinds, and
Java reads the results row for row. Where 0.9 lacks it (``rename_branch``, ``merge_branch``,
``compact_database``, ``remove_unexisting_manifests``: Java 1.4 / 2.0), Java 0.9 reads what
ours leaves exactly as upstream's semantics say it must read.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.scan import FileStoreScan

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
COLS = [("id", "INT"), ("dt", "STRING"), ("hh", "INT"), ("v", "STRING")]


def _java_rows(jp: JavaPaimon, wh: Path, table: str, branch: str | None = None) -> list[Any]:
    """Java's merged read, each row a list of its values as text."""
    text = jp._gateway.jvm.RefsHelper.readLatest(str(wh), DB, table, branch)
    return sorted(json.loads(text), key=json.dumps)


def _live_files(jp: JavaPaimon, wh: Path, table: str, branch: str | None = None) -> set[str]:
    res = jp.system_table(wh, DB, table, "files", branch=branch)
    col = res["columns"].index("file_path")
    return {str(r[col]).rsplit("/", 1)[-1] for r in res["rows"]}


def _snapshots(jp: JavaPaimon, wh: Path, table: str, branch: str | None = None) -> list[dict[str, Any]]:
    res = jp.system_table(wh, DB, table, "snapshots", branch=branch)
    return [dict(zip(res["columns"], r, strict=True)) for r in res["rows"]]


def _copies(tmp_path: Path, base: Path) -> tuple[Path, Path]:
    wa, wb = tmp_path / "java", tmp_path / "ours"
    shutil.copytree(base, wa)
    shutil.copytree(base, wb)
    return wa, wb


def _pk_table(jp: JavaPaimon, wh: Path, table: str = "t") -> None:
    """PK (id, dt, hh) by (dt, hh), bucket 2: two commits over four partitions (the second updates)."""
    jp.create_table(wh, DB, table, COLS, ["id", "dt", "hh"], ["dt", "hh"], {"bucket": "2"})
    jp.write(wh, DB, table, [{"id": i, "dt": f"d{i % 2}", "hh": i % 3, "v": "a"} for i in range(12)])
    jp.write(wh, DB, table, [{"id": i, "dt": f"d{i % 2}", "hh": i % 3, "v": "b"} for i in range(0, 12, 3)])


# ------------------------------------------------------------------------ drop-partition


@pytest.mark.parametrize("spec", [{"dt": "d0", "hh": "1"}, {"hh": "2"}])
def test_drop_partition_leaves_what_javas_drop_leaves(java_paimon: JavaPaimon, tmp_path: Path,
                                                      spec: dict[str, str]) -> None:
    base = tmp_path / "base"
    _pk_table(java_paimon, base)
    wa, wb = _copies(tmp_path, base)
    java_paimon.drop_partition(wa, DB, "t", spec)  # 0.9's Catalog.dropPartition: FileStoreCommit.dropPartitions
    plan = Warehouse(str(wb)).table(f"{DB}.t").drop_partitions(",".join(f"{k}={v}" for k, v in spec.items()))
    assert plan.snapshot == 3
    ja, ours = _snapshots(java_paimon, wa, "t"), _snapshots(java_paimon, wb, "t")
    assert [s["commit_kind"] for s in ja] == [s["commit_kind"] for s in ours] == ["APPEND", "APPEND", "OVERWRITE"]
    assert ja[-1]["total_record_count"] == ours[-1]["total_record_count"]
    assert _live_files(java_paimon, wa, "t") == _live_files(java_paimon, wb, "t")
    assert _java_rows(java_paimon, wa, "t") == _java_rows(java_paimon, wb, "t")
    # ours carries Java 2.x's operation, which 0.9 reads past
    snap = json.loads((wb / "db.db" / "t" / "snapshot" / "snapshot-3").read_text())
    assert snap["operation"] == "TRUNCATE"
    # and Java commits on top of it
    java_paimon.write(wb, DB, "t", [{"id": 100, "dt": "d0", "hh": 1, "v": "z"}])
    assert ["100", "d0", "1", "z"] in _java_rows(java_paimon, wb, "t")


# ---------------------------------------------------------------------- mark-partition-done

_NUMBERS = re.compile(r"\d{10,}")


def test_success_file_as_java_writes_it_and_reads_it(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    base = tmp_path / "base"
    _pk_table(java_paimon, base)
    wa, wb = _copies(tmp_path, base)
    java_paimon.mark_partition_done(wa, DB, "t", "dt=d0/hh=1/")  # the default action: success-file
    java_paimon.mark_partition_done(wa, DB, "t", "dt=d1/")
    Warehouse(str(wb)).table(f"{DB}.t").mark_partitions_done("dt=d0,hh=1;dt=d1")
    found = {str(p.relative_to(w)) for w in (wa, wb) for p in w.rglob("_SUCCESS")}
    assert found == {"db.db/t/dt=d0/hh=1/_SUCCESS", "db.db/t/dt=d1/_SUCCESS"}
    for rel in found:
        javas, ours = (wa / rel).read_text(), (wb / rel).read_text()
        assert _NUMBERS.sub("N", javas) == _NUMBERS.sub("N", ours)  # the same bytes but for the times
    # Java re-marks ours (it parses our file: creationTime kept) and we re-mark Java's
    rel = "db.db/t/dt=d1/_SUCCESS"
    ours_first = json.loads((wb / rel).read_text())
    java_paimon.mark_partition_done(wb, DB, "t", "dt=d1/")
    assert json.loads((wb / rel).read_text())["creationTime"] == ours_first["creationTime"]
    javas_first = json.loads((wa / rel).read_text())
    Warehouse(str(wa)).table(f"{DB}.t").mark_partitions_done("dt=d1")
    again = json.loads((wa / rel).read_text())
    assert again["creationTime"] == javas_first["creationTime"]
    assert again["modificationTime"] >= javas_first["modificationTime"]
    assert _java_rows(java_paimon, wa, "t") == _java_rows(java_paimon, wb, "t")  # markers are not data


# ------------------------------------------------------------------------------ branches


def _append_table(jp: JavaPaimon, wh: Path, table: str = "a") -> None:
    jp.create_table(wh, DB, table, COLS, [], ["dt"], {"bucket": "-1"})
    jp.write(wh, DB, table, [{"id": i, "dt": f"d{i % 2}", "hh": 0, "v": "main1"} for i in range(4)])
    jp.create_tag(wh, DB, table, "t1", 1)
    jp.create_branch(wh, DB, table, "dev", "t1")


def test_renamed_branch_is_javas_branch(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _append_table(java_paimon, wh)
    java_paimon.write(wh, DB, "a", [{"id": 50, "dt": "d9", "hh": 1, "v": "dev"}], branch="dev")
    before = _java_rows(java_paimon, wh, "a", "dev")
    Warehouse(str(wh)).table(f"{DB}.a").rename_branch("dev", "dev2")
    res = java_paimon.system_table(wh, DB, "a", "branches")
    assert [r[res["columns"].index("branch_name")] for r in res["rows"]] == ["dev2"]
    assert _java_rows(java_paimon, wh, "a", "dev2") == before
    java_paimon.write(wh, DB, "a", [{"id": 51, "dt": "d9", "hh": 1, "v": "dev"}], branch="dev2")  # Java writes on
    assert len(_java_rows(java_paimon, wh, "a", "dev2")) == len(before) + 1


def test_merged_branch_is_read_by_java_as_upstream_merges(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Java 2.x's mergeBranch: the source's live files the target lacks, added in one APPEND;
    the target then holds its own rows plus the branch's new ones, and Java reads exactly that."""
    wh = tmp_path / "wh"
    _append_table(java_paimon, wh)
    java_paimon.write(wh, DB, "a", [{"id": 50, "dt": "d9", "hh": 1, "v": "dev"},
                                    {"id": 51, "dt": "d0", "hh": 1, "v": "dev"}], branch="dev")
    java_paimon.write(wh, DB, "a", [{"id": 60, "dt": "d0", "hh": 2, "v": "main2"}])
    main_before, dev = _java_rows(java_paimon, wh, "a"), _java_rows(java_paimon, wh, "a", "dev")
    dev_files = _live_files(java_paimon, wh, "a", "dev") - _live_files(java_paimon, wh, "a")
    plan = Warehouse(str(wh)).table(f"{DB}.a").merge_branch("dev")
    assert {Path(p).name for p in plan.paths} == dev_files and plan.snapshot_id == 3
    main_after = _java_rows(java_paimon, wh, "a")
    assert main_after == sorted(main_before + [r for r in dev if r not in main_before], key=json.dumps)
    assert [s["commit_kind"] for s in _snapshots(java_paimon, wh, "a")] == ["APPEND", "APPEND", "APPEND"]
    assert _java_rows(java_paimon, wh, "a", "dev") == dev  # the source unchanged
    java_paimon.write(wh, DB, "a", [{"id": 70, "dt": "d9", "hh": 3, "v": "main3"}])  # Java commits on top
    assert len(_java_rows(java_paimon, wh, "a")) == len(main_after) + 1


# ------------------------------------------------------------------- compact DB, manifests


def test_compact_database_is_read_by_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _pk_table(java_paimon, wh, "t")
    _pk_table(java_paimon, wh, "u")
    _append_table(java_paimon, wh, "a")
    before = {t: _java_rows(java_paimon, wh, t) for t in ("t", "u", "a")}
    report = Warehouse(str(wh)).compact_database(DB, full=True, excluding_tables=r"db\.u")
    assert {t.identifier: t.outcome for t in report.tables} == {"db.a": "nothing to do", "db.t": "compacted"}
    assert report.exit_code == 0
    assert [s["commit_kind"] for s in _snapshots(java_paimon, wh, "t")][-1] == "COMPACT"
    assert [s["commit_kind"] for s in _snapshots(java_paimon, wh, "u")][-1] == "APPEND"
    for t, rows in before.items():
        assert _java_rows(java_paimon, wh, t) == rows


def test_remove_unexisting_manifests_is_read_by_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Upstream: the kept manifests become the base list of an OVERWRITE snapshot whose
    totalRecordCount counts them; the missing manifest's files are gone for readers."""
    wh = tmp_path / "wh"
    java_paimon.create_table(wh, DB, "a", COLS, [], ["dt"], {"bucket": "-1"})
    for i in range(3):
        java_paimon.write(wh, DB, "a", [{"id": 10 * i + k, "dt": f"d{i}", "hh": k, "v": "x"} for k in range(i + 1)])
    t = FileSystemCatalog(str(wh)).get_table(f"{DB}.a")
    latest = t.snapshot_manager.latest_snapshot()
    assert latest is not None
    metas = FileStoreScan(t).data_manifests(latest)
    assert len(metas) == 3  # one per commit: base [1, 2], delta [3]
    (wh / "db.db" / "a" / "manifest" / metas[1].file_name).unlink()  # snapshot 2's (ids 10, 11)
    plan = Warehouse(str(wh)).table(f"{DB}.a").remove_unexisting_manifests()
    assert plan.snapshot == 4
    rows = _java_rows(java_paimon, wh, "a")
    assert sorted(int(r[0]) for r in rows) == [0, 20, 21, 22]
    last = _snapshots(java_paimon, wh, "a")[-1]
    assert (last["commit_kind"], last["total_record_count"]) == ("OVERWRITE", 4)
    java_paimon.write(wh, DB, "a", [{"id": 99, "dt": "d9", "hh": 0, "v": "y"}])  # Java commits on top
    assert len(_java_rows(java_paimon, wh, "a")) == 5
