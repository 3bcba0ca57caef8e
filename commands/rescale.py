"""``paimon-cli rescale``: rewrite partitions of a fixed-bucket table into a new bucket number."""

from typing import Annotated

import typer

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


def rescale(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Fixed-bucket table to rescale.")],
    partition: Annotated[list[str] | None, typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]",
        help="Only these partitions (',' AND, ';' or repeat = OR); default: every partition that needs it.")] = None,
    bucket_num: Annotated[int | None, typer.Option(
        "--bucket-num", metavar="N", min=1,
        help="The new bucket number; also sets the table's 'bucket' option (default: the option as it is).")] = None,
    dry_run: DryRunOpt = False,
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
    """Rewrite partitions of DB.TABLE into a new bucket number (Java's rescale procedure).

    A partition keeps the bucket number its files were written with until it is rewritten,
    so after `alter --set bucket=N` write and compact refuse it (exit 4). rescale reads the
    merged rows of every partition whose files have another bucket number than the table's
    option (or --bucket-num, which sets the option first) and writes them into the new
    layout as ONE OVERWRITE snapshot; a concurrent commit into those partitions fails it
    with exit 5 and nothing it wrote is left behind.

    \b
    Example:
        paimon-cli rescale shop.orders --bucket-num 16 --dry-run
        paimon-cli rescale shop.orders --bucket-num 16
        paimon-cli alter shop.orders --set bucket=8
        paimon-cli rescale shop.orders --partition dt=2024-05-01
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    result = table.rescale(partitions=partition, bucket_num=bucket_num, dry_run=dry_run)
    note(f"rescale: {result.summary()}")
    rows = result.rows()
    if not dry_run or rows.rows or output is not OutputFormat.table:
        render_outcome(rows, output, wide, preview=dry_run, limit=limit)
