"""``paimon-cli write``: write Parquet/CSV/JSON/Arrow files into a table as one snapshot."""

from __future__ import annotations

from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    DebugOpt,
    FsOpt,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
    open_catalog,
    parse_branch,
    parse_identifier,
    parse_key_values,
)
from paimon_cli.output import OutputFormat, note, render

RESULT_COLUMNS = ["snapshot_id", "commit_kind", "files", "rows", "bytes", "seconds"]


def write(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to write into.")],
    inputs: Annotated[
        list[str],
        typer.Argument(metavar="INPUT...", help="Files, globs (also s3://...), directories, or - for stdin."),
    ],
    format_: Annotated[
        str | None,
        typer.Option("--format", "-f", metavar="FMT", help="parquet|csv|json|arrow (default: from the extension)."),
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
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Write INPUT files into DB.TABLE in one commit (nothing is committed on any error).

    Columns are matched by name; values are converted to the table's types with checks
    (overflow, lost digits, bad dates, NULL in NOT NULL) and the first bad row is reported.

    \b
    Example:
        paimon-cli write shop.orders orders-*.parquet
        paimon-cli write shop.orders changes.jsonl --row-kind-column op
        cat day.csv | paimon-cli write shop.orders - --format csv --overwrite --partition dt=2024-05-01
    """
    from paimon_cli.core.compact.write_job import write_table_result
    from paimon_cli.core.errors import InvalidInput
    from paimon_cli.core.io.fileio import parse_storage_options
    from paimon_cli.core.operation.partition_spec import parse_partition_spec
    from paimon_cli.core.utils.rows import Rows

    ident = parse_identifier(identifier)
    spec = parse_partition_spec(partition or [])
    if spec and not overwrite:
        raise InvalidInput("--partition is only valid with --overwrite")
    dyn_options = parse_key_values(option, "--option")
    if write_only:
        dyn_options["write-only"] = "true"
    catalog = open_catalog(warehouse, fs_option)
    table = catalog.get_table(ident.full_name, parse_branch(branch))
    result = write_table_result(
        table, list(inputs), fmt=format_, row_kind_column=row_kind_column, delete=delete,
        overwrite=overwrite, overwrite_partition=spec or None, options=dyn_options or None,
        storage_options=parse_storage_options(fs_option or []), expire=not no_expire,
    )
    if result.warning:
        note(f"warning: {result.warning}")
    snap = result.snapshot
    s = result.summary
    rows = Rows(RESULT_COLUMNS, [{
        "snapshot_id": None if snap is None else snap.id,
        "commit_kind": None if snap is None else snap.commit_kind,
        "files": s.files,
        "rows": s.rows,
        "bytes": s.bytes,
        "seconds": round(result.seconds, 3),
    }])
    render(rows, output, wide)
