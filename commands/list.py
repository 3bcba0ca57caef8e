"""``paimon-cli list``: databases of the warehouse, or tables of one database."""

from __future__ import annotations

from typing import Annotated

import typer

from paimon_cli.options import CatalogOpt, CatalogOptionOpt, DebugOpt, FsOpt, LimitOpt, OutputOpt, WarehouseOpt, WideOpt
from paimon_cli.output import OutputFormat, render


def list_(
    database: Annotated[str | None, typer.Argument(metavar="DB", help="List this database's tables.")] = None,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    limit: LimitOpt = None,
    debug: DebugOpt = False,
) -> None:
    """List databases, or the tables of DB.

    \b
    Example:
        paimon-cli list -w ./warehouse
        paimon-cli list shop -o json
    """
    from paimon_cli.core.api import Rows, Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    if database is None:
        rows = Rows(["database"], [{"database": d} for d in wh.list_databases()])
    else:
        rows = Rows(["database", "table"], [{"database": database, "table": t} for t in wh.list_tables(database)])
    render(rows, output, wide, limit=limit)
