"""The one place that turns exceptions into a stderr line and a process exit code.

Core errors carry their own ``exit_code`` (see ``paimon_cli.core.errors``), so this module
only decides the presentation: one line ``error: ...`` on stderr, a traceback only with
``--debug`` (or ``PAIMON_DEBUG=1``), and exit 1 for anything we did not raise on purpose.
Usage errors (exit 2) are two lines, ``error: ...`` and ``hint: paimon-cli CMD --help``
(``paimon_cli.usage``). A closed stdout (``paimon-cli read ... | head``) is a normal end:
exit 0, no message, whether it closes while a command writes, while help is printed, or
before the final flush.
"""

from __future__ import annotations

import errno
import os
import sys
import traceback
from collections.abc import Callable, Sequence
from typing import Any

from typer._click.core import Command
from typer._click.exceptions import BadParameter, ClickException, NoArgsIsHelpError, UsageError
from typer.core import TyperCommand, TyperGroup
from typer.exceptions import Abort, Exit

from . import coercion

# (code, meaning) — rendered into the root --help epilog and checked against README by tests.
EXIT_CODES: list[tuple[int, str]] = [
    (0, "success (maintain: also tables deferred or leased by another run)"),
    (1, "error (unexpected failure, or a feature that is not supported yet)"),
    (2, "usage error (bad option or argument)"),
    (3, "not found (the warehouse, database, table, branch, snapshot, tag, ... named)"),
    (4, "invalid input (bad identifier, schema, option; corrupt or missing metadata)"),
    (5, "commit conflict (another writer won; retry)"),
    (6, "refused as unsafe (nothing was changed)"),
    (7, "declined at the confirmation prompt (nothing was changed)"),
    (8, "catalog unavailable (the metastore could not be reached or answered an error)"),
    (9, "permission denied by the catalog (REST 401/403); nothing was changed"),
    (130, "interrupted by SIGINT (Ctrl-C); the files written and not committed were removed"),
    (143, "stopped by SIGTERM; the files written and not committed were removed"),
]

_DEBUG_ENV = "PAIMON_DEBUG"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


def _name_too_long(exc: BaseException) -> bool:
    """A path the checks up front did not cover (e.g. a warehouse path) that the file system
    refuses as too long: bad input, not an unexpected failure."""
    import errno

    return isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG


def exit_code_for(exc: BaseException) -> int:
    """The exit code an exception maps to (PaimonError subclasses carry theirs)."""
    from .core.errors import InvalidInput, PaimonError

    if isinstance(exc, PaimonError):
        return int(exc.exit_code)
    if _name_too_long(exc):
        return InvalidInput.exit_code
    return 1


def format_error(exc: BaseException) -> str:
    """The single stderr line for ``exc``; unexpected errors name their type and hint --debug."""
    from .core.errors import PaimonError

    if isinstance(exc, PaimonError):
        return f"error: {_one_line(str(exc))}"
    if _name_too_long(exc):
        name = str(getattr(exc, "filename", "") or "")
        shown = name if len(name) <= 80 else name[:77] + "..."
        return f"error: {shown}: a file name in this path is longer than the file system allows (255 bytes)"
    msg = _one_line(str(exc))
    name = type(exc).__name__
    body = f"{name}: {msg}" if msg else name
    return f"error: {body} (run again with --debug for the traceback)"


# commands (and actions) that delete or replace files or metadata: metadata they cannot read is
# a refusal (exit 6, nothing was changed), not bad input -- whichever core path raised it
DESTRUCTIVE: dict[str, frozenset[str] | None] = {
    "expire": None, "remove-orphan-files": None, "rollback": None, "expire-partitions": None,
    "tag": frozenset({"delete", "expire"}), "branch": frozenset({"delete", "fast-forward"}),
    "expire-changelogs": None, "purge-files": None,
}


def as_refusal(command: str | None, action: str | None, exc: BaseException) -> BaseException:
    """``exc`` as a destructive command reports it: corrupt or missing metadata is UnsafeRefused."""
    from .core.errors import CorruptMetadata, MissingMetadata, UnsafeRefused

    if not isinstance(exc, (CorruptMetadata, MissingMetadata)) or command not in DESTRUCTIVE:
        return exc
    actions = DESTRUCTIVE[command]
    if actions is not None and action not in actions:
        return exc
    what = command if actions is None else f"{command} {action}"
    refused = UnsafeRefused(f"{exc}; refusing to run {what} (nothing was changed)")
    refused.__cause__ = exc
    return refused


def debug_enabled(params: dict[str, Any] | None = None) -> bool:
    if params and params.get("debug"):
        return True
    return os.environ.get(_DEBUG_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def report(exc: BaseException, debug: bool) -> int:
    """Print the error (and with ``debug`` the traceback) to stderr; return the exit code."""
    if debug:
        traceback.print_exception(type(exc), exc, exc.__traceback__, file=sys.stderr)
    sys.stderr.write(format_error(exc) + "\n")
    sys.stderr.flush()
    return exit_code_for(exc)


def report_interrupt(exc: BaseException) -> int:
    """One stderr line saying what the interrupted command cleaned up; 130 (SIGINT) or 143
    (SIGTERM), 128 + the signal as a shell reports it. The commands' own cleanup has run by
    now (``core.utils.interrupt.Interrupted`` is raised through it)."""
    import signal

    from .core.utils.interrupt import cleanup_summary

    signum = getattr(exc, "signum", signal.SIGINT)
    sys.stderr.write(f"interrupted ({signal.Signals(signum).name}): {cleanup_summary()}\n")
    sys.stderr.flush()
    return 128 + int(signum)


def stdout_closed() -> bool:
    """Whether stdout is a pipe or socket whose reader has gone (``paimon-cli read | head``)."""
    import select

    try:
        poller = select.poll()
        poller.register(sys.stdout.fileno(), select.POLLOUT)
        return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poller.poll(0))
    except (AttributeError, OSError, ValueError):
        return False


def silence_stdout() -> None:
    """Point stdout at /dev/null, so the flush at exit cannot fail on the closed pipe again
    (what Python's documentation of SIGPIPE recommends)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (AttributeError, OSError, ValueError):
        pass


def _close_catalogs() -> None:
    """Give the metastore connections the command opened back (a SQLite catalog file must not
    stay locked by a library caller's process); a close that fails changes no outcome."""
    import sys

    api = sys.modules.get("paimon_cli.core.api.warehouse")
    if api is not None:
        api.close_open_catalogs()


class _CoercedHelpOption(Command):
    """The help option, which click makes on first use (after ``__init__``), coerced like the
    other parameters (``paimon_cli.coercion``)."""

    def get_help_option(self, ctx: Any) -> Any:
        opt = super().get_help_option(ctx)
        if opt is not None:
            coercion.install([opt])
        return opt


class CliCommand(_CoercedHelpOption, TyperCommand):
    """A typer command whose failures go through :func:`report` instead of a traceback.

    The exit code is raised outside the ``except`` blocks, so the failure's traceback -- and
    the generators and worker pools its frames hold -- is released (and closed) before the
    process exits rather than during interpreter shutdown. Every command gets ``-q/--quiet``
    here (``global_options.QuietOpt``), so no command can miss it.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        from .global_options import quiet_param

        if all(p.name != "quiet" for p in self.params):
            self.params.append(quiet_param())
        coercion.install(self.params)

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        raw = list(args)  # the parser consumes the list
        try:
            return super().parse_args(ctx, args)
        except BadParameter as exc:
            from .usage import swapped_arguments

            swapped = swapped_arguments(self, ctx, raw, exc)
            if swapped is None:
                raise
            raise UsageError(swapped, ctx) from None

    def invoke(self, ctx: Any) -> Any:
        from .core.utils import interrupt

        try:
            try:
                result = super().invoke(ctx)
            finally:
                _close_catalogs()
        except (ClickException, Exit, Abort):
            raise
        except KeyboardInterrupt as exc:  # Ctrl-C, or SIGTERM (core.utils.interrupt)
            code = report_interrupt(exc)
        except BrokenPipeError as exc:
            if not stdout_closed():
                code = report(exc, debug_enabled(ctx.params))
            else:  # the reader of our output stopped reading: a normal end
                silence_stdout()
                code = 0
        except Exception as exc:  # noqa: BLE001 - this IS the top-level handler
            action = getattr(ctx.params.get("action"), "value", ctx.params.get("action"))
            code = report(as_refusal(ctx.info_name, action, exc), debug_enabled(ctx.params))
        else:
            signum = interrupt.requested()
            if signum is None:
                return result
            # a signal held back until the end (it arrived while the work was finishing)
            code = report_interrupt(interrupt.Interrupted(signum))
        raise Exit(code)


class StdoutClosed(Exception):  # noqa: N818 - an event, not an error
    """EPIPE outside a command's body (while help or usage is printed). Not an ``OSError``, so
    typer's own handler (which exits 1) lets it through to :class:`CliGroup`."""


def _pipe_guard(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    try:
        return fn(*args, **kwargs)
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        raise StdoutClosed() from exc


def _flush_stdout() -> None:
    """The flush interpreter shutdown would do, now, so a closed pipe cannot fail it later."""
    try:
        sys.stdout.flush()
    except OSError as exc:
        if exc.errno != errno.EPIPE:
            raise
        silence_stdout()


class CliGroup(_CoercedHelpOption, TyperGroup):
    """The root command: global options before the command (``paimon_cli.global_options``),
    usage errors as ``error:`` + ``hint:`` lines (exit 2), a closed stdout as a normal end."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        coercion.install(self.params)

    def resolve_command(self, ctx: Any, args: list[str]) -> tuple[str | None, Any, list[str]]:
        name, cmd, rest = super().resolve_command(ctx, args)
        if cmd is not None:
            from .global_options import forwarded

            rest = [*forwarded(ctx, cmd), *rest]
        return name, cmd, rest

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        return _pipe_guard(super().make_context, *args, **kwargs)

    def invoke(self, ctx: Any) -> Any:
        return _pipe_guard(super().invoke, ctx)

    def main(self, args: Sequence[str] | None = None, prog_name: str | None = None,  # type: ignore[override]
             complete_var: str | None = None, standalone_mode: bool = True, **extra: Any) -> Any:
        from . import terminal

        try:
            code = self._run(args, prog_name, complete_var, extra)
        finally:
            terminal.set_quiet(False)  # one invocation's -q must not outlive it (tests, embedding)
        _flush_stdout()
        if standalone_mode:
            sys.exit(code)
        return code

    def _run(self, args: Sequence[str] | None, prog_name: str | None, complete_var: str | None,
             extra: dict[str, Any]) -> int:
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except StdoutClosed as exc:
            if stdout_closed():
                silence_stdout()
                return 0
            return report(exc.__cause__ or exc, debug_enabled())
        except NoArgsIsHelpError as exc:
            exc.show()
            return exc.exit_code
        except UsageError as exc:
            from . import usage

            _stderr(f"error: {usage.message(exc)}\nhint: {usage.hint(exc, prog_name or self.name or '')}")
            return exc.exit_code
        except ClickException as exc:
            _stderr(f"error: {_one_line(exc.format_message())}")
            return exc.exit_code
        except Abort:
            _stderr("error: aborted")
            return 1
        return rv if isinstance(rv, int) and not isinstance(rv, bool) else 0


def _stderr(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()
