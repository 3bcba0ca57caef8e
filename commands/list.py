"""``paimon-cli list``: databases of the warehouse, or tables of one database."""

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
    """List databases, or the tables of DB with their type.

    Through a metastore catalog every table it holds is listed: Paimon tables (type paimon,
    the ones paimon-cli maintains) and the others with their kind (hive-table, view, ...).

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
        rows = Rows(["database", "table", "type"], [{"database": database, "table": e.name, "type": e.kind}
                                                    for e in wh.list_table_entries(database)])
    render(rows, output, wide, limit=limit)
