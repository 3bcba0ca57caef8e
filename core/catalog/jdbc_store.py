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

The lock rows are written here; waiting for them is the commit lock of :mod:`.jdbc_lock`
(Java's ``JdbcCatalogLock``). Connections and their options are :mod:`.jdbc_client`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping
from typing import TypeVar

from ..errors import (
    AlreadyExists,
    CatalogUnavailable,
    InvalidInput,
    NotFound,
    PaimonError,
    UnsafeRefused,
)
from ..io import fileio
from ..schema.table_schema import TableSchema
from ..table.identifiers import is_system_database, validate_name
from .jdbc_client import (
    JdbcConnection,
    JdbcSettings,
    connect,
    driver_errors,
    first_line,
    protocol_of,
    redact,
)
from .jdbc_lock import LOCK_HELD, JdbcLock, lock_id

T = TypeVar("T")

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
        self._conn: JdbcConnection | None = None
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

    def _run(self, what: str, fn: Callable[[JdbcConnection], T]) -> T:
        """Run ``fn`` on the connection (opened and initialised on first use); driver errors
        become one-line PaimonErrors, and a failed connection is dropped so the next call
        reconnects."""
        with self._conn_guard:
            errors = driver_errors(self.protocol)
            try:
                if self._conn is None:
                    self._conn = connect(self.settings)
                conn = self._conn
                if not self._initialized:
                    self._create_tables(conn)
                    self._initialized = True
                return fn(conn)
            except errors as err:
                line = first_line(err)
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

    def _alive(self, conn: JdbcConnection) -> bool:
        try:
            conn.query("SELECT 1")
            return True
        except Exception:  # noqa: BLE001 - any failure means: reconnect next time
            return False

    def _create_tables(self, conn: JdbcConnection) -> None:
        for ddl in _CREATE_TABLES:
            self._create_if_absent(conn, ddl)
        if self.settings.lock_enabled:
            self._create_locks_table(conn)

    def _create_if_absent(self, conn: JdbcConnection, ddl: str) -> None:
        try:
            conn.execute(ddl)
        except driver_errors(self.protocol) as err:
            # PostgreSQL's IF NOT EXISTS can still clash with a concurrent creator
            if not conn.is_unique_violation(err) and "already exists" not in str(err):
                raise

    def _create_locks_table(self, conn: JdbcConnection) -> None:
        if not self._locks_table_ready:
            self._create_if_absent(conn, _CREATE_LOCKS_TABLE % self.settings.lock_key_max_length)
            self._locks_table_ready = True

    def _exists(self, conn: JdbcConnection, sql: str, *args: str) -> bool:
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

    def _database_exists(self, conn: JdbcConnection, database: str) -> bool:
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
        def run(conn: JdbcConnection) -> list[str]:
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
        def run(conn: JdbcConnection) -> dict[str, str]:
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

        def run(conn: JdbcConnection) -> bool:
            with conn.transaction():
                if self._database_exists(conn, database):
                    if ignore_if_exists:
                        return False
                    raise AlreadyExists(f"database {database} already exists in {self._describe()}")
                self._insert_database_properties(conn, database, props)
            return True

        return self._run("create a database", run)

    def _insert_database_properties(self, conn: JdbcConnection, database: str, props: Mapping[str, str]) -> None:
        for k, v in props.items():
            conn.execute(f"INSERT INTO {DATABASE_PROPERTIES_TABLE} (catalog_key, database_name, property_key, "
                         "property_value) VALUES (?,?,?,?)", (self.catalog_key, database, k, v))

    def alter_database(self, database: str, set_properties: Mapping[str, str] | None = None,
                       remove_keys: tuple[str, ...] | list[str] = ()) -> None:
        """Java 2.x's alterDatabase: insert new keys, update existing ones, delete removed ones."""
        set_properties = dict(set_properties or {})
        if DATABASE_EXISTS_PROPERTY in set_properties or DATABASE_EXISTS_PROPERTY in remove_keys:
            raise InvalidInput(f"database property {DATABASE_EXISTS_PROPERTY!r} is the catalog's own")

        def run(conn: JdbcConnection) -> None:
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
        def run(conn: JdbcConnection) -> list[str]:
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

    def _table_exists(self, conn: JdbcConnection, database: str, table: str) -> bool:
        return self._exists(conn, f"SELECT table_name FROM {CATALOG_TABLE} WHERE catalog_key = ? AND database_name = ?"
                            " AND table_name = ?", self.catalog_key, database, table)

    def _name_taken(self, conn: JdbcConnection, database: str, name: str) -> str | None:
        if self._table_exists(conn, database, name):
            return "table"
        if self._exists(conn, f"SELECT view_name FROM {VIEWS_TABLE} WHERE catalog_key = ? AND database_name = ? "
                        "AND view_name = ?", self.catalog_key, database, name):
            return "view"
        return None

    def list_tables(self, database: str) -> list[str]:
        def run(conn: JdbcConnection) -> list[str]:
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

        def run(conn: JdbcConnection) -> None:
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

    def _run_unique(self, what: str, fn: Callable[[JdbcConnection], T], clash: str) -> T:
        """:meth:`_run` where a unique-key clash (a concurrent creator won) is AlreadyExists."""
        try:
            return self._run(what, fn)
        except PaimonError as err:
            cause = err.__cause__
            if cause is not None and self._conn is not None and self._conn.is_unique_violation(cause):
                raise AlreadyExists(f"{clash} in {self._describe()}") from cause
            raise

    def _insert_table_properties(self, conn: JdbcConnection, database: str, table: str,
                                 properties: Mapping[str, str]) -> None:
        for k, v in properties.items():
            conn.execute(f"INSERT INTO {TABLE_PROPERTIES_TABLE} (catalog_key, database_name, table_name, property_key,"
                         " property_value) VALUES (?,?,?,?,?)", (self.catalog_key, database, table, k, v))

    def unregister_table(self, database: str, table: str) -> bool:
        """Delete the table's rows; True if it was registered. Java deletes the row first and
        then the directory (quietly: a failed delete leaves files, never a dangling row)."""
        def run(conn: JdbcConnection) -> bool:
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

        def run(conn: JdbcConnection) -> None:
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
        def run(conn: JdbcConnection) -> dict[str, str]:
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

        def run(conn: JdbcConnection) -> None:
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
        def run(conn: JdbcConnection) -> str | None:
            self._create_locks_table(conn)
            try:
                conn.execute(_LOCK_RELEASE_EXPIRED[self.protocol], (lock_id,))
                inserted = conn.execute(_LOCK_ACQUIRE, (lock_id, self.settings.expire_time_seconds)) > 0
                return None if inserted else LOCK_HELD
            except driver_errors(self.protocol) as err:
                if conn.is_unique_violation(err):
                    return LOCK_HELD
                if conn.is_busy(err):
                    return first_line(err)
                raise

        return self._run(f"acquire lock {lock_id}", run)

    def _release(self, lock_id: str) -> bool:
        return self._run(f"release lock {lock_id}", lambda c: c.execute(_LOCK_RELEASE, (lock_id,)) > 0)

    def lock_holders(self) -> list[tuple[str, str, int]]:
        """Rows of ``paimon_distributed_locks``: (lock_id, acquired_at as the database prints
        it, expire_time_seconds); for diagnostics and tests."""
        def run(conn: JdbcConnection) -> list[tuple[str, str, int]]:
            self._create_locks_table(conn)
            return [(str(a), str(b), int(c)) for a, b, c in conn.query(
                f"SELECT lock_id, acquired_at, expire_time_seconds FROM {LOCKS_TABLE} ORDER BY lock_id")]

        return self._run("list locks", run)
