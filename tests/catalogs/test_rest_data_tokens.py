"""Data tokens of a REST catalog (``data-token.enabled``): a managed table on S3 is read and
written with the table's short-lived token alone (the client has no storage options), the token
is renewed before it expires, and a job longer than one token's life keeps working. The S3
endpoint the tokens name is a gate in front of moto that refuses every request whose access key
is not a token the catalog issued and that is still valid -- so an expired token is a failure
here as it is on a real object store."""

from __future__ import annotations

import http.client
import re
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog import load_catalog, resolve_catalog_options
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.errors import NotYetSupported
from paimon_cli.core.schema.table_schema import Schema
from tests.catalogs.rest_helpers import NEW, batch, isolate, rows_of, seed
from tests.catalogs.rest_server import RestCatalogServer

pytestmark = pytest.mark.s3

TTL_MS = 3000
_CREDENTIAL = re.compile(r"Credential=([^/,\s]+)/")
_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "trailer", "upgrade", "proxy-connection"}


class TokenGate:
    """An HTTP gate in front of the S3 server: a request signed with an access key that is not a
    live token of ``server`` is answered 403 ExpiredToken and recorded; others are forwarded."""

    def __init__(self, upstream: str) -> None:
        u = urlsplit(upstream)
        self.upstream = (u.hostname or "127.0.0.1", u.port or 80)
        self.expiry: dict[str, int] = {}  # access key -> expiresAtMillis
        self.refused: list[tuple[str, str, str]] = []  # (method, path, key)
        self.passed = 0
        gate = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _serve(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                m = _CREDENTIAL.search(self.headers.get("Authorization", ""))
                key = m.group(1) if m else ""
                expires = gate.expiry.get(key)
                if expires is None or time.time() * 1000 >= expires:
                    gate.refused.append((self.command, self.path, key))
                    data = (b"<?xml version='1.0' encoding='UTF-8'?><Error><Code>ExpiredToken</Code>"
                            b"<Message>The provided token has expired.</Message></Error>")
                    self.send_response(403)
                    self.send_header("Content-Type", "application/xml")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    if self.command != "HEAD":
                        self.wfile.write(data)
                    return
                gate.passed += 1
                conn = http.client.HTTPConnection(*gate.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP}
                conn.request(self.command, self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                head = self.command == "HEAD"  # keeps the object's length, has no body
                for k, v in resp.getheaders():
                    if k.lower() not in _HOP and (head or k.lower() != "content-length"):
                        self.send_header(k, v)
                if not head:
                    self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(data)
                conn.close()

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = _serve

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def gated(tmp_path: Path, s3_server: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[tuple[RestCatalogServer, TokenGate]]:
    """A REST server whose managed tables live on S3 behind the token gate, serving
    ``data-token.enabled`` with tokens that live TTL_MS."""
    isolate(tmp_path, monkeypatch)
    from paimon_cli.core.catalog import rest_client

    defaults = rest_client.RestClient.__init__.__kwdefaults__
    assert defaults is not None
    monkeypatch.setitem(defaults, "timeout", 30.0)  # a slow answer here is slow, not lost
    gate = TokenGate(s3_server.endpoint)
    holder: dict[str, RestCatalogServer] = {}

    def token_options(table: str) -> dict[str, str]:
        issued = holder["server"].tokens_issued
        key = f"tok-{len(issued)}"
        gate.expiry[key] = issued[-1][1]
        return {"fs.s3.accessKeyId": key, "fs.s3.accessKeySecret": "secret", "fs.s3.endpoint": gate.endpoint,
                "fs.s3.region": s3_server.region}

    server = RestCatalogServer(tmp_path / "root", data_token=True, token_ttl_ms=TTL_MS, token_options=token_options,
                               storage_options=s3_server.storage_options,
                               table_root=s3_server.fresh_warehouse("rest-managed"))
    holder["server"] = server
    with server:
        yield server, gate
    gate.close()


def test_a_long_job_outlives_its_data_token(gated: tuple[RestCatalogServer, TokenGate]) -> None:
    server, gate = gated
    wh = seed(server, options={"snapshot.num-retained.max": "1", "snapshot.num-retained.min": "1"})
    location = server.tables[("db", "t")].location
    assert location.startswith("s3://") and not wh.storage_options
    issued = len(server.tokens_issued)
    # the compaction's commit is answered after the token it started with expired; the
    # expiration after the commit then lists and deletes snapshots with a renewed one
    server.inject("commitTable", delay=TTL_MS / 1000 + 0.5)
    report = wh.table("db.t").compact(full=True)
    assert report.snapshot_id == 3 and ";" not in report.result.message, report.result.message  # no warning
    assert len(server.tokens_issued) > issued  # renewed during the job
    assert gate.refused == [] and gate.passed > 0
    sm_ids = [s["snapshot_id"] for s in wh.table("db.t").inspect("snapshots").rows]
    assert sm_ids == [3]  # the post-commit expiration ran on S3 after the first token expired
    assert rows_of(wh) == [(1, "2020-01-01", "d"), (2, NEW, "b"), (3, NEW, "c"), (4, NEW, "e")]

    # an expired token is refused by the store: the gate is real
    stale = next(k for k, v in gate.expiry.items() if v < time.time() * 1000)
    fs = __import__("s3fs").S3FileSystem(key=stale, secret="secret", skip_instance_cache=True,
                                         client_kwargs={"endpoint_url": gate.endpoint, "region_name": "us-east-1"})
    with pytest.raises(PermissionError):
        fs.ls(location.removeprefix("s3://") + "/snapshot")


def test_spark_executors_are_refused_a_token_they_could_not_renew(gated: tuple[RestCatalogServer, TokenGate]) -> None:
    server, _ = gated
    wh = seed(server, batches=([(1, NEW, "a")], [(2, NEW, "b")]))
    with pytest.raises(NotYetSupported, match="data token"):
        wh.table("db.t").expire(retain_max=1, retain_min=1, engine="spark", spark_master="local[1]")


def test_an_external_table_is_read_with_the_clients_own_storage(tmp_path: Path, s3_server: Any,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """As Java: an external table of a REST catalog gets no data token; its files are reached
    with the client's storage options."""
    isolate(tmp_path, monkeypatch)
    wh_uri = s3_server.fresh_warehouse("rest-ext")
    fs = load_catalog(resolve_catalog_options(warehouse=wh_uri), s3_server.storage_options)
    fs.create_table("db.t", Schema.of(parse_columns("id BIGINT NOT NULL, dt STRING, v STRING"),
                                      primary_keys=["id", "dt"], options={"bucket": "1"}))
    Warehouse(wh_uri, fs_options=s3_server.storage_options).table("db.t").write(batch([(1, NEW, "x")]), expire=False)
    with RestCatalogServer(tmp_path / "root", data_token=True, storage_options=s3_server.storage_options) as server:
        client = Warehouse(catalog_options=server.client_options(), fs_options=s3_server.storage_options)
        client.catalog.create_database("db")
        client.catalog.api.register_table("db", "t", f"{wh_uri}/db.db/t")
        assert rows_of(client) == [(1, NEW, "x")]
        assert server.tokens_issued == []
