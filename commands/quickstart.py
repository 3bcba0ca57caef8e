"""``paimon-cli quickstart``: build a small demo warehouse and show what it holds."""

from __future__ import annotations

from paimon_cli.options import DebugOpt, FsOpt, WarehouseOpt, WideOpt, open_catalog
from paimon_cli.output import note, render

# (table, columns, primary keys, partition keys, options, comment)
DEMO_TABLES = [
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


def quickstart(
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Create database "demo" with a primary-key table and an append table, then show them.

    Safe to run again: existing tables are left as they are.

    \b
    Example:
        paimon-cli quickstart -w /tmp/paimon-demo
    """
    from paimon_cli.core.schema import Schema
    from paimon_cli.core.system_tables import SYSTEM_TABLES, Rows
    from paimon_cli.core.types import parse_columns

    catalog = open_catalog(warehouse, fs_option)
    catalog.create_database("demo", True)
    for name, columns, pk, parts, options, comment in DEMO_TABLES:
        schema = Schema.of(parse_columns(columns), parts, pk, options, comment)
        catalog.create_table(f"demo.{name}", schema, True)
    note(f"warehouse {warehouse}: database demo")
    tables = catalog.list_tables("demo")
    render(Rows(["database", "table"], [{"database": "demo", "table": t} for t in tables]), wide=wide, title="tables")
    for name in tables:
        table = catalog.get_table(f"demo.{name}")
        render(SYSTEM_TABLES["table"](table, None), wide=wide, title=f"demo.{name}")
    note(f"next: paimon-cli inspect schemas demo.orders -w {warehouse}")
