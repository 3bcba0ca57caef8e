"""Table schemas: the ``schema/schema-<id>`` JSON files, their validation and evolution.

Every schema version a table ever had stays on disk because data files name the schema
id they were written with; readers map old files to the current layout by field id. So
new ids must be allocated exactly as Java does (nested ROW fields included), files must
be published with write-if-absent, and a schema Java would refuse must never be written.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from ..data.types import (
    ArrayType,
    BigIntType,
    CharType,
    DataField,
    DataType,
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
    TinyIntType,
    VarCharType,
)
from ..errors import AlreadyExists, CommitConflict, CorruptMetadata, InvalidInput, NotFound
from ..io import fileio as fio
from ..io.fileio import FileIO
from ..utils.json_util import dumps_jackson, loads_metadata
from .file_index_options import rename_file_index_options, validate_file_index_options
from .options import (
    CHANGELOG_PRODUCERS,
    IMMUTABLE_OPTIONS,
    MERGE_ENGINES,
    CoreOptions,
    check_option_keys,
    parse_int,
)

CURRENT_VERSION = 3
PAIMON_07_VERSION = 1  # files without "version" are read as this
PAIMON_08_VERSION = 2
SCHEMA_PREFIX = "schema-"
_SCHEMA_FILE = re.compile(r"^schema-(\d+)$")

SYSTEM_FIELD_NAMES = frozenset({"_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind"})
KEY_FIELD_PREFIX = "_KEY_"
SYSTEM_FIELD_ID_START = 2147483647 // 2
_COMPLEX = (ArrayType, MapType, MultisetType, RowType)
_KNOWN_FORMATS = frozenset({"parquet", "orc", "avro", "csv", "json", "text", "lance", "blob", "vortex"})


# ---------------------------------------------------------------------------------------
# Field ids
# ---------------------------------------------------------------------------------------


class _Counter:
    def __init__(self, value: int) -> None:
        self.value = value

    def next(self) -> int:
        self.value += 1
        return self.value


def _reassign(dtype: DataType, counter: _Counter) -> DataType:
    """Give every ROW field inside ``dtype`` a fresh id, in Java's order.

    Java's ReassignFieldId rebuilds a ROW by visiting each field's type first and only then
    drawing the field's own id, so a nested row's children get smaller ids than the nested
    field itself. Default values of nested fields are dropped, as in Java.
    """
    if isinstance(dtype, RowType):
        new_fields = []
        for f in dtype.fields:
            inner = _reassign(f.type, counter)
            new_fields.append(DataField(counter.next(), f.name, inner, f.description))
        return RowType(fields=tuple(new_fields), nullable=dtype.nullable)
    if isinstance(dtype, ArrayType):
        return ArrayType(element=_reassign(dtype.element, counter), nullable=dtype.nullable)
    if isinstance(dtype, MultisetType):
        return MultisetType(element=_reassign(dtype.element, counter), nullable=dtype.nullable)
    if isinstance(dtype, MapType):
        return MapType(
            key=_reassign(dtype.key, counter), value=_reassign(dtype.value, counter), nullable=dtype.nullable
        )
    return dtype


def assign_field_ids(
    columns: Iterable[tuple[str, DataType, str | None]], highest_field_id: int = -1
) -> tuple[list[DataField], int]:
    """Columns to DataFields with ids as Java's ``Schema.Builder.column`` assigns them.

    Returns the fields and the new highest field id. A column draws its id first, then the
    ROW fields inside its type are numbered (see :func:`_reassign`).
    """
    counter = _Counter(highest_field_id)
    out = []
    for name, dtype, desc in columns:
        fid = counter.next()
        out.append(DataField(fid, name, _reassign(dtype, counter), desc))
    return out, counter.value


def _collect_field_ids(fields: Iterable[DataField], out: list[int]) -> None:
    for f in fields:
        out.append(f.id)
        _collect_type_ids(f.type, out)


def _collect_type_ids(dtype: DataType, out: list[int]) -> None:
    if isinstance(dtype, RowType):
        _collect_field_ids(dtype.fields, out)
    elif isinstance(dtype, (ArrayType, MultisetType)):
        _collect_type_ids(dtype.element, out)
    elif isinstance(dtype, MapType):
        _collect_type_ids(dtype.key, out)
        _collect_type_ids(dtype.value, out)


def current_highest_field_id(fields: Iterable[DataField]) -> int:
    """Largest non-system field id anywhere in ``fields`` (nested rows included), or -1.

    Raises InvalidInput when an id repeats, which Java reports as a broken schema.
    """
    ids: list[int] = []
    _collect_field_ids(fields, ids)
    seen: set[int] = set()
    for i in ids:
        if i in seen:
            raise InvalidInput(f"broken schema: field id {i} is used twice")
        seen.add(i)
    usable = [i for i in ids if i < SYSTEM_FIELD_ID_START]
    return max(usable) if usable else -1


# ---------------------------------------------------------------------------------------
# Schema (request) and TableSchema (file)
# ---------------------------------------------------------------------------------------


@dataclass
class Schema:
    """What a user asks to create; normalized into a TableSchema by SchemaManager."""

    fields: list[DataField]
    partition_keys: list[str] = field(default_factory=list)
    primary_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    comment: str | None = None

    @staticmethod
    def of(
        columns: Iterable[tuple[str, DataType, str | None]],
        partition_keys: Iterable[str] = (),
        primary_keys: Iterable[str] = (),
        options: dict[str, str] | None = None,
        comment: str | None = None,
    ) -> Schema:
        """Build from (name, type, comment) columns, numbering fields the way Java does."""
        fields, _ = assign_field_ids(columns)
        return Schema(fields, list(partition_keys), list(primary_keys), dict(options or {}), comment)


def _duplicates(names: list[str]) -> list[str]:
    seen: set[str] = set()
    dup: list[str] = []
    for n in names:
        if n in seen and n not in dup:
            dup.append(n)
        seen.add(n)
    return dup


def _split_keys(text: str) -> list[str]:
    return [s.strip() for s in text.split(",") if s.strip()]


def normalize_schema(schema: Schema) -> Schema:
    """Apply Java's Schema constructor rules.

    ``primary-key``/``partition`` given as options become the key lists (and leave the
    options); names must be unique and exist; primary-key columns become NOT NULL.
    """
    options = dict(schema.options)
    pks = list(schema.primary_keys)
    parts = list(schema.partition_keys)
    if "primary-key" in options:
        if pks:
            raise InvalidInput("cannot define the primary key both as a column constraint and as option 'primary-key'")
        pks = _split_keys(options.pop("primary-key"))
    if "partition" in options:
        if parts:
            raise InvalidInput("cannot define the partition both as partition keys and as option 'partition'")
        parts = _split_keys(options.pop("partition"))
    names = [f.name for f in schema.fields]
    _check_keys(names, parts, pks)
    pk_set = set(pks)
    fields = [
        replace(f, type=f.type.copy(nullable=False)) if f.name in pk_set and f.type.nullable else f
        for f in schema.fields
    ]
    return Schema(fields, parts, pks, options, schema.comment)


def _check_keys(names: list[str], parts: list[str], pks: list[str]) -> None:
    if not names:
        raise InvalidInput("a table needs at least one column")
    dup = _duplicates(names)
    if dup:
        raise InvalidInput(f"duplicate column name(s) {dup} in {names}")
    dup = _duplicates(parts)
    if dup:
        raise InvalidInput(f"partition keys {parts} contain duplicate column(s) {dup}")
    missing = [p for p in parts if p not in names]
    if missing:
        raise InvalidInput(f"partition key(s) {missing} are not columns of the table {names}")
    dup = _duplicates(pks)
    if dup:
        raise InvalidInput(f"primary key {pks} contains duplicate column(s) {dup}")
    missing = [p for p in pks if p not in names]
    if missing:
        raise InvalidInput(f"primary key column(s) {missing} are not columns of the table {names}")


@dataclass(frozen=True)
class TableSchema:
    """One ``schema-<id>`` file. ``options`` keeps the file's key order."""

    version: int
    id: int
    fields: list[DataField]
    highest_field_id: int
    partition_keys: list[str]
    primary_keys: list[str]
    options: dict[str, str]
    comment: str | None
    time_millis: int

    # -- JSON -----------------------------------------------------------------------------

    @staticmethod
    def from_json(text: str, path: str) -> TableSchema:
        """Parse a schema file, applying the defaults Java applies to old versions."""
        obj = loads_metadata(text, path)
        if not isinstance(obj, dict):
            raise CorruptMetadata(path, "schema JSON is not an object")
        try:
            version = int(obj["version"]) if obj.get("version") is not None else PAIMON_07_VERSION
            sid = int(obj["id"])
            raw_fields = obj["fields"]
            if not isinstance(raw_fields, list):
                raise CorruptMetadata(path, "'fields' is not an array")
            fields = [DataField.from_json(f) for f in raw_fields]
            highest = int(obj["highestFieldId"])
            parts = [_as_text(x) for x in obj.get("partitionKeys") or []]
            pks = [_as_text(x) for x in obj.get("primaryKeys") or []]
            raw_opts = obj.get("options") or {}
            if not isinstance(raw_opts, dict):
                raise CorruptMetadata(path, "'options' is not an object")
            options = {str(k): _as_text(v) for k, v in raw_opts.items()}
            comment = obj.get("comment")
            comment = None if comment is None else _as_text(comment)
            time_millis = int(obj.get("timeMillis") or 0)
        except CorruptMetadata:
            raise
        except KeyError as e:
            raise CorruptMetadata(path, f"schema lacks required key {e.args[0]!r}") from e
        except (InvalidInput, TypeError, ValueError) as e:
            raise CorruptMetadata(path, f"bad schema: {e}") from e
        if version <= PAIMON_07_VERSION and "bucket" not in options:
            options["bucket"] = "1"  # 0.7 and earlier defaulted to one bucket
        if version <= PAIMON_08_VERSION and "file.format" not in options:
            options["file.format"] = "orc"  # 0.8 and earlier defaulted to ORC
        return TableSchema(version, sid, fields, highest, parts, pks, options, comment, time_millis)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "version": self.version,
            "id": self.id,
            "fields": [f.to_json() for f in self.fields],
            "highestFieldId": self.highest_field_id,
            "partitionKeys": list(self.partition_keys),
            "primaryKeys": list(self.primary_keys),
            "options": dict(self.options),
        }
        if self.comment is not None:
            d["comment"] = self.comment
        d["timeMillis"] = self.time_millis
        return d

    def to_json(self) -> str:
        """The file text, byte-for-byte as Java's SchemaSerializer + Jackson write it."""
        return dumps_jackson(self.to_dict())

    # -- views ----------------------------------------------------------------------------

    @property
    def row_type(self) -> RowType:
        return RowType(fields=tuple(self.fields))

    @property
    def field_names(self) -> list[str]:
        return [f.name for f in self.fields]

    def field(self, name: str) -> DataField:
        for f in self.fields:
            if f.name == name:
                return f
        raise NotFound(f"column {name!r} does not exist; columns are {self.field_names}")

    def field_by_id(self, field_id: int) -> DataField | None:
        for f in self.fields:
            if f.id == field_id:
                return f
        return None

    def project(self, names: Iterable[str]) -> RowType:
        return RowType(fields=tuple(self.field(n) for n in names))

    @property
    def logical_partition_type(self) -> RowType:
        return self.project(self.partition_keys)

    @property
    def partition_types(self) -> list[DataType]:
        return [self.field(n).type for n in self.partition_keys]

    @property
    def trimmed_primary_keys(self) -> list[str]:
        """Primary key without the partition columns (the key stored in data files)."""
        if not self.partition_keys:
            return list(self.primary_keys)
        trimmed = [k for k in self.primary_keys if k not in self.partition_keys]
        if self.primary_keys and not trimmed:
            raise InvalidInput(
                f"primary key {self.primary_keys} must not be the same as the partition keys {self.partition_keys}"
            )
        return trimmed

    @property
    def logical_trimmed_primary_keys_type(self) -> RowType:
        return self.project(self.trimmed_primary_keys)

    @property
    def logical_primary_keys_type(self) -> RowType:
        return self.project(self.primary_keys)

    @property
    def original_bucket_keys(self) -> list[str]:
        raw = self.options.get("bucket-key")
        if raw is None or not raw.strip():
            return []
        return raw.split(",")  # Java splits without trimming

    @property
    def bucket_keys(self) -> list[str]:
        """``bucket-key`` if set, otherwise the trimmed primary key (empty for append tables)."""
        return self.original_bucket_keys or self.trimmed_primary_keys

    @property
    def logical_bucket_key_type(self) -> RowType:
        return self.project(self.bucket_keys)

    @property
    def bucket(self) -> int:
        v = self.options.get("bucket")
        return -1 if v is None else parse_int(v, "bucket")

    @property
    def core_options(self) -> CoreOptions:
        return CoreOptions(self.options)

    @property
    def cross_partition_update(self) -> bool:
        """True when the primary key does not contain every partition column."""
        if not self.primary_keys or not self.partition_keys:
            return False
        return not set(self.partition_keys) <= set(self.primary_keys)

    def copy(self, **changes: Any) -> TableSchema:
        return replace(self, **changes)


def _as_text(v: Any) -> str:
    """Jackson's ``asText``: strings as-is, other scalars in their JSON spelling."""
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return "true" if v else "false"
    if v is None:
        return "null"
    if isinstance(v, (int, float)):
        return str(v)
    raise TypeError(f"expected a string, got {type(v).__name__}")


# ---------------------------------------------------------------------------------------
# Validation (Java's SchemaValidation + TableSchema constructor checks)
# ---------------------------------------------------------------------------------------


def validate_table_schema(schema: TableSchema) -> None:
    """Refuse any schema Java would refuse to commit; raises InvalidInput (one line)."""
    names = schema.field_names
    _check_keys(names, schema.partition_keys, schema.primary_keys)
    highest = current_highest_field_id(schema.fields)
    if highest > schema.highest_field_id:
        raise InvalidInput(f"highestFieldId {schema.highest_field_id} is below the largest field id {highest}")
    if schema.partition_keys and set(schema.partition_keys) >= set(names):
        raise InvalidInput(
            f"every column is a partition key {schema.partition_keys}; a table needs at least one non-partition column"
        )
    for n in names:
        if n in SYSTEM_FIELD_NAMES:
            raise InvalidInput(f"column name {n!r} is reserved for a system field {sorted(SYSTEM_FIELD_NAMES)}")
        if n.startswith(KEY_FIELD_PREFIX):
            raise InvalidInput(f"column name {n!r} must not start with {KEY_FIELD_PREFIX!r}")
    for kind, keys in (("primary key", schema.primary_keys), ("partition", schema.partition_keys)):
        for k in keys:
            t = schema.field(k).type
            if isinstance(t, _COMPLEX):
                raise InvalidInput(f"{kind} column {k!r} has type {t.as_sql()}; ARRAY, MAP, MULTISET and ROW are not allowed")
    _ = schema.trimmed_primary_keys  # refuses a primary key equal to the partition keys

    opts = CoreOptions(schema.options)
    _validate_bucket(schema, opts)

    engine = opts.merge_engine
    if engine not in MERGE_ENGINES:
        raise InvalidInput(f"merge-engine {engine!r} is unknown; use one of {', '.join(MERGE_ENGINES)}")
    producer = opts.changelog_producer
    if producer not in CHANGELOG_PRODUCERS:
        raise InvalidInput(f"changelog-producer {producer!r} is unknown; use one of {', '.join(CHANGELOG_PRODUCERS)}")
    if not schema.primary_keys and producer != "none":
        raise InvalidInput(
            f"cannot set changelog-producer={producer} on a table without primary keys; define primary keys"
        )
    if engine == "first-row" and producer not in ("none", "lookup"):
        raise InvalidInput("merge-engine first-row supports only changelog-producer none or lookup")
    if opts.streaming_read_overwrite:
        if producer in ("full-compaction", "lookup"):
            raise InvalidInput(
                f"streaming-read-overwrite cannot be true with changelog-producer {producer}: it would read changes twice"
            )
        if not schema.primary_keys:
            raise InvalidInput("streaming-read-overwrite needs a table with primary keys")

    fmt = opts.file_format
    if fmt not in _KNOWN_FORMATS:
        raise InvalidInput(f"file.format {fmt!r} is unknown; use parquet, orc or avro")

    _validate_sequence_field(schema, opts)
    rk = opts.rowkind_field
    if rk is not None and rk not in names:
        raise InvalidInput(f"rowkind.field {rk!r} is not a column of the table {names}")
    _validate_fields_prefix(schema)
    defaults = opts.field_default_values()
    for k in schema.partition_keys:
        if k in defaults:
            raise InvalidInput(f"partition column {k!r} must not have a default value")
    for k in schema.primary_keys:
        if k in defaults:
            raise InvalidInput(f"primary key column {k!r} must not have a default value")

    if opts.snapshot_num_retained_min <= 0:
        raise InvalidInput("snapshot.num-retained.min should be at least 1")
    if opts.snapshot_num_retained_min > opts.snapshot_num_retained_max:
        raise InvalidInput("snapshot.num-retained.min should not be larger than snapshot.num-retained.max")
    if opts.changelog_num_retained_min <= 0:
        raise InvalidInput("changelog.num-retained.min should be at least 1")
    if opts.changelog_num_retained_min > opts.changelog_num_retained_max:
        raise InvalidInput("changelog.num-retained.min should not be larger than changelog.num-retained.max")
    if "partition.expiration-time" in schema.options and not schema.partition_keys:
        raise InvalidInput("cannot set 'partition.expiration-time' on a table without partitions")
    if opts.deletion_vectors_enabled:
        if producer not in ("none", "input", "lookup"):
            raise InvalidInput(
                f"deletion-vectors.enabled works only with changelog-producer none, input or lookup, not {producer}"
            )
        if engine == "first-row":
            raise InvalidInput("merge-engine first-row does not support deletion vectors (it never deletes old rows)")

    validate_file_index_options(schema.fields, schema.options)


def _validate_bucket(schema: TableSchema, opts: CoreOptions) -> None:
    bucket = opts.bucket
    raw_bucket_key = schema.options.get("bucket-key")
    names = schema.field_names
    if raw_bucket_key is not None and raw_bucket_key.strip():
        bks = schema.original_bucket_keys
        missing = [k for k in bks if k not in names]
        if missing:
            raise InvalidInput(f"bucket-key column(s) {missing} are not columns of the table {names}")
        in_part = [k for k in bks if k in schema.partition_keys]
        if in_part:
            raise InvalidInput(f"bucket-key column(s) {in_part} must not be partition keys {schema.partition_keys}")
        if schema.primary_keys and not set(bks) <= set(schema.primary_keys):
            raise InvalidInput(f"bucket-key {bks} must be a subset of the primary key {schema.primary_keys}")
    if bucket == -1:
        if raw_bucket_key is not None:
            raise InvalidInput(
                "cannot define 'bucket-key' with bucket = -1; remove 'bucket-key' or set a bucket number"
            )
        if not schema.primary_keys and opts.full_compaction_delta_commits is not None:
            raise InvalidInput(
                "an append table with bucket = -1 does not support 'full-compaction.delta-commits'"
            )
        return
    if bucket == -2:
        if not schema.primary_keys:
            raise InvalidInput("bucket = -2 (postpone) needs a table with primary keys")
        return
    if bucket < 1:
        raise InvalidInput(f"bucket {bucket} is invalid: use -1 (dynamic), -2 (postpone) or a number > 0")
    if schema.cross_partition_update:
        raise InvalidInput(
            "You should use dynamic bucket (bucket = -1) mode in cross partition update case "
            f"(Primary key constraint {schema.primary_keys} not include all partition fields {schema.partition_keys})"
        )
    if not schema.primary_keys and not schema.original_bucket_keys:
        if not (bucket == 1 and schema.version == PAIMON_07_VERSION):
            raise InvalidInput(f"an append table with bucket = {bucket} needs a 'bucket-key'")
    for k in schema.bucket_keys:
        t = schema.field(k).type
        if isinstance(t, _COMPLEX):
            raise InvalidInput(f"bucket-key column {k!r} has nested type {t.as_sql()}, which cannot be hashed")


def _validate_sequence_field(schema: TableSchema, opts: CoreOptions) -> None:
    seq = opts.sequence_field
    if not seq:
        return
    names = schema.field_names
    for s in seq:
        if s not in names:
            raise InvalidInput(f"sequence.field {s!r} is not a column of the table {names}")
        if schema.options.get(f"fields.{s}.aggregate-function") is not None:
            raise InvalidInput(f"sequence.field {s!r} must not have an aggregate function")
    dup = _duplicates(seq)
    if dup:
        raise InvalidInput(f"sequence.field lists {dup} more than once")
    if opts.merge_engine == "first-row":
        raise InvalidInput("sequence.field cannot be used with merge-engine first-row")
    if schema.cross_partition_update:
        raise InvalidInput(
            "You can not use sequence.field in cross partition update case "
            f"(Primary key constraint {schema.primary_keys} not include all partition fields {schema.partition_keys})"
        )


def _validate_fields_prefix(schema: TableSchema) -> None:
    """``fields.<a,b>.<setting>`` must name existing columns (Java's validateFieldsPrefix)."""
    names = set(schema.field_names)
    for k, v in schema.options.items():
        if not k.startswith("fields."):
            continue
        parts = k.split(".")
        if len(parts) < 2:
            continue
        for col in parts[1].split(","):
            if col != "default-aggregate-function" and col not in names:
                raise InvalidInput(f"option {k!r} names column {col!r}, which is not in the table")
        if k.endswith(".sequence-group"):
            for col in v.split(","):
                if col not in names:
                    raise InvalidInput(f"option {k!r} names column {col!r}, which is not in the table")


# ---------------------------------------------------------------------------------------
# Schema changes
# ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SetOption:
    key: str
    value: str


@dataclass(frozen=True)
class RemoveOption:
    key: str


@dataclass(frozen=True)
class AddColumn:
    """Append a column (or place it FIRST / AFTER another). Must be nullable, as in Java."""

    name: str
    type: DataType
    description: str | None = None
    after: str | None = None
    first: bool = False


@dataclass(frozen=True)
class RenameColumn:
    old: str
    new: str


@dataclass(frozen=True)
class DropColumn:
    name: str


@dataclass(frozen=True)
class UpdateComment:
    comment: str | None


@dataclass(frozen=True)
class UpdateColumnType:
    """Widen a column's type; nullability is kept. Only lossless widenings are accepted."""

    name: str
    type: DataType


SchemaChange = SetOption | RemoveOption | AddColumn | RenameColumn | DropColumn | UpdateComment | UpdateColumnType


def check_alter_table_option(key: str, old_value: str | None, new_value: str) -> None:
    """Java's checkAlterTableOption: rules for SET on a table that already has snapshots."""
    if key in IMMUTABLE_OPTIONS:
        raise InvalidInput(f"option {key!r} cannot be changed once the table has data")
    if key == "bucket":
        old = -1 if old_value is None else parse_int(old_value, "bucket")
        new = parse_int(new_value, "bucket")
        if old == -1:
            raise InvalidInput("cannot change 'bucket' of a dynamic-bucket (bucket = -1) table")
        if new == -1:
            raise InvalidInput("cannot change 'bucket' to -1 on a table that has data")


def check_reset_table_option(key: str) -> None:
    """Java's checkResetTableOption: rules for RESET on a table that already has snapshots."""
    if key in IMMUTABLE_OPTIONS:
        raise InvalidInput(f"option {key!r} cannot be changed once the table has data")
    if key == "bucket":
        raise InvalidInput("cannot reset 'bucket' on a table that has data")


_INT_RANK = {TinyIntType: 1, SmallIntType: 2, IntType: 3, BigIntType: 4}


def _is_safe_widening(old: DataType, new: DataType) -> bool:
    """Lossless type changes every reader can apply to old files by a plain cast."""
    if type(old) is type(new) and old.copy(nullable=True) == new.copy(nullable=True):
        return True
    if type(old) in _INT_RANK and type(new) in _INT_RANK:
        return _INT_RANK[type(new)] >= _INT_RANK[type(old)]
    if type(old) in _INT_RANK and type(new) in (FloatType, DoubleType):
        return isinstance(new, DoubleType) and _INT_RANK[type(old)] <= 3 or isinstance(new, FloatType) and _INT_RANK[type(old)] <= 2
    if isinstance(old, FloatType) and isinstance(new, DoubleType):
        return True
    if isinstance(old, DecimalType) and isinstance(new, DecimalType):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if isinstance(old, (CharType, VarCharType)) and isinstance(new, VarCharType):
        return new.length >= old.length
    if isinstance(old, TimestampType) and isinstance(new, TimestampType):
        return new.precision >= old.precision
    if isinstance(old, LocalZonedTimestampType) and isinstance(new, LocalZonedTimestampType):
        return new.precision >= old.precision
    return False


def _apply_changes(
    old: TableSchema, changes: Iterable[SchemaChange], has_snapshots: bool
) -> TableSchema:
    options = dict(old.options)
    fields = list(old.fields)
    counter = _Counter(old.highest_field_id)
    comment = old.comment
    renames: dict[str, str] = {}

    def index_of(name: str) -> int:
        for i, f in enumerate(fields):
            if f.name == name:
                return i
        raise NotFound(f"column {name!r} does not exist; columns are {[f.name for f in fields]}")

    def assert_absent(name: str) -> None:
        if any(f.name == name for f in fields):
            raise AlreadyExists(f"column {name!r} already exists")

    for ch in changes:
        if isinstance(ch, SetOption):
            if ch.key in ("primary-key", "partition"):
                raise InvalidInput(f"option {ch.key!r} can only be given when the table is created")
            if ch.key == "path":
                raise InvalidInput("changing the table 'path' is not supported")
            if has_snapshots:
                check_alter_table_option(ch.key, old.options.get(ch.key), ch.value)
            options[ch.key] = ch.value
        elif isinstance(ch, RemoveOption):
            if has_snapshots:
                check_reset_table_option(ch.key)
            options.pop(ch.key, None)
        elif isinstance(ch, UpdateComment):
            comment = ch.comment
        elif isinstance(ch, AddColumn):
            assert_absent(ch.name)
            if not ch.type.nullable:
                raise InvalidInput(f"column {ch.name!r} cannot be added as NOT NULL: existing rows have no value for it")
            fid = counter.next()
            new_field = DataField(fid, ch.name, _reassign(ch.type, counter), ch.description)
            if ch.first:
                fields.insert(0, new_field)
            elif ch.after is not None:
                fields.insert(index_of(ch.after) + 1, new_field)
            else:
                fields.append(new_field)
        elif isinstance(ch, RenameColumn):
            if ch.old in old.partition_keys:
                raise InvalidInput(f"cannot rename partition column {ch.old!r}")
            i = index_of(ch.old)
            assert_absent(ch.new)
            fields[i] = replace(fields[i], name=ch.new)
            renames = {k: (ch.new if v == ch.old else v) for k, v in renames.items()}
            renames[ch.old] = ch.new
        elif isinstance(ch, DropColumn):
            if ch.name in old.partition_keys or ch.name in old.primary_keys:
                raise InvalidInput(f"cannot drop partition key or primary key column {ch.name!r}")
            fields.pop(index_of(ch.name))
            if not fields:
                raise InvalidInput("cannot drop every column of a table")
        elif isinstance(ch, UpdateColumnType):
            if ch.name in old.partition_keys:
                raise InvalidInput(f"cannot change the type of partition column {ch.name!r}")
            if ch.name in old.primary_keys:
                raise InvalidInput(f"cannot change the type of primary key column {ch.name!r}")
            i = index_of(ch.name)
            cur = fields[i]
            target = ch.type.copy(nullable=cur.type.nullable)
            if isinstance(target, _COMPLEX) or isinstance(cur.type, _COMPLEX):
                raise InvalidInput(f"changing the type of nested column {ch.name!r} is not supported")
            if not _is_safe_widening(cur.type, target):
                raise InvalidInput(
                    f"column {ch.name!r} cannot change from {cur.type.as_sql()} to {target.as_sql()} without losing information"
                )
            fields[i] = replace(cur, type=target)
        else:
            raise InvalidInput(f"unsupported schema change {ch!r}")

    # Java applies top-level renames to the primary key and bucket-key lists (1.x).
    pks = [_final_name(k, renames) for k in old.primary_keys]
    if renames and options.get("bucket-key", "").strip():
        options["bucket-key"] = ",".join(_final_name(k, renames) for k in options["bucket-key"].split(","))
    if renames:  # file indexes follow their column (the index is keyed by field id, not name)
        options = rename_file_index_options(options, renames)
    return TableSchema(
        version=CURRENT_VERSION,
        id=old.id + 1,
        fields=fields,
        highest_field_id=counter.value,
        partition_keys=list(old.partition_keys),
        primary_keys=pks,
        options=options,
        comment=comment,
        time_millis=int(time.time() * 1000),
    )


def _final_name(name: str, renames: dict[str, str]) -> str:
    return renames.get(name, name)


# ---------------------------------------------------------------------------------------
# SchemaManager
# ---------------------------------------------------------------------------------------


def new_table_schema(schema: Schema) -> TableSchema:
    """The schema-0 a create request becomes, validated without any I/O.

    Callers check this before touching storage, so a refused request leaves no warehouse,
    database or table folder behind.
    """
    norm = normalize_schema(schema)
    check_option_keys(norm.options)
    new = TableSchema(
        version=CURRENT_VERSION,
        id=0,
        fields=list(norm.fields),
        highest_field_id=current_highest_field_id(norm.fields),
        partition_keys=norm.partition_keys,
        primary_keys=norm.primary_keys,
        options=norm.options,
        comment=norm.comment,
        time_millis=int(time.time() * 1000),
    )
    validate_table_schema(new)
    return new


def _branch_root(table_path: str, branch: str | None) -> str:
    if branch is None or branch == "" or branch == "main":
        return table_path
    return fio.join(table_path, "branch", f"branch-{branch}")


class SchemaManager:
    """Reads and publishes ``<branch root>/schema/schema-<id>`` files."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.branch = branch if branch not in (None, "", "main") else None
        self.branch_root = _branch_root(table_path, branch)

    @property
    def schema_dir(self) -> str:
        return fio.join(self.branch_root, "schema")

    def schema_path(self, schema_id: int) -> str:
        return fio.join(self.schema_dir, f"{SCHEMA_PREFIX}{schema_id}")

    def list_ids(self) -> list[int]:
        ids = []
        for name in self.file_io.list_names(self.schema_dir):
            m = _SCHEMA_FILE.match(name)
            if m:
                ids.append(int(m.group(1)))
        return sorted(ids)

    def latest(self) -> TableSchema | None:
        ids = self.list_ids()
        return self.schema(ids[-1]) if ids else None

    def schema(self, schema_id: int) -> TableSchema:
        path = self.schema_path(schema_id)
        try:
            text = self.file_io.read_text(path)
        except NotFound:
            ids = self.list_ids()
            have = f"existing ids {ids[0]}..{ids[-1]}" if ids else "no schema files"
            raise NotFound(f"schema {schema_id} does not exist at {path} ({have})") from None
        return TableSchema.from_json(text, path)

    def schema_exists(self, schema_id: int) -> bool:
        return self.file_io.exists(self.schema_path(schema_id))

    def list_all(self) -> list[TableSchema]:
        return [self.schema(i) for i in self.list_ids()]

    # -- writes ---------------------------------------------------------------------------

    def _publish(self, schema: TableSchema) -> bool:
        validate_table_schema(schema)
        fallback = schema.core_options.scan_fallback_branch
        if fallback is not None and SchemaManager(self.file_io, self.table_path, fallback).latest() is None:
            raise InvalidInput(f"cannot set 'scan.fallback-branch' = {fallback!r}: branch {fallback!r} does not exist")
        return self.file_io.try_write_atomic(self.schema_path(schema.id), schema.to_json().encode("utf-8"))

    def create_table(self, schema: Schema, ignore_if_exists: bool = False) -> TableSchema:
        """Write schema-0. An existing table is AlreadyExists, or returned with ignore_if_exists."""
        existing = self.latest()
        if existing is not None:
            if ignore_if_exists:
                return existing
            raise AlreadyExists(f"table {self.branch_root} already exists (schema {existing.id} found in {self.schema_dir})")
        new = new_table_schema(schema)
        if self._publish(new):
            return new
        if ignore_if_exists:
            latest = self.latest()
            if latest is not None:
                return latest
        raise AlreadyExists(f"table {self.branch_root} already exists: {self.schema_path(0)} was created concurrently")

    def has_snapshots(self) -> bool:
        """Whether the branch has any snapshot (immutable options are then locked)."""
        snap_dir = fio.join(self.branch_root, "snapshot")
        for name in self.file_io.list_names(snap_dir):
            if name.startswith("snapshot-") and name[len("snapshot-") :].isdigit():
                return True
        return False

    def commit_changes(self, changes: list[SchemaChange], has_snapshots: bool | None = None) -> TableSchema:
        """Apply ``changes`` to the latest schema and publish it as the next id.

        Losing the write-if-absent race to another writer is a CommitConflict: the caller
        re-reads and retries, since the changes may no longer make sense on the new schema.
        """
        old = self.latest()
        if old is None:
            raise NotFound(f"table {self.branch_root} does not exist (no schema files in {self.schema_dir})")
        if has_snapshots is None:
            has_snapshots = self.has_snapshots()
        new_keys = [c.key for c in changes if isinstance(c, SetOption) and c.key not in old.options]
        check_option_keys(new_keys)
        new = _apply_changes(old, changes, has_snapshots)
        if not self._publish(new):
            raise CommitConflict(
                f"{self.schema_path(new.id)} was written by another writer while altering schema {old.id}; retry"
            )
        return new
