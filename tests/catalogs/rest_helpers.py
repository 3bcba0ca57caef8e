"""Shared set-up of the tests that run paimon-cli's commands through the test REST server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog import rest_client
from paimon_cli.core.refs.snapshot import SnapshotManager
from paimon_cli.core.refs.tags import TagManager
from tests.catalogs.rest_server import RestCatalogServer

SCHEMA = "id BIGINT NOT NULL, dt STRING, v STRING"
OLD, NEW = "2020-01-01", "2999-01-01"  # a partition expire-partitions drops, one it keeps
FIRST = [(1, OLD, "a"), (2, NEW, "b"), (3, NEW, "c")]
SECOND = [(1, OLD, "d"), (4, NEW, "e")]
CLIENT_TIMEOUT = 1.5  # seconds; a "slow" fault answers later than this


def isolate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No catalog or storage settings of the environment; a client that gives up quickly."""
    for var in ("PAIMON_CATALOG", "PAIMON_CATALOG_OPTIONS", "PAIMON_WAREHOUSE", "PAIMON_OUTPUT",
                "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    defaults = rest_client.RestClient.__init__.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "timeout", CLIENT_TIMEOUT)
    monkeypatch.setitem(defaults, "attempts", 3)
    monkeypatch.setitem(defaults, "backoff", (0.05, 0.2))


def warehouse(server: RestCatalogServer, **extra: str) -> Warehouse:
    return Warehouse(catalog_options=server.client_options(**extra))


def cli(server: RestCatalogServer, *args: str, code: int = 0, **extra: str) -> Any:
    opts = [x for k, v in server.client_options(**extra).items() for x in ("--catalog-option", f"{k}={v}")]
    res = CliRunner().invoke(app, [*args, *opts])
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def batch(rows: list[tuple[int, str, str]]) -> pa.Table:
    return pa.table({"id": pa.array([r[0] for r in rows], pa.int64()), "dt": [r[1] for r in rows],
                     "v": [r[2] for r in rows]})


def seed(server: RestCatalogServer, name: str = "db.t", *, options: dict[str, str] | None = None,
         batches: tuple[list[tuple[int, str, str]], ...] = (FIRST, SECOND)) -> Warehouse:
    """A partitioned primary-key table created through the server, one commit per batch (through
    the server too)."""
    wh = warehouse(server)
    wh.create_table(name, SCHEMA, primary_key=["id", "dt"], partition_by=["dt"],
                    options={"bucket": "1", **(options or {})})
    for b in batches:
        wh.table(name).write(batch(b), expire=False)
    return wh


def rows_of(wh: Warehouse, name: str = "db.t", **at: Any) -> list[tuple[int, str, str]]:
    return sorted((r["id"], r["dt"], r["v"]) for r in wh.table(name).read(**at).to_pylist())


def state(server: RestCatalogServer, name: str = "db.t") -> dict[str, Any]:
    """What a command may change, read from the table's files (not through the server): rows,
    snapshots (id, kind), tags, schema and the server's partitions -- equal for two tables that
    saw the same changes."""
    db, t = name.split(".")
    path = str(server.table_path(db, t))
    wh = Warehouse(str(server.root))
    table = wh.catalog.get_table(name)
    sm = SnapshotManager(table.file_io, path)
    return {
        "rows": rows_of(wh, name),
        "snapshots": [(s, sm.snapshot(s).commit_kind) for s in sm.snapshot_ids()],
        "tags": TagManager(table.file_io, path).tag_names(),
        "schema": (table.schema.id, table.schema.bucket),
        "partitions": server_partitions(server, name),
    }


def server_partitions(server: RestCatalogServer, name: str = "db.t") -> dict[str, tuple[int, int, int]]:
    """The server's partitions as its commits' statistics summed them: name -> (records, files, bytes)."""
    db, t = name.split(".")
    return {k: (p["recordCount"], p["fileCount"], p["fileSizeInBytes"])
            for k, p in sorted(server.partitions.get((db, t), {}).items())}


def table_partitions(wh: Warehouse, name: str = "db.t") -> dict[str, tuple[int, int, int]]:
    """The table's live partitions from its files (``inspect partitions``; the tables here are
    partitioned by ``dt`` alone), keyed as the server keys them."""
    return dict(sorted((f"dt={r['partition'].strip('[]')}", (r["record_count"], r["file_count"],
                                                               r["file_size_in_bytes"]))
                       for r in wh.table(name).inspect("partitions").rows))


def commits(server: RestCatalogServer, name: str = "db.t") -> list[dict[str, Any]]:
    """The commit requests the server accepted for ``name``, in order."""
    return [c.body for c in server.calls_of("commitTable")
            if c.table == name and c.answer == {"success": True}]


def jsonl(res: Any) -> list[dict[str, Any]]:
    return [json.loads(line) for line in res.stdout.splitlines() if line.strip()]
