"""`paimon-cli compact DB` (Java's compact_database): each selected table compacted as
`compact DB.TABLE` compacts it, one row per table, the exit code the worst table's."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app


def run(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def ok(runner: CliRunner, *args: str) -> Any:
    r = run(runner, *args)
    assert r.exit_code == 0, (args, r.stdout, r.stderr)
    return r


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def db(runner: CliRunner, warehouse: str, tmp_path: Path) -> str:
    """shop.orders and shop.orders_tmp (two sorted runs each), shop.events (nothing to do)."""
    w = ["-w", warehouse]
    f = tmp_path / "k.csv"
    f.write_text("id,v\n1,a\n2,b\n")
    for name in ("orders", "orders_tmp"):
        ok(runner, "create", f"shop.{name}", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
           "--option", "bucket=1", *w)
        for _ in range(2):
            ok(runner, "write", f"shop.{name}", str(f), *w)
    ok(runner, "create", "shop.events", "--schema", "id INT, v STRING", *w)
    return warehouse


def _one_table(runner: CliRunner, wh: str, table: str) -> dict[str, Any]:
    return json.loads(ok(runner, "compact", table, "--full", "-o", "json", "-w", wh).stdout)[0]


def test_compact_database_compacts_each_table_as_compact_table_does(runner: CliRunner, db: str,
                                                                    tmp_path: Path) -> None:
    import shutil

    twin = str(tmp_path / "twin")
    shutil.copytree(db, twin)
    r = ok(runner, "compact", "shop", "--full", "-o", "json", "-w", db)
    rows = {x["table"]: x for x in json.loads(r.stdout)}
    assert "compacted 2 of 3 table(s), 1 with nothing to do, 0 failed" in r.stderr
    assert {t: (x["outcome"], x["exit_code"]) for t, x in rows.items()} == {
        "shop.events": ("nothing to do", 0), "shop.orders": ("compacted", 0), "shop.orders_tmp": ("compacted", 0)}
    # the same as compacting each table alone (on a twin of the warehouse)
    for name in ("shop.orders", "shop.orders_tmp"):
        alone = _one_table(runner, twin, name)
        for k in ("snapshot_id", "units", "files_in", "files_out", "bytes_in"):
            assert rows[name][k] == alone[k], (name, k)
    for name in ("orders", "orders_tmp"):
        snaps = json.loads(ok(runner, "inspect", "snapshots", f"shop.{name}", "-o", "json", "-w", db).stdout)
        assert snaps[-1]["commit_kind"] == "COMPACT"


def test_including_and_excluding_match_the_whole_db_table_name(runner: CliRunner, db: str) -> None:
    root = Path(db) / "shop.db"
    plan = json.loads(ok(runner, "compact", "shop", "--full", "--plan", "--including-tables", r"shop\.orders.*",
                         "--excluding-tables", ".*_tmp", "-o", "json", "-w", db).stdout)
    assert {x["table"] for x in plan} == {"shop.orders"}
    before = tree(root)
    # a bare table name does not match "shop.orders" (Java matches db.table as a whole)
    r = run(runner, "compact", "shop", "--including-tables", "orders", "-w", db)
    assert r.exit_code == 3 and "no tables to be compacted" in r.stderr
    assert tree(root) == before
    r = ok(runner, "compact", "shop", "--full", "--including-tables", r"shop\.orders.*", "--excluding-tables",
           ".*_tmp", "-o", "json", "-w", db)
    assert [x["table"] for x in json.loads(r.stdout)] == ["shop.orders"]
    assert json.loads(ok(runner, "inspect", "snapshots", "shop.orders_tmp", "-o", "json", "-w", db).stdout
                      )[-1]["commit_kind"] == "APPEND"


def test_plan_writes_nothing(runner: CliRunner, db: str) -> None:
    root = Path(db) / "shop.db"
    before = tree(root)
    r = ok(runner, "compact", "shop", "--full", "--plan", "-o", "json", "-w", db)
    assert {x["table"] for x in json.loads(r.stdout)} == {"shop.orders", "shop.orders_tmp"}
    assert tree(root) == before


def test_a_failing_table_does_not_stop_the_others(runner: CliRunner, db: str) -> None:
    # shop.orders_tmp's latest snapshot names a manifest list that is gone: that table fails (exit 4,
    # unreadable metadata, the one code every reader gives it)
    snap_dir = Path(db) / "shop.db" / "orders_tmp" / "snapshot"
    latest = json.loads((snap_dir / "snapshot-2").read_text())
    (Path(db) / "shop.db" / "orders_tmp" / "manifest" / latest["baseManifestList"]).unlink()
    r = run(runner, "compact", "shop", "--full", "-o", "json", "-w", db)
    assert r.exit_code == 4, r.stderr
    rows = {x["table"]: x for x in json.loads(r.stdout)}
    assert (rows["shop.orders"]["outcome"], rows["shop.orders"]["exit_code"]) == ("compacted", 0)
    assert (rows["shop.orders_tmp"]["outcome"], rows["shop.orders_tmp"]["exit_code"]) == ("failed", 4)
    errors = [ln for ln in r.stderr.splitlines() if ln.startswith("error: ")]
    assert len(errors) == 1 and errors[0].startswith("error: shop.orders_tmp: ")


def test_compact_database_bad_input(runner: CliRunner, db: str) -> None:
    root = Path(db) / "shop.db"
    before = tree(root)
    for args, code in (((("compact", "nope"),), 3), ((("compact", "shop", "--including-tables", "("),), 4),
                       ((("compact", "shop", "--partition", "dt=1"),), 2),
                       ((("compact", "shop", "--where", "dt = '1'"),), 2),
                       ((("compact", "shop", "--order-strategy", "zorder", "--order-by", "id"),), 2),
                       ((("compact", "shop.orders", "--including-tables", ".*"),), 2)):
        r = run(runner, *args[0], "-w", db)
        assert r.exit_code == code, (args, r.stdout, r.stderr)
    assert tree(root) == before
    ok(runner, "create", "empty.t", "--schema", "id INT", "-w", db)
    ok(runner, "drop", "empty.t", "--yes", "-w", db)
    r = run(runner, "compact", "empty", "-w", db)
    assert r.exit_code == 3 and "has no Paimon table" in r.stderr
