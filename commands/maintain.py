"""``paimon-cli maintain``: apply a maintenance policy to many tables (cron-safe)."""

import json
import sys
from typing import TYPE_CHECKING, Annotated

import typer

from paimon_cli import terminal
from paimon_cli.options import (
    CatalogOpt,
    CatalogOptionOpt,
    DebugOpt,
    EngineOpt,
    FsOpt,
    LimitOpt,
    MetricsFormat,
    OutputOpt,
    SparkConfOpt,
    SparkMasterOpt,
    WarehouseOpt,
    WideOpt,
    duration_option,
)
from paimon_cli.output import OutputFormat, render

if TYPE_CHECKING:
    from paimon_cli.core.api import MaintainReport, Warehouse


def maintain(
    selectors: Annotated[list[str] | None, typer.Argument(
        metavar="[DB | DB.TABLE]...", help="Databases or tables to maintain (default: every table).")] = None,
    policy: Annotated[str | None, typer.Option(
        "--policy", metavar="FILE.toml", help="Maintenance policy (default: what each table's options say).")] = None,
    dry_run: Annotated[bool, typer.Option(
        "--dry-run", help="Print the whole plan (per table, per action, why); change nothing.")] = False,
    max_duration: Annotated[str | None, duration_option(
        "--max-duration", "Start no action after this long (e.g. 30m); the rest is reported as deferred.")] = None,
    max_bytes: Annotated[str | None, typer.Option(
        "--max-bytes", metavar="SIZE", help="Rewrite at most SIZE (e.g. 50gb) this run; the rest is deferred.")] = None,
    parallel: Annotated[int, typer.Option(
        "--parallel", metavar="N", min=1, help="Maintain N tables at once (default 1: one after another).")] = 1,
    engine: EngineOpt = "auto",
    spark_master: SparkMasterOpt = None,
    spark_conf: SparkConfOpt = None,
    lease_ttl: Annotated[str | None, duration_option(
        "--lease-ttl", "How long a table's lease outlives a killed run (default 10m; renewed while working).")] = None,
    report: Annotated[str | None, typer.Option(
        "--report", metavar="FILE.json", help="Write everything (plan, findings, actions, leases) as JSON.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Print nothing when every table is fine.")] = False,
    fmt: Annotated[MetricsFormat, typer.Option(
        "--format", case_sensitive=False,
        help="rows: the summary as -o table|json|jsonl|csv; openmetrics: the run's metrics for Prometheus' "
             "node-exporter textfile collector.")] = MetricsFormat.rows,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    limit: LimitOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Maintain tables under a policy: compaction, expiry, manifest and index upkeep, orphans.

    Each table is assessed as health does; its findings become actions under the policy
    (--dry-run prints them with their reasons). The least healthy tables go first; each is
    worked under a lease (<table>/maintain.lease) so concurrent runs never touch one table
    at once. A failing table never stops the others; commit conflicts with writers are
    retried, then deferred. Exit code: the worst table's (0 ok, deferred or leased by
    another run; 4 unreadable table, untouched; else the failing action's own code).

    \b
    Example:
        paimon-cli maintain --dry-run
        paimon-cli maintain shop --policy maintain.toml --max-duration 30m --quiet
        paimon-cli maintain shop.orders --report run.json --format openmetrics > maintain.prom
    """
    from paimon_cli.core.api import MaintainInterrupted, Warehouse

    terminal.set_quiet(quiet)  # maintain's -q also silences what the actions would note
    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    try:
        result = wh.maintain(selectors or [], policy=policy, dry_run=dry_run, max_duration=max_duration,
                             max_bytes=max_bytes, parallel=parallel, engine=engine, spark_master=spark_master,
                             spark_conf=spark_conf, lease_ttl=lease_ttl)
    except MaintainInterrupted as stopped:  # what was done before the signal still goes to --report
        if report is not None:
            _write_report(wh, report, stopped.report)
        raise
    if report is not None:
        _write_report(wh, report, result)
    code = result.exit_code
    for t in result.run.tables:
        if t.exit_code != 0:
            typer.echo(f"error: {t.identifier}: {t.outcome}: {t.message}", err=True)  # errors: even under -q
    if quiet and code == 0:
        return
    if fmt is MetricsFormat.openmetrics:
        from paimon_cli.openmetrics import gauge
        from paimon_cli.openmetrics import render as render_metrics

        sys.stdout.write(render_metrics(gauge(name, text, samples) for name, text, samples in result.metrics()))
    elif output in (OutputFormat.json, OutputFormat.jsonl):  # typed: the --report file's table objects
        render(result.records(), output, wide, limit=limit)
    else:
        render(result.plan_rows() if dry_run else result.rows(), output, wide, limit=limit)
    if code:
        raise typer.Exit(code)


def _write_report(wh: "Warehouse", path: str, result: "MaintainReport") -> None:
    with wh.open_output(path) as out:
        out.write(json.dumps(result.to_dict(), indent=2, default=str).encode() + b"\n")
