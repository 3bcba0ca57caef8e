"""The test REST catalog server is honest: pypaimon 2.1's own REST catalog client (an
independent implementation of the protocol) creates, writes, reads, tags, branches and rolls back
through it, and what the server wrote is a plain Paimon table any reader can open."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.catalogs.rest_server import RestCatalogServer, iter_files
from tests.interop.pypaimon_peer import PyPaimon, PyPaimonError

pytestmark = pytest.mark.pypaimon

COLUMNS = [("id", "int64"), ("dt", "string"), ("v", "string")]
FIRST = [{"id": 1, "dt": "a", "v": "x"}, {"id": 2, "dt": "b", "v": "y"}]
SECOND = [{"id": 1, "dt": "a", "v": "z"}, {"id": 3, "dt": "a", "v": "w"}]


def _sorted(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: (r["dt"], r["id"]))


def _merged(*batches: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out: dict[tuple[int, str], dict[str, Any]] = {}
    for batch in batches:
        for r in batch:
            out[(r["id"], r["dt"])] = r
    return _sorted(list(out.values()))


def _post(server: RestCatalogServer, path: str, body: Any) -> tuple[int, Any]:
    req = urllib.request.Request(server.uri + path, method="POST", data=json.dumps(body).encode(),
                                 headers={"Authorization": f"Bearer {server.token}"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            data = r.read()
            return r.status, json.loads(data) if data else None
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"null")


@pytest.fixture
def server(tmp_path: Path) -> Any:
    with RestCatalogServer(tmp_path / "root") as s:
        yield s


def test_pypaimon_round_trip_through_the_server(server: RestCatalogServer, pypaimon: PyPaimon) -> None:
    rest = pypaimon.with_catalog(server.client_options())
    wh = server.warehouse
    path = rest.create_table(wh, "db", "t", COLUMNS, primary_keys=["id", "dt"], partition_keys=["dt"],
                             options={"bucket": "1"})
    assert path == f"file://{server.root}/db.db/t"
    assert rest.write(wh, "db", "t", FIRST) == 1
    assert rest.write(wh, "db", "t", SECOND) == 2
    assert _sorted(rest.read(wh, "db", "t")) == _merged(FIRST, SECOND)
    assert rest.list_tables(wh, "db") == ["t"]

    # the client committed through the endpoint, each commit based on the one before
    commits = [c.body for c in server.calls_of("commitTable")]
    assert [c["snapshot"]["id"] for c in commits] == [1, 2]
    assert commits[0]["baseSnapshotUuid"] is None
    assert commits[1]["baseSnapshotUuid"] == commits[0]["snapshot"]["uuid"]
    assert all(c["tableId"] == server.tables[("db", "t")].uuid for c in commits)
    # statistics are the commit's deltas per partition
    first_stats = {s["spec"]["dt"]: s for s in commits[0]["statistics"]}
    assert {k: (v["recordCount"], v["fileCount"]) for k, v in first_stats.items()} == {"a": (1, 1), "b": (1, 1)}
    # the server published the snapshot the client sent, verbatim
    snap_dir = server.root / "db.db" / "t" / "snapshot"
    for c in commits:
        written = json.loads((snap_dir / f"snapshot-{c['snapshot']['id']}").read_text())
        assert written == c["snapshot"]
    assert (snap_dir / "LATEST").read_text() == "2"
    assert rest.latest_snapshot(wh, "db", "t") == {"id": 2, "uuid": commits[1]["snapshot"]["uuid"],
                                                   "commit_kind": "APPEND"}

    # the files are a plain Paimon table: pypaimon's filesystem catalog reads the same rows
    assert _sorted(pypaimon.read(str(server.root), "db", "t")) == _merged(FIRST, SECOND)

    # a tag made by the server, read back through it
    rest.catalog_create_tag(wh, "db", "t", "t1", snapshot_id=1)
    assert server.calls_of("createTag") and rest.catalog_list_tags(wh, "db", "t") == ["t1"]
    assert _sorted(rest.read(wh, "db", "t", tag="t1")) == _sorted(FIRST)

    # a branch made by the server (pypaimon's catalog branch manager), read through it
    rest.create_branch(wh, "db", "t", "b1", from_tag="t1")
    assert server.calls_of("createBranch")
    assert _sorted(rest.read(wh, "db", "t", branch="b1")) == _sorted(FIRST)

    # rollback runs on the server; the latest snapshot is snapshot 1 again, as it was written
    rest.rollback(wh, "db", "t", tag="t1")
    assert [c.body["instant"] for c in server.calls_of("rollbackTable")] == [{"type": "tag", "tagName": "t1"}]
    assert _sorted(rest.read(wh, "db", "t")) == _sorted(FIRST)
    assert rest.latest_snapshot(wh, "db", "t") == {"id": 1, "uuid": commits[0]["snapshot"]["uuid"],
                                                   "commit_kind": "APPEND"}
    assert not (snap_dir / "snapshot-2").exists()

    # and commits go on from the rolled-back base
    assert rest.write(wh, "db", "t", SECOND) == 2
    assert server.calls_of("commitTable")[-1].body["baseSnapshotUuid"] == commits[0]["snapshot"]["uuid"]
    assert _sorted(rest.read(wh, "db", "t")) == _merged(FIRST, SECOND)


def test_a_commit_on_a_moved_base_is_refused(server: RestCatalogServer, pypaimon: PyPaimon) -> None:
    rest = pypaimon.with_catalog(server.client_options())
    wh = server.warehouse
    rest.create_table(wh, "db", "t", COLUMNS, primary_keys=["id", "dt"], partition_keys=["dt"],
                      options={"bucket": "1"})
    rest.write(wh, "db", "t", FIRST)
    rest.write(wh, "db", "t", SECOND)
    first, second = (c.body for c in server.calls_of("commitTable"))
    table_dir = server.root / "db.db" / "t"
    before = dict(iter_files(table_dir))
    url = "/v1/paimon/databases/db/tables/t/commit"

    stale = {**second, "baseSnapshotUuid": first["snapshot"]["uuid"],
             "snapshot": {**second["snapshot"], "id": 3, "uuid": "00000000-0000-0000-0000-000000000003"}}
    assert _post(server, url, stale) == (200, {"success": False})
    # the right base but an id that does not follow it
    skipping = {**stale, "baseSnapshotUuid": second["snapshot"]["uuid"],
                "snapshot": {**stale["snapshot"], "id": 4}}
    assert _post(server, url, skipping) == (200, {"success": False})
    # another table's id (the table was dropped and made again): not found, nothing written
    status, body = _post(server, url, {**stale, "tableId": "not-this-table"})
    assert (status, body["resourceType"]) == (404, "TABLE")
    assert dict(iter_files(table_dir)) == before


def test_pypaimon_retries_when_another_writer_moved_the_base(server: RestCatalogServer,
                                                              pypaimon: PyPaimon) -> None:
    """A writer commits between pypaimon's planning and its commit: the server refuses the
    stale base, pypaimon re-plans on the new snapshot, and no row is lost."""
    rest = pypaimon.with_catalog(server.client_options())
    wh = server.warehouse
    rest.create_table(wh, "db", "t", COLUMNS, primary_keys=["id", "dt"], partition_keys=["dt"],
                      options={"bucket": "1"})
    rest.write(wh, "db", "t", FIRST)
    other = [{"id": 9, "dt": "c", "v": "other"}]
    server.inject("commitTable", action=lambda call: rest.write(wh, "db", "t", other))
    rest.write(wh, "db", "t", SECOND)
    commits = server.calls_of("commitTable")
    # in arrival order: FIRST as 1; SECOND as 2 (held while `other` commits as 2) is refused and
    # retried as 3 on other's snapshot
    assert [(c.body["snapshot"]["id"], c.answer) for c in commits] == [
        (1, {"success": True}), (2, {"success": False}), (2, {"success": True}), (3, {"success": True})]
    users = [c.body["snapshot"]["commitUser"] for c in commits]
    assert users[1] == users[3] != users[2]
    assert commits[3].body["baseSnapshotUuid"] == commits[2].body["snapshot"]["uuid"]
    assert (server.root / "db.db" / "t" / "snapshot" / "LATEST").read_text() == "3"
    assert _sorted(rest.read(wh, "db", "t")) == _merged(FIRST, other, SECOND)


def test_pypaimon_reads_with_data_tokens(tmp_path: Path, pypaimon: PyPaimon) -> None:
    with RestCatalogServer(tmp_path / "root", data_token=True) as server:
        rest = pypaimon.with_catalog(server.client_options())
        wh = server.warehouse
        rest.create_table(wh, "db", "t", COLUMNS, primary_keys=["id", "dt"], partition_keys=["dt"],
                          options={"bucket": "1"})
        rest.write(wh, "db", "t", FIRST)
        assert _sorted(rest.read(wh, "db", "t")) == _sorted(FIRST)
        # the config answer enforces data tokens, and the client fetched them for its file access
        assert server.calls_of("getConfig")[0].status == 200
        assert server.calls_of("getTableToken") and {t for t, _ in server.tokens_issued} == {"db.t"}


def test_pypaimon_is_refused_without_the_token(server: RestCatalogServer, pypaimon: PyPaimon) -> None:
    rest = pypaimon.with_catalog(server.client_options(token="wrong"))
    with pytest.raises(PyPaimonError) as e:
        rest.list_databases(server.warehouse)
    assert e.value.error == "NotAuthorizedException"
    assert [c.status for c in server.calls] == [401]
