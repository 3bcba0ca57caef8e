"""pytest plugin: pypaimon 2.1 peer fixtures (register with ``pytest_plugins``).

``pypaimon`` is the session-wide :class:`~pypaimon_peer.PyPaimon`; ``pypaimon_tables`` is a
small warehouse written by pypaimon once per session, for read-compat tests of paimon-cli.
If the peer venv cannot be made the fixtures fail: an interop test that silently skips
would hide a broken promise.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from tests.interop.pypaimon_peer import PyPaimon, PyPaimonUnavailable, encode_value, ensure_pypaimon_venv

PK_COLUMNS: list[tuple[str, str]] = [
    ("id", "int64"),
    ("dt", "string"),
    ("name", "string"),
    ("amount", "decimal(10,2)"),
    ("day", "date32"),
    ("ts", "timestamp[ms]"),
    ("score", "float64"),
]
APPEND_COLUMNS: list[tuple[str, str]] = [
    ("id", "int64"),
    ("kind", "string"),
    ("payload", "binary"),
    ("ts", "timestamp[us]"),
]


@dataclass
class PyPaimonTables:
    """What ``pypaimon_tables`` wrote, and what a correct reader must see."""

    warehouse: str
    db: str = "peer"
    pk_table: str = "pk_orders"      # PK (dt, id), partitioned by dt, bucket=2, 3 commits
    append_table: str = "events"     # append-only, unpartitioned, bucket unaware, 2 commits
    tag: str = "v2"                  # tag on pk_table snapshot 2
    tag_snapshot_id: int = 2
    consumer: str = "reader1"        # consumer on pk_table, next snapshot 2
    consumer_next_snapshot: int = 2
    branch: str = "b1"               # branch of pk_table created from the tag
    pk_snapshot_ids: list[int] = field(default_factory=list)
    append_snapshot_ids: list[int] = field(default_factory=list)
    pk_commits: list[list[dict[str, Any]]] = field(default_factory=list)
    append_commits: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def pk_table_path(self) -> str:
        return f"{self.warehouse}/{self.db}.db/{self.pk_table}"

    @property
    def append_table_path(self) -> str:
        return f"{self.warehouse}/{self.db}.db/{self.append_table}"

    def pk_rows(self, upto_commit: int | None = None) -> list[dict[str, Any]]:
        """Merged (deduplicate, last wins) rows after ``upto_commit`` commits, sorted by (dt, id)."""
        merged: dict[tuple[str, int], dict[str, Any]] = {}
        for batch in self.pk_commits[: upto_commit or len(self.pk_commits)]:
            for r in batch:
                merged[(r["dt"], r["id"])] = r
        return [merged[k] for k in sorted(merged)]

    def append_rows(self) -> list[dict[str, Any]]:
        """All appended rows sorted by id."""
        return sorted((r for b in self.append_commits for r in b), key=lambda r: r["id"])


def _pk_row(i: int, dt_: str, name: str, amount: str) -> dict[str, Any]:
    return {
        "id": i, "dt": dt_, "name": name, "amount": Decimal(amount),
        "day": dt.date(2024, 1, 1) + dt.timedelta(days=i),
        "ts": dt.datetime(2024, 1, 2, 3, 4, 5, 123000) + dt.timedelta(minutes=i),
        "score": None if i % 4 == 3 else i / 4,
    }


def _pk_commits() -> list[list[dict[str, Any]]]:
    first = [_pk_row(i, "2024-01-01" if i % 2 == 0 else "2024-01-02", f"n{i}", f"{i}.50")
             for i in range(8)]
    second = [_pk_row(0, "2024-01-01", "n0-upd", "100.00"),
              _pk_row(1, "2024-01-02", "n1-upd", "101.00"),
              _pk_row(8, "2024-01-03", "n8", "8.00")]
    third = [_pk_row(2, "2024-01-01", "n2-upd", "-2.25"),
             _pk_row(9, "2024-01-03", "n9", "9.99")]
    return [first, second, third]


def _append_commits() -> list[list[dict[str, Any]]]:
    base = dt.datetime(2024, 2, 1, 0, 0, 0, 1)
    first = [{"id": i, "kind": "click" if i % 2 else "view", "payload": bytes([i, 255 - i]),
              "ts": base + dt.timedelta(seconds=i)} for i in range(5)]
    second = [{"id": 5 + i, "kind": None if i == 0 else "buy", "payload": None if i == 1 else b"",
               "ts": base + dt.timedelta(days=1, seconds=i)} for i in range(3)]
    return [first, second]


@pytest.fixture(scope="session")
def pypaimon() -> PyPaimon:
    """The pypaimon 2.1 peer (venv made/cached on first use)."""
    try:
        python = ensure_pypaimon_venv()
    except PyPaimonUnavailable as e:
        pytest.fail(f"pypaimon 2.1 peer unavailable: {e}")
    return PyPaimon(python)


@pytest.fixture(scope="session")
def pypaimon_tables(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> PyPaimonTables:
    """A warehouse written by pypaimon 2.1: PK table (3 commits, tag, consumer, branch) + append table (2 commits)."""
    wh: Path = tmp_path_factory.mktemp("pypaimon-wh")
    t = PyPaimonTables(warehouse=str(wh), pk_commits=_pk_commits(), append_commits=_append_commits())
    common = {"warehouse": t.warehouse, "db": t.db}

    def write_op(table: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
        return {"op": "write", **common, "table": table,
                "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]}

    ops: list[dict[str, Any]] = [
        {"op": "create_table", **common, "table": t.pk_table, "columns": [list(c) for c in PK_COLUMNS],
         "primary_keys": ["dt", "id"], "partition_keys": ["dt"], "options": {"bucket": "2"}},
        *[write_op(t.pk_table, batch) for batch in t.pk_commits],
        {"op": "create_table", **common, "table": t.append_table,
         "columns": [list(c) for c in APPEND_COLUMNS], "primary_keys": [], "partition_keys": [],
         "options": {}},
        *[write_op(t.append_table, batch) for batch in t.append_commits],
        {"op": "create_tag", **common, "table": t.pk_table, "tag": t.tag,
         "snapshot_id": t.tag_snapshot_id},
        {"op": "set_consumer", **common, "table": t.pk_table, "consumer": t.consumer,
         "next_snapshot": t.consumer_next_snapshot},
        {"op": "create_branch", **common, "table": t.pk_table, "new_branch": t.branch,
         "from_tag": t.tag},
    ]
    results = pypaimon.batch(ops)
    failed = [r for r in results if not r["ok"]]
    if failed or len(results) != len(ops):
        detail = failed[0]["traceback"] if failed else "driver stopped early"
        raise RuntimeError(f"building pypaimon tables failed: {detail}")
    snaps = [r["result"]["snapshot_id"] for op, r in zip(ops, results, strict=True) if op["op"] == "write"]
    t.pk_snapshot_ids = snaps[: len(t.pk_commits)]
    t.append_snapshot_ids = snaps[len(t.pk_commits):]
    return t
