"""``paimon-cli migrate-file``: a Hive table's data files move into an existing Paimon table
(Java's ``migrate_file``)."""

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


def migrate_file(
    identifier: Annotated[str, typer.Argument(metavar="DB.HIVE_TABLE", help="The Hive table whose files move.")],
    target: Annotated[str, typer.Argument(metavar="DB.PAIMON_TABLE", help="The Paimon table they move into.")],
    keep_origin: Annotated[bool, typer.Option("--keep-origin", help="Keep the (emptied) Hive table registered "
                                                                    "(Java's delete_origin=false).")] = False,
    dry_run: DryRunOpt = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Move the data files of Hive table DB.HIVE_TABLE (Parquet or ORC) into the existing
    unaware-bucket append Paimon table DB.PAIMON_TABLE in one snapshot, as Java's migrate_file.

    The partition keys must be the same, and every file must hold each column of the Paimon
    table under its name and type; anything else is refused before a file moves. The Hive table
    is dropped afterwards unless --keep-origin. On an object store the files are copied and the
    originals deleted after the commit. --dry-run lists every file, where it would go and how.

    \b
    Example:
        paimon-cli migrate-file shop.orders_hive shop.orders --catalog hive_prod --dry-run
    """
    from paimon_cli.core.api import Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    plan = wh.migrate_file(identifier, target, delete_origin=not keep_origin, dry_run=dry_run)
    render_outcome(plan.rows(), output, wide, preview=dry_run)
    if output == OutputFormat.table:
        note(plan.describe())
