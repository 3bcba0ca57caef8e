"""``paimon-cli tag``: create, delete, rename, list and expire tags (named, retained snapshots)."""

from __future__ import annotations

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
    duration_option,
    time_option,
)
from paimon_cli.output import OutputFormat, note, render, render_outcome


class TagAction(str, Enum):
    create = "create"
    delete = "delete"
    rename = "rename"
    list = "list"
    expire = "expire"


def tag(
    action: Annotated[TagAction, typer.Argument(metavar="ACTION", help="create|delete|rename|list|expire",
                                                case_sensitive=False)],
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose tags to manage.")],
    name: Annotated[str | None, typer.Argument(
        metavar="NAME", help="Tag name (delete: comma-separated names).")] = None,
    new_name: Annotated[str | None, typer.Argument(metavar="NEW_NAME", help="rename: the new name.")] = None,
    snapshot: Annotated[int | None, typer.Option(
        "--snapshot", metavar="ID", min=1, help="create: the snapshot to tag (default: latest).")] = None,
    time_retained: Annotated[str | None, duration_option(
        "--time-retained", "create: keep the tag this long, then `tag expire` deletes it "
                           "(default: the table's tag.default-time-retained).")] = None,
    older_than: Annotated[str | None, time_option(
        "--older-than", "expire: also expire tags created before this (as Java 1.x expire_tags).")] = None,
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
    """Manage tags of DB.TABLE as Java Paimon does.

    Deleting a tag whose snapshot has expired also deletes the data and metadata files only
    that tag still used (never files a snapshot, another tag, a branch or a changelog uses);
    if any file deciding that cannot be read, nothing is deleted (exit 6). On a terminal
    `delete` and `expire` show the files and ask first (--yes skips that).

    \b
    Example:
        paimon-cli tag create shop.orders release-1 --snapshot 42 --time-retained 7d
        paimon-cli tag list shop.orders -o json
        paimon-cli tag rename shop.orders release-1 release-1.0
        paimon-cli tag delete shop.orders release-1.0 --dry-run
        paimon-cli tag expire shop.orders
    """
    act = TagAction(action)
    _check_args(act, name, new_name, snapshot, time_retained, older_than, dry_run)
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    if act is TagAction.list:
        render(table.list_tags(), output, wide, limit=limit)
    elif act is TagAction.create:
        assert name is not None
        t = table.create_tag(name, snapshot=snapshot, time_retained=time_retained)
        extra = f", retained {t.time_retained_java}" if t.time_retained_seconds is not None else ""
        note(f"created tag {name!r} of {table.name} at snapshot {t.snapshot.id}{extra}")
    elif act is TagAction.rename:
        assert name is not None and new_name is not None
        table.rename_tag(name, new_name)
        note(f"renamed tag {name!r} of {table.name} to {new_name!r}")
    elif act is TagAction.delete:
        assert name is not None
        if not dry_run:
            confirm(yes, f"delete tag(s) {name} of {table.name} and these files",
                    lambda: table.delete_tags(name, dry_run=True).rows())
        plan = table.delete_tags(name, dry_run=dry_run)
        _report(plan, dry_run, output, wide, f"tag(s) {', '.join(plan.tags)}", limit)
    else:
        if not dry_run:
            confirm(yes, f"delete these expired tags of {table.name} and their files",
                    lambda: table.expire_tags(older_than=older_than, dry_run=True).rows())
        plan = table.expire_tags(older_than=older_than, dry_run=dry_run)
        if not plan.tags:
            note(f"no tag of {table.name} has expired")
        _report(plan, dry_run, output, wide, f"expired tag(s) {', '.join(plan.tags)}" if plan.tags else None,
                limit)


def _check_args(act: TagAction, name: str | None, new_name: str | None, snapshot: int | None,
                time_retained: str | None, older_than: str | None, dry_run: bool) -> None:
    needs_name = act in (TagAction.create, TagAction.delete, TagAction.rename)
    if needs_name and name is None:
        raise typer.BadParameter(f"tag {act.value} needs NAME")
    if act is TagAction.rename and new_name is None:
        raise typer.BadParameter("tag rename needs NAME and NEW_NAME")
    if act is not TagAction.rename and new_name is not None:
        raise typer.BadParameter(f"tag {act.value} takes no NEW_NAME")
    if not needs_name and name is not None:
        raise typer.BadParameter(f"tag {act.value} takes no NAME")
    if act is not TagAction.create and (snapshot is not None or time_retained is not None):
        raise typer.BadParameter("--snapshot and --time-retained apply to `tag create` only")
    if act is not TagAction.expire and older_than is not None:
        raise typer.BadParameter("--older-than applies to `tag expire` only")
    if act not in (TagAction.delete, TagAction.expire) and dry_run:
        raise typer.BadParameter("--dry-run applies to `tag delete` and `tag expire` only")


def _report(plan: object, dry_run: bool, output: OutputFormat, wide: bool, what: str | None,
            limit: int | None) -> None:
    files = plan.files  # type: ignore[attr-defined]
    total = plan.total_bytes  # type: ignore[attr-defined]
    if what is not None:
        verb = "would delete" if dry_run else "deleted"
        note(f"{verb} {what}: {len(files)} file(s), {total} bytes")
    if files or output is not OutputFormat.table:
        render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)  # type: ignore[attr-defined]
