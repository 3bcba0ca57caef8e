"""The HMS table object of a Paimon table: ours equals Java 0.9 HiveCatalog's, field by field,
and each side recognises, reads and writes the other's tables, on a real Hive Metastore 2.3.9."""

from __future__ import annotations

from pathlib import Path

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.catalog.hms_table import (
    EXTERNAL_TABLE,
    MANAGED_TABLE,
    build_hms_table,
    hive_type_name,
    hms_table_kind,
    hms_table_location,
    is_external,
    is_paimon_table,
    java_path,
    normalize_column_comment,
    update_hms_table,
)
from paimon_cli.core.data.types import parse_data_type
from paimon_cli.core.schema.schema_change import AddColumn, RemoveOption, SetOption
from paimon_cli.core.schema.table_schema import Schema
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, comparable_table, fresh_db, schema_on_disk

# Every type Java 0.9's HiveTypeUtils maps, with what Hive calls it.
COLUMNS: list[tuple[str, str, str]] = [
    ("id", "INT", "int"),
    ("dt", "STRING", "string"),
    ("c_bool", "BOOLEAN", "boolean"),
    ("c_tiny", "TINYINT", "tinyint"),
    ("c_small", "SMALLINT", "smallint"),
    ("c_big", "BIGINT", "bigint"),
    ("c_float", "FLOAT", "float"),
    ("c_double", "DOUBLE", "double"),
    ("c_dec", "DECIMAL(10, 2)", "decimal(10,2)"),
    ("c_dec38", "DECIMAL(38, 18)", "decimal(38,18)"),
    ("c_char", "CHAR(3)", "char(3)"),
    ("c_char_long", "CHAR(300)", "string"),
    ("c_vc", "VARCHAR(300)", "varchar(300)"),
    ("c_vc_long", "VARCHAR(70000)", "string"),
    ("c_bin", "BINARY(4)", "binary"),
    ("c_bytes", "BYTES", "binary"),
    ("c_date", "DATE", "date"),
    ("c_time", "TIME", "string"),
    ("c_ts", "TIMESTAMP(3)", "timestamp"),
    ("c_ts9", "TIMESTAMP(9)", "timestamp"),
    ("c_ltz", "TIMESTAMP_LTZ(6)", "timestamp"),
    ("c_arr", "ARRAY<STRING>", "array<string>"),
    ("c_map", "MAP<STRING, BIGINT>", "map<string,bigint>"),
    ("c_mset", "MULTISET<INT>", "map<int,int>"),
    ("c_row", "ROW<a INT, b ARRAY<ROW<x DOUBLE, y CHAR(2)>>>", "struct<a:int,b:array<struct<x:double,y:char(2)>>>"),
]
JAVA_COLUMNS = [(n, t) for n, t, _ in COLUMNS]


def test_hive_type_names_are_javas() -> None:
    """The mapping as written down from Java's HiveTypeUtils (proven against Java below)."""
    for _, paimon, hive in COLUMNS:
        assert hive_type_name(parse_data_type(paimon)) == hive, paimon
    ltz = parse_data_type("TIMESTAMP_LTZ(3)")
    assert hive_type_name(ltz, hive3=True) == "timestamp with local time zone"
    assert hive_type_name(parse_data_type("CHAR(255)")) == "char(255)"
    assert hive_type_name(parse_data_type("VARCHAR(65535)")) == "varchar(65535)"
    assert hive_type_name(parse_data_type("VARCHAR(65536)")) == "string"


def test_column_comments_fit_the_metastore() -> None:
    assert normalize_column_comment(None) is None
    assert normalize_column_comment("a\nb\rc") == "a b c"
    long = "x" * 300
    assert normalize_column_comment(long) == "x" * 252 + "..."
    assert len(normalize_column_comment(long) or "") == 255


def test_java_path_is_hadoop_path_to_string() -> None:
    assert java_path("file:///tmp/wh/db.db/t") == "file:/tmp/wh/db.db/t"
    assert java_path("file:///tmp/wh/") == "file:/tmp/wh"
    assert java_path("s3://bucket/wh/db.db/t") == "s3://bucket/wh/db.db/t"


VARIANTS = {
    # name: (catalog options, primary keys, partition keys, table options)
    "managed-partitioned": ({}, [], ["dt"], {"bucket": "-1", "metastore.partitioned-table": "true",
                                              "hive.serde.note": "kept", "file.format": "orc"}),
    "managed-flat": ({}, [], ["dt"], {"bucket": "-1"}),
    "external-sync-all": ({"table.type": "external", "sync-all-properties": "true"}, [], ["dt"],
                          {"bucket": "-1", "metastore.partitioned-table": "true", "hive.x": "y"}),
    "sync-all-primary-key": ({"sync-all-properties": "true"}, ["id", "dt"], ["dt"],
                             {"bucket": "2", "bucket-key": "id", "changelog-producer": "input"}),
}


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_our_table_object_equals_javas(
    variant: str, hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    catalog_opts, pks, parts, options = VARIANTS[variant]
    external = catalog_opts.get("table.type") == "external"
    sync_all = catalog_opts.get("sync-all-properties") == "true"
    db = fresh_db()
    spec = hive_spec(hive_metastore, tmp_path / "wh", **catalog_opts)
    cols = [(n, t + (" NOT NULL" if n in pks else "")) for n, t in JAVA_COLUMNS]
    java_hive.create_table(spec, db, "t", cols, pks, parts, options)

    with client(hive_metastore) as hms:
        javas = hms.get_table(db, "t")
        assert is_paimon_table(javas) and hms_table_kind(javas) == "paimon"
        assert is_external(javas) is external
        assert javas.tableType == (EXTERNAL_TABLE if external else MANAGED_TABLE)
        location = hms_table_location(javas)
        assert location == java_path((tmp_path / "wh" / f"{db}.db" / "t").as_uri())
        assert java_path(java_hive.table_location(spec, db, "t")) == location

        schema = schema_on_disk(location)
        ours = build_hms_table(db, "t_ours", schema, location + "_ours", external=external,
                               sync_all_properties=sync_all, owner=javas.owner)
        hms.create_table(ours)
        stored = hms.get_table(db, "t_ours")

    assert comparable_table(stored, drop_names=True) == comparable_table(javas, drop_names=True)
    assert stored.sd.location == location + "_ours"
    # the columns, one by one, as Hive names them
    partitioned = options.get("metastore.partitioned-table") == "true"
    expect_cols = [(n, h) for n, _, h in COLUMNS if not (partitioned and n in parts)]
    assert [(c.name, c.type) for c in javas.sd.cols] == expect_cols
    assert [k.name for k in javas.partitionKeys] == (parts if partitioned else [])


def test_java_lists_reads_and_writes_a_table_we_registered(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    wh = tmp_path / "wh"
    db = fresh_db()
    spec = hive_spec(hive_metastore, wh)
    # the table's files, written by us at the metastore's default place for it
    FileSystemCatalog(str(wh)).create_table(
        f"{db}.ours",
        Schema.of([("id", parse_data_type("INT"), "the id"), ("dt", parse_data_type("STRING"), None),
                   ("v", parse_data_type("DECIMAL(12, 3)"), None)],
                  partition_keys=["dt"], options={"bucket": "-1", "metastore.partitioned-table": "true"},
                  comment="registered from Python"),
    )
    location = java_path((wh / f"{db}.db" / "ours").as_uri())
    with client(hive_metastore) as hms:
        hms.create_database(db, java_path((wh / f"{db}.db").as_uri()))
        hms.create_table(build_hms_table(db, "ours", schema_on_disk(location), location, sync_all_properties=False))

        assert java_hive.list_tables(spec, db) == ["ours"]
        assert java_hive.table_exists(spec, db, "ours")
        sid = java_hive.write(spec, db, "ours", [{"id": 1, "dt": "2024-01-01", "v": "1.5"},
                                                 {"id": 2, "dt": "2024-01-02", "v": "2.25"}])
        assert sid == 1
        rows = java_hive.read(spec, db, "ours", row_kind=False)
        assert sorted(r["id"] for r in rows) == [1, 2]
        # Java's commit added its partitions to our table object
        parts = hms.list_partitions(db, "ours")
        assert sorted(p.values for p in parts) == [["2024-01-01"], ["2024-01-02"]]
        assert {p.sd.location for p in parts} == {f"{location}/dt=2024-01-01", f"{location}/dt=2024-01-02"}

        # Java alters it through the metastore: our update of the same change is the same object
        before = hms.get_table(db, "ours")
        java_hive.alter_table(spec, db, "ours", [{"add": ["extra", "ARRAY<INT>"]}, {"set": {"hive.k": "v1"}}])
        after_java = hms.get_table(db, "ours")
        ours = update_hms_table(before, schema_on_disk(location), sync_all_properties=False)
    assert comparable_table(ours) == comparable_table(after_java)
    assert [(c.name, c.type) for c in after_java.sd.cols][-1] == ("extra", "array<int>")
    assert after_java.parameters["k"] == "v1"
    assert after_java.parameters["comment"] == "registered from Python"


def test_alter_through_our_update_keeps_java_working(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    """We change the schema files and the HMS object; Java still finds, reads and writes the table,
    and a removed option leaves the parameters (2.x behaviour; 0.9 would leave it behind)."""
    wh = tmp_path / "wh"
    db = fresh_db()
    spec = hive_spec(hive_metastore, wh, **{"sync-all-properties": "true"})
    java_hive.create_table(spec, db, "t", [("id", "INT"), ("v", "STRING")], [], [],
                           {"bucket": "-1", "snapshot.num-retained.max": "20"})
    java_hive.write(spec, db, "t", [{"id": 1, "v": "a"}])
    fs = FileSystemCatalog(str(wh))
    new_schema = fs.alter_table(f"{db}.t", [AddColumn("w", parse_data_type("BIGINT")),
                                            SetOption("hive.owner", "ops"),
                                            RemoveOption("snapshot.num-retained.max")])
    with client(hive_metastore) as hms:
        before = hms.get_table(db, "t")
        assert before.parameters["snapshot.num-retained.max"] == "20"
        updated = update_hms_table(before, new_schema, sync_all_properties=True,
                                   removed_options=["snapshot.num-retained.max"])
        hms.alter_table(db, "t", updated)
        after = hms.get_table(db, "t")
    assert "snapshot.num-retained.max" not in after.parameters
    assert after.parameters["hive.owner"] == "ops"
    assert [(c.name, c.type) for c in after.sd.cols] == [("id", "int"), ("v", "string"), ("w", "bigint")]
    java_hive.write(spec, db, "t", [{"id": 2, "v": "b", "w": 20}])
    rows = sorted(java_hive.read(spec, db, "t", row_kind=False), key=lambda r: r["id"])
    assert rows == [{"id": 1, "v": "a", "w": None}, {"id": 2, "v": "b", "w": 20}]


def test_plain_hive_tables_and_views_are_not_paimon(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    from pymetastore.hive_metastore import ttypes

    db = fresh_db()

    def table(name: str, serde: str, inp: str, out: str, ttype: str = MANAGED_TABLE,
              params: dict[str, str] | None = None) -> ttypes.Table:
        sd = ttypes.StorageDescriptor(
            cols=[ttypes.FieldSchema("a", "int", None)], location=(tmp_path / name).as_uri(),
            inputFormat=inp, outputFormat=out, serdeInfo=ttypes.SerDeInfo(serializationLib=serde, parameters={}),
        )
        return ttypes.Table(tableName=name, dbName=db, owner="t", sd=sd, partitionKeys=[],
                            parameters=dict(params or {}), tableType=ttype)

    with client(hive_metastore) as hms:
        hms.create_database(db, (tmp_path / "db").as_uri())
        hms.create_table(table("parq", "org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe",
                               "org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat",
                               "org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat"))
        hms.create_table(table("csv", "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe",
                               "org.apache.hadoop.mapred.TextInputFormat",
                               "org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat"))
        # says PAIMON in its parameters, but its formats are not: Java does not take it for one
        hms.create_table(table("liar", "org.apache.hadoop.hive.ql.io.orc.OrcSerde",
                               "org.apache.hadoop.hive.ql.io.orc.OrcInputFormat",
                               "org.apache.hadoop.hive.ql.io.orc.OrcOutputFormat",
                               params={"table_type": "PAIMON"}))
        view = table("v", "", "", "", ttype="VIRTUAL_VIEW")
        view.sd.location = None
        view.viewOriginalText = view.viewExpandedText = "select 1"
        hms.create_table(view)
        kinds = {n: hms_table_kind(hms.get_table(db, n)) for n in ("parq", "csv", "liar", "v")}
    assert kinds == {"parq": "format", "csv": "format", "liar": "format", "v": "view"}
