"""Usage errors (exit 2) as two lines: ``error: ...`` and ``hint: paimon-cli CMD --help``.

click prints a usage block, a "Try ..." line and ``Error: ...``; the README promises one
``error:`` line like every other failure. Close matches are offered for unknown commands and
options (click and typer find them) and for a value outside a fixed set (``inspect KIND``,
``--output``), found with the one helper ``core.utils.suggest.close_match``.
"""

from __future__ import annotations

import difflib
import re
from typing import Any

_CHOICE = re.compile(r"(?P<value>'[^']*') is not one of (?P<choices>'.*')\.?$")
_DID_YOU_MEAN = re.compile(r"\.? Did you mean (?P<what>.+?)\?$")


def _lower_first(text: str) -> str:
    """``No such option`` -> ``no such option``; a leading name (``KIND ...``) keeps its case."""
    if len(text) > 1 and text[0].isupper() and not text[1].isupper():
        return text[0].lower() + text[1:]
    return text


def _choice_hint(message: str) -> str:
    """``'snapshotz' is not one of 'snapshots', ...`` -> ``'snapshotz' (did you mean 'snapshots'?)``."""
    m = _CHOICE.search(message)
    if m is None:
        return message
    from .core.utils.suggest import close_match

    value = m.group("value")[1:-1]
    match = close_match(value, re.findall(r"'([^']*)'", m.group("choices")))
    if match is None:
        return message
    return message[: m.start()] + f"{m.group('value')} (did you mean {match!r}?)"


def message(exc: Any) -> str:
    """The text after ``error: `` for a click UsageError."""
    from typer._click.exceptions import BadParameter, NoSuchOption

    if isinstance(exc, BadParameter) and exc.param is None and exc.param_hint is None:
        text = exc.message  # raised by a command body: its own sentence
    elif isinstance(exc, NoSuchOption):
        text = exc.message
        if exc.possibilities:  # click's candidates, best first (``--selct``: not ``--help``)
            best = difflib.get_close_matches(exc.option_name, exc.possibilities, n=1, cutoff=0)
            text += f" (did you mean {best[0]}?)"
    else:
        text = exc.format_message()
    text = " ".join(str(text).replace("Value error, ", "").split())
    text = _DID_YOU_MEAN.sub(lambda m: f" (did you mean {m.group('what')}?)", text)
    return _lower_first(_choice_hint(text))


def hint(exc: Any, prog_name: str) -> str:
    """``paimon-cli inspect --help``: the help of the command the error belongs to."""
    ctx = getattr(exc, "ctx", None)
    path = ctx.command_path if ctx is not None else prog_name
    return f"{path} --help"
