"""``clone`` between file systems: a local table to an S3-compatible store and back.

Why: clone copies through each side's FileIO; a path built for the wrong side, or a copy that
only works on a local disk, would leave a clone that does not read. Proof: a local primary-key
table with deletion vectors is cloned to the moto bucket (``--target-fs-option``) and from
there back to a second local warehouse (``--fs-option`` on the source side); both clones
read row for row as the source, and a re-run against S3 copies nothing and commits nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.s3_fixtures import S3Server

pytestmark = pytest.mark.s3


def _ok(*args: str) -> Any:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output
    return res


def _read(wh: str, table: str, fs: list[str]) -> list[dict[str, Any]]:
    return sorted(json.loads(_ok("read", table, "-w", wh, *fs, "-o", "json").stdout), key=lambda r: (r["dt"], r["id"]))


def test_clone_to_s3_and_back(s3_server: S3Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    local, back = str(tmp_path / "wh"), str(tmp_path / "back")
    s3 = s3_server.fresh_warehouse("clone")
    fs = [a for pair in s3_server.fs_option_pairs() for a in ("--fs-option", pair)]
    target_fs = [a for pair in s3_server.fs_option_pairs() for a in ("--target-fs-option", pair)]
    csv = tmp_path / "a.csv"
    csv.write_text("id,v,dt\n1,a,x\n2,b,x\n3,c,y\n")
    _ok("create", "db.t", "-w", local, "--schema", "id BIGINT NOT NULL, v STRING, dt STRING NOT NULL",
        "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=2",
        "--option", "deletion-vectors.enabled=true")
    _ok("write", "db.t", str(csv), "-w", local)
    csv.write_text("id,v,dt\n1,A,x\n")
    _ok("write", "db.t", str(csv), "-w", local)
    source = _read(local, "db.t", [])
    _ok("clone", "db.t", "--target", "bak.t", "-w", local, "--target-warehouse", s3, *target_fs)
    assert _read(s3, "bak.t", fs) == source
    again = json.loads(_ok("clone", "db.t", "--target", "bak.t", "-w", local, "--target-warehouse", s3,
                           *target_fs, "-o", "json").stdout)
    assert again[0]["action"] == "up-to-date" and again[0]["files_copied"] == 0
    _ok("clone", "bak.t", "--target", "db.t", "-w", s3, *fs, "--target-warehouse", back)
    assert _read(back, "db.t", []) == source
