"""``paimon-cli expire-changelogs``: Java's ``expire_changelogs`` procedure on long-lived changelogs."""

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
    time_option,
)
from paimon_cli.output import OutputFormat, note, render_outcome


def expire_changelogs(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose changelogs to expire.")],
    retain_max: Annotated[
        int | None, typer.Option("--retain-max", metavar="N", help="Keep changelogs of at most the newest N "
                                                                   "snapshot ids (default: unbounded).")
    ] = None,
    retain_min: Annotated[
        int | None, typer.Option("--retain-min", metavar="N", help="Never expire the newest N ids (default: 1).")
    ] = None,
    older_than: Annotated[
        str | None, time_option("--older-than", "Expire only changelogs committed before this (default: none).")
    ] = None,
    max_deletes: Annotated[
        int | None, typer.Option("--max-deletes", metavar="N", help="Expire at most N changelogs in this run "
                                                                    "(default: unbounded).")
    ] = None,
    delete_all: Annotated[
        bool, typer.Option("--delete-all", help="Delete every long-lived changelog and the changelog hints "
                                                "(all must be older than the earliest snapshot).")
    ] = False,
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
    """Expire the long-lived changelogs (changelog/) of DB.TABLE, as Java's expire_changelogs.

    Only the flags given decide, never the table's options: without --retain-max or
    --older-than nothing expires. Each expired changelog's changelog files (or, when the table
    produces no changelog, the data files its delta deleted) go unless a tag or the earliest
    snapshot still uses them, then its manifests and the changelog file; EARLIEST moves on.
    Consumers keep the changelogs they will read. --delete-all removes every changelog and the
    changelog EARLIEST / LATEST hints; refused (exit 6) unless all are older than the earliest
    snapshot. Anything unreadable that decides what is still used: nothing deleted (exit 6).

    \b
    Example:
        paimon-cli expire-changelogs shop.orders --retain-max 20 --dry-run
        paimon-cli expire-changelogs shop.orders --older-than 7d --retain-min 5
        paimon-cli expire-changelogs shop.orders --delete-all
    """
    if delete_all and any(a is not None for a in (retain_max, retain_min, older_than, max_deletes)):
        raise typer.BadParameter("--delete-all takes none of --retain-max, --retain-min, --older-than, --max-deletes")
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    result = table.expire_changelogs(retain_max=retain_max, retain_min=retain_min, older_than=older_than,
                                     max_deletes=max_deletes, delete_all=delete_all, dry_run=dry_run)
    for n in result.plan.notes:
        note(f"note: {n}")
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
    if dry_run and output == OutputFormat.table:
        note(result.describe())
