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
import socket
import uuid
from dataclasses import dataclass, field
from typing import Any, Iterator

import pytest

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


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


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
    # a proxy in the environment would swallow loopback traffic
    for k in ("NO_PROXY", "no_proxy"):
        current = os.environ.get(k, "")
        mp.setenv(k, ",".join(p for p in (current, "127.0.0.1", "localhost") if p))

    server = ThreadedMotoServer(ip_address="127.0.0.1", port=_free_port(), verbose=False)
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
