"""Sorting a stream of tables with bounded memory (sort compaction's external sort).

Up to a budget of Arrow data is sorted in memory; a bigger input is sorted in chunks spilled
to local Arrow IPC files and merged back through memory maps, a window of every run at a
time, so memory stays bounded by the budget whatever the partition size (Java's
``BinaryExternalSortBuffer`` plays this part).
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .sort_keys import SortSpec, sort_indices_nulls_first

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa


def _spill_rows(nbytes: int, rows: int, budget: int) -> int:
    per_row = max(nbytes / max(rows, 1), 1.0)
    return max(1024, int(budget / 32 / per_row))


def sort_stream(
    tables: Iterator[pa.Table], spec: SortSpec, budget_bytes: int, spill_dir: str | None = None
) -> Iterator[pa.Table]:
    """The rows of ``tables`` sorted by ``spec`` (key column included), in pieces.

    Up to ``budget_bytes`` of Arrow data are sorted in memory; beyond that each full buffer
    is sorted and spilled as an Arrow IPC run to a temporary local directory, and the runs
    are merged back (:func:`_merge_runs`) through memory maps, a window of each at a time.
    """
    import pyarrow as pa

    buf: list[pa.Table] = []
    size = 0
    total_bytes = total_rows = 0
    runs: list[str] = []
    tmp: tempfile.TemporaryDirectory[str] | None = None
    try:
        for t in tables:
            if t.num_rows == 0:
                continue
            t = spec.with_key(t)
            buf.append(t)
            size += t.nbytes
            total_bytes += t.nbytes
            total_rows += t.num_rows
            if size >= budget_bytes:
                if tmp is None:
                    tmp = tempfile.TemporaryDirectory(prefix="paimon-cli-sort-", dir=spill_dir)
                runs.append(_spill(spec.sort(pa.concat_tables(buf)), tmp.name, len(runs), budget_bytes))
                buf, size = [], 0
        if not runs:
            if buf:
                yield spec.sort(pa.concat_tables(buf))
            return
        if buf:
            runs.append(_spill(spec.sort(pa.concat_tables(buf)), tmp.name, len(runs), budget_bytes))  # type: ignore[union-attr]
            buf = []
        yield from _merge_runs(runs, spec, budget_bytes, total_bytes / max(total_rows, 1))
    finally:
        if tmp is not None:
            tmp.cleanup()


def _spill(t: pa.Table, directory: str, index: int, budget: int) -> str:
    """One sorted run as an Arrow IPC file in batches small enough to merge many runs."""
    import pyarrow as pa

    path = f"{directory}/run-{index}.arrow"
    rows = _spill_rows(t.nbytes, t.num_rows, budget)
    with pa.OSFile(path, "wb") as sink, pa.ipc.new_file(sink, t.schema) as w:
        for b in t.to_batches(max_chunksize=rows):
            w.write_batch(b)
    return path


class _Run:
    """A spilled run read back through a memory map; the merge sees a window of at most
    ``window`` rows of it at a time (:attr:`buf`), so k runs hold about the budget together."""

    def __init__(self, path: str, window: int) -> None:
        import pyarrow as pa

        self.source = pa.memory_map(path, "r")
        self.reader = pa.ipc.open_file(self.source)
        self.window = window
        self.next_batch = 0
        self.batch: pa.Table | None = None
        self.offset = 0
        self.buf: pa.Table | None = None
        self._load()

    def _load(self) -> None:
        import pyarrow as pa

        self.batch, self.offset = None, 0
        while self.next_batch < self.reader.num_record_batches:
            b = self.reader.get_batch(self.next_batch)
            self.next_batch += 1
            if b.num_rows:
                self.batch = pa.Table.from_batches([b])
                break
        self._window()

    def _window(self) -> None:
        self.buf = None if self.batch is None else self.batch.slice(self.offset, self.window)

    @property
    def exhausted(self) -> bool:
        """No row left after the current window."""
        if self.batch is None or self.buf is None:
            return True
        return self.offset + self.buf.num_rows >= self.batch.num_rows and \
            self.next_batch >= self.reader.num_record_batches

    def consume(self, rows: int) -> None:
        """Drop the first ``rows`` of the window (they were emitted)."""
        if rows <= 0 or self.batch is None:
            return
        self.offset += rows
        if self.offset >= self.batch.num_rows:
            self._load()
        else:
            self._window()

    def close(self) -> None:
        self.batch = self.buf = None
        self.source.close()


def _merge_runs(paths: list[str], spec: SortSpec, budget_bytes: int, row_bytes: float) -> Iterator[pa.Table]:
    """K-way merge of sorted runs, batch-wise and vectorised.

    Each step takes the smallest LAST row among the runs that still have batches to come
    (the frontier): every buffered row that sorts at or before it can be emitted, because
    no later batch of any run can hold a smaller row. One Arrow sort of the buffered rows
    plus a marker row for the frontier finds them; each run loses a prefix of its buffer,
    and at least the frontier run's whole buffer goes, so every step makes progress.
    """
    import pyarrow as pa

    window = max(256, int(budget_bytes / 2 / max(len(paths), 1) / max(row_bytes, 1.0)))
    runs = [_Run(p, window) for p in paths]
    try:
        while True:
            active = [(r, r.buf) for r in runs if r.buf is not None]
            if not active:
                return
            bufs = [b for _, b in active]
            pending = [b for r, b in active if not r.exhausted]
            if not pending:
                yield spec.sort(pa.concat_tables(bufs))
                return
            lasts = pa.concat_tables([b.slice(b.num_rows - 1, 1) for b in pending])
            frontier = spec.sort(lasts).slice(0, 1)
            counts, rows = _emittable(bufs, frontier, spec.sort_keys)
            if len(rows):
                yield pa.concat_tables(bufs).take(pa.array(rows))
            for i, (r, _) in enumerate(active):
                r.consume(int(counts[i]))
    finally:
        for r in runs:
            r.close()


def _emittable(
    bufs: list[pa.Table], frontier: pa.Table, keys: list[tuple[str, str]]
) -> tuple[np.ndarray, np.ndarray]:
    """The buffered rows that sort at or before the ``frontier`` row: how many of each buffer
    (a prefix of it), and their positions in the buffers' concatenation, in sorted order."""
    import numpy as np
    import pyarrow as pa

    key_names = [k for k, _ in keys]
    parts = []
    for i, b in enumerate(bufs):
        parts.append(pa.table({
            **{k: b.column(k) for k in key_names},
            "__run": pa.array(np.full(b.num_rows, i, dtype=np.int32)),
            "__marker": pa.array(np.zeros(b.num_rows, dtype=np.int8)),
            "__pos": pa.array(np.arange(b.num_rows, dtype=np.int64)),
        }))
    parts.append(pa.table({
        **{k: frontier.column(k) for k in key_names},
        "__run": pa.array([-1], pa.int32()),
        "__marker": pa.array([1], pa.int8()),
        "__pos": pa.array([0], pa.int64()),
    }))
    union = pa.concat_tables(parts)
    order = sort_indices_nulls_first(union, [*keys, ("__marker", "ascending")])
    order_np = order.to_numpy()
    marker = np.asarray(union.column("__marker").to_numpy())
    cut = int(np.flatnonzero(marker[order_np] == 1)[0])
    run_ids = np.asarray(union.column("__run").to_numpy())[order_np[:cut]]
    counts = np.bincount(run_ids, minlength=len(bufs))
    # emitted rows per run form a prefix of its buffer: take them in global order
    offsets = np.concatenate([[0], np.cumsum([b.num_rows for b in bufs])[:-1]])
    global_rows = offsets[run_ids] + np.asarray(union.column("__pos").to_numpy())[order_np[:cut]]
    return counts, global_rows
