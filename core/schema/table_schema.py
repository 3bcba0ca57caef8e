"""Table schemas: the ``schema/schema-<id>`` JSON file model and Java's field-id numbering.

Every schema version a table ever had stays on disk because data files name the schema
id they were written with; readers map old files to the current layout by field id. So
new ids must be allocated exactly as Java does (nested ROW fields included). Validation is in
:mod:`.schema_validation`, evolution in :mod:`.schema_change`, the files in :mod:`.schema_manager`.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from ..data.types import ArrayType, DataField, DataType, MapType, MultisetType, RowType
from ..errors import CorruptMetadata, InvalidInput, NotFound
from ..utils.json_util import dumps_jackson, loads_metadata
from ..utils.values import FACTORY, Value
from .options import CoreOptions, parse_int

CURRENT_VERSION = 3
PAIMON_07_VERSION = 1  # files without "version" are read as this
PAIMON_08_VERSION = 2

SYSTEM_FIELD_NAMES = frozenset({"_SEQUENCE_NUMBER", "_VALUE_KIND", "_LEVEL", "rowkind"})
KEY_FIELD_PREFIX = "_KEY_"
SYSTEM_FIELD_ID_START = 2147483647 // 2
# ARRAY, MAP, MULTISET and ROW: not allowed as keys, not changed by ALTER ... TYPE
COMPLEX_TYPES = (ArrayType, MapType, MultisetType, RowType)


# ---------------------------------------------------------------------------------------
# Field ids
# ---------------------------------------------------------------------------------------


class FieldIdCounter:
    """Hands out field ids after the highest one in use."""

    def __init__(self, value: int) -> None:
        self.value = value

    def next(self) -> int:
        self.value += 1
        return self.value


def reassign_field_ids(dtype: DataType, counter: FieldIdCounter) -> DataType:
    """Give every ROW field inside ``dtype`` a fresh id, in Java's order.

    Java's ReassignFieldId rebuilds a ROW by visiting each field's type first and only then
    drawing the field's own id, so a nested row's children get smaller ids than the nested
    field itself. Default values of nested fields are dropped, as in Java.
    """
    if isinstance(dtype, RowType):
        new_fields = []
        for f in dtype.fields:
            inner = reassign_field_ids(f.type, counter)
            new_fields.append(DataField(counter.next(), f.name, inner, f.description))
        return RowType(fields=tuple(new_fields), nullable=dtype.nullable)
    if isinstance(dtype, ArrayType):
        return ArrayType(element=reassign_field_ids(dtype.element, counter), nullable=dtype.nullable)
    if isinstance(dtype, MultisetType):
        return MultisetType(element=reassign_field_ids(dtype.element, counter), nullable=dtype.nullable)
    if isinstance(dtype, MapType):
        return MapType(
            key=reassign_field_ids(dtype.key, counter), value=reassign_field_ids(dtype.value, counter), nullable=dtype.nullable
        )
    return dtype


def assign_field_ids(
    columns: Iterable[tuple[str, DataType, str | None]], highest_field_id: int = -1
) -> tuple[list[DataField], int]:
    """Columns to DataFields with ids as Java's ``Schema.Builder.column`` assigns them.

    Returns the fields and the new highest field id. A column draws its id first, then the
    ROW fields inside its type are numbered (see :func:`reassign_field_ids`).
    """
    counter = FieldIdCounter(highest_field_id)
    out = []
    for name, dtype, desc in columns:
        fid = counter.next()
        out.append(DataField(fid, name, reassign_field_ids(dtype, counter), desc))
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


class Schema(Value):
    """What a user asks to create; normalized into a TableSchema by SchemaManager. Written out
    by hand, as the dataclass it was (``utils.values``: start-up of every command that opens a
    table)."""

    fields: list[DataField]
    partition_keys: list[str]
    primary_keys: list[str]
    options: dict[str, str]
    comment: str | None
    FIELDS = __match_args__ = ("fields", "partition_keys", "primary_keys", "options", "comment")

    def __init__(self, fields: list[DataField], partition_keys: list[str] = FACTORY, primary_keys: list[str] = FACTORY,
                 options: dict[str, str] = FACTORY, comment: str | None = None) -> None:
        self.fields = fields
        self.partition_keys = [] if partition_keys is FACTORY else partition_keys
        self.primary_keys = [] if primary_keys is FACTORY else primary_keys
        self.options = {} if options is FACTORY else options
        self.comment = comment

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
