"""``paimon-cli alter``: change a table's options, columns or comment (a new schema version)."""

from __future__ import annotations

from typing import Annotated, Any, Optional

import typer

from paimon_cli.options import (
    BranchOpt,
    DebugOpt,
    FsOpt,
    WarehouseOpt,
    open_catalog,
    parse_branch,
    parse_identifier,
    parse_key_values,
)
from paimon_cli.output import note

_Multi = Optional[list[str]]


def alter(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to change.")],
    set_: Annotated[_Multi, typer.Option("--set", metavar="K=V", help="Set a table option.")] = None,
    unset: Annotated[_Multi, typer.Option("--unset", metavar="K", help="Remove a table option.")] = None,
    add_column: Annotated[_Multi, typer.Option("--add-column", metavar='"NAME TYPE"', help="Add a column.")] = None,
    rename_column: Annotated[_Multi, typer.Option("--rename-column", metavar="OLD:NEW", help="Rename a column.")] = None,
    drop_column: Annotated[_Multi, typer.Option("--drop-column", metavar="NAME", help="Drop a column.")] = None,
    comment: Annotated[str | None, typer.Option("--comment", metavar="TEXT", help="Replace the table comment.")] = None,
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    branch: BranchOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Alter a table; all changes commit together as one new schema.

    \b
    Example:
        paimon-cli alter shop.orders --set snapshot.num-retained.max=50 --add-column "note STRING"
    """
    if not (set_ or unset or add_column or rename_column or drop_column or comment is not None):
        raise typer.BadParameter(
            "nothing to change: give --set, --unset, --add-column, --rename-column, --drop-column or --comment"
        )
    from paimon_cli.core.data.types import parse_columns
    from paimon_cli.core.errors import InvalidInput
    from paimon_cli.core.schema import schema_change as s

    ident = parse_identifier(identifier)
    changes: list[Any] = [s.SetOption(k, v) for k, v in parse_key_values(set_, "--set").items()]
    changes += [s.RemoveOption(k) for k in unset or []]
    for text in add_column or []:
        changes += [s.AddColumn(n, t, d) for n, t, d in parse_columns(text)]
    for pair in rename_column or []:
        old, sep, new = pair.partition(":")
        if not sep or not old or not new:
            raise InvalidInput(f"--rename-column {pair!r}: expected OLD:NEW")
        changes.append(s.RenameColumn(old, new))
    changes += [s.DropColumn(n) for n in drop_column or []]
    if comment is not None:
        changes.append(s.UpdateComment(comment))
    new_schema = open_catalog(warehouse, fs_option).alter_table(ident.full_name, changes, parse_branch(branch))
    note(f"altered {ident.full_name}: schema {new_schema.id}")
