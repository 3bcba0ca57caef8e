"""Column stats as Java computes them (modes, truncation, per-format quirks, dense store)."""

from __future__ import annotations

import datetime as dt
import decimal
import math

import pyarrow as pa
import pytest

from paimon_cli.core.data import binary_row as br
from paimon_cli.core.data.types import DataField, parse_data_type
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.manifest.stats import (
    ColStats,
    StatsMode,
    apply_mode,
    collect_key_stats,
    collect_value_stats,
    decode_stats,
    raw_col_stats,
    to_simple_stats,
    truncate_max,
    truncate_min,
    value_stats_modes,
)
from paimon_cli.core.schema.options import CoreOptions


def _f(i: int, name: str, sql: str) -> DataField:
    return DataField(i, name, parse_data_type(sql))


def _col(values: list, sql: str) -> pa.ChunkedArray:
    f = _f(0, "c", sql)
    return pa.chunked_array([pa.array(values, arrow_schema([f]).field(0).type)])


# -- modes and truncation ---------------------------------------------------------------


def test_parse_modes() -> None:
    assert StatsMode.parse("TRUNCATE(16)") == StatsMode("truncate", 16)
    assert StatsMode.parse("full") == StatsMode("full")
    for bad in ("truncate(0)", "truncate", "partial"):
        with pytest.raises(InvalidInput):
            StatsMode.parse(bad)


def test_truncate_strings_by_code_points() -> None:
    assert truncate_min("ab\U0001f600cd", 3) == "ab\U0001f600"
    assert truncate_max("ab\U0001f600cd", 3) == ("ab\U0001f601", True)
    assert truncate_max("abc", 3) == ("abc", True)  # not cut -> unchanged
    # the last code point cannot grow: drop it and grow the one before
    assert truncate_max("a\U0010ffffz", 2) == ("b", True)
    assert truncate_max("\U0010ffff" * 3, 2) == (None, False)
    # Java appends U+D800 to a UTF-16 builder; encoding it yields '?'
    assert truncate_max("a\ud7ffz", 2) == ("a?", True)
    assert truncate_min(5, 1) == 5 and truncate_max(5, 1) == (5, True)


def test_apply_mode() -> None:
    s = ColStats("a" * 20, "b" * 20, 3)
    assert apply_mode(s, StatsMode("none")) == ColStats(None, None, None)
    assert apply_mode(s, StatsMode("counts")) == ColStats(None, None, 3)
    assert apply_mode(s, StatsMode("full")) == s
    assert apply_mode(s, StatsMode("truncate", 4)) == ColStats("aaaa", "bbbc", 3)
    assert apply_mode(ColStats("a", "\U0010ffff" * 5, 0), StatsMode("truncate", 2)) == ColStats(None, None, 0)


def test_modes_per_field_and_keep_first_n() -> None:
    fields = [_f(0, "a", "INT"), _f(1, "b", "INT"), _f(2, "c", "INT")]
    opts = CoreOptions({"metadata.stats-keep-first-n-columns": "1", "fields.c.stats-mode": "full"})
    assert value_stats_modes(fields, opts) == [StatsMode("truncate", 16), StatsMode("none"), StatsMode("full")]


# -- raw stats per type and format --------------------------------------------------------


def test_atomic_min_max() -> None:
    assert raw_col_stats(_col([3, None, -1], "INT"), parse_data_type("INT")) == ColStats(-1, 3, 1)
    assert raw_col_stats(_col([True, None], "BOOLEAN"), parse_data_type("BOOLEAN")) == ColStats(True, True, 1)
    d = raw_col_stats(_col([decimal.Decimal("1.50"), decimal.Decimal("-2.25")], "DECIMAL(5, 2)"),
                      parse_data_type("DECIMAL(5, 2)"))
    assert (d.min, d.max) == (decimal.Decimal("-2.25"), decimal.Decimal("1.50"))
    day = raw_col_stats(_col([dt.date(2024, 1, 2), dt.date(1969, 1, 1)], "DATE"), parse_data_type("DATE"))
    assert (day.min, day.max) == (-365, 19724)
    ts = raw_col_stats(_col([dt.datetime(2024, 1, 1, 0, 0, 0, 123456), dt.datetime(1960, 1, 1)], "TIMESTAMP(6)"),
                       parse_data_type("TIMESTAMP(6)"))
    assert ts.max == br.Timestamp.from_datetime(dt.datetime(2024, 1, 1, 0, 0, 0, 123456))
    assert ts.min == br.Timestamp.from_datetime(dt.datetime(1960, 1, 1))
    s = raw_col_stats(_col(["b", "ä", "a"], "STRING"), parse_data_type("STRING"))
    assert (s.min, s.max) == ("a", "ä")  # UTF-8 byte order = code point order


def test_all_null_and_binary_and_nested() -> None:
    assert raw_col_stats(_col([None, None], "INT"), parse_data_type("INT")) == ColStats(None, None, 2)
    assert raw_col_stats(_col([b"a", None], "BYTES"), parse_data_type("BYTES")) == ColStats(None, None, 1)
    arr = _col([[1], None], "ARRAY<INT>")
    assert raw_col_stats(arr, parse_data_type("ARRAY<INT>"), "parquet") == ColStats(None, None, None)
    assert raw_col_stats(arr, parse_data_type("ARRAY<INT>"), "avro") == ColStats(None, None, 1)
    assert raw_col_stats(arr, parse_data_type("ARRAY<INT>"), "orc") == ColStats(None, None, 1)


def test_parquet_quirks() -> None:
    t9 = parse_data_type("TIMESTAMP(9)")
    ns = pa.chunked_array([pa.array([1, None], pa.timestamp("ns"))])
    assert raw_col_stats(ns, t9, "parquet") == ColStats(None, None, 1)
    assert raw_col_stats(ns, t9, "orc") == ColStats(br.Timestamp(0, 1), br.Timestamp(0, 1), 1)
    long = "x" * 2048
    assert raw_col_stats(_col([long, long], "STRING"), parse_data_type("STRING"), "parquet") == ColStats(None, None, 0)
    assert raw_col_stats(_col([long], "STRING"), parse_data_type("STRING"), "avro").min == long


def test_float_nan_and_zero_per_format() -> None:
    dbl = parse_data_type("DOUBLE")
    nan = _col([1.0, float("nan"), 2.0], "DOUBLE")
    assert raw_col_stats(nan, dbl, "parquet") == ColStats(None, None, 0)
    s = raw_col_stats(nan, dbl, "avro")
    assert s.min == 1.0 and math.isnan(s.max)
    only = raw_col_stats(_col([float("nan")], "DOUBLE"), dbl, "avro")
    assert math.isnan(only.min) and math.isnan(only.max)
    zeros = _col([0.0, -0.0, 3.0], "DOUBLE")
    p = raw_col_stats(zeros, dbl, "parquet")
    assert math.copysign(1, p.min) == -1
    a = raw_col_stats(zeros, dbl, "avro")
    assert math.copysign(1, a.min) == -1
    o = raw_col_stats(zeros, dbl, "orc")  # first zero of the file wins
    assert math.copysign(1, o.min) == 1
    neg = raw_col_stats(_col([-0.0, -5.0], "DOUBLE"), dbl, "parquet")
    assert math.copysign(1, neg.max) == 1  # parquet-mr widens a -0.0 max to +0.0


# -- SimpleStats rows ----------------------------------------------------------------------


def _table() -> tuple[pa.Table, list[DataField]]:
    fields = [_f(0, "id", "INT NOT NULL"), _f(1, "name", "STRING"), _f(2, "amount", "DECIMAL(25, 2)"),
              _f(3, "ts", "TIMESTAMP(6)"), _f(4, "tags", "ARRAY<STRING>")]
    rows = [{"id": 2, "name": "bob-has-a-rather-long-name", "amount": decimal.Decimal("1.00"),
             "ts": None, "tags": ["a"]},
            {"id": 1, "name": None, "amount": None, "ts": None, "tags": None}]
    return pa.Table.from_pylist(rows, schema=arrow_schema(fields)), fields


def test_value_stats_default_truncate16() -> None:
    t, fields = _table()
    stats, cols = collect_value_stats(t, fields, CoreOptions({}))
    assert cols is None
    got = decode_stats(stats, [f.type for f in fields])
    assert got[0] == ColStats(1, 2, 0)
    assert got[1] == ColStats("bob-has-a-rather", "bob-has-a-rathes", 1)
    assert got[2] == ColStats(decimal.Decimal("1.00"), decimal.Decimal("1.00"), 1)
    assert got[3] == ColStats(None, None, 2)
    assert got[4] == ColStats(None, None, None)  # parquet is the default format


def test_null_non_compact_values_reserve_nothing_in_stats_rows() -> None:
    # Java's InternalRowSerializer writes a NULL as null bit + zero slot, even for TIMESTAMP(6)
    types = [parse_data_type("TIMESTAMP(6)"), parse_data_type("DECIMAL(25, 2)")]
    s = to_simple_stats([ColStats(None, None, 1), ColStats(None, None, 1)], types)
    assert len(s.min_values) == 4 + 8 + 16  # arity, null bits, two slots: no variable part
    assert s.min_values == br.serialize([None, None], [parse_data_type("BIGINT")] * 2)
    assert len(br.serialize([None, None], types)) > len(s.min_values)  # key rows do reserve


def test_dense_store_and_none_columns() -> None:
    t, fields = _table()
    stats, cols = collect_value_stats(t, fields, CoreOptions({"fields.name.stats-mode": "none"}))
    assert cols == ("id", "amount", "ts", "tags")
    assert stats.null_counts == [0, 1, 2, None]
    kept = [f.type for f in fields if f.name != "name"]
    assert decode_stats(stats, kept)[0] == ColStats(1, 2, 0)
    none, cols = collect_value_stats(t, fields, CoreOptions({"metadata.stats-mode": "none"}))
    assert cols == () and none.null_counts == [] and none.min_values == br.EMPTY_ROW
    sparse, cols = collect_value_stats(
        t, fields, CoreOptions({"fields.name.stats-mode": "none", "metadata.stats-dense-store": "false"}))
    assert cols is None and sparse.null_counts == [0, None, 1, 2, None]


def test_counts_and_full_modes() -> None:
    t, fields = _table()
    stats, _ = collect_value_stats(t, fields, CoreOptions({"metadata.stats-mode": "counts",
                                                           "fields.name.stats-mode": "full"}))
    got = decode_stats(stats, [f.type for f in fields])
    assert got[0] == ColStats(None, None, 0)
    assert got[1] == ColStats("bob-has-a-rather-long-name", "bob-has-a-rather-long-name", 1)


def test_key_stats_truncate128_unless_overridden() -> None:
    keys = [_f(1073741823, "_KEY_k", "STRING NOT NULL")]
    long = "k" * 200
    t = pa.table({"_KEY_k": pa.array(["a", long], pa.string())})
    got = decode_stats(collect_key_stats(t, keys), [keys[0].type])[0]
    assert got.min == "a" and got.max == "k" * 127 + "l" and got.null_count == 0
    full = collect_key_stats(t, keys, CoreOptions({"fields._KEY_k.stats-mode": "full"}))
    assert decode_stats(full, [keys[0].type])[0].max == long
