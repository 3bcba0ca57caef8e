"""``paimon-cli copy``: Spark's copy procedure, a table's files into another table of the catalog."""

from typing import Annotated

import typer

from paimon_cli.options import (
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


def copy(
    source_table: Annotated[str, typer.Argument(metavar="SOURCE_TABLE", help="DB.TABLE to copy from.")],
    target_table: Annotated[str, typer.Argument(metavar="TARGET_TABLE", help="DB.TABLE to copy into "
                                                "(created when missing).")],
    where: Annotated[str | None, typer.Option(
        "--where", metavar="PREDICATE", help="Only the partitions this predicate over partition columns selects.")
    ] = None,
    dry_run: DryRunOpt = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    limit: LimitOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Copy the files of SOURCE_TABLE into TARGET_TABLE (Spark's copy procedure).

    As Java's copy: the target is created with the source's schema when missing (an existing
    one must have the same columns, keys and bucket); the data and index files of the
    source's latest snapshot (the --where partitions) are copied and committed as one snapshot
    overwriting the partitions they touch. Same as `clone SOURCE --target TARGET`.

    \b
    Example:
        paimon-cli copy shop.orders shop.orders_copy
        paimon-cli copy shop.orders shop.orders_copy --where "dt = '2024-05-01'" --dry-run
    """
    from paimon_cli.core.api import Warehouse

    result = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).copy(
        source_table, target_table, where=where, dry_run=dry_run)
    note(result.summary())
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
