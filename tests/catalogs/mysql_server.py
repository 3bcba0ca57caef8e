"""pytest plugin: a throw-away MariaDB (MySQL protocol) server for the JDBC catalog tests.

``mysql_server`` (session): MariaDB from the system packages (``apt-get install
mariadb-server``; ``.ci/run`` installs it), a fresh data dir made with ``mariadb-install-db``
in a temp dir, listening on 127.0.0.1 on a free port, its socket inside that dir.
``mysql_database`` (function): the JDBC url of a new empty database, owned by a user with a
password (``jdbc.user`` / ``jdbc.password`` in :data:`USER` / :data:`PASSWORD`), made with
``CHARACTER SET utf8mb3``: Java's catalog tables do not fit InnoDB's key limit under utf8mb4,
for Java's JdbcCatalog as for us. Missing binaries fail the tests with the install command.
Tests that use these fixtures get the ``mysql`` and ``jdbc`` markers.
"""

from __future__ import annotations

import itertools
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

_FIXTURES = {"mysql_server", "mysql_database"}
USER = "paimon"
PASSWORD = "paimon-pw"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if _FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.mysql)
            item.add_marker(pytest.mark.jdbc)


def _binary(name: str) -> str:
    found = shutil.which(name) or shutil.which(name, path="/usr/sbin:/usr/bin")
    if found is None:
        pytest.fail(f"{name} not found: apt-get install -y mariadb-server", pytrace=False)
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class MysqlServer:
    host: str
    port: int
    socket_path: Path
    _names: Any = field(default_factory=lambda: itertools.count(1))

    def jdbc_uri(self, database: str) -> str:
        return f"jdbc:mysql://{self.host}:{self.port}/{database}"

    def connect(self) -> Any:
        import pymysql

        return pymysql.connect(unix_socket=str(self.socket_path), user="root", autocommit=True)

    def create_database(self, prefix: str = "cat") -> str:
        name = f"{prefix}_{os.getpid()}_{next(self._names)}"
        conn = self.connect()
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb3")
                cur.execute(f"GRANT ALL ON `{name}`.* TO '{USER}'@'127.0.0.1'")
        finally:
            conn.close()
        return name


@pytest.fixture(scope="session")
def mysql_server() -> Iterator[MysqlServer]:
    root = Path(tempfile.mkdtemp(prefix="paimon-cli-mysql-"))
    data, sock, log = root / "data", root / "mysqld.sock", root / "server.log"
    user = ["--user=root"] if os.geteuid() == 0 else []
    init = subprocess.run([_binary("mariadb-install-db"), *user, f"--datadir={data}", "--skip-test-db",
                           "--auth-root-authentication-method=socket"], capture_output=True, text=True, timeout=180)
    if init.returncode != 0:
        pytest.fail(f"mariadb-install-db failed ({init.returncode}): {init.stderr.strip()[-2000:]}", pytrace=False)
    port = _free_port()
    with open(log, "wb") as out:
        proc = subprocess.Popen([_binary("mariadbd"), "--no-defaults", *user, f"--datadir={data}", f"--port={port}",
                                 "--bind-address=127.0.0.1", f"--socket={sock}", f"--pid-file={root / 'mysqld.pid'}",
                                 "--innodb-flush-log-at-trx-commit=0", "--skip-log-bin"],
                                stdout=out, stderr=subprocess.STDOUT)
    server = MysqlServer("127.0.0.1", port, sock)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                conn = server.connect()
                break
            except Exception:  # noqa: BLE001 - not up yet
                if proc.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"mariadbd did not start:\n{log.read_text(errors='replace')[-2000:]}", pytrace=False)
                time.sleep(0.2)
        try:
            with conn.cursor() as cur:
                cur.execute(f"CREATE USER '{USER}'@'127.0.0.1' IDENTIFIED BY '{PASSWORD}'")
        finally:
            conn.close()
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def mysql_database(mysql_server: MysqlServer) -> str:
    """The JDBC url of a new, empty utf8mb3 database the test user owns."""
    return mysql_server.jdbc_uri(mysql_server.create_database())
