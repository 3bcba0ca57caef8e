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


# -- names and values, through bash itself ---------------------------------------------------------


def _bash_complete(line: str, env: dict[str, str] | None = None) -> list[str]:
    """COMPREPLY after TAB at the end of ``line``: bash sources the committed script, sets
    COMP_WORDS / COMP_CWORD as readline would, and calls the completion function."""
    words = line.split(" ")  # a trailing space completes a new, empty word
    script = (f"source {completions.default_dir() / 'paimon-cli.bash'}\n"
              f"COMP_WORDS=({' '.join(_quote(w) for w in words)})\n"
              f"COMP_CWORD={len(words) - 1}\n"
              "_paimon_cli_completion paimon-cli\n"
              'printf "%s\\n" "${COMPREPLY[@]}"\n')
    bin_dir = str(Path(sys.executable).parent)
    full_env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    full_env.update(env or {}, PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}")
    proc = subprocess.run(["bash", "--norc", "--noprofile", "-c", script], capture_output=True, text=True,
                          env=full_env, timeout=60)
    assert proc.stderr == "", proc.stderr  # never fails loudly
    return [w for w in proc.stdout.splitlines() if w]


def _quote(word: str) -> str:
    return "'" + word.replace("'", "'\\''") + "'"


def test_bash_completes_table_names(demo_template: Path) -> None:
    wh = str(demo_template)
    assert _bash_complete(f"paimon-cli read -w {wh} ") == ["demo.events", "demo.orders"]
    assert _bash_complete(f"paimon-cli expire -w {wh} demo.o") == ["demo.orders"]
    assert _bash_complete("paimon-cli inspect snapshots demo.e", {"PAIMON_WAREHOUSE": wh}) == ["demo.events"]


def test_bash_completes_branch_and_tag_names(demo_template: Path) -> None:
    env = {"PAIMON_WAREHOUSE": str(demo_template)}
    assert _bash_complete("paimon-cli read demo.orders --branch ", env) == ["b1"]
    assert _bash_complete("paimon-cli rollback demo.orders --tag ", env) == ["t1"]
    assert _bash_complete("paimon-cli tag delete demo.orders t", env) == ["t1"]
    assert _bash_complete("paimon-cli branch delete demo.orders ", env) == ["b1"]
    assert _bash_complete("paimon-cli read demo.orders --branch b1 --tag ", env) == ["t1"]


def test_bash_completes_enumerated_values() -> None:
    assert _bash_complete("paimon-cli compact db.t --engine ") == ["auto", "local", "spark"]
    assert _bash_complete("paimon-cli compact db.t --order-strategy ") == ["order", "zorder", "hilbert"]
    assert _bash_complete("paimon-cli write db.t in.x --format js") == ["json", "jsonl"]
    assert _bash_complete("paimon-cli read db.t -o cs") == ["csv"]
    assert _bash_complete("paimon-cli read db.t --blob-as ") == ["bytes", "size", "descriptor"]
    assert _bash_complete("paimon-cli expire-partitions db.t --strategy ") == ["values-time", "update-time"]
    assert "snapshots" in _bash_complete("paimon-cli inspect sn")
    assert _bash_complete("paimon-cli tag d") == ["delete"]


def test_bash_completion_of_a_missing_warehouse_is_empty_and_quiet(tmp_path: Path) -> None:
    assert _bash_complete(f"paimon-cli read -w {tmp_path / 'nope'} ") == []
    assert _bash_complete("paimon-cli rollback nodb.t --tag ", {"PAIMON_WAREHOUSE": str(tmp_path)}) == []


def test_bash_offers_no_existing_name_to_create(demo_template: Path) -> None:
    env = {"PAIMON_WAREHOUSE": str(demo_template)}
    assert _bash_complete("paimon-cli tag create demo.orders ", env) == []
    assert _bash_complete("paimon-cli branch create demo.orders ", env) == []
    assert _bash_complete("paimon-cli tag rename demo.orders ", env) == ["t1"]


def test_bash_completes_catalog_names_and_tables_through_a_named_catalog(demo_template: Path, tmp_path: Path) -> None:
    cats = tmp_path / "catalogs.toml"
    cats.write_text(f'[catalogs.demo]\nwarehouse = "{demo_template}"\n[catalogs.prod]\nmetastore = "filesystem"\n'
                    f'warehouse = "{tmp_path / "none"}"\n')
    env = {"PAIMON_CLI_CATALOGS": str(cats)}
    assert _bash_complete("paimon-cli list --catalog ", env) == ["demo", "prod"]
    assert _bash_complete("paimon-cli list --catalog d", env) == ["demo"]
    assert _bash_complete("paimon-cli read --catalog demo demo.o", env) == ["demo.orders"]
    assert _bash_complete(f"paimon-cli read --catalog-option warehouse={demo_template} demo.e", env) == ["demo.events"]


def test_bash_completes_consumer_ids(demo_wh: str) -> None:
    from typer.testing import CliRunner

    from paimon_cli.app import app

    res = CliRunner().invoke(app, ["consumer", "reset", "demo.orders", "job-1", "--snapshot", "1", "-w", demo_wh])
    assert res.exit_code == 0, res.output
    env = {"PAIMON_WAREHOUSE": demo_wh}
    assert _bash_complete("paimon-cli consumer reset demo.orders j", env) == ["job-1"]
    assert _bash_complete("paimon-cli consumer c") == ["clear"]
