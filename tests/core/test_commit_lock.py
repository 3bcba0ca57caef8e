"""Every metadata publish of a table runs under its catalog's commit lock (Java's ``lock.enabled``).

A recording lock stands in for the Hive / JDBC lock: each write-if-absent, plain metadata write
or metadata delete the table's FileIO makes must happen while the lock is held, and the lock
must be released on every way out.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.io.commit_lock import TableLock
from paimon_cli.core.maintain.lease import Lease
from paimon_cli.core.schema.table_schema import TableSchema
from paimon_cli.core.table.catalog_environment import CatalogEnvironment
from paimon_cli.core.table.identifiers import Identifier


class RecordingLock(TableLock):
    def __init__(self) -> None:
        super().__init__()
        self.held = False
        self.acquired = 0

    def acquire(self) -> None:
        assert not self.held, "the lock was taken twice by one process"
        self.held = True
        self.acquired += 1

    def release(self) -> None:
        assert self.held
        self.held = False


class LockingCatalog(FileSystemCatalog):
    def __init__(self, warehouse: str, lock: RecordingLock) -> None:
        super().__init__(warehouse)
        self.lock = lock

    def catalog_environment(self, ident: Identifier, schema: TableSchema,
                            branch: str | None = None) -> CatalogEnvironment:
        return CatalogEnvironment(lock=self.lock, catalog="recording")


@pytest.fixture
def locked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Warehouse, RecordingLock, list[str]]:
    """A warehouse whose catalog lends a recording lock; every metadata write outside it is listed."""
    lock = RecordingLock()
    wh = Warehouse(str(tmp_path))
    wh.__dict__["catalog"] = LockingCatalog(str(tmp_path), lock)
    wh.create_table("db.t", "id BIGINT NOT NULL, v STRING", primary_key="id", options={"bucket": "1"})
    unlocked: list[str] = []
    fio = wh.catalog.file_io

    def guard(name: str) -> None:
        orig: Callable[..., Any] = getattr(fio, name)

        def wrapped(path: str, *args: Any, **kwargs: Any) -> Any:
            metadata = any(f"/{d}/" in path for d in ("snapshot", "schema", "tag", "branch", "consumer")) or \
                path.endswith("maintain.lease")
            # expiry writes the EARLIEST hint without the lock, as Java's expire does
            if metadata and not path.endswith("EARLIEST") and not lock.held:
                unlocked.append(f"{name} {path}")
            return orig(path, *args, **kwargs)

        monkeypatch.setattr(fio, name, wrapped)

    for name in ("try_write_atomic", "write_bytes", "delete"):
        guard(name)
    return wh, lock, unlocked


def test_commits_schemas_tags_branches_and_rollback_run_under_the_lock(
        locked: tuple[Warehouse, RecordingLock, list[str]]) -> None:
    wh, lock, unlocked = locked
    t = wh.table("db.t")
    for i in range(3):
        t.write(pa.table({"id": [i], "v": [str(i)]}))
    t.alter(set_options={"snapshot.num-retained.min": "5"})
    t.create_tag("a", snapshot=2)
    t.rename_tag("a", "b")
    t.create_branch("br", tag="b")
    t.delete_branch("br")
    t.delete_tags("b")
    t.rollback(snapshot=2)
    t.compact(full=True)
    assert unlocked == []
    assert lock.acquired >= 10 and not lock.held


def test_issue_25_procedures_run_under_the_lock(locked: tuple[Warehouse, RecordingLock, list[str]]) -> None:
    """Consumers, rollback as latest (its protection tag and snapshot), tag replace, trigger."""
    wh, lock, unlocked = locked
    t = wh.table("db.t")
    for i in range(3):
        t.write(pa.table({"id": [i], "v": [str(i)]}))
    t.reset_consumer("c1", snapshot=1)
    t.reset_consumer("c2", snapshot=2)
    t.reset_consumer("c2")
    t.clear_consumers()
    t.create_tag("x", snapshot=1)
    t.replace_tag("x", snapshot=2)
    t.rollback_as_latest(snapshot=1)
    t.alter(set_options={"tag.automatic-creation": "process-time", "tag.creation-period": "hourly",
                         "tag.num-retained-max": "1"})
    t.trigger_tags()
    t.rollback(to_timestamp=t.open().snapshot_manager.latest_snapshot().time_millis)  # type: ignore[union-attr]
    assert unlocked == []
    assert not lock.held


def test_the_maintain_lease_is_taken_and_released_under_the_lock(
        locked: tuple[Warehouse, RecordingLock, list[str]]) -> None:
    wh, lock, unlocked = locked
    table = wh.table("db.t").open()
    lease = Lease.acquire(table.file_io, table.path, "test", 60_000, lock=table.lock)
    assert lease.renew()
    lease.release()
    assert unlocked == [] and lock.acquired == 3 and not lock.held


def test_the_lock_is_released_when_the_publish_fails(locked: tuple[Warehouse, RecordingLock, list[str]]) -> None:
    wh, lock, _ = locked
    with pytest.raises(InvalidInput):
        wh.table("db.t").alter(set_options={"bucket": "not-a-number"})
    assert not lock.held
    with pytest.raises(RuntimeError):
        lock.run_with_lock(lambda: (_ for _ in ()).throw(RuntimeError("boom")))
    assert not lock.held


def test_the_lock_is_reentrant_on_one_thread() -> None:
    lock = RecordingLock()
    assert lock.run_with_lock(lambda: lock.run_with_lock(lambda: 7)) == 7
    assert lock.acquired == 1 and not lock.held
