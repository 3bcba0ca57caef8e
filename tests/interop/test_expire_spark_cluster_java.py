"""``expire --spark-master spark://...`` on a real standalone cluster over S3 (moto), read by Java.

Why: on a cluster the expiring snapshots' manifests are read and the files deleted by
executors in other JVMs whose environment has no S3 credentials (tests/spark_cluster.py): the
filesystem options must travel with the tasks, and the result must still be exactly the local
engine's. One table is uploaded to two warehouses; the local engine expires one, the cluster
the other; the files deleted (in order), the report and the objects left must be equal, and
Java Paimon 0.9 reads every retained snapshot and the tag of the cluster's copy as before
(Java has no S3 filesystem here, so it reads a downloaded copy; metadata names files
relative to the table, so the copy is whole).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from tests.core.test_expire import history, snapshot_ids
from tests.s3_fixtures import S3Server
from tests.spark_cluster import SparkCluster

from .test_expire_java import java_rows

pytestmark = [pytest.mark.s3, pytest.mark.java, pytest.mark.slow]
ARGS = ["--retain-min", "2", "--older-than", "0 ms", "--yes", "--verbose", "-o", "json"]


def _objects(s3: S3Server, wh: str) -> dict[str, int]:
    root = f"{wh.removeprefix('s3://')}/db.db/t"
    return {p.removeprefix(root + "/"): int(i["size"]) for p, i in s3.new_s3fs().find(root, detail=True).items()}


def _driver_env(cluster: SparkCluster) -> dict[str, str]:
    """The CLI's environment: loopback, no AWS credentials (only --fs-option carries them),
    no PYSPARK_PYTHON (the driver picks the executors' Python)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PAIMON_"))}
    base.update(AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull, AWS_EC2_METADATA_DISABLED="true")
    return cluster.driver_env(base)


def test_expire_on_standalone_cluster_over_s3_equals_local(spark_cluster: SparkCluster, s3_server: S3Server,
                                                           java_paimon: Any, tmp_path: Path) -> None:
    java = java_paimon
    src = tmp_path / "src"
    t = history(str(src), 10)
    t.tag_manager.create_tag("v3", t.snapshot_manager.snapshot(3))
    before = {i: java_rows(java, str(src), "t", snapshot_id=i) for i in (9, 10)}
    before["v3"] = java_rows(java, str(src), "t", tag="v3")
    fs = s3_server.new_s3fs()
    whs = {side: s3_server.fresh_warehouse(f"expire-{side}") for side in ("local", "cluster")}
    for wh in whs.values():
        fs.put(str(tmp_path / "src") + "/", wh.removeprefix("s3://") + "/", recursive=True)
    assert _objects(s3_server, whs["local"]) == _objects(s3_server, whs["cluster"])
    fs_args = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    local = CliRunner().invoke(app, ["expire", "db.t", "-w", whs["local"], *fs_args, *ARGS])
    assert local.exit_code == 0, local.output
    res = subprocess.run([sys.executable, "-m", "paimon_cli", "expire", "db.t", "-w", whs["cluster"], *fs_args,
                          "--spark-master", spark_cluster.master_url, *spark_cluster.spark_conf_args(), *ARGS],
                         capture_output=True, text=True, timeout=400, env=_driver_env(spark_cluster))
    assert res.returncode == 0, res.stderr
    # --verbose -o json: the files deleted, in order (the dry run's list)
    assert json.loads(res.stdout) == json.loads(local.stdout)
    assert len(json.loads(res.stdout)) > 10
    assert _objects(s3_server, whs["cluster"]) == _objects(s3_server, whs["local"])
    assert "paimon-cli expire db.t" in {a["name"] for a in spark_cluster.state()["completedapps"]}
    copy = tmp_path / "java-copy"
    fs.get(whs["cluster"].removeprefix("s3://") + "/db.db/t/", str(copy / "db.db" / "t") + "/", recursive=True)
    assert snapshot_ids(FileSystemCatalog(str(copy)).get_table("db.t")) == [9, 10]
    for i in (9, 10):
        assert java_rows(java, str(copy), "t", snapshot_id=i) == before[i]
    assert java_rows(java, str(copy), "t", tag="v3") == before["v3"]


