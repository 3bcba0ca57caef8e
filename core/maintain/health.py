"""``health``: what a table needs, from its metadata alone (README "health" documents each rule).

One read of the latest snapshot (manifest list, manifests, index manifest when deletion
vectors are on) feeds every rule; snapshot, changelog and tag rules read only the few JSON
files their retention needs (a binary search by time, as expiration does). Data directories
are listed only for orphans, and only when asked (``scan_orphans``).

Thresholds are Paimon's own options with Java's defaults, read from each table's options;
where Paimon has none (the delete ratio), Apache Amoro's health-score defaults are used.
"""

from __future__ import annotations

import datetime
import functools
import re
import shlex
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..catalog.base import Catalog
from ..errors import InvalidInput, NotFound, PaimonError, UnsafeRefused
from ..fileindex.format import FileIndexContainer, index_file_names
from ..io import paths
from ..io.fileio import parent
from ..manifest.index_manifest import IndexManifestEntry
from ..manifest.manifest import ManifestEntry, ManifestFileMeta
from ..operation.expire_plan import ExpirePolicy, ResolvedPolicy, resolve_policy
from ..operation.orphans import plan_remove_orphans
from ..operation.partition_expire import INT_MAX, plan_partition_expire
from ..operation.scan import FileStoreScan
from ..operation.tag_ops import expired_tag_names
from ..refs.snapshot import ChangelogManager, Snapshot, SnapshotManager
from ..refs.tag_period import TagPeriod, tag_time_extractor
from ..schema.file_index_options import configured_indexes
from ..schema.table_schema import TableSchema
from ..table.file_store_table import FileStoreTable
from ..table.identifiers import Identifier
from ..utils.durations import parse_duration_millis
from ..utils.workers import map_ordered
from .findings import Finding, FindingKind, MaintenanceAction, Severity, TableHealth

if TYPE_CHECKING:
    import pyarrow as pa

# score: 100 minus a penalty per finding (README "health": how the score is computed)
PENALTY = {Severity.INFO: 0, Severity.WARNING: 10, Severity.CRITICAL: 30}
# Java's default of compaction.min.file-num (append compaction's trigger per bucket)
DEFAULT_MIN_FILE_NUM = 5
# Amoro's health score: a position-delete ratio above 2 x self-optimizing.major.trigger.duplicate-ratio
# (0.1) costs its full weight; Paimon has no option for it
DELETE_RATIO_THRESHOLD = 0.2
DV_INDEX_TYPE = "DELETION_VECTORS"
REMOTE_THREADS = 8  # tables assessed at once on an object store


def score_of(findings: Iterable[Finding]) -> int:
    """100 minus 10 per warning and 30 per critical finding, never below 0; unreadable
    metadata is 0 on its own."""
    fs = list(findings)
    if any(f.kind is FindingKind.UNREADABLE_METADATA for f in fs):
        return 0
    return max(0, 100 - sum(PENALTY[f.severity] for f in fs))


def fix_command(action: MaintenanceAction, identifier: str, where: str | Sequence[str]) -> str:
    """The command line an operator runs by hand (``paimon-cli compact db.t --full -w ...``);
    ``where`` is a warehouse path or the arguments selecting the catalog
    (:meth:`~..catalog.options.CatalogOptions.cli_args`)."""
    words = action.value.split()
    verb = [w for w in words if not w.startswith("--")]
    flags = [w for w in words if w.startswith("--")]
    return shlex.join(["paimon-cli", *verb, identifier, *flags, *_where(where)])


def _where(where: str | Sequence[str]) -> list[str]:
    return ["--warehouse", where] if isinstance(where, str) else list(where)


def unreadable(database: str, table: str, exc: BaseException) -> TableHealth:
    """A table whose metadata could not be read: score 0, the error kept, never hidden."""
    text = " ".join(str(exc).split()) or type(exc).__name__
    if not isinstance(exc, PaimonError):
        text = f"{type(exc).__name__}: {text}"
    code = 4 if isinstance(exc, (InvalidInput, NotFound)) else getattr(exc, "exit_code", 1)
    finding = Finding(FindingKind.UNREADABLE_METADATA, Severity.CRITICAL, 1, 0, "tables",
                      f"metadata cannot be read: {text}", "")
    return TableHealth(database, table, 0, (finding,), error=text, error_code=code)


# ---------------------------------------------------------------------------------------
# one read of the latest snapshot
# ---------------------------------------------------------------------------------------


# what the rules read of each live file (the columnar path: no entry objects, no stats)
_LIVE_COLUMNS = ("_KIND", "_PARTITION", "_BUCKET", "_LEVEL", "_FILE_NAME", "_EXTRA_FILES", "_EMBEDDED_FILE_INDEX",
                 "_EXTERNAL_PATH", "_FILE_SIZE", "_ROW_COUNT", "_DELETE_ROW_COUNT", "_SCHEMA_ID")


def live_files(table: FileStoreTable, manifests: list[ManifestFileMeta],
               columns: Sequence[str] | None = _LIVE_COLUMNS) -> pa.Table:
    """The live files of these data manifests (base then delta), merged, as Arrow."""
    from ..manifest.columnar import iter_manifest_tables, merge_live

    mdir = paths.manifest_dir(table.path)
    return merge_live(list(iter_manifest_tables(table.file_io, mdir, manifests, columns)))


@dataclass
class _Context:
    table: FileStoreTable
    now_millis: int
    where: tuple[str, ...]  # the catalog's arguments in fix commands
    snapshot: Snapshot | None
    manifests: list[ManifestFileMeta]
    live: pa.Table  # live data files of the latest snapshot (:data:`_LIVE_COLUMNS`)
    index_entries: list[IndexManifestEntry]

    @classmethod
    def read(cls, table: FileStoreTable, now_millis: int, where: Sequence[str]) -> _Context:
        # a snapshot the hints or neighbours need is missing: expiration and orphan removal
        # refuse until it is restored or repaired, so the table is unreadable metadata (score 0)
        table.snapshot_manager.check_complete()
        snap = table.snapshot_manager.latest_snapshot()
        scan = FileStoreScan(table)
        manifests = scan.data_manifests(snap) if snap is not None else []
        live = live_files(table, manifests)
        dv = table.options.deletion_vectors_enabled and snap is not None
        index_entries = scan.index_entries(snap) if dv else []
        return cls(table, now_millis, tuple(where), snap, manifests, live, index_entries)

    @functools.cached_property
    def entries(self) -> list[ManifestEntry]:
        """The live files as objects, every field (only rules that hand them on need them)."""
        from ..manifest.columnar import entries_from_table

        return entries_from_table(live_files(self.table, self.manifests, None))

    @property
    def pk(self) -> bool:
        return bool(self.table.schema.primary_keys)

    def finding(self, kind: FindingKind, severity: Severity, value: float, threshold: float, unit: str,
                message: str) -> Finding:
        action = kind.action
        fix = fix_command(action, self.table.identifier.full_name, self.where) if action else ""
        return Finding(kind, severity, value, threshold, unit, message, fix)


Rule = Callable[[_Context], list[Finding]]


# ---------------------------------------------------------------------------------------
# data files
# ---------------------------------------------------------------------------------------


def small_files(ctx: _Context) -> list[Finding]:
    """Files below ``target-file-size`` where a bucket holds ``compaction.min.file-num`` of them
    (Paimon's own trigger); a key table's level-0 files count as sorted runs instead."""
    import pyarrow.compute as pc

    opts = ctx.table.options
    target = opts.target_file_size(ctx.pk)
    min_num = opts.get_int("compaction.min.file-num") or DEFAULT_MIN_FILE_NUM
    live = ctx.live
    small = pc.less(live.column("_FILE_SIZE"), target)
    if ctx.pk:
        small = pc.and_(small, pc.not_equal(live.column("_LEVEL"), 0))
    per_bucket = live.filter(small).group_by(["_PARTITION", "_BUCKET"], use_threads=False).aggregate(
        [("_FILE_NAME", "count")])
    crowded = [n for n in per_bucket.column("_FILE_NAME_count").to_pylist() if n >= min_num]
    if not crowded:
        return []
    n = sum(crowded)
    ratio = n / live.num_rows
    return [ctx.finding(
        FindingKind.SMALL_FILES, Severity.WARNING, n, min_num, "files",
        f"{n} of {live.num_rows} live files ({ratio:.0%}) are below target-file-size ({target} bytes) in "
        f"{len(crowded)} bucket(s) holding at least compaction.min.file-num={min_num} of them (up to {max(crowded)})",
    )]


def _key_buckets(ctx: _Context) -> list[dict[str, int]]:
    """Per bucket of a key table's LSM trees (the postpone bucket holds no tree): ``runs``
    (sorted runs: each level-0 file, then each level), ``levels`` (levels above 0),
    ``total`` bytes and ``top`` (bytes of the highest level, the oldest run)."""
    from ..utils.native import pl

    if not ctx.pk:
        return []
    df = pl.from_arrow(ctx.live.select(["_PARTITION", "_BUCKET", "_LEVEL", "_FILE_SIZE"]))
    assert isinstance(df, pl.DataFrame)
    level, size = pl.col("_LEVEL"), pl.col("_FILE_SIZE")
    per_bucket = df.filter(pl.col("_BUCKET") != paths.POSTPONE_BUCKET).group_by(["_PARTITION", "_BUCKET"]).agg(
        l0=(level == 0).sum(), levels=level.filter(level > 0).n_unique(), total=size.sum(),
        top=size.filter(level == level.max()).sum())
    rows = per_bucket.select(runs=pl.col("l0") + pl.col("levels"), levels="levels", total="total", top="top")
    return rows.to_dicts()


def sorted_runs(ctx: _Context) -> list[Finding]:
    """Java's universal compaction picks above ``num-sorted-run.compaction-trigger`` runs; a
    writer stalls above ``num-sorted-run.stop-trigger``, so reaching it is critical."""
    counts = [b["runs"] for b in _key_buckets(ctx)]
    worst = max(counts, default=0)
    opts = ctx.table.options
    trigger, stop = opts.num_sorted_run_compaction_trigger, opts.num_sorted_run_stop_trigger
    if worst <= trigger:
        return []
    over = sum(1 for c in counts if c > trigger)
    critical = worst >= stop
    what = (f"writers stall at num-sorted-run.stop-trigger={stop}" if critical
            else f"above num-sorted-run.compaction-trigger={trigger}")
    return [ctx.finding(
        FindingKind.SORTED_RUNS, Severity.CRITICAL if critical else Severity.WARNING, worst,
        stop if critical else trigger, "sorted runs",
        f"{over} bucket(s) hold more sorted runs than compaction triggers at (up to {worst}; {what})",
    )]


def size_amplification(ctx: _Context) -> list[Finding]:
    """Java's size amplification: all runs but the oldest, in percent of the oldest, where the
    oldest is a compacted level (above level 0) and, as Java's universal compaction checks it,
    the bucket has at least ``num-sorted-run.compaction-trigger`` runs."""
    opts = ctx.table.options
    limit, trigger = opts.compaction_max_size_amplification_percent, opts.num_sorted_run_compaction_trigger
    worst = 0.0
    over = 0
    for b in _key_buckets(ctx):
        if b["runs"] < max(2, trigger) or not b["levels"] or b["top"] <= 0:
            continue
        amp = (b["total"] - b["top"]) * 100 / b["top"]
        worst = max(worst, amp)
        over += amp > limit
    if not over:
        return []
    return [ctx.finding(
        FindingKind.SIZE_AMPLIFICATION, Severity.WARNING, round(worst, 1), limit, "percent",
        f"{over} bucket(s) exceed compaction.max-size-amplification-percent={limit} (up to {worst:.0f}%)",
    )]


def delete_ratio(ctx: _Context) -> list[Finding]:
    """Rows a full compaction drops: retract rows in key-table files (``deleteRowCount``) and rows
    deletion vectors mark (their recorded cardinality; 0.9 index manifests record none)."""
    import pyarrow.compute as pc

    rows = pc.sum(ctx.live.column("_ROW_COUNT")).as_py() or 0
    if rows == 0:
        return []
    deleted = pc.sum(ctx.live.column("_DELETE_ROW_COUNT")).as_py() or 0
    for ie in ctx.index_entries:
        if ie.index_file.index_type == DV_INDEX_TYPE:
            deleted += sum(r.cardinality or 0 for r in ie.index_file.dv_ranges or ())
    ratio = deleted / rows
    if ratio <= DELETE_RATIO_THRESHOLD:
        return []
    return [ctx.finding(
        FindingKind.DELETE_RATIO, Severity.WARNING, round(ratio, 4), DELETE_RATIO_THRESHOLD, "ratio",
        f"{deleted} of {rows} rows in live files ({ratio:.0%}) are deleted or retracted",
    )]


def _schema(ctx: _Context, cache: dict[int, TableSchema], schema_id: int) -> TableSchema:
    s = cache.get(schema_id)
    if s is None:
        t = ctx.table
        s = cache[schema_id] = t.schema if schema_id == t.schema.id else t.schema_manager.schema(schema_id)
    return s


def missing_file_index(ctx: _Context) -> list[Finding]:
    """Live files lacking a configured file index on a column they have: none at all, or an
    embedded index without that (column, kind) entry (an index configured after the data was
    written). Metadata only: a file whose index sits in a separate ``.index`` file is taken as
    indexed (``inspect table`` reads those and also checks each index's options)."""
    specs = [s for s in configured_indexes(ctx.table.schema.options) if "[" not in s.column]
    current = {f.name: f.id for f in ctx.table.schema.fields}
    wanted = {(current[s.column], s.index_type) for s in specs if s.column in current}
    if not wanted:
        return []
    cache: dict[int, TableSchema] = {}
    live = ctx.live
    files = zip(live.column("_SCHEMA_ID").to_pylist(), live.column("_EXTRA_FILES").to_pylist(),
                live.column("_EMBEDDED_FILE_INDEX").to_pylist(), strict=True)
    missing = sum(1 for sid, extra, index in files
                  if _lacks_index(tuple(extra or ()), index, wanted, _schema(ctx, cache, sid)))
    if not missing:
        return []
    cols = ", ".join(sorted({f"{s.index_type}({s.column})" for s in specs}))
    return [ctx.finding(
        FindingKind.MISSING_FILE_INDEX, Severity.WARNING, missing, 0, "files",
        f"{missing} of {live.num_rows} live files lack a file index the table configures ({cols})",
    )]


def _lacks_index(extra_files: tuple[str, ...], embedded_index: bytes | None, wanted: set[tuple[int, str]],
                 schema: TableSchema) -> bool:
    """Whether a wanted (field id, index kind) on a column the file has is not in its index
    (entries are keyed by the column's name in the file's own schema)."""
    names = {f.id: f.name for f in schema.fields}
    need = {(names[fid], kind) for fid, kind in wanted if fid in names}
    if not need or index_file_names(extra_files):
        return False
    if embedded_index is None:
        return True
    try:
        have = {(x.column, x.index_type) for x in FileIndexContainer(embedded_index).entries}
    except PaimonError:  # an unreadable index is as good as none: the rewrite replaces it
        return True
    return bool(need - have)


# ---------------------------------------------------------------------------------------
# metadata files
# ---------------------------------------------------------------------------------------


def manifests(ctx: _Context) -> list[Finding]:
    """Small data manifests at ``manifest.merge-min-count``: Java's commit would have merged
    them (below ``manifest.target-file-size``); a writer that does not merge leaves them."""
    opts = ctx.table.options
    target, min_count = opts.manifest_target_file_size, opts.manifest_merge_min_count
    small = [m for m in ctx.manifests if m.file_size < target]
    if len(small) < min_count:
        return []
    total = sum(m.file_size for m in ctx.manifests)
    return [ctx.finding(
        FindingKind.MANIFESTS, Severity.WARNING, len(small), min_count, "manifests",
        f"{len(small)} of {len(ctx.manifests)} data manifests ({total} bytes in all) are below "
        f"manifest.target-file-size ({target} bytes); manifest.merge-min-count={min_count}",
    )]


def past_retention(manager: SnapshotManager, anchor: int | None, retain_min: int, retain_max: int,
                   cutoff_millis: int, keep_from: int | None = None) -> tuple[int, Snapshot | None]:
    """(how many snapshots or changelogs expiration would remove now, the earliest): Java's
    range, ids below both ``anchor - retain_min + 1`` (``anchor``: the latest snapshot id) and
    ``keep_from``, older than the cut-off unless beyond ``retain_max``. Reads only the few
    files of a binary search by time."""
    earliest, latest = manager.earliest_snapshot_id(), manager.latest_snapshot_id()
    if earliest is None or latest is None or anchor is None:
        return 0, None
    end = max(anchor - retain_min + 1, earliest)
    if keep_from is not None:
        end = min(end, keep_from)
    by_count = max(anchor - retain_max + 1, earliest)  # beyond retain-max regardless of time
    old = manager.earlier_or_equal_time_millis(cutoff_millis - 1)
    by_time = old.id + 1 if old is not None else earliest
    end = min(end, max(by_count, by_time))
    return max(0, end - earliest), manager.try_snapshot(earliest)


def _age(now_millis: int, snap: Snapshot | None) -> str:
    if snap is None:
        return "?"
    return str(datetime.timedelta(seconds=max(0, (now_millis - snap.time_millis) // 1000)))


def _holding_consumers(t: FileStoreTable, rp: ResolvedPolicy, changelogs: bool = False
                       ) -> tuple[dict[str, int], dict[str, int | None]]:
    """(consumer id -> next snapshot of the consumers that hold snapshots, or with ``changelogs``
    long-lived changelogs; id -> last modified): as expiration sees them, without those
    ``consumer.expiration-time`` expires, and holding no snapshot with ``consumer.changelog-only``."""
    cm = t.consumer_manager
    consumers = cm.consumers()
    if not consumers or (rp.consumer_changelog_only and not changelogs):
        return {}, {}
    mtimes = cm.consumer_mtimes()
    before = rp.consumer_expire_before_millis
    if before is not None:
        consumers = {c: n for c, n in consumers.items() if (m := mtimes.get(c)) is None or m >= before}
    return consumers, mtimes


def snapshots(ctx: _Context) -> list[Finding]:
    """Snapshots ``expire`` would remove now (``snapshot.num-retained.*``, ``snapshot.time-retained``,
    consumers): left when no writer expires inline (``write-only``) or inline expiry fails."""
    t = ctx.table
    rp = resolve_policy(t, ExpirePolicy(now_millis=ctx.now_millis))
    consumers, _ = _holding_consumers(t, rp)
    sm = t.snapshot_manager
    n, first = past_retention(sm, sm.latest_snapshot_id(), rp.retain_min, rp.retain_max, rp.cutoff_millis,
                              min(consumers.values(), default=None))
    if n == 0:
        return []
    return [ctx.finding(
        FindingKind.SNAPSHOTS, Severity.WARNING, n, 0, "snapshots",
        f"{n} snapshot(s) are past retention (earliest {first.id if first else '?'}, {_age(ctx.now_millis, first)} "
        f"old; snapshot.num-retained.min={rp.retain_min}, {rp.time_retained})",
    )]


def consumers(ctx: _Context) -> list[Finding]:
    """Consumers whose next snapshot is below what retention alone keeps: each pins the
    snapshots from there on (a streaming job that is gone pins them forever). Said with how
    long since it moved and how many it holds; the fix names the consumer (never automatic:
    it is a reader's progress)."""
    t = ctx.table
    rp = resolve_policy(t, ExpirePolicy(now_millis=ctx.now_millis))
    holding, mtimes = _holding_consumers(t, rp)
    sm = t.snapshot_manager
    earliest = sm.earliest_snapshot_id()
    if not holding or earliest is None:
        return []
    free, _ = past_retention(sm, sm.latest_snapshot_id(), rp.retain_min, rp.retain_max, rp.cutoff_millis)
    end_free = earliest + free  # retention alone would expire every snapshot below this
    held = {c: end_free - max(n, earliest) for c, n in holding.items() if n < end_free}
    if not held:
        return []
    worst = sorted(held, key=lambda c: (-held[c], c))
    total = end_free - max(min(holding[c] for c in held), earliest)

    def age(c: str) -> str:
        m = mtimes.get(c)
        return "?" if m is None else str(datetime.timedelta(seconds=max(0, (ctx.now_millis - m) // 1000)))

    listed = "; ".join(f"{c} (next snapshot {holding[c]}, last moved {age(c)} ago, holds {held[c]})"
                       for c in worst[:5]) + (" ..." if len(worst) > 5 else "")
    name = t.identifier.full_name
    if len(worst) == 1:
        fix = ["paimon-cli", "consumer", "reset", name, worst[0]]
    else:
        fix = ["paimon-cli", "consumer", "clear", name, "--including", "|".join(re.escape(c) for c in worst)]
    return [Finding(
        FindingKind.CONSUMERS, Severity.WARNING, total, 0, "snapshots",
        f"{len(worst)} consumer(s) keep {total} snapshot(s) past retention from expiring: {listed}; a consumer "
        "whose job is gone can be deleted (consumer reset ID) or moved (--snapshot N)",
        shlex.join([*fix, *ctx.where]),
    )]


def changelogs(ctx: _Context) -> list[Finding]:
    """Long-lived changelogs (``changelog/``) past ``changelog.num-retained.*`` / ``changelog.time-retained``."""
    t = ctx.table
    cm = ChangelogManager(t.file_io, t.path, t.branch)
    last = cm.latest_snapshot_id()
    if last is None:
        return []
    rp = resolve_policy(t, ExpirePolicy(now_millis=ctx.now_millis))
    keep = min([last, *_holding_consumers(t, rp, changelogs=True)[0].values()])  # Java keeps the latest changelog
    n, first = past_retention(cm, t.snapshot_manager.latest_snapshot_id(), rp.changelog_retain_min,
                              rp.changelog_retain_max, rp.changelog_cutoff_millis, keep)
    if n == 0:
        return []
    return [ctx.finding(
        FindingKind.CHANGELOGS, Severity.WARNING, n, 0, "changelogs",
        f"{n} long-lived changelog(s) are past retention (earliest {_age(ctx.now_millis, first)} old; "
        f"changelog.num-retained.min={rp.changelog_retain_min})",
    )]


def _local_now(now_millis: int) -> datetime.datetime:
    """Java's partition and tag expiry compare local wall-clock times."""
    return datetime.datetime.fromtimestamp(now_millis / 1000)


def expired_partitions(ctx: _Context) -> list[Finding]:
    """Partitions older than ``partition.expiration-time`` (the table's own strategy and formats)."""
    t = ctx.table
    text = t.options.get("partition.expiration-time")
    if not text or not t.schema.partition_keys:
        return []
    seconds = parse_duration_millis(text, "partition.expiration-time") / 1000
    # every expired partition, not only the ``partition.expiration-max-num`` one run drops
    plan = plan_partition_expire(t, seconds, now=_local_now(ctx.now_millis), entries=ctx.entries,
                                 max_expires=INT_MAX)
    n = len(plan.partitions)
    if n == 0:
        return []
    return [ctx.finding(
        FindingKind.EXPIRED_PARTITIONS, Severity.WARNING, n, 0, "partitions",
        f"{n} partition(s) are older than partition.expiration-time={text} (first {plan.partitions[0].display})",
    )]


def expired_tags(ctx: _Context) -> list[Finding]:
    """Tags past their time retained (``tag expire`` deletes them) and automatic tags beyond
    ``tag.num-retained-max`` (Java trims them at the next auto-tagging commit)."""
    t = ctx.table
    out: list[Finding] = []
    names = expired_tag_names(t, now=_local_now(ctx.now_millis))
    if names:
        out.append(ctx.finding(
            FindingKind.EXPIRED_TAGS, Severity.WARNING, len(names), 0, "tags",
            f"{len(names)} tag(s) are past their time retained: {', '.join(names[:5])}"
            + (" ..." if len(names) > 5 else ""),
        ))
    opts = t.options
    if tag_time_extractor(opts) is None or not opts.contains("tag.num-retained-max"):
        return out
    keep = opts.get_int("tag.num-retained-max") or 0
    period = TagPeriod.of(opts)
    autos = [x.name for x in t.tag_manager.tags() if period.to_time(x.name) is not None]
    excess = autos[:max(0, len(autos) - keep)]
    if excess:
        fix = shlex.join(["paimon-cli", "tag", "delete", t.identifier.full_name, ",".join(excess), *ctx.where])
        out.append(Finding(
            FindingKind.EXPIRED_TAGS, Severity.WARNING, len(autos), keep, "tags",
            f"{len(autos)} automatic tags exceed tag.num-retained-max={keep}", fix,
        ))
    return out


def orphan_files(ctx: _Context) -> list[Finding]:
    """What ``remove-orphan-files`` (default: older than 1 day) would delete; lists storage."""
    try:
        plan = plan_remove_orphans(ctx.table, now_millis=ctx.now_millis)
    except UnsafeRefused as exc:
        return [ctx.finding(FindingKind.ORPHAN_FILES, Severity.INFO, 0, 0, "bytes",
                            f"orphan files not assessed: {exc}")]
    if not plan.files:
        return []
    return [ctx.finding(
        FindingKind.ORPHAN_FILES, Severity.WARNING, plan.total_bytes, 0, "bytes",
        f"{len(plan.files)} orphan file(s), {plan.total_bytes} bytes, older than 1 day",
    )]


RULES: tuple[Rule, ...] = (
    small_files, sorted_runs, size_amplification, delete_ratio, manifests, snapshots, consumers, changelogs,
    expired_partitions, expired_tags, missing_file_index,
)


# ---------------------------------------------------------------------------------------
# tables and warehouses
# ---------------------------------------------------------------------------------------


def warehouse_of(table: FileStoreTable) -> str:
    """``<warehouse>/<db>.db/<table>``: the warehouse a fix command names."""
    return parent(parent(table.path))


def assess_table(table: FileStoreTable, *, now_millis: int | None = None, scan_orphans: bool = False,
                 warehouse: str | None = None, catalog_args: Sequence[str] | None = None) -> TableHealth:
    """The findings and score of one table (metadata only unless ``scan_orphans``); a table
    whose metadata cannot be read is returned with score 0 and its error, never raised.
    Fix commands name ``catalog_args``, else ``--warehouse`` (``warehouse``, else the table's)."""
    now = int(time.time() * 1000) if now_millis is None else now_millis
    ident = table.identifier
    where = list(catalog_args) if catalog_args is not None else _where(warehouse or warehouse_of(table))
    try:
        ctx = _Context.read(table, now, where)
        found = [f for rule in RULES for f in rule(ctx)]
        if scan_orphans:
            found += orphan_files(ctx)
    except Exception as exc:  # noqa: BLE001 - reported per table: one bad table never stops a run
        return unreadable(ident.database, ident.table, exc)
    return TableHealth(ident.database, ident.table, score_of(found), tuple(found))


def select_tables(catalog: Catalog, selectors: Sequence[str] = ()) -> list[Identifier]:
    """``DB`` (its tables) or ``DB.TABLE``; none: every table of every database. An unknown
    database or named table is NotFound (exit 3) before anything is assessed."""
    if not selectors:
        return [Identifier(db, t) for db in catalog.list_databases() for t in catalog.list_tables(db)]
    out: dict[Identifier, None] = {}
    for sel in selectors:
        if "." in sel:
            ident = Identifier.parse(sel)
            if not catalog.table_exists(ident):
                raise NotFound(f"table {ident.full_name} does not exist")
            out.setdefault(ident)
        else:
            if not catalog.database_exists(sel):
                raise NotFound(f"database {sel} does not exist")
            for t in catalog.list_tables(sel):
                out.setdefault(Identifier(sel, t))
    return list(out)


def assess_warehouse(catalog: Catalog, selectors: Sequence[str] = (), *, now_millis: int | None = None,
                     scan_orphans: bool = False) -> list[TableHealth]:
    """Every selected table, in selection order; a table that fails to open is a TableHealth
    with its error (score 0), the others are still assessed. On an object store tables are
    assessed on a few threads (each waits on small reads); locally one after another."""
    now = int(time.time() * 1000) if now_millis is None else now_millis

    def one(ident: Identifier) -> TableHealth:
        try:
            table = catalog.get_table(ident)
        except Exception as exc:  # noqa: BLE001 - reported per table
            return unreadable(ident.database, ident.table, exc)
        return assess_table(table, now_millis=now, scan_orphans=scan_orphans, catalog_args=where)

    where = catalog.options.cli_args()

    idents = select_tables(catalog, selectors)
    if catalog.file_io.is_local or len(idents) <= 1:
        return [one(i) for i in idents]
    return map_ordered(one, idents, min(REMOTE_THREADS, len(idents)), "paimon-health")
