"""``paimon-cli compact-manifest``: rewrite the latest snapshot's manifests into few."""

from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
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


def compact_manifest(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose manifests to compact.")],
    dry_run: DryRunOpt = False,
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
    """Rewrite the data manifests of the latest snapshot into few, as Java's compact_manifest.

    Manifests holding DELETE entries or smaller than manifest.target-file-size are merged:
    DELETE entries and the ADDs they cancel are dropped, the remaining entries are written
    sorted by partition and bucket. One COMPACT snapshot; no data file changes, nothing is
    deleted (old manifests go with snapshot expiration). Prints one row per manifest with
    --dry-run, else the new snapshot.

    \b
    Example:
        paimon-cli compact-manifest shop.orders --dry-run
        paimon-cli compact-manifest shop.orders
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    result = table.compact_manifest(dry_run=dry_run)
    for line in result.notes():
        note(line)
    render_outcome(result.rows(), output, wide, preview=dry_run, limit=limit)
