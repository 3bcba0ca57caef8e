"""pytest plugin: a throw-away PostgreSQL server for the JDBC catalog tests.

``postgres_server`` (session): PostgreSQL from the system packages (``apt-get install
postgresql``; ``.ci/run`` installs it), a fresh cluster made with ``initdb`` in a temp dir,
trust authentication, listening on 127.0.0.1 on a free port, its socket inside the data dir.
As root, ``initdb``/``pg_ctl`` run as the ``postgres`` OS user (the server refuses root).
``pg_database`` (function): a new empty database on it. Missing binaries fail the tests with
the install command: a skipped catalog test would hide a broken promise.
Tests that use these fixtures get the ``postgres`` and ``jdbc`` markers.
"""

from __future__ import annotations

import glob
import itertools
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

_FIXTURES = {"postgres_server", "pg_database"}
_BIN_GLOB = "/usr/lib/postgresql/*/bin/initdb"
_SUPERUSER = "postgres"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.postgres)
            item.add_marker(pytest.mark.jdbc)


def _bin_dir() -> Path:
    found = sorted(glob.glob(_BIN_GLOB), key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if not found:
        pytest.fail("PostgreSQL server binaries not found (/usr/lib/postgresql/*/bin/initdb): "
                    "apt-get install -y postgresql", pytrace=False)
    return Path(found[-1]).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class PostgresServer:
    host: str
    port: int
    user: str
    data_dir: Path
    log_path: Path
    bin_dir: Path | None = None
    start_options: str = ""
    _names: Any = None

    def stop(self) -> None:
        """Stop the server (fast shutdown: open connections are cut); :meth:`start` brings it back
        on the same port with its databases. A test that stops it must start it again."""
        assert self.bin_dir is not None
        _run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-m", "fast", "-w", "stop"],
             os.geteuid() == 0, self.log_path)

    def start(self) -> None:
        assert self.bin_dir is not None
        _run([str(self.bin_dir / "pg_ctl"), "-D", str(self.data_dir), "-l", str(self.log_path), "-o",
              self.start_options, "-w", "-t", "60", "start"], os.geteuid() == 0, self.log_path)

    def jdbc_uri(self, database: str) -> str:
        return f"jdbc:postgresql://{self.host}:{self.port}/{database}"

    def connect(self, database: str = "postgres") -> Any:
        import psycopg

        return psycopg.connect(host=self.host, port=self.port, user=self.user, dbname=database, autocommit=True)

    def create_database(self, prefix: str = "cat") -> str:
        if self._names is None:
            self._names = itertools.count(1)
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        with self.connect() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return name


def _run(cmd: list[str], as_postgres: bool, log: Path | None = None) -> None:
    kwargs: dict[str, Any] = {"user": _SUPERUSER} if as_postgres else {}
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, **kwargs)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace")[-2000:] if log is not None and log.exists() else ""
        pytest.fail(f"{' '.join(cmd)} failed ({proc.returncode}): {proc.stderr.strip()[-2000:]}\n{tail}", pytrace=False)


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[PostgresServer]:
    bindir = _bin_dir()
    as_postgres = os.geteuid() == 0
    # not under pytest's basetemp: that is 0700 root, and the server runs as postgres
    root = Path(tempfile.mkdtemp(prefix="paimon-cli-pg-"))
    data, log = root / "data", root / "server.log"
    if as_postgres:
        shutil.chown(root, _SUPERUSER)
    port = _free_port()
    try:
        _run([str(bindir / "initdb"), "-D", str(data), "-U", _SUPERUSER, "-A", "trust", "-E", "UTF8",
              "--no-sync", "--no-instructions"], as_postgres)
        opts = (f"-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={data} "
                "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        _run([str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", opts, "-w", "-t", "60", "start"],
             as_postgres, log)
        yield PostgresServer("127.0.0.1", port, _SUPERUSER, data, log, bindir, opts)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
                           capture_output=True, timeout=60, **({"user": _SUPERUSER} if as_postgres else {}))
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def pg_database(postgres_server: PostgresServer) -> str:
    """The JDBC url of a new, empty database (user ``postgres``, no password)."""
    return postgres_server.jdbc_uri(postgres_server.create_database())
