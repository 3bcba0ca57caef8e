"""A commit whose outcome cannot be learnt: exit 1, one line naming the snapshot, nothing
deleted (the data files may be referenced by the snapshot if it landed)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog


def test_write_whose_snapshot_outcome_is_unknown_exits_1_and_keeps_its_files(
    runner: CliRunner, warehouse: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    snapshot_publish_fault: Any,
) -> None:
    w = ["-w", warehouse]
    r = runner.invoke(app, ["create", "db.t", "--schema", "id INT, v STRING", *w,
                            "--option", "commit.min-retry-wait=1 ms", "--option", "commit.max-retry-wait=2 ms"])
    assert r.exit_code == 0, r.stderr
    src = tmp_path / "a.csv"
    src.write_text("id,v\n1,a\n2,b\n")
    snapshot_publish_fault(lands=False, error=TimeoutError("no answer from the store"), failing_reads=-1)
    r = runner.invoke(app, ["write", "db.t", str(src), *w])
    monkeypatch.undo()
    assert r.exit_code == 1, (r.stdout, r.stderr)
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "error: commit to db.t: the outcome of publishing snapshot 1 is unknown (OSError: connection reset)"
    ), lines
    assert "remove-orphan-files" in lines[0] and "Traceback" not in r.stderr
    table = FileSystemCatalog(warehouse).get_table("db.t")
    assert table.snapshot_manager.snapshot_ids() == []
    assert list(Path(table.path).glob("bucket-*/data-*"))  # kept: the snapshot might reference them
