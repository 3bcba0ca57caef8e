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


def _dumps(v: object) -> str | None:
    import json

    from paimon_cli.output import to_json_value

    return None if v is None else json.dumps(to_json_value(v), ensure_ascii=False, separators=(",", ":"))


_compact = __import__("json").JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


def _random_columns(seed: int, n: int) -> dict[str, pa.Array]:
    """Columns of every type :func:`json_texts` takes, nested in each other, NULL at every
    level, with the values whose Arrow text differs from Python's (years below 1000,
    nanoseconds, exponent-form decimals)."""
    import datetime as dt
    import decimal

    rng = random.Random(seed)

    def maybe(make: object) -> object:
        return None if rng.random() < 0.15 else make()  # type: ignore[operator]

    def lst(make: object, most: int = 3) -> list[object]:
        return [maybe(make) for _ in range(rng.randint(0, most))]

    strings = ["", "a", 'q"', "b\\s", "\n\r\t\b\f", "\x00\x01\x1f\x7f", "\u00e9\U0001f600", "\u2028", "x,y", "null"]
    floats = [0.0, -0.0, 1.5, 1e16, 1e-7, 5e-324, float("nan"), float("inf"), float("-inf"), 0.1, 123456789.0]

    def f() -> float:
        return rng.choice(floats) if rng.random() < 0.5 else rng.uniform(-1, 1) * 10.0 ** rng.randint(-30, 30)

    def ts(low: int = -2**55) -> int:
        return rng.randint(low, 2**55)

    us = [maybe(ts) for _ in range(n)]
    ns_whole = [None if v is None else v % 2**52 * 1000 for v in us]
    row = pa.struct([("a", pa.int16()), ("b", pa.struct([("c", pa.string()), ("d", pa.list_(pa.float32()))]))])
    cols = {
        "u64": pa.array([maybe(lambda: rng.randint(0, 2**64 - 1)) for _ in range(n)], pa.uint64()),
        "f16": pa.array([maybe(lambda: rng.choice([0.5, -2.0, 65504.0, 0.0999755859375])) for _ in range(n)],
                        pa.float16()),
        "dec": pa.array([maybe(lambda: decimal.Decimal(rng.randint(-10**20, 10**20)).scaleb(-rng.choice([0, 3])))
                         for _ in range(n)], pa.decimal128(38, 3)),
        "dec_e": pa.array([maybe(lambda: decimal.Decimal(rng.choice([0, 1, -5, 10**7, 123])).scaleb(-12))
                           for _ in range(n)], pa.decimal128(30, 12)),
        "dec_neg": pa.array([maybe(lambda: decimal.Decimal(rng.randint(-999, 999)).scaleb(2)) for _ in range(n)],
                            pa.decimal128(12, -2)),
        "d32": pa.array([maybe(lambda: rng.randint(-719_162, 2_932_896)) for _ in range(n)], pa.int32()).cast(pa.date32()),
        "d64": pa.array([maybe(lambda: rng.randint(-700_000, 2_000_000) * 86_400_000) for _ in range(n)],
                        pa.int64()).cast(pa.date64()),
        "ts_s": pa.array([None if v is None else v // 10**6 for v in us], pa.int64()).cast(pa.timestamp("s")),
        "ts_ms": pa.array([None if v is None else v // 1000 for v in us], pa.int64()).cast(pa.timestamp("ms")),
        "ts_us": pa.array(us, pa.int64()).cast(pa.timestamp("us")),
        "ts_late": pa.array([maybe(lambda: ts(0)) for _ in range(n)], pa.int64()).cast(pa.timestamp("us")),
        "ts_ns": pa.array(ns_whole, pa.int64()).cast(pa.timestamp("ns")),
        "ts_tz": pa.array([maybe(lambda: ts(0)) for _ in range(n)], pa.int64()).cast(pa.timestamp("us", "Asia/Tokyo")),
        "ts_tz_old": pa.array([None if v is None else v // 1000 for v in us], pa.int64()).cast(pa.timestamp("ms", "UTC")),
        "t_s": pa.array([maybe(lambda: rng.randint(0, 86_399)) for _ in range(n)], pa.int32()).cast(pa.time32("s")),
        "t_us": pa.array([maybe(lambda: rng.randint(0, 86_400 * 10**6 - 1)) for _ in range(n)],
                         pa.int64()).cast(pa.time64("us")),
        "fbin": pa.array([maybe(lambda: bytes(rng.randrange(256) for _ in range(3))) for _ in range(n)],
                         pa.binary(3)),
        "dict": pa.array([maybe(lambda: rng.choice(strings)) for _ in range(n)], pa.string()).dictionary_encode(),
        "l_s": pa.array([maybe(lambda: lst(lambda: rng.choice(strings))) for _ in range(n)], pa.list_(pa.string())),
        "l_f": pa.array([maybe(lambda: lst(f)) for _ in range(n)], pa.large_list(pa.float64())),
        "l_l_b": pa.array([maybe(lambda: lst(lambda: lst(lambda: rng.random() < 0.5))) for _ in range(n)],
                          pa.list_(pa.list_(pa.bool_()))),
        "l_ts": pa.array([maybe(lambda: lst(lambda: dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=ts())))
                          for _ in range(n)], pa.list_(pa.timestamp("us"))),
        "fix": pa.array([maybe(lambda: [maybe(f) for _ in range(2)]) for _ in range(n)], pa.list_(pa.float64(), 2)),
        "m": pa.array([maybe(lambda: [(rng.choice(strings), maybe(lambda: lst(f))) for _ in range(rng.randint(0, 3))])
                       for _ in range(n)], pa.map_(pa.string(), pa.list_(pa.float64()))),
        "m_dec": pa.array([maybe(lambda: [(rng.randint(-3, 3), maybe(lambda: decimal.Decimal("1.50")))])
                           for _ in range(n)], pa.map_(pa.int8(), pa.decimal128(5, 2))),
        "row": pa.array([maybe(lambda: {"a": maybe(lambda: rng.randint(-9, 9)),
                                         "b": maybe(lambda: {"c": maybe(lambda: rng.choice(strings)),
                                                             "d": maybe(lambda: lst(f))})})
                         for _ in range(n)], row),
        "l_row": pa.array([maybe(lambda: lst(lambda: {"x": maybe(lambda: b"\x00\xff"), "y": None}))
                           for _ in range(n)], pa.list_(pa.struct([("x", pa.binary()), ("y", pa.null())]))),
        "empty_row": pa.array([maybe(dict) for _ in range(n)], pa.struct([])),
        "l_null": pa.array([maybe(lambda: lst(lambda: None)) for _ in range(n)], pa.list_(pa.null())),
    }
    return cols


def test_json_texts_are_the_per_value_json() -> None:
    """:func:`json_texts` of every type, whole and sliced (offsets into the children), is
    ``json.dumps(to_json_value(v))`` of each value; a nested value's is also ``to_text``
    (``read -o csv``'s field)."""
    from paimon_cli.column_text import json_texts
    from paimon_cli.output import _json_value_text, _text_column, json_fragments, to_text

    for seed in (1, 2, 3):
        for name, col in _random_columns(seed, 400).items():
            for part in (col, col.slice(37, 211), col.slice(399), col.slice(5, 0)):
                values = part.to_pylist()
                got = json_texts(part)
                assert got.type == pa.string()
                expected = [_dumps(v) for v in values]
                wrong = [(v, e, g) for v, e, g in zip(values, expected, got.to_pylist(), strict=True) if e != g]
                assert not wrong, (name, wrong[:5])
                fragments = json_fragments(part, None).to_pylist()
                assert fragments == ["null" if e is None else e for e in expected], name
                if pa.types.is_nested(part.type):
                    assert got.to_pylist() == [None if v is None else to_text(v) for v in values], name
                for indent in ("    ", "      "):  # -o json's layout under a key line indented so
                    pretty = json_texts(part, indent).to_pylist()
                    assert pretty == [None if v is None else _json_value_text(v, _compact, indent) for v in values], name
                cells = _text_column(part, "").to_pylist()  # a column chunk's csv field / table cell
                assert cells == [to_text(v, null="") for v in values], name


def test_json_texts_chunked_and_empty_nested() -> None:
    from paimon_cli.column_text import json_texts

    chunked = pa.chunked_array([pa.array([[1, None], []], pa.list_(pa.int64())), pa.array([None], pa.list_(pa.int64()))])
    assert json_texts(chunked).to_pylist() == ["[1,null]", "[]", None]
    assert json_texts(pa.array([], pa.map_(pa.string(), pa.int32()))).to_pylist() == []
    assert json_texts(pa.array([{"a": [], "b": None}], pa.struct([("a", pa.list_(pa.int8())), ("b", pa.map_(
        pa.string(), pa.int8()))]))).to_pylist() == ['{"a":[],"b":null}']


def test_json_texts_row_of_duplicate_names_as_before() -> None:
    """A row with two fields of one name has no Python value (pyarrow refuses the dict):
    the column-wise text refuses it the same way, rather than guessing which field wins."""
    import pytest

    from paimon_cli.column_text import json_texts

    col = pa.StructArray.from_arrays([pa.array([1, 2]), pa.array(["a", "b"])], ["k", "k"])
    with pytest.raises(ValueError) as before:
        col.to_pylist()
    with pytest.raises(ValueError) as now:
        json_texts(col)
    assert str(now.value) == str(before.value)


def test_json_texts_values_outside_pythons_types_as_before() -> None:
    """Timestamps outside what Python's datetime holds fail as the per-value path fails (never
    printed wrong); a time past a day (Python wraps it) and a date64 holding a time of day
    (Arrow refuses to cast it to days) are the per-value texts."""
    import pytest

    from paimon_cli.column_text import json_texts

    for col in (pa.array([0, 2**62], pa.int64()).cast(pa.timestamp("s")),
                pa.array([0, -2**62], pa.int64()).cast(pa.timestamp("s", "UTC"))):
        with pytest.raises(OverflowError):
            col.to_pylist()
        with pytest.raises(OverflowError):
            json_texts(col)
    for col in (pa.array([1, 90_000, None], pa.int32()).cast(pa.time32("s")),
                pa.array([1, 86_400_000_001], pa.int64()).cast(pa.time64("us")),
                pa.array([-1, 86_400_001, -86_400_000, None], pa.int64()).cast(pa.date64())):
        assert json_texts(col).to_pylist() == [_dumps(v) for v in col.to_pylist()], col.type
