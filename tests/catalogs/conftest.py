"""Session fixtures for the metastore catalog tests.

``hive_metastore``: one real Hive Metastore 2.3.9 per session (see hive_metastore_server.py).
``hive_metastore_s3``: another, which takes ``s3://warehouse/...`` locations (the moto bucket).
``java_hive``: a JVM with Java Paimon 0.9 plus the Hive jars its HiveCatalog needs, separate
from the interop tests' shared JVM so their classpath stays as it was.
Every test that uses either gets the ``hive`` marker (and ``java`` for ``java_hive``).
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.interop.java_harness import JavaPaimon, catalog_spec, hive_catalog_jars

from .hive_metastore_server import HiveMetastoreServer


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        names = set(getattr(item, "fixturenames", ()))
        if names & {"hive_metastore", "hive_metastore_s3", "java_hive"}:
            item.add_marker(pytest.mark.hive)
        if "java_hive" in names:
            item.add_marker(pytest.mark.java)


@pytest.fixture(scope="session")
def hive_metastore(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveMetastoreServer]:
    """A running metastore; tests may stop()/start()/pause()/resume() it but must leave it running."""
    server = HiveMetastoreServer(tmp_path_factory.mktemp("hms"))
    try:
        server.start()
    except RuntimeError as err:
        pytest.fail(str(err))
    try:
        yield server
    finally:
        server.stop()


# Hadoop's ViewFileSystemOverloadScheme (hadoop-client-api 3.3.4 in pyspark's jars) as the
# metastore's s3:// and s3a:// file system: every path of the bucket maps to a local directory,
# so the metastore's own mkdirs/exists on a table location succeed; the data itself lives in
# the moto server (tests/s3_fixtures.py), which paimon-cli's FileIO reads and writes.
VIEWFS_OVERLOAD = "org.apache.hadoop.fs.viewfs.ViewFileSystemOverloadScheme"


@pytest.fixture(scope="session")
def hive_metastore_s3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HiveMetastoreServer]:
    """A second metastore that accepts locations ``s3://warehouse/...`` (the moto bucket of
    tests/s3_fixtures.py): its file system calls on them land in ``<base>/s3-mount``."""
    from tests.s3_fixtures import BUCKET

    base = tmp_path_factory.mktemp("hms-s3")
    mount = base / "s3-mount"
    mount.mkdir()
    conf = {"fs.s3.impl": VIEWFS_OVERLOAD, "fs.s3a.impl": VIEWFS_OVERLOAD, "fs.s3.impl.disable.cache": "true",
            "fs.s3a.impl.disable.cache": "true", f"fs.viewfs.mounttable.{BUCKET}.linkFallback": mount.as_uri(),
            "fs.viewfs.overload.scheme.target.file.impl": "org.apache.hadoop.fs.LocalFileSystem"}
    server = HiveMetastoreServer(base, extra_conf=conf)
    try:
        server.start()
    except RuntimeError as err:
        pytest.fail(str(err))
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def running_metastore(hive_metastore: HiveMetastoreServer) -> Iterator[HiveMetastoreServer]:
    """The session metastore, brought back up (and unfrozen) after a test that stops it."""
    yield hive_metastore
    if hive_metastore.running:
        hive_metastore.resume()
    else:
        hive_metastore.start()


@pytest.fixture(scope="session")
def java_hive(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JavaPaimon]:
    """Java Paimon 0.9 with HiveCatalog on its classpath; log in ``<basetemp>/java-hive/jvm.log``."""
    if shutil.which("java") is None or shutil.which("javac") is None:
        pytest.fail("java/javac not on PATH: the Java Paimon 0.9 catalog tests need a JDK 17")
    base = tmp_path_factory.mktemp("java-hive")
    jp = JavaPaimon.start(log_path=base / "jvm.log", temp_dir=base / "io-tmp", extra_classpath=hive_catalog_jars())
    try:
        yield jp
    finally:
        jp.close()


def hive_spec(server: HiveMetastoreServer, warehouse: Path, **options: str) -> str:
    """Java catalog options for metastore=hive on ``server`` with ``warehouse`` (plus ``options``).

    Java's catalog cache is off (``cache-enabled=false``): the tests change tables behind its back.
    """
    return catalog_spec(metastore="hive", uri=server.uri, warehouse=warehouse.as_uri(),
                        **{"cache-enabled": "false", **options})
