"""Command-line conventions (issue 14): global options before the command, ``-q/--quiet``,
NO_COLOR and colour only on a terminal, a closed stdout as a normal end, one-line usage errors.

Colour depends on a terminal, so those tests run the CLI under a pseudo-terminal (``pty``);
the pipe tests run a real ``paimon-cli ... | head -1``.
"""

from __future__ import annotations

import json
import os
import pty
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app

SGR = re.compile(rb"\x1b\[[0-9;]*m")  # colour / bold / dim codes
CLEAN_ENV = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_") and k not in ("NO_COLOR",
                                                                                              "FORCE_COLOR")}


def cli(*args: str, env: dict[str, str] | None = None) -> Any:
    return CliRunner().invoke(app, list(args), env=env)


def ok(*args: str) -> Any:
    res = cli(*args)
    assert res.exit_code == 0, res.output
    return res


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> str:
    """``db.t`` (primary key, 300 rows in two commits) and ``db.a`` (append)."""
    root = tmp_path_factory.mktemp("conventions")
    w = str(root / "wh")
    src = root / "rows.jsonl"
    src.write_text("".join(json.dumps({"id": i, "name": f"n{i}", "dt": "2024-05-01"}) + "\n" for i in range(300)))
    ok("create", "db.t", "-w", w, "--schema", "id BIGINT NOT NULL, name STRING, dt STRING", "--primary-key", "id")
    ok("write", "db.t", str(src), "-w", w)
    ok("write", "db.t", str(src), "-w", w)
    ok("create", "db.a", "-w", w, "--schema", "id BIGINT NOT NULL, name STRING, dt STRING")
    ok("write", "db.a", str(src), "-w", w)
    return w


def paimon(*args: str, env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "paimon_cli", *args], capture_output=True, timeout=120,
                          env={**CLEAN_ENV, **(env or {})}, **kw)


def in_pty(*args: str, env: dict[str, str] | None = None) -> tuple[int, bytes]:
    """Run the CLI with stdin, stdout and stderr on a pseudo-terminal; (exit code, all output)."""
    main, sub = pty.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "paimon_cli", *args], stdin=sub, stdout=sub, stderr=sub,
                            env={**CLEAN_ENV, "COLUMNS": "200", "TERM": "xterm-256color", **(env or {})})
    os.close(sub)
    out = b""
    while True:
        try:
            chunk = os.read(main, 65536)
        except OSError:  # EIO: the child closed its side
            break
        if not chunk:
            break
        out += chunk
    os.close(main)
    return proc.wait(timeout=120), out


# -- global options before the command -------------------------------------------------------------


def test_global_options_before_the_command(wh: str) -> None:
    assert ok("-w", wh, "list").stdout.split() == ["database", "--------", "db"]
    res = ok("--warehouse", wh, "-o", "json", "inspect", "snapshots", "db.t")
    assert [s["snapshot_id"] for s in json.loads(res.stdout)][:2] == [1, 2]
    res = ok("-w", wh, "--fs-option", "skip_instance_cache=true", "-o", "jsonl", "read", "db.t", "--limit", "1")
    assert json.loads(res.stdout)["id"] == 0


def test_debug_before_the_command_shows_the_traceback(wh: str) -> None:
    res = cli("--debug", "-w", wh, "read", "db.missing")
    assert res.exit_code == 3 and "Traceback" in res.stderr
    assert res.stderr.rstrip().splitlines()[-1] == "error: table db.missing does not exist"


def test_given_on_both_sides_the_one_after_the_command_wins(wh: str, tmp_path: Path) -> None:
    res = cli("-w", str(tmp_path / "nowhere"), "-o", "csv", "list", "-w", wh, "-o", "jsonl")
    assert res.exit_code == 0 and res.stdout == '{"database":"db"}\n'
    res = cli("-w", wh, "list", "-w", str(tmp_path / "nowhere"))
    assert res.exit_code == 3 and "nowhere does not exist" in res.stderr


def test_global_option_before_the_command_beats_the_environment(wh: str, tmp_path: Path) -> None:
    env = {"PAIMON_WAREHOUSE": str(tmp_path / "nowhere"), "PAIMON_OUTPUT": "csv"}
    res = cli("-w", wh, "-o", "jsonl", "list", env=env)
    assert res.exit_code == 0 and res.stdout == '{"database":"db"}\n'


def test_output_before_a_command_without_output_is_ignored(tmp_path: Path) -> None:
    w = str(tmp_path / "wh")
    res = cli("-w", w, "-o", "json", "create", "db.x", "--schema", "id INT")
    assert res.exit_code == 0 and res.stdout == "" and "created" in res.stderr


def test_root_help_names_the_global_options_and_their_rule() -> None:
    text = ok("--help").stdout
    for opt in ("-w, --warehouse", "--fs-option", "-o, --output", "--debug", "-q, --quiet"):
        assert opt in text
    assert "before or after the command" in text and "the one after" in text


# -- --quiet --------------------------------------------------------------------------------------------


def test_every_command_takes_quiet() -> None:
    from paimon_cli.app import COMMANDS

    for name in COMMANDS:
        assert "-q, --quiet" in ok(name, "--help").stdout, name


def test_quiet_silences_notes_and_summaries_but_not_data(wh: str, tmp_path: Path) -> None:
    w = str(tmp_path / "wh")
    src = tmp_path / "in.jsonl"
    src.write_text('{"id": 1, "name": "a", "dt": "x"}\n{"id": 2, "name": "b", "dt": "x"}\n')
    for args in (["create", "db.q", "--schema", "id BIGINT NOT NULL, name STRING, dt STRING", "--primary-key", "id"],
                 ["write", "db.q", str(src)], ["write", "db.q", str(src)], ["compact", "db.q", "--full"],
                 ["tag", "create", "db.q", "t1"], ["expire", "db.q", "--retain-max", "1", "--retain-min", "1"]):
        res = cli("-q", "-w", w, *args)
        assert (res.exit_code, res.stdout, res.stderr) == (0, "", ""), args
    res = cli("write", "db.q", str(src), "-w", w, "--quiet")  # after the command too
    assert (res.exit_code, res.stdout, res.stderr) == (0, "", "")
    res = ok("-w", w, "inspect", "snapshots", "db.q", "-o", "jsonl", "-q")
    assert [json.loads(line)["snapshot_id"] for line in res.stdout.splitlines()] == [3, 4] and res.stderr == ""
    res = ok("-q", "-w", w, "read", "db.q", "-o", "csv")
    assert res.stdout == '"id","name","dt"\n1,"a","x"\n2,"b","x"\n' and res.stderr == ""
    res = ok("-q", "-w", wh, "compact", "db.t", "--full", "--plan", "-o", "jsonl")  # a preview is data
    assert json.loads(res.stdout.splitlines()[0])["bucket"] == 0 and res.stderr == ""


def test_quiet_keeps_errors(wh: str) -> None:
    res = cli("-q", "-w", wh, "read", "db.nope")
    assert res.exit_code == 3 and res.stderr == "error: table db.nope does not exist\n"


# -- NO_COLOR and colour only on a terminal ------------------------------------------------------------


def test_a_terminal_gets_styles_unless_no_color(wh: str) -> None:
    code, out = in_pty("inspect", "snapshots", "db.t", "-w", wh)
    assert code == 0 and SGR.search(out), out[:300]  # bold header on a terminal
    for value in ("1", "true"):
        code, out = in_pty("inspect", "snapshots", "db.t", "-w", wh, env={"NO_COLOR": value})
        assert code == 0 and "┏".encode() in out and not SGR.search(out), out[:300]  # still a rich table
        code, out = in_pty("read", "db.nope", "-w", wh, env={"NO_COLOR": value})
        assert code == 3 and out == b"error: table db.nope does not exist\r\n"


def test_no_color_progress_bar_has_no_styles(tmp_path: Path) -> None:
    w = str(tmp_path / "wh")
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"id": i, "dt": f"d{i % 3}"}) + "\n" for i in range(30)))
    ok("create", "db.p", "-w", w, "--schema", "id BIGINT NOT NULL, dt STRING", "--primary-key", "id,dt",
       "--partition-by", "dt", "--option", "bucket=2")
    ok("write", "db.p", str(src), "-w", w, "--write-only")
    ok("write", "db.p", str(src), "-w", w, "--write-only")
    code, out = in_pty("compact", "db.p", "--full", "-w", w, env={"NO_COLOR": "1"})
    # the result row (its brief columns on a terminal) and the bar were drawn, without style codes
    assert code == 0 and b"snapshot_id" in out and b"compacting" in out and not SGR.search(out), out[-600:]


def test_no_styles_into_a_pipe(wh: str) -> None:
    proc = paimon("inspect", "snapshots", "db.t", "-w", wh, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0 and b"\x1b" not in proc.stdout + proc.stderr


# -- a closed stdout -------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", ["table", "jsonl", "csv", "json"])
def test_read_into_head_is_a_normal_end(wh: str, fmt: str) -> None:
    cmd = shlex.join([sys.executable, "-m", "paimon_cli", "read", "db.a", "-w", wh, "-o", fmt])
    proc = subprocess.run(["bash", "-c", f"{cmd} 2>err | head -1; echo ${{PIPESTATUS[0]}}"], capture_output=True,
                          cwd=wh, env=CLEAN_ENV, timeout=120, text=True)
    lines = proc.stdout.splitlines()
    assert lines[-1] == "0" and (Path(wh) / "err").read_text() == "", proc.stdout


@pytest.mark.parametrize("args", [["inspect", "--help"], ["--help"], ["--version"], ["list"],
                                  ["inspect", "snapshots", "db.t"], ["read", "db.t"]])
def test_stdout_closed_before_anything_is_written(wh: str, args: list[str]) -> None:
    """The reader is gone before the first write: help, the final flush and rendering all end 0."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    proc = subprocess.run([sys.executable, "-m", "paimon_cli", *args, *(["-w", wh] if "-" not in args[-1] else [])],
                          stdout=write_end, stderr=subprocess.PIPE, env=CLEAN_ENV, timeout=120)
    os.close(write_end)
    assert (proc.returncode, proc.stderr) == (0, b""), args


# -- usage errors ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("args", "error", "hint"), [
    (["lst"], "error: no such command 'lst' (did you mean 'list'?)", "paimon-cli --help"),
    (["inspect", "snapshotz", "db.t"], "error: invalid value for 'KIND': 'snapshotz' (did you mean 'snapshots'?)",
     "paimon-cli inspect --help"),
    # issue 27 #9: the table before the kind (or action) is a swap, said in one line with the command meant
    (["inspect", "shop.orders", "snapshots"],
     "error: KIND comes before DB.TABLE: did you mean `paimon-cli inspect snapshots shop.orders`?",
     "paimon-cli inspect --help"),
    (["inspect", "shop.orders", "Files", "--limit", "3"],
     "error: KIND comes before DB.TABLE: did you mean `paimon-cli inspect files shop.orders`?",
     "paimon-cli inspect --help"),
    (["tag", "shop.orders", "delete", "t1"],
     "error: ACTION comes before DB.TABLE: did you mean `paimon-cli tag delete shop.orders t1`?",
     "paimon-cli tag --help"),
    (["inspect", "shop.orders", "snapshotz"], "error: invalid value for 'KIND': 'shop.orders' is not one of "
     "'snapshots', 'schemas', 'options', 'files', 'manifests', 'partitions', 'buckets', 'tags', 'branches', "
     "'consumers', 'table-indexes', 'statistics', 'aggregation-fields', 'file-indexes', 'audit-log', 'binlog', 'ro', "
     "'table', 'expiry', 'iceberg', 'all-table-options', 'catalog-options'.", "paimon-cli inspect --help"),
    (["read", "db.t", "--selct", "id"], "error: no such option: --selct (did you mean --select?)",
     "paimon-cli read --help"),
    (["read"], "error: missing argument 'DB.TABLE'.", "paimon-cli read --help"),
    (["inspect", "snapshots", "db.t", "--snapshot", "1", "--tag", "x"],
     "error: give at most one of --snapshot, --tag", "paimon-cli inspect --help"),
    (["-o", "xml", "list"], "error: invalid value for '--output' / '-o': 'xml' is not one of 'table', 'json', "
     "'jsonl', 'csv'.", "paimon-cli --help"),
    (["list", "-o", "jsonn"], "error: invalid value for '--output' / '-o' (env var: 'PAIMON_OUTPUT'): 'jsonn' "
     "(did you mean 'json'?)",
     "paimon-cli list --help"),
])
def test_usage_error_is_one_line_and_a_hint(wh: str, args: list[str], error: str, hint: str) -> None:
    res = cli(*args, "-w", wh) if args != ["read"] else cli(*args)
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr == f"{error}\nhint: {hint}\n"
