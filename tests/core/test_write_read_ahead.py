"""The write job reads its input one chunk ahead on a worker thread (issue 28, PK write speed):
same files and metas as the plain loop, failures and early stops behave as before."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact import write_job
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.format import input as input_mod
from paimon_cli.core.format import input_readers
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.utils.workers import read_ahead


def _threads(prefix: str) -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith(prefix)]


def test_read_ahead_yields_in_order_and_advances_on_a_worker() -> None:
    where: list[bool] = []

    def source() -> Iterator[int]:
        for i in range(50):
            where.append(threading.current_thread() is threading.main_thread())
            yield i

    assert list(read_ahead(source(), "t-ahead")) == list(range(50))
    assert where and not any(where)  # never advanced on the consumer's thread
    assert not _threads("t-ahead")


def test_read_ahead_failure_surfaces_at_its_item() -> None:
    def source() -> Iterator[int]:
        yield 1
        yield 2
        raise InvalidInput("bad row 3")

    got: list[int] = []
    with pytest.raises(InvalidInput, match="bad row 3"):
        for x in read_ahead(source(), "t-ahead"):
            got.append(x)
    assert got == [1, 2] and not _threads("t-ahead")


def test_read_ahead_closed_early_joins_and_closes_its_source() -> None:
    closed = threading.Event()
    advanced = []

    def source() -> Iterator[int]:
        try:
            for i in range(1000):
                advanced.append(i)
                yield i
        finally:
            closed.set()

    gen = read_ahead(source(), "t-ahead")
    assert next(gen) == 0
    gen.close()
    assert closed.is_set() and not _threads("t-ahead")
    assert len(advanced) <= 2  # one item ahead, not more


def _make(cat: FileSystemCatalog, name: str) -> Any:
    cat.create_table(f"db.{name}", Schema.of(
        parse_columns("id BIGINT NOT NULL, dt STRING NOT NULL, qty INT, name STRING"),
        partition_keys=("dt",), primary_keys=("dt", "id"), options={"bucket": "3"}))
    return cat.get_table(f"db.{name}")


def _inputs(tmp_path: Path) -> list[str]:
    """Two Parquet files of many small row groups (many chunks), with duplicate keys inside and
    across files, so the order chunks arrive in decides the sequence numbers and the merge."""
    rng = np.random.default_rng(7)
    out = []
    for k in range(2):
        ids = rng.integers(0, 3000, 5000)
        t = pa.table({"id": pa.array(ids, pa.int64()),
                      "dt": pa.array([f"d{i % 4}" for i in ids]),
                      "qty": pa.array(np.arange(5000, dtype=np.int32) + 10_000 * k),
                      "name": pa.array([None if i % 7 == 0 else f"n{k}-{i}" for i in range(5000)])})
        p = tmp_path / f"in-{k}.parquet"
        pq.write_table(t, p, row_group_size=700)
        out.append(str(p))
    return out


def _written(table: Any) -> list[tuple[Any, ...]]:
    """Every live file as (partition, bucket, meta without name/time, file rows)."""
    from paimon_cli.core.data import binary_row
    from paimon_cli.core.format.arrow_schema import key_value_file_fields
    from paimon_cli.core.format.data_file import read_data_file
    from paimon_cli.core.io import paths

    out = []
    for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()):
        f = e.file
        part = paths.partition_path_for(table.schema, binary_row.deserialize(e.partition, table.schema.partition_types))
        rows = read_data_file(table.file_io, paths.data_file_path(table.path, part, e.bucket, f.file_name),
                              key_value_file_fields(table.schema)).to_pylist()
        meta = (f.row_count, f.min_key, f.max_key, f.key_stats, f.value_stats, f.min_sequence_number,
                f.max_sequence_number, f.delete_row_count, f.level, f.value_stats_cols)
        out.append((e.partition, e.bucket, meta, rows))
    return sorted(out, key=lambda x: (x[0], x[1], x[2][5]))


def test_read_ahead_writes_the_same_files_as_the_plain_loop(tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(input_readers, "_BATCH_ROWS", 300)  # 3 batches a row group of 700
    readers: list[str] = []
    real = input_mod.read_parquet

    def spy(*a: Any, **k: Any) -> Iterator[pa.Table]:
        for t in real(*a, **k):
            readers.append(threading.current_thread().name)
            yield t

    monkeypatch.setattr(input_mod, "read_parquet", spy)
    inputs = _inputs(tmp_path)
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    got = {}
    for ahead in (False, True):
        monkeypatch.setattr(write_job, "READ_AHEAD", ahead)
        readers.clear()
        t = _make(cat, f"t{int(ahead)}")
        write_table(t, inputs[:1])
        write_table(t, inputs)  # a second commit: sequence numbers continue
        got[ahead] = _written(t)
        on_main = [n == threading.current_thread().name for n in readers]
        assert len(on_main) == 3 * 22  # 3 files read, 22 chunks each
        assert all(on_main) != ahead and any(on_main) != ahead
    assert got[True] == got[False]
    for *_, rows in got[True]:  # each file sorted by key, duplicates of one write merged
        keys = [r["_KEY_id"] for r in rows]
        assert keys == sorted(set(keys))
    assert len(got[True]) > 12


def test_read_ahead_failure_in_a_later_file_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(input_readers, "_BATCH_ROWS", 300)
    monkeypatch.setattr(write_job, "READ_AHEAD", True)
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    t = _make(cat, "t")
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.table({"id": pa.array([1, None], pa.int64()), "dt": ["d1", "d1"], "qty": [1, 2],
                             "name": ["a", "b"]}), bad)
    with pytest.raises(InvalidInput, match="bad.parquet"):
        write_table(t, [*_inputs(tmp_path), str(bad)])
    assert t.snapshot_manager.latest_snapshot() is None
    assert not list(Path(t.path).rglob("data-*")) and not _threads("paimon-write-input")
