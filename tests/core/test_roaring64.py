"""core/data/roaring64.py: Java Roaring64Bitmap bytes (rbm64) without a JVM.

The golden bytes and digests below were produced by Java Paimon 0.9's bundled RoaringBitmap
(``RoaringBitmap64.bitmapOf(...).serialize()`` and FieldRoaringBitmap64Agg's merge, via
tests/interop/java/Roaring64Helper.java); tests/interop/test_roaring64_java.py re-checks
far more cases against the live JVM.
"""

from __future__ import annotations

import hashlib
import random
import struct

import numpy as np
import pyarrow as pa
import pyroaring
import pytest

from paimon_cli.core.data.roaring64 import (
    ARRAY,
    BITMAP,
    RUN,
    Roaring64Layout,
    deserialize_roaring64,
    merge_roaring64,
    serialize_roaring64,
)
from paimon_cli.core.data.types import DataField, VarBinaryType
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.mergetree.aggregate import create_aggregator
from paimon_cli.core.schema.options import CoreOptions

M = 2**64

JAVA_GOLDEN = {
    (): "00",
    (0,): "01010000000000000004000000000000000000000000000000000001000000fe01000000010201000000000001"
          "000000000000000000000000000000",
    (5, 70000): "0102000000000000000002000500000000000000010004000000000000000000000000000000000004000000"
                "000000000001010000000000000001000000fe020000000102010000000500010201000000701102000000"
                "000000000000000001000000",
    (0, 2**32, 2**63 - 1): "0103000000000000000002000000007f0000020002000000000100040000000000000000000000"
                           "000000000000040000000000000100000100000000000000040000007fffffffffff02000000"
                           "0000000001000000fe0300000001020100000000000102010000000000010201000000ffff03"
                           "000000000000000000000002000000",
    (M - 1,): "01010000000000000004000000ffffffffffff000000000000000001000000fe01000000010201000000ffff01"
              "000000000000000000000000000000",
}


def _bm(values: list[int]) -> pyroaring.BitMap64:
    return pyroaring.BitMap64(values)


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _cases() -> dict[str, list[int]]:
    rnd = random.Random(7)
    out = {
        "n17": [i << 16 for i in range(17)], "n49": [i << 16 for i in range(49)],
        "n256": [i << 16 for i in range(256)], "n300_spread": [(i * 7919) << 16 for i in range(300)],
        "array_4096": list(range(0, 8192, 2)), "bitmap_4097": list(range(0, 8194, 2)),
        "dense_run": list(range(1000, 5000)), "full": list(range(65536)),
        "bitmap_sparse": rnd.sample(range(65536), 20000),
        "runs_mixed": [x for s in range(0, 65536, 300) for x in range(s, s + rnd.randint(1, 200))],
        "deep": [(1 << 40) | (i << 16) for i in range(3)] + [(2 << 40)] + [(1 << 40) | (1 << 32)],
        "prefix_split": [0x0102030405 << 16, 0x0102030406 << 16, 0x0102FF0000 << 16, 0x01FF000000 << 16,
                         0xFF << 56],
    }
    return {k: sorted(set(v)) for k, v in out.items()}


@pytest.mark.parametrize("values", list(JAVA_GOLDEN), ids=lambda v: ",".join(map(str, v)) or "empty")
def test_serialize_matches_java_golden(values: tuple[int, ...]) -> None:
    expected = bytes.fromhex(JAVA_GOLDEN[values])
    assert serialize_roaring64(_bm(list(values))) == expected
    assert list(deserialize_roaring64(expected)) == list(values)


def test_serialize_digests_match_java() -> None:
    c = _cases()
    golden = {
        "n17": (743, "d5404f8351fc313aafd1a58696121b082cc767cb3f6a8d5d1137fece382c5005"),  # Node16
        "n49": (1363, "5572f194ac1144d17d65e11af04c1708a8da880d5856ae1c77e4cdc3ea271be9"),  # Node256
        "n256": (6791, "48fd2811715912b3e23ee3facc375ef814c2e23dbcb270d120fa539dbf9d70b8"),
        "runs_mixed": (936, "cec90a9de688a9a914a31441cbf38154195f0568cb61e534741378380819ba7c"),
        "bitmap_sparse": (8250, "69048bed51f9981664b91a509027f23e0e0e5762c9127fe90c3abe1610962078"),
    }
    for name, (size, digest) in golden.items():
        b = serialize_roaring64(_bm(c[name]))
        assert (len(b), _sha(b)) == (size, digest), name


def test_merge_matches_java_golden() -> None:
    small = merge_roaring64(serialize_roaring64(_bm([5, 70000])), serialize_roaring64(_bm([3, 1 << 40, 70001])))
    assert small.hex() == (
        "010300000000000000000200020000000001000002000200000000010004000000000000000000000000000000000004"
        "000000000000000001010000000000000004000000000001000000020000000000000001000000fe0300000001020200"
        "00000300050001020200000070117111010201000000000003000000000000000000000002000000"
    )
    c = _cases()
    golden = {
        ("n49", "n300_spread"): "ec98bee7ed832a30f9f56cf547fe8d4f329036cca78bb66f856aeb0353e40cec",
        ("bitmap_sparse", "runs_mixed"): "3be3d07b83fedc6be7ca58c20de35d0d4a62d1867129624a8a6fc252ad2aa392",
        ("array_4096", "dense_run"): "00c35ad70fc26a17e04ccb6c9a8fa5ffca2510fbbd51c94a0b30d2dc65efc3a1",
        ("full", "bitmap_4097"): "8c816a337031c8174c5b187b357ccd6848c955f90937fb6395cc34b1d238c9ba",
        ("prefix_split", "deep"): "831f3a9002c85c8c585ce8f895566acd3947f7d3b080beb872ea410f06d9452d",
    }
    for (a, b), digest in golden.items():
        merged = merge_roaring64(serialize_roaring64(_bm(c[a])), serialize_roaring64(_bm(c[b])))
        assert _sha(merged) == digest, (a, b)
        assert list(deserialize_roaring64(merged)) == sorted(set(c[a]) | set(c[b]))


def test_reads_java_bytes_built_in_unsorted_order() -> None:
    # Java added 10<<16, 0, 5<<16, 1<<16, 9<<16, ... : Node16 positions sorted, container slots in
    # insertion order (leaves point at slots 0..10 out of key order), 13 slots of capacity.
    data = bytes.fromhex(
        "010b00000000000000010b00050000000000070605040302010000000000000a09080400000000000000000001000000"
        "000000000400000000000000000103000000000000000400000000000000000205000000000000000400000000000000"
        "000307000000000000000400000000000000000409000000000000000400000000000000000502000000000000000400"
        "00000000000000060a000000000000000400000000000000000708000000000000000400000000000000000806000000"
        "000000000400000000000000000904000000000000000400000000000000000a000000000000000001000000fe0d0000"
        "000102010000000000010201000000000001020100000000000102010000000000010201000000000001020100000000"
        "000102010000000000010201000000000001020100000000000102010000000000010201000000000000000b00000000"
        "000000000000000a000000"
    )
    assert list(deserialize_roaring64(data)) == [i << 16 for i in range(11)]
    assert Roaring64Layout.parse(data).to_bytes() == data  # the layout is preserved verbatim
    assert serialize_roaring64(deserialize_roaring64(data)) != data  # canonical differs: sorted slots


@pytest.mark.parametrize("name", list(_cases()))
def test_round_trip(name: str) -> None:
    values = _cases()[name]
    data = serialize_roaring64(_bm(values))
    assert list(deserialize_roaring64(data)) == values
    assert Roaring64Layout.parse(data).to_bytes() == data


def test_edge_values_round_trip() -> None:
    values = [0, 1, 2**16 - 1, 2**16, 2**32 - 1, 2**32, 2**48, 2**63 - 1, 2**63, M - 2, M - 1]
    data = serialize_roaring64(_bm(values))
    assert list(deserialize_roaring64(data)) == values
    assert serialize_roaring64(_bm([])) == b"\x00"
    assert len(deserialize_roaring64(b"\x00")) == 0


def _kinds(data: bytes) -> list[int]:
    layout = Roaring64Layout.parse(data)
    return [c.kind for arr in layout.arrays for c in arr if c is not None]


def test_container_types_follow_java_run_optimize() -> None:
    assert _kinds(serialize_roaring64(_bm([1, 5, 9]))) == [ARRAY]  # 3 runs: array is smaller
    assert _kinds(serialize_roaring64(_bm([1, 2, 3, 4]))) == [RUN]  # one run beats 4 values
    assert _kinds(serialize_roaring64(_bm(list(range(0, 8192, 2))))) == [ARRAY]  # 4096 values
    assert _kinds(serialize_roaring64(_bm(list(range(0, 8194, 2))))) == [BITMAP]  # 4097 values
    assert _kinds(serialize_roaring64(_bm(list(range(65536))))) == [RUN]  # full container
    # Java's type pairing on or: array | array with > 4096 total but <= 4096 distinct stays array
    a = serialize_roaring64(_bm(list(range(0, 8000, 2))))
    b = serialize_roaring64(_bm(list(range(0, 1000, 2)) + [9001]))
    assert _kinds(merge_roaring64(a, b)) == [ARRAY]


def test_merge_keeps_accumulator_layout() -> None:
    # keys absent from the accumulator are appended after its containers (slot order = history)
    acc = serialize_roaring64(_bm([2 << 16]))
    merged = Roaring64Layout.parse(merge_roaring64(acc, serialize_roaring64(_bm([1 << 16, 3 << 16]))))
    slots = {high: leaf.idx for high, leaf in merged.leaves.items()}
    assert slots == {2: 0, 1: 1, 3: 2}
    assert len(merged.arrays[0]) == 3


def test_corrupt_bytes_are_refused() -> None:
    good = serialize_roaring64(_bm([5, 70000]))
    for bad in (good[:-3], good + b"\x00", b"\x01\x01", struct.pack("<b", 1) + b"\x09" * 20):
        with pytest.raises(InvalidInput, match="rbm64"):
            deserialize_roaring64(bad)



def test_leaf_pointing_at_an_empty_container_slot_is_refused() -> None:
    layout = Roaring64Layout.from_values(np.array([5, 70000], dtype=np.uint64))
    layout.arrays[0][1] = None  # the second key's container slot written as null
    with pytest.raises(InvalidInput, match="rbm64"):
        deserialize_roaring64(layout.to_bytes())


def _agg(values: list[bytes | None], gid: list[int], n: int) -> list[bytes | None]:
    field = DataField(1, "r", VarBinaryType())
    agg = create_aggregator(field, "rbm64", CoreOptions({}))
    out = agg.aggregate(pa.array(values, pa.binary()), np.array(gid, dtype=np.int64),
                        np.zeros(len(values), dtype=bool), n)
    return out.to_pylist()


def test_rbm64_aggregator_folds_like_java() -> None:
    a = serialize_roaring64(_bm([1, 2, 3]))
    b = serialize_roaring64(_bm([1 << 40]))
    c = serialize_roaring64(_bm([7, 70000]))
    odd = Roaring64Layout.parse(a)  # a non-canonical single value passes through untouched
    odd.arrays[0].append(None)
    odd_bytes = odd.to_bytes()
    got = _agg([a, None, b, c, None, odd_bytes, None], [0, 0, 0, 0, 1, 2, 3], 4)
    assert got[0] == merge_roaring64(merge_roaring64(a, b), c)
    assert list(deserialize_roaring64(got[0])) == [1, 2, 3, 7, 70000, 1 << 40]
    assert got[1] is None
    assert got[2] == odd_bytes
    assert got[3] is None


def test_rbm64_aggregator_refuses_retraction_unless_ignored() -> None:
    field = DataField(1, "r", VarBinaryType())
    a = serialize_roaring64(_bm([1]))
    agg = create_aggregator(field, "rbm64", CoreOptions({}))
    with pytest.raises(InvalidInput, match="retraction"):
        agg.aggregate(pa.array([a, a], pa.binary()), np.array([0, 0]), np.array([False, True]), 1)
    agg = create_aggregator(field, "rbm64", CoreOptions({"fields.r.ignore-retract": "true"}))
    out = agg.aggregate(pa.array([a, a], pa.binary()), np.array([0, 0]), np.array([False, True]), 1)
    assert out.to_pylist() == [a]
