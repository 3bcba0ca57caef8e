"""Catalog options: Java's keys, the catalogs file, the environment and the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from paimon_cli.core.catalog import load_catalog, resolve_catalog_options
from paimon_cli.core.catalog.options import CatalogOptions
from paimon_cli.core.errors import InvalidInput, NotFound


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for var in ("PAIMON_CATALOG", "PAIMON_CATALOG_OPTIONS", "PAIMON_CLI_CATALOGS"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _file(tmp_path: Path, text: str, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "catalogs.toml"
    path.write_text(text)
    monkeypatch.setenv("PAIMON_CLI_CATALOGS", str(path))
    return path


def test_nothing_given_is_the_filesystem_catalog_at_dot_warehouse() -> None:
    opts = resolve_catalog_options()
    assert (opts.metastore, opts.warehouse) == ("filesystem", "./warehouse")


def test_unknown_key_is_refused_by_name_with_a_suggestion() -> None:
    with pytest.raises(InvalidInput, match=r"unknown catalog option 'lock\.enable'.*did you mean 'lock\.enabled'"):
        resolve_catalog_options(options=["lock.enable=true"])


def test_engine_tuning_keys_are_accepted_without_effect() -> None:
    opts = resolve_catalog_options(options=["type=paimon", "cache-enabled=false", "client-pool-size=4",
                                            "cache.expire-after-access=1 min", "jdbc.ssl=true"])
    assert opts.metastore == "filesystem"


def test_rest_catalog_keys_are_accepted_and_the_token_masked() -> None:
    opts = resolve_catalog_options(options=["metastore=rest", "uri=http://127.0.0.1:1", "warehouse=w",
                                            "token.provider=bear", "token=s3cr3t", "header.X-Trace=1",
                                            "dlf.region=cn-hangzhou", "prefix=p", "data-token.enabled=true",
                                            "io-cache.enabled=false"])
    assert opts.metastore == "rest" and opts.prefixed("header.") == {"X-Trace": "1"}
    assert dict(opts.masked())["token"] == "******"


@pytest.mark.parametrize("pair, message", [
    ("lock.enabled=yes", "expected true or false"),
    ("lock-acquire-timeout=soon", "lock-acquire-timeout"),
    ("metastore=glue", "expected one of filesystem, hive, jdbc, rest"),
    ("table.type=temporary", "expected managed or external"),
])
def test_bad_values_are_refused_before_any_io(pair: str, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        resolve_catalog_options(options=[pair])


def test_java_durations_and_defaults() -> None:
    opts = resolve_catalog_options(options=["lock-acquire-timeout=2 min", "lock-check-max-sleep=500 ms"])
    assert (opts.lock_acquire_timeout_millis, opts.lock_check_max_sleep_millis) == (120_000, 500)
    d = CatalogOptions({})
    assert (d.lock_acquire_timeout_millis, d.lock_check_max_sleep_millis, d.lock_enabled) == (480_000, 8_000, None)
    assert d.sync_all_properties is True and d.catalog_key == "jdbc" and d.table_type == "managed"


def test_named_catalog_from_the_file_with_env_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _file(tmp_path, """
[catalogs.pg]
metastore = "jdbc"
uri = "jdbc:postgresql://127.0.0.1:5432/paimon"
warehouse = "/lake"
"jdbc.user" = "paimon"
"jdbc.password" = "${PG_SECRET}"
"lock.enabled" = true
"lock-acquire-timeout" = "3 min"
note_cost = "$$5"
""".replace('note_cost = "$$5"\n', '"jdbc.note" = "$$5"\n'), monkeypatch)
    monkeypatch.setenv("PG_SECRET", "s3cr3t")
    opts = resolve_catalog_options("pg")
    assert opts.metastore == "jdbc" and opts.get("jdbc.password") == "s3cr3t"
    assert opts.lock_enabled is True and opts.lock_acquire_timeout_millis == 180_000
    assert opts.prefixed("jdbc.") == {"user": "paimon", "password": "s3cr3t", "note": "$5"}
    assert dict(opts.masked())["jdbc.password"] == "******"
    assert opts.label == "pg"


def test_missing_env_variable_is_refused_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _file(tmp_path, '[catalogs.pg]\nmetastore = "jdbc"\n"jdbc.password" = "${NOPE_NOT_SET}"\n', monkeypatch)
    with pytest.raises(InvalidInput, match=r"NOPE_NOT_SET.*not set"):
        resolve_catalog_options("pg")


def test_unknown_catalog_names_the_ones_there(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _file(tmp_path, '[catalogs.prod]\nmetastore = "filesystem"\nwarehouse = "/x"\n', monkeypatch)
    with pytest.raises(NotFound, match=r"no catalog 'prd'.*did you mean 'prod'.*catalogs there: prod"):
        resolve_catalog_options("prd")


def test_missing_file_and_bad_toml(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(NotFound, match="no catalogs file at"):
        resolve_catalog_options("prod")
    _file(tmp_path, "[catalogs.prod\n", monkeypatch)
    with pytest.raises(InvalidInput, match="not valid TOML"):
        resolve_catalog_options("prod")
    _file(tmp_path, "[other]\nx = 1\n", monkeypatch)
    with pytest.raises(InvalidInput, match=r"expected \[catalogs.NAME\] tables only, found other"):
        resolve_catalog_options("prod")


def test_later_sources_win_file_env_flag_warehouse(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _file(tmp_path, '[catalogs.c]\nmetastore = "filesystem"\nwarehouse = "/from-file"\n'
                    '"lock-check-max-sleep" = "1 s"\n"lock-acquire-timeout" = "1 s"\n', monkeypatch)
    monkeypatch.setenv("PAIMON_CATALOG", "c")
    monkeypatch.setenv("PAIMON_CATALOG_OPTIONS", "lock-check-max-sleep=2 s,lock-acquire-timeout=2 s")
    opts = resolve_catalog_options(options=["lock-acquire-timeout=3 s"])
    assert opts.warehouse == "/from-file"
    assert (opts.lock_check_max_sleep_millis, opts.lock_acquire_timeout_millis) == (2_000, 3_000)
    assert opts.sources["lock-acquire-timeout"] == "--catalog-option"
    assert resolve_catalog_options(options=["lock-acquire-timeout=3 s"], warehouse="/cli").warehouse == "/cli"


def test_rest_catalog_loads_without_contacting_the_server() -> None:
    from paimon_cli.core.catalog.rest import RestCatalog

    catalog = load_catalog(resolve_catalog_options(options=["metastore=rest", "uri=http://127.0.0.1:1"]))
    assert isinstance(catalog, RestCatalog) and "api" not in catalog.__dict__


def test_cli_args_select_the_catalog_again_without_secrets(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What ``health`` puts in its fix commands: a metastore catalog by its options (or name),
    never as a bare warehouse path, which would run the fix without the catalog's lock."""
    assert resolve_catalog_options(warehouse="/w").cli_args() == ["--warehouse", "/w"]
    hive = resolve_catalog_options(options=["metastore=hive", "uri=thrift://hms:9083", "warehouse=s3://b/wh",
                                            "lock.enabled=true"])
    assert hive.cli_args() == ["--catalog-option", "lock.enabled=true", "--catalog-option", "metastore=hive",
                               "--catalog-option", "uri=thrift://hms:9083", "--catalog-option", "warehouse=s3://b/wh"]
    _file(tmp_path, '[catalogs.pg]\nmetastore = "jdbc"\nuri = "jdbc:postgresql://db/cat"\nwarehouse = "/wh"\n'
                    '"jdbc.password" = "${PG_PW}"\n', monkeypatch)
    monkeypatch.setenv("PG_PW", "s3cret")
    assert resolve_catalog_options("pg").cli_args() == ["--catalog", "pg"]
    flagged = resolve_catalog_options("pg", options=["lock.enabled=true", "jdbc.user=me", "jdbc.password=x"])
    assert flagged.cli_args() == ["--catalog", "pg", "--catalog-option", "jdbc.password=******",
                                  "--catalog-option", "jdbc.user=me", "--catalog-option", "lock.enabled=true"]
