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
