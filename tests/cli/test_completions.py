"""The committed completion scripts match the app, and the app answers completion requests."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paimon_cli import completions


def test_committed_scripts_are_fresh() -> None:
    stale = completions.stale()
    assert stale == [], f"stale completion scripts {stale}: run `python -m paimon_cli.completions`"


def test_check_mode_detects_staleness(tmp_path: Path) -> None:
    assert completions.main([str(tmp_path), "--check"]) == 1  # nothing there yet
    assert completions.main([str(tmp_path)]) == 0
    assert completions.main([str(tmp_path), "--check"]) == 0
    (tmp_path / "paimon-cli.bash").write_text("# old\n")
    assert completions.stale(tmp_path) == ["paimon-cli.bash"]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_scripts_name_every_command(shell: str) -> None:
    text = completions.generate(shell)
    assert "paimon-cli" in text and completions.COMPLETE_VAR in text
    for name in ("create", "alter", "list", "inspect", "quickstart"):
        assert f"#   {name} " in text
    if shell == "zsh":
        assert text.startswith("#compdef paimon-cli\n")


def _complete_bash(words: str, cword: int) -> list[str]:
    env = {**os.environ, "COMP_WORDS": words, "COMP_CWORD": str(cword), completions.COMPLETE_VAR: "complete_bash"}
    code = "from paimon_cli.__main__ import main; main()"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=60)
    return proc.stdout.split()


def test_bash_completion_answers_commands_and_values() -> None:
    assert _complete_bash("paimon-cli ins", 1) == ["inspect"]
    assert "snapshots" in _complete_bash("paimon-cli inspect sn", 2)
    assert _complete_bash("paimon-cli list -o js", 3) == ["json", "jsonl"]
