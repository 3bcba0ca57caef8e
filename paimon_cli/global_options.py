"""The global options, accepted before the command as well as after it.

``paimon-cli -w /wh -o json inspect snapshots db.t`` is ``paimon-cli inspect snapshots db.t
-w /wh -o json``: the root takes ``--warehouse/-w``, ``--fs-option``, ``--output/-o``,
``--debug`` and ``--quiet/-q`` and hands what was given on the command line to the command as
if it had been typed right after the command's name (:func:`forwarded`). So the command's own
parsing, checks and environment variables apply unchanged, and the rule for an option given
on both sides is the command line's own: the one after the command wins (``--fs-option``,
which repeats, keeps both). A command without the option (``create`` has no ``--output``)
ignores it, as it ignores ``PAIMON_OUTPUT``, so a shell alias ``paimon-cli -w /wh -o json``
serves every command. The root reads no environment variable itself.
"""

from __future__ import annotations

import functools
from typing import Annotated, Any

import typer
from typer._click.core import ParameterSource

from . import terminal
from .output import OutputFormat

# parameter name -> the long option a command declares it as
GLOBAL_OPTIONS: dict[str, str] = {
    "warehouse": "--warehouse", "fs_option": "--fs-option", "catalog": "--catalog",
    "catalog_option": "--catalog-option", "output": "--output", "debug": "--debug", "quiet": "--quiet",
}

RootWarehouseOpt = Annotated[str | None, typer.Option(
    "--warehouse", "-w", metavar="PATH|URI", show_default=False,
    help="Warehouse root (env PAIMON_WAREHOUSE, default ./warehouse).")]
RootFsOpt = Annotated[list[str] | None, typer.Option(
    "--fs-option", metavar="K=V",
    help="Filesystem (fsspec) option, repeatable (also PAIMON_FS_OPTIONS).")]
RootCatalogOpt = Annotated[str | None, typer.Option(
    "--catalog", metavar="NAME", show_default=False,
    help="Catalog NAME of the catalogs file (env PAIMON_CATALOG; see README, Catalogs).")]
RootCatalogOptionOpt = Annotated[list[str] | None, typer.Option(
    "--catalog-option", metavar="K=V",
    help="Catalog option with Java's key, repeatable (also PAIMON_CATALOG_OPTIONS).")]
RootOutputOpt = Annotated[OutputFormat | None, typer.Option(
    "--output", "-o", case_sensitive=False, show_default=False,
    help="Output format (env PAIMON_OUTPUT) of the commands that print rows.")]
RootDebugOpt = Annotated[bool, typer.Option("--debug", help="Show the full traceback on errors (env PAIMON_DEBUG).")]
RootQuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", help="Nothing but errors on stderr; the data asked for still goes to stdout.")]


def forwarded(ctx: Any, command: Any) -> list[str]:
    """The root's global options given on the command line, as tokens for ``command`` (the
    ones it declares), to be put in front of the command's own arguments."""
    declared = {p.name for p in command.params}
    tokens: list[str] = []
    for name, flag in GLOBAL_OPTIONS.items():
        if name not in declared or ctx.get_parameter_source(name) is not ParameterSource.COMMANDLINE:
            continue
        value = ctx.params.get(name)
        if isinstance(value, bool):
            tokens += [flag] if value else []
        elif isinstance(value, (list, tuple)):
            tokens += [f"{flag}={v}" for v in value]
        elif value is not None:
            tokens.append(f"{flag}={getattr(value, 'value', value)}")
    return tokens


def _set_quiet(value: bool) -> bool:
    terminal.set_quiet(value)
    return value


QUIET_HELP = ("Nothing but errors on stderr (no notes, warnings, progress or summary of what a real run "
              "changed); the data asked for still goes to stdout.")
QuietOpt = Annotated[bool, typer.Option(
    "--quiet", "-q", is_eager=True, expose_value=False, callback=_set_quiet, help=QUIET_HELP)]


@functools.cache
def quiet_param() -> Any:
    """The ``-q/--quiet`` option of every command (``errors.CliCommand`` adds it), built by typer
    from :data:`QuietOpt`; eager, so it is set before anything else of the command runs."""

    def template(quiet: QuietOpt = False) -> None:  # never called: only its option is used
        """Template."""

    app = typer.Typer()
    app.command()(template)
    return typer.main.get_command(app).params[0]
