"""The test REST server's side of DLF request signing: recompute a received request's
signature from what arrived on the wire (the signed headers, the raw path, the query, the body)
and the secret the server holds, as a DLF gateway does. Written from the protocol facts (Java's
``DLFDefaultSigner`` / ``DLFOpenApiSigner`` and pypaimon 2.1's ``dlf_signer``), independently of
paimon-cli's ``rest_auth``: a client whose signature passes here signed what it sent with the
right secret.

``verify`` returns None when the request is authentic, else (status, reason): 401 when no
DLF signature came, 403 when it is wrong (unknown key, bad signature, body not the signed one,
a stale date, a missing or wrong security token).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from dataclasses import dataclass, field
from datetime import datetime, timezone
from email.utils import parsedate_to_datetime
from urllib.parse import parse_qsl, quote, unquote_plus

MAX_SKEW_SECONDS = 15 * 60


@dataclass
class DlfKeys:
    """What the server accepts: access key id -> (secret, the STS token that must accompany it
    or None); ``region`` of the credential scope."""

    keys: dict[str, tuple[str, str | None]]
    region: str = "cn-hangzhou"
    used: list[str] = field(default_factory=list)  # access key ids of the verified requests, in order


def _derived_key(secret: str, date: str, region: str) -> bytes:
    k = ("aliyun_v4" + secret).encode()
    for msg in (date, region, "DlfNext", "aliyun_v4_request"):
        k = hmac.new(k, msg.encode(), hashlib.sha256).digest()
    return k


def _check_sts(keys: DlfKeys, key_id: str, got: str | None) -> tuple[str, str | None] | str:
    if key_id not in keys.keys:
        return f"unknown access key {key_id}"
    secret, sts = keys.keys[key_id]
    if sts != got:
        return "security token missing or wrong"
    return secret, sts


def verify(keys: DlfKeys, method: str, raw_path: str, headers: dict[str, str], body: bytes
           ) -> tuple[int, str] | None:
    """``headers`` lower-cased, as the server received them."""
    auth = headers.get("authorization", "")
    path, _, query = raw_path.partition("?")
    pairs = parse_qsl(query, keep_blank_values=True)
    if auth.startswith("DLF4-HMAC-SHA256 "):
        result = _verify_dlf4(keys, method, path, pairs, headers, body, auth)
    elif auth.startswith("ACS4-HMAC-SHA256 "):
        result = _verify_acs4(keys, method, path, pairs, headers, body, auth)
    elif auth.startswith("acs "):
        result = _verify_roa(keys, method, path, pairs, headers, body, auth)
    else:
        return 401, "no DLF signature"
    if not isinstance(result, _Ok):
        return 403, result
    keys.used.append(result.key_id)
    return None


@dataclass(frozen=True)
class _Ok:
    key_id: str


def _fields(auth: str) -> dict[str, str]:
    _, _, rest = auth.partition(" ")
    return dict(part.strip().split("=", 1) for part in rest.split(","))


def _fresh(when: datetime) -> bool:
    return abs(when.timestamp() - time.time()) <= MAX_SKEW_SECONDS


def _verify_dlf4(keys: DlfKeys, method: str, path: str, pairs: list[tuple[str, str]], headers: dict[str, str],
                 body: bytes, auth: str) -> _Ok | str:
    f = _fields(auth)
    key_id, date, region, product, kind = f["Credential"].split("/")
    stamp = headers.get("x-dlf-date", "")
    if (date, region, product, kind) != (stamp[:8], keys.region, "DlfNext", "aliyun_v4_request"):
        return "credential scope does not match"
    if not _fresh(datetime.strptime(stamp, "%Y%m%dT%H%M%SZ").replace(tzinfo=timezone.utc)):
        return "request date too far from now"
    if body and headers.get("content-md5") != base64.b64encode(hashlib.md5(body).digest()).decode():
        return "body is not the signed one (Content-MD5)"
    checked = _check_sts(keys, key_id, headers.get("x-dlf-security-token"))
    if isinstance(checked, str):
        return checked
    query = "&".join(f"{k}={quote(v, safe='')}" if v else k for k, v in sorted(pairs))
    names = sorted(n for n in ("content-md5", "content-type", "x-dlf-content-sha256", "x-dlf-date",
                               "x-dlf-version", "x-dlf-security-token") if n in headers)
    canonical = "\n".join([method, path, query, *(f"{n}:{headers[n].strip()}" for n in names),
                           headers.get("x-dlf-content-sha256", "")])
    to_sign = "\n".join(["DLF4-HMAC-SHA256", stamp, f"{date}/{region}/DlfNext/aliyun_v4_request",
                         hashlib.sha256(canonical.encode()).hexdigest()])
    want = hmac.new(_derived_key(checked[0], date, region), to_sign.encode(), hashlib.sha256).hexdigest()
    return _Ok(key_id) if hmac.compare_digest(want, f.get("Signature", "")) else "signature mismatch"


def _verify_acs4(keys: DlfKeys, method: str, path: str, pairs: list[tuple[str, str]], headers: dict[str, str],
                 body: bytes, auth: str) -> _Ok | str:
    f = _fields(auth)
    key_id, date, region, product, kind = f["Credential"].split("/")
    stamp = headers.get("x-acs-date", "")
    if (date, region, product, kind) != (stamp[:10].replace("-", ""), keys.region, "DlfNext", "aliyun_v4_request"):
        return "credential scope does not match"
    if not _fresh(datetime.strptime(stamp, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)):
        return "request date too far from now"
    if headers.get("x-acs-content-sha256") != hashlib.sha256(body).hexdigest():
        return "body is not the signed one (x-acs-content-sha256)"
    signed = f.get("SignedHeaders", "").split(";")
    must = {n for n in headers if n.startswith("x-acs-")} | {"host"}
    if not must <= set(signed) or any(n not in headers for n in signed):
        return "SignedHeaders leave a header out"
    checked = _check_sts(keys, key_id, headers.get("x-acs-security-token"))
    if isinstance(checked, str):
        return checked
    query = "&".join(f"{quote(k, safe='~')}={quote(v, safe='~')}" for k, v in sorted(pairs))
    canonical = "\n".join([method, path or "/", query, "".join(f"{n}:{headers[n].strip()}\n" for n in signed),
                           ";".join(signed), headers["x-acs-content-sha256"]])
    to_sign = "ACS4-HMAC-SHA256\n" + hashlib.sha256(canonical.encode()).hexdigest()
    want = hmac.new(_derived_key(checked[0], date, region), to_sign.encode(), hashlib.sha256).hexdigest()
    return _Ok(key_id) if hmac.compare_digest(want, f.get("Signature", "")) else "signature mismatch"


def _verify_roa(keys: DlfKeys, method: str, path: str, pairs: list[tuple[str, str]], headers: dict[str, str],
                body: bytes, auth: str) -> _Ok | str:
    key_id, _, signature = auth[len("acs "):].partition(":")
    try:
        when = parsedate_to_datetime(headers.get("date", ""))
    except (TypeError, ValueError):
        return "no Date header"
    if not _fresh(when):
        return "request date too far from now"
    if body and headers.get("content-md5") != base64.b64encode(hashlib.md5(body).digest()).decode():
        return "body is not the signed one (Content-MD5)"
    checked = _check_sts(keys, key_id, headers.get("x-acs-security-token"))
    if isinstance(checked, str):
        return checked
    acs = "".join(f"{n}:{headers[n].strip()}\n" for n in sorted(h for h in headers if h.startswith("x-acs-")))
    resource = unquote_plus(path)
    if pairs:
        resource += "?" + "&".join(f"{k}={v}" if v else k for k, v in sorted(pairs))
    to_sign = "\n".join([method, headers.get("accept", ""), headers.get("content-md5", ""),
                         headers.get("content-type", ""), headers.get("date", ""), acs]) + resource
    want = base64.b64encode(hmac.new(checked[0].encode(), to_sign.encode(), hashlib.sha1).digest()).decode()
    return _Ok(key_id) if hmac.compare_digest(want, signature) else "signature mismatch"
