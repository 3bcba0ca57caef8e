"""``paimon-cli read``: the rows of a table (merged like Java Paimon's batch read).

Results stream one (partition, bucket) at a time: ``-o json|jsonl|csv`` and ``--to FILE``
write each batch as it arrives, so memory stays bounded by the largest bucket. Values keep
full precision: timestamps print with all their fraction digits, decimals as exact strings,
binary as hex (``paimon_cli.output``'s batch renderer).
"""

from contextlib import closing
from enum import Enum
from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    CatalogOpt,
    CatalogOptionOpt,
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
from paimon_cli.output import OutputFormat, note, read_limit, render, shows_brief
from paimon_cli.record_batches import export_format, render_batches, write_export


class BlobAs(str, Enum):
    """What ``read`` shows for a BLOB column."""

    bytes = "bytes"
    size = "size"
    descriptor = "descriptor"


def read(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to read.")],
    select: Annotated[
        str | None, typer.Option("--select", metavar="COLS", help="Comma-separated columns (default: all).")
    ] = None,
    where: Annotated[
        str | None,
        typer.Option("--where", metavar="PREDICATE",
                     help="Row filter, e.g. \"dt = '2024-01-01' AND id IN (1, 2) AND name IS NOT NULL\"."),
    ] = None,
    limit: LimitOpt = None,
    to: Annotated[
        str | None,
        typer.Option("--to", metavar="FILE", help="Write the rows to FILE (.parquet, .csv, .jsonl, .json, .arrow) "
                     "instead of stdout."),
    ] = None,
    explain: Annotated[
        bool, typer.Option("--explain", help="Show what the read would touch and what pruning removed; read no data.")
    ] = False,
    blob_as: Annotated[
        BlobAs | None,
        typer.Option("--blob-as",
                     help="What BLOB columns show: their bytes, their size, or a descriptor (.blob file, offset, "
                     "length). Default: size for -o table, bytes otherwise."),
    ] = None,
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
    debug: DebugOpt = False,
) -> None:
    """Read DB.TABLE (merged for primary-key tables), optionally as of a snapshot/tag/time.

    \b
    Example:
        paimon-cli read shop.orders --where "dt = '2024-05-01' AND amount > 10" --limit 20
        paimon-cli read shop.orders --select id,amount -o jsonl --tag release-1
        paimon-cli read shop.orders --to orders.parquet
        paimon-cli read shop.orders --where "id = 7" --explain
        paimon-cli read media.images --select id,pic --blob-as descriptor
    """
    from paimon_cli.core.api import Warehouse

    wh = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option)
    table = wh.table(identifier, branch)
    check_time_travel(snapshot, tag, timestamp)
    export = export_format(to) if to is not None else None
    if blob_as is None:
        blob_as = BlobAs.size if to is None and output == OutputFormat.table else BlobAs.bytes
    shown = limit if to is not None or explain else read_limit(output, limit)  # a terminal reads only what it shows
    reader = table.reader(select, where, shown, snapshot=snapshot, tag=tag, timestamp=timestamp,
                          blob_as=blob_as.value)
    if explain:
        steps = reader.explain()
        render(steps, output, wide, title=reader.describe())
        if shows_brief(output, wide):  # the table left out the note column: why indexes pruned nothing
            for step in steps.rows:
                if step["note"]:
                    note(f"{step['step']}: {step['note']}")
        for line in reader.notes():
            note(line)
        return
    # the batches are closed on every way out (a closed pipe, an error, Ctrl-C): their
    # read-ahead threads end there
    if to is not None and export is not None:
        with closing(reader.batches()) as batches, wh.open_export(to) as f:
            n = write_export(batches, reader.schema, export, f)
        note(f"wrote {n} row(s) to {to}")
    else:
        with closing(reader.batches()) as batches:
            render_batches(batches, reader.schema, output, wide, limit)
    for line in reader.notes():
        note(line)
