"""``paimon-cli repair``: make the EARLIEST / LATEST snapshot hints match the snapshot files."""

from __future__ import annotations

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


def repair(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose snapshot hints to repair.")],
    earliest: Annotated[int | None, typer.Option(
        "--earliest", metavar="ID", min=1,
        help="Make this snapshot the earliest: the first one after a gap in the snapshot ids.")] = None,
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
    """Rewrite missing, unreadable or wrong EARLIEST / LATEST hints of the snapshot directory.

    LATEST becomes the highest snapshot id; EARLIEST the earliest snapshot readers resolve,
    when every snapshot from it to the latest exists. A gap in between is refused (exit 6)
    unless --earliest names the snapshot right after it (Java's repair_earliest_snapshot).
    Only the two hint files are written; prints both hints before and after.

    \b
    Example:
        paimon-cli repair shop.orders --dry-run
        paimon-cli repair shop.orders --earliest 120
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    result = table.repair(earliest=earliest, dry_run=dry_run)
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
