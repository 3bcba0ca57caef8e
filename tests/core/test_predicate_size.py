"""``--where`` work is linear in the predicate's size (issue 27 #3).

``read --where`` with thousands of OR terms took quadratic time (5,000 terms: 218 s on a
2-row table): Arrow's expression engine canonicalises an OR chain in quadratic time, and the
equality values of an OR were collected with list membership. The tests count the work done
(kernel calls, comparisons), never the time.
"""

from __future__ import annotations

import datetime as dt
import decimal
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.data.predicate import Leaf, Or, or_
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import BigIntType, DataField, DecimalType, DoubleType, TimestampType, VarCharType

FIELDS = [
    DataField(0, "id", BigIntType()),
    DataField(1, "name", VarCharType(100)),
    DataField(2, "price", DecimalType(10, 2)),
    DataField(3, "ts", TimestampType(6)),
]
N = 20_000


@pytest.fixture
def data() -> pa.Table:
    return pa.table({
        "id": pa.array([1, 2, 3, 4, None, 6], pa.int64()),
        "name": pa.array(["a", None, "c", "v4", "e", "v5"], pa.large_string()),
        "price": pa.array([decimal.Decimal(x) if x else None for x in ("1.23", "2.00", None, "10.50", "0.01", "3")],
                          pa.decimal128(10, 2)),
        "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1), None, dt.datetime(2024, 1, 2),
                        dt.datetime(2023, 12, 31), dt.datetime(2024, 6, 1), None], pa.timestamp("us")),
    })


@pytest.fixture
def kernels(monkeypatch: pytest.MonkeyPatch) -> Iterator[Counter[str]]:
    """Calls of the compute kernels a row mask is made of."""
    calls: Counter[str] = Counter()

    def counted(name: str) -> None:
        real = getattr(pc, name)

        def run(*args: object, **kwargs: object) -> object:
            calls[name if name != "call_function" else str(args[0])] += 1
            return real(*args, **kwargs)

        monkeypatch.setattr(pc, name, run)

    for name in ("is_in", "equal", "greater", "call_function", "is_valid", "is_null"):
        counted(name)
    yield calls


def test_or_of_equalities_on_one_column_is_one_set_lookup(data: pa.Table, kernels: Counter[str]) -> None:
    pred = parse_predicate(" OR ".join(f"id = {i}" for i in range(3, 3 + N)), FIELDS)
    assert isinstance(pred, Or) and len(pred.children) == N  # flat, not N levels deep
    assert pred.filter(data).column("id").to_pylist() == [3, 4, 6]
    assert kernels == {"is_in": 1}


def test_or_across_columns_is_one_set_lookup_per_column(data: pa.Table, kernels: Counter[str]) -> None:
    terms = [f"id = {i}" if i % 2 else f"name = 'v{i}'" for i in range(N)] + ["id > 5", "name IN ('c', NULL)"]
    pred = parse_predicate(" OR ".join(terms), FIELDS)
    assert pred.filter(data).column("id").to_pylist() == [1, 3, 4, 6]
    # id's equalities, name's equalities and IN: one lookup each (name's value set cast once to
    # the column's large_string); the range one kernel; 2 ORs
    assert kernels == {"is_in": 2, "cast": 1, "greater": 1, "or_kleene": 2}


def test_or_of_conjunctions_is_linear(data: pa.Table, kernels: Counter[str]) -> None:
    n = 5_000
    pred = parse_predicate(" OR ".join(f"(id = {i} AND name = 'v{i}')" for i in range(n)), FIELDS)
    assert pred.filter(data).column("id").to_pylist() == [4]
    assert kernels == {"equal": 2 * n, "and_kleene": n, "or_kleene": n - 1}


def test_merged_equalities_keep_exact_comparison(data: pa.Table) -> None:
    """Only literals that are exact values of the column's own Arrow type join a set lookup;
    the others keep ``=``'s exact comparison (a finer timestamp, a decimal of another scale)."""
    cases = {
        "price = 1.23 OR price = 1.235 OR price = 3 OR price = 2.001": [1, 6],
        "ts = TIMESTAMP '2024-01-01 00:00:00.000001' OR ts = TIMESTAMP '2024-01-02 00:00:00'"
        " OR ts = TIMESTAMP '2024-01-01 00:00:00.0000011' OR ts = TIMESTAMP '2024-06-01 00:00:00.000000001'": [1, 3],
        "name = 'a' OR name IN ('c', NULL) OR name = 'zz' OR name IN (NULL)": [1, 3],
        "id = 1 OR id IN (2, NULL) OR id = NULL OR name IS NULL": [1, 2],
        "id = 1 OR id = 2 OR NOT (id IN (1, 2, 3, 4, 6))": [1, 2],
    }
    for where, want in cases.items():
        pred = parse_predicate(where, FIELDS)
        got = pred.filter(data).column("price").to_pylist()
        expected = data.filter(pred.to_arrow_expression()).column("price").to_pylist()
        assert got == expected, where
        assert pred.filter(data).column("id").to_pylist() == want, where


def test_float_equalities_are_not_merged() -> None:
    """A set lookup finds NaN; ``=`` never matches it: floating-point ORs keep ``=``."""
    fields = [DataField(0, "id", BigIntType()), DataField(1, "d", DoubleType())]
    t = pa.table({"id": [1, 2, 3], "d": [float("nan"), 1.0, 2.0]})
    pred = parse_predicate("d = 'NaN' OR d = 1.0 OR d = 3", fields)
    assert pred.filter(t).column("id").to_pylist() == [2]
    assert t.filter(pred.to_arrow_expression()).column("id").to_pylist() == [2]


class _Counted(int):
    """An int literal that counts the equality tests made on it."""

    tests = 0

    def __eq__(self, other: object) -> bool:
        _Counted.tests += 1
        return int(self) == other

    __hash__ = int.__hash__


def test_equal_values_of_a_wide_or_are_collected_linearly() -> None:
    """The bucket pruning's value list: no pairwise comparison of the OR's literals."""
    t = BigIntType()
    pred = or_([Leaf("=", "id", t, (_Counted(i),)) for i in range(N)] + [Leaf("in", "id", t, (_Counted(1), _Counted(N)))])
    _Counted.tests = 0
    values = pred._equal_values("id")
    tests = _Counted.tests
    assert tests < 10  # hashing, not N * N / 2 list membership tests
    assert values == list(range(N + 1))
    _Counted.tests = 0
    narrowed = pred.bucket_key_values(["id"])
    tests = _Counted.tests
    assert tests < 10
    assert narrowed is None  # 20,001 values: over Java's limit of 1,000, so no bucket pruning


def test_read_where_with_20000_or_terms(tmp_path: Path) -> None:
    """End to end on a bucketed primary-key table: planning, pruning and the filter."""
    wh = str(tmp_path / "wh")
    runner = CliRunner()

    def cli(*args: str) -> str:
        res = runner.invoke(app, [*args, "-w", wh])
        assert res.exit_code == 0, res.output
        return res.output

    cli("create", "db.t", "--schema", "id BIGINT NOT NULL, name STRING", "--primary-key", "id", "--option", "bucket=4")
    src = tmp_path / "rows.csv"
    src.write_text("id,name\n" + "".join(f"{i},n{i}\n" for i in range(100)))
    cli("write", "db.t", str(src))
    where = " OR ".join(f"id = {i}" for i in range(50, 50 + N)) + " OR name = 'n7'"
    out = cli("read", "db.t", "--where", where, "-o", "csv")
    assert sorted(int(line.split(",")[0]) for line in out.splitlines()[1:]) == [7, *range(50, 100)]
