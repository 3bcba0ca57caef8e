"""paimon-cli's JDBC catalog store against pypaimon 2.1's JdbcCatalog on one catalog database
(SQLite file, PostgreSQL server): each lists and reads what the other registered, and the
table properties pypaimon syncs (paimon_table_properties) are the ones we read and write.
pypaimon 2.1 takes no commit lock (nothing to exclude)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore, table_properties_of

from .pypaimon_peer import PyPaimon, decode_value, write_op

pytestmark = [pytest.mark.jdbc, pytest.mark.pypaimon]


def _rows(n: int, tag: str) -> list[dict[str, Any]]:
    return [{"id": i, "dt": "2024-01-01" if i % 2 else "2024-01-02", "v": f"{tag}{i}"} for i in range(n)]


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["dt"], r["id"])


def _peer_read(peer: PyPaimon, opts: dict[str, str], db: str, table: str) -> list[dict[str, Any]]:
    res = peer.call("read", warehouse=opts["warehouse"], db=db, table=table, catalog_options=opts)
    return sorted(({c: decode_value(r[c], res["types"][c]) for c in res["columns"]} for r in res["rows"]), key=_key)


def test_pypaimon_tables_are_ours_to_list_and_read(
        pypaimon: PyPaimon, jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    columns = [["id", "int64"], ["dt", "string"], ["v", "string"]]
    ops: list[dict[str, Any]] = [
        {"op": "create_table", "warehouse": opts["warehouse"], "catalog_options": opts, "db": "peer", "table": "t",
         "columns": columns, "primary_keys": ["id", "dt"], "partition_keys": ["dt"], "options": {"bucket": "2"}},
        {**write_op(opts["warehouse"], "peer", "t", _rows(6, "a")), "catalog_options": opts},
        {**write_op(opts["warehouse"], "peer", "t", _rows(3, "b")), "catalog_options": opts},
    ]
    pypaimon.run(ops)

    store = JdbcCatalogStore.from_options(opts)
    assert store.list_databases() == ["peer"] and store.list_tables("peer") == ["t"]
    assert store.database_properties("peer") == {"location": f"{opts['warehouse']}/peer.db"}
    props = store.table_properties("peer", "t")
    assert props["primary-key"] == "id,dt" and props["partition"] == "dt" and props["bucket"] == "2"
    ours = sorted(Warehouse(opts["warehouse"]).table("peer.t").read().to_pylist(), key=_key)
    assert ours == sorted(_rows(3, "b") + _rows(6, "a")[3:], key=_key) == _peer_read(pypaimon, opts, "peer", "t")


def test_tables_we_register_are_pypaimons_to_list_and_read(
        pypaimon: PyPaimon, jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    store = JdbcCatalogStore.from_options(opts)
    store.create_database("mart")
    table = Warehouse(opts["warehouse"]).create_table("mart.t", "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING",
                                                      primary_key="id,dt", partition_by="dt", options={"bucket": "1"})
    store.register_table("mart", "t", table_properties_of(table.open().schema))
    table.write(pa.Table.from_pylist(_rows(5, "x"), schema=pa.schema(
        [("id", pa.int64()), ("dt", pa.string()), ("v", pa.string())])))

    assert pypaimon.list_databases(opts) == ["mart"]
    assert pypaimon.list_tables(opts, "mart") == ["t"]
    assert _peer_read(pypaimon, opts, "mart", "t") == sorted(_rows(5, "x"), key=_key)
    # pypaimon writes through the catalog we registered; we read its commit
    pypaimon.run([{**write_op(opts["warehouse"], "mart", "t", _rows(2, "y")), "catalog_options": opts}])
    ours = sorted(Warehouse(opts["warehouse"]).table("mart.t").read().to_pylist(), key=_key)
    assert ours == sorted(_rows(2, "y") + _rows(5, "x")[2:], key=_key)
