"""theta_sketch aggregation: union of DataSketches theta sketches with Java's exact bytes.

Why: Java Paimon 0.9 stores ``ThetaSketch.union(acc, x)`` = ``Union.getResult().toByteArray()``
(datasketches-java 4.2, ordered compact). Readers of one table through Java and through us must
see the same bytes, so our fold must replay Java's pairwise union and its preamble layout. The
golden bytes below were produced by Java Paimon 0.9 (tests/interop/java/ThetaSketchHelper.java);
tests/interop/test_theta_sketch_java.py compares against the live JVM.
"""

from __future__ import annotations

import hashlib
import struct

import datasketches as ds
import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.data.types import DataField, IntType, parse_data_type
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.mergetree.aggregate import create_aggregator
from paimon_cli.core.mergetree.aggregate.sketches import ThetaSketchAgg, theta_union
from paimon_cli.core.mergetree.merge_function import merge
from paimon_cli.core.schema.options import CoreOptions
from paimon_cli.core.schema.schema_manager import new_table_schema
from paimon_cli.core.schema.table_schema import Schema


def sketch(values: range | list[int], lg_k: int = 12, p: float = 1.0) -> bytes:
    """Compact ordered sketch; C++ hashes a long exactly like Java's ``UpdateSketch.update(long)``."""
    s = ds.update_theta_sketch(lg_k, p=p)
    for v in values:
        s.update(v)
    return s.compact().serialize()


def estimate(data: bytes) -> float:
    return ds.compact_theta_sketch.deserialize(data).get_estimate()


def hashes(data: bytes) -> list[int]:
    s = ds.compact_theta_sketch.deserialize(data)
    n = s.num_retained
    pre = data[0] & 0x3F
    return list(struct.unpack_from(f"<{n}q", data, pre * 8)) if n else []


# ---------------------------------------------------------------------------- union bytes


def test_union_matches_java_golden_small_layouts() -> None:
    empty, one, five = sketch([]), sketch([0]), sketch([5])
    # Java: EmptyCompactSketch (seed hash 0), SingleItemSketch (flag 0x20), p written as 1.0f
    assert theta_union(empty, empty).hex() == "01030300001e0000"
    assert theta_union(one, one).hex() == "01030300003acc93e56b61eec8804420"
    assert theta_union(empty, one).hex() == "01030300003acc93e56b61eec8804420"
    assert theta_union(one, five).hex() == (
        "02030300001acc93020000000000803fbd3273724691cc14e56b61eec8804420")


def test_union_matches_java_golden_estimation_mode() -> None:
    out = theta_union(sketch(range(100000)), sketch(range(50000, 150000)))
    assert len(out) == 32792  # 3 preamble longs + k=4096 hashes
    assert out[:24].hex() == "03030300001acc93001000000000803fbbc515a5c4418103"
    assert hashlib.sha256(out).hexdigest() == (
        "34c39558bde3036c934bb5f836b4a52c29e259b4b2ee40e5828c1a20f402c926")
    assert estimate(out) == pytest.approx(150000, rel=0.05)


def test_exact_union_is_set_union_sorted() -> None:
    a, b = sketch(range(0, 300)), sketch(range(200, 700))
    out = theta_union(a, b)
    assert estimate(out) == 700.0
    hs = hashes(out)
    assert hs == sorted(hs) and len(set(hs)) == 700
    assert set(hs) == set(hashes(a)) | set(hashes(b))
    assert theta_union(b, a) == out  # Java's union result depends only on the two inputs' contents


def test_union_is_idempotent_and_accepts_other_input_layouts() -> None:
    a = sketch(range(5000))
    assert theta_union(a, a) == theta_union(theta_union(a, a), a)
    compressed = ds.compact_theta_sketch.deserialize(a).serialize(True)  # serial version 4
    assert theta_union(compressed, sketch([])) == theta_union(a, sketch([]))
    sampled = sketch(range(100), p=0.01)  # non-empty, theta < 1, maybe no entries
    out = theta_union(sampled, sketch([1, 2]))
    assert out[0] & 0x3F == 3 and out[12:16] == struct.pack("<f", 1.0)
    # our own output reads back (flag 0x20 and p are ignored by the reader)
    assert estimate(theta_union(out, out)) == estimate(out)


def test_union_refuses_garbage_and_foreign_seed() -> None:
    with pytest.raises(InvalidInput, match="field 'c'.*not a serialized compact theta sketch"):
        theta_union(sketch([1]), b"\x00\x01\x02", "c")
    other_seed = ds.update_theta_sketch(12, seed=1)
    other_seed.update(1)
    with pytest.raises(InvalidInput):
        theta_union(sketch([1]), other_seed.compact().serialize(), "c")


# ---------------------------------------------------------------------------- aggregator semantics


def _agg(ignore_retract: bool = False) -> ThetaSketchAgg:
    opts = {"fields.c.ignore-retract": "true"} if ignore_retract else {}
    agg = create_aggregator(DataField(1, "c", parse_data_type("BYTES")), "theta_sketch",
                            CoreOptions(opts))
    assert isinstance(agg, ThetaSketchAgg)
    return agg


def _fold(agg: ThetaSketchAgg, blobs: list[bytes | None], gid: list[int], retract: list[bool] | None = None,
          n_groups: int | None = None) -> list[bytes | None]:
    r = np.array(retract or [False] * len(blobs), dtype=bool)
    out = agg.aggregate(pa.array(blobs, type=pa.binary()), np.array(gid, dtype=np.int64), r,
                        n_groups if n_groups is not None else max(gid) + 1)
    return out.to_pylist()


def test_fold_skips_nulls_passes_first_through_and_unions_in_order() -> None:
    raw = sketch([7])  # C++ layout (no single-item flag): Java keeps the first value verbatim
    a, b, c = sketch(range(10)), sketch(range(5, 20)), sketch(range(100000))
    out = _fold(_agg(), [None, raw, None, a, b, None, None, c], [0, 0, 1, 1, 1, 2, 3, 3])
    assert out[0] == raw
    assert out[1] == theta_union(a, b)
    assert out[2] is None
    assert out[3] == c
    chain = _fold(_agg(), [a, b, c, raw], [0, 0, 0, 0])[0]
    assert chain == theta_union(theta_union(theta_union(a, b), c), raw)


def test_retraction_refused_unless_ignored() -> None:
    a, b = sketch([1]), sketch([2])
    with pytest.raises(InvalidInput, match="does not support retraction"):
        _fold(_agg(), [a, b], [0, 0], [False, True])
    assert _fold(_agg(ignore_retract=True), [a, b], [0, 0], [False, True]) == [a]


def test_column_type_must_be_varbinary() -> None:
    for t in (IntType(), parse_data_type("BINARY(8)")):
        with pytest.raises(InvalidInput, match="theta_sketch"):
            create_aggregator(DataField(1, "c", t), "theta_sketch", CoreOptions({}))


def test_merge_engine_aggregation_with_theta_column() -> None:
    schema = new_table_schema(Schema.of(
        [("k", parse_data_type("INT"), None), ("c", parse_data_type("BYTES"), None)], primary_keys=["k"],
        options={"merge-engine": "aggregation", "fields.c.aggregate-function": "theta_sketch"}))
    a, b, c = sketch(range(3)), sketch(range(2, 9)), sketch(range(50000))
    table = pa.table({
        "k": pa.array([1, 2, 1, 1, 2], type=pa.int32()),
        "c": pa.array([a, None, b, c, None], type=pa.binary()),
        "_SEQUENCE_NUMBER": pa.array([0, 1, 2, 3, 4], type=pa.int64()),
        "_VALUE_KIND": pa.array([0] * 5, type=pa.int8()),
    })
    rows = merge(table, ["k"], schema, CoreOptions(schema.options)).to_pylist()
    assert [(r["k"], r["c"]) for r in rows] == [(1, theta_union(theta_union(a, b), c)), (2, None)]
