"""``paimon-cli quickstart``: build a small demo warehouse and show what it holds."""

from __future__ import annotations

from paimon_cli.options import DebugOpt, FsOpt, WarehouseOpt, WideOpt
from paimon_cli.output import note, render


def quickstart(
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Create database "demo" with a primary-key table and an append table, write a few
    commits into them, fully compact the key table, then show the tables, their snapshots and
    the merged rows.

    Safe to run again: tables that already hold data are left as they are.

    \b
    Example:
        paimon-cli quickstart -w /tmp/paimon-demo
    """
    from paimon_cli.core.api import Rows, Warehouse

    tables = Warehouse(warehouse, fs_option).quickstart()
    note(f"warehouse {warehouse}: database demo")
    render(Rows(["table"], [{"table": t.name} for t in tables]), wide=wide, title="tables")
    for t in tables:
        render(t.inspect("table"), wide=wide, title=t.name)
        snaps = t.inspect("snapshots")
        cols = ["snapshot_id", "commit_kind", "commit_time", "total_record_count", "delta_record_count"]
        render(Rows(cols, [{c: r[c] for c in cols} for r in snaps.rows]), wide=wide, title=f"{t.name} snapshots")
        rows = t.read()
        render(Rows(rows.column_names, rows.to_pylist()), wide=wide, title=f"{t.name} rows (merged)")
    note(f"next: paimon-cli read demo.orders --where \"dt = '2024-05-02'\" -w {warehouse}")
    note(f"      paimon-cli compact demo.events --plan -w {warehouse}")
    note(f"      paimon-cli expire demo.orders --retain-min 1 --older-than 0s --dry-run -w {warehouse}")
