"""Smoke tests of the Java Paimon 0.9 harness itself (not of paimon-cli).

Run with -s to see the system-table dump (column names + one sample row per table).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import JavaTables, sort_rows
from .java_harness import JavaPaimon, JavaPaimonError

pytestmark = pytest.mark.java

LONG_MAX = 2**63 - 1


def _strip(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "_row_kind"} for r in rows]


def test_pk_part_reads_match_model_at_every_snapshot(java_paimon: JavaPaimon, java_tables: JavaTables) -> None:
    t = java_tables.pk_part
    assert sorted(t.expected) == [1, 2, 3, 4, 5, 6]
    for sid, expected in t.expected.items():
        got = java_paimon.read(java_tables.warehouse, t.db, t.name, sid)
        # merged reads keep the kind of the winning record: rows last written as +U come back as +U
        assert {r["_row_kind"] for r in got} <= {"+I", "+U"}
        assert sort_rows(_strip(got)) == expected, f"snapshot {sid}"
    latest = sort_rows(java_paimon.read(java_tables.warehouse, t.db, t.name, row_kind=False))
    assert latest == t.latest_expected
    # deletes really happened; the 4th partition appeared last
    keys = {(r["id"], r["dt"]) for r in latest}
    assert (8, "2024-01-01") not in keys and (3, "2024-01-02") not in keys and (1, "2024-01-04") in keys


def test_pk_part_snapshots_system_table(java_paimon: JavaPaimon, java_tables: JavaTables) -> None:
    t = java_tables.pk_part
    assert t.snapshot_kinds == ["APPEND"] * 4 + ["COMPACT", "APPEND"]
    res = java_paimon.system_table(java_tables.warehouse, t.db, t.name, "snapshots")
    cols = res["columns"]
    assert {"snapshot_id", "schema_id", "commit_kind", "commit_time", "total_record_count"} <= set(cols)
    assert len(res["rows"]) == 6
    ident = [r[cols.index("commit_identifier")] for r in res["rows"]]
    assert ident == [LONG_MAX] * 6  # batch commits


def test_files_system_table_lists_files(java_paimon: JavaPaimon, java_tables: JavaTables) -> None:
    t = java_tables.pk_part
    res = java_paimon.system_table(java_tables.warehouse, t.db, t.name, "files")
    cols = res["columns"]
    assert res["rows"]
    for r in res["rows"]:
        row = dict(zip(cols, r, strict=True))
        # Java 0.9 reports the bare file name; partition is rendered "[v1, v2]"
        part = row["partition"][1:-1]
        assert (Path(t.path) / f"dt={part}" / f"bucket-{row['bucket']}" / row["file_path"]).is_file()
        assert 0 <= row["bucket"] < 3
        assert row["partition"].startswith("[") and row["partition"].endswith("]")
    # after the full compaction (snapshot 5) data sits at the top level; snapshot 6 adds level-0 files
    levels = {dict(zip(cols, r, strict=True))["level"] for r in res["rows"]}
    assert levels == {0, 5}


def test_tag_branch_consumer(java_paimon: JavaPaimon, java_tables: JavaTables) -> None:
    wh, t = java_tables.warehouse, java_tables.pk_part
    tags = java_paimon.system_table(wh, t.db, t.name, "tags")
    assert [dict(zip(tags["columns"], r, strict=True))["snapshot_id"] for r in tags["rows"]] == [2]
    branch_rows = java_paimon.read(wh, t.db, t.name, branch="b1", row_kind=False)
    assert sort_rows(branch_rows) == t.expected[2]
    consumers = java_paimon.system_table(wh, t.db, t.name, "consumers")
    assert consumers["rows"] == [["c1", 4]]


def test_other_tables_read_back(java_paimon: JavaPaimon, java_tables: JavaTables) -> None:
    wh = java_tables.warehouse
    for name in ("append_t", "dv_t", "dyn_t"):
        t = java_tables[name]
        got = sort_rows(java_paimon.read(wh, t.db, t.name, row_kind=False))
        assert got == t.latest_expected, name
    n = java_tables.nested_t
    got = sorted(java_paimon.read(wh, n.db, n.name, row_kind=False), key=lambda r: r["id"])
    assert got == n.latest_expected
    assert java_tables.append_t.snapshot_kinds == ["APPEND", "APPEND", "ANALYZE"]
    assert java_tables.dyn_t.snapshot_kinds == ["APPEND", "APPEND"]
    assert java_tables.dv_t.snapshot_kinds == ["APPEND", "COMPACT"] * 3
    # dynamic bucket: several buckets per partition and HASH index files
    d = java_tables.dyn_t
    files = java_paimon.system_table(wh, d.db, d.name, "files")
    buckets = {(r[0], r[1]) for r in files["rows"]}
    assert len({b for p, b in buckets if p == "[2024-01-01]"}) >= 3
    assert any(p.name.startswith("index-") for p in (Path(d.path) / "index").iterdir())


def test_maintenance_api(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh, jp = str(tmp_path), java_paimon
    jp.create_table(wh, "db", "a", [("id", "INT"), ("p", "STRING")], [], ["p"],
                    {"bucket": "-1", "file.format": "orc"})
    for i in range(3):
        jp.write(wh, "db", "a", [{"id": i * 10 + k, "p": "x"} for k in range(3)])
    jp.alter_table(wh, "db", "a", [{"add": ["extra", "STRING"]}, {"set": {"snapshot.num-retained.min": "1"}}])
    sid = jp.write(wh, "db", "a", [{"id": 99, "p": "x", "extra": "e"}])
    schemas = jp.system_table(wh, "db", "a", "schemas")
    assert sorted(r[0] for r in schemas["rows"]) == [0, 1]  # Java 0.9 lists them unordered
    # bucket-unaware compaction goes through Java's coordinator; lower its file threshold
    sid = jp.compact(wh, "db", "a", options={"compaction.min.file-num": "2", "compaction.max.file-num": "3"})
    assert sid == 5 and len(jp.read(wh, "db", "a")) == 10
    sid = jp.write(wh, "db", "a", [{"id": 1, "p": "x"}], overwrite={"p": "x"})
    kinds = [r[4] for r in jp.system_table(wh, "db", "a", "snapshots")["rows"]]
    assert kinds == ["APPEND"] * 4 + ["COMPACT", "OVERWRITE"]
    assert jp.read(wh, "db", "a", row_kind=False) == [{"id": 1, "p": "x", "extra": None}]
    assert jp.expire(wh, "db", "a", retain_max=2, retain_min=1) == 4
    jp.rollback_to(wh, "db", "a", snapshot_id=5)
    assert len(jp.read(wh, "db", "a")) == 10


def test_dv_table_has_index_and_reads_right_after_compaction(
    java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path: Path
) -> None:
    # the shared DV table carries deletion-vector index files
    t = java_tables.dv_t
    index_dir = Path(t.path) / "index"
    assert any(p.name.startswith("index-") for p in index_dir.iterdir())
    # a private DV table: updates, then a full compaction, then more deletes
    wh = str(tmp_path)
    java_paimon.create_table(wh, "db", "dv", [("id", "INT"), ("v", "STRING")], ["id"], [],
                             {"bucket": "2", "deletion-vectors.enabled": "true"})
    java_paimon.write(wh, "db", "dv", [{"id": i, "v": f"a{i}"} for i in range(50)])
    java_paimon.write(wh, "db", "dv", [{"id": i, "v": f"b{i}"} for i in range(0, 50, 3)])
    sid = java_paimon.compact(wh, "db", "dv", full=True)
    java_paimon.write(wh, "db", "dv", [{"id": i, "v": None} for i in range(0, 50, 5)], ["-D"] * 10)
    expected = {i: (f"b{i}" if i % 3 == 0 else f"a{i}") for i in range(50) if i % 5}
    got = java_paimon.read(wh, "db", "dv", row_kind=False)
    assert {r["id"]: r["v"] for r in got} == expected and len(got) == len(expected)
    at_compact = java_paimon.read(wh, "db", "dv", sid, row_kind=False)
    assert len(at_compact) == 50


def test_errors_are_reduced_to_one_line(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    with pytest.raises(JavaPaimonError, match="TableNotExistException"):
        java_paimon.read(str(tmp_path), "db", "missing")


def test_dump_system_tables(java_paimon: JavaPaimon, java_tables: JavaTables, tmp_path_factory: pytest.TempPathFactory) -> None:
    wh = java_tables.warehouse
    names = java_paimon.list_system_tables()
    expected = {"snapshots", "schemas", "options", "files", "manifests", "partitions", "tags", "branches",
                "consumers", "statistics", "aggregation_fields", "audit_log", "ro"}
    assert expected <= set(names)
    for missing in ("buckets", "table_indexes"):
        assert missing not in names
        with pytest.raises(JavaPaimonError, match="does not exist"):
            java_paimon.system_table(wh, "db", "pk_part", missing)
    source = {"statistics": "append_t"}
    dump: dict[str, Any] = {}
    for name in names:
        table = source.get(name, "pk_part")
        res = java_paimon.system_table(wh, "db", table, name)
        assert res["rows"], f"{table}${name} is empty"
        dump[name] = {"table": table, "rows": len(res["rows"]), "columns": res["columns"],
                      "types": res["types"], "sample": res["rows"][0]}
    for table, name in (("dv_t", "files"), ("dyn_t", "files"), ("append_t", "files"), ("nested_t", "ro")):
        res = java_paimon.system_table(wh, "db", table, name)
        dump[f"{name}@{table}"] = {"table": table, "rows": len(res["rows"]), "columns": res["columns"],
                                   "types": res["types"], "sample": res["rows"][0]}
    out = tmp_path_factory.getbasetemp() / "java-system-tables.json"
    out.write_text(json.dumps(dump, indent=1, default=str))
    print(f"\n== Java Paimon 0.9 system tables (full dump: {out}) ==")
    for name, d in dump.items():
        print(f"-- {d['table']}${name.split('@')[0]} ({d['rows']} rows)")
        print("   " + ", ".join(f"{c} {t}" for c, t in zip(d["columns"], d["types"], strict=True)))
        print("   sample: " + json.dumps(d["sample"], default=str))
