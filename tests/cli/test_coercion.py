"""paimon_cli.coercion: the pydantic-free path gives exactly typer's values and errors."""

from __future__ import annotations

from typing import Any

import pytest
import typer

from paimon_cli.app import app

coercion = pytest.importorskip("typer._coercion")  # typer >= 0.29: the layer being bypassed

SAMPLES: dict[str, list[Any]] = {
    "str": ["abc", "", "é x", "--w", "0"],
    "int": ["0", "1", "007", "12", "-3", "+4", " 5", "5 ", "1_000", "x", "", "1.5", "9" * 18, "9" * 25, 3, True],
    "bool": [True, False, "true", "1", "no", "", "x"],
    "enum": ["json", "JSON", "table", "xml", "", "snapshots", "files", "create"],
    "list": [("a", "b"), [], ("",), ("x=1", "y=2")],
}


def _params() -> list[tuple[Any, Any]]:
    root = typer.main.get_command(app)
    out = [(root, p) for p in root.params]
    for cmd in root.commands.values():  # type: ignore[attr-defined]
        out += [(cmd, p) for p in cmd.params]
    return out


def _kind(desc: Any) -> str:
    if desc.is_list:
        return "list"
    if desc.is_choice:
        return "enum"
    return getattr(desc.annotation, "__name__", "other")


def _outcome(runtime: Any, value: Any, param: Any, ctx: Any) -> tuple[str, Any]:
    try:
        return "ok", runtime.coerce(value, param=param, ctx=ctx)
    except typer.BadParameter as exc:
        return "error", exc.format_message()


def test_every_parameter_coerces_as_typer_does() -> None:
    from paimon_cli.coercion import install

    checked = 0
    for cmd, param in _params():
        desc = param.type_descriptor
        assert type(param.get_runtime_param()).__name__ == "PlainRuntimeParam", param.name
        ctx = typer.Context(cmd)
        for value in SAMPLES.get(_kind(desc), []):
            ours = _outcome(param.get_runtime_param(), value, param, ctx)
            param._runtime_param = None  # the pydantic fallback caches itself; start plain again
            install([param])
            theirs = _outcome(coercion.build_runtime_param(desc), value, param, ctx)
            assert ours == theirs, (cmd.name, param.name, value)
            assert type(ours[1]) is type(theirs[1])
            checked += 1
    assert checked > 500  # every option of every command, not a handful
