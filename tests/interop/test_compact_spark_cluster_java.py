"""``compact --spark-master spark://...`` on a real standalone cluster over S3 (moto), read by Java.

Why: ``local[*]`` hides what a cluster changes. Here the units run in executor JVMs launched
by two workers whose environment has no S3 credentials and no ``PYSPARK_PYTHON`` (see
tests/spark_cluster.py), so the run proves what the README promises for clusters:
- executors run a Python that has paimon-cli (the driver picks it; the PATH ``python3`` of
  this machine has no paimon-cli, so a wrong choice fails the tasks);
- the filesystem options given to the driver (``--fs-option`` or ``PAIMON_FS_OPTIONS``)
  reach the executors, which read and write the objects;
- only the driver commits: exactly one new snapshot, written by the CLI process;
and Java Paimon 0.9 reads the compacted tables row for row. The Java harness has no S3
filesystem on its classpath, so each table is downloaded from moto to a local directory and
Java reads that copy (table metadata names files relative to the table, so the copy is whole).
A task that fails on an executor gives the local engine's exit code and leaves the table as it was.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.schema.table_schema import Schema
from tests.s3_fixtures import S3Server
from tests.spark_cluster import SparkCluster
from tests.test_compact_spark import put

pytestmark = [pytest.mark.s3, pytest.mark.java, pytest.mark.slow]
DTS = ("2024-05-01", "2024-05-02")


def _make_tables(s3_server: S3Server, wh: str, tmp_path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """A PK table and an append table, 2 partitions x 2 buckets, several files per bucket;
    returns the rows each must read as."""
    cat = FileSystemCatalog(wh, s3_server.storage_options)
    cols = parse_columns("id INT NOT NULL, dt STRING NOT NULL, v STRING")
    cat.create_table("db.pk", Schema.of(cols, primary_keys=["id", "dt"], partition_keys=["dt"],
                                        options={"bucket": "2"}))
    cat.create_table("db.ev", Schema.of(cols, partition_keys=["dt"], options={"bucket": "2", "bucket-key": "id"}))
    pk, ev = cat.get_table("db.pk"), cat.get_table("db.ev")
    latest: dict[tuple[int, str], str] = {}
    events: list[tuple[Any, ...]] = []
    for r in range(4):
        rows = [{"id": i, "dt": dt, "v": f"{r}-{i}"} for dt in DTS for i in range(r * 10, 60)]
        put(pk, tmp_path, rows)
        put(ev, tmp_path, rows)
        latest.update({(x["id"], x["dt"]): x["v"] for x in rows})
        events += [(x["id"], x["dt"], x["v"]) for x in rows]
    return {"pk": sorted((i, d, v) for (i, d), v in latest.items()), "ev": sorted(events)}


def _ours(s3_server: S3Server, wh: str, name: str) -> list[tuple[Any, ...]]:
    t = FileSystemCatalog(wh, s3_server.storage_options).get_table(f"db.{name}")
    return sorted(tuple(r.values()) for r in TableRead(t).to_arrow().to_pylist())


def _java_reads(java: Any, s3_server: S3Server, wh: str, name: str, local: Path) -> list[tuple[Any, ...]]:
    """Download the table from moto and let Java read the copy."""
    src = f"{wh.removeprefix('s3://')}/db.db/{name}"
    dst = local / "db.db" / name
    s3_server.new_s3fs().get(src + "/", str(dst) + "/", recursive=True)
    return sorted(tuple(r.values()) for r in java.read(str(local), "db", name, row_kind=False))


def _objects(s3_server: S3Server, wh: str, name: str) -> dict[str, Any]:
    fs = s3_server.new_s3fs()
    root = f"{wh.removeprefix('s3://')}/db.db/{name}"
    return {p.removeprefix(root + "/"): info["ETag"] for p, info in fs.find(root, detail=True).items()}


def _driver_env(cluster: SparkCluster, fs_env: str | None = None) -> dict[str, str]:
    """The CLI's environment: loopback, and no S3 credentials except the ones it is given."""
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PAIMON_"))}
    base.update(AWS_CONFIG_FILE=os.devnull, AWS_SHARED_CREDENTIALS_FILE=os.devnull, AWS_EC2_METADATA_DISABLED="true")
    if fs_env is not None:
        base["PAIMON_FS_OPTIONS"] = fs_env
    return cluster.driver_env(base)


def _compact(cluster: SparkCluster, wh: str, name: str, fs_args: list[str], env: dict[str, str]) -> Any:
    return subprocess.run([sys.executable, "-m", "paimon_cli", "compact", f"db.{name}", "-w", wh, "--full",
                           "--spark-master", cluster.master_url, *cluster.spark_conf_args(), *fs_args,
                           "-o", "json"], capture_output=True, text=True, timeout=400, env=env)


def _snapshots(s3_server: S3Server, wh: str, name: str) -> list[dict[str, Any]]:
    fs = s3_server.new_s3fs()
    d = f"{wh.removeprefix('s3://')}/db.db/{name}/snapshot"
    names = sorted((p.rsplit("/", 1)[1] for p in fs.ls(d) if "/snapshot-" in p), key=lambda n: int(n.split("-")[1]))
    return [json.loads(fs.cat_file(f"{d}/{n}")) for n in names]


def test_compact_on_standalone_cluster_over_s3(spark_cluster: SparkCluster, s3_server: S3Server, java_paimon: Any,
                                               tmp_path: Path) -> None:
    wh = s3_server.fresh_warehouse("cluster")
    expected = _make_tables(s3_server, wh, tmp_path)
    fs_args = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    runs = {"pk": _compact(spark_cluster, wh, "pk", fs_args, _driver_env(spark_cluster)),
            "ev": _compact(spark_cluster, wh, "ev", [],
                           _driver_env(spark_cluster, ",".join(s3_server.fs_option_pairs())))}
    apps = {a["name"]: a for a in spark_cluster.state()["completedapps"]}
    for name, res in runs.items():
        assert res.returncode == 0, res.stderr
        (row,) = json.loads(res.stdout)
        assert row["engine"] == "spark" and row["commit_kind"] == "COMPACT"
        assert row["units"] == 4 and row["files_in"] == 16 and row["files_out"] == 4, row
        # the units ran as tasks of this application on the cluster's executors
        assert f"paimon-cli compact db.{name}" in apps
        # only the driver committed: one new snapshot after the four writes
        snaps = _snapshots(s3_server, wh, name)
        assert [s["id"] for s in snaps] == [1, 2, 3, 4, 5] and row["snapshot_id"] == 5
        assert snaps[-1]["commitKind"] == "COMPACT"
        assert snaps[-1]["commitUser"] not in {s["commitUser"] for s in snaps[:-1]}
        assert _ours(s3_server, wh, name) == expected[name]
        assert _java_reads(java_paimon, s3_server, wh, name, tmp_path / "java-copy") == expected[name]
    # both workers ran executors of each application
    for app in apps.values():
        assert {p.parent.name for p in spark_cluster.work_dir.glob(f"w*/{app['id']}")} == {"w0", "w1"}


def test_failed_task_on_cluster_keeps_table(spark_cluster: SparkCluster, s3_server: S3Server,
                                            tmp_path: Path) -> None:
    """An input file gone behind the table's back fails its task on an executor: the run
    exits as the local engine does, commits nothing and deletes what the tasks wrote."""
    wh = s3_server.fresh_warehouse("cluster-fail")
    expected = _make_tables(s3_server, wh, tmp_path)["pk"]
    fs = s3_server.new_s3fs()
    objects = _objects(s3_server, wh, "pk")
    victim = sorted(k for k in objects if "/bucket-1/data-" in k)[0]
    victim_path = f"{wh.removeprefix('s3://')}/db.db/pk/{victim}"
    victim_bytes = fs.cat_file(victim_path)
    fs.rm(victim_path)
    del objects[victim]
    fs_env = ",".join(s3_server.fs_option_pairs())
    local = subprocess.run([sys.executable, "-m", "paimon_cli", "compact", "db.pk", "-w", wh, "--full",
                            "--engine", "local"], capture_output=True, text=True, timeout=300,
                           env=_driver_env(spark_cluster, fs_env))
    assert local.returncode == 3 and _objects(s3_server, wh, "pk") == objects, local.stderr  # not found
    res = _compact(spark_cluster, wh, "pk", [], _driver_env(spark_cluster, fs_env))
    assert res.returncode == local.returncode, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and victim.rsplit("/", 1)[1] in lines[0], res.stderr
    assert _objects(s3_server, wh, "pk") == objects
    assert [s["id"] for s in _snapshots(s3_server, wh, "pk")] == [1, 2, 3, 4]
    fs.pipe_file(victim_path, victim_bytes)  # the file back: the table reads as before the run
    assert _ours(s3_server, wh, "pk") == expected


def test_executor_python_without_paimon_cli_is_named(spark_cluster: SparkCluster, s3_server: S3Server,
                                                      tmp_path: Path) -> None:
    """``spark.pyspark.python`` reaches the executors (a Python driver otherwise ignores it);
    one without paimon-cli fails the run in one line that names it, exit 1, nothing changed."""
    bare = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
    python = str(bare / "bin" / "python")
    assert subprocess.run([python, "-c", "import paimon_cli"], capture_output=True, cwd=bare).returncode != 0
    wh = s3_server.fresh_warehouse("cluster-python")
    _make_tables(s3_server, wh, tmp_path)
    objects = _objects(s3_server, wh, "ev")
    fs_env = ",".join(s3_server.fs_option_pairs())
    res = _compact(spark_cluster, wh, "ev", ["--spark-conf", f"spark.pyspark.python={python}"],
                   _driver_env(spark_cluster, fs_env))
    assert res.returncode == 1, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "the executors' Python has no paimon-cli" in lines[0] and python in lines[0], lines[0]
    assert _objects(s3_server, wh, "ev") == objects
