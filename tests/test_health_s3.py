"""``health`` on an S3-compatible store (moto on loopback) says what it says on a local disk.

The tables are assessed on worker threads there; the rows must equal the local run's once
the warehouse in the fix commands is swapped, and the corrupt table is reported the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse
from tests.s3_fixtures import S3Server

pytestmark = [pytest.mark.s3, pytest.mark.slow]


def test_health_on_s3_equals_local(tmp_path: Path, s3_server: S3Server, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    local = tmp_path / "wh"
    w = Warehouse(str(local))
    cols = "id BIGINT NOT NULL, v STRING"
    w.create_table("db.good", cols, primary_key="id", options={"bucket": "1"}).write(
        pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}))
    t = w.create_table("db.l0", cols, primary_key="id", options={"bucket": "1"})
    for i in range(6):
        t.write(pa.table({"id": pa.array([i], pa.int64()), "v": ["a"]}), write_only=True)
    w.create_table("db.broken", cols).write(pa.table({"id": pa.array([1], pa.int64()), "v": ["a"]}))
    (local / "db.db" / "broken" / "snapshot" / "snapshot-1").write_text("{ not json")
    s3 = s3_server.fresh_warehouse("health")
    s3_server.new_s3fs().put(str(local) + "/", s3.removeprefix("s3://") + "/", recursive=True)

    runner = CliRunner()
    here = runner.invoke(app, ["health", "-w", str(local), "-o", "json"])
    fs = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    there = runner.invoke(app, ["health", "-w", s3, *fs, "-o", "json"])
    assert here.exit_code == there.exit_code == 4, (here.stderr, there.stderr)
    rows_here = json.loads(here.stdout)
    rows_there = json.loads(there.stdout.replace(s3, str(local)))
    assert [r["table"] for r in rows_here] == ["broken", "good", "l0"]
    broken_here, broken_there = rows_here.pop(0), rows_there.pop(0)
    assert rows_there == rows_here
    assert (broken_there["score"], broken_there["kind"]) == (broken_here["score"], broken_here["kind"]) == (
        0, "unreadable_metadata")
    assert "snapshot-1" in broken_there["message"]
