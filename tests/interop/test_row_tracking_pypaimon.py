"""Row-tracking tables (``row-tracking.enabled``) shared with pypaimon 2.1: row ids survive us.

pypaimon 2.1 writes row-tracking append tables: its commit stamps new files with the snapshot
id as sequence number and hands out ``_FIRST_ROW_ID`` from the snapshot's ``nextRowId``
(Java's ``RowTrackingCommitUtils``). After pypaimon's commits we write, compact and rewrite
file indexes, and pypaimon must read every row with the ``_ROW_ID`` and ``_SEQUENCE_NUMBER`` it
had; rows we wrote get exactly the ids pypaimon gives the same rows on a copy of the table,
and pypaimon's next append continues after our ``nextRowId`` (no id twice).

Compaction stores ``_ROW_ID`` / ``_SEQUENCE_NUMBER`` in the output files as Java does. pypaimon
2.1 ignores a stored ``_ROW_ID`` and reads null for a file without ``_FIRST_ROW_ID`` (Java's
compaction output; also its master); we set ``_FIRST_ROW_ID`` where a compacted file's ids
are contiguous, which the unpartitioned table here always gets, so pypaimon reads all ids.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.cli_runner import CLI_ENV, cli, cli_json
from tests.interop.pypaimon_peer import PyPaimon, write_op

pytestmark = [pytest.mark.pypaimon, pytest.mark.slow]

DB = "rt"
COLUMNS = [("id", "int64"), ("dt", "string"), ("v", "string")]
OPTIONS = {"row-tracking.enabled": "true", "bucket": "-1"}
SYSTEM = ["_ROW_ID", "_SEQUENCE_NUMBER"]


def _rows(ids: range, dt_: str | None = None) -> list[dict[str, Any]]:
    return [{"id": i, "dt": dt_ or ("a" if i % 2 else "b"), "v": f"v{i}"} for i in ids]


# table -> (partition keys, pypaimon's commits before ours)
TABLES: dict[str, tuple[list[str], list[list[dict[str, Any]]]]] = {
    "flat": ([], [_rows(range(0, 4)), _rows(range(4, 7)), _rows(range(7, 12))]),
    "parted": (["dt"], [_rows(range(0, 5)), _rows(range(5, 8), "a"), _rows(range(8, 11))]),
}
OUR_ROWS = _rows(range(100, 106))  # both partitions
LATER_ROWS = _rows(range(200, 203))


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


def by_id(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: r["id"])


def ours(wh: str, name: str) -> list[dict[str, Any]]:
    return by_id(cli_json(wh, "read", f"{DB}.{name}", "--select", "id,dt,v,_ROW_ID,_SEQUENCE_NUMBER"))


def theirs(peer: PyPaimon, wh: str, name: str) -> list[dict[str, Any]]:
    return by_id(peer.read(wh, DB, name, projection=["id", "dt", "v", *SYSTEM]))


def theirs_both(peer: PyPaimon, whs: list[str], name: str) -> list[list[dict[str, Any]]]:
    """:func:`theirs` of several warehouses in one driver run (int and string columns only)."""
    results = peer.run([{"op": "read", "warehouse": wh, "db": DB, "table": name,
                         "projection": ["id", "dt", "v", *SYSTEM]} for wh in whs])
    return [by_id(r["rows"]) for r in results]


def next_row_id(wh: str, name: str) -> int | None:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    snap = table.snapshot_manager.latest_snapshot()
    assert snap is not None
    return snap.next_row_id


def live_files(wh: str, name: str) -> list[Any]:
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    return [e.file for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot())]


@pytest.fixture(scope="module")
def peer_wh(pypaimon: PyPaimon, tmp_path_factory: pytest.TempPathFactory) -> str:
    """pypaimon creates both tables and commits TABLES' rows (one snapshot per commit)."""
    wh = str(tmp_path_factory.mktemp("peer-rowtrack-wh"))
    pypaimon.run([
        op
        for name, (parts, commits) in TABLES.items()
        for op in [{"op": "create_table", "warehouse": wh, "db": DB, "table": name, "partition_keys": parts,
                    "columns": [list(c) for c in COLUMNS], "options": OPTIONS},
                   *(write_op(wh, DB, name, rows) for rows in commits)]
    ])
    return wh


def copy_wh(src: str, dst: Path) -> str:
    shutil.copytree(src, dst)
    return str(dst)


@pytest.mark.parametrize("name", list(TABLES))
def test_we_read_pypaimon_row_ids(pypaimon: PyPaimon, peer_wh: str, name: str) -> None:
    expected = theirs(pypaimon, peer_wh, name)
    assert [r["_ROW_ID"] for r in expected if r["_ROW_ID"] is not None]  # the peer numbered them
    assert ours(peer_wh, name) == expected


@pytest.mark.parametrize("name", list(TABLES))
def test_our_write_numbers_rows_as_pypaimon(pypaimon: PyPaimon, peer_wh: str, tmp_path: Path, name: str) -> None:
    """The same rows appended by us and by pypaimon to two copies of the table get the same
    row ids and sequence numbers, and the snapshots the same nextRowId."""
    ours_wh = copy_wh(peer_wh, tmp_path / "ours")
    peer_copy = copy_wh(peer_wh, tmp_path / "peer")
    (tmp_path / "in.json").write_text("\n".join(json.dumps(r) for r in OUR_ROWS))
    cli(ours_wh, "write", f"{DB}.{name}", str(tmp_path / "in.json"), "--format", "json")
    pypaimon.run([write_op(peer_copy, DB, name, OUR_ROWS)])
    got, want = theirs_both(pypaimon, [ours_wh, peer_copy], name)
    assert got == want and len(got) == len(OUR_ROWS) + sum(map(len, TABLES[name][1]))
    assert next_row_id(ours_wh, name) == next_row_id(peer_copy, name) == next_row_id(peer_wh, name) + len(OUR_ROWS)


@pytest.mark.parametrize("name", list(TABLES))
def test_compact_and_rewrite_keep_row_ids(pypaimon: PyPaimon, peer_wh: str, tmp_path: Path, name: str) -> None:
    wh = copy_wh(peer_wh, tmp_path / "wh")
    (tmp_path / "in.json").write_text("\n".join(json.dumps(r) for r in OUR_ROWS))
    cli(wh, "write", f"{DB}.{name}", str(tmp_path / "in.json"), "--format", "json")
    before = ours(wh, name)
    assert sorted(r["_ROW_ID"] for r in before) == list(range(len(before)))  # unique, no gap
    assert next_row_id(wh, name) == len(before)

    cli(wh, "compact", f"{DB}.{name}", "--full")
    compacted = [f for f in live_files(wh, name) if f.file_source == 1]
    assert compacted and all(f.write_cols == ("id", "dt", "v", *SYSTEM) for f in compacted)
    assert ours(wh, name) == before
    assert next_row_id(wh, name) == len(before)  # a compaction hands out no id

    cli(wh, "alter", f"{DB}.{name}", "--set", "file-index.bloom-filter.columns=v")
    cli(wh, "rewrite-file-index", f"{DB}.{name}")
    assert all(f.extra_files or f.embedded_index for f in live_files(wh, name))
    assert ours(wh, name) == before

    peer_rows = theirs(pypaimon, wh, name)
    no_first_id = {f.file_name for f in live_files(wh, name) if f.first_row_id is None}
    if name == "flat":  # one contiguous range: pypaimon 2.1 reads every id
        assert not no_first_id
        assert peer_rows == before
    else:  # pypaimon 2.1 reads null for files whose ids are only stored per row
        assert no_first_id
        assert [{**r, "_ROW_ID": None} for r in peer_rows] == [{**r, "_ROW_ID": None} for r in before]
        assert all(p["_ROW_ID"] in (None, o["_ROW_ID"]) for p, o in zip(peer_rows, before, strict=True))
        nulls = sum(1 for p in peer_rows if p["_ROW_ID"] is None)
        assert nulls == sum(f.row_count for f in live_files(wh, name) if f.first_row_id is None)

    # pypaimon appends after us: its ids continue at our nextRowId, none collides
    pypaimon.run([write_op(wh, DB, name, LATER_ROWS)])
    after = ours(wh, name)
    assert [r for r in after if r["id"] < 200] == before
    new_ids = sorted(r["_ROW_ID"] for r in after if r["id"] >= 200)
    assert new_ids == list(range(len(before), len(before) + len(LATER_ROWS)))
    assert next_row_id(wh, name) == len(after)


def test_read_system_columns_where_matches_pypaimon(pypaimon: PyPaimon, peer_wh: str) -> None:
    got = cli_json(peer_wh, "read", f"{DB}.parted", "--select", "_ROW_ID,_SEQUENCE_NUMBER",
                   "--where", "_ROW_ID >= 5")
    peer_rows = pypaimon.read(peer_wh, DB, "parted", projection=SYSTEM)
    want = [r for r in peer_rows if r["_ROW_ID"] >= 5]
    assert len(want) == 6
    assert sorted(got, key=lambda r: r["_ROW_ID"]) == sorted(want, key=lambda r: r["_ROW_ID"])
    by_seq = cli_json(peer_wh, "read", f"{DB}.parted", "--select", "id", "--where", "_SEQUENCE_NUMBER = 2")
    assert sorted(r["id"] for r in by_seq) == [5, 6, 7]


@pytest.mark.parametrize("name", list(TABLES))
def test_sort_compaction_keeps_row_ids(pypaimon: PyPaimon, peer_wh: str, tmp_path: Path, name: str) -> None:
    """``compact --order-strategy``: every row keeps its ``_ROW_ID`` and ``_SEQUENCE_NUMBER``
    (stored in the sorted files, as the small-file compaction stores them); no id is handed out."""
    wh = copy_wh(peer_wh, tmp_path / "wh")
    before = ours(wh, name)
    res = cli_json(wh, "compact", f"{DB}.{name}", "--order-strategy", "zorder", "--order-by", "v,id")[0]
    assert res["commit_kind"] == "OVERWRITE" and res["rows_out"] == len(before)
    files = live_files(wh, name)
    assert all(f.file_source == 1 and f.write_cols == ("id", "dt", "v", *SYSTEM) for f in files)
    assert ours(wh, name) == before
    assert next_row_id(wh, name) == len(before)
    peer_rows = theirs(pypaimon, wh, name)  # pypaimon 2.1 reads null ids where no _FIRST_ROW_ID is set
    assert [{**r, "_ROW_ID": None} for r in peer_rows] == [{**r, "_ROW_ID": None} for r in before]
    assert all(p["_ROW_ID"] in (None, o["_ROW_ID"]) for p, o in zip(peer_rows, before, strict=True))
    pypaimon.run([write_op(wh, DB, name, LATER_ROWS)])  # its ids continue at our nextRowId
    new_ids = sorted(r["_ROW_ID"] for r in ours(wh, name) if r["id"] >= 200)
    assert new_ids == list(range(len(before), len(before) + len(LATER_ROWS)))
