"""remove-orphan-files and rollback on S3 (moto): object listings, LastModified, no directories."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.s3_fixtures import S3Server

pytestmark = pytest.mark.s3


def _cli(runner: CliRunner, s3: S3Server, wh: str, *args: str) -> Any:
    fs = [x for p in s3.fs_option_pairs() for x in ("--fs-option", p)]
    return runner.invoke(app, [*args, "-w", wh, *fs])


def test_orphans_and_rollback_on_s3(s3_server: S3Server, tmp_path: Any) -> None:
    runner = CliRunner()
    wh = s3_server.fresh_warehouse("orphans")
    r = _cli(runner, s3_server, wh, "create", "db.t", "--schema", "id INT NOT NULL, dt STRING NOT NULL, v STRING",
             "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=1", "--option", "write-only=true")
    assert r.exit_code == 0, r.output
    for i in range(3):
        p = tmp_path / f"in{i}.csv"
        p.write_text(f"id,dt,v\n{i},a,v{i}\n")
        r = _cli(runner, s3_server, wh, "write", "db.t", str(p))
        assert r.exit_code == 0, r.output
    s3 = s3_server.boto3_client()
    prefix = wh.removeprefix(f"s3://{s3_server.bucket}/") + "/db.db/t/"
    s3.put_object(Bucket=s3_server.bucket, Key=prefix + "dt=a/bucket-0/data-orphan-0.parquet", Body=b"x" * 7)
    s3.put_object(Bucket=s3_server.bucket, Key=prefix + "manifest/manifest-orphan-0", Body=b"y" * 3)
    time.sleep(1.1)  # S3 LastModified has second resolution; the cutoff is "now"

    dry = _cli(runner, s3_server, wh, "remove-orphan-files", "db.t", "--older-than", "P0D", "--force",
               "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    rows = json.loads(dry.stdout)
    assert sorted((r["path"], r["bytes"]) for r in rows) == [
        ("dt=a/bucket-0/data-orphan-0.parquet", 7), ("manifest/manifest-orphan-0", 3)]
    real = _cli(runner, s3_server, wh, "remove-orphan-files", "db.t", "--older-than", "P0D", "--force", "-o", "json")
    assert real.exit_code == 0, real.output
    assert json.loads(real.stdout) == rows
    keys = {o["Key"][len(prefix):] for o in s3.list_objects_v2(Bucket=s3_server.bucket, Prefix=prefix)["Contents"]}
    assert "manifest/manifest-orphan-0" not in keys and "dt=a/bucket-0/data-orphan-0.parquet" not in keys

    rb = _cli(runner, s3_server, wh, "rollback", "db.t", "--snapshot", "1", "-o", "json")
    assert rb.exit_code == 0, rb.output
    gone = {r["path"] for r in json.loads(rb.stdout)}
    keys_after = {o["Key"][len(prefix):] for o in s3.list_objects_v2(Bucket=s3_server.bucket, Prefix=prefix)["Contents"]}
    assert gone and not (gone & keys_after)
    read = _cli(runner, s3_server, wh, "read", "db.t", "-o", "json")
    assert read.exit_code == 0 and [r["id"] for r in json.loads(read.stdout)] == [0]
    left = _cli(runner, s3_server, wh, "remove-orphan-files", "db.t", "--older-than", "P0D", "--force",
                "--dry-run", "-o", "json")
    assert json.loads(left.stdout) == []  # the rollback left no orphans


def test_external_root_on_s3_is_cleaned_only_while_no_other_table_uses_it(s3_server: S3Server, tmp_path: Any) -> None:
    runner = CliRunner()
    wh = s3_server.fresh_warehouse("orphans-ext")
    ext = wh + "-ext"

    def create(name: str, root: str) -> None:
        r = _cli(runner, s3_server, wh, "create", name, "--schema", "id INT NOT NULL, dt STRING NOT NULL",
                 "--partition-by", "dt", "--option", f"data-file.external-paths={root}")
        assert r.exit_code == 0, r.output

    create("db.a", f"{ext}/a")
    create("db.b", f"{ext}/b")
    (tmp_path / "in.csv").write_text("id,dt\n1,x\n")
    assert _cli(runner, s3_server, wh, "write", "db.a", str(tmp_path / "in.csv")).exit_code == 0
    s3 = s3_server.boto3_client()
    key = ext.removeprefix(f"s3://{s3_server.bucket}/") + "/a/dt=x/bucket-0/data-0a0a0a0a-1111-2222-3333-444444444444-0.parquet"
    s3.put_object(Bucket=s3_server.bucket, Key=key, Body=b"x" * 5)
    time.sleep(1.1)
    args = ("remove-orphan-files", "db.a", "--older-than", "P0D", "--force", "--external-paths", "-o", "json")
    dry = _cli(runner, s3_server, wh, *args, "--dry-run")
    assert dry.exit_code == 0, dry.output
    assert json.loads(dry.stdout) == [{"path": f"s3://{s3_server.bucket}/{key}", "kind": "data", "bytes": 5}]
    create("other.c", f"{ext}/a/")  # now another table shares the root
    refused = _cli(runner, s3_server, wh, *args)
    assert refused.exit_code == 6 and "other.c: data-file.external-paths in schema-0" in refused.stderr
    assert s3.head_object(Bucket=s3_server.bucket, Key=key)["ContentLength"] == 5
