"""``paimon-cli quickstart``: build a small demo warehouse and show what it holds."""

from paimon_cli.options import CatalogOpt, CatalogOptionOpt, DebugOpt, FsOpt, WarehouseOpt, WideOpt
from paimon_cli.output import note, render


def quickstart(
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
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

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    tables = wh.quickstart()
    where = wh.cli_selection()
    note(f"{wh.describe()}: database demo")
    render(Rows(["table"], [{"table": t.name} for t in tables]), wide=wide, title="tables")
    for t in tables:
        render(t.inspect("table"), wide=wide, title=t.name)
        snaps = t.inspect("snapshots")
        cols = ["snapshot_id", "commit_kind", "commit_time", "total_record_count", "delta_record_count"]
        render(Rows(cols, [{c: r[c] for c in cols} for r in snaps.rows]), wide=wide, title=f"{t.name} snapshots")
        rows = t.read()
        render(Rows(rows.column_names, rows.to_pylist()), wide=wide, title=f"{t.name} rows (merged)")
    note(f"next: paimon-cli read demo.orders --where \"dt = '2024-05-02'\" {where}")
    note(f"      paimon-cli compact demo.events --plan {where}")
    note(f"      paimon-cli expire demo.orders --retain-min 1 --older-than 0s --dry-run {where}")
