"""``paimon-cli alter``: change a table's options, columns or comment (a new schema version)."""

from typing import Annotated, Any

import typer

from paimon_cli.confirm import YesOpt, confirm
from paimon_cli.options import (
    BranchOpt,
    CatalogOpt,
    CatalogOptionOpt,
    DebugOpt,
    FsOpt,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
)
from paimon_cli.output import OutputFormat, note, render

_Multi = list[str] | None


def alter(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to change.")],
    set_: Annotated[_Multi, typer.Option("--set", metavar="K=V", help="Set a table option.")] = None,
    unset: Annotated[_Multi, typer.Option("--unset", metavar="K", help="Remove a table option.")] = None,
    add_column: Annotated[_Multi, typer.Option("--add-column", metavar='"NAME TYPE"', help="Add a column.")] = None,
    rename_column: Annotated[_Multi, typer.Option("--rename-column", metavar="OLD:NEW", help="Rename a column.")] = None,
    drop_column: Annotated[_Multi, typer.Option("--drop-column", metavar="NAME", help="Drop a column.")] = None,
    comment: Annotated[str | None, typer.Option("--comment", metavar="TEXT", help="Replace the table comment.")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print every change (column, option, comment: before and after) and the schema id a "
                          "real run would commit; change nothing.")] = False,
    yes: YesOpt = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    branch: BranchOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Alter a table; all changes commit together as one new schema.

    --drop-column asks first on a terminal, showing every change (--yes skips that);
    --dry-run prints the changes and commits nothing.

    \b
    Example:
        paimon-cli alter shop.orders --set snapshot.num-retained.max=50 --add-column "note STRING"
        paimon-cli alter shop.orders --drop-column legacy --dry-run
    """
    if not (set_ or unset or add_column or rename_column or drop_column or comment is not None):
        raise typer.BadParameter(
            "nothing to change: give --set, --unset, --add-column, --rename-column, --drop-column or --comment"
        )
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    changes: dict[str, Any] = {"set_options": set_, "unset": unset, "add_columns": add_column, "rename_columns": rename_column,
               "drop_columns": drop_column, "comment": comment}
    if dry_run:
        plan = table.plan_alter(**changes)
        render(plan.rows(), output, wide)
        note(plan.describe())
        return
    if drop_column:
        confirm(yes, f"alter {table.name}, dropping column(s) {', '.join(drop_column)}",
                lambda: table.plan_alter(**changes).rows())
    schema_id = table.alter(**changes)
    note(f"altered {table.name}: schema {schema_id}")
