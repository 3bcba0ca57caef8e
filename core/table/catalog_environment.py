"""What a catalog lends a table it opens (Java ``CatalogEnvironment``).

A table's truth is in its files; a metastore catalog adds two duties the operations must
honour without knowing which catalog they run under: the commit lock (``lock.enabled``) and
keeping the metastore's partitions in step (``metastore.partitioned-table``). Operations
reach both through the table, so a command behaves the same under every catalog.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..io.commit_lock import NO_LOCK, CommitLock

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


class PartitionMarkDone(Protocol):
    """A metastore that records partition events (Java ``PartitionMarkDone``): the
    ``mark-event`` action of ``partition.mark-done-action`` (Hive's ``markPartitionForEvent``
    with ``LOAD_DONE``)."""

    def mark_done(self, partitions: Sequence[PartitionSpec]) -> None: ...


@dataclass(frozen=True)
class TagPartitions:
    """``metastore.tag-to-partition``: each tag of the main branch is a metastore partition
    ``{field: tag}`` (Java ``AddPartitionTagCallback``)."""

    partitions: MetastorePartitions
    field: str

    def notify_creation(self, name: str) -> None:
        self.partitions.add_partitions([{self.field: name}])

    def notify_deletion(self, name: str) -> None:
        self.partitions.drop_partitions([{self.field: name}])


@dataclass(frozen=True)
class CatalogEnvironment:
    """``lock``: taken around every metadata publish; ``partitions``: set when the metastore
    tracks this table's data partitions (``metastore.partitioned-table``); ``tags``: set when
    it mirrors tags as partitions instead; ``catalog``: a name for messages;
    ``version_management``: the catalog's server commits snapshots and keeps the versions
    (rollback, tags, branches) itself -- a REST catalog (Java ``supportsVersionManagement``);
    ``metastore``: the catalog's kind (``filesystem``, ``hive``, ``jdbc``, ``rest``), for
    refusals by name; ``partition_events``: set when the metastore records partition events."""

    lock: CommitLock = NO_LOCK
    partitions: MetastorePartitions | None = None
    tags: TagPartitions | None = None
    catalog: str = "filesystem"
    version_management: bool = False
    metastore: str = "filesystem"
    partition_events: PartitionMarkDone | None = None


FILESYSTEM = CatalogEnvironment()
