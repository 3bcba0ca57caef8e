"""Postpone compaction: move a postpone table's staged rows into real buckets, as Java does.

Rows written into the postpone bucket (``bucket-postpone/``, see
:mod:`core.operation.postpone`) are invisible to batch reads until a compaction assigns them
buckets. Java's postpone compaction (Flink ``CompactAction`` / ``PostponeBucketCompact*``):

* gives each partition its bucket number (:class:`core.operation.postpone.BucketNums`: the
  partition's existing ``_TOTAL_BUCKETS``, else ``postpone.default-bucket-num``, else an
  estimate from the staged rows or bytes);
* replays the staged files one by one in creation order (each file's rows in file order)
  through an ordinary fixed-bucket writer of that bucket number, which numbers the records
  after each bucket's restored max sequence number -- so staged rows replace older rows of
  the same key through the table's merge engine -- and compacts every bucket it wrote
  (universal strategy; level 0 forced up in lookup mode);
* commits ONE COMPACT snapshot: DELETE of the staged files (bucket -2), the real buckets'
  compaction, and the new files as compaction output.

Here :class:`core.operation.write.TableWrite` is that writer and
:func:`core.compact.write_job.written_bucket_units` the compaction of the written buckets.
With the Spark engine (:func:`core.compact.spark.run_spark_postpone`, Java's
``SparkPostponeCompactProcedure``) each partition is replayed by one task and the driver merges
the outcomes and commits. As in Java, the table is compacted as a whole (no partition
selection). The commit is fenced on the planned snapshot: a commit that added files to those partitions
meanwhile (whose sequence numbers our replay did not see) fails it with CommitConflict, and
every file written is deleted again on any failure.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import CommitConflict
from ..format import data_file
from ..format.arrow_schema import KEY_PREFIX, VALUE_KIND, key_value_file_fields, system_fields
from ..io import paths
from ..mergetree.commit_message import CommitMessage
from ..mergetree.compact_unit import UnitResult
from ..mergetree.file_writer import partition_dir_of
from ..operation import postpone
from ..operation.commit import FileStoreCommit
from ..utils.interrupt import discard
from .local import UnitsFailed, delete_written, run_local

if TYPE_CHECKING:
    import pyarrow as pa

    from ..manifest.manifest import DataFileMeta, ManifestEntry
    from ..operation.write import TableWrite
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable


@dataclass
class PostponedPartition:
    """The staged files of one partition and the bucket number they go into."""

    partition: bytes
    buckets: int
    files: list[DataFileMeta] = field(default_factory=list)  # in replay order

    @property
    def rows(self) -> int:
        return sum(f.row_count for f in self.files)

    @property
    def bytes(self) -> int:
        return sum(f.file_size for f in self.files)


def replay_order(f: DataFileMeta) -> tuple[int, str, int, str]:
    """Creation time, then the writer, then the writer's file counter (``-<n>.<ext>``)."""
    stem = f.file_name.rsplit(".", 1)[0]
    tail = stem.rsplit("-", 1)[-1]
    return (f.creation_time or 0, postpone.writer_prefix(f.file_name), int(tail) if tail.isdigit() else 0, f.file_name)


def plan_postponed(table: FileStoreTable, entries: Sequence[ManifestEntry],
                   all_entries: Sequence[ManifestEntry]) -> list[PostponedPartition]:
    """Staged files of ``entries`` per partition, with the partition's bucket number (known
    layouts from ``all_entries``, the snapshot's live files)."""
    staged: dict[bytes, list[DataFileMeta]] = {}
    for e in entries:
        if e.bucket == paths.POSTPONE_BUCKET:
            staged.setdefault(e.partition, []).append(e.file)
    if not staged:
        return []
    nums = postpone.BucketNums.of(table, all_entries)
    return [PostponedPartition(p, nums(p), sorted(files, key=replay_order)) for p, files in sorted(staged.items())]


def _staged_batches(table: FileStoreTable, part: PostponedPartition) -> Iterator[pa.Table]:
    """The staged records of a partition in replay order: value columns and ``_VALUE_KIND``,
    evolved to the table's schema."""
    import pyarrow as pa

    schema = table.schema
    target = system_fields() + list(schema.fields)
    ids = {x.id for x in target}
    part_dir = partition_dir_of(schema, part.partition)
    schemas = {schema.id: schema}
    for f in part.files:
        fs = schemas.get(f.schema_id) or schemas.setdefault(f.schema_id, table.schema_manager.schema(f.schema_id))
        fields = [x for x in key_value_file_fields(fs) if not x.name.startswith(KEY_PREFIX)]
        cols = [x.name for x in fields if x.id in ids]
        path = paths.data_file_path(table.data_root, part_dir, paths.POSTPONE_BUCKET, f.file_name, f.external_path)
        for batch in data_file.iter_data_file_batches(table.file_io, path, fields, cols, 65536, low_memory=True):
            t = pa.Table.from_batches([batch])
            if t.num_rows:
                yield data_file.evolve(t, fields, target) if fs.id != schema.id else t.select(
                    [x.name for x in target])


@dataclass
class PostponeOutcome:
    """What the replay produced, before the commit."""

    messages: list[CommitMessage] = field(default_factory=list)  # to commit
    obsolete: list[CommitMessage] = field(default_factory=list)  # written, compacted away: delete after
    results: list[UnitResult] = field(default_factory=list)
    rows_in: int = 0
    written: list[str] = field(default_factory=list)  # the writer's files (the results list their own)

    def discard(self, table: FileStoreTable) -> None:
        """Delete every file this outcome wrote (nothing of it was committed)."""
        delete_written(table, self.results)
        discard(table.file_io, self.written)

    @classmethod
    def merged(cls, outcomes: Sequence[PostponeOutcome]) -> PostponeOutcome:
        """The outcomes of disjoint partitions (one per Spark task) as one."""
        out = cls()
        for o in outcomes:
            out.messages += o.messages
            out.obsolete += o.obsolete
            out.results += o.results
            out.rows_in += o.rows_in
            out.written += o.written
        return out


def replay(table: FileStoreTable, parts: Sequence[PostponedPartition], commit_user: str,
           full: bool = False) -> tuple[TableWrite, PostponeOutcome]:
    """Write the staged rows into real buckets and compact the written buckets (nothing
    committed). On failure every file written is deleted and the error re-raised."""
    from .write_job import written_bucket_units

    nums = {p.partition: p.buckets for p in parts}
    from ..operation.write import TableWrite  # the writer loads when postponed files are replayed

    tw = TableWrite(table, commit_user=commit_user, bucket_nums=nums.__getitem__)
    tw.ignore_delete = False  # staged rows passed the writer's ignore-delete already
    out = PostponeOutcome()
    try:
        for part in parts:
            for t in _staged_batches(table, part):
                out.rows_in += t.num_rows
                tw.write_arrow(t.select(tw.schema.field_names), t.column(VALUE_KIND))
        written = tw.prepare_commit()
        units = written_bucket_units(tw, [m for m in written if m.new_files], full)
        try:
            out.results = run_local(tw.compaction_table(), units) if units else []
        except UnitsFailed as failed:
            delete_written(table, failed.results)
            raise failed.error from None
    except BaseException:
        tw.abort()
        raise
    _assemble(out, written, parts)
    out.written = list(tw.written)
    return tw, out


def _assemble(out: PostponeOutcome, written: list[CommitMessage], parts: Sequence[PostponedPartition]) -> None:
    """Java's ``BucketFiles``: new files become compaction output; a new file the bucket's
    compaction rewrote is dropped (deleted after the commit); staged files are deleted."""
    by_bucket = {(r.unit.partition, r.unit.bucket): r for r in out.results}
    for m in written:
        r = by_bucket.pop((m.partition, m.bucket), None)
        if r is None:
            out.messages.append(CommitMessage(m.partition, m.bucket, m.total_buckets, new_files=list(m.new_files),
                                              changelog_files=list(m.changelog_files),
                                              new_index_files=list(m.new_index_files),
                                              deleted_index_files=list(m.deleted_index_files)))
            continue
        new = {f.file_name for f in m.new_files}
        rewritten = {f.file_name for f in r.before}
        kept = {f.file_name for f in r.after}
        out.messages.append(CommitMessage(
            m.partition, m.bucket, m.total_buckets,
            new_files=[f for f in m.new_files if f.file_name not in rewritten] + list(r.after),
            deleted_files=[f for f in r.before if f.file_name not in new],
            changelog_files=[*m.changelog_files, *r.changelog],
            new_index_files=[*m.new_index_files, *r.new_index_files],
            deleted_index_files=[*m.deleted_index_files, *r.deleted_index_files],
        ))
        gone = [f for f in r.before if f.file_name in new and f.file_name not in kept]
        if gone:
            out.obsolete.append(CommitMessage(m.partition, m.bucket, m.total_buckets, new_files=gone))
    for r in by_bucket.values():  # a unit of a bucket that received no rows (not expected)
        out.messages.append(r.commit_message())
    for part in parts:
        out.messages.append(CommitMessage(part.partition, paths.POSTPONE_BUCKET, paths.POSTPONE_BUCKET,
                                          deleted_files=list(part.files)))


def commit_postponed(table: FileStoreTable, tw: TableWrite | None, out: PostponeOutcome, base: Snapshot,
                     commit_user: str, extra: Sequence[UnitResult] = ()) -> Snapshot | None:
    """ONE COMPACT snapshot fenced on ``base``; on failure nothing stays behind. ``tw``: the
    local writer (None when Spark tasks wrote: ``out.written`` lists their files)."""
    messages = out.messages + [m for m in (r.commit_message() for r in extra) if not m.is_empty()]
    commit = FileStoreCommit(table, commit_user)
    try:
        snap = commit.commit(messages, "COMPACT", base_snapshot_id=base.id)
    except BaseException as e:
        if isinstance(e, CommitConflict) or not commit.may_have_published():
            delete_written(table, extra)
            if tw is not None:
                delete_written(table, out.results)
                tw.abort()
            else:
                out.discard(table)
        raise
    commit.abort(out.obsolete)  # written, then compacted away before the commit: never referenced
    return snap


__all__ = ["PostponeOutcome", "PostponedPartition", "commit_postponed", "plan_postponed", "replay", "replay_order"]
