"""Commands of the real CLI through a real Hive Metastore 2.3.9 when things go wrong in the
middle: a command killed (SIGKILL) while it holds the table's lock, and the metastore stopped
while commands are half-way. Each command is frozen at an exact moment by
``cli_stopped_at`` (SIGSTOP), so nothing here depends on timing; Java Paimon 0.9's
HiveCatalog reads every table afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.interop.java_harness import JavaPaimon

from .cli_stopped_at import spawn, wait_stopped
from .conftest import hive_spec
from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import client, fresh_db
from .soak import run_cli

COLUMNS = [("id", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")]
LOCK = {"lock.enabled": "true", "lock-check-max-sleep": "500 ms"}


def cat_args(server: HiveMetastoreServer, wh: Path, **extra: str) -> list[str]:
    out = ["--catalog-option", "metastore=hive", "--catalog-option", f"uri={server.uri}",
           "--catalog-option", f"warehouse={wh.as_uri()}"]
    for k, v in {**LOCK, **extra}.items():
        out += ["--catalog-option", f"{k}={v}"]
    return out


def cli(*args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    res = run_cli(list(args))
    assert res.returncode == expect, f"{args}: exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


def snapshot_ids(table_dir: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in (table_dir / "snapshot").glob("snapshot-*"))


def java_rows(java: JavaPaimon, spec: str, db: str, table: str) -> list[dict[str, Any]]:
    return sorted(java.read(spec, db, table, row_kind=False), key=lambda r: (r["dt"], r["id"]))


def rows(*spec: tuple[int, str]) -> list[dict[str, Any]]:
    return [{"id": i, "v": f"v{i}", "dt": d} for i, d in spec]


def csv_of(path: Path, data: list[dict[str, Any]]) -> str:
    path.write_text("id,v,dt\n" + "".join(f"{r['id']},{r['v']},{r['dt']}\n" for r in data))
    return str(path)


# ------------------------------------------------------------------------------ killed holder


def test_a_killed_commands_lock_is_taken_over_after_it_expires(
        hive_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path) -> None:
    """``write`` is SIGKILLed while the metastore holds the table's lock for it (frozen right
    after acquiring, so no heartbeat and no unlock follow). The lock stays: a command with a
    short ``lock-acquire-timeout`` gives up naming it (exit 5). The next ``write`` waits until
    the metastore's house-keeping expires the dead lock (``hive.txn.timeout``, 20 s in the
    fixture), then commits; the killed write left nothing in the table."""
    server, wh, db = hive_metastore, tmp_path / "wh", fresh_db("kill")
    spec = hive_spec(server, wh, **LOCK)
    java_hive.create_table(spec, db, "t", COLUMNS, ["id", "dt"], ["dt"], {"bucket": "1"})
    java_hive.write(spec, db, "t", rows((1, "a")))
    table_dir = wh / f"{db}.db" / "t"
    c = cat_args(server, wh)

    proc = spawn("locked", ["write", f"{db}.t", csv_of(tmp_path / "lost.csv", rows((2, "a"))), *c])
    wait_stopped(proc)
    with client(server) as hms:
        held = hms.show_locks(db, "t")
    assert [(x.state, x.type) for x in held] == [("ACQUIRED", "EXCLUSIVE")]
    killed_at = time.monotonic()
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL
    with client(server) as hms:
        assert [x.lock_id for x in hms.show_locks(db, "t")] == [held[0].lock_id]  # nobody released it

    data = csv_of(tmp_path / "next.csv", rows((3, "a")))
    res = cli("write", f"{db}.t", data, *c, "--catalog-option", "lock-acquire-timeout=2 s", expect=5)
    assert f"held by lock {held[0].lock_id} of " in res.stderr and len(res.stderr.strip().splitlines()) == 1

    start = time.monotonic()
    cli("write", f"{db}.t", data, *c, "--catalog-option", "lock-acquire-timeout=2 min")
    assert time.monotonic() - killed_at >= server.txn_timeout_s - 2, "committed before the dead lock expired"
    assert time.monotonic() - start < server.txn_timeout_s + 30
    assert snapshot_ids(table_dir) == [1, 2]
    assert java_rows(java_hive, spec, db, "t") == rows((1, "a"), (3, "a"))
    with client(server) as hms:
        assert hms.show_locks(db, "t") == []


# ------------------------------------------------------------------------------ metastore down


@dataclass
class Halfway:
    """A command frozen at ``point`` (before that metastore call) until the metastore is down."""

    name: str
    point: str
    args: list[str]
    proc: subprocess.Popen[str] | None = None
    code: int | None = None
    stderr: str = ""
    before: dict[str, Any] = field(default_factory=dict)


def _partitions(server: HiveMetastoreServer, db: str, table: str) -> list[list[str]]:
    with client(server) as hms:
        return sorted(p.values for p in hms.list_partitions(db, table))


def test_metastore_stopped_in_the_middle_of_commands(
        running_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path) -> None:
    """Seven commands, each frozen right before the metastore call that matters, the metastore
    stopped, the commands let go: each exits 8 with one line, and once the metastore is back
    every table is as it was -- except ``alter``, whose new schema was committed to the files
    before the metastore was to be told (the files are the truth: Java reads the new column;
    the metastore's copy of the columns is stale) -- and no lock is left behind. ``write``
    registered its new partition before it went for the lock; ``repair`` drops it."""
    server, wh, db = running_metastore, tmp_path / "wh", fresh_db("down")
    spec = hive_spec(server, wh, **LOCK)
    part = {"bucket": "1", "metastore.partitioned-table": "true"}
    for t in ("w", "cp", "pe", "al", "dr", "rn"):
        java_hive.create_table(spec, db, t, COLUMNS, ["id", "dt"], ["dt"], part)
        java_hive.write(spec, db, t, rows((1, "2024-01-01")))
    java_hive.write(spec, db, "cp", rows((2, "2024-01-01")))
    java_hive.write(spec, db, "pe", rows((3, "2020-01-01")))
    c = cat_args(server, wh)
    cases = [
        Halfway("write", "call:lock", ["write", f"{db}.w", csv_of(tmp_path / "w.csv", rows((9, "2024-01-03")))]),
        Halfway("compact", "call:lock", ["compact", f"{db}.cp", "--full"]),
        Halfway("expire-partitions", "call:drop partition",
                ["expire-partitions", f"{db}.pe", "--expiration-time", "1d", "--yes"]),
        Halfway("create", "call:create table", ["create", f"{db}.nt", "--schema", "id INT"]),
        Halfway("alter", "call:alter table", ["alter", f"{db}.al", "--add-column", "note STRING"]),
        Halfway("drop", "call:drop table", ["drop", f"{db}.dr", "--yes"]),
        Halfway("rename", "call:alter table", ["rename", f"{db}.rn", f"{db}.rn2"]),
    ]
    tables = {"write": "w", "compact": "cp", "expire-partitions": "pe", "alter": "al", "drop": "dr", "rename": "rn"}
    for case in cases:
        if case.name in tables:
            t = tables[case.name]
            case.before = {"snapshots": snapshot_ids(wh / f"{db}.db" / t), "rows": java_rows(java_hive, spec, db, t),
                           "partitions": _partitions(server, db, t)}
    for case in cases:  # one after another: they share the test JVM's two cores
        case.proc = spawn(case.point, [*case.args, *c])
        wait_stopped(case.proc)
    server.stop()
    for case in cases:
        assert case.proc is not None
        os.kill(case.proc.pid, signal.SIGCONT)
    for case in cases:
        assert case.proc is not None
        _, case.stderr = case.proc.communicate(timeout=120)
        case.code = case.proc.returncode
    server.start()

    wrong = [f"{case.name}: exit {case.code}: {case.stderr.strip()}" for case in cases
             if case.code != 8 or len(case.stderr.strip().splitlines()) != 1
             or not case.stderr.startswith("error: ") or "Hive Metastore" not in case.stderr]
    assert not wrong, "\n".join(wrong)

    by_name = {case.name: case for case in cases}
    for name in ("write", "compact", "expire-partitions", "drop", "rename"):
        t, before = tables[name], by_name[name].before
        assert snapshot_ids(wh / f"{db}.db" / t) == before["snapshots"], name
        assert java_rows(java_hive, spec, db, t) == before["rows"], name
    assert _partitions(server, db, "pe") == by_name["expire-partitions"].before["partitions"]
    assert _partitions(server, db, "w") == [["2024-01-01"], ["2024-01-03"]]
    cli("repair", f"{db}.w", *c)
    assert _partitions(server, db, "w") == [["2024-01-01"]]
    # create: neither a metastore entry nor files
    assert sorted(java_hive.list_tables(spec, db)) == ["al", "cp", "dr", "pe", "rn", "w"]
    assert not (wh / f"{db}.db" / "nt").exists()
    # alter: the schema committed, the metastore not told
    assert [r.get("note") for r in java_rows(java_hive, spec, db, "al")] == [None]
    with client(server) as hms:
        assert "note" not in [col.name for col in hms.get_table(db, "al").sd.cols]
        for t in ("w", "cp", "pe", "al", "dr", "rn"):
            assert hms.show_locks(db, t) == [], t


@pytest.mark.slow
def test_metastore_hung_while_a_commit_asks_for_the_lock(
        running_metastore: HiveMetastoreServer, java_hive: JavaPaimon, tmp_path: Path) -> None:
    """The metastore freezes (SIGSTOP) just as ``write`` sends its lock request; the call times
    out (``hive.metastore.client.socket.timeout=20s``; Java's default is 600 s), the metastore
    wakes up and grants the request nobody waits for. The command finds that lock by its request's agent info, releases it and exits 8 in one line: nothing
    was committed and no lock is left (without this, only Hive's house-keeping -- off in most
    metastores -- would ever free the table again)."""
    server, wh, db = running_metastore, tmp_path / "wh", fresh_db("hung")
    spec = hive_spec(server, wh, **LOCK)
    java_hive.create_table(spec, db, "t", COLUMNS, ["id", "dt"], ["dt"], {"bucket": "1"})
    java_hive.write(spec, db, "t", rows((1, "a")))
    proc = spawn("call:lock", ["write", f"{db}.t", csv_of(tmp_path / "w.csv", rows((2, "a"))),
                               *cat_args(server, wh, **{"hive.metastore.client.socket.timeout": "20s"})])
    wait_stopped(proc)
    server.pause()
    os.kill(proc.pid, signal.SIGCONT)
    time.sleep(22)  # past the client's 20 s call timeout
    server.resume()
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 8 and len(err.strip().splitlines()) == 1, err
    assert f"could not lock {db}.t" in err and "it granted late was released" in err, err
    with client(server) as hms:
        assert hms.show_locks(db, "t") == []
    assert snapshot_ids(wh / f"{db}.db" / "t") == [1]
    assert java_rows(java_hive, spec, db, "t") == rows((1, "a"))
