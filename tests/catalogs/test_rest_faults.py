"""Every command through a REST catalog meets every fault the server can throw at the call that
changes the table -- 401, 409, 500, a slow answer, a lost answer (the change was made), a server
that stays down -- and leaves the table readable and exactly as before or as after the command
(compared with a twin table that ran the command without a fault): never half done, never done
twice."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.errors import CatalogUnavailable, CommitConflict, PaimonError, PermissionDenied
from tests.catalogs.rest_helpers import CLIENT_TIMEOUT, NEW, batch, isolate, seed, state
from tests.catalogs.rest_server import RestCatalogServer, iter_files


@pytest.fixture
def server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    isolate(tmp_path, monkeypatch)
    with RestCatalogServer(tmp_path / "root") as s:
        yield s


@dataclass(frozen=True)
class Command:
    run: Callable[[Warehouse, str], Any]
    operation: str  # the server call that changes the table
    options: tuple[tuple[str, str], ...] = ()
    setup: Callable[[Warehouse, str], Any] | None = None


def _maintain(wh: Warehouse, name: str) -> None:
    report = wh.maintain([name])
    if report.exit_code:
        raise PaimonError(f"maintain exit {report.exit_code}: {report.run.tables[0].message}")


COMMANDS = {
    "write": Command(lambda wh, n: wh.table(n).write(batch([(5, NEW, "f")]), expire=False), "commitTable"),
    "compact": Command(lambda wh, n: wh.table(n).compact(full=True), "commitTable"),
    "expire": Command(lambda wh, n: wh.table(n).expire(retain_max=1, retain_min=1), "getTable"),
    "expire-partitions": Command(lambda wh, n: wh.table(n).expire_partitions(
        expiration_time="1d", timestamp_formatter="yyyy-MM-dd"), "commitTable"),
    "rescale": Command(lambda wh, n: wh.table(n).rescale(bucket_num=2), "commitTable"),
    "rewrite-file-index": Command(lambda wh, n: wh.table(n).rewrite_file_index(), "commitTable",
                                  setup=lambda wh, n: wh.table(n).alter(
                                      set_options={"file-index.bloom-filter.columns": "v"})),
    "tag": Command(lambda wh, n: wh.table(n).create_tag("t1", snapshot=1), "createTag"),
    "rollback": Command(lambda wh, n: wh.table(n).rollback(snapshot=1), "rollbackTable"),
    "maintain": Command(_maintain, "commitTable", (("num-sorted-run.compaction-trigger", "1"), ("write-only", "true"),
                                                   ("snapshot.num-retained.max", "1"),
                                                   ("snapshot.num-retained.min", "1"))),
    "health": Command(lambda wh, n: wh.health([n]), "getTable"),
}

# fault -> (how it is injected, the error the command then ends with; None: it succeeds)
FAULTS: dict[str, tuple[dict[str, Any], type[PaimonError] | None]] = {
    "401": ({"status": 401}, PermissionDenied),
    "409": ({"status": 409}, CommitConflict),
    "500": ({"status": 500}, None),
    "slow": ({"delay": CLIENT_TIMEOUT + 0.5}, None),
    "lost": ({"status": 500, "after": True}, None),
    "down": ({"status": 503, "times": None}, CatalogUnavailable),
}


def expected_error(name: str, fault: str) -> type[PaimonError] | None:
    command = COMMANDS[name]
    _, error = FAULTS[fault]
    if fault == "409" and command.operation == "commitTable":
        return None  # a refused commit is planned again on the latest snapshot
    if fault == "409" and command.operation != "rollbackTable":
        return PaimonError  # AlreadyExists: a tag (or a table) would clash
    if name == "maintain" and error is not None:
        return PaimonError  # the run reports the action's failure
    return error


@pytest.mark.parametrize("name", list(COMMANDS))
def test_every_fault_leaves_the_table_as_before_or_after(server: RestCatalogServer, name: str) -> None:
    command = COMMANDS[name]
    tables = {fault: f"db.{fault}" for fault in FAULTS}

    def prepared(table: str) -> Warehouse:
        wh = seed(server, table, options=dict(command.options))
        if command.setup is not None:
            command.setup(wh, table)
        return wh

    twin = prepared("db.twin")
    before = state(server, "db.twin")
    command.run(twin, "db.twin")
    after = state(server, "db.twin")
    if name != "health":
        assert after != before

    for fault, table in tables.items():
        wh = prepared(table)
        path = server.table_path("db", table.split(".")[1])
        files = dict(iter_files(path))
        kw, _ = FAULTS[fault]
        obj = table.split(".")[1]
        server.inject(command.operation, **{"times": 1, **kw},
                      when=lambda call, obj=obj: call.params.get("table") == obj)  # type: ignore[misc]
        error = expected_error(name, fault)
        if name == "health":  # reads only: whatever it reports, nothing changes
            try:
                command.run(wh, table)
            except PaimonError:
                pass
            error = None
        elif error is None:
            command.run(wh, table)
        else:
            with pytest.raises(error):
                command.run(wh, table)
        server.clear_faults()
        now = state(server, table)  # readable, from the files
        if name == "rescale" and error is not None:
            # the option went first (as Java's rescale: ALTER, then the overwrite): the rows are
            # untouched and a second run finishes it
            assert now == {**before, "schema": after["schema"]}, fault
            wh.table(table).rescale()
            assert state(server, table) == after, fault
        elif error is None:
            assert now == after, fault
        else:
            assert now == before, fault
            assert dict(iter_files(path)) == files, fault
