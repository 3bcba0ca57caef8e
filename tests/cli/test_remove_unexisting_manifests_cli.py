"""`paimon-cli remove-unexisting-manifests` (Java 1.4+'s remove_unexisting_manifests): the
latest snapshot republished without its missing data manifests, the dry run equal to the run,
manifests holding DELETE entries refused unless --force."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.scan import FileStoreScan


def run(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def ok(runner: CliRunner, *args: str) -> Any:
    r = run(runner, *args)
    assert r.exit_code == 0, (args, r.stdout, r.stderr)
    return r


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def manifests(wh: str, table: str) -> list[Any]:
    t = FileSystemCatalog(wh).get_table(table)
    latest = t.snapshot_manager.latest_snapshot()
    assert latest is not None
    return FileStoreScan(t).data_manifests(latest)


def _read(runner: CliRunner, wh: str, table: str) -> list[tuple[Any, ...]]:
    return sorted(tuple(r.values()) for r in json.loads(ok(runner, "read", table, "-o", "json", "-w", wh).stdout))


@pytest.fixture
def appends(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t: append table, three APPEND snapshots (one manifest each)."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING", "--partition-by", "dt", *w)
    for i, rows in enumerate(("1,a\n2,a\n", "3,b\n", "4,c\n5,c\n6,c\n")):
        f = tmp_path / f"in{i}.csv"
        f.write_text("id,dt\n" + rows)
        ok(runner, "write", "db.t", str(f), *w)
    return warehouse, Path(warehouse) / "db.db" / "t"


def test_missing_manifest_is_dropped_and_the_table_reads_again(runner: CliRunner,
                                                              appends: tuple[str, Path]) -> None:
    wh, root = appends
    w = ["-w", wh]
    metas = manifests(wh, "db.t")
    assert len(metas) == 3
    gone = metas[1]  # snapshot 2's rows (id 3)
    (root / "manifest" / gone.file_name).unlink()
    assert run(runner, "read", "db.t", *w).exit_code == 4  # broken: a manifest the snapshot names is missing
    before = tree(root)
    dry = json.loads(ok(runner, "remove-unexisting-manifests", "db.t", "--dry-run", "-o", "json", *w).stdout)
    assert tree(root) == before
    assert dry == [{"manifest": f"manifest/{gone.file_name}", "bytes": gone.file_size, "added": 1, "deleted": 0,
                    "schema_id": 0}]
    r = ok(runner, "remove-unexisting-manifests", "db.t", "-o", "json", *w)
    assert json.loads(r.stdout) == dry
    assert "1 of 3 data manifests of snapshot 3 missing; dropped them (1 added files gone) in snapshot 4" in r.stderr
    assert [x[0] for x in _read(runner, wh, "db.t")] == [1, 2, 4, 5, 6]
    snap = json.loads((root / "snapshot" / "snapshot-4").read_text())
    assert (snap["commitKind"], snap["totalRecordCount"], snap["deltaRecordCount"]) == ("OVERWRITE", 5, 0)
    assert snap["commitUser"].startswith("Repair-table-")
    assert [m.file_name for m in manifests(wh, "db.t")] == [metas[0].file_name, metas[2].file_name]
    # nothing missing any more: no snapshot
    r = ok(runner, "remove-unexisting-manifests", "db.t", *w)
    assert "nothing to remove" in r.stderr and not (root / "snapshot" / "snapshot-5").exists()


def test_a_missing_manifest_with_deletes_is_refused_unless_force(runner: CliRunner, warehouse: str,
                                                                 tmp_path: Path) -> None:
    w = ["-w", warehouse]
    ok(runner, "create", "db.k", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
       "--option", "bucket=1", *w)
    for i, rows in enumerate(("1,a\n2,b\n", "1,c\n")):
        f = tmp_path / f"k{i}.csv"
        f.write_text("id,v\n" + rows)
        ok(runner, "write", "db.k", str(f), *w)
    merged = _read(runner, warehouse, "db.k")
    ok(runner, "compact", "db.k", "--full", "--no-expire", *w)
    root = Path(warehouse) / "db.db" / "k"
    compaction = [m for m in manifests(warehouse, "db.k") if m.num_deleted_files]
    assert len(compaction) == 1
    (root / "manifest" / compaction[0].file_name).unlink()
    before = tree(root)
    r = run(runner, "remove-unexisting-manifests", "db.k", *w)
    assert r.exit_code == 6 and "held 2 DELETE entries" in r.stderr and "--force" in r.stderr
    assert tree(root) == before
    r = run(runner, "remove-unexisting-manifests", "db.k", "--dry-run", *w)
    assert r.exit_code == 6 and tree(root) == before
    r = ok(runner, "remove-unexisting-manifests", "db.k", "--force", *w)
    assert "2 deleted files live again" in r.stderr
    # the compaction's inputs are live again; they still exist, so the merged rows read as before
    assert _read(runner, warehouse, "db.k") == merged


def test_nothing_to_do_and_bad_input(runner: CliRunner, appends: tuple[str, Path], warehouse: str) -> None:
    wh, root = appends
    w = ["-w", wh]
    before = tree(root)
    r = ok(runner, "remove-unexisting-manifests", "db.t", *w)
    assert "0 of 3 data manifests of snapshot 3 missing; nothing to remove" in r.stderr
    assert tree(root) == before
    assert run(runner, "remove-unexisting-manifests", "db.nope", *w).exit_code == 3
    assert run(runner, "remove-unexisting-manifests", *w).exit_code == 2
    ok(runner, "create", "db.e", "--schema", "id INT", *w)
    assert "has no snapshot" in ok(runner, "remove-unexisting-manifests", "db.e", *w).stderr
    # a missing manifest list is not repaired here (exit 3), nothing changes
    snap = json.loads((root / "snapshot" / "snapshot-3").read_text())
    (root / "manifest" / snap["deltaManifestList"]).unlink()
    before = tree(root)
    r = run(runner, "remove-unexisting-manifests", "db.t", *w)
    assert r.exit_code == 6, r.stderr
    assert tree(root) == before
