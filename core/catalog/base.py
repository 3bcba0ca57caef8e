"""``Catalog``: where tables are registered, the one protocol every metastore implements.

Paimon keeps a table's truth in its files (schemas, snapshots); a catalog adds the names: which
databases and tables exist, where each table lives, and what a metastore must be told when a
table is created, altered, dropped or renamed (Java ``AbstractCatalog``). What is common to
every metastore lives here -- opening a table from its location, refusing what is not a Paimon
table, telling drift between the metastore and storage apart from a missing table -- and each
metastore module implements only the hooks below.
"""

from __future__ import annotations

import contextlib
import dataclasses
from abc import ABC, abstractmethod
from functools import cached_property
from typing import TYPE_CHECKING, Any

from ..errors import AlreadyExists, CorruptMetadata, NotFound, NotYetSupported
from ..io import fileio
from ..io.fileio import FileIO
from ..table.identifiers import Identifier, validate_name
from ..utils.suggest import did_you_mean
from ..utils.values import FrozenValue, set_field
from .options import CatalogOptions

if TYPE_CHECKING:
    from ..schema.schema_change import SchemaChange
    from ..schema.schema_manager import SchemaManager
    from ..schema.table_schema import Schema, TableSchema
    from ..table.catalog_environment import CatalogEnvironment
    from ..table.file_store_table import FileStoreTable

# Opening a table (schema types, snapshot and tag managers, its environment) is imported where a
# table is opened, so listing databases and tables loads none of it (start-up, issue 28).

PAIMON = "paimon"
DB_SUFFIX = ".db"


def _schema_manager(fio: FileIO, path: str) -> SchemaManager:
    """The schema files of the table at ``path`` (imported on first use: listing databases
    reads no schema)."""
    from ..schema.schema_manager import SchemaManager

    return SchemaManager(fio, path)


class TableEntry(FrozenValue):
    """A table as the catalog lists it: ``kind`` is ``paimon`` for the tables we maintain, else
    what the metastore holds (``hive-table``, ``view``, ``format-table``, ...)."""

    name: str
    kind: str
    location: str | None
    FIELDS = __match_args__ = ("name", "kind", "location")

    def __init__(self, name: str, kind: str = PAIMON, location: str | None = None) -> None:
        set_field(self, "name", name)
        set_field(self, "kind", kind)
        set_field(self, "location", location)

    @property
    def is_paimon(self) -> bool:
        return self.kind == PAIMON


class Registration(FrozenValue):
    """A database or table ``repair`` enters in the metastore: it is on storage (a ``<db>.db``
    folder, a table folder holding a Paimon schema) but the metastore does not name it."""

    kind: str  # "database" | "table"
    name: str
    location: str
    FIELDS = __match_args__ = ("kind", "name", "location")

    def __init__(self, kind: str, name: str, location: str) -> None:
        set_field(self, "kind", kind)
        set_field(self, "name", name)
        set_field(self, "location", location)

    def as_row(self) -> dict[str, Any]:
        return {"hint": f"metastore {self.kind}", "current": "(absent)", "repaired": self.location,
                "action": "register", "reason": "on storage, missing from the metastore"}


def ident_of(identifier: str | Identifier) -> Identifier:
    return Identifier.parse(identifier) if isinstance(identifier, str) else identifier


def local_location(location: str) -> str:
    """A metastore's ``file:/x`` or ``file:///x`` as the plain path ``/x`` (other URIs unchanged),
    so every path of the table compares equal to those of a ``-w /x`` warehouse."""
    for prefix in ("file://", "file:"):
        if location.startswith(prefix):
            rest = location[len(prefix):]
            return rest if rest.startswith("/") else "/" + rest
    return location


class Catalog(ABC):
    """Databases and tables of one catalog; ``options`` are Java's catalog options."""

    metastore = "filesystem"

    def __init__(self, options: CatalogOptions, storage_options: dict[str, Any] | None = None) -> None:
        self.options = options
        self.storage_options = dict(storage_options or {})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.options.label!r}, warehouse={self.warehouse!r})"

    @property
    def name(self) -> str:
        return self.options.label

    @property
    def warehouse(self) -> str:
        """The warehouse root (databases' default location)."""
        return self.options.warehouse or ""

    @cached_property
    def file_io(self) -> FileIO:
        """The warehouse's filesystem; a table elsewhere gets its own (:meth:`file_io_for`)."""
        return fileio.load_file_io(self.options.warehouse or ".", self.storage_options)

    def file_io_for(self, location: str) -> FileIO:
        here, _ = fileio._split_scheme(self.options.warehouse or ".")
        there, _ = fileio._split_scheme(location)
        if (here or "file") == (there or "file"):
            return self.file_io
        return fileio.load_file_io(location, self.storage_options)

    def close(self) -> None:
        """Release connections to the metastore (none for the filesystem)."""
        return None

    # -- databases: each metastore ------------------------------------------------------------

    @abstractmethod
    def list_databases(self) -> list[str]: ...

    @abstractmethod
    def database_exists(self, database: str) -> bool: ...

    @abstractmethod
    def create_database(self, database: str, ignore_if_exists: bool = False) -> None: ...

    @abstractmethod
    def drop_database(self, database: str, ignore_if_not_exists: bool = False) -> None:
        """Drop an EMPTY database (callers drop its tables first)."""

    # -- tables: each metastore -----------------------------------------------------------------

    @abstractmethod
    def list_table_entries(self, database: str) -> list[TableEntry]:
        """Every table of ``database`` the metastore holds, Paimon or not."""

    @abstractmethod
    def table_location(self, ident: Identifier) -> str:
        """Where the Paimon table ``ident`` lives; NotFound when the catalog has no such table,
        NotYetSupported (naming its kind) when it is not a Paimon table."""

    @abstractmethod
    def register_table(self, ident: Identifier, location: str, schema: TableSchema) -> None:
        """Tell the metastore about a table whose schema-0 was just written at ``location``."""

    @abstractmethod
    def unregister_table(self, ident: Identifier) -> None:
        """Forget ``ident`` in the metastore (its files are the caller's business)."""

    @abstractmethod
    def rename_registration(self, src: Identifier, dst: Identifier, new_location: str | None) -> None:
        """Rename ``src`` to ``dst`` in the metastore (with its new location when it moved)."""

    # whether the catalog's server decides where a new table goes (and owns its schemas): a
    # clone then creates the table first and copies into the location it is given
    server_places_tables = False

    def new_table_location(self, ident: Identifier) -> str:
        """Where a new (managed) table goes: ``<warehouse>/<db>.db/<table>``, as every Java catalog."""
        return fileio.join(self.database_location(ident.database), ident.table)

    def database_location(self, database: str) -> str:
        return fileio.join(self.warehouse, database + DB_SUFFIX)

    def is_managed(self, ident: Identifier) -> bool:
        """Whether dropping ``ident`` deletes its files (Java: managed tables only)."""
        return True

    def catalog_environment(self, ident: Identifier, schema: TableSchema,
                            branch: str | None = None) -> CatalogEnvironment:
        """The lock and metastore partition sync the commits of the table (its ``branch``) run with."""
        from ..table.catalog_environment import FILESYSTEM

        return FILESYSTEM

    def after_alter(self, ident: Identifier, old: TableSchema, new: TableSchema) -> None:
        """Bring the metastore's copy of the schema (columns, parameters) from ``old`` up to
        ``new`` (the filesystem catalog keeps no copy)."""
        return None

    def schema_drift(self, ident: Identifier, schema: TableSchema) -> str | None:
        """How the metastore's copy of the table's schema differs from ``schema`` (None: it
        does not, or the catalog keeps no copy), e.g. after an ``alter`` whose metastore update
        failed; ``repair`` shows it and :meth:`sync_schema` fixes it."""
        return None

    def sync_schema(self, ident: Identifier, schema: TableSchema) -> None:
        self.after_alter(ident, schema, schema)

    # -- repair: what is on storage but not in the metastore ----------------------------------

    # whether ``repair`` enters databases and tables found on storage in the metastore (Java's
    # repairCatalog / repairDatabase / repairTable); the filesystem catalog's folders are its
    # names, a REST server keeps its own
    registers_from_storage = False

    def storage_databases(self) -> list[str]:
        """The ``<name>.db`` folders of the warehouse, sorted (Java's listDatabasesInFileSystem)."""
        if not self._on_storage(self.warehouse):
            return []
        return sorted(
            s.name[: -len(DB_SUFFIX)]
            for s in self.file_io.list_status(self.warehouse)
            if s.is_dir and s.name.endswith(DB_SUFFIX) and len(s.name) > len(DB_SUFFIX)
        )

    def storage_tables(self, database: str) -> list[str]:
        """The folders of the database's folder (:meth:`database_location`) holding a Paimon
        schema, sorted (Java's listTablesInFileSystem)."""
        location = self.database_location(database)
        fio, path = self.file_io_for(location), local_location(location)
        if not self._on_storage(path, fio):
            return []
        return sorted(s.name for s in fio.list_status(path)
                      if s.is_dir and _schema_manager(fio, s.path).list_ids())

    def database_registration(self, database: str) -> Registration | None:
        """``database`` to enter in the metastore: its folder exists and the metastore lacks it."""
        if not self.registers_from_storage or self.database_exists(database):
            return None
        location = self.database_location(database)
        if not self._on_storage(local_location(location)):
            return None
        return Registration("database", database, location)

    def _on_storage(self, directory: str, fio: FileIO | None = None) -> bool:
        """Whether the folder exists (on an object store: holds an object, as it has no folders)."""
        fio = fio or self.file_io
        if fio.is_object_store:
            return bool(fio.list_status(directory))
        return fio.is_dir(directory)

    def table_registrations(self, ident: Identifier) -> list[Registration]:
        """What ``repair`` enters so that the catalog names ``ident``: the table (and its
        database when the metastore lacks it) when its :meth:`new_table_location` holds a
        Paimon schema and the metastore holds no such name. A name the metastore holds as something
        else is left to fail as it does today (Java: not a paimon table)."""
        if not self.registers_from_storage:
            return []
        db_known = self.database_exists(ident.database)
        if db_known and any(e.name == ident.table for e in self.list_table_entries(ident.database)):
            return []
        location = self.new_table_location(ident)
        if not _schema_manager(self.file_io_for(location), local_location(location)).list_ids():
            return []
        db = [] if db_known else [Registration("database", ident.database, self.database_location(ident.database))]
        return db + [Registration("table", ident.full_name, location)]

    def register(self, registrations: list[Registration]) -> None:
        """Enter what :meth:`table_registrations` / :meth:`database_registration` planned: a
        table with its latest schema, as ``create`` registers one (nothing is written to storage)."""
        for r in registrations:
            if r.kind == "database":
                self.create_database(r.name, ignore_if_exists=True)
                continue
            ident = Identifier.parse(r.name)
            schema = _schema_manager(self.file_io_for(r.location), local_location(r.location)).latest()
            if schema is None:
                raise NotFound(f"repair: {ident}: no Paimon schema at {r.location} any more; nothing registered")
            self.register_table(ident, r.location, schema)

    def storage_table(self, ident: Identifier) -> FileStoreTable:
        """The table at its default location, opened without the metastore (what ``repair
        --dry-run`` plans on for a table it would register), lent the environment registering
        gives it, so the plan names the metastore partitions the run then adds."""
        from ..table.file_store_table import FileStoreTable

        location = self.new_table_location(ident)
        table = FileStoreTable.load(self.file_io_for(location), local_location(location), ident)
        table.catalog_environment = self.registration_environment(ident, table.schema)
        return table

    def registration_environment(self, ident: Identifier, schema: TableSchema) -> CatalogEnvironment:
        """The metastore partition sync a table gets once registered, against a metastore that
        holds none of its partitions yet (no lock: nothing is committed through it)."""
        from ..table.catalog_environment import FILESYSTEM

        return FILESYSTEM

    # -- tables: common -------------------------------------------------------------------------

    def list_tables(self, database: str) -> list[str]:
        """The Paimon tables of ``database`` (what commands maintain), sorted."""
        self._require_database(database)
        return sorted(e.name for e in self.list_table_entries(database) if e.is_paimon)

    def _require_database(self, database: str) -> None:
        validate_name("database", database)
        if not self.database_exists(database):
            raise NotFound(f"database {database} does not exist in catalog {self.name}"
                           f"{did_you_mean(database, self.list_databases())}")

    def table_exists(self, identifier: str | Identifier) -> bool:
        ident = ident_of(identifier)
        try:
            location = self.table_location(ident)
        except NotFound:
            return False
        return _schema_manager(self.file_io_for(location), local_location(location)).latest() is not None

    def get_table(self, identifier: str | Identifier, branch: str | None = None) -> FileStoreTable:
        """Open a table; a missing database, table or branch raises NotFound; a table the
        metastore lists whose files hold no Paimon schema is reported as drift (exit 4)."""
        ident = ident_of(identifier)
        if branch is not None:
            validate_name("branch", branch)
        self._require_database(ident.database)
        try:
            location = self.table_location(ident)
        except NotFound as exc:
            raise NotFound(f"{exc}{did_you_mean(ident.table, self.list_tables(ident.database))}") from None
        path = local_location(location)
        fio = self.file_io_for(location)
        schema = _schema_manager(fio, path).latest()
        if schema is None:
            if self.metastore == "filesystem":
                raise NotFound(f"table {ident} does not exist{did_you_mean(ident.table, self.list_tables(ident.database))}")
            raise CorruptMetadata(location, f"table {ident} is registered in catalog {self.name} but no Paimon "
                                            "schema is there (dropped or moved behind the catalog's back?)")
        env = self.catalog_environment(ident, schema, branch)
        from ..table.file_store_table import FileStoreTable

        return self.with_iceberg_committer(FileStoreTable.load(fio, path, ident, branch, env))

    def with_iceberg_committer(self, table: FileStoreTable) -> FileStoreTable:
        """Every catalog's tables register their Iceberg metadata when its storage is
        ``hive-catalog`` (Java's callback does so whatever catalog serves the table)."""
        if not any(k.startswith("metadata.iceberg") for k in table.schema.options):
            return table  # no Iceberg metadata: no need to load the metastore client
        from .iceberg_hive import hive_iceberg_committer

        committer = hive_iceberg_committer(table, self.iceberg_catalog_uri, self.socket_timeout)
        if committer is not None:
            table.catalog_environment = dataclasses.replace(table.catalog_environment, iceberg_committer=committer)
        return table

    # the catalog's ``hive.metastore.client.socket.timeout`` (a Hive catalog's option or its
    # hive-site.xml), which the Iceberg registration's metastore client takes too
    socket_timeout: str | None = None

    @property
    def iceberg_catalog_uri(self) -> str | None:
        """The metastore ``metadata.iceberg.storage=hive-catalog`` registers in when the table
        does not name one (``metadata.iceberg.uri``): the catalog's own, for a Hive catalog."""
        return None

    def create_table(self, identifier: str | Identifier, schema: Schema,
                     ignore_if_exists: bool = False) -> FileStoreTable:
        """Write schema-0 (write-if-absent) at the new table's location, then register it.

        The schema is checked before anything is written; a registration that fails removes
        the schema it wrote, so a failed create leaves neither files nor a metastore entry.
        """
        ident = ident_of(identifier)
        validate_name("database", ident.database)
        if self.table_exists(ident):
            if ignore_if_exists:
                return self.get_table(ident)
            raise AlreadyExists(f"table {ident} already exists")
        self._check_unregistered(ident)
        from ..schema.schema_manager import new_table_schema

        new_table_schema(schema)  # refused before any folder or metastore entry is made
        self.create_database(ident.database, ignore_if_exists=True)
        location = self.new_table_location(ident)
        path = local_location(location)
        fio = self.file_io_for(location)
        if not fio.is_object_store:
            fio.mkdirs(path)
        manager = _schema_manager(fio, path)
        existing = manager.latest()
        if existing is not None:
            raise AlreadyExists(f"a Paimon table already exists at {location}, but catalog {self.name} does not "
                                f"list {ident}; register or move it first")
        written = manager.create_table(schema)
        try:
            self.register_table(ident, location, written)
        except BaseException:
            fio.delete(manager.schema_path(written.id))
            with contextlib.suppress(Exception):
                fio.delete_empty_dir(manager.schema_dir)
                fio.delete_empty_dir(path)
            raise
        return self.get_table(ident)

    def _check_unregistered(self, ident: Identifier) -> None:
        """A name the metastore holds as something else (a Hive table, a view) is refused."""
        for entry in self.list_table_entries(ident.database) if self.database_exists(ident.database) else []:
            if entry.name == ident.table:
                if entry.is_paimon:
                    raise AlreadyExists(f"table {ident} is registered in catalog {self.name} "
                                        f"(at {entry.location}) but holds no Paimon schema")
                raise AlreadyExists(f"{ident} already exists in catalog {self.name} as a {entry.kind}")

    def alter_table(self, identifier: str | Identifier, changes: list[SchemaChange],
                    branch: str | None = None) -> TableSchema:
        """Commit the changes as a new schema (under the table's lock), then bring the metastore
        in step. The files are the truth: a metastore update that fails after the schema
        committed is an error, and ``repair`` brings the metastore back in step (:meth:`schema_drift`)."""
        table = self.get_table(identifier, branch)
        new = table.schema_manager.commit_changes(changes)
        if table.branch is None:
            self.after_alter(table.identifier, table.schema, new)
        return new

    def drop_table(self, identifier: str | Identifier, ignore_if_not_exists: bool = False) -> str | None:
        """Unregister the table, then (managed tables) delete its directory; returns the
        location whose files were deleted, None when they were kept."""
        ident = ident_of(identifier)
        self._require_database(ident.database)
        try:
            location = self.table_location(ident)
        except NotFound:
            if ignore_if_not_exists:
                return None
            raise
        managed = self.is_managed(ident)
        self.unregister_table(ident)
        if not managed:
            return None
        fio = self.file_io_for(location)
        fio.delete_dir(local_location(location))
        return location

    def rename_table(self, src: str | Identifier, dst: str | Identifier) -> None:
        """Rename ``src`` to ``dst``; a managed table's directory moves with its name, as Java
        moves it (the metastore first, then the directory)."""
        a, b = ident_of(src), ident_of(dst)
        self.get_table(a)  # exists, and is a Paimon table
        self._require_database(b.database)
        if any(e.name == b.table for e in self.list_table_entries(b.database)) or self.table_exists(b):
            raise AlreadyExists(f"table {b} already exists")
        old = self.table_location(a)
        new = self.new_table_location(b) if self.is_managed(a) else None
        if new is not None and self.file_io_for(old).is_object_store:
            raise NotYetSupported(f"rename of managed table {a} on {self.file_io_for(old).scheme}://: its "
                                  "directory would be copied file by file, not renamed")
        self.rename_registration(a, b, new)

    def move_table_dir(self, old_location: str, new_location: str) -> None:
        """Rename a managed table's directory (local filesystems: one atomic rename)."""
        fio = self.file_io_for(old_location)
        fio.rename_dir(local_location(old_location), local_location(new_location))


def not_paimon(ident: Identifier, kind: str, catalog: str) -> NotYetSupported:
    return NotYetSupported(f"{ident} in catalog {catalog} is a {kind}, not a Paimon table: paimon-cli maintains "
                           "Paimon tables only")
