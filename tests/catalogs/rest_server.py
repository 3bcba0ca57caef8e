"""A Paimon REST catalog server for tests, written from the OpenAPI spec
(``docs/static/rest-catalog-open-api.yaml`` of apache/paimon), backed by a filesystem warehouse.

No REST catalog server can be installed here, so the tests run this one on 127.0.0.1. It keeps
the rules a real server keeps and a client must live with:

* the catalog is the server's: databases, tables (uuid, location, managed or external) and the
  partitions' statistics live in the server; table files live under ``<root>/<db>.db/<table>``
  (an external table where its ``path`` option says);
* a commit is ``POST .../tables/{t}/commit`` with the snapshot the client wrote the manifests
  for; the server publishes ``snapshot-N`` and ``LATEST`` itself, and answers
  ``{"success": false}`` when ``baseSnapshotUuid`` is not the uuid of the latest snapshot (or the
  id does not follow it): the client must re-plan on a fresh base;
* version management (rollback, tags, branches, consumers) runs on the server;
* with ``data-token.enabled`` the server hands out short-lived data tokens
  (``GET .../tables/{t}/token``).

Faults are injected per operation (the spec's ``operationId``): a status answered instead of the
call (before it ran), or after it ran (a lost answer), and slow answers. Every call is recorded
(:attr:`RestCatalogServer.calls`) so a test can see what a client asked.

The server's own table work (schema files, tags, rollback, branches) uses paimon-cli's core on
the filesystem, as upstream's mock server uses Java Paimon's filesystem catalog; the commit
endpoint writes the client's snapshot JSON verbatim. That it is honest is proven by an
independent client, pypaimon 2.1 (``tests/catalogs/test_rest_server_pypaimon.py``).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote_plus, urlsplit

from paimon_cli.core.data.types import DataField, data_type_from_json
from paimon_cli.core.errors import AlreadyExists, CommitConflict, InvalidInput, NotFound, NotYetSupported, PaimonError
from paimon_cli.core.io.fileio import FileIO, load_file_io
from paimon_cli.core.operation import branch_ops, tag_ops
from paimon_cli.core.operation.rollback import rollback
from paimon_cli.core.refs.consumers import ConsumerManager
from paimon_cli.core.refs.snapshot import SnapshotManager
from paimon_cli.core.refs.tags import TagManager
from paimon_cli.core.schema import schema_change as sc
from paimon_cli.core.schema.schema_manager import SchemaManager
from paimon_cli.core.schema.table_schema import Schema, TableSchema
from paimon_cli.core.table.file_store_table import FileStoreTable
from paimon_cli.core.table.identifiers import Identifier
from paimon_cli.core.utils.durations import parse_duration_millis
from tests.catalogs import dlf_verify
from tests.catalogs.dlf_verify import DlfKeys

DEFAULT_WAREHOUSE = "rest_warehouse"
DEFAULT_PREFIX = "paimon"
DEFAULT_TOKEN = "test-bearer-token"
PATH_OPTION = "path"
PARTITIONED_IN_METASTORE = "metastore.partitioned-table"
BRANCH_SEP = "$branch_"


class ApiError(Exception):
    """An error answer: the spec's ``ErrorResponse``."""

    def __init__(self, code: int, message: str, resource_type: str | None = None,
                 resource_name: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.resource_type = resource_type
        self.resource_name = resource_name

    def body(self) -> dict[str, Any]:
        return {"message": self.message, "resourceType": self.resource_type,
                "resourceName": self.resource_name, "code": self.code}


def not_found(kind: str, name: str, message: str | None = None) -> ApiError:
    return ApiError(404, message or f"{kind.lower()} {name} does not exist", kind, name)


@dataclass
class Fault:
    """What the server does wrong on ``operation`` (an ``operationId`` of the spec, or ``*``).

    ``status``: answered instead of the call (``after=False``: nothing was done) or once the call
    has been done (``after=True``: the client loses the answer of a change that happened).
    ``delay``: seconds to wait first (a slow server). ``times``: how many calls it hits (None:
    every one). ``when``: a further filter on the call (e.g. one table). ``action``: run before
    the call is served, outside the server's lock (e.g. another writer commits meanwhile).
    """

    operation: str
    status: int | None = None
    delay: float = 0.0
    after: bool = False
    times: int | None = 1
    message: str = "injected fault"
    when: Callable[[Call], bool] | None = None
    action: Callable[[Call], None] | None = None
    hits: int = 0

    def matches(self, call: Call) -> bool:
        if self.operation not in ("*", call.operation):
            return False
        if self.times is not None and self.hits >= self.times:
            return False
        return self.when is None or self.when(call)


@dataclass
class Call:
    """One request as the server saw it."""

    method: str
    path: str
    operation: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    params: dict[str, str] = field(default_factory=dict)
    status: int = 0
    answer: Any = None

    @property
    def table(self) -> str | None:
        if "database" in self.params and "table" in self.params:
            return f"{self.params['database']}.{self.params['table']}"
        return None


@dataclass
class TableEntry:
    """The server's record of one table."""

    uuid: str
    location: str  # local path
    external: bool
    owner: str = "paimon-test"
    created_at: int = field(default_factory=lambda: int(time.time() * 1000))


@dataclass
class DatabaseEntry:
    options: dict[str, str] = field(default_factory=dict)
    created_at: int = field(default_factory=lambda: int(time.time() * 1000))
    uuid: str = field(default_factory=lambda: str(uuid.uuid4()))


_SEG = r"(?P<{}>[^/]+)"
_TABLE = "/v1/{prefix}/databases/" + _SEG.format("database") + "/tables/" + _SEG.format("table")
ROUTES: list[tuple[str, str, str]] = [
    ("GET", "/v1/config", "getConfig"),
    ("GET", "/v1/{prefix}/databases", "listDatabases"),
    ("POST", "/v1/{prefix}/databases", "createDatabase"),
    ("GET", "/v1/{prefix}/databases/" + _SEG.format("database"), "getDatabase"),
    ("DELETE", "/v1/{prefix}/databases/" + _SEG.format("database"), "dropDatabase"),
    ("POST", "/v1/{prefix}/databases/" + _SEG.format("database"), "alterDatabase"),
    ("POST", "/v1/{prefix}/databases/" + _SEG.format("database") + "/register", "registerTable"),
    ("GET", "/v1/{prefix}/databases/" + _SEG.format("database") + "/tables", "listTables"),
    ("POST", "/v1/{prefix}/databases/" + _SEG.format("database") + "/tables", "createTable"),
    ("GET", "/v1/{prefix}/databases/" + _SEG.format("database") + "/table-details", "listTableDetails"),
    ("POST", "/v1/{prefix}/tables/rename", "renameTable"),
    ("GET", "/v1/{prefix}/tables", "listTablesGlobally"),
    ("GET", _TABLE, "getTable"),
    ("POST", _TABLE, "alterTable"),
    ("DELETE", _TABLE, "dropTable"),
    ("POST", _TABLE + "/commit", "commitTable"),
    ("POST", _TABLE + "/rollback", "rollbackTable"),
    ("GET", _TABLE + "/token", "getTableToken"),
    ("GET", _TABLE + "/snapshot", "getTableSnapshot"),
    ("GET", _TABLE + "/snapshots", "listSnapshots"),
    ("GET", _TABLE + "/snapshots/" + _SEG.format("version"), "getVersionSnapshot"),
    ("GET", _TABLE + "/partitions", "listPartitions"),
    ("POST", _TABLE + "/partitions", "createPartitions"),
    ("POST", _TABLE + "/partitions/drop", "dropPartitions"),
    ("POST", _TABLE + "/partitions/mark", "markDonePartitions"),
    ("GET", _TABLE + "/branches", "listBranches"),
    ("POST", _TABLE + "/branches", "createBranch"),
    ("DELETE", _TABLE + "/branches/" + _SEG.format("branch"), "dropBranch"),
    ("POST", _TABLE + "/branches/" + _SEG.format("branch") + "/rename", "renameBranch"),
    ("POST", _TABLE + "/branches/" + _SEG.format("branch") + "/forward", "forwardBranch"),
    ("GET", _TABLE + "/tags", "listTags"),
    ("POST", _TABLE + "/tags", "createTag"),
    ("GET", _TABLE + "/tags/" + _SEG.format("tag"), "getTag"),
    ("DELETE", _TABLE + "/tags/" + _SEG.format("tag"), "deleteTag"),
    ("GET", _TABLE + "/consumers", "listConsumers"),
    ("POST", _TABLE + "/consumers/reset", "resetConsumer"),
]
# the spec's operations this server does not implement answer 501 by name
UNIMPLEMENTED = {
    ("GET", "/v1/{prefix}/tables/id/" + _SEG.format("id")): "getTableById",
    ("POST", _TABLE + "/rollback-schema"): "rollbackSchema",
    ("POST", _TABLE + "/auth"): "authTableQuery",
    ("POST", _TABLE + "/partitions/list-by-names"): "listPartitionsByNames",
    ("POST", _TABLE + "/partitions/list-by-filter"): "listPartitionsByFilter",
}


def _split_object(obj: str) -> tuple[str, str | None]:
    """``t$branch_b`` -> (``t``, ``b``): REST carries a branch in the object name."""
    if BRANCH_SEP in obj:
        table, branch = obj.split(BRANCH_SEP, 1)
        return table, branch or None
    if "$" in obj:
        raise ApiError(400, f"object name {obj!r}: system tables are not served by this server")
    return obj, None


def _like(pattern: str | None, name: str) -> bool:
    """The spec's name patterns: SQL LIKE, prefix matching only (``abc%``)."""
    if not pattern:
        return True
    if pattern.endswith("%") and "%" not in pattern[:-1]:
        return name.startswith(pattern[:-1])
    if "%" in pattern:
        raise ApiError(400, f"name pattern {pattern!r}: only prefix matching (abc%) is supported")
    return name == pattern


def _page(items: list[Any], key: Callable[[Any], str], query: dict[str, str], max_default: int = 1000
          ) -> tuple[list[Any], str | None]:
    """One page of ``items`` sorted by ``key``: ``pageToken`` is the last key of the previous
    page, ``nextPageToken`` is set while more remain."""
    raw = query.get("maxResults")
    try:
        limit = int(raw) if raw else max_default
    except ValueError:
        raise ApiError(400, f"maxResults={raw!r} is not a number") from None
    if limit <= 0:
        limit = max_default
    ordered = sorted(items, key=key)
    token = query.get("pageToken")
    if token:
        ordered = [x for x in ordered if key(x) > token]
    page = ordered[:limit]
    more = len(ordered) > limit
    return page, (key(page[-1]) if more and page else None)


def _schema_json(schema: TableSchema) -> dict[str, Any]:
    """The spec's ``Schema`` of a table (no ``path`` option: that travels as ``path``)."""
    options = {k: v for k, v in schema.options.items() if k != PATH_OPTION}
    out: dict[str, Any] = {
        "fields": [f.to_json() for f in schema.fields],
        "partitionKeys": list(schema.partition_keys),
        "primaryKeys": list(schema.primary_keys),
        "options": options,
    }
    if schema.comment is not None:
        out["comment"] = schema.comment
    return out


def _schema_from_json(obj: Any) -> Schema:
    if not isinstance(obj, dict) or not isinstance(obj.get("fields"), list):
        raise ApiError(400, "schema: expected an object with 'fields'")
    try:
        fields = [DataField.from_json(f) for f in obj["fields"]]
    except (InvalidInput, TypeError, ValueError) as e:
        raise ApiError(400, f"schema: {e}") from None
    return Schema(
        fields=fields,
        partition_keys=[str(x) for x in obj.get("partitionKeys") or []],
        primary_keys=[str(x) for x in obj.get("primaryKeys") or []],
        options={str(k): str(v) for k, v in (obj.get("options") or {}).items()},
        comment=obj.get("comment"),
    )


def _one_name(change: dict[str, Any]) -> str:
    names = change.get("fieldNames") or []
    if len(names) != 1:
        raise ApiError(501, f"schema change {change.get('action')} of a nested field {names!r} is not "
                            "supported by this test server")
    return str(names[0])


def _schema_change(change: Any) -> sc.SchemaChange:
    """The spec's ``SchemaChange`` (discriminated by ``action``) as core's change."""
    if not isinstance(change, dict):
        raise ApiError(400, "schema change: expected an object")
    action = change.get("action")
    try:
        if action == "setOption":
            return sc.SetOption(str(change["key"]), str(change["value"]))
        if action == "removeOption":
            return sc.RemoveOption(str(change["key"]))
        if action == "updateComment":
            return sc.UpdateComment(change.get("comment"))
        if action == "addColumn":
            move = change.get("move") or None
            after, first = None, False
            if move:
                if move.get("type") == "FIRST":
                    first = True
                elif move.get("type") == "AFTER":
                    after = str(move["referenceFieldName"])
                else:
                    raise ApiError(501, f"addColumn with move {move.get('type')} is not supported by this test server")
            return sc.AddColumn(_one_name(change), data_type_from_json(change["dataType"]),
                                change.get("comment"), after, first)
        if action == "renameColumn":
            return sc.RenameColumn(_one_name(change), str(change["newName"]))
        if action == "dropColumn":
            return sc.DropColumn(_one_name(change))
        if action == "updateColumnType":
            return sc.UpdateColumnType(_one_name(change), data_type_from_json(change["newDataType"]))
    except KeyError as e:
        raise ApiError(400, f"schema change {action}: missing {e.args[0]!r}") from None
    except InvalidInput as e:
        raise ApiError(400, f"schema change {action}: {e}") from None
    raise ApiError(501, f"schema change {action!r} is not supported by this test server")


def _java_duration(text: str) -> float:
    try:
        return parse_duration_millis(text, "timeRetained") / 1000
    except InvalidInput as e:
        raise ApiError(400, f"Invalid timeRetained format: {text} ({e})") from None


class RestCatalogServer:
    """The server; ``with RestCatalogServer(root) as server:`` runs it on a free loopback port.

    ``warehouse``: the name clients pass as their ``warehouse`` option (``GET /v1/config``
    answers only that name); ``token``: the bearer token required (None: no auth);
    ``defaults`` / ``overrides``: the config answer's maps (``prefix`` is added to defaults);
    ``data_token``: serve tables with ``data-token.enabled`` (an override, as DLF does);
    ``token_options``: what a data token carries for a table; ``token_ttl_ms``: its lifetime
    (``clock``: the server's time, for tests of expiry); ``storage_options``: the server's own
    access to tables' storage (fsspec options); ``table_root``: a URI (``s3://b/wh``) under which
    managed tables are created instead of ``root`` (databases stay listed from ``root``).
    ``dlf``: verify every request's DLF signature instead of a bearer token (``token`` is then
    ignored): a missing signature is 401, a wrong one (key, secret, body, date, STS token) 403;
    ``dlf_signing``: the ``dlf.signing-algorithm`` :meth:`client_options` names.
    """

    def __init__(self, root: str | os.PathLike[str], *, warehouse: str = DEFAULT_WAREHOUSE,
                 prefix: str = DEFAULT_PREFIX, token: str | None = DEFAULT_TOKEN,
                 defaults: dict[str, str] | None = None, overrides: dict[str, str] | None = None,
                 data_token: bool = False,
                 token_options: Callable[[str], dict[str, str]] | None = None,
                 token_ttl_ms: int = 2 * 3600 * 1000, clock: Callable[[], float] = time.time,
                 storage_options: dict[str, Any] | None = None, table_root: str | None = None,
                 dlf: DlfKeys | None = None, dlf_signing: str | None = None) -> None:
        self.dlf = dlf
        self.dlf_signing = dlf_signing
        if dlf is not None:
            token = None
        self.table_root = table_root.rstrip("/") if table_root else None
        self.root = Path(root).resolve()
        self.root.mkdir(parents=True, exist_ok=True)
        self.warehouse = warehouse
        self.prefix = prefix
        self.token = token
        self.defaults = {"prefix": prefix, **(defaults or {})}
        self.overrides = dict(overrides or {})
        if data_token:
            self.overrides["data-token.enabled"] = "true"
        self.token_options = token_options or (lambda table: {"fs.test.token-of": table})
        self.token_ttl_ms = token_ttl_ms
        self.clock = clock
        self.tokens_issued: list[tuple[str, int]] = []  # (table, expiresAtMillis)
        self.faults: list[Fault] = []
        self.calls: list[Call] = []
        self.forbidden_tables: set[str] = set()
        self.lock = threading.RLock()
        self.databases: dict[str, DatabaseEntry] = {}
        self.tables: dict[tuple[str, str], TableEntry] = {}
        # (db, table) -> partition name -> the spec's Partition object
        self.partitions: dict[tuple[str, str], dict[str, dict[str, Any]]] = {}
        self.storage_options = dict(storage_options or {})
        self._scan()
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> RestCatalogServer:
        handler = _handler_for(self)
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="rest-catalog", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._httpd = None

    def __enter__(self) -> RestCatalogServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "server not started"
        return int(self._httpd.server_address[1])

    @property
    def uri(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def client_options(self, **extra: str) -> dict[str, str]:
        """The catalog options a client needs (Java's keys)."""
        opts = {"metastore": "rest", "uri": self.uri, "warehouse": self.warehouse}
        if self.token is not None:
            opts.update({"token.provider": "bear", "token": self.token})
        if self.dlf is not None:
            opts.update({"token.provider": "dlf", "dlf.region": self.dlf.region})
            if self.dlf.keys:  # the first key pair; none when the credentials come from a loader
                key_id, (secret, sts) = next(iter(self.dlf.keys.items()))
                opts.update({"dlf.access-key-id": key_id, "dlf.access-key-secret": secret})
                if sts is not None:
                    opts["dlf.security-token"] = sts
            if self.dlf_signing is not None:
                opts["dlf.signing-algorithm"] = self.dlf_signing
        opts.update(extra)
        return opts

    # -- test controls ----------------------------------------------------------------------------

    def inject(self, operation: str, status: int | None = None, **kw: Any) -> Fault:
        fault = Fault(operation, status, **kw)
        with self.lock:
            self.faults.append(fault)
        return fault

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def calls_of(self, operation: str) -> list[Call]:
        with self.lock:
            return [c for c in self.calls if c.operation == operation]

    def table_path(self, db: str, table: str) -> Path:
        return Path(self.tables[(db, table)].location)

    # -- state ------------------------------------------------------------------------------------

    def _scan(self) -> None:
        """Databases and tables already in the warehouse directory become the catalog's."""
        for d in sorted(self.root.iterdir()):
            if d.is_dir() and d.name.endswith(".db") and len(d.name) > 3:
                db = d.name[:-3]
                self.databases[db] = DatabaseEntry()
                for t in sorted(d.iterdir()):
                    if (t / "schema").is_dir():
                        self.tables[(db, t.name)] = TableEntry(str(uuid.uuid4()), str(t), False)

    def _fio(self, location: str) -> FileIO:
        return load_file_io(location, self.storage_options)

    def _db_path(self, db: str) -> Path:
        return self.root / f"{db}.db"

    def _require_db(self, db: str) -> DatabaseEntry:
        entry = self.databases.get(db)
        if entry is None:
            raise not_found("DATABASE", db)
        return entry

    def _entry(self, db: str, obj: str) -> tuple[TableEntry, str, str | None]:
        table, branch = _split_object(obj)
        self._require_db(db)
        if f"{db}.{table}" in self.forbidden_tables:
            raise ApiError(403, f"Table {db}.{table} has no permission", "TABLE", f"{db}.{table}")
        entry = self.tables.get((db, table))
        if entry is None:
            raise not_found("TABLE", f"{db}.{obj}")
        if branch is not None and not self._fio(entry.location).is_dir(f"{entry.location}/branch/branch-{branch}"):
            raise not_found("BRANCH", branch)
        return entry, table, branch

    def _open(self, db: str, obj: str) -> FileStoreTable:
        entry, table, branch = self._entry(db, obj)
        return FileStoreTable.load(self._fio(entry.location), entry.location, Identifier(db, table), branch)

    def _latest_raw(self, location: str, branch: str | None) -> dict[str, Any] | None:
        """The latest snapshot's JSON as written (every field kept)."""
        fio = self._fio(location)
        sm = SnapshotManager(fio, location, branch)
        latest = sm.latest_snapshot_id()
        if latest is None:
            return None
        obj = json.loads(fio.read_text(sm.snapshot_path(latest)))
        return obj if isinstance(obj, dict) else None

    @staticmethod
    def _location_uri(location: str) -> str:
        return "file://" + location if location.startswith("/") else location

    # -- request handling -----------------------------------------------------------------------

    def handle(self, method: str, raw_path: str, headers: dict[str, str], body: bytes
               ) -> tuple[int, Any]:
        split = urlsplit(raw_path)
        query = {k: v[-1] for k, v in parse_qs(split.query, keep_blank_values=True).items()}
        operation, params = self._route(method, split.path)
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            payload = None
        call = Call(method, split.path, operation, query, headers, payload, params)
        with self.lock:
            self.calls.append(call)
            fault = next((f for f in self.faults if f.matches(call)), None)
            if fault is not None:
                fault.hits += 1
        if fault is not None and fault.delay:
            time.sleep(fault.delay)
        if fault is not None and fault.action is not None:
            fault.action(call)
        try:
            if fault is not None and fault.status is not None and not fault.after:
                raise ApiError(fault.status, fault.message)
            self._authenticate(method, raw_path, headers, body)
            if operation.startswith("unimplemented:"):
                raise ApiError(501, f"{operation.split(':', 1)[1]} is not implemented by this server")
            if operation == "unknown":
                raise ApiError(404, f"no endpoint {method} {split.path}")
            if operation != "getConfig" and params.get("prefix") != self.prefix:
                raise ApiError(404, f"no catalog prefix {params.get('prefix')!r} on this server")
            handler = getattr(self, "op_" + operation)
            with self.lock:
                status, answer = handler(params, query, payload)
            if fault is not None and fault.status is not None and fault.after:
                raise ApiError(fault.status, fault.message + " (after the call was done)")
        except ApiError as e:
            status, answer = e.code, e.body()
        except PaimonError as e:
            status, answer = self._error_of(e)
        call.status, call.answer = status, answer
        return status, answer

    @staticmethod
    def _error_of(e: PaimonError) -> tuple[int, Any]:
        code = 500
        if isinstance(e, NotFound):
            code = 404
        elif isinstance(e, (AlreadyExists, CommitConflict)):
            code = 409
        elif isinstance(e, InvalidInput):
            code = 400
        elif isinstance(e, NotYetSupported):
            code = 501
        return code, ApiError(code, str(e)).body()

    def _route(self, method: str, path: str) -> tuple[str, dict[str, str]]:
        for verb, pattern, op in ROUTES:
            m = re.fullmatch(pattern.replace("{prefix}", "(?P<prefix>[^/]+)"), path)
            if m and verb == method:
                return op, {k: unquote_plus(v) for k, v in m.groupdict().items()}
        for (verb, pattern), op in UNIMPLEMENTED.items():
            m = re.fullmatch(pattern.replace("{prefix}", "(?P<prefix>[^/]+)"), path)
            if m and verb == method:
                return "unimplemented:" + op, {k: unquote_plus(v) for k, v in m.groupdict().items()}
        return "unknown", {}

    def _authenticate(self, method: str, raw_path: str, headers: dict[str, str], body: bytes) -> None:
        if self.dlf is not None:
            refused = dlf_verify.verify(self.dlf, method, raw_path, headers, body)
            if refused is not None:
                raise ApiError(refused[0], f"DLF signature refused: {refused[1]}")
            return
        if self.token is None:
            return
        got = headers.get("authorization", "")
        if got != f"Bearer {self.token}":
            raise ApiError(401, "Not authorized: missing or wrong bearer token")

    # -- config -----------------------------------------------------------------------------------

    def op_getConfig(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        if q.get("warehouse") != self.warehouse:
            raise ApiError(404, f"warehouse {q.get('warehouse')!r} does not exist on this server")
        return 200, {"defaults": dict(self.defaults), "overrides": dict(self.overrides)}

    # -- databases ------------------------------------------------------------------------------------

    def op_listDatabases(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        names = [n for n in self.databases if _like(q.get("databaseNamePattern"), n)]
        page, nxt = _page(names, str, q)
        return 200, {"databases": page, "nextPageToken": nxt}

    def op_createDatabase(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        name = str((body or {}).get("name") or "")
        if not name:
            raise ApiError(400, "database name is empty")
        if name in self.databases:
            raise ApiError(409, f"Database {name} already exists.", "DATABASE", name)
        self._db_path(name).mkdir(parents=True, exist_ok=True)
        self.databases[name] = DatabaseEntry(dict((body or {}).get("options") or {}))
        return 200, None

    def op_getDatabase(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        entry = self._require_db(db)
        return 200, {"id": entry.uuid, "name": db, "location": self._location_uri(str(self._db_path(db))),
                     "options": dict(entry.options), "owner": "paimon-test", "createdAt": entry.created_at,
                     "createdBy": "paimon-test", "updatedAt": entry.created_at, "updatedBy": "paimon-test"}

    def op_dropDatabase(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        self._require_db(db)
        for (d, t), entry in list(self.tables.items()):
            if d == db:
                self._drop(d, t, entry)
        shutil.rmtree(self._db_path(db), ignore_errors=True)
        del self.databases[db]
        return 200, None

    def op_alterDatabase(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        entry = self._require_db(p["database"])
        removals = list((body or {}).get("removals") or [])
        updates = dict((body or {}).get("updates") or {})
        removed = [k for k in removals if k in entry.options]
        missing = [k for k in removals if k not in entry.options]
        for k in removed:
            del entry.options[k]
        entry.options.update(updates)
        return 200, {"removed": removed, "updated": list(updates), "missing": missing}

    # -- tables -------------------------------------------------------------------------------------

    def _table_response(self, db: str, obj: str) -> dict[str, Any]:
        entry, table, branch = self._entry(db, obj)
        schema = SchemaManager(self._fio(entry.location), entry.location, branch).latest()
        if schema is None:
            raise ApiError(500, f"table {db}.{obj} has no schema at {entry.location}")
        return {"id": entry.uuid, "database": db, "name": obj, "path": self._location_uri(entry.location),
                "isExternal": entry.external, "schemaId": schema.id, "schema": _schema_json(schema),
                "owner": entry.owner, "createdAt": entry.created_at, "createdBy": entry.owner,
                "updatedAt": entry.created_at, "updatedBy": entry.owner}

    def op_listTables(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        self._require_db(db)
        names = [t for (d, t) in self.tables if d == db and _like(q.get("tableNamePattern"), t)]
        page, nxt = _page(names, str, q)
        return 200, {"tables": page, "nextPageToken": nxt}

    def op_listTableDetails(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        self._require_db(db)
        names = [t for (d, t) in self.tables if d == db and _like(q.get("tableNamePattern"), t)]
        page, nxt = _page(names, str, q)
        return 200, {"tableDetails": [self._table_response(db, t) for t in page], "nextPageToken": nxt}

    def op_listTablesGlobally(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        ids = [f"{d}.{t}" for (d, t) in self.tables
               if _like(q.get("databaseNamePattern"), d) and _like(q.get("tableNamePattern"), t)]
        page, nxt = _page(ids, str, q)
        return 200, {"tables": [{"database": i.split(".", 1)[0], "object": i.split(".", 1)[1]} for i in page],
                     "nextPageToken": nxt}

    def op_getTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        return 200, self._table_response(p["database"], p["table"])

    def op_createTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        self._require_db(db)
        ident = (body or {}).get("identifier") or {}
        name = str(ident.get("object") or "")
        if ident.get("database") not in (None, db) or not name or "$" in name:
            raise ApiError(400, f"bad identifier {ident!r} for database {db}")
        if (db, name) in self.tables:
            raise ApiError(409, f"Table {db}.{name} already exists.", "TABLE", f"{db}.{name}")
        schema = _schema_from_json((body or {}).get("schema"))
        external = PATH_OPTION in schema.options
        managed = (f"{self.table_root}/{db}.db/{name}" if self.table_root is not None
                   else str(self._db_path(db) / name))
        location = (schema.options.pop(PATH_OPTION).removeprefix("file://").removeprefix("file:")
                    if external else managed)
        manager = SchemaManager(self._fio(location), location)
        if not external and manager.latest() is not None:
            raise ApiError(409, f"files of a table already exist at {location}", "TABLE", f"{db}.{name}")
        if manager.latest() is None:
            if location.startswith("/"):
                Path(location).mkdir(parents=True, exist_ok=True)
            manager.create_table(schema)
        self.tables[(db, name)] = TableEntry(str(uuid.uuid4()), location, external)
        return 200, None

    def op_registerTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        self._require_db(db)
        name = str(((body or {}).get("identifier") or {}).get("object") or "")
        location = str((body or {}).get("path") or "").removeprefix("file://").removeprefix("file:")
        if (db, name) in self.tables:
            raise ApiError(409, f"Table {db}.{name} already exists.", "TABLE", f"{db}.{name}")
        if SchemaManager(self._fio(location), location).latest() is None:
            raise ApiError(400, f"no Paimon table at {location}")
        self.tables[(db, name)] = TableEntry(str(uuid.uuid4()), location, True)
        return 200, None

    def op_alterTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        entry, _, branch = self._entry(p["database"], p["table"])
        changes = [_schema_change(c) for c in (body or {}).get("changes") or []]
        if not changes:
            raise ApiError(400, "alterTable: no changes")
        SchemaManager(self._fio(entry.location), entry.location, branch).commit_changes(changes)
        return 200, None

    def _drop(self, db: str, table: str, entry: TableEntry) -> None:
        if not entry.external:
            if entry.location.startswith("/"):
                shutil.rmtree(entry.location, ignore_errors=True)
            else:
                self._fio(entry.location).delete_dir(entry.location)
        del self.tables[(db, table)]
        self.partitions.pop((db, table), None)

    def op_dropTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        entry, table, branch = self._entry(p["database"], p["table"])
        if branch is not None:
            raise ApiError(400, "dropTable of a branch: use dropBranch")
        self._drop(p["database"], table, entry)
        return 200, None

    def op_renameTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        src = (body or {}).get("source") or {}
        dst = (body or {}).get("destination") or {}
        a = (str(src.get("database")), str(src.get("object")))
        b = (str(dst.get("database")), str(dst.get("object")))
        entry, _, _ = self._entry(*a)
        self._require_db(b[0])
        if b in self.tables:
            raise ApiError(409, f"Table {b[0]}.{b[1]} already exists.", "TABLE", f"{b[0]}.{b[1]}")
        if not entry.external:
            if not entry.location.startswith("/"):
                raise ApiError(501, "renameTable of a table on an object store is not implemented by this server")
            new = self._db_path(b[0]) / b[1]
            os.rename(entry.location, new)
            entry.location = str(new)
        self.tables[b] = self.tables.pop(a)
        if a in self.partitions:
            self.partitions[b] = self.partitions.pop(a)
        return 200, None

    # -- commit ---------------------------------------------------------------------------------------

    def op_commitTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        entry, table, branch = self._entry(db, p["table"])
        if not isinstance(body, dict) or not isinstance(body.get("snapshot"), dict):
            raise ApiError(400, "commitTable: a snapshot is required", "SNAPSHOT")
        table_id = body.get("tableId")
        if table_id is not None and table_id != entry.uuid:
            # another table of that name (dropped and created again): not the one the client read
            raise not_found("TABLE", f"{db}.{p['table']}", f"table {db}.{p['table']} with id {table_id} does not exist")
        snapshot = body["snapshot"]
        statistics = body.get("statistics")
        if not isinstance(statistics, list):
            raise ApiError(400, "commitTable: statistics must be a list")
        current = self._latest_raw(entry.location, branch)
        base = body.get("baseSnapshotUuid")
        current_uuid = None if current is None else current.get("uuid")
        expected_id = 1 if current is None else int(current["id"]) + 1
        if current_uuid != base or int(snapshot.get("id", -1)) != expected_id:
            return 200, {"success": False}
        fio = self._fio(entry.location)
        sm = SnapshotManager(fio, entry.location, branch)
        text = json.dumps(snapshot, indent=2).encode("utf-8")
        if not fio.try_write_atomic(sm.snapshot_path(expected_id), text):
            return 200, {"success": False}
        sm.commit_latest_hint(expected_id)
        self._add_statistics((db, table), statistics, branch)
        return 200, {"success": True}

    def _add_statistics(self, key: tuple[str, str], statistics: list[Any], branch: str | None) -> None:
        """A commit's statistics are deltas per partition (records, bytes and files added minus
        removed); the server sums them into its partitions, as upstream's server does."""
        if branch is not None:
            return
        parts = self.partitions.setdefault(key, {})
        for s in statistics:
            spec = {str(k): str(v) for k, v in (s.get("spec") or {}).items()}
            name = "/".join(f"{k}={v}" for k, v in spec.items())
            old = parts.get(name) or {"spec": spec, "recordCount": 0, "fileSizeInBytes": 0, "fileCount": 0,
                                      "lastFileCreationTime": 0, "totalBuckets": 0, "done": False,
                                      "createdAt": int(time.time() * 1000), "createdBy": "paimon-test"}
            new = dict(old)
            for k in ("recordCount", "fileSizeInBytes", "fileCount"):
                new[k] = int(old[k]) + int(s.get(k) or 0)
            new["lastFileCreationTime"] = max(int(old["lastFileCreationTime"]), int(s.get("lastFileCreationTime") or 0))
            new["totalBuckets"] = int(s.get("totalBuckets") or old["totalBuckets"])
            new["updatedAt"] = int(time.time() * 1000)
            new["updatedBy"] = "paimon-test"
            if new["recordCount"] <= 0 and new["fileCount"] <= 0 and new["fileSizeInBytes"] <= 0:
                parts.pop(name, None)
            else:
                parts[name] = new

    # -- snapshots --------------------------------------------------------------------------------------

    def op_getTableSnapshot(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        db = p["database"]
        entry, table, branch = self._entry(db, p["table"])
        snap = self._latest_raw(entry.location, branch)
        if snap is None:
            raise ApiError(404, "No Snapshot", "SNAPSHOT", db)
        parts = self.partitions.get((db, table), {}).values() if branch is None else []
        return 200, {"snapshot": {
            "snapshot": snap,
            "recordCount": int(snap.get("totalRecordCount") or 0),
            "fileSizeInBytes": sum(int(x["fileSizeInBytes"]) for x in parts),
            "fileCount": sum(int(x["fileCount"]) for x in parts),
            "lastFileCreationTime": max([int(x["lastFileCreationTime"]) for x in parts] or [0]),
        }}

    def op_listSnapshots(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        entry, _, branch = self._entry(p["database"], p["table"])
        fio = self._fio(entry.location)
        sm = SnapshotManager(fio, entry.location, branch)
        snaps = [json.loads(fio.read_text(sm.snapshot_path(i))) for i in sm.snapshot_ids()]
        page, nxt = _page(snaps, lambda s: f"{int(s['id']):020d}", q)
        return 200, {"snapshots": page, "nextPageToken": nxt}

    def op_getVersionSnapshot(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        entry, _, branch = self._entry(p["database"], p["table"])
        fio = self._fio(entry.location)
        sm = SnapshotManager(fio, entry.location, branch)
        version = p["version"]
        sid: int | None
        if version == "LATEST":
            sid = sm.latest_snapshot_id()
        elif version == "EARLIEST":
            sid = sm.earliest_snapshot_id()
        elif version.isdigit():
            sid = int(version) if sm.snapshot_exists(int(version)) else None
        else:
            tag = TagManager(fio, entry.location, branch).try_tag(version)
            if tag is None:
                raise ApiError(404, "No Snapshot", "SNAPSHOT", version)
            return 200, {"snapshot": json.loads(tag.snapshot.to_json())}
        if sid is None:
            raise ApiError(404, "No Snapshot", "SNAPSHOT", version)
        return 200, {"snapshot": json.loads(fio.read_text(sm.snapshot_path(sid)))}

    def op_rollbackTable(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        instant = (body or {}).get("instant") or {}
        from_snapshot = (body or {}).get("fromSnapshot")
        latest = table.snapshot_manager.latest_snapshot_id()
        if from_snapshot is not None and from_snapshot != latest:
            raise ApiError(500, f"Latest snapshot {latest} is not {from_snapshot}")
        if instant.get("type") == "snapshot":
            sid = int(instant["snapshotId"])
            if not table.snapshot_manager.snapshot_exists(sid) and sid not in table.tag_manager.tagged_snapshot_ids():
                raise ApiError(404, f"Rollback snapshot {sid} doesn't exist.", "SNAPSHOT", str(sid))
            rollback(table, snapshot_id=sid)
        elif instant.get("type") == "tag":
            name = str(instant["tagName"])
            if not table.tag_manager.tag_exists(name):
                raise ApiError(404, f"Rollback tag {name} doesn't exist.", "TAG", name)
            rollback(table, tag=name)
        else:
            raise ApiError(400, f"unknown instant {instant!r}")
        return 200, None

    # -- tags -----------------------------------------------------------------------------------------

    def op_listTags(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        prefix = q.get("tagNamePrefix") or ""
        names = [n for n in table.tag_manager.tag_names() if n.startswith(prefix)]
        page, nxt = _page(names, str, q)
        return 200, {"tags": page, "nextPageToken": nxt}

    def op_getTag(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        tag = table.tag_manager.try_tag(p["tag"])
        if tag is None:
            raise ApiError(404, f"Tag {p['tag']} in table {table.identifier} doesn't exist.", "TAG", p["tag"])
        created = None if tag.create_time is None else int(tag.create_time.timestamp() * 1000)
        return 200, {"tagName": tag.name, "snapshot": json.loads(tag.snapshot.to_json()),
                     "tagCreateTime": created, "tagTimeRetained": tag.time_retained_java}

    def op_createTag(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        name = str((body or {}).get("tagName") or "")
        sid = (body or {}).get("snapshotId")
        if sid is None and table.snapshot_manager.latest_snapshot_id() is None or (
                sid is not None and not table.snapshot_manager.snapshot_exists(int(sid))):
            raise ApiError(404, f"Snapshot {sid} in table {table.identifier} doesn't exist.", "SNAPSHOT", str(sid))
        if table.tag_manager.tag_exists(name):
            if (body or {}).get("ignoreIfExists"):
                return 200, None
            raise ApiError(409, f"Tag {name} already exists.", "TAG", name)
        retained = (body or {}).get("timeRetained")
        tag_ops.create_tag(table, name, None if sid is None else int(sid),
                           None if retained is None else _java_duration(str(retained)))
        return 200, None

    def op_deleteTag(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        if not table.tag_manager.tag_exists(p["tag"]):
            raise ApiError(404, f"Tag {p['tag']} in table {table.identifier} doesn't exist.", "TAG", p["tag"])
        tag_ops.delete_tags(table, [p["tag"]])
        return 200, None

    # -- branches -------------------------------------------------------------------------------------

    def op_listBranches(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        from paimon_cli.core.refs.branches import BranchManager

        return 200, {"branches": BranchManager(table.file_io, table.path).branch_names()}

    def op_createBranch(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        name = str((body or {}).get("branch") or "")
        from_tag = (body or {}).get("fromTag")
        if from_tag is not None and not table.tag_manager.tag_exists(from_tag):
            raise ApiError(404, f"Tag {from_tag} doesn't exist.", "TAG", from_tag)
        from paimon_cli.core.refs.branches import BranchManager

        if BranchManager(table.file_io, table.path).branch_exists(name):
            raise ApiError(409, f"Branch name '{name}' already exists.", "BRANCH", name)
        branch_ops.create_branch(table, name, from_tag)
        return 200, None

    def op_dropBranch(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        from paimon_cli.core.refs.branches import BranchManager

        if not BranchManager(table.file_io, table.path).branch_exists(p["branch"]):
            raise ApiError(404, f"Branch name '{p['branch']}' doesn't exist.", "BRANCH", p["branch"])
        branch_ops.delete_branch(table, p["branch"])
        return 200, None

    def op_forwardBranch(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        from paimon_cli.core.refs.branches import BranchManager

        if not BranchManager(table.file_io, table.path).branch_exists(p["branch"]):
            raise ApiError(404, f"Branch name '{p['branch']}' doesn't exist.", "BRANCH", p["branch"])
        branch_ops.fast_forward(table, p["branch"])
        return 200, None

    def op_renameBranch(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        raise ApiError(501, "renameBranch is not implemented by this server")

    # -- consumers ------------------------------------------------------------------------------------

    def op_listConsumers(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        consumers = ConsumerManager(table.file_io, table.path, table.branch).consumers()
        page, nxt = _page(sorted(consumers.items()), lambda kv: kv[0], q)
        return 200, {"consumers": [{"consumerId": k, "nextSnapshot": v} for k, v in page], "nextPageToken": nxt}

    def op_resetConsumer(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        table = self._open(p["database"], p["table"])
        consumer = str((body or {}).get("consumerId") or "")
        if not consumer:
            raise ApiError(400, "resetConsumer: consumerId is required")
        manager = ConsumerManager(table.file_io, table.path, table.branch)
        nxt = (body or {}).get("nextSnapshotId")
        if nxt is None:
            manager.delete_consumer(consumer)
        else:
            if not table.snapshot_manager.snapshot_exists(int(nxt)):
                raise ApiError(404, f"Snapshot {nxt} doesn't exist.", "SNAPSHOT", str(nxt))
            manager.reset_consumer(consumer, int(nxt))
        return 200, None

    # -- partitions ---------------------------------------------------------------------------------------

    def _partitioned(self, db: str, obj: str) -> tuple[str, str]:
        """Upstream's servers list partitions only of tables that keep them in the metastore
        (``metastore.partitioned-table``); others answer 501 and clients read the files."""
        entry, table, branch = self._entry(db, obj)
        schema = SchemaManager(self._fio(entry.location), entry.location, branch).latest()
        if schema is None or not schema.partition_keys or schema.options.get(PARTITIONED_IN_METASTORE) != "true":
            raise ApiError(501, f"table {db}.{obj} does not keep its partitions in the catalog")
        return db, table

    def op_listPartitions(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        key = self._partitioned(p["database"], p["table"])
        parts = [v for n, v in self.partitions.get(key, {}).items() if _like(q.get("partitionNamePattern"), n)]
        page, nxt = _page(parts, lambda x: "/".join(f"{k}={v}" for k, v in x["spec"].items()), q)
        return 200, {"partitions": page, "nextPageToken": nxt}

    def op_createPartitions(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        key = self._partitioned(p["database"], p["table"])
        parts = self.partitions.setdefault(key, {})
        created, existed = [], []
        for spec in (body or {}).get("partitionSpecs") or []:
            name = "/".join(f"{k}={v}" for k, v in spec.items())
            if name in parts:
                existed.append(spec)
                continue
            parts[name] = {"spec": spec, "recordCount": -1, "fileSizeInBytes": -1, "fileCount": -1,
                           "lastFileCreationTime": -1, "totalBuckets": -1, "done": False}
            created.append(spec)
        if existed and (body or {}).get("ignoreIfExists") is False:
            raise ApiError(409, f"Partitions {existed} already exist.", "PARTITION", str(existed[0]))
        return 200, {"created": created, "existed": existed}

    def op_dropPartitions(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        """Unregisters only: the spec says the server never deletes data files."""
        key = self._partitioned(p["database"], p["table"])
        parts = self.partitions.setdefault(key, {})
        dropped, missing = [], []
        for spec in (body or {}).get("partitionSpecs") or []:
            name = "/".join(f"{k}={v}" for k, v in spec.items())
            (dropped if parts.pop(name, None) is not None else missing).append(spec)
        if missing and (body or {}).get("ignoreIfNotExists") is False:
            raise ApiError(404, f"Partitions {missing} do not exist.", "PARTITION", str(missing[0]))
        return 200, {"dropped": dropped, "missing": missing}

    def op_markDonePartitions(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        key = self._partitioned(p["database"], p["table"])
        parts = self.partitions.setdefault(key, {})
        for spec in (body or {}).get("specs") or []:
            name = "/".join(f"{k}={v}" for k, v in spec.items())
            if name not in parts:
                raise ApiError(404, f"Partition {name} does not exist.", "PARTITION", name)
            parts[name]["done"] = True
        return 200, None

    # -- data tokens --------------------------------------------------------------------------------------

    def op_getTableToken(self, p: dict[str, str], q: dict[str, str], body: Any) -> tuple[int, Any]:
        entry, table, _ = self._entry(p["database"], p["table"])
        name = f"{p['database']}.{table}"
        expires = int(self.clock() * 1000) + self.token_ttl_ms
        self.tokens_issued.append((name, expires))
        return 200, {"token": dict(self.token_options(name)), "expiresAtMillis": expires}


def _handler_for(server: RestCatalogServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _serve(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            try:
                status, answer = server.handle(self.command, self.path, headers, body)
            except Exception as e:  # noqa: BLE001 - a bug of the server is a 500 the test sees
                status, answer = 500, ApiError(500, f"server error: {type(e).__name__}: {e}").body()
            data = b"" if answer is None else json.dumps(answer).encode("utf-8")
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (its timeout): nothing to answer

        do_GET = do_POST = do_DELETE = do_PUT = _serve

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            return None

    return Handler


def iter_files(root: Path) -> Iterator[tuple[str, bytes]]:
    """Every file under ``root`` with its bytes, for before/after comparisons in fault tests."""
    for path in sorted(root.rglob("*")):
        if path.is_file():
            yield str(path.relative_to(root)), path.read_bytes()
