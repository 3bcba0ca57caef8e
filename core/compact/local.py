"""Running compaction units in this process (and the pieces the Spark engine shares).

A unit only reads its input files and writes new ones; it never commits. That keeps the
engines interchangeable: the local engine runs units on a small thread pool (pyarrow's
decoding, sorting and Parquet encoding release the GIL, so threads overlap real work), the
Spark engine ships the same units to tasks. Both hand the driver a list of UnitResults in
unit order, or raise after every unit has stopped -- the driver then deletes what the
finished units wrote, so a failed job leaves no files behind.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, wait
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import NotYetSupported, PaimonError
from ..io.fileio import FileIO, RefreshingFileIO
from ..mergetree.compact_task import run_merge_tree_unit
from ..mergetree.compact_unit import APPEND, DATA_EVOLUTION, MERGE_TREE, CompactUnit, UnitResult
from ..table.file_store_table import FileStoreTable
from ..table.identifiers import Identifier
from ..utils.interrupt import discard
from ..utils.workers import worker_pool

if TYPE_CHECKING:
    from ..schema.table_schema import TableSchema

# progress(event, unit, done, total): event "start" before a unit runs, "done" after it finished
# (unit is None for sort compaction, which reports whole partitions)
Progress = Callable[[str, "CompactUnit | None", int, int], None]

DEFAULT_LOCAL_THREADS = 4


@dataclass(frozen=True)
class TableRef:
    """Everything a worker needs to re-open the table exactly as the driver planned it.

    The schema travels with the reference (not re-read from storage), so a schema change
    committed while the job runs cannot make a task read or write with another schema.
    """

    root: str  # the FileIO root (warehouse URI) the storage options belong to
    storage_options: dict[str, Any]
    path: str  # the table directory
    identifier: str  # "db.table"
    branch: str | None
    schema: TableSchema

    @classmethod
    def of(cls, table: FileStoreTable) -> TableRef:
        fio = table.file_io
        if isinstance(fio, RefreshingFileIO):
            raise NotYetSupported(f"{table.identifier}: the table is read with a REST catalog's short-lived data "
                                  "token, which Spark executors could not renew; run it with --engine local")
        return cls(fio.root, dict(fio.storage_options), table.path, str(table.identifier), table.branch,
                   table.schema)

    def open(self) -> FileStoreTable:
        file_io = FileIO(self.root, self.storage_options)
        return FileStoreTable(file_io, self.path, Identifier.parse(self.identifier), self.branch, self.schema)


def execute_unit(table: FileStoreTable, unit: CompactUnit) -> UnitResult:
    """Run one unit with the executor of its kind (merge-tree or append)."""
    started = time.monotonic()
    if unit.kind == MERGE_TREE:
        result = run_merge_tree_unit(table, unit)
    elif unit.kind == APPEND:
        from .append import run_append_unit  # each kind's executor loads when a unit of it runs

        result = run_append_unit(table, unit)
    elif unit.kind == DATA_EVOLUTION:
        from .data_evolution import run_data_evolution_unit

        result = run_data_evolution_unit(table, unit)
    else:
        raise PaimonError(f"compaction unit of unknown kind {unit.kind!r}")
    if not result.seconds:
        result.seconds = time.monotonic() - started
    return result


class UnitsFailed(Exception):
    """Some units failed; ``results`` are those that finished (their files must be deleted)."""

    def __init__(self, error: BaseException, results: list[UnitResult]) -> None:
        super().__init__(str(error))
        self.error = error
        self.results = results


def local_threads(parallelism: int | None, units: int) -> int:
    """Threads for the local engine: ``--parallelism`` or min(4, CPUs), never more than units."""
    n = parallelism if parallelism and parallelism > 0 else min(DEFAULT_LOCAL_THREADS, os.cpu_count() or 1)
    return max(1, min(n, units))


def run_local(
    table: FileStoreTable,
    units: Sequence[CompactUnit],
    parallelism: int | None = None,
    progress: Progress | None = None,
) -> list[UnitResult]:
    """Run ``units`` in this process; results in unit order.

    On the first failure no further unit starts; running ones finish, and
    :class:`UnitsFailed` carries the error and the finished results.
    """
    total = len(units)
    threads = local_threads(parallelism, total)
    results: list[UnitResult | None] = [None] * total
    done = 0
    if threads <= 1:
        for i, unit in enumerate(units):
            if progress is not None:
                progress("start", unit, done, total)
            try:
                results[i] = execute_unit(table, unit)
            except BaseException as e:  # noqa: BLE001 - re-raised with the finished results
                raise UnitsFailed(e, [r for r in results if r is not None]) from e
            done += 1
            if progress is not None:
                progress("done", unit, done, total)
        return [r for r in results if r is not None]

    return _run_threaded(table, units, threads, progress)


def _run_threaded(
    table: FileStoreTable, units: Sequence[CompactUnit], threads: int, progress: Progress | None
) -> list[UnitResult]:
    """:func:`run_local` on ``threads`` threads, biggest units first."""
    total = len(units)
    results: list[UnitResult | None] = [None] * total
    done = 0
    lock = threading.Lock()
    failed = threading.Event()

    def run(i: int) -> None:
        nonlocal done
        if failed.is_set():
            return
        unit = units[i]
        if progress is not None:
            with lock:
                progress("start", unit, done, total)
        try:
            results[i] = execute_unit(table, unit)
        except BaseException:
            failed.set()
            raise
        with lock:
            done += 1
            if progress is not None:
                progress("done", unit, done, total)

    # biggest units first: a long unit started last would leave the other threads idle
    order = sorted(range(total), key=lambda i: -units[i].bytes_in)
    futures: list[Any] = []
    try:
        with worker_pool(threads, "paimon-compact") as pool:
            futures = [pool.submit(run, i) for i in order]
            wait(futures, return_when=FIRST_EXCEPTION)
            if failed.is_set():
                for f in futures:
                    f.cancel()
    except BaseException as e:  # noqa: BLE001 - interrupted: the pool is joined, the finished units are known
        raise UnitsFailed(e, [r for r in results if r is not None]) from e
    errors = [f.exception() for f in futures if not f.cancelled() and f.exception() is not None]
    if errors:
        raise UnitsFailed(errors[0], [r for r in results if r is not None]) from errors[0]
    return [r for r in results if r is not None]


def delete_written(table: FileStoreTable, results: Sequence[UnitResult]) -> int:
    """Best-effort removal of every file the units wrote; returns how many were deleted."""
    return discard(table.file_io, [path for r in results for path in r.written])
