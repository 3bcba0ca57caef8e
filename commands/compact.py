"""``paimon-cli compact``: compact a table in one COMPACT snapshot (or show the plan), or every
table of a database (Java's compact_database)."""

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
    identifier: Annotated[str, typer.Argument(
        metavar="DB.TABLE|DB", help="Table to compact, or a database: each of its tables in turn.")],
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
    partition_idle_time: Annotated[str | None, typer.Option(
        "--partition-idle-time", metavar="DURATION",
        help="Only partitions with no new file for DURATION (e.g. 1d), fully compacted; not with --order-strategy.",
    )] = None,
    no_expire: Annotated[bool, typer.Option("--no-expire", help="Do not expire snapshots after committing.")] = False,
    including_tables: Annotated[str | None, typer.Option(
        "--including-tables", metavar="REGEX",
        help="compact DB: only tables whose db.table name matches (whole name; default all).")] = None,
    excluding_tables: Annotated[str | None, typer.Option(
        "--excluding-tables", metavar="REGEX", help="compact DB: skip tables whose db.table name matches.")] = None,
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
    concurrent job removed an input file). The result row goes to stdout. `compact DB`
    compacts each table of DB (Java's compact_database; --including-tables /
    --excluding-tables select them by db.table name) as `compact DB.TABLE` would, one row
    per table; a failing table does not stop the others and the exit code is the worst
    table's. --partition-idle-time (Java's partition_idle_time) compacts only partitions
    whose newest file is at least DURATION old, fully (unaware-bucket append tables: the
    ordinary append compaction, as Java).

    \b
    Example:
        paimon-cli compact shop.orders
        paimon-cli compact shop.orders --full --partition dt=2024-05-01 --plan
        paimon-cli compact shop.orders --full --engine spark --spark-master spark://host:7077
        paimon-cli compact shop.events --order-strategy zorder --order-by user_id,ts
        paimon-cli compact shop.orders --partition-idle-time 1d --plan
        paimon-cli compact shop --including-tables 'shop[.]orders_.*' --excluding-tables '.*_tmp'
    """
    from paimon_cli.core.api import Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    if "." not in identifier:  # a database: Java's compact_database
        refused = [flag for flag, given in (("--partition", partition), ("--where", where),
                                            ("--order-strategy", order_strategy), ("--order-by", order_by),
                                            ("--branch", branch)) if given]
        if refused:
            raise typer.BadParameter(f"{refused[0]} applies to one table (compact DB.TABLE), not to a database")
        with ProgressBar("compacting") as progress:
            report = wh.compact_database(
                identifier, including_tables=including_tables, excluding_tables=excluding_tables, full=full,
                plan=plan, engine=engine, spark_master=spark_master, spark_conf=spark_conf,
                parallelism=parallelism, max_bytes=max_bytes, max_buckets=max_buckets, expire=not no_expire,
                progress=progress.units, partition_idle_time=partition_idle_time,
            )
        note(report.summary())
        for t in report.failed:
            typer.echo(f"error: {t.identifier}: {t.error}", err=True)  # errors: even under -q
        render_outcome(report.rows(), output, wide, preview=plan, limit=limit, columns=columns)
        if report.exit_code:
            raise typer.Exit(report.exit_code)
        return
    if including_tables is not None or excluding_tables is not None:
        raise typer.BadParameter("--including-tables / --excluding-tables select the tables of `compact DB`")
    table = wh.table(identifier, branch)
    with ProgressBar("compacting") as progress:
        result = table.compact(
            full=full, partitions=partition, where=where, plan=plan, engine=engine, spark_master=spark_master,
            spark_conf=spark_conf, parallelism=parallelism, max_bytes=max_bytes, max_buckets=max_buckets,
            order_strategy=order_strategy, order_by=order_by, expire=not no_expire, progress=progress.units,
            partition_idle_time=partition_idle_time,
        )
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=plan, limit=limit, columns=columns)

