"""theta_sketch aggregation is byte-identical to Java Paimon 0.9's FieldThetaSketchAgg.

Why: Java stores ``ThetaSketch.union(acc, x)`` = ``Union.getResult().toByteArray()`` of the
shaded datasketches-java 4.2. We union with the C++ DataSketches binding and rewrite the few
preamble fields it lays out differently; this proves the result equals Java's for exact and
estimation-mode sketches, single unions and chains, and on a real aggregation table in both
directions. Java side: tests/interop/java/ThetaSketchHelper.java.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import datasketches as ds
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.mergetree.aggregate.sketches import theta_union
from paimon_cli.core.operation.read import TableRead

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
COUNTS = (0, 1, 2, 15, 16, 17, 900, 1024, 1025, 4096, 4097, 8192, 20000, 70000)


def _py_sketch(values: range | list[int], lg_k: int = 12, p: float = 1.0) -> bytes:
    s = ds.update_theta_sketch(lg_k, p=p)
    for v in values:
        s.update(v)
    return s.compact().serialize()


@pytest.fixture(scope="module")
def helper(java_paimon: JavaPaimon) -> Any:
    return java_paimon._gateway.jvm.ThetaSketchHelper


@pytest.fixture(scope="module")
def sketches(helper: Any) -> dict[str, bytes]:
    """Java-built sketches of many sizes and k, plus odd-but-valid layouts from both sides."""
    rnd = random.Random(3)
    out: dict[str, bytes] = {}
    for lg_k in (4, 10, 12, 14):
        for c in COUNTS:
            out[f"java_k{lg_k}_{c}"] = bytes(helper.sketchOfRange(rnd.randint(0, 10**9), c, lg_k))
    out["java_overlap_a"] = bytes(helper.sketchOfRange(0, 100000, 12))
    out["java_overlap_b"] = bytes(helper.sketchOfRange(60000, 100000, 12))
    out["java_strings"] = bytes(helper.sketchOfStrings("a,b,c,d", True))
    out["java_unordered"] = bytes(helper.sketchOfStrings("x,b,y,z,q", False))
    out["java_unordered_1"] = bytes(helper.sketchOfStrings("x", False))
    out["paimon_ints"] = bytes(helper.paimonSketchOfInts(0, 10))
    out["py_empty"] = _py_sketch([])
    out["py_one"] = _py_sketch([42])
    out["py_sampled"] = _py_sketch(range(100), p=0.01)
    out["py_sampled_none"] = _py_sketch([1], p=0.0001)
    out["py_big"] = _py_sketch(range(300000))
    out["py_big_k16"] = _py_sketch(range(300000), lg_k=16)
    out["py_compressed"] = ds.compact_theta_sketch.deserialize(_py_sketch(range(3000))).serialize(True)
    return out


def test_sketch_building_hashes_like_java(helper: Any) -> None:
    # same hashes and theta; only the preamble bytes Java lays out differently may differ
    for c in (1, 3, 5000, 100000):
        j = bytes(helper.sketchOfRange(0, c, 12))
        p = _py_sketch(range(c))
        assert len(j) == len(p) and j[16:] == p[16:], c


def test_union_pairs_byte_exact(helper: Any, sketches: dict[str, bytes]) -> None:
    names = sorted(sketches)
    rnd = random.Random(11)
    pairs = [(a, b) for a in names for b in names if rnd.random() < 0.2] + [(n, n) for n in names]
    pairs.append(("java_overlap_a", "java_overlap_b"))
    for a, b in pairs:
        assert theta_union(sketches[a], sketches[b]) == bytes(helper.union(sketches[a], sketches[b])), (a, b)


def test_union_chains_byte_exact(helper: Any, sketches: dict[str, bytes]) -> None:
    names = sorted(sketches)
    rnd = random.Random(12)
    for trial in range(60):  # the accumulator is Java's previous union result
        seq = [sketches[rnd.choice(names)] for _ in range(rnd.randint(3, 8))]
        ours = theirs = seq[0]
        for x in seq[1:]:
            ours = theta_union(ours, x)
            theirs = bytes(helper.union(theirs, x))
            assert ours == theirs, trial


def test_java_reads_our_union(helper: Any, sketches: dict[str, bytes]) -> None:
    for name in ("java_k12_17", "java_k12_70000", "py_sampled", "py_empty", "py_one"):
        ours = theta_union(sketches[name], sketches["java_k12_1"])
        assert helper.estimate(ours) == ds.compact_theta_sketch.deserialize(ours).get_estimate(), name


# ---------------------------------------------------------------------------- a table


def _our_rows(wh: str, name: str) -> list[dict[str, Any]]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return sorted(TableRead(table).to_arrow().to_pylist(), key=lambda r: r["k"])


def _java_rows(jp: JavaPaimon, wh: str, name: str) -> list[dict[str, Any]]:
    return sorted(jp.read(wh, DB, name, row_kind=False), key=lambda r: r["k"])


def _pairs(rows: list[dict[str, Any]]) -> list[tuple[int, bytes | None, int]]:
    return [(r["k"], r["th"], r["n"]) for r in rows]


def test_aggregation_table_theta_sketch(java_paimon: JavaPaimon, helper: Any, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    cols = [("k", "INT"), ("th", "BYTES"), ("n", "BIGINT")]
    java_paimon.create_table(wh, DB, "t", cols, ["k"], [], {
        "bucket": "1", "file.format": "parquet", "write-only": "true", "merge-engine": "aggregation",
        "fields.th.aggregate-function": "theta_sketch", "fields.n.aggregate-function": "sum",
    })
    rnd = random.Random(5)
    model: dict[int, set[int]] = {}  # distinct longs fed per key, to check the estimate

    for commit in range(4):
        rows = []
        for k in range(1, 15):
            if (k * 7 + commit) % 4 == 0:
                continue  # key absent from this commit
            if (k + commit) % 6 == 0:
                rows.append({"k": k, "th": None, "n": 1})
                continue
            big = (k + commit) % 3 == 0
            start, count = rnd.randint(0, 10**6), rnd.randint(5000, 60000) if big else rnd.randint(1, 800)
            model.setdefault(k, set()).update(range(start, start + count))
            rows.append({"k": k, "th": bytes(helper.sketchOfRange(start, count, 12)), "n": 1})
        java_paimon.write(wh, DB, "t", rows)

    ours = _our_rows(wh, "t")
    java = _java_rows(java_paimon, wh, "t")
    assert _pairs(ours) == _pairs(java)  # byte-exact merge-on-read
    assert any(r["th"] is not None and r["th"][0] & 0x3F == 3 for r in ours)  # estimation mode covered
    for r in ours:
        if r["k"] in model:
            assert ds.compact_theta_sketch.deserialize(r["th"]).get_estimate() == pytest.approx(
                len(model[r["k"]]), rel=0.06), r["k"]
        else:
            assert r["th"] is None

    java_paimon.compact(wh, DB, "t", full=True)
    assert _pairs(_java_rows(java_paimon, wh, "t")) == _pairs(ours)
    assert _pairs(_our_rows(wh, "t")) == _pairs(ours)

    # we write into Java's table (Python-built sketches, old and new keys); Java merges them equally
    table = FileSystemCatalog(wh).get_table(f"{DB}.t")
    ours_rows = []
    for k in (1, 2, 5, 20):
        start, count = k * 100000, 300 if k % 2 else 9000
        model.setdefault(k, set()).update(range(start, start + count))
        ours_rows.append({"k": k, "th": _py_sketch(range(start, start + count)), "n": 10})
    path = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(ours_rows, schema=pa.schema(
        [("k", pa.int32()), ("th", pa.binary()), ("n", pa.int64())])), path)
    write_table(table, [str(path)])

    java = _java_rows(java_paimon, wh, "t")
    ours = _our_rows(wh, "t")
    assert _pairs(java) == _pairs(ours)
    assert 20 in [r["k"] for r in java]
    java_paimon.compact(wh, DB, "t", full=True)
    assert _pairs(_java_rows(java_paimon, wh, "t")) == _pairs(ours)
    assert _pairs(_our_rows(wh, "t")) == _pairs(ours)
