"""`paimon-cli consumer`: list / reset / clear as Java's reset_consumer and clear_consumers, with
`--dry-run` equal to the run, documented exit codes and nothing changed on bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.cli.test_tag_cli import fails, ok, tree


@pytest.fixture
def table(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t with snapshots 1..3."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT NOT NULL, v STRING", "--primary-key", "id",
       "--option", "bucket=1", *w)
    for i in range(3):
        f = tmp_path / f"in{i}.csv"
        f.write_text(f"id,v\n{i},x\n")
        ok(runner, "write", "db.t", str(f), *w)
    return warehouse, Path(warehouse) / "db.db" / "t"


def consumers(runner: CliRunner, wh: str) -> dict[str, int]:
    rows = json.loads(ok(runner, "consumer", "list", "db.t", "-o", "json", "-w", wh).stdout)
    return {r["consumer_id"]: r["next_snapshot_id"] for r in rows}


def test_reset_list_and_delete(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    out = json.loads(ok(runner, "consumer", "reset", "db.t", "job-1", "--snapshot", "2", "-o", "json", *w).stdout)
    assert out == [{"consumer_id": "job-1", "action": "reset", "next_snapshot_id": None, "new_next_snapshot_id": 2}]
    assert (root / "consumer" / "consumer-job-1").read_text() == '{\n  "nextSnapshot" : 2\n}'
    ok(runner, "consumer", "reset", "db.t", "job-1", "--snapshot", "3", *w)
    rows = json.loads(ok(runner, "consumer", "list", "db.t", "-o", "json", *w).stdout)
    assert [(r["consumer_id"], r["next_snapshot_id"], r["behind_latest"]) for r in rows] == [("job-1", 3, 1)]
    assert rows[0]["modified"]
    # the consumer holds snapshot 3 against expiration
    res = json.loads(ok(runner, "inspect", "expiry", "db.t", "-o", "json", *w).stdout)
    assert any("consumer job-1" in (r["held_by"] or "") for r in res)
    out = json.loads(ok(runner, "consumer", "reset", "db.t", "job-1", "-o", "json", *w).stdout)
    assert out == [{"consumer_id": "job-1", "action": "delete", "next_snapshot_id": 3, "new_next_snapshot_id": None}]
    assert consumers(runner, wh) == {}


def test_clear_including_excluding_whole_id(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, _ = table
    w = ["-w", wh]
    for cid in ("etl-a", "etl-b", "etl-prod", "xetl-c", "other"):
        ok(runner, "consumer", "reset", "db.t", cid, "--snapshot", "1", *w)
    # Java's Matcher.matches(): the whole id, so "etl-.*" does not take "xetl-c"
    out = json.loads(ok(runner, "consumer", "clear", "db.t", "--including", "etl-.*", "--excluding", "etl-prod",
                        "-o", "json", *w).stdout)
    assert [r["consumer_id"] for r in out] == ["etl-a", "etl-b"]
    assert set(consumers(runner, wh)) == {"etl-prod", "xetl-c", "other"}
    # blank patterns are none, as Java's isNullOrWhitespaceOnly: clear everything but "other"
    ok(runner, "consumer", "clear", "db.t", "--including", " ", "--excluding", "other", *w)
    assert set(consumers(runner, wh)) == {"other"}
    ok(runner, "consumer", "clear", "db.t", *w)
    assert consumers(runner, wh) == {}
    r = ok(runner, "consumer", "clear", "db.t", *w)
    assert "changed 0 consumer(s)" in r.stderr


@pytest.mark.parametrize("args", [
    ("clear", "--including", "a.*"),
    ("reset", "a1", "--snapshot", "2"),
    ("reset", "a1"),
])
def test_dry_run_equals_the_run(runner: CliRunner, table: tuple[str, Path], args: tuple[str, ...]) -> None:
    wh, root = table
    w = ["-w", wh]
    for cid in ("a1", "a2", "b1"):
        ok(runner, "consumer", "reset", "db.t", cid, "--snapshot", "1", *w)
    before = tree(root)
    dry = ok(runner, "consumer", *args[:1], "db.t", *args[1:], "--dry-run", "-o", "json", *w)
    assert tree(root) == before
    assert "would change" in dry.stderr
    run = ok(runner, "consumer", *args[:1], "db.t", *args[1:], "-o", "json", *w)
    assert json.loads(dry.stdout) == json.loads(run.stdout) != []
    assert tree(root) != before


def test_bad_input_changes_nothing(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "consumer", "reset", "db.t", "c", "--snapshot", "1", *w)
    before = tree(root)
    assert "snapshot 9 not found" in fails(runner, 3, "consumer", "reset", "db.t", "c", "--snapshot", "9", *w)
    assert "consumer 'nope' not found" in fails(runner, 3, "consumer", "reset", "db.t", "nope", *w)
    assert "not a regular expression" in fails(runner, 4, "consumer", "clear", "db.t", "--including", "(", *w)
    assert "must not contain" in fails(runner, 4, "consumer", "reset", "db.t", "../x", "--snapshot", "1", *w)
    fails(runner, 3, "consumer", "list", "db.nope", *w)
    fails(runner, 2, "consumer", "reset", "db.t", *w)  # no ID
    fails(runner, 2, "consumer", "clear", "db.t", "c", *w)
    fails(runner, 2, "consumer", "list", "db.t", "--dry-run", *w)
    fails(runner, 2, "consumer", "reset", "db.t", "c", "--including", "x", *w)
    fails(runner, 2, "consumer", "reset", "db.t", "c", "--snapshot", "0", *w)
    fails(runner, 2, "consumer", "drop", "db.t", *w)
    assert tree(root) == before


def test_corrupt_consumer_is_reported_and_can_be_cleared(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "consumer", "reset", "db.t", "broken", "--snapshot", "1", *w)
    (root / "consumer" / "consumer-broken").write_text("{")
    assert "consumer-broken" in fails(runner, 4, "consumer", "list", "db.t", *w)
    out = json.loads(ok(runner, "consumer", "reset", "db.t", "broken", "-o", "json", *w).stdout)
    assert out == [{"consumer_id": "broken", "action": "delete", "next_snapshot_id": None,
                    "new_next_snapshot_id": None}]
    assert not (root / "consumer" / "consumer-broken").exists()
