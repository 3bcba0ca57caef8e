"""The evaluator never prunes a file holding a matching row, and prunes where it can.

Random columns (ints, strings, doubles, dates, timestamps, decimals) with NULLs, built with
every index kind that supports them over several batches, against random predicates
(=, <>, <, <=, >, >=, IN, NOT IN, IS [NOT] NULL, AND, OR, NOT); the truth is pyarrow's filter.
"""

from __future__ import annotations

import datetime as dt
import decimal
import random

import pyarrow as pa
import pytest

from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import parse_columns as _parse_columns
from paimon_cli.core.fileindex.evaluator import evaluate, remains
from paimon_cli.core.fileindex.format import FileIndexContainer
from paimon_cli.core.fileindex.writer import DataFileIndexWriter
from paimon_cli.core.schema.table_schema import assign_field_ids

COLUMNS = "i INT, b BIGINT, s STRING, d DOUBLE, day DATE, ts TIMESTAMP(6), m DECIMAL(10, 2), t TINYINT"


def parse_columns(text: str) -> list:
    return assign_field_ids(_parse_columns(text))[0]


OPTIONS = {
    "file-index.bloom-filter.columns": "i,b,s,d,day,ts,t",
    "file-index.bloom-filter.s.items": "200", "file-index.bloom-filter.i.items": "200",
    "file-index.bitmap.columns": "i,s,d,day,ts,t",
    "file-index.bitmap.s.version": "1",
    "file-index.bsi.columns": "i,b,day,ts,m,t",
}


def _rows(rnd: random.Random, n: int) -> list[dict]:
    base = rnd.randint(-20, 20)
    out = []
    for _ in range(n):
        def maybe(v):  # noqa: ANN001, ANN202
            return None if rnd.random() < 0.1 else v
        out.append({
            "i": maybe(base + rnd.randint(0, 8)), "b": maybe(rnd.choice([-(2**40), 0, 7, 2**40, base * 1000])),
            "s": maybe(f"v{base + rnd.randint(0, 6)}"), "d": maybe(rnd.choice([0.0, -0.0, 1.5, base / 4, -3.25])),
            "day": maybe(dt.date(2020, 1, 1) + dt.timedelta(days=base + rnd.randint(0, 5))),
            "ts": maybe(dt.datetime(2021, 1, 1) + dt.timedelta(microseconds=rnd.randint(0, 4) * 1_000_001 + base)),
            "m": maybe(decimal.Decimal(rnd.randint(-500, 500)) / 100), "t": maybe(rnd.randint(-128, 127)),
        })
    return out


def _literal(rnd: random.Random, col: str) -> str:
    if col == "i":
        return str(rnd.randint(-25, 30))
    if col == "b":
        return str(rnd.choice([-(2**40), 0, 7, 2**40, rnd.randint(-20_000, 20_000), 8]))
    if col == "s":
        return f"'v{rnd.randint(-25, 30)}'"
    if col == "d":
        return rnd.choice(["0.0", "-0.0", "1.5", "-3.25", "2.0", str(rnd.randint(-20, 20) / 4)])
    if col == "day":
        return f"DATE '{(dt.date(2020, 1, 1) + dt.timedelta(days=rnd.randint(-25, 30))).isoformat()}'"
    if col == "ts":
        v = dt.datetime(2021, 1, 1) + dt.timedelta(microseconds=rnd.randint(0, 4) * 1_000_001 + rnd.randint(-20, 20))
        return f"TIMESTAMP '{v.isoformat(sep=' ')}'"
    if col == "m":
        return str(decimal.Decimal(rnd.randint(-600, 600)) / 100)
    return str(rnd.randint(-128, 127))


def _leaf(rnd: random.Random) -> str:
    col = rnd.choice(["i", "b", "s", "d", "day", "ts", "m", "t"])
    op = rnd.choice(["=", "=", "=", "<>", "<", "<=", ">", ">=", "in", "not in", "is null", "is not null"])
    if op in ("in", "not in"):
        return f"{col} {op.upper()} ({', '.join(_literal(rnd, col) for _ in range(rnd.randint(1, 3)))})"
    if op.startswith("is"):
        return f"{col} {op.upper()}"
    return f"{col} {op} {_literal(rnd, col)}"


def _pred(rnd: random.Random, depth: int = 0) -> str:
    r = rnd.random()
    if depth < 2 and r < 0.25:
        return f"({_pred(rnd, depth + 1)} AND {_pred(rnd, depth + 1)})"
    if depth < 2 and r < 0.4:
        return f"({_pred(rnd, depth + 1)} OR {_pred(rnd, depth + 1)})"
    if depth < 2 and r < 0.45:
        return f"NOT ({_pred(rnd, depth + 1)})"
    return _leaf(rnd)


@pytest.mark.parametrize("seed", range(4))
def test_index_pruning_is_sound_and_useful(seed: int) -> None:
    rnd = random.Random(seed)
    fields = parse_columns(COLUMNS)
    by_name = {f.name: f for f in fields}
    from paimon_cli.core.format.arrow_schema import arrow_schema

    schema = arrow_schema(fields)
    files = []
    for _ in range(8):
        data = pa.Table.from_pylist(_rows(rnd, rnd.randint(1, 300)), schema=schema)
        w = DataFileIndexWriter.create(fields, OPTIONS)
        for batch in data.to_batches(max_chunksize=rnd.randint(1, 120)):
            w.write_batch(batch)
        files.append((data, FileIndexContainer(w.finish())))
    pruned = 0
    for _ in range(150):
        text = _pred(rnd)
        p = parse_predicate(text, fields)
        expr = p.to_arrow_expression()
        for data, container in files:
            matches = data.filter(expr).num_rows
            verdict = remains(evaluate(container, p, by_name, lambda n: n))
            assert verdict or matches == 0, f"pruned a file with {matches} matching rows for {text}"
            pruned += not verdict
    assert pruned > 100


def test_type_change_disables_the_index() -> None:
    """An index built when the column was INT is not used once the table says BIGINT."""
    fields = parse_columns("i INT")
    w = DataFileIndexWriter.create(fields, {"file-index.bitmap.columns": "i"})
    w.write_batch(pa.table({"i": pa.array([1, 2], pa.int32())}))
    c = FileIndexContainer(w.finish())
    now = parse_columns("i BIGINT")
    assert not remains(evaluate(c, parse_predicate("i = 5", fields), {"i": fields[0]}, lambda n: n))
    assert remains(evaluate(c, parse_predicate("i = 5", now), {"i": fields[0]}, lambda n: n))


def test_renamed_column_uses_file_name_and_missing_column_keeps_file() -> None:
    fields = parse_columns("a STRING")
    w = DataFileIndexWriter.create(fields, {"file-index.bloom-filter.columns": "a", "file-index.bloom-filter.a.items": "10"})
    w.write_batch(pa.table({"a": ["x", "y"]}))
    c = FileIndexContainer(w.finish())
    now = parse_columns("b STRING")  # a renamed to b (same id)
    p = parse_predicate("b = 'zzz'", now)
    assert not remains(evaluate(c, p, {"a": fields[0]}, lambda n: "a" if n == "b" else None))
    assert remains(evaluate(c, p, {"a": fields[0]}, lambda n: None))  # file predates the column
