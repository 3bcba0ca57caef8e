"""The JDBC catalog's lock under load: a Java Paimon 0.9 writer commits in a loop through its
JdbcCatalog on SQLite while our compact / expire / maintain loops (real CLI processes) work the
same table through the same catalog database, all with ``lock.enabled=true`` (see
tests/catalogs/soak.py for what is proven). SQLite only: Java 0.9 has no PostgreSQL lock.
The default run is short; the ``slow`` one runs for minutes (both run in CI)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore
from tests.catalogs.soak import CliLoop, JavaWriterLoop, Soak, run_cli

from .java_harness import JavaPaimon, catalog_spec

pytestmark = pytest.mark.jdbc

DAYS = ("2024-01-01", "2024-01-02")


def _soak(java: JavaPaimon, tmp_path: Path, seconds: float) -> None:
    wh = tmp_path / "wh"
    wh.mkdir()
    # WAL: in SQLite's default journal mode Java's driver can hit SQLITE_BUSY and keep the file
    # locked while other processes poll it (CATALOG-FACTS)
    opts = {"metastore": "jdbc", "uri": f"jdbc:sqlite:{tmp_path / 'catalog.db'}?journal_mode=wal",
            "warehouse": str(wh), "lock.enabled": "true", "lock-check-max-sleep": "200 ms"}
    spec = catalog_spec(opts)
    # Java opens the catalog before its tables exist: Java up to 1.4 keeps a read lock on a SQLite
    # catalog whose tables existed when it opened it (test_jdbc_catalog_java.py)
    java.jdbc_list_databases(spec)
    try:
        java.create_table(spec, "soak", "t", [("id", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
                          ["id", "dt"], ["dt"],
                          {"bucket": "2", "write-only": "true", "snapshot.num-retained.min": "10",
                           "snapshot.num-retained.max": "14", "snapshot.time-retained": "1 s"})
        c: list[str] = []
        for k, v in opts.items():
            c += ["--catalog-option", f"{k}={v}"]
        deadline = time.monotonic() + seconds

        def make_row(i: int) -> dict[str, Any]:
            return {"id": i, "v": f"v{i}", "dt": DAYS[i % 2]}

        soak = Soak(
            wh / "soak.db" / "t",
            JavaWriterLoop(lambda rows: java.write(spec, "soak", "t", rows), make_row, deadline),
            [
                CliLoop("compact", lambda i: ["compact", "soak.t", *(["--full"] if i % 2 else []), "-o", "json", *c],
                        deadline),
                CliLoop("expire", lambda i: ["expire", "soak.t", "--retain-min", "10", "--retain-max", "12",
                                             "--older-than", "0s", "--yes", "-o", "json", *c], deadline),
                CliLoop("maintain", lambda i: ["maintain", "soak.t", "--lease-ttl", "1 min", "-o", "json", *c],
                        deadline),
            ],
        )
        soak.run()
        print(soak.summary())
        read = run_cli(["read", "soak.t", "-o", "json", *c])
        assert read.returncode == 0, read.stderr
        soak.check(json.loads(read.stdout), java.read(spec, "soak", "t", row_kind=False),
                   key=lambda r: (r["dt"], r["id"]))
    finally:
        java.close_catalog(spec)
    with JdbcCatalogStore.from_options(opts) as store:
        assert store.lock_holders() == [], "a lock row was left behind"
    assert not (wh / "soak.db" / "t" / "maintain.lease").exists()


def test_java_writer_and_our_maintenance_share_the_jdbc_lock(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    _soak(java_paimon, tmp_path, seconds=40)


@pytest.mark.slow
def test_java_writer_and_our_maintenance_share_the_jdbc_lock_for_minutes(
        java_paimon: JavaPaimon, tmp_path: Path) -> None:
    _soak(java_paimon, tmp_path, seconds=180)
