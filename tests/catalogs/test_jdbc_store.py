"""paimon-cli's JDBC catalog store on a real SQLite file and a real PostgreSQL server: the
tables Java's JdbcCatalog uses, every query keyed by catalog-key, the commit lock (two
processes exclude each other, a killed holder's lock is taken over only after it expired) and
the errors. Interop with Java's JdbcCatalog and pypaimon's: tests/interop/test_jdbc_catalog_*.py."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from paimon_cli.core.catalog.jdbc_client import JdbcSettings, _mysql_target, redact
from paimon_cli.core.catalog.jdbc_lock import lock_id
from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore, table_properties_of
from paimon_cli.core.errors import (
    AlreadyExists,
    CatalogUnavailable,
    CommitConflict,
    InvalidInput,
    NotFound,
    NotYetSupported,
    PaimonError,
    UnsafeRefused,
)
from paimon_cli.core.schema.table_schema import TableSchema

from .jdbc_backends import BACKENDS, backend_uri

pytestmark = pytest.mark.jdbc
ROOT = Path(__file__).resolve().parents[2]
CATALOG_TABLES = {"paimon_tables", "paimon_database_properties", "paimon_table_properties", "paimon_views"}


@pytest.fixture(params=[*BACKENDS, pytest.param("mysql", id="mysql", marks=pytest.mark.mysql)])
def jdbc_backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """The store's own tests also run on MySQL (MariaDB); the interop tests use SQLite and
    PostgreSQL (tests/catalogs/jdbc_backends.py)."""
    if request.param == "mysql":
        return "mysql", request.getfixturevalue("mysql_database")
    return request.param, backend_uri(request, tmp_path)


def _store(opts: dict[str, str]) -> JdbcCatalogStore:
    return JdbcCatalogStore.from_options(opts)


def _tables_in(store: JdbcCatalogStore) -> set[str]:
    if store.protocol == "sqlite":
        sql = "SELECT name FROM sqlite_master WHERE type = 'table'"
    elif store.protocol == "mysql":
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = DATABASE()"
    else:
        sql = "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
    return {r[0] for r in store._run("list", lambda c: c.query(sql))}


# ------------------------------------------------------------------------------- options


def test_settings_use_javas_keys_and_defaults() -> None:
    s = JdbcSettings.from_options({"uri": "jdbc:sqlite:/x.db", "warehouse": "/wh", "jdbc.user": "u",
                                   "jdbc.password": "p", "other": "x"})
    assert (s.catalog_key, s.lock_enabled, s.lock_acquire_timeout_ms, s.lock_check_max_sleep_ms) == \
        ("jdbc", False, 480_000, 8_000)
    assert dict(s.properties) == {"user": "u", "password": "p"}
    assert s.expire_time_seconds == 480 and s.lock_key_max_length == 255 and s.sync_table_properties
    s = JdbcSettings.from_options({"uri": "jdbc:sqlite:/x.db", "warehouse": "/wh", "catalog-key": "k",
                                   "lock.enabled": "TRUE", "lock-acquire-timeout": "90 s",
                                   "lock-check-max-sleep": "500", "sync-all-properties": "false"})
    assert (s.catalog_key, s.lock_enabled, s.lock_acquire_timeout_ms, s.lock_check_max_sleep_ms,
            s.expire_time_seconds, s.sync_table_properties) == ("k", True, 90_000, 500, 90, False)
    assert JdbcSettings.from_options({"uri": "jdbc:sqlite:/x", "warehouse": "/w"}, lock_enabled_default=True).lock_enabled


@pytest.mark.parametrize(("options", "error", "text"), [
    ({"warehouse": "/w"}, InvalidInput, "needs the catalog option uri"),
    ({"uri": "jdbc:sqlite:/x"}, InvalidInput, "needs the catalog option warehouse"),
    ({"uri": "sqlite:/x", "warehouse": "/w"}, InvalidInput, "not a JDBC url"),
    ({"uri": "jdbc:oracle:thin:@h:1521:x", "warehouse": "/w"}, NotYetSupported, "'oracle' is not supported"),
    ({"uri": "jdbc:sqlite:/x", "warehouse": "/w", "lock.enabled": "yes"}, InvalidInput, "lock.enabled='yes'"),
    ({"uri": "jdbc:sqlite:/x", "warehouse": "/w", "lock-acquire-timeout": "soon"}, InvalidInput, "not a duration"),
])
def test_bad_settings_are_refused_in_one_line(options: dict[str, str], error: type, text: str) -> None:
    with pytest.raises(error, match=text) as info:
        JdbcSettings.from_options(options)
    assert "\n" not in str(info.value)


def test_unknown_connection_property_is_refused_not_dropped(tmp_path: Path) -> None:
    store = _store({"uri": f"jdbc:sqlite:{tmp_path}/c.db", "warehouse": str(tmp_path), "jdbc.foo": "1"})
    with pytest.raises(InvalidInput, match="jdbc.foo is not a connection property"):
        store.list_databases()
    store = _store({"uri": "jdbc:postgresql://127.0.0.1:1/x", "warehouse": "/w", "jdbc.sslfactory": "x"})
    with pytest.raises(InvalidInput, match="jdbc.sslfactory is not a connection property"):
        store.list_databases()


def test_passwords_never_reach_messages() -> None:
    assert redact("jdbc:postgresql://h/db?user=a&password=s3cret") == "jdbc:postgresql://h/db?user=a&password=***"
    assert "s3cret" not in redact("jdbc:mysql://a:s3cret@h/db")
    store = _store({"uri": "jdbc:postgresql://127.0.0.1:1/x?password=s3cret", "warehouse": "/w"})
    with pytest.raises(PaimonError) as info:
        store.list_databases()
    assert "s3cret" not in str(info.value)


def test_sqlite_pragmas_from_jdbc_properties(tmp_path: Path) -> None:
    """xerial applies jdbc.journal_mode etc. as pragmas; so do we (journal mode is persistent:
    the file stays in WAL for every later user, Java included)."""
    db = tmp_path / "c.db"
    store = _store({"uri": f"jdbc:sqlite:{db}?journal_mode=wal", "warehouse": str(tmp_path)})
    store.list_databases()
    store.close()
    assert sqlite3.connect(db).execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    with pytest.raises(InvalidInput, match="not a SQLite journal_mode"):
        _store({"uri": f"jdbc:sqlite:{db}", "warehouse": "/w", "jdbc.journal_mode": "fast"}).list_databases()


def test_timeouts_from_jdbc_properties_are_applied(tmp_path: Path) -> None:
    """jdbc.busy_timeout (xerial, ms) and MySQL's jdbc.connectTimeout (Connector/J, ms) were read
    under the wrong key and silently left at their defaults (5 s, 1 s)."""
    store = _store({"uri": f"jdbc:sqlite:{tmp_path / 'c.db'}", "warehouse": str(tmp_path), "jdbc.busy_timeout": "700"})
    store.list_databases()
    assert store._run("pragma", lambda c: c.query("PRAGMA busy_timeout")) == [(700,)]
    assert _mysql_target("//db.internal/cat", {"connectTimeout": "7000"}).kwargs["connect_timeout"] == 7
    with pytest.raises(InvalidInput, match="jdbc.busy_timeout"):
        _store({"uri": f"jdbc:sqlite:{tmp_path / 'c.db'}", "warehouse": "/w", "jdbc.busy_timeout": "0"}).list_databases()


# ------------------------------------------------------------------------------- errors


def test_unreachable_postgres_fails_fast_in_one_line() -> None:
    with socket_closed_port() as port:
        store = _store({"uri": f"jdbc:postgresql://127.0.0.1:{port}/cat", "warehouse": "/w"})
        start = time.monotonic()
        with pytest.raises(PaimonError) as info:
            store.list_databases()
    assert time.monotonic() - start < 5
    msg = str(info.value)
    assert type(info.value) is CatalogUnavailable and info.value.exit_code == 8
    assert msg.startswith(f"JDBC catalog jdbc:postgresql://127.0.0.1:{port}/cat is unreachable:") and "\n" not in msg


class socket_closed_port:
    """A loopback port nothing listens on."""

    def __enter__(self) -> int:
        import socket

        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = int(s.getsockname()[1])
        s.close()
        return self.port

    def __exit__(self, *exc: object) -> None:
        pass


def test_unopenable_sqlite_file_is_unreachable(tmp_path: Path) -> None:
    store = _store({"uri": f"jdbc:sqlite:{tmp_path}/no/such/dir/c.db", "warehouse": str(tmp_path)})
    with pytest.raises(PaimonError, match=r"is unreachable: unable to open database file"):
        store.list_databases()


def test_missing_driver_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # import psycopg -> ImportError
    with pytest.raises(PaimonError, match=r"needs psycopg 3: pip install 'paimon-cli\[postgres\]'"):
        _store({"uri": "jdbc:postgresql://127.0.0.1:1/x", "warehouse": "/w"}).list_databases()
    monkeypatch.setitem(sys.modules, "pymysql", None)
    with pytest.raises(PaimonError, match=r"needs PyMySQL: pip install 'paimon-cli\[mysql\]'"):
        _store({"uri": "jdbc:mysql://127.0.0.1:1/x", "warehouse": "/w"}).list_databases()


def test_sql_error_is_one_line_and_the_store_recovers(tmp_path: Path) -> None:
    db = tmp_path / "c.db"
    store = _store({"uri": f"jdbc:sqlite:{db}", "warehouse": str(tmp_path)})
    store.create_database("d")
    store.register_table("d", "t")
    other = sqlite3.connect(db)
    other.execute("DROP TABLE paimon_table_properties")  # someone broke the catalog
    other.commit()
    with pytest.raises(PaimonError, match=r"^JDBC catalog jdbc:sqlite:.*: read table properties failed: "
                                          r"no such table: paimon_table_properties$"):
        store.table_properties("d", "t")
    assert store.list_tables("d") == ["t"]  # still usable for what is intact


def test_busy_sqlite_commit_changes_nothing(tmp_path: Path) -> None:
    """A reader holding the SQLite file lets our transaction start but not commit: the error
    names the lock, the insert is rolled back, and the store works once the reader is gone."""
    db = tmp_path / "c.db"
    store = _store({"uri": f"jdbc:sqlite:{db}", "warehouse": str(tmp_path), "jdbc.busy_timeout": "200"})
    store.create_database("db")
    reader = sqlite3.connect(db, isolation_level=None)
    reader.execute("BEGIN")
    reader.execute("SELECT * FROM paimon_tables").fetchall()  # a SHARED lock until COMMIT
    with pytest.raises(PaimonError, match="register a table failed: database is locked"):
        store.register_table("db", "t")
    reader.execute("COMMIT")
    assert store.list_tables("db") == []
    store.register_table("db", "t")
    assert store.list_tables("db") == ["t"]


def test_postgres_restart_reconnects(postgres_server, pg_database: str) -> None:  # type: ignore[no-untyped-def]
    """A server that went away mid-session: one clear error, then the next call reconnects."""
    store = _store({"uri": pg_database, "warehouse": "/w", "jdbc.user": "postgres"})
    store.create_database("d")
    with postgres_server.connect() as admin:  # kill our backend: what a server restart does to us
        admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s AND pid <> "
                      "pg_backend_pid()", (pg_database.rsplit("/", 1)[1],))
    with pytest.raises(PaimonError, match="connection lost"):
        store.list_databases()
    assert store.list_databases() == ["d"]


# ------------------------------------------------------------------------------- databases and tables


def test_catalog_tables_are_created_once_as_java_names_them(jdbc_options: Callable[..., dict[str, str]]) -> None:
    store = _store(jdbc_options())
    assert store.list_databases() == []
    assert _tables_in(store) == CATALOG_TABLES  # no lock table without lock.enabled
    again = _store(jdbc_options({"lock.enabled": "true"}))
    assert again.list_databases() == []
    assert _tables_in(again) == CATALOG_TABLES | {"paimon_distributed_locks"}


def test_databases(jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    store = _store(opts)
    assert store.create_database("sales", {"comment": "q1", "owner": "ann"})
    assert not store.create_database("sales", ignore_if_exists=True)
    with pytest.raises(AlreadyExists, match="database sales already exists"):
        store.create_database("sales")
    store.create_database("empty")
    assert store.list_databases() == ["empty", "sales"]
    assert store.database_properties("sales") == {
        "comment": "q1", "owner": "ann", "location": f"{opts['warehouse']}/sales.db"}
    rows = store._run("rows", lambda c: c.query(
        "SELECT property_key, property_value FROM paimon_database_properties WHERE database_name = 'sales'"))
    assert dict(rows)["exists"] == "true"  # Java's marker row
    store.alter_database("sales", {"owner": "bob", "team": "x"}, ["comment"])
    assert store.database_properties("sales") == {"owner": "bob", "team": "x",
                                                 "location": f"{opts['warehouse']}/sales.db"}
    with pytest.raises(NotFound, match="database nope does not exist"):
        store.database_properties("nope")
    store.register_table("sales", "orders")
    with pytest.raises(UnsafeRefused, match="database sales is not empty"):
        store.drop_database("sales")
    assert store.list_tables("sales") == ["orders"]
    assert store.drop_database("sales", cascade=True) == ["orders"]
    assert store.drop_database("nope", ignore_if_not_exists=True) == []
    assert store.list_databases() == ["empty"]
    assert not store.table_exists("sales", "orders")


def test_tables(jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options()
    store = _store(opts)
    with pytest.raises(NotFound, match="database db does not exist"):
        store.register_table("db", "t")
    store.create_database("db")
    store.create_database("db2")
    store.register_table("db", "t", {"bucket": "2", "primary-key": "id"})
    store.register_table("db", "a")
    assert store.list_tables("db") == ["a", "t"] and store.table_exists("db", "t")
    assert store.table_location("db", "t") == f"{opts['warehouse']}/db.db/t"
    assert store.table_properties("db", "t") == {"bucket": "2", "primary-key": "id"}
    with pytest.raises(AlreadyExists, match="table db.t already exists"):
        store.register_table("db", "t")
    store.set_table_properties("db", "t", {"bucket": "4"})
    assert store.table_properties("db", "t") == {"bucket": "4"}

    store.rename_table("db", "t", "db2", "t2")
    assert store.list_tables("db") == ["a"] and store.list_tables("db2") == ["t2"]
    assert store.table_properties("db2", "t2") == {"bucket": "4"}  # properties move along
    with pytest.raises(NotFound, match="table db.t does not exist"):
        store.rename_table("db", "t", "db", "x")
    with pytest.raises(AlreadyExists, match="table db.a already exists"):
        store.rename_table("db2", "t2", "db", "a")
    with pytest.raises(NotFound, match="database db3 does not exist"):
        store.rename_table("db2", "t2", "db3", "t2")

    assert store.unregister_table("db2", "t2") and not store.unregister_table("db2", "t2")
    assert store.list_tables("db2") == []
    assert store._run("props", lambda c: c.query("SELECT * FROM paimon_table_properties WHERE table_name = 't2'")) == []


def test_sync_all_properties_false_writes_none(jdbc_options: Callable[..., dict[str, str]]) -> None:
    store = _store(jdbc_options({"sync-all-properties": "false"}))
    store.create_database("db")
    store.register_table("db", "t", {"bucket": "2"})
    store.set_table_properties("db", "t", {"bucket": "3"})
    assert store.table_properties("db", "t") == {}


def test_catalog_key_scopes_every_query(jdbc_options: Callable[..., dict[str, str]]) -> None:
    a, b = _store(jdbc_options()), _store(jdbc_options({"catalog-key": "other"}))
    a.create_database("db")
    a.register_table("db", "t")
    assert b.list_databases() == [] and not b.database_exists("db") and not b.table_exists("db", "t")
    b.create_database("db")
    b.register_table("db", "t")  # same names, other catalog: no clash
    assert b.drop_database("db", cascade=True) == ["t"]
    assert a.list_tables("db") == ["t"]
    assert a.lock("db", "t").lock_id == "jdbc.db.t" and b.lock("db", "t").lock_id == "other.db.t"


@pytest.mark.parametrize(("kind", "name", "text"), [
    ("database", "Sales", "upper case"), ("table", "Orders", "upper case"), ("database", "sys", "system database"),
    ("table", "a/b", "path separator"), ("table", "t$x", "contains '\\$'"),
])
def test_names_java_would_refuse(tmp_path: Path, kind: str, name: str, text: str) -> None:
    store = _store({"uri": f"jdbc:sqlite:{tmp_path}/c.db", "warehouse": str(tmp_path)})
    store.create_database("db")
    with pytest.raises(InvalidInput, match=text):
        store.create_database(name) if kind == "database" else store.register_table("db", name)
    assert store.list_databases() == ["db"] and store.list_tables("db") == []


def test_table_properties_of_is_javas_collect_table_properties() -> None:
    schema = TableSchema.from_json(json.dumps({
        "version": 3, "id": 0, "fields": [{"id": 0, "name": "id", "type": "INT NOT NULL"},
                                          {"id": 1, "name": "dt", "type": "STRING NOT NULL"}],
        "highestFieldId": 1, "partitionKeys": ["dt"], "primaryKeys": ["id", "dt"],
        "options": {"bucket": "2"}, "timeMillis": 0}), "schema-0")
    assert table_properties_of(schema) == {"bucket": "2", "primary-key": "id,dt", "partition": "dt", "bucket-key": "id"}


# ------------------------------------------------------------------------------- the lock


def _holder(opts: dict[str, str], hold: float, db: str = "db", table: str = "t") -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-m", "tests.catalogs.lock_holder", json.dumps(opts), db, table, str(hold)],
                            cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("held "), (line, proc.stderr.read() if proc.stderr else "")
    return proc


def test_lock_row_is_javas(jdbc_options: Callable[..., dict[str, str]]) -> None:
    store = _store(jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "90 s"}))
    lock = store.lock("db", "t")
    assert lock.lock_id == lock_id("jdbc", "db", "t") == "jdbc.db.t"
    assert store.lock("db", "t", branch="b1").lock_id == "jdbc.db.t$branch_b1"  # Java's object name
    seen = lock.run_with_lock(store.lock_holders)
    assert [(i, e) for i, _, e in seen] == [("jdbc.db.t", 90)]  # expire_time_seconds = timeout / 1000
    assert store.lock_holders() == []


def test_two_processes_exclude_each_other(jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "30 s", "lock-check-max-sleep": "100 ms"})
    holder = _holder(opts, hold=1.5)
    store = _store(opts)
    start = time.time()
    got = store.lock("db", "t").run_with_lock(time.time)
    out, err = holder.communicate(timeout=30)
    released = float(out.split()[1])
    assert holder.returncode == 0, err
    assert got >= released > start  # we waited for the other process's release
    assert store.lock_holders() == []


def test_busy_lock_times_out_as_a_conflict(jdbc_options: Callable[..., dict[str, str]]) -> None:
    opts = jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "30 s"})
    holder = _holder(opts, hold=30)
    try:
        mine = _store(jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "700 ms",
                                    "lock-check-max-sleep": "200 ms"}))
        ran = []
        start = time.monotonic()
        with pytest.raises(CommitConflict, match=r"lock jdbc.db.t in JDBC catalog .* not acquired within") as info:
            mine.lock("db", "t").run_with_lock(lambda: ran.append(1))
        assert 0.7 <= time.monotonic() - start < 5 and ran == [] and info.value.exit_code == 5
        assert "\n" not in str(info.value) and "another writer holds it" in str(info.value)
    finally:
        holder.kill()
        holder.wait()


def test_a_locked_sqlite_file_times_out_naming_the_database_not_a_writer(tmp_path: Path) -> None:
    """Another process holding the SQLite file: each try waits jdbc.busy_timeout, the lock gives
    up after lock-acquire-timeout and says the database stayed busy (no lock row is involved)."""
    db = tmp_path / "c.db"
    opts = {"uri": f"jdbc:sqlite:{db}", "warehouse": str(tmp_path), "lock.enabled": "true",
            "lock-acquire-timeout": "1 s", "lock-check-max-sleep": "200 ms", "jdbc.busy_timeout": "300"}
    store = _store(opts)
    store.lock_holders()  # the lock table exists
    other = sqlite3.connect(db, isolation_level=None)
    other.execute("BEGIN EXCLUSIVE")
    start = time.monotonic()
    with pytest.raises(CommitConflict, match=r"not acquired within .*: the catalog database stayed busy "
                                             r"\(database is locked\)$"):
        store.lock("db", "t").acquire()
    assert time.monotonic() - start < 3
    other.execute("ROLLBACK")
    store.lock("db", "t").run_with_lock(lambda: None)
    assert store.lock_holders() == []


def test_lock_is_released_when_the_work_fails(jdbc_options: Callable[..., dict[str, str]]) -> None:
    store = _store(jdbc_options({"lock.enabled": "true"}))

    def boom() -> None:
        assert [r[0] for r in store.lock_holders()] == ["jdbc.db.t"]
        raise ValueError("commit failed")

    with pytest.raises(ValueError, match="commit failed"):
        store.lock("db", "t").run_with_lock(boom)
    assert store.lock_holders() == []
    with pytest.raises(KeyboardInterrupt):
        store.lock("db", "t").run_with_lock(lambda: (_ for _ in ()).throw(KeyboardInterrupt()))
    assert store.lock_holders() == []


def test_killed_holders_lock_is_taken_over_only_after_expiry(jdbc_options: Callable[..., dict[str, str]]) -> None:
    """The holder's row says expire_time_seconds=2 (its lock-acquire-timeout); after a SIGKILL
    nobody deletes it: a waiter gets the lock only once the database's clock says it expired."""
    holder = _holder(jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "2 s"}), hold=60)
    held_at = time.time()
    os.kill(holder.pid, signal.SIGKILL)
    holder.wait()
    impatient = _store(jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "500 ms",
                                     "lock-check-max-sleep": "100 ms"}))
    with pytest.raises(CommitConflict):
        impatient.lock("db", "t").acquire()
    waiter = _store(jdbc_options({"lock.enabled": "true", "lock-acquire-timeout": "20 s",
                                  "lock-check-max-sleep": "200 ms"}))
    got = waiter.lock("db", "t").run_with_lock(time.time)
    assert got - held_at >= 2.0  # not before the row expired ...
    assert got - held_at < 10  # ... but soon after
    assert waiter.lock_holders() == []


def test_threads_of_one_process_take_turns_and_reentry_fails_fast(tmp_path: Path) -> None:
    opts = {"uri": f"jdbc:sqlite:{tmp_path}/c.db", "warehouse": str(tmp_path), "lock.enabled": "true",
            "lock-acquire-timeout": "20 s"}
    inside: list[int] = []
    overlap: list[bool] = []

    def work() -> None:
        store = _store(opts)

        def critical() -> None:
            overlap.append(bool(inside))
            inside.append(1)
            time.sleep(0.2)
            inside.pop()

        store.lock("db", "t").run_with_lock(critical)

    threads = [threading.Thread(target=work) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert overlap == [False, False, False]
    store = _store(opts)
    lock = store.lock("db", "t")
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="not reentrant"):
        lock.run_with_lock(lambda: store.lock("db", "t").acquire())
    assert time.monotonic() - start < 2 and store.lock_holders() == []


def test_mysql_utf8mb4_database_is_refused_with_the_fix(mysql_server, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Java's catalog tables exceed InnoDB's key limit under utf8mb4 (Java fails the same way):
    the one-line error says which character set works, and nothing is created."""
    from .mysql_server import PASSWORD, USER

    name = f"wide_{os.getpid()}"
    conn = mysql_server.connect()
    with conn.cursor() as cur:
        cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4")
        cur.execute(f"GRANT ALL ON `{name}`.* TO '{USER}'@'127.0.0.1'")
    conn.close()
    store = _store({"metastore": "jdbc", "uri": mysql_server.jdbc_uri(name), "jdbc.user": USER,
                    "jdbc.password": PASSWORD, "warehouse": str(tmp_path / "wh")})
    with pytest.raises(CatalogUnavailable, match="CHARACTER SET utf8mb3 or latin1") as err:
        store.list_databases()
    assert "\n" not in str(err.value) and PASSWORD not in str(err.value)


def test_cli_round_trip_on_mysql(mysql_database: str, tmp_path: Path) -> None:
    """create, write, compact, rename, read and drop through a MySQL catalog with the lock on."""
    from typer.testing import CliRunner

    from paimon_cli.app import app

    from .mysql_server import PASSWORD, USER

    opts = ["metastore=jdbc", f"uri={mysql_database}", f"jdbc.user={USER}", f"jdbc.password={PASSWORD}",
            f"warehouse={tmp_path / 'wh'}", "lock.enabled=true"]
    catalog = [x for o in opts for x in ("--catalog-option", o)]
    runner = CliRunner()

    def cli(*args: str) -> str:
        res = runner.invoke(app, [*args, *catalog])
        assert res.exit_code == 0, res.output
        return res.output

    cli("create", "db.t", "--schema", "id BIGINT NOT NULL, name STRING", "--primary-key", "id", "--option", "bucket=2")
    src = tmp_path / "rows.csv"
    for rows in ("id,name\n1,a\n2,b\n", "id,name\n2,B\n3,c\n"):
        src.write_text(rows)
        cli("write", "db.t", str(src))
    cli("compact", "db.t", "--full")
    cli("rename", "db.t", "db.t2")
    rows = [json.loads(line) for line in cli("read", "db.t2", "-o", "jsonl").splitlines()]
    assert rows == [{"id": 1, "name": "a"}, {"id": 2, "name": "B"}, {"id": 3, "name": "c"}]
    assert "t2" in cli("list", "db") and PASSWORD not in cli("inspect", "catalog-options")
    cli("drop", "db.t2", "--yes")
    assert "t2" not in cli("list", "db")
