"""The Hive Metastore (HMS) as Java Paimon's HiveCatalog uses it: a typed Thrift client, the HMS
table object of a Paimon table, partition sync and the table lock.

Everything here follows what Java writes, so a table registered by either side is found, read
and committed to by the other:

* the table object (:func:`build_hms_table`, :func:`update_hms_table`): Java's
  ``HiveCatalog.createHiveTable`` / ``alterTableToHms`` (0.9 and 2.x agree; where they differ,
  2.x is followed and the difference is named at the function);
* a Paimon table in the HMS is recognised by its input/output format classes only
  (:func:`is_paimon_table`), as Java does; the ``table_type=PAIMON`` parameter is not trusted;
* partitions (:class:`HivePartitionSync`): only for ``metastore.partitioned-table=true``,
  at ``<table location>/k=v/...`` with the table's storage descriptor, as Java's
  ``HiveMetastoreClient`` adds and drops them;
* the lock (:class:`HiveMetastoreLock`): Java's ``HiveCatalogLock``, one EXCLUSIVE table-level
  lock, polled with back-off, released in every outcome; in addition it sends heartbeats while
  held (a metastore with Hive's lock house-keeping on expires unheartbeated locks after
  ``hive.txn.timeout``) and names the holder when it gives up.

Errors (all from ``core/errors.py``): metastore unreachable, a read that lost its answer, or a
``MetaException`` -> :class:`CatalogUnavailable` (exit 8); a change whose answer was lost (it may have been applied) ->
:class:`OutcomeUnknown`; ``NoSuchObjectException`` -> :class:`NotFound`;
``AlreadyExistsException`` -> :class:`AlreadyExists`; invalid object/operation ->
:class:`InvalidInput`; the lock not acquired in ``lock-acquire-timeout``, or lost while held ->
:class:`LockNotAcquired` (a :class:`CommitConflict`, exit 5); an API the server lacks -> :class:`NotYetSupported`.

The Thrift bindings are pymetastore's (generated from a Hive 3/4 API). Against a 2.3 server only
calls 2.3 has are made; fields newer than the server are skipped by its Thrift decoder.
"""

from __future__ import annotations

import copy
import getpass
import logging
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit

from ..data.types import (
    ArrayType,
    BigIntType,
    BinaryType,
    BlobType,
    BooleanType,
    CharType,
    DataField,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    SmallIntType,
    TimestampType,
    TimeType,
    TinyIntType,
    VarBinaryType,
    VarCharType,
    VariantType,
)
from ..errors import (
    AlreadyExists,
    CatalogUnavailable,
    CommitConflict,
    InvalidInput,
    LockNotAcquired,
    NotFound,
    NotYetSupported,
    OutcomeUnknown,
    PaimonError,
)
from ..io.paths import partition_path, partition_values_to_str
from ..schema.table_schema import TableSchema
from ..utils.durations import parse_duration_millis

if TYPE_CHECKING:
    from pymetastore.hive_metastore import ttypes

log = logging.getLogger(__name__)
T = TypeVar("T")

# -- what Java writes ------------------------------------------------------------------------

INPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonInputFormat"
OUTPUT_FORMAT = "org.apache.paimon.hive.mapred.PaimonOutputFormat"
SERDE = "org.apache.paimon.hive.PaimonSerDe"
STORAGE_HANDLER = "org.apache.paimon.hive.PaimonStorageHandler"
# Paimon's predecessor (Flink Table Store); Java 0.9 still recognises its tables
LEGACY_INPUT_FORMAT = "org.apache.flink.table.store.mapred.TableStoreInputFormat"
LEGACY_OUTPUT_FORMAT = "org.apache.flink.table.store.mapred.TableStoreOutputFormat"
TABLE_TYPE_PROP = "table_type"
PAIMON_TABLE_TYPE = "PAIMON"
STORAGE_HANDLER_PROP = "storage_handler"  # hive_metastoreConstants.META_TABLE_STORAGE
EXTERNAL_PROP = "EXTERNAL"
COMMENT_PROP = "comment"
LOCATION_PROP = "location"  # location-in-properties=true keeps the location here
HIVE_PREFIX = "hive."
MANAGED_TABLE = "MANAGED_TABLE"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
VIRTUAL_VIEW = "VIRTUAL_VIEW"
# Parameters the metastore itself maintains (statistics, DDL time): never ours to compare or write.
HMS_MANAGED_PARAMETERS = frozenset(
    {"transient_lastDdlTime", "totalSize", "numFiles", "numRows", "rawDataSize",
     "COLUMN_STATS_ACCURATE", "numFilesErasureCoded", "last_modified_by", "last_modified_time"}
)
HIVE_CHAR_MAX = 255  # HiveChar.MAX_CHAR_LENGTH
HIVE_VARCHAR_MAX = 65535  # HiveVarchar.MAX_VARCHAR_LENGTH
COLUMN_COMMENT_MAX = 255  # COLUMNS_V2.COMMENT is VARCHAR(256); Java 2.x truncates to 255

# Java's defaults (CatalogOptions)
DEFAULT_LOCK_CHECK_MAX_SLEEP_S = 8.0
DEFAULT_LOCK_ACQUIRE_TIMEOUT_S = 480.0
DEFAULT_HEARTBEAT_INTERVAL_S = 60.0  # well inside hive.txn.timeout's default 300 s


# -- Paimon -> Hive types ----------------------------------------------------------------------


def hive_type_name(data_type: DataType, *, hive3: bool = False) -> str:
    """Java's ``HiveTypeUtils.toTypeInfo(type).getTypeName()``.

    ``hive3``: TIMESTAMP WITH LOCAL TIME ZONE becomes ``timestamp with local time zone`` as Java
    writes it with Hive 3 classes on its classpath; with Hive 2 (and Java 0.9 always) it is
    ``timestamp``. VARIANT and BLOB exist only in Java 2.x (0.9 refuses them).
    """
    t = data_type
    simple = {
        BooleanType: "boolean", TinyIntType: "tinyint", SmallIntType: "smallint", IntType: "int",
        BigIntType: "bigint", FloatType: "float", DoubleType: "double", BinaryType: "binary",
        VarBinaryType: "binary", DateType: "date", TimeType: "string", TimestampType: "timestamp",
        BlobType: "binary",
    }
    name = simple.get(type(t))
    if name is not None:
        return name
    if isinstance(t, DecimalType):
        return f"decimal({t.precision},{t.scale})"
    if isinstance(t, CharType):
        return "string" if t.length > HIVE_CHAR_MAX else f"char({t.length})"
    if isinstance(t, VarCharType):
        return "string" if t.length > HIVE_VARCHAR_MAX else f"varchar({t.length})"
    if isinstance(t, LocalZonedTimestampType):
        return "timestamp with local time zone" if hive3 else "timestamp"
    if isinstance(t, ArrayType):
        return f"array<{hive_type_name(t.element, hive3=hive3)}>"
    if isinstance(t, MultisetType):
        return f"map<{hive_type_name(t.element, hive3=hive3)},int>"
    if isinstance(t, MapType):
        return f"map<{hive_type_name(t.key, hive3=hive3)},{hive_type_name(t.value, hive3=hive3)}>"
    if isinstance(t, RowType):
        return "struct<" + ",".join(f"{f.name}:{hive_type_name(f.type, hive3=hive3)}" for f in t.fields) + ">"
    if isinstance(t, VariantType):
        return "struct<value:binary,metadata:binary>"
    raise NotYetSupported(f"type {t.as_sql()} has no Hive column type")


def normalize_column_comment(comment: str | None) -> str | None:
    """Java 2.x's ``HiveTableUtils.normalizeColumnComment``: no line breaks, at most 255 chars.

    Java 0.9 stores the description as it is, which the 2.3 metastore's Derby/MySQL schema
    rejects past 256 characters; partition key comments are not normalized (another column).
    """
    if comment is None:
        return None
    flat = comment.replace("\n", " ").replace("\r", " ")
    if len(flat) <= COLUMN_COMMENT_MAX:
        return flat
    return flat[: COLUMN_COMMENT_MAX - 3] + "..."


# -- the HMS table object ---------------------------------------------------------------------


def metastore_partitioned(schema: TableSchema) -> bool:
    """Whether the HMS table has partition keys (and so gets partitions): Java's
    ``metastorePartitioned`` = partition keys and ``metastore.partitioned-table=true``, or
    ``metastore.tag-to-partition`` (tags show as partitions of one STRING key)."""
    opts = schema.options
    partitioned = bool(schema.partition_keys) and opts.get("metastore.partitioned-table", "false").lower() == "true"
    return partitioned or opts.get("metastore.tag-to-partition") is not None


def table_parameters(schema: TableSchema, *, sync_all_properties: bool) -> dict[str, str]:
    """The table options Java copies into the HMS parameters.

    ``sync-all-properties=true`` (Java's default from 1.1 on; false in 0.9 and 1.0): every option
    plus ``primary-key``, ``partition`` and ``bucket-key`` joined with commas. Otherwise only
    ``hive.*`` options with the prefix cut off, plus (2.x) ``partition.expiration-time`` and
    ``data-file.path-directory``.
    """
    options = schema.options
    if sync_all_properties:
        params = dict(options)
        if schema.primary_keys:
            params["primary-key"] = ",".join(schema.primary_keys)
        if schema.partition_keys:
            params["partition"] = ",".join(schema.partition_keys)
        if schema.bucket_keys:
            params["bucket-key"] = ",".join(schema.bucket_keys)
        return params
    params = {k[len(HIVE_PREFIX):]: v for k, v in options.items() if k.startswith(HIVE_PREFIX)}
    for key in ("partition.expiration-time", "data-file.path-directory"):
        if key in options:
            params[key] = options[key]
    return params


def _field_schema(field: DataField, *, column: bool, hive3: bool) -> ttypes.FieldSchema:
    from pymetastore.hive_metastore import ttypes

    comment = normalize_column_comment(field.description) if column else field.description
    return ttypes.FieldSchema(name=field.name, type=hive_type_name(field.type, hive3=hive3), comment=comment)


def _apply_schema(table: ttypes.Table, schema: TableSchema, location: str, *, location_in_properties: bool,
                  hive3: bool) -> None:
    """Java's ``updateHmsTable``: formats, serde, columns, partition keys, comment, location."""
    from pymetastore.hive_metastore import ttypes

    sd = table.sd if table.sd is not None else ttypes.StorageDescriptor()
    sd.inputFormat = INPUT_FORMAT
    sd.outputFormat = OUTPUT_FORMAT
    serde = sd.serdeInfo if sd.serdeInfo is not None else ttypes.SerDeInfo()
    serde.parameters = {}
    serde.serializationLib = SERDE
    sd.serdeInfo = serde
    opts = schema.options
    if schema.partition_keys and opts.get("metastore.partitioned-table", "false").lower() == "true":
        by_name = {f.name: f for f in schema.fields}
        table.partitionKeys = [_field_schema(by_name[k], column=False, hive3=hive3) for k in schema.partition_keys]
        keys = set(schema.partition_keys)
        sd.cols = [_field_schema(f, column=True, hive3=hive3) for f in schema.fields if f.name not in keys]
    else:
        tag_field = opts.get("metastore.tag-to-partition")
        if tag_field is not None:
            if schema.partition_keys:
                raise InvalidInput("metastore.tag-to-partition cannot be used on a partitioned table")
            table.partitionKeys = [
                _field_schema(DataField(0, tag_field, VarCharType()), column=False, hive3=hive3)
            ]
        sd.cols = [_field_schema(f, column=True, hive3=hive3) for f in schema.fields]
    table.sd = sd
    if schema.comment is not None:
        table.parameters[COMMENT_PROP] = schema.comment
    if location_in_properties:
        table.parameters[LOCATION_PROP] = location
    else:
        sd.location = location


def build_hms_table(
    database: str,
    name: str,
    schema: TableSchema,
    location: str,
    *,
    external: bool = False,
    sync_all_properties: bool = True,
    location_in_properties: bool = False,
    owner: str | None = None,
    now_s: int | None = None,
    hive3: bool = False,
) -> ttypes.Table:
    """The HMS table Java's HiveCatalog creates for a Paimon table (``createHiveTable``).

    ``location`` is stored as given: Java writes its Hadoop ``Path`` form (``file:/wh/db.db/t``,
    ``s3://bucket/wh/db.db/t``), see :func:`java_path`. ``external`` (catalog option
    ``table.type=external``; in 2.x also a table created at an explicit ``path`` or with the
    table option ``EXTERNAL=TRUE``) makes an ``EXTERNAL_TABLE`` with ``EXTERNAL=TRUE``, whose
    files a drop keeps. ``owner``: the OS user name, as Java's ``user.name``.
    """
    from pymetastore.hive_metastore import ttypes

    now = int(time.time()) if now_s is None else now_s
    params = table_parameters(schema, sync_all_properties=sync_all_properties)
    params[TABLE_TYPE_PROP] = PAIMON_TABLE_TYPE
    params[STORAGE_HANDLER_PROP] = STORAGE_HANDLER
    if external:
        params[EXTERNAL_PROP] = "TRUE"
    table = ttypes.Table(
        tableName=name,
        dbName=database,
        owner=owner if owner is not None else getpass.getuser(),
        createTime=now,
        lastAccessTime=now,
        retention=2147483647,  # Integer.MAX_VALUE
        sd=None,
        partitionKeys=[],
        parameters=params,
        viewOriginalText=None,
        viewExpandedText=None,
        tableType=EXTERNAL_TABLE if external else MANAGED_TABLE,
    )
    _apply_schema(table, schema, location, location_in_properties=location_in_properties, hive3=hive3)
    return table


def update_hms_table(
    existing: ttypes.Table,
    schema: TableSchema,
    *,
    sync_all_properties: bool = True,
    removed_options: Sequence[str] = (),
    location: str | None = None,
    location_in_properties: bool = False,
    hive3: bool = False,
) -> ttypes.Table:
    """The HMS table after a schema change (Java's ``alterTableToHms``), as a new object.

    Parameters are merged (the metastore's own and unknown ones stay); options removed by the
    change are dropped from them (2.x; 0.9 leaves them behind). Columns and partition keys are
    rebuilt from ``schema``; the location stays unless ``location`` is given.
    """
    table = copy.deepcopy(existing)
    if table.parameters is None:
        table.parameters = {}
    table.parameters.update(table_parameters(schema, sync_all_properties=sync_all_properties))
    for key in removed_options:
        table.parameters.pop(key, None)
    loc = location if location is not None else hms_table_location(existing)
    if loc is None:
        raise InvalidInput(f"HMS table {existing.dbName}.{existing.tableName} has no location")
    _apply_schema(table, schema, loc, location_in_properties=location_in_properties, hive3=hive3)
    return table


def java_path(uri: str) -> str:
    """How Java's Hadoop ``Path.toString`` prints a location: ``file:///x`` -> ``file:/x``,
    an empty authority dropped, no trailing slash; other URIs as they are."""
    if uri.startswith("file:///"):
        uri = "file:/" + uri[len("file:///"):]
    elif uri.startswith("file://localhost/"):
        uri = "file:/" + uri[len("file://localhost/"):]
    return uri.rstrip("/") if len(uri) > 1 and not uri.endswith(":/") else uri


# -- what is in the HMS -----------------------------------------------------------------------


def is_paimon_table(table: ttypes.Table) -> bool:
    """Java's test: the Paimon (or legacy Table Store) input AND output format classes."""
    sd = table.sd
    if sd is None:
        return False
    return (sd.inputFormat, sd.outputFormat) in ((INPUT_FORMAT, OUTPUT_FORMAT),
                                                 (LEGACY_INPUT_FORMAT, LEGACY_OUTPUT_FORMAT))


def is_view(table: ttypes.Table) -> bool:
    return table.tableType == VIRTUAL_VIEW


def is_external(table: ttypes.Table) -> bool:
    """Java 2.x decides drop/rename by the table type alone (0.9 by the catalog's table.type)."""
    return table.tableType == EXTERNAL_TABLE


def hms_table_kind(table: ttypes.Table) -> str:
    """``paimon``, ``view``, ``format`` (a plain Hive table in parquet/orc/csv/json/text that Java
    2.x can open as a format table) or ``other``."""
    if is_paimon_table(table):
        return "paimon"
    if is_view(table):
        return "view"
    sd = table.sd
    if sd is None or sd.serdeInfo is None:
        return "other"
    serde = (sd.serdeInfo.serializationLib or "").lower()
    if "parquet" in serde or "orc" in serde or "Text" in (sd.inputFormat or ""):
        return "format"
    return "other"


def hms_table_location(table: ttypes.Table) -> str | None:
    """Where the table lives: the ``location`` parameter when Java keeps it there
    (``location-in-properties``), else the storage descriptor's."""
    params = table.parameters or {}
    if params.get(LOCATION_PROP):
        return params[LOCATION_PROP]
    return table.sd.location if table.sd is not None else None


# -- partitions --------------------------------------------------------------------------------


def hms_partition_spec(schema: TableSchema, values: Sequence[Any]) -> dict[str, str]:
    """Decoded partition values -> the HMS partition spec Java adds (``generatePartValues``):
    values rendered as Paimon names partition directories, null/blank as the table's
    ``partition.default-name``."""
    opts = schema.core_options
    strs = partition_values_to_str(values, schema.partition_types, opts.partition_legacy_name)
    default = opts.partition_default_name
    return {k: (default if v is None or v.strip() == "" else v)
            for k, v in zip(schema.partition_keys, strs, strict=True)}


def partition_location(hms_table: ttypes.Table, spec: Mapping[str, str]) -> str:
    """``<table location>[/<data-file.path-directory>]/k=v/...`` (Hive path escaping), as Java."""
    base = hms_table_location(hms_table)
    if base is None:
        raise InvalidInput(f"HMS table {hms_table.dbName}.{hms_table.tableName} has no location")
    sub = (hms_table.parameters or {}).get("data-file.path-directory")
    if sub:
        base = f"{base}/{sub}"
    return f"{base}/{partition_path(list(spec), list(spec.values()))}"


def build_partition(hms_table: ttypes.Table, spec: Mapping[str, str], *, now_s: int | None = None) -> ttypes.Partition:
    """An HMS partition as Java adds it: values in key order, a copy of the table's storage
    descriptor with the partition's location, create/access time now, no parameters."""
    from pymetastore.hive_metastore import ttypes

    keys = [k.name for k in hms_table.partitionKeys or []]
    if list(spec) != keys:
        raise InvalidInput(
            f"partition {dict(spec)} does not match the HMS partition keys {keys} of "
            f"{hms_table.dbName}.{hms_table.tableName}"
        )
    now = int(time.time()) if now_s is None else now_s
    sd = copy.deepcopy(hms_table.sd)
    sd.location = partition_location(hms_table, spec)
    return ttypes.Partition(
        values=list(spec.values()), dbName=hms_table.dbName, tableName=hms_table.tableName,
        createTime=now, lastAccessTime=now, sd=sd,
    )


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
    shuffles them). ``connect_timeout_s`` bounds each connect, ``timeout_s`` every call.
    Reads and idempotent changes (unlock, heartbeat, adding or dropping partitions) are retried
    once on a fresh connection; other changes never are (a lost answer is
    :class:`OutcomeUnknown`), and go out only on a connection the metastore has not closed, so
    a metastore that stopped between two calls is unreachable (exit 8), not an unknown outcome.
    """

    def __init__(self, uris: str, *, connect_timeout_s: float = 10.0, timeout_s: float = 60.0) -> None:
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
            sock.setTimeout(self.connect_timeout_s * 1000)
            transport = TTransport.TBufferedTransport(sock)
            try:
                transport.open()
            except _thrift_errors() as err:
                problems.append(f"{host}:{port}: {_reason(err)}")
                continue
            sock.setTimeout(self.timeout_s * 1000)
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


# -- the lock ----------------------------------------------------------------------------------


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


@dataclass(frozen=True)
class LockSettings:
    """The catalog options of the lock, in seconds."""

    check_max_sleep_s: float = DEFAULT_LOCK_CHECK_MAX_SLEEP_S
    acquire_timeout_s: float = DEFAULT_LOCK_ACQUIRE_TIMEOUT_S
    heartbeat_interval_s: float = DEFAULT_HEARTBEAT_INTERVAL_S
    release_retry_s: float = 30.0

    @staticmethod
    def from_options(options: Mapping[str, str]) -> LockSettings:
        """``lock-check-max-sleep`` / ``lock-acquire-timeout`` as Java parses them (``8 s``,
        ``8 min``, a bare number = milliseconds)."""
        def seconds(key: str, default: float) -> float:
            raw = options.get(key)
            return default if raw is None else parse_duration_millis(raw, key) / 1000.0

        return LockSettings(
            check_max_sleep_s=seconds("lock-check-max-sleep", DEFAULT_LOCK_CHECK_MAX_SLEEP_S),
            acquire_timeout_s=seconds("lock-acquire-timeout", DEFAULT_LOCK_ACQUIRE_TIMEOUT_S),
        )


class HeldLock:
    """A lock this process holds; heartbeats run until it is released."""

    def __init__(self, lock_id: int, database: str, table: str) -> None:
        self.lock_id = lock_id
        self.database = database
        self.table = table
        self.lost_reason: str | None = None

    @property
    def lost(self) -> bool:
        return self.lost_reason is not None

    def ensure_held(self) -> None:
        """Raise :class:`CommitConflict` if a heartbeat found the lock gone (expired or broken by
        an operator): call it right before the step the lock protects."""
        if self.lost_reason is not None:
            raise LockNotAcquired(
                f"lost the Hive Metastore lock {self.lock_id} on {self.database}.{self.table}: {self.lost_reason}"
            )


class HiveMetastoreLock:
    """Java's ``HiveCatalogLock``: an EXCLUSIVE table-level HMS lock around a commit.

    Acquire: ``lock`` with the OS user and host name, then ``check_lock`` every 0.1, 0.2, 0.4 ...
    seconds, the wait capped at ``check_max_sleep_s``, until acquired or ``acquire_timeout_s``
    has passed; a request still waiting is withdrawn (unlocked) and :class:`CommitConflict`
    names the holder. Release: ``unlock`` in every outcome; a failed unlock is logged (the
    metastore expires the lock if its house-keeping is on, or an operator releases it with
    :func:`release_lock`), never hides the result or the error of the work.

    Unlike Java, a held lock is heartbeated every ``heartbeat_interval_s`` from a background
    thread on its own connection: without it a metastore with Hive's house-keeping on
    (``hive.compactor.initiator.on`` with DbTxnManager) expires a commit's lock after
    ``hive.txn.timeout`` (300 s) while the commit still runs.
    """

    def __init__(
        self,
        client_factory: Callable[[], HiveMetastoreClient],
        settings: LockSettings | None = None,
        *,
        user: str | None = None,
        hostname: str | None = None,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client_factory = client_factory
        self.settings = settings or LockSettings()
        self.user = user if user is not None else getpass.getuser()
        self.hostname = hostname if hostname is not None else socket.gethostname()
        self._sleep = sleep
        self._clock = clock

    def run_with_lock(self, database: str, table: str, fn: Callable[[], T]) -> T:
        with self.hold(database, table):
            return fn()

    @contextmanager
    def hold(self, database: str, table: str) -> Iterator[HeldLock]:
        client = self.client_factory()
        try:
            held = self._acquire(client, database, table)
            stop = threading.Event()
            beat = threading.Thread(target=self._heartbeats, args=(held, stop), daemon=True,
                                    name=f"hms-lock-heartbeat-{held.lock_id}")
            beat.start()
            try:
                yield held
            finally:
                stop.set()
                beat.join()
                self._release(client, held.lock_id)
        finally:
            client.close()

    def _acquire(self, client: HiveMetastoreClient, database: str, table: str) -> HeldLock:
        from pymetastore.hive_metastore import ttypes

        component = ttypes.LockComponent(
            type=ttypes.LockType.EXCLUSIVE, level=ttypes.LockLevel.TABLE, dbname=database, tablename=table,
            operationType=None,  # unset, as Java sends it (a 2.3 server in test mode rejects UNSET)
        )
        # a name only this request has: a request whose answer is lost can be found again
        agent = f"paimon-cli {uuid.uuid4().hex}"
        request = ttypes.LockRequest(component=[component], user=self.user, hostname=self.hostname, agentInfo=agent)
        start = self._clock()
        try:
            resp = client.lock(request)
        except OutcomeUnknown as err:
            raise self._lost_request(database, table, agent, err) from None
        lock_id = int(resp.lockid)
        acquired = False
        try:
            wait = 0.05
            while resp.state == ttypes.LockState.WAITING:
                if self._clock() - start >= self.settings.acquire_timeout_s:
                    break
                wait = min(wait * 2, self.settings.check_max_sleep_s)
                self._sleep(wait)
                try:
                    resp = client.check_lock(lock_id)
                except NotFound:  # our waiting request expired (its check is its heartbeat)
                    raise LockNotAcquired(
                        f"lost the Hive Metastore lock request {lock_id} on {database}.{table} while waiting"
                    ) from None
            acquired = resp.state == ttypes.LockState.ACQUIRED
        finally:
            if not acquired:
                self._release(client, lock_id)
        if acquired:
            return HeldLock(lock_id, database, table)
        state = ttypes.LockState._VALUES_TO_NAMES.get(resp.state, str(resp.state))
        waited = self._clock() - start
        holders = self._holders(client, database, table, lock_id)
        raise LockNotAcquired(
            f"could not lock {database}.{table} in the Hive Metastore within {waited:.0f} s "
            f"(lock-acquire-timeout {self.settings.acquire_timeout_s:g} s, last state {state})"
            + (f"; held by {holders}" if holders else "")
        )

    def _lost_request(self, database: str, table: str, agent: str, err: OutcomeUnknown) -> CatalogUnavailable:
        """The metastore took the lock request but its answer never came (it hung, or died after
        reading it). Nothing was committed; what is unknown is whether the metastore holds a
        lock for us now or grants one later (a hung metastore works off its socket when it
        wakes up). Such a lock would block every commit to the table until Hive's house-keeping
        expires it, which most metastores never do. So the request is looked up by its agent
        info until the metastore answers again (for ``release_retry_s``) and released."""
        deadline = self._clock() + self.settings.release_retry_s
        answered_at: float | None = None
        wait = 0.2
        while True:
            client = self.client_factory()
            try:
                mine = [x.lock_id for x in client.show_locks(database, table) if x.agent_info == agent]
                for lock_id in mine:
                    client.unlock(lock_id)
                if mine:
                    outcome = f"the lock {mine[0]} it granted late was released"
                    break
                answered_at = self._clock() if answered_at is None else answered_at
                # a request still in the metastore's socket is taken up shortly after it answers
                if self._clock() - answered_at >= 2.0:
                    outcome = "it granted no lock"
                    break
            except NotFound:  # unlocked meanwhile (expired)
                outcome = "it granted no lock"
                break
            except PaimonError as e:
                if self._clock() + wait > deadline:
                    log.warning("Hive Metastore lock request %r on %s.%s may still be granted (%s); it would block "
                                "commits to that table until it expires or is released by id", agent, database,
                                table, e)
                    outcome = f"a lock it may still grant is left to its house-keeping (agent info {agent!r})"
                    break
            finally:
                client.close()
            self._sleep(wait)
            wait = min(wait * 2, 2.0)
        lost = str(err).removeprefix("lock: ").split("; the change may")[0]  # it was a lock request: say what
        return CatalogUnavailable(f"could not lock {database}.{table}: {lost}; nothing was committed, {outcome}")

    @staticmethod
    def _holders(client: HiveMetastoreClient, database: str, table: str, own: int) -> str:
        try:
            locks = client.show_locks(database, table)
        except PaimonError:
            return ""
        return "; ".join(x.describe() for x in locks if x.lock_id != own and x.state == "ACQUIRED")

    def _release(self, client: HiveMetastoreClient, lock_id: int) -> None:
        """Unlock, retrying for ``release_retry_s`` (a metastore restarting keeps its locks, and
        one left behind blocks every later commit until it expires or an operator frees it)."""
        deadline = self._clock() + self.settings.release_retry_s
        wait = 0.5
        while True:
            try:
                client.unlock(lock_id)
                return
            except NotFound as err:
                log.debug("Hive Metastore lock %s already gone: %s", lock_id, err)
                return
            except PaimonError as err:
                if self._clock() + wait > deadline:
                    log.warning(
                        "could not release Hive Metastore lock %s (%s); it blocks commits to that table "
                        "until the metastore expires it or it is released by id", lock_id, err,
                    )
                    return
                self._sleep(wait)
                wait = min(wait * 2, 5.0)

    def _heartbeats(self, held: HeldLock, stop: threading.Event) -> None:
        interval = self.settings.heartbeat_interval_s
        client: HiveMetastoreClient | None = None
        try:
            while not stop.wait(interval):
                if client is None:
                    client = self.client_factory()
                try:
                    client.heartbeat(held.lock_id)
                except (NotFound, CommitConflict) as err:  # LockNotAcquired is a CommitConflict
                    held.lost_reason = f"the metastore no longer has it ({err})"
                    log.warning("Hive Metastore lock %s on %s.%s is gone: %s", held.lock_id, held.database,
                                held.table, err)
                    return
                except PaimonError as err:  # unreachable for a moment: keep trying
                    log.warning("heartbeat of Hive Metastore lock %s failed: %s", held.lock_id, err)
        finally:
            if client is not None:
                client.close()


def release_lock(client: HiveMetastoreClient, lock_id: int) -> None:
    """Release any lock by id (the 2.3 metastore checks no owner): the way out of a lock left by
    a dead process on a metastore that never expires locks (its house-keeping off, the default)."""
    client.unlock(lock_id)
