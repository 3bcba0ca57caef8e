"""``inspect files`` streams: the text of every format is what rendering all rows at once
printed, ``--limit`` reads only the manifests it needs, and a closed pipe stops the reading."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.api import Warehouse
from paimon_cli.core.manifest import columnar
from paimon_cli.core.utils.rows import RowStream
from paimon_cli.output import render, render_stream

WRITES = 6


@pytest.fixture(scope="module")
def wh(tmp_path_factory: pytest.TempPathFactory) -> Warehouse:
    """db.t: primary key, 2 partitions x 2 buckets, one manifest per write, then a compaction
    (DELETEs and level upgrades)."""
    w = Warehouse(str(tmp_path_factory.mktemp("stream") / "wh"))
    t = w.create_table("db.t", "id BIGINT NOT NULL, dt STRING NOT NULL, v DOUBLE", primary_key="id,dt",
                       partition_by="dt", options={"bucket": "2"})
    for i in range(WRITES):
        t.write(pa.table({"id": pa.array([i, i + 10], pa.int64()), "dt": [f"2024-05-0{1 + i % 2}"] * 2,
                          "v": [i / 3, None]}))
    w.create_table("db.c", "id BIGINT NOT NULL, v STRING", primary_key="id", options={"bucket": "1"})
    c = w.table("db.c")
    for i in range(3):
        c.write(pa.table({"id": pa.array([i], pa.int64()), "v": [f"v{i}"]}))
    c.compact(full=True)
    return w


@pytest.mark.parametrize("fmt", ["json", "jsonl", "csv", "table"])
@pytest.mark.parametrize("name", ["db.t", "db.c"])
def test_streamed_text_is_the_all_at_once_text(wh: Warehouse, monkeypatch: pytest.MonkeyPatch, fmt: str,
                                               name: str) -> None:
    t = wh.table(name)
    for columns in (None, "file_path,min_value_stats,partition"):
        for limit in (None, 3):
            expected, got = io.StringIO(), io.StringIO()
            monkeypatch.setattr(sys, "stdout", expected)
            render(t.inspect("files"), fmt, limit=limit, columns=columns)
            monkeypatch.setattr(sys, "stdout", got)
            render_stream(t.inspect_stream("files"), fmt, limit=limit, columns=columns)
            assert got.getvalue() == expected.getvalue()
            assert expected.getvalue().count("{") + expected.getvalue().count("\n") > 1


def _count_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The manifest files read, by either pass (the DELETE pass and the streamed one)."""
    reads: list[str] = []
    real = columnar._read_bytes

    def counting(file_io: Any, path: str) -> bytes:
        reads.append(path)
        return real(file_io, path)

    monkeypatch.setattr(columnar, "_read_bytes", counting)
    return reads


def test_limit_reads_only_the_manifests_it_shows(wh: Warehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _count_reads(monkeypatch)
    res = CliRunner().invoke(app, ["inspect", "files", "db.t", "-w", wh.path, "-o", "jsonl", "--limit", "1"])
    assert res.exit_code == 0, res.output
    assert len(res.stdout.splitlines()) == 1 and len(reads) == 1
    reads.clear()
    res = CliRunner().invoke(app, ["inspect", "files", "db.t", "-w", wh.path, "-o", "csv"])
    assert res.exit_code == 0 and len(reads) == WRITES
    assert len(res.stdout.splitlines()) == 1 + len(wh.table("db.t").inspect("files").rows) > WRITES


class _ClosedAfterFirstLine(io.StringIO):
    def write(self, s: str) -> int:
        if self.getvalue():
            raise BrokenPipeError
        return super().write(s)


def test_a_closed_pipe_stops_the_reading(wh: Warehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    stream = wh.table("db.t").inspect_stream("files")
    served: list[int] = []
    closed: list[bool] = []

    def chunks(columns: list[str], typed: bool) -> Iterator[list[dict[str, Any]]]:
        try:
            for chunk in real(columns, typed):
                served.append(len(chunk))
                yield chunk
        finally:
            closed.append(True)

    real = stream.chunks
    monkeypatch.setattr(sys, "stdout", _ClosedAfterFirstLine())
    with pytest.raises(BrokenPipeError):
        render_stream(RowStream(stream.columns, chunks, stream.brief), "jsonl")
    assert len(served) == 2 and closed == [True]  # the first chunk printed, the second failed: no third read


def test_head_ends_the_process_cleanly(wh: Warehouse) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    proc = subprocess.Popen([sys.executable, "-m", "paimon_cli", "inspect", "files", "db.t", "-w", wh.path,
                             "-o", "jsonl"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline().startswith(b'{"partition":')
    proc.stdout.close()
    assert proc.wait(60) == 0
    assert proc.stderr.read() == b""


def test_api_stream_and_rows_agree(wh: Warehouse, tmp_path: Path) -> None:
    t = wh.table("db.t")
    rows = t.inspect("files").rows
    stream = t.inspect_stream("files")
    assert [r for chunk in stream.chunks(stream.columns, False) for r in chunk] == rows
    assert stream.collect(limit=2).rows == rows[:2] and stream.collect(limit=0).rows == []
