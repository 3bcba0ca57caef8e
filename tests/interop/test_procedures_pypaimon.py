"""pypaimon 2.1 reads, and writes on, what issue 25's procedures leave: a drop-partition
snapshot (with 2.x's TRUNCATE operation), a merged branch, a manifest-repair snapshot."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.pypaimon_peer import PyPaimon

pytestmark = pytest.mark.pypaimon

DB = "peer"
COLS = [("id", "int64"), ("dt", "string")]


def _ids(peer: PyPaimon, wh: str, table: str, branch: str | None = None) -> list[int]:
    return sorted(r["id"] for r in peer.read(wh, DB, table, branch=branch))


def _table(peer: PyPaimon, wh: str, name: str, commits: list[list[dict[str, Any]]]) -> None:
    peer.create_table(wh, DB, name, COLS, partition_keys=["dt"], options={"bucket": "-1"})
    for rows in commits:
        peer.write(wh, DB, name, rows)


def test_pypaimon_reads_and_writes_after_our_procedures(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    commits = [[{"id": 1, "dt": "a"}, {"id": 2, "dt": "b"}], [{"id": 3, "dt": "c"}], [{"id": 4, "dt": "a"}]]
    _table(pypaimon, wh, "d", commits)
    _table(pypaimon, wh, "m", commits)
    w = Warehouse(wh)
    # drop-partition: an OVERWRITE with operation TRUNCATE
    w.table(f"{DB}.d").drop_partitions("dt=a")
    assert _ids(pypaimon, wh, "d") == [2, 3]
    pypaimon.write(wh, DB, "d", [{"id": 5, "dt": "a"}])
    assert _ids(pypaimon, wh, "d") == [2, 3, 5]
    # remove-unexisting-manifests: snapshot 2's manifest lost, its row gone
    t = FileSystemCatalog(wh).get_table(f"{DB}.m")
    latest = t.snapshot_manager.latest_snapshot()
    assert latest is not None
    metas = FileStoreScan(t).data_manifests(latest)
    (Path(wh) / f"{DB}.db" / "m" / "manifest" / metas[1].file_name).unlink()
    w.table(f"{DB}.m").remove_unexisting_manifests()
    assert _ids(pypaimon, wh, "m") == [1, 2, 4]
    pypaimon.write(wh, DB, "m", [{"id": 6, "dt": "b"}])
    assert _ids(pypaimon, wh, "m") == [1, 2, 4, 6]


def _arrow(ids: list[int], dts: list[str]) -> Any:
    import pyarrow as pa

    return pa.table({"id": pa.array(ids, pa.int64()), "dt": dts})


def test_pypaimon_reads_a_merged_branch(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    _table(pypaimon, wh, "a", [[{"id": 1, "dt": "a"}, {"id": 2, "dt": "b"}]])
    w = Warehouse(wh)
    w.table(f"{DB}.a").create_tag("t1", snapshot=1)
    dev = w.table(f"{DB}.a").create_branch("dev", tag="t1")
    dev.write(_arrow([9, 10], ["z", "a"]))
    pypaimon.write(wh, DB, "a", [{"id": 3, "dt": "c"}])
    plan = w.table(f"{DB}.a").merge_branch("dev")
    assert plan.snapshot_id == 3
    assert _ids(pypaimon, wh, "a") == [1, 2, 3, 9, 10]
    assert _ids(pypaimon, wh, "a", branch="dev") == [1, 2, 9, 10]
    pypaimon.write(wh, DB, "a", [{"id": 4, "dt": "c"}])
    assert _ids(pypaimon, wh, "a") == [1, 2, 3, 4, 9, 10]
