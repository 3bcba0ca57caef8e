"""core/io/fileio.py against an S3-compatible store (moto on loopback, see tests/s3_fixtures.py).

The point of these tests is the write-if-absent primitive that snapshot commits rely on:
the PUT must carry ``If-None-Match: *`` so the *server* decides the race, and the loser must
see ``False`` with the winner's bytes untouched.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import pytest

from paimon_cli.core.errors import NotFound, PaimonError
from paimon_cli.core.io.fileio import FileIO, join

pytestmark = pytest.mark.s3


@pytest.fixture()
def s3io(s3_server: Any, s3_warehouse: str) -> FileIO:
    return FileIO(s3_warehouse, s3_server.storage_options)


def _key(s3_server: Any, uri: str) -> str:
    prefix = f"s3://{s3_server.bucket}/"
    assert uri.startswith(prefix)
    return uri[len(prefix):]


def _server_bytes(s3_server: Any, uri: str) -> bytes:
    """The object as the server holds it, bypassing s3fs and its caches."""
    obj = s3_server.boto3_client().get_object(Bucket=s3_server.bucket, Key=_key(s3_server, uri))
    return obj["Body"].read()


@pytest.fixture()
def put_headers(s3io: FileIO) -> Iterator[list[dict[str, str]]]:
    """Headers of every PutObject / CompleteMultipartUpload s3fs sends during the test."""
    seen: list[dict[str, str]] = []

    def hook(request: Any, **_: Any) -> None:
        if request.method in ("PUT", "POST"):
            seen.append({k.lower(): (v.decode() if isinstance(v, bytes) else v)
                         for k, v in request.headers.items()})

    events = s3io.fs.s3.meta.events
    events.register("before-send.s3.PutObject", hook)
    events.register("before-send.s3.CompleteMultipartUpload", hook)
    try:
        yield seen
    finally:
        events.unregister("before-send.s3.PutObject", hook)
        events.unregister("before-send.s3.CompleteMultipartUpload", hook)


def test_properties(s3io: FileIO) -> None:
    assert s3io.scheme == "s3"
    assert s3io.is_object_store and not s3io.is_local


def test_write_read_exists_size_delete(s3io: FileIO, s3_server: Any) -> None:
    p = join(s3io.root, "db.db", "t", "schema", "schema-0")
    assert not s3io.exists(p)
    s3io.mkdirs(join(s3io.root, "db.db", "t", "schema"))  # a no-op on object stores
    s3io.write_bytes(p, b'{"id": 0}')
    assert s3io.exists(p)
    assert _server_bytes(s3_server, p) == b'{"id": 0}'
    assert s3io.read_bytes(p) == b'{"id": 0}'
    assert s3io.read_text(p) == '{"id": 0}'
    assert s3io.file_size(p) == 9
    with s3io.open_input(p) as f:
        f.seek(2)
        assert f.read(2) == b"id"
    s3io.write_bytes(p, b"v2")
    assert s3io.read_bytes(p) == b"v2"
    s3io.delete(p)
    assert not s3io.exists(p)
    s3io.delete(p)  # deleting a missing object is fine


def test_read_missing_is_not_found(s3io: FileIO) -> None:
    p = join(s3io.root, "snapshot", "snapshot-42")
    with pytest.raises(NotFound) as info:
        s3io.read_bytes(p)
    assert p in str(info.value)
    with pytest.raises(NotFound):
        s3io.file_size(p)


def test_list_status(s3io: FileIO) -> None:
    d = join(s3io.root, "snapshot")
    assert s3io.list_status(d) == []  # missing prefix lists as empty
    s3io.write_bytes(join(d, "snapshot-1"), b"abc")
    s3io.write_bytes(join(d, "snapshot-2"), b"abcd")
    s3io.write_bytes(join(d, "EARLIEST"), b"1")
    s3io.write_bytes(join(d, "sub", "x"), b"1")
    st = {s.name: s for s in s3io.list_status(d)}
    assert set(st) == {"snapshot-1", "snapshot-2", "EARLIEST", "sub"}
    assert st["snapshot-2"].path == join(d, "snapshot-2")  # keeps the s3:// form
    assert st["snapshot-2"].size == 4 and not st["snapshot-2"].is_dir
    assert st["sub"].is_dir
    assert st["snapshot-1"].mtime_millis is not None
    assert s3io.is_dir(join(d, "sub"))
    s3io.delete_dir(d)
    assert s3io.list_status(d) == []


def test_try_write_atomic_sends_if_none_match_and_loser_gets_false(
        s3io: FileIO, s3_server: Any, put_headers: list[dict[str, str]]) -> None:
    p = join(s3io.root, "db.db", "t", "snapshot", "snapshot-1")
    assert s3io.try_write_atomic(p, b"winner") is True
    assert s3io.try_write_atomic(p, b"loser") is False
    assert _server_bytes(s3_server, p) == b"winner"
    assert s3io.read_bytes(p) == b"winner"
    assert len(put_headers) == 2
    assert all(h.get("if-none-match") == "*" for h in put_headers), put_headers


def test_try_write_atomic_loses_to_object_written_elsewhere(s3io: FileIO, s3_server: Any) -> None:
    """Another process's object (not in this client's caches) still wins."""
    p = join(s3io.root, "tag", "tag-v1")
    s3_server.boto3_client().put_object(Bucket=s3_server.bucket, Key=_key(s3_server, p),
                                        Body=b"other")
    assert s3io.try_write_atomic(p, b"mine") is False
    assert _server_bytes(s3_server, p) == b"other"


def test_write_bytes_without_overwrite_refuses_existing(s3io: FileIO, s3_server: Any) -> None:
    p = join(s3io.root, "tag", "tag-t1")
    s3io.write_bytes(p, b"1", overwrite=False)
    with pytest.raises(PaimonError):
        s3io.write_bytes(p, b"2", overwrite=False)
    assert _server_bytes(s3_server, p) == b"1"


def test_try_write_atomic_race_between_clients(s3_server: Any, s3_warehouse: str) -> None:
    """Eight independent clients (separate connection pools) race for one snapshot id."""
    n = 8
    clients = [FileIO(s3_warehouse, {**s3_server.storage_options, "skip_instance_cache": True})
               for _ in range(n)]
    for attempt in range(3):
        p = join(s3_warehouse, "snapshot", f"snapshot-{attempt}")
        barrier = threading.Barrier(n)
        results: dict[int, bool] = {}

        def writer(i: int, barrier: threading.Barrier = barrier, results: dict[int, bool] = results,
                   p: str = p) -> None:
            barrier.wait()
            results[i] = clients[i].try_write_atomic(p, f"writer-{i}".encode())

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(n)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        winners = [i for i, ok in results.items() if ok]
        assert len(winners) == 1, results
        assert _server_bytes(s3_server, p) == f"writer-{winners[0]}".encode()


def test_try_write_atomic_empty_payload_is_conditional(s3io: FileIO, s3_server: Any) -> None:
    p = join(s3io.root, "EMPTY")
    assert s3io.try_write_atomic(p, b"keep") is True
    assert s3io.try_write_atomic(p, b"") is False
    assert _server_bytes(s3_server, p) == b"keep"


def test_listing_sees_objects_written_by_other_processes(s3io: FileIO, s3_server: Any) -> None:
    d = join(s3io.root, "snapshot")
    s3io.write_bytes(join(d, "snapshot-1"), b"1")
    assert s3io.list_names(d) == ["snapshot-1"]
    s3_server.boto3_client().put_object(Bucket=s3_server.bucket,
                                        Key=_key(s3_server, join(d, "snapshot-2")), Body=b"2")
    assert sorted(s3io.list_names(d)) == ["snapshot-1", "snapshot-2"]
    assert s3io.exists(join(d, "snapshot-2"))


# -- outcomes of a write-if-absent that S3 answers with an error (tests/s3_fixtures.S3Faults) --

FAST = (1, 1, 1, 1)  # waits between the rounds of resolving an open outcome


def test_409_after_the_put_landed_is_ours(s3io: FileIO, s3_server: Any, s3_faults: Any) -> None:
    """A retried put whose first try landed meets 409 ConditionalRequestConflict: reading the
    key back shows our bytes, so it is our write, not a lost race."""
    p = join(s3io.root, "snapshot", "snapshot-1")
    faults = s3_faults(s3io.fs)
    faults.add("PutObject", "snapshot-1$", "after", "conflict")
    assert s3io.try_write_atomic(p, b"mine", FAST) is True
    assert faults.log == [("PutObject", _key(s3_server, p), "after:conflict")]
    assert _server_bytes(s3_server, p) == b"mine"


def test_409_while_our_slow_put_lands_is_ours(s3io: FileIO, s3_server: Any, s3_faults: Any) -> None:
    """409 and nothing readable yet: the same bytes are put again; the slow first put lands
    first, the second meets 412, and the read-back settles it as ours."""
    p = join(s3io.root, "snapshot", "snapshot-1")
    faults = s3_faults(s3io.fs)
    faults.hold_put("snapshot-1$")
    assert s3io.try_write_atomic(p, b"mine", FAST) is True
    assert faults.log == [("PutObject", _key(s3_server, p), "before:hold"),
                          ("PutObject", _key(s3_server, p), "held put landed")]
    assert _server_bytes(s3_server, p) == b"mine"


def test_409_while_another_writer_wins_is_theirs(s3io: FileIO, s3_server: Any, s3_faults: Any) -> None:
    p = join(s3io.root, "snapshot", "snapshot-1")
    faults = s3_faults(s3io.fs)
    faults.add("PutObject", "snapshot-1$", "before", "conflict")
    s3_server.boto3_client().put_object(Bucket=s3_server.bucket, Key=_key(s3_server, p), Body=b"theirs")
    assert s3io.try_write_atomic(p, b"mine", FAST) is False
    assert _server_bytes(s3_server, p) == b"theirs"


def test_timeout_after_the_put_landed_is_ours(s3io: FileIO, s3_server: Any, s3_faults: Any) -> None:
    """s3fs retries the timed-out put; the retry meets 412 (our own first try): still ours."""
    p = join(s3io.root, "snapshot", "snapshot-1")
    faults = s3_faults(s3io.fs)
    faults.add("PutObject", "snapshot-1$", "after", "timeout")
    assert s3io.try_write_atomic(p, b"mine", FAST) is True
    assert _server_bytes(s3_server, p) == b"mine"


def test_put_failing_before_it_was_sent_is_put_again(s3io: FileIO, s3_server: Any, s3_faults: Any) -> None:
    p = join(s3io.root, "snapshot", "snapshot-1")
    faults = s3_faults(s3io.fs)
    faults.add("PutObject", "snapshot-1$", "before", "disconnect")
    faults.add(("HeadObject", "GetObject"), "snapshot-1$", "before", "disconnect")  # and the first read-back
    assert s3io.try_write_atomic(p, b"mine", FAST) is True
    assert _server_bytes(s3_server, p) == b"mine"


def test_outcome_that_stays_open_is_outcome_unknown(s3io: FileIO, s3_server: Any, s3_faults: Any) -> None:
    from paimon_cli.core.errors import OutcomeUnknown

    p = join(s3io.root, "snapshot", "snapshot-1")
    faults = s3_faults(s3io.fs)
    faults.add("PutObject", "snapshot-1$", "after", "conflict")  # landed, answered 409
    faults.add(("HeadObject", "GetObject"), "snapshot-1$", "before", "disconnect", times=-1)
    with pytest.raises(OutcomeUnknown, match="snapshot-1: cannot tell whether the write-if-absent landed"):
        s3io.try_write_atomic(p, b"mine", FAST)
    assert _server_bytes(s3_server, p) == b"mine"

    q = join(s3io.root, "snapshot", "snapshot-2")  # never lands: every put fails before sending
    faults.add("PutObject", "snapshot-2$", "before", "disconnect", times=-1)
    with pytest.raises(OutcomeUnknown, match="EndpointConnectionError"):
        s3io.try_write_atomic(q, b"mine", FAST)
    assert not s3io.exists(q)
