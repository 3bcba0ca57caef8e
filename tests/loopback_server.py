"""Helpers for the storage emulators the tests start on 127.0.0.1 (fake-gcs-server, Azurite).

Each emulator runs in its own process group (``start_new_session``) so stopping it stops
everything it spawned; its output goes to a temporary file shown when it fails to start.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

import pytest


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def bypass_proxy_for_loopback(mp: pytest.MonkeyPatch) -> None:
    """A proxy in the environment would swallow loopback traffic."""
    for k in ("NO_PROXY", "no_proxy"):
        current = os.environ.get(k, "")
        mp.setenv(k, ",".join(p for p in (current, "127.0.0.1", "localhost") if p))


def accepts_tcp(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class EmulatedStore:
    """Where an emulator listens and how to reach one bucket/container of it."""

    endpoint: str
    bucket: str  # the GCS bucket / Azure container the session shares
    scheme: str
    storage_options: dict[str, Any] = field(default_factory=dict)

    def fresh_warehouse(self, label: str = "wh", scheme: str | None = None) -> str:
        """A warehouse URI no other test uses (the bucket is shared for the session)."""
        return f"{scheme or self.scheme}://{self.bucket}/{label}-{uuid.uuid4().hex[:12]}"

    def fs_option_pairs(self) -> list[str]:
        """The same settings as ``--fs-option k=v`` strings, for CLI tests."""
        return [f"{k}={v}" for k, v in self.storage_options.items()]


class EmulatorProcess:
    """A started emulator: ``stop()`` ends its whole process group."""

    def __init__(self, name: str, argv: Sequence[str], ready: Callable[[], bool], timeout: float = 60.0,
                 env: dict[str, str] | None = None) -> None:
        self.name = name
        self._log: IO[bytes] = tempfile.TemporaryFile()
        self.proc = subprocess.Popen(list(argv), stdout=self._log, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL, start_new_session=True, env=env)
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None:
                out = self.output()
                self.stop()
                pytest.fail(f"{name} exited with {self.proc.returncode} before it was ready:\n{out}")
            if time.monotonic() > deadline:
                out = self.output()
                self.stop()
                pytest.fail(f"{name} was not ready after {timeout:.0f} s:\n{out}")
            time.sleep(0.02)

    def output(self) -> str:
        self._log.seek(0)
        return self._log.read().decode("utf-8", "replace")[-4000:]

    def stop(self) -> None:
        """SIGTERM to the process group, SIGKILL if it lingers."""
        try:
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, signal.SIGTERM)
                    self.proc.wait(10)
                except subprocess.TimeoutExpired:
                    os.killpg(self.proc.pid, signal.SIGKILL)
                    self.proc.wait(10)
            # children that outlived the leader (same group)
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        finally:
            self._log.close()


def download_tree(fs: Any, remote_root: str, dest: Path) -> int:
    """Copy every object under ``remote_root`` (a path as ``fs`` takes it) to ``dest``,
    keeping the relative layout; returns how many files were copied."""
    root = fs._strip_protocol(remote_root).rstrip("/")
    n = 0
    for path in fs.find(root):
        rel = path[len(root):].lstrip("/")
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(fs.cat_file(path))
        n += 1
    return n
