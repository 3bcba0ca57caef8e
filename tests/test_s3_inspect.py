"""The same inspections work against an S3-compatible server.

A warehouse written by pypaimon 2.1 (``pypaimon_tables``) is copied to a local directory and
uploaded, whole, to the moto bucket. Every ``list``/``inspect`` command then runs in-process
against both copies and the JSON must be identical once the warehouse prefix is swapped --
the only thing allowed to differ. ``create`` on S3 publishes schema-0 with a conditional put;
errors keep their exit codes and one-line messages there too.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.interop.pypaimon_fixtures import PyPaimonTables
from tests.s3_fixtures import S3Server

# the tables are pypaimon-written, so the peer venv is needed as well as moto
pytestmark = [pytest.mark.s3, pytest.mark.pypaimon]

INSPECT_KINDS = ["snapshots", "schemas", "options", "files", "manifests", "partitions", "buckets",
                 "tags", "branches", "consumers", "table"]
TABLES = ["pk_orders", "events"]
COMMANDS: list[list[str]] = [
    ["list"],
    ["list", "peer"],
    *[["inspect", kind, f"peer.{t}"] for t in TABLES for kind in INSPECT_KINDS],
    *[["inspect", kind, "peer.pk_orders", "--branch", "b1"] for kind in ("snapshots", "files", "table")],
    ["inspect", "files", "peer.pk_orders", "--tag", "v2"],
]
# kinds whose output names files, so the prefix swap must actually happen there
HAS_PATHS = {"files", "table"}
# the append table has no options, tags, branches or consumers; everything else has rows
EMPTY = {f"inspect {kind} peer.events" for kind in ("options", "tags", "branches", "consumers")}


@dataclass
class Mirror:
    """One warehouse, twice: a local directory and its upload to the moto bucket."""

    local: str
    s3: str  # s3://warehouse/<prefix>


@pytest.fixture
def runner(monkeypatch: pytest.MonkeyPatch) -> CliRunner:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    return CliRunner()


@pytest.fixture(scope="module")
def mirror(pypaimon_tables: PyPaimonTables, s3_server: S3Server,
           tmp_path_factory: pytest.TempPathFactory) -> Mirror:
    # a private copy: we adjust one mtime below and must not touch the shared fixture
    local = tmp_path_factory.mktemp("s3-mirror") / "wh"
    shutil.copytree(pypaimon_tables.warehouse, local)
    s3 = s3_server.fresh_warehouse("inspect")
    fs = s3_server.new_s3fs()
    bucket_path = s3.removeprefix("s3://")
    fs.put(str(local) + "/", bucket_path + "/", recursive=True)
    uploaded = sorted(p.removeprefix(bucket_path + "/") for p in fs.find(bucket_path))
    on_disk = sorted(str(p.relative_to(local)) for p in local.rglob("*") if p.is_file())
    assert uploaded == on_disk

    # A branch's create_time is a modification time: Java (and we) take the branch
    # directory's mtime on a local disk; an object store has no directories, so there we
    # take the branch's first schema file's LastModified -- which is the upload time. Give
    # the local branch directory that same time so both copies describe one history.
    branch = f"{pypaimon_tables.db}.db/{pypaimon_tables.pk_table}/branch/branch-{pypaimon_tables.branch}"
    uploaded_at = fs.info(f"{bucket_path}/{branch}/schema/schema-0")["LastModified"].timestamp()
    os.utime(local / branch, (uploaded_at, uploaded_at))
    return Mirror(local=str(local), s3=s3)


def _fs_args(s3_server: S3Server) -> list[str]:
    return [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]


def _ok_json(runner: CliRunner, args: list[str], env: dict[str, str] | None = None) -> Any:
    result = runner.invoke(app, args, env=env)
    assert result.exit_code == 0, f"{args}: {result.stderr or result.output}"
    return json.loads(result.stdout)


def _swap_prefix(obj: Any, old: str, new: str, swapped: list[str]) -> Any:
    """``old`` -> ``new`` at the start of every string (path values); records each swap."""
    if isinstance(obj, str):
        if obj == old or obj.startswith(old + "/"):
            swapped.append(obj)
            return new + obj[len(old):]
        return obj
    if isinstance(obj, list):
        return [_swap_prefix(x, old, new, swapped) for x in obj]
    if isinstance(obj, dict):
        return {k: _swap_prefix(v, old, new, swapped) for k, v in obj.items()}
    return obj


def _contains(obj: Any, text: str) -> bool:
    return text in json.dumps(obj)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c))
def test_s3_output_equals_local(runner: CliRunner, s3_server: S3Server, mirror: Mirror,
                                command: list[str]) -> None:
    local = _ok_json(runner, [*command, "-w", mirror.local, "-o", "json"])
    remote = _ok_json(runner, [*command, "-w", mirror.s3, *_fs_args(s3_server), "-o", "json"])
    assert bool(local) == (" ".join(command) not in EMPTY), local
    swapped: list[str] = []
    assert _swap_prefix(remote, mirror.s3, mirror.local, swapped) == local
    if command[0] == "inspect" and command[1] in HAS_PATHS:
        assert swapped, "expected warehouse paths in the output"
    assert not _contains(local, mirror.s3) and not _contains(local, "s3://")


def test_fs_options_from_environment(runner: CliRunner, s3_server: S3Server, mirror: Mirror) -> None:
    """PAIMON_FS_OPTIONS (comma-separated k=v) reaches the filesystem like --fs-option does."""
    env = {"PAIMON_FS_OPTIONS": ",".join(s3_server.fs_option_pairs())}
    for command in (["list", "peer"], ["inspect", "snapshots", "peer.pk_orders"],
                    ["inspect", "files", "peer.events"]):
        via_flag = _ok_json(runner, [*command, "-w", mirror.s3, *_fs_args(s3_server), "-o", "json"])
        via_env = _ok_json(runner, [*command, "-w", mirror.s3, "-o", "json"], env=env)
        assert via_env == via_flag and via_env


def test_read_to_s3_takes_fs_options_from_environment(runner: CliRunner, s3_server: S3Server, mirror: Mirror) -> None:
    """``read --to s3://...`` opens its target with PAIMON_FS_OPTIONS too (it ignored them)."""
    import pyarrow.parquet as pq

    env = {"PAIMON_FS_OPTIONS": ",".join(s3_server.fs_option_pairs())}
    target = f"{s3_server.fresh_warehouse('exports')}/events.parquet"
    res = runner.invoke(app, ["read", "peer.events", "-w", mirror.s3, "--to", target], env=env)
    assert res.exit_code == 0, res.output
    rows = _ok_json(runner, ["read", "peer.events", "-w", mirror.s3, "-o", "json"], env=env)
    with s3_server.new_s3fs().open(target.removeprefix("s3://"), "rb") as f:
        assert pq.read_table(f).num_rows == len(rows) > 0


def _one_error_line(result: Any) -> str:
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert "Traceback" not in result.stderr
    assert result.stdout == ""
    return lines[0]


def test_missing_table_on_s3_exits_3(runner: CliRunner, s3_server: S3Server, mirror: Mirror) -> None:
    result = runner.invoke(app, ["inspect", "snapshots", "peer.no_such_table", "-w", mirror.s3,
                                 *_fs_args(s3_server)])
    assert result.exit_code == 3, result.output
    assert "no_such_table" in _one_error_line(result)


def test_create_on_s3_uses_conditional_put(runner: CliRunner, s3_server: S3Server,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.io.fileio import FileIO, load_file_io

    wh = s3_server.fresh_warehouse("create")
    puts: list[tuple[str, bool]] = []
    real_put = FileIO._s3_put_if_absent

    def spy(self: FileIO, path: str, data: bytes) -> bool:
        created = real_put(self, path, data)
        puts.append((path, created))
        return created

    monkeypatch.setattr(FileIO, "_s3_put_if_absent", spy)
    create = ["create", "shop.orders", "--schema", "id BIGINT NOT NULL, name STRING, dt STRING",
              "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2",
              "-w", wh, *_fs_args(s3_server)]
    result = runner.invoke(app, create)
    assert result.exit_code == 0, result.output

    # schema-0 went through the conditional put (and won it)
    schema_puts = [(p, ok) for p, ok in puts if p.endswith("/shop.db/orders/schema/schema-0")]
    assert schema_puts == [(f"{wh}/shop.db/orders/schema/schema-0", True)], puts
    key = f"{wh.removeprefix('s3://warehouse/')}/shop.db/orders/schema/schema-0"
    body = s3_server.boto3_client().get_object(Bucket=s3_server.bucket, Key=key)["Body"].read()
    schema = json.loads(body)
    assert [f["name"] for f in schema["fields"]] == ["id", "name", "dt"]
    assert schema["primaryKeys"] == ["id", "dt"] and schema["partitionKeys"] == ["dt"]
    assert schema["options"] == {"bucket": "2"}

    # the server itself enforces If-None-Match: a second conditional put is refused
    fio = load_file_io(wh, s3_server.storage_options)
    assert fio.try_write_atomic(f"{wh}/shop.db/orders/schema/schema-0", b"{}") is False
    assert s3_server.boto3_client().get_object(Bucket=s3_server.bucket, Key=key)["Body"].read() == body

    # and the table reads back through the CLI
    rows = _ok_json(runner, ["inspect", "schemas", "shop.orders", "-w", wh, *_fs_args(s3_server),
                             "-o", "json"])
    assert [(r["schema_id"], r["primary_keys"], r["partition_keys"]) for r in rows] == [
        (0, ["id", "dt"], ["dt"])]  # -o json: key lists are arrays

    # a second create is "already exists" (4), one line, and leaves schema-0 alone
    again = runner.invoke(app, create)
    assert again.exit_code == 4, again.output
    assert "shop.orders" in _one_error_line(again)
    assert s3_server.boto3_client().get_object(Bucket=s3_server.bucket, Key=key)["Body"].read() == body
    listed = s3_server.boto3_client().list_objects_v2(
        Bucket=s3_server.bucket, Prefix=key.rsplit("/", 1)[0] + "/")["Contents"]
    assert [o["Key"].rsplit("/", 1)[-1] for o in listed] == ["schema-0"]
