"""Every metastore failure reaches the caller as a documented core error, quickly: a stopped
metastore, a hung one (frozen JVM), several URIs, and the metastore's own refusals."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from paimon_cli.core.catalog.hive_metastore import HiveMetastoreClient, parse_metastore_uris
from paimon_cli.core.errors import (
    AlreadyExists,
    CatalogUnavailable,
    InvalidInput,
    NotFound,
    OutcomeUnknown,
    PaimonError,
)

from .hive_metastore_server import HiveMetastoreServer, free_port
from .hms_helpers import client, fresh_db
from .soak import run_cli


def _plain_table(db: str, name: str, location: str, partition_keys: tuple[str, ...] = ()) -> object:
    from pymetastore.hive_metastore import ttypes

    sd = ttypes.StorageDescriptor(cols=[ttypes.FieldSchema("a", "int", None)], location=location,
                                  inputFormat="x", outputFormat="y",
                                  serdeInfo=ttypes.SerDeInfo(serializationLib="z", parameters={}))
    keys = [ttypes.FieldSchema(k, "string", None) for k in partition_keys]
    return ttypes.Table(tableName=name, dbName=db, owner="t", sd=sd, partitionKeys=keys, parameters={},
                        tableType="EXTERNAL_TABLE")


def test_the_metastores_refusals_map_to_core_errors(hive_metastore: HiveMetastoreServer, tmp_path: Path) -> None:
    db = fresh_db()
    with client(hive_metastore) as hms:
        hms.create_database(db, (tmp_path / "db").as_uri())
        with pytest.raises(AlreadyExists):
            hms.create_database(db, (tmp_path / "db").as_uri())
        with pytest.raises(NotFound, match=f"get table {db}.nope"):
            hms.get_table(db, "nope")
        assert hms.find_table(db, "nope") is None
        with pytest.raises(NotFound):
            hms.get_database(db + "_missing")
        hms.create_table(_plain_table(db, "t", (tmp_path / "t").as_uri()))
        with pytest.raises(AlreadyExists):
            hms.create_table(_plain_table(db, "t", (tmp_path / "t").as_uri()))
        with pytest.raises(InvalidInput, match="the metastore refused it"):
            hms.create_table(_plain_table(db + "_missing", "t", (tmp_path / "t2").as_uri()))
        with pytest.raises(PaimonError, match="metastore error: Invalid partition key"):
            hms.drop_partition(db, "t", ["x"])  # t has no partition keys: a MetaException
        hms.create_table(_plain_table(db, "p", (tmp_path / "p").as_uri(), ("dt",)))
        assert hms.drop_partition(db, "p", ["x"]) is False
        with pytest.raises(NotFound):
            hms.get_partition(db, "p", ["x"])
        hms.drop_table(db, "t", delete_data=False)
        assert hms.find_table(db, "t") is None
        assert db in hms.list_databases()


def test_bad_uris_are_invalid_input() -> None:
    assert parse_metastore_uris("thrift://a:1, thrift://b") == [("a", 1), ("b", 9083)]
    for bad in ("", "http://a:1", "thrift://", "thrift://a:x", " , "):
        with pytest.raises(InvalidInput):
            parse_metastore_uris(bad)


def test_the_first_metastore_that_answers_of_several_is_used(hive_metastore: HiveMetastoreServer) -> None:
    dead = f"thrift://127.0.0.1:{free_port()}"
    with HiveMetastoreClient(f"{dead},{hive_metastore.uri}", connect_timeout_s=2) as hms:
        assert "default" in hms.list_databases()
        assert hms.connected_to == hive_metastore.uri
    other_dead = f"thrift://127.0.0.1:{free_port()}"
    start = time.monotonic()
    with pytest.raises(PaimonError, match="Hive Metastore unreachable") as err:
        HiveMetastoreClient(f"{dead},{other_dead}", connect_timeout_s=2).list_databases()
    assert time.monotonic() - start < 5
    assert dead.removeprefix("thrift://") in str(err.value) and other_dead.removeprefix("thrift://") in str(err.value)


def test_a_stopped_metastore_fails_at_once_and_a_restarted_one_is_used_again(
    running_metastore: HiveMetastoreServer,
) -> None:
    server = running_metastore
    hms = client(server, connect_timeout_s=3)
    assert "default" in hms.list_databases()  # connected
    server.stop()
    # a change first: it must not go out on the connection the stopped metastore closed
    for call in (lambda: hms.create_database(fresh_db(), None), hms.list_databases):
        start = time.monotonic()
        with pytest.raises(PaimonError, match="unreachable|failed") as err:
            call()
        # nothing was sent to a metastore that is not there: not OutcomeUnknown
        assert type(err.value) is CatalogUnavailable and err.value.exit_code == 8
        assert time.monotonic() - start < 5
    server.start()
    assert "default" in hms.list_databases()
    hms.close()


def test_an_unreachable_metastore_is_one_line_from_the_cli(tmp_path: Path) -> None:
    """Only our error line: thrift's own log line about the failed connect is not printed too."""
    res = run_cli(["list", "--catalog-option", "metastore=hive", "--catalog-option",
                   f"uri=thrift://127.0.0.1:{free_port()}", "--catalog-option", f"warehouse={tmp_path.as_uri()}"])
    assert res.returncode == 8
    assert res.stderr.startswith("error: Hive Metastore unreachable at thrift://127.0.0.1:")
    assert len(res.stderr.strip().splitlines()) == 1, res.stderr


def test_a_hung_metastore_times_out_and_a_lost_change_is_outcome_unknown(
    running_metastore: HiveMetastoreServer, tmp_path: Path
) -> None:
    server = running_metastore
    db = fresh_db()
    with client(server, timeout_s=1.5) as hms:
        hms.create_database(db, (tmp_path / "db").as_uri())
        hms.create_table(_plain_table(db, "p", (tmp_path / "p").as_uri(), ("dt",)))
        server.pause()
        try:
            start = time.monotonic()
            with pytest.raises(PaimonError, match="failed") as err:
                hms.get_table(db, "t")  # a read: one retry on a new connection, then give up
            assert type(err.value) is CatalogUnavailable and err.value.exit_code == 8
            assert time.monotonic() - start < 6
            start = time.monotonic()
            with pytest.raises(OutcomeUnknown, match="may or may not have been applied"):
                hms.create_table(_plain_table(db, "t", (tmp_path / "t").as_uri()))
            assert time.monotonic() - start < 4
            # partitions are added if absent and dropped if present: a second try tells, so a
            # lost answer is the metastore failing (exit 8), not an unknown outcome
            with pytest.raises(CatalogUnavailable, match="drop partition"):
                hms.drop_partition(db, "p", ["x"])
        finally:
            server.resume()
    # the request was in the frozen server's socket: it was applied after all
    with client(server) as hms:
        deadline = time.monotonic() + 20
        while hms.find_table(db, "t") is None and time.monotonic() < deadline:
            time.sleep(0.2)
        assert hms.find_table(db, "t") is not None
