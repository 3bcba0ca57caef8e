"""Branch create/delete/fast-forward on our own tables (Java semantics, crash-friendly order)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data.types import IntType, VarCharType
from paimon_cli.core.errors import AlreadyExists, InvalidInput, NotFound, UnsafeRefused
from paimon_cli.core.format.arrow_schema import arrow_schema
from paimon_cli.core.operation.branch_ops import create_branch, delete_branch, fast_forward, plan_fast_forward
from paimon_cli.core.operation.commit import FileStoreCommit
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.tag_ops import create_tag
from paimon_cli.core.operation.write import TableWrite
from paimon_cli.core.schema.schema_change import RemoveOption, SetOption
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import TimeTravel


def _write(table: Any, rows: list[dict[str, Any]]) -> int:
    tw = TableWrite(table)
    tw.write_arrow(pa.Table.from_pylist(rows, schema=arrow_schema(table.schema.fields)))
    snap = FileStoreCommit(table).commit(tw.prepare_commit())
    assert snap is not None
    return snap.id


def _ids(table: Any, at: TimeTravel | None = None) -> list[int]:
    return sorted(r["id"] for r in TableRead(table, at).to_arrow().to_pylist())


@pytest.fixture
def catalog(tmp_path: Path) -> FileSystemCatalog:
    c = FileSystemCatalog(str(tmp_path / "wh"))
    schema = Schema.of([("id", IntType(nullable=False), None), ("v", VarCharType(10), None)],
                       primary_keys=["id"], options={"bucket": "1"})
    c.create_table("db.t", schema)
    t = c.get_table("db.t")
    _write(t, [{"id": 1, "v": "a"}])
    _write(t, [{"id": 2, "v": "b"}])
    create_tag(t, "t2", 2)
    _write(t, [{"id": 3, "v": "c"}])
    return c


def test_create_from_tag_and_empty(catalog: FileSystemCatalog) -> None:
    t = catalog.get_table("db.t")
    create_branch(t, "b", tag="t2")
    b = catalog.get_table("db.t", "b")
    assert _ids(b) == [1, 2]
    root = Path(t.path) / "branch" / "branch-b"
    assert sorted(p.name for p in root.rglob("*") if p.is_file()) == ["schema-0", "snapshot-2", "tag-t2"]
    assert (root / "snapshot" / "snapshot-2").read_bytes() == (Path(t.path) / "snapshot" / "snapshot-2").read_bytes()
    _write(b, [{"id": 10, "v": "x"}])
    assert _ids(catalog.get_table("db.t", "b")) == [1, 2, 10]
    assert _ids(catalog.get_table("db.t")) == [1, 2, 3]
    create_branch(t, "e")
    e = catalog.get_table("db.t", "e")
    assert _ids(e) == [] and e.snapshot_manager.latest_snapshot_id() is None
    with pytest.raises(AlreadyExists):
        create_branch(t, "b")
    with pytest.raises(NotFound):
        create_branch(t, "c", tag="nope")
    for bad in ("main", "123", "a/b", " "):
        with pytest.raises(InvalidInput):
            create_branch(t, bad)


def test_create_from_tag_whose_snapshot_expired(catalog: FileSystemCatalog) -> None:
    t = catalog.get_table("db.t")
    tag_snapshot = t.tag_manager.tag("t2").snapshot
    Path(t.snapshot_manager.snapshot_path(2)).unlink()
    create_branch(t, "late", tag="t2")
    b = catalog.get_table("db.t", "late")
    assert b.snapshot_manager.snapshot(2).to_json() == tag_snapshot.to_json()
    assert _ids(b) == [1, 2]


def test_delete_dry_run_and_fallback_refusal(catalog: FileSystemCatalog) -> None:
    t = catalog.get_table("db.t")
    create_branch(t, "b", tag="t2")
    root = Path(t.path) / "branch" / "branch-b"
    dry = delete_branch(t, "b", dry_run=True)
    assert root.exists() and len(dry.changes) == 3
    catalog.alter_table("db.t", [SetOption("scan.fallback-branch", "b")])
    with pytest.raises(InvalidInput, match="fallback"):
        delete_branch(catalog.get_table("db.t"), "b")
    catalog.alter_table("db.t", [RemoveOption("scan.fallback-branch")])
    real = delete_branch(catalog.get_table("db.t"), "b")
    assert [c.path for c in real.changes] == [c.path for c in dry.changes]
    assert not root.exists()
    with pytest.raises(NotFound):
        delete_branch(t, "b")


def test_fast_forward(catalog: FileSystemCatalog) -> None:
    t = catalog.get_table("db.t")
    create_branch(t, "b", tag="t2")
    b = catalog.get_table("db.t", "b")
    _write(b, [{"id": 20, "v": "y"}])  # branch snapshot 3
    _write(catalog.get_table("db.t", "b"), [{"id": 21, "v": "z"}])  # branch snapshot 4
    create_tag(catalog.get_table("db.t"), "t3", 3)  # a main tag past the fork: replaced
    plan = plan_fast_forward(t, "b")
    kinds = [(c.action, c.kind, Path(c.path).name) for c in plan.changes]
    assert ("delete", "tag", "tag-t3") in kinds
    assert ("copy", "snapshot", "snapshot-4") in kinds
    assert not any(a == "delete" and n == "snapshot-2" for a, _, n in kinds)  # overwritten, not deleted
    fast_forward(t, "b")
    main = catalog.get_table("db.t")
    assert main.snapshot_manager.snapshot_ids() == [1, 2, 3, 4]
    assert (Path(t.path) / "snapshot" / "LATEST").read_text() == "4"
    assert _ids(main) == [1, 2, 20, 21]
    assert _ids(main, TimeTravel(snapshot_id=1)) == [1]
    assert sorted(main.tag_manager.tag_names()) == ["t2"]
    # main keeps writing after the fast-forward
    _write(main, [{"id": 30, "v": "w"}])
    assert _ids(catalog.get_table("db.t")) == [1, 2, 20, 21, 30]


def test_fast_forward_errors(catalog: FileSystemCatalog) -> None:
    t = catalog.get_table("db.t")
    with pytest.raises(NotFound):
        fast_forward(t, "nope")
    create_branch(t, "empty")
    with pytest.raises(InvalidInput, match="no snapshot"):
        fast_forward(t, "empty")
    create_branch(t, "b", tag="t2")
    with pytest.raises(InvalidInput):
        fast_forward(catalog.get_table("db.t", "b"), "b")
    (Path(t.path) / "tag" / "tag-t2").write_text("garbage")
    before = sorted(p for p in Path(t.path).rglob("*"))
    with pytest.raises(UnsafeRefused, match="tag-t2"):
        fast_forward(t, "b")
    assert sorted(p for p in Path(t.path).rglob("*")) == before
