"""paimon-cli invoked in-process against a warehouse, for interop tests that check what the
command prints (CliRunner; the environment variables a user may set are cleared per test by
the ``clean_cli_env`` fixture of the test module)."""

from __future__ import annotations

import json
from typing import Any

from typer.testing import CliRunner

from paimon_cli.app import app

CLI_ENV = ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG")


def cli(wh: str, *args: str, code: int = 0) -> Any:
    """``paimon-cli ARGS -w WH``; asserts the exit code."""
    res = CliRunner().invoke(app, [*args, "-w", wh])
    assert res.exit_code == code, f"{args}: exit {res.exit_code}\n{res.stdout}\n{res.stderr}"
    return res


def cli_json(wh: str, *args: str) -> Any:
    """What ``paimon-cli ARGS -w WH -o json`` prints, parsed."""
    return json.loads(cli(wh, *args, "-o", "json").stdout)


def one_line_error(res: Any, code: int) -> str:
    """The one ``error: ...`` line a refused command printed, after checking it exited with
    ``code`` and showed no traceback."""
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out
    assert res.exit_code == code, out
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return str(lines[0])
