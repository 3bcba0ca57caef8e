"""drop-partition: drop any partition in one OVERWRITE snapshot (Java's ``drop_partition``
procedure, ``BatchTableCommit.truncatePartitions``, Spark's ``ALTER TABLE DROP PARTITION``).

Every ``--partition`` alternative (``k=v[,k2=v2]``; leading keys or any subset, as Java's
predicate drop) must match at least one live partition of the latest snapshot: one that
matches none is refused (``NoPartitionMatched``, exit 3) with nothing changed, as Spark
refuses a partition that does not exist and as every partition selection of this CLI does.
The commit deletes every live data and index file of the matched partitions, as of the
snapshot it commits on (a drop, like Java's, also takes files appended meanwhile), and
writes the snapshot operation ``TRUNCATE`` as Java 2.x does (older readers ignore it). A
metastore that keeps the table's partitions forgets them first
(:meth:`FileStoreCommit.drop_partitions_matching`). Data files stay until snapshot expiry.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ..errors import InvalidInput, NoPartitionMatched
from ..io import paths
from ..utils.rows import Rows
from .commit import FileStoreCommit
from .partition_spec import (
    PartitionSelection,
    no_match_message,
    parse_partition_specs,
    partition_filter,
    partition_label,
    spec_spelling,
)
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..manifest.manifest import ManifestEntry
    from ..table.file_store_table import FileStoreTable

PLAN_COLUMNS = ["path", "partition", "bucket", "level", "rows", "bytes"]
TRUNCATE = "TRUNCATE"  # Java 2.x's Snapshot.Operation of truncatePartitions


@dataclass
class PartitionDropPlan:
    """The live files of snapshot ``snapshot_id`` in the selected partitions."""

    table_path: str
    snapshot_id: int | None
    selection: PartitionSelection
    partitions: list[str] = field(default_factory=list)  # matched partitions, as --partition spells them
    entries: list[ManifestEntry] = field(default_factory=list)
    labels: list[str] = field(default_factory=list)
    paths: list[str] = field(default_factory=list)
    snapshot: int | None = None  # the drop's snapshot (a real run)

    @property
    def rows_dropped(self) -> int:
        return sum(e.file.row_count for e in self.entries)

    @property
    def bytes_dropped(self) -> int:
        return sum(e.file.file_size for e in self.entries)

    def rows(self) -> Rows:
        return Rows(PLAN_COLUMNS, [
            {"path": paths.table_relative(p, self.table_path), "partition": label, "bucket": e.bucket,
             "level": e.file.level, "rows": e.file.row_count, "bytes": e.file.file_size}
            for e, label, p in zip(self.entries, self.labels, self.paths, strict=True)])


def plan_drop_partitions(table: FileStoreTable, partitions: Sequence[str]) -> PartitionDropPlan:
    """Which live files a drop of ``partitions`` (``--partition`` values) deletes; writes nothing."""
    FileStoreCommit(table)  # refuse, before any I/O, tables we cannot commit to
    schema = table.schema
    if not schema.partition_keys:
        raise InvalidInput(f"drop-partition: {table.identifier} is not partitioned")
    specs = parse_partition_specs(partitions, schema)
    if not specs:
        raise InvalidInput("drop-partition: give at least one --partition")
    selection = partition_filter(schema, specs, None)
    assert selection is not None
    latest = table.snapshot_manager.latest_snapshot()
    entries = [] if latest is None else FileStoreScan(table).plan(latest)
    for spec in specs:  # each alternative must name something: a typo in one is not "dropped the rest"
        one = partition_filter(schema, [spec], None)
        assert one is not None
        if not any(one(e.partition) for e in entries):
            raise NoPartitionMatched(no_match_message(spec_spelling(spec), table, "; nothing was dropped"))
    plan = PartitionDropPlan(table.path, None if latest is None else latest.id, selection)
    seen: dict[bytes, str] = {}
    for e in entries:
        if not selection(e.partition):
            continue
        label = seen.get(e.partition)
        if label is None:
            label = seen[e.partition] = partition_label(schema, e.partition)
        plan.entries.append(e)
        plan.labels.append(label)
        part = paths.partition_dir_of(schema, e.partition)
        plan.paths.append(paths.data_file_path(table.data_root, part, e.bucket, e.file.file_name,
                                               e.file.external_path))
    plan.partitions = sorted(seen.values())
    return plan


def drop_partitions(table: FileStoreTable, partitions: Sequence[str], dry_run: bool = False) -> PartitionDropPlan:
    """Plan, then (unless ``dry_run``) commit the drop as one OVERWRITE snapshot."""
    plan = plan_drop_partitions(table, partitions)
    if not dry_run:
        snap = FileStoreCommit(table).drop_partitions_matching(plan.selection, operation=TRUNCATE)
        plan.snapshot = snap.id
    return plan
