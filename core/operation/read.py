"""TableRead: the rows of a table at a snapshot, as Java Paimon's batch read returns them.

Plan (metadata only, ``read_plan``): the snapshot's live files pruned by partition, bucket,
level, stats and file indexes, grouped into one split per (partition, bucket).

Read (``split_read`` / ``merge_split_read``): one split at a time. Append files are streamed
batch by batch; primary-key splits are decoded and merged by the table's merge engine on
worker threads, the next ones while the caller consumes the current one; a primary-key split
too big for that is merged streaming (its sorted runs k-way, a key range at a time), so
memory stays bounded whatever the size of a bucket.
"""

from __future__ import annotations

import contextlib
from collections.abc import Generator, Iterator

import pyarrow as pa

from ..data.predicate import Predicate
from ..errors import InvalidInput, NotYetSupported
from ..format.arrow_schema import arrow_field
from ..schema.table_schema import TableSchema
from ..table.file_store_table import FileStoreTable, TimeTravel
from ..utils.rows import Rows
from ..utils.suggest import did_you_mean
from ..utils.workers import prefetch
from .blob_read import BLOB_AS, blob_arrow_type, blob_columns, check_blob_read
from .data_evolution_read import DataEvolutionSplitRead
from .merge_split_read import MergeFileSplitRead, stream_split_mib
from .read_explain import explain_rows
from .read_plan import Counts, ReadPlan, ReadPlanner
from .row_tracking import check_system_columns_readable, is_data_evolution, readable_fields
from .split_read import ROW_KIND_COLUMN, RawFileSplitRead, SplitRead

_PREFETCH = 2  # primary-key splits decoded and merged ahead of the consumer (worker threads)


class TableRead:
    """Read ``table`` at ``at`` (latest by default): projection, ``--where`` predicate, limit.

    ``keep_deletes`` keeps retract rows of the merge (``$audit_log``), ``with_row_kind`` adds
    a leading ``rowkind`` column, ``top_level_only`` reads only the max level of primary-key
    tables (``$ro``), ``all_levels`` reads level 0 of deletion-vector / first-row tables too
    (the rows a full compaction would merge, for rewrites that must not lose them).
    ``blob_as`` is what BLOB columns read as: ``bytes``, ``size`` or ``descriptor``.
    """

    def __init__(
        self,
        table: FileStoreTable,
        at: TimeTravel | None = None,
        projection: list[str] | None = None,
        predicate: Predicate | None = None,
        limit: int | None = None,
        *,
        keep_deletes: bool = False,
        with_row_kind: bool = False,
        top_level_only: bool = False,
        all_levels: bool = False,
        blob_as: str = "bytes",
    ) -> None:
        self.snapshot = table.resolve_snapshot(at)
        if at is not None and not at.is_latest:
            table = _with_schema(table, table.schema_at(self.snapshot))  # Java time travel reads that schema
        self.table = table
        self.schema = table.schema
        self.options = table.options
        self.data_evolution = is_data_evolution(self.options)
        self.projection = _checked_projection(projection, self.schema)
        _check_predicate(predicate, self.schema)
        self.predicate = predicate
        # _ROW_ID / _SEQUENCE_NUMBER of row-tracking tables: selected or filtered on
        self.system_columns = check_system_columns_readable(
            self.schema, [*self.projection, *(predicate.columns() if predicate is not None else ())])
        if limit is not None and limit < 0:
            raise InvalidInput(f"--limit must be >= 0, got {limit}")
        self.limit = limit
        self.keep_deletes = keep_deletes
        self.with_row_kind = with_row_kind
        self.top_level_only = top_level_only
        self.all_levels = all_levels
        self.is_pk = bool(self.schema.primary_keys)
        self.blob_columns = _checked_blob_columns(self.schema, self.data_evolution, blob_as)
        self.blob_as = blob_as
        self._plan: ReadPlan | None = None

    def output_schema(self) -> pa.Schema:
        """The schema of every result batch."""
        return self._read_schema()

    def _read_schema(self) -> pa.Schema:
        by_name = {f.name: f for f in readable_fields(self.schema)}
        fields = [arrow_field(by_name[n]) for n in self.projection]
        fields = [f.with_type(blob_arrow_type(self.blob_as)) if f.name in self.blob_columns else f for f in fields]
        if self.with_row_kind:
            fields.insert(0, pa.field(ROW_KIND_COLUMN, pa.string(), nullable=False))
        return pa.schema(fields)

    def plan(self) -> ReadPlan:
        if self._plan is None:
            planner = ReadPlanner(self.table, self.snapshot, self.predicate, top_level_only=self.top_level_only,
                                  all_levels=self.all_levels)
            self._plan = planner.plan()
        return self._plan

    def explain(self) -> Rows:
        """The plan's pruning steps; with a predicate on an append table also the Parquet row
        groups the read would skip by their statistics (their footers are read for that); on
        a primary-key table the buckets merged streaming."""
        row_groups = None
        streamed = None
        reader = self._split_read() if self.predicate is not None or self.is_pk else None
        if isinstance(reader, RawFileSplitRead):
            row_groups = reader.row_group_counts(self.plan().splits)
        if isinstance(reader, MergeFileSplitRead):
            big = [s for s in self.plan().splits if reader.streams(s)]
            counts = Counts(len({s.partition for s in big}), len(big), sum(len(s.files) for s in big),
                            sum(s.row_count for s in big))
            streamed = (counts, f"bucket(s) whose files decode to more than {stream_split_mib()} MiB "
                                "(estimated) are merged a key range at a time, in bounded memory")
        return explain_rows(self.plan(), self.schema, self.top_level_only, row_groups, streamed)

    # -- reading -------------------------------------------------------------------------

    def iter_batches(self) -> Iterator[pa.RecordBatch]:
        """Result batches, one (partition, bucket) at a time, stopping at the limit."""
        self._check_postpone_merge_on_read()  # before the caller opens any output
        return self._iter_batches()

    def to_arrow(self) -> pa.Table:
        schema = self.output_schema()
        return pa.Table.from_batches(list(self.iter_batches()), schema=schema)

    def _check_postpone_merge_on_read(self) -> None:
        """Refuse a table read that ``postpone.merge-on-read`` asks to merge postponed rows into.

        Java 2.x merges them only in its Flink / Spark batch sources (routing each postponed
        record to its real bucket); its core scan, system tables and pypaimon leave them out.
        Without them our rows would differ from what the table's owner configured.
        """
        if self.keep_deletes or self.with_row_kind or self.top_level_only:
            return  # $audit_log / $binlog / $ro: Java's system tables never merge the postpone bucket
        n = self.plan().postponed_selected.files
        if n and self.options.get_bool("postpone.merge-on-read"):
            raise NotYetSupported(
                f"read: {self.table.identifier} sets postpone.merge-on-read = true and {n} postponed file(s) "
                "(bucket = -2) await compaction; merging the postpone bucket into reads is not supported: "
                "run `paimon-cli compact` first, or set postpone.merge-on-read = false to read only the "
                "compacted rows")

    def _iter_batches(self) -> Iterator[pa.RecordBatch]:
        remaining = self.limit
        if remaining == 0:
            return
        schema = self._read_schema()
        with contextlib.closing(self._split_tables()) as tables:  # its prefetch pool ends with us
            for t in tables:
                if t.num_rows == 0:
                    continue
                if remaining is not None and t.num_rows > remaining:
                    t = t.slice(0, remaining)
                t = t.cast(schema) if not t.schema.equals(schema) else t
                yield from t.to_batches()
                if remaining is not None:
                    remaining -= t.num_rows
                    if remaining <= 0:
                        return

    def _split_read(self) -> SplitRead:
        if self.data_evolution:
            reader = DataEvolutionSplitRead(self.table, self.projection, self.predicate,
                                            with_row_kind=self.with_row_kind, system_columns=self.system_columns)
            reader.blob_as = self.blob_as
            return reader
        if self.is_pk:
            return MergeFileSplitRead(self.table, self.projection, self.predicate, with_row_kind=self.with_row_kind,
                                      keep_deletes=self.keep_deletes)
        return RawFileSplitRead(self.table, self.projection, self.predicate, with_row_kind=self.with_row_kind,
                                system_columns=self.system_columns)

    def _split_tables(self) -> Generator[pa.Table, None, None]:
        """Result tables split by split, in split order. Primary-key splits are decoded and
        merged on ``_PREFETCH`` worker threads (pyarrow's Parquet decode and take, numpy's
        sort release the GIL); at most ``_PREFETCH`` splits are in flight or wait, so memory
        stays bounded. A split too big to merge in memory is merged streaming, a key range at
        a time, on the consumer's thread (``MergeFileSplitRead.read_streamed``)."""
        splits = self.plan().splits
        reader = self._split_read()
        if isinstance(reader, RawFileSplitRead):
            reader.streaming = self.limit is not None  # may stop after a few rows: nothing decoded ahead
            yield from reader.read_splits(splits)
            return
        if not isinstance(reader, MergeFileSplitRead) or len(splits) <= 1:
            for split in splits:
                yield from reader.read(split)
            return
        streamed = [reader.streams(s) for s in splits]  # big splits: merged streaming on this thread

        def work(i: int) -> pa.Table | None:
            return None if streamed[i] else reader.load_and_merge(splits[i])

        with contextlib.closing(prefetch(work, range(len(splits)), _PREFETCH, "paimon-read")) as merged:
            for i, t in enumerate(merged):
                if streamed[i]:
                    yield from reader.read_streamed(splits[i])
                elif t is not None:
                    yield t


def _checked_blob_columns(schema: TableSchema, data_evolution: bool, blob_as: str) -> list[str]:
    """The columns read from ``.blob`` files; outside data-evolution tables BLOB columns are
    primary-key "managed blob packs" (Paimon 2.0+), which are refused."""
    if blob_as not in BLOB_AS:
        raise InvalidInput(f"blob_as must be one of {', '.join(BLOB_AS)}, got {blob_as!r}")
    check_blob_read(schema)  # inline descriptors / views and nested BLOBs: refused before any I/O
    names = blob_columns(schema)
    if names and not data_evolution:
        raise NotYetSupported(f"read: BLOB columns ({', '.join(names)}) of a table without data evolution "
                              "(primary-key managed blob packs, Paimon 2.0+) are not supported yet")
    return names


def _checked_projection(projection: list[str] | None, schema: TableSchema) -> list[str]:
    if projection is None:
        return list(schema.field_names)
    names = [f.name for f in readable_fields(schema)]
    unknown = [c for c in projection if c not in names]
    if unknown:
        raise InvalidInput(f"--select: unknown column(s) {', '.join(unknown)}{did_you_mean(unknown[0], names)}; "
                           f"columns: {', '.join(names)}")
    if not projection:
        raise InvalidInput("--select: no columns given")
    return list(projection)


def _check_predicate(predicate: Predicate | None, schema: TableSchema) -> None:
    if predicate is not None:
        names = [f.name for f in readable_fields(schema)]
        unknown = sorted(predicate.columns() - set(names))
        if unknown:
            raise InvalidInput(f"--where: unknown column(s) {', '.join(unknown)}{did_you_mean(unknown[0], names)}")


def _with_schema(table: FileStoreTable, schema: TableSchema) -> FileStoreTable:
    if schema is table.schema:
        return table
    return table.with_schema(schema)
