"""``paimon-cli remove-orphan-files``: delete files no snapshot, tag, changelog or branch uses."""

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
    time_option,
)
from paimon_cli.output import OutputFormat, note, render

COLUMNS = ["path", "kind", "bytes"]


def remove_orphan_files(
    identifier: Annotated[str, typer.Argument(metavar="DB.TABLE", help="Table to clean.")],
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
    dry_run: DryRunOpt = False,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Delete orphan files (written but never committed, or left by failed commits).

    Used files are collected from every branch's snapshots, tags and changelogs; anything
    unreadable stops the run with exit 6 and nothing is deleted. Prints one row per file
    (and empty directory) deleted, or that would be with --dry-run. Files are shared by all
    branches, so --branch only selects how the table is opened; the whole table is cleaned.
    Only the table directory is cleaned unless --external-paths is given.

    \b
    Example:
        paimon-cli remove-orphan-files shop.orders --dry-run -o json
        paimon-cli remove-orphan-files shop.orders --older-than 3d
        paimon-cli remove-orphan-files shop.orders --external-paths --dry-run
    """
    from paimon_cli.core.operation.orphans import plan_remove_orphans, remove_orphans
    from paimon_cli.core.utils.rows import Rows

    ident = parse_identifier(identifier)
    table = open_catalog(warehouse, fs_option).get_table(ident.full_name, parse_branch(branch))
    plan = plan_remove_orphans(table, older_than, force, external_paths=external_paths)
    rel = len(table.path.rstrip("/")) + 1

    def short(path: str) -> str:
        return path[rel:] if path.startswith(table.path.rstrip("/") + "/") else path

    if dry_run:
        files, dirs = plan.files, plan.dirs
        kept: list = []
    else:
        result = remove_orphans(table, plan)
        files, dirs, kept = result.deleted, result.dirs_removed, result.kept
    rows = [{"path": short(f.path), "kind": f.kind, "bytes": f.size} for f in files]
    rows += [{"path": short(d), "kind": "directory", "bytes": 0} for d in dirs]
    render(Rows(COLUMNS, rows), output, wide)
    import datetime as dt

    cutoff = dt.datetime.fromtimestamp(plan.cutoff_millis / 1000).isoformat(timespec="milliseconds")
    verb = "would delete" if dry_run else "deleted"
    note(
        f"{ident.full_name}: {verb} {len(files)} files ({sum(f.size for f in files)} bytes) and "
        f"{len(dirs)} empty directories; files older than {cutoff} considered: {plan.candidates}, "
        f"used names: {len(plan.used.names)}, directories listed: {plan.dirs_listed}"
    )
    if plan.unscanned_external_roots:
        note(
            f"not scanned: data-file.external-paths {', '.join(plan.unscanned_external_roots)} "
            "(--external-paths cleans them when no other table of the warehouse uses them)"
        )
    if external_paths and not plan.external_roots:
        note("--external-paths: the table configures no data-file.external-paths")
    if plan.external_roots:
        note(
            f"scanned external roots {', '.join(plan.external_roots)}: no location of the "
            f"{plan.tables_checked} other tables of the warehouse overlaps them"
        )
    if kept:
        note(f"kept {len(kept)} planned files that became used while running (e.g. {short(kept[0].path)})")
