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


@pytest.fixture(scope="module")
def demo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The quickstart warehouse plus tag ``t1`` (snapshot 1) and branch ``b1`` from it, built
    once per module: copy it (``demo_wh``) before changing it."""
    from paimon_cli.app import app

    wh = tmp_path_factory.mktemp("demo") / "wh"
    runner = CliRunner()
    for args in (["quickstart"], ["tag", "create", "demo.orders", "t1", "--snapshot", "1"],
                 ["branch", "create", "demo.orders", "b1", "--tag", "t1"]):
        res = runner.invoke(app, [*args, "-w", str(wh)])
        assert res.exit_code == 0, res.output
    return wh


@pytest.fixture
def demo_wh(demo_template: Path, tmp_path: Path) -> str:
    """A fresh copy of :func:`demo_template` for one test."""
    import shutil

    dest = tmp_path / "demo-wh"
    shutil.copytree(demo_template, dest)
    return str(dest)
