"""pytest plugin: an Azure Blob emulator (Azurite) on loopback for the ``azure`` tests.

Azurite is Microsoft's Storage emulator, a Node.js package: the fixture installs it into
``$PAIMON_CLI_TEST_CACHE/azurite`` with npm on first use and starts ``azurite-blob`` in memory
on 127.0.0.1 and a free port, in its own process group. Node.js and npm must be on the PATH;
without them the tests fail (they are not skipped). Azurite answers an existing blob under
``If-None-Match: *`` with 409 BlobAlreadyExists -- how snapshots are published on Azure.
"""

from __future__ import annotations

import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.interop.java_harness import default_cache_dir
from tests.loopback_server import EmulatedStore, EmulatorProcess, accepts_tcp, bypass_proxy_for_loopback, free_port

AZURITE_VERSION = "3.35.0"
CONTAINER = "warehouse"
# Azurite's well-known development account (public, documented by Microsoft)
ACCOUNT = "devstoreaccount1"
ACCOUNT_KEY = "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=="
_AZURE_ENV_UNSET = ("AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_ACCOUNT_NAME", "AZURE_STORAGE_ACCOUNT_KEY",
                    "AZURE_STORAGE_SAS_TOKEN", "AZURE_STORAGE_CLIENT_ID", "AZURE_STORAGE_CLIENT_SECRET",
                    "AZURE_STORAGE_TENANT_ID", "AZURE_STORAGE_ANON")


class AzureServer(EmulatedStore):
    """Azurite's blob endpoint and the session's container."""

    def new_fs(self) -> Any:
        """An uncached adlfs instance (fsspec caches instances by arguments)."""
        import adlfs

        return adlfs.AzureBlobFileSystem(skip_instance_cache=True, **self.storage_options)


def azurite_blob_binary() -> Path:
    """``azurite-blob`` from the test cache, installed with npm when missing."""
    prefix = default_cache_dir() / "azurite"
    binary = prefix / "node_modules" / ".bin" / "azurite-blob"
    if binary.exists():
        return binary
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"the Azure tests need Node.js and npm to install and run Azurite; not on the PATH: "
                    f"{', '.join(missing)}")
    prefix.mkdir(parents=True, exist_ok=True)
    res = subprocess.run(["npm", "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                          f"azurite@{AZURITE_VERSION}"], capture_output=True, text=True, timeout=600)
    if res.returncode != 0 or not binary.exists():
        pytest.fail(f"npm install azurite@{AZURITE_VERSION} failed ({res.returncode}):\n{res.stderr[-3000:]}")
    return binary


@pytest.fixture(scope="session")
def azure_server() -> Iterator[AzureServer]:
    """Azurite (blob service, in memory) on 127.0.0.1, container ``warehouse`` created;
    stopped at session end."""
    binary = azurite_blob_binary()
    if shutil.which("node") is None:
        pytest.fail("the Azure tests need Node.js on the PATH to run Azurite")
    mp = pytest.MonkeyPatch()
    for k in _AZURE_ENV_UNSET:
        mp.delenv(k, raising=False)
    bypass_proxy_for_loopback(mp)
    port = free_port()
    # --skipApiVersionCheck: the azure-storage-blob SDK sends a newer x-ms-version than Azurite knows
    argv = [str(binary), "--blobHost", "127.0.0.1", "--blobPort", str(port), "--inMemoryPersistence",
            "--skipApiVersionCheck", "--disableTelemetry", "--silent"]
    server = EmulatorProcess("azurite-blob", argv, lambda: accepts_tcp(port))
    endpoint = f"http://127.0.0.1:{port}/{ACCOUNT}"
    conn = (f"DefaultEndpointsProtocol=http;AccountName={ACCOUNT};AccountKey={ACCOUNT_KEY};"
            f"BlobEndpoint={endpoint};")
    try:
        info = AzureServer(endpoint, CONTAINER, "az", {"connection_string": conn})
        info.new_fs().mkdir(CONTAINER)
        yield info
    finally:
        server.stop()
        mp.undo()
