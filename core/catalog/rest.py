"""The REST catalog (``metastore=rest``, Paimon 1.1+; Alibaba DLF serves it): the server owns the
catalog. Databases and tables are created, altered, dropped and renamed through its API, a
table's location and uuid come from the server, and the table's files are read where the server
says they are (with ``data-token.enabled``, with the table's short-lived data token, renewed
before it expires).

The server also owns a managed table's version history (Java ``supportsVersionManagement``):
every snapshot is published by the commit endpoint (:class:`RestSnapshotCommit`, on the base
snapshot's uuid with the commit's partition statistics), and rollback, tags, branches and
schema changes go through their endpoints (:class:`RestVersions`). The table's publish lock
refuses every write of Paimon metadata, so a path that forgot the server could never write
behind its back. As Java's REST catalog, expiration, consumers and orphan cleanup work on the
files (the API has no calls for them), and an external table (``isExternal``: registered, or
created with a ``path``) is committed through its files with the client's own storage options.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cached_property
from typing import Any, TypeVar

from ..errors import AlreadyExists, CorruptMetadata, InvalidInput, NotFound, NotYetSupported
from ..io import fileio
from ..io.fileio import FileIO
from ..refs.snapshot import Snapshot
from ..schema import schema_change as sc
from ..schema.schema_change import SchemaChange
from ..schema.schema_manager import SchemaManager, new_table_schema
from ..schema.table_schema import Schema, TableSchema
from ..table.catalog_environment import CatalogEnvironment, PartitionStatistics
from ..table.file_store_table import FileStoreTable
from ..table.identifiers import Identifier, validate_name
from ..utils.suggest import did_you_mean
from .base import PAIMON, Catalog, TableEntry, ident_of, local_location, not_paimon
from .options import CatalogOptions
from .rest_client import (
    CommitOutcome,
    DataTokenProvider,
    EndpointUnsupported,
    RestApi,
    RestNotFound,
    TableDetails,
)

T = TypeVar("T")
PAIMON_TABLE_TYPE = "table"
# data-token keys (Java's and pypaimon's) -> s3fs options
_S3_TOKEN_KEYS = {
    "fs.s3.accessKeyId": ("key",), "s3.access-key": ("key",), "fs.s3a.access.key": ("key",),
    "fs.s3.accessKeySecret": ("secret",), "s3.secret-key": ("secret",), "fs.s3a.secret.key": ("secret",),
    "fs.s3.securityToken": ("token",), "s3.session-token": ("token",), "fs.s3a.session.token": ("token",),
    "fs.s3.endpoint": ("client_kwargs", "endpoint_url"), "s3.endpoint": ("client_kwargs", "endpoint_url"),
    "fs.s3a.endpoint": ("client_kwargs", "endpoint_url"),
    "fs.s3.region": ("client_kwargs", "region_name"), "s3.region": ("client_kwargs", "region_name"),
}


class ServerCommitsLock:
    """The publish lock of a table whose catalog server commits: every publish of Paimon
    metadata goes through the server's endpoints, so one that reaches this lock is a path that
    forgot the server -- refused, never written behind its back."""

    def __init__(self, table: str, catalog: str) -> None:
        self.table = table
        self.catalog = catalog

    def run_with_lock(self, fn: Callable[[], T]) -> T:
        raise NotYetSupported(f"{self.table}: the table is served by REST catalog {self.catalog}, whose server "
                              "publishes its snapshots, schemas, tags and branches; this change has no call in the "
                              "REST API (nothing was changed)")


class RestSnapshotCommit:
    """Java's ``CatalogSnapshotCommit``: ``POST .../tables/{t}/commit`` with the table's uuid, the
    base snapshot's uuid, the snapshot and the commit's partition statistics."""

    def __init__(self, api: RestApi, ident: Identifier, table_uuid: str | None) -> None:
        self.api = api
        self.ident = ident
        self.table_uuid = table_uuid

    def commit(self, base: Snapshot | None, snapshot: Snapshot, branch: str | None,
               statistics: Sequence[PartitionStatistics]) -> bool:
        outcome = self.api.commit_snapshot(self.ident.database, self.ident.table, self.table_uuid,
                                           None if base is None else base.uuid, snapshot.to_dict(), list(statistics),
                                           branch)
        return outcome is CommitOutcome.COMMITTED


class RestVersions:
    """A managed table's versions through the server (Java's ``Catalog`` calls of a catalog that
    ``supportsVersionManagement``). A server that lacks an endpoint (501, or a 404 that names no
    missing resource) is refused by name; nothing was changed."""

    def __init__(self, catalog: RestCatalog, ident: Identifier) -> None:
        self.rest = catalog
        self.catalog = catalog.name
        self.ident = ident

    def _call(self, what: str, fn: Callable[[], Any]) -> None:
        try:
            fn()
        except EndpointUnsupported as e:
            raise NotYetSupported(f"{what} on {self.ident}: REST catalog {self.catalog} does not offer it ({e}); "
                                  "nothing was changed") from None
        except RestNotFound as e:
            if e.resource_type is None:
                raise NotYetSupported(f"{what} on {self.ident}: REST catalog {self.catalog} answered 404 without "
                                      f"naming a missing resource: it has no such endpoint ({e}); nothing was "
                                      "changed") from None
            raise

    def rollback_to(self, branch: str | None, target_id: int, *, tag: str | None = None,
                    from_snapshot: int | None = None) -> None:
        api, db, t = self.rest.api, self.ident.database, self.ident.table
        self._call("rollback", lambda: api.rollback_to(db, t, snapshot_id=None if tag else target_id, tag=tag,
                                                       from_snapshot=from_snapshot, branch=branch,
                                                       tag_snapshot_id=target_id))

    def create_tag(self, branch: str | None, name: str, snapshot_id: int | None,
                   time_retained_millis: int | None) -> None:
        retained = None if time_retained_millis is None else f"{time_retained_millis} ms"
        api, db, t = self.rest.api, self.ident.database, self.ident.table
        self._call("tag create", lambda: api.create_tag(db, t, name, snapshot_id, retained, branch))

    def delete_tag(self, branch: str | None, name: str) -> None:
        api, db, t = self.rest.api, self.ident.database, self.ident.table
        self._call("tag delete", lambda: api.delete_tag(db, t, name, branch))

    def create_branch(self, name: str, from_tag: str | None) -> None:
        api, db, t = self.rest.api, self.ident.database, self.ident.table
        self._call("branch create", lambda: api.create_branch(db, t, name, from_tag))

    def drop_branch(self, name: str) -> None:
        api, db, t = self.rest.api, self.ident.database, self.ident.table
        self._call("branch delete", lambda: api.drop_branch(db, t, name))

    def fast_forward(self, name: str) -> None:
        api, db, t = self.rest.api, self.ident.database, self.ident.table
        self._call("branch fast-forward", lambda: api.fast_forward(db, t, name))

    def alter_table(self, branch: str | None, changes: Sequence[SchemaChange]) -> None:
        self._call("alter", lambda: self.rest.alter_table(self.ident, list(changes), branch))


def schema_json(schema: TableSchema) -> dict[str, Any]:
    """The spec's ``Schema`` of a create request."""
    out: dict[str, Any] = {
        "fields": [f.to_json() for f in schema.fields],
        "partitionKeys": list(schema.partition_keys),
        "primaryKeys": list(schema.primary_keys),
        "options": dict(schema.options),
    }
    if schema.comment is not None:
        out["comment"] = schema.comment
    return out


def change_json(change: SchemaChange) -> dict[str, Any]:
    """Core's schema change as the spec's ``SchemaChange`` (Java's JSON)."""
    if isinstance(change, sc.SetOption):
        return {"action": "setOption", "key": change.key, "value": change.value}
    if isinstance(change, sc.RemoveOption):
        return {"action": "removeOption", "key": change.key}
    if isinstance(change, sc.UpdateComment):
        return {"action": "updateComment", "comment": change.comment}
    if isinstance(change, sc.AddColumn):
        out: dict[str, Any] = {"action": "addColumn", "fieldNames": [change.name], "dataType": change.type.to_json(),
                               "comment": change.description}
        if change.first:
            out["move"] = {"fieldName": change.name, "referenceFieldName": None, "type": "FIRST"}
        elif change.after is not None:
            out["move"] = {"fieldName": change.name, "referenceFieldName": change.after, "type": "AFTER"}
        return out
    if isinstance(change, sc.RenameColumn):
        return {"action": "renameColumn", "fieldNames": [change.old], "newName": change.new}
    if isinstance(change, sc.DropColumn):
        return {"action": "dropColumn", "fieldNames": [change.name]}
    if isinstance(change, sc.UpdateColumnType):
        return {"action": "updateColumnType", "fieldNames": [change.name], "newDataType": change.type.to_json(),
                "keepNullability": True}
    raise NotYetSupported(f"schema change {type(change).__name__} through a REST catalog")


def storage_options_of_token(token: dict[str, str], location: str) -> dict[str, Any]:
    """A data token's options as fsspec options for ``location``'s filesystem."""
    scheme, _ = fileio._split_scheme(location)
    if scheme in ("", "file"):
        return {}
    if scheme in ("s3", "s3a"):
        out: dict[str, Any] = {}
        for k, v in token.items():
            path = _S3_TOKEN_KEYS.get(k)
            if path is None:
                continue
            d = out
            for part in path[:-1]:
                d = d.setdefault(part, {})
            d[path[-1]] = v
        if "key" not in out:
            raise NotYetSupported(f"{location}: the REST catalog's data token carries no S3 access key paimon-cli "
                                  f"knows (keys: {', '.join(sorted(token)) or 'none'})")
        return out
    raise NotYetSupported(f"{location}: data tokens for {scheme}:// are not supported yet (S3 only)")


class RestCatalog(Catalog):
    """Databases and tables of a REST catalog server (``uri``; ``warehouse`` names the catalog on
    the server, it is not a path)."""

    metastore = "rest"
    server_places_tables = True

    def __init__(self, options: CatalogOptions, storage_options: dict[str, Any] | None = None,
                 **client_kw: Any) -> None:
        super().__init__(options, storage_options)
        self._client_kw = client_kw
        self._tokens: dict[tuple[str, str], DataTokenProvider] = {}

    @cached_property
    def api(self) -> RestApi:
        """Connected on first use (``GET /v1/config``)."""
        return RestApi.connect(self.options.raw, self.name, **self._client_kw)

    # -- files ------------------------------------------------------------------------------------

    def file_io_for(self, location: str) -> FileIO:
        return fileio.load_file_io(location, self.storage_options)

    def _table_file_io(self, ident: Identifier, d: TableDetails) -> FileIO:
        """The table's FileIO. A managed table with ``data-token.enabled`` on an object store
        reads and writes with the table's data token, renewed before it expires (Java's
        ``RESTTokenFileIO``); an external table with the client's own storage options (Java
        gives it no token either)."""
        location = d.path
        scheme, _ = fileio._split_scheme(location)
        if d.is_external or not self.api.data_token_enabled or scheme in ("", "file"):
            return self.file_io_for(location)
        key = (ident.database, ident.table)
        provider = self._tokens.get(key)
        if provider is None:
            provider = self._tokens[key] = DataTokenProvider(self.api, ident.database, ident.table)
        seen: list[Any] = [None, None]  # the token last converted, its storage options

        def credentials() -> dict[str, Any]:
            token = provider.token()
            if token is not seen[0]:
                seen[:] = [token, storage_options_of_token(token.options, location)]
            return seen[1]

        return fileio.RefreshingFileIO(location, self._storage_with_env(), credentials)

    def _storage_with_env(self) -> dict[str, Any]:
        """The catalog's storage options over ``PAIMON_FS_OPTIONS``, as load_file_io merges them."""
        return fileio.load_file_io("file:///", self.storage_options).storage_options

    # -- databases ----------------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        return sorted(self.api.list_databases())

    def database_exists(self, database: str) -> bool:
        validate_name("database", database)
        try:
            self.api.get_database(database)
        except RestNotFound:
            return False
        return True

    def create_database(self, database: str, ignore_if_exists: bool = False) -> None:
        validate_name("database", database)
        try:
            self.api.create_database(database)
        except AlreadyExists:
            if not ignore_if_exists:
                raise AlreadyExists(f"database {database} already exists") from None

    def drop_database(self, database: str, ignore_if_not_exists: bool = False) -> None:
        if not self.database_exists(database):
            if ignore_if_not_exists:
                return
            self._require_database(database)
        left = self.api.list_tables(database)
        if left:
            raise InvalidInput(f"database {database} is not empty ({len(left)} table(s) in catalog {self.name})")
        self.api.drop_database(database)

    # -- tables -------------------------------------------------------------------------------------

    def list_table_entries(self, database: str) -> list[TableEntry]:
        self._require_database(database)
        return sorted((TableEntry(d.name, PAIMON if d.table_type == PAIMON_TABLE_TYPE else d.table_type, d.path)
                       for d in self.api.list_table_details(database)), key=lambda e: e.name)

    def details(self, ident: Identifier, branch: str | None = None) -> TableDetails:
        """The server's answer for a table; NotFound naming the catalog when it has none."""
        try:
            return self.api.get_table(ident.database, ident.table, branch)
        except RestNotFound as e:
            if e.resource_type == "DATABASE":
                raise NotFound(f"database {ident.database} does not exist in catalog {self.name}") from None
            if e.resource_type == "BRANCH":
                raise NotFound(f"branch {branch} of table {ident} does not exist") from None
            raise NotFound(f"table {ident} does not exist in catalog {self.name}") from None

    def table_location(self, ident: Identifier) -> str:
        d = self.details(ident)
        if d.table_type != PAIMON_TABLE_TYPE:
            raise not_paimon(ident, d.table_type, self.name)
        return d.path

    def is_managed(self, ident: Identifier) -> bool:
        return not self.details(ident).is_external

    def new_table_location(self, ident: Identifier) -> str:
        raise NotYetSupported(f"catalog {self.name}: the REST server decides where table {ident} goes")

    def catalog_environment(self, ident: Identifier, schema: TableSchema,
                            branch: str | None = None) -> CatalogEnvironment:
        return self._environment(ident, self.details(ident))

    def _environment(self, ident: Identifier, d: TableDetails) -> CatalogEnvironment:
        """A managed table's snapshots and versions go through the server; an external one's
        through its files, without a lock (Java gives an external REST table no catalog loader)."""
        if d.is_external:
            return CatalogEnvironment(catalog=self.name)
        return CatalogEnvironment(lock=ServerCommitsLock(ident.full_name, self.name), catalog=self.name,
                                  snapshot_commit=RestSnapshotCommit(self.api, ident, d.id),
                                  versions=RestVersions(self, ident), metastore=self.metastore)

    def get_table(self, identifier: str | Identifier, branch: str | None = None) -> FileStoreTable:
        ident = ident_of(identifier)
        if branch is not None:
            validate_name("branch", branch)
        validate_name("database", ident.database)
        try:
            d = self.details(ident)
        except NotFound:
            if not self.database_exists(ident.database):
                raise NotFound(f"database {ident.database} does not exist in catalog {self.name}"
                               f"{did_you_mean(ident.database, self.list_databases())}") from None
            raise NotFound(f"table {ident} does not exist in catalog {self.name}"
                           f"{did_you_mean(ident.table, self.list_tables(ident.database))}") from None
        if d.table_type != PAIMON_TABLE_TYPE:
            raise not_paimon(ident, d.table_type, self.name)
        path = local_location(d.path)
        fio = self._table_file_io(ident, d)
        schema = SchemaManager(fio, path).latest()
        if schema is None:
            raise CorruptMetadata(d.path, f"table {ident} is served by catalog {self.name} but no Paimon schema is "
                                          "there")
        return self.with_iceberg_committer(FileStoreTable.load(fio, path, ident, branch, self._environment(ident, d)))

    def create_table(self, identifier: str | Identifier, schema: Schema,
                     ignore_if_exists: bool = False) -> FileStoreTable:
        """The server creates the table (its location, its schema-0); the schema is checked here
        first, so a refused request sends nothing."""
        ident = ident_of(identifier)
        validate_name("database", ident.database)
        validate_name("table", ident.table)
        checked = new_table_schema(schema)
        kind = checked.options.get("type", PAIMON_TABLE_TYPE).strip().lower()
        if kind != PAIMON_TABLE_TYPE:
            raise NotYetSupported(f"create {ident}: type={kind} is not a Paimon table; paimon-cli creates Paimon "
                                  "tables only")
        if self.table_exists(ident):
            if ignore_if_exists:
                return self.get_table(ident)
            raise AlreadyExists(f"table {ident} already exists")
        self._check_unregistered(ident)
        self.create_database(ident.database, ignore_if_exists=True)
        try:
            self.api.create_table(ident.database, ident.table, schema_json(checked))
        except AlreadyExists:
            if not ignore_if_exists:
                raise AlreadyExists(f"table {ident} already exists") from None
        return self.get_table(ident)

    def register_table(self, ident: Identifier, location: str, schema: TableSchema) -> None:
        self.api.register_table(ident.database, ident.table, location)

    def unregister_table(self, ident: Identifier) -> None:
        self.api.drop_table(ident.database, ident.table)

    def drop_table(self, identifier: str | Identifier, ignore_if_not_exists: bool = False) -> str | None:
        """The server forgets the table and (managed tables) deletes its files, as Java's
        REST catalog drops; returns the location whose files went, None when kept."""
        ident = ident_of(identifier)
        self._require_database(ident.database)
        try:
            d = self.details(ident)
        except NotFound:
            if ignore_if_not_exists:
                return None
            raise
        self.api.drop_table(ident.database, ident.table)
        return None if d.is_external else d.path

    def rename_table(self, src: str | Identifier, dst: str | Identifier) -> None:
        a, b = ident_of(src), ident_of(dst)
        self.details(a)
        self._require_database(b.database)
        if any(e.name == b.table for e in self.list_table_entries(b.database)):
            raise AlreadyExists(f"table {b} already exists")
        self.api.rename_table((a.database, a.table), (b.database, b.table))

    def rename_registration(self, src: Identifier, dst: Identifier, new_location: str | None) -> None:
        self.api.rename_table((src.database, src.table), (dst.database, dst.table))

    def alter_table(self, identifier: str | Identifier, changes: list[SchemaChange],
                    branch: str | None = None) -> TableSchema:
        """The server commits the new schema; the changes are checked here first (the same
        rules as a local alter), so a refused change sends nothing."""
        table = self.get_table(identifier, branch)
        old, _ = table.schema_manager.plan_changes(changes)
        manager = SchemaManager(table.file_io, table.path, table.branch)

        def verify() -> bool | None:
            latest = manager.latest()
            if latest is None:
                return None
            return True if latest.id == old.id + 1 else False if latest.id == old.id else None

        self.api.alter_table(table.identifier.database, table.identifier.table, [change_json(c) for c in changes],
                             verify=verify, branch=table.branch)
        new = manager.latest()
        if new is None or new.id <= old.id:
            raise NotFound(f"table {table.identifier}: the server accepted the change but schema {old.id + 1} is not "
                           f"at {manager.schema_dir}")
        return new
