"""Postpone-bucket tables (``bucket = -2``) written by pypaimon 2.1 read as Java 2.x reads them.

pypaimon 2.1 writes both layouts a postpone table can hold: its plain batch write puts rows
into the postpone bucket (``bucket-postpone/``, manifest bucket -2), and its
``new_postpone_fixed_bucket_write_builder`` routes them into real buckets (Java's default
batch write, ``postpone.batch-write-fixed-bucket = true``). So the mixed case is pypaimon's
own, with no hand-built commit.

Java 2.x (``AbstractBatchTableScan`` -> ``onlyReadRealBuckets``) and pypaimon hide postponed
files from batch reads until compaction moves them into real buckets. The system tables
follow Java 2.0's sources: ``$files``, ``$partitions``, ``$audit_log``, ``$binlog`` and ``$ro``
plan through the table's batch scan (real buckets only); ``$buckets`` reads bucket entries
from the store scan and lists bucket -2. pypaimon 2.1 differs from Java in ``$files`` and
``$partitions`` (it lists / counts postponed files): there we compare with pypaimon's
``$buckets`` rows of real buckets instead.

Maintenance must keep treating postponed files as used: snapshots reference them, and a
scan filter at the wrong depth would make expire / orphan removal / rollback delete them.
"""

from __future__ import annotations

import json
import os
import shutil
import time
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.system.registry import SYSTEM_TABLES
from paimon_cli.core.table.file_store_table import TimeTravel
from tests.interop.pypaimon_peer import PyPaimon, decode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
COLUMNS = [("id", "int64"), ("dt", "string"), ("name", "string"), ("amount", "decimal(10,2)")]
KEYS = ["dt", "id"]


def _row(i: int, dt_: str, name: str) -> dict[str, Any]:
    return {"id": i, "dt": dt_, "name": name, "amount": Decimal(f"{i}.25")}


# table -> (options, [(postponed?, rows)]): every commit of pypaimon, in order
TABLES: dict[str, tuple[dict[str, str], list[tuple[bool, list[dict[str, Any]]]]]] = {
    # only postponed writes: nothing is visible yet
    "post_only": ({"bucket": "-2"}, [
        (True, [_row(i, "a" if i % 2 else "b", f"p{i}") for i in range(5)]),
        (True, [_row(1, "a", "p1-upd"), _row(5, "a", "p5")]),
    ]),
    # real buckets, then postponed updates of the same keys (+ a postponed-only partition c),
    # then real again
    "mixed": ({"bucket": "-2", "postpone.default-bucket-num": "2"}, [
        (False, [_row(i, "a" if i % 2 else "b", f"r{i}") for i in range(8)]),
        (True, [_row(3, "a", "p3-upd"), _row(2, "b", "p2-upd"), _row(20, "a", "p20"), _row(30, "c", "p30")]),
        (False, [_row(5, "a", "r5-upd"), _row(8, "b", "r8")]),
    ]),
    # the owner asks for merge-on-read: partition a compacted, partition b postponed
    "mor": ({"bucket": "-2", "postpone.default-bucket-num": "1", "postpone.merge-on-read": "true"}, [
        (False, [_row(i, "a", f"r{i}") for i in range(3)]),
        (True, [_row(1, "b", "p1"), _row(2, "b", "p2")]),
    ]),
}


def visible(name: str, upto: int | None = None) -> list[dict[str, Any]]:
    """Rows Java's batch read shows after ``upto`` commits: the real-bucket writes, merged."""
    merged: dict[tuple[Any, ...], dict[str, Any]] = {}
    for postponed, rows in TABLES[name][1][:upto]:
        if not postponed:
            for r in rows:
                merged[tuple(r[k] for k in KEYS)] = r
    return list(merged.values())


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def ours(wh: str, name: str, **kw: Any) -> list[dict[str, Any]]:
    return TableRead(FileSystemCatalog(wh).get_table(f"{DB}.{name}"), **kw).to_arrow().to_pylist()


def cli(wh: str, *args: str, code: int = 0) -> Any:
    res = CliRunner().invoke(app, [*args, "-w", wh])
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def cli_json(wh: str, *args: str) -> Any:
    return json.loads(cli(wh, *args, "-o", "json").stdout)


def entries(wh: str, name: str, at: TimeTravel | None = None) -> list[Any]:
    """Every live manifest entry (postponed ones too), straight from the store scan."""
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return FileStoreScan(table).plan(table.resolve_snapshot(at))


def file_path(wh: str, name: str, e: Any) -> Path:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    part = binary_row.deserialize(e.partition, table.schema.partition_types)
    bucket = "bucket-postpone" if e.bucket == -2 else f"bucket-{e.bucket}"
    return Path(table.path, f"dt={part[0]}", bucket, e.file.file_name)


def peer_partition(value: str) -> str:
    """pypaimon prints ``dt=a``; Java (and we) print ``[a]``."""
    assert value.startswith("dt="), value
    return f"[{value[3:]}]"


def peer_buckets(peer: PyPaimon, wh: str, name: str) -> list[tuple[str, int, int, int, int]]:
    rows = peer.system_table(wh, DB, name, "buckets").rows
    return sorted((peer_partition(r["partition"]), r["bucket"], r["record_count"], r["file_size_in_bytes"],
                   r["file_count"]) for r in rows)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def peer_wh(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> str:
    """pypaimon 2.1 writes every table of TABLES (one snapshot per commit)."""
    wh = str(tmp_path_factory.mktemp("peer-postpone-wh"))
    pypaimon.build_tables(wh, DB, COLUMNS, KEYS, ["dt"], TABLES)
    for name, (_, commits) in TABLES.items():
        # the layout the tests rely on: each commit is one snapshot, in the buckets it meant
        assert FileSystemCatalog(wh).get_table(f"{DB}.{name}").snapshot_manager.snapshot_ids() == \
            list(range(1, len(commits) + 1)), name
        for sid, (postponed, _) in enumerate(commits, start=1):
            table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
            added = [e for e in FileStoreScan(table).delta(table.snapshot_manager.snapshot(sid))]
            assert added and all((e.bucket == -2) == postponed for e in added), (name, sid)
    return wh


@pytest.fixture
def wh(peer_wh: str, tmp_path: Path) -> str:
    """A private copy of the pypaimon warehouse (tests change tables)."""
    dst = tmp_path / "wh"
    shutil.copytree(peer_wh, dst)
    return str(dst)


def peer_read(peer: PyPaimon, wh: str, name: str, **kw: Any) -> list[dict[str, Any]]:
    return peer.read(wh, DB, name, **kw)


def peer_read_dt(peer: PyPaimon, wh: str, name: str, dt_: str) -> list[dict[str, Any]]:
    res = peer.call("read_filtered", warehouse=wh, db=DB, table=name, filters=[["equal", "dt", [dt_]]])
    return [{c: decode_value(r[c], res["types"][c]) for c in res["columns"]} for r in res["rows"]]


# --------------------------------------------------------------------------------------
# reads


@pytest.mark.parametrize("name", ["post_only", "mixed"])
def test_read_hides_postponed_rows_like_pypaimon(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    n = len(TABLES[name][1])
    for sid in range(1, n + 1):
        theirs = peer_read(pypaimon, peer_wh, name, snapshot_id=sid)
        assert canon(theirs) == canon(visible(name, sid)), f"pypaimon at snapshot {sid}"
        got = ours(peer_wh, name, at=TimeTravel(snapshot_id=sid))
        assert canon(got) == canon(theirs), f"snapshot {sid}"
    assert canon(ours(peer_wh, name)) == canon(peer_read(pypaimon, peer_wh, name))
    # the CLI prints the same rows (each key once: no postponed duplicate of a real key)
    rows = cli_json(peer_wh, "read", f"{DB}.{name}")
    assert sorted((r["dt"], r["id"], r["name"]) for r in rows) == sorted(
        (r["dt"], r["id"], r["name"]) for r in visible(name))


def test_read_explain_counts_the_skipped_postpone_bucket(peer_wh: str) -> None:
    steps = {r["step"]: r for r in cli_json(peer_wh, "read", f"{DB}.mixed", "--explain")}
    postponed = [e for e in entries(peer_wh, "mixed") if e.bucket == -2]
    assert steps["total"]["files"] == len(entries(peer_wh, "mixed"))
    assert steps["skipped postpone bucket"]["files"] == len(postponed) > 0
    assert steps["skipped postpone bucket"]["records"] == sum(e.file.row_count for e in postponed)
    assert steps["remaining"]["files"] == steps["total"]["files"] - len(postponed)


# --------------------------------------------------------------------------------------
# inspect table and system tables


@pytest.mark.parametrize("name", ["post_only", "mixed"])
def test_inspect_table_counts_postponed_apart(peer_wh: str, name: str) -> None:
    props = {r["property"]: r["value"] for r in cli_json(peer_wh, "inspect", "table", f"{DB}.{name}")}
    live = entries(peer_wh, name)
    real = [e for e in live if e.bucket >= 0]
    postponed = [e for e in live if e.bucket == -2]
    assert postponed
    assert props["live_files"] == len(real)
    assert props["live_rows"] == sum(e.file.row_count for e in real)
    assert props["live_bytes"] == sum(e.file.file_size for e in real)
    assert props["partitions"] == len({e.partition for e in real})
    assert props["buckets"] == len({(e.partition, e.bucket) for e in real})
    assert props["postponed_files"] == len(postponed)
    assert props["postponed_rows"] == sum(e.file.row_count for e in postponed)
    assert props["postponed_bytes"] == sum(e.file.file_size for e in postponed)
    assert props["postponed_partitions"] == len({e.partition for e in postponed})
    # every postponed file is on disk where Java puts it
    assert all(file_path(peer_wh, name, e).is_file() for e in postponed)


@pytest.mark.parametrize("name", ["post_only", "mixed"])
def test_file_level_system_tables_follow_java(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    table = FileSystemCatalog(peer_wh).get_table(f"{DB}.{name}")
    theirs = peer_buckets(pypaimon, peer_wh, name)
    real_buckets = [b for b in theirs if b[1] >= 0]
    assert any(b[1] == -2 for b in theirs)

    # $buckets lists the postpone bucket, as Java's (store scan) and pypaimon's do
    ours_b = sorted((r["partition"], r["bucket"], r["record_count"], r["file_size_in_bytes"], r["file_count"])
                    for r in SYSTEM_TABLES["buckets"](table).rows)
    assert ours_b == theirs

    # $files: the files of real buckets only (pypaimon 2.1 also lists postponed ones; Java not)
    files = SYSTEM_TABLES["files"](table).rows
    assert all(r["bucket"] >= 0 for r in files)
    peer_files = pypaimon.system_table(peer_wh, DB, name, "files").rows
    assert sorted(Path(r["file_path"]).name for r in files) == sorted(
        Path(r["file_path"]).name for r in peer_files if r["bucket"] >= 0)

    # $partitions: real buckets summed per partition
    per_part: dict[str, list[int]] = {}
    for part, _, rc, size, cnt in real_buckets:
        acc = per_part.setdefault(part, [0, 0, 0])
        acc[0], acc[1], acc[2] = acc[0] + rc, acc[1] + size, acc[2] + cnt
    assert sorted((r["partition"], r["record_count"], r["file_size_in_bytes"], r["file_count"])
                  for r in SYSTEM_TABLES["partitions"](table).rows) == sorted(
        (p, *v) for p, v in per_part.items())


@pytest.mark.parametrize("name", ["post_only", "mixed"])
def test_reader_backed_system_tables_hide_postponed_rows(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    table = FileSystemCatalog(peer_wh).get_table(f"{DB}.{name}")
    expected = canon(peer_read(pypaimon, peer_wh, name))
    assert expected == canon(visible(name))
    for kind in ("audit-log", "binlog"):
        rows = SYSTEM_TABLES[kind](table).rows
        assert {r.pop("rowkind") for r in rows} <= {"+I"}, kind
        if kind == "binlog":
            rows = [{k: v[0] for k, v in r.items()} for r in rows]
        assert canon(rows) == expected, kind
    ro = canon(SYSTEM_TABLES["ro"](table).rows)
    assert set(ro) <= set(expected)


# --------------------------------------------------------------------------------------
# postpone.merge-on-read


def test_merge_on_read_is_refused_while_postponed_files_are_selected(
        pypaimon: PyPaimon, peer_wh: str, tmp_path: Path) -> None:
    ident = f"{DB}.mor"
    res = cli(peer_wh, "read", ident, code=1)
    assert "postpone.merge-on-read" in res.stderr and "bucket = -2" in res.stderr, res.stderr
    out = tmp_path / "rows.parquet"
    res = cli(peer_wh, "read", ident, "--to", str(out), code=1)
    assert not out.exists()
    # partition b holds the postponed file: a read of partition a has nothing to merge
    rows = cli_json(peer_wh, "read", ident, "--where", "dt = 'a'")
    assert canon(rows) == canon([{**r, "amount": str(r["amount"])} for r in visible("mor")])
    assert canon(ours(peer_wh, "mor", predicate=_dt_pred(peer_wh, "a"))) == canon(
        peer_read_dt(pypaimon, peer_wh, "mor", "a"))
    cli(peer_wh, "read", ident, "--where", "dt = 'b'", code=1)
    # snapshot 1 predates the postponed write; explain and the audit log never merge
    assert canon(ours(peer_wh, "mor", at=TimeTravel(snapshot_id=1))) == canon(visible("mor", 1))
    assert {r["step"] for r in cli_json(peer_wh, "read", ident, "--explain")} >= {"skipped postpone bucket"}
    audit = cli_json(peer_wh, "inspect", "audit-log", ident)
    assert len(audit) == len(visible("mor"))


def _dt_pred(wh: str, value: str) -> Any:
    from paimon_cli.core.data.predicate_parser import parse_predicate

    return parse_predicate(f"dt = '{value}'", FileSystemCatalog(wh).get_table(f"{DB}.mor").schema.fields)


# --------------------------------------------------------------------------------------
# compaction plans; maintenance keeps postponed files


def test_compact_plan_and_refusals_change_nothing(wh: str) -> None:
    """Moving staged files is tested in test_postpone_compact_pypaimon; a plan or a refused
    request leaves the table alone."""
    root = Path(wh, f"{DB}.db", "mixed")
    before = sorted(str(p) for p in root.rglob("*"))
    plan = cli_json(wh, "compact", f"{DB}.mixed", "--plan")
    assert {r["bucket"] for r in plan} == {-2}
    for args, code in ((["--max-bytes", "1000000"], 1), (["--where", "dt = 'a'"], 1)):
        res = cli(wh, "compact", f"{DB}.mixed", *args, code=code)
        assert "postpone" in res.stderr, res.stderr
    assert sorted(str(p) for p in root.rglob("*")) == before


def test_expire_tag_and_orphan_removal_keep_postponed_files(pypaimon: PyPaimon, wh: str) -> None:
    name, ident = "mixed", f"{DB}.mixed"
    root = Path(wh, f"{DB}.db", name)
    buckets_before = peer_buckets(pypaimon, wh, name)
    cli(wh, "tag", "create", ident, "t2", "--snapshot", "2")
    cli_json(wh, "expire", ident, "--retain-min", "1", "--retain-max", "1")
    assert FileSystemCatalog(wh).get_table(ident).snapshot_manager.snapshot_ids() == [3]

    postponed_dir = root / "dt=a" / "bucket-postpone"
    orphan = postponed_dir / "data-00000000-orphan-0.avro"
    shutil.copyfile(next(postponed_dir.glob("data-*")), orphan)
    two_days_ago = time.time() - 2 * 86400
    for p in root.rglob("*"):
        os.utime(p, (two_days_ago, two_days_ago))  # everything is old: only use protects a file
    removed = cli_json(wh, "remove-orphan-files", ident)
    assert [r["path"] for r in removed] == [str(orphan.relative_to(root))]

    used = entries(wh, name) + entries(wh, name, TimeTravel(tag="t2"))  # snapshot 3, and the tag's
    assert len({e.file.file_name for e in used if e.bucket == -2}) == 3  # dt=a, dt=b, dt=c of commit 2
    for e in used:
        p = file_path(wh, name, e)
        assert p.is_file() and p.stat().st_size == e.file.file_size, p
    # pypaimon still sees every bucket, postponed ones too, and reads what it read
    assert peer_buckets(pypaimon, wh, name) == buckets_before
    assert canon(peer_read(pypaimon, wh, name)) == canon(ours(wh, name)) == canon(visible(name))
    assert canon(peer_read(pypaimon, wh, name, tag="t2")) == canon(visible(name, 2))


def test_rollback_keeps_the_postponed_files_of_its_target(pypaimon: PyPaimon, wh: str) -> None:
    name, ident = "mixed", f"{DB}.mixed"
    target = entries(wh, name, TimeTravel(snapshot_id=2))
    assert any(e.bucket == -2 for e in target)
    cli_json(wh, "rollback", ident, "--snapshot", "2")
    for e in target:
        assert file_path(wh, name, e).is_file(), e.file.file_name
    assert canon(peer_read(pypaimon, wh, name)) == canon(ours(wh, name)) == canon(visible(name, 2))
    assert any(b[1] == -2 for b in peer_buckets(pypaimon, wh, name))
    # back to before the postponed write: the files only the removed snapshots used go
    cli_json(wh, "rollback", ident, "--snapshot", "1")
    assert not any(Path(wh, f"{DB}.db", name).rglob("bucket-postpone/data-*"))
    assert canon(peer_read(pypaimon, wh, name)) == canon(ours(wh, name)) == canon(visible(name, 1))
