"""pytest plugin: an S3-compatible store (moto) on loopback for the ``s3`` tests.

The server runs in-process (``ThreadedMotoServer``) on 127.0.0.1 and a free port, so the
tests need no network and no Docker. Credentials are dummies and every AWS environment
variable that could send boto somewhere real (profiles, instance metadata, proxies) is
overridden for the session.

Register with ``pytest_plugins = ["tests.s3_fixtures"]`` in the root conftest, or ``-p
tests.s3_fixtures``.
"""

from __future__ import annotations

import os
import re
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from tests.loopback_server import bypass_proxy_for_loopback, free_port

BUCKET = "warehouse"
REGION = "us-east-1"
ACCESS_KEY = "testing"
SECRET_KEY = "testing"


@dataclass
class S3Server:
    """Where the moto server listens and how to reach it."""

    endpoint: str
    bucket: str = BUCKET
    warehouse: str = f"s3://{BUCKET}/wh"
    region: str = REGION
    storage_options: dict[str, Any] = field(default_factory=dict)

    def fresh_warehouse(self, label: str = "wh") -> str:
        """A warehouse URI no other test uses (the bucket is shared for the session)."""
        return f"s3://{self.bucket}/{label}-{uuid.uuid4().hex[:12]}"

    def fs_option_pairs(self) -> list[str]:
        """The same settings as ``--fs-option k=v`` strings, for CLI tests."""
        return [
            f"key={ACCESS_KEY}",
            f"secret={SECRET_KEY}",
            f"client_kwargs.endpoint_url={self.endpoint}",
            f"client_kwargs.region_name={self.region}",
        ]

    def boto3_client(self) -> Any:
        """A plain boto3 client on the server, to check objects behind FileIO's back."""
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, region_name=self.region,
                            aws_access_key_id=ACCESS_KEY, aws_secret_access_key=SECRET_KEY)

    def new_s3fs(self) -> Any:
        """An uncached s3fs instance (fsspec caches instances by arguments)."""
        import s3fs

        return s3fs.S3FileSystem(skip_instance_cache=True, **self.storage_options)


_AWS_ENV = {
    "AWS_ACCESS_KEY_ID": ACCESS_KEY,
    "AWS_SECRET_ACCESS_KEY": SECRET_KEY,
    "AWS_DEFAULT_REGION": REGION,
    "AWS_REGION": REGION,
    "AWS_EC2_METADATA_DISABLED": "true",
    "AWS_CONFIG_FILE": os.devnull,
    "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
}
_AWS_ENV_UNSET = ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_SECURITY_TOKEN", "AWS_ENDPOINT_URL",
                  "AWS_ENDPOINT_URL_S3", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI",
                  "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE",
                  "AWS_ROLE_ARN")


@pytest.fixture(scope="session")
def s3_server() -> Iterator[S3Server]:
    """Moto S3 on 127.0.0.1, bucket ``warehouse`` created; stopped at session end."""
    from moto.server import ThreadedMotoServer

    mp = pytest.MonkeyPatch()
    for k, v in _AWS_ENV.items():
        mp.setenv(k, v)
    for k in _AWS_ENV_UNSET:
        mp.delenv(k, raising=False)
    bypass_proxy_for_loopback(mp)

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=free_port(), verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    info = S3Server(
        endpoint=endpoint,
        storage_options={
            "key": ACCESS_KEY,
            "secret": SECRET_KEY,
            "client_kwargs": {"endpoint_url": endpoint, "region_name": REGION},
        },
    )
    try:
        info.boto3_client().create_bucket(Bucket=BUCKET)
        yield info
    finally:
        server.stop()
        mp.undo()


@pytest.fixture()
def s3_warehouse(s3_server: S3Server) -> str:
    """A per-test warehouse URI under the shared bucket."""
    return s3_server.fresh_warehouse()


# ---------------------------------------------------------------------------------------
# fault injection: botocore event hooks on the s3fs client (the real S3 code path runs)
# ---------------------------------------------------------------------------------------


class _Answer:
    """The HTTP response a short-circuited request gets: botocore reads only the status."""

    def __init__(self, status_code: int) -> None:
        self.status_code = status_code
        self.headers: dict[str, str] = {}
        self.content = b""


def _conflict() -> dict[str, Any]:
    return {"Error": {"Code": "ConditionalRequestConflict",
                      "Message": "A conflicting operation occurred. If using PutObject you can retry the request."},
            "ResponseMetadata": {"HTTPStatusCode": 409}}


@dataclass
class _Rule:
    ops: tuple[str, ...]
    key: str  # a regular expression searched in the object key
    when: str  # "before": the request is not sent; "after": it reached the server
    action: str  # "conflict" (409), "timeout" (s3fs retries it), "disconnect" (it does not)
    times: int  # how many matching requests to hit; -1 = every one
    skip: int = 0  # matching requests to let through first


class S3Faults:
    """Make chosen requests of one s3fs client fail the way S3 can fail them.

    Hooks on the client's botocore events, so s3fs, its retries and FileIO's S3 code all run
    as in production: ``before`` faults stop the request before it is sent, ``after`` faults
    replace the answer of a request the server carried out (a put that landed). s3fs shares
    one client per option set, so the faults hit every FileIO on these options; ``close``
    unregisters them.
    """

    def __init__(self, fs: Any, server: S3Server) -> None:
        if getattr(fs, "_s3", None) is None:
            fs.connect()
        self.server = server
        self.events = fs.s3.meta.events
        self.rules: list[_Rule] = []
        self.log: list[tuple[str, str, str]] = []  # (operation, key, fault) of every hit
        self._held: list[tuple[str, bytes]] = []  # puts that are "still in flight"
        self._hooks = [("before-parameter-build.s3", self._note), ("before-call.s3", self._before),
                       ("after-call.s3", self._after)]
        for event, hook in self._hooks:
            self.events.register(event, hook)

    def add(self, ops: str | tuple[str, ...], key: str, when: str, action: str, times: int = 1,
            skip: int = 0) -> None:
        """Fault requests of ``ops`` whose key matches the regular expression ``key``."""
        self.rules.append(_Rule((ops,) if isinstance(ops, str) else ops, key, when, action, times, skip))

    def hold_put(self, key: str) -> None:
        """The next put of the key answers 409 and is not carried out yet: it lands (with its
        original bytes) right before the next PutObject of any key is sent -- a slow first try."""
        self.add("PutObject", key, "before", "hold")

    def clear(self) -> None:
        self.rules.clear()

    def close(self) -> None:
        for event, hook in self._hooks:
            self.events.unregister(event, hook)

    def _match(self, op: str, key: str, when: str) -> _Rule | None:
        for r in self.rules:
            if op in r.ops and re.search(r.key, key) and r.when == when and r.times != 0:
                if r.skip > 0:
                    r.skip -= 1
                    continue
                if r.times > 0:
                    r.times -= 1
                self.log.append((op, key, f"{when}:{r.action}"))
                return r
        return None

    def _note(self, params: dict[str, Any], context: dict[str, Any], event_name: str, **_: Any) -> None:
        context["fault_op"] = event_name.rsplit(".", 1)[-1]
        context["fault_key"] = str(params.get("Key", ""))
        body = params.get("Body")  # botocore has wrapped bytes in a BytesIO by now
        context["fault_body"] = body.getvalue() if hasattr(body, "getvalue") else body

    def _land_held(self) -> None:
        held, self._held = self._held, []
        client = self.server.boto3_client()
        for key, body in held:
            client.put_object(Bucket=self.server.bucket, Key=key, Body=body, IfNoneMatch="*")
            self.log.append(("PutObject", key, "held put landed"))

    def _raise(self, action: str) -> None:
        from botocore.exceptions import EndpointConnectionError, ReadTimeoutError

        if action == "timeout":
            raise ReadTimeoutError(endpoint_url=self.server.endpoint)
        raise EndpointConnectionError(endpoint_url=self.server.endpoint)

    def _before(self, context: dict[str, Any], **_: Any) -> Any:
        op, key = context.get("fault_op", ""), context.get("fault_key", "")
        if op == "PutObject" and self._held:
            self._land_held()
        rule = self._match(op, key, "before")
        if rule is None:
            return None
        if rule.action == "hold":
            self._held.append((key, context["fault_body"]))
            return _Answer(409), _conflict()
        if rule.action == "conflict":
            return _Answer(409), _conflict()
        self._raise(rule.action)
        return None

    def _after(self, http_response: Any, parsed: dict[str, Any], context: dict[str, Any], **_: Any) -> None:
        rule = self._match(context.get("fault_op", ""), context.get("fault_key", ""), "after")
        if rule is None:
            return
        if rule.action == "conflict":
            http_response.status_code = 409
            parsed.clear()
            parsed.update(_conflict())
            return
        self._raise(rule.action)


@pytest.fixture()
def s3_faults(s3_server: S3Server) -> Iterator[Any]:
    """``make(fs)`` -> an :class:`S3Faults` on that s3fs client, removed after the test."""
    made: list[S3Faults] = []

    def make(fs: Any) -> S3Faults:
        f = S3Faults(fs, s3_server)
        made.append(f)
        return f

    yield make
    for f in made:
        f.close()
