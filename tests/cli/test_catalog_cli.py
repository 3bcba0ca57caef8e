"""--catalog / --catalog-option on the command line: every command reaches its tables through them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


@pytest.fixture
def catalogs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var in ("PAIMON_CATALOG", "PAIMON_CATALOG_OPTIONS", "PAIMON_WAREHOUSE"):
        monkeypatch.delenv(var, raising=False)
    wh = tmp_path / "lake"
    path = tmp_path / "catalogs.toml"
    path.write_text(f'[catalogs.lake]\nmetastore = "filesystem"\nwarehouse = "{wh}"\n'
                    '"jdbc.password" = "${LAKE_SECRET}"\n')
    monkeypatch.setenv("PAIMON_CLI_CATALOGS", str(path))
    monkeypatch.setenv("LAKE_SECRET", "hunter2")
    monkeypatch.chdir(tmp_path)
    return wh


def test_a_named_catalog_serves_every_command(runner: CliRunner, catalogs: Path, tmp_path: Path) -> None:
    r = invoke(runner, "create", "db.t", "--schema", "id BIGINT NOT NULL, v STRING", "--primary-key", "id",
               "--catalog", "lake")
    assert r.exit_code == 0, r.output
    assert (catalogs / "db.db" / "t" / "schema" / "schema-0").is_file()
    assert not (tmp_path / "warehouse").exists()  # the default warehouse was not used
    data = tmp_path / "in.csv"
    data.write_text("id,v\n1,a\n2,b\n")
    assert invoke(runner, "--catalog", "lake", "write", "db.t", str(data)).exit_code == 0
    r = invoke(runner, "read", "db.t", "-o", "jsonl", "--catalog", "lake")
    assert [json.loads(line)["v"] for line in r.stdout.splitlines()] == ["a", "b"]
    r = invoke(runner, "list", "db", "-o", "json", "--catalog-option", f"warehouse={catalogs}")
    assert [row["table"] for row in json.loads(r.stdout)] == ["t"]


def test_catalog_options_are_shown_with_secrets_masked(runner: CliRunner, catalogs: Path) -> None:
    r = invoke(runner, "inspect", "catalog-options", "--catalog", "lake", "-o", "json")
    assert r.exit_code == 0, r.output
    rows = {row["key"]: row for row in json.loads(r.stdout)}
    assert rows["jdbc.password"]["value"] == "******" and "hunter2" not in r.stdout
    assert rows["warehouse"]["value"] == str(catalogs)
    assert rows["metastore"]["value"] == "filesystem"
    assert "catalogs.toml" in rows["warehouse"]["source"]


@pytest.mark.parametrize("args, code, message", [
    (["--catalog-option", "lock.enable=true"], 4, "did you mean 'lock.enabled'"),
    (["--catalog-option", "metastore=glue"], 4, "expected one of filesystem, hive, jdbc, rest"),
    (["--catalog", "nope"], 3, "no catalog 'nope'"),
    (["--catalog-option", "metastore=rest"], 4, "metastore=rest needs the option 'uri'"),
])
def test_bad_catalog_selection_is_one_line_and_documented(runner: CliRunner, catalogs: Path, args: list[str],
                                                           code: int, message: str) -> None:
    r = invoke(runner, "list", *args)
    assert r.exit_code == code, r.output
    assert message in r.stderr and "Traceback" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1 and r.stdout == ""


def test_environment_selects_the_catalog(runner: CliRunner, catalogs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PAIMON_CATALOG", "lake")
    assert invoke(runner, "create", "db.e", "--schema", "id INT").exit_code == 0
    monkeypatch.delenv("PAIMON_CATALOG")
    monkeypatch.setenv("PAIMON_CATALOG_OPTIONS", f"metastore=filesystem,warehouse={catalogs}")
    r = invoke(runner, "list", "db", "-o", "json")
    assert [row["table"] for row in json.loads(r.stdout)] == ["e"]
