"""``paimon-cli drop``: drop a table or a database through its catalog, as Java drops it."""

from typing import TYPE_CHECKING, Annotated

import typer

from paimon_cli.confirm import confirm, interactive
from paimon_cli.options import (
    CatalogOpt,
    CatalogOptionOpt,
    DebugOpt,
    DryRunOpt,
    FsOpt,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
)
from paimon_cli.output import OutputFormat, note, render_outcome

if TYPE_CHECKING:
    from paimon_cli.core.api import DropPlan


def drop(
    name: Annotated[str, typer.Argument(metavar="DB.TABLE|DB", help="The table, or (no dot) the database, to drop.")],
    cascade: Annotated[bool, typer.Option("--cascade", help="Drop a database's Paimon tables too (a non-empty "
                                                            "database is refused without it).")] = False,
    if_exists: Annotated[bool, typer.Option("--if-exists", help="A missing table or database is no error.")] = False,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm (needed without a terminal; on a terminal the "
                                                          "dry run is shown and a yes asked for).")] = False,
    dry_run: DryRunOpt = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Drop DB.TABLE (or database DB) as the catalog's Java counterpart drops it.

    The metastore forgets the table first, then a managed table's directory is deleted; an
    external table's files are kept. A database must be empty unless --cascade drops its Paimon
    tables with it; tables of other kinds (Hive tables, views) are refused by name. --dry-run
    lists every file that would go. On a terminal it shows the dry run and asks first; without
    a terminal it needs --yes (exit 2 otherwise).

    \b
    Example:
        paimon-cli drop shop.orders_old --dry-run
        paimon-cli drop shop.orders_old --yes
        paimon-cli drop scratch --cascade --yes --catalog prod
    """
    from paimon_cli.core.api import Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    is_table = "." in name

    def run(dry: bool) -> "DropPlan":
        if is_table:
            return wh.drop_table(name, if_exists=if_exists, dry_run=dry)
        return wh.drop_database(name, cascade=cascade, if_exists=if_exists, dry_run=dry)

    if not (yes or dry_run):
        if not interactive():
            raise typer.BadParameter(f"drop deletes {name} and the files of its managed tables; pass --yes to "
                                     "confirm (--dry-run lists what would go)")
        confirm(False, f"drop {name}", lambda: run(True).rows())
    plan = run(dry_run)
    render_outcome(plan.rows(), output, wide, preview=dry_run)
    if output == OutputFormat.table:
        note(plan.describe())
