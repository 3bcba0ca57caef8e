"""The CLI surface: version, help, exit codes, one-line errors and exact output formats.

Tests marked "needs core" go through FileSystemCatalog / Schema / system_tables and pass once
those contracts (plan/INTERFACES.md) are met; the others only need the CLI layer.
"""

from __future__ import annotations

import datetime as dt
import io
import json
from decimal import Decimal
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli import __version__
from paimon_cli.app import app
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.utils.rows import Rows
from paimon_cli.errors import EXIT_CODES
from paimon_cli.output import render

SCHEMA = "id BIGINT NOT NULL, name STRING, dt STRING"


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def assert_one_error_line(result: Any, startswith: str = "error: ") -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith(startswith), lines[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    return lines[0]


# -- version / help ---------------------------------------------------------------------------


def test_version(runner: CliRunner) -> None:
    result = invoke(runner, "--version")
    assert result.exit_code == 0
    assert result.stdout == f"paimon-cli {__version__}\n"


def test_root_help_lists_commands_and_exit_codes(runner: CliRunner) -> None:
    result = invoke(runner, "--help")
    assert result.exit_code == 0
    for name in ("create", "alter", "list", "inspect", "quickstart"):
        assert f"  {name} " in result.stdout
    assert "Exit codes:" in result.stdout
    for code, meaning in EXIT_CODES:
        assert f"{code}  {meaning}" in result.stdout


def test_no_arguments_shows_help(runner: CliRunner) -> None:
    result = invoke(runner)
    assert "Usage: paimon-cli" in result.stdout + result.stderr
    assert result.exit_code in (0, 2)


# -- usage errors (2) ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["no-such-command"],
        ["inspect", "no-such-kind", "db.t"],
        ["create", "db.t"],  # --schema is required
        ["list", "--output", "xml"],
        ["inspect", "snapshots", "db.t", "--snapshot", "1", "--tag", "x"],
        ["inspect", "snapshots"],  # table kinds need DB.TABLE
        ["inspect", "catalog-options", "db.t"],  # catalog kinds take none
        ["alter", "db.t"],  # nothing to change
    ],
)
def test_usage_errors_exit_2(runner: CliRunner, warehouse: str, args: list[str]) -> None:
    result = invoke(runner, *args, "-w", warehouse)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert "Traceback" not in result.stderr


# -- invalid input (4), no core needed ----------------------------------------------------------


@pytest.mark.parametrize(
    "ident", ["nodot", "db.", ".t", "../x.t", "db.a/b", "db.a.b", "db.t$snapshots", "d\x01b.t"]
)
def test_bad_identifier_exits_4(runner: CliRunner, warehouse: str, ident: str) -> None:
    result = invoke(runner, "inspect", "snapshots", ident, "-w", warehouse)
    assert result.exit_code == 4, result.output
    assert_one_error_line(result)


def test_bad_schema_exits_4(runner: CliRunner, warehouse: str) -> None:
    result = invoke(runner, "create", "db.t", "--schema", "id BIGNT", "-w", warehouse)
    assert result.exit_code == 4
    line = assert_one_error_line(result)
    assert "BIGNT" in line


def test_bad_timestamp_exits_4(runner: CliRunner, warehouse: str) -> None:
    result = invoke(runner, "inspect", "snapshots", "db.t", "--timestamp", "yesterday", "-w", warehouse)
    assert result.exit_code == 4
    assert "--timestamp 'yesterday'" in assert_one_error_line(result)


def test_numeric_branch_exits_4(runner: CliRunner, warehouse: str) -> None:
    result = invoke(runner, "inspect", "snapshots", "db.t", "--branch", "42", "-w", warehouse)
    assert result.exit_code == 4
    assert_one_error_line(result)


# -- the error table, exercised through a real command ---------------------------------------------


def _raise_from_list(monkeypatch: pytest.MonkeyPatch, exc: BaseException) -> None:
    def boom(*_a: Any, **_k: Any) -> Any:
        raise exc

    monkeypatch.setattr("paimon_cli.core.api.Warehouse.list_databases", boom)


@pytest.mark.parametrize(
    ("cls_name", "code"),
    [("NotFound", 3), ("InvalidInput", 4), ("AlreadyExists", 4), ("CommitConflict", 5),
     ("UnsafeRefused", 6), ("NotYetSupported", 1), ("PaimonError", 1), ("CatalogUnavailable", 8),
     ("PermissionDenied", 9)],
)
def test_core_errors_map_to_exit_codes(
    runner: CliRunner, monkeypatch: pytest.MonkeyPatch, cls_name: str, code: int
) -> None:
    from paimon_cli.core import errors

    _raise_from_list(monkeypatch, getattr(errors, cls_name)("something\nwent wrong"))
    result = invoke(runner, "list")
    assert result.exit_code == code
    assert assert_one_error_line(result) == "error: something went wrong"


def test_corrupt_metadata_exits_4(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.errors import CorruptMetadata

    _raise_from_list(monkeypatch, CorruptMetadata("/wh/db.db/t/snapshot/snapshot-1", "invalid JSON"))
    result = invoke(runner, "list")
    assert result.exit_code == 4
    assert assert_one_error_line(result) == "error: /wh/db.db/t/snapshot/snapshot-1: invalid JSON"


def test_unexpected_error_is_one_line_exit_1(runner: CliRunner, monkeypatch: pytest.MonkeyPatch) -> None:
    _raise_from_list(monkeypatch, RuntimeError("boom"))
    result = invoke(runner, "list")
    assert result.exit_code == 1
    assert assert_one_error_line(result) == "error: RuntimeError: boom (run again with --debug for the traceback)"


@pytest.mark.parametrize("how", ["flag", "env"])
def test_debug_shows_traceback(runner: CliRunner, monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    _raise_from_list(monkeypatch, RuntimeError("boom"))
    if how == "env":
        monkeypatch.setenv("PAIMON_DEBUG", "1")
    result = invoke(runner, "list", *(["--debug"] if how == "flag" else []))
    assert result.exit_code == 1
    assert "Traceback (most recent call last)" in result.stderr
    assert result.stderr.rstrip().splitlines()[-1].startswith("error: RuntimeError: boom")


def test_reader_backed_kinds_on_empty_table(runner: CliRunner, warehouse: str) -> None:
    """audit-log, binlog and ro answer through the reader: an empty table gives no rows."""
    _create(runner, warehouse, "db.t")
    for kind in ("audit-log", "binlog", "ro"):
        result = invoke(runner, "inspect", kind, "db.t", "-w", warehouse, "-o", "json")
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout) == []


# -- output formats (renderer, exact) ------------------------------------------------------------

ROWS = Rows(
    ["id", "at", "amount", "raw", "ok", "tags", "props", "note"],
    [
        {"id": 1, "at": dt.datetime(2024, 5, 1, 12, 0, 0, 123456), "amount": Decimal("1.50"), "raw": b"\x01\xff",
         "ok": True, "tags": ["a", "b"], "props": {"k": dt.date(2024, 5, 1)}, "note": 'say "hi", ok'},
        {"id": 22, "at": None, "amount": None, "raw": None, "ok": False, "tags": [], "props": {}, "note": None},
    ],
)


def _rendered(fmt: str, rows: Rows = ROWS) -> str:
    buf = io.StringIO()
    render(rows, fmt, out=buf)
    return buf.getvalue()


def test_render_json_exact() -> None:
    out = _rendered("json")
    assert json.loads(out) == [
        {"id": 1, "at": "2024-05-01 12:00:00.123", "amount": "1.50", "raw": "01ff", "ok": True,
         "tags": ["a", "b"], "props": {"k": "2024-05-01"}, "note": 'say "hi", ok'},
        {"id": 22, "at": None, "amount": None, "raw": None, "ok": False, "tags": [], "props": {}, "note": None},
    ]
    assert out.startswith("[\n  {\n    \"id\": 1,\n") and out.endswith("]\n")


def test_render_jsonl_exact() -> None:
    assert _rendered("jsonl") == (
        '{"id":1,"at":"2024-05-01 12:00:00.123","amount":"1.50","raw":"01ff","ok":true,'
        '"tags":["a","b"],"props":{"k":"2024-05-01"},"note":"say \\"hi\\", ok"}\n'
        '{"id":22,"at":null,"amount":null,"raw":null,"ok":false,"tags":[],"props":{},"note":null}\n'
    )


def test_render_csv_exact() -> None:
    assert _rendered("csv") == (
        "id,at,amount,raw,ok,tags,props,note\n"
        '1,2024-05-01 12:00:00.123,1.50,01ff,true,"[""a"",""b""]","{""k"":""2024-05-01""}","say ""hi"", ok"\n'
        "22,,,,false,[],{},\n"
    )


def test_render_plain_table_aligned() -> None:
    rows = Rows(["id", "name"], [{"id": 1, "name": "a"}, {"id": 100, "name": None}])
    assert _rendered("table", rows) == " id  name\n---  ----\n  1  a\n100  null\n"


def test_render_special_values() -> None:
    rows = Rows(["v"], [{"v": float("nan")}, {"v": float("inf")}, {"v": dt.datetime(2024, 1, 2, 3, 4, 5,
               tzinfo=dt.timezone(dt.timedelta(hours=-5)))}])
    assert json.loads(_rendered("json", rows)) == [{"v": "NaN"}, {"v": "Infinity"}, {"v": "2024-01-02T08:04:05.000+00:00"}]  # an instant: ISO-8601 in UTC


def test_render_empty(capsys: pytest.CaptureFixture[str]) -> None:
    empty = Rows(["a", "b"], [])
    assert _rendered("json", empty) == "[]\n"
    assert _rendered("jsonl", empty) == ""
    assert _rendered("csv", empty) == "a,b\n"
    assert _rendered("table", empty) == ""
    assert capsys.readouterr().err == "(no rows)\n"


# -- through the catalog (needs core: catalog, schema, system_tables) -----------------------------------


def _create(runner: CliRunner, warehouse: str, ident: str, *extra: str) -> None:
    result = invoke(runner, "create", ident, "--schema", SCHEMA, "-w", warehouse, *extra)
    assert result.exit_code == 0, result.output


def test_create_then_list_json(runner: CliRunner, warehouse: str) -> None:
    _create(runner, warehouse, "shop.orders", "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2")
    _create(runner, warehouse, "shop.events")
    result = invoke(runner, "list", "-w", warehouse, "-o", "json")
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout) == [{"database": "shop"}]
    result = invoke(runner, "list", "shop", "-w", warehouse, "-o", "jsonl")
    assert result.stdout == ('{"database":"shop","table":"events","type":"paimon"}\n'
                             '{"database":"shop","table":"orders","type":"paimon"}\n')
    result = invoke(runner, "list", "shop", "-w", warehouse, "-o", "csv")
    assert result.stdout == "database,table,type\nshop,events,paimon\nshop,orders,paimon\n"

    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    table = FileSystemCatalog(warehouse).get_table("shop.orders")
    assert table.schema.primary_keys == ["id", "dt"]
    assert table.schema.partition_keys == ["dt"]
    assert table.schema.options.get("bucket") == "2"


def test_output_env_and_options_after_arguments(runner: CliRunner, warehouse: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _create(runner, warehouse, "shop.orders")
    monkeypatch.setenv("PAIMON_OUTPUT", "csv")
    monkeypatch.setenv("PAIMON_WAREHOUSE", warehouse)
    result = invoke(runner, "list", "shop")
    assert result.stdout == "database,table,type\nshop,orders,paimon\n"


def test_list_empty_warehouse(runner: CliRunner, warehouse: str) -> None:
    result = invoke(runner, "list", "-w", warehouse, "-o", "json")
    assert result.exit_code == 0, result.output
    assert result.stdout == "[]\n"


def test_unknown_table_exits_3(runner: CliRunner, warehouse: str) -> None:
    _create(runner, warehouse, "shop.orders")
    result = invoke(runner, "inspect", "schemas", "shop.missing", "-w", warehouse)
    assert result.exit_code == 3, result.output
    assert "shop.missing" in assert_one_error_line(result) or "missing" in result.stderr


def test_create_twice_and_if_not_exists(runner: CliRunner, warehouse: str) -> None:
    _create(runner, warehouse, "shop.orders")
    result = invoke(runner, "create", "shop.orders", "--schema", SCHEMA, "-w", warehouse)
    assert result.exit_code == 4
    assert_one_error_line(result)
    _create(runner, warehouse, "shop.orders", "--if-not-exists")


def test_create_bad_primary_key_exits_4(runner: CliRunner, warehouse: str) -> None:
    result = invoke(runner, "create", "shop.t", "--schema", SCHEMA, "--primary-key", "nope", "-w", warehouse)
    assert result.exit_code == 4, result.output
    assert_one_error_line(result)


def test_create_from_schema_json(runner: CliRunner, warehouse: str, tmp_path: Any) -> None:
    spec = {"fields": [{"name": "k", "type": "INT NOT NULL"}, {"name": "v", "type": "STRING"}],
            "primaryKeys": ["k"], "options": {"bucket": "1"}, "comment": "from json"}
    path = tmp_path / "schema.json"
    path.write_text(json.dumps(spec))
    result = invoke(runner, "create", "db.kv", "--schema", f"@{path}", "-w", warehouse)
    assert result.exit_code == 0, result.output
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    schema = FileSystemCatalog(warehouse).get_table("db.kv").schema
    assert [f.name for f in schema.fields] == ["k", "v"]
    assert schema.primary_keys == ["k"] and schema.comment == "from json"


def test_alter_then_inspect_options(runner: CliRunner, warehouse: str) -> None:
    _create(runner, warehouse, "shop.orders", "--primary-key", "id,dt", "--option", "bucket=2")
    result = invoke(runner, "alter", "shop.orders", "--set", "snapshot.num-retained.max=50",
                    "--add-column", "note STRING", "-w", warehouse)
    assert result.exit_code == 0, result.output
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    schema = FileSystemCatalog(warehouse).get_table("shop.orders").schema
    assert schema.id == 1
    assert schema.options["snapshot.num-retained.max"] == "50"
    assert [f.name for f in schema.fields][-1] == "note"
    result = invoke(runner, "inspect", "options", "shop.orders", "-w", warehouse, "-o", "json")
    assert result.exit_code == 0, result.output
    assert {"key": "snapshot.num-retained.max", "value": "50"} in json.loads(result.stdout)


def test_inspect_schemas_json(runner: CliRunner, warehouse: str) -> None:
    _create(runner, warehouse, "shop.orders")
    result = invoke(runner, "inspect", "schemas", "shop.orders", "-w", warehouse, "-o", "json")
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout)
    assert isinstance(rows, list) and len(rows) == 1
    assert rows[0]["schema_id"] == 0


def test_inspect_snapshots_empty_table(runner: CliRunner, warehouse: str) -> None:
    _create(runner, warehouse, "shop.orders")
    result = invoke(runner, "inspect", "snapshots", "shop.orders", "-w", warehouse, "-o", "json")
    assert result.exit_code == 0, result.output
    assert result.stdout == "[]\n"
    result = invoke(runner, "inspect", "snapshots", "shop.orders", "-w", warehouse)
    assert result.exit_code == 0 and result.stdout == "" and "(no rows)" in result.stderr


def test_quickstart(runner: CliRunner, warehouse: str) -> None:
    for _ in range(2):  # idempotent
        result = invoke(runner, "quickstart", "-w", warehouse)
        assert result.exit_code == 0, result.output
    assert "orders" in result.stdout and "events" in result.stdout
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    catalog = FileSystemCatalog(warehouse)
    assert sorted(catalog.list_tables("demo")) == ["events", "orders"]
    assert catalog.get_table("demo.orders").schema.primary_keys == ["order_id", "dt"]
    assert catalog.get_table("demo.events").schema.primary_keys == []
    # two commits each (+ the key table's full compaction), not twice: a rerun leaves filled tables alone
    orders_t = catalog.get_table("demo.orders")
    assert orders_t.snapshot_manager.snapshot_ids() == [1, 2, 3]
    assert orders_t.snapshot_manager.latest_snapshot().commit_kind == "COMPACT"
    assert {e.file.level for e in FileStoreScan(orders_t).plan(orders_t.snapshot_manager.latest_snapshot())} == {5}
    assert catalog.get_table("demo.events").snapshot_manager.snapshot_ids() == [1, 2]
    from paimon_cli.core.operation.read import TableRead

    orders = TableRead(catalog.get_table("demo.orders")).to_arrow().sort_by("order_id").to_pydict()
    # order 2 updated (+U), order 4 deleted (-D), order 5 added in the second commit
    assert orders["order_id"] == [1, 2, 3, 5]
    assert [str(a) for a in orders["amount"]] == ["10.50", "25.00", "7.25", "3.10"]
    assert TableRead(catalog.get_table("demo.events")).to_arrow().num_rows == 6
