"""What a catalog lends a table it opens (Java ``CatalogEnvironment``).

A table's truth is in its files; a metastore catalog adds duties the operations must honour
without knowing which catalog they run under: the commit lock (``lock.enabled``), keeping the
metastore's partitions in step (``metastore.partitioned-table``), and -- where a catalog
server owns the version history (a REST catalog, Java ``supportsVersionManagement``) --
publishing snapshots and changing versions (rollback, tags, branches, schemas) through the
server instead of the files. Operations reach all of them through the table, so a command
behaves the same under every catalog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..io.commit_lock import NO_LOCK, CommitLock
from ..utils.values import FrozenValue, set_field

if TYPE_CHECKING:
    from ..refs.snapshot import Snapshot
    from ..schema.schema_change import SchemaChange
    from ..schema.table_schema import TableSchema
    from .file_store_table import FileStoreTable

PartitionSpec = Mapping[str, str]
"""A partition as the metastore names it: partition key -> its path value (``dt -> 2024-05-01``)."""


class MetastorePartitions(Protocol):
    """The metastore's view of a table's partitions (Java ``MetastoreClient``).

    Calls are idempotent (adding a present partition or dropping an absent one is no error),
    so a re-run repairs what a crash between the data commit and the metastore left behind.
    """

    def add_partitions(self, partitions: Sequence[PartitionSpec]) -> None: ...

    def drop_partitions(self, partitions: Sequence[PartitionSpec]) -> None: ...

    def list_partitions(self) -> list[dict[str, str]]: ...


class NotRegisteredYet:
    """The partitions of a table the metastore does not hold yet (``repair --dry-run`` of a
    table it would register): none. Only planned against, never changed."""

    def list_partitions(self) -> list[dict[str, str]]:
        return []

    def add_partitions(self, partitions: Sequence[PartitionSpec]) -> None:
        raise NotImplementedError("the table is not registered: its partitions are only planned")

    def drop_partitions(self, partitions: Sequence[PartitionSpec]) -> None:
        raise NotImplementedError("the table is not registered: its partitions are only planned")


class PartitionMarkDone(Protocol):
    """A metastore that records partition events (Java ``PartitionMarkDone``): the
    ``mark-event`` action of ``partition.mark-done-action`` (Hive's ``markPartitionForEvent``
    with ``LOAD_DONE``)."""

    def mark_done(self, partitions: Sequence[PartitionSpec]) -> None: ...


class TagPartitions(FrozenValue):
    """``metastore.tag-to-partition``: each tag of the main branch is a metastore partition
    ``{field: tag}`` (Java ``AddPartitionTagCallback``)."""

    partitions: MetastorePartitions
    field: str
    FIELDS = __match_args__ = ("partitions", "field")

    def __init__(self, partitions: MetastorePartitions, field: str) -> None:
        set_field(self, "partitions", partitions)
        set_field(self, "field", field)

    def notify_creation(self, name: str) -> None:
        self.partitions.add_partitions([{self.field: name}])

    def notify_deletion(self, name: str) -> None:
        self.partitions.drop_partitions([{self.field: name}])


class PartitionStatistics(FrozenValue):
    """What one commit changed in one partition (Java ``PartitionStatistics``): records, bytes
    and files added minus removed, the newest file's creation time (epoch millis) and the
    bucket count; ``spec`` names the partition as the metastore does ({} when unpartitioned)."""

    spec: dict[str, str]
    record_count: int
    file_size_in_bytes: int
    file_count: int
    last_file_creation_time: int
    total_buckets: int
    FIELDS = __match_args__ = ("spec", "record_count", "file_size_in_bytes", "file_count",
                               "last_file_creation_time", "total_buckets")

    def __init__(self, spec: dict[str, str], record_count: int, file_size_in_bytes: int, file_count: int,
                 last_file_creation_time: int, total_buckets: int) -> None:
        set_field(self, "spec", spec)
        set_field(self, "record_count", record_count)
        set_field(self, "file_size_in_bytes", file_size_in_bytes)
        set_field(self, "file_count", file_count)
        set_field(self, "last_file_creation_time", last_file_creation_time)
        set_field(self, "total_buckets", total_buckets)

    def to_json(self) -> dict[str, Any]:
        return {"spec": dict(self.spec), "recordCount": self.record_count, "fileSizeInBytes": self.file_size_in_bytes,
                "fileCount": self.file_count, "lastFileCreationTime": self.last_file_creation_time,
                "totalBuckets": self.total_buckets}


class SnapshotCommit(Protocol):
    """Publishes one built snapshot on its base (Java ``SnapshotCommit``) where a catalog server
    commits (``CatalogSnapshotCommit``); without one, a commit writes ``snapshot-N``
    write-if-absent and then ``LATEST`` under the table's lock (``RenamingSnapshotCommit``).

    Returns True when the snapshot is published, False when the server refused it because the
    base moved (nothing was published: plan again on the latest snapshot). Raises
    OutcomeUnknown when whether it was published cannot be learnt (nothing the snapshot
    references may be deleted), any other error when it was certainly not published.
    """

    def commit(self, base: Snapshot | None, snapshot: Snapshot, branch: str | None,
               statistics: Sequence[PartitionStatistics]) -> bool: ...


class VersionManagement(Protocol):
    """The calls of a catalog server that keeps a table's versions (Java's ``Catalog``
    ``rollbackTo``, ``createTag``, ``deleteTag``, ``createBranch``, ``dropBranch``,
    ``fastForward``, ``alterTable``): the server changes the metadata files, the client never
    writes them. ``branch`` None is the main branch. A call the server does not offer raises
    NotYetSupported naming it, with nothing changed."""

    catalog: str

    def rollback_to(self, branch: str | None, target_id: int, *, tag: str | None = None,
                    from_snapshot: int | None = None) -> None:
        """Make snapshot ``target_id`` the latest again (through ``tag`` when given, which holds
        it), if the latest is still ``from_snapshot``."""
        ...

    def create_tag(self, branch: str | None, name: str, snapshot_id: int | None,
                   time_retained_millis: int | None) -> None: ...

    def delete_tag(self, branch: str | None, name: str) -> None: ...

    def create_branch(self, name: str, from_tag: str | None) -> None: ...

    def drop_branch(self, name: str) -> None: ...

    def fast_forward(self, name: str) -> None: ...

    def alter_table(self, branch: str | None, changes: Sequence[SchemaChange]) -> None: ...


class IcebergMetadataCommitter(Protocol):
    """Registers a table's Iceberg metadata in an Iceberg catalog (Java
    ``IcebergMetadataCommitter``): ``metadata.iceberg.storage=hive-catalog`` points a Hive
    Metastore table at each new head ``vN.metadata.json``. ``check`` runs before a commit
    and raises (naming what) when the registration could not be made, so nothing is committed
    that the catalog would then lag behind; ``commit_metadata`` runs after the metadata file
    and its hint are written."""

    def check(self, action: str) -> None: ...

    def commit_metadata(self, metadata_path: str) -> None: ...


@dataclass(frozen=True)
class CatalogEnvironment:
    """``lock``: taken around every metadata publish; ``partitions``: set when the metastore
    tracks this table's data partitions (``metastore.partitioned-table``); ``tags``: set when
    it mirrors tags as partitions instead; ``catalog``: a name for messages;
    ``snapshot_commit``: set when a catalog server publishes the snapshots; ``versions``: set
    when the server also keeps the versions (rollback, tags, branches, schemas) -- a REST
    catalog's managed table (Java ``supportsVersionManagement``); ``metastore``: the catalog's
    kind (``filesystem``, ``hive``, ``jdbc``, ``rest``), for refusals by name;
    ``partition_events``: set when the metastore records partition events;
    ``iceberg_committer``: set when the table's Iceberg metadata is registered in an Iceberg
    catalog (``metadata.iceberg.storage=hive-catalog`` with a metastore uri)."""

    lock: CommitLock = NO_LOCK
    partitions: MetastorePartitions | None = None
    tags: TagPartitions | None = None
    catalog: str = "filesystem"
    metastore: str = "filesystem"
    partition_events: PartitionMarkDone | None = None
    snapshot_commit: SnapshotCommit | None = None
    versions: VersionManagement | None = None
    iceberg_committer: IcebergMetadataCommitter | None = None

    @property
    def version_management(self) -> bool:
        return self.versions is not None

    @property
    def lease_lock(self) -> CommitLock:
        """The lock around paimon-cli's own files at the table root (the ``maintain`` lease):
        the catalog's commit lock, or none where the server commits (its lock refuses every
        publish of Paimon metadata; the lease is no Paimon metadata)."""
        return NO_LOCK if self.versions is not None else self.lock


FILESYSTEM = CatalogEnvironment()


def commit_schema_changes(table: FileStoreTable, changes: Sequence[SchemaChange]) -> TableSchema:
    """Commit ``changes`` as the table's next schema: through the catalog server where it keeps
    the versions (REST ``alterTable``), else as a schema file under the catalog's lock."""
    versions = table.catalog_environment.versions
    if versions is None:
        return table.schema_manager.commit_changes(list(changes))
    versions.alter_table(table.branch, changes)
    new = table.schema_manager.latest()
    assert new is not None  # the server's alter published it (checked by the catalog)
    return new
