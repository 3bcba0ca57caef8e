"""``paimon-cli inspect``: show one of Paimon's system tables (``t$snapshots``, ...)."""

from contextlib import closing
from enum import Enum
from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    CatalogOpt,
    CatalogOptionOpt,
    ColumnsOpt,
    DebugOpt,
    FsOpt,
    LimitOpt,
    OutputOpt,
    SnapshotOpt,
    TagOpt,
    TimestampOpt,
    WarehouseOpt,
    WideOpt,
    check_time_travel,
)
from paimon_cli.output import OutputFormat, read_limit, render, render_stream
from paimon_cli.record_batches import render_batches

InspectKind = Enum(  # type: ignore[misc]
    "InspectKind",
    {k.replace("-", "_"): k for k in (
        "snapshots", "schemas", "options", "files", "manifests", "partitions", "buckets", "tags",
        "branches", "consumers", "table-indexes", "statistics", "aggregation-fields", "file-indexes",
        "audit-log", "binlog", "ro", "table", "expiry", "iceberg", "all-table-options", "catalog-options",
    )},
    type=str,
)
CATALOG_KINDS = {"all-table-options", "catalog-options"}


def inspect(
    kind: Annotated[InspectKind, typer.Argument(metavar="KIND", help="What to show.", case_sensitive=False)],
    identifier: Annotated[str | None, typer.Argument(metavar="DB.TABLE", help="Table (not for catalog kinds).")] = None,
    snapshot: SnapshotOpt = None,
    tag: TagOpt = None,
    timestamp: TimestampOpt = None,
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
    """Show a system table of DB.TABLE (or of the catalog), optionally as of a snapshot/tag/time.

    \b
    Example:
        paimon-cli inspect snapshots shop.orders -o json
        paimon-cli inspect files shop.orders --tag release-1 --columns file_path,record_count
        paimon-cli inspect audit-log shop.orders --limit 20
        paimon-cli inspect catalog-options
    """
    from paimon_cli.core.api import ROW_STREAM_KINDS, STREAMED_KINDS, Warehouse

    name = kind.value
    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    if name in CATALOG_KINDS:
        if identifier is not None:
            raise typer.BadParameter(f"inspect {name} takes no DB.TABLE")
        render(wh.inspect(name), output, wide, limit=limit, columns=columns)
        return
    if identifier is None:
        raise typer.BadParameter(f"inspect {name} needs DB.TABLE")
    table = wh.table(identifier, branch)
    check_time_travel(snapshot, tag, timestamp)
    if name in STREAMED_KINDS:  # a read of the table: streamed, stopping at what is shown
        reader = table.inspect_reader(name, snapshot=snapshot, tag=tag, timestamp=timestamp,
                                      limit=read_limit(output, limit))
        with closing(reader.batches()) as batches:
            render_batches(batches, reader.schema, output, wide, limit, columns)
        return
    if name in ROW_STREAM_KINDS:  # millions of files: rows printed as each manifest is read
        stream = table.inspect_stream(name, snapshot=snapshot, tag=tag, timestamp=timestamp)
        render_stream(stream, output, wide, limit, columns)
        return
    rows = table.inspect(name, snapshot=snapshot, tag=tag, timestamp=timestamp, limit=limit)
    render(rows, output, wide, limit=limit, columns=columns)
