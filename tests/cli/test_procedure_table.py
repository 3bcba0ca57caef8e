"""README's "Java procedures" table covers every procedure of Java Paimon's Flink and Spark
procedure lists, with no blank cell, and names only commands, actions and options that exist."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import typer

from paimon_cli.app import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# the upstream documentation the project reads its facts from (HELPER-GUIDE: paimon-docs)
DOCS = Path(os.environ.get("PAIMON_DOCS_DIR", "/work/shared/reference/paimon-docs/docs/docs"))
ENGINES = ("Flink", "Spark")
CLICK_GROUP: Any = typer.main.get_command(app)
NOT_A_COMMAND = ("not applicable", "not supported yet")


def upstream_procedures(engine: str) -> list[str]:
    """The procedure names of ``<engine>/procedures.md``: the first cell of each table row."""
    path = DOCS / engine.lower() / "procedures.md"
    assert path.is_file(), f"{path} not found: point PAIMON_DOCS_DIR at paimon-docs/docs/docs"
    text = path.read_text(encoding="utf-8")
    body = text[text.index("<tbody"):]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    names = [m.group(1) for m in (re.match(r"\s*<td>\s*([a-z0-9_]+)\s*</td>", r) for r in rows) if m]
    assert len(names) == len(rows), "a procedure row whose first cell is not a plain name"
    return names


def readme_table() -> dict[str, list[str]]:
    """procedure -> [listed by, command, notes] of the README's table."""
    section = README.split("\n## Java procedures\n", 1)
    assert len(section) == 2, "README lacks a '## Java procedures' section"
    body = section[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in body.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 4, line
        name = cells[0].strip("`")
        assert name not in rows, f"{name} listed twice"
        rows[name] = cells[1:]
    return rows


def test_every_upstream_procedure_has_a_row_with_its_engines() -> None:
    table = readme_table()
    listed: dict[str, list[str]] = {}
    for engine in ENGINES:
        for name in upstream_procedures(engine):
            listed.setdefault(name, []).append(engine)
    assert len(listed) > 50
    assert sorted(table) == sorted(listed)
    for name, engines in listed.items():
        assert table[name][0] == ", ".join(engines), name


def test_no_blank_cell() -> None:
    for name, (engines, command, notes) in readme_table().items():
        assert engines and command and notes, name
        assert command in NOT_A_COMMAND or command.startswith("`paimon-cli "), (name, command)


def _options(cmd: Any) -> set[str]:
    return {o for p in cmd.params for o in getattr(p, "opts", []) if o.startswith("--")}


def _actions(cmd: Any) -> set[str] | None:
    """The values of a command's ACTION argument (tag, branch, consumer), else None."""
    for p in cmd.params:
        if p.name == "action" and p.param_type_name == "argument":
            return {a.strip() for a in (p.help or "").split("|")}
    return None


def test_every_named_command_action_and_option_exists() -> None:
    checked = 0
    for name, (_, command, notes) in readme_table().items():
        if command in NOT_A_COMMAND:
            continue
        words = command.strip("`").split()
        assert words[0] == "paimon-cli"
        cmd = CLICK_GROUP.commands.get(words[1])
        assert cmd is not None, f"{name}: no command {words[1]!r}"
        actions = _actions(cmd)
        if actions is not None:
            assert words[2] in actions, f"{name}: {words[1]} has no action {words[2]!r}"
        options = _options(cmd)
        named = [w for w in words if w.startswith("--")]
        named += re.findall(r"`(--[a-z][a-z0-9-]*)`", notes)
        for opt in named:
            assert opt in options, f"{name}: {words[1]} has no option {opt}"
        checked += 1
    assert checked > 30
