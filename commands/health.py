"""``paimon-cli health``: a score and named findings per table, from metadata only."""

import sys
from typing import Annotated

import typer

from paimon_cli.options import (
    CatalogOpt,
    CatalogOptionOpt,
    DebugOpt,
    FsOpt,
    LimitOpt,
    MetricsFormat,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
)
from paimon_cli.output import OutputFormat, note, render, to_terminal


def health(
    selectors: Annotated[list[str] | None, typer.Argument(
        metavar="DB|DB.TABLE", help="Databases or tables to assess (default: every table).")] = None,
    scan_orphans: Annotated[bool, typer.Option(
        "--scan-orphans", help="Also list storage for orphan files older than 1 day (slower).")] = False,
    fmt: Annotated[MetricsFormat, typer.Option(
        "--format", case_sensitive=False,
        help="rows: -o table|json|jsonl|csv, one row per finding; openmetrics: gauges for Prometheus' "
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
    """Score every table 0-100 and name what it needs, with the command that fixes each finding.

    Reads metadata only (the latest snapshot's manifests, a few snapshot and tag files):
    small files, sorted runs (write stalls), size amplification, delete ratio, small
    manifests, snapshots / changelogs / partitions / tags past retention, missing file
    indexes; --scan-orphans also lists storage. A terminal shows a line per table (its score
    and worst finding; --wide: every finding with its fix). Exit 0 when every table was
    assessed (findings are no error); exit 4 when some table's metadata cannot be read (it is
    still listed, score 0, with its error; the others are assessed).

    \b
    Example:
        paimon-cli health
        paimon-cli health shop shop2.orders -o json
        paimon-cli health --format openmetrics > /var/lib/node_exporter/paimon.prom.$$ \\
            && mv /var/lib/node_exporter/paimon.prom.$$ /var/lib/node_exporter/paimon.prom
    """
    from paimon_cli.core.api import Warehouse

    report = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).health(selectors or None, scan_orphans=scan_orphans)
    if fmt is MetricsFormat.openmetrics:
        from paimon_cli.openmetrics import gauge
        from paimon_cli.openmetrics import render as render_metrics

        sys.stdout.write(render_metrics(gauge(name, text, samples) for name, text, samples in report.metrics()))
    elif to_terminal(output) and not wide:  # a line per table; --wide and the machine formats: every finding
        render(report.summary(), output, wide, limit=limit)
        if any(h.findings for h in report.tables):
            note("(--wide lists every finding with the command that fixes it)")
    else:
        render(report.rows(), output, wide, limit=limit)
    bad = report.unassessed
    if bad:
        names = ", ".join(f"{h.identifier} ({h.error})" for h in bad)
        sys.stderr.write(f"error: {len(bad)} table(s) could not be assessed: {names}\n")
        raise typer.Exit(report.exit_code)
