"""``token.provider=dlf`` end to end: the test REST server verifies every request's DLF
signature (``tests/catalogs/dlf_verify.py``, written independently of ``rest_auth``), our CLI
creates, writes, compacts and reads through it with each signer, a wrong secret is the REST
catalog's permission exit code, pypaimon 2.1 with the same options passes the same checks (the
server's verification is honest), and credentials from a rotated token file or the ECS metadata
service are picked up and renewed before they expire."""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.rest_auth import DlfAuth, EcsMetadata
from tests.catalogs.dlf_verify import DlfKeys
from tests.catalogs.rest_helpers import cli, isolate, jsonl
from tests.catalogs.rest_server import RestCatalogServer
from tests.interop.pypaimon_peer import PyPaimon, PyPaimonError

SIGNERS = ["default", "openapi", "openapi-v4"]


def _keys(sts: str | None = None) -> DlfKeys:
    return DlfKeys({"AK-one": ("secret/one+1", sts)}, region="cn-hangzhou")


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    isolate(tmp_path, monkeypatch)
    return tmp_path


def _all_verified(server: RestCatalogServer) -> None:
    """No request refused as unauthenticated, and the server verified each one's signature (a
    404 of a lookup is an answer to an authentic request)."""
    assert server.calls and not [c for c in server.calls if c.status in (401, 403)]
    assert server.dlf is not None and len(server.dlf.used) == len(server.calls)


@pytest.mark.parametrize("signer", SIGNERS)
def test_cli_creates_writes_compacts_and_reads_through_a_dlf_server(env: Path, signer: str) -> None:
    sts = "sts/token+x" if signer != "default" else None
    with RestCatalogServer(env / "root", dlf=_keys(sts), dlf_signing=signer) as server:
        cli(server, "create", "db.t", "--schema", "id BIGINT NOT NULL, dt STRING, v STRING",
            "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=1")
        csv = env / "in.csv"
        for rows in ("1,a,x\n2,b,y\n", "1,a,z\n3,a,w\n"):
            csv.write_text("id,dt,v\n" + rows)
            cli(server, "write", "db.t", str(csv))
        res = jsonl(cli(server, "compact", "db.t", "--full", "-o", "jsonl"))
        assert res[0]["snapshot_id"] == 3
        read = jsonl(cli(server, "read", "db.t", "-o", "jsonl"))
        assert sorted((r["id"], r["dt"], r["v"]) for r in read) == [(1, "a", "z"), (2, "b", "y"), (3, "a", "w")]
        # every request was signed and verified: config, create, commits (with bodies), reads
        _all_verified(server)
        assert {c.operation for c in server.calls} >= {"getConfig", "createTable", "commitTable", "getTable"}
        assert all(c.body is not None for c in server.calls_of("commitTable"))


@pytest.mark.parametrize("signer", SIGNERS)
def test_a_wrong_secret_or_security_token_is_a_permission_error(env: Path, signer: str) -> None:
    with RestCatalogServer(env / "root", dlf=_keys("sts-1"), dlf_signing=signer) as server:
        res = cli(server, "list", code=9, **{"dlf.access-key-secret": "not-the-secret"})
        assert "forbidden" in res.stderr and "signature mismatch" in res.stderr and "Traceback" not in res.stderr
        res = cli(server, "list", code=9, **{"dlf.security-token": "stolen"})
        assert "security token" in res.stderr
        assert [c.status for c in server.calls] == [403, 403]
        assert server.dlf is not None and server.dlf.used == []
        cli(server, "list")  # the right credentials pass


def test_a_tampered_body_is_refused(env: Path) -> None:
    """The signature covers the body: the same signed headers with another body are refused."""
    with RestCatalogServer(env / "root", dlf=_keys()) as server:
        auth = DlfAuth(_static("AK-one", "secret/one+1"), "default", "cn-hangzhou", f"127.0.0.1:{server.port}")
        path = "/v1/paimon/databases"
        headers = auth.headers("POST", path, {}, json.dumps({"name": "db1", "options": {}}))
        ok = server.handle("POST", path, {k.lower(): v for k, v in headers.items()},
                           json.dumps({"name": "db1", "options": {}}).encode())
        bad = server.handle("POST", path, {k.lower(): v for k, v in headers.items()},
                            json.dumps({"name": "db2", "options": {}}).encode())
        assert ok[0] == 200 and bad[0] == 403 and "body" in bad[1]["message"]


def _static(key_id: str, secret: str) -> Any:
    from paimon_cli.core.catalog.rest_auth import DlfToken, StaticToken
    return StaticToken(DlfToken(key_id, secret))


COLUMNS = [("id", "int64"), ("dt", "string"), ("v", "string")]


@pytest.mark.pypaimon
@pytest.mark.parametrize("signer", SIGNERS)
def test_pypaimon_with_the_same_dlf_options_passes_the_server(env: Path, pypaimon: PyPaimon, signer: str) -> None:
    with RestCatalogServer(env / "root", dlf=_keys("sts-2"), dlf_signing=signer) as server:
        rest = pypaimon.with_catalog(server.client_options())
        wh = server.warehouse
        rest.create_table(wh, "db", "t", COLUMNS, primary_keys=["id", "dt"], partition_keys=["dt"],
                          options={"bucket": "1"})
        assert rest.write(wh, "db", "t", [{"id": 1, "dt": "a", "v": "x"}]) == 1
        _all_verified(server)
        # what pypaimon wrote, our CLI reads through the same server (and the other way round)
        assert [(r["id"], r["v"]) for r in jsonl(cli(server, "read", "db.t", "-o", "jsonl"))] == [(1, "x")]
        assert [r["v"] for r in rest.read(wh, "db", "t")] == ["x"]
        _all_verified(server)
        with pytest.raises(PyPaimonError):
            pypaimon.with_catalog(server.client_options(**{"dlf.access-key-secret": "wrong"})).list_databases(wh)
        assert server.calls[-1].status == 403


# -- where the credentials come from ------------------------------------------------------------------


def _token_json(key_id: str, secret: str, sts: str, expires: datetime | None = None) -> str:
    obj = {"AccessKeyId": key_id, "AccessKeySecret": secret, "SecurityToken": sts}
    if expires is not None:
        obj["Expiration"] = expires.strftime("%Y-%m-%dT%H:%M:%SZ")
    return json.dumps(obj)


def _write_atomically(path: Path, text: str) -> None:
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def test_a_token_file_rotated_mid_session_is_picked_up(env: Path) -> None:
    keys = DlfKeys({"AK-a": ("sa", "ta"), "AK-b": ("sb", "tb")}, region="cn-hangzhou")
    token_file = env / "dlf-token.json"
    token_file.write_text(_token_json("AK-a", "sa", "ta"))
    with RestCatalogServer(env / "root", dlf=keys) as server:
        opts = {"metastore": "rest", "uri": server.uri, "warehouse": server.warehouse, "token.provider": "dlf",
                "dlf.region": "cn-hangzhou", "dlf.token-path": str(token_file)}
        wh = Warehouse(catalog_options=opts)
        wh.create_table("db.t", "id BIGINT NOT NULL, v STRING", primary_key=["id"], options={"bucket": "1"})
        assert set(keys.used) == {"AK-a"}
        # a sidecar rotates the credentials and the old ones are revoked: the same session goes on
        _write_atomically(token_file, _token_json("AK-b", "sb", "tb"))
        del keys.keys["AK-a"]
        before = len(keys.used)
        assert wh.catalog.list_tables("db") == ["t"]
        assert keys.used[before:] and set(keys.used[before:]) == {"AK-b"}
        _all_verified_after(server, before)


def _all_verified_after(server: RestCatalogServer, n: int) -> None:
    assert not [c for c in server.calls[n:] if c.status in (401, 403)]


class _Ecs:
    """A loopback ECS metadata service: the role name at the base, a fresh STS token (numbered)
    under it, each valid for ``ttl`` seconds."""

    def __init__(self, role: str, ttl: float, keys: DlfKeys) -> None:
        self.role, self.ttl, self.keys = role, ttl, keys
        self.hits: list[str] = []
        self.issued = 0
        ecs = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - stdlib name
                ecs.hits.append(self.path)
                base = "/latest/meta-data/Ram/security-credentials/"
                if self.path == base:
                    data = ecs.role.encode()
                elif self.path == base + ecs.role:
                    ecs.issued += 1
                    n = ecs.issued
                    ecs.keys.keys[f"STS.{n}"] = (f"secret-{n}", f"token-{n}")
                    data = _token_json(f"STS.{n}", f"secret-{n}", f"token-{n}",
                                       datetime.now(timezone.utc) + timedelta(seconds=ecs.ttl)).encode()
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                self.send_response(200)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return None

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/latest/meta-data/Ram/security-credentials/"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def ecs_keys() -> Iterator[tuple[_Ecs, DlfKeys]]:
    keys = DlfKeys({}, region="cn-hangzhou")
    ecs = _Ecs("paimon-role", 6 * 3600, keys)
    yield ecs, keys
    ecs.close()


def test_the_ecs_loader_signs_with_the_instance_role(env: Path, ecs_keys: tuple[_Ecs, DlfKeys]) -> None:
    ecs, keys = ecs_keys
    with RestCatalogServer(env / "root", dlf=keys) as server:
        extra = {"dlf.token-loader": "ecs", "dlf.token-ecs-metadata-url": ecs.url}
        opts = server.client_options(**extra)
        wh = Warehouse(catalog_options=opts)
        wh.create_table("db.t", "id BIGINT NOT NULL, v STRING", primary_key=["id"], options={"bucket": "1"})
        assert wh.catalog.list_tables("db") == ["t"]
        _all_verified_after(server, 0)
        assert set(keys.used) == {"STS.1"}  # one token for the whole session: it is far from expiry
        # the role was asked for once, then the token under it
        assert ecs.hits == ["/latest/meta-data/Ram/security-credentials/",
                            "/latest/meta-data/Ram/security-credentials/paimon-role"]
        # a named role skips the listing
        ecs.hits.clear()
        opts["dlf.token-ecs-role-name"] = "paimon-role"
        assert Warehouse(catalog_options=opts).catalog.list_tables("db") == ["t"]
        assert ecs.hits == ["/latest/meta-data/Ram/security-credentials/paimon-role"]


def test_an_expiring_token_is_renewed_before_it_expires(ecs_keys: tuple[_Ecs, DlfKeys]) -> None:
    ecs, _ = ecs_keys
    now = [time.time()]
    auth = DlfAuth(EcsMetadata(ecs.url, None), "default", "cn-hangzhou", "h:1", clock=lambda: now[0])

    def key_id() -> str:
        return auth.headers("GET", "/v1/config", {}, None)["Authorization"].split("Credential=")[1].split("/")[0]

    assert key_id() == "STS.1"
    now[0] += 4 * 3600  # 2 h left of 6: kept
    assert key_id() == "STS.1" and ecs.issued == 1
    now[0] += 1.5 * 3600  # 30 min left: renewed before it expires
    assert key_id() == "STS.2" and ecs.issued == 2
    assert key_id() == "STS.2" and ecs.issued == 2  # the fresh one is kept


def test_a_short_lived_token_is_renewed_in_a_live_session(env: Path) -> None:
    """Real time, real server: a token valid for 4 s is replaced after half its life, and the
    server, which revokes each token when it expires, accepts every request of the session."""
    keys = DlfKeys({}, region="cn-hangzhou")
    ecs = _Ecs("r", 4, keys)
    try:
        with RestCatalogServer(env / "root", dlf=keys) as server:
            opts = {"metastore": "rest", "uri": server.uri, "warehouse": server.warehouse, "token.provider": "dlf",
                    "dlf.region": "cn-hangzhou", "dlf.token-loader": "ecs", "dlf.token-ecs-metadata-url": ecs.url}
            wh = Warehouse(catalog_options=opts)
            wh.catalog.list_databases()
            time.sleep(2.5)
            keys.keys.pop("STS.1")  # the first token is no longer accepted
            wh.catalog.list_databases()
            _all_verified_after(server, 0)
            assert keys.used[0] == "STS.1" and keys.used[-1] == "STS.2"
    finally:
        ecs.close()


def test_an_unreachable_ecs_service_is_catalog_unavailable(env: Path) -> None:
    with RestCatalogServer(env / "root", dlf=_keys()) as server:
        res = cli(server, "list", code=8, **{"dlf.token-loader": "ecs", "dlf.access-key-id": "",
                                              "dlf.access-key-secret": "",
                                              "dlf.token-ecs-metadata-url": "http://127.0.0.1:9/x/"})
        assert "ECS metadata service" in res.stderr and not server.calls

