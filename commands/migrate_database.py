"""``paimon-cli migrate-database``: every Hive table of a database becomes a Paimon table (Java's
``migrate_database``)."""

from typing import Annotated

import typer

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


def migrate_database(
    database: Annotated[str, typer.Argument(metavar="DB", help="The Hive database to migrate.")],
    option: Annotated[list[str] | None, typer.Option("--option", metavar="K=V",
                                                     help="Table option of every Paimon table, repeatable.")] = None,
    dry_run: DryRunOpt = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Migrate every Hive table of database DB as migrate-table does (each keeps its name), as
    Java's migrate_database. Paimon tables and views are skipped.

    All tables are planned first: one that cannot migrate refuses the whole run, before any
    file moves. --dry-run lists every file and where it would go.

    \b
    Example:
        paimon-cli migrate-database shop --catalog hive_prod --dry-run
    """
    from paimon_cli.core.api import Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    plan = wh.migrate_database(database, options=option, dry_run=dry_run)
    render_outcome(plan.rows(), output, wide, preview=dry_run)
    if output == OutputFormat.table:
        note(plan.describe())
