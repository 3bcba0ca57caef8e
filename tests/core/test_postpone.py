"""Postpone-bucket tables (``bucket = -2``) without a peer: the staged writer's files, their
replay order through compaction, retractions, and each partition's bucket number.
(pypaimon interop: tests/interop/test_postpone_compact_pypaimon.py.)"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.compact.postpone import replay_order
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.operation import postpone
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.table_schema import Schema


@pytest.fixture
def cat(tmp_path: Path) -> FileSystemCatalog:
    return FileSystemCatalog(str(tmp_path / "wh"))


def make(cat: FileSystemCatalog, name: str, **options: str) -> Any:
    cat.create_table(f"db.{name}", Schema.of(parse_columns("id BIGINT NOT NULL, dt STRING NOT NULL, v BIGINT"),
                                             partition_keys=("dt",), primary_keys=("id", "dt"),
                                             options={"bucket": "-2", **options}))
    return cat.get_table(f"db.{name}")


def live(table: Any) -> list[Any]:
    return FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())


def rows(table: Any) -> list[tuple[Any, ...]]:
    return sorted((r["dt"], r["id"], r["v"]) for r in TableRead(table).to_arrow().to_pylist())


def test_staged_files_replay_in_write_order(cat: FileSystemCatalog, tmp_path: Path) -> None:
    """A small write buffer flushes many times into one writer per bucket (one uuid, files
    counted up); several writes make several writers. Compaction replays writers in creation
    order and each file in row order, so the last value written for a key wins."""
    t = make(cat, "t", **{"postpone.batch-write-fixed-bucket": "false", "write-buffer-size": "4 kb"})
    expected: dict[int, int] = {}
    v = 0
    for w in range(3):
        lines = []
        for i in range(2000):
            k = (i * 7 + w) % 60
            lines.append(f"{k},a,{v}\n")
            expected[k] = v
            v += 1
        src = tmp_path / f"in{w}.csv"
        src.write_text("id,dt,v\n" + "".join(lines))
        write_table(cat.get_table("db.t"), [str(src)])
    t = cat.get_table("db.t")
    staged = sorted((e.file for e in live(t)), key=replay_order)
    assert all(e.bucket == -2 for e in live(t)) and len(staged) >= 3
    writers = [postpone.writer_prefix(f.file_name) for f in staged]
    assert len(set(writers)) == 3 and writers == sorted(writers, key=writers.index)  # grouped per writer
    assert sum(f.row_count for f in staged) == 6000  # nothing merged before compaction
    assert rows(t) == []
    compact_table(t)
    assert rows(t) == sorted(("a", k, val) for k, val in expected.items())
    assert {e.total_buckets for e in live(t)} == {1} and all(e.bucket == 0 for e in live(t))


def test_staged_retractions_delete_through_compaction(cat: FileSystemCatalog) -> None:
    t = make(cat, "d", **{"postpone.default-bucket-num": "2"})
    tw = TableWrite(t)
    tw.write_arrow(pa.table({"id": pa.array([1, 2, 3], pa.int64()), "dt": ["a"] * 3, "v": pa.array([1, 2, 3],
                                                                                                 pa.int64())}))
    from paimon_cli.core.operation.commit import FileStoreCommit

    FileStoreCommit(t).commit(tw.prepare_commit())
    assert rows(t) == [("a", 1, 1), ("a", 2, 2), ("a", 3, 3)]  # fixed-bucket write: visible at once
    assert {e.total_buckets for e in live(t)} == {2}
    t = cat.get_table("db.d")
    tw = TableWrite(t, {"postpone.batch-write-fixed-bucket": "false"}, commit_user="u1")
    tw.write_arrow(pa.table({"id": pa.array([2, 4], pa.int64()), "dt": ["a", "b"],
                             "v": pa.array([0, 4], pa.int64())}), row_kinds=[3, 0])
    msgs = tw.prepare_commit()
    assert all(m.bucket == -2 and m.total_buckets == -2 for m in msgs)
    assert all(f.file_name.startswith("data--u-u1-s-") for m in msgs for f in m.new_files)
    FileStoreCommit(t, "u1").commit(msgs)
    compact_table(t)
    assert rows(t) == [("a", 1, 1), ("a", 3, 3), ("b", 4, 4)]
    by_part = {(e.partition, e.total_buckets) for e in live(t)}
    assert {tb for _, tb in by_part} == {2}  # dt=a kept its 2; dt=b took the default 2


def test_bucket_number_of_a_new_partition(cat: FileSystemCatalog, tmp_path: Path) -> None:
    t = make(cat, "n", **{"postpone.batch-write-fixed-bucket": "false",
                          "postpone.target-row-num-per-bucket": "10"})
    src = tmp_path / "in.csv"
    src.write_text("id,dt,v\n" + "".join(f"{i},a,{i}\n" for i in range(25)))
    write_table(t, [str(src)])
    nums = postpone.BucketNums.of(t, live(t))
    assert nums(live(t)[0].partition) == 3  # ceil(25 staged rows / 10)
    compact_table(t)
    assert {e.total_buckets for e in live(t)} == {3}
    assert rows(t) == [("a", i, i) for i in range(25)]
