"""``SchemaManager``: reads and publishes a branch's ``schema/schema-<id>`` files.

Files are published with write-if-absent: losing the race to another writer is a commit
conflict, never an overwrite. Every schema is validated before it is written.
"""

from __future__ import annotations

import re
import time
from typing import TYPE_CHECKING

from ..errors import AlreadyExists, CommitConflict, InvalidInput, MissingMetadata, NotFound
from ..io import paths
from ..io.commit_lock import NO_LOCK, CommitLock
from ..io.fileio import FileIO, join
from .option_keys import check_option_keys

if TYPE_CHECKING:
    from .schema_change import SchemaChange
    from .table_schema import Schema, TableSchema

# The schema classes (and the type system under them) are imported where a schema is read or
# written: finding which folders hold schema files (listing tables) needs none (issue 28).

SCHEMA_FILE_NAME = re.compile(r"^schema-(\d+)$")


def new_table_schema(schema: Schema) -> TableSchema:
    """The schema-0 a create request becomes, validated without any I/O.

    Callers check this before touching storage, so a refused request leaves no warehouse,
    database or table folder behind.
    """
    from .schema_validation import normalize_schema, validate_table_schema
    from .table_schema import CURRENT_VERSION, TableSchema, current_highest_field_id

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


class SchemaManager:
    """Reads and publishes ``<branch root>/schema/schema-<id>`` files; publishes run under the
    catalog's commit ``lock``."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None,
                 lock: CommitLock = NO_LOCK) -> None:
        self.file_io = file_io
        self.lock = lock
        self.table_path = table_path
        self.branch = None if paths.is_main_branch(branch) else branch
        self.branch_root = paths.branch_path(table_path, branch)

    @property
    def schema_dir(self) -> str:
        return paths.schema_dir(self.table_path, self.branch)

    def schema_path(self, schema_id: int) -> str:
        return join(self.schema_dir, f"schema-{schema_id}")

    def list_ids(self) -> list[int]:
        ids = []
        for name in self.file_io.list_names(self.schema_dir):
            m = SCHEMA_FILE_NAME.match(name)
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
            # ids come from metadata (a snapshot, a data file's meta): broken metadata, exit 4
            raise MissingMetadata(f"schema {schema_id} does not exist at {path} ({have})") from None
        from .table_schema import TableSchema

        return TableSchema.from_json(text, path)

    def schema_exists(self, schema_id: int) -> bool:
        return self.file_io.exists(self.schema_path(schema_id))

    def list_all(self) -> list[TableSchema]:
        return [self.schema(i) for i in self.list_ids()]

    # -- writes ---------------------------------------------------------------------------

    def _publish(self, schema: TableSchema) -> bool:
        from .schema_validation import validate_table_schema

        validate_table_schema(schema)
        fallback = schema.core_options.scan_fallback_branch
        if fallback is not None and SchemaManager(self.file_io, self.table_path, fallback).latest() is None:
            raise InvalidInput(f"cannot set 'scan.fallback-branch' = {fallback!r}: branch {fallback!r} does not exist")
        data = schema.to_json().encode("utf-8")
        return self.lock.run_with_lock(lambda: self.file_io.try_write_atomic(self.schema_path(schema.id), data))

    def publish_copy(self, schema: TableSchema) -> bool:
        """Write another table's schema file under its own id (a clone carrying the schema
        history its files were written with); False when that id exists already."""
        return self._publish(schema)

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
        snap_dir = paths.snapshot_dir(self.table_path, self.branch)
        for name in self.file_io.list_names(snap_dir):
            if name.startswith("snapshot-") and name[len("snapshot-") :].isdigit():
                return True
        return False

    def plan_changes(self, changes: list[SchemaChange], has_snapshots: bool | None = None
                     ) -> tuple[TableSchema, TableSchema]:
        """(latest schema, the schema ``changes`` make of it); every check runs, nothing is written."""
        from .schema_change import SetOption, apply_changes
        old = self.latest()
        if old is None:
            raise NotFound(f"table {self.branch_root} does not exist (no schema files in {self.schema_dir})")
        if has_snapshots is None:
            has_snapshots = self.has_snapshots()
        new_keys = [c.key for c in changes if isinstance(c, SetOption) and c.key not in old.options]
        check_option_keys(new_keys)
        return old, apply_changes(old, changes, has_snapshots)

    def commit_changes(self, changes: list[SchemaChange], has_snapshots: bool | None = None) -> TableSchema:
        """Apply ``changes`` to the latest schema and publish it as the next id.

        Losing the write-if-absent race to another writer is a CommitConflict: the caller
        re-reads and retries, since the changes may no longer make sense on the new schema.
        """
        old, new = self.plan_changes(changes, has_snapshots)
        if not self._publish(new):
            raise CommitConflict(
                f"{self.schema_path(new.id)} was written by another writer while altering schema {old.id}; retry"
            )
        return new
