"""What the terminal gets besides data: quiet mode and colour.

* ``-q/--quiet`` (every command): nothing but errors on stderr -- no notes, warnings, summaries
  of what a real run changed, or progress bars. Data the user asked for (``read``, ``inspect``,
  ``list``, ``--plan``, ``--dry-run``) still goes to stdout.
* Colour and text styles (bold, dim) only on a terminal, and never when ``NO_COLOR`` is set to a
  non-empty value (https://no-color.org). Every rich console comes from :func:`console`, so this
  holds for tables and progress bars alike.

Nothing heavy is imported at module level (rich loads inside :func:`console`).
"""

from __future__ import annotations

import os
import sys
from typing import IO, Any

_quiet = False


def set_quiet(value: bool) -> None:
    """Set by the ``--quiet`` option of the running command (paimon_cli.errors.CliCommand)."""
    global _quiet
    _quiet = bool(value)


def quiet() -> bool:
    return _quiet


def no_color() -> bool:
    """``NO_COLOR`` set and not empty: no ANSI colour or style codes at all."""
    return bool(os.environ.get("NO_COLOR", ""))


def isatty(stream: IO[Any]) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def show_progress() -> bool:
    """A progress bar is drawn on a terminal's stderr, and not under ``--quiet``."""
    return not _quiet and isatty(sys.stderr)


def console(stderr: bool = False, **kwargs: Any) -> Any:
    """A rich ``Console`` for stdout (or stderr) that styles only a terminal and honours NO_COLOR.

    rich's own NO_COLOR support drops colours but keeps bold and dim; ``color_system=None``
    drops every style code.
    """
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    if no_color() or not isatty(stream):
        kwargs.update(color_system=None, no_color=True)
    return Console(stderr=stderr, **kwargs)
