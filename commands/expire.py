"""``paimon-cli expire``: expire old snapshots (or long-lived changelogs) as Java Paimon does."""

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

FILE_COLUMNS = ["path", "kind", "bytes", "snapshot_id"]
RESULT_COLUMNS = ["mode", "expired", "range", "earliest_now", "files", "bytes", "seconds"]


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
    dry_run: DryRunOpt = False,
    branch: BranchOpt = None,
    warehouse: WarehouseOpt = "./warehouse",
    fs_option: FsOpt = None,
    output: OutputOpt = OutputFormat.table,
    wide: WideOpt = False,
    debug: DebugOpt = False,
) -> None:
    """Expire old snapshots of DB.TABLE and delete the files only they used (as Java Paimon).

    Unset flags fall back to the table's options. Tags keep their files, consumers keep
    the snapshots they will read, and nothing a retained snapshot, tag or branch uses is
    deleted. If any snapshot, tag, consumer or manifest that decides what is still used
    cannot be read, nothing is deleted (exit 6). With a decoupled changelog lifecycle
    (changelog.num-retained.*), expired snapshots move to changelog/ and --changelog
    expires those (writers run both after each commit, as Java does). A run right after
    --dry-run deletes exactly the files the dry run listed.

    \b
    Example:
        paimon-cli expire shop.orders --dry-run
        paimon-cli expire shop.orders --retain-min 5 --older-than 2h
        paimon-cli expire shop.orders --older-than 2024-05-01T00:00:00 --max-deletes 500 -o json
    """
    from paimon_cli.core.operation.expire import apply_expire, plan_expire
    from paimon_cli.core.operation.expire_plan import ExpirePolicy
    from paimon_cli.core.utils.durations import parse_point_in_time
    from paimon_cli.core.utils.rows import Rows

    ident = parse_identifier(identifier)
    branch_name = parse_branch(branch)
    cutoff = None if older_than is None else parse_point_in_time(older_than, "--older-than")
    catalog = open_catalog(warehouse, fs_option)
    table = catalog.get_table(ident.full_name, branch_name)
    policy = ExpirePolicy(retain_max=retain_max, retain_min=retain_min, older_than_millis=cutoff,
                          max_deletes=max_deletes, changelog=changelog)
    plans = [plan_expire(table, policy)]
    for n in plans[0].notes:
        note(f"note: {n}")
    if dry_run:
        p = plans[0]
        rows = [f.to_dict() for f in p.files]
        render(Rows(FILE_COLUMNS, rows), output, wide)
        if output == OutputFormat.table:
            note(_describe(p) + f"; would delete {len(p.files)} files, {p.total_bytes} bytes (dry run)")
        return
    results = [apply_expire(table, plans[0])]
    if plans[0].policy.changelog_decoupled and not changelog:
        note("note: the changelog lifecycle is decoupled; expired snapshots were moved to changelog/ "
             "(`expire --changelog` expires those; writers run it after each commit)")
    out = []
    for r in results:
        p = r.plan
        assert p is not None
        out.append({
            "mode": p.mode,
            "expired": r.expired,
            "range": f"{p.expired_ids[0]}..{p.end_id - 1}" if p.expired_ids and p.end_id else None,
            "earliest_now": p.earliest_hint if p.expired_ids else p.earliest_id,
            "files": r.deleted_files,
            "bytes": r.deleted_bytes,
            "seconds": round(r.seconds, 3),
        })
    render(Rows(RESULT_COLUMNS, out), output, wide)


def _describe(p: object) -> str:
    from paimon_cli.core.operation.expire_plan import ExpirePlan

    assert isinstance(p, ExpirePlan)
    what = "changelogs" if p.mode == "changelog" else "snapshots"
    if not p.expired_ids:
        return f"no {what} to expire (earliest {p.earliest_id}, latest {p.latest_id})"
    return f"would expire {what} {p.expired_ids[0]}..{p.end_id - 1 if p.end_id else '?'} ({len(p.expired_ids)})"
