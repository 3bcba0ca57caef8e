"""rbm64 values are byte-identical to Java Paimon 0.9's Roaring64Bitmap, alone and merged.

Why: Java stores rbm64 aggregates as Roaring64Bitmap.serialize() bytes, whose layout depends
on the bitmap's history. Our serializer must match ``RoaringBitmap64.bitmapOf(..).serialize()``,
our merge must match FieldRoaringBitmap64Agg byte for byte (or a table read by us and by Java
would differ), and Java must read whatever we write. Java side: tests/interop/java/Roaring64Helper.java.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pyroaring
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.roaring64 import (
    Roaring64Layout,
    deserialize_roaring64,
    merge_roaring64,
    serialize_roaring64,
)
from paimon_cli.core.operation.read import TableRead

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

M = 2**64
DB = "db"


def _signed(v: int) -> int:
    return v - M if v >= 2**63 else v


def _csv(values: list[int]) -> str:
    return ",".join(str(_signed(v)) for v in values)


def _unsigned_list(text: str) -> list[int]:
    return [int(x) % M for x in text.split(",")] if text else []


def _cases() -> dict[str, list[int]]:
    rnd = random.Random(7)
    out: dict[str, list[int]] = {
        "empty": [], "zero": [0], "edges": [0, 2**32, 2**63 - 1, 2**63, M - 1],
        "dense_run": list(range(1000, 5000)), "full": list(range(65536)),
        "full_plus": list(range(65536 * 3, 65536 * 4)) + [7],
        "array_4096": list(range(0, 8192, 2)), "bitmap_4097": list(range(0, 8194, 2)),
        "bitmap_sparse": rnd.sample(range(65536), 20000),
        "runs_mixed": [x for s in range(0, 65536, 300) for x in range(s, s + rnd.randint(1, 200))],
        "n5": [i << 16 for i in range(5)], "n17": [i << 16 for i in range(17)],
        "n49": [i << 16 for i in range(49)], "n256": [i << 16 for i in range(256)],
        "n300_spread": [(i * 7919) << 16 for i in range(300)],
        "deep": [(1 << 40) | (i << 16) for i in range(3)] + [(2 << 40)] + [(1 << 40) | (1 << 32)],
        "prefix_split": [0x0102030405 << 16, 0x0102030406 << 16, 0x0102FF0000 << 16, 0x01FF000000 << 16,
                         0xFF << 56],
        "random_wide": [rnd.getrandbits(64) for _ in range(500)],
        "random_48": [rnd.getrandbits(24) << 16 | rnd.getrandbits(16) for _ in range(3000)],
        "clustered": [rnd.getrandbits(20) for _ in range(50000)],
    }
    for i in range(12):  # random mixes of container kinds over a few high keys
        vals: list[int] = []
        for h in rnd.sample(range(64), rnd.randint(1, 6)):
            base = (h * 0x10001) << 16
            kind = rnd.choice(["sparse", "dense", "runs", "few"])
            if kind == "sparse":
                vals += [base | x for x in rnd.sample(range(65536), rnd.randint(3000, 9000))]
            elif kind == "dense":
                s = rnd.randint(0, 30000)
                vals += [base | x for x in range(s, s + rnd.randint(100, 30000))]
            elif kind == "runs":
                vals += [base | x for s in range(0, 65536, 97) for x in range(s, s + rnd.randint(1, 40))]
            else:
                vals += [base | x for x in rnd.sample(range(65536), rnd.randint(1, 20))]
        out[f"mix{i}"] = vals
    return {k: sorted(set(v)) for k, v in out.items()}


@pytest.fixture(scope="module")
def helper(java_paimon: JavaPaimon) -> Any:
    return java_paimon._gateway.jvm.Roaring64Helper


@pytest.fixture(scope="module")
def java_bytes(helper: Any) -> dict[str, bytes]:
    """Java's serialized bytes per case, added ascending and (suffix ``~``) in shuffled order."""
    out: dict[str, bytes] = {}
    for name, values in _cases().items():
        out[name] = bytes(helper.serialize(_csv(values)))
        shuffled = values[:]
        random.Random(len(values)).shuffle(shuffled)
        out[name + "~"] = bytes(helper.serialize(_csv(shuffled)))
    return out


def test_serialize_is_byte_exact(java_bytes: dict[str, bytes]) -> None:
    for name, values in _cases().items():
        assert serialize_roaring64(pyroaring.BitMap64(values)) == java_bytes[name], name


def test_deserialize_java_bytes(java_bytes: dict[str, bytes]) -> None:
    cases = _cases()
    for name, data in java_bytes.items():
        assert list(deserialize_roaring64(data)) == cases[name.rstrip("~")], name
        assert Roaring64Layout.parse(data).to_bytes() == data, name  # layout kept verbatim


def test_java_reads_our_bytes(helper: Any) -> None:
    for name, values in _cases().items():
        ours = serialize_roaring64(pyroaring.BitMap64(values))
        assert _unsigned_list(helper.values(ours)) == values, name


def test_merge_is_byte_exact(helper: Any, java_bytes: dict[str, bytes]) -> None:
    names = sorted(java_bytes)
    rnd = random.Random(11)
    pairs = [(a, b) for a in names for b in names if rnd.random() < 0.1]
    pairs += [(n, n) for n in names]
    for a, b in pairs:
        assert merge_roaring64(java_bytes[a], java_bytes[b]) == bytes(helper.merge(java_bytes[a], java_bytes[b])), (a, b)
    for trial in range(40):  # chains: the accumulator carries Java's merge history
        seq = [java_bytes[rnd.choice(names)] for _ in range(rnd.randint(3, 7))]
        ours = theirs = seq[0]
        for x in seq[1:]:
            ours = merge_roaring64(ours, x)
            theirs = bytes(helper.merge(theirs, x))
            assert ours == theirs, trial


# ---------------------------------------------------------------------------- a table


def _our_rows(wh: str, name: str) -> list[dict[str, Any]]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return sorted(TableRead(table).to_arrow().to_pylist(), key=lambda r: r["k"])


def _java_rows(jp: JavaPaimon, wh: str, name: str) -> list[dict[str, Any]]:
    return sorted(jp.read(wh, DB, name, row_kind=False), key=lambda r: r["k"])


def test_aggregation_table_rbm64(java_paimon: JavaPaimon, helper: Any, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    cols = [("k", "INT"), ("r64", "BYTES"), ("n", "BIGINT")]
    java_paimon.create_table(wh, DB, "t", cols, ["k"], [], {
        "bucket": "1", "file.format": "parquet", "write-only": "true", "merge-engine": "aggregation",
        "fields.r64.aggregate-function": "rbm64", "fields.n.aggregate-function": "sum",
    })
    rnd = random.Random(5)
    model: dict[int, set[int]] = {}

    def java_bm(values: list[int]) -> bytes:
        order = values[:]
        rnd.shuffle(order)  # insertion order shapes Java's layout; merges must follow it
        return bytes(helper.serialize(_csv(order)))

    def value_set(k: int, commit: int) -> list[int]:
        if (k + commit) % 5 == 0:
            return [rnd.getrandbits(64) for _ in range(rnd.randint(1, 60))]
        if (k + commit) % 5 == 1:
            s = rnd.randint(0, 2**40)
            return list(range(s, s + rnd.randint(10, 9000)))
        return [(rnd.randint(0, 40) << 16) | rnd.randint(0, 65535) for _ in range(rnd.randint(1, 5000))]

    for commit in range(4):
        rows = []
        for k in range(1, 13):
            if (k * 7 + commit) % 4 == 0:
                continue  # key absent from this commit
            if (k + commit) % 6 == 0:
                rows.append({"k": k, "r64": None, "n": 1})
                continue
            vals = sorted(set(value_set(k, commit)))
            model.setdefault(k, set()).update(vals)
            rows.append({"k": k, "r64": java_bm(vals), "n": 1})
        java_paimon.write(wh, DB, "t", rows)

    ours = _our_rows(wh, "t")
    java = _java_rows(java_paimon, wh, "t")
    assert [r["k"] for r in ours] == [r["k"] for r in java]
    for o, j in zip(ours, java, strict=True):
        assert o["r64"] == j["r64"], o["k"]  # byte-exact merge-on-read
        assert o["n"] == j["n"]
        assert (sorted(deserialize_roaring64(o["r64"])) if o["r64"] is not None else None) == (
            sorted(model[o["k"]]) if o["k"] in model else None)

    java_paimon.compact(wh, DB, "t", full=True)
    assert [(r["k"], r["r64"]) for r in _java_rows(java_paimon, wh, "t")] == [(r["k"], r["r64"]) for r in ours]
    assert [(r["k"], r["r64"]) for r in _our_rows(wh, "t")] == [(r["k"], r["r64"]) for r in ours]

    # we write into Java's table: canonical bitmaps for old and new keys; Java merges them.
    table = FileSystemCatalog(wh).get_table(f"{DB}.t")
    ours_rows = []
    for k in (1, 2, 5, 20):
        vals = sorted({k, 2**63 + k, (k << 32) | 5} | set(range(k * 1000, k * 1000 + 300)))
        model.setdefault(k, set()).update(vals)
        ours_rows.append({"k": k, "r64": serialize_roaring64(pyroaring.BitMap64(vals)), "n": 10})
    path = tmp_path / "in.parquet"
    pq.write_table(pa.Table.from_pylist(ours_rows, schema=pa.schema(
        [("k", pa.int32()), ("r64", pa.binary()), ("n", pa.int64())])), path)
    write_table(table, [str(path)])

    java = _java_rows(java_paimon, wh, "t")
    ours = _our_rows(wh, "t")
    assert [(r["k"], r["r64"]) for r in java] == [(r["k"], r["r64"]) for r in ours]
    for r in java:
        assert sorted(deserialize_roaring64(r["r64"])) == sorted(model[r["k"]]), r["k"]
    java_paimon.compact(wh, DB, "t", full=True)
    assert [(r["k"], r["r64"]) for r in _java_rows(java_paimon, wh, "t")] == [(r["k"], r["r64"]) for r in ours]
