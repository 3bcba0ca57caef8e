"""The REST catalog protocol (``docs/static/rest-catalog-open-api.yaml`` of Paimon 1.1+), as
Java's ``RESTApi`` and pypaimon's ``RESTApi`` speak it: one typed call per endpoint.

With a REST catalog the server owns the catalog and the version history: the client writes
data files and manifests, then asks the server to commit (``POST .../tables/{t}/commit`` with
the base snapshot's uuid); rollback, tags, branches, partitions and consumers go through their
endpoints; file access may use short-lived data tokens (``GET .../tables/{t}/token``).

What can go wrong is mapped onto the library's errors: 401/403 ``PermissionDenied`` (exit 9),
404 ``NotFound``, 409 ``AlreadyExists`` (or ``CommitConflict`` where a call says so), 501
``EndpointUnsupported``, 400 ``InvalidInput``. Server errors (5xx, 429), timeouts and refused
connections are retried with back-off, then ``CatalogUnavailable`` (exit 8). A call that changes
something is resent only when it provably did not happen: a refused connection, a 429/503, or a
``verify`` callback that looked at the server and found the change absent; when it cannot be
known whether it happened, ``OutcomeUnknown`` -- never a second, duplicate change.
"""

from __future__ import annotations

import enum
import http.client
import json
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import (
    AlreadyExists,
    CatalogUnavailable,
    CommitConflict,
    InvalidInput,
    NotFound,
    NotYetSupported,
    OutcomeUnknown,
    PaimonError,
    PermissionDenied,
)
from ..table.catalog_environment import PartitionStatistics
from .options import (
    DATA_TOKEN_ENABLED,
    HEADER_PREFIX,
    PREFIX,
    URI,
    WAREHOUSE,
)
from .rest_auth import TOKEN_SAFE_TIME_MILLIS, RestAuth, auth_from_options, auth_options, renewal_due

API_VERSION = "v1"
BRANCH_SEPARATOR = "$branch_"
DEFAULT_TIMEOUT_SECONDS = 60.0
DEFAULT_ATTEMPTS = 5
_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})
_NOT_PROCESSED_STATUS = frozenset({429, 503})  # the server says it did not act: safe to resend


class EndpointUnsupported(NotYetSupported):
    """The REST server has no such endpoint (HTTP 501): refused by name, nothing was done."""


class RestNotFound(NotFound):
    """HTTP 404; ``resource_type`` is the spec's (DATABASE, TABLE, SNAPSHOT, TAG, BRANCH, ...)."""

    def __init__(self, message: str, resource_type: str | None = None, resource_name: str | None = None) -> None:
        super().__init__(message)
        self.resource_type = resource_type
        self.resource_name = resource_name


def encode_name(value: str) -> str:
    """A name as one path segment, as Java's ``URLEncoder`` writes it (``~`` escaped too)."""
    return urllib.parse.quote_plus(value, safe="*").replace("~", "%7E")


def object_name(table: str, branch: str | None = None) -> str:
    """REST carries a branch in the object name: ``t$branch_b``."""
    return table if branch in (None, "main") else f"{table}{BRANCH_SEPARATOR}{branch}"


# ---------------------------------------------------------------------------------------------
# typed answers


@dataclass(frozen=True)
class TableDetails:
    """``GetTableResponse``: where the table lives and its latest schema as the server knows it."""

    id: str | None
    database: str
    name: str
    path: str
    is_external: bool
    schema_id: int
    schema: dict[str, Any]  # the spec's Schema: fields, partitionKeys, primaryKeys, options, comment

    @staticmethod
    def from_json(obj: Any, database: str) -> TableDetails:
        if not isinstance(obj, dict) or not obj.get("path") or not isinstance(obj.get("schema"), dict):
            raise CatalogUnavailable(f"REST catalog answered a table without path or schema: {str(obj)[:200]}")
        return TableDetails(
            id=obj.get("id"),
            database=str(obj.get("database") or database),
            name=str(obj.get("name")),
            path=str(obj["path"]),
            is_external=bool(obj.get("isExternal")),
            schema_id=int(obj.get("schemaId") or 0),
            schema=obj["schema"],
        )

    @property
    def table_type(self) -> str:
        """The ``type`` option (``table`` when unset; ``format-table``, ``iceberg-table``, ...)."""
        return str((self.schema.get("options") or {}).get("type") or "table").strip().lower()


@dataclass(frozen=True)
class TableSnapshot:
    """``GetTableSnapshotResponse``: the latest snapshot (its JSON as committed) and the table's
    statistics as the server sums them."""

    snapshot: dict[str, Any]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int

    @property
    def id(self) -> int:
        return int(self.snapshot["id"])

    @property
    def uuid(self) -> str | None:
        u = self.snapshot.get("uuid")
        return None if u is None else str(u)


@dataclass(frozen=True)
class DataToken:
    """Storage options (Java's keys) valid until ``expires_at_millis``."""

    options: dict[str, str]
    expires_at_millis: int
    fetched_at_millis: int = field(default_factory=lambda: int(time.time() * 1000))


class CommitOutcome(enum.Enum):
    COMMITTED = "committed"
    REFUSED = "refused"  # the base moved: plan again on the latest snapshot


# ---------------------------------------------------------------------------------------------
# transport


@dataclass
class _Answer:
    status: int
    body: Any


class _Failure(Exception):
    """One attempt that failed in a way that may be retried; ``sent`` says whether the server
    may have acted on it."""

    def __init__(self, reason: str, sent: bool, status: int | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.sent = sent
        self.status = status


def _parse_error(status: int, raw: bytes) -> tuple[str, str | None, str | None]:
    try:
        obj = json.loads(raw) if raw else None
    except ValueError:
        obj = None
    if isinstance(obj, dict):
        msg = obj.get("message") or raw.decode("utf-8", "replace")
        return str(msg).strip() or f"HTTP {status}", obj.get("resourceType"), obj.get("resourceName")
    text = raw.decode("utf-8", "replace").strip()
    return (text[:300] or f"HTTP {status}"), None, None


class RestClient:
    """HTTP for one catalog: base uri, headers, the authentication each attempt carries
    (``rest_auth``: a bearer token, or a DLF signature of that very request), timeouts and the
    retry rules."""

    def __init__(self, uri: str, headers: Mapping[str, str], catalog: str, *, auth: RestAuth | None = None,
                 timeout: float = DEFAULT_TIMEOUT_SECONDS, attempts: int = DEFAULT_ATTEMPTS,
                 backoff: tuple[float, float] = (0.5, 8.0), sleep: Callable[[float], None] = time.sleep) -> None:
        u = uri.strip().rstrip("/")
        if not u.startswith(("http://", "https://")):
            u = "http://" + u
        self.uri = u
        self.headers = dict(headers)
        self.auth = auth  # signs each attempt (DLF signatures carry the time of sending)
        self.catalog = catalog
        self.timeout = timeout
        self.attempts = max(1, attempts)
        self.backoff = backoff
        self.sleep = sleep

    def _once(self, method: str, url: str, data: bytes | None, path: str, query: Mapping[str, str]) -> _Answer:
        headers = {"Accept": "application/json", **self.headers}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self.auth is not None:
            headers.update(self.auth.headers(method, path, query, None if data is None else data.decode("utf-8")))
        req = urllib.request.Request(url, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
                status = resp.status
        except urllib.error.HTTPError as e:
            raw, status = e.read(), e.code
        except urllib.error.URLError as e:
            reason = e.reason
            if isinstance(reason, (ConnectionRefusedError, socket.gaierror)):
                raise _Failure(f"cannot connect to {self.uri}: {reason}", sent=False) from None
            if isinstance(reason, TimeoutError):
                raise _Failure(f"no answer from {self.uri} within {self.timeout:g} s", sent=True) from None
            raise _Failure(f"cannot reach {self.uri}: {reason}", sent=True) from None
        except TimeoutError:
            raise _Failure(f"no answer from {self.uri} within {self.timeout:g} s", sent=True) from None
        except (ConnectionError, http.client.HTTPException, OSError) as e:
            raise _Failure(f"connection to {self.uri} failed: {type(e).__name__}: {e}", sent=True) from None
        if status in _RETRY_STATUS:
            msg, _, _ = _parse_error(status, raw)
            raise _Failure(f"HTTP {status}: {msg}", sent=status not in _NOT_PROCESSED_STATUS, status=status)
        if status >= 400:
            return _Answer(status, raw)
        if not raw:
            return _Answer(status, None)
        try:
            return _Answer(status, json.loads(raw))
        except ValueError:
            raise CatalogUnavailable(f"catalog {self.catalog}: {method} {url} answered {status} with a body "
                                     f"that is not JSON: {raw[:200]!r}") from None

    def call(self, method: str, path: str, query: Mapping[str, str] | None = None, body: Any = None, *,
             what: str, idempotent: bool, verify: Callable[[], bool | None] | None = None,
             conflict: type[PaimonError] = AlreadyExists) -> Any:
        """One call with the retry rules; ``what`` names it in messages.

        ``idempotent``: resending it after an uncertain failure is harmless (reads, settings).
        Otherwise an uncertain failure (a 5xx after sending, a lost answer) is resent only when
        ``verify()`` says the change is absent (False); True means it is there (done); None, or
        no ``verify``, raises OutcomeUnknown. A resend answered 404 or 409 looks again: the
        slow first attempt may have landed meanwhile (its tag exists, its branch is gone).
        """
        url = self.uri + path
        sent = {k: v for k, v in (query or {}).items() if v is not None}
        if sent:
            url += "?" + urllib.parse.urlencode(sent)
        data = None if body is None else json.dumps(body).encode("utf-8")
        last: _Failure | None = None
        resent = False  # an earlier attempt may still land
        for attempt in range(self.attempts):
            if attempt:
                base, cap = self.backoff
                self.sleep(min(cap, base * (2 ** (attempt - 1))))
            try:
                answer = self._once(method, url, data, path, sent)
            except _Failure as f:
                last = f
                if f.sent and not idempotent:
                    if self._looked_up(verify, what, f.reason):
                        return None
                    resent = True
                continue
            if answer.status in (404, 409) and resent and verify is not None:
                if self._looked_up(verify, what, f"HTTP {answer.status} after a resend", undecided=False):
                    return None
            if answer.status >= 400:
                self._raise(answer, what, conflict)
            return answer.body
        assert last is not None
        raise CatalogUnavailable(f"catalog {self.catalog}: {what} failed {self.attempts} time(s), "
                                 f"last: {last.reason}")

    def _looked_up(self, verify: Callable[[], bool | None] | None, what: str, reason: str,
                   undecided: bool | None = None) -> bool:
        """Whether an attempt whose outcome is open did it (True) or not (False); a look that
        fails is OutcomeUnknown, and so is an undecided one unless ``undecided`` says otherwise."""
        try:
            state = None if verify is None else verify()
        except PaimonError as e:
            raise OutcomeUnknown(f"catalog {self.catalog}: {what}: {reason}; whether the server did it is unknown "
                                 f"(looking failed: {e}) -- check before running it again") from None
        if state is None:
            state = undecided
        if state is None:
            raise OutcomeUnknown(f"catalog {self.catalog}: {what}: {reason}; whether the server did it is unknown "
                                 "-- check before running it again") from None
        return state

    def _raise(self, answer: _Answer, what: str, conflict: type[PaimonError]) -> None:
        msg, rtype, rname = _parse_error(answer.status, answer.body or b"")
        where = f"catalog {self.catalog}: {what}"
        code = answer.status
        if code in (401, 403):
            kind = "not authorized (check token.provider and its token or dlf.* credentials)" if code == 401 else "forbidden"
            raise PermissionDenied(f"{where}: {kind}: {msg}")
        if code == 404:
            raise RestNotFound(f"{where}: not found: {msg}", rtype, rname)
        if code == 409:
            raise conflict(f"{where}: {msg}")
        if code == 501:
            raise EndpointUnsupported(f"{where}: the REST server does not implement it ({msg})")
        if code in (400, 422):
            raise InvalidInput(f"{where}: refused as a bad request: {msg}")
        raise CatalogUnavailable(f"{where}: HTTP {code}: {msg}")


# ---------------------------------------------------------------------------------------------
# the API


def header_options(options: Mapping[str, str]) -> dict[str, str]:
    """``header.X-Name=v`` options as HTTP headers ``X-Name: v``."""
    return {k[len(HEADER_PREFIX):]: str(v) for k, v in options.items()
            if k.startswith(HEADER_PREFIX) and len(k) > len(HEADER_PREFIX)}


def merge_config(defaults: Mapping[str, Any] | None, client: Mapping[str, str],
                 overrides: Mapping[str, Any] | None) -> dict[str, str]:
    """Java's ``ConfigResponse.merge``: server defaults, then the client's options, then the
    server's overrides (which win: e.g. an enforced ``data-token.enabled``)."""
    merged: dict[str, str] = {}
    for source in (defaults or {}, client, overrides or {}):
        for k, v in source.items():
            if v is not None:
                merged[str(k)] = str(v)
    return merged


class RestApi:
    """The endpoints of one REST catalog; :meth:`connect` reads ``GET /v1/config`` first."""

    def __init__(self, client: RestClient, options: dict[str, str]) -> None:
        self.client = client
        self.options = options  # merged: server defaults < client < server overrides
        prefix = options.get(PREFIX, "")
        self.base = f"/{API_VERSION}/{encode_name(prefix)}" if prefix else f"/{API_VERSION}"

    @classmethod
    def connect(cls, options: Mapping[str, str], catalog: str, **client_kw: Any) -> RestApi:
        uri = (options.get(URI) or "").strip()
        if not uri:
            raise InvalidInput(f"catalog {catalog}: metastore=rest needs the option 'uri'")
        warehouse = (options.get(WAREHOUSE) or "").strip()
        if not warehouse:
            raise InvalidInput(f"catalog {catalog}: metastore=rest needs the option 'warehouse' (the "
                               "catalog's name on the server)")
        auth = auth_from_options(options, uri, catalog)
        client = RestClient(uri, header_options(options), catalog, auth=auth, **client_kw)
        config = client.call("GET", f"/{API_VERSION}/config", {"warehouse": warehouse},
                             what=f"load the config of warehouse {warehouse}", idempotent=True)
        if not isinstance(config, dict):
            raise CatalogUnavailable(f"catalog {catalog}: GET /v1/config answered {str(config)[:200]}")
        merged = merge_config(config.get("defaults"), options, config.get("overrides"))
        client.headers = header_options(merged)
        if auth_options(merged) != auth_options(options):
            client.auth = auth_from_options(merged, uri, catalog)
        return cls(client, merged)

    @property
    def data_token_enabled(self) -> bool:
        return self.options.get(DATA_TOKEN_ENABLED, "false").strip().lower() == "true"

    # -- paths ------------------------------------------------------------------------------------

    def _db(self, database: str) -> str:
        return f"{self.base}/databases/{encode_name(database)}"

    def _table(self, database: str, table: str, branch: str | None = None) -> str:
        return f"{self._db(database)}/tables/{encode_name(object_name(table, branch))}"

    def _pages(self, path: str, key: str, what: str, query: Mapping[str, str] | None = None) -> Iterator[Any]:
        """Every element of a paged list, following ``nextPageToken``."""
        seen: set[str] = set()
        q = dict(query or {})
        while True:
            answer = self.client.call("GET", path, q, what=what, idempotent=True) or {}
            yield from answer.get(key) or []
            token = answer.get("nextPageToken")
            if not token or not answer.get(key):
                return
            if token in seen:
                raise CatalogUnavailable(f"catalog {self.client.catalog}: {what}: the server repeated page token "
                                         f"{token!r}")
            seen.add(token)
            q["pageToken"] = token

    # -- databases ------------------------------------------------------------------------------------

    def list_databases(self) -> list[str]:
        return [str(x) for x in self._pages(f"{self.base}/databases", "databases", "list databases")]

    def get_database(self, database: str) -> dict[str, Any]:
        return dict(self.client.call("GET", self._db(database), what=f"load database {database}",
                                     idempotent=True) or {})

    def create_database(self, database: str, options: Mapping[str, str] | None = None) -> None:
        self.client.call("POST", f"{self.base}/databases", body={"name": database, "options": dict(options or {})},
                         what=f"create database {database}", idempotent=False,
                         verify=lambda: self._exists(lambda: self.get_database(database)))

    def drop_database(self, database: str) -> None:
        self.client.call("DELETE", self._db(database), what=f"drop database {database}", idempotent=False,
                         verify=lambda: self._absent(lambda: self.get_database(database)))

    # -- tables -------------------------------------------------------------------------------------

    def list_tables(self, database: str) -> list[str]:
        return [str(x) for x in self._pages(f"{self._db(database)}/tables", "tables", f"list tables of {database}")]

    def list_table_details(self, database: str, max_results: int | None = None) -> list[TableDetails]:
        query = {"maxResults": str(max_results)} if max_results else None
        return [TableDetails.from_json(x, database) for x in
                self._pages(f"{self._db(database)}/table-details", "tableDetails", f"list tables of {database}",
                            query)]

    def get_table(self, database: str, table: str, branch: str | None = None) -> TableDetails:
        answer = self.client.call("GET", self._table(database, table, branch),
                                  what=f"load table {database}.{object_name(table, branch)}", idempotent=True)
        return TableDetails.from_json(answer, database)

    def create_table(self, database: str, table: str, schema: Mapping[str, Any]) -> None:
        self.client.call("POST", f"{self._db(database)}/tables",
                         body={"identifier": {"database": database, "object": table}, "schema": dict(schema)},
                         what=f"create table {database}.{table}", idempotent=False,
                         verify=lambda: self._exists(lambda: self.get_table(database, table)))

    def register_table(self, database: str, table: str, path: str) -> None:
        """Register the Paimon table at ``path`` (the server reads its schema; an external table)."""
        self.client.call("POST", f"{self._db(database)}/register",
                         body={"identifier": {"database": database, "object": table}, "path": path},
                         what=f"register table {database}.{table}", idempotent=False,
                         verify=lambda: self._exists(lambda: self.get_table(database, table)))

    def alter_table(self, database: str, table: str, changes: list[dict[str, Any]],
                    verify: Callable[[], bool | None] | None = None, branch: str | None = None) -> None:
        """``changes``: the spec's SchemaChange objects (``action`` + fields, Java's JSON)."""
        self.client.call("POST", self._table(database, table, branch), body={"changes": changes},
                         what=f"alter table {database}.{object_name(table, branch)}", idempotent=False,
                         verify=verify)

    def drop_table(self, database: str, table: str) -> None:
        self.client.call("DELETE", self._table(database, table), what=f"drop table {database}.{table}",
                         idempotent=False, verify=lambda: self._absent(lambda: self.get_table(database, table)))

    def rename_table(self, src: tuple[str, str], dst: tuple[str, str]) -> None:
        def verify() -> bool | None:
            gone = self._absent(lambda: self.get_table(*src))
            there = self._exists(lambda: self.get_table(*dst))
            return True if gone and there else False if not gone and not there else None

        self.client.call("POST", f"{self.base}/tables/rename",
                         body={"source": {"database": src[0], "object": src[1]},
                               "destination": {"database": dst[0], "object": dst[1]}},
                         what=f"rename table {src[0]}.{src[1]} to {dst[0]}.{dst[1]}", idempotent=False,
                         verify=verify)

    # -- snapshots and the commit -----------------------------------------------------------------------

    def load_snapshot(self, database: str, table: str, branch: str | None = None) -> TableSnapshot | None:
        """The latest snapshot; None when the table has none (404 of resource type SNAPSHOT)."""
        try:
            answer = self.client.call("GET", f"{self._table(database, table, branch)}/snapshot",
                                      what=f"load the latest snapshot of {database}.{object_name(table, branch)}",
                                      idempotent=True)
        except RestNotFound as e:
            if e.resource_type == "SNAPSHOT":
                return None
            raise
        ts = (answer or {}).get("snapshot")
        if not isinstance(ts, dict) or not isinstance(ts.get("snapshot"), dict):
            raise CatalogUnavailable(f"catalog {self.client.catalog}: the latest snapshot of {database}.{table} "
                                     f"came without a snapshot: {str(answer)[:200]}")
        return TableSnapshot(ts["snapshot"], int(ts.get("recordCount") or 0), int(ts.get("fileSizeInBytes") or 0),
                             int(ts.get("fileCount") or 0), int(ts.get("lastFileCreationTime") or 0))

    def load_version_snapshot(self, database: str, table: str, version: str | int,
                              branch: str | None = None) -> dict[str, Any] | None:
        """Snapshot ``version`` (an id, a tag, ``LATEST`` or ``EARLIEST``); None when absent."""
        try:
            answer = self.client.call("GET", f"{self._table(database, table, branch)}/snapshots/"
                                             f"{encode_name(str(version))}",
                                      what=f"load snapshot {version} of {database}.{table}", idempotent=True)
        except RestNotFound as e:
            if e.resource_type == "SNAPSHOT":
                return None
            raise
        snap = (answer or {}).get("snapshot")
        return snap if isinstance(snap, dict) else None

    def commit_snapshot(self, database: str, table: str, table_uuid: str | None, base_snapshot_uuid: str | None,
                        snapshot: Mapping[str, Any], statistics: list[PartitionStatistics],
                        branch: str | None = None) -> CommitOutcome:
        """Ask the server to publish ``snapshot`` on ``base_snapshot_uuid``.

        REFUSED when the server answers ``success: false`` (the base moved; plan again). A lost
        answer is resolved by looking: our uuid at the head (or at our id) is COMMITTED, an
        unmoved base is resent, anything else is OutcomeUnknown.
        """
        name = f"{database}.{object_name(table, branch)}"
        ours = snapshot.get("uuid")
        if not ours:
            raise InvalidInput(f"commit of {name}: the snapshot needs a uuid (the server compares bases by uuid)")
        uncertain: list[bool] = []
        refused: list[bool] = []

        def landed() -> str:
            """committed / absent (the base is still the head) / refused (another snapshot holds
            our id) / unknown."""
            head = self.load_snapshot(database, table, branch)
            if head is not None and head.uuid == ours:
                return "committed"
            if (None if head is None else head.uuid) == base_snapshot_uuid:
                return "absent"
            try:
                at_ours = self.load_version_snapshot(database, table, int(snapshot["id"]), branch)
            except EndpointUnsupported:
                return "unknown"
            if at_ours is None:
                return "unknown"
            return "committed" if at_ours.get("uuid") == ours else "refused"

        def verify() -> bool | None:
            uncertain.append(True)
            state = landed()
            if state == "refused":
                refused.append(True)
            return {"committed": True, "absent": False, "refused": True}.get(state)

        answer = self.client.call(
            "POST", f"{self._table(database, table, branch)}/commit",
            body={"tableId": table_uuid, "baseSnapshotUuid": base_snapshot_uuid, "snapshot": dict(snapshot),
                  "statistics": [s.to_json() for s in statistics]},
            what=f"commit snapshot {snapshot.get('id')} of {name}", idempotent=False, verify=verify,
            conflict=CommitConflict)
        if answer is None:  # an attempt whose answer was lost: looked up
            return CommitOutcome.REFUSED if refused else CommitOutcome.COMMITTED
        if not isinstance(answer, dict) or not isinstance(answer.get("success"), bool):
            raise CatalogUnavailable(f"catalog {self.client.catalog}: commit of {name} answered {str(answer)[:200]}")
        if answer["success"]:
            return CommitOutcome.COMMITTED
        if uncertain:
            # a resend is refused when the first, slow attempt landed meanwhile: ours is there
            try:
                state = landed()
            except PaimonError as e:
                raise OutcomeUnknown(f"catalog {self.client.catalog}: commit of {name}: refused after an attempt "
                                     f"whose answer was lost, and looking failed: {e}") from None
            if state == "committed":
                return CommitOutcome.COMMITTED
            if state == "unknown":
                raise OutcomeUnknown(f"catalog {self.client.catalog}: commit of {name}: refused after an attempt "
                                     "whose answer was lost; whether that attempt landed is unknown")
        return CommitOutcome.REFUSED

    def rollback_to(self, database: str, table: str, *, snapshot_id: int | None = None, tag: str | None = None,
                    from_snapshot: int | None = None, branch: str | None = None,
                    tag_snapshot_id: int | None = None) -> None:
        """The server rolls back (and deletes what only the later snapshots used).
        ``tag_snapshot_id``: the tag's snapshot, so a lost answer can be looked up."""
        if (snapshot_id is None) == (tag is None):
            raise InvalidInput("rollback: give exactly one of snapshot and tag")
        instant = {"type": "snapshot", "snapshotId": snapshot_id} if tag is None else {"type": "tag", "tagName": tag}
        target = f"snapshot {snapshot_id}" if tag is None else f"tag {tag}"

        def verify() -> bool | None:
            head = self.load_snapshot(database, table, branch)
            if head is None:
                return None
            target_id = snapshot_id if tag is None else tag_snapshot_id
            if target_id is None:
                return None
            return True if head.id == target_id else (False if head.id == from_snapshot else None)

        self.client.call("POST", f"{self._table(database, table, branch)}/rollback",
                         body={"instant": instant, "fromSnapshot": from_snapshot},
                         what=f"roll back {database}.{object_name(table, branch)} to {target}", idempotent=False,
                         verify=verify, conflict=CommitConflict)

    # -- tags ---------------------------------------------------------------------------------------

    def list_tags(self, database: str, table: str, branch: str | None = None) -> list[str]:
        return [str(x) for x in self._pages(f"{self._table(database, table, branch)}/tags", "tags",
                                            f"list tags of {database}.{table}")]

    def get_tag(self, database: str, table: str, tag: str, branch: str | None = None) -> dict[str, Any]:
        return dict(self.client.call("GET", f"{self._table(database, table, branch)}/tags/{encode_name(tag)}",
                                     what=f"load tag {tag} of {database}.{table}", idempotent=True) or {})

    def create_tag(self, database: str, table: str, tag: str, snapshot_id: int | None = None,
                   time_retained: str | None = None, branch: str | None = None) -> None:
        def verify() -> bool | None:
            try:
                got = self.get_tag(database, table, tag, branch)
            except RestNotFound:
                return False
            snap = got.get("snapshot") or {}
            return True if snapshot_id is None or snap.get("id") == snapshot_id else None

        self.client.call("POST", f"{self._table(database, table, branch)}/tags",
                         body={"tagName": tag, "snapshotId": snapshot_id, "timeRetained": time_retained},
                         what=f"create tag {tag} of {database}.{table}", idempotent=False, verify=verify)

    def delete_tag(self, database: str, table: str, tag: str, branch: str | None = None) -> None:
        self.client.call("DELETE", f"{self._table(database, table, branch)}/tags/{encode_name(tag)}",
                         what=f"delete tag {tag} of {database}.{table}", idempotent=False,
                         verify=lambda: self._absent(lambda: self.get_tag(database, table, tag, branch)))

    # -- branches -------------------------------------------------------------------------------------

    def list_branches(self, database: str, table: str) -> list[str]:
        answer = self.client.call("GET", f"{self._table(database, table)}/branches",
                                  what=f"list branches of {database}.{table}", idempotent=True) or {}
        return [str(x) for x in answer.get("branches") or []]

    def create_branch(self, database: str, table: str, branch: str, from_tag: str | None = None) -> None:
        self.client.call("POST", f"{self._table(database, table)}/branches",
                         body={"branch": branch, "fromTag": from_tag},
                         what=f"create branch {branch} of {database}.{table}", idempotent=False,
                         verify=lambda: branch in self.list_branches(database, table))

    def drop_branch(self, database: str, table: str, branch: str) -> None:
        self.client.call("DELETE", f"{self._table(database, table)}/branches/{encode_name(branch)}",
                         what=f"drop branch {branch} of {database}.{table}", idempotent=False,
                         verify=lambda: branch not in self.list_branches(database, table))

    def fast_forward(self, database: str, table: str, branch: str) -> None:
        self.client.call("POST", f"{self._table(database, table)}/branches/{encode_name(branch)}/forward", body={},
                         what=f"fast-forward {database}.{table} to branch {branch}", idempotent=False,
                         conflict=CommitConflict)

    # -- consumers -------------------------------------------------------------------------------------

    def list_consumers(self, database: str, table: str, branch: str | None = None) -> dict[str, int]:
        return {str(c["consumerId"]): int(c["nextSnapshot"]) for c in
                self._pages(f"{self._table(database, table, branch)}/consumers", "consumers",
                            f"list consumers of {database}.{table}")}

    def reset_consumer(self, database: str, table: str, consumer: str, next_snapshot: int | None,
                       branch: str | None = None) -> None:
        """Set a consumer's next snapshot; None deletes it (setting is idempotent)."""
        self.client.call("POST", f"{self._table(database, table, branch)}/consumers/reset",
                         body={"consumerId": consumer, "nextSnapshotId": next_snapshot},
                         what=f"reset consumer {consumer} of {database}.{table}", idempotent=True)

    # -- partitions -------------------------------------------------------------------------------------

    def list_partitions(self, database: str, table: str, branch: str | None = None) -> list[dict[str, Any]]:
        """The spec's ``Partition`` objects; EndpointUnsupported (501) when the server keeps no
        partitions for this table (the files are then the only source)."""
        return [dict(p) for p in self._pages(f"{self._table(database, table, branch)}/partitions", "partitions",
                                             f"list partitions of {database}.{table}")]

    def drop_partitions(self, database: str, table: str, specs: list[dict[str, str]]) -> dict[str, Any]:
        """Unregister partitions (the server never deletes data: that is a commit of ours)."""
        return dict(self.client.call("POST", f"{self._table(database, table)}/partitions/drop",
                                     body={"partitionSpecs": specs, "ignoreIfNotExists": True},
                                     what=f"drop partitions of {database}.{table}", idempotent=True) or {})

    def mark_done_partitions(self, database: str, table: str, specs: list[dict[str, str]]) -> None:
        self.client.call("POST", f"{self._table(database, table)}/partitions/mark", body={"specs": specs},
                         what=f"mark partitions of {database}.{table} done", idempotent=True)

    # -- data tokens ---------------------------------------------------------------------------------------

    def load_table_token(self, database: str, table: str) -> DataToken:
        answer = self.client.call("GET", f"{self._table(database, table)}/token",
                                  what=f"load the data token of {database}.{table}", idempotent=True) or {}
        token = answer.get("token")
        # Java and pypaimon send expiresAtMillis; the spec's yaml names it expiresAt
        expires = answer.get("expiresAtMillis", answer.get("expiresAt"))
        if not isinstance(token, dict) or expires is None:
            raise CatalogUnavailable(f"catalog {self.client.catalog}: the data token of {database}.{table} came "
                                     f"without token or expiry: {str(answer)[:200]}")
        return DataToken({str(k): str(v) for k, v in token.items()}, int(expires))

    # -- helpers ------------------------------------------------------------------------------------------

    @staticmethod
    def _exists(load: Callable[[], Any]) -> bool:
        try:
            load()
        except RestNotFound:
            return False
        return True

    @staticmethod
    def _absent(load: Callable[[], Any]) -> bool:
        return not RestApi._exists(load)


class DataTokenProvider:
    """A table's data token, renewed before it expires (Java renews when less than an hour is
    left; a shorter-lived token is renewed in its second half), so a long job keeps working."""

    def __init__(self, api: RestApi, database: str, table: str, safe_time_millis: int = TOKEN_SAFE_TIME_MILLIS,
                 clock: Callable[[], float] = time.time) -> None:
        self.api = api
        self.database = database
        self.table = table
        self.safe_time_millis = safe_time_millis
        self.clock = clock
        self._token: DataToken | None = None
        self._lock = threading.Lock()

    def _stale(self, token: DataToken | None) -> bool:
        if token is None:
            return True
        return renewal_due(token.expires_at_millis, token.fetched_at_millis, int(self.clock() * 1000),
                           self.safe_time_millis)

    def token(self) -> DataToken:
        with self._lock:
            if self._stale(self._token):
                fresh = self.api.load_table_token(self.database, self.table)
                self._token = DataToken(fresh.options, fresh.expires_at_millis, int(self.clock() * 1000))
            assert self._token is not None
            return self._token

    def options(self) -> dict[str, str]:
        return dict(self.token().options)
