"""Java Paimon 0.9 reads every row that concurrent `paimon-cli write` processes committed.

Why: tests/test_concurrent_write.py proves the snapshots are dense and our reader sees all
rows; here the reference implementation must agree -- its snapshot listing, its merged
read, and its overwrite result -- so retried commits are valid Paimon, not just valid to us.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.test_concurrent_write import (
    K_ROUNDS,
    N_PROCS,
    Target,
    concurrent_appends,
    concurrent_overwrites,
    create,
    key,
    read_cli,
)

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java


def _java_rows(jp: JavaPaimon, wh: str, name: str) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k != "_row_kind"} for r in jp.read(wh, "db", name)]


def _java_snapshots(jp: JavaPaimon, wh: str, name: str) -> list[tuple[int, str, str]]:
    res = jp.system_table(wh, "db", name, "snapshots")
    cols = res["columns"]
    sid, kind, user = cols.index("snapshot_id"), cols.index("commit_kind"), cols.index("commit_user")
    return sorted((r[sid], r[kind], r[user]) for r in res["rows"])


@pytest.mark.parametrize("pk", [True, False], ids=["pk", "append"])
def test_java_reads_concurrent_writes(java_paimon: JavaPaimon, tmp_path: Path, pk: bool) -> None:
    target = Target(str(tmp_path / "wh"))
    # write-only: only appends race here (auto-compaction races: tests/test_concurrent_compact.py)
    extra = ["--primary-key", "id,dt", "--option", "bucket=3", "--option", "write-only=true"] if pk else []
    create(target, "t", "--partition-by", "dt", *extra)
    expected = concurrent_appends(target, tmp_path, "t")
    snaps = _java_snapshots(java_paimon, target.warehouse, "t")
    assert [s[0] for s in snaps] == list(range(1, N_PROCS * K_ROUNDS + 1))
    assert {s[1] for s in snaps} == {"APPEND"} and len({s[2] for s in snaps}) == len(snaps)
    java = _java_rows(java_paimon, target.warehouse, "t")
    assert len(java) == len(expected)
    assert sorted(map(key, java)) == sorted(map(key, expected))


def test_java_reads_concurrent_overwrites(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    target = Target(str(tmp_path / "wh"))
    create(target, "ow", "--partition-by", "dt", "--primary-key", "id,dt", "--option", "bucket=2")
    concurrent_overwrites(target, tmp_path, "ow")
    assert [s[1] for s in _java_snapshots(java_paimon, target.warehouse, "ow")] == ["APPEND", "OVERWRITE", "OVERWRITE"]
    java = _java_rows(java_paimon, target.warehouse, "ow")
    ours = read_cli(target, "ow")
    assert sorted(map(key, java)) == sorted(json.dumps(r, sort_keys=True) for r in ours)
