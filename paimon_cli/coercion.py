"""Parameter values coerced without pydantic where the result is plain (start-up, issue 28).

typer 0.29 coerces every parameter value that is not already a bool through a pydantic
``TypeAdapter``: the first option of any command (even one left at its ``None`` default, since
the adapter is built before the value is looked at) imports pydantic, ~0.06 s of a 0.2 s
command, and no annotation avoids it (``str``, ``int``, ``list[str]``, enums all build one; only
``bool`` flags and file annotations do not). The values this CLI's options take are plain: a
``str`` is the argument as given, an ``int`` a run of digits, an enum one of its values. Those
are returned here exactly as typer's adapter returns them; anything else (a sign, spaces, an
out-of-range number, a value no choice matches, an environment variable's text for a bool)
goes to typer's own adapter, so results and error messages are typer's.

Installed by ``errors.CliCommand``/``CliGroup`` on their parameters; a typer without this
coercion layer (before 0.29) is left alone.
"""

from __future__ import annotations

import re
from typing import Any

try:  # typer >= 0.29 (pydantic-backed coercion)
    from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
    from typer._param_types import coerce_cli_choice
except ImportError:  # pragma: no cover - older typer coerces through click, without pydantic
    RuntimeParam = None  # type: ignore[assignment,misc]

_DIGITS = re.compile(r"[0-9]{1,18}")  # within int64: pydantic reads such a string as int() does
_UNHANDLED = object()


def _plain(desc: Any, value: Any, ctx: Any) -> Any:
    """``value`` coerced the way typer's adapter would, or ``_UNHANDLED``."""
    info = desc.parameter_info
    if info.parser is not None:
        return _UNHANDLED
    ann = desc.annotation
    if ann is str:
        return value if isinstance(value, str) else _UNHANDLED
    if ann is bool:
        return value if isinstance(value, bool) else _UNHANDLED
    if ann is int:
        if info.clamp or (info.max is not None):
            return _UNHANDLED
        if isinstance(value, str) and _DIGITS.fullmatch(value):
            number = int(value)
        elif type(value) is int:
            number = value
        else:
            return _UNHANDLED
        return number if info.min is None or number >= info.min else _UNHANDLED
    choices = desc.choices
    if choices is not None and not desc.is_list:
        try:
            return coerce_cli_choice(value, choices=choices, case_sensitive=desc.case_sensitive, ctx=ctx)
        except ValueError:
            return _UNHANDLED
    if desc.is_list and isinstance(value, (list, tuple)):
        args: tuple[Any, ...] = getattr(ann, "__args__", ())
        if len(args) != 1:
            return _UNHANDLED
        item = TypeDescriptor(annotation=args[0], parameter_info=info, file_annotation=None)
        out = [_plain(item, v, ctx) for v in value]
        return _UNHANDLED if any(v is _UNHANDLED for v in out) else out
    return _UNHANDLED


if RuntimeParam is not None:

    class PlainRuntimeParam(RuntimeParam):
        """typer's coercion with a pydantic-free path for plain values (typer's own dataclass,
        not another one: generating a dataclass's methods costs start-up time)."""

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            # the parameter's own type descriptor (file annotations never get here)
            descriptor = TypeDescriptor(annotation=self.annotation, parameter_info=self.parameter_info,
                                        file_annotation=None)
            out = _plain(descriptor, value, ctx)
            if out is not _UNHANDLED:
                return out
            full = build_runtime_param(descriptor)  # imports pydantic
            param._runtime_param = full  # later values go straight to typer's adapter
            return full._coerce_value(value, param=param, ctx=ctx)


def install(params: list[Any]) -> None:
    """Give typer parameters the plain path (before typer builds its own coercion)."""
    if RuntimeParam is None:
        return
    for p in params:
        desc = getattr(p, "type_descriptor", None)
        if desc is None or getattr(p, "_runtime_param", False) is not None:
            continue
        if desc.file_annotation is not None:
            continue  # typer opens files without pydantic already
        p._runtime_param = PlainRuntimeParam(annotation=desc.annotation, parameter_info=desc.parameter_info)
