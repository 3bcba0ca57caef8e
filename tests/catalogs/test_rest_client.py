"""``core.catalog.rest_client`` against the test REST server: the protocol, the error mapping
and every fault kind (401, 403, 404, 409, 501, 500 before and after the call, slow answers,
refused connections) -- a change is never done twice and never reported undone when it happened."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.catalog.rest_client import (
    CommitOutcome,
    DataTokenProvider,
    EndpointUnsupported,
    PartitionStatistics,
    RestApi,
    RestNotFound,
)
from paimon_cli.core.errors import (
    AlreadyExists,
    CatalogUnavailable,
    InvalidInput,
    OutcomeUnknown,
    PermissionDenied,
)
from tests.catalogs.rest_server import RestCatalogServer, iter_files

SCHEMA = {"fields": [{"id": 0, "name": "id", "type": "BIGINT NOT NULL"}, {"id": 1, "name": "dt", "type": "STRING"}],
          "partitionKeys": ["dt"], "primaryKeys": [], "options": {}}


@pytest.fixture
def server(tmp_path: Path) -> Any:
    with RestCatalogServer(tmp_path / "root", defaults={"header.X-From-Server": "yes", "data-token.enabled": "false"},
                           overrides={"override-key": "server"}) as s:
        yield s


def connect(server: RestCatalogServer, sleeps: list[float] | None = None, **opts: str) -> RestApi:
    record = sleeps if sleeps is not None else []
    return RestApi.connect(server.client_options(**opts), "rc", timeout=5.0, attempts=4, backoff=(0.25, 1.0),
                           sleep=record.append)


def write_rows(server: RestCatalogServer, *batches: list[int]) -> None:
    """Real data in the server's table, one commit per batch (test set-up through the files)."""
    table = Warehouse(str(server.root)).table("db.t")
    for ids in batches:
        table.write(pa.table({"id": pa.array(ids, pa.int64()), "dt": ["a"] * len(ids)}), expire=False)


def fresh_snapshot(sid: int, schema_id: int = 0) -> dict[str, Any]:
    """A snapshot whose manifests are empty lists, enough for the server's commit rule."""
    return {"version": 3, "id": sid, "schemaId": schema_id, "baseManifestList": f"manifest-list-b{sid}",
            "deltaManifestList": f"manifest-list-d{sid}", "commitUser": "test", "commitIdentifier": sid,
            "commitKind": "APPEND", "timeMillis": 1, "totalRecordCount": 0, "deltaRecordCount": 0,
            "uuid": str(uuid.uuid4())}


def stats(n: int) -> list[PartitionStatistics]:
    return [PartitionStatistics({"dt": "a"}, n, 10 * n, 1, 1000 + n, 1)]


def with_table(api: RestApi) -> None:
    api.create_database("db")
    api.create_table("db", "t", SCHEMA)


# -- config, options, auth --------------------------------------------------------------------------


def test_config_merges_as_java_and_headers_go_with_every_call(server: RestCatalogServer) -> None:
    api = connect(server, **{"header.X-Client": "c1", "override-key": "client", "data-token.enabled": "true"})
    # defaults < client options < overrides
    assert api.options["override-key"] == "server"
    assert api.options["data-token.enabled"] == "true"
    assert api.options["prefix"] == "paimon" and api.base == "/v1/paimon"
    api.list_databases()
    call = server.calls[-1]
    assert call.headers["authorization"] == f"Bearer {server.token}"
    assert call.headers["x-client"] == "c1" and call.headers["x-from-server"] == "yes"
    assert server.calls[0].query == {"warehouse": server.warehouse}


def test_token_provider_options(server: RestCatalogServer) -> None:
    opts = server.client_options()
    del opts["token.provider"]
    with pytest.raises(InvalidInput, match="token.provider"):
        RestApi.connect(opts, "rc")
    with pytest.raises(InvalidInput, match="token.provider=dlf needs dlf.access-key-id") as e:
        RestApi.connect(server.client_options(**{"token.provider": "dlf", "dlf.region": "cn-hangzhou"}), "rc")
    assert e.value.exit_code == 4
    with pytest.raises(InvalidInput, match="needs the option 'token'"):
        RestApi.connect(server.client_options(token=""), "rc")
    with pytest.raises(InvalidInput, match="'uri'"):
        RestApi.connect({**server.client_options(), "uri": ""}, "rc")
    assert server.calls == []  # refused before any request


def test_401_and_403_are_permission_errors(server: RestCatalogServer) -> None:
    with pytest.raises(PermissionDenied, match="not authorized") as e:
        connect(server, token="wrong")
    assert e.value.exit_code == 9
    api = connect(server)
    with_table(api)
    server.forbidden_tables.add("db.t")
    with pytest.raises(PermissionDenied, match="forbidden"):
        api.get_table("db", "t")
    with pytest.raises(PermissionDenied):
        api.commit_snapshot("db", "t", None, None, fresh_snapshot(1), stats(1))


def test_unknown_warehouse_is_not_found(server: RestCatalogServer) -> None:
    with pytest.raises(RestNotFound, match="warehouse"):
        connect(server, warehouse="nope")


# -- databases and tables ---------------------------------------------------------------------------


def test_tables_round_trip(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    with pytest.raises(AlreadyExists):
        api.create_table("db", "t", SCHEMA)
    with pytest.raises(AlreadyExists):
        api.create_database("db")
    details = api.get_table("db", "t")
    assert (details.name, details.is_external, details.schema_id) == ("t", False, 0)
    assert details.path == f"file://{server.root}/db.db/t" and details.id == server.tables[("db", "t")].uuid
    assert details.schema["partitionKeys"] == ["dt"] and details.table_type == "table"
    with pytest.raises(RestNotFound) as nf:
        api.get_table("db", "missing")
    assert nf.value.resource_type == "TABLE" and nf.value.exit_code == 3
    api.alter_table("db", "t", [{"action": "setOption", "key": "snapshot.num-retained.max", "value": "70"}])
    assert api.get_table("db", "t").schema_id == 1
    api.rename_table(("db", "t"), ("db", "u"))
    assert api.list_tables("db") == ["u"] and (server.root / "db.db" / "u" / "schema" / "schema-1").exists()
    api.drop_table("db", "u")
    assert api.list_tables("db") == [] and not (server.root / "db.db" / "u").exists()


def test_paging_follows_next_page_token(server: RestCatalogServer) -> None:
    api = connect(server)
    api.create_database("db")
    for name in ["e", "a", "d", "c", "b"]:
        api.create_table("db", name, SCHEMA)
    details = api.list_table_details("db", max_results=2)
    assert [d.name for d in details] == ["a", "b", "c", "d", "e"]
    pages = server.calls_of("listTableDetails")
    assert [c.query.get("pageToken") for c in pages] == [None, "b", "d"]


def test_501_is_refused_by_name(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    with pytest.raises(EndpointUnsupported, match="does not implement") as e:
        api.list_partitions("db", "t")  # not a metastore.partitioned-table: the server keeps none
    assert e.value.exit_code == 1


# -- retries ------------------------------------------------------------------------------------------


def test_server_errors_on_reads_are_retried_with_back_off(server: RestCatalogServer) -> None:
    sleeps: list[float] = []
    api = connect(server, sleeps)
    server.inject("listDatabases", 500, times=2)
    server.inject("listDatabases", 503, times=1)
    assert api.list_databases() == []
    assert [c.status for c in server.calls_of("listDatabases")] == [500, 500, 503, 200]
    assert sleeps == [0.25, 0.5, 1.0]
    server.inject("listDatabases", 502, times=None)
    with pytest.raises(CatalogUnavailable, match="list databases failed 4 time") as e:
        api.list_databases()
    assert e.value.exit_code == 8


def test_slow_answers_time_out_and_are_retried(server: RestCatalogServer) -> None:
    api = RestApi.connect(server.client_options(), "rc", timeout=0.3, attempts=3, backoff=(0, 0),
                          sleep=lambda s: None)
    server.inject("listDatabases", delay=1.0, times=1)
    assert api.list_databases() == []
    server.inject("listDatabases", delay=1.0, times=None)
    with pytest.raises(CatalogUnavailable, match="no answer .* within 0.3 s"):
        api.list_databases()


def test_refused_connections_are_retried_then_unavailable(server: RestCatalogServer) -> None:
    api = connect(server)
    server.stop()
    with pytest.raises(CatalogUnavailable, match="cannot connect"):
        api.create_database("db")


def test_a_create_that_failed_before_it_ran_is_sent_again(server: RestCatalogServer) -> None:
    api = connect(server)
    api.create_database("db")
    server.inject("createTable", 500)
    api.create_table("db", "t", SCHEMA)
    assert [c.status for c in server.calls_of("createTable")] == [500, 200]


def test_a_lost_answer_is_not_sent_twice(server: RestCatalogServer) -> None:
    api = connect(server)
    api.create_database("db")
    server.inject("createTable", 500, after=True)
    api.create_table("db", "t", SCHEMA)  # done on the server; the client looked and saw it
    assert [c.status for c in server.calls_of("createTable")] == [500]
    server.inject("dropTable", 504, after=True)
    api.drop_table("db", "t")
    assert [c.status for c in server.calls_of("dropTable")] == [504]
    assert api.list_tables("db") == []


# -- the commit -----------------------------------------------------------------------------------------


def _snapshot_files(server: RestCatalogServer) -> dict[str, bytes]:
    return dict(iter_files(server.root / "db.db" / "t" / "snapshot")) if (
        server.root / "db.db" / "t" / "snapshot").exists() else {}


def test_commit_on_the_latest_base_and_a_refused_stale_one(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    table_id = api.get_table("db", "t").id
    assert api.load_snapshot("db", "t") is None
    s1 = fresh_snapshot(1)
    assert api.commit_snapshot("db", "t", table_id, None, s1, stats(2)) is CommitOutcome.COMMITTED
    head = api.load_snapshot("db", "t")
    assert head is not None and head.uuid == s1["uuid"] and head.id == 1
    assert (head.file_count, head.file_size_in_bytes) == (1, 20)
    body = server.calls_of("commitTable")[0].body
    assert body["statistics"] == [{"spec": {"dt": "a"}, "recordCount": 2, "fileSizeInBytes": 20, "fileCount": 1,
                                   "lastFileCreationTime": 1002, "totalBuckets": 1}]
    before = _snapshot_files(server)
    assert api.commit_snapshot("db", "t", table_id, None, fresh_snapshot(2), stats(1)) is CommitOutcome.REFUSED
    assert _snapshot_files(server) == before
    assert api.commit_snapshot("db", "t", table_id, s1["uuid"], fresh_snapshot(2), stats(1)) is CommitOutcome.COMMITTED
    assert json.loads((server.root / "db.db" / "t" / "snapshot" / "LATEST").read_text()) == 2


def test_commit_whose_answer_is_lost_is_found_committed(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    s1 = fresh_snapshot(1)
    server.inject("commitTable", 500, after=True)
    assert api.commit_snapshot("db", "t", None, None, s1, stats(1)) is CommitOutcome.COMMITTED
    assert len(server.calls_of("commitTable")) == 1
    assert sorted(_snapshot_files(server)) == ["LATEST", "snapshot-1"]


def test_commit_that_failed_before_it_ran_is_sent_again(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    server.inject("commitTable", 500)
    assert api.commit_snapshot("db", "t", None, None, fresh_snapshot(1), stats(1)) is CommitOutcome.COMMITTED
    assert [c.answer for c in server.calls_of("commitTable")][-1] == {"success": True}


def test_slow_commit_that_lands_after_the_timeout_is_committed_once(server: RestCatalogServer) -> None:
    api = RestApi.connect(server.client_options(), "rc", timeout=0.5, attempts=3, backoff=(0, 0),
                          sleep=lambda s: None)
    with_table(api)
    s1 = fresh_snapshot(1)
    server.inject("commitTable", delay=1.5)
    assert api.commit_snapshot("db", "t", None, None, s1, stats(1)) is CommitOutcome.COMMITTED
    import time

    time.sleep(1.5)  # the first, slow request lands now: the server refuses it (base moved)
    assert [c.answer for c in server.calls_of("commitTable")] == [{"success": False}, {"success": True}] or [
        c.answer for c in server.calls_of("commitTable")] == [{"success": True}, {"success": False}]
    head = api.load_snapshot("db", "t")
    assert head is not None and head.uuid == s1["uuid"] and sorted(_snapshot_files(server)) == ["LATEST",
                                                                                                 "snapshot-1"]


def test_resend_refused_because_the_slow_first_attempt_landed_is_committed(server: RestCatalogServer) -> None:
    """The first attempt times out and is still on its way; the look finds the base unmoved, so
    the commit is sent again; the first lands before the resend is served, which is refused
    (base moved): the commit is ours, not a conflict to plan again (that would commit twice)."""
    api = RestApi.connect(server.client_options(), "rc", timeout=2.0, attempts=3, backoff=(0, 0),
                          sleep=lambda s: None)
    with_table(api)
    s1 = fresh_snapshot(1)
    server.inject("commitTable", delay=3.0)  # lands at ~3.0 s, after the client gave up at 2.0 s
    server.inject("commitTable", delay=1.5)  # the resend (sent at ~2.0 s) is served at ~3.5 s
    assert api.commit_snapshot("db", "t", None, None, s1, stats(1)) is CommitOutcome.COMMITTED
    assert [c.answer for c in server.calls_of("commitTable")] == [{"success": True}, {"success": False}]
    assert sorted(_snapshot_files(server)) == ["LATEST", "snapshot-1"]


def test_commit_whose_outcome_cannot_be_learnt_is_outcome_unknown(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    server.inject("commitTable", 500, after=True)
    server.inject("getTableSnapshot", 500, times=None)
    with pytest.raises(OutcomeUnknown, match="whether the server did it is unknown"):
        api.commit_snapshot("db", "t", None, None, fresh_snapshot(1), stats(1))
    assert len(server.calls_of("commitTable")) == 1


# -- version management -----------------------------------------------------------------------------------


def test_tags_rollback_branches_consumers(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    write_rows(server, [1, 2], [3])
    assert api.load_snapshot("db", "t").id == 2  # type: ignore[union-attr]
    api.create_tag("db", "t", "v1", snapshot_id=1, time_retained="1 d")
    with pytest.raises(AlreadyExists):
        api.create_tag("db", "t", "v1", snapshot_id=1)
    assert api.list_tags("db", "t") == ["v1"]
    tag = api.get_tag("db", "t", "v1")
    assert (tag["snapshot"]["id"], tag["tagTimeRetained"]) == (1, "PT24H")
    with pytest.raises(RestNotFound) as nf:
        api.create_tag("db", "t", "v9", snapshot_id=9)
    assert nf.value.resource_type == "SNAPSHOT"
    api.create_branch("db", "t", "b1", from_tag="v1")
    assert api.list_branches("db", "t") == ["b1"]
    assert api.load_snapshot("db", "t", branch="b1").id == 1  # type: ignore[union-attr]
    api.reset_consumer("db", "t", "c1", 2)
    assert api.list_consumers("db", "t") == {"c1": 2}
    api.reset_consumer("db", "t", "c1", None)
    assert api.list_consumers("db", "t") == {}
    api.drop_branch("db", "t", "b1")
    api.rollback_to("db", "t", tag="v1")
    assert api.load_snapshot("db", "t").id == 1  # type: ignore[union-attr]
    assert Warehouse(str(server.root)).table("db.t").read().num_rows == 2
    with pytest.raises(RestNotFound) as nf:
        api.rollback_to("db", "t", snapshot_id=7)
    assert nf.value.resource_type == "SNAPSHOT"
    api.delete_tag("db", "t", "v1")
    assert api.list_tags("db", "t") == [] and api.list_branches("db", "t") == []


def test_a_rollback_whose_answer_is_lost_is_found_done(server: RestCatalogServer) -> None:
    api = connect(server)
    with_table(api)
    write_rows(server, [1], [2])
    server.inject("rollbackTable", 500, after=True)
    api.rollback_to("db", "t", snapshot_id=1, from_snapshot=2)
    assert len(server.calls_of("rollbackTable")) == 1
    assert api.load_snapshot("db", "t").id == 1  # type: ignore[union-attr]


def test_a_resend_answered_409_or_404_because_the_slow_first_attempt_landed_is_done(server: RestCatalogServer
                                                                                     ) -> None:
    """A tag create times out while it is still on its way; the look finds no tag, so it is sent
    again; the first lands before the resend is served, which answers 409: that tag is ours, not
    a clash. Likewise a branch drop whose resend finds the branch gone (404)."""
    api = RestApi.connect(server.client_options(), "rc", timeout=1.0, attempts=3, backoff=(0, 0),
                          sleep=lambda s: None)
    with_table(api)
    write_rows(server, [1])
    server.inject("createTag", delay=1.5)  # lands at ~1.5 s, after the client gave up at 1.0 s
    server.inject("createTag", delay=0.8)  # the resend (sent at ~1.0 s) is served at ~1.8 s
    api.create_tag("db", "t", "v1", 1)
    assert [c.status for c in server.calls_of("createTag")] == [200, 409]
    api.create_branch("db", "t", "b1")
    server.inject("dropBranch", delay=1.5)
    server.inject("dropBranch", delay=0.8)
    api.drop_branch("db", "t", "b1")
    assert [c.status for c in server.calls_of("dropBranch")] == [200, 404]
    assert api.list_tags("db", "t") == ["v1"] and api.list_branches("db", "t") == []


# -- data tokens --------------------------------------------------------------------------------------------


def test_data_token_is_renewed_before_it_expires(tmp_path: Path) -> None:
    now = [1_800_000_000.0]
    with RestCatalogServer(tmp_path / "root", data_token=True, token_ttl_ms=10_000, clock=lambda: now[0],
                           token_options=lambda t: {"fs.s3.accessKeyId": f"key-{t}"}) as server:
        api = RestApi.connect(server.client_options(), "rc")
        assert api.data_token_enabled
        with_table(api)
        provider = DataTokenProvider(api, "db", "t", clock=lambda: now[0])
        assert provider.options() == {"fs.s3.accessKeyId": "key-db.t"}
        now[0] += 4.0  # 4 s into a 10 s token: still good
        provider.options()
        assert len(server.tokens_issued) == 1
        now[0] += 2.0  # less than half its life left: renewed before it expires
        assert provider.token().expires_at_millis == int((now[0] + 10) * 1000)
        assert len(server.tokens_issued) == 2
