"""``paimon-cli rewrite-file-index``: make every live file's file index match the table options."""

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
from paimon_cli.progress import ProgressBar


def rewrite_file_index(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose file indexes to rewrite.")],
    partition: Annotated[list[str] | None, typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]", help="Only these partitions (',' AND, ';' or repeat = OR).")] = None,
    where: Annotated[str | None, typer.Option(
        "--where", metavar="PREDICATE", help="Only partitions matching a predicate on partition columns.")] = None,
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
    """Build, rebuild or drop file indexes (bloom-filter, bitmap, bsi) so every live data file
    matches the table's current file-index.* options, in one COMPACT snapshot.

    Columns are matched by field id across schema versions, so renamed columns keep their
    index and dropped columns lose it. Files already right are skipped; old .index files
    stay for remove-orphan-files (older snapshots still use them). Together with
    `alter --set file-index.<type>.columns=...` this replaces Paimon's ALTER TABLE +
    CALL sys.rewrite_file_index recipe. Bad options exit 4 before anything is written.

    \b
    Example:
        paimon-cli alter shop.orders --set file-index.bloom-filter.columns=customer
        paimon-cli rewrite-file-index shop.orders --dry-run
        paimon-cli rewrite-file-index shop.orders --partition dt=2024-05-01
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    with ProgressBar("indexing") as bar:
        result = table.rewrite_file_index(partitions=partition, where=where, dry_run=dry_run, progress=bar)
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
