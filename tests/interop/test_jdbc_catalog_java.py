"""paimon-cli's JDBC catalog store against Java Paimon 0.9's JdbcCatalog on one catalog
database (SQLite file, PostgreSQL server): each side lists, loads, writes, compacts, expires,
tags, renames and drops what the other registered; the catalog tables are the same DDL; our
commit lock and Java's exclude each other (SQLite: Java 0.9 has no PostgreSQL lock dialect,
so the PostgreSQL lock is tested ours-vs-ours in tests/catalogs/test_jdbc_store.py).

Java side: PaimonTestHelper.catalog(spec) with a JSON spec of catalog options, JdbcCatalogHelper.
"""

from __future__ import annotations

import shutil
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore, table_properties_of
from paimon_cli.core.errors import PaimonError

from .java_harness import JDBC_APT_PACKAGES, JavaPaimon, JavaPaimonError, catalog_spec, jdbc_driver_jars

pytestmark = pytest.mark.jdbc
COLUMNS = [("id", "INT"), ("v", "STRING")]


@pytest.fixture
def java(java_paimon: JavaPaimon, jdbc_backend: tuple[str, str]) -> JavaPaimon:
    proto = "sqlite" if jdbc_backend[0] == "sqlite" else "postgresql"
    if proto not in jdbc_driver_jars():
        pytest.fail(f"no {proto} JDBC driver jar for Java: apt-get install -y {JDBC_APT_PACKAGES}", pytrace=False)
    return java_paimon


@pytest.fixture
def specs(java: JavaPaimon) -> Any:
    """``spec(opts)``: the Java catalog spec of ``opts``; every catalog made is closed after the test."""
    made: list[str] = []

    def spec(opts: dict[str, str]) -> str:
        s = catalog_spec(opts)
        made.append(s)
        return s

    yield spec
    for s in made:
        java.close_catalog(s)


def _rows(n: int, tag: str) -> list[dict[str, Any]]:
    return [{"id": i, "v": f"{tag}{i}"} for i in range(n)]


def _our_read(warehouse: str, ident: str) -> list[dict[str, Any]]:
    return sorted(Warehouse(warehouse).table(ident).read().to_pylist(), key=lambda r: r["id"])


def test_java_created_tables_are_ours_to_list_and_read(
        java: JavaPaimon, specs: Any, jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    spec = specs(opts)
    java.jdbc_create_database(spec, "sales", {"owner": "ann"})
    java.create_table(spec, "sales", "orders", COLUMNS, ["id"], [], {"bucket": "1"})
    java.write(spec, "sales", "orders", _rows(5, "a"))
    java.write(spec, "sales", "orders", _rows(3, "b"))
    java.compact(spec, "sales", "orders")
    java.create_tag(spec, "sales", "orders", "t1", 1)
    assert java.expire(spec, "sales", "orders", retain_max=1, retain_min=1) == 2

    store = JdbcCatalogStore.from_options(opts)
    assert store.list_databases() == ["sales"]
    assert store.database_properties("sales") == java.database_properties(spec, "sales") == {
        "owner": "ann", "location": f"{opts['warehouse']}/sales.db"}
    assert store.list_tables("sales") == ["orders"] and store.table_exists("sales", "orders")
    assert store.table_location("sales", "orders") == java.table_path(spec, "sales", "orders")
    expected = sorted(_rows(3, "b") + _rows(5, "a")[3:], key=lambda r: r["id"])
    assert _our_read(opts["warehouse"], "sales.orders") == expected
    assert store.table_properties("sales", "orders") == {}  # Java 0.9 syncs no table properties


def test_tables_we_register_are_javas_to_load_write_compact_expire_and_tag(
        java: JavaPaimon, specs: Any, jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    store = JdbcCatalogStore.from_options(opts)
    store.create_database("mart", {"comment": "ours"})
    table = Warehouse(opts["warehouse"]).create_table("mart.t", "id INT NOT NULL, v STRING", primary_key="id",
                                                      options={"bucket": "1"})
    store.register_table("mart", "t", table_properties_of(table.open().schema))
    table.write(pa.Table.from_pylist(_rows(4, "x"), schema=pa.schema([("id", pa.int32()), ("v", pa.string())])))

    spec = specs(opts)
    assert "mart" in java.jdbc_list_databases(spec)
    assert java.jdbc_list_tables(spec, "mart") == ["t"]
    assert java.database_properties(spec, "mart") == {"comment": "ours", "location": f"{opts['warehouse']}/mart.db"}
    assert java.table_path(spec, "mart", "t") == store.table_location("mart", "t")
    java.write(spec, "mart", "t", _rows(2, "y"))
    java.compact(spec, "mart", "t")
    java.create_tag(spec, "mart", "t", "v1")
    java.expire(spec, "mart", "t", retain_max=1, retain_min=1)
    expected = sorted(_rows(2, "y") + _rows(4, "x")[2:], key=lambda r: r["id"])
    assert [{k: r[k] for k in ("id", "v")} for r in java.read(spec, "mart", "t")] == expected
    assert _our_read(opts["warehouse"], "mart.t") == expected

    # a name we unregister is gone for Java too (its files stay: the store does not touch them).
    # On SQLite, Java 0.9 holds a read lock while its catalog is open (next test): close it first.
    java.close_catalog(spec)
    assert store.unregister_table("mart", "t")
    assert java.table_path(spec, "mart", "t") is None and java.jdbc_list_tables(spec, "mart") == []


def test_renames_and_drops_cross_over(
        java: JavaPaimon, specs: Any, jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    spec = specs(opts)
    java.create_table(spec, "db", "a", COLUMNS, ["id"], [], {"bucket": "1"})
    java.write(spec, "db", "a", _rows(2, "a"))
    java.create_table(spec, "db", "gone", COLUMNS, ["id"], [], {"bucket": "1"})
    store = JdbcCatalogStore.from_options(opts)

    java.jdbc_rename_table(spec, "db", "a", "db", "b")  # Java: rows first, then the directory
    assert store.list_tables("db") == ["b", "gone"]
    assert Path(store.table_location("db", "b")).is_dir() and not Path(store.table_location("db", "a")).exists()

    store.create_database("db2")
    shutil.move(store.table_location("db", "b"), store.table_location("db2", "c"))  # the caller's part
    store.rename_table("db", "b", "db2", "c")
    assert java.jdbc_list_tables(spec, "db2") == ["c"] and java.table_path(spec, "db", "b") is None
    assert [r["v"] for r in java.read(spec, "db2", "c")] == ["a0", "a1"]

    java.jdbc_drop_table(spec, "db", "gone")  # Java deletes the row, then the directory
    assert store.list_tables("db") == [] and not Path(store.table_location("db", "gone")).exists()
    java.jdbc_drop_database(spec, "db", cascade=False)
    assert store.list_databases() == ["db2"]
    assert store.drop_database("db2", cascade=True) == ["c"]
    assert java.jdbc_list_databases(spec) == []


@pytest.mark.parametrize("jdbc_backend", ["sqlite"], indirect=True)
def test_java_up_to_1_4_blocks_sqlite_writers_while_its_catalog_is_open(
        java: JavaPaimon, specs: Any, jdbc_backend: tuple[str, str],
        jdbc_options: Callable[..., dict[str, str]]) -> None:
    """Java <= 1.4 leaves the ResultSet of its "does the catalog table exist" check open when the
    tables exist, so its pooled SQLite connection keeps a read lock until the catalog closes:
    every other writer gets SQLITE_BUSY (in WAL mode Java instead keeps reading a stale
    snapshot and never sees new tables). We fail in one line that says so, change nothing,
    and succeed once Java's catalog is closed."""
    opts = jdbc_options({"jdbc.busy_timeout": "300"})
    store = JdbcCatalogStore.from_options(opts)
    store.create_database("db")  # the catalog tables exist before Java opens the catalog
    spec = specs({k: v for k, v in opts.items() if k != "jdbc.busy_timeout"})
    assert java.jdbc_list_tables(spec, "db") == []
    with pytest.raises(PaimonError, match=r"register a table failed: database is locked \(another connection "
                                          r"holds the SQLite file; Java Paimon up to 1.4") as info:
        store.register_table("db", "t")
    assert "\n" not in str(info.value)
    java.close_catalog(spec)
    assert store.list_tables("db") == []
    store.register_table("db", "t")
    assert java.jdbc_list_tables(spec, "db") == ["t"]


def _sqlite_ddl(path: str) -> dict[str, str]:
    with sqlite3.connect(path) as c:
        rows = c.execute("SELECT name, sql FROM sqlite_master WHERE type = 'table'").fetchall()
    return {n: " ".join(sql.replace("IF NOT EXISTS ", "").split()) for n, sql in rows}


def _pg_columns(store: JdbcCatalogStore) -> set[tuple[Any, ...]]:
    return set(store._run("columns", lambda c: c.query(
        "SELECT c.table_name, c.column_name, c.data_type, c.character_maximum_length, c.is_nullable, "
        "c.column_default, (SELECT count(*) FROM information_schema.key_column_usage k WHERE "
        "k.table_name = c.table_name AND k.column_name = c.column_name) FROM information_schema.columns c "
        "WHERE c.table_schema = 'public'")))


def test_catalog_tables_have_javas_ddl(java: JavaPaimon, specs: Any, jdbc_backend: tuple[str, str],
                                       tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Java creates its tables in one catalog database, we create ours in another: same DDL
    (SQLite keeps the statement text, PostgreSQL the column definitions), lock table included."""
    backend, uri = jdbc_backend
    if backend == "sqlite":
        theirs, ours = f"jdbc:sqlite:{tmp_path}/java.db", f"jdbc:sqlite:{tmp_path}/ours.db"
    else:
        theirs, ours = uri, request.getfixturevalue("postgres_server").jdbc_uri(
            request.getfixturevalue("postgres_server").create_database())
    extra = {"jdbc.user": "postgres"} if backend == "postgres" else {}
    lock = {"lock.enabled": "true"} if backend == "sqlite" else {}  # Java 0.9: no PostgreSQL lock
    java.jdbc_list_databases(specs({"metastore": "jdbc", "uri": theirs, "warehouse": str(tmp_path), **extra, **lock}))
    store = JdbcCatalogStore.from_options({"uri": ours, "warehouse": str(tmp_path), **extra, **lock})
    store.list_databases()
    if backend == "sqlite":
        java_ddl, our_ddl = _sqlite_ddl(theirs[len("jdbc:sqlite:"):]), _sqlite_ddl(ours[len("jdbc:sqlite:"):])
        assert set(java_ddl) == {"paimon_tables", "paimon_database_properties", "paimon_distributed_locks"}
        assert {n: our_ddl[n] for n in java_ddl} == java_ddl
        assert set(our_ddl) - set(java_ddl) == {"paimon_table_properties", "paimon_views"}  # Java 1.4+ / 2.0+
    else:
        java_store = JdbcCatalogStore.from_options({"uri": theirs, "warehouse": str(tmp_path), **extra})
        java_cols = {c for c in _pg_columns(java_store) if c[0] in ("paimon_tables", "paimon_database_properties")}
        java_store.close()
        ours_cols = _pg_columns(store)
        assert java_cols and java_cols <= ours_cols


@pytest.mark.parametrize("jdbc_backend", ["sqlite"], indirect=True)
def test_our_lock_and_javas_exclude_each_other_on_sqlite(
        java: JavaPaimon, specs: Any, jdbc_backend: tuple[str, str],
        jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "60 s", "lock-check-max-sleep": "100 ms"})
    spec = specs(opts)
    java.create_table(spec, "db", "t", COLUMNS, ["id"], [], {"bucket": "1"})
    store = JdbcCatalogStore.from_options(opts)
    lock = store.lock("db", "t")

    # we hold it: Java's lock, and a Java commit, wait for our release
    results: dict[str, Any] = {}
    lock.acquire()
    java_lock = threading.Thread(target=lambda: results.update(lock=java.jdbc_hold_lock(spec, "db", "t", 10)))
    java_commit = threading.Thread(target=lambda: results.update(commit=(java.write(spec, "db", "t", _rows(1, "j")),
                                                                         time.time())))
    java_lock.start()
    java_commit.start()
    time.sleep(1.5)
    assert java_lock.is_alive() and java_commit.is_alive() and "lock" not in results
    released = time.time()
    lock.release()
    java_lock.join(60)
    java_commit.join(60)
    assert results["lock"][1] >= released * 1000 - 5  # Java acquired after our release (same clock)
    sid, committed_at = results["commit"]
    assert sid == 1 and committed_at >= released

    # Java holds it: we wait for Java's release, and see Java's row while we wait
    seen: list[Any] = []
    holder = threading.Thread(target=lambda: results.update(held=java.jdbc_hold_lock(spec, "db", "t", 1500)))
    holder.start()
    deadline = time.time() + 30
    while not seen and time.time() < deadline:
        seen = store.lock_holders()
    assert [(i, e) for i, _, e in seen] == [("jdbc.db.t", 60)]  # Java's row: expire = timeout / 1000
    got = lock.run_with_lock(time.time)
    holder.join(60)
    assert got * 1000 >= results["held"][2] - 5
    assert store.lock_holders() == []


@pytest.mark.parametrize("jdbc_backend", [pytest.param("postgres", marks=pytest.mark.postgres)], indirect=True)
def test_java09_has_no_postgres_lock(java: JavaPaimon, specs: Any, jdbc_backend: tuple[str, str],
                                     jdbc_options: Callable[..., dict[str, str]]) -> None:
    """Why the PostgreSQL lock is proven ours-vs-ours: Java 0.9 cannot take one (1.1+ can,
    with the SQL our store uses)."""
    with pytest.raises(JavaPaimonError, match="No enum constant.*POSTGRESQL"):
        java.jdbc_list_databases(specs(jdbc_options({"lock.enabled": "true"})))


def test_tables_repair_registers_from_storage_are_javas_to_list_and_read(
        java: JavaPaimon, specs: Any, jdbc_options: Callable[..., dict[str, str]]) -> None:
    """``repair`` (Java's repairCatalog) enters a database and table written through the
    filesystem catalog; Java's JdbcCatalog then lists and reads them."""
    opts = jdbc_options()
    table = Warehouse(opts["warehouse"]).create_table("found.t", "id INT NOT NULL, v STRING", primary_key="id",
                                                      options={"bucket": "1"})
    table.write(pa.Table.from_pylist(_rows(4, "x"), schema=pa.schema([("id", pa.int32()), ("v", pa.string())])))
    ours = Warehouse(None, catalog_options=[f"{k}={v}" for k, v in opts.items()])
    report = ours.repair(None)
    assert report.exit_code == 0 and [r.name for r in report.databases] == ["found"]
    spec = specs(opts)
    assert java.list_tables(spec, "found") == ["t"]
    assert sorted(java.read(spec, "found", "t", row_kind=False), key=lambda r: r["id"]) == _rows(4, "x")
