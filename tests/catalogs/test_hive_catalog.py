"""The Hive catalog end to end: our commands through a real Hive Metastore 2.3.9, judged by Java
Paimon 0.9's HiveCatalog (it reads every result; the metastore objects are compared with what
Java's own operations leave)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.hms_table import hms_table_location, java_path
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, comparable_partition, comparable_table, fresh_db


def cat_args(server: HiveMetastoreServer, wh: Path, **extra: str) -> list[str]:
    args = ["--catalog-option", "metastore=hive", "--catalog-option", f"uri={server.uri}",
            "--catalog-option", f"warehouse={wh.as_uri()}"]
    for k, v in extra.items():
        args += ["--catalog-option", f"{k}={v}"]
    return args


def cli(*args: str, expect: int = 0) -> Any:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == expect, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def cli_json(*args: str) -> Any:
    return json.loads(cli(*args, "-o", "json").stdout)


def rows(java: JavaPaimon, spec: str, db: str, t: str) -> list[dict[str, Any]]:
    return sorted(java.read(spec, db, t, row_kind=False), key=lambda r: (r.get("dt") or "", r["id"]))


@pytest.mark.parametrize("partitioned_table", ["true", "false"])
def test_java_tables_maintained_through_the_metastore(
    partitioned_table: str, hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path,
) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("jt")
    spec = hive_spec(hive_metastore, wh)
    opts = {"bucket": "1", "metastore.partitioned-table": partitioned_table,
            "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2", "partition.timestamp-formatter":
            "yyyy-MM-dd"}
    java_hive.create_table(spec, db, "pk", [("id", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
                           ["id", "dt"], ["dt"], opts)
    for i in range(4):
        java_hive.write(spec, db, "pk", [{"id": j, "v": f"v{i}", "dt": d}
                                         for j in range(3) for d in ("2020-01-01", "2999-01-01")])
    c = cat_args(hive_metastore, wh)
    # listed and read through the metastore
    assert [t["table"] for t in cli_json("list", db, *c)] == ["pk"]
    ours = sorted(cli_json("read", f"{db}.pk", *c), key=lambda r: (r["dt"], r["id"]))
    assert ours == rows(java_hive, spec, db, "pk")
    # compacted, tagged, expired, rolled back, partition-expired, orphan-cleaned by us
    cli("compact", f"{db}.pk", "--full", *c)
    cli("tag", "create", f"{db}.pk", "t1", *c)
    cli("expire", f"{db}.pk", "--retain-max", "1", "--retain-min", "1", "--older-than", "0s", "--yes", *c)
    java_hive.write(spec, db, "pk", [{"id": 9, "v": "late", "dt": "2999-01-01"}])
    snaps = cli_json("inspect", "snapshots", f"{db}.pk", *c)
    cli("rollback", f"{db}.pk", "--tag", "t1", "--yes", *c)
    assert len(cli_json("inspect", "snapshots", f"{db}.pk", *c)) < len(snaps) + 1
    cli("expire-partitions", f"{db}.pk", "--expiration-time", "1d", "--yes", *c)
    cli("remove-orphan-files", f"{db}.pk", "--older-than", "0s", "--force", "--yes", *c)
    expected = [{"id": j, "v": "v3", "dt": "2999-01-01"} for j in range(3)]
    assert rows(java_hive, spec, db, "pk") == expected
    assert sorted(cli_json("read", f"{db}.pk", *c), key=lambda r: r["id"]) == expected
    with client(hive_metastore) as hms:
        parts = [p.values for p in hms.list_partitions(db, "pk")]
    # the metastore's partitions are what Java's own partition expiry leaves
    assert parts == ([["2999-01-01"]] if partitioned_table == "true" else [])


def test_tables_we_create_are_java_tables(hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon,
                                          tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("ours")
    spec = hive_spec(hive_metastore, wh, **{"sync-all-properties": "true"})  # 0.9's default is false
    schema = "id INT NOT NULL, v STRING, dt STRING NOT NULL"
    opts = ["--option", "bucket=2", "--option", "metastore.partitioned-table=true"]
    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.mine", "--schema", schema, "--primary-key", "id,dt", "--partition-by", "dt", *opts, *c)
    java_hive.create_table(spec, db, "javas", [("id", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
                           ["id", "dt"], ["dt"], {"bucket": "2", "metastore.partitioned-table": "true"})
    data = tmp_path / "in.csv"
    data.write_text("id,v,dt\n1,a,2024-01-01\n2,b,2024-01-02\n")
    cli("write", f"{db}.mine", str(data), *c)
    java_hive.write(spec, db, "javas", [{"id": 1, "v": "a", "dt": "2024-01-01"}, {"id": 2, "v": "b", "dt": "2024-01-02"}])
    assert rows(java_hive, spec, db, "mine") == rows(java_hive, spec, db, "javas")
    with client(hive_metastore) as hms:
        mine, javas = hms.get_table(db, "mine"), hms.get_table(db, "javas")
        assert comparable_table(mine, drop_names=True) == comparable_table(javas, drop_names=True)
        assert [comparable_partition(p) | {"tableName": None, "sd": None} for p in hms.list_partitions(db, "mine")] \
            == [comparable_partition(p) | {"tableName": None, "sd": None} for p in hms.list_partitions(db, "javas")]
    # alter: Java sees the new column and option, the metastore object is Java's after the same alter
    cli("alter", f"{db}.mine", "--add-column", "note STRING", "--set", "snapshot.num-retained.min=3", *c)
    java_hive.alter_table(spec, db, "javas", [{"add": ["note", "STRING"]},
                                              {"set": {"snapshot.num-retained.min": "3"}}])
    with client(hive_metastore) as hms:
        assert comparable_table(hms.get_table(db, "mine"), drop_names=True) == \
            comparable_table(hms.get_table(db, "javas"), drop_names=True)
    assert [r.get("note") for r in rows(java_hive, spec, db, "mine")] == [None, None]
    # rename: Java loads the table under its new name, at the moved directory
    cli("rename", f"{db}.mine", f"{db}.mine2", *c)
    assert sorted(java_hive.list_tables(spec, db)) == ["javas", "mine2"]
    assert len(rows(java_hive, spec, db, "mine2")) == 2
    with client(hive_metastore) as hms:
        assert hms_table_location(hms.get_table(db, "mine2")) == java_path((wh / f"{db}.db" / "mine2").as_uri())
    # drop: gone for Java, files deleted (managed)
    cli("drop", f"{db}.mine2", "--yes", *c)
    assert sorted(java_hive.list_tables(spec, db)) == ["javas"]
    assert not (wh / f"{db}.db" / "mine2").exists()


def test_other_tables_are_listed_with_their_kind_and_refused(hive_metastore: HiveMetastoreServer,
                                                              tmp_path: Path) -> None:
    from pymetastore.hive_metastore import ttypes

    wh = tmp_path / "wh"
    db = fresh_db("mixed")
    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.p", "--schema", "id INT", *c)
    with client(hive_metastore) as hms:
        sd = ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema(name="x", type="int")], location=(tmp_path / "plain").as_uri(),
            inputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
            outputFormat="org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat",
            serdeInfo=ttypes.SerDeInfo(serializationLib="org.apache.hadoop.hive.ql.io.parquet.serde."
                                                        "ParquetHiveSerDe", parameters={}))
        hms.create_table(ttypes.Table(tableName="plain", dbName=db, sd=sd, partitionKeys=[], parameters={},
                                      tableType="EXTERNAL_TABLE", owner="x"))
    listed = {t["table"]: t["type"] for t in cli_json("list", db, *c)}
    assert listed == {"p": "paimon", "plain": "format-table"}
    res = cli("compact", f"{db}.plain", *c, expect=1)
    assert "is a format-table, not a Paimon table" in res.stderr
    res = cli("drop", db, "--cascade", "--yes", *c, expect=1)
    assert "format-table plain" in res.stderr


def test_metastore_down_is_exit_8_and_changes_nothing(running_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("down")
    c = cat_args(running_metastore, wh)
    cli("create", f"{db}.t", "--schema", "id INT", *c)
    before = sorted(p.relative_to(wh) for p in wh.rglob("*"))
    running_metastore.stop()
    data = tmp_path / "in.csv"
    data.write_text("id\n1\n")
    for args in (["list", db], ["write", f"{db}.t", str(data)], ["create", f"{db}.u", "--schema", "id INT"],
                 ["read", f"{db}.t"]):
        res = cli(*args, *c, expect=8)
        assert "Hive Metastore unreachable" in res.stderr and len(res.stderr.strip().splitlines()) == 1
    assert sorted(p.relative_to(wh) for p in wh.rglob("*")) == before


def test_repair_brings_the_metastore_table_back_to_the_schema(hive_metastore: HiveMetastoreServer,
                                                              tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    db = fresh_db("drift")
    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.t", "--schema", "id INT", *c)
    # an alter that reached the files but not the metastore (the filesystem catalog's view of them)
    cli("alter", f"{db}.t", "--add-column", "note STRING", "-w", str(wh))
    rows_ = cli_json("repair", f"{db}.t", "--dry-run", *c)
    assert [r["action"] for r in rows_ if r["hint"] == "metastore table"] == ["update"]
    with client(hive_metastore) as hms:
        assert [col.name for col in hms.get_table(db, "t").sd.cols] == ["id"]
    cli("repair", f"{db}.t", *c)
    with client(hive_metastore) as hms:
        assert [col.name for col in hms.get_table(db, "t").sd.cols] == ["id", "note"]
    assert not [r for r in cli_json("repair", f"{db}.t", "--dry-run", *c) if r["hint"] == "metastore table"]
