"""``metastore=rest``: the catalog through the server (databases, tables, create/alter/drop/rename),
reading commands through it, errors and refusals (the changing commands are
test_rest_commands.py's)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog import load_catalog, resolve_catalog_options
from paimon_cli.core.catalog.rest import RestCatalog
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import AlreadyExists, NotFound, NotYetSupported, PermissionDenied
from paimon_cli.core.schema.schema_change import AddColumn, SetOption
from paimon_cli.core.schema.table_schema import Schema
from tests.catalogs.rest_server import RestCatalogServer
from tests.interop.pypaimon_peer import PyPaimon


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    for var in ("PAIMON_CATALOG", "PAIMON_CATALOG_OPTIONS", "PAIMON_WAREHOUSE", "PAIMON_OUTPUT",
                "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    with RestCatalogServer(tmp_path / "root") as s:
        yield s


def catalog_of(server: RestCatalogServer, **extra: str) -> RestCatalog:
    cat = load_catalog(resolve_catalog_options(options=server.client_options(**extra)))
    assert isinstance(cat, RestCatalog)
    return cat


def cli(server: RestCatalogServer, *args: str, code: int = 0, **extra: str) -> Any:
    opts = [x for k, v in server.client_options(**extra).items() for x in ("--catalog-option", f"{k}={v}")]
    res = CliRunner().invoke(app, [*args, *opts])
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def schema(text: str, **kw: Any) -> Schema:
    return Schema.of(parse_columns(text), **kw)


def seed(server: RestCatalogServer) -> None:
    """db.t with two commits, created and committed through the server."""
    catalog_of(server).create_table("db.t", schema("id BIGINT NOT NULL, dt STRING, v STRING",
                                                   partition_keys=["dt"], primary_keys=["id", "dt"],
                                                   options={"bucket": "1"}))
    t = Warehouse(catalog_options=server.client_options()).table("db.t")
    t.write(pa.table({"id": pa.array([1, 2], pa.int64()), "dt": ["a", "b"], "v": ["x", "y"]}), expire=False)
    t.write(pa.table({"id": pa.array([1], pa.int64()), "dt": ["a"], "v": ["z"]}), expire=False)


def test_catalog_operations_go_through_the_server(server: RestCatalogServer) -> None:
    cat = catalog_of(server)
    table = cat.create_table("db.t", schema("id BIGINT NOT NULL, v STRING", primary_keys=["id"],
                                            options={"bucket": "2"}))
    assert [c.operation for c in server.calls if c.method != "GET"] == ["createDatabase", "createTable"]
    assert table.path == f"{server.root}/db.db/t" and table.schema.primary_keys == ["id"]
    assert cat.list_databases() == ["db"] and cat.list_tables("db") == ["t"]
    with pytest.raises(AlreadyExists):
        cat.create_table("db.t", schema("id INT"))
    new = cat.alter_table("db.t", [SetOption("snapshot.num-retained.max", "50"), AddColumn("w", parse_columns("w INT")[0][1])])
    assert new.id == 1 and new.options["snapshot.num-retained.max"] == "50" and new.field_names == ["id", "v", "w"]
    assert server.calls_of("alterTable")[0].body["changes"][0] == {
        "action": "setOption", "key": "snapshot.num-retained.max", "value": "50"}
    cat.rename_table("db.t", "db.u")
    assert cat.list_tables("db") == ["u"] and server.calls_of("renameTable")
    with pytest.raises(NotFound, match="table db.t does not exist in catalog"):
        cat.get_table("db.t")
    assert cat.drop_table("db.u") == f"file://{server.root}/db.db/u"
    assert not (server.root / "db.db" / "u").exists()
    cat.drop_database("db")
    assert cat.list_databases() == []


def test_a_bad_schema_is_refused_before_any_request(server: RestCatalogServer) -> None:
    cat = catalog_of(server)
    with pytest.raises(Exception, match="primary key"):
        cat.create_table("db.t", schema("id INT", primary_keys=["nope"]))
    assert [c.operation for c in server.calls] == []


def test_reading_commands_through_the_server(server: RestCatalogServer) -> None:
    seed(server)
    listed = json.loads(cli(server, "list", "-o", "json").stdout)
    assert [r.get("database", r.get("name")) for r in listed] == ["db"]
    assert [r["table"] for r in json.loads(cli(server, "list", "db", "-o", "json").stdout)] == ["t"]
    rows = [json.loads(line) for line in cli(server, "read", "db.t", "-o", "jsonl").stdout.splitlines()]
    assert sorted((r["id"], r["dt"], r["v"]) for r in rows) == [(1, "a", "z"), (2, "b", "y")]
    snaps = json.loads(cli(server, "inspect", "snapshots", "db.t", "-o", "json").stdout)
    assert [s["snapshot_id"] for s in snaps] == [1, 2]
    assert server.calls_of("getTable")


def test_permission_errors_exit_9(server: RestCatalogServer) -> None:
    res = cli(server, "list", code=9, token="wrong")
    assert res.stderr.startswith("error: catalog rest: load the config") and "not authorized" in res.stderr
    seed(server)
    server.forbidden_tables.add("db.t")
    res = cli(server, "read", "db.t", code=9)
    assert "forbidden" in res.stderr


def test_dlf_signing_without_credentials_is_invalid_input(server: RestCatalogServer) -> None:
    res = cli(server, "list", code=4, **{"token.provider": "dlf", "dlf.region": "cn-hangzhou"})
    assert "token.provider=dlf needs dlf.access-key-id" in res.stderr and not server.calls
    assert "Traceback" not in res.stderr


def test_unavailable_server_exits_8(server: RestCatalogServer) -> None:
    server.inject("getConfig", 503, times=None)
    res = CliRunner().invoke(app, ["list", *[x for k, v in server.client_options().items()
                                             for x in ("--catalog-option", f"{k}={v}")]])
    assert res.exit_code == 8 and "HTTP 503" in res.stderr


def test_not_a_paimon_table_is_named(server: RestCatalogServer) -> None:
    cat = catalog_of(server)
    with pytest.raises(NotYetSupported, match="type=format-table"):
        cat.create_table("db.f", schema("id INT", options={"type": "format-table", "file.format": "csv"}))
    assert not server.calls_of("createTable")
    cat.create_database("db")  # another engine's format table
    cat.api.create_table("db", "f", {"fields": [{"id": 0, "name": "id", "type": "INT"}], "partitionKeys": [],
                                     "primaryKeys": [], "options": {"type": "format-table", "file.format": "csv"}})
    entries = cat.list_table_entries("db")
    assert [(e.name, e.kind) for e in entries] == [("f", "format-table")]
    with pytest.raises(NotYetSupported, match="format-table"):
        cat.get_table("db.f")


@pytest.mark.pypaimon
def test_pypaimon_written_table_reads_the_same_through_our_rest_catalog(server: RestCatalogServer,
                                                                          pypaimon: PyPaimon) -> None:
    rest = pypaimon.with_catalog(server.client_options())
    wh = server.warehouse
    rest.create_table(wh, "db", "p", [("id", "int64"), ("dt", "string"), ("v", "string")],
                      primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "2"})
    rest.write(wh, "db", "p", [{"id": i, "dt": "ab"[i % 2], "v": f"v{i}"} for i in range(20)])
    rest.write(wh, "db", "p", [{"id": i, "dt": "ab"[i % 2], "v": f"w{i}"} for i in range(0, 20, 3)])
    expected = sorted((r["id"], r["dt"], r["v"]) for r in rest.read(wh, "db", "p"))
    rows = [json.loads(line) for line in cli(server, "read", "db.p", "-o", "jsonl").stdout.splitlines()]
    assert sorted((r["id"], r["dt"], r["v"]) for r in rows) == expected
    with pytest.raises(PermissionDenied):
        catalog_of(server, token="wrong").list_databases()
