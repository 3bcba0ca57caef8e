"""A metastore that keeps a table's partitions (metastore.partitioned-table) stays in step.

An in-memory metastore stands in for the Hive one (the Hive tests drive the real server): what
matters here is the order and content of the calls the operations make.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.errors import CatalogUnavailable
from paimon_cli.core.schema.table_schema import TableSchema
from paimon_cli.core.table.catalog_environment import CatalogEnvironment, PartitionSpec, TagPartitions
from paimon_cli.core.table.identifiers import Identifier


class MemoryPartitions:
    def __init__(self, table_dir: Path) -> None:
        self.table_dir = table_dir
        self.parts: dict[tuple[tuple[str, str], ...], dict[str, str]] = {}
        self.calls: list[tuple[str, list[dict[str, str]], bool]] = []  # (verb, specs, data still there)
        self.fail_add = False

    def _data_there(self, spec: PartitionSpec) -> bool:
        d = self.table_dir.joinpath(*[f"{k}={v}" for k, v in spec.items()])
        return any(p.name.startswith("data-") for p in d.rglob("*")) if d.exists() else False

    def add_partitions(self, partitions: Sequence[PartitionSpec]) -> None:
        if self.fail_add:
            raise CatalogUnavailable("metastore down")
        self.calls.append(("add", [dict(p) for p in partitions], True))
        for p in partitions:
            self.parts[tuple(p.items())] = dict(p)

    def drop_partitions(self, partitions: Sequence[PartitionSpec]) -> None:
        self.calls.append(("drop", [dict(p) for p in partitions], all(self._data_there(p) for p in partitions)))
        for p in partitions:
            self.parts.pop(tuple(p.items()), None)

    def list_partitions(self) -> list[dict[str, str]]:
        return list(self.parts.values())

    def mark_done(self, partitions: Sequence[PartitionSpec]) -> None:
        self.calls.append(("event", [dict(p) for p in partitions], True))


class PartitionedCatalog(FileSystemCatalog):
    def __init__(self, warehouse: str, metastore: MemoryPartitions) -> None:
        super().__init__(warehouse)
        self.metastore = metastore

    def catalog_environment(self, ident: Identifier, schema: TableSchema,
                            branch: str | None = None) -> CatalogEnvironment:
        return CatalogEnvironment(partitions=self.metastore, catalog="memory", metastore="memory",
                                  partition_events=self.metastore)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[Warehouse, MemoryPartitions]:
    ms = MemoryPartitions(tmp_path / "db.db" / "t")
    wh = Warehouse(str(tmp_path))
    wh.__dict__["catalog"] = PartitionedCatalog(str(tmp_path), ms)
    wh.create_table("db.t", "id INT NOT NULL, dt STRING NOT NULL", partition_by="dt",
                    options={"bucket": "-1", "partition.timestamp-formatter": "yyyy-MM-dd"})
    return wh, ms


def test_writes_add_their_partitions_after_the_commit(setup: tuple[Warehouse, MemoryPartitions]) -> None:
    wh, ms = setup
    t = wh.table("db.t")
    t.write(pa.table({"id": [1, 2], "dt": ["2024-01-01", "2024-01-02"]}))
    t.write(pa.table({"id": [3], "dt": ["2024-01-02"]}))
    assert ms.calls[0][0] == "add"
    assert sorted(p["dt"] for p in ms.calls[0][1]) == ["2024-01-01", "2024-01-02"]
    assert ms.calls[1][1] == [{"dt": "2024-01-02"}]
    assert sorted(p["dt"] for p in ms.list_partitions()) == ["2024-01-01", "2024-01-02"]


def test_expired_partitions_leave_the_metastore_before_their_data(setup: tuple[Warehouse, MemoryPartitions]) -> None:
    wh, ms = setup
    t = wh.table("db.t")
    t.write(pa.table({"id": [1, 2, 3], "dt": ["2020-01-01", "2020-01-02", "2999-01-01"]}))
    plan = t.expire_partitions(expiration_time="1d")
    assert sorted(p.display for p in plan.partitions) == ["dt=2020-01-01", "dt=2020-01-02"]
    verb, specs, data_still_there = ms.calls[-1]
    assert verb == "drop" and sorted(s["dt"] for s in specs) == ["2020-01-01", "2020-01-02"]
    assert data_still_there  # the metastore was told before the data commit
    assert [p["dt"] for p in ms.list_partitions()] == ["2999-01-01"]


def test_a_failed_add_commits_nothing_and_repair_syncs(setup: tuple[Warehouse, MemoryPartitions]) -> None:
    wh, ms = setup
    t = wh.table("db.t")
    ms.fail_add = True
    with pytest.raises(CatalogUnavailable, match=r"could not add the partitions.*nothing was committed") as e:
        t.write(pa.table({"id": [1], "dt": ["2024-01-01"]}))
    assert e.value.exit_code == 8
    assert t.read().num_rows == 0 and t.open().snapshot_manager.latest_snapshot() is None
    assert not [p for p in (ms.table_dir / "dt=2024-01-01").rglob("data-*")]  # the written files were removed
    ms.fail_add = False
    t.write(pa.table({"id": [1], "dt": ["2024-01-01"]}))
    ms.parts.clear()  # the metastore lost them (restored from an old backup, say)
    ms.parts[(("dt", "1999-09-09"),)] = {"dt": "1999-09-09"}  # a stale one, no data
    report = t.repair(dry_run=True)
    actions = {(r["hint"], r["action"]) for r in report.rows().rows}
    assert ("metastore partition dt=2024-01-01", "add") in actions
    assert ("metastore partition dt=1999-09-09", "drop") in actions
    assert [p["dt"] for p in ms.list_partitions()] == ["1999-09-09"]  # the dry run changed nothing
    t.repair()
    assert [p["dt"] for p in ms.list_partitions()] == ["2024-01-01"]
    assert t.repair(dry_run=True).plan.partition_changes == 0


def test_drop_partition_leaves_the_metastore_before_its_data(setup: tuple[Warehouse, MemoryPartitions]) -> None:
    wh, ms = setup
    t = wh.table("db.t")
    t.write(pa.table({"id": [1, 2, 3], "dt": ["2024-01-01", "2024-01-02", "2024-01-03"]}))
    plan = t.drop_partitions("dt=2024-01-02;dt=2024-01-03")
    assert plan.partitions == ["dt=2024-01-02", "dt=2024-01-03"]
    verb, specs, data_still_there = ms.calls[-1]
    assert verb == "drop" and sorted(s["dt"] for s in specs) == ["2024-01-02", "2024-01-03"]
    assert data_still_there
    assert [p["dt"] for p in ms.list_partitions()] == ["2024-01-01"]


def test_done_partition_and_mark_event_through_the_metastore(setup: tuple[Warehouse, MemoryPartitions]) -> None:
    wh, ms = setup
    t = wh.table("db.t")
    t.alter(set_options={"metastore.partitioned-table": "true",
                         "partition.mark-done-action": "done-partition,mark-event"})
    t.write(pa.table({"id": [1], "dt": ["2024-01-01"]}))
    plan = t.mark_partitions_done("dt=2024-01-01", dry_run=True)
    assert [r["target"] for r in plan.rows().rows] == ["metastore partition dt=2024-01-01.done",
                                                       "metastore event LOAD_DONE dt=2024-01-01"]
    n = len(ms.calls)
    t.mark_partitions_done("dt=2024-01-01")
    assert ms.calls[n:] == [("add", [{"dt": "2024-01-01.done"}], True), ("event", [{"dt": "2024-01-01"}], True)]
    assert sorted(p["dt"] for p in ms.list_partitions()) == ["2024-01-01", "2024-01-01.done"]
    # repair keeps the done marker (it has no data by design), and still drops a stale partition
    ms.parts[(("dt", "1999-09-09"),)] = {"dt": "1999-09-09"}
    assert [r["hint"] for r in t.repair(dry_run=True).rows().rows
            if r["action"] == "drop"] == ["metastore partition dt=1999-09-09"]
    t.repair()
    assert sorted(p["dt"] for p in ms.list_partitions()) == ["2024-01-01", "2024-01-01.done"]


def test_metastore_mark_done_needs_partitioned_table(setup: tuple[Warehouse, MemoryPartitions]) -> None:
    from paimon_cli.core.errors import InvalidInput

    wh, ms = setup
    t = wh.table("db.t")
    t.write(pa.table({"id": [1], "dt": ["2024-01-01"]}))
    n = len(ms.calls)
    with pytest.raises(InvalidInput, match="metastore.partitioned-table=true"):
        t.mark_partitions_done("dt=2024-01-01", actions="success-file,mark-event")
    assert len(ms.calls) == n and not (ms.table_dir / "dt=2024-01-01" / "_SUCCESS").exists()


class TagMirrorCatalog(FileSystemCatalog):
    def __init__(self, warehouse: str, metastore: MemoryPartitions) -> None:
        super().__init__(warehouse)
        self.metastore = metastore

    def catalog_environment(self, ident: Identifier, schema: TableSchema,
                            branch: str | None = None) -> CatalogEnvironment:
        return CatalogEnvironment(tags=TagPartitions(self.metastore, "tag"), catalog="memory")


def test_tag_to_partition_mirrors_every_tag_change(tmp_path: Path) -> None:
    ms = MemoryPartitions(tmp_path / "db.db" / "t")
    wh = Warehouse(str(tmp_path))
    wh.__dict__["catalog"] = TagMirrorCatalog(str(tmp_path), ms)
    wh.create_table("db.t", "id INT NOT NULL", primary_key="id", options={"bucket": "1"})
    t = wh.table("db.t")
    for i in range(3):
        t.write(pa.table({"id": [i]}))

    def tags() -> list[str]:
        return sorted(p["tag"] for p in ms.list_partitions())

    t.create_tag("a", snapshot=1)
    t.create_tag("b", snapshot=2)
    t.create_tag("c", snapshot=3)
    assert tags() == ["a", "b", "c"]
    t.rename_tag("a", "a2")
    assert tags() == ["a2", "b", "c"]
    t.delete_tags("b")
    assert tags() == ["a2", "c"]
    t.rollback(snapshot=2)  # drops tag c, whose snapshot is rolled back
    assert tags() == ["a2"]
    t.create_branch("br", tag="a2")
    assert tags() == ["a2"]  # branches' tags are not mirrored
    ms.parts.clear()
    assert t.repair(dry_run=True).plan.partition_changes == 1
    t.repair()
    assert tags() == ["a2"]
