"""Java Paimon 0.9 reads a table paimon-cli maintained on GCS / Azure Blob (emulators).

The CLI creates, writes, compacts, tags and expires the table against fake-gcs-server or
Azurite (tests/test_commit_cloud.py: ``cli_table_lifecycle``, which checks every step), then
the table is copied object by object to a local directory -- the harness has no GCS/Azure
filesystem -- where Java must list the same snapshots and tags and read the same rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.loopback_server import download_tree
from tests.test_commit_cloud import STORES, cli_table_lifecycle
from tests.test_concurrent_write import key

from .java_harness import JavaPaimon

pytestmark = [pytest.mark.java, pytest.mark.slow]


def _column(res: dict[str, Any], name: str) -> list[Any]:
    i = res["columns"].index(name)
    return [r[i] for r in res["rows"]]


@pytest.mark.parametrize("kind", STORES)
def test_java_reads_a_table_maintained_on_the_store(java_paimon: JavaPaimon, request: pytest.FixtureRequest,
                                                    tmp_path: Path, kind: str) -> None:
    store = request.getfixturevalue(f"{kind}_server")
    t, expected = cli_table_lifecycle(store, tmp_path)

    local = tmp_path / "wh"
    assert download_tree(store.new_fs(), t.warehouse, local) > 0
    snaps = java_paimon.system_table(local, "db", "t", "snapshots")
    assert list(zip(_column(snaps, "snapshot_id"), _column(snaps, "commit_kind"), strict=True)) == [(3, "COMPACT")]
    tags = java_paimon.system_table(local, "db", "t", "tags")
    assert list(zip(_column(tags, "tag_name"), _column(tags, "snapshot_id"), strict=True)) == [("before-expire", 2)]
    java = [{k: v for k, v in r.items() if k != "_row_kind"} for r in java_paimon.read(local, "db", "t")]
    assert sorted(map(key, java)) == sorted(map(key, expected))
