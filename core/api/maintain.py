"""``Warehouse.maintain``: the policy-driven upkeep of many tables, over the library's verbs.

core's ``maintain`` room decides and schedules; the procedures are this API's own ``Table``
verbs (:class:`TableVerbs`), so each action does exactly what its command does.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NotFound
from ..io.fileio import load_file_io
from ..maintain.findings import MaintenanceAction
from ..maintain.lease import DEFAULT_TTL_MILLIS
from ..maintain.plan import PlannedAction
from ..maintain.policy import Policy, load_policy
from ..maintain.runner import ActionResult, MaintainRun, RunInterrupted, RunOptions, TableRecord, run_maintain
from ..utils.interrupt import Interrupted
from ..utils.rows import Rows
from .arguments import Duration, KeyValues, duration_millis, memory_bytes

if TYPE_CHECKING:
    from ..maintain.findings import TableHealth
    from ..table.file_store_table import FileStoreTable
    from .warehouse import Warehouse

SUMMARY_COLUMNS = ["table", "actions", "score", "bytes_rewritten", "bytes_deleted", "seconds", "outcome", "message"]
PLAN_COLUMNS = ["table", "score", "action", "status", "reason"]


@dataclass
class TableVerbs:
    """The executor ``maintain`` runs actions with: one ``Table`` verb per action."""

    warehouse: Warehouse
    policy: Policy
    engine: str = "auto"
    spark_master: str | None = None
    spark_conf: KeyValues | None = None

    def __call__(self, identifier: str, action: PlannedAction, max_bytes: int | None) -> ActionResult:
        t = self.warehouse.table(identifier)
        a = action.action
        if a in (MaintenanceAction.COMPACT, MaintenanceAction.FULL_COMPACT):
            c = t.compact(full=a is MaintenanceAction.FULL_COMPACT, engine=self.engine, spark_master=self.spark_master,
                          spark_conf=self.spark_conf, max_bytes=max_bytes).result
            return ActionResult(bytes_rewritten=c.bytes_in, snapshot_id=c.snapshot_id, detail=c.message)
        if a in (MaintenanceAction.EXPIRE_SNAPSHOTS, MaintenanceAction.EXPIRE_CHANGELOGS):
            e = t.expire(changelog=a is MaintenanceAction.EXPIRE_CHANGELOGS)
            done = e.result
            assert done is not None
            return ActionResult(bytes_deleted=done.deleted_bytes,
                                detail=f"expired {done.expired} {e.plan.mode}s, deleted {done.deleted_files} files")
        if a is MaintenanceAction.EXPIRE_PARTITIONS:
            p = t.expire_partitions()
            dropped = sum(x.file_size for x in p.partitions)
            return ActionResult(snapshot_id=p.snapshots[-1] if p.snapshots else None,
                                detail=f"dropped {len(p.partitions)} partitions ({dropped} bytes, deleted by expiry)")
        if a is MaintenanceAction.EXPIRE_TAGS:
            tags = t.expire_tags()
            return ActionResult(bytes_deleted=tags.total_bytes, detail=f"expired tags: {', '.join(tags.tags) or 'none'}")
        if a is MaintenanceAction.COMPACT_MANIFEST:
            m = t.compact_manifest()
            return ActionResult(snapshot_id=m.snapshot_id, detail=m.notes()[0])
        if a is MaintenanceAction.REWRITE_FILE_INDEX:
            r = t.rewrite_file_index()
            return ActionResult(snapshot_id=r.snapshot_id, detail=r.notes()[-1])
        if a is MaintenanceAction.REMOVE_ORPHAN_FILES:
            db, name = identifier.split(".", 1)
            rules = self.policy.rules_for(db, name, t.open().schema.options)
            o = t.remove_orphan_files(older_than=f"{rules.orphan_files_older_than_millis // 1000}s")
            return ActionResult(bytes_deleted=sum(f.size for f in o.files), detail=o.notes()[0])
        raise AssertionError(f"no verb for {a}")


def _assessor(warehouse: Warehouse) -> Callable[[FileStoreTable, bool], TableHealth]:
    """``health`` of one table, its fix commands naming the run's catalog."""
    from ..maintain.health import assess_table

    where = warehouse.catalog.options.cli_args()
    return lambda table, scan_orphans: assess_table(table, scan_orphans=scan_orphans, catalog_args=where)


def read_policy(warehouse: Warehouse, path: str | None) -> Policy:
    if path is None:
        return Policy.empty()
    try:
        text = load_file_io(path, warehouse.storage_options).read_text(path)
    except NotFound:
        raise NotFound(f"policy file {path} not found") from None
    return load_policy(text, path)


def maintain(warehouse: Warehouse, selectors: Sequence[str] = (), *, policy: str | None = None,
             dry_run: bool = False, max_duration: Duration | None = None, max_bytes: int | str | None = None,
             parallel: int = 1, engine: str = "auto", spark_master: str | None = None,
             spark_conf: KeyValues | None = None, lease_ttl: Duration | None = None) -> MaintainReport:
    from ..maintain.health import select_tables

    options = RunOptions(
        dry_run=dry_run,
        max_duration_millis=None if max_duration is None else duration_millis(max_duration, "--max-duration", True),
        max_bytes=None if max_bytes is None else memory_bytes(max_bytes, "--max-bytes"),
        parallel=max(1, parallel),
        lease_ttl_millis=DEFAULT_TTL_MILLIS if lease_ttl is None else duration_millis(lease_ttl, "--lease-ttl", True),
    )
    parsed = read_policy(warehouse, policy)  # a bad policy is refused before any table is read
    names = [i.full_name for i in select_tables(warehouse.catalog, selectors)]
    verbs = TableVerbs(warehouse, parsed, engine.lower(), spark_master, spark_conf)
    try:
        run = run_maintain(names, lambda i: warehouse.table(i).open(), _assessor(warehouse), verbs, parsed, options)
    except RunInterrupted as e:
        raise MaintainInterrupted(e.signum, MaintainReport(e.run)) from e
    return MaintainReport(run)


class MaintainInterrupted(Interrupted):
    """SIGINT / SIGTERM stopped ``maintain``: ``report`` is the run up to the signal (what was
    done, what was skipped; the leases are released), for ``--report``."""

    def __init__(self, signum: int, report: MaintainReport) -> None:
        super().__init__(signum)
        self.report = report


@dataclass
class MaintainReport:
    """A ``maintain`` run: the summary table, the plan, and everything for ``--report``."""

    run: MaintainRun

    @property
    def exit_code(self) -> int:
        return self.run.exit_code

    def rows(self) -> Rows:
        out = []
        for t in self.run.tables:
            acts = [a.action for a in t.actions if a.outcome in ("done", "planned", "deferred", "failed")]
            after = "?" if t.score_after is None else str(t.score_after)
            out.append({"table": t.identifier, "actions": ", ".join(acts) or "-",
                        "score": "-" if t.score_before is None else f"{t.score_before} -> {after}",
                        "bytes_rewritten": t.bytes_rewritten, "bytes_deleted": t.bytes_deleted,
                        "seconds": t.seconds, "outcome": t.outcome, "message": t.message})
        return Rows(SUMMARY_COLUMNS, out)

    def records(self) -> Rows:
        """One row per table exactly as the ``--report`` file holds it (typed scores, byte counts,
        the actions and findings as lists): ``-o json|jsonl``, the same shape for a real run and
        a ``--dry-run`` (whose actions are ``planned`` / ``held-back``)."""
        rows = [t.as_dict() for t in self.run.tables]
        return Rows(list(rows[0]) if rows else TableRecord.columns(), rows)

    def plan_rows(self) -> Rows:
        """Per table, per action: what a run would do and why (``--dry-run``)."""
        out = []
        for t in self.run.tables:
            score = t.score_before
            if not t.actions:
                out.append({"table": t.identifier, "score": score, "action": "-",
                            "status": t.outcome if t.outcome != "ok" else "nothing to do", "reason": t.message})
            for a in t.actions:
                out.append({"table": t.identifier, "score": score, "action": a.action,
                            "status": a.outcome, "reason": a.reason + (f" ({a.detail})" if a.detail else "")})
        return Rows(PLAN_COLUMNS, out)

    def to_dict(self) -> dict[str, Any]:
        return self.run.as_dict()

    def metrics(self) -> list[tuple[str, str, list[tuple[dict[str, str], float]]]]:
        """The run's gauges (name, help, samples) for OpenMetrics, labelled by db and table."""
        tables = self.run.tables

        def per_table(value: Any) -> list[tuple[dict[str, str], float]]:
            out = []
            for t in tables:
                v = value(t)
                if v is not None:
                    db, name = t.identifier.split(".", 1)
                    out.append(({"db": db, "table": name}, float(v)))
            return out

        actions = [({"db": t.identifier.split(".", 1)[0], "table": t.identifier.split(".", 1)[1], "outcome": o},
                    float(n)) for t in tables for o, n in Counter(a.outcome for a in t.actions).items()]
        return [
            ("paimon_maintain_score_before", "Health score (0-100) before maintain worked the table",
             per_table(lambda t: t.score_before)),
            ("paimon_maintain_score_after", "Health score (0-100) after maintain worked the table",
             per_table(lambda t: t.score_after)),
            ("paimon_maintain_bytes_rewritten", "Bytes the run's compactions read and rewrote",
             per_table(lambda t: t.bytes_rewritten)),
            ("paimon_maintain_bytes_deleted", "Bytes of files the run's expiry and orphan removal deleted",
             per_table(lambda t: t.bytes_deleted)),
            ("paimon_maintain_seconds", "Seconds the run spent on the table", per_table(lambda t: t.seconds)),
            ("paimon_maintain_actions", "Actions per outcome (done, deferred, failed, skipped, planned, held-back)",
             actions),
            ("paimon_maintain_table_exit_code", "The table's exit code (0 ok, deferred or leased elsewhere)",
             per_table(lambda t: t.exit_code)),
            ("paimon_maintain_exit_code", "The run's exit code (the worst table's)", [({}, float(self.exit_code))]),
            ("paimon_maintain_last_run_timestamp_seconds", "When the run ended (Unix time)",
             [({}, self.run.ended / 1000.0)]),
        ]

