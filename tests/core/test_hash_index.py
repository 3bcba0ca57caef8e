"""HASH index files and the dynamic bucket assigner (Java HashBucketAssigner semantics)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import BigIntType, IntType, VarCharType
from paimon_cli.core.errors import CorruptMetadata, InvalidInput, NotYetSupported, PaimonError
from paimon_cli.core.index.hash_index import (
    DynamicBucketAssigner,
    HashIndexChange,
    IndexFileNamer,
    _JavaBucketMap,
    decode_hashes,
    encode_hashes,
    index_file_path,
    read_hash_index,
    write_hash_index,
)
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import FileStoreTable

P0 = binary_row.EMPTY_ROW


# ---------------------------------------------------------------------------- files


def test_hash_file_is_bare_big_endian_int32(tmp_path: Path) -> None:
    h = np.array([1, -1, 2**31 - 1, -(2**31), 0x01020304], dtype=np.int32)
    data = encode_hashes(h)
    assert data == bytes.fromhex("00000001" "ffffffff" "7fffffff" "80000000" "01020304")
    assert decode_hashes(data).tolist() == h.tolist()
    fio = FileIO(str(tmp_path))
    namer = IndexFileNamer()
    meta = write_hash_index(fio, str(tmp_path / "index"), h, namer)
    assert meta.index_type == "HASH" and meta.row_count == 5 and meta.file_size == 20
    assert meta.file_name == f"index-{namer.base}-0" and namer.next().endswith("-1")
    assert (tmp_path / "index" / meta.file_name).read_bytes() == data
    assert read_hash_index(fio, str(tmp_path / "index" / meta.file_name)).tolist() == h.tolist()
    assert index_file_path(str(tmp_path), meta) == str(tmp_path / "index" / meta.file_name)
    with pytest.raises(CorruptMetadata, match="multiple of 4"):
        decode_hashes(b"\x00\x00\x01", "x")


# ---------------------------------------------------------------------------- HashMap order


def test_java_hash_map_order_models_capacity() -> None:
    m = _JavaBucketMap()
    for b in (0, 1, 2, 3):
        m.load_file(b, 5)
    assert m.ordered() == [0, 1, 2, 3] and m.capacity == 16
    # sparse ids (assigner 1 of 4 owns 1, 5, 9, ...): 17 wraps into slot 1 of a 16-slot table
    s = _JavaBucketMap()
    for b in (1, 5, 9, 13):
        s.load_file(b, 1)
    s.put_new(17, 1)
    assert s.ordered() == [1, 17, 5, 9, 13]
    s.remove(1)
    assert s.ordered() == [17, 5, 9, 13]
    # growing past 12 entries doubles the table: 33 then shares slot 1 with bucket 1
    g = _JavaBucketMap()
    for b in range(13):
        g.put_new(b, 1)
    assert g.capacity == 32
    g.put_new(33, 1)
    assert g.ordered()[:3] == [0, 1, 33]


# ---------------------------------------------------------------------------- assigner


def _table(tmp_path: Path, options: dict[str, str], partitioned: bool = False, name: str = "t") -> FileStoreTable:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cols = [("id", IntType(nullable=False), None), ("v", VarCharType(), None)]
    if partitioned:
        cols.append(("dt", VarCharType(nullable=False), None))
    schema = Schema.of(cols, partition_keys=["dt"] if partitioned else [],
                       primary_keys=["id", "dt"] if partitioned else ["id"], options={"bucket": "-1", **options})
    cat.create_table(f"db.{name}", schema, ignore_if_exists=True)
    return cat.get_table(f"db.{name}")


def _reload(t: FileStoreTable) -> FileStoreTable:
    return FileSystemCatalog(str(Path(t.path).parent.parent)).get_table(str(t.identifier))


def _commit(t: FileStoreTable, changes: list[HashIndexChange]) -> None:
    msgs: dict[tuple[bytes, int], CommitMessage] = {}
    for c in changes:
        m = msgs.setdefault((c.partition, c.bucket), CommitMessage(c.partition, c.bucket, -1))
        m.new_index_files.append(c.new_file)
        if c.old_file is not None:
            m.deleted_index_files.append(c.old_file)
    FileStoreCommit(t).commit(list(msgs.values()))


class _JavaModel:
    """Per-hash port of PartitionIndex.assign for one assigner (buckets in ascending order)."""

    def __init__(self, target: int, existing: dict[int, int] | None = None, counts: dict[int, int] | None = None) -> None:
        self.target = target
        self.hash2bucket = dict(existing or {})
        self.nonfull = dict(sorted((counts or {}).items()))
        self.total = set(self.nonfull)

    def assign(self, h: int) -> int:
        if h in self.hash2bucket:
            return self.hash2bucket[h]
        for b in sorted(self.nonfull):
            if self.nonfull[b] < self.target:
                self.nonfull[b] += 1
                self.hash2bucket[h] = b
                return b
            del self.nonfull[b]
        b = next(i for i in range(32767) if i not in self.total)
        self.nonfull[b] = 1
        self.total.add(b)
        self.hash2bucket[h] = b
        return b


def test_assign_equals_per_hash_java_model_over_batches(tmp_path: Path) -> None:
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "7"})
    a = DynamicBucketAssigner(t)
    model = _JavaModel(7)
    rng = np.random.default_rng(3)
    for size in (1, 0, 50, 13, 200, 5):
        batch = rng.integers(-60, 60, size).astype(np.int32)  # many repeats within and across batches
        assert a.assign(P0, batch).tolist() == [model.assign(int(h)) for h in batch]
    assert a.bucket_row_counts(P0) == {b: sum(1 for v in model.hash2bucket.values() if v == b) for b in model.total}


def test_index_round_trip_existing_keys_keep_buckets(tmp_path: Path) -> None:
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "3"})
    a = DynamicBucketAssigner(t)
    first = np.array([10, 11, 10, 12, 13, 14, 15, 16], dtype=np.int32)
    assert a.assign(P0, first).tolist() == [0, 0, 0, 0, 1, 1, 1, 2]
    changes = a.index_changes()
    assert [(c.bucket, c.new_file.row_count, c.old_file) for c in changes] == [(0, 3, None), (1, 3, None), (2, 1, None)]
    assert a.index_changes() == []  # nothing new since
    files = {c.bucket: read_hash_index(t.file_io, index_file_path(t.path, c.new_file)).tolist() for c in changes}
    assert files == {0: [10, 11, 12], 1: [13, 14, 15], 2: [16]}
    _commit(t, changes)

    t = _reload(t)
    b = DynamicBucketAssigner(t)
    # old keys keep their buckets; new keys first fill bucket 2 (1 of 3), then open bucket 3
    assert b.assign(P0, np.array([16, 20, 10, 21, 22, 15], dtype=np.int32)).tolist() == [2, 2, 0, 2, 3, 1]
    changes2 = b.index_changes()
    assert [(c.bucket, c.new_file.row_count) for c in changes2] == [(2, 3), (3, 1)]
    old2 = next(c for c in changes2 if c.bucket == 2)
    assert old2.old_file == next(c.new_file for c in changes if c.bucket == 2)
    # the old file's bytes stay a prefix: rewriting an unchanged file is byte-identical
    new_bytes = Path(index_file_path(t.path, old2.new_file)).read_bytes()
    assert new_bytes == encode_hashes(np.array([16, 20, 21], dtype=np.int32))
    _commit(t, changes2)
    entries = FileStoreScan(t).index_entries(_reload(t).snapshot_manager.latest_snapshot())
    assert sorted((e.bucket, e.index_file.row_count) for e in entries) == [(0, 3), (1, 3), (2, 3), (3, 1)]


def test_partitions_are_independent(tmp_path: Path) -> None:
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "2"}, partitioned=True)
    p1 = binary_row.serialize(["a"], t.schema.partition_types)
    p2 = binary_row.serialize(["b"], t.schema.partition_types)
    a = DynamicBucketAssigner(t)
    assert a.assign(p1, np.array([1, 2, 3], dtype=np.int32)).tolist() == [0, 0, 1]
    assert a.assign(p2, np.array([3, 4, 5], dtype=np.int32)).tolist() == [0, 0, 1]
    changes = a.index_changes()
    assert sorted((c.partition, c.bucket, c.new_file.row_count) for c in changes) == sorted(
        [(p1, 0, 2), (p1, 1, 1), (p2, 0, 2), (p2, 1, 1)])
    _commit(t, changes)
    b = DynamicBucketAssigner(_reload(t))
    assert b.assign(p2, np.array([9, 5, 3], dtype=np.int32)).tolist() == [1, 1, 0]
    assert b.assign(p1, np.array([2], dtype=np.int32)).tolist() == [0]


def test_max_buckets_then_random_existing_bucket(tmp_path: Path) -> None:
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "2", "dynamic-bucket.max-buckets": "3"})
    a = DynamicBucketAssigner(t, seed=1)
    h = np.arange(100, dtype=np.int32)
    got = a.assign(P0, h)
    assert got[:6].tolist() == [0, 0, 1, 1, 2, 2]
    assert set(got[6:].tolist()) == {0, 1, 2}  # random among the existing, never a 4th bucket
    assert a.assign(P0, h[::-1]).tolist() == got[::-1].tolist()  # remembered


def test_unlimited_buckets_run_out_of_short_ids(tmp_path: Path) -> None:
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "1000"})
    a = DynamicBucketAssigner(t)
    a.target_row_num = 1
    a.assign(P0, np.arange(32767, dtype=np.int32))
    with pytest.raises(PaimonError, match="target-row-num"):
        a.assign(P0, np.array([99999], dtype=np.int32))


def test_initial_buckets_spread_keys_over_assigners(tmp_path: Path) -> None:
    """initial-buckets=4 acts like 4 Java assigners: key routed by hash, bucket % 4 = assigner."""
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "1000", "dynamic-bucket.initial-buckets": "4"})
    a = DynamicBucketAssigner(t)
    assert (a.num_channels, a.num_assigners) == (4, 4)
    h = np.arange(-50, 50, dtype=np.int32)
    got = a.assign(P0, h)
    start = abs(int(np.fmod(binary_row.hash_row_bytes(P0[4:]), 4)))
    channel = (start + np.abs(np.fmod(h.astype(np.int64), 4))) % 4
    assert (got == channel).all()  # each assigner opens its own first bucket
    single = DynamicBucketAssigner(_table(tmp_path, {"dynamic-bucket.target-row-num": "1000"}, name="single"))
    assert (single.num_channels, single.num_assigners) == (1, 1)
    assert set(single.assign(P0, h).tolist()) == {0}


def test_ignore_existing_is_the_overwrite_assigner(tmp_path: Path) -> None:
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "2"})
    a = DynamicBucketAssigner(t)
    a.assign(P0, np.array([1, 2, 3], dtype=np.int32))
    _commit(t, a.index_changes())
    o = DynamicBucketAssigner(_reload(t), ignore_existing=True)
    assert o.assign(P0, np.array([3, 9], dtype=np.int32)).tolist() == [0, 0]
    assert [(c.bucket, c.old_file) for c in o.index_changes()] == [(0, None)]


def test_abort_deletes_written_files(tmp_path: Path) -> None:
    t = _table(tmp_path, {})
    a = DynamicBucketAssigner(t)
    a.assign(P0, np.array([1], dtype=np.int32))
    a.index_changes()
    (path,) = a.written_files
    assert Path(path).exists()
    a.abort()
    assert not Path(path).exists() and a.written_files == []


def test_rejects_unsuitable_tables(tmp_path: Path) -> None:
    cat = FileSystemCatalog(str(tmp_path / "wh"))
    cols = [("id", BigIntType(nullable=False), None), ("dt", VarCharType(nullable=False), None)]
    fixed = cat.create_table("db.fixed", Schema.of(cols, primary_keys=["id"], options={"bucket": "2"}))
    with pytest.raises(InvalidInput, match="bucket = -1"):
        DynamicBucketAssigner(fixed)
    cross = cat.create_table("db.cross", Schema.of(cols, partition_keys=["dt"], primary_keys=["id"], options={"bucket": "-1"}))
    with pytest.raises(NotYetSupported, match="cross-partition"):
        DynamicBucketAssigner(cross)


def test_large_batch_fills_buckets_in_order(tmp_path: Path) -> None:
    """1M hashes, ~500k distinct: buckets fill to the target one after another."""
    t = _table(tmp_path, {"dynamic-bucket.target-row-num": "100000"})
    a = DynamicBucketAssigner(t)
    h = np.random.default_rng(0).integers(-(2**31), 2**31 - 1, 1_000_000).astype(np.int32)
    h[::2] = h[1::2]
    got = a.assign(P0, h)
    assert (got[::2] == got[1::2]).all()
    distinct = len(np.unique(h))
    counts = a.bucket_row_counts(P0)
    assert sum(counts.values()) == distinct
    assert counts == {b: min(100000, distinct - 100000 * b) for b in range(5)}
    _, first = np.unique(h, return_index=True)
    assert (np.diff(got[np.sort(first)]) >= 0).all()  # first appearances walk the buckets in order
