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
    Timestamp,
    branch_name,
    column_list,
    duration_millis,
    key_values,
    memory_bytes,
    string_list,
    time_travel,
)
from .table_maintenance import TableMaintenance
from .table_refs import TableRefs

if TYPE_CHECKING:
    import pyarrow as pa

    from ..compact.local import Progress
    from ..compact.overwrite_plan import OverwritePlan
    from ..table.file_store_table import FileStoreTable
    from ..utils.progress import StepProgress
    from .reports import (
        AlterPlan,
        CompactReport,
        MaterializeDeletionVectorsReport,
        Reader,
        RescaleReport,
        RewriteFileIndexReport,
        WriteReport,
    )
    from .warehouse import Warehouse

STREAMED_KINDS: frozenset[str] = frozenset(STREAMED_TABLES)  # inspect kinds Table.inspect_reader streams
ROW_STREAM_KINDS: frozenset[str] = frozenset(ROW_STREAMS)  # inspect kinds Table.inspect_stream streams


class Table(TableMaintenance, TableRefs):
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
        changes += [schema_changes.RemoveOption(k) for k in string_list(unset)]
        for text in string_list(add_columns):
            changes += [schema_changes.AddColumn(n, t, d) for n, t, d in parse_columns(text)]
        if isinstance(rename_columns, Mapping):
            changes += [schema_changes.RenameColumn(old, new) for old, new in rename_columns.items()]
        for pair in [] if isinstance(rename_columns, Mapping) else string_list(rename_columns):
            old, sep, new = pair.partition(":")
            if not sep or not old or not new:
                raise InvalidInput(f"--rename-column {pair!r}: expected OLD:NEW")
            changes.append(schema_changes.RenameColumn(old, new))
        changes += [schema_changes.DropColumn(n) for n in string_list(drop_columns)]
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
            self._open_for(Action.COMPACT), full=full, partitions=string_list(partitions) or None, where=where, max_bytes=budget,
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
        result = rescale_table(self._open_for(Action.RESCALE), string_list(partitions) or None, bucket_num, dry_run=dry_run)
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
        result = rewrite_file_indexes(table, partitions=string_list(partitions) or None, where=where, dry_run=dry_run,
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
        if string_list(partitions) and where:
            raise InvalidInput("materialize-deletion-vectors: give --partition or --where, not both")
        table = self._open_for(Action.MATERIALIZE_DELETION_VECTORS)
        dynamic = key_values(options, "--option")
        if dynamic:
            table = table.copy(dynamic)
        result = materialize_deletion_vectors(table, partitions=string_list(partitions) or None, where=where,
                                              dry_run=dry_run)
        return MaterializeDeletionVectorsReport(result)


def _default_v2_bitmaps(options: dict[str, str]) -> list[str]:
    cols = [c.strip() for c in options.get("file-index.bitmap.columns", "").split(",") if c.strip()]
    return [c for c in cols if options.get(f"file-index.bitmap.{c}.version", "2").strip() != "1"]
