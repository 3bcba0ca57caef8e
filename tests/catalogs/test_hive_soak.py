"""The Hive catalog's lock under load: a Java Paimon 0.9 writer commits in a loop through its
HiveCatalog while our compact / expire / maintain loops (real CLI processes) work the same
table through a real Hive Metastore 2.3.9, all with ``lock.enabled=true`` (see soak.py for what
is proven). The default run is short; the ``slow`` one runs for minutes (both run in CI)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.hive_lock import HiveMetastoreLock, LockSettings
from paimon_cli.core.catalog.hive_metastore import HiveMetastoreClient
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .soak import CliLoop, JavaWriterLoop, Soak, run_cli

DAYS = ("2024-01-01", "2024-01-02")


def _probe_lock_id(server: HiveMetastoreServer, db: str) -> int:
    lock = HiveMetastoreLock(lambda: HiveMetastoreClient(server.uri), LockSettings())
    with lock.hold(db, "probe") as held:
        return held.lock_id


def _soak(server: HiveMetastoreServer, java: JavaPaimon, tmp_path: Path, seconds: float) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("soak")
    lock = {"lock.enabled": "true", "lock-check-max-sleep": "200 ms"}
    spec = hive_spec(server, wh, **lock)
    java.create_table(spec, db, "t", [("id", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
                      ["id", "dt"], ["dt"],
                      {"bucket": "2", "write-only": "true", "metastore.partitioned-table": "true",
                       "snapshot.num-retained.min": "10", "snapshot.num-retained.max": "14",
                       "snapshot.time-retained": "1 s"})
    c = ["--catalog-option", "metastore=hive", "--catalog-option", f"uri={server.uri}",
         "--catalog-option", f"warehouse={wh.as_uri()}"]
    for k, v in lock.items():
        c += ["--catalog-option", f"{k}={v}"]
    ident = f"{db}.t"
    deadline = time.monotonic() + seconds

    def make_row(i: int) -> dict[str, Any]:
        return {"id": i, "v": f"v{i}", "dt": DAYS[i % 2]}

    soak = Soak(
        wh / f"{db}.db" / "t",
        JavaWriterLoop(lambda rows: java.write(spec, db, "t", rows), make_row, deadline),
        [
            CliLoop("compact", lambda i: ["compact", ident, *(["--full"] if i % 2 else []), "-o", "json", *c],
                    deadline),
            CliLoop("expire", lambda i: ["expire", ident, "--retain-min", "10", "--retain-max", "12",
                                         "--older-than", "0s", "--yes", "-o", "json", *c], deadline),
            CliLoop("maintain", lambda i: ["maintain", ident, "--lease-ttl", "1 min", "-o", "json", *c], deadline),
        ],
    )
    first_lock = _probe_lock_id(server, db)
    soak.run()
    print(soak.summary())
    # the metastore numbers lock requests: at least one per snapshot was made meanwhile
    assert _probe_lock_id(server, db) - first_lock - 1 >= len(soak.watcher.first)
    read = run_cli(["read", ident, "-o", "json", *c])
    assert read.returncode == 0, read.stderr
    soak.check(json.loads(read.stdout), java.read(spec, db, "t", row_kind=False),
               key=lambda r: (r["dt"], r["id"]))
    with client(server) as hms:
        assert hms.show_locks(db, "t") == [], "a lock was left behind"
        # the metastore lists the partitions, as Java's own commits leave them
        assert sorted(p.values for p in hms.list_partitions(db, "t")) == [[d] for d in DAYS]
    assert not (wh / f"{db}.db" / "t" / "maintain.lease").exists()


def test_java_writer_and_our_maintenance_share_the_hive_lock(
        hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path) -> None:
    _soak(hive_metastore, java_hive, tmp_path, seconds=45)


@pytest.mark.slow
def test_java_writer_and_our_maintenance_share_the_hive_lock_for_minutes(
        hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path) -> None:
    _soak(hive_metastore, java_hive, tmp_path, seconds=180)
