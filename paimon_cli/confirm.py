"""Confirmation of destructive commands: on a terminal, show what will go and ask first.

One call per command, before its real run::

    confirm(yes, f"expire {table.name}", lambda: table.expire(..., dry_run=True).rows())

The question is asked only when stdin and stderr are both terminals and ``--yes`` was not
given; a cron job, a pipe or a script (stdin not a terminal) proceeds as before, without a
prompt. The preview is the command's own dry run (the same rows ``--dry-run`` prints, so
the same paths), shown on stderr as a terminal shows a table (``terminal_table``: fit to the
width, records when a row cannot fit, byte counts for a person) and summarised when long.
Anything but ``y``/``yes`` (also end of input) declines: :class:`Declined`, exit 7, nothing
changed. Ctrl-C at the prompt stops the command at once (exit 130, nothing changed), whatever
it loaded before asking. The library (``paimon_cli.core``) never prompts.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Annotated

import typer

from .core.errors import PaimonError
from .output import RowsLike, note, to_text
from .terminal_table import chosen_columns, render_terminal

SHOWN_ROWS = 20  # a longer plan is cut to its first rows plus a count (--dry-run lists all)

YesOpt = Annotated[
    bool,
    typer.Option("--yes", "-y", help="Do not ask for confirmation on a terminal (scripts; without a terminal "
                                      "nothing is asked anyway)."),
]
VerboseOpt = Annotated[
    bool, typer.Option("--verbose", "-v", help="List every file the run deleted, as --dry-run lists them.")
]


class Declined(PaimonError):
    """The operator answered no at the confirmation prompt; nothing was changed."""

    exit_code = 7


def interactive() -> bool:
    """Whether a person can answer: stdin and stderr (where the question goes) are terminals."""
    try:
        return sys.stdin.isatty() and sys.stderr.isatty()
    except (AttributeError, ValueError):  # closed or replaced streams
        return False


def confirm(yes: bool, action: str, preview: Callable[[], RowsLike]) -> None:
    """Ask before ``action`` on a terminal (unless ``yes``); raise :class:`Declined` on no.

    ``preview`` runs the command's dry run and returns its rows; it is called only when the
    question is asked, and an empty preview (nothing would change) asks nothing.
    """
    if yes or not interactive():
        return
    rows = preview()
    if not rows.rows:
        return
    show(rows)
    answer = _ask(f"{action}? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        if not answer:
            sys.stderr.write("\n")
        raise Declined(f"{action}: declined at the prompt; nothing was changed")


def _ask(question: str) -> str:
    """The line typed after ``question`` ('' at end of input); Ctrl-C ends the line on the
    terminal and propagates (exit 130)."""
    from .core.utils import interrupt

    interrupt.interruptible()  # a library loaded by the preview may have made the read restartable
    sys.stderr.write(question)
    sys.stderr.flush()
    try:
        _wait_for_input()
        return sys.stdin.readline()
    except KeyboardInterrupt:
        sys.stderr.write("\n")
        raise


def _wait_for_input() -> None:
    """Return once a line can be read, polling so a signal is handled within a fifth of a second.

    Why: the kernel hands Ctrl-C's SIGINT to any thread of the process. When the preview has
    started native thread pools (Arrow, polars) and one of them receives it, the main thread's
    blocking read is not interrupted: Python runs the handler only when that read returns, at
    Enter. Between polls the main thread runs its pending handlers itself."""
    import select

    if os.name != "posix":  # select() takes only sockets there
        return
    try:
        fd = sys.stdin.fileno()
    except (AttributeError, OSError, ValueError):  # not a real file (embedding, tests): read directly
        return
    while not select.select([fd], [], [], 0.2)[0]:
        pass


def show(rows: RowsLike) -> None:
    """The plan on stderr (a terminal): at most :data:`SHOWN_ROWS` rows, then how many more and
    the total."""
    columns = chosen_columns(rows.columns, getattr(rows, "brief", None), None, False, True)
    render_terminal(columns, rows.rows[:SHOWN_ROWS], False, None, to_text, root=getattr(rows, "root", None),
                    wrap=getattr(rows, "wrap", None), stderr=True)
    more = len(rows.rows) - SHOWN_ROWS
    total = _total_bytes(rows)
    summary = f"{len(rows.rows)} row(s)" + ("" if total is None else f", {total} bytes")
    if more > 0:
        summary = f"... and {more} more (--dry-run lists every one); {summary} in all"
    note(summary)


def _total_bytes(rows: RowsLike) -> int | None:
    for col in ("bytes", "file_size_in_bytes"):
        if col in rows.columns:
            return sum(int(r.get(col) or 0) for r in rows.rows)
    return None

