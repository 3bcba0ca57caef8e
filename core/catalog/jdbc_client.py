"""How paimon-cli reaches a JDBC catalog's database: the catalog options of the connection
(Java's ``JdbcCatalogOptions`` and ``jdbc.*`` driver properties) and one connection per dialect
(Java's ``JdbcClientPool``).

Drivers: SQLite through the standard library, PostgreSQL through psycopg 3 (extra ``postgres``),
MySQL/MariaDB through PyMySQL (extra ``mysql``). ``jdbc.*`` options are the Java driver's
connection properties; the ones with a meaning here are translated, known tuning-only ones are
ignored, anything else is refused rather than silently dropped. Connections differ only in
their placeholders, transactions and how a unique violation or a busy database shows; the SQL
they run is :mod:`.jdbc_store`'s.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, unquote

from ..errors import (
    InvalidInput,
    NotYetSupported,
    PaimonError,
)
from ..utils.durations import parse_duration_millis

PROPERTY_PREFIX = "jdbc."
DEFAULT_CATALOG_KEY = "jdbc"
DEFAULT_LOCK_ACQUIRE_TIMEOUT_MS = 8 * 60 * 1000  # Java CatalogOptions.LOCK_ACQUIRE_TIMEOUT
DEFAULT_LOCK_CHECK_MAX_SLEEP_MS = 8 * 1000  # Java CatalogOptions.LOCK_CHECK_MAX_SLEEP
DEFAULT_LOCK_KEY_MAX_LENGTH = 255  # Java JdbcCatalogOptions.LOCK_KEY_MAX_LENGTH
DEFAULT_CONNECT_TIMEOUT_S = 10  # PgJDBC's connectTimeout default
DEFAULT_SQLITE_BUSY_TIMEOUT_MS = 5000

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


class JdbcConnection:
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


class _SqliteConnection(JdbcConnection):
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


class _PostgresConnection(JdbcConnection):
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


class _MysqlConnection(JdbcConnection):
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


def driver_errors(protocol: str) -> tuple[type[BaseException], ...]:
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


def connect(settings: JdbcSettings) -> JdbcConnection:
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
        driver_errors(protocol)
        import psycopg

        return _PostgresConnection(psycopg.connect(autocommit=True, **target.kwargs))
    target = _mysql_target(rest, settings.properties)
    driver_errors(protocol)
    import pymysql

    return _MysqlConnection(pymysql.connect(autocommit=True, **target.kwargs))


def first_line(err: BaseException) -> str:
    text = str(err).strip() or type(err).__name__
    return text.splitlines()[0].strip()
