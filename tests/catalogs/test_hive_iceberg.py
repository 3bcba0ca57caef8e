"""``metadata.iceberg.storage=hive-catalog`` against a real Hive Metastore: after every command
that writes Iceberg metadata (write, compact, expire, rollback), the metastore table points at
the newest ``vN.metadata.json`` (Java ``IcebergHiveMetadataCommitter``), and pyiceberg's own Hive
catalog loads the table by name and reads the rows our ``read`` returns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pyiceberg.catalog.hive import HiveCatalog as IcebergHiveCatalog
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .rest_helpers import isolate
from .rest_server import RestCatalogServer

SCHEMA = "id BIGINT NOT NULL, v STRING"


def run(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def ok(*args: str) -> Any:
    res = run(*args)
    assert res.exit_code == 0, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def write(csv_dir: Path, ident: str, ids: list[int], *cat: str) -> None:
    f = csv_dir / f"in-{'-'.join(map(str, ids))}.csv"
    f.write_text("id,v\n" + "".join(f"{i},v{i}\n" for i in ids))
    ok("write", ident, str(f), *cat)


def hms_params(server: HiveMetastoreServer, db: str, table: str) -> dict[str, str]:
    with client(server) as hms:
        return dict(hms.get_table(db, table).parameters or {})


def iceberg_ids(server: HiveMetastoreServer, db: str, table: str) -> list[int]:
    cat = IcebergHiveCatalog("hms", uri=server.uri)
    return sorted(cat.load_table((db, table)).scan().to_arrow().column("id").to_pylist())


def our_ids(ident: str, *cat: str) -> list[int]:
    return sorted(r["id"] for r in json.loads(ok("read", ident, "-o", "json", *cat).stdout))


def newest_metadata(metadata_dir: Path) -> str:
    versions = sorted(int(p.name[1:].split(".")[0]) for p in metadata_dir.glob("v*.metadata.json"))
    return f"file:{metadata_dir}/v{versions[-1]}.metadata.json"


def check_step(server: HiveMetastoreServer, db: str, table: str, metadata_dir: Path, previous: str | None,
               ident: str, *cat: str) -> str:
    """The metastore points at the newest version (and at ``previous`` before it); pyiceberg
    reads through its Hive catalog exactly our rows. Returns the current metadata location."""
    params = hms_params(server, db, table)
    assert params["table_type"] == "ICEBERG"
    assert params["metadata_location"] == newest_metadata(metadata_dir)
    if previous is not None and previous != params["metadata_location"]:
        assert params["previous_metadata_location"] == previous
    assert iceberg_ids(server, db, table) == our_ids(ident, *cat)
    return params["metadata_location"]


def maintain_and_check(server: HiveMetastoreServer, tmp_path: Path, db: str, hms_db: str, hms_table: str,
                       metadata_dir: Path, *cat: str) -> None:
    ident = f"{db}.t"
    write(tmp_path, ident, [1, 2], *cat)
    loc = check_step(server, hms_db, hms_table, metadata_dir, None, ident, *cat)
    assert loc.endswith("/v1.metadata.json") and "previous_metadata_location" not in hms_params(
        server, hms_db, hms_table)
    write(tmp_path, ident, [3], *cat)
    loc = check_step(server, hms_db, hms_table, metadata_dir, loc, ident, *cat)
    assert loc.endswith("/v2.metadata.json")
    ok("compact", ident, "--full", *cat)
    loc = check_step(server, hms_db, hms_table, metadata_dir, loc, ident, *cat)
    assert loc.endswith("/v3.metadata.json")
    write(tmp_path, ident, [4], *cat)
    loc = check_step(server, hms_db, hms_table, metadata_dir, loc, ident, *cat)
    assert loc.endswith("/v4.metadata.json")
    ok("expire", ident, "--retain-max", "2", "--retain-min", "2", "--older-than", "0s", "--yes", *cat)
    assert [s["snapshot_id"] for s in json.loads(ok("inspect", "snapshots", ident, "-o", "json", *cat).stdout)] \
        == [3, 4]
    loc = check_step(server, hms_db, hms_table, metadata_dir, loc, ident, *cat)
    assert loc.endswith("/v4.metadata.json")
    ok("rollback", ident, "--snapshot", "3", "--yes", *cat)
    loc = check_step(server, hms_db, hms_table, metadata_dir, loc, ident, *cat)
    assert loc.endswith("/v3.metadata.json")
    assert hms_params(server, hms_db, hms_table)["previous_metadata_location"].endswith("/v4.metadata.json")
    assert our_ids(ident, *cat) == [1, 2, 3]


def test_hive_catalog_table_registered_after_every_command(hive_metastore: HiveMetastoreServer,
                                                           java_hive: JavaPaimon, tmp_path: Path) -> None:
    """Served by our Hive catalog on the same metastore, under the Paimon identifier: the Paimon
    table's own entry becomes ``table_type=ICEBERG`` (as Java 2.x) and stays a Paimon table, for
    us and for Java Paimon 0.9's HiveCatalog."""
    wh = tmp_path / "wh"
    db = fresh_db("ice")
    cat = ("--catalog-option", "metastore=hive", "--catalog-option", f"uri={hive_metastore.uri}",
           "--catalog-option", f"warehouse={wh.as_uri()}")
    ok("create", f"{db}.t", "--schema", SCHEMA, "--option", "bucket=-1",
       "--option", "metadata.iceberg.storage=hive-catalog", *cat)
    metadata_dir = wh / "iceberg" / db / "t" / "metadata"
    maintain_and_check(hive_metastore, tmp_path, db, db, "t", metadata_dir, *cat)
    with client(hive_metastore) as hms:
        entry = hms.get_table(db, "t")
    assert entry.sd.inputFormat == "org.apache.paimon.hive.mapred.PaimonInputFormat"  # still our Paimon table
    assert [t["table"] for t in json.loads(ok("list", db, "-o", "json", *cat).stdout)] == ["t"]
    java_rows = java_hive.read(hive_spec(hive_metastore, wh), db, "t", row_kind=False)
    assert sorted(r["id"] for r in java_rows) == our_ids(f"{db}.t", *cat) == [1, 2, 3]


def test_filesystem_table_registered_under_its_iceberg_names(hive_metastore: HiveMetastoreServer,
                                                             tmp_path: Path) -> None:
    """A filesystem-catalog table with ``metadata.iceberg.uri`` (and its own Iceberg names): the
    database and an EXTERNAL ``table_type=ICEBERG`` table are created as Java creates them."""
    wh = tmp_path / "wh"
    hms_db = fresh_db("iceberg")
    cat = ("--warehouse", str(wh))
    ok("create", "db.t", "--schema", SCHEMA, "--option", "bucket=-1",
       "--option", "metadata.iceberg.storage=hive-catalog", "--option", f"metadata.iceberg.uri={hive_metastore.uri}",
       "--option", f"metadata.iceberg.database={hms_db}", "--option", "metadata.iceberg.table=ice_t", *cat)
    metadata_dir = wh / "iceberg" / "db" / "t" / "metadata"
    maintain_and_check(hive_metastore, tmp_path, "db", hms_db, "ice_t", metadata_dir, *cat)
    with client(hive_metastore) as hms:
        entry = hms.get_table(hms_db, "ice_t")
        database = hms.get_database(hms_db)
    assert entry.tableType == "EXTERNAL_TABLE"
    # (DO_NOT_UPDATE_STATS is a request to the metastore, which consumes it rather than keeping it)
    assert {k: entry.parameters.get(k) for k in ("EXTERNAL", "table_type")} == {"EXTERNAL": "TRUE",
                                                                               "table_type": "ICEBERG"}
    assert entry.sd.location == f"file:{wh}/iceberg/db/t"
    assert (entry.sd.inputFormat, entry.sd.outputFormat, entry.sd.serdeInfo.serializationLib) == (
        "org.apache.hadoop.mapred.FileInputFormat", "org.apache.hadoop.mapred.FileOutputFormat",
        "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe")
    assert [(c.name, c.type) for c in entry.sd.cols] == [("id", "bigint"), ("v", "string")]
    assert database.locationUri == f"file:{wh}/iceberg/db"


def test_a_non_iceberg_metastore_table_of_that_name_is_refused(hive_metastore: HiveMetastoreServer,
                                                               tmp_path: Path) -> None:
    """The registration would overwrite another Paimon table's entry: refused before the commit
    (exit 6), nothing committed, the entry untouched."""
    wh = tmp_path / "wh"
    db = fresh_db("clash")
    hive_cat = ("--catalog-option", "metastore=hive", "--catalog-option", f"uri={hive_metastore.uri}",
                "--catalog-option", f"warehouse={(tmp_path / 'hwh').as_uri()}")
    ok("create", f"{db}.other", "--schema", SCHEMA, *hive_cat)
    with client(hive_metastore) as hms:
        before = hms.get_table(db, "other").parameters
    cat = ("--warehouse", str(wh))
    ok("create", "db.t", "--schema", SCHEMA, "--option", "bucket=-1",
       "--option", "metadata.iceberg.storage=hive-catalog", "--option", f"metadata.iceberg.uri={hive_metastore.uri}",
       "--option", f"metadata.iceberg.database={db}", "--option", "metadata.iceberg.table=other", *cat)
    f = tmp_path / "in.csv"
    f.write_text("id,v\n1,a\n")
    res = run("write", "db.t", str(f), *cat)
    assert res.exit_code == 6, res.output
    assert f"Hive Metastore table {db}.other" in res.stderr and "not an Iceberg table" in res.stderr, res.stderr
    assert not (wh / "db.db" / "t" / "snapshot").exists() or not list((wh / "db.db" / "t" / "snapshot").iterdir())
    assert not (wh / "iceberg").exists()
    with client(hive_metastore) as hms:
        assert hms.get_table(db, "other").parameters == before


def test_another_iceberg_table_of_that_name_is_refused(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    """An Iceberg table whose metadata lives elsewhere (here: another Paimon table's) is not
    repointed at ours, as Java would: refused before the commit, its pointer kept."""
    db = fresh_db("twice")
    f = tmp_path / "in.csv"
    f.write_text("id,v\n1,a\n")
    opts = ("--option", "bucket=-1", "--option", "metadata.iceberg.storage=hive-catalog",
            "--option", f"metadata.iceberg.uri={hive_metastore.uri}", "--option", f"metadata.iceberg.database={db}",
            "--option", "metadata.iceberg.table=shared")
    first, second = ("--warehouse", str(tmp_path / "wh1")), ("--warehouse", str(tmp_path / "wh2"))
    ok("create", "db.t", "--schema", SCHEMA, *opts, *first)
    ok("write", "db.t", str(f), *first)
    before = hms_params(hive_metastore, db, "shared")
    assert before["metadata_location"] == f"file:{tmp_path}/wh1/iceberg/db/t/metadata/v1.metadata.json"
    ok("create", "db.t", "--schema", SCHEMA, *opts, *second)
    res = run("write", "db.t", str(f), *second)
    assert res.exit_code == 6, res.output
    assert "is another Iceberg table" in res.stderr, res.stderr
    assert our_ids("db.t", *second) == [] and not (tmp_path / "wh2" / "iceberg").exists()
    assert hms_params(hive_metastore, db, "shared") == before
    assert iceberg_ids(hive_metastore, db, "shared") == [1]


def test_registered_in_every_database_listed(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    """Java 2.x's ``metadata.iceberg.database=a;b``: one metastore table per database."""
    wh = tmp_path / "wh"
    first, second = fresh_db("one"), fresh_db("two")
    cat = ("--warehouse", str(wh))
    ok("create", "db.t", "--schema", SCHEMA, "--option", "bucket=-1",
       "--option", "metadata.iceberg.storage=hive-catalog", "--option", f"metadata.iceberg.uri={hive_metastore.uri}",
       "--option", f"metadata.iceberg.database={first};{second}", *cat)
    write(tmp_path, "db.t", [1, 2], *cat)
    write(tmp_path, "db.t", [3], *cat)
    for db in (first, second):
        params = hms_params(hive_metastore, db, "t")
        assert params["metadata_location"] == f"file:{wh}/iceberg/db/t/metadata/v2.metadata.json"
        assert params["previous_metadata_location"] == f"file:{wh}/iceberg/db/t/metadata/v1.metadata.json"
        assert iceberg_ids(hive_metastore, db, "t") == [1, 2, 3]


def test_a_registration_lost_after_the_commit_is_made_by_the_next(hive_metastore: HiveMetastoreServer,
                                                                  tmp_path: Path, monkeypatch: Any) -> None:
    """The metastore fails after the snapshot is published (it answered the check before):
    the commit stays, the error names it, and the next commit registers its own version."""
    from paimon_cli.core.catalog.iceberg_hive import HiveIcebergCommitter
    from paimon_cli.core.errors import CatalogUnavailable

    wh = tmp_path / "wh"
    db = fresh_db("lost")
    cat = ("--warehouse", str(wh))
    ok("create", "db.t", "--schema", SCHEMA, "--option", "bucket=-1",
       "--option", "metadata.iceberg.storage=hive-catalog", "--option", f"metadata.iceberg.uri={hive_metastore.uri}",
       "--option", f"metadata.iceberg.database={db}", *cat)

    def down(self: Any, metadata_path: str) -> None:
        raise CatalogUnavailable("Hive Metastore went away")

    with monkeypatch.context() as m:
        m.setattr(HiveIcebergCommitter, "commit_metadata", down)
        f = tmp_path / "in.csv"
        f.write_text("id,v\n1,a\n")
        res = run("write", "db.t", str(f), *cat)
    assert res.exit_code == 1, res.output
    assert "snapshot 1 was committed" in res.stderr and "Hive Metastore went away" in res.stderr, res.stderr
    with client(hive_metastore) as hms:
        assert hms.find_table(db, "t") is None
    write(tmp_path, "db.t", [2], *cat)
    assert hms_params(hive_metastore, db, "t")["metadata_location"].endswith("/v2.metadata.json")
    assert iceberg_ids(hive_metastore, db, "t") == our_ids("db.t", *cat) == [1, 2]


def test_rest_catalog_table_registered_in_its_metastore(hive_metastore: HiveMetastoreServer, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A table the REST catalog serves registers through ``metadata.iceberg.uri`` too: Java's
    callback registers whatever catalog serves the table."""
    isolate(tmp_path, monkeypatch)
    hms_db = fresh_db("rest_ice")
    with RestCatalogServer(tmp_path / "root") as server:
        cat = tuple(x for k, v in server.client_options().items() for x in ("--catalog-option", f"{k}={v}"))
        ok("create", "db.t", "--schema", SCHEMA, "--option", "bucket=-1",
           "--option", "metadata.iceberg.storage=hive-catalog", "--option", f"metadata.iceberg.uri={hive_metastore.uri}",
           "--option", f"metadata.iceberg.database={hms_db}", *cat)
        write(tmp_path, "db.t", [1, 2], *cat)
        write(tmp_path, "db.t", [3], *cat)
        (metadata_dir,) = (tmp_path / "root").rglob("iceberg/db/t/metadata")
        loc = check_step(hive_metastore, hms_db, "t", metadata_dir, None, "db.t", *cat)
        assert loc.endswith("/v2.metadata.json")
        assert hms_params(hive_metastore, hms_db, "t")["previous_metadata_location"].endswith("/v1.metadata.json")
        assert iceberg_ids(hive_metastore, hms_db, "t") == [1, 2, 3]
