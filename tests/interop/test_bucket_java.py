"""Bucket hashing and dynamic-bucket HASH indexes against the real Java Paimon 0.9.

Why: a Python writer that buckets a key differently from Java splits that key across two
buckets (duplicates on read, lost updates). Proof: Java writes fixed-bucket tables of many
key types; for every row of every data file Java wrote, ``bucket_ids(bucket_hashes(keys))``
must be the bucket Java put it in. For dynamic buckets, our assigner loading Java's HASH
index maps every existing key to Java's bucket, predicts the bucket of every NEW key
before Java writes it, writes HASH files byte-identical to Java's, and Java's own assigner
honours HASH files we wrote.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import defaultdict
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.index.bucket import bucket_hashes, bucket_ids, bucket_key_fields
from paimon_cli.core.index.hash_index import (
    DynamicBucketAssigner,
    decode_hashes,
    encode_hashes,
    index_file_path,
    read_hash_index,
)
from paimon_cli.core.io import paths
from paimon_cli.core.mergetree.commit_message import CommitMessage
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.table.file_store_table import FileStoreTable

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
D1, D2 = "2024-01-01", "2024-01-02"
N = 120


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("bucket-wh"))


def _table(wh: str, name: str) -> FileStoreTable:
    return FileSystemCatalog(wh).get_table(f"{DB}.{name}")


def _s(i: int) -> str:
    # unique keys: empty, 1..7-byte (inline) and longer (variable part) strings, some non-ASCII
    if i == 0:
        return ""
    return [str(i), f"k{i}", f"ke-{i}", f"key--{i}", f"naïve-{i}", f"a-much-longer-key-{i:05d}-ü"][i % 6]


KEY_GENS: dict[str, Any] = {
    "INT": lambda i: (i * 7919) % 100_003 - 50_000,
    "BIGINT": lambda i: i * 1_000_000_007 - 10**12,
    "STRING": _s,
    "DECIMAL(10, 2)": lambda i: decimal.Decimal(i * 1234567 - 50_000_000).scaleb(-2),
    "DECIMAL(25, 4)": lambda i: decimal.Decimal((i - N // 2) * 10**(i % 22) + i).scaleb(-4),
    "TIMESTAMP(3)": lambda i: dt.datetime(1969, 12, 31, 23, 59, 59) + dt.timedelta(minutes=i * 37, milliseconds=i),
    "TIMESTAMP(6)": lambda i: dt.datetime(1960, 1, 1) + dt.timedelta(days=i * 101, microseconds=i * 12345),
    "DATE": lambda i: dt.date(1950, 1, 1) + dt.timedelta(days=i * 211),
    "TINYINT": lambda i: (i % 256) - 128,
    "SMALLINT": lambda i: i * 250 - 15000,
    "BOOLEAN": lambda i: i % 2 == 0,
    "BYTES": lambda i: bytes(range(i % 13)) + bytes([i % 256]),
    "DOUBLE": lambda i: i * 1.25 - 40.5,
}

# name -> (key columns (name, type), partition column?, options)
FIXED_TABLES: dict[str, tuple[list[tuple[str, str]], bool, dict[str, str]]] = {
    "k_int": ([("k", "INT")], False, {"bucket": "7"}),
    "k_bigint": ([("k", "BIGINT")], False, {"bucket": "5"}),
    "k_string": ([("k", "STRING")], False, {"bucket": "4"}),
    "k_string_int": ([("s", "STRING"), ("i", "INT")], False, {"bucket": "6"}),
    "k_dec10": ([("k", "DECIMAL(10, 2)")], False, {"bucket": "3"}),
    "k_dec25": ([("k", "DECIMAL(25, 4)")], False, {"bucket": "5"}),
    "k_ts3": ([("k", "TIMESTAMP(3)")], False, {"bucket": "4"}),
    "k_ts6": ([("k", "TIMESTAMP(6)")], False, {"bucket": "4"}),
    "k_date": ([("k", "DATE")], False, {"bucket": "3"}),
    "k_part": ([("s", "STRING"), ("i", "INT")], True, {"bucket": "5"}),
    "k_bucket_key": ([("i", "INT"), ("s", "STRING")], True, {"bucket": "4", "bucket-key": "s"}),
    "k_mixed": (
        [("t", "TINYINT"), ("sm", "SMALLINT"), ("b", "BOOLEAN"), ("by", "BYTES"), ("d", "DOUBLE"), ("ts", "TIMESTAMP(6)")],
        True,
        {"bucket": "8"},
    ),
}


def _rows(keys: list[tuple[str, str]], partitioned: bool, n: int = N) -> list[dict[str, Any]]:
    out = []
    for i in range(n):
        r = {name: KEY_GENS[t](i) for name, t in keys}
        if partitioned:
            r["dt"] = D1 if i % 3 else D2
        r["v"] = f"v{i}"
        out.append(r)
    return out


def _key_table_rows(table: FileStoreTable) -> list[tuple[Any, ...]]:
    """(partition bytes, bucket, _KEY_ columns as an Arrow table) of every live data file."""
    schema = table.schema
    out = []
    for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()):
        part_values = binary_row.deserialize(e.partition, schema.partition_types) if schema.partition_keys else []
        path = paths.data_file_path(table.path, paths.partition_path_for(schema, part_values), e.bucket, e.file.file_name)
        assert path.endswith(".parquet")
        out.append((e.partition, e.bucket, pq.read_table(path)))
    return out


@pytest.mark.parametrize("name", list(FIXED_TABLES))
def test_fixed_bucket_of_every_java_row(java_paimon: JavaPaimon, wh: str, name: str) -> None:
    keys, partitioned, opts = FIXED_TABLES[name]
    cols = [*keys, ("v", "STRING")] + ([("dt", "STRING")] if partitioned else [])
    pk = [k for k, _ in keys] + (["dt"] if partitioned else [])
    java_paimon.create_table(wh, DB, name, cols, pk, ["dt"] if partitioned else [], {**opts, "file.format": "parquet"})
    java_paimon.write(wh, DB, name, _rows(keys, partitioned))
    table = _table(wh, name)
    num_buckets = int(opts["bucket"])
    fields = bucket_key_fields(table.schema)
    assert [f.name for f in fields] == (opts["bucket-key"].split(",") if "bucket-key" in opts else [k for k, _ in keys])
    checked, buckets_seen = 0, set()
    for _, bucket, data in _key_table_rows(table):
        ours = bucket_ids(bucket_hashes(data, fields), num_buckets)  # finds the _KEY_<name> columns
        assert (ours == bucket).all(), f"{name}: {int((ours != bucket).sum())} rows of bucket {bucket} hash elsewhere"
        checked += data.num_rows
        buckets_seen.add(bucket)
    assert checked == N
    assert len(buckets_seen) > 1  # the check is not vacuous


# ---------------------------------------------------------------------------- dynamic bucket

DYN_COLS = [("id", "INT"), ("dt", "STRING"), ("v", "STRING")]


def _dyn_rows(ids: list[int], part: str, tag: str) -> list[dict[str, Any]]:
    return [{"id": i, "dt": part, "v": f"{tag}{i}"} for i in ids]


def _key_hashes(table: FileStoreTable, ids: list[int]) -> np.ndarray:
    return bucket_hashes(pa.table({"id": pa.array(ids, pa.int32())}), bucket_key_fields(table.schema))


def _part(table: FileStoreTable, value: str) -> bytes:
    return binary_row.serialize([value], table.schema.partition_types)


def _java_buckets(table: FileStoreTable) -> dict[tuple[bytes, int], int]:
    """(partition, id) -> bucket of every live key Java wrote."""
    out: dict[tuple[bytes, int], int] = {}
    for part, bucket, data in _key_table_rows(table):
        for k in data.column("_KEY_id").to_pylist():
            assert out.setdefault((part, k), bucket) == bucket, f"key {k} in two buckets"
    return out


def _java_hash_files(table: FileStoreTable) -> dict[tuple[bytes, int], tuple[Any, np.ndarray]]:
    snap = table.snapshot_manager.latest_snapshot()
    out = {}
    for e in FileStoreScan(table).index_entries(snap):
        assert e.index_file.index_type == "HASH"
        out[(e.partition, e.bucket)] = (e.index_file, read_hash_index(table.file_io, index_file_path(table.path, e.index_file)))
    return out


def test_dynamic_bucket_matches_java(java_paimon: JavaPaimon, wh: str) -> None:
    jp = java_paimon
    name = "dyn"
    jp.create_table(wh, DB, name, DYN_COLS, ["id", "dt"], ["dt"],
                    {"bucket": "-1", "dynamic-bucket.target-row-num": "5", "file.format": "parquet"})
    jp.write(wh, DB, name, _dyn_rows(list(range(1, 24)), D1, "a") + _dyn_rows(list(range(1, 8)), D2, "a"))
    table = _table(wh, name)
    p1, p2 = _part(table, D1), _part(table, D2)

    # 1. loading Java's index: every existing key maps to Java's bucket, nothing to rewrite
    java = _java_buckets(table)
    assert len({b for (p, _), b in java.items() if p == p1}) == 5  # 23 keys / 5 per bucket
    assigner = DynamicBucketAssigner(table)
    for part, ids in ((p1, list(range(1, 24))), (p2, list(range(1, 8)))):
        ours = assigner.assign(part, _key_hashes(table, ids))
        assert ours.tolist() == [java[(part, i)] for i in ids]
    assert assigner.index_changes() == []

    # 2. our hash files are Java's format: a round trip of each Java file is byte-identical,
    #    and row_count / file_size agree with Java's IndexFileMeta
    files = _java_hash_files(table)
    for (part, bucket), (meta, hashes) in files.items():
        raw = Path(index_file_path(table.path, meta)).read_bytes()
        assert encode_hashes(decode_hashes(raw)) == raw
        assert meta.row_count == len(hashes) and meta.file_size == len(raw)
        assert set(hashes.tolist()) == set(_key_hashes(table, [i for (p, i), b in java.items() if p == part and b == bucket]).tolist())

    # 3. prediction: our assignment of the NEXT batch (old + new keys, duplicates, both
    #    partitions) equals what Java does with the same rows in the same order
    batch2 = (
        [(D1, i) for i in [30, 3, 24, 25, 30, 26, 12, 27, 28, 29, 31, 32, 33, 34, 35, 36, 37, 1]]
        + [(D2, i) for i in [8, 2, 9, 10, 11, 12, 13, 14, 15, 16]]
        + [(D1, i) for i in [38, 39, 40, 41]]
    )
    predictor = DynamicBucketAssigner(_table(wh, name))
    predicted: dict[tuple[bytes, int], int] = {}
    for part_value in (D1, D2):  # per-partition order is all that matters to the assigner
        ids = [i for p, i in batch2 if p == part_value]
        part = _part(table, part_value)
        for i, b in zip(ids, predictor.assign(part, _key_hashes(table, ids)).tolist(), strict=True):
            assert predicted.setdefault((part, i), b) == b
    changes = predictor.index_changes()
    jp.write(wh, DB, name, [{"id": i, "dt": p, "v": f"b{i}"} for p, i in batch2])
    table = _table(wh, name)
    java2 = _java_buckets(table)
    assert {k: java2[k] for k in predicted} == predicted
    assert all(java2[k] == b for k, b in java.items())  # old keys stayed
    assert len({b for (p, _), b in java2.items() if p == p1}) > 5  # new buckets were opened

    # 4. the HASH files we wrote hold what Java's hold (Java's are IntOpenHashSet-ordered)
    files2 = _java_hash_files(table)
    ours_by_bucket = {(c.partition, c.bucket): c for c in changes}
    assert set(ours_by_bucket) == {k for k, (meta, _) in files2.items() if k not in files or files[k][0] != meta}
    for key, c in ours_by_bucket.items():
        java_meta, java_hashes = files2[key]
        our_hashes = read_hash_index(table.file_io, index_file_path(table.path, c.new_file))
        assert sorted(our_hashes.tolist()) == sorted(java_hashes.tolist())
        assert (c.new_file.row_count, c.new_file.file_size) == (java_meta.row_count, java_meta.file_size)
        assert c.old_file == (files[key][0] if key in files else None)
        # the unchanged prefix is the old file verbatim (a no-change rewrite is byte-identical)
        if key in files:
            assert our_hashes[: len(files[key][1])].tolist() == files[key][1].tolist()


def test_java_assigner_uses_our_hash_index(java_paimon: JavaPaimon, wh: str) -> None:
    """HASH files we wrote and committed steer Java's own HashBucketAssigner."""
    jp = java_paimon
    name = "dyn_ours"
    jp.create_table(wh, DB, name, DYN_COLS, ["id", "dt"], ["dt"],
                    {"bucket": "-1", "dynamic-bucket.target-row-num": "4", "file.format": "parquet"})
    table = _table(wh, name)
    ids = list(range(100, 118))
    # reverse order: buckets differ from what Java would pick for ascending ids on its own
    a = DynamicBucketAssigner(table)
    ours = a.assign(_part(table, D1), _key_hashes(table, ids[::-1]))[::-1]
    changes = a.index_changes()
    assert len(changes) == 5  # 18 keys, 4 per bucket
    by_bucket: dict[int, list] = defaultdict(list)
    for c in changes:
        by_bucket[c.bucket].append(c.new_file)
    FileStoreCommit(table).commit(
        [CommitMessage(_part(table, D1), b, -1, new_index_files=files) for b, files in by_bucket.items()]
    )
    jp.write(wh, DB, name, _dyn_rows(ids, D1, "x"))  # ascending: Java must follow our index
    java = _java_buckets(_table(wh, name))
    assert [java[(_part(table, D1), i)] for i in ids] == ours.tolist()
    assert len(jp.read(wh, DB, name)) == len(ids)
