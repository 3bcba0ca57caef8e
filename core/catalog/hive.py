"""The Hive catalog (``metastore=hive``): tables registered in a Hive Metastore, as Java's
``HiveCatalog`` registers them, so Hive, Spark and Trino see what we create and we maintain what
they created.

The metastore names the tables and holds each table's location; the table's truth stays in its
files. What Java keeps in the metastore is kept the same way (:mod:`.hms_table` builds the
objects): the table object on create and alter, partitions with
``metastore.partitioned-table``, tags as partitions with ``metastore.tag-to-partition``, and the
EXCLUSIVE table lock around every commit with ``lock.enabled``.
"""

from __future__ import annotations

import copy
import os
import threading
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import AlreadyExists, InvalidInput, NotFound, NotYetSupported
from ..io.commit_lock import TableLock
from ..io.fileio import _split_scheme
from ..schema.schema_manager import SchemaManager
from ..schema.table_schema import TableSchema
from ..table.catalog_environment import (
    FILESYSTEM,
    CatalogEnvironment,
    MetastorePartitions,
    NotRegisteredYet,
    TagPartitions,
)
from ..table.identifiers import Identifier, validate_name
from .base import PAIMON, Catalog, TableEntry, local_location, not_paimon
from .hive_lock import HeldLock, HiveMetastoreLock, LockSettings
from .hive_metastore import HiveMetastoreClient, HivePartitionSync, metastore_clients
from .hms_table import (
    build_hms_table,
    hms_table_kind,
    hms_table_location,
    is_external,
    java_path,
    table_parameters,
    update_hms_table,
)
from .options import HIVE_CLIENT_SOCKET_TIMEOUT, HIVE_CONF_DIR, LOCATION_IN_PROPERTIES, CatalogOptions

if TYPE_CHECKING:
    from contextlib import AbstractContextManager

    from pymetastore.hive_metastore import ttypes

# what `list` calls the metastore's other tables
KINDS = {"paimon": PAIMON, "view": "view", "format": "format-table", "other": "hive-table"}


def _require_client_library() -> None:
    try:
        import pymetastore  # noqa: F401
    except ImportError:
        raise NotYetSupported("metastore=hive needs the Hive Metastore client: pip install 'paimon-cli[hive]'") from None


def hive_site(conf_dir: str) -> dict[str, str]:
    """``hive-site.xml`` of ``hive-conf-dir`` as name -> value (Java reads the metastore uris
    and the warehouse from it when the catalog options do not give them)."""
    path = Path(conf_dir).expanduser() / "hive-site.xml"
    try:
        root = ET.parse(path).getroot()
    except FileNotFoundError:
        raise NotFound(f"hive-conf-dir {conf_dir}: no hive-site.xml there") from None
    except (OSError, ET.ParseError) as e:
        raise InvalidInput(f"{path}: cannot read it: {e}") from e
    out: dict[str, str] = {}
    for prop in root.iter("property"):
        name, value = prop.findtext("name"), prop.findtext("value")
        if name and value is not None:
            out[name.strip()] = value.strip()
    return out


def hms_location(location: str) -> str:
    """A location as Java stores it in the metastore: a local path as ``file:/abs/path``."""
    scheme, _ = _split_scheme(location)
    if not scheme and not location.startswith("file:"):
        return "file:" + os.path.abspath(location)
    return java_path(location)


class HiveTableLock(TableLock):
    """The table's EXCLUSIVE metastore lock, as :class:`TableLock` (one per table per catalog,
    so every handle of the table in this process shares its reentrancy)."""

    def __init__(self, lock: HiveMetastoreLock, database: str, table: str) -> None:
        super().__init__()
        self._lock = lock
        self.database = database
        self.table = table
        self._hold: AbstractContextManager[HeldLock] | None = None

    def acquire(self) -> None:
        hold = self._lock.hold(self.database, self.table)
        hold.__enter__()
        self._hold = hold

    def release(self) -> None:
        hold, self._hold = self._hold, None
        if hold is not None:
            hold.__exit__(None, None, None)


def _partition_sync(schema: TableSchema, holder: MetastorePartitions
                    ) -> tuple[MetastorePartitions | None, TagPartitions | None]:
    """Which partitions the metastore keeps for the table: its tags (``metastore.tag-to-partition``),
    its data partitions (``metastore.partitioned-table``), or none."""
    opts = schema.options
    tag_field = opts.get("metastore.tag-to-partition")
    if tag_field is not None:
        return None, TagPartitions(holder, tag_field)
    if schema.partition_keys and opts.get("metastore.partitioned-table", "false").lower() == "true":
        return holder, None
    return None, None


class MetastoreTablePartitions:
    """The metastore's partitions of one table (``MetastorePartitions`` of the catalog
    environment), on the catalog's client."""

    def __init__(self, catalog: HiveCatalog, ident: Identifier) -> None:
        self.catalog = catalog
        self.ident = ident

    def _sync(self) -> HivePartitionSync:
        return HivePartitionSync(self.catalog.client, self.ident.database, self.ident.table)

    def add_partitions(self, partitions: Sequence[Mapping[str, str]]) -> None:
        with self.catalog.calls:
            self._sync().add_partitions(partitions)

    def drop_partitions(self, partitions: Sequence[Mapping[str, str]]) -> None:
        with self.catalog.calls:
            self._sync().drop_partitions(partitions)

    def mark_done(self, partitions: Sequence[Mapping[str, str]]) -> None:
        """Java's ``HiveCatalog.markDonePartitions``: ``markPartitionForEvent(LOAD_DONE)`` per
        partition."""
        with self.catalog.calls:
            for spec in partitions:
                self.catalog.client.mark_partition_for_event(self.ident.database, self.ident.table, spec)

    def list_partitions(self) -> list[dict[str, str]]:
        with self.catalog.calls:
            table = self.catalog.client.get_table(self.ident.database, self.ident.table)
            keys = [k.name for k in table.partitionKeys or []]
            parts = self.catalog.client.list_partitions(self.ident.database, self.ident.table)
        return [dict(zip(keys, p.values, strict=True)) for p in parts]


class HiveCatalog(Catalog):
    """Databases and tables of a Hive Metastore (``uri=thrift://host:port``)."""

    metastore = "hive"
    registers_from_storage = True

    def __init__(self, options: CatalogOptions, storage_options: dict[str, Any] | None = None) -> None:
        _require_client_library()
        conf_dir = options.get(HIVE_CONF_DIR)
        site = hive_site(conf_dir) if conf_dir else {}
        values = dict(options.raw)
        if not options.uri and site.get("hive.metastore.uris"):
            values["uri"] = site["hive.metastore.uris"]
        if not options.warehouse and site.get("hive.metastore.warehouse.dir"):
            values["warehouse"] = site["hive.metastore.warehouse.dir"]
        options = CatalogOptions(values, options.name, options.sources)
        super().__init__(options, storage_options)
        self.uri = options.required("uri")
        if (options.get(LOCATION_IN_PROPERTIES) or "false").lower() == "true":
            raise NotYetSupported("catalog option location-in-properties=true is not supported yet")
        # Java sets every catalog option on its HiveConf, over hive-site.xml; the socket
        # timeout bounds the connect too (Hive's TSocket), unset the connect keeps ours
        self.socket_timeout = options.get(HIVE_CLIENT_SOCKET_TIMEOUT, site.get(HIVE_CLIENT_SOCKET_TIMEOUT))
        self._client_factory = metastore_clients(self.socket_timeout)
        self._client: HiveMetastoreClient | None = None
        self.calls = threading.RLock()  # one Thrift connection: one call at a time
        self._locks: dict[Identifier, HiveTableLock] = {}
        self._metastore_lock = HiveMetastoreLock(self._new_client, LockSettings.from_options(options.raw))

    @property
    def iceberg_catalog_uri(self) -> str | None:
        return self.uri

    def _new_client(self) -> HiveMetastoreClient:
        return self._client_factory(self.uri)

    @property
    def client(self) -> HiveMetastoreClient:
        if self._client is None:
            self._client = self._new_client()
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def _call(self, fn: Callable[[HiveMetastoreClient], Any]) -> Any:
        with self.calls:
            return fn(self.client)

    @property
    def warehouse(self) -> str:
        w = self.options.warehouse
        if not w:
            raise InvalidInput(f"catalog {self.name}: metastore=hive needs the option 'warehouse' (or a "
                               "hive-conf-dir whose hive-site.xml sets hive.metastore.warehouse.dir)")
        return w

    # -- databases ------------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        return sorted(self._call(lambda c: c.list_databases()))

    def database_exists(self, database: str) -> bool:
        return self._hms_database(database) is not None

    def create_database(self, database: str, ignore_if_exists: bool = False) -> None:
        _check_lower_case("database", database)
        if self.database_exists(database):
            if ignore_if_exists:
                return
            raise AlreadyExists(f"database {database} already exists")
        location = hms_location(super().database_location(database))
        self._call(lambda c: c.create_database(database, location))

    def drop_database(self, database: str, ignore_if_not_exists: bool = False) -> None:
        """The metastore forgets the (empty) database, then its folder goes if empty. The folder
        is the ``locationUri`` the metastore holds (Java's ``dropDatabaseImpl`` has the metastore
        delete that one), not ``<warehouse>/<db>.db``: a database created elsewhere keeps the
        warehouse's folder of that name. One without a location has no folder to remove."""
        db = self._hms_database(database)
        if db is None:
            if ignore_if_not_exists:
                return
            self._require_database(database)
        if self._call(lambda c: c.list_tables(database)):
            raise InvalidInput(f"database {database} is not empty")
        self._call(lambda c: c.drop_database(database, delete_data=False, cascade=False))
        if db is None or not db.locationUri:
            return
        try:
            self.file_io_for(db.locationUri).delete_empty_dir(local_location(db.locationUri))
        except Exception:  # noqa: BLE001 - an empty folder left behind harms nothing
            pass

    def _hms_database(self, database: str) -> ttypes.Database | None:
        validate_name("database", database)
        try:
            return self._call(lambda c: c.get_database(database))
        except NotFound:
            return None

    def database_location(self, database: str) -> str:
        """The database's folder as Java's ``HiveCatalog.getTableLocation`` derives a new
        table's (0.9 to 2.x): the ``locationUri`` the metastore holds, so a database created
        elsewhere than ``<warehouse>/<db>.db`` keeps its tables; ``<warehouse>/<db>.db`` (where
        ``create`` and ``repair`` put one) when the metastore has no such database or it has no
        location."""
        db = self._hms_database(database)
        if db is None or not db.locationUri:
            return super().database_location(database)
        return str(db.locationUri).rstrip("/")

    def storage_tables(self, database: str) -> list[str]:
        """Java's ``repairDatabase`` lists the tables under the database's ``locationUri``; a
        database the metastore holds without one has no folder of its own (Java fails on it),
        so nothing on storage is taken for its tables."""
        db = self._hms_database(database)
        if db is not None and not db.locationUri:
            return []
        return super().storage_tables(database)

    # -- tables ---------------------------------------------------------------------------------

    def _hms_table(self, ident: Identifier) -> ttypes.Table:
        table = self._call(lambda c: c.find_table(ident.database, ident.table))
        if table is None:
            raise NotFound(f"table {ident} does not exist in catalog {self.name}")
        return table

    def list_table_entries(self, database: str) -> list[TableEntry]:
        self._require_database(database)
        out = []
        with self.calls:
            names = self.client.list_tables(database)
            tables = [(n, self.client.find_table(database, n)) for n in names]
        for name, t in tables:
            if t is None:  # dropped meanwhile
                continue
            out.append(TableEntry(name, KINDS[hms_table_kind(t)], hms_table_location(t)))
        return sorted(out, key=lambda e: e.name)

    def table_location(self, ident: Identifier) -> str:
        table = self._hms_table(ident)
        kind = hms_table_kind(table)
        if kind != "paimon":
            raise not_paimon(ident, KINDS[kind], self.name)
        location = hms_table_location(table)
        if not location:
            raise InvalidInput(f"table {ident} in catalog {self.name} has no location")
        return location

    def is_managed(self, ident: Identifier) -> bool:
        return not is_external(self._hms_table(ident))

    def register_table(self, ident: Identifier, location: str, schema: TableSchema) -> None:
        _check_lower_case("table", ident.table)
        # Java's usingExternalTable: the catalog's table-type, or the table's own EXTERNAL option
        opts = schema.options
        external = self.options.table_type == "external" or \
            (opts.get("external", opts.get("EXTERNAL")) or "").upper() == "TRUE"
        table = build_hms_table(ident.database, ident.table, schema, hms_location(location),
                                external=external,
                                sync_all_properties=self.options.sync_all_properties)
        self._call(lambda c: c.create_table(table))

    def unregister_table(self, ident: Identifier) -> None:
        self._call(lambda c: c.drop_table(ident.database, ident.table, delete_data=False))

    def rename_registration(self, src: Identifier, dst: Identifier, new_location: str | None) -> None:
        """As Java: the metastore renames (and, for a managed table at its default location,
        moves the directory itself); a directory the metastore could not move is moved here and
        the new location recorded."""
        _check_lower_case("table", dst.table)
        old = self._hms_table(src)
        old_location = hms_table_location(old)
        renamed = copy.deepcopy(old)
        renamed.dbName, renamed.tableName = dst.database, dst.table
        self._call(lambda c: c.alter_table(src.database, src.table, renamed))
        if new_location is None or old_location is None:
            return
        path = local_location(old_location)
        if SchemaManager(self.file_io_for(old_location), path).latest() is not None:
            self.move_table_dir(old_location, new_location)
            now = self._hms_table(dst)
            now.sd.location = hms_location(new_location)
            self._call(lambda c: c.alter_table(dst.database, dst.table, now))

    def after_alter(self, ident: Identifier, old: TableSchema, new: TableSchema) -> None:
        """Java's ``alterTableToHms`` (2.x): columns and parameters from the new schema; the
        parameters the old schema's options put there and the new one lacks are dropped."""
        sync_all = self.options.sync_all_properties
        existing = self._hms_table(ident)
        removed = sorted(set(table_parameters(old, sync_all_properties=sync_all))
                         - set(table_parameters(new, sync_all_properties=sync_all)))
        updated = update_hms_table(existing, new, sync_all_properties=sync_all, removed_options=removed)
        self._call(lambda c: c.alter_table(ident.database, ident.table, updated))

    def schema_drift(self, ident: Identifier, schema: TableSchema) -> str | None:
        existing = self._hms_table(ident)
        wanted = update_hms_table(existing, schema, sync_all_properties=self.options.sync_all_properties)
        differ = [what for what, a, b in (
            ("columns", existing.sd.cols if existing.sd else None, wanted.sd.cols),
            ("partition keys", existing.partitionKeys or [], wanted.partitionKeys or []),
            ("parameters", existing.parameters or {}, wanted.parameters or {}),
        ) if a != b]
        return f"the metastore's {' and '.join(differ)} differ from schema {schema.id}" if differ else None

    def catalog_environment(self, ident: Identifier, schema: TableSchema,
                            branch: str | None = None) -> CatalogEnvironment:
        lock = self._lock_for(ident) if self._lock_enabled(ident) else None
        partitions, tags = _partition_sync(schema, MetastoreTablePartitions(self, ident))
        events = MetastoreTablePartitions(self, ident)
        return CatalogEnvironment(lock=lock if lock is not None else FILESYSTEM.lock, partitions=partitions,
                                  tags=tags, catalog=self.name, metastore=self.metastore, partition_events=events)

    def registration_environment(self, ident: Identifier, schema: TableSchema) -> CatalogEnvironment:
        partitions, tags = _partition_sync(schema, NotRegisteredYet())
        return CatalogEnvironment(partitions=partitions, tags=tags, catalog=self.name, metastore=self.metastore)

    def _lock_enabled(self, ident: Identifier) -> bool:
        """``lock.enabled``; unset, Java locks where the filesystem is an object store."""
        enabled = self.options.lock_enabled
        if enabled is not None:
            return enabled
        return self.file_io_for(self.table_location(ident)).is_object_store

    def _lock_for(self, ident: Identifier) -> HiveTableLock:
        with self.calls:
            lock = self._locks.get(ident)
            if lock is None:
                lock = self._locks[ident] = HiveTableLock(self._metastore_lock, ident.database, ident.table)
            return lock


def _check_lower_case(kind: str, name: str) -> None:
    """Java's HiveCatalog refuses upper case (the metastore would lower-case the name)."""
    if name != name.lower():
        raise InvalidInput(f"{kind} name {name!r} has upper case, which the Hive Metastore does not keep; "
                           "use lower case")

