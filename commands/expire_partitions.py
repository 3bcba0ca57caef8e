"""``paimon-cli expire-partitions``: drop partitions older than a duration (Java's PartitionExpire)."""

from enum import Enum
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
    duration_option,
)
from paimon_cli.output import OutputFormat, note, render_outcome


class Strategy(str, Enum):
    values_time = "values-time"
    update_time = "update-time"


def expire_partitions(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Partitioned table.")],
    expiration_time: Annotated[str | None, duration_option(
        "--expiration-time", "Expire partitions older than this (default: partition.expiration-time).")] = None,
    timestamp_formatter: Annotated[str | None, typer.Option(
        "--timestamp-formatter", metavar="PATTERN",
        help="Java DateTimeFormatter pattern of the partition time, e.g. yyyyMMdd "
             "(default: partition.timestamp-formatter, else yyyy-MM-dd[ HH:mm:ss]).")] = None,
    timestamp_pattern: Annotated[str | None, typer.Option(
        "--timestamp-pattern", metavar="PATTERN",
        help="How to build the time from partition columns, e.g. '$dt $hour:00:00' "
             "(default: partition.timestamp-pattern, else the first partition column).")] = None,
    strategy: Annotated[Strategy | None, typer.Option(
        "--strategy", case_sensitive=False,
        help="values-time: time from the partition values; update-time: newest file's creation time "
             "(default: partition.expiration-strategy).")] = None,
    max_expires: Annotated[int | None, typer.Option(
        "--max-expires", metavar="N", min=1, help="Expire at most N partitions, the oldest by value (default: the table's "
        "partition.expiration-max-num, 100).")] = None,
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
    """Drop the partitions of DB.TABLE whose time is older than --expiration-time.

    The drop is one OVERWRITE snapshot, exactly as Java's partition expiration commits it;
    data files stay until snapshot expiration (`paimon-cli expire`) removes them. DATE and
    TIMESTAMP partition columns are read as times (Java 0.9..1.x cannot, apache/paimon#6439);
    partitions whose values do not parse as a time are kept. On a terminal the partitions are
    shown and the run asks first (--yes skips that).

    \b
    Example:
        paimon-cli expire-partitions shop.orders --expiration-time 30d --timestamp-formatter yyyy-MM-dd
        paimon-cli expire-partitions shop.events --expiration-time 7d \\
            --timestamp-pattern '$dt $hour:00:00' --timestamp-formatter 'yyyy-MM-dd HH:mm:ss' --dry-run
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)

    def run(dry: bool) -> Any:
        return table.expire_partitions(
            expiration_time=expiration_time, timestamp_formatter=timestamp_formatter,
            timestamp_pattern=timestamp_pattern, strategy=strategy.value if strategy is not None else None,
            max_expires=max_expires, dry_run=dry,
        )

    if not dry_run:
        confirm(yes, f"drop these partitions of {table.name}", lambda: run(True).rows())
    plan = run(dry_run)
    n = len(plan.partitions)
    cutoff = plan.expire_before.strftime("%Y-%m-%d %H:%M:%S")
    if dry_run:
        note(f"would expire {n} partition(s) of {table.name} older than {cutoff} ({plan.strategy})")
    elif plan.snapshots:
        ids = ", ".join(str(s) for s in plan.snapshots)
        note(f"expired {n} partition(s) of {table.name} older than {cutoff} ({plan.strategy}): snapshot {ids}")
    else:
        note(f"no partition of {table.name} is older than {cutoff} ({plan.strategy})")
    if plan.partitions or output is not OutputFormat.table:
        render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)
