"""The JDBC catalog (``metastore=jdbc``): table names in a database (SQLite, PostgreSQL, MySQL),
shared row for row with Java's ``JdbcCatalog`` and pypaimon's through ``catalog-key``.

Only names live in the database; every table is at ``<warehouse>/<db>.db/<table>`` (Java
ignores a database's ``location`` property for tables). With ``lock.enabled`` each table's
commits run under Java's lock row in ``paimon_distributed_locks``.
"""

from __future__ import annotations

from typing import Any

from ..errors import NotFound
from ..io.commit_lock import TableLock
from ..schema.schema_manager import SchemaManager
from ..schema.table_schema import TableSchema
from ..table.catalog_environment import CatalogEnvironment
from ..table.identifiers import Identifier, validate_name
from .base import Catalog, TableEntry, local_location
from .jdbc_client import JdbcSettings
from .jdbc_lock import JdbcLock
from .jdbc_store import JdbcCatalogStore, table_properties_of
from .options import CatalogOptions


class JdbcTableLock(TableLock):
    """Java's lock row as a reentrant :class:`TableLock` (the row itself is not reentrant)."""

    def __init__(self, lock: JdbcLock) -> None:
        super().__init__()
        self._lock = lock

    def acquire(self) -> None:
        self._lock.acquire()

    def release(self) -> None:
        self._lock.release()


class JdbcCatalog(Catalog):
    """Databases and tables of a JDBC catalog database (``uri=jdbc:...``)."""

    metastore = "jdbc"
    registers_from_storage = True

    def __init__(self, options: CatalogOptions, storage_options: dict[str, Any] | None = None) -> None:
        super().__init__(options, storage_options)
        self.settings = JdbcSettings.from_options(options.raw)  # uri and warehouse are required
        self._store: JdbcCatalogStore | None = None
        self._locks: dict[tuple[Identifier, str | None], JdbcTableLock] = {}

    @property
    def store(self) -> JdbcCatalogStore:
        if self._store is None:
            self._store = JdbcCatalogStore(self.settings)
        return self._store

    def close(self) -> None:
        if self._store is not None:
            self._store.close()
            self._store = None

    # -- databases ------------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        return sorted(set(self.store.list_databases()))

    def database_exists(self, database: str) -> bool:
        validate_name("database", database)
        return self.store.database_exists(database)

    def create_database(self, database: str, ignore_if_exists: bool = False) -> None:
        self.store.create_database(database, ignore_if_exists=ignore_if_exists)

    def drop_database(self, database: str, ignore_if_not_exists: bool = False) -> None:
        self.store.drop_database(database, cascade=False, ignore_if_not_exists=ignore_if_not_exists)
        try:
            self.file_io.delete_empty_dir(local_location(self.database_location(database)))
        except Exception:  # noqa: BLE001 - an empty folder left behind harms nothing
            pass

    # -- tables ---------------------------------------------------------------------------------

    def list_table_entries(self, database: str) -> list[TableEntry]:
        self._require_database(database)
        return [TableEntry(t, location=self.new_table_location(Identifier(database, t)))
                for t in self.store.list_tables(database)]

    def table_location(self, ident: Identifier) -> str:
        if not self.store.table_exists(ident.database, ident.table):
            raise NotFound(f"table {ident} does not exist in catalog {self.name}")
        return self.new_table_location(ident)

    def register_table(self, ident: Identifier, location: str, schema: TableSchema) -> None:
        props = table_properties_of(schema) if self.settings.sync_table_properties else None
        self.store.register_table(ident.database, ident.table, props)

    def unregister_table(self, ident: Identifier) -> None:
        self.store.unregister_table(ident.database, ident.table)

    def rename_registration(self, src: Identifier, dst: Identifier, new_location: str | None) -> None:
        """The directory first, then the rows, moved back if the rows cannot be (pypaimon's
        order: never a row without its files)."""
        old = self.new_table_location(src)
        moved = new_location is not None and SchemaManager(self.file_io_for(old), local_location(old)).latest() \
            is not None
        if moved:
            assert new_location is not None
            self.move_table_dir(old, new_location)
        try:
            self.store.rename_table(src.database, src.table, dst.database, dst.table)
        except BaseException:
            if moved:
                assert new_location is not None
                self.move_table_dir(new_location, old)
            raise

    def after_alter(self, ident: Identifier, old: TableSchema, new: TableSchema) -> None:
        self.store.set_table_properties(ident.database, ident.table, table_properties_of(new))

    def schema_drift(self, ident: Identifier, schema: TableSchema) -> str | None:
        if not self.settings.sync_table_properties:
            return None
        if self.store.table_properties(ident.database, ident.table) == table_properties_of(schema):
            return None
        return f"the catalog's table properties differ from schema {schema.id}"

    def catalog_environment(self, ident: Identifier, schema: TableSchema,
                            branch: str | None = None) -> CatalogEnvironment:
        enabled = self.options.lock_enabled
        if enabled is None:  # Java: lock where the warehouse is an object store
            enabled = self.file_io.is_object_store
        if not enabled:
            return CatalogEnvironment(catalog=self.name, metastore=self.metastore)
        key = (ident, branch)
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = JdbcTableLock(self.store.lock(ident.database, ident.table, branch))
        return CatalogEnvironment(lock=lock, catalog=self.name, metastore=self.metastore)
