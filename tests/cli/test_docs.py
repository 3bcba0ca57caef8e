"""Every registered command has help, an Example, a README section; README and --help agree."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from paimon_cli.app import COMMANDS, app, command_function
from paimon_cli.errors import EXIT_CODES

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
CLICK_GROUP = typer.main.get_command(app)
REGISTERED = sorted(CLICK_GROUP.commands)  # type: ignore[attr-defined]


def test_registry_matches_app() -> None:
    assert REGISTERED == sorted(COMMANDS)


@pytest.mark.parametrize("name", REGISTERED)
def test_command_has_help_and_example(name: str) -> None:
    doc = command_function(name).__doc__ or ""
    assert doc.strip(), f"{name} has no docstring"
    assert "Example:" in doc and f"paimon-cli {name}" in doc.split("Example:", 1)[1]
    result = CliRunner().invoke(app, [name, "--help"])
    assert result.exit_code == 0
    assert "Example:" in result.stdout


@pytest.mark.parametrize("name", REGISTERED)
def test_every_option_has_help(name: str) -> None:
    cmd = CLICK_GROUP.commands[name]  # type: ignore[attr-defined]
    for param in cmd.params:
        if param.name != "help":
            assert getattr(param, "help", None), f"{name}: {param.name} has no help text"


@pytest.mark.parametrize("name", REGISTERED)
def test_command_documented_in_readme(name: str) -> None:
    commands = README.split("## Commands", 1)
    assert len(commands) == 2, "README lacks a '## Commands' section"
    assert f"### `paimon-cli {name}`" in commands[1]


def test_global_options_on_every_command() -> None:
    for name in REGISTERED:
        opts = {o for p in CLICK_GROUP.commands[name].params for o in getattr(p, "opts", [])}  # type: ignore[attr-defined]
        assert {"--warehouse", "-w", "--fs-option", "--debug"} <= opts, name


def test_readme_exit_codes_match_the_table() -> None:
    section = README.split("## Exit codes", 1)[1]
    documented = {int(m) for m in re.findall(r"^\| (\d+) \|", section, flags=re.M)}
    assert documented == {code for code, _ in EXIT_CODES}


def _features_section() -> tuple[str, str]:
    section = README.split("## Paimon versions and features", 1)
    assert len(section) == 2, "README lacks a 'Paimon versions and features' section"
    body = section[1].split("\n## ", 1)[0]
    table, sep, refusals = body.partition("### Refusals by name")
    assert sep, "README lacks the 'Refusals by name' list"
    return table, refusals


def test_every_gate_refusal_is_in_the_readme() -> None:
    from paimon_cli.core.data.types import NEWER_TYPE_ROOTS
    from paimon_cli.core.table.features import ALL_FEATURES

    table, refusals = _features_section()
    rows = [line for line in refusals.splitlines() if line.startswith("| ") and "| 1 |" in line]
    for feature in ALL_FEATURES:
        assert any(f"`{feature.name}`" in r for r in rows), f"no refusal row names `{feature.name}`"
        assert feature.since in table, f"no feature row says Paimon {feature.since}"
    for root in NEWER_TYPE_ROOTS:
        assert any(f"`{root}`" in r for r in rows), f"no refusal row names the type {root}"


def test_readme_output_formats_section() -> None:
    section = README.split("## Output formats", 1)[1]
    for fmt in ("table", "json", "jsonl", "csv"):
        assert f"`{fmt}`" in section


def test_changelog_has_unreleased() -> None:
    text = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    assert "## [Unreleased]" in text
    for name in REGISTERED:
        assert f"`{name}" in text, f"CHANGELOG does not mention {name}"


def _readme_commands() -> list[str]:
    """The commands of the README's first code block (its install/try/test recipe), comments cut."""
    block = README.split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].strip() for line in block.splitlines() if line.strip()]


def test_ci_runs_exactly_the_readme_commands() -> None:
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()]
    commands = _readme_commands()
    assert "python -m pip install --upgrade pip" in commands  # the venv's pip 23 cannot resolve [test]
    positions = []
    for cmd in commands:
        hits = [i for i, line in enumerate(ci) if line == cmd or line.startswith(cmd + " -")]
        assert hits, f".ci/run does not run the README's {cmd!r}"
        positions.append(hits[0])
    assert positions == sorted(positions), ".ci/run runs the README's commands in another order"
