"""The Spark engine for real: compaction units as tasks on a local Spark session, read back by Java.

Why: large tables are compacted on a cluster; the same code path must run in CI. One Spark
session (``local[2]``) is shared by the in-process tests (the engine reuses an active
session and leaves it running); one CLI test starts its own ``local[1]`` session the way a
user's cron job does. Java Paimon 0.9 (the harness) checks that what the Spark tasks wrote
and the driver committed reads exactly as before and keeps working under Java's own writes
and compactions.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.compact.plan import plan_compaction
from paimon_cli.core.compact.write_job import write_table_result
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import PaimonError
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.table_schema import Schema

pytestmark = [pytest.mark.java, pytest.mark.slow]
_n = itertools.count()


@pytest.fixture(scope="module")
def java(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from tests.interop.java_harness import JavaPaimon

    base = tmp_path_factory.mktemp("java-spark")
    jp = JavaPaimon.start(log_path=base / "jvm.log", temp_dir=base / "io")
    try:
        yield jp
    finally:
        jp.close()


def put(table: Any, tmp_path: Path, rows: list[dict[str, Any]]) -> None:
    p = tmp_path / f"in{next(_n)}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), p)
    write_table_result(table, [str(p)], options={"write-only": "true"})


def ours(table: Any) -> list[tuple[Any, ...]]:
    t = FileSystemCatalog(table.file_io.root).get_table(str(table.identifier))
    return sorted(tuple(r.values()) for r in TableRead(t).to_arrow().to_pylist())


def theirs(java: Any, wh: str, name: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in java.read(wh, "db", name, row_kind=False))


def test_spark_full_compaction_java_reads_same_rows(spark: Any, java: Any, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_table("db.t", Schema.of(parse_columns("id INT NOT NULL, dt STRING NOT NULL, v STRING"),
                                       primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "4"}))
    t = cat.get_table("db.t")
    for r in range(5):
        put(t, tmp_path, [{"id": i, "dt": dt, "v": f"{r}-{i}"} for dt in ("x", "y") for i in range(r * 20, 400)])
    before = theirs(java, wh, "t")
    assert before == ours(t) and len(before) == 800
    res = compact_table(t, full=True, engine="spark")
    assert res.engine == "spark" and res.engine_reason == "--engine spark"
    assert res.commit_kind == "COMPACT" and res.units == 8 and res.files_in == 40
    assert theirs(java, wh, "t") == before == ours(t)
    t = cat.get_table("db.t")
    assert all(e.file.level == 5 for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot()))
    # Java keeps writing and compacting the table
    java.write(wh, "db", "t", [{"id": 1, "dt": "x", "v": "java"}, {"id": 999, "dt": "y", "v": "java"}])
    java.compact(wh, "db", "t", full=True)
    after = dict(((i, d), v) for i, d, v in before)
    after.update({(1, "x"): "java", (999, "y"): "java"})
    assert theirs(java, wh, "t") == sorted((i, d, v) for (i, d), v in after.items()) == ours(t)


def test_spark_minor_compaction_of_java_table(spark: Any, java: Any, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    java.create_table(wh, "db", "j", [("id", "INT NOT NULL"), ("v", "STRING")], primary_keys=["id"],
                      options={"bucket": "3", "write-only": "true", "num-sorted-run.compaction-trigger": "3"})
    for r in range(5):
        java.write(wh, "db", "j", [{"id": i, "v": f"{r}"} for i in range(r, 60, r + 1)])
    before = theirs(java, wh, "j")
    t = FileSystemCatalog(wh).get_table("db.j")
    plan = plan_compaction(t)
    assert len(plan.units) == 3
    res = compact_table(t, engine="spark", spark_master="local[2]", parallelism=2)
    assert res.engine == "spark" and res.snapshot_id == 6 and res.commit_kind == "COMPACT"
    assert theirs(java, wh, "j") == before == ours(t)
    java.write(wh, "db", "j", [{"id": 0, "v": "last"}])
    java.compact(wh, "db", "j", full=True)
    assert dict(theirs(java, wh, "j")) == {**dict(before), 0: "last"}


def test_failed_task_cleans_up_and_keeps_error_class(spark: Any, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_table("db.f", Schema.of(parse_columns("id INT NOT NULL, v STRING"), primary_keys=["id"],
                                       options={"bucket": "4"}))
    t = cat.get_table("db.f")
    for r in range(6):
        put(t, tmp_path, [{"id": i, "v": str(r)} for i in range(100)])
    on_disk = {p.name for p in Path(t.path).rglob("data-*")}
    # one bucket loses an input file after planning: its task fails, the others succeed
    victim = next(Path(t.path).glob("bucket-0/data-*"))
    victim.unlink()
    with pytest.raises(PaimonError) as err:
        compact_table(t, engine="spark")
    assert victim.name in str(err.value) or "bucket-0" in str(err.value) or "No such file" in str(err.value)
    assert {p.name for p in Path(t.path).rglob("data-*")} == on_disk - {victim.name}
    assert t.snapshot_manager.latest_snapshot_id() == 6


def test_cli_spark_engine_own_session(tmp_path: Path) -> None:
    """The CLI starts and stops its own session; stderr stays one summary line."""
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_table("db.c", Schema.of(parse_columns("id INT NOT NULL, v STRING"), primary_keys=["id"],
                                       options={"bucket": "2"}))
    t = cat.get_table("db.c")
    for r in range(5):
        put(t, tmp_path, [{"id": i, "v": str(r)} for i in range(50)])
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    res = subprocess.run([sys.executable, "-m", "paimon_cli", "compact", "db.c", "-w", wh, "--full",
                          "--spark-master", "local[1]", "--spark-conf", "spark.sql.shuffle.partitions=2",
                          "-o", "json"], capture_output=True, text=True, timeout=300, env=env)
    assert res.returncode == 0, res.stderr
    (row,) = json.loads(res.stdout)
    assert row["engine"] == "spark" and row["engine_reason"] == "Spark options were given"
    assert row["snapshot_id"] == 6 and row["units"] == 2
    assert res.stderr.strip().count("\n") == 0 and res.stderr.startswith("compact: compacted 2 unit(s)")
    assert sorted(tuple(r.values()) for r in TableRead(cat.get_table("db.c")).to_arrow().to_pylist()) == [
        (i, "4") for i in range(50)]
