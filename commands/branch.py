"""``paimon-cli branch``: create, delete, rename, list, fast-forward and merge branches."""

from enum import Enum
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
from paimon_cli.output import OutputFormat, note, render, render_outcome


class BranchAction(str, Enum):
    create = "create"
    delete = "delete"
    list = "list"
    fast_forward = "fast-forward"
    rename = "rename"
    merge = "merge"


def branch(
    action: Annotated[BranchAction, typer.Argument(
        metavar="ACTION", help="create|delete|rename|list|fast-forward|merge", case_sensitive=False)],
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose branches to manage.")],
    name: Annotated[str | None, typer.Argument(
        metavar="NAME", help="Branch name (merge: the source branch, `main` allowed).")] = None,
    new_name: Annotated[str | None, typer.Argument(metavar="NEW_NAME", help="rename: the new name.")] = None,
    tag: Annotated[str | None, typer.Option(
        "--tag", metavar="TAG", help="create: start the branch from this tag (default: empty, schema only).")] = None,
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
    """Manage branches of DB.TABLE as Java Paimon does.

    A branch shares the table's data files and keeps its own snapshots, schemas and tags.
    `rename NAME NEW_NAME` renames a branch (its directory). `fast-forward NAME` makes the
    --branch (default main) equal to branch NAME: its snapshots, schemas and tags from NAME's
    earliest snapshot on are replaced by NAME's. `merge NAME` adds to the --branch (default
    main) the data files branch NAME has and it lacks, in one APPEND snapshot (append tables
    whose histories are append-only from snapshot 1, as Java 2.x's merge_branch).
    `--branch` selects the branch a new branch's tag is read from, and the target of
    fast-forward and merge. On a terminal `delete` and `fast-forward` show the files they
    change and ask first (--yes skips that).

    \b
    Example:
        paimon-cli branch create shop.orders audit --tag release-1
        paimon-cli branch list shop.orders
        paimon-cli branch rename shop.orders audit audit-2024
        paimon-cli branch fast-forward shop.orders audit --dry-run
        paimon-cli branch merge shop.events backfill --dry-run
        paimon-cli branch delete shop.orders audit
    """
    act = BranchAction(action)
    if act is BranchAction.list:
        if name is not None:
            raise typer.BadParameter("branch list takes no NAME")
    elif name is None:
        raise typer.BadParameter(f"branch {act.value} needs NAME")
    if act is BranchAction.rename and new_name is None:
        raise typer.BadParameter("branch rename needs NAME and NEW_NAME")
    if act is not BranchAction.rename and new_name is not None:
        raise typer.BadParameter(f"branch {act.value} takes one NAME (NEW_NAME is for `branch rename`)")
    if tag is not None and act is not BranchAction.create:
        raise typer.BadParameter("--tag applies to `branch create` only")
    if dry_run and act not in (BranchAction.delete, BranchAction.fast_forward, BranchAction.rename,
                               BranchAction.merge):
        raise typer.BadParameter("--dry-run applies to `branch delete`, `rename`, `fast-forward` and `merge` only")
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    if act is BranchAction.list:
        render(table.list_branches(), output, wide, limit=limit)
        return
    assert name is not None
    if act is BranchAction.create:
        table.create_branch(name, tag=tag)
        origin = f" from tag {tag!r}" if tag else " (empty)"
        note(f"created branch {name!r} of {table.name}{origin}")
        return
    if act is BranchAction.rename:
        assert new_name is not None
        plan = table.rename_branch(name, new_name, dry_run=dry_run)
        note(f"{'would rename' if dry_run else 'renamed'} branch {name!r} of {table.name} to {new_name!r}")
        if dry_run or output is not OutputFormat.table:
            render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)
        return
    if act is BranchAction.merge:
        merged = table.merge_branch(name, dry_run=dry_run)
        target = table.branch or "main"
        n, rows = len(merged.entries), merged.rows_added
        if not n:
            note(f"branch {target!r} of {table.name} already has every data file of branch {name!r}; "
                 "nothing to merge")
        elif dry_run:
            note(f"would merge {n} data file(s) ({rows} rows) of branch {name!r} into {target!r} of {table.name}")
        else:
            note(f"merged {n} data file(s) ({rows} rows) of branch {name!r} into {target!r} of {table.name}: "
                 f"snapshot {merged.snapshot_id}")
        if n or output is not OutputFormat.table:
            render_outcome(merged.rows(), output, wide, preview=dry_run, limit=limit)
        return
    if act is BranchAction.delete:
        if not dry_run:
            confirm(yes, f"delete branch {name!r} of {table.name} (these files)",
                    lambda: table.delete_branch(name, dry_run=True).rows())
        plan = table.delete_branch(name, dry_run=dry_run)
        verb = "would delete" if dry_run else "deleted"
        note(f"{verb} branch {name!r} of {table.name}: {len(plan.changes)} metadata file(s)")
    else:
        if not dry_run:
            confirm(yes, f"fast-forward {table.branch or 'main'!r} of {table.name} to branch {name!r} (these "
                    "changes)", lambda: table.fast_forward(name, dry_run=True).rows())
        plan = table.fast_forward(name, dry_run=dry_run)
        target = table.branch or "main"
        verb = "would fast-forward" if dry_run else "fast-forwarded"
        note(f"{verb} {target!r} of {table.name} to branch {name!r}: {len(plan.changes)} file change(s)")
    if plan.changes or output is not OutputFormat.table:
        render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)
