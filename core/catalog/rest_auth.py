"""How a REST catalog request proves who sends it: ``token.provider=bear`` (a fixed bearer
token) or ``token.provider=dlf`` (Alibaba DLF request signing, as Java's
``org.apache.paimon.rest.auth.DLFAuthProvider`` and pypaimon's ``DLFAuthProvider`` do it).

DLF signs every request (method, path, query, body digest, date) with an AccessKey secret that
never travels. Three signers exist, chosen by ``dlf.signing-algorithm`` or, unset, by the
endpoint (a ``dlfnext`` host speaks the OpenAPI gateway's ROA scheme, any other the DLF4 one):

- ``default``: ``DLF4-HMAC-SHA256`` over a canonical request (VPC endpoints);
- ``openapi``: Alibaba Cloud ROA ``HMAC-SHA1`` over the Date, Content-MD5 and x-acs headers;
- ``openapi-v4``: ``ACS4-HMAC-SHA256`` of the POP gateway (DlfNext 2026-01-18).

Credentials come from ``dlf.access-key-id`` / ``dlf.access-key-secret`` (/ ``dlf.security-token``),
a JSON token file ``dlf.token-path`` (re-read when it changes or nears expiry), or the ECS
metadata service (``dlf.token-loader=ecs``). Tokens with an ``Expiration`` are renewed before
they expire, so a long job keeps signing with valid credentials.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Protocol

from ..errors import CatalogUnavailable, InvalidInput
from .options import TOKEN, TOKEN_PROVIDER

DLF_REGION = "dlf.region"
DLF_ACCESS_KEY_ID = "dlf.access-key-id"
DLF_ACCESS_KEY_SECRET = "dlf.access-key-secret"
DLF_SECURITY_TOKEN = "dlf.security-token"
DLF_TOKEN_PATH = "dlf.token-path"
DLF_TOKEN_LOADER = "dlf.token-loader"
DLF_TOKEN_ECS_METADATA_URL = "dlf.token-ecs-metadata-url"
DLF_TOKEN_ECS_ROLE_NAME = "dlf.token-ecs-role-name"
DLF_SIGNING_ALGORITHM = "dlf.signing-algorithm"
DEFAULT_ECS_METADATA_URL = "http://100.100.100.200/latest/meta-data/Ram/security-credentials/"
# Java's TOKEN_EXPIRATION_SAFE_TIME_MILLIS (DLFAuthProvider, RESTApi data tokens)
TOKEN_SAFE_TIME_MILLIS = 3_600_000


def renewal_due(expires_at_millis: int, loaded_at_millis: int, now_millis: int,
                safe_time_millis: int = TOKEN_SAFE_TIME_MILLIS) -> bool:
    """Whether a credential should be fetched again: Java renews when less than an hour is
    left; a shorter-lived one is renewed in its second half so it is not fetched per request."""
    lifetime = max(0, expires_at_millis - loaded_at_millis)
    return expires_at_millis - now_millis < min(safe_time_millis, lifetime // 2)

SIGNERS = ("default", "openapi", "openapi-v4")
_PRODUCT = "DlfNext"
_REQUEST_TYPE = "aliyun_v4_request"
_KEY_PREFIX = "aliyun_v4"
_JSON = "application/json"
_OPENAPI_VERSION = "2026-01-18"
_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
_REGION = re.compile(r"(?:pre-)?([a-z]+-[a-z]+(?:-\d+)?)")
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")


class RestAuth(Protocol):
    """What a request adds to its headers to authenticate; called once per attempt."""

    def headers(self, method: str, path: str, query: Mapping[str, str], body: str | None) -> dict[str, str]: ...


@dataclass(frozen=True)
class BearerAuth:
    token: str

    def headers(self, method: str, path: str, query: Mapping[str, str], body: str | None) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}


# ---------------------------------------------------------------------------------------------
# credentials


@dataclass(frozen=True)
class DlfToken:
    """An AccessKey pair, its STS token when temporary, and when it expires (epoch ms)."""

    access_key_id: str
    access_key_secret: str
    security_token: str | None = None
    expires_at_millis: int | None = None

    @staticmethod
    def from_json(text: str, source: str) -> DlfToken:
        """The JSON the ECS metadata service and DLF token files carry (``AccessKeyId``, ...).
        Messages never quote the content: it holds the secret."""
        try:
            obj = json.loads(text)
        except ValueError:
            raise InvalidInput(f"DLF token from {source} is not JSON") from None
        if not isinstance(obj, dict) or not obj.get("AccessKeyId") or not obj.get("AccessKeySecret"):
            raise InvalidInput(f"DLF token from {source} has no AccessKeyId and AccessKeySecret")
        expiration = obj.get("Expiration")
        expires = None
        if expiration:
            try:
                expires = int(datetime.strptime(str(expiration), "%Y-%m-%dT%H:%M:%SZ")
                              .replace(tzinfo=timezone.utc).timestamp() * 1000)
            except ValueError:
                raise InvalidInput(f"DLF token from {source}: Expiration {expiration!r} is not "
                                   "yyyy-MM-ddTHH:mm:ssZ") from None
        sts = obj.get("SecurityToken")
        return DlfToken(str(obj["AccessKeyId"]), str(obj["AccessKeySecret"]), None if sts is None else str(sts),
                        expires)


class TokenSource(Protocol):
    def load(self) -> DlfToken: ...

    def changed(self) -> bool:
        """Whether the source has something newer than the last load (a rewritten file)."""
        ...


class TokenFile:
    """``dlf.token-path``: a JSON file another process rotates (e.g. a sidecar refreshing STS)."""

    def __init__(self, path: str, attempts: int = 3, pause: float = 0.2) -> None:
        self.path = path
        self.attempts = attempts
        self.pause = pause
        self._seen: tuple[int, int, int] | None = None

    def _stamp(self) -> tuple[int, int, int] | None:
        """Changes when the file is rewritten in place or replaced by a rename."""
        try:
            st = os.stat(self.path)
        except OSError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def changed(self) -> bool:
        return self._stamp() != self._seen

    def load(self) -> DlfToken:
        # a file caught half-rewritten is read again after a pause
        for attempt in range(self.attempts):
            stamp = self._stamp()
            try:
                with open(self.path, encoding="utf-8") as f:
                    text = f.read()
            except OSError as e:
                if attempt + 1 == self.attempts:
                    raise InvalidInput(f"{DLF_TOKEN_PATH}: cannot read {self.path}: {e.strerror or e}") from None
            else:
                try:
                    token = DlfToken.from_json(text, self.path)
                except InvalidInput:
                    if attempt + 1 == self.attempts:
                        raise
                else:
                    self._seen = stamp
                    return token
            time.sleep(self.pause)
        raise AssertionError("unreachable")


class EcsMetadata:
    """``dlf.token-loader=ecs``: the instance's RAM role credentials from the ECS metadata
    service (the role named by ``dlf.token-ecs-role-name``, else the one the service lists)."""

    def __init__(self, url: str, role: str | None, timeout: float = 10.0, attempts: int = 3) -> None:
        self.url = url
        self.role = role
        self.timeout = timeout
        self.attempts = attempts

    def changed(self) -> bool:
        return False

    def _get(self, url: str) -> str:
        last = ""
        for attempt in range(self.attempts):
            if attempt:
                time.sleep(0.5 * attempt)
            try:
                with urllib.request.urlopen(url, timeout=self.timeout) as resp:
                    return str(resp.read().decode("utf-8"))
            except urllib.error.HTTPError as e:
                last = f"HTTP {e.code}"
                if e.code < 500:
                    break
            except (urllib.error.URLError, OSError) as e:
                last = str(getattr(e, "reason", e))
        raise CatalogUnavailable(f"DLF token from the ECS metadata service {url}: {last}")

    def load(self) -> DlfToken:
        if not self.role:
            self.role = self._get(self.url).strip()
            if not self.role:
                raise CatalogUnavailable(f"the ECS metadata service {self.url} names no RAM role; "
                                         f"set {DLF_TOKEN_ECS_ROLE_NAME}")
        url = urllib.parse.urljoin(self.url.rstrip("/") + "/", self.role)
        return DlfToken.from_json(self._get(url), url)


class StaticToken:
    def __init__(self, token: DlfToken) -> None:
        self.token = token

    def changed(self) -> bool:
        return False

    def load(self) -> DlfToken:
        return self.token


# ---------------------------------------------------------------------------------------------
# signers: pure functions of the request, the time, the credentials (and a nonce)


def _sha256_hex(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _md5_b64(text: str) -> str:
    return base64.b64encode(hashlib.md5(text.encode("utf-8")).digest()).decode("ascii")


def _hmac256(key: bytes, text: str) -> bytes:
    return hmac.new(key, text.encode("utf-8"), hashlib.sha256).digest()


def _v4_key(secret: str, date: str, region: str) -> bytes:
    """The signing key both v4 schemes derive: secret -> date -> region -> product -> request type."""
    key = _hmac256(f"{_KEY_PREFIX}{secret}".encode(), date)
    for part in (region, _PRODUCT, _REQUEST_TYPE):
        key = _hmac256(key, part)
    return key


def _has_body(body: str | None) -> bool:
    return body is not None and body != ""


def _encoded(query: Mapping[str, str]) -> dict[str, str]:
    """Query values as Java's and pypaimon's ``RESTAuthParameter`` hold them: percent-encoded."""
    return {k: urllib.parse.quote(str(v), safe="") for k, v in query.items()}


def sign_default(method: str, path: str, query: Mapping[str, str], body: str | None, now: datetime,
                 token: DlfToken, region: str) -> dict[str, str]:
    """``DLF4-HMAC-SHA256``: the headers to send, ``Authorization`` included."""
    stamp = now.astimezone(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    date = stamp[:8]
    signed = {"x-dlf-date": stamp, "x-dlf-content-sha256": "UNSIGNED-PAYLOAD", "x-dlf-version": "v1"}
    if _has_body(body):
        assert body is not None
        signed["content-type"] = _JSON
        signed["content-md5"] = _md5_b64(body)
    if token.security_token is not None:
        signed["x-dlf-security-token"] = token.security_token
    params = []
    for k, v in sorted(_encoded(query).items()):
        params.append(f"{k.strip()}={v.strip()}" if v else k.strip())
    lines = [method, path, "&".join(params)]
    lines += [f"{k}:{v.strip()}" for k, v in sorted(signed.items())]
    lines.append(signed["x-dlf-content-sha256"])
    scope = f"{date}/{region}/{_PRODUCT}/{_REQUEST_TYPE}"
    to_sign = "\n".join(["DLF4-HMAC-SHA256", stamp, scope, _sha256_hex("\n".join(lines))])
    signature = hmac.new(_v4_key(token.access_key_secret, date, region), to_sign.encode("utf-8"),
                         hashlib.sha256).hexdigest()
    names = {"content-type": "Content-Type", "content-md5": "Content-MD5"}
    out = {names.get(k, k): v for k, v in signed.items()}
    out["Authorization"] = (f"DLF4-HMAC-SHA256 Credential={token.access_key_id}/{scope},"
                            f"Signature={signature}")
    return out


def _rfc1123(now: datetime) -> str:
    t = now.astimezone(timezone.utc)
    # spelled out: strftime's %a/%b follow the locale
    return (f"{_DAYS[t.weekday()]}, {t.day:02d} {_MONTHS[t.month - 1]} {t.year:04d} "
            f"{t.hour:02d}:{t.minute:02d}:{t.second:02d} GMT")


def sign_openapi(method: str, path: str, query: Mapping[str, str], body: str | None, now: datetime,
                 token: DlfToken, host: str, nonce: str) -> dict[str, str]:
    """Alibaba Cloud ROA ``HMAC-SHA1`` (``acs <id>:<signature>``)."""
    out = {"Date": _rfc1123(now), "Accept": _JSON}
    if _has_body(body):
        assert body is not None
        out["Content-MD5"] = _md5_b64(body)
        out["Content-Type"] = _JSON
    out["Host"] = host
    out.update({"x-acs-signature-method": "HMAC-SHA1", "x-acs-signature-nonce": nonce,
                "x-acs-signature-version": "1.0", "x-acs-version": _OPENAPI_VERSION})
    if token.security_token is not None:
        out["x-acs-security-token"] = token.security_token
    acs = "".join(f"{k}:{v.strip()}\n" for k, v in sorted(out.items()) if k.startswith("x-acs-"))
    resource = urllib.parse.unquote_plus(path)
    if query:
        # the encoded values decoded again: the resource carries them as sent
        parts = [f"{k}={urllib.parse.unquote(v)}" if v else k for k, v in sorted(_encoded(query).items())]
        resource += "?" + "&".join(parts)
    head = [method, out["Accept"], out.get("Content-MD5", ""), out.get("Content-Type", ""), out["Date"], acs]
    to_sign = "\n".join(head) + resource
    mac = hmac.new(token.access_key_secret.encode("utf-8"), to_sign.encode("utf-8"), hashlib.sha1).digest()
    out["Authorization"] = f"acs {token.access_key_id}:{base64.b64encode(mac).decode('ascii')}"
    return out


# The POP action each REST endpoint is registered under (DlfNext 2026-01-18); the gateway may
# route by the x-acs-action header, so openapi-v4 sends and signs it. {} is any one segment.
_T = "/v1/{}/databases/{}/tables/{}"
_ACTIONS: tuple[tuple[str, str, str], ...] = (
    ("GET", "/v1/config", "GetConfig"),
    ("GET", "/v1/{}/databases", "ListDatabases"), ("POST", "/v1/{}/databases", "CreateDatabase"),
    ("GET", "/v1/{}/databases/{}", "GetDatabase"), ("POST", "/v1/{}/databases/{}", "AlterDatabase"),
    ("DELETE", "/v1/{}/databases/{}", "DropDatabase"),
    ("POST", "/v1/{}/databases/{}/register", "RegisterTable"),
    ("GET", "/v1/{}/databases/{}/tables", "ListTables"), ("POST", "/v1/{}/databases/{}/tables", "CreateTable"),
    ("GET", "/v1/{}/databases/{}/table-details", "ListTableDetails"),
    ("GET", _T, "GetTable"), ("POST", _T, "AlterTable"), ("DELETE", _T, "DropTable"),
    ("POST", "/v1/{}/tables/rename", "RenameTable"),
    ("POST", _T + "/auth", "AuthTableQuery"), ("POST", _T + "/commit", "CommitTable"),
    ("GET", _T + "/token", "GetTableToken"), ("POST", _T + "/rollback", "RollbackToSnapshot"),
    ("GET", _T + "/snapshot", "GetTableSnapshot"), ("GET", _T + "/snapshots", "ListSnapshots"),
    ("GET", _T + "/snapshots/{}", "GetVersionSnapshot"),
    ("GET", _T + "/partitions", "ListPartitions"), ("POST", _T + "/partitions", "CreatePartitions"),
    ("POST", _T + "/partitions/drop", "DropPartitions"), ("POST", _T + "/partitions/mark", "MarkDonePartitions"),
    ("POST", _T + "/partitions/list-by-names", "ListPartitionsByNames"),
    ("POST", _T + "/partitions/list-by-filter", "ListPartitionsByFilter"),
    ("GET", _T + "/branches", "ListBranches"), ("POST", _T + "/branches", "CreateBranch"),
    ("DELETE", _T + "/branches/{}", "DropBranch"), ("POST", _T + "/branches/{}/forward", "FastForwardBranch"),
    ("GET", _T + "/tags", "ListTags"), ("POST", _T + "/tags", "CreateTag"),
    ("GET", _T + "/tags/{}", "GetTag"), ("DELETE", _T + "/tags/{}", "DropTag"),
    ("GET", _T + "/policies", "ListPolicies"), ("POST", _T + "/policies", "CreatePolicy"),
    ("POST", _T + "/policies/drop", "DropPolicy"),
    ("GET", "/v1/{}/databases/{}/views", "ListViews"), ("POST", "/v1/{}/databases/{}/views", "CreateView"),
    ("GET", "/v1/{}/databases/{}/view-details", "ListViewDetails"),
    ("GET", "/v1/{}/databases/{}/views/{}", "GetView"), ("POST", "/v1/{}/databases/{}/views/{}", "AlterView"),
    ("DELETE", "/v1/{}/databases/{}/views/{}", "DropView"), ("POST", "/v1/{}/views/rename", "RenameView"),
    ("GET", "/v1/{}/databases/{}/functions", "ListFunctions"),
    ("POST", "/v1/{}/databases/{}/functions", "CreateFunction"),
    ("GET", "/v1/{}/databases/{}/functions/{}", "GetFunction"),
    ("POST", "/v1/{}/databases/{}/functions/{}", "AlterFunction"),
    ("DELETE", "/v1/{}/databases/{}/functions/{}", "DropFunction"),
    ("GET", "/v1/{}/permissions", "ListPermissionAssignments"),
    ("POST", "/v1/{}/permissions/grant", "GrantPermissionAssignment"),
    ("POST", "/v1/{}/permissions/revoke", "RevokePermissionAssignment"),
)


def pop_action(method: str, path: str) -> str | None:
    segments = path.split("/")
    for verb, template, action in _ACTIONS:
        parts = template.split("/")
        if verb == method.upper() and len(parts) == len(segments) and all(
                (s != "") if p == "{}" else p == s for p, s in zip(parts, segments, strict=True)):
            return action
    return None


def sign_openapi_v4(method: str, path: str, query: Mapping[str, str], body: str | None, now: datetime,
                    token: DlfToken, host: str, region: str, nonce: str) -> dict[str, str]:
    """``ACS4-HMAC-SHA256`` of the POP gateway."""
    stamp = now.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = {"x-acs-date": stamp, "host": host}
    if _has_body(body):
        assert body is not None
        out["x-acs-content-sha256"] = _sha256_hex(body)
        out["content-type"] = _JSON
    else:
        out["x-acs-content-sha256"] = _EMPTY_SHA256
    out["x-acs-signature-nonce"] = nonce
    out["x-acs-version"] = _OPENAPI_VERSION
    if token.security_token is not None:
        out["x-acs-security-token"] = token.security_token
    action = pop_action(method, path)
    if action is not None:
        out["x-acs-action"] = action
    names = sorted(out)  # host, content-type and x-acs-*: all of them are signed
    canonical_headers = "".join(f"{k}:{out[k].strip()}\n" for k in names)
    signed_headers = ";".join(names)
    query_string = "&".join(f"{urllib.parse.quote(k, safe='~')}={urllib.parse.quote(str(v), safe='~')}"
                            if v not in (None, "") else f"{urllib.parse.quote(k, safe='~')}="
                            for k, v in sorted(query.items()))
    canonical = "\n".join([method, path if path.strip() else "/", query_string, canonical_headers,
                           signed_headers, out["x-acs-content-sha256"]])
    date = stamp[:10].replace("-", "")
    signature = hmac.new(_v4_key(token.access_key_secret, date, region),
                         f"ACS4-HMAC-SHA256\n{_sha256_hex(canonical)}".encode(), hashlib.sha256).hexdigest()
    out["Authorization"] = (f"ACS4-HMAC-SHA256 Credential={token.access_key_id}/{date}/{region}/{_PRODUCT}/"
                            f"{_REQUEST_TYPE},SignedHeaders={signed_headers},Signature={signature}")
    return out


def _nonce() -> str:
    return f"{uuid.uuid4()}{int(time.time() * 1000)}{threading.get_ident()}"


class DlfAuth:
    """Signs each request with the current token; renews a token before it expires (less than
    an hour left, or past half its life for a shorter one) and re-reads a rewritten token file."""

    def __init__(self, source: TokenSource, signer: str, region: str, host: str, *,
                 clock: Callable[[], float] = time.time, nonce: Callable[[], str] = _nonce,
                 safe_time_millis: int = TOKEN_SAFE_TIME_MILLIS) -> None:
        self.source = source
        self.signer = signer
        self.region = region
        self.host = host
        self.clock = clock
        self.nonce = nonce
        self.safe_time_millis = safe_time_millis
        self._token: DlfToken | None = None
        self._loaded_at = 0
        self._lock = threading.Lock()

    def _stale(self, now_ms: int) -> bool:
        token = self._token
        if token is None or self.source.changed():
            return True
        if token.expires_at_millis is None:
            return False
        return renewal_due(token.expires_at_millis, self._loaded_at, now_ms, self.safe_time_millis)

    def token(self) -> DlfToken:
        with self._lock:
            now_ms = int(self.clock() * 1000)
            if self._stale(now_ms):
                self._token = self.source.load()
                self._loaded_at = now_ms
            assert self._token is not None
            return self._token

    def headers(self, method: str, path: str, query: Mapping[str, str], body: str | None) -> dict[str, str]:
        token = self.token()
        now = datetime.fromtimestamp(self.clock(), timezone.utc)
        if self.signer == "openapi":
            return sign_openapi(method, path, query, body, now, token, self.host, self.nonce())
        if self.signer == "openapi-v4":
            return sign_openapi_v4(method, path, query, body, now, token, self.host, self.region, self.nonce())
        return sign_default(method, path, query, body, now, token, self.region)


# ---------------------------------------------------------------------------------------------
# from catalog options


def _opt(options: Mapping[str, str], key: str) -> str | None:
    v = options.get(key)
    return v.strip() if v is not None and v.strip() else None


def signer_for(options: Mapping[str, str], uri: str, catalog: str) -> str:
    """``dlf.signing-algorithm``; unset or ``default``: ``openapi`` for a ``dlfnext`` host."""
    algo = (_opt(options, DLF_SIGNING_ALGORITHM) or "default").lower()
    if algo not in SIGNERS:
        raise InvalidInput(f"catalog {catalog}: {DLF_SIGNING_ALGORITHM}={algo!r}: expected one of "
                           f"{', '.join(SIGNERS)}")
    if algo == "default" and "dlfnext" in (urllib.parse.urlsplit(uri).hostname or ""):
        return "openapi"
    return algo


def region_for(options: Mapping[str, str], uri: str, catalog: str) -> str:
    region = _opt(options, DLF_REGION)
    if region:
        return region
    m = _REGION.search(uri)
    if not m:
        raise InvalidInput(f"catalog {catalog}: token.provider=dlf needs {DLF_REGION!r} (the uri {uri} names "
                           "no region such as cn-hangzhou)")
    return m.group(1)


def token_source(options: Mapping[str, str], catalog: str) -> TokenSource:
    loader = _opt(options, DLF_TOKEN_LOADER)
    path = _opt(options, DLF_TOKEN_PATH)
    key_id, secret = _opt(options, DLF_ACCESS_KEY_ID), _opt(options, DLF_ACCESS_KEY_SECRET)
    where = f"catalog {catalog}: token.provider=dlf"
    if loader is not None and loader not in ("ecs", "local_file"):
        raise InvalidInput(f"{where}: {DLF_TOKEN_LOADER}={loader!r}: expected ecs or local_file")
    # Java and pypaimon take the first source given, in this order: the loader, the token
    # file, the static keys; a Flink catalog that names several works the same way here.
    if loader == "ecs":
        url = _opt(options, DLF_TOKEN_ECS_METADATA_URL) or DEFAULT_ECS_METADATA_URL
        return EcsMetadata(url, _opt(options, DLF_TOKEN_ECS_ROLE_NAME))
    if loader == "local_file" or path:
        if not path:
            raise InvalidInput(f"{where}: {DLF_TOKEN_LOADER}=local_file needs {DLF_TOKEN_PATH}")
        return TokenFile(os.path.expanduser(path))
    if not key_id or not secret:
        raise InvalidInput(f"{where} needs {DLF_ACCESS_KEY_ID} and {DLF_ACCESS_KEY_SECRET} (or {DLF_TOKEN_PATH}, "
                           f"or {DLF_TOKEN_LOADER}=ecs)")
    return StaticToken(DlfToken(key_id, secret, _opt(options, DLF_SECURITY_TOKEN)))


def auth_from_options(options: Mapping[str, str], uri: str, catalog: str) -> RestAuth:
    """The request authentication ``token.provider`` names (Java requires the provider)."""
    provider = (options.get(TOKEN_PROVIDER) or "").strip().lower()
    if not provider:
        raise InvalidInput(f"catalog {catalog}: metastore=rest needs the option {TOKEN_PROVIDER!r} "
                           "(bear with the option 'token', or dlf with the dlf.* options)")
    if provider == "bear":
        token = (options.get(TOKEN) or "").strip()
        if not token:
            raise InvalidInput(f"catalog {catalog}: {TOKEN_PROVIDER}=bear needs the option 'token'")
        return BearerAuth(token)
    if provider == "dlf":
        signer = signer_for(options, uri, catalog)
        region = region_for(options, uri, catalog)
        source = token_source(options, catalog)
        host = urllib.parse.urlsplit(uri if "://" in uri else "http://" + uri).netloc
        return DlfAuth(source, signer, region, host)
    raise InvalidInput(f"catalog {catalog}: {TOKEN_PROVIDER}={provider!r}: expected bear or dlf")


def auth_options(options: Mapping[str, str]) -> dict[str, str]:
    """The options an authentication depends on: a server's config that leaves them alone keeps
    the one built before (no second ECS fetch)."""
    return {k: v for k, v in options.items() if k in (TOKEN_PROVIDER, TOKEN) or k.startswith("dlf.")}
