"""The tables of Java Paimon's JDBC catalog, read and written the way Java's ``JdbcCatalog`` does.

A JDBC catalog keeps only names in a database; the tables themselves stay on storage at
``<warehouse>/<db>.db/<table>``, whatever the database's ``location`` property says. Every
row is keyed by ``catalog-key`` (default ``jdbc``), so several catalogs can share one database.

The tables (Java 2.x; 0.9 has the first two and the lock table, pypaimon 2.1 the first three)::

    paimon_tables              (catalog_key, database_name, table_name)       one row per table
    paimon_database_properties (catalog_key, database_name, property_key, property_value)
                               rows exists=true, location=<warehouse>/<db>.db, user properties
    paimon_table_properties    (catalog_key, database_name, table_name, property_key, property_value)
                               the table's options plus primary-key / partition / bucket-key
                               (``sync-all-properties``, default true; Java 1.4+, pypaimon 2.1)
    paimon_views               (catalog_key, database_name, view_name, view_schema)   Java 2.0+
    paimon_distributed_locks   (lock_id, acquired_at, expire_time_seconds)     with lock.enabled

The commit lock (:class:`JdbcLock`) is Java's ``JdbcCatalogLock`` row for row, so our commits and
Java's exclude each other: ``lock_id = <catalog-key>.<db>.<object>``; acquiring deletes the row
if it has expired (by the database's clock), then INSERTs it (a primary-key clash = busy,
retried with doubling sleeps capped by ``lock-check-max-sleep`` until ``lock-acquire-timeout``);
releasing DELETEs it. ``expire_time_seconds`` is ``lock-acquire-timeout`` in whole seconds.

Drivers: SQLite through the standard library, PostgreSQL through psycopg 3 (extra ``postgres``),
MySQL/MariaDB through PyMySQL (extra ``mysql``). ``jdbc.*`` options are the Java driver's
connection properties; the ones with a meaning here are translated, known tuning-only ones are
ignored, anything else is refused rather than silently dropped.
"""

from __future__ import annotations

import logging
import re
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import parse_qsl, unquote

from ..errors import (
    AlreadyExists,
    CatalogUnavailable,
    InvalidInput,
    LockNotAcquired,
    NotFound,
    NotYetSupported,
    PaimonError,
    UnsafeRefused,
)
from ..io import fileio
from ..schema.table_schema import TableSchema
from ..table.identifiers import is_system_database, validate_name
from ..utils.durations import parse_duration_millis

log = logging.getLogger(__name__)
T = TypeVar("T")

PROPERTY_PREFIX = "jdbc."
DEFAULT_CATALOG_KEY = "jdbc"
DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS = 8 * 60 * 1000  # Java CatalogOptions.LOCK_ACQUIRE_TIMEOUT
DEFAULT_LOCK_CHECK_MAX_SLEEP_MS = 8 * 1000  # Java CatalogOptions.LOCK_CHECK_MAX_SLEEP
DEFAULT_LOCK_KEY_MAX_LENGTH = 255  # Java JdbcCatalogOptions.LOCK_KEY_MAX_LENGTH
FIRST_LOCK_SLEEP_MS = 50  # Java JdbcCatalogLock: 50 ms, doubled before every retry
DEFAULT_CONNECT_TIMEOUT_S = 10  # PgJDBC's connectTimeout default
DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000
LOCK_HELD = "held"  # _try_acquire: the lock row exists

CATALOG_TABLE = "paimon_tables"
DATABASE_PROPERTIES_TABLE = "paimon_database_properties"
TABLE_PROPERTIES_TABLE = "paimon_table_properties"
VIEWS_TABLE = "paimon_views"
LOCKS_TABLE = "paimon_distributed_locks"
DATABASE_EXISTS_PROPERTY = "exists"
DATABASE_LOCATION_PROPERTY = "location"
DB_SUFFIX = ".db"

# Java's DDL (JdbcUtils, 2.x), created when absent. Java checks DatabaseMetaData.getTables first;
# IF NOT EXISTS does the same in one statement on all three databases.
_CREATE_TABLES = (
    f"CREATE TABLE IF NOT EXISTS {CATALOG_TABLE}(catalog_key VARCHAR(255) NOT NULL,"
    "database_name VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,"
    " PRIMARY KEY (catalog_key, database_name, table_name))",
    f"CREATE TABLE IF NOT EXISTS {DATABASE_PROPERTIES_TABLE}(catalog_key VARCHAR(255) NOT NULL,"
    "database_name VARCHAR(255) NOT NULL,property_key VARCHAR(255),property_value VARCHAR(1000),"
    "PRIMARY KEY (catalog_key, database_name, property_key))",
    f"CREATE TABLE IF NOT EXISTS {TABLE_PROPERTIES_TABLE}(catalog_key VARCHAR(255) NOT NULL,"
    "database_name VARCHAR(255) NOT NULL,table_name VARCHAR(255) NOT NULL,property_key VARCHAR(255) NOT NULL,"
    "property_value VARCHAR(1000),PRIMARY KEY (catalog_key, database_name, table_name, property_key))",
    f"CREATE TABLE IF NOT EXISTS {VIEWS_TABLE}(catalog_key VARCHAR(255) NOT NULL,"
    "database_name VARCHAR(255) NOT NULL,view_name VARCHAR(255) NOT NULL,view_schema TEXT NOT NULL,"
    " PRIMARY KEY (catalog_key, database_name, view_name))",
)
# The same for SQLite, MySQL and PostgreSQL in Java (the %s is lock-key-max-length).
_CREATE_LOCKS_TABLE = (
    f"CREATE TABLE IF NOT EXISTS {LOCKS_TABLE}(lock_id VARCHAR(%d) NOT NULL,"
    "acquired_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL,"
    "expire_time_seconds BIGINT DEFAULT 0 NOT NULL,PRIMARY KEY (lock_id))"
)
_LOCK_ACQUIRE = f"INSERT INTO {LOCKS_TABLE} (lock_id,expire_time_seconds) VALUES (?,?)"
_LOCK_RELEASE = f"DELETE FROM {LOCKS_TABLE} WHERE lock_id = ?"
# Java's per-dialect "tryReleaseTimedOutLock": the age is measured by the database's clock.
_LOCK_RELEASE_EXPIRED = {
    "sqlite": f"DELETE FROM {LOCKS_TABLE} WHERE  strftime('%s', 'now') - strftime('%s', acquired_at) >"
    " expire_time_seconds and lock_id = ?",
    "mysql": f"DELETE FROM {LOCKS_TABLE} WHERE TIMESTAMPDIFF(SECOND, acquired_at, NOW()) >expire_time_seconds"
    " and lock_id = ?",
    "postgresql": f"DELETE FROM {LOCKS_TABLE} WHERE EXTRACT(EPOCH FROM AGE(NOW(), acquired_at)) >expire_time_seconds"
    " and lock_id = ?",
}

# ------------------------------------------------------------------------------- options


def _java_bool(options: Mapping[str, str], key: str, default: bool) -> bool:
    raw = options.get(key)
    if raw is None:
        return default
    text = str(raw).strip().lower()
    if text not in ("true", "false"):
        raise InvalidInput(f"catalog option {key}={raw!r}: expected true or false")
    return text == "true"


def _positive_int(options: Mapping[str, str], key: str, default: int) -> int:
    raw = options.get(key)
    if raw is None:
        return default
    try:
        value = int(str(raw).strip())
    except ValueError:
        value = 0
    if value <= 0:
        raise InvalidInput(f"catalog option {key}={raw!r}: expected a positive whole number")
    return value


@dataclass(frozen=True)
class JdbcSettings:
    """What the JDBC catalog needs from the catalog options (Java's keys and defaults)."""

    uri: str
    warehouse: str
    catalog_key: str = DEFAULT_CATALOG_KEY
    properties: Mapping[str, str] = field(default_factory=dict)  # jdbc.* without the prefix
    lock_enabled: bool = False
    lock_acquire_timeout_ms: int = DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS
    lock_check_max_sleep_ms: int = DEFAULT_LOCK_CHECK_MAX_SLEEP_MS
    lock_key_max_length: int = DEFAULT_LOCK_KEY_MAX_LENGTH
    sync_table_properties: bool = True

    @classmethod
    def from_options(cls, options: Mapping[str, str], lock_enabled_default: bool = False) -> JdbcSettings:
        """Read ``uri``, ``warehouse``, ``catalog-key``, ``jdbc.*``, ``lock.enabled``,
        ``lock-acquire-timeout``, ``lock-check-max-sleep``, ``lock-key-max-length`` and
        ``sync-all-properties``. Java's ``lock.enabled`` default is "the warehouse is on an
        object store": the caller knows its file IO and passes ``lock_enabled_default``."""
        uri = (options.get("uri") or "").strip()
        if not uri:
            raise InvalidInput("the JDBC catalog needs the catalog option uri (e.g. jdbc:sqlite:/path/catalog.db)")
        warehouse = (options.get("warehouse") or "").strip()
        if not warehouse:
            raise InvalidInput("the JDBC catalog needs the catalog option warehouse (where the tables live)")
        catalog_key = options.get("catalog-key", DEFAULT_CATALOG_KEY)
        if not catalog_key or not catalog_key.strip():
            raise InvalidInput("catalog option catalog-key is empty")
        timeout = options.get("lock-acquire-timeout")
        max_sleep = options.get("lock-check-max-sleep")
        settings = cls(
            uri=uri,
            warehouse=warehouse,
            catalog_key=catalog_key,
            properties={k[len(PROPERTY_PREFIX):]: str(v) for k, v in options.items() if k.startswith(PROPERTY_PREFIX)},
            lock_enabled=_java_bool(options, "lock.enabled", lock_enabled_default),
            lock_acquire_timeout_ms=(DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS if timeout is None
                                     else parse_duration_millis(timeout, "lock-acquire-timeout")),
            lock_check_max_sleep_ms=(DEFAULT_LOCK_CHECK_MAX_SLEEP_MS if max_sleep is None
                                     else parse_duration_millis(max_sleep, "lock-check-max-sleep")),
            lock_key_max_length=_positive_int(options, "lock-key-max-length", DEFAULT_LOCK_KEY_MAX_LENGTH),
            sync_table_properties=_java_bool(options, "sync-all-properties", True),
        )
        protocol_of(uri)  # refuse a malformed uri before anything connects
        return settings

    @property
    def expire_time_seconds(self) -> int:
        """What Java writes into the lock row: the acquire timeout in whole seconds."""
        return self.lock_acquire_timeout_ms // 1000


_PROTOCOL = re.compile(r"jdbc:([^:]+):(.*)", re.DOTALL)
_PROTOCOLS = {"sqlite": "sqlite", "postgresql": "postgresql", "mysql": "mysql", "mariadb": "mysql"}


def protocol_of(uri: str) -> str:
    """The dialect of a JDBC url: ``sqlite``, ``postgresql`` or ``mysql`` (also for mariadb)."""
    m = _PROTOCOL.fullmatch(uri)
    if not m:
        raise InvalidInput(f"catalog option uri={redact(uri)!r} is not a JDBC url (jdbc:<driver>:...)")
    proto = m.group(1).lower()
    if proto not in _PROTOCOLS:
        raise NotYetSupported(
            f"JDBC catalog on {proto!r} is not supported (sqlite, postgresql, mysql and mariadb are)")
    return _PROTOCOLS[proto]


_SECRET_PARAM = re.compile(r"(?i)(password|passwd|pwd)=[^&;]*")
_USERINFO = re.compile(r"//([^/@:]*):[^/@]*@")


def redact(uri: str) -> str:
    """The url with any password in it replaced by ``***`` (for messages)."""
    return _USERINFO.sub(r"//\1:***@", _SECRET_PARAM.sub(r"\1=***", uri))


# ------------------------------------------------------------------------------- connections


@dataclass
class _Target:
    """Connection arguments for a driver, from the JDBC url and ``jdbc.*`` properties."""

    kwargs: dict[str, Any]
    pragmas: list[tuple[str, str]] = field(default_factory=list)


def _url_params(rest: str) -> tuple[str, dict[str, str]]:
    base, _, query = rest.partition("?")
    return base, {k: v for k, v in parse_qsl(query, keep_blank_values=True)}


_SQLITE_PRAGMAS = {"journal_mode": re.compile(r"(?i)delete|truncate|persist|memory|wal|off"),
                   "synchronous": re.compile(r"(?i)off|normal|full|extra|[0-3]")}
_SQLITE_IGNORED = {"user", "password"}  # xerial ignores them too


def _sqlite_target(rest: str, props: Mapping[str, str]) -> _Target:
    """xerial's ``jdbc:sqlite:<file>[?pragma=value...]``; ``file:`` URIs go to sqlite as URIs."""
    params: dict[str, str] = {}
    if rest.startswith("file:"):
        path, as_uri = rest, True
    else:
        path, params = _url_params(rest)
        as_uri = False
    merged = {**props, **params}
    busy_ms = DEFAULT_SQLITE_BUSY_TIMEOUT_MS
    pragmas: list[tuple[str, str]] = []
    for key, value in merged.items():
        if key in _SQLITE_IGNORED:
            continue
        if key == "busy_timeout":
            busy_ms = _positive_int({f"jdbc.{key}": value}, f"jdbc.{key}", busy_ms)
        elif key in _SQLITE_PRAGMAS:
            if not _SQLITE_PRAGMAS[key].fullmatch(value.strip()):
                raise InvalidInput(f"jdbc.{key}={value!r} is not a SQLite {key}")
            pragmas.append((key, value.strip().upper()))
        else:
            raise InvalidInput(f"jdbc.{key} is not a connection property paimon-cli understands for SQLite "
                               f"(understood: busy_timeout, {', '.join(sorted(_SQLITE_PRAGMAS))})")
    if not path:
        raise InvalidInput("catalog option uri=jdbc:sqlite: names no database file")
    return _Target({"database": path, "uri": as_uri, "timeout": busy_ms / 1000.0}, pragmas)


def _host_list(hostspec: str, default_port: int) -> tuple[list[str], list[str]]:
    hosts: list[str] = []
    ports: list[str] = []
    for part in hostspec.split(","):
        m = re.fullmatch(r"\[([^\]]+)\](?::(\d*))?|([^:]*)(?::(\d*))?", part.strip())
        if not m:
            raise InvalidInput(f"JDBC url host {part!r} is not host[:port]")
        host = m.group(1) or m.group(3) or "localhost"
        port = m.group(2) or m.group(4) or str(default_port)
        hosts.append(unquote(host))
        ports.append(port)
    return hosts, ports


def _server_url(rest: str, default_port: int) -> tuple[list[str], list[str], str, dict[str, str]]:
    """``//host[:port][,host2[:port2]]/database?k=v`` or ``database`` (hosts, ports, db, url params)."""
    base, params = _url_params(rest)
    if base.startswith("//"):
        hostspec, _, database = base[2:].partition("/")
    else:
        hostspec, database = "", base.lstrip("/")
    hosts, ports = _host_list(hostspec, default_port)
    return hosts, ports, unquote(database), params


# PgJDBC property -> libpq keyword; properties that only tune the Java driver are ignored.
_PG_RENAMED = {"user": "user", "password": "password", "sslmode": "sslmode", "sslrootcert": "sslrootcert",
               "sslcert": "sslcert", "sslkey": "sslkey", "connectTimeout": "connect_timeout",
               "ApplicationName": "application_name", "options": "options"}
_PG_IGNORED = {"tcpKeepAlive", "socketTimeout", "loginTimeout", "prepareThreshold", "reWriteBatchedInserts",
               "binaryTransfer", "defaultRowFetchSize", "stringtype", "assumeMinServerVersion"}


def _postgres_target(rest: str, props: Mapping[str, str]) -> _Target:
    hosts, ports, database, params = _server_url(rest, 5432)
    merged = {**props, **params}  # PgJDBC: url parameters win over properties
    kwargs: dict[str, Any] = {"host": ",".join(hosts), "port": ",".join(ports),
                              "connect_timeout": DEFAULT_CONNECT_TIMEOUT_S}
    if database:
        kwargs["dbname"] = database
    for key, value in merged.items():
        if key in _PG_RENAMED:
            kwargs[_PG_RENAMED[key]] = value
        elif key == "ssl":
            if value.strip().lower() == "true":
                kwargs.setdefault("sslmode", "verify-full")  # PgJDBC: ssl=true means verify-full
        elif key == "currentSchema":
            kwargs["options"] = f"-c search_path={value}"
        elif key not in _PG_IGNORED:
            raise InvalidInput(f"jdbc.{key} is not a connection property paimon-cli understands for PostgreSQL "
                               f"(understood: {', '.join(sorted([*_PG_RENAMED, 'ssl', 'currentSchema']))})")
    if "sslmode" in merged:
        kwargs["sslmode"] = merged["sslmode"]
    return _Target(kwargs)


_MYSQL_IGNORED = {"serverTimezone", "allowPublicKeyRetrieval", "characterEncoding", "useUnicode", "autoReconnect",
                  "rewriteBatchedStatements", "socketTimeout", "useServerPrepStmts", "cachePrepStmts"}


def _mysql_target(rest: str, props: Mapping[str, str]) -> _Target:
    hosts, ports, database, params = _server_url(rest, 3306)
    if len(hosts) != 1:
        raise NotYetSupported("a JDBC url with several MySQL hosts is not supported")
    merged = {**props, **params}
    kwargs: dict[str, Any] = {"host": hosts[0], "port": int(ports[0]), "database": database or None,
                              "connect_timeout": DEFAULT_CONNECT_TIMEOUT_S}
    for key, value in merged.items():
        if key in ("user", "password"):
            kwargs[key] = value
        elif key == "connectTimeout":  # Connector/J: milliseconds
            kwargs["connect_timeout"] = max(1, _positive_int({f"jdbc.{key}": value}, f"jdbc.{key}", 1000) // 1000)
        elif (key, value.strip().lower()) in (("useSSL", "false"), ("sslMode", "disabled")):
            kwargs["ssl_disabled"] = True
        elif key in ("useSSL", "sslMode", "requireSSL"):
            raise NotYetSupported(f"jdbc.{key}={value}: TLS to MySQL is not supported by paimon-cli yet")
        elif key not in _MYSQL_IGNORED:
            raise InvalidInput(f"jdbc.{key} is not a connection property paimon-cli understands for MySQL "
                               "(understood: user, password, connectTimeout, useSSL=false, sslMode=DISABLED)")
    return _Target(kwargs)


class _Connection:
    """One DB-API connection in autocommit mode; :meth:`transaction` groups statements."""

    protocol = ""
    placeholder = "?"
    begin = "BEGIN"

    def __init__(self, raw: Any) -> None:
        self.raw = raw

    def _sql(self, sql: str) -> str:
        return sql if self.placeholder == "?" else sql.replace("?", self.placeholder)

    def execute(self, sql: str, args: tuple[Any, ...] = ()) -> int:
        cur = self.raw.cursor()
        try:
            cur.execute(self._sql(sql), args)
            return int(cur.rowcount)
        finally:
            cur.close()

    def query(self, sql: str, args: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        cur = self.raw.cursor()
        try:
            cur.execute(self._sql(sql), args)
            return [tuple(r) for r in cur.fetchall()]
        finally:
            cur.close()

    @contextmanager
    def transaction(self) -> Iterator[None]:
        self.execute(self.begin)
        try:
            yield
            self.execute("COMMIT")
        except BaseException:
            # also after a failed COMMIT (SQLite: busy), which leaves the transaction open
            try:
                self.execute("ROLLBACK")
            except Exception:  # noqa: BLE001 - the first error is the one to report
                pass
            raise

    def is_unique_violation(self, err: BaseException) -> bool:
        raise NotImplementedError

    def is_busy(self, err: BaseException) -> bool:
        """A key clash or a lock wait that gave up: the statement lost a race."""
        raise NotImplementedError

    def close(self) -> None:
        try:
            self.raw.close()
        except Exception:  # noqa: BLE001 - closing a broken connection
            pass


class _SqliteConnection(_Connection):
    protocol = "sqlite"
    # IMMEDIATE takes the write lock up front: a read-then-write never needs the upgrade that
    # SQLite refuses with SQLITE_BUSY while another writer waits.
    begin = "BEGIN IMMEDIATE"

    def is_unique_violation(self, err: BaseException) -> bool:
        return isinstance(err, sqlite3.IntegrityError) and "UNIQUE" in str(err).upper()

    def is_busy(self, err: BaseException) -> bool:
        if self.is_unique_violation(err):
            return True
        return isinstance(err, sqlite3.OperationalError) and ("locked" in str(err) or "busy" in str(err))


class _PostgresConnection(_Connection):
    protocol = "postgresql"
    placeholder = "%s"

    @contextmanager
    def transaction(self) -> Iterator[None]:
        with self.raw.transaction():
            yield

    def is_unique_violation(self, err: BaseException) -> bool:
        return getattr(err, "sqlstate", None) == "23505"

    def is_busy(self, err: BaseException) -> bool:
        # unique violation, serialization failure, deadlock, lock not available
        return getattr(err, "sqlstate", None) in ("23505", "40001", "40P01", "55P03")


class _MysqlConnection(_Connection):
    protocol = "mysql"
    placeholder = "%s"
    begin = "START TRANSACTION"

    @staticmethod
    def _code(err: BaseException) -> object:
        args: tuple[object, ...] = getattr(err, "args", ())
        return args[0] if args else None

    def is_unique_violation(self, err: BaseException) -> bool:
        return self._code(err) == 1062

    def is_busy(self, err: BaseException) -> bool:
        # 1062 duplicate key, 1205 lock wait timeout, 1213 deadlock
        return self._code(err) in (1062, 1205, 1213)


def _missing_driver(extra: str, module: str) -> PaimonError:
    return PaimonError(f"the JDBC catalog on this database needs {module}: pip install 'paimon-cli[{extra}]'")


def _driver_errors(protocol: str) -> tuple[type[BaseException], ...]:
    if protocol == "sqlite":
        return (sqlite3.Error,)
    if protocol == "postgresql":
        try:
            import psycopg
        except ImportError:
            raise _missing_driver("postgres", "psycopg 3") from None
        return (psycopg.Error,)
    try:
        import pymysql
    except ImportError:
        raise _missing_driver("mysql", "PyMySQL") from None
    return (pymysql.Error,)


def _connect(settings: JdbcSettings) -> _Connection:
    protocol = protocol_of(settings.uri)
    rest = _PROTOCOL.fullmatch(settings.uri).group(2)  # type: ignore[union-attr]
    if protocol == "sqlite":
        target = _sqlite_target(rest, settings.properties)
        raw = sqlite3.connect(target.kwargs["database"], uri=target.kwargs["uri"],
                              timeout=target.kwargs["timeout"], isolation_level=None, check_same_thread=False)
        for name, value in target.pragmas:
            raw.execute(f"PRAGMA {name}={value}")
        return _SqliteConnection(raw)
    if protocol == "postgresql":
        target = _postgres_target(rest, settings.properties)
        _driver_errors(protocol)
        import psycopg

        return _PostgresConnection(psycopg.connect(autocommit=True, **target.kwargs))
    target = _mysql_target(rest, settings.properties)
    _driver_errors(protocol)
    import pymysql

    return _MysqlConnection(pymysql.connect(autocommit=True, **target.kwargs))


def _first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0].strip()


# ------------------------------------------------------------------------------- the store


def table_properties_of(schema: TableSchema) -> dict[str, str]:
    """What Java 2.x writes into ``paimon_table_properties`` for a schema: its options plus
    ``primary-key``, ``partition`` and ``bucket-key`` (comma-joined, when not empty)."""
    props = dict(schema.options)
    for key, names in (("primary-key", schema.primary_keys), ("partition", schema.partition_keys),
                       ("bucket-key", schema.bucket_keys)):
        if names:
            props[key] = ",".join(names)
    return props


def _check_new_name(kind: str, name: str) -> None:
    validate_name(kind, name)
    if name != name.lower():
        raise InvalidInput(f"{kind} name {name!r} has upper case: Java's JDBC catalog is case-insensitive and "
                           "refuses upper-case names")
    if kind == "database" and is_system_database(name):
        raise InvalidInput(f"database name {name!r} is Paimon's system database")


class JdbcCatalogStore:
    """Names of databases and tables (and their properties) in a JDBC catalog database.

    One connection, opened on first use and kept until :meth:`close`. Every method is one
    transaction; driver failures become :class:`PaimonError` with one line naming the catalog.
    The store never touches table files: creating, dropping and renaming the directories (and
    in which order) is the caller's, see the facts in each method's doc.
    """

    def __init__(self, settings: JdbcSettings) -> None:
        self.settings = settings
        self.protocol = protocol_of(settings.uri)
        self._conn: _Connection | None = None
        self._conn_guard = threading.RLock()
        self._initialized = False
        self._locks_table_ready = False
        self._has_views: bool | None = None

    @classmethod
    def from_options(cls, options: Mapping[str, str], lock_enabled_default: bool = False) -> JdbcCatalogStore:
        return cls(JdbcSettings.from_options(options, lock_enabled_default))

    @property
    def catalog_key(self) -> str:
        return self.settings.catalog_key

    def __enter__(self) -> JdbcCatalogStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        with self._conn_guard:
            if self._conn is not None:
                self._conn.close()
                self._conn = None

    # -- plumbing -----------------------------------------------------------------------

    def _describe(self) -> str:
        return f"JDBC catalog {redact(self.settings.uri)}"

    def _run(self, what: str, fn: Callable[[_Connection], T]) -> T:
        """Run ``fn`` on the connection (opened and initialised on first use); driver errors
        become one-line PaimonErrors, and a failed connection is dropped so the next call
        reconnects."""
        with self._conn_guard:
            errors = _driver_errors(self.protocol)
            try:
                if self._conn is None:
                    self._conn = _connect(self.settings)
                conn = self._conn
                if not self._initialized:
                    self._create_tables(conn)
                    self._initialized = True
                return fn(conn)
            except errors as err:
                line = _first_line(err)
                if self._conn is None:
                    raise CatalogUnavailable(f"{self._describe()} is unreachable: {line}") from err
                if not self._alive(self._conn):
                    self._conn.close()
                    self._conn = None
                    raise CatalogUnavailable(f"{self._describe()}: {what} failed, connection lost: {line}") from err
                if self.protocol == "sqlite" and "locked" in line:
                    line += (" (another connection holds the SQLite file; Java Paimon up to 1.4 keeps a read lock"
                             " for as long as its JdbcCatalog is open on an existing catalog)")
                if self.protocol == "mysql" and "key was too long" in line:
                    line += (" (Java's catalog tables have primary keys of up to four VARCHAR(255) columns, over"
                             " InnoDB's 3072-byte key limit under utf8mb4, for Java's JdbcCatalog too: create the"
                             " catalog database with CHARACTER SET utf8mb3 or latin1)")
                raise CatalogUnavailable(f"{self._describe()}: {what} failed: {line}") from err

    def _alive(self, conn: _Connection) -> bool:
        try:
            conn.query("SELECT 1")
            return True
        except Exception:  # noqa: BLE001 - any failure means: reconnect next time
            return False

    def _create_tables(self, conn: _Connection) -> None:
        for ddl in _CREATE_TABLES:
            self._create_if_absent(conn, ddl)
        if self.settings.lock_enabled:
            self._create_locks_table(conn)

    def _create_if_absent(self, conn: _Connection, ddl: str) -> None:
        try:
            conn.execute(ddl)
        except _driver_errors(self.protocol) as err:
            # PostgreSQL's IF NOT EXISTS can still clash with a concurrent creator
            if not conn.is_unique_violation(err) and "already exists" not in str(err):
                raise

    def _create_locks_table(self, conn: _Connection) -> None:
        if not self._locks_table_ready:
            self._create_if_absent(conn, _CREATE_LOCKS_TABLE % self.settings.lock_key_max_length)
            self._locks_table_ready = True

    def _exists(self, conn: _Connection, sql: str, *args: str) -> bool:
        return bool(conn.query(sql + " LIMIT 1", args))

    # -- paths --------------------------------------------------------------------------

    def database_location(self, database: str) -> str:
        """``<warehouse>/<db>.db``: what Java writes as the ``location`` property."""
        return fileio.join(self.settings.warehouse, database + DB_SUFFIX)

    def table_location(self, database: str, table: str) -> str:
        """``<warehouse>/<db>.db/<table>``: where Java's JdbcCatalog keeps a table (the
        database's ``location`` property plays no part)."""
        return fileio.join(self.database_location(database), table)

    # -- databases ----------------------------------------------------------------------

    def _database_exists(self, conn: _Connection, database: str) -> bool:
        key = self.catalog_key
        return (
            self._exists(conn, f"SELECT database_name FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ?",
                         key, database)
            or self._exists(conn, f"SELECT database_name FROM {DATABASE_PROPERTIES_TABLE} WHERE catalog_key = ? "
                            "AND database_name = ?", key, database)
            or self._exists(conn, f"SELECT database_name FROM {VIEWS_TABLE} WHERE catalog_key = ? "
                            "AND database_name = ?", key, database)
        )

    def list_databases(self) -> list[str]:
        """Every database with a table, a property row or a view (Java 2.x; 0.9 repeats names)."""
        def run(conn: _Connection) -> list[str]:
            names: set[str] = set()
            for table in (CATALOG_TABLE, DATABASE_PROPERTIES_TABLE, VIEWS_TABLE):
                names.update(r[0] for r in conn.query(
                    f"SELECT DISTINCT database_name FROM {table} WHERE catalog_key = ?", (self.catalog_key,)))
            return sorted(names)

        return self._run("list databases", run)

    def database_exists(self, database: str) -> bool:
        return self._run("look up a database", lambda c: self._database_exists(c, database))

    def _no_database(self, database: str) -> NotFound:
        return NotFound(f"database {database} does not exist in {self._describe()} (catalog-key {self.catalog_key})")

    def database_properties(self, database: str) -> dict[str, str]:
        """The database's properties without ``exists``; ``location`` is always there."""
        def run(conn: _Connection) -> dict[str, str]:
            if not self._database_exists(conn, database):
                raise self._no_database(database)
            rows = conn.query(f"SELECT property_key, property_value FROM {DATABASE_PROPERTIES_TABLE} "
                              "WHERE catalog_key = ? AND database_name = ?", (self.catalog_key, database))
            props = {k: v for k, v in rows if k is not None}
            props.pop(DATABASE_EXISTS_PROPERTY, None)
            props.setdefault(DATABASE_LOCATION_PROPERTY, self.database_location(database))
            return props

        return self._run("read database properties", run)

    def create_database(self, database: str, properties: Mapping[str, str] | None = None,
                        ignore_if_exists: bool = False) -> bool:
        """Insert the rows ``exists=true``, ``location=<warehouse>/<db>.db`` (unless given) and
        ``properties``, as Java does; True if it was created. No directory is made (Java makes
        none either: the first table's schema write does)."""
        _check_new_name("database", database)
        props = {DATABASE_EXISTS_PROPERTY: "true", **{str(k): str(v) for k, v in (properties or {}).items()}}
        if props[DATABASE_EXISTS_PROPERTY] != "true":
            raise InvalidInput(f"database property {DATABASE_EXISTS_PROPERTY!r} is the catalog's own")
        props.setdefault(DATABASE_LOCATION_PROPERTY, self.database_location(database))

        def run(conn: _Connection) -> bool:
            with conn.transaction():
                if self._database_exists(conn, database):
                    if ignore_if_exists:
                        return False
                    raise AlreadyExists(f"database {database} already exists in {self._describe()}")
                self._insert_database_properties(conn, database, props)
            return True

        return self._run("create a database", run)

    def _insert_database_properties(self, conn: _Connection, database: str, props: Mapping[str, str]) -> None:
        for k, v in props.items():
            conn.execute(f"INSERT INTO {DATABASE_PROPERTIES_TABLE} (catalog_key, database_name, property_key, "
                         "property_value) VALUES (?,?,?,?)", (self.catalog_key, database, k, v))

    def alter_database(self, database: str, set_properties: Mapping[str, str] | None = None,
                       remove_keys: tuple[str, ...] | list[str] = ()) -> None:
        """Java 2.x's alterDatabase: insert new keys, update existing ones, delete removed ones."""
        set_properties = dict(set_properties or {})
        if DATABASE_EXISTS_PROPERTY in set_properties or DATABASE_EXISTS_PROPERTY in remove_keys:
            raise InvalidInput(f"database property {DATABASE_EXISTS_PROPERTY!r} is the catalog's own")

        def run(conn: _Connection) -> None:
            with conn.transaction():
                if not self._database_exists(conn, database):
                    raise self._no_database(database)
                current = {r[0] for r in conn.query(
                    f"SELECT property_key FROM {DATABASE_PROPERTIES_TABLE} WHERE catalog_key = ? "
                    "AND database_name = ?", (self.catalog_key, database))}
                for k, v in set_properties.items():
                    if k in current:
                        conn.execute(f"UPDATE {DATABASE_PROPERTIES_TABLE} SET property_value = ? WHERE catalog_key = ?"
                                     " AND database_name = ? AND property_key = ?", (v, self.catalog_key, database, k))
                    else:
                        self._insert_database_properties(conn, database, {k: v})
                for k in remove_keys:
                    conn.execute(f"DELETE FROM {DATABASE_PROPERTIES_TABLE} WHERE catalog_key = ? AND database_name = ?"
                                 " AND property_key = ?", (self.catalog_key, database, k))

        self._run("alter a database", run)

    def drop_database(self, database: str, cascade: bool = False, ignore_if_not_exists: bool = False) -> list[str]:
        """Delete the database's rows from every catalog table (Java's dropDatabaseImpl) and
        return the tables it held, whose directories the caller deletes (Java's JdbcCatalog
        leaves them on storage; pypaimon drops each table first). Without ``cascade`` a
        database with tables or views is refused."""
        def run(conn: _Connection) -> list[str]:
            key = self.catalog_key
            with conn.transaction():
                if not self._database_exists(conn, database):
                    if ignore_if_not_exists:
                        return []
                    raise self._no_database(database)
                tables = sorted(r[0] for r in conn.query(
                    f"SELECT table_name FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ?",
                    (key, database)))
                views = conn.query(f"SELECT view_name FROM {VIEWS_TABLE} WHERE catalog_key = ? AND database_name = ?",
                                   (key, database))
                if not cascade and (tables or views):
                    raise UnsafeRefused(f"database {database} is not empty ({len(tables)} tables, {len(views)} views);"
                                        " drop it with cascade")
                for table in (CATALOG_TABLE, DATABASE_PROPERTIES_TABLE, TABLE_PROPERTIES_TABLE, VIEWS_TABLE):
                    conn.execute(f"DELETE FROM {table} WHERE catalog_key = ? AND database_name = ?", (key, database))
                return tables

        return self._run("drop a database", run)

    # -- tables -------------------------------------------------------------------------

    def _table_exists(self, conn: _Connection, database: str, table: str) -> bool:
        return self._exists(conn, f"SELECT table_name FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ?"
                            " AND table_name = ?", self.catalog_key, database, table)

    def _name_taken(self, conn: _Connection, database: str, name: str) -> str | None:
        if self._table_exists(conn, database, name):
            return "table"
        if self._exists(conn, f"SELECT view_name FROM {VIEWS_TABLE} WHERE catalog_key = ? AND database_name = ? "
                        "AND view_name = ?", self.catalog_key, database, name):
            return "view"
        return None

    def list_tables(self, database: str) -> list[str]:
        def run(conn: _Connection) -> list[str]:
            if not self._database_exists(conn, database):
                raise self._no_database(database)
            return sorted(r[0] for r in conn.query(
                f"SELECT table_name FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ?",
                (self.catalog_key, database)))

        return self._run("list tables", run)

    def table_exists(self, database: str, table: str) -> bool:
        """Whether ``paimon_tables`` has the row (Java's test; the files are not looked at)."""
        return self._run("look up a table", lambda c: self._table_exists(c, database, table))

    def register_table(self, database: str, table: str, properties: Mapping[str, str] | None = None) -> None:
        """Insert the ``paimon_tables`` row (and, with ``sync-all-properties``, the table's
        properties, see :func:`table_properties_of`). Java writes the schema files first and
        registers after; when the insert fails it deletes the table directory."""
        _check_new_name("table", table)

        def run(conn: _Connection) -> None:
            with conn.transaction():
                if not self._database_exists(conn, database):
                    raise self._no_database(database)
                taken = self._name_taken(conn, database, table)
                if taken:
                    raise AlreadyExists(f"{taken} {database}.{table} already exists in {self._describe()}")
                conn.execute(f"INSERT INTO {CATALOG_TABLE} (catalog_key, database_name, table_name) VALUES (?,?,?)",
                             (self.catalog_key, database, table))
                if self.settings.sync_table_properties and properties:
                    self._insert_table_properties(conn, database, table, properties)

        self._run_unique("register a table", run, f"table {database}.{table} already exists")

    def _run_unique(self, what: str, fn: Callable[[_Connection], T], clash: str) -> T:
        """:meth:`_run` where a unique-key clash (a concurrent creator won) is AlreadyExists."""
        try:
            return self._run(what, fn)
        except PaimonError as err:
            cause = err.__cause__
            if cause is not None and self._conn is not None and self._conn.is_unique_violation(cause):
                raise AlreadyExists(f"{clash} in {self._describe()}") from cause
            raise

    def _insert_table_properties(self, conn: _Connection, database: str, table: str,
                                 properties: Mapping[str, str]) -> None:
        for k, v in properties.items():
            conn.execute(f"INSERT INTO {TABLE_PROPERTIES_TABLE} (catalog_key, database_name, table_name, property_key,"
                         " property_value) VALUES (?,?,?,?,?)", (self.catalog_key, database, table, k, v))

    def unregister_table(self, database: str, table: str) -> bool:
        """Delete the table's rows; True if it was registered. Java deletes the row first and
        then the directory (quietly: a failed delete leaves files, never a dangling row)."""
        def run(conn: _Connection) -> bool:
            key = self.catalog_key
            with conn.transaction():
                n = conn.execute(f"DELETE FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ? "
                                 "AND table_name = ?", (key, database, table))
                conn.execute(f"DELETE FROM {TABLE_PROPERTIES_TABLE} WHERE catalog_key = ? AND database_name = ? "
                             "AND table_name = ?", (key, database, table))
            return n > 0

        return self._run("drop a table", run)

    def rename_table(self, from_database: str, from_table: str, to_database: str, to_table: str) -> None:
        """Move the rows to the new name in one transaction. The directory moves with it in
        Java (rows first, then ``rename(<from>, <to>)`` when the source has schema files; a
        failed move leaves the rows renamed); pypaimon moves the directory first and moves it
        back when the rows cannot be updated, which never leaves a row without its files."""
        _check_new_name("table", to_table)

        def run(conn: _Connection) -> None:
            key = self.catalog_key
            with conn.transaction():
                if not self._table_exists(conn, from_database, from_table):
                    raise NotFound(f"table {from_database}.{from_table} does not exist in {self._describe()}")
                if not self._database_exists(conn, to_database):
                    raise self._no_database(to_database)
                taken = self._name_taken(conn, to_database, to_table)
                if taken:
                    raise AlreadyExists(f"{taken} {to_database}.{to_table} already exists in {self._describe()}")
                for table in (CATALOG_TABLE, TABLE_PROPERTIES_TABLE):
                    conn.execute(f"UPDATE {table} SET database_name = ? , table_name = ?  WHERE catalog_key = ? "
                                 "AND database_name = ? AND table_name = ?",
                                 (to_database, to_table, key, from_database, from_table))

        self._run_unique("rename a table", run, f"table {to_database}.{to_table} already exists")

    def table_properties(self, database: str, table: str) -> dict[str, str]:
        """``paimon_table_properties`` of a table (empty when nobody synced them)."""
        def run(conn: _Connection) -> dict[str, str]:
            if not self._table_exists(conn, database, table):
                raise NotFound(f"table {database}.{table} does not exist in {self._describe()}")
            return {k: v for k, v in conn.query(
                f"SELECT property_key, property_value FROM {TABLE_PROPERTIES_TABLE} WHERE catalog_key = ? "
                "AND database_name = ? AND table_name = ?", (self.catalog_key, database, table))}

        return self._run("read table properties", run)

    def set_table_properties(self, database: str, table: str, properties: Mapping[str, str]) -> None:
        """Replace a table's synced properties (Java 2.x after every schema change: delete all,
        insert :func:`table_properties_of` the new schema). Nothing with ``sync-all-properties=false``."""
        if not self.settings.sync_table_properties:
            return

        def run(conn: _Connection) -> None:
            with conn.transaction():
                if not self._table_exists(conn, database, table):
                    raise NotFound(f"table {database}.{table} does not exist in {self._describe()}")
                conn.execute(f"DELETE FROM {TABLE_PROPERTIES_TABLE} WHERE catalog_key = ? AND database_name = ? "
                             "AND table_name = ?", (self.catalog_key, database, table))
                self._insert_table_properties(conn, database, table, properties)

        self._run("write table properties", run)

    # -- the lock -----------------------------------------------------------------------

    def lock(self, database: str, table: str, branch: str | None = None) -> JdbcLock:
        """The commit lock of a table (of its branch: Java locks ``t$branch_b`` separately)."""
        obj = table if branch in (None, "", "main") else f"{table}$branch_{branch}"
        return JdbcLock(self, lock_id(self.catalog_key, database, obj))

    def _try_acquire(self, lock_id: str) -> str | None:
        """None when the lock row is ours now, else why not: ``held`` (the row exists) or the
        database's own busy error (another connection holds a lock on its tables)."""
        def run(conn: _Connection) -> str | None:
            self._create_locks_table(conn)
            try:
                conn.execute(_LOCK_RELEASE_EXPIRED[self.protocol], (lock_id,))
                inserted = conn.execute(_LOCK_ACQUIRE, (lock_id, self.settings.expire_time_seconds)) > 0
                return None if inserted else LOCK_HELD
            except _driver_errors(self.protocol) as err:
                if conn.is_unique_violation(err):
                    return LOCK_HELD
                if conn.is_busy(err):
                    return _first_line(err)
                raise

        return self._run(f"acquire lock {lock_id}", run)

    def _release(self, lock_id: str) -> bool:
        return self._run(f"release lock {lock_id}", lambda c: c.execute(_LOCK_RELEASE, (lock_id,)) > 0)

    def lock_holders(self) -> list[tuple[str, str, int]]:
        """Rows of ``paimon_distributed_locks``: (lock_id, acquired_at as the database prints
        it, expire_time_seconds); for diagnostics and tests."""
        def run(conn: _Connection) -> list[tuple[str, str, int]]:
            self._create_locks_table(conn)
            return [(str(a), str(b), int(c)) for a, b, c in conn.query(
                f"SELECT lock_id, acquired_at, expire_time_seconds FROM {LOCKS_TABLE} ORDER BY lock_id")]

        return self._run("list locks", run)


def lock_id(catalog_key: str, database: str, object_name: str) -> str:
    """Java's ``String.format("%s.%s.%s", catalogKey, database, table)``."""
    return f"{catalog_key}.{database}.{object_name}"


# Locks this process holds, so that a second thread waits here rather than in the database and
# a re-entry of the same thread (which Java's lock does not support either) fails at once.
_LOCAL_GUARD = threading.Lock()
_LOCAL: dict[tuple[str, str], tuple[threading.Lock, list[int | None]]] = {}


class JdbcLock:
    """Java's ``JdbcCatalogLock`` for one table: :meth:`run_with_lock` is the CommitLock."""

    def __init__(self, store: JdbcCatalogStore, lock_id: str) -> None:
        self.store = store
        self.lock_id = lock_id
        settings = store.settings
        if store.protocol != "sqlite" and len(lock_id) > settings.lock_key_max_length:
            # Java would retry the failing INSERT until the timeout; say why at once instead
            raise InvalidInput(f"lock id {lock_id!r} is longer than lock-key-max-length={settings.lock_key_max_length}")
        with _LOCAL_GUARD:
            self._local = _LOCAL.setdefault((settings.uri, lock_id), (threading.Lock(), [None]))

    def run_with_lock(self, fn: Callable[[], T]) -> T:
        """Hold the lock while ``fn`` runs; released on every outcome. If ``fn`` succeeded but
        the release fails, the result stands (the row expires after expire_time_seconds)."""
        self.acquire()
        try:
            result = fn()
        except BaseException:
            self._release_quietly()
            raise
        self._release_quietly()
        return result

    def acquire(self) -> None:
        """Java's JdbcCatalogLock.lock: try, then sleep 100, 200, 400 ... ms (capped by
        lock-check-max-sleep) between tries until lock-acquire-timeout has passed."""
        settings = self.store.settings
        local, owner = self._local
        if owner[0] == threading.get_ident():
            raise RuntimeError(f"lock {self.lock_id} is already held by this thread (the JDBC lock is not reentrant)")
        start = time.monotonic()
        if not local.acquire(timeout=settings.lock_acquire_timeout_ms / 1000.0):
            raise self._timeout(start)
        owner[0] = threading.get_ident()
        try:
            busy = self.store._try_acquire(self.lock_id)
            sleep_ms = FIRST_LOCK_SLEEP_MS
            while busy is not None:
                sleep_ms = min(sleep_ms * 2, settings.lock_check_max_sleep_ms)
                time.sleep(sleep_ms / 1000.0)
                busy = self.store._try_acquire(self.lock_id)
                if (time.monotonic() - start) * 1000 > settings.lock_acquire_timeout_ms:
                    break
            if busy is not None:
                raise self._timeout(start, busy)
        except BaseException:
            owner[0] = None
            local.release()
            raise

    def _timeout(self, start: float, busy: str = LOCK_HELD) -> LockNotAcquired:
        s = self.store.settings
        why = (f"another writer holds it; a crashed writer's lock expires {s.expire_time_seconds} s after it was "
               "taken") if busy == LOCK_HELD else f"the catalog database stayed busy ({busy})"
        return LockNotAcquired(
            f"lock {self.lock_id} in {self.store._describe()} not acquired within {time.monotonic() - start:.1f} s"
            f" (lock-acquire-timeout {s.lock_acquire_timeout_ms} ms): {why}")

    def release(self) -> None:
        """Delete the lock row (Java's releaseLock) and let other threads of this process in."""
        local, owner = self._local
        try:
            self.store._release(self.lock_id)
        finally:
            if owner[0] == threading.get_ident():
                owner[0] = None
                local.release()

    def _release_quietly(self) -> None:
        try:
            self.release()
        except PaimonError as err:
            log.warning("%s; it expires %d s after it was taken", err, self.store.settings.expire_time_seconds)
