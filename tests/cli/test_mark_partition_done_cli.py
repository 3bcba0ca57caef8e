"""`paimon-cli mark-partition-done` (Java's mark_partition_done and partition.mark-done-action):
the _SUCCESS file as Java writes it, http-report's request and answer check, the dry run equal
to the run, and refusals by name before anything runs."""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.operation.partition_mark_done import success_file_json


def ok(runner: CliRunner, *args: str) -> Any:
    r = runner.invoke(app, list(args))
    assert r.exit_code == 0, (args, r.stdout, r.stderr)
    return r


def fails(runner: CliRunner, code: int, *args: str) -> str:
    r = runner.invoke(app, list(args))
    assert r.exit_code == code, (args, r.exit_code, r.stdout, r.stderr)
    if code != 2:
        lines = [ln for ln in r.stderr.splitlines() if ln.strip()]
        assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    return r.stderr


def tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def table(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[str, Path]:
    """db.t: append table by (dt, hh INT) with data in dt=d1/hh=1, dt=d1/hh=2, dt=d2/hh=1."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING, hh INT", "--partition-by", "dt,hh", *w)
    f = tmp_path / "in.csv"
    f.write_text("id,dt,hh\n1,d1,1\n2,d1,2\n3,d2,1\n")
    ok(runner, "write", "db.t", str(f), *w)
    return warehouse, Path(warehouse) / "db.db" / "t"


def test_success_file_json_is_javas_layout() -> None:
    # Jackson's default pretty printer, as SuccessFile.toJson writes it
    assert success_file_json(1, 2) == '{\n  "creationTime" : 1,\n  "modificationTime" : 2\n}'


def test_success_file(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    before = tree(root)
    dry = json.loads(ok(runner, "mark-partition-done", "db.t", "--partition", "dt=d1,hh=1;dt=d2", "--dry-run",
                        "-o", "json", *w).stdout)
    assert tree(root) == before
    assert dry == [{"partition": "dt=d1/hh=1", "action": "success-file", "target": "dt=d1/hh=1/_SUCCESS"},
                   {"partition": "dt=d2", "action": "success-file", "target": "dt=d2/_SUCCESS"}]
    r = ok(runner, "mark-partition-done", "db.t", "--partition", "dt=d1,hh=1;dt=d2", "-o", "json", *w)
    assert json.loads(r.stdout) == dry
    assert "marked 2 partition(s) of db.t done (dt=d1/hh=1, dt=d2): success-file" in r.stderr
    first = json.loads((root / "dt=d1" / "hh=1" / "_SUCCESS").read_text())
    assert set(first) == {"creationTime", "modificationTime"}
    assert first["creationTime"] == first["modificationTime"]
    assert (root / "dt=d2" / "_SUCCESS").is_file()
    # again: creationTime kept, modificationTime moves on (Java's SuccessFileMarkDoneAction)
    ok(runner, "mark-partition-done", "db.t", "--partition", "dt=d1,hh=1", *w)
    again = json.loads((root / "dt=d1" / "hh=1" / "_SUCCESS").read_text())
    assert again["creationTime"] == first["creationTime"] and again["modificationTime"] >= first["modificationTime"]
    # the table still reads as before (the marker is not a data file)
    assert len(json.loads(ok(runner, "read", "db.t", "-o", "json", *w).stdout)) == 3


def test_success_file_goes_to_the_table_path_as_java_puts_it(runner: CliRunner, warehouse: str,
                                                             tmp_path: Path) -> None:
    w = ["-w", warehouse]
    ok(runner, "create", "db.p", "--schema", "id INT, dt STRING", "--partition-by", "dt",
       "--option", "data-file.path-directory=data", "--option", "partition.mark-done-action=success-file", *w)
    f = tmp_path / "p.csv"
    f.write_text("id,dt\n1,x\n")
    ok(runner, "write", "db.p", str(f), *w)
    ok(runner, "mark-partition-done", "db.p", "--partition", "dt=x", *w)
    root = Path(warehouse) / "db.db" / "p"
    assert (root / "dt=x" / "_SUCCESS").is_file() and not (root / "data" / "dt=x" / "_SUCCESS").exists()


def test_mark_done_refusals_change_nothing(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    w = ["-w", wh]
    before = tree(root)
    err = fails(runner, 3, "mark-partition-done", "db.t", "--partition", "dt=d9", *w)
    assert "--partition dt=d9 matched no partition of db.t" in err and "--allow-empty" in err
    # one unmatched partition refuses all, before the first is marked
    fails(runner, 3, "mark-partition-done", "db.t", "--partition", "dt=d1;dt=d9", *w)
    assert "leading partition keys" in fails(runner, 4, "mark-partition-done", "db.t", "--partition", "hh=1", *w)
    assert "not a partition key" in fails(runner, 4, "mark-partition-done", "db.t", "--partition", "x=1", *w)
    err = fails(runner, 1, "mark-partition-done", "db.t", "--partition", "dt=d1,hh=1", "--action", "done-partition", *w)
    assert "done-partition needs a metastore" in err and "metastore filesystem" in err
    err = fails(runner, 1, "mark-partition-done", "db.t", "--partition", "dt=d1,hh=1", "--action",
                "success-file,mark-event", *w)
    assert "mark-event needs a metastore" in err
    assert "custom" in fails(runner, 1, "mark-partition-done", "db.t", "--partition", "dt=d1", "--action", "custom", *w)
    assert "unknown action" in fails(runner, 4, "mark-partition-done", "db.t", "--partition", "dt=d1", "--action",
                                     "succes-file", *w)
    assert "http.url must be non-empty" in fails(runner, 4, "mark-partition-done", "db.t", "--partition", "dt=d1",
                                                 "--action", "http-report", *w)
    fails(runner, 2, "mark-partition-done", "db.t", *w)
    assert tree(root) == before
    ok(runner, "create", "db.flat", "--schema", "id INT", *w)
    assert "not partitioned" in fails(runner, 4, "mark-partition-done", "db.flat", "--partition", "id=1", *w)


def test_allow_empty_marks_a_partition_without_data(runner: CliRunner, table: tuple[str, Path]) -> None:
    wh, root = table
    ok(runner, "mark-partition-done", "db.t", "--partition", "dt=d9", "--allow-empty", "-w", wh)
    assert json.loads((root / "dt=d9" / "_SUCCESS").read_text())["creationTime"] > 0


class _Reports(BaseHTTPRequestHandler):
    received: list[tuple[str, str, Any]] = []
    answer: tuple[int, str] = (200, '{"result": "success"}')

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        type(self).received.append((self.path, self.headers["Content-Type"], json.loads(body)))
        code, text = type(self).answer
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(text.encode())

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def report_server(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    for k in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(k, "127.0.0.1,localhost")
    _Reports.received = []
    _Reports.answer = (200, '{"result": "success"}')
    server = HTTPServer(("127.0.0.1", 0), _Reports)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/done"
    server.shutdown()
    server.server_close()


def test_http_report(runner: CliRunner, table: tuple[str, Path], report_server: str) -> None:
    wh, root = table
    w = ["-w", wh]
    ok(runner, "alter", "db.t", "--set", "partition.mark-done-action=success-file,http-report",
       "--set", f"partition.mark-done-action.http.url={report_server}",
       "--set", "partition.mark-done-action.http.params=team=ads", *w)
    dry = json.loads(ok(runner, "mark-partition-done", "db.t", "--partition", "dt=d2", "--dry-run", "-o", "json",
                        *w).stdout)
    assert _Reports.received == []
    assert [x["action"] for x in dry] == ["success-file", "http-report"]
    assert dry[1]["target"] == f"POST {report_server}"
    ok(runner, "mark-partition-done", "db.t", "--partition", "dt=d2", *w)
    assert (root / "dt=d2" / "_SUCCESS").is_file()
    # Java's HttpReportMarkDoneRequest: params, table, path, partition (the partition path, trailing "/")
    assert _Reports.received == [("/done", "application/json; charset=UTF-8",
                                   {"params": "team=ads", "table": "db.t", "path": str(root),
                                    "partition": "dt=d2/"})]
    _Reports.answer = (200, '{"result": "FAILED"}')
    err = fails(runner, 1, "mark-partition-done", "db.t", "--partition", "dt=d1", *w)
    assert "should be 'SUCCESS' but is 'FAILED'" in err
    _Reports.answer = (500, '{"result": "SUCCESS"}')
    assert "HTTP 500" in fails(runner, 1, "mark-partition-done", "db.t", "--partition", "dt=d1", *w)
