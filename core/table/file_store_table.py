"""FileStoreTable: one table (optionally one branch of it) as the operations see it.

A context, not an actor: where the table lives (file io, path, identifier, branch), its
schema and options, the managers of its metadata (snapshots, schemas, tags, branches,
consumers) and time travel. What is done to a table lives in the rooms above
(``operation/``, ``compact/``, ``system/``), which build their scans and reads from it.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import TYPE_CHECKING

from ..errors import InvalidInput, NotFound
from ..io import paths
from ..io.commit_lock import CommitLock
from ..io.fileio import FileIO
from ..refs.snapshot import Snapshot, SnapshotManager
from ..schema.options import CoreOptions
from ..schema.schema_manager import SchemaManager
from ..schema.table_schema import TableSchema
from ..utils.values import FrozenValue, set_field
from .catalog_environment import FILESYSTEM, CatalogEnvironment
from .identifiers import Identifier

if TYPE_CHECKING:
    from ..refs.branches import BranchManager
    from ..refs.consumers import ConsumerManager
    from ..refs.tags import TagManager


class TimeTravel(FrozenValue):
    """Which version of the table to look at; at most one field is set."""

    snapshot_id: int | None
    tag: str | None
    timestamp_millis: int | None
    FIELDS = __match_args__ = ("snapshot_id", "tag", "timestamp_millis")

    def __init__(self, snapshot_id: int | None = None, tag: str | None = None,
                 timestamp_millis: int | None = None) -> None:
        set_field(self, "snapshot_id", snapshot_id)
        set_field(self, "tag", tag)
        set_field(self, "timestamp_millis", timestamp_millis)
        given = [x for x in (self.snapshot_id, self.tag, self.timestamp_millis) if x is not None]
        if len(given) > 1:
            raise InvalidInput("give only one of --snapshot, --tag and --timestamp")

    @property
    def is_latest(self) -> bool:
        return self.snapshot_id is None and self.tag is None and self.timestamp_millis is None


class FileStoreTable:
    """A table at ``path``; metadata of a branch lives under ``branch/branch-<name>/``."""

    def __init__(self, file_io: FileIO, path: str, identifier: Identifier, branch: str | None, schema: TableSchema,
                 catalog_environment: CatalogEnvironment = FILESYSTEM):
        self.file_io = file_io
        self.path = path
        self.identifier = identifier
        self.branch = None if branch in (None, "main") else branch
        self.schema = schema
        self.catalog_environment = catalog_environment

    @classmethod
    def load(cls, file_io: FileIO, path: str, identifier: Identifier, branch: str | None = None,
             catalog_environment: CatalogEnvironment = FILESYSTEM) -> FileStoreTable:
        br = None if branch in (None, "main") else branch
        if br is not None and not file_io.is_dir(paths.branch_path(path, br)):
            if SchemaManager(file_io, path).latest() is None:
                raise NotFound(f"table {identifier} does not exist")
            raise NotFound(f"branch {br} of table {identifier} does not exist")
        schema = SchemaManager(file_io, path, br).latest()
        if schema is None:
            raise NotFound(f"table {identifier} does not exist")
        return cls(file_io, path, identifier, br, schema, catalog_environment)

    def with_schema(self, schema: TableSchema) -> FileStoreTable:
        """This table seen through another schema (an older one, or one being committed); the
        catalog environment (lock, metastore) stays."""
        return FileStoreTable(self.file_io, self.path, self.identifier, self.branch, schema, self.catalog_environment)

    @property
    def lock(self) -> CommitLock:
        """The catalog's commit lock (a no-op outside a locking metastore catalog)."""
        return self.catalog_environment.lock

    def copy(self, dynamic_options: Mapping[str, str]) -> FileStoreTable:
        """This table with options overridden for one job (Java's ``table.copy``); nothing is
        written: the schema on disk keeps its options."""
        if not dynamic_options:
            return self
        key = paths.PATH_DIRECTORY
        if key in dynamic_options and dynamic_options[key] != self.schema.options.get(key):
            # Java's copy refuses immutable options: files would land where readers never look
            raise InvalidInput(f"option {key!r} is part of the table's layout and cannot be set per job")
        return self.with_schema(self.schema.copy(options={**self.schema.options, **dynamic_options}))

    @cached_property
    def data_root(self) -> str:
        """Where partition and bucket directories live: the table path, or below it the
        ``data-file.path-directory`` (Java ``FileStorePathFactory.dataFilePath``). Every bucket
        path starts here; manifests, index and statistics stay at :attr:`path`."""
        return paths.data_root(self.path, self.options.data_file_path_directory)

    def relative_bucket_path(self, partition_path: str, bucket: int) -> str:
        """``[<path-directory>/]<partition>/bucket-N``: a bucket under the data root or an
        external root (Java ``relativeBucketPath``)."""
        return paths.relative_bucket_path(self.options.data_file_path_directory, partition_path, bucket)

    # -- managers -----------------------------------------------------------------------

    @cached_property
    def options(self) -> CoreOptions:
        return self.schema.core_options

    @cached_property
    def schema_manager(self) -> SchemaManager:
        return SchemaManager(self.file_io, self.path, self.branch, self.lock)

    @cached_property
    def snapshot_manager(self) -> SnapshotManager:
        return SnapshotManager(self.file_io, self.path, self.branch)

    @cached_property
    def tag_manager(self) -> TagManager:
        # tags, branches and consumers are imported where used: a snapshot listing reads none
        from ..refs.tags import TagManager

        tags = self.catalog_environment.tags
        callbacks = [tags] if tags is not None and self.branch is None else []
        return TagManager(self.file_io, self.path, self.branch, self.lock, callbacks)

    @cached_property
    def branch_manager(self) -> BranchManager:
        from ..refs.branches import BranchManager

        return BranchManager(self.file_io, self.path, self.lock)

    @cached_property
    def consumer_manager(self) -> ConsumerManager:
        from ..refs.consumers import ConsumerManager

        return ConsumerManager(self.file_io, self.path, self.branch, self.lock)

    @property
    def is_primary_key_table(self) -> bool:
        return bool(self.schema.primary_keys)

    # -- time travel --------------------------------------------------------------------

    def resolve_snapshot(self, at: TimeTravel | None = None) -> Snapshot | None:
        """The snapshot to read: latest (None for an empty table), a given id, a tag's, or by time."""
        at = at or TimeTravel()
        sm = self.snapshot_manager
        if at.snapshot_id is not None:
            return sm.snapshot(at.snapshot_id)
        if at.tag is not None:
            return self.tag_manager.tag(at.tag).snapshot
        if at.timestamp_millis is not None:
            snap = sm.earlier_or_equal_time_millis(at.timestamp_millis)
            if snap is None:
                raise NotFound(f"no snapshot of {self.identifier} at or before timestamp {at.timestamp_millis}")
            return snap
        return sm.latest_snapshot()

    def schema_at(self, snapshot: Snapshot | None) -> TableSchema:
        if snapshot is None or snapshot.schema_id == self.schema.id:
            return self.schema
        return self.schema_manager.schema(snapshot.schema_id)
