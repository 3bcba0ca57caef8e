"""``remove-orphan-files --spark-master spark://...`` on a real standalone cluster over S3 (moto).

Why: the executors list the candidate directories, read the manifests and delete, in JVMs
launched by workers whose environment has no S3 credentials (tests/spark_cluster.py): the
``--fs-option`` credentials must travel with the tasks. The warehouse is copied inside moto
and the local engine cleans the copy: both runs must report and delete exactly the same files
and leave the same objects. A manifest an executor cannot read refuses the run (exit 6) with
the local engine's message and nothing deleted.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.schema.table_schema import Schema
from tests.interop.test_compact_spark_cluster_java import _driver_env, _objects
from tests.s3_fixtures import S3Server
from tests.spark_cluster import SparkCluster
from tests.test_compact_spark import put as _put

pytestmark = [pytest.mark.s3, pytest.mark.slow]
ORPHANS = ("dt=a/bucket-0/data-0a0a0a0a-1111-2222-3333-444444444444-0.parquet",
           "dt=b/bucket-1/data-0b0b0b0b-1111-2222-3333-444444444444-0.parquet.index",
           "manifest/manifest-11111111-2222-3333-4444-555555555555-0",
           "index/index-99999999-0000-0000-0000-000000000000-0",
           "statistics/stat-99999999-0000-0000-0000-000000000000-0",
           "snapshot/.snapshot-9.0f0f0f0f.tmp")


def _make(s3_server: S3Server, wh: str, tmp_path: Path) -> None:
    cat = FileSystemCatalog(wh, s3_server.storage_options)
    cat.create_table("db.t", Schema.of(parse_columns("id INT NOT NULL, dt STRING NOT NULL, v STRING"),
                                       primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2"}))
    t = cat.get_table("db.t")
    for r in range(3):
        _put(t, tmp_path, [{"id": i, "dt": dt, "v": f"{r}-{i}"} for dt in ("a", "b") for i in range(r, 20)])
    t.tag_manager.create_tag("t1", t.snapshot_manager.snapshot(1))
    fs = s3_server.new_s3fs()
    root = f"{wh.removeprefix('s3://')}/db.db/t"
    for key in ORPHANS:
        fs.pipe_file(f"{root}/{key}", b"orphan")


def _run(cluster: SparkCluster, wh: str, fs_args: list[str], *args: str) -> Any:
    return subprocess.run([sys.executable, "-m", "paimon_cli", "remove-orphan-files", "db.t", "-w", wh,
                           "--older-than", "P0D", "--force", "--yes", "-o", "json", *fs_args, *args],
                          capture_output=True, text=True, timeout=600, env=_driver_env(cluster))


def test_same_result_as_the_local_engine_on_a_copy(spark_cluster: SparkCluster, s3_server: S3Server,
                                                    tmp_path: Path) -> None:
    wh = s3_server.fresh_warehouse("orphans-cluster")
    _make(s3_server, wh, tmp_path)
    copy = s3_server.fresh_warehouse("orphans-cluster-copy")
    fs = s3_server.new_s3fs()
    fs.copy(wh.removeprefix("s3://") + "/", copy.removeprefix("s3://") + "/", recursive=True)
    assert _objects(s3_server, wh, "t").keys() == _objects(s3_server, copy, "t").keys()
    time.sleep(1.1)  # S3 LastModified has second resolution; the cutoff is "now"
    fs_args = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    on_cluster = ["--spark-master", spark_cluster.master_url, *spark_cluster.spark_conf_args()]
    dry = _run(spark_cluster, wh, fs_args, "--dry-run", *on_cluster)
    assert dry.returncode == 0, dry.stderr
    local_dry = _run(spark_cluster, copy, fs_args, "--dry-run", "--engine", "local")
    assert local_dry.returncode == 0, local_dry.stderr
    rows = json.loads(dry.stdout)
    assert rows == json.loads(local_dry.stdout)
    assert sorted(r["path"] for r in rows) == sorted(ORPHANS)
    real = _run(spark_cluster, wh, fs_args, *on_cluster)
    assert real.returncode == 0, real.stderr
    local = _run(spark_cluster, copy, fs_args, "--engine", "local")
    assert local.returncode == 0, local.stderr
    assert json.loads(real.stdout) == json.loads(local.stdout) == rows
    left = _objects(s3_server, wh, "t")
    assert left.keys() == _objects(s3_server, copy, "t").keys() and not set(ORPHANS) & left.keys()
    apps = {a["name"] for a in spark_cluster.state()["completedapps"]}
    assert "paimon-cli remove-orphan-files db.t" in apps

    # a used manifest an executor cannot read: exit 6, the local engine's message, nothing deleted
    manifest = sorted(k for k in left if k.startswith("manifest/manifest-") and "list" not in k)[0]
    fs.pipe_file(f"{wh.removeprefix('s3://')}/db.db/t/{manifest}", b"Obj\x01garbage")
    fs.pipe_file(f"{wh.removeprefix('s3://')}/db.db/t/{ORPHANS[0]}", b"orphan")
    fs.pipe_file(f"{copy.removeprefix('s3://')}/db.db/t/{manifest}", b"Obj\x01garbage")
    time.sleep(1.1)
    before = _objects(s3_server, wh, "t")
    refused = _run(spark_cluster, wh, fs_args, *on_cluster)
    local_refused = _run(spark_cluster, copy, fs_args, "--engine", "local")
    assert (refused.returncode, local_refused.returncode) == (6, 6), (refused.stderr, local_refused.stderr)
    theirs = local_refused.stderr.replace(copy.removeprefix("s3://"), wh.removeprefix("s3://"))
    assert refused.stderr.strip().splitlines()[-1:] == theirs.strip().splitlines()[-1:], (refused.stderr, theirs)
    assert refused.stderr.startswith("error: ") and manifest.rsplit("/", 1)[1] in refused.stderr
    assert _objects(s3_server, wh, "t") == before
