"""One renderer for every command's rows: ``table``, ``json``, ``jsonl`` and ``csv``.

stdout carries only data; notes go to stderr. Value conventions (also in README "Output
formats"), chosen so that machine formats are exact and stable:

* ``datetime`` -> ``"YYYY-MM-DD HH:MM:SS.fff"`` (millisecond precision, like Paimon's
  TIMESTAMP(3) system-table columns; naive values are shown as they are, aware values get
  their ``+HH:MM`` offset appended); ``date`` -> ``"YYYY-MM-DD"``; ``time`` -> ``"HH:MM:SS.fff"``.
* ``Decimal`` -> a JSON *string* (exact; JSON numbers are doubles for many readers).
* ``bytes`` -> lowercase hex without prefix.
* NaN / infinities -> the strings ``"NaN"``, ``"Infinity"``, ``"-Infinity"``.
* ``list`` / ``dict`` -> nested JSON in json/jsonl, compact JSON text in csv and table cells.
* ``None`` -> ``null`` (json), empty field (csv), ``null`` (table).
* ``bool`` -> ``true`` / ``false`` in every format.
"""

from __future__ import annotations

import datetime as _dt
import math
import sys
from collections.abc import Sequence
from decimal import Decimal
from enum import Enum
from typing import IO, Any, Protocol


class OutputFormat(str, Enum):
    table = "table"
    json = "json"
    jsonl = "jsonl"
    csv = "csv"


class RowsLike(Protocol):
    """What the renderer needs; ``paimon_cli.core.utils.rows.Rows`` is the concrete type."""

    columns: list[str]
    rows: list[dict[str, Any]]


# -- value conversion -----------------------------------------------------------------------


def _fmt_datetime(v: _dt.datetime) -> str:
    s = v.strftime("%Y-%m-%d %H:%M:%S") + f".{v.microsecond // 1000:03d}"
    off = v.utcoffset()
    if off is not None:
        total = int(off.total_seconds())
        sign = "+" if total >= 0 else "-"
        total = abs(total)
        s += f"{sign}{total // 3600:02d}:{total % 3600 // 60:02d}"
    return s


def to_json_value(v: Any) -> Any:
    """A value as it appears inside JSON output (see module docstring)."""
    if v is None or isinstance(v, (bool, int, str)):
        return v
    if isinstance(v, float):
        if math.isnan(v):
            return "NaN"
        if math.isinf(v):
            return "Infinity" if v > 0 else "-Infinity"
        return v
    if isinstance(v, _dt.datetime):
        return _fmt_datetime(v)
    if isinstance(v, _dt.date):
        return v.isoformat()
    if isinstance(v, _dt.time):
        return v.strftime("%H:%M:%S") + f".{v.microsecond // 1000:03d}"
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray, memoryview)):
        return bytes(v).hex()
    if isinstance(v, dict):
        return {str(k): to_json_value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set, frozenset)):
        return [to_json_value(x) for x in v]
    if isinstance(v, Enum):
        return to_json_value(v.value)
    return str(v)


def to_text(v: Any, null: str = "null") -> str:
    """A value as one table cell / csv field."""
    if v is None:
        return null
    if isinstance(v, bool):
        return "true" if v else "false"
    j = to_json_value(v)
    if isinstance(j, (dict, list)):
        import json

        return json.dumps(j, ensure_ascii=False, separators=(",", ":"))
    return str(j)


# -- renderers --------------------------------------------------------------------------------


def _records(rows: RowsLike) -> list[dict[str, Any]]:
    return [{c: to_json_value(r.get(c)) for c in rows.columns} for r in rows.rows]


def render_json(rows: RowsLike, out: IO[str]) -> None:
    import json

    out.write(json.dumps(_records(rows), ensure_ascii=False, indent=2) + "\n")


def render_jsonl(rows: RowsLike, out: IO[str]) -> None:
    import json

    for rec in _records(rows):
        out.write(json.dumps(rec, ensure_ascii=False, separators=(",", ":")) + "\n")


def render_csv(rows: RowsLike, out: IO[str]) -> None:
    import csv

    w = csv.writer(out, lineterminator="\n")
    w.writerow(rows.columns)
    for r in rows.rows:
        w.writerow([to_text(r.get(c), null="") for c in rows.columns])


def _is_numeric(values: Sequence[Any]) -> bool:
    present = [v for v in values if v is not None]
    return bool(present) and all(
        isinstance(v, (int, float, Decimal)) and not isinstance(v, bool) for v in present
    )


def render_plain(rows: RowsLike, out: IO[str]) -> None:
    """An aligned text table for pipes and files: never truncated, numbers right-aligned."""
    cols = rows.columns
    cells = [[to_text(r.get(c)).replace("\n", "\\n") for c in cols] for r in rows.rows]
    widths = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    right = [_is_numeric([r.get(c) for r in rows.rows]) for c in cols]

    def line(values: list[str]) -> str:
        parts = [v.rjust(w) if rj else v.ljust(w) for v, w, rj in zip(values, widths, right)]
        return "  ".join(parts).rstrip()

    out.write(line(list(cols)) + "\n")
    out.write("  ".join("-" * w for w in widths) + "\n")
    for row in cells:
        out.write(line(row) + "\n")


def _fit_widths(natural: list[int], available: int, floor: int = 4) -> list[int]:
    """Cap the widest columns (water-filling) so the total fits ``available`` if it can."""
    if sum(natural) <= available:
        return natural
    lo, hi = floor, max(natural)
    while lo < hi:  # largest cap whose capped total still fits
        mid = (lo + hi + 1) // 2
        if sum(min(w, mid) for w in natural) <= available:
            lo = mid
        else:
            hi = mid - 1
    return [min(w, lo) for w in natural]


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + "…"


def render_rich(rows: RowsLike, wide: bool, title: str | None = None) -> None:
    """A rich table on a terminal: long cells end in … to fit the width, unless ``wide``."""
    from rich.console import Console
    from rich.table import Table

    cols = rows.columns
    cells = [[to_text(r.get(c)) for c in cols] for r in rows.rows]
    natural = [max([len(c)] + [len(row[i]) for row in cells]) for i, c in enumerate(cols)]
    console = Console(highlight=False)
    chrome = 3 * len(cols) + 1  # borders and padding
    if wide:
        console = Console(highlight=False, width=max(console.width, sum(natural) + chrome))
        widths = natural
    else:
        widths = _fit_widths(natural, console.width - chrome)
    table = Table(title=title, header_style="bold")
    for i, c in enumerate(cols):
        numeric = _is_numeric([r.get(c) for r in rows.rows])
        table.add_column(_clip(c, widths[i]), no_wrap=True, width=widths[i], justify="right" if numeric else "left")
    for row in cells:
        table.add_row(*[_escape(_clip(v, w)) for v, w in zip(row, widths)])
    console.print(table, crop=False)


def _escape(v: str) -> Any:
    from rich.text import Text

    return Text("null", style="dim") if v == "null" else Text(v)


def note(message: str) -> None:
    """A human message: always stderr, so stdout stays pure data."""
    sys.stderr.write(message.rstrip("\n") + "\n")
    sys.stderr.flush()


def render(
    rows: RowsLike,
    fmt: OutputFormat | str = OutputFormat.table,
    wide: bool = False,
    out: IO[str] | None = None,
    title: str | None = None,
) -> None:
    """Write ``rows`` to stdout in ``fmt``. Empty results: ``[]``, header-only csv, or a note."""
    fmt = OutputFormat(fmt)
    out = out if out is not None else sys.stdout
    if fmt is OutputFormat.json:
        render_json(rows, out)
    elif fmt is OutputFormat.jsonl:
        render_jsonl(rows, out)
    elif fmt is OutputFormat.csv:
        render_csv(rows, out)
    elif not rows.rows:
        note(f"({title}: no rows)" if title else "(no rows)")
    elif out is sys.stdout and _isatty(out):
        render_rich(rows, wide, title)
    else:
        if title:
            note(f"== {title}")
        render_plain(rows, out)
    out.flush()


def _isatty(out: IO[str]) -> bool:
    try:
        return out.isatty()
    except (AttributeError, ValueError):
        return False
