"""Column-at-a-time text (``paimon_cli.column_text``) against its per-value oracles: Python's
``repr`` of floats, ``bytes.hex`` and Python's ``csv`` writer (the running Python's)."""

from __future__ import annotations

import csv
import io
import random

import numpy as np
import pyarrow as pa

from paimon_cli.column_text import csv_fields, csv_lines, float_reprs, float_texts, hex_texts, json_strings


def _doubles() -> np.ndarray:
    rng = np.random.default_rng(7)
    bits = rng.integers(0, 2**64, 300_000, dtype=np.uint64).view(np.float64)
    subnormal = rng.integers(1, 2**52, 20_000, dtype=np.uint64).view(np.float64)
    powers = 10.0 ** np.arange(-323, 309)
    edges = np.array([0.0, -0.0, 5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e-4, 1e-5, 1e-6, 1e-7,
                      9.999999999999999e-05, 9999999999.999998, 1e10, 1e15, 1e16, 9999999999999998.0,
                      9999999999999999.0, 2.0**53, 2.0**53 + 2, 489.0, 0.1, 1 / 3])
    vals = np.concatenate([
        bits[np.isfinite(bits)], subnormal, powers, 1.5 * powers, edges,
        rng.random(50_000) * 10.0 ** rng.integers(-12, 20, 50_000),  # around every layout boundary
        rng.integers(-10**17, 10**17, 50_000).astype(np.float64),  # whole numbers, below and above 1e16
        rng.random(20_000).astype(np.float32).astype(np.float64),
    ])
    with np.errstate(over="ignore"):
        vals = np.concatenate([vals, np.nextafter(vals, np.inf), np.nextafter(vals, -np.inf)])
    vals = vals[np.isfinite(vals)]
    return np.concatenate([vals, -vals])


def test_float_reprs_are_python_repr() -> None:
    vals = _doubles()
    got = float_reprs(pa.array(vals)).to_pylist()
    expected = [repr(v) for v in vals.tolist()]
    wrong = [(e, g) for g, e in zip(got, expected, strict=True) if g != e]
    assert not wrong, wrong[:20]


def test_float_texts_nulls_and_non_finite() -> None:
    col = pa.array([1.0, None, float("nan"), float("inf"), float("-inf"), -0.0, 1e-5, 3.0e15], pa.float64())
    assert float_texts(col, "N", "I", "-I", "null").to_pylist() == [
        "1.0", "null", "N", "I", "-I", "-0.0", "1e-05", "3000000000000000.0"]
    f32 = pa.array([0.1, 1e-7, None], pa.float32())
    assert float_texts(f32, "N", "I", "-I", "").to_pylist() == [repr(v) if v is not None else "" for v in f32.to_pylist()]


def test_hex_texts_are_bytes_hex() -> None:
    rng = random.Random(3)
    values = [None if rng.random() < 0.1 else bytes(rng.randrange(256) for _ in range(rng.randrange(6)))
              for _ in range(2000)] + [bytes(range(256)), b""]
    col = pa.array(values, pa.binary())
    for c in (col, col.slice(7), col.cast(pa.large_binary())):
        assert hex_texts(c).to_pylist() == [None if v is None else v.hex() for v in c.to_pylist()]
    fixed = pa.array([b"\x00\xff", None, b"ab"], pa.binary(2))
    assert hex_texts(fixed).to_pylist() == ["00ff", None, "6162"]


def test_csv_lines_are_python_csv() -> None:
    rng = random.Random(5)
    alphabet = ["a", ",", '"', "\n", "\r", "\r\n", " ", "\t", "\\", "'", "\u00e9", "\u2028", "\x85", "\x00", "#", ""]
    for ncol in (1, 2, 5):
        rows = [["".join(rng.choice(alphabet) for _ in range(rng.randrange(4))) for _ in range(ncol)]
                for _ in range(3000)]
        out = io.StringIO()
        csv.writer(out, lineterminator="\n").writerows(rows)
        cols = [csv_fields(pa.array([r[i] for r in rows], pa.string()), ncol == 1) for i in range(ncol)]
        assert csv_lines(cols).to_pybytes().decode() == out.getvalue()


def test_json_strings_are_python_json() -> None:
    import json

    rng = random.Random(9)
    alphabet = [chr(c) for c in range(0x20)] + ['"', "\\", "/", "a", " ", "\x7f", "\u00e9", "\u2028", "\U0001f600", "u"]
    values = [None if rng.random() < 0.05 else "".join(rng.choice(alphabet) for _ in range(rng.randrange(6)))
              for _ in range(5000)]
    got = json_strings(pa.array(values, pa.string())).to_pylist()
    assert got == [None if v is None else json.encoder.encode_basestring(v) for v in values]  # type: ignore[attr-defined]
    assert json_strings(pa.array(["plain", None])).to_pylist() == ['"plain"', None]
