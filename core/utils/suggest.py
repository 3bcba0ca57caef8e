""""Did you mean ...?": the close match of a mistyped name among the names that exist.

One helper for every kind of name the user types: table option keys, table and database
names, columns, ``inspect`` kinds, command-line choices.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable


def close_match(word: str, candidates: Iterable[str], cutoff: float = 0.8,
                normalise: Callable[[str], str] = str.lower) -> str | None:
    """The candidate ``word`` was most likely meant to be, or None.

    In order: the same name in another case (after ``normalise``), one pair of neighbouring
    characters swapped (``bukcet``: short names fall under difflib's cutoff), then difflib's
    closest above ``cutoff``.
    """
    names = [c for c in candidates if c != word]
    key = normalise(word)
    for c in names:
        if c.lower() == key:
            return c
    for c in names:
        if _one_adjacent_swap(key, c):
            return c
    match = difflib.get_close_matches(word, names, n=1, cutoff=cutoff)
    return match[0] if match else None


def did_you_mean(word: str, candidates: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a close match, else an empty string."""
    match = close_match(word, candidates)
    return f" (did you mean {match!r}?)" if match is not None else ""


def _one_adjacent_swap(a: str, b: str) -> bool:
    """True when ``a`` is ``b`` with two neighbouring characters swapped."""
    if len(a) != len(b) or a == b:
        return False
    diff = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
    return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
