"""``paimon-cli migrate-table``: a Hive Parquet/ORC table becomes a Paimon table in place (Java's
``migrate_table``)."""

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


def migrate_table(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="The Hive table to migrate.")],
    target_table: Annotated[str | None, typer.Option("--target-table", metavar="DB.TABLE",
                                                     help="Name of the Paimon table (default: the Hive "
                                                          "table's own name).")] = None,
    option: Annotated[list[str] | None, typer.Option("--option", metavar="K=V",
                                                     help="Table option of the Paimon table, repeatable.")] = None,
    keep_origin: Annotated[bool, typer.Option("--keep-origin", help="Keep the (emptied) Hive table registered "
                                                                    "(Java's delete_origin=false; needs "
                                                                    "--target-table).")] = False,
    dry_run: DryRunOpt = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Turn Hive table DB.TABLE (Parquet or ORC, in the catalog's Hive Metastore) into an
    unaware-bucket append Paimon table, moving its data files, as Java's migrate_table does
    (on an object store: copied, the originals deleted once the table is committed).

    Every file is read and checked and the whole migration decided before anything changes:
    other formats, unmapped column types, files whose columns differ from the table and
    subdirectories are refused by name. If a move or the commit fails, the files move back (or
    the copies are deleted) and the Hive table stays as it was. --dry-run lists every file, where
    it would go and whether it is renamed or copied.

    \b
    Example:
        paimon-cli migrate-table shop.orders --catalog hive_prod --dry-run
        paimon-cli migrate-table shop.orders --catalog hive_prod --option file.compression=zstd
    """
    from paimon_cli.core.api import Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    plan = wh.migrate_table(identifier, target=target_table, options=option, delete_origin=not keep_origin,
                            dry_run=dry_run)
    render_outcome(plan.rows(), output, wide, preview=dry_run)
    if output == OutputFormat.table:
        note(plan.describe())
