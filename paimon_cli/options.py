"""Shared ``Annotated`` option aliases of the commands.

Every command declares the global conventions itself (so options may follow the command:
``paimon-cli inspect snapshots db.t -w /x -o json``); the root hands the ones given before the
command to it (``paimon_cli.global_options``), and ``-q/--quiet`` is added to every command by
``paimon_cli.errors.CliCommand``. Values are passed to the library API
(``paimon_cli.core.api``) as the user typed them: it parses and checks them, so the CLI and
library callers get the same refusals. Nothing heavy is imported here.
"""

from __future__ import annotations

from enum import Enum
from typing import Annotated, Any

import typer

from .core.utils.durations import DURATION_GRAMMAR, TIME_GRAMMAR
from .output import OutputFormat

DEFAULT_WAREHOUSE = "./warehouse"


class MetricsFormat(str, Enum):
    """``--format`` of health and maintain: rows (in the ``-o`` format) or OpenMetrics."""

    rows = "rows"
    openmetrics = "openmetrics"

WarehouseOpt = Annotated[
    str | None,
    typer.Option(
        "--warehouse",
        "-w",
        envvar="PAIMON_WAREHOUSE",
        metavar="PATH|URI",
        show_default=False,
        help="Warehouse root (local path, file://, s3://, ...); default ./warehouse, or the catalog's warehouse.",
    ),
]
CatalogOpt = Annotated[
    str | None,
    typer.Option(
        "--catalog",
        envvar="PAIMON_CATALOG",
        metavar="NAME",
        show_default=False,
        help="A catalog of the catalogs file ($PAIMON_CLI_CATALOGS, else ~/.config/paimon-cli/catalogs.toml).",
    ),
]
CatalogOptionOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--catalog-option",
        metavar="K=V",
        help="Catalog option under Java's key (metastore=hive|jdbc, uri=..., lock.enabled=true, ...), "
        "repeatable; also PAIMON_CATALOG_OPTIONS.",
    ),
]
FsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--fs-option",
        metavar="K=V",
        help="Filesystem (fsspec) option, repeatable; dotted keys nest. Also PAIMON_FS_OPTIONS.",
    ),
]
OutputOpt = Annotated[
    OutputFormat,
    typer.Option("--output", "-o", envvar="PAIMON_OUTPUT", case_sensitive=False, help="Output format."),
]
WideOpt = Annotated[
    bool, typer.Option("--wide", help="On a terminal: every column, as one table however wide (default: the "
                                      "columns that matter; records one field a line when they do not fit).")
]
LimitOpt = Annotated[
    int | None,
    typer.Option("--limit", metavar="N", min=0, help="At most N rows (default: all; on a terminal -o table "
                                                    "shows the first 100 and says how to see more)."),
]
ColumnsOpt = Annotated[
    str | None,
    typer.Option("--columns", metavar="COLS", help="Comma-separated columns to show, in any format (default: "
                                                   "all; on a terminal -o table the ones that matter)."),
]
DryRunOpt = Annotated[
    bool,
    typer.Option("--dry-run", help="Print exactly what a real run would delete or change (files and bytes, "
                                   "also as -o json); change nothing."),
]
# where compaction runs (compact, maintain)
EngineOpt = Annotated[str, typer.Option(
    "--engine", metavar="auto|local|spark", help="Where compaction units run (auto: spark only for large plans).")]
SparkMasterOpt = Annotated[str | None, typer.Option(
    "--spark-master", metavar="URL", help="Spark master (default local[*]); implies --engine spark.")]
SparkConfOpt = Annotated[list[str] | None, typer.Option(
    "--spark-conf", metavar="K=V",
    help="Spark configuration, repeatable (executors' Python: spark.pyspark.python, default this one).")]
BranchOpt = Annotated[str | None, typer.Option("--branch", metavar="NAME", help="Branch (default: main).")]
DebugOpt = Annotated[
    bool, typer.Option("--debug", envvar="PAIMON_DEBUG", help="Show the full traceback on errors.")
]
SnapshotOpt = Annotated[
    int | None, typer.Option("--snapshot", metavar="ID", min=1, help="Time travel to snapshot ID.")
]
TagOpt = Annotated[str | None, typer.Option("--tag", metavar="TAG", help="Time travel to a tag.")]
TimestampOpt = Annotated[
    str | None,
    typer.Option(
        "--timestamp",
        metavar="ISO|MILLIS",
        help="Time travel to the latest snapshot at or before this time (epoch millis or ISO-8601; "
        "ISO without offset is local time).",
    ),
]


def duration_option(flag: str, what: str) -> Any:
    """A duration option (``--time-retained``): ``what`` then the one command-line grammar
    (core.utils.durations, which the library API parses the value with)."""
    return typer.Option(flag, metavar="DURATION", help=f"{what} A duration is {DURATION_GRAMMAR}; a bare "
                        "number is refused.")


def time_option(flag: str, what: str) -> Any:
    """A point-in-time option (``--older-than``): ``what`` then the one command-line grammar
    (core.utils.durations, which the library API parses the value with)."""
    return typer.Option(flag, metavar="DURATION|ISO", help=f"{what} Give {TIME_GRAMMAR}; a duration is "
                        f"{DURATION_GRAMMAR}; a bare number is refused.")


def check_time_travel(snapshot: int | None, tag: str | None, timestamp: str | None) -> None:
    """``--snapshot``/``--tag``/``--timestamp``: at most one (a usage error, exit 2)."""
    given = [n for n, v in (("--snapshot", snapshot), ("--tag", tag), ("--timestamp", timestamp)) if v is not None]
    if len(given) > 1:
        raise typer.BadParameter(f"give at most one of {', '.join(given)}")
