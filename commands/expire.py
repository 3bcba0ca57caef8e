"""``paimon-cli expire``: expire old snapshots (or long-lived changelogs) as Java Paimon does."""

from typing import Annotated, Any

import typer

from paimon_cli.confirm import VerboseOpt, YesOpt, confirm
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
from paimon_cli.output import OutputFormat, note, render, render_outcome
from paimon_cli.progress import ProgressBar

# compact's --engine, for expiry: the driver decides, tasks read manifests and delete
ExpireEngineOpt = Annotated[str, typer.Option(
    "--engine", metavar="auto|local|spark",
    help="Where manifests are read and files deleted (auto: spark only with --spark-master/--spark-conf).")]


def expire(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to expire.")],
    retain_max: Annotated[
        int | None,
        typer.Option("--retain-max", metavar="N",
                     help="Keep at most N snapshots (default: snapshot.num-retained.max, unbounded)."),
    ] = None,
    retain_min: Annotated[
        int | None,
        typer.Option("--retain-min", metavar="M",
                     help="Always keep the newest M snapshots (default: snapshot.num-retained.min, 10)."),
    ] = None,
    older_than: Annotated[
        str | None,
        time_option("--older-than", "Expire only snapshots older than this (default: snapshot.time-retained, 1 h)."),
    ] = None,
    max_deletes: Annotated[
        int | None,
        typer.Option("--max-deletes", metavar="N",
                     help="Expire at most N snapshots in this run (default: snapshot.expire.limit, 50)."),
    ] = None,
    changelog: Annotated[
        bool, typer.Option("--changelog", help="Expire long-lived changelogs (changelog/) instead of snapshots.")
    ] = False,
    engine: ExpireEngineOpt = "auto",
    spark_master: SparkMasterOpt = None,
    spark_conf: SparkConfOpt = None,
    dry_run: DryRunOpt = False,
    yes: YesOpt = False,
    verbose: VerboseOpt = False,
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
    """Expire old snapshots of DB.TABLE and delete the files only they used (as Java Paimon).

    Unset flags fall back to the table's options. Tags keep their files, consumers keep
    the snapshots they will read, and nothing a retained snapshot, tag or branch uses is
    deleted. If any snapshot, tag, consumer or manifest that decides what is still used
    cannot be read, nothing is deleted (exit 6). With a decoupled changelog lifecycle
    (changelog.num-retained.*), expired snapshots move to changelog/ and --changelog
    expires those (writers run both after each commit, as Java does). A run right after
    --dry-run deletes exactly the files the dry run listed. On a terminal the files are shown
    and the run asks first (--yes skips that; without a terminal nothing is asked).
    With --engine spark, Spark tasks (local[*] or --spark-master) read the expiring
    snapshots' manifests and delete the files; the driver decides, with the same result.

    \b
    Example:
        paimon-cli expire shop.orders --dry-run
        paimon-cli expire shop.orders --retain-min 5 --older-than 2h
        paimon-cli expire shop.orders --older-than 2024-05-01T00:00:00 --max-deletes 500 -o json
        paimon-cli expire shop.orders --engine spark --spark-master spark://host:7077
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)

    def run(dry: bool) -> Any:
        with ProgressBar("expiring") as bar:
            return table.expire(retain_max=retain_max, retain_min=retain_min, older_than=older_than,
                                max_deletes=max_deletes, changelog=changelog, dry_run=dry, progress=bar,
                                engine=engine, spark_master=spark_master, spark_conf=spark_conf)

    if not dry_run:
        confirm(yes, f"expire {'changelogs' if changelog else 'snapshots'} of {table.name}, deleting these files",
                lambda: run(True).rows())
    result = run(dry_run)
    for n in result.plan.notes:
        note(f"note: {n}")
    if dry_run:
        render(result.rows(), output, wide, limit=limit)
        if output == OutputFormat.table:
            note(result.describe())
        return
    if result.moved_to_changelog:
        note("note: the changelog lifecycle is decoupled; expired snapshots were moved to changelog/ "
             "(`expire --changelog` expires those; writers run it after each commit)")
    if verbose:  # the files deleted, as --dry-run lists them; the summary row as a note
        render(result.file_rows(), output, wide, limit=limit)
        r = result.rows().rows[0]
        note(f"expired {r['expired']} ({r['range']}): {r['files']} files, {r['bytes']} bytes")
        return
    render_outcome(result.rows(), output, wide, limit=limit)
