"""Tables Java Paimon 0.9's HiveCatalog created as EXTERNAL (catalog option
``table.type=external``) at a location outside the catalog's warehouse: we list, read,
compact, expire, assess (``health``), maintain (with its lease) and drop them (files kept)
through a real Hive Metastore 2.3.9, and Java reads every result."""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

from paimon_cli.core.catalog.hms_table import EXTERNAL_TABLE, hms_table_location, java_path
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .test_hive_catalog import cat_args, cli, cli_json, rows

COLUMNS = [("id", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")]


def test_javas_external_table_at_a_custom_location(
        hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("ext")
    elsewhere = tmp_path / "elsewhere" / f"{db}.db"  # not under the warehouse
    with client(hive_metastore) as hms:  # a database at its own location: Java puts its tables there
        hms.create_database(db, elsewhere.as_uri())
    spec = hive_spec(hive_metastore, wh, **{"table.type": "external", "lock.enabled": "true"})
    java_hive.create_table(spec, db, "t", COLUMNS, ["id", "dt"], ["dt"],
                           {"bucket": "1", "write-only": "true", "snapshot.num-retained.min": "1",
                            "snapshot.num-retained.max": "2", "snapshot.time-retained": "1 s"})
    for i in range(7):  # seven level-0 files in one bucket: more sorted runs than the compaction trigger
        java_hive.write(spec, db, "t", [{"id": j, "v": f"v{i}", "dt": "2024-01-01"} for j in range(3)])
    table_dir = elsewhere / "t"
    with client(hive_metastore) as hms:
        hms_table = hms.get_table(db, "t")
    assert hms_table.tableType == EXTERNAL_TABLE
    assert hms_table_location(hms_table) == java_path(table_dir.as_uri())
    c = cat_args(hive_metastore, wh, **{"lock.enabled": "true"})

    # listed and read where the metastore says it lives
    assert cli_json("list", db, *c) == [{"database": db, "table": "t", "type": "paimon"}]
    expected = rows(java_hive, spec, db, "t")
    assert sorted(cli_json("read", f"{db}.t", *c), key=lambda r: r["id"]) == expected
    # assessed: the sorted runs and the snapshots past retention are findings, and each fix
    # command names the catalog (a bare --warehouse would run it without the metastore and lock)
    fixes = {r["kind"]: r["fix"] for r in cli_json("health", f"{db}.t", *c)}
    assert {"sorted_runs", "snapshots"} <= set(fixes), fixes
    assert fixes["sorted_runs"].startswith(f"paimon-cli compact {db}.t --catalog-option lock.enabled=true "
                                           "--catalog-option metastore=hive")
    assert all("--warehouse" not in f for f in fixes.values()), fixes
    # maintained under its lease (in the table's own directory, outside the warehouse)
    report = tmp_path / "maintain.json"
    cli("maintain", f"{db}.t", "--report", str(report), *c)
    (table_report,) = json.loads(report.read_text())["tables"]
    assert table_report["outcome"] == "ok" and table_report["lease"]["released"] is not None
    done = {a["action"] for a in table_report["actions"] if a["outcome"] == "done"}
    assert {"compact", "expire"} <= done, table_report["actions"]
    assert table_report["score_after"] > table_report["score_before"]
    assert all("--catalog-option metastore=hive" in f["fix"] for f in table_report["findings"])
    assert not (table_dir / "maintain.lease").exists()
    assert rows(java_hive, spec, db, "t") == expected
    after = cli_json("health", f"{db}.t", *c)
    assert "sorted_runs" not in {r["kind"] for r in after}
    for finding in after:  # what is left (time passed: snapshots) is fixed by its command as printed
        if finding["fix"]:
            cli(*shlex.split(finding["fix"])[1:])
    # compacted and expired by the commands themselves
    java_hive.write(spec, db, "t", [{"id": 9, "v": "late", "dt": "2024-01-02"}])
    cli("compact", f"{db}.t", "--full", *c)
    cli("expire", f"{db}.t", "--retain-max", "1", "--retain-min", "1", "--older-than", "0s", "--yes", *c)
    expected = expected + [{"id": 9, "v": "late", "dt": "2024-01-02"}]
    assert rows(java_hive, spec, db, "t") == sorted(expected, key=_key)
    assert len(list((table_dir / "snapshot").glob("snapshot-*"))) == 1
    assert not any(wh.rglob("snapshot-*")), "nothing of the table may land in the warehouse"

    # dropped: gone from the metastore, every file kept
    files = sorted(p.relative_to(table_dir) for p in table_dir.rglob("*") if p.is_file())
    cli("drop", f"{db}.t", "--yes", *c)
    assert java_hive.list_tables(spec, db) == []
    assert sorted(p.relative_to(table_dir) for p in table_dir.rglob("*") if p.is_file()) == files
    # the kept files are the table, row for row (Java's filesystem catalog over that directory)
    assert sorted(java_hive.read(str(elsewhere.parent), db, "t", row_kind=False), key=_key) == sorted(expected, key=_key)


def _key(r: dict[str, Any]) -> tuple[str, int]:
    return r["dt"], r["id"]
