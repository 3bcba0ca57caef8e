"""``paimon-cli write``: write Parquet/CSV/JSON/Arrow files into a table as one snapshot."""

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
from paimon_cli.output import OutputFormat, note, render, render_outcome
from paimon_cli.progress import ProgressBar


def write(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to write into.")],
    inputs: Annotated[
        list[str],
        typer.Argument(metavar="INPUT...", help="Files, globs (also s3://...), directories, or - for stdin."),
    ],
    format_: Annotated[
        str | None,
        typer.Option("--format", "-f", metavar="parquet|csv|tsv|json|jsonl|arrow",
                     help="Input format (default: from the extension)."),
    ] = None,
    row_kind_column: Annotated[
        str | None,
        typer.Option("--row-kind-column", metavar="COL", help="Input column holding +I/-U/+U/-D per row."),
    ] = None,
    delete: Annotated[bool, typer.Option("--delete", help="Write every input row as a delete (-D).")] = False,
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace the table (or the partitions written) instead of adding.")
    ] = False,
    partition: Annotated[
        list[str] | None,
        typer.Option("--partition", metavar="K=V", help="With --overwrite: the static partition to replace."),
    ] = None,
    option: Annotated[
        list[str] | None,
        typer.Option("--option", metavar="K=V", help="Dynamic table option for this write, repeatable."),
    ] = None,
    write_only: Annotated[
        bool, typer.Option("--write-only", help="Do not compact or expire in this write (leave it to `compact`).")
    ] = False,
    no_expire: Annotated[
        bool, typer.Option("--no-expire", help="Compact as usual but skip snapshot/partition/tag expiry after the "
                                               "commit.")
    ] = False,
    columns: Annotated[
        str | None,
        typer.Option("--columns", metavar="COLS", help="Data-evolution tables: update these columns of the rows the "
                                                       "input's _ROW_ID column names (comma-separated)."),
    ] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="With --overwrite: read and check the input, print the live files the overwrite would "
                          "delete and the rows it would write per partition; write nothing.")] = False,
    yes: YesOpt = False,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Write INPUT files into DB.TABLE in one commit (nothing is committed on any error).

    Columns are matched by name; values are converted to the table's types with checks
    (overflow, lost digits, bad dates, NULL in NOT NULL) and the first bad row is reported.
    With --columns (data-evolution tables) the input's _ROW_ID column names existing rows
    whose given columns are updated, as pypaimon's update_by_arrow_with_row_id does.
    BLOB columns (data-evolution tables) take binary input columns and go to .blob files.
    On a terminal --overwrite shows its dry run (the files it deletes, the rows it writes per
    partition) and asks first (--yes skips that; not with `-`, whose stdin holds the data).

    \b
    Example:
        paimon-cli write shop.orders orders-*.parquet
        paimon-cli write shop.orders changes.jsonl --row-kind-column op
        cat day.csv | paimon-cli write shop.orders - --format csv --overwrite --partition dt=2024-05-01
        paimon-cli write shop.orders day.parquet --overwrite --dry-run
        paimon-cli write shop.events fixes.parquet --columns score,label
    """
    if dry_run and (not overwrite or columns is not None):
        raise typer.BadParameter("--dry-run applies to --overwrite only")
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)

    def plan() -> Any:
        return table.plan_overwrite(list(inputs), format=format_, row_kind_column=row_kind_column,
                                    partition=partition, options=option)

    if dry_run:
        planned = plan()
        render(planned.rows(), output, wide)
        for line in planned.notes:
            note(f"note: {line}")
        note(planned.describe())
        return
    if overwrite and columns is None and "-" not in inputs:  # stdin holding the data cannot answer
        confirm(yes, f"overwrite {table.name}, deleting these files", lambda: plan().rows())
    with ProgressBar("writing") as bar:
        result = table.write(
            list(inputs), format=format_, row_kind_column=row_kind_column, delete=delete, overwrite=overwrite,
            partition=partition, options=option, write_only=write_only, expire=not no_expire, columns=columns,
            progress=bar,
        )
    for line in result.notes():
        note(line)
    if result.warning:
        note(f"warning: {result.warning}")
    render_outcome(result.rows(), output, wide)
