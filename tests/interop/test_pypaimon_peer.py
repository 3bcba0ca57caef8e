"""Smoke tests of the pypaimon 2.1 peer itself (not of paimon-cli).

They prove the harness round-trips values and exposes the system tables the interop tests
compare against, so a failure there is a harness failure, not a product one.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from pathlib import Path

import pytest

from tests.interop.pypaimon_peer import PyPaimon, PyPaimonError, decode_value, encode_value

pytestmark = pytest.mark.pypaimon

# Every system table pypaimon 2.1 registers, with its columns verbatim (pypaimon 2.1.0).
EXPECTED_COLUMNS: dict[str, list[str]] = {
    "snapshots": ["snapshot_id", "schema_id", "commit_user", "commit_identifier", "commit_kind",
                  "commit_time", "base_manifest_list", "delta_manifest_list",
                  "changelog_manifest_list", "total_record_count", "delta_record_count",
                  "changelog_record_count", "watermark", "next_row_id", "writer_version"],
    "schemas": ["schema_id", "fields", "partition_keys", "primary_keys", "options", "comment",
                "update_time"],
    "options": ["key", "value"],
    "manifests": ["file_name", "file_size", "num_added_files", "num_deleted_files", "schema_id",
                  "min_partition_stats", "max_partition_stats", "min_row_id", "max_row_id"],
    "files": ["partition", "bucket", "file_path", "file_format", "schema_id", "level",
              "record_count", "file_size_in_bytes", "min_key", "max_key", "null_value_counts",
              "min_value_stats", "max_value_stats", "min_sequence_number", "max_sequence_number",
              "creation_time", "deleteRowCount", "file_source", "first_row_id", "write_cols"],
    "partitions": ["partition", "record_count", "file_size_in_bytes", "file_count",
                   "last_update_time", "created_at", "created_by", "updated_by", "options",
                   "total_buckets", "done", "deleted_record_count"],
    "buckets": ["partition", "bucket", "record_count", "file_size_in_bytes", "file_count",
                "last_update_time"],
    "tags": ["tag_name", "snapshot_id", "schema_id", "commit_time", "record_count", "create_time",
             "time_retained"],
    "branches": ["branch_name", "create_time"],
    "file_key_ranges": ["partition", "bucket", "file_path", "file_format", "schema_id", "level",
                        "record_count", "file_size_in_bytes", "min_key", "max_key",
                        "first_row_id"],
    "table_indexes": ["partition", "bucket", "index_type", "file_name", "file_size", "row_count",
                      "dv_ranges", "row_range_start", "row_range_end", "index_field_id",
                      "index_field_name"],
    "consumers": ["consumer_id", "next_snapshot_id"],
}


def _by_key(rows: list[dict], *keys: str) -> list[dict]:
    return sorted(rows, key=lambda r: tuple(r[k] for k in keys))


def test_wire_encoding_round_trips() -> None:
    values = {
        "date32": dt.date(2024, 2, 29),
        "timestamp[ms]": dt.datetime(2024, 1, 2, 3, 4, 5, 123000),
        "decimal128(10, 2)": Decimal("-12.30"),
        "binary": b"\x00\xff",
        "double": float("nan"),
        "list<item: int32>": [1, None, 3],
    }
    for arrow_type, v in values.items():
        back = decode_value(encode_value(v), arrow_type)
        if isinstance(v, float):
            assert back != back
        else:
            assert back == v and type(back) is type(v), arrow_type


def test_version_is_2_1(pypaimon: PyPaimon) -> None:
    v = pypaimon.version()
    assert v["pypaimon"] == "2.1.0"
    assert int(v["pyarrow"].split(".")[0]) < 20


def test_pk_table_reads_back_merged_rows(pypaimon: PyPaimon, pypaimon_tables) -> None:
    t = pypaimon_tables
    assert t.pk_snapshot_ids == [1, 2, 3]
    got = _by_key(pypaimon.read(t.warehouse, t.db, t.pk_table), "dt", "id")
    assert got == t.pk_rows()
    # time travel to the tagged snapshot sees the state after two commits
    tagged = _by_key(pypaimon.read(t.warehouse, t.db, t.pk_table, tag=t.tag), "dt", "id")
    assert tagged == t.pk_rows(upto_commit=2)


def test_append_table_reads_back_all_rows(pypaimon: PyPaimon, pypaimon_tables) -> None:
    t = pypaimon_tables
    assert t.append_snapshot_ids == [1, 2]
    got = _by_key(pypaimon.read(t.warehouse, t.db, t.append_table), "id")
    assert got == t.append_rows()


def test_write_then_read_in_fresh_table(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, "db", "t", [("k", "int32"), ("v", "string not null")],
                          primary_keys=["k"], options={"bucket": "1"})
    rows = [{"k": 1, "v": "a"}, {"k": 2, "v": "b"}]
    assert pypaimon.write(wh, "db", "t", rows) == 1
    assert pypaimon.write(wh, "db", "t", [{"k": 2, "v": "B"}]) == 2
    assert _by_key(pypaimon.read(wh, "db", "t"), "k") == [{"k": 1, "v": "a"}, {"k": 2, "v": "B"}]


def test_snapshots_system_table(pypaimon: PyPaimon, pypaimon_tables) -> None:
    t = pypaimon_tables
    res = pypaimon.system_table(t.warehouse, t.db, t.pk_table, "$snapshots")
    assert res["columns"] == EXPECTED_COLUMNS["snapshots"]
    assert [r["snapshot_id"] for r in res.rows] == [1, 2, 3]
    assert [r["delta_record_count"] for r in res.rows] == [len(b) for b in t.pk_commits]
    assert all(r["commit_kind"] == "APPEND" for r in res.rows)
    dt.datetime.fromisoformat(res.rows[0]["commit_time"])  # ISO-rendered timestamp


@pytest.mark.parametrize("name", sorted(EXPECTED_COLUMNS))
def test_every_registered_system_table_reads(pypaimon: PyPaimon, pypaimon_tables, name: str) -> None:
    t = pypaimon_tables
    res = pypaimon.system_table(t.warehouse, t.db, t.pk_table, name)
    assert res.columns == EXPECTED_COLUMNS[name]
    assert set(res.types) == set(res.columns)
    expected_rows = {"snapshots": 3, "schemas": 1, "options": 1, "tags": 1, "branches": 1,
                     "consumers": 1, "partitions": 3, "table_indexes": 0}
    if name in expected_rows:
        assert len(res.rows) == expected_rows[name]


def test_tag_consumer_branch_and_partitions_render(pypaimon: PyPaimon, pypaimon_tables) -> None:
    t = pypaimon_tables
    tags = pypaimon.system_table(t.warehouse, t.db, t.pk_table, "tags").rows
    assert [(r["tag_name"], r["snapshot_id"]) for r in tags] == [(t.tag, t.tag_snapshot_id)]
    consumers = pypaimon.system_table(t.warehouse, t.db, t.pk_table, "consumers").rows
    assert consumers == [{"consumer_id": t.consumer, "next_snapshot_id": t.consumer_next_snapshot}]
    branches = pypaimon.system_table(t.warehouse, t.db, t.pk_table, "branches").rows
    assert [r["branch_name"] for r in branches] == [t.branch]
    parts = pypaimon.system_table(t.warehouse, t.db, t.pk_table, "partitions").rows
    # pypaimon renders partitions Hive-style, unlike Java 0.9's "[2024-01-01]"
    assert sorted(r["partition"] for r in parts) == ["dt=2024-01-01", "dt=2024-01-02",
                                                      "dt=2024-01-03"]
    assert sum(r["record_count"] for r in parts) == sum(len(b) for b in t.pk_commits)


@pytest.mark.parametrize("name", ["statistics", "audit_log", "binlog", "read_optimized",
                                  "no_such_table"])
def test_unsupported_system_tables_raise(pypaimon: PyPaimon, pypaimon_tables, name: str) -> None:
    t = pypaimon_tables
    with pytest.raises(PyPaimonError) as info:
        pypaimon.system_table(t.warehouse, t.db, t.pk_table, name)
    assert info.value.error == "TableNotExistException"
