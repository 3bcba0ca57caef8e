"""A warehouse of tables in known bad states, for ``maintain`` (and ``health``) tests.

Every table is written through the library as a writer would leave it without a compaction
job (``write-only``): what ``maintain`` must put right. ``bad.corrupt`` has a snapshot file
that is not JSON: it must be reported and left byte for byte as it is.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from pathlib import Path
from typing import Any

import pyarrow as pa

from paimon_cli.core.api import Warehouse

DB = "bad"
# table -> the finding kinds maintain must clear
FIXABLE = {
    "small": {"small_files"},
    "l0": {"sorted_runs"},
    "snaps": {"snapshots"},
    "parts": {"expired_partitions"},
    "index": {"missing_file_index"},
}
CORRUPT = "corrupt"
WRITE_ONLY = {"write-only": "true"}


def _rows(start: int, n: int, **extra: Any) -> pa.Table:
    cols: dict[str, Any] = {"id": pa.array(range(start, start + n), pa.int64()),
                            "v": pa.array([f"v{i}" for i in range(start, start + n)], pa.string())}
    for k, v in extra.items():
        cols[k] = pa.array([v] * n, pa.string())
    return pa.table(cols)


def build_bad_warehouse(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    """Create the tables; returns the rows each table must hold (sorted (id, v[, dt]) tuples)."""
    wh = Warehouse(str(path))
    expect: dict[str, list[tuple[Any, ...]]] = {}

    t = wh.create_table(f"{DB}.small", "id BIGINT, v STRING", options={"bucket": "1", "bucket-key": "id", **WRITE_ONLY})
    for i in range(6):  # six small files in one bucket: compaction.min.file-num is 5
        t.write(_rows(i * 10, 10))
    expect["small"] = [(i, f"v{i}") for i in range(60)]

    t = wh.create_table(f"{DB}.l0", "id BIGINT NOT NULL, v STRING", primary_key="id",
                        options={"bucket": "1", **WRITE_ONLY})
    for i in range(7):  # seven level-0 runs: num-sorted-run.compaction-trigger is 5
        t.write(_rows(i * 5, 10))  # overlapping keys: later writes win
    expect["l0"] = [(i, f"v{i}") for i in range(40)]

    t = wh.create_table(f"{DB}.snaps", "id BIGINT, v STRING", options={
        "snapshot.num-retained.min": "1", "snapshot.num-retained.max": "2", **WRITE_ONLY})
    for i in range(5):
        t.write(_rows(i * 3, 3))
    expect["snaps"] = [(i, f"v{i}") for i in range(15)]

    today = dt.date.today().isoformat()
    t = wh.create_table(f"{DB}.parts", "id BIGINT, v STRING, dt STRING", partition_by="dt", options={
        "partition.expiration-time": "1 d", "partition.timestamp-formatter": "yyyy-MM-dd", **WRITE_ONLY})
    t.write(_rows(0, 5, dt="2020-01-01"))
    t.write(_rows(5, 5, dt=today))
    expect["parts"] = [(i, f"v{i}", today) for i in range(5, 10)]

    t = wh.create_table(f"{DB}.index", "id BIGINT, v STRING", options=WRITE_ONLY)
    t.write(_rows(0, 20))
    t.alter(set_options={"file-index.bloom-filter.columns": "v"})  # the files written before lack it
    expect["index"] = [(i, f"v{i}") for i in range(20)]

    t = wh.create_table(f"{DB}.{CORRUPT}", "id BIGINT, v STRING", options=WRITE_ONLY)
    t.write(_rows(0, 5))
    t.write(_rows(5, 5))
    (path / f"{DB}.db" / CORRUPT / "snapshot" / "snapshot-2").write_bytes(b"{ not json")
    return expect


def tree_digest(root: Path) -> str:
    """A hash of every file's path, bytes and mode under ``root`` (and of the directories)."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        h.update(str(p.relative_to(root)).encode() + b"\0")
        if p.is_file():
            h.update(p.read_bytes())
        h.update(str(p.stat().st_mode).encode())
    return h.hexdigest()


def table_rows(wh: Warehouse, name: str) -> list[tuple[Any, ...]]:
    t = wh.table(f"{DB}.{name}").read()
    cols = [c for c in ("id", "v", "dt") if c in t.column_names]
    return sorted(zip(*(t.column(c).to_pylist() for c in cols), strict=True))
