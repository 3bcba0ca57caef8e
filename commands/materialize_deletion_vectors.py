"""``paimon-cli materialize-deletion-vectors``: drop the rows a data-evolution table's deletion
vectors delete by rewriting their row-id ranges (Java's materialize_deletion_vectors)."""

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


def materialize_deletion_vectors(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Data-evolution table to materialize.")],
    partition: Annotated[list[str] | None, typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]", help="Only these partitions (',' AND, ';' or repeat = OR).")] = None,
    where: Annotated[str | None, typer.Option(
        "--where", metavar="PREDICATE", help="Only partitions matching a predicate on partition columns.")] = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", metavar="K=V", help="Dynamic table option for this run, repeatable.")] = None,
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
    """Rewrite the row-id ranges of a data-evolution table (data-evolution.enabled,
    deletion-vectors.enabled) that deletion vectors delete rows of, so the deleted rows are
    gone from the files; the surviving rows get new row ids.

    One run takes up to 100,000 deletion vectors in partition order (with every file whose
    row-id range overlaps theirs) and commits one snapshot; run it again until it reports
    nothing to do. Global indexes over rewritten ranges are dropped. A concurrent change of
    the same ranges fails the run with exit 5 and nothing committed.

    \b
    Example:
        paimon-cli materialize-deletion-vectors shop.events --dry-run
        paimon-cli materialize-deletion-vectors shop.events --partition dt=2024-05-01
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    result = table.materialize_deletion_vectors(partitions=partition, where=where, options=option, dry_run=dry_run)
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
