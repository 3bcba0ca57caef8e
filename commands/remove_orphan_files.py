"""``paimon-cli remove-orphan-files``: delete files no snapshot, tag, changelog or branch uses."""

from functools import partial
from typing import Annotated

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
    SparkConfOpt,
    SparkMasterOpt,
    WarehouseOpt,
    WideOpt,
    time_option,
)
from paimon_cli.output import OutputFormat, note, render_outcome
from paimon_cli.progress import ProgressBar


def remove_orphan_files(
    identifier: Annotated[str, typer.Argument(
        metavar="DB.TABLE|DB.*", help="Table to clean, or DB.* for every table of a database.")],
    older_than: Annotated[
        str | None,
        time_option("--older-than", "Only files last modified before this (default: 1d; under 1 hour needs --force)."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Allow --older-than under 1 hour (no writer may be running).")
    ] = False,
    external_paths: Annotated[
        bool,
        typer.Option(
            "--external-paths",
            help="Also clean the table's data-file.external-paths roots; refused (exit 6) if any other table "
            "of the warehouse uses an overlapping location.",
        ),
    ] = False,
    engine: Annotated[str, typer.Option(
        "--engine", metavar="auto|local|spark",
        help="Where listing, manifest reading, the used/candidate join and deletes run (auto: spark only "
             "when Spark options are given).")] = "auto",
    spark_master: SparkMasterOpt = None,
    spark_conf: SparkConfOpt = None,
    parallelism: Annotated[int | None, typer.Option(
        "--parallelism", metavar="N", min=1,
        help="Spark tasks per stage (default: 3 x the cores); needs --engine spark.")] = None,
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
    """Delete orphan files (written but never committed, or left by failed commits).

    Used files are collected from every branch's snapshots, tags and changelogs; anything
    unreadable stops the run with exit 6 and nothing is deleted. Prints one row per file
    (and empty directory) deleted, or that would be with --dry-run. Files are shared by all
    branches, so --branch only selects how the table is opened; the whole table is cleaned.
    Only the table directory is cleaned unless --external-paths is given. On a terminal the
    files are shown and the run asks first (--yes skips that). --engine spark runs the
    listing, manifest reading, join and deletes as Spark tasks with the same result.
    DB.* cleans every table of DB in turn (Java's 'db.*'; local engine): a table that cannot
    be opened stops the run before anything is deleted; one whose metadata cannot be read is
    skipped with nothing deleted there, and the exit code is the worst table's.

    \b
    Example:
        paimon-cli remove-orphan-files shop.orders --dry-run -o json
        paimon-cli remove-orphan-files shop.orders --older-than 3d
        paimon-cli remove-orphan-files shop.orders --external-paths --dry-run
        paimon-cli remove-orphan-files shop.orders --engine spark --spark-master spark://host:7077
        paimon-cli remove-orphan-files 'shop.*' --dry-run
    """
    from paimon_cli.core.api import Warehouse

    if identifier.endswith(".*"):
        database = identifier[:-2]
        refused = [flag for flag, given in (("--engine spark", engine.lower() == "spark"),
                                            ("--spark-master", spark_master), ("--spark-conf", spark_conf),
                                            ("--parallelism", parallelism), ("--branch", branch)) if given]
        if refused:
            raise typer.BadParameter(f"{refused[0]} applies to one table, not to {identifier}")
        wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
        run_db = partial(wh.remove_orphan_files_database, database, older_than=older_than, force=force,
                         external_paths=external_paths)
        if not dry_run:
            confirm(yes, f"delete these orphan files of {identifier}", lambda: run_db(dry_run=True).rows())
        with ProgressBar("deleting orphans") as bar:
            report = run_db(dry_run=dry_run, progress=bar)
        render_outcome(report.rows(), output, wide, preview=dry_run, limit=limit)
        for line in report.notes():
            note(line)
        for t in report.failed:
            typer.echo(f"error: {t.identifier}: {t.error}", err=True)  # errors: even under -q
        if report.exit_code:
            raise typer.Exit(report.exit_code)
        return
    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    run = partial(table.remove_orphan_files, older_than=older_than, force=force, external_paths=external_paths,
                  engine=engine, spark_master=spark_master, spark_conf=spark_conf, parallelism=parallelism)
    if not dry_run:
        confirm(yes, f"delete these orphan files of {table.name}", lambda: run(dry_run=True).rows())
    with ProgressBar("deleting orphans") as bar:
        result = run(dry_run=dry_run, progress=bar)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
    for line in result.notes():
        note(line)
