"""``paimon-cli rollback``: make an earlier snapshot or a tag the latest again."""

from typing import Annotated, Any

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
    to_timestamp: Annotated[str | None, typer.Option(
        "--to-timestamp", metavar="MILLIS|ISO",
        help="Roll back to the latest snapshot committed at or before this time: epoch milliseconds or "
             "ISO-8601 (no offset: local time), as Java's rollback_to_timestamp.")] = None,
    to_watermark: Annotated[int | None, typer.Option(
        "--to-watermark", metavar="W",
        help="Roll back to the latest snapshot whose watermark is at or below W, as Java's "
             "rollback_to_watermark.")] = None,
    as_latest: Annotated[bool, typer.Option(
        "--as-latest", help="Delete nothing: commit a new snapshot equal to the target (Java's "
                            "rollback_to_as_latest); later snapshots and tags stay.")] = False,
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
    """Roll DB.TABLE back to a snapshot, a tag, a time or a watermark, as Java's rollback_to does.

    Later snapshots, long-lived changelogs and tags on later snapshots are deleted; a tag
    whose snapshot has expired is turned back into a snapshot. Unlike Java 1.x and pypaimon,
    the files only those removed snapshots used are deleted too, so no orphans are left;
    anything still used by another snapshot, tag or branch stays. Prints one row per file
    deleted (or, with --dry-run, that would be), and which snapshot was chosen.
    With --as-latest nothing is deleted: one OVERWRITE snapshot equal to the target is
    committed after the latest (its rows: the files it takes out and puts back), and a target
    not given by tag is first tagged rollback-to-as-latest-<id>-<uuid> so expiration keeps its
    files. On a terminal the changes are shown and the run asks first (--yes skips that).

    \b
    Example:
        paimon-cli rollback shop.orders --snapshot 42 --dry-run
        paimon-cli rollback shop.orders --tag release-1
        paimon-cli rollback shop.orders --to-timestamp 2024-05-01T18:00:00 --dry-run
        paimon-cli rollback shop.orders --to-watermark 1714586400000 --as-latest
    """
    given = [f for f, v in (("--snapshot", snapshot), ("--tag", tag), ("--to-timestamp", to_timestamp),
                            ("--to-watermark", to_watermark)) if v is not None]
    if len(given) != 1:
        raise typer.BadParameter("give exactly one of --snapshot, --tag, --to-timestamp and --to-watermark")
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)

    def run(dry: bool) -> Any:
        verb = table.rollback_as_latest if as_latest else table.rollback
        return verb(snapshot=snapshot, tag=tag, to_timestamp=to_timestamp, to_watermark=to_watermark, dry_run=dry)

    if not dry_run:
        target = {"--snapshot": f"snapshot {snapshot}", "--tag": f"tag {tag!r}",
                  "--to-timestamp": f"the time {to_timestamp}", "--to-watermark": f"watermark {to_watermark}"}[given[0]]
        what = ("committing a snapshot equal to it with these file changes" if as_latest
                else "deleting these files")
        confirm(yes, f"roll {table.name} back to {target}, {what}", lambda: run(True).rows())
    result = run(dry_run)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
    for line in result.notes():
        note(line)
