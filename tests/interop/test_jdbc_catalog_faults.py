"""Commands of the real CLI through the JDBC catalog (SQLite and PostgreSQL) when things go
wrong in the middle: a command killed (SIGKILL) while it holds the table's lock row, and the
catalog database gone while commands are half-way. Each command is frozen at an exact moment
by ``tests.catalogs.cli_stopped_at`` (SIGSTOP); Java Paimon 0.9's JdbcCatalog reads every
table afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.jdbc_store import JdbcCatalogStore
from tests.catalogs.cli_stopped_at import spawn, wait_stopped
from tests.catalogs.soak import run_cli

from .java_harness import JavaPaimon, catalog_spec

pytestmark = pytest.mark.jdbc

COLUMNS = [("id", "INT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")]


def cat_args(opts: dict[str, str]) -> list[str]:
    out: list[str] = []
    for k, v in opts.items():
        out += ["--catalog-option", f"{k}={v}"]
    return out


def cli(*args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    res = run_cli(list(args))
    assert res.returncode == expect, f"{args}: exit {res.returncode}\n{res.stdout}\n{res.stderr}"
    return res


def rows(*spec: tuple[int, str]) -> list[dict[str, Any]]:
    return [{"id": i, "v": f"v{i}", "dt": d} for i, d in spec]


def csv_of(path: Path, data: list[dict[str, Any]]) -> str:
    path.write_text("id,v,dt\n" + "".join(f"{r['id']},{r['v']},{r['dt']}\n" for r in data))
    return str(path)


def snapshot_ids(table_dir: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in (table_dir / "snapshot").glob("snapshot-*"))


@contextmanager
def java_catalog(java: JavaPaimon, opts: dict[str, str]) -> Iterator[str]:
    """Java's JdbcCatalog on ``opts`` without the lock (Java 0.9 has none for PostgreSQL), closed
    afterwards: on SQLite an open Java 0.9 catalog keeps a read lock on the file."""
    spec = catalog_spec({k: v for k, v in opts.items() if not k.startswith("lock")})
    try:
        yield spec
    finally:
        java.close_catalog(spec)


def java_rows(java: JavaPaimon, opts: dict[str, str], db: str, table: str) -> list[dict[str, Any]]:
    with java_catalog(java, opts) as spec:
        return sorted(java.read(spec, db, table, row_kind=False), key=lambda r: (r["dt"], r["id"]))


# ------------------------------------------------------------------------------ killed holder


def test_a_killed_commands_lock_row_is_taken_over_after_it_expires(
        java_paimon: JavaPaimon, jdbc_options: Callable[..., dict[str, str]], tmp_path: Path) -> None:
    """``write`` is SIGKILLed holding the table's lock row. The row says it expires
    ``lock-acquire-timeout`` (8 s here) after it was taken, as Java writes it, and nothing else
    removes it: a command with a 1 s timeout gives up (exit 5); the next one waits until the
    database's clock says the row expired, takes it over and commits."""
    opts = jdbc_options({"lock.enabled": "true", "lock-check-max-sleep": "300 ms"})
    c = cat_args(opts)
    cli("create", "db.t", "--schema", "id INT NOT NULL, v STRING, dt STRING NOT NULL", "--primary-key", "id,dt",
        "--partition-by", "dt", "--option", "bucket=1", *c)
    cli("write", "db.t", csv_of(tmp_path / "first.csv", rows((1, "a"))), *c)
    table_dir = Path(opts["warehouse"]) / "db.db" / "t"

    proc = spawn("locked", ["write", "db.t", csv_of(tmp_path / "lost.csv", rows((2, "a"))), *c,
                            "--catalog-option", "lock-acquire-timeout=8 s"])
    wait_stopped(proc)
    with JdbcCatalogStore.from_options(opts) as store:
        assert [(lid, exp) for lid, _, exp in store.lock_holders()] == [("jdbc.db.t", 8)]
    killed_at = time.monotonic()
    os.kill(proc.pid, signal.SIGKILL)
    assert proc.wait(30) == -signal.SIGKILL

    data = csv_of(tmp_path / "next.csv", rows((3, "a")))
    res = cli("write", "db.t", data, *c, "--catalog-option", "lock-acquire-timeout=1 s", expect=5)
    assert "lock jdbc.db.t" in res.stderr and "not acquired" in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1
    cli("write", "db.t", data, *c, "--catalog-option", "lock-acquire-timeout=1 min")
    assert time.monotonic() - killed_at >= 7, "committed before the dead lock row expired"
    assert snapshot_ids(table_dir) == [1, 2]
    assert java_rows(java_paimon, opts, "db", "t") == rows((1, "a"), (3, "a"))
    with JdbcCatalogStore.from_options(opts) as store:
        assert store.lock_holders() == []


# ------------------------------------------------------------------------------ catalog database down


@contextmanager
def catalog_database_down(backend: str, uri: str, request: pytest.FixtureRequest) -> Iterator[None]:
    """PostgreSQL: the server stopped (every connection cut, none accepted) and started again.
    SQLite: another process holds the file's exclusive lock, as long as the block runs."""
    if backend == "postgres":
        server = request.getfixturevalue("postgres_server")
        server.stop()
        try:
            yield
        finally:
            server.start()
        return
    import sqlite3

    holder = sqlite3.connect(uri[len("jdbc:sqlite:"):], isolation_level=None)
    holder.execute("BEGIN EXCLUSIVE")
    try:
        yield
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_catalog_database_gone_in_the_middle_of_commands(
        java_paimon: JavaPaimon, jdbc_backend: tuple[str, str], jdbc_options: Callable[..., dict[str, str]],
        tmp_path: Path, request: pytest.FixtureRequest) -> None:
    """Seven commands, each frozen right before the catalog statement that matters, the catalog
    database made unavailable, the commands let go. PostgreSQL stopped: each exits 8 in one
    line. SQLite locked by another process: the statements exit 8 naming the lock; the commits
    (write, compact, expire-partitions), which cannot take their lock row, give up after
    ``lock-acquire-timeout`` with exit 5 and nothing written. Afterwards every table is as it
    was -- except ``alter``, whose schema committed before the catalog was to be told -- no
    lock row is left and Java reads every table."""
    backend, uri = jdbc_backend
    extra = {"lock.enabled": "true", "lock-acquire-timeout": "3 s", "lock-check-max-sleep": "300 ms"}
    if backend == "sqlite":
        extra["jdbc.busy_timeout"] = "500"
    opts = jdbc_options(extra)
    c = cat_args(opts)
    wh = Path(opts["warehouse"])
    for t in ("w", "cp", "pe", "al", "dr", "rn"):
        cli("create", f"db.{t}", "--schema", "id INT NOT NULL, v STRING, dt STRING NOT NULL", "--primary-key",
            "id,dt", "--partition-by", "dt", "--option", "bucket=1", *c)
        cli("write", f"db.{t}", csv_of(tmp_path / f"{t}.csv", rows((1, "2020-01-01"), (2, "2999-01-01"))), *c)
    cli("write", "db.cp", csv_of(tmp_path / "cp2.csv", rows((1, "2020-01-01"))), *c)
    cases = {
        "write": ("call:acquire lock", ["write", "db.w", csv_of(tmp_path / "w9.csv", rows((9, "2024-01-03")))]),
        "compact": ("call:acquire lock", ["compact", "db.cp", "--full"]),
        "expire-partitions": ("call:acquire lock", ["expire-partitions", "db.pe", "--expiration-time", "1d",
                                                    "--yes"]),
        "create": ("call:register a table", ["create", "db.nt", "--schema", "id INT"]),
        "alter": ("call:write table properties", ["alter", "db.al", "--add-column", "note STRING"]),
        "drop": ("call:drop a table", ["drop", "db.dr", "--yes"]),
        "rename": ("call:rename a table", ["rename", "db.rn", "db.rn2"]),
    }
    tables = {"write": "w", "compact": "cp", "expire-partitions": "pe", "alter": "al", "drop": "dr", "rename": "rn"}
    before = {name: (snapshot_ids(wh / "db.db" / t), java_rows(java_paimon, opts, "db", t))
              for name, t in tables.items()}
    procs = {}
    for name, (point, args) in cases.items():
        procs[name] = spawn(point, [*args, *c])
        wait_stopped(procs[name])
    outcomes = {}
    with catalog_database_down(backend, uri, request):
        for proc in procs.values():
            os.kill(proc.pid, signal.SIGCONT)
        for name, proc in procs.items():
            _, err = proc.communicate(timeout=120)
            outcomes[name] = (proc.returncode, err.strip())

    commits = ("write", "compact", "expire-partitions")
    wrong = []
    for name, (code, err) in outcomes.items():
        if backend == "sqlite" and name in commits:
            expected, text = 5, "the catalog database stayed busy (database is locked)"
        elif backend == "sqlite":
            expected, text = 8, "failed: database is locked (another connection holds the SQLite file"
        else:
            expected, text = 8, "connection lost"
        if code != expected or len(err.splitlines()) != 1 or not err.startswith("error: ") or text not in err:
            wrong.append(f"{name}: exit {code} (expected {expected}, {text!r}): {err}")
    assert not wrong, "\n".join(wrong)

    for name, t in tables.items():
        if name != "alter":
            assert (snapshot_ids(wh / "db.db" / t), java_rows(java_paimon, opts, "db", t)) == before[name], name
    assert [r.get("note") for r in java_rows(java_paimon, opts, "db", "al")] == [None, None]
    with java_catalog(java_paimon, opts) as spec:
        assert java_paimon.jdbc_list_tables(spec, "db") == ["al", "cp", "dr", "pe", "rn", "w"]
    assert not (wh / "db.db" / "nt").exists() and not (wh / "db.db" / "rn2").exists()
    with JdbcCatalogStore.from_options(opts) as store:
        assert store.lock_holders() == []
