"""``hive.metastore.client.socket.timeout``, the key Java users set (a catalog option, which Java
sets on its HiveConf over hive-site.xml, or hive-site.xml of ``hive-conf-dir``), in HiveConf's
time grammar, default 600 s: a metastore that accepts and never answers fails within it, one
line, exit 8."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paimon_cli.core.catalog.hive import HiveCatalog
from paimon_cli.core.catalog.hive_metastore import DEFAULT_SOCKET_TIMEOUT_S, socket_timeout_s
from paimon_cli.core.catalog.options import CatalogOptions
from paimon_cli.core.errors import InvalidInput

from .hive_metastore_server import HiveMetastoreServer
from .hms_helpers import fresh_db
from .soak import run_cli


@pytest.fixture
def silent_metastore() -> Iterator[str]:
    """A server that accepts connections and reads requests, and never answers."""
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def serve() -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            held.append(conn)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield f"thrift://127.0.0.1:{srv.getsockname()[1]}"
    finally:
        stop.set()
        t.join()
        for c in held:
            c.close()
        srv.close()


@pytest.mark.parametrize(("text", "seconds"), [
    ("600s", 600.0), ("10min", 600.0), ("2m", 120.0), ("1500ms", 1.5), ("5", 5.0), ("1d", 86400.0),
    (" 30 sec ", 30.0), ("2 hours", 7200.0), ("7l", 7.0), ("2500000us", 2.5), ("1seconds", 1.0),
    ("0", None), ("0s", None), (None, DEFAULT_SOCKET_TIMEOUT_S),
])
def test_hiveconf_time_grammar(text: str | None, seconds: float | None) -> None:
    assert socket_timeout_s(text) == seconds


@pytest.mark.parametrize("text", ["abc", "-1s", "1.5s", "10x", "", "s", "25d", "--1"])
def test_bad_timeouts_are_invalid_input(text: str) -> None:
    with pytest.raises(InvalidInput, match="hive.metastore.client.socket.timeout"):
        socket_timeout_s(text)


def test_default_is_javas_and_the_option_beats_hive_site(tmp_path: Path) -> None:
    (tmp_path / "hive-site.xml").write_text(
        "<configuration><property><name>hive.metastore.client.socket.timeout</name><value>42</value>"
        "</property></configuration>")
    base = {"metastore": "hive", "uri": "thrift://127.0.0.1:1", "warehouse": tmp_path.as_uri()}
    c = HiveCatalog(CatalogOptions(base))._new_client()
    assert (c.timeout_s, c.connect_timeout_s) == (600.0, 10.0)
    c = HiveCatalog(CatalogOptions({**base, "hive-conf-dir": str(tmp_path)}))._new_client()
    assert (c.timeout_s, c.connect_timeout_s) == (42.0, 42.0)
    c = HiveCatalog(CatalogOptions({**base, "hive-conf-dir": str(tmp_path),
                                    "hive.metastore.client.socket.timeout": "3min"}))._new_client()
    assert (c.timeout_s, c.connect_timeout_s) == (180.0, 180.0)


def test_a_silent_metastore_fails_within_the_timeout(silent_metastore: str, tmp_path: Path) -> None:
    args = ["list", "--catalog-option", "metastore=hive", "--catalog-option", f"uri={silent_metastore}",
            "--catalog-option", f"warehouse={tmp_path.as_uri()}"]
    start = time.monotonic()
    res = run_cli([*args, "--catalog-option", "hive.metastore.client.socket.timeout=1s"], timeout_s=60)
    took = time.monotonic() - start
    assert res.returncode == 8, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert "no answer within 1 s (hive.metastore.client.socket.timeout)" in lines[0], lines[0]
    assert took < 15, took  # a read is tried twice: 2 x 1 s plus start-up

    res = run_cli([*args, "--catalog-option", "hive.metastore.client.socket.timeout=soon"], timeout_s=60)
    assert res.returncode == 4 and "hive.metastore.client.socket.timeout='soon'" in res.stderr, res.stderr


def _iceberg_table(args: list[str], name: str, uri: str, *more: str) -> None:
    res = run_cli(["create", name, "--schema", "id INT", "--option", "bucket=-1",
                   "--option", "metadata.iceberg.storage=hive-catalog", "--option", f"metadata.iceberg.uri={uri}",
                   *more, *args], timeout_s=60)
    assert res.returncode == 0, res.stderr


def _write_fails_within(args: list[str], name: str, tmp_path: Path, seconds: str) -> None:
    data = tmp_path / "in.csv"
    data.write_text("id\n1\n")
    start = time.monotonic()
    res = run_cli(["write", name, str(data), *args], timeout_s=60)
    took = time.monotonic() - start
    assert res.returncode == 8, res.stderr
    lines = res.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    assert f"no answer within {seconds} s (hive.metastore.client.socket.timeout)" in lines[0], lines[0]
    assert took < 20, took


def test_the_iceberg_registration_takes_the_tables_timeout(silent_metastore: str, tmp_path: Path) -> None:
    """``metadata.iceberg.storage=hive-catalog`` opens its own metastore client: Java sets the
    table's options on its HiveConf, so a table option bounds it, over hive-site.xml of
    ``metadata.iceberg.hive-conf-dir``; a silent metastore is exit 8 naming the key."""
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "hive-site.xml").write_text(
        "<configuration><property><name>hive.metastore.client.socket.timeout</name><value>2s</value>"
        "</property></configuration>")
    wh = ["-w", str(tmp_path / "wh")]
    _iceberg_table(wh, "db.t", silent_metastore, "--option", "hive.metastore.client.socket.timeout=1s",
                   "--option", f"metadata.iceberg.hive-conf-dir={conf}")
    _write_fails_within(wh, "db.t", tmp_path, "1")
    _iceberg_table(wh, "db.u", silent_metastore, "--option", f"metadata.iceberg.hive-conf-dir={conf}")
    _write_fails_within(wh, "db.u", tmp_path, "2")

    _iceberg_table(wh, "db.bad", silent_metastore, "--option", "hive.metastore.client.socket.timeout=soon")
    res = run_cli(["write", "db.bad", str(tmp_path / "in.csv"), *wh], timeout_s=60)
    assert res.returncode == 4 and "hive.metastore.client.socket.timeout='soon'" in res.stderr, res.stderr
    table_dir = tmp_path / "wh" / "db.db" / "bad"
    assert sorted(p.name for p in table_dir.iterdir()) == ["schema"]  # nothing written


def test_the_iceberg_registration_takes_the_catalogs_timeout(
    hive_metastore: HiveMetastoreServer, silent_metastore: str, tmp_path: Path
) -> None:
    """A Hive catalog's table registering its Iceberg metadata in another (silent) metastore:
    the catalog's timeout bounds that client too (a table without the key)."""
    cat = ["--catalog-option", "metastore=hive", "--catalog-option", f"uri={hive_metastore.uri}",
           "--catalog-option", f"warehouse={(tmp_path / 'wh').as_uri()}",
           "--catalog-option", "hive.metastore.client.socket.timeout=1s"]
    db = fresh_db("ice_timeout")
    _iceberg_table(cat, f"{db}.t", silent_metastore)
    _write_fails_within(cat, f"{db}.t", tmp_path, "1")
