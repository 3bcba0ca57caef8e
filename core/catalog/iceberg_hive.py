"""``metadata.iceberg.storage=hive-catalog``: the Iceberg metadata registered in a Hive Metastore
(Java ``IcebergHiveMetadataCommitter``), so Iceberg's Hive catalog (Spark, Trino, pyiceberg)
finds the table by name.

The metadata files are written as for ``hadoop-catalog`` (``core/iceberg``); after each new head
version the metastore table ``<metadata.iceberg.database>.<metadata.iceberg.table>`` (the
Paimon identifier by default) gets ``metadata_location`` -> that version and
``previous_metadata_location`` -> the one it pointed at before (Iceberg's own rule). A missing
database is created at the Iceberg database directory, a missing table as Java creates it: an
``EXTERNAL_TABLE`` with ``table_type=ICEBERG`` whose location is the Iceberg table directory.

Where Java overwrites what it finds, we refuse: a metastore table of that name that is neither
this Paimon table's own entry (which Java 2.x stamps ``table_type=ICEBERG``, as we do) nor an
Iceberg table whose metadata is in our metadata directory is refused before the commit (exit 6),
with nothing changed.
"""

from __future__ import annotations

import getpass
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import InvalidInput, NotFound, NotYetSupported, PaimonError, UnsafeRefused
from ..io.fileio import parent
from ..schema import iceberg_options as io_opts
from ..table.identifiers import Identifier
from .hive_metastore import HiveMetastoreClient, metastore_clients
from .hms_table import (
    EXTERNAL_PROP,
    EXTERNAL_TABLE,
    TABLE_TYPE_PROP,
    hive_type_name,
    hms_table_location,
    is_paimon_table,
    normalize_column_comment,
)
from .options import HIVE_CLIENT_SOCKET_TIMEOUT

if TYPE_CHECKING:
    from pymetastore.hive_metastore import ttypes

    from ..schema.table_schema import TableSchema
    from ..table.file_store_table import FileStoreTable

ICEBERG_TABLE_TYPE = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
URI = "metadata.iceberg.uri"
DATABASE = "metadata.iceberg.database"
TABLE = "metadata.iceberg.table"
HIVE_CONF_DIR = "metadata.iceberg.hive-conf-dir"
GLUE_SKIP_ARCHIVE = "metadata.iceberg.glue.skip-archive"
SKIP_UPDATE_STATS = "metadata.iceberg.hive-skip-update-stats"
INPUT_FORMAT = "org.apache.hadoop.mapred.FileInputFormat"
OUTPUT_FORMAT = "org.apache.hadoop.mapred.FileOutputFormat"
SERDE = "org.apache.hadoop.hive.serde2.lazy.LazySimpleSerDe"


def metastore_uri(options: Mapping[str, str], catalog_uri: str | None) -> str | None:
    """``metadata.iceberg.uri``, else ``hive.metastore.uris`` of ``metadata.iceberg.hive-conf-dir``,
    else the uri of the Hive catalog serving the table (None: no metastore to register in)."""
    uri = (options.get(URI) or "").strip()
    if uri:
        return uri
    conf_dir = (options.get(HIVE_CONF_DIR) or "").strip()
    if conf_dir:
        from .hive import hive_site

        site_uri = hive_site(conf_dir).get("hive.metastore.uris", "").strip()
        if site_uri:
            return site_uri
    return catalog_uri or None


def socket_timeout(options: Mapping[str, str], catalog_timeout: str | None) -> str | None:
    """``hive.metastore.client.socket.timeout`` of the registration's metastore client: a table
    option (Java sets every table option on the committer's HiveConf), else ``hive-site.xml``
    of ``metadata.iceberg.hive-conf-dir``, else the serving catalog's, else unset (600 s)."""
    if options.get(HIVE_CLIENT_SOCKET_TIMEOUT) is not None:
        return options[HIVE_CLIENT_SOCKET_TIMEOUT]
    conf_dir = (options.get(HIVE_CONF_DIR) or "").strip()
    if conf_dir:
        from .hive import hive_site

        site_value = hive_site(conf_dir).get(HIVE_CLIENT_SOCKET_TIMEOUT)
        if site_value is not None:
            return site_value
    return catalog_timeout


def target_names(options: Mapping[str, str], ident: Identifier) -> tuple[list[str], str]:
    """The metastore databases (Java 2.x: ``metadata.iceberg.database`` may list several,
    ``;``-separated) and the table name the metadata is registered under."""
    raw = (options.get(DATABASE) or "").strip()
    databases = [d.strip() for d in raw.split(";") if d.strip()] if raw else [ident.database]
    table = (options.get(TABLE) or "").strip() or ident.table
    for name in (*databases, table):
        if name != name.lower():
            raise InvalidInput(f"Iceberg metastore name {name!r} ({DATABASE} / {TABLE}) has upper case, which the "
                               "Hive Metastore does not keep; use lower case")
    return databases, table


@dataclass
class HiveIcebergCommitter:
    """The ``IcebergMetadataCommitter`` of one table under ``hive-catalog`` storage."""

    uri: str
    ident: Identifier  # the Paimon table
    table_location: str  # the Paimon table's location as the metastore stores it (``file:/...``)
    databases: list[str]
    table: str
    iceberg_db_location: str  # where a database created for it lives (Java ``catalogDatabasePath``)
    metadata_dir: str  # the Iceberg metadata directory, as the metastore stores locations
    schema: Callable[[], TableSchema]  # the latest schema (columns of a created table)
    options: Mapping[str, str]
    to_hms_location: Callable[[str], str]
    client_factory: Callable[[str], HiveMetastoreClient] = HiveMetastoreClient

    def _client(self) -> HiveMetastoreClient:
        return self.client_factory(self.uri)

    def _own_entry(self, hms: ttypes.Table, database: str) -> bool:
        """Whether the metastore table is this Paimon table's own registration (same name in a
        Hive catalog on the same metastore)."""
        if not is_paimon_table(hms) or (database, self.table) != (self.ident.database, self.ident.table):
            return False
        location = hms_table_location(hms)
        return location is not None and location.rstrip("/") == self.table_location.rstrip("/")

    def _refusal(self, hms: ttypes.Table, database: str) -> str | None:
        params = hms.parameters or {}
        if self._own_entry(hms, database):
            return None
        if (params.get(TABLE_TYPE_PROP) or "").upper() == ICEBERG_TABLE_TYPE:
            current = params.get(METADATA_LOCATION)
            if not current or parent(current).rstrip("/") == self.metadata_dir.rstrip("/"):
                return None
            # Java repoints it; an Iceberg table of someone else's would silently become ours
            return (f"metadata.iceberg.storage=hive-catalog: the Hive Metastore table "
                    f"{database}.{self.table} at {self.uri} is another Iceberg table (its metadata is at {current}, "
                    f"ours under {self.metadata_dir}); it would be overwritten -- drop it or set {DATABASE} / "
                    f"{TABLE} (nothing was changed)")
        kind = "a Paimon table" if is_paimon_table(hms) else f"a {hms.tableType or 'Hive'} table"
        return (f"metadata.iceberg.storage=hive-catalog: the Hive Metastore table "
                f"{database}.{self.table} at {self.uri} is {kind}, not an Iceberg table (table_type="
                f"{params.get(TABLE_TYPE_PROP)}); it would be overwritten -- drop it or set {DATABASE} / {TABLE} "
                "(nothing was changed)")

    def check(self, action: str) -> None:
        with self._client() as client:
            for database in self.databases:
                hms = client.find_table(database, self.table) if _database_exists(client, database) else None
                if hms is not None:
                    why = self._refusal(hms, database)
                    if why is not None:
                        raise UnsafeRefused(f"{action} on {self.ident}: {why}")

    def commit_metadata(self, metadata_path: str) -> None:
        location = self.to_hms_location(metadata_path)
        table_dir = self.to_hms_location(parent(parent(metadata_path)))
        with self._client() as client:
            for database in self.databases:
                self._commit_one(client, database, location, table_dir)

    def _commit_one(self, client: HiveMetastoreClient, database: str, location: str, table_dir: str) -> None:
        if not _database_exists(client, database):
            client.create_database(database, self.iceberg_db_location)
        hms = client.find_table(database, self.table)
        if hms is None:
            hms = self._new_table(database, table_dir)
            client.create_table(hms)
        why = self._refusal(hms, database)
        if why is not None:  # created meanwhile (the check before the commit passed)
            raise UnsafeRefused(f"{self.ident}: {why}")
        params = hms.parameters if hms.parameters is not None else {}
        hms.parameters = params
        previous = params.get(METADATA_LOCATION)
        params[TABLE_TYPE_PROP] = ICEBERG_TABLE_TYPE
        params[METADATA_LOCATION] = location
        if previous and previous != location:
            params[PREVIOUS_METADATA_LOCATION] = previous
        if not self._own_entry(hms, database):  # the Paimon entry's columns are its catalog's to keep
            hms.sd.cols = self._columns()
        client.alter_table(database, self.table, hms, environment={
            "skipAWSGlueArchive": str(_flag(self.options, GLUE_SKIP_ARCHIVE)).lower(),
            "DO_NOT_UPDATE_STATS": str(_flag(self.options, SKIP_UPDATE_STATS)).lower(),
        })

    def _columns(self) -> list[ttypes.FieldSchema]:
        from pymetastore.hive_metastore import ttypes

        return [ttypes.FieldSchema(name=f.name, type=hive_type_name(f.type),
                                   comment=normalize_column_comment(f.description)) for f in self.schema().fields]

    def _new_table(self, database: str, table_dir: str) -> ttypes.Table:
        """As Java's ``createTable``: external, ``table_type=ICEBERG``, located at the Iceberg
        table directory (the metadata directory's parent)."""
        from pymetastore.hive_metastore import ttypes

        now = int(time.time())
        sd = ttypes.StorageDescriptor(
            cols=self._columns(), location=table_dir, inputFormat=INPUT_FORMAT,
            outputFormat=OUTPUT_FORMAT, serdeInfo=ttypes.SerDeInfo(serializationLib=SERDE, parameters={}),
            parameters={})
        params = {"DO_NOT_UPDATE_STATS": str(_flag(self.options, SKIP_UPDATE_STATS)).lower(),
                  EXTERNAL_PROP: "TRUE", TABLE_TYPE_PROP: ICEBERG_TABLE_TYPE}
        return ttypes.Table(tableName=self.table, dbName=database, owner=getpass.getuser(), createTime=now,
                            lastAccessTime=now, retention=2147483647, sd=sd, partitionKeys=[], parameters=params,
                            tableType=EXTERNAL_TABLE)


def _database_exists(client: HiveMetastoreClient, database: str) -> bool:
    try:
        client.get_database(database)
    except NotFound:
        return False
    return True


def _flag(options: Mapping[str, str], key: str) -> bool:
    from ..schema.options import parse_bool

    raw = options.get(key)
    return False if raw is None or not raw.strip() else parse_bool(raw, key)


NO_METASTORE = ("metadata.iceberg.storage=hive-catalog needs a Hive Metastore to register the Iceberg metadata in: "
                "set metadata.iceberg.uri (a table of a Hive catalog uses the catalog's uri) (nothing was changed)")


@dataclass(frozen=True)
class UnusableCommitter:
    """A ``hive-catalog`` table whose registration cannot be made (no metastore uri, a bad
    name or hive-conf-dir): opening and reading it go on, its commits are refused by the gate."""

    ident: Identifier
    error: type[PaimonError]
    why: str

    def check(self, action: str) -> None:
        raise self.error(f"{action} on {self.ident}: {self.why}")

    def commit_metadata(self, metadata_path: str) -> None:
        raise self.error(f"{self.ident}: {self.why}")


def hive_iceberg_committer(table: FileStoreTable, catalog_uri: str | None,
                           catalog_timeout: str | None = None) -> HiveIcebergCommitter | UnusableCommitter | None:
    """The committer of a table with ``hive-catalog`` storage, None for other storages and
    branches (the gate refuses a branch's commits), an :class:`UnusableCommitter` when the
    registration cannot be set up (the gate raises its error before a commit). Its metastore
    calls are bounded by :func:`socket_timeout` (``catalog_timeout``: the catalog's setting)."""
    options = table.schema.options
    try:
        storage = io_opts.iceberg_options(options).storage
    except InvalidInput:
        return None  # the gate names the malformed option
    if storage != io_opts.HIVE_CATALOG or table.branch is not None:
        return None
    from ..iceberg.metadata_files import metadata_dir  # only now: a read of other tables loads no Iceberg code
    from .hive import hms_location

    try:
        uri = metastore_uri(options, catalog_uri)
        if uri is None:
            return UnusableCommitter(table.identifier, NotYetSupported, NO_METASTORE)
        databases, name = target_names(options, table.identifier)
        meta_dir = metadata_dir(table)
        clients = metastore_clients(socket_timeout(options, catalog_timeout))
    except (NotFound, InvalidInput, NotYetSupported) as e:
        return UnusableCommitter(table.identifier, type(e), str(e))
    sm = table.schema_manager
    return HiveIcebergCommitter(
        uri=uri, ident=table.identifier, table_location=hms_location(table.file_io.absolute(table.path)),
        databases=databases, table=name, iceberg_db_location=hms_location(parent(parent(meta_dir))),
        metadata_dir=hms_location(meta_dir),
        schema=lambda: sm.latest() or table.schema, options=options, to_hms_location=hms_location,
        client_factory=clients)


__all__ = ["HiveIcebergCommitter", "UnusableCommitter", "hive_iceberg_committer", "metastore_uri", "socket_timeout",
           "target_names"]
