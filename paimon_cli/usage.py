"""Usage errors (exit 2) as two lines: ``error: ...`` and ``hint: paimon-cli CMD --help``.

click prints a usage block, a "Try ..." line and ``Error: ...``; the README promises one
``error:`` line like every other failure. Close matches are offered for unknown commands and
options (click and typer find them) and for a value outside a fixed set (``inspect KIND``,
``--output``), found with the one helper ``core.utils.suggest.close_match``. A table given where
a fixed set's value goes, with that value next (``inspect shop.orders snapshots``), is named
as the swap it is, with the command line meant (:func:`swapped_arguments`).
"""

from __future__ import annotations

import difflib
import re
from typing import Any

_CHOICE = re.compile(r"(?P<value>'[^']*') is not one of (?P<choices>'.*')\.?$")
_DID_YOU_MEAN = re.compile(r"\.? Did you mean (?P<what>.+?)\?$")
_TABLE_SHAPED = re.compile(r"[^.\s]+\.[^.\s]+")  # DB.TABLE


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


def swapped_arguments(command: Any, ctx: Any, args: list[str], exc: Any) -> str | None:
    """The error for ``command DB.TABLE KIND ...`` (a table where the first argument's fixed
    set of values goes, and one of those values second): ``KIND comes before DB.TABLE: did you
    mean `paimon-cli inspect snapshots shop.orders`?``. None for any other error."""
    import shlex

    from typer._click.exceptions import UsageError

    positional: list[Any] = [p for p in command.params if getattr(p, "param_type_name", None) == "argument"]
    m = _CHOICE.search(str(getattr(exc, "message", "")))
    if len(positional) < 2 or m is None or getattr(exc, "param", None) is not positional[0]:
        return None
    try:  # the raw values, before any conversion
        values, _, _ = command.make_parser(ctx).parse_args(args=list(args))
    except UsageError:
        return None
    first, second = (values.get(p.name) for p in positional[:2])
    choices = re.findall(r"'([^']*)'", m.group("choices"))
    if not (isinstance(first, str) and _TABLE_SHAPED.fullmatch(first) and isinstance(second, str)):
        return None
    chosen = next((c for c in choices if c.casefold() == second.casefold()), None)
    if chosen is None:
        return None
    rest: list[str] = []
    for p in positional[2:]:  # the arguments after the two, as given (NAME of `tag delete`)
        value = values.get(p.name)
        rest += [] if value is None else list(value) if isinstance(value, (list, tuple)) else [str(value)]
    meant = shlex.join([chosen, first, *rest])
    names = [p.metavar or p.name.upper() for p in positional[:2]]
    return f"{names[0]} comes before {names[1]}: did you mean `{ctx.command_path} {meant}`?"


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
