"""``paimon-cli compact``: compact a table in one COMPACT snapshot (or show the plan)."""

from __future__ import annotations

import sys
from typing import Annotated, Any

import typer

from paimon_cli.options import BranchOpt, ColumnsOpt, DebugOpt, FsOpt, LimitOpt, OutputOpt, WarehouseOpt, WideOpt
from paimon_cli.output import OutputFormat, note, render


def compact(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to compact.")],
    full: Annotated[bool, typer.Option("--full", help="Full compaction: every bucket to the top level.")] = False,
    partition: Annotated[list[str] | None, typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]", help="Only these partitions (',' AND, ';' or repeat = OR).")] = None,
    where: Annotated[str | None, typer.Option(
        "--where", metavar="PREDICATE", help="Only partitions matching a predicate on partition columns.")] = None,
    plan: Annotated[bool, typer.Option("--plan", help="Print what would be compacted per bucket; write nothing.")] = False,
    engine: Annotated[str, typer.Option(
        "--engine", metavar="auto|local|spark", help="Where units run (auto: spark only for large plans).")] = "auto",
    spark_master: Annotated[str | None, typer.Option(
        "--spark-master", metavar="URL", help="Spark master (default local[*]); implies --engine spark.")] = None,
    spark_conf: Annotated[list[str] | None, typer.Option(
        "--spark-conf", metavar="K=V", help="Spark configuration, repeatable.")] = None,
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
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
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

    table = Warehouse(warehouse, fs_option).table(identifier, branch)
    with _Progress() as progress:
        result = table.compact(
            full=full, partitions=partition, where=where, plan=plan, engine=engine, spark_master=spark_master,
            spark_conf=spark_conf, parallelism=parallelism, max_bytes=max_bytes, max_buckets=max_buckets,
            order_strategy=order_strategy, order_by=order_by, expire=not no_expire, progress=progress,
        )
    for line in result.notes():
        note(line)
    render(result.rows(), output, wide, limit=limit, columns=columns)


class _Progress:
    """A rich progress bar on a TTY stderr (one tick per unit); otherwise silent."""

    def __init__(self) -> None:
        self.bar: Any = None
        self.task: Any = None

    def __enter__(self) -> _Progress:
        return self

    def __call__(self, event: str, unit: Any, done: int, total: int) -> None:
        if not sys.stderr.isatty():
            return
        if self.bar is None:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = Progress(TextColumn("compacting"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                TextColumn("{task.description}"), console=Console(stderr=True), transient=True)
            self.bar.start()
            self.task = self.bar.add_task("", total=total)
        desc = f"bucket {unit.bucket}" if event == "start" and unit is not None else ""
        self.bar.update(self.task, completed=done, description=desc)

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
