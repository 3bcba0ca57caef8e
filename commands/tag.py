"""``paimon-cli tag``: create, delete, rename, list and expire tags (named, retained snapshots)."""

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
    replace_ = "replace"  # (str.replace would be shadowed)
    trigger = "trigger"


def tag(
    action: Annotated[TagAction, typer.Argument(
        metavar="ACTION", help="create|delete|rename|list|expire|replace|trigger", case_sensitive=False)],
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose tags to manage.")],
    name: Annotated[str | None, typer.Argument(
        metavar="NAME", help="Tag name (delete: comma-separated names).")] = None,
    new_name: Annotated[str | None, typer.Argument(metavar="NEW_NAME", help="rename: the new name.")] = None,
    snapshot: Annotated[int | None, typer.Option(
        "--snapshot", metavar="ID", min=1, help="create, replace: the snapshot to tag (default: latest).")] = None,
    from_timestamp: Annotated[str | None, typer.Option(
        "--from-timestamp", metavar="MILLIS|ISO",
        help="create: tag the earliest snapshot committed at or after this time (epoch milliseconds or ISO-8601, "
             "no offset: local time), as Java's create_tag_from_timestamp.")] = None,
    from_watermark: Annotated[int | None, typer.Option(
        "--from-watermark", metavar="W",
        help="create: tag the earliest snapshot whose watermark is at or above W, as Java's "
             "create_tag_from_watermark.")] = None,
    time_retained: Annotated[str | None, duration_option(
        "--time-retained", "create, replace: keep the tag this long, then `tag expire` deletes it "
                           "(default: the table's tag.default-time-retained).")] = None,
    older_than: Annotated[str | None, time_option(
        "--older-than", "expire: also expire tags created before this local wall-clock time (as Java 2.x "
                        "expire_tags' older_than).")] = None,
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
    if any file deciding that cannot be read, nothing is deleted (exit 6). `replace` points an
    existing tag at another snapshot (Java's replace_tag) and deletes what only its old
    snapshot held. `trigger` creates the tags tag.automatic-creation / tag.creation-period
    would have made up to now, drops auto tags past tag.num-retained-max and expires tags past
    their retention (Java's trigger_tag_automatic_creation). On a terminal `delete`, `expire`,
    `replace` and `trigger` show the changes and ask first (--yes skips that).

    \b
    Example:
        paimon-cli tag create shop.orders release-1 --snapshot 42 --time-retained 7d
        paimon-cli tag create shop.orders eod-0501 --from-timestamp 2024-05-01T18:00:00
        paimon-cli tag list shop.orders -o json
        paimon-cli tag rename shop.orders release-1 release-1.0
        paimon-cli tag replace shop.orders release-1.0 --snapshot 45 --dry-run
        paimon-cli tag delete shop.orders release-1.0 --dry-run
        paimon-cli tag trigger shop.orders --dry-run
        paimon-cli tag expire shop.orders --older-than '2024-05-01 00:00:00'
    """
    act = TagAction(action)
    _check_args(act, name, new_name, snapshot, time_retained, older_than, dry_run)
    if act is not TagAction.create and (from_timestamp is not None or from_watermark is not None):
        raise typer.BadParameter("--from-timestamp and --from-watermark apply to `tag create` only")
    given = [f for f, v in (("--snapshot", snapshot), ("--from-timestamp", from_timestamp),
                            ("--from-watermark", from_watermark)) if v is not None]
    if len(given) > 1:
        raise typer.BadParameter(f"give at most one of {', '.join(given)}")
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    if act is TagAction.list:
        render(table.list_tags(), output, wide, limit=limit)
    elif act is TagAction.create:
        assert name is not None
        t = table.create_tag(name, snapshot=snapshot, time_retained=time_retained, from_timestamp=from_timestamp,
                             from_watermark=from_watermark)
        extra = f", retained {t.time_retained_java}" if t.time_retained_seconds is not None else ""
        if from_timestamp is not None or from_watermark is not None:
            extra += f" (committed {t.snapshot.time_millis}, watermark {t.snapshot.watermark})"
        note(f"created tag {name!r} of {table.name} at snapshot {t.snapshot.id}{extra}")
    elif act is TagAction.replace_:
        assert name is not None
        if not dry_run:
            confirm(yes, f"move tag {name!r} of {table.name}, deleting these files",
                    lambda: table.replace_tag(name, snapshot=snapshot, time_retained=time_retained,
                                              dry_run=True).rows())
        rplan = table.replace_tag(name, snapshot=snapshot, time_retained=time_retained, dry_run=dry_run)
        note(rplan.describe(not dry_run))
        if rplan.freed.files or output is not OutputFormat.table:
            render_outcome(rplan.rows(), output, wide, preview=dry_run, limit=limit)
    elif act is TagAction.trigger:
        if not dry_run:
            confirm(yes, f"create and delete these tags of {table.name}",
                    lambda: table.trigger_tags(dry_run=True).rows())
        tplan = table.trigger_tags(dry_run=dry_run)
        counts = ", ".join(f"{len(tplan.names(a))} {w}" for a, w in (("create", "created"), ("delete", "dropped"),
                                                                     ("expire", "expired")))
        note(f"{'would change' if dry_run else 'changed'} tags of {table.name}: {counts}")
        if tplan.steps or output is not OutputFormat.table:
            render_outcome(tplan.rows(), output, wide, preview=dry_run, limit=limit)
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
    needs_name = act in (TagAction.create, TagAction.delete, TagAction.rename, TagAction.replace_)
    if needs_name and name is None:
        raise typer.BadParameter(f"tag {act.value} needs NAME")
    if act is TagAction.rename and new_name is None:
        raise typer.BadParameter("tag rename needs NAME and NEW_NAME")
    if act is not TagAction.rename and new_name is not None:
        raise typer.BadParameter(f"tag {act.value} takes no NEW_NAME")
    if not needs_name and name is not None:
        raise typer.BadParameter(f"tag {act.value} takes no NAME")
    if act not in (TagAction.create, TagAction.replace_) and (snapshot is not None or time_retained is not None):
        raise typer.BadParameter("--snapshot and --time-retained apply to `tag create` and `tag replace` only")
    if act is not TagAction.expire and older_than is not None:
        raise typer.BadParameter("--older-than applies to `tag expire` only")
    if act not in (TagAction.delete, TagAction.expire, TagAction.replace_, TagAction.trigger) and dry_run:
        raise typer.BadParameter("--dry-run applies to `tag delete`, `expire`, `replace` and `trigger` only")


def _report(plan: object, dry_run: bool, output: OutputFormat, wide: bool, what: str | None,
            limit: int | None) -> None:
    files = plan.files  # type: ignore[attr-defined]
    total = plan.total_bytes  # type: ignore[attr-defined]
    if what is not None:
        verb = "would delete" if dry_run else "deleted"
        note(f"{verb} {what}: {len(files)} file(s), {total} bytes")
    if files or output is not OutputFormat.table:
        render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)  # type: ignore[attr-defined]
