"""``paimon-cli consumer``: list, reset and clear the consumers that pin snapshots."""

from enum import Enum
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
from paimon_cli.output import OutputFormat, note, render, render_outcome


class ConsumerAction(str, Enum):
    list = "list"
    reset = "reset"
    clear = "clear"


def consumer(
    action: Annotated[ConsumerAction, typer.Argument(metavar="ACTION", help="list|reset|clear",
                                                     case_sensitive=False)],
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose consumers to manage.")],
    consumer_id: Annotated[str | None, typer.Argument(metavar="ID", help="reset: the consumer id.")] = None,
    snapshot: Annotated[int | None, typer.Option(
        "--snapshot", metavar="ID", min=1,
        help="reset: the next snapshot the consumer reads (must exist); without it the consumer is deleted.")] = None,
    including: Annotated[str | None, typer.Option(
        "--including", metavar="REGEX", help="clear: consumers whose whole id matches (default: all).")] = None,
    excluding: Annotated[str | None, typer.Option(
        "--excluding", metavar="REGEX", help="clear: but not those whose whole id matches this.")] = None,
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
    """Manage the consumers of DB.TABLE (streaming readers' progress) as Java Paimon does.

    A consumer keeps every snapshot from its next one on: one whose job is gone stops
    expiration for good. `reset ID --snapshot N` moves it (Java's reset_consumer), `reset ID`
    without --snapshot deletes it, `clear` deletes every consumer whose whole id matches
    --including (default all) and not --excluding (Java's clear_consumers). `list` shows each
    consumer's next snapshot, when it last moved and how many snapshots it has yet to read.
    On a terminal `reset` and `clear` show the change and ask first (--yes skips that).

    \b
    Example:
        paimon-cli consumer list shop.orders
        paimon-cli consumer reset shop.orders my-job --snapshot 42
        paimon-cli consumer reset shop.orders dead-job
        paimon-cli consumer clear shop.orders --including 'etl-.*' --excluding 'etl-prod' --dry-run
    """
    act = ConsumerAction(action)
    if act is ConsumerAction.reset and consumer_id is None:
        raise typer.BadParameter("consumer reset needs ID")
    if act is not ConsumerAction.reset and (consumer_id is not None or snapshot is not None):
        raise typer.BadParameter("ID and --snapshot apply to `consumer reset` only")
    if act is not ConsumerAction.clear and (including is not None or excluding is not None):
        raise typer.BadParameter("--including and --excluding apply to `consumer clear` only")
    if act is ConsumerAction.list and dry_run:
        raise typer.BadParameter("--dry-run applies to `consumer reset` and `consumer clear` only")
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    if act is ConsumerAction.list:
        render(table.list_consumers(), output, wide, limit=limit)
        return
    if act is ConsumerAction.reset:
        assert consumer_id is not None

        def run(dry: bool) -> Any:
            return table.reset_consumer(consumer_id, snapshot=snapshot, dry_run=dry)

        what = (f"move consumer {consumer_id!r} of {table.name} to snapshot {snapshot}" if snapshot is not None
                else f"delete consumer {consumer_id!r} of {table.name}")
    else:
        def run(dry: bool) -> Any:
            return table.clear_consumers(including=including, excluding=excluding, dry_run=dry)

        what = f"delete these consumers of {table.name}"
    if not dry_run:
        confirm(yes, what, lambda: run(True).rows())
    plan = run(dry_run)
    verb = "would change" if dry_run else "changed"
    note(f"{verb} {len(plan.changes)} consumer(s) of {table.name}")
    if plan.changes or output is not OutputFormat.table:
        render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)
