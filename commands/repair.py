"""``paimon-cli repair``: make the EARLIEST / LATEST snapshot hints match the snapshot files."""

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
    identifier: Annotated[str | None, typer.Argument(
        metavar="[DB.TABLE|DB][,...]",
        help="Table whose snapshot hints to repair; a database: each of its tables; none: every table.")] = None,
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
    Only the two hint files are written; prints both hints before and after. As Java's
    repair, DB repairs each table of DB, no argument every table of the catalog, and
    comma-separated names each one; a failing table does not stop the others and the exit
    code is the worst table's. On a Hive or JDBC catalog, databases and tables found on
    storage (<db folder>/<table> with a Paimon schema; the folder is <warehouse>/<db>.db, or on
    Hive the database's location in the metastore) that the metastore lacks are registered first (action 'register'; --dry-run lists them); nothing is dropped.

    \b
    Example:
        paimon-cli repair shop.orders --dry-run
        paimon-cli repair shop.orders --earliest 120
        paimon-cli repair shop --dry-run
    """
    from paimon_cli.core.api import Warehouse

    if identifier is None or "," in identifier or "." not in identifier:
        refused = [flag for flag, given in (("--earliest", earliest), ("--branch", branch)) if given is not None]
        if refused:
            raise typer.BadParameter(f"{refused[0]} applies to one table (repair DB.TABLE)")
        wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
        report = wh.repair(identifier, dry_run=dry_run)
        for line in report.notes():
            note(line)
        for t in report.failed:
            typer.echo(f"error: {t.identifier}: {t.error}", err=True)  # errors: even under -q
        render_outcome(report.rows(), output, wide, preview=dry_run, limit=limit)
        if report.exit_code:
            raise typer.Exit(report.exit_code)
        return
    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    result = table.repair(earliest=earliest, dry_run=dry_run)
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
