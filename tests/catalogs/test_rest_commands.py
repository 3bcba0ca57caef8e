"""paimon-cli's changing commands through a REST catalog: every snapshot is published by the
server's commit endpoint (base snapshot uuid, partition statistics), versions change through
their endpoints, what the API lacks is refused by name, and pypaimon 2.1 reads every result row
for row through the same server."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.catalog import load_catalog, resolve_catalog_options
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.io import fileio
from paimon_cli.core.schema.table_schema import Schema
from tests.catalogs.rest_helpers import (
    FIRST,
    NEW,
    OLD,
    SECOND,
    batch,
    cli,
    commits,
    isolate,
    jsonl,
    rows_of,
    seed,
    server_partitions,
    state,
    table_partitions,
    warehouse,
)
from tests.catalogs.rest_server import RestCatalogServer, iter_files
from tests.interop.pypaimon_peer import PyPaimon


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    isolate(tmp_path, monkeypatch)
    with RestCatalogServer(tmp_path / "root") as s:
        yield s


@pytest.fixture
def metadata_writes(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """(thread, path) of every snapshot, tag, branch or schema file and LATEST hint written:
    the client runs on the main thread, the server on its request threads. (EARLIEST is the
    expiration's, which runs on the files as Java's REST catalog runs it.)"""
    seen: list[tuple[str, str]] = []
    real_atomic, real_write = fileio.FileIO.try_write_atomic, fileio.FileIO.write_bytes

    def note(path: str) -> None:
        if any(f"/{d}/" in path for d in ("snapshot", "tag", "branch", "schema")) and not path.endswith("/EARLIEST"):
            seen.append((threading.current_thread().name, path))

    def atomic(self: fileio.FileIO, path: str, *a: Any, **kw: Any) -> Any:
        note(path)
        return real_atomic(self, path, *a, **kw)

    def write(self: fileio.FileIO, path: str, *a: Any, **kw: Any) -> Any:
        note(path)
        return real_write(self, path, *a, **kw)

    monkeypatch.setattr(fileio.FileIO, "try_write_atomic", atomic)
    monkeypatch.setattr(fileio.FileIO, "write_bytes", write)
    return seen


def by_client(writes: list[tuple[str, str]]) -> list[str]:
    return [p for t, p in writes if t == threading.main_thread().name]


def pypaimon_reads(pypaimon: PyPaimon, server: RestCatalogServer, reads: list[dict[str, Any]]
                   ) -> list[list[tuple[int, str, str]]]:
    """Rows pypaimon 2.1 reads through the REST server, one list per ``{"table", "tag"?}``, in
    one interpreter."""
    rest = pypaimon.with_catalog(server.client_options())
    ops = [{"op": "read", "warehouse": server.warehouse, "db": "db", **r} for r in reads]
    return [sorted((x["id"], x["dt"], x["v"]) for x in res["rows"]) for res in rest.run(ops)]


# -- the commit endpoint ---------------------------------------------------------------------------


def test_commits_go_through_the_endpoint_with_base_uuid_and_statistics(
        server: RestCatalogServer, metadata_writes: list[tuple[str, str]], tmp_path: Path) -> None:
    started = int(time.time() * 1000)
    wh = seed(server)
    csv = tmp_path / "in.csv"
    csv.write_text(f"id,dt,v\n5,{OLD},f\n")
    assert jsonl(cli(server, "write", "db.t", str(csv), "-o", "jsonl"))[0]["snapshot_id"] == 3
    sent = commits(server)
    assert [c["snapshot"]["id"] for c in sent] == [1, 2, 3]
    # each commit names its base by uuid, and the table by the id the server gave it
    assert [c["baseSnapshotUuid"] for c in sent] == [None, sent[0]["snapshot"]["uuid"], sent[1]["snapshot"]["uuid"]]
    assert {c["tableId"] for c in sent} == {server.tables[("db", "t")].uuid}
    # the statistics are the commit's own deltas per partition, values as the metastore names them
    first = {tuple(s["spec"].items()): s for s in sent[0]["statistics"]}
    assert {k: (s["recordCount"], s["fileCount"], s["totalBuckets"]) for k, s in first.items()} == {
        (("dt", OLD),): (1, 1, 1), (("dt", NEW),): (2, 1, 1)}
    assert all(started - 60_000 <= s["lastFileCreationTime"] <= time.time() * 1000 + 60_000 for s in first.values())
    # the server published them verbatim; paimon-cli wrote no snapshot file itself
    snap_dir = server.table_path("db", "t") / "snapshot"
    assert [json.loads((snap_dir / f"snapshot-{i}").read_text())["uuid"] for i in (1, 2, 3)] == [
        c["snapshot"]["uuid"] for c in sent]
    assert by_client(metadata_writes) == []
    assert server_partitions(server) == table_partitions(wh)

    # a compaction: files removed count negative in its statistics
    res = jsonl(cli(server, "compact", "db.t", "--full", "-o", "jsonl"))
    compact = commits(server)[-1]
    assert compact["snapshot"]["commitKind"] == "COMPACT" and compact["snapshot"]["id"] == res[0]["snapshot_id"]
    old = next(s for s in compact["statistics"] if s["spec"] == {"dt": OLD})
    assert (old["recordCount"], old["fileCount"]) == (2 - 3, 1 - 3)  # 3 files of 3 rows became 1 of 2 rows
    assert server_partitions(server) == table_partitions(wh)
    assert rows_of(wh) == [(1, OLD, "d"), (2, NEW, "b"), (3, NEW, "c"), (4, NEW, "e"), (5, OLD, "f")]
    assert by_client(metadata_writes) == []


def test_a_moved_base_is_replanned_on_the_latest_snapshot(server: RestCatalogServer) -> None:
    wh = seed(server, batches=(FIRST,))
    other = warehouse(server)
    # another writer commits while our commit is on its way: the server refuses our base
    server.inject("commitTable", action=lambda call: other.table("db.t").write(batch([(9, NEW, "z")]), expire=False))
    report = wh.table("db.t").write(batch(SECOND), expire=False)
    answers = [(c.body["snapshot"]["id"], c.answer) for c in server.calls_of("commitTable")]
    assert answers[1:] == [(2, {"success": False}), (2, {"success": True}), (3, {"success": True})]
    assert report.snapshot_id == 3
    assert rows_of(wh) == sorted([(1, OLD, "d"), (2, NEW, "b"), (3, NEW, "c"), (4, NEW, "e"), (9, NEW, "z")])


def test_a_refusal_that_persists_is_a_conflict_with_nothing_changed(server: RestCatalogServer, tmp_path: Path
                                                                    ) -> None:
    seed(server, options={"commit.max-retries": "1"}, batches=(FIRST,))
    before, files = state(server), dict(iter_files(server.table_path("db", "t")))
    server.inject("commitTable", 409, times=None)
    csv = tmp_path / "in.csv"
    csv.write_text(f"id,dt,v\n5,{OLD},f\n")
    res = cli(server, "write", "db.t", str(csv), code=5)
    assert "gave up after 2 attempts" in res.stderr
    assert len(server.calls_of("commitTable")) == 1 + 2
    assert state(server) == before and dict(iter_files(server.table_path("db", "t"))) == files


def test_an_unknown_outcome_is_found_by_uuid_before_planning_again(server: RestCatalogServer) -> None:
    """The server published the commit but its answer was lost, and the server could not be
    asked either: the commit does not plan a second one -- it finds its own snapshot by uuid."""
    wh = seed(server, batches=(FIRST,))
    server.inject("commitTable", 500, after=True)  # committed, answer lost
    server.inject("getTableSnapshot", 503, times=3)  # and looking fails for the client's attempts
    report = wh.table("db.t").write(batch(SECOND), expire=False)
    assert report.snapshot_id == 2
    assert [c.status for c in server.calls_of("commitTable")] == [200, 500]  # sent once, never twice
    assert state(server)["snapshots"] == [(1, "APPEND"), (2, "APPEND")]
    assert rows_of(wh) == [(1, OLD, "d"), (2, NEW, "b"), (3, NEW, "c"), (4, NEW, "e")]


def test_an_external_table_commits_through_its_files(server: RestCatalogServer, tmp_path: Path) -> None:
    """As Java: a REST catalog's external table has no catalog loader, so its snapshots are
    written by the client (without a lock) and its versions are its files'."""
    fs = load_catalog(resolve_catalog_options(warehouse=str(tmp_path / "ext")))
    fs.create_table("db.t", Schema.of(parse_columns("id BIGINT NOT NULL, v STRING"), primary_keys=["id"],
                                      options={"bucket": "1"}))
    cat = warehouse(server).catalog
    cat.create_database("db")
    cat.api.register_table("db", "x", str(tmp_path / "ext" / "db.db" / "t"))
    t = warehouse(server).table("db.x")
    t.write(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}), expire=False)
    t.create_tag("t1")
    assert not server.calls_of("commitTable") and not server.calls_of("createTag")
    assert [r["v"] for r in t.read().to_pylist()] == ["a"]


# -- every command, and pypaimon reading each result ---------------------------------------------------


@pytest.mark.pypaimon
def test_every_command_through_the_server_and_pypaimon_reads_each_result(
        server: RestCatalogServer, pypaimon: PyPaimon, metadata_writes: list[tuple[str, str]]) -> None:
    wh = seed(server, batches=(FIRST,))
    steps: dict[str, list[tuple[int, str, str]]] = {}

    def step(tag: str) -> None:
        cli(server, "tag", "create", "db.t", tag)
        steps[tag] = rows_of(wh)
        assert server_partitions(server) == table_partitions(wh), tag

    step("w1")
    wh.table("db.t").write(batch(SECOND), expire=False)
    step("w2")
    cli(server, "compact", "db.t", "--full")
    step("compacted")
    cli(server, "alter", "db.t", "--set", "file-index.bloom-filter.columns=v")
    assert server.calls_of("alterTable")
    cli(server, "rewrite-file-index", "db.t")
    step("indexed")
    cli(server, "rescale", "db.t", "--bucket-num", "2")
    assert server.calls_of("alterTable")[-1].body["changes"] == [{"action": "setOption", "key": "bucket",
                                                                  "value": "2"}]
    step("rescaled")
    cli(server, "expire-partitions", "db.t", "--expiration-time", "1d", "--timestamp-formatter", "yyyy-MM-dd")
    assert all(r[1] == NEW for r in rows_of(wh))
    step("expired-partitions")
    kinds = [c["snapshot"]["commitKind"] for c in commits(server)]
    assert kinds == ["APPEND", "APPEND", "COMPACT", "COMPACT", "OVERWRITE", "OVERWRITE"]
    assert [c.body["tagName"] for c in server.calls_of("createTag")] == list(steps)

    # expiration runs on the files, as Java's REST catalog expires (the API has no call for it)
    before = len(commits(server))
    res = jsonl(cli(server, "expire", "db.t", "--retain-max", "1", "--retain-min", "1", "-o", "jsonl"))
    assert res[0]["expired"] >= 1 and len(commits(server)) == before
    latest = rows_of(wh)

    reads = [{"table": "t"}] + [{"table": "t", "tag": t} for t in steps]
    got = pypaimon_reads(pypaimon, server, reads)
    assert got[0] == latest
    assert dict(zip(steps, got[1:], strict=True)) == steps

    # rollback through its endpoint; pypaimon reads the rolled-back table
    cli(server, "rollback", "db.t", "--tag", "w2")
    assert server.calls_of("rollbackTable")[-1].body["instant"] == {"type": "tag", "tagName": "w2"}
    assert rows_of(wh) == steps["w2"]
    assert pypaimon_reads(pypaimon, server, [{"table": "t"}]) == [steps["w2"]]
    assert by_client(metadata_writes) == []


def test_tags_and_branches_through_their_endpoints(server: RestCatalogServer,
                                                   metadata_writes: list[tuple[str, str]]) -> None:
    wh = seed(server)
    cli(server, "tag", "create", "db.t", "keep", "--snapshot", "1", "--time-retained", "7d")
    assert server.calls_of("createTag")[-1].body == {"tagName": "keep", "snapshotId": 1,
                                                     "timeRetained": f"{7 * 86_400_000} ms"}
    assert wh.table("db.t").list_tags().rows[0]["time_retained"] == "PT168H"
    cli(server, "tag", "create", "db.t", "brief", "--time-retained", "1s")
    time.sleep(1.2)
    expired = jsonl(cli(server, "tag", "expire", "db.t", "-o", "jsonl"))
    assert {r["tag"] for r in expired} == {"brief"}
    assert [c.params["tag"] for c in server.calls_of("deleteTag")] == ["brief"]

    # no rename in the API: refused by name, nothing changed
    before = dict(iter_files(server.root))
    res = cli(server, "tag", "rename", "db.t", "keep", "kept", code=1)
    assert "tag rename" in res.stderr and "REST" in res.stderr and "nothing was changed" in res.stderr
    assert dict(iter_files(server.root)) == before

    cli(server, "branch", "create", "db.t", "b1", "--tag", "keep")
    assert server.calls_of("createBranch")[-1].body == {"branch": "b1", "fromTag": "keep"}
    b1 = warehouse(server).table("db.t", branch="b1")
    assert sorted((r["id"], r["v"]) for r in b1.read().to_pylist()) == [(1, "a"), (2, "b"), (3, "c")]
    b1.write(batch([(7, NEW, "g")]), expire=False)  # a branch commits through the endpoint too
    assert [c["snapshot"]["id"] for c in commits(server, "db.t$branch_b1")] == [2]
    cli(server, "branch", "fast-forward", "db.t", "b1")
    assert server.calls_of("forwardBranch")
    assert rows_of(wh) == [(1, OLD, "a"), (2, NEW, "b"), (3, NEW, "c"), (7, NEW, "g")]
    cli(server, "tag", "delete", "db.t", "keep")
    cli(server, "branch", "delete", "db.t", "b1")
    assert server.calls_of("dropBranch") and [c.params["tag"] for c in server.calls_of("deleteTag")][-1] == "keep"
    assert wh.table("db.t").list_branches().rows == []
    assert by_client(metadata_writes) == []


def test_what_the_api_lacks_is_refused_by_name(server: RestCatalogServer) -> None:
    seed(server)
    before = dict(iter_files(server.root))
    for args in (["purge-files", "db.t", "--yes"], ["repair", "db.t"]):
        res = cli(server, *args, code=1)
        assert args[0] in res.stderr and "REST catalog" in res.stderr and "nothing was changed" in res.stderr
    assert dict(iter_files(server.root)) == before
    assert len(server.calls_of("commitTable")) == 2


@pytest.mark.pypaimon
def test_health_and_maintain_through_the_server(server: RestCatalogServer, pypaimon: PyPaimon,
                                                tmp_path: Path) -> None:
    wh = seed(server, options={"write-only": "true", "num-sorted-run.compaction-trigger": "3",
                               "snapshot.num-retained.max": "2", "snapshot.num-retained.min": "1"},
              batches=tuple([(i, NEW, f"v{i}")] for i in range(6)))
    health = jsonl(cli(server, "health", "db.t", "-o", "jsonl"))
    assert {r["kind"] for r in health} >= {"snapshots", "sorted_runs"}
    report = tmp_path / "run.json"
    cli(server, "maintain", "db.t", "--report", str(report))
    run = json.loads(report.read_text())
    actions = {a["action"]: a["outcome"] for t in run["tables"] for a in t["actions"]}
    assert actions == {"compact": "done", "expire": "done"}, run
    assert commits(server)[-1]["snapshot"]["commitKind"] == "COMPACT"
    assert not (server.table_path("db", "t") / "maintain.lease").exists()
    expected = [(i, NEW, f"v{i}") for i in range(6)]
    assert rows_of(wh) == expected
    assert len(state(server)["snapshots"]) <= 2
    assert pypaimon_reads(pypaimon, server, [{"table": "t"}]) == [expected]
    assert {r["kind"] for r in jsonl(cli(server, "health", "db.t", "-o", "jsonl"))} <= {None, "snapshots"}


def test_metadata_upkeep_through_the_server(server: RestCatalogServer,
                                            metadata_writes: list[tuple[str, str]]) -> None:
    """compact-manifest and remove-unexisting-files commit through the endpoint (Java sends no
    statistics for a manifest rewrite); orphan and changelog cleanup work on the files."""
    wh = seed(server, options={"manifest.merge-min-count": "100"})
    wh.table("db.t").write(batch([(8, NEW, "h")]), expire=False)
    cli(server, "compact-manifest", "db.t")
    last = commits(server)[-1]
    assert last["snapshot"]["commitKind"] == "COMPACT" and last["statistics"] == []
    cli(server, "remove-unexisting-files", "db.t")  # nothing is missing: nothing committed
    assert commits(server)[-1] == last
    cli(server, "remove-orphan-files", "db.t", "--older-than", "1h")
    cli(server, "expire-changelogs", "db.t", "--retain-max", "1")
    assert rows_of(wh) == [(1, OLD, "d"), (2, NEW, "b"), (3, NEW, "c"), (4, NEW, "e"), (8, NEW, "h")]
    assert by_client(metadata_writes) == []
