"""Partition expiration against the real Java Paimon 0.9 PartitionExpire on identical copies.

Why: dropping partitions is destructive and its time rules (patterns, formatters, Java's
lenient default parser, unparseable values kept) are easy to get subtly wrong. On a copy of
the same table Java's PartitionExpire and ours must drop the same partitions with the same
kind of commit, leave the same live files, and Java must read the rest. DATE partitions
are where we deliberately differ (apache/paimon#6439): Java drops none, we drop the old ones.
"""

from __future__ import annotations

import datetime as dt
import json
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.partition_expire import expire_partitions

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
CUTOFF = dt.datetime(2024, 1, 5, 12, 0, 0)


def _expiration_ms() -> int:
    """A duration that puts now - duration at CUTOFF (slack of hours either side)."""
    return int((dt.datetime.now() - CUTOFF).total_seconds() * 1000)


def _java_expire(jp: JavaPaimon, wh: Path, table: str, options: dict[str, str]) -> list[dict[str, str]]:
    text = jp._gateway.jvm.RefsHelper.expirePartitions(str(wh), DB, table, json.dumps(options))
    return json.loads(text)


def _live_files(jp: JavaPaimon, wh: Path, table: str) -> set[str]:
    res = jp.system_table(wh, DB, table, "files")
    col = res["columns"].index("file_path")
    return {str(r[col]).rsplit("/", 1)[-1] for r in res["rows"]}


def _latest_kind(jp: JavaPaimon, wh: Path, table: str) -> str:
    res = jp.system_table(wh, DB, table, "snapshots")
    cols = res["columns"]
    last = max(res["rows"], key=lambda r: r[cols.index("snapshot_id")])
    return last[cols.index("commit_kind")]


def _rows(jp: JavaPaimon, wh: Path, table: str) -> list[Any]:
    return sorted(json.loads(jp._gateway.jvm.RefsHelper.readLatest(str(wh), DB, table, None)), key=json.dumps)


def _copies(tmp_path: Path, base: Path) -> tuple[Path, Path]:
    wa, wb = tmp_path / "java", tmp_path / "ours"
    shutil.copytree(base, wa)
    shutil.copytree(base, wb)
    return wa, wb


def _compare(jp: JavaPaimon, tmp_path: Path, base: Path, table: str, java_opts: dict[str, str],
             ours_kw: dict[str, Any], seconds: float | None = None) -> tuple[list[dict[str, str]], Any]:
    wa, wb = _copies(tmp_path, base)
    ms = _expiration_ms() if seconds is None else int(seconds * 1000)
    java = _java_expire(jp, wa, table, {"partition.expiration-time": f"{ms} ms", **java_opts})
    t = FileSystemCatalog(str(wb)).get_table(f"{DB}.{table}")
    plan = expire_partitions(t, ms / 1000.0, **ours_kw)
    assert sorted(json.dumps(p, sort_keys=True) for p in java) == \
        sorted(json.dumps(p.spec, sort_keys=True) for p in plan.partitions)
    if java:
        assert _latest_kind(jp, wa, table) == _latest_kind(jp, wb, table) == "OVERWRITE"
        assert len(plan.snapshots) == 1
    assert _live_files(jp, wa, table) == _live_files(jp, wb, table)
    assert _rows(jp, wa, table) == _rows(jp, wb, table)
    return java, plan


def test_string_partitions_default_and_formatter(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    base = tmp_path / "base"
    java_paimon.create_table(base, DB, "s", [("id", "INT"), ("dt", "STRING"), ("v", "STRING")], ["id", "dt"],
                             ["dt"], {"bucket": "2"})
    days = [f"2024-01-0{i}" for i in range(1, 10)] + ["2024-1-3", "2024/01/02", "not-a-date"]
    java_paimon.write(base, DB, "s", [{"id": i, "dt": d, "v": "x"} for i, d in enumerate(days)])
    java_paimon.write(base, DB, "s", [{"id": 100, "dt": "2024-01-02", "v": "y"}])
    # Paimon's default (lenient) parser: 2024-1-3 expires, 2024/01/02 and not-a-date are kept
    java, plan = _compare(java_paimon, tmp_path / "default", base, "s", {}, {})
    assert {p["dt"] for p in java} == {"2024-01-01", "2024-01-02", "2024-01-03", "2024-01-04", "2024-01-05",
                                       "2024-1-3"}
    # strict formatter: 2024-1-3 no longer parses
    java, _ = _compare(java_paimon, tmp_path / "fmt", base, "s", {"partition.timestamp-formatter": "yyyy-MM-dd"},
                       {"timestamp_formatter": "yyyy-MM-dd"})
    assert "2024-1-3" not in {p["dt"] for p in java} and len(java) == 5
    java, _ = _compare(java_paimon, tmp_path / "slash", base, "s",
                       {"partition.timestamp-formatter": "yyyy/MM/dd"}, {"timestamp_formatter": "yyyy/MM/dd"})
    assert [p["dt"] for p in java] == ["2024/01/02"]


def test_int_partitions_with_pattern(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    base = tmp_path / "base"
    java_paimon.create_table(base, DB, "i", [("id", "INT"), ("day", "INT"), ("hr", "INT")], [], ["day", "hr"],
                             {"bucket": "-1"})
    rows = [{"id": n, "day": 20240100 + d, "hr": h} for n, (d, h) in enumerate(
        [(d, h) for d in range(3, 8) for h in (0, 9, 23)])]
    java_paimon.write(base, DB, "i", rows)
    opts = {"partition.timestamp-pattern": "$day $hr:00:00", "partition.timestamp-formatter": "yyyyMMdd H:mm:ss"}
    java, _ = _compare(java_paimon, tmp_path / "p", base, "i", opts,
                       {"timestamp_pattern": "$day $hr:00:00", "timestamp_formatter": "yyyyMMdd H:mm:ss"})
    assert {(p["day"], p["hr"]) for p in java} == {(f"202401{d:02d}", str(h)) for d in (3, 4) for h in (0, 9, 23)} | {
        ("20240105", "0"), ("20240105", "9")}
    # without a pattern the first column alone is the time
    java, _ = _compare(java_paimon, tmp_path / "first", base, "i", {"partition.timestamp-formatter": "yyyyMMdd"},
                       {"timestamp_formatter": "yyyyMMdd"})
    assert {p["day"] for p in java} == {"20240103", "20240104", "20240105"}


def test_update_time(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    base = tmp_path / "base"
    java_paimon.create_table(base, DB, "u", [("id", "INT"), ("k", "STRING")], [], ["k"], {"bucket": "-1"})
    java_paimon.write(base, DB, "u", [{"id": 1, "k": "old"}, {"id": 2, "k": "older"}])
    time.sleep(2.5)
    java_paimon.write(base, DB, "u", [{"id": 3, "k": "new"}])
    java, _ = _compare(java_paimon, tmp_path / "u", base, "u", {"partition.expiration-strategy": "update-time"},
                       {"strategy": "update-time"}, seconds=1.5)
    assert {p["k"] for p in java} == {"old", "older"}


def test_date_partitions_typed_unlike_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    base = tmp_path / "base"
    java_paimon.create_table(base, DB, "d", [("id", "INT"), ("d", "DATE")], [], ["d"], {"bucket": "-1"})
    java_paimon.write(base, DB, "d", [{"id": i, "d": dt.date(2024, 1, i)} for i in range(1, 10)])
    wa, wb = _copies(tmp_path, base)
    ms = _expiration_ms()
    opts = {"partition.expiration-time": f"{ms} ms", "partition.timestamp-formatter": "yyyy-MM-dd",
            "partition.timestamp-pattern": "$d"}
    assert _java_expire(java_paimon, wa, "d", opts) == []  # apache/paimon#6439
    t = FileSystemCatalog(str(wb)).get_table(f"{DB}.d")
    plan = expire_partitions(t, ms / 1000.0, timestamp_formatter="yyyy-MM-dd", timestamp_pattern="$d")
    assert [p.display for p in plan.partitions] == [f"d=2024-01-0{i}" for i in range(1, 6)]
    assert _latest_kind(java_paimon, wb, "d") == "OVERWRITE"
    left = java_paimon.read(wb, DB, "d", row_kind=False)
    assert sorted(r["d"] for r in left) == [dt.date(2024, 1, i) for i in range(6, 10)]
