"""``paimon-cli compact``: compact a table in one COMPACT snapshot (or show the plan)."""

from __future__ import annotations

from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    CatalogOpt,
    CatalogOptionOpt,
    ColumnsOpt,
    DebugOpt,
    EngineOpt,
    FsOpt,
    LimitOpt,
    OutputOpt,
    SparkConfOpt,
    SparkMasterOpt,
    WarehouseOpt,
    WideOpt,
)
from paimon_cli.output import OutputFormat, note, render_outcome
from paimon_cli.progress import ProgressBar


def compact(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to compact.")],
    full: Annotated[bool, typer.Option("--full", help="Full compaction: every bucket to the top level.")] = False,
    partition: Annotated[list[str] | None, typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]", help="Only these partitions (',' AND, ';' or repeat = OR).")] = None,
    where: Annotated[str | None, typer.Option(
        "--where", metavar="PREDICATE", help="Only partitions matching a predicate on partition columns.")] = None,
    plan: Annotated[bool, typer.Option("--plan", help="Print what would be compacted per bucket; write nothing.")] = False,
    engine: EngineOpt = "auto",
    spark_master: SparkMasterOpt = None,
    spark_conf: SparkConfOpt = None,
    parallelism: Annotated[int | None, typer.Option(
        "--parallelism", metavar="N", min=1, help="Local threads, or Spark partitions.")] = None,
    max_bytes: Annotated[str | None, typer.Option(
        "--max-bytes", metavar="SIZE", help="Rewrite at most SIZE (e.g. 10gb) this run; the rest waits.")] = None,
    max_buckets: Annotated[int | None, typer.Option(
        "--max-buckets", metavar="N", min=1, help="Compact at most N buckets this run.")] = None,
    order_strategy: Annotated[str | None, typer.Option(
        "--order-strategy", metavar="order|zorder|hilbert", help="Sort compaction (unaware-bucket append).")] = None,
    order_by: Annotated[str | None, typer.Option(
        "--order-by", metavar="COLS", help="Columns for --order-strategy, comma-separated.")] = None,
    no_expire: Annotated[bool, typer.Option("--no-expire", help="Do not expire snapshots after committing.")] = False,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    columns: ColumnsOpt = None,
    limit: LimitOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Compact DB.TABLE: merge sorted runs / small files and commit one COMPACT snapshot.

    Nothing is committed when there is nothing to do or on any error (exit 5 when a
    concurrent job removed an input file). The result row goes to stdout.

    \b
    Example:
        paimon-cli compact shop.orders
        paimon-cli compact shop.orders --full --partition dt=2024-05-01 --plan
        paimon-cli compact shop.orders --full --engine spark --spark-master spark://host:7077
        paimon-cli compact shop.events --order-strategy zorder --order-by user_id,ts
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    with ProgressBar("compacting") as progress:
        result = table.compact(
            full=full, partitions=partition, where=where, plan=plan, engine=engine, spark_master=spark_master,
            spark_conf=spark_conf, parallelism=parallelism, max_bytes=max_bytes, max_buckets=max_buckets,
            order_strategy=order_strategy, order_by=order_by, expire=not no_expire, progress=progress.units,
        )
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=plan, limit=limit, columns=columns)

