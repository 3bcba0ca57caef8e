"""Maintenance keeps tables readable row for row by pypaimon 2.1, in both directions.

* Tables pypaimon wrote (append unaware-bucket, append fixed-bucket, partitioned append, PK
  fixed-bucket with updates and deletes, partitioned PK): we compact them (minor and full, core
  and CLI), expire their snapshots and remove orphans; pypaimon then reads exactly the rows it
  read before (and keeps writing into them), and our reader agrees.
* Tables we write in layouts pypaimon did not write: deletion vectors (32-bit; 64-bit is a
  layout pypaimon 2.1 cannot read, proven by its exact error), first-row, and file indexes
  built by ``rewrite-file-index`` (embedded and as ``.index`` files), read with and without a
  pypaimon filter predicate.
* pypaimon's own DV and first-row tables (it writes level 0 only, which those readers hide)
  become readable through our compaction. pypaimon records ``_DELETE_ROW_COUNT = 0`` for files
  holding retractions; the last test pins what that means for a compactor that trusts it.

Every peer answer is compared with a reference model of the rows, not only with our reader,
so a bug shared by both readers cannot hide.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.predicate_parser import parse_predicate
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.scan import FileStoreScan
from paimon_cli.core.table.file_store_table import TimeTravel
from tests.interop.pypaimon_peer import PyPaimon, PyPaimonError, decode_value, encode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
PK_DV_MAGIC = 1581511376  # the only deletion-vector magic pypaimon 2.1 accepts (32-bit bitmaps)


# --------------------------------------------------------------------------------------
# reference model of what pypaimon writes


@dataclass
class PeerTable:
    """One table pypaimon writes; ``commits`` are its write batches, in order."""

    name: str
    columns: list[tuple[str, str]]
    primary_keys: list[str] = field(default_factory=list)
    partition_keys: list[str] = field(default_factory=list)
    options: dict[str, str] = field(default_factory=dict)
    commits: list[list[dict[str, Any]]] = field(default_factory=list)

    @property
    def ident(self) -> str:
        return f"{DB}.{self.name}"

    def expected(self, upto: int | None = None, extra: list[list[dict[str, Any]]] = ()) -> list[dict[str, Any]]:
        """Rows a correct reader sees after ``upto`` commits (+ ``extra`` batches)."""
        batches = list(self.commits[: len(self.commits) if upto is None else upto]) + list(extra)
        if not self.primary_keys:
            return [r for b in batches for r in b]
        merged: dict[tuple[Any, ...], dict[str, Any]] = {}
        for b in batches:
            for r in b:
                key = tuple(r[k] for k in self.primary_keys)
                if r.get("op") == "-D":
                    merged.pop(key, None)
                else:
                    merged[key] = r
        return list(merged.values())


BASE_TS = dt.datetime(2024, 3, 1, 8, 0, 0, 250)
APPEND_COLS = [("id", "int64"), ("kind", "string"), ("amount", "decimal(10,2)"), ("ts", "timestamp[us]")]
PK_COLS = [("id", "int64"), ("name", "string"), ("amount", "decimal(10,2)"), ("op", "string")]
PK_PART_COLS = [("dt", "string"), ("id", "int64"), ("name", "string"), ("op", "string")]
DAYS = ("2024-01-01", "2024-01-02")


def _append_commits(partitioned: bool) -> list[list[dict[str, Any]]]:
    out = []
    for c in range(6):
        batch = []
        for i in range(8):
            r = {"id": c * 100 + i, "kind": None if i == 7 else f"k{i % 3}",
                 "amount": Decimal(f"{c}.{i}5"), "ts": BASE_TS + dt.timedelta(minutes=c, seconds=i)}
            if partitioned:
                r["dt"] = DAYS[(c + i) % 2]
            batch.append(r)
        out.append(batch)
    return out


def _pk(i: int, name: str | None, op: str, amount: str | None = None) -> dict[str, Any]:
    return {"id": i, "name": name, "amount": None if amount is None else Decimal(amount), "op": op}


def _pk_commits() -> list[list[dict[str, Any]]]:
    return [
        [_pk(i, f"a{i}", "+I", f"{i}.10") for i in range(16)],
        [_pk(i, f"b{i}", "+U", f"{i}.20") for i in (0, 3, 6, 9, 12, 15)],
        [_pk(i, None, "-D") for i in (1, 4, 7, 10)],
        [_pk(i, f"c{i}", "+I", "-3.30") for i in range(16, 22)] + [_pk(2, "c2", "+U", "2.30")],
        [_pk(16, None, "-D"), _pk(0, "d0", "+U", "0.40"), _pk(5, "d5", "+U", "5.40"), _pk(11, "d11", "+U")],
        [_pk(1, "e1", "+I", "1.50"), _pk(15, "e15", "+U", "15.50"), _pk(20, None, "-D"), _pk(8, "e8", "+U")],
    ]


def _pk_part_commits() -> list[list[dict[str, Any]]]:
    def row(d: str, i: int, name: str | None, op: str) -> dict[str, Any]:
        return {"dt": d, "id": i, "name": name, "op": op}

    return [
        [row(d, i, f"a{d[-1]}{i}", "+I") for d in DAYS for i in range(10)],
        [row(DAYS[0], i, f"b{i}", "+U") for i in (0, 2, 4)] + [row(DAYS[1], 9, "b9", "+U")],
        [row(DAYS[1], i, None, "-D") for i in (1, 3)] + [row("2024-01-03", 0, "new", "+I")],
        [row(DAYS[0], i, f"c{i}", "+U") for i in (5, 6, 7)] + [row(DAYS[0], 8, None, "-D")],
        [row(d, 20 + i, f"d{i}", "+I") for d in DAYS for i in range(3)],
        [row(DAYS[0], 0, "e0", "+U"), row(DAYS[1], 1, "e1", "+I"), row("2024-01-03", 0, None, "-D")],
    ]


PEER_TABLES = [
    PeerTable("ap_unaware", APPEND_COLS, commits=_append_commits(False)),
    PeerTable("ap_fixed", APPEND_COLS, options={"bucket": "2", "bucket-key": "id"}, commits=_append_commits(False)),
    PeerTable("ap_part", [*APPEND_COLS, ("dt", "string")], partition_keys=["dt"], commits=_append_commits(True)),
    PeerTable("pk_fixed", PK_COLS, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "op"},
              commits=_pk_commits()),
    PeerTable("pk_part", PK_PART_COLS, primary_keys=["dt", "id"], partition_keys=["dt"],
              # few commits per (partition, bucket): a lower trigger makes minor compaction pick them
              options={"bucket": "2", "rowkind.field": "op", "num-sorted-run.compaction-trigger": "3"},
              commits=_pk_part_commits()),
]
BY_NAME = {t.name: t for t in PEER_TABLES}
# num-levels defaults to num-sorted-run.compaction-trigger + 1 (5 + 1 and 3 + 1)
MAX_LEVEL = {"pk_fixed": 5, "pk_part": 3}


# --------------------------------------------------------------------------------------
# helpers


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def _write_op(wh: str, table: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"op": "write", "warehouse": wh, "db": DB, "table": table,
            "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]}


def _decode_rows(res: dict[str, Any]) -> list[dict[str, Any]]:
    types = res["types"]
    return [{c: decode_value(r[c], types[c]) for c in res["columns"]} for r in res["rows"]]


def peer_reads(peer: PyPaimon, wh: str, reads: list[tuple[str, int | None]]) -> list[list[dict[str, Any]]]:
    """Many ``(table, snapshot_id)`` reads in one peer process; any failure raises."""
    ops = [{"op": "read", "warehouse": wh, "db": DB, "table": t, "snapshot_id": s} for t, s in reads]
    out = []
    for (t, s), res in zip(reads, peer.batch(ops, stop_on_error=False), strict=True):
        if not res["ok"]:
            raise PyPaimonError(f"read {t}@{s}", res["error"], res["message"], res["traceback"])
        out.append(_decode_rows(res["result"]))
    return out


def peer_filtered(peer: PyPaimon, wh: str, table: str,
                  filter_sets: list[list[list[Any]]]) -> list[list[dict[str, Any]]]:
    """One ``ReadBuilder.with_filter`` read per filter set (``[[method, field, literals]]``, ANDed)."""
    ops = [{"op": "read_filtered", "warehouse": wh, "db": DB, "table": table,
            "filters": [[m, f, [encode_value(v) for v in lits]] for m, f, lits in filters]}
           for filters in filter_sets]
    out = []
    for filters, res in zip(filter_sets, peer.batch(ops, stop_on_error=False), strict=True):
        if not res["ok"]:
            raise PyPaimonError(f"read_filtered {filters}", res["error"], res["message"], res["traceback"])
        out.append(_decode_rows(res["result"]))
    return out


def ours(wh: str, ident: str, snapshot_id: int | None = None, where: str | None = None) -> list[dict[str, Any]]:
    table = FileSystemCatalog(wh).get_table(ident)
    at = TimeTravel(snapshot_id=snapshot_id) if snapshot_id is not None else None
    pred = parse_predicate(where, table.schema.fields) if where else None
    return TableRead(table, at=at, predicate=pred).to_arrow().to_pylist()


def live_files(wh: str, ident: str) -> list[Any]:
    table = FileSystemCatalog(wh).get_table(ident)
    return [e.file for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())]


def files_by_partition(wh: str, ident: str) -> dict[tuple[Any, ...], set[tuple[str, int]]]:
    """Live (file name, level) per decoded partition."""
    table = FileSystemCatalog(wh).get_table(ident)
    out: dict[tuple[Any, ...], set[tuple[str, int]]] = {}
    for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()):
        part = tuple(binary_row.deserialize(e.partition, table.schema.partition_types))
        out.setdefault(part, set()).add((e.file.file_name, e.file.level))
    return out


def snapshot_ids(wh: str, ident: str) -> list[int]:
    return FileSystemCatalog(wh).get_table(ident).snapshot_manager.snapshot_ids()


def cli(wh: str, *args: str) -> Any:
    res = CliRunner().invoke(app, [*args, "-w", wh])
    assert res.exit_code == 0, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def cli_json(wh: str, *args: str) -> list[dict[str, Any]]:
    return json.loads(cli(wh, *args, "-o", "json").stdout)


def cli_write(wh: str, ident: str, rows: list[dict[str, Any]], tmp: Path, *args: str) -> list[dict[str, Any]]:
    src = tmp / f"in-{len(list(tmp.glob('in-*.parquet')))}.parquet"
    pq.write_table(pa.Table.from_pylist(rows), src)
    return cli_json(wh, "write", ident, str(src), *args)


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)


# --------------------------------------------------------------------------------------
# the pristine pypaimon warehouse (written once, copied per test)


@pytest.fixture(scope="module")
def peer_wh(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, list[int]]]:
    """pypaimon writes every PEER_TABLES table; returns (warehouse, snapshot ids per table)."""
    wh = str(tmp_path_factory.mktemp("peer-maint-wh"))
    ops: list[dict[str, Any]] = []
    for t in PEER_TABLES:
        ops.append({"op": "create_table", "warehouse": wh, "db": DB, "table": t.name,
                    "columns": [list(c) for c in t.columns], "primary_keys": t.primary_keys,
                    "partition_keys": t.partition_keys, "options": t.options})
        ops += [_write_op(wh, t.name, batch) for batch in t.commits]
    results = pypaimon.batch(ops)
    failed = [r for r in results if not r["ok"]]
    assert not failed and len(results) == len(ops), failed[0]["traceback"] if failed else "driver stopped"
    snaps: dict[str, list[int]] = {}
    for op, r in zip(ops, results, strict=True):
        if op["op"] == "write":
            snaps.setdefault(op["table"], []).append(r["result"]["snapshot_id"])
    for t in PEER_TABLES:
        assert snaps[t.name] == list(range(1, len(t.commits) + 1)), t.name
    return wh, snaps


@pytest.fixture
def wh(peer_wh: tuple[str, dict[str, list[int]]], tmp_path: Path) -> str:
    """A private copy of the pypaimon warehouse (tests change tables)."""
    dst = tmp_path / "wh"
    shutil.copytree(peer_wh[0], dst)
    return str(dst)


def assert_all_agree(peer: PyPaimon, wh: str, t: PeerTable, expected: list[dict[str, Any]],
                     snapshot_ids_: list[int] = ()) -> None:
    """pypaimon at latest (and at each given snapshot id) == our reader == the model."""
    reads = peer_reads(peer, wh, [(t.name, None)] + [(t.name, s) for s in snapshot_ids_])
    assert canon(reads[0]) == canon(expected), f"pypaimon latest of {t.name}"
    assert canon(ours(wh, t.ident)) == canon(expected), f"ours latest of {t.name}"
    for s, got in zip(snapshot_ids_, reads[1:], strict=True):
        assert canon(got) == canon(t.expected(s)), f"pypaimon {t.name} at snapshot {s}"


# --------------------------------------------------------------------------------------
# 1. compaction of pypaimon-written tables


@pytest.mark.parametrize("name", [t.name for t in PEER_TABLES])
def test_compact_pypaimon_table_minor_then_full(pypaimon: PyPaimon, wh: str, name: str) -> None:
    t = BY_NAME[name]
    n = len(t.commits)
    assert_all_agree(pypaimon, wh, t, t.expected())
    files_before = live_files(wh, t.ident)

    minor = compact_table(FileSystemCatalog(wh).get_table(t.ident), engine="local")
    assert minor.snapshot_id == n + 1 and minor.commit_kind == "COMPACT", minor.message
    assert minor.files_in > minor.files_out >= 1
    assert_all_agree(pypaimon, wh, t, t.expected(), [1, n])  # older snapshots stay readable

    # pypaimon keeps writing into the table we compacted, and both readers merge it in
    more = ([{**r, "id": r["id"] + 1000} for r in t.commits[0][:3]] if not t.primary_keys
            else [{**r, "op": "+U", "name": "peer-again"} for r in t.expected()[:3]])
    assert pypaimon.write(wh, DB, t.name, more) == n + 2
    expected = t.expected(extra=[more])
    assert_all_agree(pypaimon, wh, t, expected)

    full = compact_table(FileSystemCatalog(wh).get_table(t.ident), full=True, engine="local")
    assert full.snapshot_id == n + 3 and full.commit_kind == "COMPACT", full.message
    after = live_files(wh, t.ident)
    assert len(after) < len(files_before)
    if t.primary_keys:
        assert {f.level for f in after} == {MAX_LEVEL[name]}  # everything on the max level
    else:
        # one file per (partition, bucket) once small files are merged
        assert len(after) == {"ap_unaware": 1, "ap_fixed": 2, "ap_part": 2}[name]
    assert_all_agree(pypaimon, wh, t, expected)


def test_compact_cli_partition_then_full(pypaimon: PyPaimon, wh: str) -> None:
    t = BY_NAME["pk_part"]
    n = len(t.commits)
    before = files_by_partition(wh, t.ident)
    (row,) = cli_json(wh, "compact", t.ident, "--partition", f"dt={DAYS[0]}", "--engine", "local")
    assert row["snapshot_id"] == n + 1 and row["commit_kind"] == "COMPACT" and row["units"] == 2
    after = files_by_partition(wh, t.ident)
    assert sorted(after) == sorted(before) == [(DAYS[0],), (DAYS[1],), ("2024-01-03",)]
    assert [p for p in before if before[p] != after[p]] == [(DAYS[0],)]  # only that partition changed
    assert_all_agree(pypaimon, wh, t, t.expected(), [n])

    (row,) = cli_json(wh, "compact", t.ident, "--full")
    assert row["snapshot_id"] == n + 2 and row["commit_kind"] == "COMPACT"
    assert {f.level for f in live_files(wh, t.ident)} == {MAX_LEVEL["pk_part"]}
    assert_all_agree(pypaimon, wh, t, t.expected(), [n, n + 1])

    # nothing left to do: no snapshot, exit 0
    res = cli(wh, "compact", t.ident, "--full", "-o", "json")
    assert snapshot_ids(wh, t.ident)[-1] == n + 2, res.stdout


# --------------------------------------------------------------------------------------
# 2. expire and remove-orphan-files on pypaimon-written tables


def _iso_at(millis: int) -> str:
    """``millis`` as an ISO time (+0.5 ms so the float round trip cannot land a millisecond early)."""
    return dt.datetime.fromtimestamp(millis / 1000 + 0.0005, dt.timezone.utc).isoformat()


@pytest.mark.parametrize("name", ["pk_fixed", "ap_part"])
def test_expire_pypaimon_table(pypaimon: PyPaimon, wh: str, name: str) -> None:
    t = BY_NAME[name]
    n = len(t.commits)
    full = compact_table(FileSystemCatalog(wh).get_table(t.ident), full=True, engine="local", expire=False)
    assert full.snapshot_id == n + 1
    ids = list(range(1, n + 2))
    before = dict(zip(ids, peer_reads(pypaimon, wh, [(t.name, s) for s in ids]), strict=True))
    for s in ids:
        assert canon(before[s]) == canon(t.expected(min(s, n))), s
    sm = FileSystemCatalog(wh).get_table(t.ident).snapshot_manager
    times = {s: sm.snapshot(s).time_millis for s in ids}

    def peer_snapshot_ids() -> list[int]:
        return sorted(int(r["snapshot_id"]) for r in pypaimon.system_table(wh, DB, t.name, "snapshots").rows)

    # --older-than the commit time of snapshot 4: snapshot s goes once its successor is older
    # than the cut-off, so 1 and 2 go and 3 (whose successor is not older) stays
    cutoff = 4
    cli_json(wh, "expire", t.ident, "--retain-min", "1", "--older-than", _iso_at(times[cutoff]))
    assert snapshot_ids(wh, t.ident) == list(range(cutoff - 1, n + 2))
    assert peer_snapshot_ids() == list(range(cutoff - 1, n + 2))
    got = peer_reads(pypaimon, wh, [(t.name, None)] + [(t.name, s) for s in range(cutoff - 1, n + 2)])
    assert canon(got[0]) == canon(before[n + 1])
    for s, rows in zip(range(cutoff - 1, n + 2), got[1:], strict=True):
        assert canon(rows) == canon(before[s]), f"retained snapshot {s}"
    with pytest.raises(PyPaimonError):
        pypaimon.read(wh, DB, t.name, snapshot_id=1)

    # --retain-max wins over a young --older-than: only the newest two stay
    cli_json(wh, "expire", t.ident, "--retain-min", "1", "--retain-max", "2", "--older-than", "1d")
    assert snapshot_ids(wh, t.ident) == [n, n + 1]
    assert peer_snapshot_ids() == [n, n + 1]
    got = peer_reads(pypaimon, wh, [(t.name, None), (t.name, n)])
    assert canon(got[0]) == canon(before[n + 1]) and canon(got[1]) == canon(before[n])

    # down to the compacted snapshot: every level-0 file pypaimon wrote is gone from disk
    cli_json(wh, "expire", t.ident, "--retain-min", "1", "--retain-max", "1")
    assert snapshot_ids(wh, t.ident) == [n + 1]
    live = {f.file_name for f in live_files(wh, t.ident)}
    on_disk = {p.name for p in Path(wh, f"{DB}.db", t.name).rglob("data-*")}
    assert on_disk == live
    assert canon(pypaimon.read(wh, DB, t.name)) == canon(t.expected())
    assert canon(ours(wh, t.ident)) == canon(t.expected())


def test_remove_orphans_on_pypaimon_table(pypaimon: PyPaimon, wh: str) -> None:
    t = BY_NAME["pk_part"]
    n = len(t.commits)
    root = Path(wh, f"{DB}.db", t.name)
    some_data = next(root.rglob("data-*"))
    orphans = [
        some_data.parent / "data-00000000-orphan-0.parquet",                # never committed data file
        root / "manifest" / "manifest-00000000-orphan-0",                   # manifest of a failed commit
        root / "dt=2099-12-31" / "bucket-0" / "data-00000000-orphan-1.parquet",  # in a partition never committed
    ]
    for o in orphans:
        o.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(some_data, o)
    two_days_ago = time.time() - 2 * 86400
    for p in root.rglob("*"):
        os.utime(p, (two_days_ago, two_days_ago))  # everything is old: only use protects a file
    before = peer_reads(pypaimon, wh, [(t.name, s) for s in range(1, n + 1)])

    dry = cli_json(wh, "remove-orphan-files", t.ident, "--dry-run")
    assert all(o.exists() for o in orphans)
    rows = cli_json(wh, "remove-orphan-files", t.ident)
    assert canon(rows) == canon(dry)
    assert sorted(r["path"] for r in rows if r["kind"] != "directory") == sorted(
        str(o.relative_to(root)) for o in orphans)
    assert {r["path"] for r in rows if r["kind"] == "directory"} <= {"dt=2099-12-31", "dt=2099-12-31/bucket-0"}
    assert not any(o.exists() for o in orphans)
    assert not (root / "dt=2099-12-31").exists()

    after = peer_reads(pypaimon, wh, [(t.name, s) for s in range(1, n + 1)])
    for s, (b, a) in enumerate(zip(before, after, strict=True), start=1):
        assert canon(a) == canon(b) == canon(t.expected(s)), f"snapshot {s}"
    assert canon(ours(wh, t.ident)) == canon(t.expected())


# --------------------------------------------------------------------------------------
# 3. deletion vectors and first-row tables we write


def _dv_entries(wh: str, ident: str) -> list[Any]:
    table = FileSystemCatalog(wh).get_table(ident)
    entries = FileStoreScan(table).index_entries(table.snapshot_manager.latest_snapshot())
    return [e for e in entries if e.index_file.index_type == DELETION_VECTORS_INDEX]


def _reference_pk(batches: list[tuple[str, list[dict[str, Any]]]], first_row: bool = False) -> list[dict[str, Any]]:
    merged: dict[int, dict[str, Any]] = {}
    for kind, rows in batches:
        for r in rows:
            if kind == "delete":
                merged.pop(r["id"], None)
            elif not (first_row and r["id"] in merged):
                merged[r["id"]] = r
    return list(merged.values())


DV_SCHEMA = "id BIGINT NOT NULL, name STRING, amount DECIMAL(10,2), day DATE"


def _dv_batches() -> list[tuple[str, list[dict[str, Any]]]]:
    d0 = dt.date(2024, 5, 1)
    return [
        ("upsert", [{"id": i, "name": f"a{i}", "amount": Decimal(f"{i}.01"), "day": d0} for i in range(40)]),
        ("upsert", [{"id": i, "name": f"b{i}", "amount": Decimal("-1.50"), "day": d0 + dt.timedelta(days=i)}
                    for i in range(0, 40, 3)]),
        ("delete", [{"id": i, "name": None, "amount": None, "day": None} for i in (1, 2, 5, 39)]),
        ("upsert", [{"id": i, "name": f"c{i}", "amount": None, "day": None} for i in (2, 3, 40, 41)]),
    ]


def test_pypaimon_reads_our_deletion_vector_table(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh, ident = str(tmp_path / "wh"), f"{DB}.dv"
    cli(wh, "create", ident, "--schema", DV_SCHEMA, "--primary-key", "id",
        "--option", "bucket=2", "--option", "deletion-vectors.enabled=true")
    batches = _dv_batches()
    for i, (kind, rows) in enumerate(batches):
        cli_write(wh, ident, rows, tmp_path, *(["--delete"] if kind == "delete" else []))
        expected = _reference_pk(batches[: i + 1])
        assert canon(pypaimon.read(wh, DB, "dv")) == canon(expected), f"after write {i + 1}"
        assert canon(ours(wh, ident)) == canon(expected)
    dvs = _dv_entries(wh, ident)
    marked = sum(m.cardinality for e in dvs for m in e.index_file.dv_ranges)
    assert marked > 0  # the table really has deletion vectors for pypaimon to apply
    files = live_files(wh, ident)
    assert all(f.level > 0 for f in files)
    # without applying the vectors a reader would see replaced rows again
    assert sum(f.row_count for f in files) - marked == len(expected)

    # rows written with --write-only stay on level 0: invisible to both readers until compacted
    extra = [{"id": i, "name": f"w{i}", "amount": Decimal("9.99"), "day": None} for i in (0, 50)]
    cli_write(wh, ident, extra, tmp_path, "--write-only")
    assert canon(pypaimon.read(wh, DB, "dv")) == canon(expected)
    assert canon(ours(wh, ident)) == canon(expected)
    compact_table(FileSystemCatalog(wh).get_table(ident), engine="local")
    expected = _reference_pk([*batches, ("upsert", extra)])
    assert canon(pypaimon.read(wh, DB, "dv")) == canon(expected)
    assert canon(ours(wh, ident)) == canon(expected)

    res = compact_table(FileSystemCatalog(wh).get_table(ident), full=True, engine="local")
    assert res.commit_kind == "COMPACT"
    assert canon(pypaimon.read(wh, DB, "dv")) == canon(expected)
    assert canon(ours(wh, ident)) == canon(expected)


def test_pypaimon_cannot_read_64bit_deletion_vectors(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """``deletion-vectors.bitmap64=true`` (Java 1.x's 64-bit layout): pypaimon 2.1 only knows the
    32-bit magic and fails on the first vector. We read the table correctly."""
    wh, ident = str(tmp_path / "wh"), f"{DB}.dv64"
    cli(wh, "create", ident, "--schema", DV_SCHEMA, "--primary-key", "id", "--option", "bucket=1",
        "--option", "deletion-vectors.enabled=true", "--option", "deletion-vectors.bitmap64=true")
    batches = _dv_batches()[:2]
    for _kind, rows in batches:
        cli_write(wh, ident, rows, tmp_path)
    assert canon(ours(wh, ident)) == canon(_reference_pk(batches))
    (entry,) = _dv_entries(wh, ident)
    (meta,) = entry.index_file.dv_ranges
    blob = Path(wh, f"{DB}.db", "dv64", "index", entry.index_file.file_name).read_bytes()
    magic_as_pypaimon_sees_it = int.from_bytes(blob[meta.offset + 4: meta.offset + 8], "big")
    assert magic_as_pypaimon_sees_it != PK_DV_MAGIC
    with pytest.raises(PyPaimonError) as err:
        pypaimon.read(wh, DB, "dv64")
    assert err.value.error == "RuntimeError"
    assert err.value.message == f"Invalid magic number: {magic_as_pypaimon_sees_it}, expected: {PK_DV_MAGIC}"


def test_pypaimon_reads_our_first_row_table(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh, ident = str(tmp_path / "wh"), f"{DB}.fr"
    cli(wh, "create", ident, "--schema", "id BIGINT NOT NULL, name STRING, seen TIMESTAMP(3)",
        "--primary-key", "id", "--option", "bucket=2", "--option", "merge-engine=first-row")
    t0 = dt.datetime(2024, 6, 1, 12, 0, 0, 123000)
    batches = [
        ("upsert", [{"id": i, "name": f"a{i}", "seen": t0} for i in range(12)]),
        ("upsert", [{"id": i, "name": f"b{i}", "seen": t0 + dt.timedelta(hours=1)} for i in range(6, 20)]),
        ("upsert", [{"id": i, "name": f"c{i}", "seen": None} for i in range(0, 30, 2)]),
    ]
    for i, (_, rows) in enumerate(batches):
        cli_write(wh, ident, rows, tmp_path)
        expected = _reference_pk(batches[: i + 1], first_row=True)
        assert canon(pypaimon.read(wh, DB, "fr")) == canon(expected), f"after write {i + 1}"
        assert canon(ours(wh, ident)) == canon(expected)
    res = compact_table(FileSystemCatalog(wh).get_table(ident), full=True, engine="local")
    assert res.commit_kind == "COMPACT"
    assert canon(pypaimon.read(wh, DB, "fr")) == canon(expected)
    assert canon(ours(wh, ident)) == canon(expected)


# --------------------------------------------------------------------------------------
# 4. file indexes


FILTERS: list[tuple[list[list[Any]], str, Callable[[dict[str, Any]], bool]]] = [
    ([["equal", "name", ["n1-7"]]], "name = 'n1-7'", lambda r: r["name"] == "n1-7"),
    ([["equal", "kind", ["b"]]], "kind = 'b'", lambda r: r["kind"] == "b"),
    ([["is_in", "id", [3, 104, 249, 999]], ["equal", "kind", ["a"]]], "id IN (3, 104, 249, 999) AND kind = 'a'",
     lambda r: r["id"] in (3, 104, 249, 999) and r["kind"] == "a"),
    ([["equal", "name", ["absent"]]], "name = 'absent'", lambda r: False),
    ([["is_null", "kind", []]], "kind IS NULL", lambda r: r["kind"] is None),
]


def _index_state(wh: str, ident: str) -> tuple[int, int, int]:
    files = live_files(wh, ident)
    return (len(files), sum(1 for f in files if f.embedded_index), sum(1 for f in files if f.extra_files))


def _check_index_reads(peer: PyPaimon, wh: str, ident: str, expected: list[dict[str, Any]]) -> None:
    name = ident.split(".")[1]
    assert canon(peer.read(wh, DB, name)) == canon(expected)
    assert canon(ours(wh, ident)) == canon(expected)
    theirs = peer_filtered(peer, wh, name, [filters for filters, _, _ in FILTERS])
    for (_filters, where, ref), got in zip(FILTERS, theirs, strict=True):
        want = [r for r in expected if ref(r)]
        assert canon(got) == canon(want), where
        assert canon(ours(wh, ident, where=where)) == canon(want), where


def test_pypaimon_reads_table_with_rewritten_file_indexes(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh, ident = str(tmp_path / "wh"), f"{DB}.fi"
    cli(wh, "create", ident, "--schema", "id BIGINT, kind STRING, name STRING, amount DECIMAL(10,2)",
        "--option", "file-index.bloom-filter.columns=name", "--option", "file-index.bitmap.columns=kind",
        # small blooms (default: 1,000,000 items, 1.2 MB) so the indexes fit in the manifest
        "--option", "file-index.bloom-filter.name.items=64")
    expected: list[dict[str, Any]] = []
    for c in range(3):
        rows = [{"id": c * 100 + i, "kind": None if i % 11 == 10 else "abc"[i % 3], "name": f"n{c}-{i}",
                 "amount": Decimal(f"{i}.{c}0")} for i in range(50)]
        cli_write(wh, ident, rows, tmp_path)
        expected += rows
    _check_index_reads(pypaimon, wh, ident, expected)

    # add an index column: every file is re-indexed; small indexes are embedded in the manifest
    cli(wh, "alter", ident, "--set", "file-index.bloom-filter.columns=name,id",
        "--set", "file-index.bloom-filter.id.items=64")
    (row,) = cli_json(wh, "rewrite-file-index", ident)
    assert row["files_changed"] == 3
    assert _index_state(wh, ident) == (3, 3, 0)
    _check_index_reads(pypaimon, wh, ident, expected)

    # a threshold below the index size moves them into <data file>.index extra files
    cli(wh, "alter", ident, "--set", "file-index.in-manifest-threshold=1b")
    (row,) = cli_json(wh, "rewrite-file-index", ident)
    assert row["files_changed"] == 3 and row["index_files_written"] == 3
    assert _index_state(wh, ident) == (3, 0, 3)
    _check_index_reads(pypaimon, wh, ident, expected)

    # compaction writes indexes for the files it creates; pypaimon still reads everything
    res = compact_table(FileSystemCatalog(wh).get_table(ident), full=True, engine="local")
    assert res.commit_kind == "COMPACT"
    assert _index_state(wh, ident) == (1, 0, 1)
    _check_index_reads(pypaimon, wh, ident, expected)


# --------------------------------------------------------------------------------------
# 5. pypaimon's own deletion-vector / first-row tables, made readable by our compaction


def test_pypaimon_records_no_deletes_for_its_retractions(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """pypaimon 2.1 writes ``_DELETE_ROW_COUNT = 0`` even for a file holding a ``-D`` record, and
    then trusts that count itself: a bucket whose only file holds a retraction is read "raw",
    so pypaimon returns the deleted key as a row. Our reader merges it away."""
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, DB, "retract", [("id", "int64"), ("v", "string"), ("op", "string")],
                          primary_keys=["id"], options={"bucket": "1", "rowkind.field": "op"})
    pypaimon.write(wh, DB, "retract", [{"id": 1, "v": "a", "op": "+I"}, {"id": 2, "v": None, "op": "-D"}])
    (meta,) = live_files(wh, f"{DB}.retract")
    kinds = pq.read_table(next(Path(wh).rglob(meta.file_name)), columns=["_VALUE_KIND"]).column(0).to_pylist()
    assert kinds == [0, 3]  # +I, -D
    assert meta.delete_row_count == 0  # the manifest says: no deletes
    assert pypaimon.read(wh, DB, "retract") == [{"id": 1, "v": "a", "op": "+I"}, {"id": 2, "v": None, "op": "-D"}]
    assert ours(wh, f"{DB}.retract") == [{"id": 1, "v": "a", "op": "+I"}]


PEER_DV = PeerTable(
    "peer_dv", [("id", "int64"), ("v", "string"), ("op", "string")], primary_keys=["id"],
    options={"bucket": "2", "deletion-vectors.enabled": "true", "rowkind.field": "op"},
    commits=[[{"id": i, "v": f"a{i}", "op": "+I"} for i in range(12)],
             [{"id": i, "v": f"b{i}", "op": "+U"} for i in range(0, 14, 3)],
             [{"id": i, "v": None, "op": "-D"} for i in (1, 2)]
             + [{"id": i, "v": f"c{i}", "op": "+U"} for i in (4, 5, 14)]])
PEER_FR = PeerTable(
    "peer_fr", [("id", "int64"), ("v", "string")], primary_keys=["id"],
    options={"bucket": "2", "merge-engine": "first-row"},
    commits=[[{"id": i, "v": f"a{i}"} for i in range(10)], [{"id": i, "v": f"b{i}"} for i in range(5, 15)]])


def _peer_writes(peer: PyPaimon, wh: str, t: PeerTable) -> None:
    peer.create_table(wh, DB, t.name, t.columns, primary_keys=t.primary_keys, options=t.options)
    for batch in t.commits:
        peer.write(wh, DB, t.name, batch)


@pytest.mark.parametrize("t", [PEER_DV, PEER_FR], ids=["dv", "first-row"])
def test_compact_pypaimon_deletion_vector_and_first_row_tables(pypaimon: PyPaimon, tmp_path: Path,
                                                               t: PeerTable) -> None:
    """pypaimon 2.1 writes level-0 files only; DV and first-row readers hide level 0, so its own
    DV / first-row tables show nothing until a compactor runs. Ours makes every row visible."""
    wh = str(tmp_path / "wh")
    _peer_writes(pypaimon, wh, t)
    assert {f.level for f in live_files(wh, t.ident)} == {0}
    assert pypaimon.read(wh, DB, t.name) == [] and ours(wh, t.ident) == []

    res = compact_table(FileSystemCatalog(wh).get_table(t.ident), engine="local")
    assert res.commit_kind == "COMPACT", res.message
    assert all(f.level > 0 for f in live_files(wh, t.ident))
    first_row = t is PEER_FR
    expected = _reference_pk([("upsert", b) for b in t.commits], first_row=True) if first_row else t.expected()
    assert canon(pypaimon.read(wh, DB, t.name)) == canon(expected)
    assert canon(ours(wh, t.ident)) == canon(expected)

    # pypaimon writes updates on top; our lookup compaction turns replaced rows into DVs
    again = [{"id": i, "v": f"d{i}", **({} if first_row else {"op": "+U"})} for i in (0, 6, 13, 20)]
    pypaimon.write(wh, DB, t.name, again)
    compact_table(FileSystemCatalog(wh).get_table(t.ident), engine="local")
    if first_row:
        expected = _reference_pk([("upsert", b) for b in [*t.commits, again]], first_row=True)
    else:
        expected = t.expected(extra=[again])
        assert _dv_entries(wh, t.ident)
    assert canon(pypaimon.read(wh, DB, t.name)) == canon(expected)
    assert canon(ours(wh, t.ident)) == canon(expected)


def test_compacted_pypaimon_retraction_is_not_left_for_dv_readers(pypaimon: PyPaimon, tmp_path: Path) -> None:
    """A ``-D`` pypaimon wrote in a small file alone in its bucket section: Java's rule upgrades
    such a level-0 file without rewriting when ``_DELETE_ROW_COUNT`` is 0 -- which pypaimon
    always writes (see test above) -- so the retraction would sit on a DV level, where readers
    read files raw and show the deleted key as a row of NULLs. It must be dropped."""
    wh, t = str(tmp_path / "wh"), PEER_DV
    _peer_writes(pypaimon, wh, t)
    compact_table(FileSystemCatalog(wh).get_table(t.ident), engine="local")
    again = [{"id": 3, "v": None, "op": "-D"}, {"id": 6, "v": "d6", "op": "+U"}]
    pypaimon.write(wh, DB, t.name, again)
    compact_table(FileSystemCatalog(wh).get_table(t.ident), engine="local")
    expected = t.expected(extra=[again])
    assert canon(ours(wh, t.ident)) == canon(expected)
    leftover = [(f.file_name, f.level) for f in live_files(wh, t.ident)
                if f.level > 0 and 3 in pq.read_table(next(Path(wh).rglob(f.file_name)),
                                                      columns=["_VALUE_KIND"]).column(0).to_pylist()]
    assert leftover == [], "retraction records left in files on DV levels (pypaimon reads them as rows)"
    assert canon(pypaimon.read(wh, DB, t.name)) == canon(expected)
