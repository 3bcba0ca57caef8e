"""Commits on GCS and Azure Blob, against real emulators on loopback.

Object stores have no atomic rename: a snapshot (schema, tag, statistics, maintain lease) is published with
a create-if-absent the *server* decides -- ``ifGenerationMatch=0`` on GCS (fake-gcs-server,
tests/gcs_fixtures.py), ``If-None-Match: *`` on Azure (Azurite, tests/azure_fixtures.py) --
and an ambiguous answer is decided by reading the object back, as on S3. Every test runs on
both stores; the CLI end-to-end run with Java Paimon 0.9 reading the result is in
tests/interop/test_cloud_commits_java.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.errors import OutcomeUnknown, UnsafeRefused
from paimon_cli.core.io.fileio import FileIO, join
from tests.test_concurrent_write import Target, cli, concurrent_appends, create, key, read_cli, run, write_parquet

STORES = [pytest.param("gcs", marks=pytest.mark.gcs, id="gcs"),
          pytest.param("azure", marks=pytest.mark.azure, id="azure")]  # the fixture is `<name>_server`
ALIASES = {"gcs": ("gs", "gcs"), "azure": ("az", "abfs", "abfss")}


@pytest.fixture(params=STORES)
def store(request: pytest.FixtureRequest) -> Any:
    """The emulator of the store under test (GcsServer or AzureServer)."""
    server = request.getfixturevalue(f"{request.param}_server")
    server.kind = request.param
    return server


def target(store: Any, label: str) -> Target:
    return Target(store.fresh_warehouse(label), store.fs_option_pairs(), store.storage_options)


def test_write_if_absent_has_one_winner(store: Any) -> None:
    for scheme in ALIASES[store.kind]:
        fio = FileIO(store.fresh_warehouse("atomic", scheme=scheme), store.storage_options)
        path = join(fio.root, "db.db/t/snapshot/snapshot-1")
        assert fio.try_write_atomic(path, b"ours")
        assert not fio.try_write_atomic(path, b"theirs")  # the store refused: another writer's file
        assert fio.try_write_atomic(path, b"ours")  # our own bytes: a retried create of ours
        assert fio.read_bytes(path) == b"ours"
        # the refusal comes from the server, not from a check in this process
        assert not fio._write_if_absent(path, b"theirs")
        assert fio.read_bytes(path) == b"ours"


def test_a_landed_create_whose_answer_was_lost_is_ours(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The put lands, the client sees an error (first round) or its own retry's "exists"."""
    fio = FileIO(store.fresh_warehouse("landed"), store.storage_options)
    real = fio.fs.pipe_file
    answers = [ConnectionResetError("connection reset by peer"), FileExistsError("412/409 on the retry")]

    def landed_then_lost(path: str, data: bytes, **kw: Any) -> None:
        real(path, data, **kw)
        raise answers.pop(0)

    monkeypatch.setattr(fio.fs, "pipe_file", landed_then_lost)
    for i in range(2):
        path = join(fio.root, f"snapshot/snapshot-{i + 1}")
        assert fio.try_write_atomic(path, b"ours", retry_waits_ms=(1, 1))
        assert fio.read_bytes(path) == b"ours"
    assert answers == []


def test_an_undecidable_create_raises_outcome_unknown(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fio = FileIO(store.fresh_warehouse("unknown"), store.storage_options)
    path = join(fio.root, "snapshot/snapshot-1")

    def down(*_: Any, **__: Any) -> None:
        raise ConnectionResetError("connection reset by peer")

    monkeypatch.setattr(fio.fs, "pipe_file", down)
    monkeypatch.setattr(fio.fs, "cat_file", down)
    with pytest.raises(OutcomeUnknown, match="cannot tell whether the write-if-absent landed"):
        fio.try_write_atomic(path, b"ours", retry_waits_ms=(1, 1))


def test_a_client_without_conditional_create_is_refused(store: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fio = FileIO(store.fresh_warehouse("old"), store.storage_options)

    async def old_pipe_file(path: str, data: bytes) -> None:  # no mode= / overwrite=
        raise AssertionError("must not be called")

    monkeypatch.setattr(fio.fs, "_pipe_file", old_pipe_file)
    lib = {"gcs": "gcsfs", "azure": "adlfs"}[store.kind]
    with pytest.raises(UnsafeRefused, match=f"this {lib} has no conditional put"):
        fio.try_write_atomic(join(fio.root, "snapshot/snapshot-1"), b"x")


def test_maintain_lease_and_takeover_on_the_store(store: Any) -> None:
    """The maintain lease and its takeover marker go through the same create-if-absent."""
    from paimon_cli.core.maintain.lease import Lease, LeaseHeld

    fio = FileIO(store.fresh_warehouse("lease"), store.storage_options)
    table = join(fio.root, "db.db/t")
    clock = [1_000_000]
    first = Lease.acquire(fio, table, "first", ttl_millis=1000, clock=lambda: clock[0])
    with pytest.raises(LeaseHeld, match="leased by first"):
        Lease.acquire(fio, table, "second", ttl_millis=1000, clock=lambda: clock[0])
    clock[0] += 5000  # the first run died: its lease expired
    marker = join(table, f"maintain.lease.{first.info.token}.takeover")
    assert fio.try_write_atomic(marker, b"another taker")  # another run won the takeover marker
    with pytest.raises(LeaseHeld, match="is being taken over by another run"):
        Lease.acquire(fio, table, "late", ttl_millis=1000, clock=lambda: clock[0])
    fio.delete(marker)
    taker = Lease.acquire(fio, table, "taker", ttl_millis=1000, clock=lambda: clock[0])
    assert taker.info.token != first.info.token
    assert not first.renew() and first.lost == "the lease was taken over by another run"
    taker.release()
    assert fio.list_names(table) == []


def test_a_store_without_verified_create_is_refused_by_name(tmp_path: Path) -> None:
    """memory:// (any fsspec store we have not verified) stays read-only: the CLI says which
    filesystems can take commits, and nothing is written."""
    res = run(cli("create", "db.t", "--schema", "id INT", "-w", f"memory://refused-{tmp_path.name}"))
    assert res.returncode == 6, res.stderr
    assert "no verified write-if-absent for filesystem 'memory'" in res.stderr
    assert "GCS (gs://, gcs://) and Azure Blob (az://, abfs://, abfss://)" in res.stderr
    with pytest.raises(UnsafeRefused, match=r"commits are supported on local disks, S3 \(s3://\), GCS"):
        FileIO("memory://refused").try_write_atomic("memory://refused/x", b"x")


def rows_between(lo: int, hi: int, tag: str) -> list[dict[str, Any]]:
    return [{"id": i, "dt": "2024-01-01" if i % 2 else "2024-01-02", "v": f"{tag}{i}", "amount": i * 0.5}
            for i in range(lo, hi)]


def run_ok(args: list[str]) -> str:
    res = run(args)
    assert res.returncode == 0, res.stderr
    return res.stdout


def cli_table_lifecycle(store: Any, tmp_path: Path) -> tuple[Target, list[dict[str, Any]]]:
    """create, write, compact, tag, expire, inspect and read on the store, all through the CLI;
    returns the table's target and its rows. Run (with Java Paimon 0.9 reading the result) by
    tests/interop/test_cloud_commits_java.py."""
    t = target(store, "cli")
    create(t, "t", "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2")
    first, second = rows_between(0, 40, "a"), rows_between(20, 60, "b")
    for i, rows in enumerate((first, second)):
        run_ok(cli("write", "db.t", write_parquet(tmp_path / f"in{i}.parquet", rows), *t.args()))
    out = json.loads(run_ok(cli("compact", "db.t", "--full", "--no-expire", "-o", "json", *t.args())))
    assert out[0]["snapshot_id"] == 3
    run_ok(cli("tag", "create", "db.t", "before-expire", "--snapshot", "2", *t.args()))
    run_ok(cli("expire", "db.t", "--retain-max", "1", "--retain-min", "1", "--older-than", "0s", *t.args()))
    snaps = json.loads(run_ok(cli("inspect", "snapshots", "db.t", "-o", "json", *t.args())))
    assert [(s["snapshot_id"], s["commit_kind"]) for s in snaps] == [(3, "COMPACT")]
    tags = json.loads(run_ok(cli("tag", "list", "db.t", "-o", "json", *t.args())))
    assert [x["tag_name"] for x in tags] == ["before-expire"]
    files = json.loads(run_ok(cli("inspect", "files", "db.t", "-o", "json", *t.args())))
    assert {f["level"] for f in files} == {5} and len(files) == 4  # 2 partitions x 2 buckets
    expected = list({r["id"]: r for r in first + second}.values())  # the second write wins on 20..39
    got = read_cli(t, "t")
    assert sorted(map(key, got)) == sorted(map(key, expected))
    at_tag = json.loads(run_ok(cli("read", "db.t", "--tag", "before-expire", "-o", "json", *t.args())))
    assert sorted(map(key, at_tag)) == sorted(map(key, expected))
    return t, expected


@pytest.mark.slow
def test_concurrent_writers_each_land_once(store: Any, tmp_path: Path) -> None:
    """Several `paimon-cli write` processes commit into one table at once: snapshots 1..N*K,
    each exactly once, every row readable (the checks of tests/test_concurrent_write.py)."""
    t = target(store, "concurrent")
    create(t, "ap", "--partition-by", "dt")
    concurrent_appends(t, tmp_path, "ap")
