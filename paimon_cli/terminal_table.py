"""Rows on a terminal: the columns that matter, values for a human, never a cut number.

Only ``-o table`` on a terminal comes here (``output.render`` decides; also the preview of a
confirmation prompt, on stderr); pipes, files and the machine formats keep exact values. On a
terminal:

* the columns are the result's ``brief`` ones (what matters about a snapshot, a file, a
  compaction) unless ``--columns`` picks others or ``--wide`` asks for all;
* byte counts read ``21.3 MiB``, durations ``7d``, instants ``3h ago`` (older than 30 days:
  the date);
* paths under the table directory (the result's ``root``) read relative to it;
* no cell is ever cut: when the rows do not fit the terminal's width as a table, a column
  of prose the result names in ``wrap`` (a message) wraps between words; when that is not
  enough, each record prints as ``column: value`` lines (a vertical layout, like ``psql``'s
  ``\\x``); ``--wide`` keeps the table and lets lines run past the width;
* at most :data:`TERMINAL_ROWS` rows unless ``--limit`` says otherwise, with a note on
  stderr saying how to see the rest.
"""

from __future__ import annotations

import datetime as _dt
import difflib
import sys
from collections.abc import Collection, Sequence
from decimal import Decimal
from typing import IO, Any

from . import terminal

TERMINAL_ROWS = 100  # rows a terminal shows unless --limit asks otherwise
_SEPARATOR = 3  # the table's chrome per column: a border and two padding spaces
_PROSE_WIDTH = 24  # the narrowest a wrapped column of prose gets before records take over
_INDENT = 2  # a record's value moved to a line of its own starts here


def chosen_columns(columns: Sequence[str], brief: Sequence[str] | None, wanted: str | None, wide: bool,
                   terminal: bool) -> list[str]:
    """The columns shown: ``--columns`` (checked, in any format), else on a terminal without
    ``--wide`` the brief set, else all."""
    if wanted is not None:
        return pick_columns(columns, wanted)
    if terminal and not wide and brief:
        return [c for c in brief if c in columns]
    return list(columns)


def pick_columns(columns: Sequence[str], wanted: str) -> list[str]:
    """``--columns a,b,c``: names of the result, in the order given; unknown names are a usage
    error naming the closest column."""
    import typer

    names = [n.strip() for n in wanted.split(",") if n.strip()]
    if not names:
        raise typer.BadParameter("no columns given", param_hint="'--columns'")
    for n in names:
        if n not in columns:
            close = difflib.get_close_matches(n, list(columns), n=1, cutoff=0.6)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise typer.BadParameter(f"unknown column {n!r}; {hint}columns: {', '.join(columns)}",
                                     param_hint="'--columns'")
    return names


def more_rows_note(shown: int, total: int | None) -> str:
    """What stderr says when a terminal shows only the first rows (``total`` None: unknown)."""
    of = f" of {total}" if total is not None else ""
    return (f"(showing the first {shown}{of} rows; --limit N shows more, -o csv/jsonl or a pipe "
            "prints them all)")


# -- human values ------------------------------------------------------------------------------


def is_bytes_column(name: str) -> bool:
    """Byte counts, by the names every result uses for them (``bytes``, ``*_bytes``,
    ``bytes_*``, ``file_size``, ``file_size_in_bytes``)."""
    return name in ("bytes", "file_size") or name.endswith("_bytes") or name.startswith("bytes_") \
        or name == "file_size_in_bytes"


def human_bytes(n: int) -> str:
    if abs(n) < 1024:
        return f"{n} B"
    value = float(n)
    for unit in ("KiB", "MiB", "GiB", "TiB", "PiB"):
        value /= 1024
        if abs(value) < 1024 or unit == "PiB":
            break
    return f"{value:.1f} {unit}"


def human_duration(d: _dt.timedelta) -> str:
    """``7d``, ``3h``, ``1d 2h``, ``90s``, ``250ms``: the two largest units that are not zero."""
    ms = int(d.total_seconds() * 1000)
    sign, ms = ("-", -ms) if ms < 0 else ("", ms)
    if ms < 1000:
        return f"{sign}{ms}ms"
    parts = []
    for unit, size in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
        if ms >= size:
            parts.append(f"{ms // size}{unit}")
            ms %= size
    return sign + " ".join(parts[:2])


def human_time(t: _dt.datetime, now: _dt.datetime | None = None) -> str:
    """An instant relative to now (``3h ago``); older than 30 days (or in the future by more),
    its date. Naive values are the machine's local wall clock."""
    if now is None:
        now = _dt.datetime.now(t.tzinfo) if t.tzinfo is not None else _dt.datetime.now()
    delta = now - t
    if abs(delta) > _dt.timedelta(days=30):
        return t.date().isoformat()
    if abs(delta) < _dt.timedelta(seconds=1):
        return "now"
    text = human_duration(abs(delta)).split(" ")[0]
    return f"{text} ago" if delta > _dt.timedelta(0) else f"in {text}"


def is_path_column(name: str) -> bool:
    """Columns holding a file's or table's path (``path``, ``file_path``, ``location``)."""
    return name in ("path", "location") or name.endswith("_path")


def human_text(column: str, value: Any, to_text: Any, root: str | None = None) -> str:
    """A cell for a person: bytes, durations and instants readable, paths under ``root``
    relative to it, everything else as ``to_text`` renders it (numbers and ids whole)."""
    if root is not None and isinstance(value, str) and is_path_column(column):
        from .core.io.paths import table_relative

        return table_relative(value, root)
    if isinstance(value, int) and not isinstance(value, bool) and is_bytes_column(column):
        return human_bytes(value)
    typed = getattr(value, "typed", value)  # core.utils.rows.JavaText: Java's text, typed value
    if isinstance(typed, _dt.timedelta):
        return human_duration(typed)
    if isinstance(value, _dt.datetime):
        return human_time(value)
    return str(to_text(value)).replace("\n", "\\n")


def is_numeric(values: Sequence[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(
        isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in present
    )


# -- layouts ---------------------------------------------------------------------------------


def render_terminal(columns: list[str], rows: list[dict[str, Any]], wide: bool, title: str | None,
                    to_text: Any, *, root: str | None = None, wrap: Sequence[str] | None = None,
                    numeric: Collection[str] = (), stderr: bool = False) -> None:
    """The rows as a table when they fit the terminal (or ``wide``; or when the ``wrap``
    columns can wrap to make them fit), else record by record. ``numeric``: columns aligned
    right whatever their values (a decimal read as text); ``stderr``: the terminal is stderr."""
    cells = [[human_text(c, r.get(c), to_text, root) for c in columns] for r in rows]
    natural = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(columns)]
    needed = sum(natural) + _SEPARATOR * len(columns) + 1
    console = terminal.console(stderr=stderr, highlight=False)  # NO_COLOR and off-terminal: no style codes
    prose = {i for i, c in enumerate(columns) if c in (wrap or ())} if not wide and needed > console.width else set()
    if prose:
        fixed = needed - sum(natural[i] for i in prose)
        if fixed + _PROSE_WIDTH * len(prose) > console.width:
            prose = set()
    if not wide and needed > console.width and not prose:
        render_vertical(columns, cells, sys.stderr if stderr else sys.stdout, title, console.width)
        return
    if needed > console.width and not prose:
        console = terminal.console(stderr=stderr, highlight=False, width=needed)
    _rich_table(console, columns, rows, cells, natural, title, prose, numeric)


def _rich_table(console: Any, columns: list[str], rows: list[dict[str, Any]], cells: list[list[str]],
                widths: list[int], title: str | None, prose: set[int], numeric: Collection[str]) -> None:
    from rich.table import Table
    from rich.text import Text

    table = Table(title=title, header_style="bold")
    for i, c in enumerate(columns):
        right = c in numeric or is_numeric([r.get(c) for r in rows]) or is_bytes_column(c)
        if i in prose:  # rich narrows it to the width left, breaking lines between words
            table.add_column(c, no_wrap=False, overflow="fold", justify="left")
        else:
            table.add_column(c, no_wrap=True, min_width=widths[i], justify="right" if right else "left")
    for row in cells:
        table.add_row(*[Text("null", style="dim") if v == "null" else Text(v) for v in row])
    console.print(table, crop=False)


def render_vertical(columns: list[str], cells: list[list[str]], out: IO[str], title: str | None,
                    width: int | None = None) -> None:
    """One ``column : value`` line per field, a numbered rule before each record. A value
    that would carry its line past ``width`` (the terminal's) but fits on a line of its own
    goes there, indented, so the terminal does not break it (a path stays whole to copy)."""
    name_width = max(len(c) for c in columns)
    if title:
        out.write(f"== {title}\n")
    for n, row in enumerate(cells, 1):
        out.write(f"-[ record {n} ]" + "-" * max(name_width - 8, 4) + "\n")
        for c, v in zip(columns, row, strict=True):
            line = f"{c.ljust(name_width)} : {v}"
            if width is not None and len(line) > width and len(v) + _INDENT <= width:
                line = f"{c.ljust(name_width)} :\n{' ' * _INDENT}{v}"
            out.write(line + "\n")
    out.flush()
