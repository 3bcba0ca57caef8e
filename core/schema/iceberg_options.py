"""Iceberg-compatibility options (Java ``IcebergOptions``) and what of them this toolkit writes.

A table with ``metadata.iceberg.storage`` (1.0+) or 0.9's ``metadata.iceberg-compatible=true``
gets Iceberg metadata after every commit (``core/iceberg``). The options are read here, below
the feature gate, so the gate can refuse what is not written (the rest catalog, hive-catalog through
another client than the metastore's Thrift API, format version 3, column types Java cannot
map) before a command changes anything.

Java 1.x does not know the 0.9 key at all; 0.9 wrote its metadata where ``table-location``
writes it, so we treat ``metadata.iceberg-compatible=true`` as ``table-location`` (and an
explicit ``metadata.iceberg.storage`` wins).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..data.types import (
    ArrayType,
    BlobType,
    DataType,
    LocalZonedTimestampType,
    MapType,
    MultisetType,
    RowType,
    TimestampType,
    TimeType,
    VariantType,
)
from ..errors import InvalidInput
from .options import parse_bool, parse_int

PREFIX = "metadata.iceberg."
STORAGE = "metadata.iceberg.storage"
LEGACY_COMPATIBLE = "metadata.iceberg-compatible"  # Paimon 0.9
STORAGE_LOCATION = "metadata.iceberg.storage-location"
FORMAT_VERSION = "metadata.iceberg.format-version"
COMPACT_MIN_FILE_NUM = "metadata.iceberg.compaction.min.file-num"
COMPACT_MAX_FILE_NUM = "metadata.iceberg.compaction.max.file-num"
DELETE_AFTER_COMMIT = "metadata.iceberg.delete-after-commit.enabled"
PREVIOUS_VERSIONS_MAX = "metadata.iceberg.previous-versions-max"
MANIFEST_COMPRESSION = "metadata.iceberg.manifest-compression"
MANIFEST_LEGACY_VERSION = "metadata.iceberg.manifest-legacy-version"
REST_PREFIX = "metadata.iceberg.rest."
# options only the hive-catalog (or Glue) committer reads; Java ignores them for other storages
HIVE_ONLY_KEYS = frozenset({
    "metadata.iceberg.uri", "metadata.iceberg.hive-conf-dir", "metadata.iceberg.hadoop-conf-dir",
    "metadata.iceberg.hive-client-class", "metadata.iceberg.database", "metadata.iceberg.table",
    "metadata.iceberg.glue.skip-archive", "metadata.iceberg.hive-skip-update-stats",
})
KNOWN_KEYS = frozenset({
    STORAGE, STORAGE_LOCATION, FORMAT_VERSION, COMPACT_MIN_FILE_NUM, COMPACT_MAX_FILE_NUM, DELETE_AFTER_COMMIT,
    PREVIOUS_VERSIONS_MAX, MANIFEST_COMPRESSION, MANIFEST_LEGACY_VERSION, *HIVE_ONLY_KEYS,
})

DISABLED = "disabled"
TABLE_LOCATION = "table-location"
HADOOP_CATALOG = "hadoop-catalog"
HIVE_CATALOG = "hive-catalog"
REST_CATALOG = "rest-catalog"
STORAGE_TYPES = (DISABLED, TABLE_LOCATION, HADOOP_CATALOG, HIVE_CATALOG, REST_CATALOG)
WRITTEN_STORAGES = (TABLE_LOCATION, HADOOP_CATALOG, HIVE_CATALOG)
HIVE_CLIENT_CLASS = "metadata.iceberg.hive-client-class"
HADOOP_CONF_DIR = "metadata.iceberg.hadoop-conf-dir"
# the only client hive-catalog storage talks through: the Hive Metastore's Thrift API (Java's default)
DEFAULT_HIVE_CLIENT_CLASS = "org.apache.hadoop.hive.metastore.HiveMetaStoreClient"
CATALOG_LOCATION = "catalog-location"
STORAGE_LOCATIONS = (TABLE_LOCATION, CATALOG_LOCATION)
# Iceberg manifest codecs we write (Java's names) -> fastavro's codec names
MANIFEST_CODECS = {"snappy": "snappy", "zstd": "zstandard", "gzip": "deflate", "deflate": "deflate",
                   "none": "null", "uncompressed": "null", "null": "null"}


@dataclass(frozen=True)
class IcebergOptions:
    """The Iceberg options of one table, with Java's defaults."""

    storage: str
    storage_location: str  # where the metadata directory is (the default follows the storage)
    format_version: int = 2
    compaction_min_file_num: int = 10
    compaction_max_file_num: int = 50
    delete_after_commit: bool = True
    previous_versions_max: int = 0
    manifest_compression: str = "snappy"
    manifest_legacy_version: bool = False

    @property
    def enabled(self) -> bool:
        return self.storage != DISABLED

    @property
    def avro_codec(self) -> str:
        return MANIFEST_CODECS[self.manifest_compression]


def _storage(options: Mapping[str, str]) -> str:
    raw = options.get(STORAGE)
    if raw is not None and raw.strip():
        value = raw.strip().lower()
        if value not in STORAGE_TYPES:
            raise InvalidInput(f"option {STORAGE}={raw!r}: expected one of {', '.join(STORAGE_TYPES)}")
        if value != DISABLED:
            return value
    legacy = options.get(LEGACY_COMPATIBLE)
    if legacy is not None and legacy.strip() and parse_bool(legacy, LEGACY_COMPATIBLE):
        return TABLE_LOCATION
    return DISABLED


def iceberg_options(options: Mapping[str, str]) -> IcebergOptions:
    """Parse the ``metadata.iceberg.*`` options; a malformed value is InvalidInput naming it."""
    storage = _storage(options)
    if storage == DISABLED:
        return IcebergOptions(DISABLED, TABLE_LOCATION)
    raw_location = options.get(STORAGE_LOCATION, "").strip().lower()
    if raw_location and raw_location not in STORAGE_LOCATIONS:
        raise InvalidInput(f"option {STORAGE_LOCATION}={options[STORAGE_LOCATION]!r}: expected one of "
                           f"{', '.join(STORAGE_LOCATIONS)}")
    location = raw_location or (TABLE_LOCATION if storage == TABLE_LOCATION else CATALOG_LOCATION)

    def integer(key: str, default: int) -> int:
        v = options.get(key)
        return default if v is None or not v.strip() else parse_int(v, key)

    def boolean(key: str, default: bool) -> bool:
        v = options.get(key)
        return default if v is None or not v.strip() else parse_bool(v, key)

    # 0.9 compressed its Iceberg manifests as the table's own (manifest.compression): keep that
    # for tables only 0.9's key enables, so a 0.9 writer still reads what we write
    legacy = not (options.get(STORAGE) or "").strip() or options[STORAGE].strip().lower() == DISABLED
    default_codec = options.get("manifest.compression", "zstd") if legacy else "snappy"
    compression = options.get(MANIFEST_COMPRESSION, default_codec).strip().lower()
    return IcebergOptions(
        storage=storage,
        storage_location=location,
        format_version=integer(FORMAT_VERSION, 2),
        compaction_min_file_num=integer(COMPACT_MIN_FILE_NUM, 10),
        compaction_max_file_num=integer(COMPACT_MAX_FILE_NUM, 50),
        delete_after_commit=boolean(DELETE_AFTER_COMMIT, True),
        previous_versions_max=integer(PREVIOUS_VERSIONS_MAX, 0),
        manifest_compression=compression,
        manifest_legacy_version=boolean(MANIFEST_LEGACY_VERSION, False),
    )


def iceberg_enabled(options: Mapping[str, str]) -> bool:
    """Whether commits must produce Iceberg metadata (malformed options count as enabled, so
    the gate refuses them by name instead of silently skipping the metadata)."""
    try:
        return iceberg_options(options).enabled
    except InvalidInput:
        return True


def unsupported_option(options: Mapping[str, str]) -> str | None:
    """The ``key=value`` of an Iceberg setting this toolkit does not write, or None.

    Raises InvalidInput for a malformed value. Only meaningful when Iceberg metadata is on.
    """
    opts = iceberg_options(options)
    if not opts.enabled:
        return None
    if opts.storage not in WRITTEN_STORAGES:
        return f"{STORAGE}={opts.storage}"
    if opts.storage == HIVE_CATALOG:
        client_class = (options.get(HIVE_CLIENT_CLASS) or "").strip()
        if client_class and client_class != DEFAULT_HIVE_CLIENT_CLASS:
            return f"{HIVE_CLIENT_CLASS}={client_class}"  # e.g. AWS Glue's AWSCatalogMetastoreClient
        if (options.get(HADOOP_CONF_DIR) or "").strip():
            return f"{HADOOP_CONF_DIR}={options[HADOOP_CONF_DIR]}"  # no Hadoop configuration is read
    if opts.format_version != 2:
        if opts.format_version not in (2, 3):
            raise InvalidInput(f"option {FORMAT_VERSION}={opts.format_version}: Iceberg format version 2 or 3")
        return f"{FORMAT_VERSION}={opts.format_version}"
    if opts.manifest_compression not in MANIFEST_CODECS:
        return f"{MANIFEST_COMPRESSION}={opts.manifest_compression}"
    for key in sorted(options):
        if key.startswith(PREFIX) and key not in KNOWN_KEYS and not key.startswith(REST_PREFIX):
            return f"{key}={options[key]}"
    if opts.compaction_min_file_num < 1 or opts.compaction_max_file_num < 1 or opts.previous_versions_max < 0:
        raise InvalidInput(f"options {COMPACT_MIN_FILE_NUM} / {COMPACT_MAX_FILE_NUM} must be positive and "
                           f"{PREVIOUS_VERSIONS_MAX} must not be negative")
    return None


def unmappable_type(dt: DataType) -> str | None:
    """Why Java's Iceberg compatibility cannot publish a column of this type, or None.

    Java maps TIME only up to precision 3 and timestamps only from 3 to 6 (its bound
    conversion rejects the others; 7..9 would be Iceberg v3's ``timestamp_ns``), and never
    publishes VARIANT (it needs Iceberg v3 row lineage) or BLOB.
    """
    if isinstance(dt, TimeType) and dt.precision > 3:
        return f"TIME({dt.precision})"
    if isinstance(dt, (TimestampType, LocalZonedTimestampType)) and not 3 <= dt.precision <= 6:
        return dt.as_sql().replace(" NOT NULL", "")
    if isinstance(dt, (VariantType, BlobType)):
        return dt.root
    if isinstance(dt, (ArrayType, MultisetType)):
        return unmappable_type(dt.element)
    if isinstance(dt, MapType):
        return unmappable_type(dt.key) or unmappable_type(dt.value)
    if isinstance(dt, RowType):
        for f in dt.fields:
            found = unmappable_type(f.type)
            if found is not None:
                return found
    return None
