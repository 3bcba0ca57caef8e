"""Fixtures for CLI tests: a CliRunner and a fresh warehouse directory per test."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    return CliRunner()


@pytest.fixture
def warehouse(tmp_path: Path) -> str:
    wh = tmp_path / "warehouse"
    wh.mkdir()
    return str(wh)
