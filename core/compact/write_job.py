"""The write job: input files in, one snapshot out -- with what a Java writer does around it.

:class:`core.operation.write.TableWrite` only turns rows into files and CommitMessages. A Java
writer job (``write-only=false``) does more before and after its commit, and so does
:func:`write_table_result`:

1. read the inputs (:mod:`core.format.input`) and write them, refusing bad requests before
   any input is read;
2. compact what the write made eligible, in the same job: the universal strategy over every
   written primary-key bucket (in lookup mode -- deletion vectors, lookup changelog,
   first-row -- level 0 is always forced up, which is what makes those tables' rows
   visible), the bucketed append planner for fixed-bucket append tables; bucket-unaware
   append writers do not compact (Java leaves that to a dedicated job);
3. commit an APPEND then a COMPACT snapshot (an overwrite: OVERWRITE, then COMPACT once it is
   published); a compaction that cannot be committed leaves the write committed and is
   reported as a warning;
4. the post-commit maintenance: snapshot, partition and tag expiry.

On any failure before the write's snapshot is published every file written is deleted again.
"""

from __future__ import annotations

import contextlib
import time
import uuid
from collections.abc import Generator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, cast

from ..errors import InvalidInput
from ..format.input import InputChunk, make_plan, read_inputs
from ..format.input_files import expand_inputs
from ..manifest.manifest import FileKind, ManifestEntry
from ..mergetree.compact_unit import CompactUnit, UnitResult
from ..mergetree.file_writer import written_index_note
from ..operation.commit import FileStoreCommit
from ..operation.partition_spec import check_partition_spec, no_match_message, spec_spelling
from ..operation.write import TableWrite, WriteSummary
from ..utils.interrupt import deferred
from ..utils.progress import StepProgress
from .append import plan_append_units
from .job import expire_after
from .local import UnitsFailed, delete_written, run_local
from .overwrite_plan import OverwritePlan, plan_overwrite
from .plan import dv_index_files, pick_bucket_unit, sorted_runs_of

if TYPE_CHECKING:
    from ..manifest.index_manifest import IndexFileMeta
    from ..mergetree.commit_message import CommitMessage
    from ..refs.snapshot import Snapshot
    from ..table.file_store_table import FileStoreTable


@dataclass
class WriteResult:
    snapshot: Snapshot | None  # the last snapshot committed (the COMPACT one after auto-compaction)
    summary: WriteSummary
    seconds: float
    snapshots: list[Snapshot] = field(default_factory=list)  # every snapshot committed, in order
    compacted_units: int = 0  # buckets compacted in the same job (0 with write-only)
    warning: str | None = None  # the compaction could not be committed (the write itself was)
    notes: list[str] = field(default_factory=list)  # worth saying, not wrong (a new overwritten partition)


@dataclass
class _Outcome:
    """What the job committed so far, and the compaction still to commit or to clean up."""

    snapshots: list[Snapshot] = field(default_factory=list)
    compacted: list[UnitResult] = field(default_factory=list)
    pending_compact: list[CommitMessage] = field(default_factory=list)
    warning: str | None = None
    notes: list[str] = field(default_factory=list)


def write_table(
    table: FileStoreTable,
    inputs: list[str],
    fmt: str | None = None,
    row_kind_column: str | None = None,
    delete: bool = False,
    overwrite: bool = False,
    overwrite_partition: dict[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
    storage_options: dict[str, Any] | None = None,
    stdin: Any = None,
    commit_user: str | None = None,
) -> Snapshot | None:
    """Read ``inputs``, write them and commit one snapshot (APPEND, or OVERWRITE).

    Returns the new snapshot (None when there was nothing to commit). On any failure before
    the snapshot is published the files written are deleted again and the error re-raised.
    """
    return write_table_result(
        table, inputs, fmt, row_kind_column, delete, overwrite, overwrite_partition, options,
        storage_options, stdin, commit_user,
    ).snapshot


def write_table_result(
    table: FileStoreTable,
    inputs: list[str],
    fmt: str | None = None,
    row_kind_column: str | None = None,
    delete: bool = False,
    overwrite: bool = False,
    overwrite_partition: dict[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
    storage_options: dict[str, Any] | None = None,
    stdin: Any = None,
    commit_user: str | None = None,
    expire: bool = True,
    progress: StepProgress | None = None,
) -> WriteResult:
    """:func:`write_table` plus what was written and how long it took.

    ``expire=False`` skips the post-commit maintenance (snapshot, partition and tag expiry)
    a Java writer would run; ``write-only`` skips it too. ``progress`` counts the input files
    read (its detail: the rows so far).
    """
    started = time.monotonic()
    commit_user = commit_user or str(uuid.uuid4())  # staged postpone files carry it in their names
    tw = _open_writer(table, row_kind_column, delete, overwrite, overwrite_partition, options, commit_user)
    # the commit sees the options given for this write too, as Java's table.copy (e.g.
    # commit.strict-mode.last-safe-snapshot, commit.max-retries)
    commit = FileStoreCommit(table.copy({k: str(v) for k, v in (options or {}).items()}), commit_user)
    out = _Outcome()
    try:
        files = expand_inputs(inputs, fmt, storage_options)
        chunks = read_inputs(files, tw.schema, fmt, row_kind_column, delete, storage_options, stdin,
                             dict(overwrite_partition or {}))
        _write_chunks(tw, cast(Generator[InputChunk, None, None], chunks), progress, len(files))
        messages = tw.prepare_commit()
        out.compacted = _auto_compact(tw, messages)
        _commit(table, tw, commit, messages, out, overwrite, overwrite_partition)
        written = [f for m in messages for f in m.new_files] + [f for r in out.compacted for f in r.after]
        index_note = written_index_note(tw.options.options, written)
        if index_note:
            out.notes.append(index_note)
    except BaseException:
        if not commit.may_have_published():
            _delete_written(table, out.compacted)
            tw.abort()
        else:  # interrupted after the write's snapshot: it stands, its compaction may not
            _delete_uncommitted_compaction(table, commit, out.compacted)
        raise
    if out.pending_compact:
        _commit_pending_compaction(table, tw, commit, out)
    # Java runs no expiration after commits into postpone tables (newExpireRunnable is null)
    if out.snapshots and expire and not tw.options.write_only and not tw.postpone:
        expired = expire_after(table, {k: str(v) for k, v in (options or {}).items()})
        if expired:
            out.warning = f"{out.warning}; {expired}" if out.warning else expired
    return WriteResult(out.snapshots[-1] if out.snapshots else None, tw.summary, time.monotonic() - started,
                       out.snapshots, len(out.compacted), out.warning, out.notes)


def plan_overwrite_result(
    table: FileStoreTable,
    inputs: list[str],
    fmt: str | None = None,
    row_kind_column: str | None = None,
    overwrite_partition: dict[str, Any] | None = None,
    options: Mapping[str, str] | None = None,
    storage_options: dict[str, Any] | None = None,
    stdin: Any = None,
) -> OverwritePlan:
    """What ``write_table_result(..., overwrite=True)`` would replace (a dry run): the input is
    read and checked, no file is written, nothing is committed."""
    tw = _open_writer(table, row_kind_column, False, True, overwrite_partition, options, str(uuid.uuid4()))
    try:
        files = expand_inputs(inputs, fmt, storage_options)
        return plan_overwrite(tw, table, files, fmt, row_kind_column, dict(overwrite_partition or {}),
                              storage_options, stdin)
    finally:
        tw.abort()  # wrote nothing; releases the writer


def _write_chunks(tw: TableWrite, chunks: Generator[InputChunk, None, None], progress: StepProgress | None,
                  files: int) -> None:
    """Every chunk into the writer; the generator (and so the input) is closed on every way out."""
    sources: set[str] = set()
    rows = 0
    with contextlib.closing(chunks):
        for chunk in chunks:
            tw.write_arrow(chunk.data, chunk.row_kinds, chunk.source, chunk.first_row)
            if progress is not None:
                sources.add(chunk.source)
                rows += chunk.data.num_rows
                progress(len(sources) - 1, files, f"{rows:,} rows")
    if progress is not None:
        progress(files, files, f"{rows:,} rows")


def _open_writer(
    table: FileStoreTable,
    row_kind_column: str | None,
    delete: bool,
    overwrite: bool,
    overwrite_partition: dict[str, Any] | None,
    options: Mapping[str, str] | None,
    commit_user: str,
) -> TableWrite:
    """The job's writer; every refusal of the request comes before any input is read."""
    if overwrite_partition and not overwrite:
        raise InvalidInput("a partition to overwrite needs --overwrite")
    if delete and overwrite:
        raise InvalidInput("--delete cannot be combined with --overwrite")
    tw = TableWrite(table, options, overwrite=overwrite, commit_user=commit_user)  # refuses unsupported tables first
    if overwrite_partition:
        check_partition_spec(tw.schema, overwrite_partition)
    if not tw.is_pk and delete:
        raise InvalidInput(
            f"write --delete: {table.identifier} is an append table; deleting rows needs a primary key"
        )
    make_plan(tw.schema, row_kind_column, delete, dict(overwrite_partition or {}))  # bad settings fail before I/O
    return tw


def _commit(
    table: FileStoreTable,
    tw: TableWrite,
    commit: FileStoreCommit,
    messages: list[CommitMessage],
    out: _Outcome,
    overwrite: bool,
    overwrite_partition: dict[str, Any] | None,
) -> None:
    """Commit the write (APPEND then COMPACT; an overwrite leaves its COMPACT pending)."""
    compact_msgs = [m for m in (r.commit_message() for r in out.compacted) if not m.is_empty()]
    if overwrite:
        dynamic = tw.options.get_bool("dynamic-partition-overwrite", True) and not overwrite_partition
        snap = commit.commit(messages, "OVERWRITE", overwrite=dict(overwrite_partition or {}), dynamic=dynamic)
        out.snapshots = [snap] if snap is not None else []
        if overwrite_partition and snap is not None and not commit.overwritten_files:
            # legitimate (a day's first load), but a mistyped value must not pass unseen
            out.notes.append(no_match_message(spec_spelling(overwrite_partition), table,
                                              ": the overwrite added it and replaced nothing"))
        out.pending_compact = compact_msgs
        return
    try:
        # APPEND, then COMPACT; the commit refuses a COMPACT that would lose concurrent DVs.
        # A signal waits for both: DV / first-row rows are visible only once compacted.
        with deferred():
            out.snapshots = commit.commit_increments(messages, compact_msgs,
                                                     restored_snapshot_id=tw.restored_snapshot_id)
    except Exception as e:
        out.snapshots = list(getattr(e, "committed", None) or [])
        if not out.snapshots:
            raise
        out.warning = _compaction_warning(table, tw, e)
        _delete_uncommitted_compaction(table, commit, out.compacted)


def _commit_pending_compaction(table: FileStoreTable, tw: TableWrite, commit: FileStoreCommit, out: _Outcome) -> None:
    """The overwrite is published; its compaction follows as a COMPACT snapshot (Java's order)."""
    try:
        snap = commit.commit(out.pending_compact, "COMPACT")
        if snap is not None:
            out.snapshots.append(snap)
    except Exception as e:  # noqa: BLE001 - reported in the result
        out.warning = _compaction_warning(table, tw, e)
        _delete_uncommitted_compaction(table, commit, out.compacted)
    except BaseException:  # interrupted
        _delete_uncommitted_compaction(table, commit, out.compacted)
        raise


# ---------------------------------------------------------------------------------------
# Compaction in the write job
# ---------------------------------------------------------------------------------------


def _auto_compact(tw: TableWrite, messages: list[CommitMessage]) -> list[UnitResult]:
    """Run the writer's compaction units in-process; on failure delete their files and raise."""
    units = _compaction_units(tw, messages)
    if not units:
        return []
    table = tw.compaction_table()
    try:
        return run_local(table, units)
    except UnitsFailed as failed:
        delete_written(table, failed.results)
        raise failed.error from None


def _compaction_units(tw: TableWrite, messages: list[CommitMessage]) -> list[CompactUnit]:
    """What a Java writer compacts before it commits (``write-only=false``; see the module doc)."""
    if tw.options.write_only or tw.unaware or tw.postpone:
        # postpone tables: Java's batch writers are write-only; `compact` assigns buckets
        return []
    written = [m for m in messages if m.new_files]
    if not written:
        return []
    if tw.is_pk:
        return written_bucket_units(tw, written)
    return _append_units(tw, written)


def written_bucket_units(tw: TableWrite, written: list[CommitMessage], full: bool = False) -> list[CompactUnit]:
    """Universal compaction over each written bucket's restored files plus its new level-0
    files (``full``: a full compaction of each written bucket)."""
    table = tw.compaction_table()
    opts = tw.options
    index: dict[tuple[bytes, int], tuple[IndexFileMeta, ...]] = {}
    if tw.base_snapshot is not None and opts.deletion_vectors_enabled:
        index = dv_index_files(tw.table, tw.base_snapshot)
    trigger = opts.num_sorted_run_compaction_trigger
    lookup = (opts.deletion_vectors_enabled or opts.changelog_producer == "lookup"
              or opts.merge_engine == "first-row" or opts.get_bool("force-lookup")
              or opts.contains("compaction.optimization-interval"))
    units: list[CompactUnit] = []
    for m in written:
        files = [*tw.base_files(m.partition, m.bucket), *m.new_files]
        if not full and not lookup and sorted_runs_of(files) < trigger:
            continue  # universal compaction cannot fire below the trigger
        unit = pick_bucket_unit(table, m.partition, m.bucket, m.total_buckets, files,
                                index.get((m.partition, m.bucket), ()), full=full)
        if unit is not None:
            units.append(unit)
    return units


def _append_units(tw: TableWrite, written: list[CommitMessage]) -> list[CompactUnit]:
    """Fixed-bucket append tables: Java's BucketedAppendCompactManager needs at least
    ``compaction.min.file-num`` files in a bucket."""
    min_files = tw.options.get_int("compaction.min.file-num") or 5
    entries = []
    for m in written:
        files = [*tw.base_files(m.partition, m.bucket), *m.new_files]
        if len(files) < min_files:
            continue
        entries += [ManifestEntry(FileKind.ADD, m.partition, m.bucket, m.total_buckets, f) for f in files]
    if not entries:
        return []
    table = tw.compaction_table()
    if tw.base_snapshot is None:
        return list(plan_append_units(table, entries, False, index_files={}))
    return list(plan_append_units(table, entries, False, snapshot=tw.base_snapshot))


def _compaction_warning(table: FileStoreTable, tw: TableWrite, error: BaseException) -> str:
    """The write is published but its compaction is not: say so (not raised, so a retried
    write does not add the same rows twice)."""
    hidden = " -- until then readers do not see the new rows" if _needs_compaction_to_read(tw) else ""
    return (f"the rows were committed, but their compaction could not be ({error}); run "
            f"`paimon-cli compact {table.identifier}`{hidden}")


def _delete_uncommitted_compaction(table: FileStoreTable, commit: FileStoreCommit,
                                   compacted: list[UnitResult]) -> None:
    """Once the write's own snapshot is published: delete its compaction's files unless the
    COMPACT snapshot (always this committer's second) may have been published too."""
    if not commit.outcome_unknown and len(commit.published) < 2:
        _delete_written(table, compacted)


def _delete_written(table: FileStoreTable, results: list[UnitResult]) -> None:
    if results:
        delete_written(table, results)


def _needs_compaction_to_read(tw: TableWrite) -> bool:
    return tw.is_pk and (tw.options.deletion_vectors_enabled or tw.options.merge_engine == "first-row")
