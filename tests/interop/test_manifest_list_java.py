"""Java Paimon 0.9 reads and extends tables whose manifest lists carry the 1.1+ stats fields.

Every manifest list we write has ``_MIN/_MAX_BUCKET``, ``_MIN/_MAX_LEVEL`` and
``_MIN/_MAX_ROW_ID`` after 0.9's seven fields (the writer schema 1.1+ Java writes); Java 0.9's
reader schema lacks them and must skip them. This table (partitioned, two buckets, deletion
vectors, so levels > 0 and DELETE entries) goes back and forth: we write and compact, Java 0.9
reads, writes, merges our manifests into its own lists and compacts, we continue. All along
the stats in every list are exact (checked with fastavro against the manifests' entries) or,
in lists Java 0.9 wrote, absent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse

from .java_harness import JavaPaimon
from .manifest_list_oracle import STAT_FIELDS, listed_manifests

pytestmark = pytest.mark.java

DB = "db"
NAME = "mlist"
COLS = [("dt", "STRING NOT NULL"), ("id", "INT NOT NULL"), ("v", "STRING")]
ARROW = pa.schema([("dt", pa.string()), ("id", pa.int32()), ("v", pa.string())])
DAYS = ("2024-05-01", "2024-05-02", "2024-05-03")


class Reference:
    """The merged rows a correct reader returns (deduplicate on (dt, id))."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, int], dict[str, Any]] = {}

    def upsert(self, rows: list[dict[str, Any]]) -> None:
        self.rows.update({(r["dt"], r["id"]): r for r in rows})

    def delete(self, rows: list[dict[str, Any]]) -> None:
        for r in rows:
            self.rows.pop((r["dt"], r["id"]), None)

    def sorted(self) -> list[dict[str, Any]]:
        return [self.rows[k] for k in sorted(self.rows)]


def _rows(days: tuple[str, ...], ids: range | list[int], tag: str) -> list[dict[str, Any]]:
    return [{"dt": d, "id": i, "v": f"{tag}-{d[-1]}-{i}"} for d in days for i in ids]


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["dt"], r["id"]))


def _java_rows(jp: JavaPaimon, wh: str) -> list[dict[str, Any]]:
    return _sorted(jp.read(wh, DB, NAME, row_kind=False))


def _our_rows(wh: str) -> list[dict[str, Any]]:
    return _sorted(Warehouse(wh).table(f"{DB}.{NAME}").read().to_pylist())


def _check_lists(table_path: Path, ours_only: bool) -> list[Any]:
    """Every list record: exact stats, or (lists Java 0.9 wrote) all six absent."""
    listed = listed_manifests(table_path)
    for m in listed:
        if all(m.record.get(k) is None for k in STAT_FIELDS) and not ours_only:
            continue  # Java 0.9 writes its 7-field layout
        assert m.stats == m.expected, (m.snapshot_id, m.manifest_list, m.record["_FILE_NAME"])
    return listed


def test_java_09_reads_and_extends_our_manifest_lists(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    table = Warehouse(wh).create_table(
        f"{DB}.{NAME}", ", ".join(f"{c} {t}" for c, t in COLS), primary_key=["dt", "id"], partition_by=["dt"],
        options={"bucket": "2", "deletion-vectors.enabled": "true"})
    path = Path(wh, f"{DB}.db", NAME)
    ref = Reference()

    def ours_write(rows: list[dict[str, Any]], delete: bool = False) -> None:
        table.write(pa.Table.from_pylist(rows, schema=ARROW), delete=delete)
        ref.delete(rows) if delete else ref.upsert(rows)

    ours_write(_rows(DAYS[:2], range(30), "a"))
    ours_write(_rows(DAYS[1:2], range(0, 30, 3), "b"))  # one partition only
    ours_write(_rows(DAYS[:1], [1, 2, 7, 29], "x"), delete=True)
    ours_write(_rows(DAYS[2:], range(10), "c") + _rows(DAYS[:1], range(5), "c"))
    table.compact(full=False)

    listed = _check_lists(path, ours_only=True)
    stats = [m.stats for m in listed]
    assert all(s["_MIN_BUCKET"] is not None and s["_MIN_LEVEL"] is not None for s in stats)
    assert all(s["_MIN_ROW_ID"] is None and s["_MAX_ROW_ID"] is None for s in stats)  # no row tracking
    assert any(s["_MIN_BUCKET"] < s["_MAX_BUCKET"] for s in stats)
    assert any(s["_MAX_LEVEL"] > 0 for s in stats) and any(s["_MIN_LEVEL"] == 0 for s in stats)
    assert any(m.record["_NUM_DELETED_FILES"] > 0 for m in listed)

    assert _java_rows(java_paimon, wh) == _our_rows(wh) == ref.sorted()

    # Java 0.9 writes on top: it reads our lists to build its base list (merging manifests)
    more = _rows(DAYS, range(25, 35), "j")
    java_paimon.write(wh, DB, NAME, more)
    ref.upsert(more)
    java_paimon.compact(wh, DB, NAME, full=False)
    assert _java_rows(java_paimon, wh) == _our_rows(wh) == ref.sorted()
    java_paimon.compact(wh, DB, NAME, full=True)
    assert _java_rows(java_paimon, wh) == _our_rows(wh) == ref.sorted()
    listed = _check_lists(path, ours_only=False)
    assert any(all(m.record.get(k) is None for k in STAT_FIELDS) for m in listed)  # Java 0.9's own lists
    rows = Warehouse(wh).table(f"{DB}.{NAME}").inspect("manifests").to_arrow().to_pylist()
    assert rows and all(r["min_bucket"] is None for r in rows)  # Java's full compaction rewrote them all

    # and we continue after Java: our new lists are exact again, over Java's manifests too
    ours_write(_rows(DAYS[1:], range(20, 40, 2), "d"))
    ours_write(_rows(DAYS[2:], [0, 3], "y"), delete=True)
    latest = max(m.snapshot_id for m in listed_manifests(path))
    for m in listed_manifests(path, [latest]):
        assert m.stats == m.expected or all(v is None for v in m.stats.values())
    assert any(m.stats == m.expected and m.stats["_MIN_BUCKET"] is not None
               for m in listed_manifests(path, [latest]))
    assert _java_rows(java_paimon, wh) == _our_rows(wh) == ref.sorted()
