"""``paimon-cli rollback``: make an earlier snapshot or a tag the latest again."""

from __future__ import annotations

from typing import Annotated

import typer

from paimon_cli.confirm import YesOpt, confirm
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


def rollback(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to roll back.")],
    snapshot: Annotated[
        int | None, typer.Option("--snapshot", metavar="ID", min=1, help="Roll back to this snapshot.")
    ] = None,
    tag: Annotated[str | None, typer.Option("--tag", metavar="TAG", help="Roll back to this tag.")] = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
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
    """Roll DB.TABLE back to a snapshot or tag, as Java's rollback_to does.

    Later snapshots, long-lived changelogs and tags on later snapshots are deleted; a tag
    whose snapshot has expired is turned back into a snapshot. Unlike Java 1.x and pypaimon,
    the files only those removed snapshots used are deleted too, so no orphans are left;
    anything still used by another snapshot, tag or branch stays. Prints one row per file
    deleted (or, with --dry-run, that would be). On a terminal the files are shown and the run
    asks first (--yes skips that).

    \b
    Example:
        paimon-cli rollback shop.orders --snapshot 42 --dry-run
        paimon-cli rollback shop.orders --tag release-1
    """
    if (snapshot is None) == (tag is None):
        raise typer.BadParameter("give exactly one of --snapshot and --tag")
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    if not dry_run:
        target = f"snapshot {snapshot}" if tag is None else f"tag {tag!r}"
        confirm(yes, f"roll {table.name} back to {target}, deleting these files",
                lambda: table.rollback(snapshot=snapshot, tag=tag, dry_run=True).rows())
    result = table.rollback(snapshot=snapshot, tag=tag, dry_run=dry_run)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
    for line in result.notes():
        note(line)
