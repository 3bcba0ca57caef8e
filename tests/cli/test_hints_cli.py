"""Errors that say what was meant (issue 14): close matches for table, database and column
names, a quoting hint for an unquoted ``--where`` literal, the ``--row-kind-column`` the user
gave, the row and column of a value pyarrow's JSON reader refuses, and an unreachable Spark
master refused in seconds."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.cli.test_compact_cli import one_error_line


def cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def one_error(res: Any, code: int) -> str:
    assert res.exit_code == code, res.output
    return one_error_line(res)


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> str:
    root = tmp_path_factory.mktemp("hints")
    w = str(root / "wh")
    src = root / "rows.jsonl"
    src.write_text("".join(json.dumps({"id": i, "customer": f"c{i}", "amount": "1.50", "dt": "2024-05-01"}) + "\n"
                           for i in range(4)))
    for args in (["create", "shop.orders", "--schema", "id BIGINT NOT NULL, customer STRING, amount DECIMAL(10, 2), "
                  "dt STRING NOT NULL", "--primary-key", "id,dt", "--partition-by", "dt"],
                 ["write", "shop.orders", str(src)], ["write", "shop.orders", str(src)],
                 ["create", "shop.events", "--schema", "id BIGINT, v STRING"]):
        res = cli(*args, "-w", w)
        assert res.exit_code == 0, res.output
    return w


@pytest.mark.parametrize(("args", "code", "expected"), [
    (["read", "shop.ordrs"], 3, "error: table shop.ordrs does not exist (did you mean 'orders'?)"),
    (["inspect", "snapshots", "shop.Orders"], 3, "error: table shop.Orders does not exist (did you mean 'orders'?)"),
    (["read", "shp.orders"], 3, "(did you mean 'shop'?)"),
    (["list", "shp"], 3, "(did you mean 'shop'?)"),
    (["read", "shop.orders", "--select", "id,custmer"], 4, "unknown column(s) custmer (did you mean 'customer'?)"),
    (["read", "shop.orders", "--where", "custmer = 'x'"], 4, "unknown column 'custmer' (did you mean 'customer'?)"),
    (["compact", "shop.events", "--order-strategy", "zorder", "--order-by", "v,idd"], 4, "(did you mean 'id'?)"),
])
def test_close_matches_for_names(wh: str, args: list[str], code: int, expected: str) -> None:
    line = one_error(cli(*args, "-w", wh), code)
    assert line == expected if expected.startswith("error:") else expected in line, line


def test_no_suggestion_when_nothing_is_close(wh: str) -> None:
    assert one_error(cli("read", "shop.xyz", "-w", wh), 3) == "error: table shop.xyz does not exist"


@pytest.mark.parametrize(("where", "hint"), [
    ("dt = 2024-05-01", "dt = '2024-05-01'"),
    ("dt >= 2024-05-01 AND id = 1", "dt >= '2024-05-01'"),
    ("customer = ann", "customer = 'ann'"),
])
def test_unquoted_where_literal_hints_at_quoting(wh: str, where: str, hint: str) -> None:
    line = one_error(cli("read", "shop.orders", "--where", where, "-w", wh), 4)
    assert "is neither a column nor a literal" in line and line.endswith(f"quote strings and dates: {hint}"), line


def test_quoted_where_literal_still_reads(wh: str) -> None:
    res = cli("read", "shop.orders", "--where", "dt = '2024-05-01' AND customer = 'c1'", "-w", wh, "-o", "jsonl")
    assert res.exit_code == 0 and json.loads(res.stdout)["id"] == 1


@pytest.mark.parametrize("ext", ["jsonl", "csv"])
def test_row_kind_column_error_names_the_column_given(wh: str, tmp_path: Path, ext: str) -> None:
    src = tmp_path / f"in.{ext}"
    if ext == "jsonl":
        src.write_text('{"id": 9, "customer": "z", "amount": "1.00", "dt": "2024-05-09", "op": "+I"}\n')
    else:
        src.write_text("id,customer,amount,dt,op\n9,z,1.00,2024-05-09,+I\n")
    line = one_error(cli("write", "shop.orders", str(src), "--row-kind-column", "opp", "-w", wh), 4)
    assert "'opp'" in line and "(did you mean 'op'?)" in line, line
    assert "table columns are ['id', 'customer', 'amount', 'dt']" in line or "row-kind column 'opp' is missing" in line


@pytest.mark.parametrize(("text", "row", "column", "value"), [
    ('{"id": 1, "customer": "a", "amount": "1.5", "dt": "d"}\n'
     '{"id": 2, "customer": "b", "amount": 1.001234567890123456789012345678901234567, "dt": "d"}\n',
     2, "amount", "value 1.001234567890123456789012345678901234567 cannot be stored as DECIMAL(10, 2)"),
    ('{"id": 1, "customer": "a", "amount": "1.5", "dt": "d"}\n\n{"id": 2, "customer": "b", "amount": "abc", "dt": "d"}\n',
     2, "amount", "value 'abc' cannot be stored as DECIMAL(10, 2)"),
    ('{"id": 1, "customer": "a", "amount": 1, "dt": "d"}\n{"id": 2, "customer": 5, "amount": 1, "dt": "d"}\n'
     '{"id": 3, "customer": "c", "amount": 1, "dt": "d"}\n', 2, "customer", "value 5 cannot be stored as STRING"),
])
def test_json_cast_error_names_row_and_column(wh: str, tmp_path: Path, text: str, row: int, column: str,
                                              value: str) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(text)
    line = one_error(cli("write", "shop.orders", str(src), "-w", wh), 4)
    assert line.startswith(f"error: {src}: row {row}, column {column!r}: {value} ("), line


@pytest.mark.parametrize(("text", "row"), [("id,customer,amount,dt\n1,a,1.5,d\n2,b,1.5,d,extra\n", 2),
                                          ("id,customer,amount,dt\r\n1,a,1.5,d\r\n\r\n3,a,1,d\r\n2,b\r\n", 3)])
def test_csv_row_with_other_field_count_names_its_row(wh: str, tmp_path: Path, text: str, row: int) -> None:
    src = tmp_path / "in.csv"
    src.write_bytes(text.encode())
    line = one_error(cli("write", "shop.orders", str(src), "-w", wh), 4)
    assert line.startswith(f"error: {src}: row {row}: CSV parse error: Expected 4 columns, got "), line


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.parametrize("master", ["spark://nohost.invalid:7077", "spark://127.0.0.1:{port}",
                                    "k8s://https://127.0.0.1:{port}"])
def test_unreachable_spark_master_fails_fast_in_one_line(wh: str, master: str) -> None:
    pytest.importorskip("pyspark")
    master = master.format(port=_closed_port())
    start = time.monotonic()
    res = cli("compact", "shop.orders", "--full", "--engine", "spark", "--spark-master", master, "-w", wh)
    assert time.monotonic() - start < 20
    line = one_error(res, 1)
    assert line.startswith(f"error: cannot reach Spark master '{master}' ("), line
