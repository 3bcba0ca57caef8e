"""Start-up stays light: --help/--version load no pyarrow, fastavro, pyspark, fsspec or rich."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

HEAVY = ("pyarrow", "fastavro", "pyspark", "fsspec", "rich", "pandas", "numpy")
from paimon_cli.app import COMMANDS as REGISTERED

COMMANDS = list(REGISTERED)  # every registered command, so a new one is checked too


def _imported_modules(*args: str) -> set[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "paimon_cli", *args],
        capture_output=True, text=True, env=env, timeout=60,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    mods = set()
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line:
            mods.add(line.rsplit("|", 1)[1].strip())
    assert mods, "no -X importtime output"
    return mods


@pytest.mark.parametrize("args", [["--help"], ["--version"], *[[c, "--help"] for c in COMMANDS]])
def test_help_and_version_import_nothing_heavy(args: list[str]) -> None:
    mods = _imported_modules(*args)
    heavy = sorted(m for m in mods if m.split(".")[0] in HEAVY)
    assert heavy == [], f"`paimon-cli {' '.join(args)}` imported {heavy}"
