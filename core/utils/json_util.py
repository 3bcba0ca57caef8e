"""JSON exactly as Java Paimon writes it (Jackson's default pretty printer).

Snapshot, schema, tag and consumer files are compared byte-wise by some tools and diffed
by people, so we reproduce Jackson's layout: 2-space indent, ``"k" : v``, inline arrays
``[ a, b ]``, ``[ ]`` / ``{ }`` for empties, LF line ends and no trailing newline.
"""

from __future__ import annotations

import decimal
import json
from json.encoder import encode_basestring
from typing import Any

from ..errors import CorruptMetadata


def dumps_jackson(value: Any) -> str:
    return _write(value, 0)


_quote = encode_basestring  # json.dumps(s, ensure_ascii=False) of a str, without the per-call set-up


def _write(v: Any, level: int) -> str:
    if isinstance(v, str):
        return _quote(v)
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return int.__repr__(v)
    if v is None:
        return "null"
    if isinstance(v, dict):
        if not v:
            return "{ }"
        pad = "  " * (level + 1)
        items = [f"{pad}{_quote(str(k))} : {_write(x, level + 1)}" for k, x in v.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    if isinstance(v, (list, tuple)):
        if not v:
            return "[ ]"
        return "[ " + ", ".join(_write(x, level) for x in v) + " ]"
    if isinstance(v, decimal.Decimal):
        return format(v, "f")  # a bare number, digits as given (Jackson's BigDecimal)
    if isinstance(v, float):
        return repr(v) if v == v and v not in (float("inf"), float("-inf")) else json.dumps(v)
    raise TypeError(f"cannot write {type(v).__name__} as JSON")


def loads_metadata(text: str, path: str) -> Any:
    """Parse a metadata JSON file, turning any parse error into CorruptMetadata naming the file."""
    if not text.strip():
        raise CorruptMetadata(path, "file is empty")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CorruptMetadata(path, f"invalid JSON at line {e.lineno} column {e.colno}: {e.msg}") from e
    except RecursionError as e:  # Python's parser recurses once per level
        raise CorruptMetadata(path, "JSON nested too deeply to be Paimon metadata") from e
