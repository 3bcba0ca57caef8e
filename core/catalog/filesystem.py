"""The filesystem catalog: ``<warehouse>/<db>.db/<table>``, as Java's ``FileSystemCatalog``.

The directory tree is the catalog: a database is a ``<name>.db`` folder, a table a folder
holding ``schema/schema-N``. Registering, forgetting and renaming are folder operations.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import AlreadyExists, InvalidInput, NotFound
from ..io import fileio
from ..table.identifiers import Identifier, validate_name
from .base import Catalog, TableEntry
from .options import WAREHOUSE, CatalogOptions

if TYPE_CHECKING:  # annotations only: listing a warehouse opens no table (issue 28)
    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable


class FileSystemCatalog(Catalog):
    """Databases are ``<name>.db`` folders; a table is a folder holding ``schema/schema-N``."""

    metastore = "filesystem"

    def __init__(self, options: CatalogOptions | str, storage_options: dict[str, Any] | None = None) -> None:
        """``options``: the catalog options, or just the warehouse path."""
        if isinstance(options, str):
            options = CatalogOptions({WAREHOUSE: options})
        super().__init__(options, storage_options)

    def _require_warehouse(self) -> None:
        if not self.file_io.is_object_store and not self.file_io.is_dir(self.warehouse):
            raise NotFound(f"warehouse {self.warehouse} does not exist")

    # kept for callers that build paths from names (Java's getTableLocation)
    def database_path(self, database: str) -> str:
        return self.database_location(database)

    def table_path(self, identifier: Identifier) -> str:
        return self.new_table_location(identifier)

    # -- databases ----------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        self._require_warehouse()
        return self.storage_databases()

    def database_exists(self, database: str) -> bool:
        validate_name("database", database)
        return self.file_io.is_dir(self.database_location(database))

    def create_database(self, database: str, ignore_if_exists: bool = False) -> None:
        validate_name("database", database)
        if self.database_exists(database):
            if ignore_if_exists:
                return
            raise AlreadyExists(f"database {database} already exists")
        if not self.file_io.is_object_store:
            self.file_io.mkdirs(self.warehouse)
        self.file_io.mkdirs(self.database_location(database))

    def drop_database(self, database: str, ignore_if_not_exists: bool = False) -> None:
        if not self.database_exists(database):
            if ignore_if_not_exists:
                return
            self._require_database(database)
        path = self.database_location(database)
        left = self.file_io.list_names(path)
        if left:
            raise InvalidInput(f"database {database} is not empty ({len(left)} entries left in {path})")
        self.file_io.delete_empty_dir(path)

    # -- tables -------------------------------------------------------------------------

    def list_table_entries(self, database: str) -> list[TableEntry]:
        self._require_database(database)
        out = []
        for s in self.file_io.list_status(self.database_location(database)):
            if s.is_dir and self.file_io.exists(fileio.join(s.path, "schema")):
                out.append(TableEntry(s.name, location=s.path))
        return sorted(out, key=lambda e: e.name)

    def table_location(self, ident: Identifier) -> str:
        return self.new_table_location(ident)

    def get_table(self, identifier: str | Identifier, branch: str | None = None) -> FileStoreTable:
        self._require_warehouse()
        return super().get_table(identifier, branch)

    def register_table(self, ident: Identifier, location: str, schema: TableSchema) -> None:
        """The schema file is the registration."""

    def unregister_table(self, ident: Identifier) -> None:
        """The directory's deletion is the unregistration."""

    def rename_registration(self, src: Identifier, dst: Identifier, new_location: str | None) -> None:
        assert new_location is not None  # every filesystem table is managed
        self.move_table_dir(self.table_location(src), new_location)
