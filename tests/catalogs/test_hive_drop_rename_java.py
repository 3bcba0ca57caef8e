"""What Java 0.9's HiveCatalog does to the metastore and the files on rename and drop, managed
and external (facts a catalog on our side must reproduce), and our client getting the same
result with the same metastore calls."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest

from paimon_cli.core.catalog.hms_table import hms_table_location, is_external, java_path
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db


def _make(java_hive: JavaPaimon, spec: str, db: str, name: str) -> None:
    java_hive.create_table(spec, db, name, [("id", "INT")], [], [], {"bucket": "-1"})
    java_hive.write(spec, db, name, [{"id": 1}])


@pytest.mark.parametrize("kind", ["managed", "external"])
def test_rename_and_drop_as_java_does_them(
    kind: str, hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    db = fresh_db(kind)
    spec = hive_spec(hive_metastore, wh, **({"table.type": "external"} if kind == "external" else {}))
    dbdir = wh / f"{db}.db"
    for name in ("a", "b", "c", "d"):
        _make(java_hive, spec, db, name)

    # Java renames a -> a2
    java_hive.rename_table(spec, db, "a", db, "a2")
    # we rename c -> c2 the way Java asks the metastore: alter_table with the new name, nothing else
    with client(hive_metastore) as hms:
        c = hms.get_table(db, "c")
        renamed = copy.deepcopy(c)
        renamed.tableName = "c2"
        hms.alter_table(db, "c", renamed)
        a2, c2 = hms.get_table(db, "a2"), hms.get_table(db, "c2")
    assert is_external(a2) is is_external(c2) is (kind == "external")
    if kind == "managed":
        # the metastore itself moves a managed table's directory kept at its default place
        assert hms_table_location(a2) == java_path((dbdir / "a2").as_uri())
        assert hms_table_location(c2) == java_path((dbdir / "c2").as_uri())
        assert not (dbdir / "a").exists() and (dbdir / "a2" / "schema").is_dir()
        assert not (dbdir / "c").exists() and (dbdir / "c2" / "schema").is_dir()
    else:
        # an external table keeps its files where they are; only its name changes
        assert hms_table_location(a2) == java_path((dbdir / "a").as_uri())
        assert hms_table_location(c2) == java_path((dbdir / "c").as_uri())
        assert (dbdir / "a" / "schema").is_dir() and not (dbdir / "a2").exists()
    for name in ("a2", "c2"):
        assert [r["id"] for r in java_hive.read(spec, db, name, row_kind=False)] == [1]

    # Java drops b; we drop d as Java 2.x does (delete data unless external)
    java_hive.drop_table(spec, db, "b")
    with client(hive_metastore) as hms:
        d = hms.get_table(db, "d")
        hms.drop_table(db, "d", delete_data=not is_external(d))
        assert hms.find_table(db, "b") is None and hms.find_table(db, "d") is None
    if kind == "managed":
        assert not (dbdir / "b").exists() and not (dbdir / "d").exists()
    else:
        assert (dbdir / "b" / "schema").is_dir() and (dbdir / "d" / "schema").is_dir()
    assert sorted(java_hive.list_tables(spec, db)) == ["a2", "c2"]
