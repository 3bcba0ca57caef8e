"""HMS partitions of a ``metastore.partitioned-table=true`` table: ours as Java's
HiveMetastoreClient adds them, and Java's own partition sync on commit, drop and expiry."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from paimon_cli.core.catalog.hive_metastore import HivePartitionSync
from paimon_cli.core.catalog.hms_table import build_hms_table, build_partition, hms_partition_spec
from paimon_cli.core.data.types import parse_data_type
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.schema.table_schema import Schema, TableSchema
from tests.interop.java_harness import JavaPaimon

from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, comparable_partition, fresh_db, schema_on_disk


def _pk_sorted(parts: list) -> list:
    return sorted(parts, key=lambda p: p.values)


def test_our_partitions_equal_the_ones_javas_commit_adds(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    db = fresh_db()
    spec = hive_spec(hive_metastore, tmp_path / "wh")
    cols = [("id", "INT"), ("dt", "STRING"), ("h", "INT"), ("v", "STRING")]
    java_hive.create_table(spec, db, "t", cols, [], ["dt", "h"],
                           {"bucket": "-1", "metastore.partitioned-table": "true"})
    # awkward values: a space and a slash (escaped in the path only), a null (default name)
    java_hive.write(spec, db, "t", [{"id": 1, "dt": "2024-01-01", "h": 3, "v": "a"},
                                    {"id": 2, "dt": "a b/c", "h": 0, "v": "b"},
                                    {"id": 3, "dt": None, "h": None, "v": "c"}])
    with client(hive_metastore) as hms:
        javas_table = hms.get_table(db, "t")
        javas = _pk_sorted(hms.list_partitions(db, "t"))
        assert [p.values for p in javas] == [["2024-01-01", "3"], ["__DEFAULT_PARTITION__", "__DEFAULT_PARTITION__"],
                                             ["a b/c", "0"]]
        location = javas_table.sd.location
        assert [p.sd.location for p in javas] == [
            f"{location}/dt=2024-01-01/h=3",
            f"{location}/dt=__DEFAULT_PARTITION__/h=__DEFAULT_PARTITION__",
            f"{location}/dt=a b%2Fc/h=0",
        ]
        schema = schema_on_disk(location)
        specs = [hms_partition_spec(schema, v) for v in (("2024-01-01", 3), ("a b/c", 0), (None, None))]

        # our table object and our partitions, beside Java's
        ours_loc = location + "_ours"
        hms.create_table(build_hms_table(db, "ours", schema, ours_loc, sync_all_properties=False))
        sync = HivePartitionSync(hms, db, "ours")
        sync.add_partitions(specs)
        sync.add_partitions(specs[:1])  # already there: skipped, as Java does
        ours = _pk_sorted(hms.list_partitions(db, "ours"))

        def same(p: object, loc: str) -> dict:
            d = comparable_partition(p)
            d.pop("tableName")
            d["sd"]["location"] = d["sd"]["location"].replace(loc, "<table>")
            return d

        assert [same(p, ours_loc) for p in ours] == [same(p, location) for p in javas]

        assert sync.drop_partitions([specs[0], specs[0]]) == 1
        assert sorted(p.values for p in hms.list_partitions(db, "ours")) == sorted(p.values for p in javas[1:])
        assert sync.drop_partitions(specs) == 2
        assert hms.list_partitions(db, "ours") == []


def test_partition_specs_render_values_as_java() -> None:
    schema = TableSchema(
        version=3, id=0, fields=list(Schema.of([("d", parse_data_type("DATE"), None),
                                               ("b", parse_data_type("BOOLEAN"), None),
                                               ("s", parse_data_type("STRING"), None)]).fields),
        highest_field_id=2, partition_keys=["d", "b", "s"], primary_keys=[], options={}, comment=None,
        time_millis=0,
    )
    # partition.legacy-name (default true): a DATE is its epoch day, as in Java's directory names
    assert hms_partition_spec(schema, (dt.date(2024, 1, 2), True, " ")) == {
        "d": "19724", "b": "true", "s": "__DEFAULT_PARTITION__"}
    legacy_off = schema.copy(options={"partition.legacy-name": "false", "partition.default-name": "NULLP"})
    assert hms_partition_spec(legacy_off, (dt.date(2024, 1, 2), False, None)) == {
        "d": "2024-01-02", "b": "false", "s": "NULLP"}


def test_a_partition_spec_must_match_the_partition_keys(hive_metastore: HiveMetastoreServer) -> None:
    from pymetastore.hive_metastore import ttypes

    table = ttypes.Table(tableName="t", dbName="d", sd=ttypes.StorageDescriptor(location="file:/x"),
                         partitionKeys=[ttypes.FieldSchema("dt", "string", None)], parameters={})
    for bad in ({"h": "1"}, {"dt": "1", "h": "2"}, {}):
        try:
            build_partition(table, bad)
        except InvalidInput as err:
            assert "does not match the HMS partition keys" in str(err)
        else:
            raise AssertionError(f"{bad} accepted")


def test_java_drops_hms_partitions_on_drop_partition_and_partition_expiry(
    hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path
) -> None:
    db = fresh_db()
    spec = hive_spec(hive_metastore, tmp_path / "wh")
    java_hive.create_table(spec, db, "t", [("id", "INT"), ("dt", "STRING")], [], ["dt"],
                           {"bucket": "-1", "metastore.partitioned-table": "true"})
    java_hive.write(spec, db, "t", [{"id": i, "dt": d} for i, d in
                                    enumerate(["2020-01-01", "2020-01-02", "2020-01-03", "2999-01-01"])])
    with client(hive_metastore) as hms:
        assert len(hms.list_partitions(db, "t")) == 4
        java_hive.drop_partition(spec, db, "t", {"dt": "2020-01-01"})
        assert sorted(p.values[0] for p in hms.list_partitions(db, "t")) == ["2020-01-02", "2020-01-03", "2999-01-01"]
        expired = json.loads(java_hive._gateway.jvm.RefsHelper.expirePartitions(
            spec, db, "t", json.dumps({"partition.expiration-time": "1 d", "partition.timestamp-formatter": "yyyy-MM-dd"})))
        assert sorted(e["dt"] for e in expired) == ["2020-01-02", "2020-01-03"]
        assert [p.values for p in hms.list_partitions(db, "t")] == [["2999-01-01"]]
    rows = java_hive.read(spec, db, "t", row_kind=False)
    assert [r["dt"] for r in rows] == ["2999-01-01"]
