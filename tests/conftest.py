"""Shared test set-up: fixture plugins for the moto S3 server, the pypaimon peer and a Spark
standalone cluster, and a fault in the publish of snapshot files."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

pytest_plugins = [
    "tests.s3_fixtures",
    "tests.gcs_fixtures",
    "tests.azure_fixtures",
    "tests.interop.pypaimon_fixtures",
    "tests.spark_cluster",
    "tests.catalogs.postgres_server",
    "tests.catalogs.mysql_server",
    "tests.catalogs.jdbc_backends",
]


@pytest.fixture
def snapshot_publish_fault(monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[str]]:
    """``arm(lands=, error=, failing_reads=0)``: every FileIO's write-if-absent of a snapshot
    file raises ``error`` (after the file landed when ``lands``), and then the first
    ``failing_reads`` read-backs of it fail too (-1: all). Returns the log of what was hit."""
    from paimon_cli.core.io.fileio import FileIO

    def arm(*, lands: bool, error: BaseException, failing_reads: int = 0) -> list[str]:
        real_put, real_read = FileIO._write_if_absent, FileIO.read_bytes
        calls: list[str] = []
        left = [failing_reads]
        sent: set[str] = set()

        def put(self: FileIO, path: str, data: bytes) -> bool:
            if "/snapshot/snapshot-" not in path:
                return real_put(self, path, data)
            calls.append("put")
            sent.add(path)
            if lands:
                real_put(self, path, data)
            raise error

        def read(self: FileIO, path: str) -> Any:
            if path in sent and left[0] != 0:
                calls.append("read failed")
                left[0] -= 1
                raise OSError("connection reset")
            return real_read(self, path)

        monkeypatch.setattr(FileIO, "_write_if_absent", put)
        monkeypatch.setattr(FileIO, "read_bytes", read)
        return calls

    return arm


@pytest.fixture(scope="module")
def spark(request: pytest.FixtureRequest) -> Iterator[Any]:
    """A ``local[2]`` Spark session per test module (the Spark engines' tests share it)."""
    from paimon_cli.core.compact.spark import spark_session

    session, created = spark_session("local[2]", None, f"paimon-cli tests {request.module.__name__}")
    assert created
    try:
        yield session
    finally:
        session.stop()
