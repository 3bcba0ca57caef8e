"""``--where`` predicates: parsing, literal typing, row filtering, stats pruning, buckets."""

from __future__ import annotations

import datetime as dt
import decimal

import pyarrow as pa
import pytest

from paimon_cli.core.data.binary_row import Timestamp, bucket_of
from paimon_cli.core.data.predicate import And, Constant, Leaf, Or
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.data.types import (
    BigIntType,
    BooleanType,
    DataField,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    TimestampType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
)
from paimon_cli.core.errors import InvalidInput

FIELDS = [
    DataField(0, "id", IntType(nullable=False)),
    DataField(1, "name", VarCharType(100)),
    DataField(2, "price", DecimalType(10, 2)),
    DataField(3, "ts", TimestampType(6)),
    DataField(4, "day", DateType()),
    DataField(5, "ok", BooleanType()),
    DataField(6, "big col", BigIntType()),
    DataField(7, "f", FloatType()),
    DataField(8, "tiny", TinyIntType()),
    DataField(9, "raw", VarBinaryType(10)),
    DataField(10, "ltz", LocalZonedTimestampType(3)),
    DataField(11, "d", DoubleType()),
]


def p(text: str):
    return parse_predicate(text, FIELDS)


@pytest.fixture
def data() -> pa.Table:
    return pa.table({
        "id": pa.array([1, 2, 3, 4, 5], pa.int32()),
        "name": ["a", None, "c", "d'q", "e"],
        "price": pa.array([decimal.Decimal(x) if x else None for x in ("1.23", "2.00", None, "10.50", "0.01")],
                          pa.decimal128(10, 2)),
        "ts": pa.array([dt.datetime(2024, 1, 1, 0, 0, 0, 1), None, dt.datetime(2024, 1, 2),
                        dt.datetime(2023, 12, 31, 23, 59), dt.datetime(2024, 6, 1)], pa.timestamp("us")),
        "day": pa.array([dt.date(2024, 1, d) for d in (1, 2, 3, 4, 5)], pa.date32()),
        "ok": [True, False, None, True, False],
        "big col": pa.array([10, 20, None, 40, 50], pa.int64()),
        "f": pa.array([0.1, 0.2, 0.3, None, 1.5], pa.float32()),
        "tiny": pa.array([1, -1, None, 127, -128], pa.int8()),
        "raw": pa.array([b"\x01", b"", None, b"ab", b"\xff"], pa.binary()),
        "ltz": pa.array([0, 1000, None, 2000, 3000], pa.timestamp("ms", tz="UTC")),
        "d": [1.0, float("nan"), None, -1.0, 2.5],
    })


def ids(table: pa.Table, where: str) -> list[int]:
    """The ids ``where`` keeps; the row mask (what reads use) must agree with the expression."""
    pred = p(where)
    by_mask = pred.filter(table).column("id").to_pylist()
    assert by_mask == table.filter(pred.to_arrow_expression()).column("id").to_pylist(), where
    return by_mask


# -- parsing ---------------------------------------------------------------------------------


def test_parse_tree_and_precedence() -> None:
    pred = p("id = 1 OR id = 2 AND name = 'x'")
    assert isinstance(pred, Or)
    assert isinstance(pred.children[1], And)
    assert str(p("(id = 1 OR id = 2) AND name = 'x'")) == "(id = 1 OR id = 2) AND name = 'x'"


def test_not_is_pushed_to_leaves() -> None:
    assert str(p("NOT (id > 3 OR name = 'x')")) == "id <= 3 AND name <> 'x'"
    assert str(p("NOT id IN (1, 2)")) == "id NOT IN (1, 2)"
    assert str(p("NOT name IS NULL")) == "name IS NOT NULL"
    assert str(p("NOT NOT id < 1")) == "id < 1"
    assert str(p("id NOT BETWEEN 1 AND 3")) == "id < 1 OR id > 3"


def test_operators_keywords_and_quoting() -> None:
    assert p("id != 1") == p("id <> 1")
    assert p("id == 1") == p("id = 1")
    assert p("ID = 1") == p("id = 1")  # unique case-insensitive match
    assert p("5 < id") == p("id > 5")
    assert p("`big col` >= -3") == Leaf(">=", "big col", BigIntType(), (-3,))
    assert p("name = 'it''s'") == Leaf("=", "name", VarCharType(100), ("it's",))
    assert p("ok") == Leaf("=", "ok", BooleanType(), (True,))
    assert p("id = 1 and name is not null") == p("id = 1 AND name IS NOT NULL")


@pytest.mark.parametrize("where,literal", [
    ("price = 1.5", decimal.Decimal("1.5")),
    ("price = '3'", decimal.Decimal("3")),
    ("day = DATE '2024-02-29'", dt.date(2024, 2, 29)),
    ("day = '2024-02-29'", dt.date(2024, 2, 29)),
    ("ts = TIMESTAMP '2024-01-01 10:20:30.123456789'", Timestamp(1704104430123, 456789)),
    ("ts = '2024-01-01T10:20'", Timestamp(1704104400000, 0)),
    ("ltz = '1970-01-01 01:00:00+01:00'", Timestamp(0, 0)),
    ("f = 0.1", 0.10000000149011612),
    ("tiny = '-128'", -128),
    ("raw = X'00ff'", b"\x00\xff"),
    ("raw = 'ab'", b"ab"),
    ("ok = 'true'", True),
    ("name = 12", "12"),
])
def test_literals_typed_by_column(where: str, literal: object) -> None:
    leaf = p(where)
    assert isinstance(leaf, Leaf)
    assert leaf.literal == literal
    assert type(leaf.literal) is type(literal)


@pytest.mark.parametrize("where,message", [
    ("id = 'x'", "literal 'x' does not fit column id INT NOT NULL: not a number"),
    ("id = 1.5", "not an integer"),
    ("tiny = 128", "out of range"),
    ("price = 123456789.1", "out of range"),
    ("day = 5", "column day DATE"),
    ("day = '2024-13-01'", "expected yyyy-mm-dd"),
    ("ts = 'yesterday'", "column ts TIMESTAMP(6)"),
    ("ts = '2024-01-01 00:00:00+01:00'", "column ts TIMESTAMP(6)"),  # offsets only for LTZ
    ("ok = 1", "expected TRUE or FALSE"),
    ("raw = X'0'", "bad hex"),
    ("nope = 1", "unknown column 'nope'"),
    ("id = name", "comparing two columns"),
    ("id =", "unexpected end"),
    ("(id = 1", "unexpected end"),
    ("id = 1)", "unexpected ')'"),
    ("id ~ 1", "cannot parse"),
    ("", "empty predicate"),
    ("id IN ()", "expected a literal"),
])
def test_bad_input_is_named(where: str, message: str) -> None:
    with pytest.raises(InvalidInput, match="--where") as e:
        p(where)
    assert message in str(e.value)


# -- rows (SQL three-valued logic: NULL never matches) ---------------------------------------


def test_row_filtering(data: pa.Table) -> None:
    assert ids(data, "id = 1") == [1]
    assert ids(data, "name <> 'a'") == [3, 4, 5]  # NULL name is not "<> 'a'"
    assert ids(data, "NOT (name = 'a')") == [3, 4, 5]
    assert ids(data, "name IS NULL") == [2]
    assert ids(data, "name = 'd''q'") == [4]
    assert ids(data, "price > 1.234") == [2, 4]  # finer literal than the column, compared exactly
    assert ids(data, "price IN (2, 10.5)") == [2, 4]
    assert ids(data, "ts >= '2024-01-01'") == [1, 3, 5]
    assert ids(data, "ts > TIMESTAMP '2024-01-01 00:00:00.000000001'") == [1, 3, 5]
    assert ids(data, "ts > TIMESTAMP '2024-01-01 00:00:00.000001001'") == [3, 5]
    assert ids(data, "day BETWEEN '2024-01-02' AND DATE '2024-01-03'") == [2, 3]
    assert ids(data, "ok") == [1, 4]
    assert ids(data, "NOT ok") == [2, 5]
    assert ids(data, "`big col` >= 40 OR tiny < 0") == [2, 4, 5]
    assert ids(data, "f = 0.1") == [1]
    assert ids(data, "raw = X'6162'") == [4]
    assert ids(data, "ltz >= '1970-01-01 00:00:02'") == [4, 5]
    assert ids(data, "d > 0") == [1, 5]


def test_in_and_not_in_with_nulls(data: pa.Table) -> None:
    assert ids(data, "tiny IN (1, NULL)") == [1]
    assert ids(data, "tiny NOT IN (1, -1)") == [4, 5]  # NULL tiny is not NOT IN
    assert ids(data, "tiny NOT IN (1, NULL)") == []  # Java's NotIn: a NULL literal matches nothing
    assert ids(data, "NOT tiny NOT IN (1, -1)") == [1, 2]
    assert ids(data, "name = NULL") == []
    assert ids(data, "NOT (name = NULL)") == []
    assert p("name = NULL") == Constant(False)


# -- stats pruning (Java's LeafPredicate.test over min/max/null counts) ----------------------


@pytest.mark.parametrize("where,stats,expected", [
    ("id = 5", (1, 4, 0, 10), False),
    ("id = 4", (1, 4, 0, 10), True),
    ("id > 4", (1, 4, 0, 10), False),
    ("id >= 4", (1, 4, 0, 10), True),
    ("id < 1", (1, 4, 0, 10), False),
    ("id <= 1", (1, 4, 0, 10), True),
    ("id <> 3", (3, 3, 0, 10), False),
    ("id <> 3", (3, 4, 0, 10), True),
    ("id IN (0, 9)", (1, 4, 0, 10), False),
    ("id IN (0, 2)", (1, 4, 0, 10), True),
    ("id NOT IN (3)", (3, 3, 0, 10), False),
    ("id NOT IN (3, 4)", (1, 4, 0, 10), True),
    ("id = 1", (None, None, 10, 10), False),  # all NULL: no comparison matches
    ("id IS NULL", (1, 4, 0, 10), False),
    ("id IS NULL", (1, 4, 2, 10), True),
    ("id IS NOT NULL", (None, None, 10, 10), False),
    ("id IS NOT NULL", (None, None, None, 10), True),
    ("id = 99", (None, None, None, 10), True),  # unknown stats are kept
    ("id = 99", (None, None, 3, 10), True),
])
def test_might_match(where: str, stats: tuple, expected: bool) -> None:
    assert p(where).might_match({"id": stats}) is expected


def test_might_match_combines_and_is_conservative() -> None:
    st = {"id": (1, 4, 0, 10), "name": ("b", "d", 0, 10)}
    assert p("id = 1 AND name = 'a'").might_match(st) is False
    assert p("id = 1 OR name = 'a'").might_match(st) is True
    assert p("id = 9 OR name = 'e'").might_match(st) is False
    assert p("price = 1").might_match(st) is True  # no stats for the column: keep
    ts_stats = {"ts": (Timestamp(1000, 0), Timestamp(2000, 5), 0, 3)}
    assert p("ts >= '1970-01-01 00:00:02.000000005'").might_match(ts_stats) is True
    assert p("ts > '1970-01-01 00:00:02.000000005'").might_match(ts_stats) is False
    assert p("ts > '1970-01-01 00:00:02.000000004'").might_match(ts_stats) is True
    dec_stats = {"price": (decimal.Decimal("1.00"), decimal.Decimal("2.50"), 0, 3)}
    assert p("price > 2.5").might_match(dec_stats) is False
    assert p("price >= 2.5").might_match(dec_stats) is True


def test_partition_style_pruning_with_exact_values() -> None:
    """Partition values are exact stats (min = max); other columns stay unknown."""
    pred = p("day = '2024-01-02' AND id > 3")
    part = {"day": (dt.date(2024, 1, 2), dt.date(2024, 1, 2), 0, 1)}
    assert pred.might_match(part) is True
    assert pred.might_match({"day": (dt.date(2024, 1, 3), dt.date(2024, 1, 3), 0, 1)}) is False
    assert p("day IS NULL").might_match({"day": (None, None, 1, 1)}) is True
    assert p("day <> '2024-01-02'").might_match({"day": (None, None, 1, 1)}) is False


def test_only_on_picks_conjuncts() -> None:
    pred = p("id = 1 AND (name = 'a' OR id = 2) AND price > 1")
    assert str(pred.only_on({"id"})) == "id = 1"
    assert str(pred.only_on({"id", "name"})) == "id = 1 AND (name = 'a' OR id = 2)"
    assert pred.only_on({"day"}) is None


# -- bucket pruning --------------------------------------------------------------------------


def test_bucket_key_values() -> None:
    assert p("id = 1 AND name = 'a'").bucket_key_values(["id", "name"]) == [(1, "a")]
    assert sorted(p("id IN (1, 2) AND name = 'a'").bucket_key_values(["id", "name"])) == [(1, "a"), (2, "a")]
    assert p("(id = 1 OR id = 3) AND price > 0").bucket_key_values(["id"]) == [(1,), (3,)]
    assert p("id = 1 AND id IN (1, 2)").bucket_key_values(["id"]) == [(1,)]
    assert p("id = 1 AND id = 2").bucket_key_values(["id"]) == []
    assert p("id IN (1, NULL)").bucket_key_values(["id"]) == [(1,)]
    assert p("price = 1.234").bucket_key_values(["price"]) == []  # can never equal a DECIMAL(10, 2)
    assert p("id = 1").bucket_key_values(["id", "name"]) is None  # a key column not pinned
    assert p("id = 1 OR name = 'a'").bucket_key_values(["id"]) is None
    assert p("id > 1").bucket_key_values(["id"]) is None
    many = ", ".join(str(i) for i in range(1001))
    assert p(f"id IN ({many})").bucket_key_values(["id"]) is None  # Java's limit


def test_bucket_of_literals_matches_the_writer_hash() -> None:
    """The tuples are in binary_row's domain, so bucket_of gives the writer's bucket."""
    types = [FIELDS[0].type, FIELDS[1].type]
    tuples = p("id IN (7, 8) AND name = 'x'").bucket_key_values(["id", "name"])
    assert {bucket_of(list(t), types, 4) for t in tuples} == {bucket_of([7, "x"], types, 4),
                                                             bucket_of([8, "x"], types, 4)}
