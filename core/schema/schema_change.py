"""Schema changes (Java's ``SchemaChange``) and how ALTER applies them to the latest schema
(Java's ``SchemaManager.generateTableSchema``): new fields draw fresh ids, renames carry keys and
file indexes along, and only lossless type widenings are accepted."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, replace

from ..data.types import (
    BigIntType,
    CharType,
    DataField,
    DataType,
    DecimalType,
    DoubleType,
    FloatType,
    IntType,
    LocalZonedTimestampType,
    SmallIntType,
    TimestampType,
    TinyIntType,
    VarCharType,
)
from ..errors import AlreadyExists, InvalidInput, NotFound
from .file_index_options import rename_file_index_options
from .option_keys import IMMUTABLE_OPTIONS
from .options import parse_int
from .table_schema import COMPLEX_TYPES, CURRENT_VERSION, FieldIdCounter, TableSchema, reassign_field_ids


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


def apply_changes(old: TableSchema, changes: Iterable[SchemaChange], has_snapshots: bool) -> TableSchema:
    """The schema ``changes`` make of ``old`` (id + 1), or a one-line refusal; nothing is written.

    ``has_snapshots`` locks the immutable options (Java's checkAlterTableOption).
    """
    draft = _Draft(old, has_snapshots)
    for ch in changes:
        draft.apply(ch)
    return draft.result()


class _Draft:
    """The next schema while ALTER's changes are applied one by one."""

    def __init__(self, old: TableSchema, has_snapshots: bool) -> None:
        self.old = old
        self.has_snapshots = has_snapshots
        self.options = dict(old.options)
        self.fields = list(old.fields)
        self.counter = FieldIdCounter(old.highest_field_id)
        self.comment = old.comment
        self.renames: dict[str, str] = {}  # original name -> final name

    def index_of(self, name: str) -> int:
        for i, f in enumerate(self.fields):
            if f.name == name:
                return i
        raise NotFound(f"column {name!r} does not exist; columns are {[f.name for f in self.fields]}")

    def assert_absent(self, name: str) -> None:
        if any(f.name == name for f in self.fields):
            raise AlreadyExists(f"column {name!r} already exists")

    def apply(self, ch: SchemaChange) -> None:
        if isinstance(ch, SetOption):
            self.set_option(ch)
        elif isinstance(ch, RemoveOption):
            if self.has_snapshots:
                check_reset_table_option(ch.key)
            self.options.pop(ch.key, None)
        elif isinstance(ch, UpdateComment):
            self.comment = ch.comment
        elif isinstance(ch, AddColumn):
            self.add_column(ch)
        elif isinstance(ch, RenameColumn):
            self.rename_column(ch)
        elif isinstance(ch, DropColumn):
            self.drop_column(ch)
        elif isinstance(ch, UpdateColumnType):
            self.update_column_type(ch)
        else:
            raise InvalidInput(f"unsupported schema change {ch!r}")

    def set_option(self, ch: SetOption) -> None:
        if ch.key in ("primary-key", "partition"):
            raise InvalidInput(f"option {ch.key!r} can only be given when the table is created")
        if ch.key == "path":
            raise InvalidInput("changing the table 'path' is not supported")
        if self.has_snapshots:
            check_alter_table_option(ch.key, self.old.options.get(ch.key), ch.value)
        self.options[ch.key] = ch.value

    def add_column(self, ch: AddColumn) -> None:
        self.assert_absent(ch.name)
        if not ch.type.nullable:
            raise InvalidInput(f"column {ch.name!r} cannot be added as NOT NULL: existing rows have no value for it")
        fid = self.counter.next()
        new_field = DataField(fid, ch.name, reassign_field_ids(ch.type, self.counter), ch.description)
        if ch.first:
            self.fields.insert(0, new_field)
        elif ch.after is not None:
            self.fields.insert(self.index_of(ch.after) + 1, new_field)
        else:
            self.fields.append(new_field)

    def rename_column(self, ch: RenameColumn) -> None:
        if ch.old in self.old.partition_keys:
            raise InvalidInput(f"cannot rename partition column {ch.old!r}")
        i = self.index_of(ch.old)
        self.assert_absent(ch.new)
        self.fields[i] = replace(self.fields[i], name=ch.new)
        self.renames = {k: (ch.new if v == ch.old else v) for k, v in self.renames.items()}
        self.renames[ch.old] = ch.new

    def drop_column(self, ch: DropColumn) -> None:
        if ch.name in self.old.partition_keys or ch.name in self.old.primary_keys:
            raise InvalidInput(f"cannot drop partition key or primary key column {ch.name!r}")
        self.fields.pop(self.index_of(ch.name))
        if not self.fields:
            raise InvalidInput("cannot drop every column of a table")

    def update_column_type(self, ch: UpdateColumnType) -> None:
        if ch.name in self.old.partition_keys:
            raise InvalidInput(f"cannot change the type of partition column {ch.name!r}")
        if ch.name in self.old.primary_keys:
            raise InvalidInput(f"cannot change the type of primary key column {ch.name!r}")
        i = self.index_of(ch.name)
        cur = self.fields[i]
        target = ch.type.copy(nullable=cur.type.nullable)
        if isinstance(target, COMPLEX_TYPES) or isinstance(cur.type, COMPLEX_TYPES):
            raise InvalidInput(f"changing the type of nested column {ch.name!r} is not supported")
        if not _is_safe_widening(cur.type, target):
            raise InvalidInput(
                f"column {ch.name!r} cannot change from {cur.type.as_sql()} to {target.as_sql()} without losing information"
            )
        self.fields[i] = replace(cur, type=target)

    def result(self) -> TableSchema:
        options = self.options
        renames = self.renames
        # Java applies top-level renames to the primary key and bucket-key lists (1.x).
        pks = [renames.get(k, k) for k in self.old.primary_keys]
        if renames and options.get("bucket-key", "").strip():
            options["bucket-key"] = ",".join(renames.get(k, k) for k in options["bucket-key"].split(","))
        if renames:  # file indexes follow their column (the index is keyed by field id, not name)
            options = rename_file_index_options(options, renames)
        return TableSchema(
            version=CURRENT_VERSION,
            id=self.old.id + 1,
            fields=self.fields,
            highest_field_id=self.counter.value,
            partition_keys=list(self.old.partition_keys),
            primary_keys=pks,
            options=options,
            comment=self.comment,
            time_millis=int(time.time() * 1000),
        )
