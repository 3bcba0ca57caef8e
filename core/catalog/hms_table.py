"""The HMS table object of a Paimon table, as Java Paimon's HiveCatalog writes and recognises it.

* the table object (:func:`build_hms_table`, :func:`update_hms_table`): Java's
  ``HiveCatalog.createHiveTable`` / ``alterTableToHms`` (0.9 and 2.x agree; where they differ,
  2.x is followed and the difference is named at the function), with Paimon types named as
  Hive names them (:func:`hive_type_name`, Java's ``HiveTypeUtils``);
* a Paimon table in the HMS is recognised by its input/output format classes only
  (:func:`is_paimon_table`), as Java does; the ``table_type=PAIMON`` parameter is not trusted;
* partition objects (:func:`build_partition`): at ``<table location>/k=v/...`` with the
  table's storage descriptor, as Java's ``HiveMetastoreClient`` adds them.

Pure functions over pymetastore's Thrift types: nothing here talks to a metastore
(:mod:`.hive_metastore` does, :mod:`.hive_lock` holds its lock).
"""

from __future__ import annotations

import copy
import getpass
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

from ..data.type_visitor import DataTypeVisitor
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
    InvalidInput,
    NotYetSupported,
)
from ..io.paths import partition_path, partition_values_to_str
from ..schema.table_schema import TableSchema

if TYPE_CHECKING:
    from pymetastore.hive_metastore import ttypes


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


# -- Paimon -> Hive types ----------------------------------------------------------------------


def hive_type_name(data_type: DataType, *, hive3: bool = False) -> str:
    """Java's ``HiveTypeUtils.toTypeInfo(type).getTypeName()``.

    ``hive3``: TIMESTAMP WITH LOCAL TIME ZONE becomes ``timestamp with local time zone`` as Java
    writes it with Hive 3 classes on its classpath; with Hive 2 (and Java 0.9 always) it is
    ``timestamp``. VARIANT and BLOB exist only in Java 2.x (0.9 refuses them).
    """
    return (_HIVE3 if hive3 else _HIVE2).visit(data_type)


class _HiveTypeName(DataTypeVisitor[str]):
    def __init__(self, hive3: bool) -> None:
        self.hive3 = hive3

    def unsupported(self, dt: DataType) -> NoReturn:
        raise NotYetSupported(f"type {dt.as_sql()} has no Hive column type")

    def visit_boolean(self, dt: BooleanType) -> str:
        return "boolean"

    def visit_tinyint(self, dt: TinyIntType) -> str:
        return "tinyint"

    def visit_smallint(self, dt: SmallIntType) -> str:
        return "smallint"

    def visit_int(self, dt: IntType) -> str:
        return "int"

    def visit_bigint(self, dt: BigIntType) -> str:
        return "bigint"

    def visit_float(self, dt: FloatType) -> str:
        return "float"

    def visit_double(self, dt: DoubleType) -> str:
        return "double"

    def visit_binary(self, dt: BinaryType | VarBinaryType | BlobType) -> str:
        return "binary"

    visit_varbinary = visit_blob = visit_binary

    def visit_date(self, dt: DateType) -> str:
        return "date"

    def visit_time(self, dt: TimeType) -> str:
        return "string"

    def visit_timestamp(self, dt: TimestampType) -> str:
        return "timestamp"

    def visit_decimal(self, dt: DecimalType) -> str:
        return f"decimal({dt.precision},{dt.scale})"

    def visit_char(self, dt: CharType) -> str:
        return "string" if dt.length > HIVE_CHAR_MAX else f"char({dt.length})"

    def visit_varchar(self, dt: VarCharType) -> str:
        return "string" if dt.length > HIVE_VARCHAR_MAX else f"varchar({dt.length})"

    def visit_local_zoned_timestamp(self, dt: LocalZonedTimestampType) -> str:
        return "timestamp with local time zone" if self.hive3 else "timestamp"

    def visit_array(self, dt: ArrayType) -> str:
        return f"array<{self.visit(dt.element)}>"

    def visit_multiset(self, dt: MultisetType) -> str:
        return f"map<{self.visit(dt.element)},int>"

    def visit_map(self, dt: MapType) -> str:
        return f"map<{self.visit(dt.key)},{self.visit(dt.value)}>"

    def visit_row(self, dt: RowType) -> str:
        return "struct<" + ",".join(f"{f.name}:{self.visit(f.type)}" for f in dt.fields) + ">"

    def visit_variant(self, dt: VariantType) -> str:
        return "struct<value:binary,metadata:binary>"


_HIVE2 = _HiveTypeName(hive3=False)
_HIVE3 = _HiveTypeName(hive3=True)


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
