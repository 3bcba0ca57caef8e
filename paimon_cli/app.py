"""The typer application: wiring only. Commands live in ``paimon_cli.commands``.

Start-up is kept small on purpose (``--help`` and ``--version`` must not load pyarrow,
fastavro, pyspark, fsspec or rich): help is plain click formatting
(``rich_markup_mode=None``), pretty exceptions are off, and every command imports core
inside its body. No ``from __future__ import annotations`` here or in the command modules:
typer evaluates string annotations again each time it reads a signature (see
``paimon_cli/commands/__init__.py``).
"""

import os
import sys
from collections.abc import Callable
from typing import Annotated, Any

import typer

from . import __version__
from .errors import EXIT_CODES, CliCommand, CliGroup
from .global_options import (
    RootCatalogOpt,
    RootCatalogOptionOpt,
    RootDebugOpt,
    RootFsOpt,
    RootOutputOpt,
    RootQuietOpt,
    RootWarehouseOpt,
)

PROG_NAME = "paimon-cli"
COMPLETE_VAR = "_PAIMON_CLI_COMPLETE"


def _epilog() -> str:
    # "\b" keeps click from re-wrapping the block.
    lines = "\n".join(f"  {code}  {meaning}" for code, meaning in EXIT_CODES)
    return f"\b\nExit codes:\n{lines}"


_APP_SETTINGS: dict[str, Any] = dict(
    name=PROG_NAME,
    cls=CliGroup,  # global options before the command, one-line usage errors, closed stdout = exit 0
    epilog=_epilog(),
    no_args_is_help=True,
    add_completion=False,  # committed scripts live in completions/ (python -m paimon_cli.completions)
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _show_version(value: bool) -> None:
    if value:
        typer.echo(f"{PROG_NAME} {__version__}")
        raise typer.Exit()


def main(
    version: Annotated[
        bool | None,
        typer.Option("--version", "-V", callback=_show_version, is_eager=True, help="Show the version and exit."),
    ] = None,
    warehouse: RootWarehouseOpt = None,
    fs_option: RootFsOpt = None,
    catalog: RootCatalogOpt = None,
    catalog_option: RootCatalogOptionOpt = None,
    output: RootOutputOpt = None,
    debug: RootDebugOpt = False,
    quiet: RootQuietOpt = False,
) -> None:
    """Maintain and inspect Apache Paimon lake tables from the shell.

    Global options go before or after the command (`paimon-cli -w /wh -o json list` is
    `paimon-cli list -w /wh -o json`): --warehouse/-w (env PAIMON_WAREHOUSE, default
    ./warehouse), --fs-option K=V, --catalog NAME and --catalog-option K=V (tables registered in a
    Hive Metastore or JDBC catalog: see README, Catalogs), --debug, --quiet/-q, and --output/-o table|json|jsonl|csv
    (env PAIMON_OUTPUT) for the commands that print rows. Given on both sides, the one after
    the command wins. --quiet prints nothing but errors on stderr; NO_COLOR=1 turns off colour.
    Commands that print data also take --wide, commands that print rows --limit N. On a
    terminal, tables show the columns that matter and the first 100 rows.
    """


# name -> "module:function" under paimon_cli.commands; the order here is the order in --help.
# A run imports only the module of the command it runs (importing all 36 cost ~0.02 s of CPU
# per start-up); tests/cli/test_app_for.py checks this table against the command modules.
COMMANDS: dict[str, str] = {
    "create": "create:create",
    "alter": "alter:alter",
    "drop": "drop:drop",
    "rename": "rename:rename",
    "write": "write:write",
    "list": "list:list_",
    "inspect": "inspect:inspect",
    "read": "read:read",
    "compact": "compact:compact",
    "rescale": "rescale:rescale",
    "remove-orphan-files": "remove_orphan_files:remove_orphan_files",
    "rewrite-file-index": "rewrite_file_index:rewrite_file_index",
    "materialize-deletion-vectors": "materialize_deletion_vectors:materialize_deletion_vectors",
    "rollback": "rollback:rollback",
    "compact-manifest": "compact_manifest:compact_manifest",
    "remove-unexisting-files": "remove_unexisting_files:remove_unexisting_files",
    "remove-unexisting-manifests": "remove_unexisting_manifests:remove_unexisting_manifests",
    "repair": "repair:repair",
    "expire": "expire:expire",
    "expire-changelogs": "expire_changelogs:expire_changelogs",
    "expire-partitions": "expire_partitions:expire_partitions",
    "drop-partition": "drop_partition:drop_partition",
    "mark-partition-done": "mark_partition_done:mark_partition_done",
    "purge-files": "purge_files:purge_files",
    "tag": "tag:tag",
    "consumer": "consumer:consumer",
    "health": "health:health",
    "branch": "branch:branch",
    "quickstart": "quickstart:quickstart",
    "maintain": "maintain:maintain",
    "migrate-table": "migrate_table:migrate_table",
    "migrate-database": "migrate_database:migrate_database",
    "migrate-file": "migrate_file:migrate_file",
    "clone": "clone:clone",
    "copy": "copy:copy",
}


def command_function(name: str) -> Callable[..., None]:
    """The function of the registered command ``name``, its module imported on first use."""
    module, function = COMMANDS[name].split(":")
    # __import__ rather than importlib.import_module: the latter bypasses `-X importtime`.
    fn: Callable[..., None] = getattr(__import__(f"{__package__}.commands.{module}", fromlist=[function]), function)
    return fn


def _new_app() -> typer.Typer:
    built = typer.Typer(**_APP_SETTINGS)
    built.callback()(main)
    return built


_whole_app: typer.Typer | None = None


def whole_app() -> typer.Typer:
    """The app with every command registered (help, completion, typos, tests): imports every
    command module, so it is built on first use."""
    global _whole_app
    if _whole_app is None:
        built = _new_app()
        for name in COMMANDS:
            built.command(name=name, cls=CliCommand)(command_function(name))
        _whole_app = built
    return _whole_app


def __getattr__(name: str) -> Any:
    # ``from paimon_cli.app import app`` keeps meaning the whole app.
    if name == "app":
        return whole_app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Root options as they may stand before the command (checked against the root's params by
# tests/cli/test_app_for.py): those that take a value, and flags.
ROOT_VALUE_OPTIONS = frozenset({"-w", "--warehouse", "--fs-option", "--catalog", "--catalog-option", "-o", "--output"})
ROOT_FLAGS = frozenset({"--debug", "-q", "--quiet"})


def command_named(argv: list[str]) -> str | None:
    """The command ``argv`` runs when that is plain to see (root options before it spelled
    out), else ``None`` (help, version, a typo, combined short flags: the whole app decides)."""
    i = 0
    while i < len(argv):
        arg = argv[i]
        if arg in ROOT_VALUE_OPTIONS:
            i += 2
        elif arg in ROOT_FLAGS or (arg.startswith("--") and arg.split("=", 1)[0] in ROOT_VALUE_OPTIONS):
            i += 1
        else:
            return arg if arg in COMMANDS else None
    return None


def app_for(argv: list[str]) -> typer.Typer:
    """An app holding only the command ``argv`` runs, or the whole app.

    typer builds the click command of every registered command on each run (evaluating every
    parameter annotation, ~0.05 s for 36 commands); a command's own run, help and errors only
    ever look at that command and the root options, so one command is built.
    """
    name = command_named(argv)
    if name is None:
        return whole_app()
    one = _new_app()
    one.command(name=name, cls=CliCommand)(command_function(name))
    return one


def run() -> None:
    """Console-script entry point (``paimon-cli`` and ``python -m paimon_cli``)."""
    from .process_start import set_native_defaults

    set_native_defaults()  # before anything loads pyarrow or numpy
    if os.environ.get(COMPLETE_VAR):
        # add_completion=False skips registering typer's shell classes; the committed
        # scripts (completions/) still call back into us with this variable set.
        from typer._completion_classes import completion_init

        from .complete_names import attach

        completion_init()
        group = typer.main.get_command(whole_app())
        attach(group)  # table, branch and tag names; fixed option values
        group(prog_name=PROG_NAME, complete_var=COMPLETE_VAR)
        return
    from .core.utils import interrupt
    from .process_end import end_process, exit_code_of

    interrupt.install()  # SIGINT / SIGTERM run the commands' cleanup, then exit 130 / 143
    try:
        app_for(sys.argv[1:])(prog_name=PROG_NAME, complete_var=COMPLETE_VAR)
    except SystemExit as stop:
        end_process(exit_code_of(stop))
    end_process(0)
