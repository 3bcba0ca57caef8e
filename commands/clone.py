"""``paimon-cli clone``: copy a table (or a database's tables) into another warehouse or catalog."""

from typing import Annotated

import typer

from paimon_cli.options import (
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


def clone(
    source: Annotated[str | None, typer.Argument(
        metavar="[DB.TABLE|DB]", help="Table, or database whose tables, to clone (none: every table of the catalog).")
    ] = None,
    target: Annotated[str | None, typer.Option(
        "--target", metavar="DB2[.TABLE2]",
        help="Target table, or target database (a table keeps its name there); none with no source.")] = None,
    target_warehouse: Annotated[str | None, typer.Option(
        "--target-warehouse", metavar="PATH|URI", help="Target warehouse (default: the source's catalog).")] = None,
    target_fs_option: Annotated[list[str] | None, typer.Option(
        "--target-fs-option", metavar="K=V", help="Filesystem option of the target, repeatable.")] = None,
    target_catalog: Annotated[str | None, typer.Option(
        "--target-catalog", metavar="NAME", help="Target catalog's name in the catalogs file.")] = None,
    target_catalog_option: Annotated[list[str] | None, typer.Option(
        "--target-catalog-option", metavar="K=V",
        help="Target catalog option under Java's key (metastore=..., uri=...), repeatable.")] = None,
    where: Annotated[str | None, typer.Option(
        "--where", metavar="PREDICATE", help="Only the partitions this predicate over partition columns selects.")
    ] = None,
    included_tables: Annotated[str | None, typer.Option(
        "--included-tables", metavar="DB.T[,DB.T]", help="With a database: only these tables.")] = None,
    excluded_tables: Annotated[str | None, typer.Option(
        "--excluded-tables", metavar="DB.T[,DB.T]", help="With a database: not these tables.")] = None,
    meta_only: Annotated[bool, typer.Option(
        "--meta-only", help="Create the target table(s) only; copy no files.")] = False,
    if_exists: Annotated[str, typer.Option(
        "--if-exists", metavar="overwrite|skip",
        help="An existing target: overwrite the partitions the copy touches (Java's clone_if_exists=true) "
             "or skip it.")] = "overwrite",
    clone_from: Annotated[str, typer.Option(
        "--clone-from", metavar="paimon|hive",
        help="Source kind: paimon, or hive (Parquet/ORC tables of a Hive catalog; files copied).")] = "paimon",
    parallelism: Annotated[int | None, typer.Option(
        "--parallelism", metavar="N", help="Files copied at once (default 4, 16 with an object store).")] = None,
    prefer_file_format: Annotated[str | None, typer.Option(
        "--prefer-file-format", metavar="parquet|orc|avro",
        help="file.format of a created target (its later writes; copied files keep theirs).")] = None,
    target_table_conf: Annotated[list[str] | None, typer.Option(
        "--target-table-conf", metavar="K=V",
        help="Option of a created target, repeatable; only retention, compaction and write tuning "
             "(others change how the copied files read: exit 6).")] = None,
    dry_run: DryRunOpt = False,
    warehouse: WarehouseOpt = None,
    fs_option: FsOpt = None,
    catalog: CatalogOpt = None,
    catalog_option: CatalogOptionOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    limit: LimitOpt = None,
    debug: DebugOpt = False,
) -> None:
    """Clone DB.TABLE (or every table of DB, or of the catalog) into another table (Java's clone procedure).

    The target is created when missing with the source's schemas (its whole history, so files
    written before an ALTER keep their schema; a REST server gets it replayed) and options; the data
    and index files (deletion vectors, HASH index, file indexes) of the source's latest
    snapshot, or of the partitions --where selects, are copied with their names through each
    side's file system and committed as ONE snapshot that overwrites the partitions they touch.
    A re-run after an interruption copies only the files not yet there with the same size
    and commits only if the target does not hold them yet.

    With --clone-from hive the source catalog is a Hive Metastore and its Parquet/ORC tables
    are cloned into unaware-bucket append tables (bucket -1): the files are copied (the Hive
    table is untouched) into bucket-0 as <name>.<format>, their metas read from the footers.

    With no source and no --target every table of every database is cloned under its own name
    into the target catalog.

    \b
    Example:
        paimon-cli clone shop.orders --target shop.orders_copy --dry-run
        paimon-cli clone shop --target shop --target-warehouse s3://backup/wh
        paimon-cli clone shop.orders --target bak.orders --where "dt = '2024-05-01'"
        paimon-cli clone --target-warehouse s3://backup/wh --target-table-conf snapshot.num-retained.max=100
        paimon-cli clone hdb.sales --clone-from hive --target bak.sales --catalog hms --target-warehouse /wh
    """
    from paimon_cli.core.api import Warehouse

    source_wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    target_wh = None
    if target_warehouse or target_fs_option or target_catalog or target_catalog_option:
        target_wh = Warehouse(target_warehouse, target_fs_option, catalog=target_catalog,
                              catalog_options=target_catalog_option)
    result = source_wh.clone(source, target, target_warehouse=target_wh, where=where,
                             included_tables=included_tables, excluded_tables=excluded_tables, meta_only=meta_only,
                             if_exists=if_exists, clone_from=clone_from, parallelism=parallelism,
                             prefer_file_format=prefer_file_format, target_table_conf=target_table_conf,
                             dry_run=dry_run)
    note(result.summary())
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
