"""DLF request signing (``token.provider=dlf``) equals pypaimon 2.1's: for the same request,
clock, nonce and credentials, every header pypaimon's ``DLFAuthProvider`` adds (the signature
included) is the one we send, for each of the three signers and with or without an STS token.
Plus the option handling: missing or contradictory dlf options are one-line InvalidInput."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone
from typing import Any

import pytest

from paimon_cli.core.catalog import rest_auth
from paimon_cli.core.catalog.rest_auth import DlfAuth, DlfToken, StaticToken, auth_from_options
from paimon_cli.core.errors import InvalidInput
from tests.interop.pypaimon_peer import PyPaimon

# pypaimon's provider with its clock and nonce pinned; prints the headers it would send
PEER = r"""
import json, sys
from datetime import datetime, timezone
import pypaimon.api.auth.dlf_provider as provider
import pypaimon.api.auth.dlf_signer as signer
from pypaimon.api.auth import AuthProviderFactory
from pypaimon.api.typedef import RESTAuthParameter
from pypaimon.common.options import Options

out = []
for case in json.load(sys.stdin):
    fixed = datetime.fromtimestamp(case["now"], timezone.utc)
    class Clock(datetime):
        @classmethod
        def now(cls, tz=None):
            return fixed
    provider.datetime = Clock
    signer.DLFOpenApiSigner._generate_unique_nonce = lambda self, n=case["nonce"]: n
    signer.DLFOpenApiV4Signer._generate_unique_nonce = staticmethod(lambda n=case["nonce"]: n)
    auth = AuthProviderFactory.create_auth_provider(Options(case["options"]))
    param = RESTAuthParameter(method=case["method"], path=case["path"], data=case["body"],
                              parameters=dict(case["query"]))
    out.append({"signer": auth.signer.identifier(), "headers": auth.merge_auth_header({}, param)})
print(json.dumps(out))
"""

NOW = datetime(2026, 11, 29, 1, 2, 3, tzinfo=timezone.utc).timestamp()
REQUESTS: list[tuple[str, str, dict[str, str], str | None]] = [
    ("GET", "/v1/config", {"warehouse": "wh"}, None),
    ("GET", "/v1/pre%2Bfix/databases", {}, None),
    ("GET", "/v1/p/databases/db/tables", {"maxResults": "10", "pageToken": "a b/c~d+é", "empty": ""}, None),
    ("POST", "/v1/p/databases/db/tables/t%24branch_b/commit", {},
     json.dumps({"tableId": "u-1", "snapshot": {"id": 3, "note": "ünïcode"}}, ensure_ascii=False)),
    ("POST", "/v1/p/databases", {}, json.dumps({"name": "db", "options": {}})),
    ("DELETE", "/v1/p/databases/db/tables/t/tags/v%201", {}, ""),
    ("GET", "/v1/p/databases/db/tables/t/snapshots/LATEST", {}, None),
    ("GET", "/v1/p/unregistered/path", {"x": "1"}, None),
]
ENDPOINTS = [  # uri, dlf.signing-algorithm (None: chosen by the endpoint)
    ("http://cn-hangzhou-vpc.dlf.aliyuncs.com", None),
    ("https://dlfnext.cn-shanghai.aliyuncs.com", None),
    ("http://127.0.0.1:8123", "openapi-v4"),
    ("http://127.0.0.1:8123", "openapi"),
    ("http://127.0.0.1:8123", "default"),
]


def _cases() -> list[dict[str, Any]]:
    cases = []
    for uri, algo in ENDPOINTS:
        for sts in (None, "sts-token/with+odd=chars"):
            for i, (method, path, query, body) in enumerate(REQUESTS):
                options = {"token.provider": "dlf", "uri": uri, "dlf.access-key-id": "AK-id",
                           "dlf.access-key-secret": "sk/Secret+1"}
                if "127.0.0.1" in uri:
                    options["dlf.region"] = "ap-southeast-1"
                if algo:
                    options["dlf.signing-algorithm"] = algo
                if sts:
                    options["dlf.security-token"] = sts
                cases.append({"options": options, "method": method, "path": path, "query": query, "body": body,
                              "now": NOW + i * 3601, "nonce": f"nonce-{i}"})
    return cases


@pytest.mark.pypaimon
def test_every_signer_matches_pypaimon(pypaimon: PyPaimon) -> None:
    cases = _cases()
    proc = subprocess.run([pypaimon.python, "-c", PEER], input=json.dumps(cases), capture_output=True,
                          text=True, timeout=120, check=True)
    theirs = json.loads(proc.stdout)
    seen = set()
    for case, peer in zip(cases, theirs, strict=True):
        auth = auth_from_options(case["options"], case["options"]["uri"], "c")
        assert isinstance(auth, DlfAuth)
        auth.clock = lambda now=case["now"]: now
        auth.nonce = lambda n=case["nonce"]: n
        ours = auth.headers(case["method"], case["path"], case["query"], case["body"])
        assert auth.signer == peer["signer"]
        assert ours == peer["headers"], case
        seen.add((auth.signer, "Authorization" in ours))
    assert {s for s, _ in seen} == {"default", "openapi", "openapi-v4"}


def test_a_wrong_secret_changes_every_signature() -> None:
    for signer in rest_auth.SIGNERS:
        sigs = []
        for secret in ("right", "wrong"):
            auth = DlfAuth(StaticToken(DlfToken("ak", secret)), signer, "cn-hangzhou", "h:1",
                           clock=lambda: NOW, nonce=lambda: "n")
            sigs.append(auth.headers("GET", "/v1/config", {"warehouse": "w"}, None)["Authorization"])
        assert sigs[0] != sigs[1]


def test_the_endpoint_chooses_the_signer_and_the_region() -> None:
    base = {"token.provider": "dlf", "dlf.access-key-id": "a", "dlf.access-key-secret": "s"}
    vpc = auth_from_options(base, "http://cn-hangzhou-vpc.dlf.aliyuncs.com", "c")
    nxt = auth_from_options(base, "https://dlfnext.cn-beijing.aliyuncs.com", "c")
    assert isinstance(vpc, DlfAuth) and isinstance(nxt, DlfAuth)
    assert (vpc.signer, vpc.region, nxt.signer, nxt.region) == ("default", "cn-hangzhou", "openapi", "cn-beijing")


@pytest.mark.parametrize(("options", "message"), [
    ({}, "needs dlf.access-key-id and dlf.access-key-secret"),
    ({"dlf.access-key-id": "a"}, "needs dlf.access-key-id and dlf.access-key-secret"),
    ({"dlf.token-loader": "local_file"}, "local_file needs dlf.token-path"),
    ({"dlf.token-loader": "vault"}, "expected ecs or local_file"),
    ({"dlf.access-key-id": "a", "dlf.access-key-secret": "s", "dlf.signing-algorithm": "v5"},
     "expected one of default, openapi, openapi-v4"),
])
def test_missing_or_contradictory_options_are_refused(options: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message) as e:
        auth_from_options({"token.provider": "dlf", "dlf.region": "cn-hangzhou", **options}, "http://h:1", "c")
    assert e.value.exit_code == 4 and "\n" not in str(e.value)


def test_a_uri_without_region_needs_dlf_region() -> None:
    with pytest.raises(InvalidInput, match="needs 'dlf.region'"):
        auth_from_options({"token.provider": "dlf", "dlf.access-key-id": "a", "dlf.access-key-secret": "s"},
                          "http://127.0.0.1:1", "c")


@pytest.mark.parametrize(("extra", "source"), [
    ({"dlf.token-loader": "ecs"}, rest_auth.EcsMetadata),
    ({"dlf.token-loader": "ecs", "dlf.token-path": "/x"}, rest_auth.EcsMetadata),
    ({"dlf.token-path": "/x"}, rest_auth.TokenFile),
    ({"dlf.token-loader": "local_file", "dlf.token-path": "/x"}, rest_auth.TokenFile),
    ({}, StaticToken),
])
def test_several_credential_sources_resolve_as_java_does(extra: dict[str, str], source: type) -> None:
    """Java and pypaimon take the loader, else the token file, else the keys: a Flink catalog
    that names keys beside a loader must sign with the loader's credentials here too."""
    options = {"token.provider": "dlf", "dlf.region": "cn-hangzhou", "dlf.access-key-id": "a",
               "dlf.access-key-secret": "s", "dlf.security-token": "t", **extra}
    auth = auth_from_options(options, "http://h:1", "c")
    assert isinstance(auth, DlfAuth) and type(auth.source) is source
