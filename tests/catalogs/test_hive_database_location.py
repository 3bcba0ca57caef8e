"""A new table of a metastore database whose location is not ``<warehouse>/<db>.db`` goes under
the database's location, as Java's HiveCatalog.getTableLocation puts it (0.9 and 2.x alike:
a table the metastore lacks is ``<database locationUri>/<table>``); Java 0.9 reads it there."""

from __future__ import annotations

from pathlib import Path

from paimon_cli.core.catalog.hms_table import hms_table_location, java_path
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .test_hive_catalog import cat_args, cli, rows


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
