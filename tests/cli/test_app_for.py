"""app_for: a run builds only the command it runs, with the whole app's output and exit code."""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from paimon_cli.app import COMMANDS, ROOT_FLAGS, ROOT_VALUE_OPTIONS, app, app_for, command_named


def test_root_option_sets_match_the_root_group() -> None:
    root = typer.main.get_command(app)
    value_opts, flags = set(), set()
    for p in root.params:
        if p.name == "version":
            continue  # eager: --version is left to the whole app
        (flags if p.is_flag else value_opts).update(p.opts)
    assert (value_opts, flags) == (set(ROOT_VALUE_OPTIONS), set(ROOT_FLAGS))


@pytest.mark.parametrize(("argv", "name"), [
    (["list"], "list"),
    (["-w", "list", "read", "db.t"], "read"),  # an option's value named like a command
    (["-o", "json", "-q", "--debug", "--fs-option", "a=b", "inspect", "snapshots", "x.y"], "inspect"),
    (["--output=json", "--catalog", "c", "--catalog-option", "k=v", "list"], "list"),
    (["list", "--help"], "list"),
    ([], None),
    (["--help"], None),
    (["-h", "list"], None),
    (["--version"], None),
    (["-V", "list"], None),
    (["-qo", "json", "list"], None),  # combined short flags: click's parse
    (["lst"], None),
    (["--", "list"], None),
    (["-w"], None),
])
def test_command_named(argv: list[str], name: str | None) -> None:
    assert command_named(argv) == name
    built = app_for(argv)
    if name is None:
        assert built is app
    else:
        assert list(typer.main.get_command(built).commands) == [name]  # type: ignore[attr-defined]
        assert name in COMMANDS


@pytest.mark.parametrize("args", [
    ["list"],
    ["-o", "json", "list", "demo"],
    ["inspect", "snapshots", "demo.orders", "-o", "jsonl"],
    ["--output=csv", "read", "demo.orders", "--limit", "2"],
    ["read", "demo.orders", "--limit", "x"],
    ["read", "demo.nope"],
    ["inspect", "snapshotz", "demo.orders"],
    ["list", "--help"],
    ["tag", "--help"],
    ["-q", "tag", "list", "demo.orders"],
    ["expire", "demo.orders", "--retain-max", "0", "--dry-run"],
])
def test_one_command_app_prints_what_the_whole_app_prints(demo_wh: str, runner: CliRunner,
                                                          args: list[str]) -> None:
    argv = ["-w", demo_wh, *args]
    whole = runner.invoke(app, argv, prog_name="paimon-cli")
    one = runner.invoke(app_for(argv), argv, prog_name="paimon-cli")
    assert app_for(argv) is not app
    assert (one.exit_code, one.stdout, one.stderr) == (whole.exit_code, whole.stdout, whole.stderr)


def test_command_table_names_every_command_module() -> None:
    """COMMANDS names each command's module and function as text (a run imports one module);
    every module under paimon_cli.commands is a command in it, and each entry resolves to a
    function defined in that module, so the table cannot drift from the modules."""
    import pkgutil

    import paimon_cli.commands as package
    from paimon_cli.app import command_function

    modules = {m.name for m in pkgutil.iter_modules(package.__path__)}
    assert modules == {spec.split(":")[0] for spec in COMMANDS.values()}
    for name, spec in COMMANDS.items():
        fn = command_function(name)
        assert callable(fn)
        assert fn.__module__ == f"paimon_cli.commands.{spec.split(':')[0]}", name
    group = typer.main.get_command(app)
    assert list(group.commands) == list(COMMANDS)  # type: ignore[attr-defined]
    assert [(c.name, c.callback) for c in app.registered_commands] == [
        (n, command_function(n)) for n in COMMANDS]
