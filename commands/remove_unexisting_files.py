"""``paimon-cli remove-unexisting-files``: drop manifest entries whose data file is gone."""

from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    CatalogOpt,
    CatalogOptionOpt,
    DebugOpt,
    DryRunOpt,
    FsOpt,
    LimitOpt,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
)
from paimon_cli.output import OutputFormat, note, render_outcome


def remove_unexisting_files(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to check.")],
    dry_run: DryRunOpt = False,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    limit: LimitOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Remove from the latest snapshot the data files that no longer exist, as Java's
    remove_unexisting_files: their rows are lost, the rest of the table reads again.

    Every live data file (all levels, external paths too) is checked; missing ones become
    DELETE entries of one OVERWRITE snapshot. A manifest that cannot be read, or a file whose
    existence cannot be told, refuses (exit 6) with nothing changed. Prints one row per
    missing file (with --dry-run: exactly the entries a real run drops).

    \b
    Example:
        paimon-cli remove-unexisting-files shop.orders --dry-run
        paimon-cli remove-unexisting-files shop.orders
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    result = table.remove_unexisting_files(dry_run=dry_run)
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
