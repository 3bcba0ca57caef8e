"""``paimon-cli rewrite-file-index``: make every live file's file index match the table options."""

from __future__ import annotations

from typing import Annotated

import typer

from paimon_cli.options import (
    BranchOpt,
    DebugOpt,
    DryRunOpt,
    FsOpt,
    OutputOpt,
    WarehouseOpt,
    WideOpt,
    open_catalog,
    parse_branch,
    parse_identifier,
)
from paimon_cli.output import OutputFormat, note, render


def rewrite_file_index(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table whose file indexes to rewrite.")],
    partition: Annotated[list[str] | None, typer.Option(
        "--partition", metavar="K=V[,K=V][;K=V]", help="Only these partitions (',' AND, ';' or repeat = OR).")] = None,
    where: Annotated[str | None, typer.Option(
        "--where", metavar="PREDICATE", help="Only partitions matching a predicate on partition columns.")] = None,
    dry_run: DryRunOpt = False,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Build, rebuild or drop file indexes (bloom-filter, bitmap, bsi) so every live data file
    matches the table's current file-index.* options, in one COMPACT snapshot.

    Columns are matched by field id across schema versions, so renamed columns keep their
    index and dropped columns lose it. Files already right are skipped; old .index files
    stay for remove-orphan-files (older snapshots still use them). Together with
    `alter --set file-index.<type>.columns=...` this replaces Paimon's ALTER TABLE +
    CALL sys.rewrite_file_index recipe. Bad options exit 4 before anything is written.

    \b
    Example:
        paimon-cli alter shop.orders --set file-index.bloom-filter.columns=customer
        paimon-cli rewrite-file-index shop.orders --dry-run
        paimon-cli rewrite-file-index shop.orders --partition dt=2024-05-01
    """
    from paimon_cli.core.compact.rewrite_file_index import PLAN_COLUMNS, RESULT_COLUMNS
    from paimon_cli.core.compact.rewrite_file_index import rewrite_file_index as run
    from paimon_cli.core.utils.rows import Rows

    ident = parse_identifier(identifier)
    table = open_catalog(warehouse, fs_option).get_table(ident.full_name, parse_branch(branch))
    result = run(table, partitions=partition or None, where=where, dry_run=dry_run)
    v2 = _default_v2_bitmaps(table.schema.options)
    if v2 and any(p.build for p in result.changed):
        note(f"note: bitmap index version 2 (the default) on {', '.join(v2)}: Java Paimon 0.9 cannot use it "
             "for filtered reads; set file-index.bitmap.<col>.version=1 if 0.9 readers query this table")
    if dry_run:
        changed = result.changed
        note(f"rewrite-file-index: {len(changed)} of {len(result.plans)} live file(s) would change; nothing written")
        render(Rows(PLAN_COLUMNS, [p.as_row() for p in changed]), output, wide)
        return
    if result.snapshot_id is None:
        note(f"rewrite-file-index: all {len(result.plans)} live file(s) already match the options; nothing committed")
    else:
        note(f"rewrite-file-index: committed snapshot {result.snapshot_id} ({len(result.changed)} file(s) changed)")
    render(Rows(RESULT_COLUMNS, [result.as_row()]), output, wide)


def _default_v2_bitmaps(options: dict[str, str]) -> list[str]:
    cols = [c.strip() for c in options.get("file-index.bitmap.columns", "").split(",") if c.strip()]
    return [c for c in cols if options.get(f"file-index.bitmap.{c}.version", "2").strip() != "1"]
