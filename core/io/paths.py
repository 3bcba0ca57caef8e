"""Where every Paimon file lives, computed exactly as Java's path factories do.

Readers locate files by full path, so a partition directory escaped differently from Java
(or a DATE rendered as ``2022-01-08`` where Java wrote ``19000``) makes data invisible to
the other side. Branches own only their metadata (snapshot/schema/tag/consumer/changelog);
manifest, index and statistics files always resolve against the table root, bucket
directories against the table's *data root*: the table root, or ``<table>/<dir>`` when the
table sets ``data-file.path-directory`` (Java ``FileStorePathFactory.dataFilePath``). Every
bucket path below takes that data root, never the table path (see :func:`data_root`).
"""

from __future__ import annotations

import datetime
import decimal
import re
from collections.abc import Sequence
from typing import Any

from ..errors import CorruptMetadata, InvalidInput, NotYetSupported
from .fileio import join, parent

DEFAULT_PARTITION_NAME = "__DEFAULT_PARTITION__"
MAIN_BRANCH = "main"
BRANCH_PREFIX = "branch-"
POSTPONE_BUCKET = -2
PATH_DIRECTORY = "data-file.path-directory"

# Hive's escape set (PartitionPathUtils): 0x00-0x1F, DEL and these printable characters.
_ESCAPED = frozenset([chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{}[]^"))
_EPOCH = datetime.date(1970, 1, 1)


def table_path(warehouse: str, database: str, table: str) -> str:
    """``<warehouse>/<db>.db/<table>`` (the filesystem catalog's layout)."""
    return join(warehouse, f"{database}.db", table)


def table_relative(path: str, root: str) -> str:
    """A path as every listing of files shows it: relative to the table directory ``root`` when
    the file lies under it, else whole (an external data path keeps its scheme)."""
    prefix = root.rstrip("/") + "/"
    return path[len(prefix):] if path.startswith(prefix) else path


def is_main_branch(branch: str | None) -> bool:
    return branch is None or branch == "" or branch == MAIN_BRANCH


def branch_path(table_path: str, branch: str | None) -> str:
    """Root of a branch's metadata: the table itself for main, else ``branch/branch-<name>``."""
    if is_main_branch(branch):
        return table_path
    return join(table_path, "branch", BRANCH_PREFIX + str(branch))


def branch_dir(table_path: str) -> str:
    return join(table_path, "branch")


def snapshot_dir(table_path: str, branch: str | None = None) -> str:
    return join(branch_path(table_path, branch), "snapshot")


def schema_dir(table_path: str, branch: str | None = None) -> str:
    return join(branch_path(table_path, branch), "schema")


def tag_dir(table_path: str, branch: str | None = None) -> str:
    return join(branch_path(table_path, branch), "tag")


def consumer_dir(table_path: str, branch: str | None = None) -> str:
    return join(branch_path(table_path, branch), "consumer")


def changelog_dir(table_path: str, branch: str | None = None) -> str:
    return join(branch_path(table_path, branch), "changelog")


def manifest_dir(table_path: str) -> str:
    """Manifests are shared by all branches, so they sit under the table root."""
    return join(table_path, "manifest")


def index_dir(table_path: str) -> str:
    return join(table_path, "index")


def statistics_dir(table_path: str) -> str:
    return join(table_path, "statistics")


def iceberg_metadata_dir(table_path: str, catalog_location: bool) -> str:
    """Where Iceberg-compatible metadata lives (Java ``IcebergCommitCallback.catalogTableMetadataPath``):
    ``<table>/metadata`` beside the table, or for the catalog location (hadoop- and hive-catalog
    storage) ``<warehouse>/iceberg/<db>/<table>/metadata``, the warehouse of an Iceberg Hadoop catalog.

    The catalog location needs the warehouse layout (a ``<db>.db`` parent), as Java requires."""
    table_path = table_path.rstrip("/")
    name = table_path.rsplit("/", 1)[-1]
    if not catalog_location:
        return join(table_path, "metadata")
    db_path = parent(table_path)
    db_dir = db_path.rstrip("/").rsplit("/", 1)[-1]
    if not db_dir.endswith(".db") or len(db_dir) == len(".db"):
        raise NotYetSupported(
            f"{table_path}: Iceberg metadata in the catalog location needs a Paimon warehouse database "
            "(a <db>.db directory); set metadata.iceberg.storage-location=table-location for this table")
    return join(parent(db_path), "iceberg", db_dir[: -len(".db")], name, "metadata")


MAX_NAME_BYTES = 255  # NAME_MAX of Linux/macOS file systems and S3-compatible keys' usual limit
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # a regex: ~20x faster than a per-character test


def check_file_name(name: Any, what: str, path: str) -> str:
    """A file name a metadata file records (manifest list, manifest, data, extra, index or
    statistics file): one path component, resolved in the directory its kind lives in.

    Java trusts these names; a damaged or hostile ``../snapshot/snapshot-5`` would make expire
    or rollback delete a file of another kind, so such a name is corrupt metadata.
    """
    problem = None
    if not isinstance(name, str) or not name:
        problem = "is empty" if name == "" else f"is not a string ({type(name).__name__})"
    elif name in (".", "..") or "/" in name or "\\" in name:
        problem = "is a path, not a file name"
    elif _CONTROL.search(name):
        problem = "contains control characters"
    elif len(name.encode("utf-8", "surrogatepass")) > MAX_NAME_BYTES:
        problem = f"is longer than {MAX_NAME_BYTES} bytes"
    if problem is not None:
        shown = name if not isinstance(name, str) or len(name) <= 80 else name[:77] + "..."
        raise CorruptMetadata(path, f"{what} {shown!r} {problem}")
    return name


# The file system component each name becomes, and the longest one we write for it: tag and
# consumer files are written through a temporary ``.<file>.<uuid>.tmp`` next to them.
_TEMP_OVERHEAD = len("..") + 36 + len(".tmp")
_COMPONENT = {
    "database": ("{}.db", 0),
    "table": ("{}", 0),
    "branch": ("branch-{}", 0),
    "tag": ("tag-{}", _TEMP_OVERHEAD),
    "consumer": ("consumer-{}", _TEMP_OVERHEAD),
}


def max_name_bytes(kind: str) -> int:
    """Longest ``kind`` name (UTF-8 bytes) whose files still fit a 255-byte path component."""
    template, overhead = _COMPONENT[kind]
    return MAX_NAME_BYTES - len(template.format("")) - overhead


def check_name_length(kind: str, name: str) -> None:
    """Refuse, before any I/O, a name whose directory or file name would be too long for the
    file system (``OSError: File name too long`` half-way through a command otherwise)."""
    size = len(name.encode("utf-8", "surrogatepass"))
    limit = max_name_bytes(kind)
    if size > limit:
        template, overhead = _COMPONENT[kind]
        shown = name if len(name) <= 40 else name[:37] + "..."
        temp = " and its temporary file" if overhead else ""
        raise InvalidInput(
            f"{kind} name {shown!r} is {size} bytes long (UTF-8); at most {limit} bytes are allowed, so that "
            f"'{template.format('<name>')}'{temp} fit{'' if temp else 's'} the file system's {MAX_NAME_BYTES}-byte "
            "limit on a file name"
        )


def check_partition_dir(partition_path: str) -> str:
    """A partition directory a write is about to create: each ``key=value`` must fit the file
    system's limit on a name (else the write fails half-way with ``File name too long``)."""
    for part in partition_path.split("/"):
        size = len(part.encode("utf-8", "surrogatepass"))
        if size > MAX_NAME_BYTES:
            key = part.split("=", 1)[0]
            shown = part if len(part) <= 60 else part[:57] + "..."
            raise InvalidInput(
                f"partition value of column {key!r} is too long for a directory name: {shown!r} is {size} bytes, "
                f"at most {MAX_NAME_BYTES} are allowed")
    return partition_path


def bucket_dir(bucket: int) -> str:
    """``bucket-<n>``; the postpone bucket (-2) is ``bucket-postpone``."""
    if bucket == POSTPONE_BUCKET:
        return "bucket-postpone"
    return f"bucket-{bucket}"


def path_directory(value: str | None) -> str:
    """``data-file.path-directory`` (Java 1.0+, immutable) as the relative directory between
    the table root and the partition directories; "" when unset.

    Java resolves it as a child path of the table (and of each external root). An empty value
    is refused as Java refuses it; an absolute, scheme-qualified or ``.``/``..`` value would put
    data files outside the table's own tree, which this toolkit does not follow."""
    if value is None:
        return ""
    if value == "":
        raise InvalidInput(f"{PATH_DIRECTORY} is empty; remove the option or name a directory")
    parts = [p for p in value.split("/") if p]
    odd = value.startswith("/") or "\\" in value or ":" in (parts[0] if parts else "")
    if odd or not parts or any(p in (".", "..") or any(ord(c) < 0x20 for c in p) for p in parts):
        raise NotYetSupported(
            f"{PATH_DIRECTORY}={value!r} is not a plain relative directory inside the table; "
            "tables whose data files live outside their own directory tree are not supported")
    return "/".join(parts)


def data_root(table_path: str, directory: str | None) -> str:
    """Where a table's partition and bucket directories live: ``<table>[/<path-directory>]``.

    ``directory`` is the raw ``data-file.path-directory`` option. Java resolves old files by
    the current option too; the option is immutable once the table has data."""
    return join(table_path, path_directory(directory))


def relative_bucket_path(directory: str | None, partition_path: str, bucket: int) -> str:
    """``[<path-directory>/]<partition>/bucket-N``, as it also sits under each external root
    (Java ``FileStorePathFactory.relativeBucketPath``)."""
    return join(path_directory(directory), partition_path, bucket_dir(bucket))


def bucket_path(data_root: str, partition_path: str, bucket: int) -> str:
    """A bucket directory under a table's :func:`data_root`."""
    return join(data_root, partition_path, bucket_dir(bucket))


def data_file_path(
    data_root: str,
    partition_path: str,
    bucket: int,
    file_name: str,
    external_path: str | None = None,
) -> str:
    """Full path of a data file; an ``_EXTERNAL_PATH`` recorded in the manifest wins."""
    if external_path:
        return external_path
    return join(data_root, partition_path, bucket_dir(bucket), file_name)


def aligned_path(
    data_root: str,
    partition_path: str,
    bucket: int,
    file_name: str,
    aligned_external_path: str | None = None,
) -> str:
    """A file kept next to a data file (its ``_EXTRA_FILES``, e.g. the ``.index`` file):
    in the directory of the data file's ``_EXTERNAL_PATH``, else in the bucket directory
    (Java ``DataFilePathFactory.toAlignedPath``)."""
    return join(data_file_dir(data_root, partition_path, bucket, aligned_external_path), file_name)


def data_file_dir(data_root: str, partition_path: str, bucket: int, external_path: str | None = None) -> str:
    """The directory a data file is in: its ``_EXTERNAL_PATH``'s parent, else the bucket's."""
    if external_path:
        return parent(external_path)
    return join(data_root, partition_path, bucket_dir(bucket))


# -- partition directories --------------------------------------------------------------


def escape_path_name(name: str) -> str:
    """Hive escaping: each char of the escape set becomes ``%XX`` (uppercase hex)."""
    if not any(c in _ESCAPED for c in name):
        return name
    return "".join(f"%{ord(c):02X}" if c in _ESCAPED else c for c in name)


def unescape_path_name(path: str) -> str:
    """Inverse of :func:`escape_path_name` (malformed ``%`` sequences stay as they are)."""
    if "%" not in path:
        return path
    out = []
    i = 0
    while i < len(path):
        c = path[i]
        if c == "%" and _is_hex(path[i + 1 : i + 3]):
            out.append(chr(int(path[i + 1 : i + 3], 16)))
            i += 3
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _is_hex(s: str) -> bool:
    return len(s) == 2 and all(ch in "0123456789abcdefABCDEF" for ch in s)


def partition_path(
    names: Sequence[str],
    values_as_str: Sequence[str | None],
    default_name: str = DEFAULT_PARTITION_NAME,
    only_value: bool = False,
) -> str:
    """Relative partition directory ``k1=v1/k2=v2`` (no trailing slash; "" if unpartitioned).

    Null, empty or whitespace-only values become ``default_name`` as in Java's
    ``generatePartValues``. ``only_value`` mirrors ``partition.generate-path-only-value``.
    """
    if len(names) != len(values_as_str):
        raise InvalidInput(f"partition has {len(names)} keys but {len(values_as_str)} values")
    parts = []
    for name, value in zip(names, values_as_str, strict=True):
        if value is None or value.strip() == "":
            value = default_name
        if only_value and value in (".", ".."):
            raise InvalidInput(f"partition value {value!r} cannot be used as a path component")
        esc = escape_path_name(value)
        parts.append(esc if only_value else f"{escape_path_name(name)}={esc}")
    return "/".join(parts)


def parse_partition_path(path: str) -> dict[str, str]:
    """``k=v/k2=v2`` back to an (unescaped) spec, e.g. for orphan-file checks."""
    spec: dict[str, str] = {}
    for seg in path.strip("/").split("/"):
        if not seg:
            continue
        if "=" not in seg:
            raise InvalidInput(f"partition path segment {seg!r} is not key=value")
        k, v = seg.split("=", 1)
        spec[unescape_path_name(k)] = unescape_path_name(v)
    return spec


def partition_values_to_str(
    values: Sequence[Any], types: Sequence[Any], legacy_name: bool = True
) -> list[str | None]:
    """Render partition values the way Java names directories (see module docs)."""
    return [partition_value_to_str(v, t, legacy_name) for v, t in zip(values, types, strict=True)]


def partition_value_to_str(value: Any, data_type: Any, legacy_name: bool = True) -> str | None:
    """One partition value as Java's directory-name string.

    legacy_name=True (``partition.legacy-name``, the default) is ``toString`` of Paimon's
    *internal* value: DATE is the epoch-day integer, TIME the millisecond of day, TIMESTAMP
    ``LocalDateTime.toString``. legacy_name=False is Paimon's cast to STRING.
    """
    if value is None:
        return None
    # Imported here: the path helpers of a listing or snapshot read need no type system (issue 28).
    from ..data import types as t
    from ..data.java_format import java_double, java_float, java_local_datetime

    if isinstance(data_type, t.BooleanType) or isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(data_type, t.DateType):
        days = _to_epoch_days(value)
        if legacy_name:
            return str(days)
        return (_EPOCH + datetime.timedelta(days=days)).isoformat()
    if isinstance(data_type, t.TimeType):
        millis = _to_millis_of_day(value)
        if legacy_name:
            return str(millis)
        return _format_time(millis, getattr(data_type, "precision", 0))
    if isinstance(data_type, (t.TimestampType, t.LocalZonedTimestampType)):
        dt = _to_datetime_nanos(value)
        if legacy_name:
            return java_local_datetime(*dt)
        return _format_sql_timestamp(*dt, precision=getattr(data_type, "precision", 6))
    if isinstance(data_type, t.DecimalType):
        d = value if isinstance(value, decimal.Decimal) else decimal.Decimal(str(value))
        if isinstance(data_type.scale, int):
            d = d.quantize(decimal.Decimal(1).scaleb(-data_type.scale))
        return format(d, "f")
    if isinstance(data_type, t.FloatType):
        return java_float(float(value))
    if isinstance(data_type, t.DoubleType):
        return java_double(float(value))
    if isinstance(value, (bytes, bytearray)):
        # Java would print the array identity; UTF-8 text is the only useful rendering.
        return bytes(value).decode("utf-8", errors="replace")
    return str(value)


def _to_epoch_days(value: Any) -> int:
    if isinstance(value, datetime.datetime):
        value = value.date()
    if isinstance(value, datetime.date):
        return (value - _EPOCH).days
    return int(value)


def _to_millis_of_day(value: Any) -> int:
    if isinstance(value, datetime.time):
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000
    return int(value)


def _to_datetime_nanos(value: Any) -> tuple[datetime.datetime, int]:
    """(wall-clock datetime truncated to the second, nano of second)."""
    if hasattr(value, "millisecond") and hasattr(value, "nano_of_millisecond"):
        ms = int(value.millisecond)
        nanos = (ms % 1000) * 1_000_000 + int(value.nano_of_millisecond)
        base = datetime.datetime(1970, 1, 1) + datetime.timedelta(seconds=ms // 1000)
        return base, nanos
    if isinstance(value, datetime.datetime):
        if value.tzinfo is not None:
            value = value.astimezone(datetime.timezone.utc).replace(tzinfo=None)
        return value.replace(microsecond=0), value.microsecond * 1000
    if isinstance(value, datetime.date):
        return datetime.datetime(value.year, value.month, value.day), 0
    raise InvalidInput(f"cannot use {value!r} as a TIMESTAMP partition value")


def _format_sql_timestamp(dt: datetime.datetime, nano: int, precision: int) -> str:
    frac = f"{nano:09d}"
    while len(frac) > precision and frac.endswith("0"):
        frac = frac[:-1]
    base = dt.strftime("%Y-%m-%d %H:%M:%S") if dt.year >= 1000 else (
        f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d} {dt.hour:02d}:{dt.minute:02d}:{dt.second:02d}"
    )
    return base + ("." + frac if frac else "")


def _format_time(millis: int, precision: int) -> str:
    millis %= 86_400_000
    h, rem = divmod(millis, 3_600_000)
    m, rem = divmod(rem, 60_000)
    s, ms = divmod(rem, 1000)
    out = f"{h:02d}:{m:02d}:{s:02d}"
    p = min(precision, 3)
    if p > 0:
        out += "." + f"{ms:03d}"[:p]
    return out


def partition_path_for(schema: Any, values: Sequence[Any]) -> str:
    """The partition directory of decoded partition ``values`` under a table schema's options."""
    if not schema.partition_keys:
        return ""
    opts = schema.core_options
    strs = partition_values_to_str(values, schema.partition_types, opts.partition_legacy_name)
    only_value = str(schema.options.get("partition.generate-path-only-value", "false")).lower() == "true"
    return partition_path(schema.partition_keys, strs, opts.partition_default_name, only_value)


def partition_spec_of(schema: Any, partition: bytes) -> dict[str, str]:
    """A serialized partition as a metastore names it: key -> the directory's value, unescaped
    (nulls and blanks as ``partition.default-name``), as Java's ``generatePartValues``."""
    from ..data import binary_row

    values = binary_row.deserialize(partition, schema.partition_types)
    strs = partition_values_to_str(values, schema.partition_types, schema.core_options.partition_legacy_name)
    default = schema.core_options.partition_default_name
    return {k: (default if v is None or v.strip() == "" else v) for k, v in zip(schema.partition_keys, strs,
                                                                                strict=True)}


def partition_dir_of(schema: Any, partition: bytes) -> str:
    """The directory (relative to the data root) of a serialized partition; "" when unpartitioned."""
    if not schema.partition_keys:
        return ""
    from ..data import binary_row

    return partition_path_for(schema, binary_row.deserialize(partition, schema.partition_types))
