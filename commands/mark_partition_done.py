"""``paimon-cli mark-partition-done``: run the table's partition.mark-done-action (Java's mark_partition_done)."""

from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    CatalogOpt,
    CatalogOptionOpt,
    DebugOpt,
    FsOpt,
    LimitOpt,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
)
from paimon_cli.output import OutputFormat, note, render_outcome


def mark_partition_done(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Partitioned table.")],
    partition: Annotated[list[str], typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]",
        help="Partition to mark done (',' joins keys, ';' or repeat = another partition; leading keys mark a "
             "parent directory).")],
    action: Annotated[str | None, typer.Option(
        "--action", metavar="ACTIONS",
        help="success-file, done-partition, mark-event, http-report, comma-separated "
             "(default: the table's partition.mark-done-action, else success-file).")] = None,
    allow_empty: Annotated[bool, typer.Option(
        "--allow-empty", help="Also mark a partition that holds no data (Java's procedure never checks).")] = False,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the actions a real run would take per partition; change nothing.")] = False,
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
    """Mark partitions of DB.TABLE done, as Java's mark_partition_done: per partition, each
    action of partition.mark-done-action (success-file: <table>/<partition>/_SUCCESS as Java
    writes it; done-partition: the metastore partition <...>.done; mark-event: the Hive
    Metastore's LOAD_DONE event; http-report: a POST to partition.mark-done-action.http.url).

    Each --partition must hold data (exit 3 otherwise) unless --allow-empty. An action the
    catalog cannot do (done-partition, mark-event outside a Hive catalog with
    metastore.partitioned-table=true) or custom is refused (exit 1 / 4) before anything runs.

    \b
    Example:
        paimon-cli mark-partition-done shop.orders --partition dt=2024-05-01
        paimon-cli mark-partition-done shop.orders --partition 'dt=2024-05-01;dt=2024-05-02' --dry-run
        paimon-cli mark-partition-done shop.events --partition dt=2024-05-01 --action success-file,http-report
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    plan = table.mark_partitions_done(partition, actions=action, allow_empty=allow_empty, dry_run=dry_run)
    parts = ", ".join(plan.partitions)
    acts = ", ".join(plan.actions)
    if dry_run:
        note(f"would mark {len(plan.partitions)} partition(s) of {table.name} done ({parts}): {acts}")
    else:
        note(f"marked {len(plan.partitions)} partition(s) of {table.name} done ({parts}): {acts}")
    render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)
