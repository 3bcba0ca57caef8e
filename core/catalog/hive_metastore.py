"""The Hive Metastore (HMS) as Java Paimon's HiveCatalog talks to it: a typed Thrift client and
partition sync.

* the client (:class:`HiveMetastoreClient`): one connection, tried over the ``uri`` list in
  order, reopened after a failure; what it sends and receives is built and read by
  :mod:`.hms_table`;
* partitions (:class:`HivePartitionSync`): only for ``metastore.partitioned-table=true``, added
  and dropped as Java's ``HiveMetastoreClient`` does (the table lock is :mod:`.hive_lock`).

Errors (all from ``core/errors.py``): metastore unreachable, a read that lost its answer, or a
``MetaException`` -> :class:`CatalogUnavailable` (exit 8); a change whose answer was lost (it may have been applied) ->
:class:`OutcomeUnknown`; ``NoSuchObjectException`` -> :class:`NotFound`;
``AlreadyExistsException`` -> :class:`AlreadyExists`; invalid object/operation ->
:class:`InvalidInput`; an API the server lacks -> :class:`NotYetSupported`.

The Thrift bindings are pymetastore's (generated from a Hive 3/4 API). Against a 2.3 server only
calls 2.3 has are made; fields newer than the server are skipped by its Thrift decoder.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from ..errors import (
    AlreadyExists,
    CatalogUnavailable,
    CommitConflict,
    InvalidInput,
    NotFound,
    NotYetSupported,
    OutcomeUnknown,
)
from ..utils.durations import parse_hive_time_millis
from .hms_table import build_partition
from .hms_table import hms_table_kind as hms_table_kind  # hive_migrate imports it from here
from .options import HIVE_CLIENT_SOCKET_TIMEOUT

if TYPE_CHECKING:
    from pymetastore.hive_metastore import ttypes

T = TypeVar("T")

DEFAULT_SOCKET_TIMEOUT_S = 600.0  # HiveConf's hive.metastore.client.socket.timeout (Hive 2.x, 3.x)
DEFAULT_CONNECT_TIMEOUT_S = 10.0  # Java uses the socket timeout; a dead host is told sooner here

# -- the client --------------------------------------------------------------------------------


def parse_metastore_uris(uris: str) -> list[tuple[str, int]]:
    """``thrift://h1:9083,thrift://h2:9083`` (Java's ``uri`` / ``hive.metastore.uris``) -> hosts."""
    out: list[tuple[str, int]] = []
    for part in uris.split(","):
        part = part.strip()
        if not part:
            continue
        u = urlsplit(part)
        if u.scheme != "thrift" or not u.hostname:
            raise InvalidInput(f"metastore uri {part!r}: expected thrift://host:port")
        try:
            port = u.port or 9083
        except ValueError:
            raise InvalidInput(f"metastore uri {part!r}: bad port") from None
        out.append((u.hostname, port))
    if not out:
        raise InvalidInput("no metastore uri given (expected thrift://host:port[,thrift://...])")
    return out


def _thrift_errors() -> tuple[type[BaseException], ...]:
    from thrift.Thrift import TException

    return (TException, OSError, EOFError)


class HiveMetastoreClient:
    """One Thrift connection to a metastore, reopened after a failure (not thread-safe).

    ``uris``: one or more ``thrift://host:port`` separated by commas, tried in order (Java
    shuffles them). ``connect_timeout_s`` bounds each connect, ``timeout_s`` every call (None:
    no bound, as Java's ``hive.metastore.client.socket.timeout=0``).
    Reads and idempotent changes (unlock, heartbeat, adding or dropping partitions) are retried
    once on a fresh connection; other changes never are (a lost answer is
    :class:`OutcomeUnknown`), and go out only on a connection the metastore has not closed, so
    a metastore that stopped between two calls is unreachable (exit 8), not an unknown outcome.
    """

    def __init__(self, uris: str, *, connect_timeout_s: float | None = DEFAULT_CONNECT_TIMEOUT_S,
                 timeout_s: float | None = DEFAULT_SOCKET_TIMEOUT_S) -> None:
        self.uris = uris
        self.hosts = parse_metastore_uris(uris)
        self.connect_timeout_s = connect_timeout_s
        self.timeout_s = timeout_s
        self._transport: Any = None
        self._client: Any = None
        self.connected_to: str | None = None

    # -- connection --------------------------------------------------------------------------

    def _open(self) -> Any:
        if self._client is not None:
            return self._client
        from pymetastore.hive_metastore import ThriftHiveMetastore
        from thrift.protocol import TBinaryProtocol
        from thrift.transport import TSocket, TTransport

        # thrift logs each failed connect on its own at ERROR; the error raised below says it once
        logging.getLogger("thrift.transport.TSocket").setLevel(logging.CRITICAL)
        problems = []
        for host, port in self.hosts:
            sock = TSocket.TSocket(host, port)
            sock.setTimeout(None if self.connect_timeout_s is None else self.connect_timeout_s * 1000)
            transport = TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except _thrift_errors() as err:
                problems.append(f"{host}:{port}: {_reason(err)}")
                continue
            sock.setTimeout(None if self.timeout_s is None else self.timeout_s * 1000)
            self._transport = transport
            self._client = ThriftHiveMetastore.Client(TBinaryProtocol.TBinaryProtocol(transport))
            self.connected_to = f"thrift://{host}:{port}"
            return self._client
        raise CatalogUnavailable(f"Hive Metastore unreachable at {self.uris}: {'; '.join(problems)}")

    def close(self) -> None:
        if self._transport is not None:
            try:
                self._transport.close()
            except _thrift_errors():
                pass
        self._transport = None
        self._client = None
        self.connected_to = None

    def __enter__(self) -> HiveMetastoreClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _call(self, what: str, fn: Callable[[Any], T], *, mutating: bool, idempotent: bool = False) -> T:
        """Run ``fn(thrift client)`` with errors mapped; reads and ``idempotent`` changes get a
        second try on a fresh connection (e.g. after a metastore restart)."""
        from pymetastore.hive_metastore import ttypes
        from thrift.Thrift import TApplicationException

        attempts = 2 if idempotent or not mutating else 1
        for attempt in range(attempts):
            if mutating and not idempotent and self._transport is not None and not self._transport.isOpen():
                # the metastore closed our idle connection (it stopped or restarted): a change
                # sent on it would be lost without a word, so reconnect first (nothing sent yet)
                self.close()
            client = self._open()  # raises PaimonError when no host answers: nothing was sent
            try:
                return fn(client)
            except (ttypes.NoSuchObjectException, ttypes.UnknownDBException, ttypes.UnknownTableException,
                    ttypes.UnknownPartitionException) as err:
                raise NotFound(f"{what}: {_message(err)}") from None
            except ttypes.AlreadyExistsException as err:
                raise AlreadyExists(f"{what}: {_message(err)}") from None
            except (ttypes.InvalidObjectException, ttypes.InvalidOperationException,
                    ttypes.InvalidInputException, ttypes.InvalidPartitionException) as err:
                raise InvalidInput(f"{what}: the metastore refused it: {_message(err)}") from None
            except ttypes.MetaException as err:
                raise CatalogUnavailable(f"{what}: metastore error: {_message(err)}") from None
            except TApplicationException as err:
                self.close()
                raise NotYetSupported(f"{what}: the metastore at {self.connected_to or self.uris} "
                                      f"cannot do it: {_message(err)}") from None
            except ttypes.NoSuchLockException as err:
                raise NotFound(f"{what}: {_message(err)}") from None
            except (ttypes.NoSuchTxnException, ttypes.TxnAbortedException) as err:
                raise CommitConflict(f"{what}: {_message(err)}") from None
            except _thrift_errors() as err:
                where = self.connected_to or self.uris
                self.close()
                if _timed_out(err):
                    err = TimeoutError(f"no answer within {self.timeout_s:g} s ({HIVE_CLIENT_SOCKET_TIMEOUT})")
                if mutating and not idempotent:
                    raise OutcomeUnknown(
                        f"{what}: lost the Hive Metastore at {where} before its answer ({_reason(err)}); "
                        "the change may or may not have been applied"
                    ) from None
                if attempt + 1 == attempts:
                    raise CatalogUnavailable(f"{what}: Hive Metastore at {where} failed: {_reason(err)}") from None
        raise AssertionError("unreachable")

    # -- databases and tables ----------------------------------------------------------------

    def list_databases(self) -> list[str]:
        return list(self._call("list databases", lambda c: c.get_all_databases(), mutating=False))

    def get_database(self, name: str) -> ttypes.Database:
        return self._call(f"get database {name}", lambda c: c.get_database(name), mutating=False)

    def create_database(self, name: str, location: str | None, *, description: str | None = None,
                        parameters: Mapping[str, str] | None = None) -> None:
        """As Java's ``createDatabaseImpl``: location ``<warehouse>/<name>.db`` unless given."""
        from pymetastore.hive_metastore import ttypes

        db = ttypes.Database(name=name, description=description, locationUri=location,
                             parameters=dict(parameters or {}))
        self._call(f"create database {name}", lambda c: c.create_database(db), mutating=True)

    def drop_database(self, name: str, *, delete_data: bool = False, cascade: bool = False) -> None:
        self._call(f"drop database {name}", lambda c: c.drop_database(name, delete_data, cascade), mutating=True)

    def list_tables(self, database: str) -> list[str]:
        return list(self._call(f"list tables of {database}", lambda c: c.get_all_tables(database), mutating=False))

    def get_table(self, database: str, name: str) -> ttypes.Table:
        return self._call(f"get table {database}.{name}", lambda c: c.get_table(database, name), mutating=False)

    def find_table(self, database: str, name: str) -> ttypes.Table | None:
        """The table, or None when the HMS has none of that name."""
        try:
            return self.get_table(database, name)
        except NotFound:
            return None

    def get_schema(self, database: str, name: str) -> list[ttypes.FieldSchema]:
        """The columns the metastore derives through the table's SerDe, then the partition keys
        (Java's ``getSchema``: for Avro tables the Avro SerDe's view of them)."""
        return list(self._call(f"get schema of {database}.{name}", lambda c: c.get_schema(database, name),
                               mutating=False))

    def create_table(self, table: ttypes.Table) -> None:
        self._call(f"create table {table.dbName}.{table.tableName}", lambda c: c.create_table(table), mutating=True)

    def alter_table(self, database: str, name: str, table: ttypes.Table, *, cascade: bool = True,
                    environment: Mapping[str, str] | None = None) -> None:
        """Replace the table object (also a rename: a new db/table name in ``table``).

        ``cascade`` (Java 0.9 always passes it) carries column changes to existing partitions.
        On a rename of a MANAGED table whose location is the default one, the metastore moves
        the directory itself (its file system permitting).
        """
        from pymetastore.hive_metastore import ttypes

        props = {"CASCADE": "true"} if cascade else {}
        props.update(environment or {})  # e.g. Java's DO_NOT_UPDATE_STATS, skipAWSGlueArchive
        env = ttypes.EnvironmentContext(properties=props)
        self._call(f"alter table {database}.{name}",
                   lambda c: c.alter_table_with_environment_context(database, name, table, env), mutating=True)

    def drop_table(self, database: str, name: str, *, delete_data: bool) -> None:
        """``delete_data``: let the metastore delete a MANAGED table's directory (Java passes
        ``!external`` in 2.x and ``true`` in 0.9; an EXTERNAL table's files are never deleted)."""
        from pymetastore.hive_metastore import ttypes

        env = ttypes.EnvironmentContext(properties={"ifPurge": "TRUE"})  # as Java: no trash
        self._call(f"drop table {database}.{name}",
                   lambda c: c.drop_table_with_environment_context(database, name, delete_data, env), mutating=True)

    # -- partitions --------------------------------------------------------------------------

    def list_partitions(self, database: str, name: str) -> list[ttypes.Partition]:
        return list(self._call(f"list partitions of {database}.{name}",
                               lambda c: c.get_partitions(database, name, -1), mutating=False))

    def get_partition(self, database: str, name: str, values: Sequence[str]) -> ttypes.Partition:
        return self._call(f"get partition {list(values)} of {database}.{name}",
                          lambda c: c.get_partition(database, name, list(values)), mutating=False)

    def add_partitions(self, database: str, name: str, partitions: Sequence[ttypes.Partition]) -> None:
        """Add partitions, skipping those that exist (``ifNotExists``, as Java 2.x)."""
        from pymetastore.hive_metastore import ttypes

        if not partitions:
            return
        req = ttypes.AddPartitionsRequest(dbName=database, tblName=name, parts=list(partitions),
                                          ifNotExists=True, needResult=False)
        self._call(f"add partitions to {database}.{name}", lambda c: c.add_partitions_req(req), mutating=True,
                   idempotent=True)  # ifNotExists: a second try skips what the first added

    def drop_partition(self, database: str, name: str, values: Sequence[str]) -> bool:
        """Drop one partition's entry (never its files); False when it was not there."""
        try:
            self._call(f"drop partition {list(values)} of {database}.{name}",
                       lambda c: c.drop_partition(database, name, list(values), False), mutating=True,
                       idempotent=True)  # a second try finds it gone
        except NotFound:
            return False
        return True

    def mark_partition_for_event(self, database: str, name: str, spec: Mapping[str, str]) -> None:
        """``markPartitionForEvent(..., LOAD_DONE)`` (Java's ``markDonePartitions``); marking
        again only records another event, so a lost answer is retried."""
        from pymetastore.hive_metastore import ttypes

        self._call(f"mark partition {dict(spec)} of {database}.{name} done",
                   lambda c: c.markPartitionForEvent(database, name, dict(spec), ttypes.PartitionEventType.LOAD_DONE),
                   mutating=True, idempotent=True)

    def is_partition_marked_for_event(self, database: str, name: str, spec: Mapping[str, str]) -> bool:
        from pymetastore.hive_metastore import ttypes

        return bool(self._call(f"is partition {dict(spec)} of {database}.{name} marked done",
                               lambda c: c.isPartitionMarkedForEvent(database, name, dict(spec),
                                                                     ttypes.PartitionEventType.LOAD_DONE),
                               mutating=False))

    # -- locks -------------------------------------------------------------------------------

    def lock(self, request: ttypes.LockRequest) -> ttypes.LockResponse:
        return self._call("lock", lambda c: c.lock(request), mutating=True)

    def check_lock(self, lock_id: int) -> ttypes.LockResponse:
        from pymetastore.hive_metastore import ttypes

        return self._call(f"check lock {lock_id}", lambda c: c.check_lock(ttypes.CheckLockRequest(lockid=lock_id)),
                          mutating=False)

    def unlock(self, lock_id: int) -> None:
        from pymetastore.hive_metastore import ttypes

        self._call(f"unlock {lock_id}", lambda c: c.unlock(ttypes.UnlockRequest(lockid=lock_id)), mutating=True,
                   idempotent=True)

    def heartbeat(self, lock_id: int) -> None:
        from pymetastore.hive_metastore import ttypes

        self._call(f"heartbeat lock {lock_id}", lambda c: c.heartbeat(ttypes.HeartbeatRequest(lockid=lock_id)),
                   mutating=True, idempotent=True)

    def show_locks(self, database: str | None = None, table: str | None = None) -> list[LockInfo]:
        from pymetastore.hive_metastore import ttypes

        req = ttypes.ShowLocksRequest(dbname=database, tablename=table)
        resp = self._call("show locks", lambda c: c.show_locks(req), mutating=False)
        return [LockInfo.of(e) for e in resp.locks or []]


def _message(err: BaseException) -> str:
    msg = getattr(err, "message", None)
    return str(msg) if msg else (str(err) or type(err).__name__)


def socket_timeout_s(text: str | None) -> float | None:
    """``hive.metastore.client.socket.timeout`` as Java's HiveConf reads it (a bare number is
    seconds; ``0`` means no timeout); unset, HiveConf's default."""
    if text is None:
        return DEFAULT_SOCKET_TIMEOUT_S
    millis = parse_hive_time_millis(text, HIVE_CLIENT_SOCKET_TIMEOUT, 1_000_000_000)
    if millis > 2**31 - 1:  # Java keeps it in an int of milliseconds
        raise InvalidInput(f"{HIVE_CLIENT_SOCKET_TIMEOUT}={text!r}: too long (at most 24 days)")
    return millis / 1000 if millis else None


def metastore_clients(timeout: str | None) -> Callable[[str], HiveMetastoreClient]:
    """Clients of a metastore uri bounded as a ``hive.metastore.client.socket.timeout`` of
    ``timeout`` (None: unset) bounds Java's: every call, and the connect too (Hive's TSocket);
    unset, calls get HiveConf's default and the connect :data:`DEFAULT_CONNECT_TIMEOUT_S`.
    A bad value is :class:`InvalidInput` naming the key, now rather than at the first call."""
    call_s = socket_timeout_s(timeout)
    connect_s = DEFAULT_CONNECT_TIMEOUT_S if timeout is None else call_s

    def new_client(uri: str) -> HiveMetastoreClient:
        return HiveMetastoreClient(uri, connect_timeout_s=connect_s, timeout_s=call_s)

    return new_client


def _timed_out(err: BaseException) -> bool:
    from thrift.transport.TTransport import TTransportException

    if isinstance(err, TTransportException) and err.type == TTransportException.TIMED_OUT:
        return True
    return isinstance(err, TimeoutError) or isinstance(getattr(err, "inner", None), TimeoutError)


def _reason(err: BaseException) -> str:
    inner = getattr(err, "inner", None)
    if isinstance(inner, BaseException):
        return f"{_message(err)} ({inner})"
    return f"{type(err).__name__}: {_message(err)}" if not getattr(err, "message", None) else _message(err)


# -- partition sync ----------------------------------------------------------------------------


class HivePartitionSync:
    """Java's ``HiveMetastoreClient`` (the catalog's ``MetastoreClient``) for one table.

    Java's order, which callers keep: a commit adds the partitions of its ADD entries AFTER
    the snapshot is published (a commit callback); partition expiry and ``dropPartition`` drop
    the HMS partitions FIRST, then commit the drop. Snapshot expiry never touches partitions.
    Both calls are idempotent (existing partitions are skipped, missing ones ignored).
    """

    def __init__(self, client: HiveMetastoreClient, database: str, table: str) -> None:
        self.client = client
        self.database = database
        self.table = table
        self._hms_table: ttypes.Table | None = None

    def hms_table(self) -> ttypes.Table:
        if self._hms_table is None:
            self._hms_table = self.client.get_table(self.database, self.table)
        return self._hms_table

    def add_partitions(self, specs: Sequence[Mapping[str, str]]) -> None:
        table = self.hms_table()
        now = int(time.time())
        self.client.add_partitions(self.database, self.table, [build_partition(table, s, now_s=now) for s in specs])

    def drop_partitions(self, specs: Sequence[Mapping[str, str]]) -> int:
        """Drop the HMS entries (never files); returns how many existed."""
        return sum(self.client.drop_partition(self.database, self.table, list(s.values())) for s in specs)


@dataclass(frozen=True)
class LockInfo:
    """One entry of ``show_locks``."""

    lock_id: int
    database: str
    table: str | None
    state: str  # ACQUIRED, WAITING, ABORT, NOT_ACQUIRED
    type: str  # EXCLUSIVE, SHARED_READ, SHARED_WRITE
    user: str
    hostname: str
    acquired_at_ms: int | None
    last_heartbeat_ms: int | None
    blocked_by: int | None
    agent_info: str | None = None

    @staticmethod
    def of(e: Any) -> LockInfo:
        from pymetastore.hive_metastore import ttypes

        return LockInfo(
            lock_id=int(e.lockid), database=e.dbname, table=e.tablename,
            state=ttypes.LockState._VALUES_TO_NAMES.get(e.state, str(e.state)),
            type=ttypes.LockType._VALUES_TO_NAMES.get(e.type, str(e.type)),
            user=e.user, hostname=e.hostname, acquired_at_ms=e.acquiredat,
            last_heartbeat_ms=e.lastheartbeat or None, blocked_by=e.blockedByExtId, agent_info=e.agentInfo,
        )

    def describe(self, now_ms: int | None = None) -> str:
        now = int(time.time() * 1000) if now_ms is None else now_ms
        text = f"lock {self.lock_id} of {self.user}@{self.hostname}"
        if self.acquired_at_ms:
            text += f", held for {max(0, now - self.acquired_at_ms) // 1000} s"
        if self.last_heartbeat_ms:
            text += f", last heartbeat {max(0, now - self.last_heartbeat_ms) // 1000} s ago"
        return text
