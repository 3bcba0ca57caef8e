"""The demo warehouse ``paimon-cli quickstart`` builds: two small tables with a few commits.

It goes through the same write, commit and compaction path as ``paimon-cli write`` and
``paimon-cli compact``, so a new user's first look at the tool shows real snapshots (APPEND
and COMPACT), files and merged rows.
"""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa

from .catalog.base import Catalog
from .compact.job import compact_table
from .data.types import parse_columns
from .format.arrow_schema import arrow_schema
from .operation.commit import FileStoreCommit
from .operation.write import TableWrite
from .schema.table_schema import Schema

DATABASE = "demo"

# (table, columns, primary keys, partition keys, options, comment)
TABLES: list[tuple[str, str, list[str], list[str], dict[str, str], str]] = [
    (
        "orders",
        "order_id BIGINT NOT NULL, customer STRING, amount DECIMAL(10, 2), dt STRING NOT NULL",
        ["order_id", "dt"],
        ["dt"],
        {"bucket": "2"},
        "primary-key table, partitioned by day, 2 buckets",
    ),
    (
        "events",
        "event_time TIMESTAMP(3), user_id BIGINT, action STRING, dt STRING",
        [],
        ["dt"],
        {},
        "append table, partitioned by day",
    ),
]


def _batches(name: str) -> list[tuple[dict[str, list[Any]], list[int] | None]]:
    """Column data per commit, and row kinds (0 +I, 2 +U, 3 -D) for the key table."""
    if name == "orders":
        return [
            ({"order_id": [1, 2, 3, 4], "customer": ["ann", "bob", "cy", "dee"],
              "amount": [Decimal("10.50"), Decimal("20.00"), Decimal("7.25"), Decimal("99.90")],
              "dt": ["2024-05-01", "2024-05-01", "2024-05-02", "2024-05-02"]}, None),
            ({"order_id": [2, 4, 5], "customer": ["bob", "dee", "eve"],
              "amount": [Decimal("25.00"), Decimal("99.90"), Decimal("3.10")],
              "dt": ["2024-05-01", "2024-05-02", "2024-05-02"]}, [2, 3, 0]),
        ]
    t0 = dt.datetime(2024, 5, 1, 9, 0)
    return [
        ({"event_time": [t0 + dt.timedelta(minutes=i) for i in range(4)], "user_id": [1, 2, 1, 3],
          "action": ["login", "view", "buy", "login"], "dt": ["2024-05-01"] * 4}, None),
        ({"event_time": [t0 + dt.timedelta(days=1, minutes=i) for i in range(2)], "user_id": [2, 2],
          "action": ["view", "logout"], "dt": ["2024-05-02"] * 2}, None),
    ]


def build_demo_warehouse(catalog: Catalog) -> list[str]:
    """Create the demo tables and fill the empty ones; returns the table identifiers."""
    catalog.create_database(DATABASE, ignore_if_exists=True)
    names = []
    for name, columns, pk, parts, options, comment in TABLES:
        ident = f"{DATABASE}.{name}"
        schema = Schema.of(parse_columns(columns), parts, pk, options, comment)
        table = catalog.create_table(ident, schema, ignore_if_exists=True)
        names.append(ident)
        if table.snapshot_manager.latest_snapshot_id() is not None:
            continue  # already filled by an earlier quickstart: leave it as it is
        target = arrow_schema(list(table.schema.fields))
        for data, kinds in _batches(name):
            tw = TableWrite(table)
            commit = FileStoreCommit(table)
            try:
                tw.write_arrow(pa.table(data).cast(target), None if kinds is None else np.array(kinds, np.int8))
                commit.commit(tw.prepare_commit(), "APPEND")
            except BaseException:
                if not commit.may_have_published():
                    tw.abort()
                raise
            table = catalog.get_table(ident)
        if pk:
            # the maintenance job users run from cron: fold the sorted runs into the top level
            compact_table(table, full=True, engine="local")
    return names
