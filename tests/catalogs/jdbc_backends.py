"""The databases a JDBC catalog test runs on: ``jdbc_options`` is parametrized over SQLite
(a file in the test's temp dir) and PostgreSQL (a new database on the session server)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

BACKENDS = [pytest.param("sqlite", id="sqlite"), pytest.param("postgres", id="postgres", marks=pytest.mark.postgres)]

Options = dict[str, str]


@pytest.fixture(params=BACKENDS)
def jdbc_backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, str]:
    """(backend name, JDBC uri of an empty catalog database)."""
    if request.param == "sqlite":
        return "sqlite", f"jdbc:sqlite:{tmp_path / 'catalog.db'}"
    return "postgres", request.getfixturevalue("pg_database")


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
        opts.update(extra or {})
        return opts

    return make
