"""``paimon-cli drop-partition``: drop partitions in one OVERWRITE snapshot (Java's drop_partition)."""

from typing import Annotated, Any

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
)
from paimon_cli.output import OutputFormat, note, render_outcome


def drop_partition(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Partitioned table.")],
    partition: Annotated[list[str], typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]",
        help="Partition to drop (',' AND, ';' or repeat = OR; leading or any keys drop every partition they "
             "match).")],
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
    """Drop partitions of DB.TABLE in one OVERWRITE snapshot, as Java's drop_partition and
    ALTER TABLE DROP PARTITION: their rows are gone for readers of the new snapshot.

    Any partition, not only expired ones (see expire-partitions). Each --partition must match
    a partition with data (exit 3 otherwise, nothing changed). A metastore that keeps the
    table's partitions forgets them first. Data files stay until snapshot expiration
    (`paimon-cli expire`) removes them. Prints the live files dropped (with --dry-run exactly
    those a real run drops); on a terminal it shows them and asks first (--yes skips that).

    \b
    Example:
        paimon-cli drop-partition shop.orders --partition dt=2024-05-01 --dry-run
        paimon-cli drop-partition shop.orders --partition 'dt=2024-05-01;dt=2024-05-02' --yes
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)

    def run(dry: bool) -> Any:
        return table.drop_partitions(partition, dry_run=dry)

    if not dry_run:
        confirm(yes, f"drop these partitions of {table.name}", lambda: run(True).rows())
    plan = run(dry_run)
    parts = ", ".join(plan.partitions)
    what = f"{len(plan.partitions)} partition(s) of {table.name} ({parts}): {len(plan.entries)} file(s), " \
           f"{plan.rows_dropped} rows, {plan.bytes_dropped} bytes"
    if dry_run:
        note(f"would drop {what}")
    else:
        note(f"dropped {what} in snapshot {plan.snapshot}")
    render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)
