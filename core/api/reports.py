"""What the library verbs return: small typed reports over core's results.

Each report keeps core's result object (all the detail) and adds ``rows()``: exactly the
table the CLI prints for the same operation, so a caller can log or compare it, and the
one-line summaries the CLI writes to stderr. Plans of dry runs are these same rows.
"""

from __future__ import annotations

import datetime
from collections.abc import Generator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..errors import worst_exit_code
from ..io.paths import table_relative
from ..utils.rows import Rows

if TYPE_CHECKING:
    import pyarrow as pa

    from ..catalog.base import Registration
    from ..compact.job import CompactResult
    from ..compact.materialize_dv import MaterializeResult
    from ..compact.rescale import RescaleResult
    from ..compact.rewrite_file_index import RewriteResult
    from ..compact.write_job import WriteResult
    from ..operation.clone import TableClone
    from ..operation.expire import ExpireResult
    from ..operation.expire_plan import ExpirePlan
    from ..operation.manifest_compact import ManifestCompactPlan, ManifestCompactResult
    from ..operation.orphans import OrphanFile, OrphanPlan, OrphanResult
    from ..operation.purge import PurgePlan, PurgeResult
    from ..operation.read import TableRead
    from ..operation.repair import HintFix, RepairPlan
    from ..operation.rollback import RollbackPlan
    from ..operation.unexisting_files import UnexistingFilesPlan, UnexistingFilesResult
    from ..refs.snapshot import Snapshot
    from ..schema.table_schema import TableSchema

WRITE_COLUMNS = ["snapshot_id", "commit_kind", "compact_snapshot_id", "files", "rows", "bytes", "seconds"]
EXPIRE_FILE_COLUMNS = ["path", "kind", "bytes", "snapshot_id"]
EXPIRE_RESULT_COLUMNS = ["mode", "expired", "range", "earliest_now", "files", "bytes", "seconds"]
REMOVED_FILE_COLUMNS = ["path", "kind", "bytes"]


@dataclass
class AlterPlan:
    """The schema an ``alter`` would commit, and the changes from the latest one."""

    old: TableSchema
    new: TableSchema
    identifier: str

    def rows(self) -> Rows:
        from ..schema.schema_diff import schema_diff
        return schema_diff(self.old, self.new)

    def describe(self) -> str:
        return (f"alter {self.identifier}: would commit schema {self.new.id} after schema {self.old.id} "
                f"({len(self.rows().rows)} change(s)); nothing changed")


@dataclass
class WriteReport:
    """One write: the snapshot holding its rows (APPEND or OVERWRITE) and the COMPACT one the
    write's own compaction committed after it, if any."""

    result: WriteResult

    @property
    def data_snapshot(self) -> Snapshot | None:
        """The snapshot that holds the written rows: the first one the write committed."""
        return self.result.snapshots[0] if self.result.snapshots else self.result.snapshot

    @property
    def snapshot_id(self) -> int | None:
        snap = self.data_snapshot
        return None if snap is None else snap.id

    @property
    def compact_snapshot_id(self) -> int | None:
        """The COMPACT snapshot of the compaction the write triggered (None: none committed)."""
        return next((s.id for s in self.result.snapshots[1:] if s.commit_kind == "COMPACT"), None)

    @property
    def warning(self) -> str | None:
        """Set when the write committed but its compaction or expiry did not."""
        return self.result.warning

    def notes(self) -> list[str]:
        """What is worth saying and is no error (an overwritten partition that did not exist)."""
        return [f"note: {n}" for n in self.result.notes]

    def rows(self) -> Rows:
        snap, s = self.data_snapshot, self.result.summary
        return Rows(WRITE_COLUMNS, [{
            "snapshot_id": None if snap is None else snap.id,
            "commit_kind": None if snap is None else snap.commit_kind,
            "compact_snapshot_id": self.compact_snapshot_id,
            "files": s.files, "rows": s.rows, "bytes": s.bytes, "seconds": round(self.result.seconds, 3),
        }])


class Reader:
    """A planned read (snapshot and schema fixed): stream its batches, collect or explain it."""

    def __init__(self, read: TableRead, where: str | None = None) -> None:
        self._read = read
        self._where = where  # as the caller spelt it, for notes

    @property
    def schema(self) -> pa.Schema:
        """The Arrow schema of every batch (projection applied)."""
        return self._read.output_schema()

    def batches(self) -> Generator[pa.RecordBatch, None, None]:
        """Batches one (partition, bucket) at a time, so memory stays bounded by a bucket.
        Close the generator when stopping early: that ends its read-ahead threads. A read
        core refuses (e.g. postponed rows it must not leave out) raises here, not later."""
        # TableRead.iter_batches checks, then returns its generator (annotated as an Iterator)
        return cast("Generator[pa.RecordBatch, None, None]", self._read.iter_batches())

    def to_arrow(self) -> pa.Table:
        return self._read.to_arrow()

    def explain(self) -> Rows:
        """What the read touches and what each pruning step removed; reads no data."""
        return self._read.explain()

    def notes(self) -> list[str]:
        """A ``where`` whose partition conditions leave no partition of the table: the empty
        result is an answer (exit 0), said apart so a mistyped value is seen."""
        from ..operation.partition_spec import no_match_message
        plan = self._read.plan()
        if not plan.no_partition_left:
            return []
        spelling = "--where" if self._where is None else f"--where {self._where!r}"
        return [f"note: {no_match_message(spelling, self._read.table, ': the result is empty')}"]

    def describe(self) -> str:
        """Table, snapshot and predicate the read is planned for (``read --explain``'s title)."""
        snap = self._read.plan().snapshot
        where = f" where {self._read.predicate}" if self._read.predicate is not None else ""
        return f"{self._read.table.identifier} at snapshot {snap.id if snap else '(none)'}{where}"


@dataclass
class CompactReport:
    """One compaction, or with ``plan=True`` what it would rewrite per bucket."""

    result: CompactResult
    planned: bool

    @property
    def snapshot_id(self) -> int | None:
        return self.result.snapshot_id

    def rows(self) -> Rows:
        from ..compact.job import PLAN_BRIEF as COMPACT_PLAN_BRIEF
        from ..compact.job import PLAN_COLUMNS as COMPACT_PLAN_COLUMNS
        from ..compact.job import RESULT_BRIEF as COMPACT_RESULT_BRIEF
        from ..compact.job import RESULT_COLUMNS as COMPACT_RESULT_COLUMNS
        if self.planned:
            plan = self.result.plan
            return Rows(COMPACT_PLAN_COLUMNS, [r.as_dict() for r in (plan.rows if plan else [])], COMPACT_PLAN_BRIEF)
        return Rows(COMPACT_RESULT_COLUMNS, [self.result.as_row()], COMPACT_RESULT_BRIEF)

    def notes(self) -> list[str]:
        r = self.result
        if self.planned:
            out = [f"engine: {r.engine} ({r.engine_reason})"] if r.engine else []
            return out + ([] if r.plan and r.plan.rows else [r.message])
        return [f"compact: {r.message}" + (f"; engine {r.engine} ({r.engine_reason})" if r.engine else "")
                ] + [f"note: {n}" for n in r.notes]


@dataclass
class RescaleReport:
    result: RescaleResult
    identifier: str

    @property
    def snapshot_id(self) -> int | None:
        return self.result.snapshot_id

    def rows(self) -> Rows:
        """The plan (per partition) of a dry run, else the one result row."""
        from ..compact.rescale import RESULT_COLUMNS as RESCALE_RESULT_COLUMNS
        if self.result.dry_run:
            return self.result.plan.rows()
        return Rows(RESCALE_RESULT_COLUMNS, [self.result.as_row()])

    def summary(self) -> str:
        from ..compact.rescale import describe
        return describe(self.result, self.identifier)


@dataclass
class MaterializeDeletionVectorsReport:
    result: MaterializeResult

    @property
    def snapshot_id(self) -> int | None:
        return self.result.snapshot_id

    def rows(self) -> Rows:
        """The row-id ranges a run rewrites (dry run), else the one result row."""
        from ..compact.materialize_dv import PLAN_COLUMNS as MDV_PLAN_COLUMNS
        from ..compact.materialize_dv import RESULT_COLUMNS as MDV_RESULT_COLUMNS
        r = self.result
        if r.dry_run:
            return Rows(MDV_PLAN_COLUMNS, [g.as_row() for g in r.groups])
        return Rows(MDV_RESULT_COLUMNS, [r.as_row()])

    def notes(self) -> list[str]:
        r = self.result
        out = []
        if r.dry_run:
            out.append(f"materialize-deletion-vectors: {len(r.groups)} row-id range(s) would be rewritten; "
                       "nothing written")
        elif r.snapshot_id is None:
            out.append("materialize-deletion-vectors: no deletion vectors to materialize; nothing committed")
        else:
            out.append(f"materialize-deletion-vectors: snapshot {r.snapshot_id} rewrote {len(r.groups)} row-id "
                       f"range(s); surviving rows have new row ids")
        if r.left_over:
            out.append(f"materialize-deletion-vectors: {r.left_over} deletion vector(s) left for the next run "
                       "(at most 100,000 per run)")
        return out


@dataclass
class RewriteFileIndexReport:
    result: RewriteResult
    v2_bitmap_columns: list[str]  # bitmap indexes at version 2, which Java 0.9 cannot use

    @property
    def snapshot_id(self) -> int | None:
        return self.result.snapshot_id

    def rows(self) -> Rows:
        """The files that would change (dry run), else the one result row."""
        from ..compact.rewrite_file_index import PLAN_COLUMNS as REWRITE_PLAN_COLUMNS
        from ..compact.rewrite_file_index import RESULT_COLUMNS as REWRITE_RESULT_COLUMNS
        r = self.result
        if r.dry_run:
            return Rows(REWRITE_PLAN_COLUMNS, [p.as_row() for p in r.changed])
        return Rows(REWRITE_RESULT_COLUMNS, [r.as_row()])

    def notes(self) -> list[str]:
        r = self.result
        out = []
        if self.v2_bitmap_columns and any(p.build for p in r.changed):
            out.append(f"note: bitmap index version 2 (the default) on {', '.join(self.v2_bitmap_columns)}: Java "
                       "Paimon 0.9 cannot use it for filtered reads; set file-index.bitmap.<col>.version=1 if 0.9 "
                       "readers query this table")
        if r.dry_run:
            out.append(f"rewrite-file-index: {len(r.changed)} of {len(r.plans)} live file(s) would change; "
                       "nothing written")
        elif r.snapshot_id is None:
            out.append(f"rewrite-file-index: all {len(r.plans)} live file(s) already match the options; "
                       "nothing committed")
        else:
            out.append(f"rewrite-file-index: committed snapshot {r.snapshot_id} ({len(r.changed)} file(s) changed)")
        if r.index_note:  # before the summary, which stays the last line (maintain's detail)
            out.insert(-1, f"note: {r.index_note}")
        return out


@dataclass
class ExpireReport:
    """Snapshot (or changelog) expiry: the plan, and what the run did (None for a dry run)."""

    plan: ExpirePlan
    result: ExpireResult | None
    table_path: str

    @property
    def moved_to_changelog(self) -> bool:
        """Expired snapshots were kept as long-lived changelogs (a decoupled changelog lifecycle)."""
        return self.result is not None and self.plan.mode != "changelog" and self.plan.policy.changelog_decoupled

    def rows(self) -> Rows:
        """Every file a run deletes, in order (dry run), else the one result row."""
        if self.result is None:
            return self.file_rows()
        r = self.result
        p = r.plan or self.plan
        return Rows(EXPIRE_RESULT_COLUMNS, [{
            "mode": p.mode,
            "expired": r.expired,
            "range": f"{p.expired_ids[0]}..{p.end_id - 1}" if p.expired_ids and p.end_id else None,
            "earliest_now": p.earliest_hint if p.expired_ids else p.earliest_id,
            "files": r.deleted_files,
            "bytes": r.deleted_bytes,
            "seconds": round(r.seconds, 3),
        }])

    def file_rows(self) -> Rows:
        """Every file the plan deletes, in order (paths relative to the table): the dry run's
        listing, and a real run's with ``--verbose``."""
        p = self.plan if self.result is None else (self.result.plan or self.plan)
        return Rows(EXPIRE_FILE_COLUMNS, [{**f.to_dict(), "path": table_relative(f.path, self.table_path)}
                                          for f in p.files])

    def describe(self) -> str:
        """What the plan expires and deletes, in one line."""
        p = self.plan
        what = "changelogs" if p.mode == "changelog" else "snapshots"
        if not p.expired_ids:
            head = f"no {what} to expire (earliest {p.earliest_id}, latest {p.latest_id})"
        else:
            end = p.end_id - 1 if p.end_id else "?"
            head = f"would expire {what} {p.expired_ids[0]}..{end} ({len(p.expired_ids)})"
        return head + f"; would delete {len(p.files)} files, {p.total_bytes} bytes (dry run)"


@dataclass
class PurgeFilesReport:
    """purge-files: the plan (every file with its bytes), and what the run did (None: dry run)."""

    plan: PurgePlan
    result: PurgeResult | None

    def rows(self) -> Rows:
        return self.plan.rows() if self.result is None else self.result.rows()

    def describe(self) -> str:
        return self.plan.describe()


@dataclass
class OrphanFilesReport:
    """Orphan files deleted, or with a dry run the ones that would be (paths relative to the table)."""

    plan: OrphanPlan
    result: OrphanResult | None
    identifier: str
    table_path: str
    external_paths: bool

    @property
    def files(self) -> list[OrphanFile]:
        return self.plan.files if self.result is None else self.result.deleted

    @property
    def dirs(self) -> list[str]:
        return self.plan.dirs if self.result is None else self.result.dirs_removed

    def rows(self) -> Rows:
        root = self.table_path
        rows = [{"path": table_relative(f.path, root), "kind": f.kind, "bytes": f.size} for f in self.files]
        rows += [{"path": table_relative(d, root), "kind": "directory", "bytes": 0} for d in self.dirs]
        return Rows(REMOVED_FILE_COLUMNS, rows)

    def notes(self) -> list[str]:
        p, files = self.plan, self.files
        cutoff = datetime.datetime.fromtimestamp(p.cutoff_millis / 1000).isoformat(timespec="milliseconds")
        verb = "would delete" if self.result is None else "deleted"
        out = [f"{self.identifier}: {verb} {len(files)} files ({sum(f.size for f in files)} bytes) and "
               f"{len(self.dirs)} empty directories; files older than {cutoff} considered: {p.candidates}, "
               f"used names: {p.used.name_count}, directories listed: {p.dirs_listed}"]
        if p.unscanned_external_roots:
            out.append(f"not scanned: data-file.external-paths {', '.join(p.unscanned_external_roots)} "
                       "(--external-paths cleans them when no other table of the warehouse uses them)")
        if self.external_paths and not p.external_roots:
            out.append("--external-paths: the table configures no data-file.external-paths")
        if p.external_roots:
            out.append(f"scanned external roots {', '.join(p.external_roots)}: no location of the "
                       f"{p.tables_checked} other tables of the warehouse overlaps them")
        kept = self.result.kept if self.result is not None else []
        if kept:
            out.append(f"kept {len(kept)} planned files that became used while running "
                       f"(e.g. {table_relative(kept[0].path, self.table_path)})")
        return out


@dataclass
class RollbackReport:
    """What a rollback removed (or, with a dry run, would remove)."""

    plan: RollbackPlan
    identifier: str
    table_path: str
    dry_run: bool

    def rows(self) -> Rows:
        root = self.table_path
        return Rows(REMOVED_FILE_COLUMNS,
                    [{"path": table_relative(f.path, root), "kind": f.kind, "bytes": f.size} for f in self.plan.files])

    def notes(self) -> list[str]:
        p = self.plan
        verb = "would roll back" if self.dry_run else "rolled back"
        what = f"tag {p.from_tag} (snapshot {p.target_id})" if p.from_tag else f"snapshot {p.target_id}"
        extra = "; snapshot re-created from the tag" if p.create_snapshot else ""
        if p.chosen:
            what += f", {p.chosen}"
        return [f"{self.identifier}: {verb} to {what}: {len(p.snapshots)} snapshots, {len(p.tags)} tags, "
                f"{len(p.changelogs)} changelogs, {len(p.files)} files ({p.total_bytes} bytes){extra}"
                ] + ([f"note: {p.iceberg}"] if p.iceberg else []) + [f"warning: {w}" for w in p.warnings]


@dataclass
class CompactManifestReport:
    """A manifest compaction, or (``result`` None: dry run) what it would do per manifest."""

    plan: ManifestCompactPlan
    result: ManifestCompactResult | None
    identifier: str

    @property
    def snapshot_id(self) -> int | None:
        return None if self.result is None else self.result.snapshot_id

    def rows(self) -> Rows:
        from ..operation.manifest_compact import RESULT_COLUMNS as COMPACT_MANIFEST_RESULT_COLUMNS
        if self.result is None:
            return self.plan.rows()
        return Rows(COMPACT_MANIFEST_RESULT_COLUMNS, [self.result.as_row()] if self.result.snapshot_id else [])

    def notes(self) -> list[str]:
        r = self.result
        plan = self.plan if r is None else r.plan
        if not plan.changes:
            return [f"compact-manifest: {self.identifier}: {plan.message}"]
        if r is None:
            return [f"compact-manifest: {self.identifier}: would commit a COMPACT snapshot after snapshot "
                    f"{plan.snapshot_id}: {plan.summary()}; nothing written"]
        return [f"compact-manifest: {self.identifier}: committed snapshot {r.snapshot_id}: "
                f"{len(plan.actions)} manifests -> {r.manifests_after}; {plan.summary()}"]


@dataclass
class RemoveUnexistingFilesReport:
    """The live data files found missing; ``result`` None for a dry run."""

    plan: UnexistingFilesPlan
    result: UnexistingFilesResult | None
    identifier: str

    @property
    def snapshot_id(self) -> int | None:
        return None if self.result is None else self.result.snapshot_id

    def rows(self) -> Rows:
        return self.plan.rows()

    def notes(self) -> list[str]:
        p = self.plan
        if p.snapshot_id is None:
            return [f"remove-unexisting-files: {self.identifier} has no snapshot; nothing to check"]
        head = (f"remove-unexisting-files: {self.identifier}: {len(p.missing)} of {p.checked} live data files "
                f"of snapshot {p.snapshot_id} missing")
        if not p.missing:
            return [head + "; nothing to remove"]
        dvs = sum(1 for m in p.missing if m.has_dv)
        what = f"their entries ({p.rows_lost} rows)" + (f" and {dvs} deletion vectors" if dvs else "")
        if self.result is None:
            return [head + f"; {what} would be dropped; nothing changed"]
        return [head + f"; dropped {what} in snapshot {self.result.snapshot_id}"
                ] + [f"warning: {w}" for w in self.result.warnings]


def registered_text(registrations: list[Registration], dry_run: bool) -> str:
    """``registered database d, table d.t in the metastore`` (or ``would register``)."""
    what = ", ".join(f"{r.kind} {r.name}" for r in registrations)
    return f"{'would register' if dry_run else 'registered'} {what} in the metastore"


@dataclass
class RepairReport:
    """The snapshot hints before and after a repair (or, dry run, what it would write)."""

    plan: RepairPlan
    applied: list[HintFix]
    identifier: str
    dry_run: bool
    registrations: list[Registration] = field(default_factory=list)  # entered in the metastore first

    def rows(self) -> Rows:
        plan = self.plan.rows()
        return Rows(plan.columns, [r.as_row() for r in self.registrations] + plan.rows)

    def notes(self) -> list[str]:
        changes = self.plan.changes
        head = f"repair: {self.identifier}: {self.plan.describe_ids()}"
        if self.registrations:
            head = f"repair: {self.identifier}: {registered_text(self.registrations, self.dry_run)}; " \
                   f"{self.plan.describe_ids()}"
        parts = self.plan.partitions
        synced = ([] if parts is None or not (parts.add or parts.drop) else
                  [f"{'would add' if self.dry_run else 'added'} {len(parts.add)} and "
                   f"{'drop' if self.dry_run else 'dropped'} {len(parts.drop)} metastore partition(s)"])
        if self.plan.metastore_schema is not None:
            synced.append(f"{'would update' if self.dry_run else 'updated'} the metastore's table: "
                          f"{self.plan.metastore_schema}")
        if not changes:
            return [head + "; the hints are right" + ("" if synced else ", nothing to repair")] + synced
        what = ", ".join(f"{f.action} {f.hint}" + ("" if f.target is None else f" = {f.target}") for f in changes)
        return [head + (f"; would {what}; nothing changed" if self.dry_run else f"; {what}")] + synced


DATABASE_COMPACT_COLUMNS = ["table", "outcome", "snapshot_id", "units", "files_in", "files_out", "bytes_in",
                            "bytes_out", "seconds", "exit_code", "message"]
DATABASE_COMPACT_BRIEF = ["table", "outcome", "snapshot_id", "files_in", "files_out", "bytes_in", "exit_code"]


@dataclass
class TableCompaction:
    """One table of ``compact DB``: its report, or the error that ended it."""

    identifier: str
    report: CompactReport | None = None
    error: str | None = None
    exit_code: int = 0

    @property
    def outcome(self) -> str:
        if self.report is None:
            return "failed"
        r = self.report.result
        if self.report.planned:
            return "planned" if r.plan and r.plan.rows else "nothing to do"
        return "compacted" if r.snapshot_id is not None else "nothing to do"

    def as_row(self) -> dict[str, Any]:
        row: dict[str, Any] = {"table": self.identifier, "outcome": self.outcome, "exit_code": self.exit_code}
        if self.report is None:
            return row | {"snapshot_id": None, "units": None, "files_in": None, "files_out": None,
                          "bytes_in": None, "bytes_out": None, "seconds": None, "message": self.error}
        r = self.report.result
        return row | {"snapshot_id": r.snapshot_id, "units": r.units, "files_in": r.files_in,
                      "files_out": r.files_out, "bytes_in": r.bytes_in, "bytes_out": r.bytes_out,
                      "seconds": round(r.seconds, 3), "message": r.message}


@dataclass
class DatabaseCompactReport:
    """``compact DB`` (Java's ``compact_database``): one outcome per selected table; the exit
    code is the worst table's, as ``maintain``'s."""

    database: str
    tables: list[TableCompaction]
    planned: bool

    @property
    def exit_code(self) -> int:
        return worst_exit_code(t.exit_code for t in self.tables)

    @property
    def failed(self) -> list[TableCompaction]:
        return [t for t in self.tables if t.exit_code != 0]

    def rows(self) -> Rows:
        """One row per table; with ``planned`` each table's plan rows with the table first."""
        from ..compact.job import PLAN_BRIEF as COMPACT_PLAN_BRIEF
        from ..compact.job import PLAN_COLUMNS as COMPACT_PLAN_COLUMNS
        if self.planned:
            out = [{"table": t.identifier} | r.as_dict() for t in self.tables if t.report is not None
                   and t.report.result.plan for r in t.report.result.plan.rows]
            return Rows(["table", *COMPACT_PLAN_COLUMNS], out, ["table", *COMPACT_PLAN_BRIEF])
        return Rows(DATABASE_COMPACT_COLUMNS, [t.as_row() for t in self.tables], DATABASE_COMPACT_BRIEF)

    def summary(self) -> str:
        n = len(self.tables)
        done = sum(1 for t in self.tables if t.outcome in ("compacted", "planned"))
        idle = sum(1 for t in self.tables if t.outcome == "nothing to do")
        verb = "would compact" if self.planned else "compacted"
        return (f"compact {self.database}: {verb} {done} of {n} table(s), {idle} with nothing to do, "
                f"{len(self.failed)} failed")


@dataclass
class TableOrphans:
    """One table of ``remove-orphan-files DB.*``: its report, or the error that stopped it
    (that table deleted nothing: its run reads everything it depends on first)."""

    identifier: str
    report: OrphanFilesReport | None = None
    error: str | None = None
    exit_code: int = 0


@dataclass
class DatabaseOrphanFilesReport:
    """``remove-orphan-files DB.*`` (Java's ``remove_orphan_files`` of ``db.*``): one outcome
    per table; the exit code is the worst table's."""

    database: str
    tables: list[TableOrphans]
    dry_run: bool

    @property
    def exit_code(self) -> int:
        return worst_exit_code(t.exit_code for t in self.tables)

    @property
    def failed(self) -> list[TableOrphans]:
        return [t for t in self.tables if t.exit_code != 0]

    def rows(self) -> Rows:
        """Every table's file rows (deleted, or that would be) with the table first."""
        out = [{"table": t.identifier} | r for t in self.tables if t.report is not None
               for r in t.report.rows().rows]
        return Rows(["table", *REMOVED_FILE_COLUMNS], out)

    def notes(self) -> list[str]:
        out = [n for t in self.tables if t.report is not None for n in t.report.notes()]
        files = [f for t in self.tables if t.report is not None for f in t.report.files]
        verb = "would delete" if self.dry_run else "deleted"
        out.append(f"remove-orphan-files {self.database}.*: {verb} {len(files)} files "
                   f"({sum(f.size for f in files)} bytes) in {len(self.tables) - len(self.failed)} of "
                   f"{len(self.tables)} table(s), {len(self.failed)} failed")
        return out


@dataclass
class TableRepair:
    """One table of a database or catalog ``repair``: its report, or the error that ended it."""

    identifier: str
    report: RepairReport | None = None
    error: str | None = None
    exit_code: int = 0


@dataclass
class CatalogRepairReport:
    """``repair`` of a whole catalog, databases or a list of tables (Java's ``repair`` of '',
    'db' or 'db.table,...'): one outcome per table; the exit code is the worst table's."""

    target: str
    tables: list[TableRepair]
    dry_run: bool
    databases: list[Registration] = field(default_factory=list)  # entered in the metastore first
    registers: bool = True  # False: the catalog keeps no names apart from storage (filesystem)

    @property
    def exit_code(self) -> int:
        return worst_exit_code(t.exit_code for t in self.tables)

    @property
    def failed(self) -> list[TableRepair]:
        return [t for t in self.tables if t.exit_code != 0]

    def rows(self) -> Rows:
        """Every table's hint and metastore rows with the table first."""
        from ..operation.repair import PLAN_COLUMNS as REPAIR_COLUMNS

        dbs = {r.name for r in self.databases}
        out = [{"table": r.name} | r.as_row() for r in self.databases]
        out += [{"table": t.identifier} | r for t in self.tables if t.report is not None
                for r in t.report.rows().rows
                if not (r["hint"] == "metastore database" and t.identifier.split(".")[0] in dbs)]
        return Rows(["table", *REPAIR_COLUMNS], out)

    def notes(self) -> list[str]:
        out = [] if self.registers else \
            ["repair: the filesystem catalog's directories are its names; nothing to register in a metastore"]
        if self.databases:
            out.append(f"repair: {registered_text(self.databases, self.dry_run)}")
        out += [n for t in self.tables if t.report is not None for n in t.report.notes()]
        out.append(f"repair {self.target}: {'checked' if self.dry_run else 'repaired'} "
                   f"{len(self.tables) - len(self.failed)} of {len(self.tables)} table(s), {len(self.failed)} failed")
        return out


@dataclass
class CloneReport:
    """``clone`` / ``copy``: one plan (dry run) or outcome per table."""

    verb: str
    tables: list[TableClone]
    dry_run: bool

    def rows(self) -> Rows:
        """Every file a run copies (or finds present) with a dry run, else one row per table."""
        from ..operation.clone import clone_rows

        return clone_rows(self.tables, self.dry_run)

    def summary(self) -> str:
        copies = [f for t in self.tables for f in t.copies]
        present = sum(len(t.files) for t in self.tables) - len(copies)
        size = sum(f.size for f in copies)
        actions = ", ".join(f"{t.source} -> {t.target} ({t.action})" for t in self.tables)
        if self.dry_run:
            return (f"{self.verb}: would copy {len(copies)} file(s), {size} bytes ({present} already present); "
                    f"{actions}")
        snaps = [f"{t.target} snapshot {t.snapshot_id}" for t in self.tables if t.snapshot_id is not None]
        return (f"{self.verb}: copied {len(copies)} file(s), {size} bytes ({present} already present); {actions}"
                + (f"; committed {', '.join(snaps)}" if snaps else ""))
