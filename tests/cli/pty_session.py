"""Run paimon-cli on a pseudo-terminal (stdin, stdout and stderr all the tty, as in a shell; or
stdout only: :func:`on_tty`)."""

from __future__ import annotations

import fcntl
import os
import re
import select
import shlex
import struct
import subprocess
import sys
import tempfile
import termios
import time
from dataclasses import dataclass
from pathlib import Path

PROMPT = "? [y/N] "
ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class TtyRun:
    rc: int
    output: str  # everything the terminal showed (stdout and stderr interleaved, \r\n line ends)
    stdout: str = ""  # with ``stdout_pipe``: what went to stdout (then not a terminal)

    @property
    def prompted(self) -> bool:
        return PROMPT in self.output


def _env(columns: int = 120) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    env.update(COLUMNS=str(columns), LINES="40", TERM="xterm")
    return env


def _read(fd: int, until: str | None, deadline: float) -> str:
    out = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        out += chunk
        if until is not None and until.encode() in out:
            break
    return out.decode("utf-8", "replace")


def run_on_tty(args: list[str], answer: str | None = None, timeout: float = 60.0, stdout_pipe: bool = False,
               columns: int = 120) -> TtyRun:
    """Run ``paimon-cli ARGS`` on a new pseudo-terminal ``columns`` wide; type ``answer`` at the
    first prompt. ``stdout_pipe``: stdout goes to a pipe instead (``paimon-cli ... > file`` typed
    in a shell)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    out_file = tempfile.TemporaryFile() if stdout_pipe else None
    proc = subprocess.Popen([sys.executable, "-m", "paimon_cli", *args], stdin=slave,
                            stdout=out_file if out_file is not None else slave, stderr=slave,
                            env=_env(columns), close_fds=True, start_new_session=True)
    os.close(slave)
    deadline = time.monotonic() + timeout
    try:
        text = ""
        if answer is not None:
            text = _read(master, PROMPT, deadline)
            if PROMPT in text:
                os.write(master, (answer + "\n").encode())
        text += _read(master, None, deadline)
        rc = proc.wait(timeout=max(deadline - time.monotonic(), 1))
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    stdout = ""
    if out_file is not None:
        out_file.seek(0)
        stdout = out_file.read().decode("utf-8", "replace")
        out_file.close()
    return TtyRun(rc, text, stdout)


def run_piped(args: list[str], stdin: str = "") -> subprocess.CompletedProcess[str]:
    """The same without a terminal (as cron runs it): stdin a pipe, output captured."""
    return subprocess.run([sys.executable, "-m", "paimon_cli", *args], input=stdin, capture_output=True,
                          text=True, env=_env(), timeout=120)


def tree_bytes(root: str | Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes: "nothing changed" means this is equal."""
    base = Path(root)
    return {str(p.relative_to(base)): p.read_bytes() for p in sorted(base.rglob("*")) if p.is_file()}


@dataclass
class ShellRun:
    rc: int | None  # paimon-cli's exit code as the shell saw it (None: it had not ended)
    seconds: float  # from Ctrl-C to the command's end
    next_line: str | None  # what the shell read after the command (None: nothing came)
    output: str


def ctrl_c_at_prompt(args: list[str], typed: str = "next-line", timeout: float = 60.0, patience: float = 10.0
                     ) -> ShellRun:
    """Type Ctrl-C at the first prompt of ``paimon-cli ARGS`` run by a shell on a terminal
    that is its controlling terminal (so Ctrl-C is a SIGINT to the foreground process group,
    as in a login shell), then type ``typed`` and Enter: a prompt that answers Ctrl-C at once
    leaves that line to the shell (``read`` gets it), one that blocks swallows it."""
    cmd = shlex.join([sys.executable, "-m", "paimon_cli", *args])
    script = f'{cmd}; echo "rc=$?"; IFS= read -r line; echo "next=[$line]"'
    master, slave = os.openpty()
    proc = subprocess.Popen(["bash", "-c", script], stdin=slave, stdout=slave, stderr=slave, env=_env(),
                            close_fds=True, start_new_session=True,
                            preexec_fn=lambda: fcntl.ioctl(0, termios.TIOCSCTTY, 0))
    os.close(slave)
    deadline = time.monotonic() + timeout
    try:
        text = _read(master, PROMPT, deadline)
        if PROMPT not in text:
            return ShellRun(None, 0.0, None, text)
        os.write(master, b"\x03")
        start = time.monotonic()
        after = _read(master, "rc=", start + patience)
        seconds = time.monotonic() - start
        while "rc=" in after and not re.search(r"rc=\d+\r?\n", after) and time.monotonic() < start + patience:
            after += _read(master, "\n", start + patience)
        os.write(master, (typed + "\n").encode())
        after += _read(master, "]", time.monotonic() + patience)
        text += after
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
        proc.wait()
    rc = re.search(r"rc=(\d+)", after)
    line = re.search(r"next=\[(.*)\]", after)
    return ShellRun(int(rc.group(1)) if rc else None, seconds, line.group(1) if line else None, text)


def on_tty(*args: str, cols: int = 80, env: dict[str, str] | None = None) -> tuple[str, str, int]:
    """Run paimon-cli with stdout on a pseudo-terminal ``cols`` wide; (stdout, stderr, exit)."""
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    base = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_") and k not in ("COLUMNS", "LINES")}
    proc = subprocess.Popen([sys.executable, "-m", "paimon_cli", *args], stdout=slave, stderr=subprocess.PIPE,
                            stdin=subprocess.DEVNULL, env={**base, "TERM": "xterm", **(env or {})})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # the child closed the terminal
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    assert proc.stderr is not None
    err = proc.stderr.read().decode()
    code = proc.wait(timeout=120)
    return ANSI.sub("", b"".join(chunks).decode().replace("\r\n", "\n")), err, code
