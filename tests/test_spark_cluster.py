"""The standalone cluster fixture itself: two workers ALIVE on loopback, nothing of it escapes."""

from __future__ import annotations

import pytest

from tests.spark_cluster import SparkCluster

pytestmark = pytest.mark.slow


def test_cluster_has_two_alive_workers_on_loopback(spark_cluster: SparkCluster) -> None:
    state = spark_cluster.state()
    assert state["status"] == "ALIVE"
    assert state["url"] == spark_cluster.master_url
    alive = [w for w in state["workers"] if w["state"] == "ALIVE"]
    assert len(alive) == 2
    assert {w["host"] for w in alive} == {"127.0.0.1"}
    assert spark_cluster.marked_pids()  # the marker reaches the daemons
