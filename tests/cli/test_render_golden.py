"""Golden bytes of every vectorised renderer: ``read``'s batches (``-o csv|json|jsonl``, and
``read --to x.csv``), a stream's column chunks (``inspect`` commands) and Rows' csv, over
generated tables of every type the renderers take (NULLs, float edge values, awkward strings).

The digests in ``golden/render.json`` are of the text these renderers printed before they
were vectorised (commit a918442, row-by-row ``csv.writer`` and per-value ``repr``): column-wise
rendering must print the same bytes. ``python tests/cli/test_render_golden.py`` prints the
digests of the current code (only to regenerate them for an intended change of output).
"""

from __future__ import annotations

import datetime as dt
import decimal
import hashlib
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pytest

from paimon_cli.core.utils.rows import Picked, Rows
from paimon_cli.output import render, render_stream
from paimon_cli.record_batches import write_csv_batches, write_export, write_json_batches

GOLDEN = Path(__file__).parent / "golden" / "render.json"

AWKWARD = ["", " ", "plain", "a,b", 'say "hi"', '"', '""', "line\nbreak", "cr\rreturn", "crlf\r\n", "tab\tx",
           "back\\slash", " lead", "trail ", "\u00e9\u4e2d\U0001f600", "null", "NaN", "-0.0", "1e20", "ctl\x01\x1f",
           "'single'", ",", "\n", "\r", "a;b|c", "=1+2", "\u2028sep", "x" * 40]
EDGE_FLOATS = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 489.0, 1e15, 1e16, 9999999999999998.0, 1e20, 1e21, 1e22, 1e-4,
               1e-5, 1e-7, 0.0001234, 2.5e-5, 123456789012345678.0, 5e-324, 2.2250738585072014e-308,
               1.7976931348623157e308, -1.7976931348623157e308, 12345.678, 100.0, 1.5e300, 1e-300, 65504.0,
               3.4028234663852886e38]


def _floats(rng: np.random.Generator, n: int) -> list[float]:
    bits = rng.integers(0, 2**64, n, dtype=np.uint64).view(np.float64)
    bits = bits[np.isfinite(bits)]
    scaled = rng.random(n) * 10.0 ** rng.integers(-30, 30, n)
    whole = rng.integers(-10**6, 10**6, n).astype(np.float64)
    pool = np.concatenate([bits, scaled, whole, rng.random(n)])
    return [float(x) for x in rng.choice(pool, n)]


def _table(seed: int, n: int, finite: bool) -> pa.Table:
    """``n`` rows of every type; ``finite``: no NaN/infinity (the floats' vectorised path)."""
    rng = np.random.default_rng(seed)

    def nulls(values: list[Any]) -> list[Any]:
        return [None if rng.random() < 0.15 else v for v in values]

    def pick(pool: list[Any]) -> list[Any]:
        return [pool[i] for i in rng.integers(0, len(pool), n)]

    floats = _floats(rng, n)
    floats[: len(EDGE_FLOATS)] = EDGE_FLOATS[:n]
    if not finite:
        floats[-3:] = [float("nan"), float("inf"), float("-inf")]
    ints = rng.integers(-2**63, 2**63 - 1, n, dtype=np.int64).tolist()
    ms = rng.integers(-30_610_224_000_000, 253_402_300_799_999, n).tolist()
    us = rng.integers(-2**55, 2**55, n).tolist()
    days = rng.integers(-719_162, 2_932_896, n).tolist()
    decs = [decimal.Decimal(int(v)).scaleb(-4) for v in rng.integers(-10**17, 10**17, n)]
    lists = [[int(x) for x in rng.integers(-5, 5, rng.integers(0, 4))] for _ in range(n)]
    cols = {
        "i8": pa.array(nulls(rng.integers(-128, 127, n).tolist()), pa.int8()),
        "i32": pa.array(nulls(rng.integers(-2**31, 2**31 - 1, n).tolist()), pa.int32()),
        "i64": pa.array(nulls(ints), pa.int64()),
        "f32": pa.array(nulls([float(np.float32(np.clip(x, -3.4e38, 3.4e38))) for x in floats]), pa.float32()),
        "f64": pa.array(nulls(floats), pa.float64()),
        "f64_full": pa.array(floats, pa.float64()),
        "b": pa.array(nulls(pick([True, False])), pa.bool_()),
        "s": pa.array(nulls(pick(AWKWARD)), pa.string()),
        "s_plain": pa.array(pick(["a", "bb", "ccc", "d d"]), pa.string()),
        "ls": pa.array(nulls(pick(AWKWARD)), pa.large_string()),
        "bin": pa.array(nulls([s.encode() for s in pick(AWKWARD)] ), pa.binary()),
        "dec": pa.array(nulls(decs), pa.decimal128(22, 4)),
        "day": pa.array(nulls(days), pa.int32()).cast(pa.date32()),
        "ts_ms": pa.array(nulls(ms), pa.int64()).cast(pa.timestamp("ms")),
        "ts_us": pa.array(nulls(us), pa.int64()).cast(pa.timestamp("us")),
        "ts_tz": pa.array(nulls(us), pa.int64()).cast(pa.timestamp("us", tz="UTC")),
        "lst": pa.array(nulls(lists), pa.list_(pa.int64())),
        "st": pa.array(nulls([{"x": i % 7, "y": s} for i, s in enumerate(pick(AWKWARD))]),
                       pa.struct([("x", pa.int32()), ("y", pa.string())])),
        "mp": pa.array(nulls([[(s, i)] for i, s in enumerate(pick(AWKWARD))]), pa.map_(pa.string(), pa.int64())),
        "nul": pa.nulls(n),
    }
    return pa.table(cols)


def _nested_table(seed: int, n: int) -> pa.Table:
    """``n`` rows of nested columns (lists, maps, rows, multisets, nested in each other) over
    every leaf type, with NULL rows, NULL elements, empty lists and maps at every level."""
    rng = np.random.default_rng(seed)

    def maybe(v: Any, p: float = 0.12) -> Any:
        return None if rng.random() < p else v

    def lists(leaf: Any, most: int = 4) -> list[Any]:
        return [maybe([maybe(leaf()) for _ in range(rng.integers(0, most + 1))]) for _ in range(n)]

    floats = _floats(rng, 4 * n) + EDGE_FLOATS + [float("nan"), float("inf"), float("-inf"), -0.0]
    strings = AWKWARD + ["\x7f", "\\\"", "\u0000", "\x1b[0m", "\ud7ff\ue000"]

    def f() -> float:
        return floats[rng.integers(0, len(floats))]

    def s() -> str:
        return strings[rng.integers(0, len(strings))]

    def i() -> int:
        return int(rng.integers(-2**63, 2**63 - 1, dtype=np.int64))

    def dec() -> decimal.Decimal:
        return decimal.Decimal(int(rng.integers(-10**17, 10**17))).scaleb(-4)

    def small_dec() -> decimal.Decimal:  # str() of a Decimal with few digits and scale 10: 1E-10, 0E-10
        return decimal.Decimal(int(rng.choice([0, 1, -7, 12345, 10**9, 10**12]))).scaleb(-10)

    def day() -> dt.date:
        return dt.date(1970, 1, 1) + dt.timedelta(days=int(rng.integers(-719_162, 2_932_896)))

    def ts() -> dt.datetime:
        return dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=int(rng.integers(-2**55, 2**55)))

    def tod() -> dt.time:
        us = int(rng.integers(0, 86_400_000_000))
        return dt.time(us // 3_600_000_000, us // 60_000_000 % 60, us // 1_000_000 % 60, us % 1_000_000)

    def pairs(key: Any, value: Any) -> list[Any]:
        return [maybe([(key(), maybe(value())) for _ in range(rng.integers(0, 4))]) for _ in range(n)]

    row = pa.struct([("a", pa.int32()), ("r", pa.struct([("b", pa.string()), ("c", pa.list_(pa.float64()))]))])
    cols = {
        "l_i": pa.array(lists(i), pa.list_(pa.int64())),
        "l_i8": pa.array(lists(lambda: int(rng.integers(-128, 127))), pa.list_(pa.int8())),
        "l_s": pa.array(lists(s), pa.list_(pa.string())),
        "l_ls": pa.array(lists(s), pa.list_(pa.large_string())),
        "l_f": pa.array(lists(f), pa.list_(pa.float64())),
        "l_f32": pa.array(lists(lambda: float(np.float32(np.clip(f(), -3.4e38, 3.4e38)))), pa.list_(pa.float32())),
        "l_b": pa.array(lists(lambda: bool(rng.random() < 0.5)), pa.list_(pa.bool_())),
        "l_dec": pa.array(lists(dec), pa.list_(pa.decimal128(22, 4))),
        "l_dec10": pa.array(lists(small_dec), pa.list_(pa.decimal128(38, 10))),
        "l_day": pa.array(lists(day), pa.list_(pa.date32())),
        "l_ts": pa.array(lists(ts), pa.list_(pa.timestamp("us"))),
        "l_ts_ms": pa.array(lists(lambda: ts().replace(microsecond=0)), pa.list_(pa.timestamp("ms"))),
        "l_ts_tz": pa.array(lists(ts), pa.list_(pa.timestamp("us"))).cast(pa.list_(pa.timestamp("us", tz="UTC"))),
        "l_time": pa.array(lists(tod), pa.list_(pa.time64("us"))),
        "l_bin": pa.array(lists(lambda: s().encode()), pa.list_(pa.binary())),
        "l_nul": pa.array(lists(lambda: None), pa.list_(pa.null())),
        "ll_s": pa.array([maybe([maybe([maybe(s()) for _ in range(rng.integers(0, 3))])
                                  for _ in range(rng.integers(0, 3))]) for _ in range(n)], pa.list_(pa.list_(pa.string()))),
        "big_l": pa.array(lists(i), pa.large_list(pa.int64())),
        "fix_l": pa.array([maybe([maybe(int(rng.integers(-9, 9))) for _ in range(2)]) for _ in range(n)],
                          pa.list_(pa.int32(), 2)),
        "m_sl": pa.array(pairs(s, lambda: [maybe(f()) for _ in range(rng.integers(0, 3))]),
                         pa.map_(pa.string(), pa.list_(pa.float64()))),
        "m_i_dec": pa.array(pairs(lambda: int(rng.integers(-5, 5)), dec), pa.map_(pa.int32(), pa.decimal128(22, 4))),
        "m_s_ts": pa.array(pairs(s, ts), pa.map_(pa.string(), pa.timestamp("us"))),
        "multiset": pa.array(pairs(s, lambda: int(rng.integers(1, 4))), pa.map_(pa.string(), pa.int32())),
        "r": pa.array([maybe({"a": maybe(int(rng.integers(-9, 9))),
                              "r": maybe({"b": maybe(s()), "c": maybe([maybe(f()) for _ in range(rng.integers(0, 3))])})})
                       for _ in range(n)], row),
        "r_day": pa.array([maybe({"d": maybe(day()), "bin": maybe(s().encode()), "e": maybe(dec())})
                           for _ in range(n)], pa.struct([("d", pa.date32()), ("bin", pa.binary()),
                                                          ("e", pa.decimal128(22, 4))])),
        "l_r": pa.array(lists(lambda: {"k": s(), "v": maybe([maybe(day()) for _ in range(rng.integers(0, 2))])}),
                        pa.list_(pa.struct([("k", pa.string()), ("v", pa.list_(pa.date32()))]))),
        "l_m": pa.array(lists(lambda: [(s(), maybe(f()))]), pa.list_(pa.map_(pa.string(), pa.float64()))),
    }
    return pa.table(cols)


NESTED_TABLES = {
    "small": _nested_table(11, 60),
    "mixed": _nested_table(12, 2500),
}
NESTED_SHAPES = {
    "all": None,
    "one_list": ["l_s"],
    "lists": ["l_i", "l_f", "l_s", "l_dec", "l_ts", "l_bin"],
    "maps_rows": ["m_sl", "multiset", "r", "l_r", "l_m"],
    "with_flat": ["l_s", "r"],
}

TABLES = {
    "small": _table(1, 40, finite=False),
    "finite": _table(2, 3000, finite=True),
    "mixed": _table(3, 3000, finite=False),
}
# narrower shapes: one column (csv quotes an empty field of a one-field row), a few columns
SHAPES = {
    "all": None,
    "one_str": ["s"],
    "one_float": ["f64"],
    "one_nul": ["nul"],
    "flat": ["i32", "f64", "f64_full", "f32", "s", "b", "ts_ms", "i64", "s_plain", "day", "dec"],
}


def _batches(t: pa.Table, cols: list[str] | None) -> tuple[list[pa.RecordBatch], pa.Schema]:
    t = t if cols is None else t.select(cols)
    return t.to_batches(max_chunksize=700), t.schema


def _read_text(t: pa.Table, cols: list[str] | None, fmt: str) -> bytes:
    batches, schema = _batches(t, cols)
    out = io.StringIO()
    if fmt == "csv":
        write_csv_batches(iter(batches), schema, out)
    else:
        write_json_batches(iter(batches), out, lines=fmt == "jsonl")
    return out.getvalue().encode()


def _export_csv(t: pa.Table, cols: list[str] | None) -> bytes:
    batches, schema = _batches(t, cols)
    out = io.BytesIO()
    write_export(iter(batches), schema, "csv", out)
    return out.getvalue()


class _Stream:
    """A RowStream whose column chunks are the given arrays (what ``inspect files`` hands on)."""

    def __init__(self, chunks: list[dict[str, Any]], columns: list[str]) -> None:
        self.columns = columns
        self.brief = None
        self._chunks = chunks

    def chunks(self, columns: list[str], typed: bool) -> Iterator[list[dict[str, Any]]]:
        raise AssertionError("column chunks expected")

    def column_chunks(self, columns: list[str], typed: bool, *rest: Any) -> Iterator[dict[str, Any]]:
        return iter([{c: ch[c] for c in columns} for ch in self._chunks])

    def collect(self, columns: list[str] | None = None, limit: int | None = None) -> Any:
        raise AssertionError("not on a terminal")


STREAM_COLUMNS = ["i32", "i64", "f64", "f64_full", "f32", "b", "s", "s_plain", "ts_ms", "nul"]


def _stream_chunks(t: pa.Table, cols: list[str]) -> list[dict[str, Any]]:
    chunks = []
    for start in range(0, t.num_rows, 900):
        part = t.slice(start, 900)
        ch: dict[str, Any] = {c: part.column(c).combine_chunks() for c in cols}
        if "s" in cols:  # a Picked column of Python values spread by index (partitions, keys)
            values = [None, "p,1", 'q"2', 3, 1.5, float("nan"), True, dt.date(2024, 5, 1), "line\nx", ""]
            idx = np.arange(part.num_rows) % len(values)
            ch["s"] = Picked(values, idx)
        chunks.append(ch)
    return chunks


def _stream_text(t: pa.Table, cols: list[str], fmt: str, monkeypatch: Any, limit: int | None = None) -> bytes:
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    render_stream(_Stream(_stream_chunks(t, cols), cols), fmt, wide=True, limit=limit)  # type: ignore[arg-type]
    monkeypatch.undo()
    return out.getvalue().encode()


def _rows_text(t: pa.Table, cols: list[str], fmt: str) -> bytes:
    rows = Rows(cols, t.select(cols).to_pylist())
    out = io.StringIO()
    render(rows, fmt, wide=True, out=out)
    return out.getvalue().encode()


def _cases(monkeypatch: Any) -> Iterator[tuple[str, bytes]]:
    for tname, t in TABLES.items():
        for sname, cols in SHAPES.items():
            for fmt in ("csv", "json", "jsonl"):
                yield f"read {tname} {sname} {fmt}", _read_text(t, cols, fmt)
            yield f"export {tname} {sname} csv", _export_csv(t, cols)
        for cols in (STREAM_COLUMNS, ["s"], ["f64"], ["nul"], ["s_plain", "f64_full"]):
            for fmt in ("csv", "json", "jsonl", "table"):
                yield f"stream {tname} {','.join(cols)} {fmt}", _stream_text(t, cols, fmt, monkeypatch)
                yield f"stream {tname} {','.join(cols)} {fmt} limit", _stream_text(t, cols, fmt, monkeypatch, 1234)
        for cols in (STREAM_COLUMNS, ["s"], ["nul"], ["lst", "st", "mp", "bin", "dec", "ts_tz", "ts_us"]):
            for fmt in ("csv", "json", "jsonl", "table"):
                yield f"rows {tname} {','.join(cols)} {fmt}", _rows_text(t, cols, fmt)


STREAM_TYPED = ["lst", "st", "mp", "bin", "dec", "day", "ts_tz", "ts_us"]


def _nested_cases(monkeypatch: Any) -> Iterator[tuple[str, bytes]]:
    for tname, t in TABLES.items():  # a stream's column chunks of nested, binary, decimal, temporal columns
        for fmt in ("csv", "json", "jsonl", "table"):
            yield f"nested stream {tname} {fmt}", _stream_text(t, STREAM_TYPED, fmt, monkeypatch)
    for tname, t in NESTED_TABLES.items():
        for sname, cols in NESTED_SHAPES.items():
            for fmt in ("csv", "json", "jsonl"):
                yield f"nested read {tname} {sname} {fmt}", _read_text(t, cols, fmt)
            yield f"nested export {tname} {sname} csv", _export_csv(t, cols)


def _digest(data: bytes) -> str:
    return f"{len(data)} {hashlib.sha256(data).hexdigest()}"


def test_render_bytes_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    expected = json.loads(GOLDEN.read_text())
    got = {name: _digest(data) for name, data in _cases(monkeypatch)}
    assert set(got) == {name for name in expected if not name.startswith("nested ")}
    wrong = sorted(name for name in got if got[name] != expected[name])
    assert not wrong, wrong


def test_nested_render_bytes_unchanged(monkeypatch: pytest.MonkeyPatch) -> None:
    """Nested columns (``read -o csv|jsonl|json``, ``read --to x.csv``), and a stream's column
    chunks of nested, binary, decimal and temporal columns (``inspect``), print the bytes they
    printed when each value went through ``to_text`` / ``to_json_value`` (commit f2c4327)."""
    expected = json.loads(GOLDEN.read_text())
    got = {name: _digest(data) for name, data in _nested_cases(monkeypatch)}
    assert set(got) == {name for name in expected if name.startswith("nested ")}
    wrong = sorted(name for name in got if got[name] != expected[name])
    assert not wrong, wrong


if __name__ == "__main__":
    mp = pytest.MonkeyPatch()
    digests = {name: _digest(data) for name, data in _cases(mp)}
    digests.update({name: _digest(data) for name, data in _nested_cases(mp)})
    GOLDEN.write_text(json.dumps(digests, indent=1, sort_keys=True) + "\n")
    print(len(digests), "cases")
