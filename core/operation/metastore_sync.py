"""A metastore's partitions against the table's: what the commits keep in step, and what
``repair`` brings back in step after a crash between a data commit and the metastore.

The table's files are the truth: a partition is live when the latest snapshot has data files in
it. The metastore (Hive with ``metastore.partitioned-table``) should list exactly those, at
their directories, plus the ``<partition>.done`` markers of the ``done-partition`` mark-done
action; :func:`plan_partition_sync` says what to add and what to drop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..io import paths
from .scan import FileStoreScan

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

DONE_SUFFIX = ".done"  # Java's AddDonePartitionAction: the last partition value + ".done"


def live_partition_bytes(table: FileStoreTable, keep: Callable[[bytes], bool] | None = None) -> list[bytes]:
    """The serialized partitions with live data files in the latest snapshot."""
    snapshot = table.snapshot_manager.latest_snapshot()
    parts = FileStoreScan(table).plan_table(snapshot, columns=["_PARTITION"]).column("_PARTITION")
    found = {bytes(p) for p in parts.unique().to_pylist()}
    return sorted(p for p in found if keep is None or keep(p))


def metastore_partitions(table: FileStoreTable, keep: Callable[[bytes], bool] | None = None) -> list[dict[str, str]]:
    """The live partitions (those ``keep`` accepts) as the metastore names them."""
    return [paths.partition_spec_of(table.schema, p) for p in live_partition_bytes(table, keep)]


def _key(spec: dict[str, str], keys: list[str]) -> tuple[str, ...]:
    return tuple(spec.get(k, "") for k in keys)


@dataclass
class PartitionSyncPlan:
    """Partitions to add to / drop from the metastore (each a key -> value spec)."""

    add: list[dict[str, str]] = field(default_factory=list)
    drop: list[dict[str, str]] = field(default_factory=list)

    def as_rows(self) -> list[dict[str, Any]]:
        def name(spec: dict[str, str]) -> str:
            return "/".join(f"{k}={v}" for k, v in spec.items())

        return ([{"hint": f"metastore partition {name(s)}", "current": "(absent)", "repaired": "present",
                  "action": "add", "reason": "the table has data files in it"} for s in self.add]
                + [{"hint": f"metastore partition {name(s)}", "current": "present", "repaired": "(absent)",
                    "action": "drop", "reason": "the table has no data files in it"} for s in self.drop])


def plan_partition_sync(table: FileStoreTable) -> PartitionSyncPlan | None:
    """None when the catalog keeps no partitions for the table. With
    ``metastore.tag-to-partition`` the metastore's partitions are the main branch's tags."""
    env = table.catalog_environment
    if env.tags is not None:
        keys = [env.tags.field]
        live: dict[tuple[str, ...], dict[str, str]] = {(name,): {env.tags.field: name}
                                                        for name in table.tag_manager.tag_names()}
        registered = {_key(s, keys): s for s in env.tags.partitions.list_partitions()}
    elif env.partitions is not None and table.schema.partition_keys:
        keys = table.schema.partition_keys
        live = {_key(s, keys): s for s in metastore_partitions(table)}
        registered = {_key(s, keys): s for s in env.partitions.list_partitions()}
    else:
        return None
    stale = [k for k in sorted(registered.keys() - live.keys()) if env.tags is not None or not _done_marker(k)]
    return PartitionSyncPlan([live[k] for k in sorted(live.keys() - registered.keys())],
                             [registered[k] for k in stale])


def _done_marker(key: tuple[str, ...]) -> bool:
    """A ``<partition>.done`` partition that ``mark-partition-done`` (Java's ``done-partition``
    action) registered: no data by design, so repair keeps it."""
    return bool(key) and key[-1].endswith(DONE_SUFFIX)


def apply_partition_sync(table: FileStoreTable, plan: PartitionSyncPlan) -> None:
    env = table.catalog_environment
    metastore = env.tags.partitions if env.tags is not None else env.partitions
    assert metastore is not None
    if plan.drop:
        metastore.drop_partitions(plan.drop)
    if plan.add:
        metastore.add_partitions(plan.add)
