"""clone --clone-from hive (Java's clone with clone_from => 'hive'): Hive Parquet/ORC/Avro tables of a
real Hive Metastore 2.3.9 are cloned (their files COPIED) into Paimon append tables of a
filesystem warehouse, or of an S3-compatible store; our ``read`` and Java Paimon 0.9 read them
row for row as the Hive data, the Hive table and its files are unchanged, the dry run lists
exactly the copies, a re-run copies and commits nothing, and refusals change nothing."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from tests.interop.java_harness import JavaPaimon
from tests.s3_fixtures import S3Server

from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .test_hive_catalog import cat_args, cli, cli_json
from .test_hive_migrate import COLUMNS, _batch, _norm, make_hive_table


def _snapshot(path: Path) -> dict[str, str]:
    """Every file under ``path`` and its content hash (directories too): unchanged means equal."""
    return {str(p.relative_to(path)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
            for p in sorted(path.rglob("*"))}


def _kinds(server: HiveMetastoreServer, wh: Path, db: str) -> dict[str, str]:
    return {t["table"]: t["type"] for t in cli_json("list", db, *cat_args(server, wh))}


@pytest.mark.parametrize(("fmt", "partitioned"), [("parquet", True), ("orc", False), ("avro", True)],
                         ids=["parquet-partitioned", "orc-unpartitioned", "avro-partitioned"])
def test_clone_hive_table_reads_back_and_leaves_hive_alone(fmt: str, partitioned: bool,
                                                           hive_metastore: HiveMetastoreServer,
                                                           java_hive: JavaPaimon, tmp_path: Path) -> None:
    wh, target = tmp_path / "hive", tmp_path / "paimon"
    db = fresh_db("clh")
    expected = make_hive_table(hive_metastore, wh, db, "sales", fmt, partitioned=partitioned)
    c = cat_args(hive_metastore, wh)
    before = _snapshot(wh)
    args = ["clone", f"{db}.sales", "--clone-from", "hive", "--target", "bak.sales", *c,
            "--target-warehouse", str(target)]

    plan = cli_json(*args, "--dry-run")
    n = 4 if partitioned else 2
    assert len(plan) == n and all(r["state"] == "copy" and r["action"] == "create" for r in plan), plan
    assert all(r["file"].endswith(f".{fmt}") and "/bucket-0/" in r["file"] for r in plan), plan
    assert not target.exists() and _snapshot(wh) == before

    done = cli_json(*args)
    assert done[0]["files_copied"] == n and done[0]["action"] == "create"
    schema = cli_json("inspect", "schemas", "bak.sales", "-w", str(target))[-1]
    assert schema["partition_keys"] == (["dt"] if partitioned else [])
    assert schema["options"]["bucket"] == "-1" and schema["options"]["file.format"] == fmt
    names = sorted(p.name for p in target.rglob(f"*.{fmt}"))
    assert names == sorted([f"00000{i}_0.{fmt}" for i in range(2)] * (2 if partitioned else 1))
    assert _norm(cli_json("read", "bak.sales", "-w", str(target))) == _norm(expected)
    assert _norm(java_hive.read(target, "bak", "sales", row_kind=False)) == _norm(expected)
    # the Hive table is untouched: still a Hive table, every file byte for byte
    hive_kind = "hive-table" if fmt == "avro" else "format-table"  # Paimon has no Avro format table
    assert _snapshot(wh) == before and _kinds(hive_metastore, wh, db) == {"sales": hive_kind}

    # a re-run copies nothing and commits nothing
    snaps = cli_json("inspect", "snapshots", "bak.sales", "-w", str(target))
    again = cli_json(*args)
    assert again[0]["action"] == "up-to-date" and again[0]["files_copied"] == 0
    assert cli_json("inspect", "snapshots", "bak.sales", "-w", str(target)) == snaps
    # --if-exists skip leaves an existing target alone
    assert cli_json(*args, "--if-exists", "skip")[0]["action"] == "skip"


def test_clone_hive_database_where_and_overwrite(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    wh, target = tmp_path / "hive", tmp_path / "paimon"
    db = fresh_db("clhdb")
    a = make_hive_table(hive_metastore, wh, db, "a", "parquet", partitioned=True)
    make_hive_table(hive_metastore, wh, db, "b", "orc", partitioned=False)
    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.p", "--schema", "id INT", *c)  # a Paimon table: not a Hive clone source
    to = ["--target-warehouse", str(target)]
    cli("clone", db, "--clone-from", "hive", "--target", "bak", "--excluded-tables", f"{db}.b",
        "--where", "dt = '2024-01-01'", *c, *to)
    assert cli_json("list", "bak", "-w", str(target)) == [{"database": "bak", "table": "a", "type": "paimon"}]
    day1 = [r for r in a if r["dt"] == "2024-01-01"]
    assert _norm(cli_json("read", "bak.a", "-w", str(target))) == _norm(day1)
    # the other partition later: added, the first kept (an OVERWRITE of the touched partition only)
    cli("clone", f"{db}.a", "--clone-from", "hive", "--target", "bak.a", "--where", "dt = '2024-01-02'", *c, *to)
    assert _norm(cli_json("read", "bak.a", "-w", str(target))) == _norm(a)
    before = cli_json("inspect", "snapshots", "bak.a", "-w", str(target))[-1]["snapshot_id"]

    # Hive rewrites a file under the same name (an INSERT OVERWRITE): the next clone copies it
    # under a new name and never overwrites the file the earlier snapshots read
    hive_file = wh / f"{db}.db" / "a" / "dt=2024-01-01" / "000000_0"
    old_rows = pq.read_table(hive_file).to_pylist()
    new_data = _batch(900, 3)
    pq.write_table(new_data, hive_file, compression="gzip", use_dictionary=["name"])
    cli("clone", f"{db}.a", "--clone-from", "hive", "--target", "bak.a", *c, *to)
    now = [r for r in a if r not in [{**o, "dt": "2024-01-01"} for o in old_rows]]
    now += [{**r, "dt": "2024-01-01"} for r in new_data.to_pylist()]
    assert _norm(cli_json("read", "bak.a", "-w", str(target))) == _norm(now)
    assert _norm(cli_json("read", "bak.a", "-w", str(target), "--snapshot", str(before))) == _norm(a)
    again = cli_json("clone", f"{db}.a", "--clone-from", "hive", "--target", "bak.a", *c, *to)
    assert again[0]["action"] == "up-to-date" and again[0]["files_copied"] == 0
    res = cli("clone", db, "--clone-from", "hive", "--target", "bak", "--included-tables", f"{db}.p", *c, *to,
              expect=3)
    assert "no table to clone" in res.stderr and "Hive tables" in res.stderr


def test_refusals_change_nothing(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    wh, target = tmp_path / "hive", tmp_path / "paimon"
    db = fresh_db("clhno")
    make_hive_table(hive_metastore, wh, db, "csv", "text", partitioned=False)
    make_hive_table(hive_metastore, wh, db, "ts", "parquet", partitioned=False, cols=[*COLUMNS, ("at", "uniontype<int,string>")])
    make_hive_table(hive_metastore, wh, db, "acid", "orc", partitioned=False, parameters={"transactional": "true"})
    ok = make_hive_table(hive_metastore, wh, db, "ok", "parquet", partitioned=True)
    make_hive_table(hive_metastore, wh, db, "nested", "parquet", partitioned=False)
    (wh / f"{db}.db" / "nested" / "sub").mkdir()
    c = cat_args(hive_metastore, wh)
    cli("create", "bak.flat", "--schema", "id INT", "-w", str(target))
    before, before_target = _snapshot(wh), _snapshot(target)
    to = ["--clone-from", "hive", *c, "--target-warehouse", str(target)]

    # the shared Hive refusals name the command that is running, never "migration"
    res = cli("clone", f"{db}.csv", "--target", "bak.csv", *to, expect=1)
    assert "error: clone --clone-from hive: table" in res.stderr and "only Parquet, ORC and Avro" in res.stderr
    assert "migrat" not in res.stderr
    res = cli("clone", f"{db}.ts", "--target", "bak.ts", *to, expect=1)
    assert "error: clone --clone-from hive: column at has Hive type uniontype<int,string>" in res.stderr
    assert "migrat" not in res.stderr
    res = cli("clone", f"{db}.acid", "--target", "bak.acid", *to, expect=1)
    assert "error: clone --clone-from hive: table" in res.stderr and "transactional (ACID)" in res.stderr
    assert "migrat" not in res.stderr
    res = cli("clone", f"{db}.nested", "--target", "bak.nested", *to, expect=1)
    assert "error: clone --clone-from hive: table" in res.stderr and "is a subdirectory" in res.stderr
    assert "migrat" not in res.stderr
    res = cli("clone", f"{db}.ok", "--target", "bak.flat", *to, expect=4)
    assert "cannot take the Hive files" in res.stderr and "partition keys" in res.stderr
    res = cli("clone", f"{db}.ok", "--target", "bak.ok", "--prefer-file-format", "orc", *to, expect=4)
    assert "--prefer-file-format" in res.stderr
    # one refused table of a database refuses all, before anything is written
    res = cli("clone", db, "--target", "bak", *to, expect=1)
    # into the Hive catalog itself: the source, or another Hive table, is not a target
    res = cli("clone", f"{db}.ok", "--clone-from", "hive", "--target", f"{db}.ok", *c, expect=4)
    assert "the target is the source table" in res.stderr
    res = cli("clone", f"{db}.ok", "--clone-from", "hive", "--target", f"{db}.csv", *c, expect=1)
    assert "not a Paimon table" in res.stderr
    assert _snapshot(wh) == before and _snapshot(target) == before_target
    assert set(_kinds(hive_metastore, wh, db).values()) == {"format-table"}

    # a new Paimon table of the Hive catalog itself is a target
    cli("clone", f"{db}.ok", "--clone-from", "hive", "--target", f"{db}.ok_paimon", *c)
    assert _kinds(hive_metastore, wh, db)["ok_paimon"] == "paimon"
    assert _norm(cli_json("read", f"{db}.ok_paimon", *c)) == _norm(ok)


@pytest.mark.s3
def test_clone_hive_into_s3(hive_metastore: HiveMetastoreServer, s3_server: S3Server, tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy goes through the target's FileIO: a Hive table into a warehouse on S3."""
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    wh = tmp_path / "hive"
    db = fresh_db("clhs3")
    expected = make_hive_table(hive_metastore, wh, db, "t", "parquet", partitioned=True)
    c = cat_args(hive_metastore, wh)
    s3 = s3_server.fresh_warehouse("hiveclone")
    fs = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    target_fs = [a for pair in s3_server.fs_option_pairs() for a in ("--target-fs-option", pair)]
    before = _snapshot(wh)
    args = ["clone", f"{db}.t", "--clone-from", "hive", "--target", "bak.t", *c, "--target-warehouse", s3,
            *target_fs]
    assert cli_json(*args)[0]["files_copied"] == 4
    assert _norm(cli_json("read", "bak.t", "-w", s3, *fs)) == _norm(expected)
    again = cli_json(*args)
    assert again[0]["action"] == "up-to-date" and again[0]["files_copied"] == 0
    assert _snapshot(wh) == before
    # and back: the cloned (Paimon) table from S3 into a local warehouse reads the same
    back = tmp_path / "back"
    cli("clone", "bak.t", "--target", "bak.t", "-w", s3, *fs, "--target-warehouse", str(back))
    assert _norm(cli_json("read", "bak.t", "-w", str(back))) == _norm(expected)


@pytest.mark.s3
def test_clone_hive_table_stored_on_s3(hive_metastore: HiveMetastoreServer, s3_server: S3Server, tmp_path: Path,
                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """The copy reads through the source's FileIO too: a Hive table whose files are on S3 is
    cloned into a local warehouse (footers read and files copied from S3 with the source
    catalog's --fs-option); the objects on S3 are unchanged."""
    import io

    import pyarrow.parquet as pq
    from pymetastore.hive_metastore import ttypes

    from .test_hive_migrate import SERDES, _batch

    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    db = fresh_db("clhsrc")
    prefix = s3_server.fresh_warehouse("hivesrc")[len(f"s3://{s3_server.bucket}/"):]
    s3 = s3_server.boto3_client()
    expected = []
    for i in range(2):
        data = _batch(10 * i, 5 + i)
        buf = io.BytesIO()
        pq.write_table(data, buf, compression="gzip", use_dictionary=["name"])
        s3.put_object(Bucket=s3_server.bucket, Key=f"{prefix}/t/00000{i}_0", Body=buf.getvalue())
        expected += data.to_pylist()
    s3.put_object(Bucket=s3_server.bucket, Key=f"{prefix}/t/_SUCCESS", Body=b"")
    wh = tmp_path / "hive"
    serde, inp, out = SERDES["parquet"]
    with client(hive_metastore) as hms:
        hms.create_database(db, (wh / f"{db}.db").as_uri())
        sd = ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema(name=n, type=t) for n, t in COLUMNS],
            location=(wh / "t").as_uri(), inputFormat=inp, outputFormat=out,
            serdeInfo=ttypes.SerDeInfo(serializationLib=serde, parameters={}))
        hms.create_table(ttypes.Table(tableName="t", dbName=db, owner="t", sd=sd, partitionKeys=[],
                                      parameters={"EXTERNAL": "TRUE"}, tableType="EXTERNAL_TABLE"))
    # the test metastore cannot take an s3:// location (no S3 file system on its classpath: it
    # refuses create and alter): the table it returns gets the S3 location on the way in
    from paimon_cli.core.catalog import hive_clone

    real = hive_clone.hive_table

    def on_s3(catalog: Any, ident: Any, **kwargs: Any) -> Any:
        table = real(catalog, ident, **kwargs)
        table.sd.location = f"s3://{s3_server.bucket}/{prefix}/t"
        return table

    monkeypatch.setattr(hive_clone, "hive_table", on_s3)
    fs = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    c = cat_args(hive_metastore, wh)
    objects = sorted((o["Key"], o["ETag"]) for o in s3.list_objects_v2(
        Bucket=s3_server.bucket, Prefix=prefix)["Contents"])
    target = tmp_path / "paimon"
    done = cli_json("clone", f"{db}.t", "--clone-from", "hive", "--target", "bak.t", *c, *fs,
                    "--target-warehouse", str(target))
    assert done[0]["files_copied"] == 2
    assert _norm(cli_json("read", "bak.t", "-w", str(target))) == _norm(expected)
    assert sorted((o["Key"], o["ETag"]) for o in s3.list_objects_v2(
        Bucket=s3_server.bucket, Prefix=prefix)["Contents"]) == objects


@pytest.mark.parametrize("partitioned_table", ["true", "false"])
def test_clone_into_a_hive_catalog_is_read_by_java(partitioned_table: str, hive_metastore: HiveMetastoreServer,
                                                   java_hive: JavaPaimon, tmp_path: Path) -> None:
    """A Hive catalog as clone TARGET (Paimon source): the table (and its schema history) is
    registered in the metastore, its partitions too with metastore.partitioned-table, and Java
    0.9's HiveCatalog lists and reads it row for row; a whole-catalog clone lands every table
    under its own name; the dry run lists exactly the copies; a re-run commits nothing."""
    from .conftest import hive_spec
    from .test_hive_catalog import rows

    src, wh = str(tmp_path / "src"), tmp_path / "hwh"
    db, other = fresh_db("clt"), fresh_db("clu")
    t = [a.replace("--catalog-option", "--target-catalog-option") for a in cat_args(hive_metastore, wh)]
    data = tmp_path / "in.csv"
    cli("create", f"{db}.pk", "--schema", "id INT NOT NULL, v STRING, dt STRING NOT NULL", "--primary-key",
        "id,dt", "--partition-by", "dt", "--option", "bucket=2", "--option", "deletion-vectors.enabled=true",
        "--option", f"metastore.partitioned-table={partitioned_table}", "-w", src)
    data.write_text("id,v,dt\n1,a,x\n2,b,x\n3,c,y\n")
    cli("write", f"{db}.pk", str(data), "-w", src)
    cli("alter", f"{db}.pk", "--add-column", "w INT", "-w", src)
    data.write_text("id,v,dt,w\n1,A,x,7\n4,d,y,8\n")
    cli("write", f"{db}.pk", str(data), "-w", src)
    cli("compact", f"{db}.pk", "--full", "-w", src)
    cli("create", f"{other}.ev", "--schema", "id INT, v STRING", "-w", src)
    data.write_text("id,v\n5,e\n")
    cli("write", f"{other}.ev", str(data), "-w", src)
    want = sorted(cli_json("read", f"{db}.pk", "-w", src), key=lambda r: (r["dt"], r["id"]))

    args = ["clone", f"{db}.pk", "--target", f"{db}.pk", *t, "--target-table-conf", "snapshot.num-retained.max=20",
            "-w", src]
    plan = cli_json(*args, "--dry-run")
    assert {r["action"] for r in plan} == {"create"} and not wh.exists()
    [row] = cli_json(*args)
    assert row["action"] == "create" and row["files_copied"] == len(plan)
    copied = {str(p) for p in (wh / f"{db}.db" / "pk").rglob("*")
              if p.name.startswith(("data-", "index-")) and "manifest" not in p.parts}
    assert copied == {r["file"] for r in plan}
    spec = hive_spec(hive_metastore, wh)
    assert java_hive.list_tables(spec, db) == ["pk"]
    assert rows(java_hive, spec, db, "pk") == want
    hms = client(hive_metastore)
    parts = sorted(p.values[0] for p in hms.list_partitions(db, "pk"))
    assert parts == (["x", "y"] if partitioned_table == "true" else [])
    schema = cli_json("inspect", "schemas", f"{db}.pk", *cat_args(hive_metastore, wh))[-1]
    assert schema["options"]["snapshot.num-retained.max"] == "20" and [f["name"] for f in schema["fields"]][-1] == "w"
    [again] = cli_json(*args)
    assert again["action"] == "up-to-date" and again["snapshot_id"] is None

    # the whole catalog into the metastore, each table under its own name
    done = cli_json("clone", *t, "-w", src)
    assert [r["target"] for r in done] == sorted([f"{db}.pk", f"{other}.ev"])
    assert java_hive.list_tables(spec, other) == ["ev"]
    assert java_hive.read(spec, other, "ev", row_kind=False) == [{"id": 5, "v": "e"}]
    assert rows(java_hive, spec, db, "pk") == want


def test_hive_clone_with_target_table_conf(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    wh, target = tmp_path / "hive", tmp_path / "paimon"
    db = fresh_db("clhc")
    expected = make_hive_table(hive_metastore, wh, db, "sales", "parquet", partitioned=True)
    args = ["clone", f"{db}.sales", "--clone-from", "hive", "--target", "bak.sales", *cat_args(hive_metastore, wh),
            "--target-warehouse", str(target)]
    res = cli(*args, "--target-table-conf", "file.format=orc", expect=6)
    assert "file.format" in res.stderr and not target.exists()
    cli_json(*args, "--target-table-conf", "snapshot.num-retained.max=20")
    schema = cli_json("inspect", "schemas", "bak.sales", "-w", str(target))[-1]
    assert schema["options"]["snapshot.num-retained.max"] == "20" and schema["options"]["bucket"] == "-1"
    assert _norm(cli_json("read", "bak.sales", "-w", str(target))) == _norm(expected)
