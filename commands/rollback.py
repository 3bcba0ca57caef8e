"""``paimon-cli rollback``: make an earlier snapshot or a tag the latest again."""

from __future__ import annotations

from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    DebugOpt,
    DryRunOpt,
    FsOpt,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
    open_catalog,
    parse_branch,
    parse_identifier,
)
from paimon_cli.output import OutputFormat, note, render

COLUMNS = ["path", "kind", "bytes"]


def rollback(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to roll back.")],
    snapshot: Annotated[
        int | None, typer.Option("--snapshot", metavar="ID", min=1, help="Roll back to this snapshot.")
    ] = None,
    tag: Annotated[str | None, typer.Option("--tag", metavar="TAG", help="Roll back to this tag.")] = None,
    dry_run: DryRunOpt = False,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Roll DB.TABLE back to a snapshot or tag, as Java's rollback_to does.

    Later snapshots, long-lived changelogs and tags on later snapshots are deleted; a tag
    whose snapshot has expired is turned back into a snapshot. Unlike Java 1.x and pypaimon,
    the files only those removed snapshots used are deleted too, so no orphans are left;
    anything still used by another snapshot, tag or branch stays. Prints one row per file
    deleted (or, with --dry-run, that would be).

    \b
    Example:
        paimon-cli rollback shop.orders --snapshot 42 --dry-run
        paimon-cli rollback shop.orders --tag release-1
    """
    if (snapshot is None) == (tag is None):
        raise typer.BadParameter("give exactly one of --snapshot and --tag")
    from paimon_cli.core.operation.rollback import rollback as do_rollback
    from paimon_cli.core.utils.rows import Rows

    tag_name = None
    if tag is not None:
        from paimon_cli.core.table.identifiers import validate_name

        tag_name = validate_name("tag", tag)
    ident = parse_identifier(identifier)
    table = open_catalog(warehouse, fs_option).get_table(ident.full_name, parse_branch(branch))
    plan = do_rollback(table, snapshot_id=snapshot, tag=tag_name, dry_run=dry_run)
    root = table.path.rstrip("/") + "/"
    rows = [
        {"path": f.path[len(root):] if f.path.startswith(root) else f.path, "kind": f.kind, "bytes": f.size}
        for f in plan.files
    ]
    render(Rows(COLUMNS, rows), output, wide)
    verb = "would roll back" if dry_run else "rolled back"
    what = f"tag {plan.from_tag} (snapshot {plan.target_id})" if plan.from_tag else f"snapshot {plan.target_id}"
    extra = "; snapshot re-created from the tag" if plan.create_snapshot else ""
    note(
        f"{ident.full_name}: {verb} to {what}: {len(plan.snapshots)} snapshots, {len(plan.tags)} tags, "
        f"{len(plan.changelogs)} changelogs, {len(plan.files)} files ({plan.total_bytes} bytes){extra}"
    )
    for w in plan.warnings:
        note(f"warning: {w}")
