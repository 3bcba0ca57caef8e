"""The filesystem catalog: ``<warehouse>/<db>.db/<table>``, as Java's FileSystemCatalog lays it out."""

from __future__ import annotations

from typing import Any

from ..errors import AlreadyExists, NotFound
from ..io import fileio
from ..schema.schema_change import SchemaChange
from ..schema.schema_manager import SchemaManager
from ..schema.table_schema import Schema, TableSchema
from ..utils.suggest import did_you_mean
from .file_store_table import FileStoreTable
from .identifiers import Identifier, validate_name

DB_SUFFIX = ".db"


class FileSystemCatalog:
    """Databases are ``<name>.db`` folders; a table is a folder holding ``schema/schema-N``."""

    def __init__(self, warehouse: str, storage_options: dict[str, Any] | None = None) -> None:
        self.warehouse = warehouse
        self.file_io = fileio.load_file_io(warehouse, storage_options)

    # -- paths --------------------------------------------------------------------------

    def database_path(self, database: str) -> str:
        return fileio.join(self.warehouse, database + DB_SUFFIX)

    def table_path(self, identifier: Identifier) -> str:
        return fileio.join(self.database_path(identifier.database), identifier.table)

    def _require_warehouse(self) -> None:
        if not self.file_io.is_object_store and not self.file_io.is_dir(self.warehouse):
            raise NotFound(f"warehouse {self.warehouse} does not exist")

    # -- databases ----------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        self._require_warehouse()
        return sorted(
            s.name[: -len(DB_SUFFIX)]
            for s in self.file_io.list_status(self.warehouse)
            if s.is_dir and s.name.endswith(DB_SUFFIX) and len(s.name) > len(DB_SUFFIX)
        )

    def database_exists(self, database: str) -> bool:
        validate_name("database", database)
        return self.file_io.is_dir(self.database_path(database))

    def create_database(self, database: str, ignore_if_exists: bool = False) -> None:
        validate_name("database", database)
        if self.database_exists(database):
            if ignore_if_exists:
                return
            raise AlreadyExists(f"database {database} already exists")
        self.file_io.mkdirs(self.database_path(database))

    # -- tables -------------------------------------------------------------------------

    def _no_database(self, database: str) -> NotFound:
        return NotFound(f"database {database} does not exist in {self.warehouse}"
                        f"{did_you_mean(database, self.list_databases())}")

    def list_tables(self, database: str) -> list[str]:
        if not self.database_exists(database):
            raise self._no_database(database)
        db_path = self.database_path(database)
        out = []
        for s in self.file_io.list_status(db_path):
            if s.is_dir and self.file_io.exists(fileio.join(s.path, "schema")):
                out.append(s.name)
        return sorted(out)

    def table_exists(self, identifier: str | Identifier) -> bool:
        ident = Identifier.parse(identifier) if isinstance(identifier, str) else identifier
        return SchemaManager(self.file_io, self.table_path(ident)).latest() is not None

    def get_table(self, identifier: str | Identifier, branch: str | None = None) -> FileStoreTable:
        """Open a table; a missing database, table or branch raises NotFound."""
        ident = Identifier.parse(identifier) if isinstance(identifier, str) else identifier
        if branch is not None:
            validate_name("branch", branch)
        self._require_warehouse()
        if not self.database_exists(ident.database):
            raise self._no_database(ident.database)
        try:
            return FileStoreTable.load(self.file_io, self.table_path(ident), ident, branch)
        except NotFound as exc:
            if self.table_exists(ident):  # a missing branch
                raise
            hint = did_you_mean(ident.table, self.list_tables(ident.database))
            raise NotFound(f"{exc}{hint}") from exc

    def create_table(
        self, identifier: str | Identifier, schema: Schema, ignore_if_exists: bool = False
    ) -> FileStoreTable:
        """Write schema-0 (write-if-absent); creates the database folder when missing."""
        ident = Identifier.parse(identifier) if isinstance(identifier, str) else identifier
        if not self.file_io.is_object_store:
            self.file_io.mkdirs(self.warehouse)
        self.create_database(ident.database, ignore_if_exists=True)
        manager = SchemaManager(self.file_io, self.table_path(ident))
        if manager.latest() is not None:
            if ignore_if_exists:
                return self.get_table(ident)
            raise AlreadyExists(f"table {ident} already exists")
        manager.create_table(schema, ignore_if_exists=ignore_if_exists)
        return self.get_table(ident)

    def alter_table(
        self, identifier: str | Identifier, changes: list[SchemaChange], branch: str | None = None
    ) -> TableSchema:
        table = self.get_table(identifier, branch)
        return table.schema_manager.commit_changes(changes)
