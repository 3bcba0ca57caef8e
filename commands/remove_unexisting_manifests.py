"""``paimon-cli remove-unexisting-manifests``: drop data manifests that no longer exist from the latest snapshot."""

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


def remove_unexisting_manifests(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to check.")],
    force: Annotated[bool, typer.Option(
        "--force", help="Also drop missing manifests that held DELETE entries (the files they deleted become "
                        "live again), as Java's procedure does.")] = False,
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
    """Republish the latest snapshot of DB.TABLE without its data manifests that no longer
    exist, as Java's remove_unexisting_manifests: the files they added are gone for readers,
    the rest of the table reads again.

    One OVERWRITE snapshot: the existing manifests become the base list, the record count is
    recounted. A missing manifest that held DELETE entries is refused (exit 6) unless --force:
    the files it deleted would be live again. Anything that cannot be read or checked refuses
    (exit 6) with nothing changed. Prints one row per missing manifest (--dry-run: exactly those
    a real run drops).

    \b
    Example:
        paimon-cli remove-unexisting-manifests shop.orders --dry-run
        paimon-cli remove-unexisting-manifests shop.orders
    """
    from paimon_cli.core.api import Warehouse

    table = Warehouse(warehouse, fs_option, catalog=catalog, catalog_options=catalog_option).table(identifier, branch)
    plan = table.remove_unexisting_manifests(force=force, dry_run=dry_run)
    if plan.snapshot_id is None:
        note(f"remove-unexisting-manifests: {table.name} has no snapshot; nothing to check")
    else:
        head = (f"remove-unexisting-manifests: {table.name}: {len(plan.missing)} of {plan.checked} data manifests "
                f"of snapshot {plan.snapshot_id} missing")
        if not plan.missing:
            note(head + "; nothing to remove")
        else:
            what = f"{plan.files_lost} added files gone" + (
                f", {plan.revived} deleted files live again" if plan.revived else "")
            note(head + (f"; would drop them ({what}); nothing changed" if dry_run
                         else f"; dropped them ({what}) in snapshot {plan.snapshot}"))
    render_outcome(plan.rows(), output, wide, preview=dry_run, limit=limit)
