"""A new table of a metastore database whose location is not ``<warehouse>/<db>.db`` goes under
the database's location, as Java's HiveCatalog.getTableLocation puts it (0.9 and 2.x alike:
a table the metastore lacks is ``<database locationUri>/<table>``); Java 0.9 reads it there."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paimon_cli.core.catalog.hive import HiveCatalog
from paimon_cli.core.catalog.hms_table import hms_table_location, java_path
from paimon_cli.core.catalog.options import CatalogOptions
from paimon_cli.core.io import fileio
from paimon_cli.core.table.identifiers import Identifier
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .test_hive_catalog import cat_args, cli, cli_json, rows


def test_new_table_goes_under_the_database_location(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    wh, custom = tmp_path / "wh", tmp_path / "elsewhere" / "dbdir"
    wh.mkdir()
    custom.mkdir(parents=True)
    db = fresh_db("loc")
    with client(hive_metastore) as hms:
        hms.create_database(db, custom.as_uri())
    spec = hive_spec(hive_metastore, wh)
    java_hive.create_table(spec, db, "javas", [("id", "INT")], [], [], {"bucket": "-1"})
    java_hive.write(spec, db, "javas", [{"id": 1}, {"id": 2}])
    assert java_path(java_hive.table_location(spec, db, "javas")) == java_path((custom / "javas").as_uri())

    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.mine", "--schema", "id INT", "--option", "bucket=-1", *c)
    data = tmp_path / "in.csv"
    data.write_text("id\n1\n2\n")
    cli("write", f"{db}.mine", str(data), *c)

    with client(hive_metastore) as hms:
        location = hms_table_location(hms.get_table(db, "mine"))
    assert location == java_path((custom / "mine").as_uri())
    assert (custom / "mine" / "schema" / "schema-0").is_file()
    assert not (wh / f"{db}.db").exists()
    assert java_path(java_hive.table_location(spec, db, "mine")) == location
    assert rows(java_hive, spec, db, "mine") == rows(java_hive, spec, db, "javas")
    # and the rename moves it within the database's location, as the metastore moves Java's
    cli("rename", f"{db}.mine", f"{db}.mine2", *c)
    with client(hive_metastore) as hms:
        assert hms_table_location(hms.get_table(db, "mine2")) == java_path((custom / "mine2").as_uri())
    assert rows(java_hive, spec, db, "mine2") == rows(java_hive, spec, db, "javas")


def _custom_db(hive_metastore: HiveMetastoreServer, tmp_path: Path, prefix: str) -> tuple[str, Path, Path]:
    """A metastore database at ``<tmp>/elsewhere-<db>`` (created elsewhere), and the empty
    ``<warehouse>/<db>.db`` folder that is not its folder (it must be left alone)."""
    db = fresh_db(prefix)
    wh, custom = tmp_path / "wh", tmp_path / f"elsewhere-{db}"
    custom.mkdir()
    (wh / f"{db}.db").mkdir(parents=True)
    with client(hive_metastore) as hms:
        hms.create_database(db, custom.as_uri())
    return db, wh, custom


def test_drop_database_removes_the_database_location_as_java(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    # Java 0.9: its dropDatabaseImpl has the metastore drop the database with its data, i.e.
    # the database's locationUri; the warehouse's <db>.db folder is not the database's
    jdb, wh, jcustom = _custom_db(hive_metastore, tmp_path, "jdrop")
    spec = hive_spec(hive_metastore, wh)
    java_hive.create_table(spec, jdb, "t", [("id", "INT")], [], [], {"bucket": "-1"})
    java_hive.write(spec, jdb, "t", [{"id": 1}])
    java_hive.drop_database(spec, jdb, cascade=True)
    assert not jcustom.exists()
    assert (wh / f"{jdb}.db").is_dir()

    db, wh, custom = _custom_db(hive_metastore, tmp_path, "drop")
    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.t", "--schema", "id INT", "--option", "bucket=-1", *c)
    data = tmp_path / "in.csv"
    data.write_text("id\n1\n")
    cli("write", f"{db}.t", str(data), *c)
    assert (custom / "t" / "schema" / "schema-0").is_file()
    cli("drop", db, "--cascade", "--yes", *c)
    with client(hive_metastore) as hms:
        assert db not in hms.list_databases()
    assert not custom.exists()  # as Java: the database's own folder goes
    assert (wh / f"{db}.db").is_dir()  # and nothing else


def test_repair_lists_the_tables_under_the_database_location(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    # Java's repairDatabase lists the tables under the database's locationUri
    db, wh, custom = _custom_db(hive_metastore, tmp_path, "rep")
    c = cat_args(hive_metastore, wh)
    cli("create", f"{db}.t", "--schema", "id INT", "--option", "bucket=-1", *c)
    data = tmp_path / "in.csv"
    data.write_text("id\n1\n2\n")
    cli("write", f"{db}.t", str(data), *c)
    with client(hive_metastore) as hms:
        hms.drop_table(db, "t", delete_data=False)  # on storage, forgotten by the metastore
    # a Paimon table in the warehouse's <db>.db folder, which is not this database's
    cli("create", f"{db}.decoy", "--schema", "id INT", "-w", str(wh))
    assert cli_json("list", db, *c) == []

    cli("repair", db, *c)
    assert [t["table"] for t in cli_json("list", db, *c)] == ["t"]
    spec = hive_spec(hive_metastore, wh)
    assert java_hive.list_tables(spec, db) == ["t"]
    assert java_path(java_hive.table_location(spec, db, "t")) == java_path((custom / "t").as_uri())
    assert [r["id"] for r in rows(java_hive, spec, db, "t")] == [1, 2]


class _NoLocationMetastore:
    """A metastore answering for a database that holds no ``locationUri`` (Hive 2.3 always
    fills one in; an older or foreign metastore may not)."""

    def __init__(self) -> None:
        self.dropped: list[str] = []

    def get_database(self, name: str) -> Any:
        from pymetastore.hive_metastore import ttypes

        return ttypes.Database(name=name, locationUri=None, parameters={})

    def list_tables(self, database: str) -> list[str]:
        return []

    def drop_database(self, name: str, *, delete_data: bool, cascade: bool) -> None:
        self.dropped.append(name)

    def close(self) -> None:
        pass


def test_a_database_without_location(tmp_path: Path) -> None:
    # Java: a new table falls back to <warehouse>/<db>.db/<table> (getTableLocation's null
    # case); its repairDatabase and dropDatabaseImpl fail on it: we list no folder for it and
    # delete none, so the warehouse's <db>.db (not shown to be the database's) is left alone
    wh = tmp_path / "wh"
    cli("create", "nol.t", "--schema", "id INT", "-w", str(wh))
    cat = HiveCatalog(CatalogOptions({"metastore": "hive", "uri": "thrift://127.0.0.1:1", "warehouse": wh.as_uri()}))
    fake = _NoLocationMetastore()
    cat._client = fake  # type: ignore[assignment]
    assert cat.new_table_location(Identifier("nol", "u")) == fileio.join(wh.as_uri(), "nol.db", "u")
    assert cat.storage_tables("nol") == []
    (wh / "nol.db" / "t").rename(tmp_path / "t")  # leave the folder empty: only its emptiness saved it before
    cat.drop_database("nol")
    assert fake.dropped == ["nol"]
    assert (wh / "nol.db").is_dir()
