"""``paimon-cli purge-files``: Java's ``purge_files`` procedure, emptying a table but its schema."""

from collections.abc import Callable
from typing import Annotated

import typer

from paimon_cli.confirm import confirm, interactive
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
from paimon_cli.output import OutputFormat, RowsLike, note, render_outcome


def confirm_purge(yes: bool, dry_run: bool, preview: Callable[[], RowsLike]) -> None:
    """The one place a real purge is confirmed: on a terminal the dry run is shown and a yes
    asked for (as every destructive command does); elsewhere only --yes lets it run."""
    if yes or dry_run:
        return
    if not interactive():
        raise typer.BadParameter("purge-files deletes every data file, snapshot, tag, branch and consumer of the "
                                 "table; pass --yes to confirm (--dry-run lists what would go)")
    confirm(False, "purge every file of the table but its schema", preview)


def purge_files(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to purge.")],
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Confirm: really delete everything but the schema (needed without a terminal; on a terminal the dry run is shown and a yes asked for).")] = False,
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
    """Delete all data of DB.TABLE but its schema, as Java's purge_files (Paimon 1.1+).

    Drops every branch, deletes every tag (with the files only it used) and consumer,
    truncates the table (one OVERWRITE snapshot deleting every data file and index entry),
    deletes the long-lived changelogs (changelog/), expires every snapshot but that one and
    removes orphan files as of now (files of writes still in progress included). Java and
    pypaimon then read an empty table and can write to it again. On a terminal it shows
    the dry run and asks first; without a terminal it needs --yes (exit 2 otherwise). If anything it
    depends on cannot be read, nothing is changed (exit 6). --dry-run lists every file that
    would go with its bytes, and the branches, tags and consumers. Only the main branch.

    \b
    Example:
        paimon-cli purge-files shop.orders --dry-run
        paimon-cli purge-files shop.orders --yes
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    confirm_purge(yes, dry_run, lambda: table.purge_files(dry_run=True).rows())
    result = table.purge_files(dry_run=dry_run)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
    if dry_run and output == OutputFormat.table:
        note(result.describe())
