"""``Table``: one table of a warehouse and the verbs the CLI runs on it, one method per command.

A verb checks its arguments first (no I/O), then opens the table at its latest schema, runs
core's operation and returns a typed result (``reports``). Errors are core's exceptions
(``paimon_cli.core.errors``), each carrying the exit code the CLI maps it to. Defaults are
the CLI's, so ``t.compact()`` does what ``paimon-cli compact db.t`` does.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import InvalidInput, NotYetSupported
from ..system.registry import BRIEF_COLUMNS, CATALOG_TABLES, ROW_STREAMS, STREAMED_TABLES, SYSTEM_TABLES
from ..table.actions import Action
from ..table.identifiers import Identifier
from ..utils.rows import Rows, RowStream
from .arguments import (
    Duration,
    KeyValues,
    Names,
    PointInTime,
    Timestamp,
    branch_name,
    column_list,
    duration_millis,
    key_values,
    local_datetime,
    memory_bytes,
    point_in_time_millis,
    point_in_time_text,
    tag_name,
    time_travel,
    timestamp_millis,
)

if TYPE_CHECKING:
    import pyarrow as pa

    from ..compact.local import Progress
    from ..compact.overwrite_plan import OverwritePlan
    from ..operation.branch_ops import BranchPlan, MergePlan
    from ..operation.consumer_ops import ConsumerPlan
    from ..operation.partition_drop import PartitionDropPlan
    from ..operation.partition_expire import PartitionExpirePlan
    from ..operation.partition_mark_done import MarkDonePlan
    from ..operation.rollback import RollbackTarget
    from ..operation.rollback_as_latest import AsLatestPlan
    from ..operation.tag_deletion import TagDeletionPlan
    from ..operation.tag_ops import AutoTagPlan, TagReplacePlan
    from ..operation.unexisting_manifests import UnexistingManifestsPlan
    from ..refs.tags import Tag
    from ..table.file_store_table import FileStoreTable
    from ..utils.progress import StepProgress
    from .reports import (
        AlterPlan,
        CompactManifestReport,
        CompactReport,
        ExpireReport,
        MaterializeDeletionVectorsReport,
        OrphanFilesReport,
        PurgeFilesReport,
        Reader,
        RemoveUnexistingFilesReport,
        RepairReport,
        RescaleReport,
        RewriteFileIndexReport,
        RollbackReport,
        WriteReport,
    )
    from .warehouse import Warehouse

STREAMED_KINDS: frozenset[str] = frozenset(STREAMED_TABLES)  # inspect kinds Table.inspect_reader streams
ROW_STREAM_KINDS: frozenset[str] = frozenset(ROW_STREAMS)  # inspect kinds Table.inspect_stream streams


def _strings(value: str | Sequence[str] | None) -> list[str]:
    """One string or several (a single value must not be iterated character by character)."""
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)


class Table:
    """One table of a warehouse, or one branch of it: ``Warehouse(...).table("db.t")``.

    A handle: the name is checked when it is made; every verb opens the table anew at its
    latest schema, so a handle stays valid across commits and alters by anyone.
    """

    def __init__(self, warehouse: Warehouse, identifier: str, branch: str | None = None) -> None:
        self.warehouse = warehouse
        self.identifier = Identifier.parse(identifier)
        self.branch = branch_name(branch)  # None: the main branch

    @property
    def name(self) -> str:
        """``db.table``."""
        return self.identifier.full_name

    def __repr__(self) -> str:
        branch = f", branch={self.branch!r}" if self.branch else ""
        return f"Table({self.name!r}{branch})"

    def open(self) -> FileStoreTable:
        """Core's table at its latest schema, for what this API does not cover."""
        return self.warehouse.catalog.get_table(self.identifier, self.branch)

    def _open_for(self, action: Action) -> FileStoreTable:
        """The table, once the feature gate allows ``action`` on it (refusals name the feature)."""
        from ..table.features import check_features  # the gate's rules: not loaded by inspect

        table = self.open()
        check_features(table, action)
        return table

    # -- schema ---------------------------------------------------------------------------------

    def alter(
        self,
        *,
        set_options: KeyValues | None = None,
        unset: str | Sequence[str] | None = None,
        add_columns: str | Sequence[str] | None = None,
        rename_columns: Mapping[str, str] | str | Sequence[str] | None = None,
        drop_columns: str | Sequence[str] | None = None,
        comment: str | None = None,
    ) -> int:
        """Commit every change together as one new schema; returns its id.

        ``add_columns``: ``"NAME TYPE"`` texts (``"note STRING, qty INT"``);
        ``rename_columns``: ``{old: new}`` or ``"OLD:NEW"`` texts.
        """
        changes = self._schema_changes(set_options, unset, add_columns, rename_columns, drop_columns, comment)
        return self.warehouse.catalog.alter_table(self.identifier, changes, self.branch).id

    def plan_alter(
        self,
        *,
        set_options: KeyValues | None = None,
        unset: str | Sequence[str] | None = None,
        add_columns: str | Sequence[str] | None = None,
        rename_columns: Mapping[str, str] | str | Sequence[str] | None = None,
        drop_columns: str | Sequence[str] | None = None,
        comment: str | None = None,
    ) -> AlterPlan:
        """What :meth:`alter` with the same arguments would commit (every check runs); writes nothing."""
        from .reports import AlterPlan
        changes = self._schema_changes(set_options, unset, add_columns, rename_columns, drop_columns, comment)
        old, new = self.open().schema_manager.plan_changes(changes)
        return AlterPlan(old, new, self.name)

    def _schema_changes(
        self,
        set_options: KeyValues | None,
        unset: str | Sequence[str] | None,
        add_columns: str | Sequence[str] | None,
        rename_columns: Mapping[str, str] | str | Sequence[str] | None,
        drop_columns: str | Sequence[str] | None,
        comment: str | None,
    ) -> list[Any]:
        from ..data.types import parse_columns
        from ..schema import schema_change as schema_changes
        changes: list[Any] = [schema_changes.SetOption(k, v) for k, v in key_values(set_options, "--set").items()]
        changes += [schema_changes.RemoveOption(k) for k in _strings(unset)]
        for text in _strings(add_columns):
            changes += [schema_changes.AddColumn(n, t, d) for n, t, d in parse_columns(text)]
        if isinstance(rename_columns, Mapping):
            changes += [schema_changes.RenameColumn(old, new) for old, new in rename_columns.items()]
        for pair in [] if isinstance(rename_columns, Mapping) else _strings(rename_columns):
            old, sep, new = pair.partition(":")
            if not sep or not old or not new:
                raise InvalidInput(f"--rename-column {pair!r}: expected OLD:NEW")
            changes.append(schema_changes.RenameColumn(old, new))
        changes += [schema_changes.DropColumn(n) for n in _strings(drop_columns)]
        if comment is not None:
            changes.append(schema_changes.UpdateComment(comment))
        if not changes:
            raise InvalidInput(f"alter {self.name}: nothing to change")
        return changes

    # -- data -----------------------------------------------------------------------------------

    def write(
        self,
        data: Any,
        *,
        format: str | None = None,
        row_kind_column: str | None = None,
        delete: bool = False,
        overwrite: bool = False,
        partition: KeyValues | None = None,
        options: KeyValues | None = None,
        write_only: bool = False,
        expire: bool = True,
        columns: Names | None = None,
        progress: StepProgress | None = None,
    ) -> WriteReport:
        """Write ``data`` in one commit; nothing is committed on any error.

        ``data``: input paths (files, globs, directories, ``s3://...``, ``-`` for stdin), or
        Arrow data (a Table, RecordBatch, RecordBatchReader or an iterable of batches).
        Columns are matched by name and converted with checks (the first bad row is named).
        ``overwrite`` replaces the table, or with ``partition`` ({col: value}) that static
        partition. Like a Java writer, the write then compacts what became eligible and runs
        snapshot / partition / tag expiry: ``write_only`` skips both, ``expire=False`` the expiry.
        ``columns`` (data-evolution tables): update those columns of the existing rows the
        input's ``_ROW_ID`` column names instead of adding rows (one APPEND commit).
        ``progress(done, total, detail)``: input files read, the rows so far as the detail.
        """
        from ..compact.write_job import write_table_result
        from .reports import WriteReport
        if columns is not None:
            return self._update_columns(data, column_list(columns), format=format,
                                        others=bool(row_kind_column or delete or overwrite or partition or options
                                                    or write_only))
        spec = key_values(partition, "--partition")
        if spec and not overwrite:
            raise InvalidInput("--partition is only valid with --overwrite")
        dyn_options = key_values(options, "--option")
        if write_only:
            dyn_options["write-only"] = "true"
        table = self._open_for(Action.WRITE)
        inputs, format, stdin = self._write_inputs(data, format)
        with contextlib.closing(stdin) if stdin is not None else contextlib.nullcontext():
            result = write_table_result(
                table, inputs, fmt=format, row_kind_column=row_kind_column, delete=delete, overwrite=overwrite,
                overwrite_partition=spec or None, options=dyn_options or None,
                storage_options=self.warehouse.storage_options, stdin=stdin, expire=expire, progress=progress,
            )
        return WriteReport(result)

    def plan_overwrite(
        self,
        data: Any,
        *,
        format: str | None = None,
        row_kind_column: str | None = None,
        partition: KeyValues | None = None,
        options: KeyValues | None = None,
    ) -> OverwritePlan:
        """What :meth:`write` with ``overwrite=True`` would do (``write --overwrite --dry-run``):
        the input is read and checked as a real write checks it, and the live files the
        overwrite would delete are listed with the input rows per partition; nothing is written."""
        from ..compact.write_job import plan_overwrite_result
        spec = key_values(partition, "--partition")
        table = self._open_for(Action.WRITE)
        inputs, format, stdin = self._write_inputs(data, format)
        with contextlib.closing(stdin) if stdin is not None else contextlib.nullcontext():
            return plan_overwrite_result(table, inputs, fmt=format, row_kind_column=row_kind_column,
                                         overwrite_partition=spec or None, options=key_values(options, "--option")
                                         or None, storage_options=self.warehouse.storage_options, stdin=stdin)

    @staticmethod
    def _write_inputs(data: Any, format: str | None) -> tuple[list[str], str | None, Any]:
        """(input paths, format, stdin stream): Arrow data goes in as an IPC stream on "-"."""
        from .arrow_input import arrow_stream, is_arrow_data
        if is_arrow_data(data):
            if format is not None and format.strip().lower() not in ("arrow", "ipc"):
                raise InvalidInput(f"write: format {format!r} given for Arrow data")
            return ["-"], "arrow", arrow_stream(data)
        inputs = [str(p) for p in data] if isinstance(data, (list, tuple)) else [str(data)]  # a path, or several
        return inputs, format, None

    def _update_columns(self, data: Any, columns: list[str], *, format: str | None, others: bool) -> WriteReport:
        from ..compact.write_job import WriteResult
        from ..operation.data_evolution_update import update_table
        from ..operation.write import WriteSummary
        from .reports import WriteReport
        if others:
            raise InvalidInput("write --columns updates rows by _ROW_ID; it takes none of --row-kind-column, "
                               "--delete, --overwrite, --partition, --option, --write-only")
        started = time.monotonic()
        inputs, format, stdin = self._write_inputs(data, format)
        with contextlib.closing(stdin) if stdin is not None else contextlib.nullcontext():
            res = update_table(self._open_for(Action.WRITE), inputs, columns, format,
                               self.warehouse.storage_options, stdin)
        summary = WriteSummary(rows=res.rows, files=res.files, bytes=res.bytes, record_count=res.record_count)
        snaps = [res.snapshot] if res.snapshot is not None else []
        return WriteReport(WriteResult(res.snapshot, summary, time.monotonic() - started, snaps))

    def reader(
        self,
        columns: Names | None = None,
        where: str | None = None,
        limit: int | None = None,
        *,
        snapshot: int | None = None,
        tag: str | None = None,
        timestamp: Timestamp | None = None,
        blob_as: str = "bytes",
    ) -> Reader:
        """Plan a read: merged rows (primary-key tables) of the latest snapshot, or of one
        snapshot / tag / time. ``where`` is a predicate (``"dt = '2024-05-01' AND id IN (1, 2)"``);
        it and the partition / bucket / stats / file-index pruning decide the files read.
        ``.batches()`` streams the rows one (partition, bucket) at a time, ``.to_arrow()``
        collects them, ``.explain()`` shows the pruning. ``blob_as``: BLOB columns read as their
        ``bytes``, ``size`` or ``descriptor`` (struct of the ``.blob`` file's uri, offset, length)."""
        from ..data.predicate_parser import parse_predicate
        from ..operation.read import TableRead
        from ..operation.row_tracking import readable_fields
        from .reports import Reader
        at = time_travel(snapshot, tag, timestamp)
        table = self._open_for(Action.READ)
        projection = column_list(columns) if columns is not None else None
        predicate = parse_predicate(where, readable_fields(table.schema)) if where is not None else None
        return Reader(TableRead(table, at, projection=projection, predicate=predicate, limit=limit, blob_as=blob_as),
                      where)

    def read(
        self,
        columns: Names | None = None,
        where: str | None = None,
        limit: int | None = None,
        *,
        snapshot: int | None = None,
        tag: str | None = None,
        timestamp: Timestamp | None = None,
    ) -> pa.Table:
        """The rows as one Arrow table (see :meth:`reader`, whose ``batches()`` streams them)."""
        return self.reader(columns, where, limit, snapshot=snapshot, tag=tag, timestamp=timestamp).to_arrow()

    def inspect(
        self,
        kind: str,
        *,
        snapshot: int | None = None,
        tag: str | None = None,
        timestamp: Timestamp | None = None,
        limit: int | None = None,
    ) -> Rows:
        """A system table (``snapshots``, ``files``, ``partitions``, ``tags``, ...: Paimon's
        ``t$kind``), optionally as of a snapshot / tag / time, at most ``limit`` rows.
        ``.to_arrow()`` on the result; its ``brief`` names the columns that matter most."""
        at = time_travel(snapshot, tag, timestamp)
        if kind in STREAMED_TABLES:
            data = self.inspect_reader(kind, snapshot=snapshot, tag=tag, timestamp=timestamp, limit=limit).to_arrow()
            return Rows(list(data.column_names), data.to_pylist())
        if kind in ROW_STREAMS:
            return self.inspect_stream(kind, snapshot=snapshot, tag=tag, timestamp=timestamp).collect(limit=limit)
        fn = SYSTEM_TABLES.get(kind)
        if fn is None:
            if kind in CATALOG_TABLES:
                raise InvalidInput(f"inspect {kind} is about the warehouse: call Warehouse.inspect({kind!r})")
            raise NotYetSupported(f"inspect {kind}: not yet supported")
        table = self.open()
        rows = fn(table, at)
        return Rows(rows.columns, rows.rows[:limit] if limit is not None else rows.rows, BRIEF_COLUMNS.get(kind),
                    table.path)

    def inspect_reader(
        self,
        kind: str,
        *,
        snapshot: int | None = None,
        tag: str | None = None,
        timestamp: Timestamp | None = None,
        limit: int | None = None,
    ) -> Reader:
        """A system table that is a read of the table (``audit-log``, ``binlog``, ``ro``; see
        :data:`STREAMED_KINDS`) as a :class:`Reader`: its ``.batches()`` stream and stop at
        ``limit``, so the first rows of a large table come at once."""
        from .reports import Reader
        if kind not in STREAMED_TABLES:
            raise InvalidInput(f"inspect {kind} is not a read of the table: call inspect({kind!r})")
        return Reader(STREAMED_TABLES[kind](self.open(), time_travel(snapshot, tag, timestamp), limit))

    def inspect_stream(
        self,
        kind: str,
        *,
        snapshot: int | None = None,
        tag: str | None = None,
        timestamp: Timestamp | None = None,
    ) -> RowStream:
        """A system table too large to hold at once (``files``; see :data:`ROW_STREAM_KINDS`)
        as a :class:`RowStream`: ``.chunks(columns)`` yields its rows (those of
        :meth:`inspect`, in the same order) a manifest at a time, computing only ``columns``;
        ``.collect()`` gathers them."""
        if kind not in ROW_STREAMS:
            raise InvalidInput(f"inspect {kind} does not stream: call inspect({kind!r})")
        table = self.open()
        stream = ROW_STREAMS[kind](table, time_travel(snapshot, tag, timestamp))
        stream.brief = BRIEF_COLUMNS.get(kind)
        stream.root = table.path
        return stream

    # -- compaction and rewrites ----------------------------------------------------------------

    def compact(
        self,
        *,
        full: bool = False,
        partitions: str | Sequence[str] | None = None,
        where: str | None = None,
        plan: bool = False,
        engine: str = "auto",
        spark_master: str | None = None,
        spark_conf: KeyValues | None = None,
        parallelism: int | None = None,
        max_bytes: int | str | None = None,
        max_buckets: int | None = None,
        order_strategy: str | None = None,
        order_by: Names | None = None,
        expire: bool = True,
        progress: Progress | None = None,
        partition_idle_time: Duration | None = None,
    ) -> CompactReport:
        """Merge sorted runs / small files and commit one COMPACT snapshot (nothing on error).

        ``partitions``: ``"k=v,k2=v2"`` texts (``;`` or several: OR); ``plan=True`` only plans
        (the report's rows are the per-bucket plan); ``engine``: auto | local | spark;
        ``max_bytes`` (``"10gb"`` or bytes) / ``max_buckets`` bound one run, the rest waits;
        ``order_strategy`` (order | zorder | hilbert) with ``order_by`` sorts an append table;
        ``progress(event, unit, done, total)`` is called as units start and finish;
        ``partition_idle_time`` (Java's ``partition_idle_time``): only partitions that received
        no new file for that long, fully compacted (not with ``order_strategy``).
        """
        from ..compact.job import compact_table
        from .reports import CompactReport

        idle = None if partition_idle_time is None else duration_millis(partition_idle_time, "--partition-idle-time")
        conf = key_values(spark_conf, "--spark-conf")
        budget = memory_bytes(max_bytes, "--max-bytes") if max_bytes is not None else None
        result = compact_table(
            self._open_for(Action.COMPACT), full=full, partitions=_strings(partitions) or None, where=where, max_bytes=budget,
            max_buckets=max_buckets, order_strategy=order_strategy, order_by=order_by, engine=engine.lower(),
            spark_master=spark_master, spark_conf=conf or None, parallelism=parallelism, plan_only=plan,
            expire=expire, progress=progress, partition_idle_millis=idle,
        )
        return CompactReport(result, plan)

    def rescale(
        self, *, partitions: str | Sequence[str] | None = None, bucket_num: int | None = None, dry_run: bool = False
    ) -> RescaleReport:
        """Rewrite partitions whose files have another bucket number than the table's option
        (``bucket_num`` sets it first) into the new layout, as one OVERWRITE snapshot."""
        from ..compact.rescale import rescale as rescale_table
        from .reports import RescaleReport
        result = rescale_table(self._open_for(Action.RESCALE), _strings(partitions) or None, bucket_num, dry_run=dry_run)
        return RescaleReport(result, self.name)

    def rewrite_file_index(
        self, *, partitions: str | Sequence[str] | None = None, where: str | None = None, dry_run: bool = False,
        progress: StepProgress | None = None,
    ) -> RewriteFileIndexReport:
        """Build, rebuild or drop file indexes so every live file matches the file-index.*
        options, in one COMPACT snapshot; files already right are skipped."""
        from ..compact.rewrite_file_index import rewrite_file_index as rewrite_file_indexes
        from .reports import RewriteFileIndexReport
        table = self._open_for(Action.REWRITE_FILE_INDEX)
        result = rewrite_file_indexes(table, partitions=_strings(partitions) or None, where=where, dry_run=dry_run,
                                      progress=progress)
        return RewriteFileIndexReport(result, _default_v2_bitmaps(table.schema.options))

    def materialize_deletion_vectors(
        self, *, partitions: str | Sequence[str] | None = None, where: str | None = None,
        options: KeyValues | None = None, dry_run: bool = False,
    ) -> MaterializeDeletionVectorsReport:
        """One bounded run of Java's materialize_deletion_vectors on a data-evolution table:
        rows its deletion vectors delete are dropped by rewriting their row-id ranges (the
        surviving rows get new row ids); call again until it changes nothing."""
        from ..compact.materialize_dv import materialize_deletion_vectors
        from .reports import MaterializeDeletionVectorsReport
        if _strings(partitions) and where:
            raise InvalidInput("materialize-deletion-vectors: give --partition or --where, not both")
        table = self._open_for(Action.MATERIALIZE_DELETION_VECTORS)
        dynamic = key_values(options, "--option")
        if dynamic:
            table = table.copy(dynamic)
        result = materialize_deletion_vectors(table, partitions=_strings(partitions) or None, where=where,
                                              dry_run=dry_run)
        return MaterializeDeletionVectorsReport(result)

    # -- expiry and clean-up --------------------------------------------------------------------

    def expire(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: PointInTime | None = None,
        max_deletes: int | None = None,
        changelog: bool = False,
        dry_run: bool = False,
        progress: StepProgress | None = None,
        engine: str = "auto",
        spark_master: str | None = None,
        spark_conf: KeyValues | None = None,
    ) -> ExpireReport:
        """Expire old snapshots (or with ``changelog`` long-lived changelogs) and delete the
        files only they used, as Java does; unset arguments fall back to the table's options.
        If anything deciding what is still used cannot be read, nothing is deleted
        (UnsafeRefused). A run right after a dry run deletes exactly the dry run's files.
        ``progress(done, total, detail)`` is called as files are deleted. ``engine``: auto |
        local | spark (auto: Spark when ``spark_master``/``spark_conf`` is given); on Spark,
        tasks read the expiring snapshots' manifests and delete, with the same result."""
        from ..operation.expire import apply_expire, plan_expire
        from ..operation.expire_plan import ExpirePolicy
        from ..spark.expire import expire_on_spark, use_spark
        from .reports import ExpireReport
        cutoff = None if older_than is None else point_in_time_millis(older_than, "--older-than")
        conf = key_values(spark_conf, "--spark-conf") or None
        table = self._open_for(Action.EXPIRE)
        policy = ExpirePolicy(retain_max=retain_max, retain_min=retain_min, older_than_millis=cutoff,
                              max_deletes=max_deletes, changelog=changelog)
        if use_spark(engine, spark_master, conf):
            plan, result = expire_on_spark(table, policy, dry_run=dry_run, master=spark_master, conf=conf,
                                           progress=progress)
            return ExpireReport(plan, result, table.path)
        plan = plan_expire(table, policy)
        return ExpireReport(plan, None if dry_run else apply_expire(table, plan, progress=progress), table.path)

    def expire_changelogs(
        self,
        *,
        retain_max: int | None = None,
        retain_min: int | None = None,
        older_than: PointInTime | None = None,
        max_deletes: int | None = None,
        delete_all: bool = False,
        dry_run: bool = False,
    ) -> ExpireReport:
        """Java's ``expire_changelogs``: expire long-lived changelogs (``changelog/``) by these
        arguments alone; an omitted one keeps everything it governs (so no argument expires
        nothing) and the table's options do not apply. ``delete_all`` removes every one and
        the changelog hints (all must be older than the earliest snapshot)."""
        from ..operation.changelog_expire import plan_changelog_expire, plan_expire_all_changelogs, procedure_policy
        from ..operation.expire import apply_expire
        from ..operation.expire_plan import INT_MAX, check_retention
        from .reports import ExpireReport
        if delete_all and any(a is not None for a in (retain_max, retain_min, older_than, max_deletes)):
            raise InvalidInput("--delete-all takes none of --retain-max, --retain-min, --older-than, --max-deletes")
        cutoff = None if older_than is None else point_in_time_millis(older_than, "--older-than")
        if not delete_all:
            check_retention(1 if retain_min is None else retain_min, INT_MAX if retain_max is None else retain_max,
                            0 if max_deletes is None else max_deletes, 0)
        table = self._open_for(Action.EXPIRE_CHANGELOGS)
        rp = procedure_policy(table, retain_max, retain_min, cutoff, max_deletes)
        plan = plan_expire_all_changelogs(table, rp) if delete_all else plan_changelog_expire(table, rp)
        return ExpireReport(plan, None if dry_run else apply_expire(table, plan), table.path)

    def expire_partitions(
        self,
        *,
        expiration_time: Duration | None = None,
        timestamp_formatter: str | None = None,
        timestamp_pattern: str | None = None,
        strategy: str | None = None,
        max_expires: int | None = None,
        dry_run: bool = False,
    ) -> PartitionExpirePlan:
        """Drop partitions older than ``expiration_time`` (default: the table's
        partition.expiration-time) in one OVERWRITE snapshot, as Java's partition expiration."""
        from ..operation.partition_expire import JavaDateTimePattern
        from ..operation.partition_expire import expire_partitions as expire_partitions_of
        from ..utils.durations import parse_duration_millis
        if timestamp_formatter is not None:
            JavaDateTimePattern(timestamp_formatter)  # a bad pattern: refused before any I/O
        seconds = None
        if expiration_time is not None:
            seconds = duration_millis(expiration_time, "--expiration-time", positive=True) / 1000.0
        table = self._open_for(Action.EXPIRE_PARTITIONS)
        if seconds is None:
            opt = table.options.get("partition.expiration-time")
            if not opt:
                raise InvalidInput(
                    f"no expiration time: give --expiration-time or set partition.expiration-time on {self.name}")
            seconds = parse_duration_millis(opt, "partition.expiration-time") / 1000.0
        return expire_partitions_of(
            table, seconds, dry_run=dry_run, strategy=strategy, timestamp_formatter=timestamp_formatter,
            timestamp_pattern=timestamp_pattern, max_expires=max_expires,
        )

    def drop_partitions(self, partitions: str | Sequence[str], *, dry_run: bool = False) -> PartitionDropPlan:
        """Drop partitions (``"dt=2024-05-01"``, ``"dt=a;dt=b"`` or a list; leading keys or
        any of them) in one OVERWRITE snapshot, as Java's ``drop_partition``; every
        alternative must match a live partition (NoPartitionMatched otherwise)."""
        from ..operation.partition_drop import drop_partitions as drop_partitions_of
        return drop_partitions_of(self._open_for(Action.DROP_PARTITION), _strings(partitions), dry_run=dry_run)

    def mark_partitions_done(self, partitions: str | Sequence[str], *, actions: str | None = None,
                             allow_empty: bool = False, dry_run: bool = False) -> MarkDonePlan:
        """Java's ``mark_partition_done``: run the table's ``partition.mark-done-action`` (or
        ``actions``, comma-separated) for each partition (``"dt=a;dt=b"`` or a list; leading
        keys allowed for ``success-file`` and ``http-report``). A partition without data is
        NoPartitionMatched unless ``allow_empty``; what the catalog cannot do is refused first."""
        from ..operation.partition_mark_done import mark_done, plan_mark_done
        table = self._open_for(Action.MARK_PARTITION_DONE)
        plan = plan_mark_done(table, _strings(partitions), actions=actions, allow_empty=allow_empty)
        return plan if dry_run else mark_done(table, plan)

    def remove_orphan_files(
        self,
        *,
        older_than: PointInTime | None = None,
        force: bool = False,
        external_paths: bool = False,
        dry_run: bool = False,
        progress: StepProgress | None = None,
        engine: str = "auto",
        spark_master: str | None = None,
        spark_conf: KeyValues | None = None,
        parallelism: int | None = None,
    ) -> OrphanFilesReport:
        """Delete files no snapshot, tag, changelog or branch uses, last modified before
        ``older_than`` (default 1 day ago; under 1 hour needs ``force``). Anything unreadable
        stops the run (UnsafeRefused) with nothing deleted. ``engine`` spark (``auto``: when
        Spark options are given) lists, reads manifests, joins and deletes as Spark tasks."""
        from ..operation.orphans import plan_remove_orphans, remove_orphans
        from ..spark.orphans import choose_orphans_engine, remove_orphan_files_spark
        from .reports import OrphanFilesReport

        conf = key_values(spark_conf, "--spark-conf")
        on_spark = choose_orphans_engine(engine, spark_master, conf, parallelism) == "spark"
        table = self._open_for(Action.REMOVE_ORPHAN_FILES)
        if on_spark:
            plan, result = remove_orphan_files_spark(
                table, older_than=point_in_time_text(older_than), force=force, external_paths=external_paths,
                dry_run=dry_run, master=spark_master, conf=conf or None, parallelism=parallelism, progress=progress)
            return OrphanFilesReport(plan, result, self.name, table.path, external_paths)
        plan = plan_remove_orphans(table, point_in_time_text(older_than), force, external_paths=external_paths)
        result = None if dry_run else remove_orphans(table, plan, progress)
        return OrphanFilesReport(plan, result, self.name, table.path, external_paths)

    def purge_files(self, *, dry_run: bool = False) -> PurgeFilesReport:
        """Java's ``purge_files``: drop every branch, tag and consumer, truncate the table,
        delete the long-lived changelogs, expire all but the new empty snapshot and remove
        orphan files as of now. The schema stays. Anything unreadable it depends on refuses
        (UnsafeRefused) before anything changes."""
        from ..operation.purge import plan_purge, purge
        from .reports import PurgeFilesReport
        table = self._open_for(Action.PURGE_FILES)
        plan = plan_purge(table)
        return PurgeFilesReport(plan, None if dry_run else purge(table, plan))

    def rollback(self, *, snapshot: int | None = None, tag: str | None = None, to_timestamp: Timestamp | None = None,
                 to_watermark: int | None = None, dry_run: bool = False) -> RollbackReport:
        """Make a snapshot or a tag the latest again; later snapshots, changelogs and tags go,
        and so do the files only they used. ``to_timestamp`` (epoch millis, ISO-8601 or a
        ``datetime``): the latest snapshot committed at or before it (Java's
        ``rollback_to_timestamp``); ``to_watermark``: the latest whose watermark is at or below it."""
        from ..operation.rollback import rollback as rollback_table
        from .reports import RollbackReport
        target = self._rollback_target(snapshot, tag, to_timestamp, to_watermark)
        table = self._open_for(Action.ROLLBACK)
        plan = rollback_table(table, dry_run=dry_run, target=target)
        return RollbackReport(plan, self.name, table.path, dry_run)

    def rollback_as_latest(self, *, snapshot: int | None = None, tag: str | None = None,
                           to_timestamp: Timestamp | None = None, to_watermark: int | None = None,
                           dry_run: bool = False) -> AsLatestPlan:
        """Java 2.x ``rollback_to_as_latest``: commit a new snapshot equal to the target (chosen
        as :meth:`rollback` chooses it), deleting nothing; a target not given by tag is tagged
        ``rollback-to-as-latest-<id>-<uuid>`` first so expiration keeps its files."""
        from ..operation.rollback_as_latest import rollback_as_latest
        target = self._rollback_target(snapshot, tag, to_timestamp, to_watermark)
        return rollback_as_latest(self._open_for(Action.ROLLBACK), target, dry_run=dry_run)

    @staticmethod
    def _rollback_target(snapshot: int | None, tag: str | None, to_timestamp: Timestamp | None,
                         to_watermark: int | None) -> RollbackTarget:
        from ..operation.rollback import RollbackTarget
        given = [x for x in (snapshot, tag, to_timestamp, to_watermark) if x is not None]
        if len(given) != 1:
            raise InvalidInput("rollback: give exactly one of snapshot, tag, to_timestamp and to_watermark")
        if snapshot is not None and snapshot < 1:
            raise InvalidInput(f"rollback: snapshot {snapshot}: a snapshot id is positive")
        millis = None if to_timestamp is None else timestamp_millis(to_timestamp, "--to-timestamp")
        return RollbackTarget(snapshot_id=snapshot, tag=tag_name(tag), timestamp_millis=millis, watermark=to_watermark)

    # -- metadata repair ------------------------------------------------------------------------

    def compact_manifest(self, *, dry_run: bool = False) -> CompactManifestReport:
        """Rewrite the latest snapshot's data manifests into few, sorted by partition and
        bucket, as one COMPACT snapshot (Java's compact_manifest); nothing when already compact."""
        from ..operation.manifest_compact import compact_manifest as compact_manifest_of
        from ..operation.manifest_compact import plan_compact_manifest
        from .reports import CompactManifestReport
        table = self._open_for(Action.COMPACT_MANIFEST)
        plan = plan_compact_manifest(table)
        return CompactManifestReport(plan, None if dry_run else compact_manifest_of(table, plan), self.name)

    def remove_unexisting_files(self, *, dry_run: bool = False) -> RemoveUnexistingFilesReport:
        """Drop the manifest entries of live data files that no longer exist (their rows are
        lost) in one OVERWRITE snapshot; an unreadable manifest refuses (UnsafeRefused)."""
        from ..operation.maintenance import after_commit
        from ..operation.unexisting_files import plan_remove_unexisting_files
        from ..operation.unexisting_files import remove_unexisting_files as remove_unexisting_files_of
        from .reports import RemoveUnexistingFilesReport

        table = self._open_for(Action.REMOVE_UNEXISTING_FILES)
        plan = plan_remove_unexisting_files(table)
        result = None if dry_run else remove_unexisting_files_of(table, plan, lambda: after_commit(table))
        return RemoveUnexistingFilesReport(plan, result, self.name)

    def remove_unexisting_manifests(self, *, force: bool = False, dry_run: bool = False
                                    ) -> UnexistingManifestsPlan:
        """Java's ``remove_unexisting_manifests``: republish the latest snapshot without its data
        manifests that no longer exist (the files they added are gone for readers), as one
        OVERWRITE snapshot. A missing manifest holding DELETE entries is UnsafeRefused unless
        ``force`` (the files they deleted would be live again, as Java leaves them)."""
        from ..operation.unexisting_manifests import plan_remove_unexisting_manifests
        from ..operation.unexisting_manifests import remove_unexisting_manifests as remove_unexisting_manifests_of
        table = self._open_for(Action.REMOVE_UNEXISTING_MANIFESTS)
        plan = plan_remove_unexisting_manifests(table, force)
        return plan if dry_run else remove_unexisting_manifests_of(table, plan, force)

    def repair(self, *, earliest: int | None = None, dry_run: bool = False) -> RepairReport:
        """Make the EARLIEST / LATEST snapshot hints match the snapshot files; ``earliest``
        moves EARLIEST past a gap in the snapshot ids (Java's repair_earliest_snapshot)."""
        from ..operation.repair import apply_repair, plan_repair
        from ..table.features import refuse_on_catalog_server
        from .reports import RepairReport
        catalog = self.warehouse.catalog
        # on storage but not in the metastore: entered first (Java's repairTable); a dry run
        # plans on the table as storage holds it
        registrations = [] if self.branch is not None else catalog.table_registrations(self.identifier)
        if registrations and not dry_run:
            catalog.register(registrations)
        table = catalog.storage_table(self.identifier) if registrations and dry_run else self.open()
        refuse_on_catalog_server(table, "repair", "the server keeps the snapshot hints")
        plan = plan_repair(table, earliest)
        if table.branch is None and not (registrations and dry_run):
            plan.metastore_schema = catalog.schema_drift(table.identifier, table.schema)
        applied = [] if dry_run else apply_repair(table, plan)
        if not dry_run and plan.metastore_schema is not None:
            catalog.sync_schema(table.identifier, table.schema)
        return RepairReport(plan, applied, self.name, dry_run, registrations)

    # -- tags -----------------------------------------------------------------------------------

    def list_tags(self) -> Rows:
        return SYSTEM_TABLES["tags"](self.open(), None)

    def create_tag(self, name: str, *, snapshot: int | None = None, time_retained: Duration | None = None,
                   from_timestamp: Timestamp | None = None, from_watermark: int | None = None) -> Tag:
        """Tag a snapshot (default: the latest); without ``time_retained`` the table's
        tag.default-time-retained applies, as for a tag made by Java. ``from_timestamp`` (epoch
        millis, ISO-8601 or a ``datetime``) / ``from_watermark``: the earliest snapshot committed
        (watermarked) at or after it, as Java's create_tag_from_timestamp / _watermark."""
        from ..operation import tag_ops
        from ..refs.tags import validate_tag_name
        if sum(x is not None for x in (snapshot, from_timestamp, from_watermark)) > 1:
            raise InvalidInput("tag create: give at most one of snapshot, from_timestamp and from_watermark")
        retained = None
        if time_retained is not None:
            retained = duration_millis(time_retained, "--time-retained", positive=True) / 1000
        millis = None if from_timestamp is None else timestamp_millis(from_timestamp, "--from-timestamp")
        validate_tag_name(name)
        table = self._open_for(Action.TAG)
        if millis is not None or from_watermark is not None:
            snapshot = tag_ops.snapshot_from_time(table, millis, from_watermark)[0].id
        return tag_ops.create_tag(table, name, snapshot, retained)

    def replace_tag(self, name: str, *, snapshot: int | None = None, time_retained: Duration | None = None,
                    dry_run: bool = False) -> TagReplacePlan:
        """Java's ``replace_tag``: the existing tag ``name`` names ``snapshot`` (default: the
        latest) with ``time_retained`` (default: tag.default-time-retained); the files only its
        old snapshot held are deleted as ``tag delete`` would."""
        from ..operation import tag_ops
        from ..refs.tags import validate_tag_name
        retained = None
        if time_retained is not None:
            retained = duration_millis(time_retained, "--time-retained", positive=True) / 1000
        validate_tag_name(name)
        table = self._open_for(Action.TAG)
        plan = tag_ops.plan_replace_tag(table, name, snapshot, retained)
        if not dry_run:
            tag_ops.apply_replace_tag(table, plan)
        return plan

    def trigger_tags(self, *, dry_run: bool = False) -> AutoTagPlan:
        """Java's ``trigger_tag_automatic_creation``: create the tags tag.automatic-creation /
        tag.creation-period would have made up to now (trimming to tag.num-retained-max), then
        expire tags past their retention (tag.time-expire-enabled)."""
        from ..operation import tag_ops
        return tag_ops.trigger_tags(self._open_for(Action.TAG), dry_run=dry_run)

    def rename_tag(self, name: str, new_name: str) -> Tag:
        from ..operation import tag_ops
        from ..refs.tags import validate_tag_name
        validate_tag_name(name)
        validate_tag_name(new_name)
        return tag_ops.rename_tag(self._open_for(Action.TAG), name, new_name)

    def delete_tags(self, names: str | Sequence[str], *, dry_run: bool = False) -> TagDeletionPlan:
        """Delete tags (``"a,b"`` or a list) and the files only they still used."""
        from ..operation import tag_ops
        table = self._open_for(Action.TAG)
        if isinstance(names, str):
            listed = [n.strip() for n in names.split(",")]
            if any(not n for n in listed):
                raise InvalidInput(f"tag names {names!r}: empty name in the list")
        else:
            listed = list(names)
        return tag_ops.delete_tags(table, listed, dry_run=dry_run)

    def expire_tags(self, *, older_than: PointInTime | None = None, dry_run: bool = False) -> TagDeletionPlan:
        """Delete tags whose retention has passed (and with ``older_than`` those created before)."""
        from ..operation import tag_ops
        older = None if older_than is None else local_datetime(older_than, "--older-than")
        return tag_ops.expire_tags(self._open_for(Action.TAG), dry_run=dry_run, older_than=older)

    # -- consumers ------------------------------------------------------------------------------

    def list_consumers(self) -> Rows:
        """Each consumer: its next snapshot, when it last moved and how far it is behind."""
        from ..operation import consumer_ops
        return consumer_ops.list_consumers(self.open())

    def reset_consumer(self, consumer_id: str, *, snapshot: int | None = None, dry_run: bool = False
                       ) -> ConsumerPlan:
        """Java's ``reset_consumer``: the consumer reads on from ``snapshot`` (which must exist),
        or without one is deleted."""
        from ..operation import consumer_ops
        consumer_ops.validate_consumer_id(consumer_id)
        table = self._open_for(Action.CONSUMER)
        plan = consumer_ops.plan_reset_consumer(table, consumer_id, snapshot)
        return plan if dry_run else consumer_ops.apply_consumer_plan(table, plan)

    def clear_consumers(self, *, including: str | None = None, excluding: str | None = None,
                        dry_run: bool = False) -> ConsumerPlan:
        """Java's ``clear_consumers``: delete the consumers whose whole id matches ``including``
        (default: all) and not ``excluding`` (regular expressions)."""
        from ..operation import consumer_ops
        consumer_ops.compile_consumer_pattern(including, "--including")
        consumer_ops.compile_consumer_pattern(excluding, "--excluding")
        table = self._open_for(Action.CONSUMER)
        plan = consumer_ops.plan_clear_consumers(table, including, excluding)
        return plan if dry_run else consumer_ops.apply_consumer_plan(table, plan)

    # -- branches -------------------------------------------------------------------------------

    def list_branches(self) -> Rows:
        return SYSTEM_TABLES["branches"](self.open(), None)

    def create_branch(self, name: str, *, tag: str | None = None) -> Table:
        """A branch from a tag of this branch, or empty (the schemas only) without ``tag``;
        returns a handle on it."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        validate_branch_name(name)
        branch_ops.create_branch(self.open(), name, tag)
        return Table(self.warehouse, self.name, name)

    def delete_branch(self, name: str, *, dry_run: bool = False) -> BranchPlan:
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        validate_branch_name(name)
        return branch_ops.delete_branch(self.open(), name, dry_run=dry_run)

    def fast_forward(self, name: str, *, dry_run: bool = False) -> BranchPlan:
        """Make this branch (default: main) equal to branch ``name``."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        validate_branch_name(name)
        return branch_ops.fast_forward(self._open_for(Action.FAST_FORWARD), name, dry_run=dry_run)

    def rename_branch(self, name: str, new_name: str, *, dry_run: bool = False) -> BranchPlan:
        """Java 2.x's ``rename_branch``: the branch directory is renamed (local filesystems)."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        validate_branch_name(name)
        validate_branch_name(new_name)
        return branch_ops.rename_branch(self._open_for(Action.RENAME_BRANCH), name, new_name, dry_run=dry_run)

    def merge_branch(self, source: str, *, dry_run: bool = False) -> MergePlan:
        """Java 2.x's ``merge_branch``: the data files of branch ``source`` (``main`` allowed)
        that this branch (default: main) lacks are added to it in one APPEND snapshot; both
        must be append tables with an append-only history from snapshot 1."""
        from ..operation import branch_ops
        from ..refs.branches import validate_branch_name
        if source.lower() != "main":
            validate_branch_name(source)
        return branch_ops.merge_branch(self._open_for(Action.MERGE_BRANCH), "main" if source.lower() == "main"
                                       else source, dry_run=dry_run)


def _default_v2_bitmaps(options: dict[str, str]) -> list[str]:
    cols = [c.strip() for c in options.get("file-index.bitmap.columns", "").split(",") if c.strip()]
    return [c for c in cols if options.get(f"file-index.bitmap.{c}.version", "2").strip() != "1"]
