"""Several `paimon-cli write` processes committing at once into one table all land.

Why: people run loaders in parallel (one per source file, cron jobs that overlap). Every
commit publishes ``snapshot-N`` with a write-if-absent (a hard link locally, a conditional
put on S3) and retries on a lost race, so N processes x K writes must give exactly the
snapshots 1..N*K: none lost, none duplicated, every row readable, no manifest left behind
by a losing attempt. Checked on a local warehouse and on the moto S3 server (subprocesses
reach it on 127.0.0.1). Two concurrent ``--overwrite`` writes of one partition must both
land as OVERWRITE snapshots and the partition must hold exactly one of the two inputs.

Java Paimon 0.9 reading the same local table: tests/interop/test_concurrent_write_java.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.operation.scan import FileStoreScan

N_PROCS = 4  # concurrent writers per round
K_ROUNDS = 3  # writes per writer
FILES_PER_WRITE = 2
ROWS_PER_FILE = 40
SCHEMA = "id BIGINT NOT NULL, dt STRING NOT NULL, v STRING, amount DOUBLE"
TIMEOUT = 180


@dataclass
class Target:
    """Where the table lives and how a CLI subprocess reaches it."""

    warehouse: str
    fs_options: list[str] = field(default_factory=list)
    storage_options: dict[str, Any] | None = None

    def args(self) -> list[str]:
        out = ["-w", self.warehouse]
        for o in self.fs_options:
            out += ["--fs-option", o]
        return out


def cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "paimon_cli", *args]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        env.pop(var, None)
    return env


def run(args: list[str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT, env=_env())


def run_together(commands: list[list[str]]) -> list[subprocess.CompletedProcess[str]]:
    """Start every command before waiting for any, so their commits race."""
    procs = [subprocess.Popen(c, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env())
             for c in commands]
    out = []
    for c, p in zip(commands, procs, strict=True):
        stdout, stderr = p.communicate(timeout=TIMEOUT)
        out.append(subprocess.CompletedProcess(c, p.returncode, stdout, stderr))
    return out


def create(target: Target, name: str, *extra: str) -> None:
    res = run(cli("create", f"db.{name}", "--schema", SCHEMA, *extra, *target.args()))
    assert res.returncode == 0, res.stderr


def rows_for(worker: int, rnd: int, part: int, n: int = ROWS_PER_FILE, base: int = 0) -> list[dict[str, Any]]:
    """Disjoint ids per (worker, round, file); two partitions."""
    start = base + ((worker * 100 + rnd) * 10 + part) * 1000
    return [{"id": start + i, "dt": "2024-01-01" if i % 2 else "2024-01-02", "v": f"w{worker}-r{rnd}-f{part}-{i}",
             "amount": (start + i) * 0.5} for i in range(n)]


def write_parquet(path: Path, rows: list[dict[str, Any]]) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    schema = pa.schema([("id", pa.int64()), ("dt", pa.string()), ("v", pa.string()), ("amount", pa.float64())])
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), path)
    return str(path)


def read_cli(target: Target, name: str) -> list[dict[str, Any]]:
    res = run(cli("read", f"db.{name}", "-o", "json", *target.args()))
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def key(r: dict[str, Any]) -> str:
    return json.dumps(r, sort_keys=True)


def open_table(target: Target, name: str) -> Any:
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    return FileSystemCatalog(target.warehouse, target.storage_options).get_table(f"db.{name}")


def referenced_metadata(table: Any) -> set[str]:
    """Manifest lists, manifests and index manifests referenced by any snapshot."""
    ml = FileStoreScan(table)._manifest_list()
    out: set[str] = set()
    for snap in table.snapshot_manager.snapshots():
        for lst in snap.manifest_lists():
            out.add(lst)
            out.update(m.file_name for m in ml.read(lst))
        if snap.index_manifest:
            out.add(snap.index_manifest)
    return out


def concurrent_appends(target: Target, tmp: Path, name: str) -> list[dict[str, Any]]:
    """N writers x K rounds of `paimon-cli write` (each with several input files) -> all rows written."""
    expected: list[dict[str, Any]] = []
    reported: list[int] = []
    for rnd in range(K_ROUNDS):
        commands = []
        for w in range(N_PROCS):
            files = []
            for part in range(FILES_PER_WRITE):
                rows = rows_for(w, rnd, part)
                expected += rows
                files.append(write_parquet(tmp / f"{name}-w{w}-r{rnd}-f{part}.parquet", rows))
            commands.append(cli("write", f"db.{name}", *files, "-o", "json", *target.args()))
        for res in run_together(commands):
            assert res.returncode == 0, res.stderr
            assert "Traceback" not in res.stderr and "error" not in res.stderr.lower(), res.stderr
            out = json.loads(res.stdout)
            assert out[0]["commit_kind"] == "APPEND" and out[0]["rows"] == FILES_PER_WRITE * ROWS_PER_FILE
            reported.append(out[0]["snapshot_id"])
    total = N_PROCS * K_ROUNDS
    # every process got its own snapshot id, and together they are dense
    assert sorted(reported) == list(range(1, total + 1))

    table = open_table(target, name)
    sm = table.snapshot_manager
    assert sm.snapshot_ids() == list(range(1, total + 1))
    assert sm.latest_snapshot_id() == total and sm.earliest_snapshot_id() == 1
    snaps = sm.snapshots()
    assert [s.id for s in snaps] == list(range(1, total + 1))
    assert all(s.commit_kind == "APPEND" for s in snaps)
    assert len({s.commit_user for s in snaps}) == total, "commit users must be distinct per process"
    assert all(s.delta_record_count == FILES_PER_WRITE * ROWS_PER_FILE for s in snaps)
    assert snaps[-1].total_record_count == len(expected)
    # nothing a losing attempt wrote is left in snapshot/ or manifest/
    fio = table.file_io
    names = set(fio.list_names(sm.snapshot_dir))
    assert names - {"EARLIEST"} == {f"snapshot-{i}" for i in range(1, total + 1)} | {"LATEST"}, names
    manifest_files = set(fio.list_names(f"{table.path}/manifest"))
    assert manifest_files == referenced_metadata(table)

    ours = read_cli(target, name)
    assert len(ours) == len(expected)
    assert sorted(map(key, ours)) == sorted(map(key, expected))
    return expected


def concurrent_overwrites(target: Target, tmp: Path, name: str) -> None:
    """Two `write --overwrite --partition dt=...` of the same partition race: both land, and the
    partition holds exactly the input of the one that committed last (no mix)."""
    base = rows_for(9, 0, 0, n=20)
    res = run(cli("write", f"db.{name}", write_parquet(tmp / f"{name}-base.parquet", base), *target.args()))
    assert res.returncode == 0, res.stderr
    part = "2024-01-01"
    inputs = {}
    commands = []
    for w in (1, 2):
        rows = [dict(r, dt=part) for r in rows_for(w, 5, 0, n=30)]
        inputs[w] = rows
        f = write_parquet(tmp / f"{name}-ow{w}.parquet", rows)
        commands.append(cli("write", f"db.{name}", f, "--overwrite", "--partition", f"dt={part}", "-o", "json",
                            *target.args()))
    results = run_together(commands)
    sid_of = {}
    for w, res in zip((1, 2), results, strict=True):
        assert res.returncode == 0, res.stderr
        out = json.loads(res.stdout)[0]
        assert out["commit_kind"] == "OVERWRITE"
        sid_of[w] = out["snapshot_id"]
    assert sorted(sid_of.values()) == [2, 3]
    table = open_table(target, name)
    snaps = table.snapshot_manager.snapshots()
    assert [(s.id, s.commit_kind) for s in snaps] == [(1, "APPEND"), (2, "OVERWRITE"), (3, "OVERWRITE")]
    winner = max(sid_of, key=lambda w: sid_of[w])
    other_part = [r for r in base if r["dt"] != part]
    got = read_cli(target, name)
    assert sorted(map(key, got)) == sorted(map(key, inputs[winner] + other_part))
    # and the earlier overwrite's snapshot shows only its own input for the partition
    from paimon_cli.core.operation.read import TableRead
    from paimon_cli.core.table.file_store_table import TimeTravel

    loser = 3 - winner
    at2 = TableRead(table, TimeTravel(snapshot_id=2)).to_arrow().to_pylist()
    assert sorted(map(key, at2)) == sorted(map(key, inputs[loser] + other_part))
    assert snaps[-1].total_record_count == len(inputs[winner]) + len(other_part)


# ------------------------------------------------------------------------------------ local


@pytest.fixture
def local(tmp_path: Path) -> Target:
    return Target(str(tmp_path / "wh"))


def test_concurrent_writes_pk_table(local: Target, tmp_path: Path) -> None:
    # write-only: these writers only append (their auto-compaction races: tests/test_concurrent_compact.py)
    create(local, "pk", "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=3",
           "--option", "write-only=true")
    concurrent_appends(local, tmp_path, "pk")


def test_concurrent_writes_append_table(local: Target, tmp_path: Path) -> None:
    create(local, "ap", "--partition-by", "dt")
    concurrent_appends(local, tmp_path, "ap")


@pytest.mark.parametrize("pk", [False, True], ids=["append", "pk"])
def test_concurrent_overwrites_of_one_partition(local: Target, tmp_path: Path, pk: bool) -> None:
    extra = ["--primary-key", "id,dt", "--option", "bucket=2"] if pk else []
    create(local, "ow", "--partition-by", "dt", *extra)
    concurrent_overwrites(local, tmp_path, "ow")


# ------------------------------------------------------------------------------------ S3


@pytest.fixture
def s3(s3_server: Any) -> Target:
    return Target(s3_server.fresh_warehouse("concurrent"), s3_server.fs_option_pairs(), s3_server.storage_options)


@pytest.mark.s3
def test_concurrent_writes_pk_table_s3(s3: Target, tmp_path: Path) -> None:
    # write-only: these writers only append (their auto-compaction races: tests/test_concurrent_compact.py)
    create(s3, "pk", "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=3",
           "--option", "write-only=true")
    concurrent_appends(s3, tmp_path, "pk")


@pytest.mark.s3
def test_concurrent_writes_append_table_s3(s3: Target, tmp_path: Path) -> None:
    create(s3, "ap", "--partition-by", "dt")
    concurrent_appends(s3, tmp_path, "ap")


@pytest.mark.s3
def test_concurrent_overwrites_of_one_partition_s3(s3: Target, tmp_path: Path) -> None:
    create(s3, "ow", "--partition-by", "dt")
    concurrent_overwrites(s3, tmp_path, "ow")
