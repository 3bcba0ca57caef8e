"""The databases a JDBC catalog test runs on: ``jdbc_options`` is parametrized over SQLite
(a file in the test's temp dir) and PostgreSQL (a new database on the session server); the
catalog store's own tests (tests/catalogs/test_jdbc_store.py) add MySQL (MariaDB)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from .mysql_server import PASSWORD as MYSQL_PASSWORD
from .mysql_server import USER as MYSQL_USER

BACKENDS = [pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]

Options = dict[str, str]


@pytest.fixture(params=BACKENDS)
def jdbc_backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(backend name, JDBC uri of an empty catalog database)."""
    return request.param, backend_uri(request, tmp_path)


def backend_uri(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if request.param == "sqlite":
        return f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    return str(request.getfixturevalue("pg_database"))


@pytest.fixture
def jdbc_options(jdbc_backend: tuple[str, str], tmp_path: Path) -> Callable[..., Options]:
    """``make(**extra)``: catalog options (Java's keys) for the backend's catalog database and a
    warehouse in the test's temp dir; extra keys use ``_`` for ``-``/``.`` as given."""
    _, uri = jdbc_backend
    warehouse = tmp_path / "warehouse"
    warehouse.mkdir(exist_ok=True)

    def make(extra: dict[str, str] | None = None) -> Options:
        opts = {"metastore": "jdbc", "uri": uri, "warehouse": str(warehouse)}
        if uri.startswith("jdbc:postgresql:"):
            opts["jdbc.user"] = "postgres"
        if uri.startswith("jdbc:mysql:"):
            opts.update({"jdbc.user": MYSQL_USER, "jdbc.password": MYSQL_PASSWORD})
        opts.update(extra or {})
        return opts

    return make
