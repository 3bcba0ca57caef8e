"""``deletion-vectors.bitmap64`` on tables pypaimon 2.1 writes, compacted by us.

pypaimon 2.1 writes primary-key tables with the option set (it stores it, writes level-0 files
and never a deletion vector there), reads only 32-bit vectors, and never writes a 64-bit one:
its reader raises "Invalid magic number" on the 64-bit magic. So the peer cycle is: pypaimon
writes, our minor compaction writes deletion vectors -- every one in the 64-bit layout Java 1.2+
writes (length prefix, little-endian magic 1681511377, portable Roaring64, CRC; the index
manifest length counts prefix and CRC) -- our reader applies them, and after our full
compaction, which leaves no vector, pypaimon reads our result row for row. The byte layout
itself is pinned against Java's own dvindex-64 fixture in tests/core/test_deletion_vectors.py.
"""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.index.deletion_vectors import MAGIC_32, MAGIC_64
from paimon_cli.core.manifest.index_manifest import DELETION_VECTORS_INDEX
from paimon_cli.core.operation.scan import FileStoreScan
from tests.interop.pypaimon_peer import PyPaimon, PyPaimonError, encode_value

pytestmark = pytest.mark.pypaimon

DB = "dv64"
NAME = "pk"
COLS = [["dt", "string"], ["id", "int64"], ["v", "string"], ["op", "string"]]
DAYS = ("2024-07-01", "2024-07-02")


def _row(d: str, i: int, v: str | None, op: str = "+I") -> dict[str, Any]:
    return {"dt": d, "id": i, "v": v, "op": op}


COMMITS = [
    [_row(d, i, f"a{i}") for d in DAYS for i in range(30)],
    [_row(d, i, f"b{i}", "+U") for d in DAYS for i in range(0, 30, 3)] + [_row(DAYS[0], i, None, "-D") for i in (1, 2)],
    [_row(DAYS[1], i, f"c{i}", "+U") for i in range(10, 40)] + [_row(DAYS[0], i, None, "-D") for i in (4, 9, 29)],
]


def _expected(upto: int) -> list[tuple[Any, ...]]:
    merged: dict[tuple[str, int], dict[str, Any]] = {}
    for batch in COMMITS[:upto]:
        for r in batch:
            if r["op"] == "-D":
                merged.pop((r["dt"], r["id"]), None)
            else:
                merged[(r["dt"], r["id"])] = r
    return sorted((r["dt"], r["id"], r["v"], r["op"]) for r in merged.values())


def _canon(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((r["dt"], r["id"], r["v"], r["op"]) for r in rows)


def _peer_write(peer: PyPaimon, wh: str, rows: list[dict[str, Any]]) -> None:
    peer.call("write", warehouse=wh, db=DB, table=NAME, rows=[{k: encode_value(v) for k, v in r.items()} for r in rows],
              overwrite=False, overwrite_partition=None, postpone_fixed_bucket=False)


def _deletion_vector_kinds(wh: str) -> list[int]:
    """The magic of every vector the latest snapshot's DV index files hold, checking that the
    index manifest length of each is the 64-bit one (prefix + body + CRC)."""
    table = Warehouse(wh).table(f"{DB}.{NAME}").open()
    entries = FileStoreScan(table).index_entries(table.snapshot_manager.latest_snapshot())
    magics = []
    for e in entries:
        if e.index_file.index_type != DELETION_VECTORS_INDEX:
            continue
        data = Path(table.path, "index", e.index_file.file_name).read_bytes()
        assert data[0] == 1
        for m in e.index_file.dv_ranges or ():
            (size,) = struct.unpack_from(">i", data, m.offset)
            (le_magic,) = struct.unpack_from("<i", data, m.offset + 4)
            (be_magic,) = struct.unpack_from(">i", data, m.offset + 4)
            magics.append(le_magic if le_magic == MAGIC_64 else be_magic)
            if le_magic == MAGIC_64:
                assert m.length == size + 8
    return magics


@pytest.mark.slow
def test_our_compaction_writes_64bit_vectors_pypaimon_reads_the_result(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, DB, NAME, COLS, primary_keys=["dt", "id"], partition_keys=["dt"],
                          options={"bucket": "2", "rowkind.field": "op", "deletion-vectors.enabled": "true",
                                   "deletion-vectors.bitmap64": "true"})
    table = Warehouse(wh).table(f"{DB}.{NAME}")

    def ours() -> list[tuple[Any, ...]]:
        return _canon(table.read().to_pylist())

    _peer_write(pypaimon, wh, COMMITS[0])
    assert pypaimon.read(wh, DB, NAME) == [] and ours() == []  # level 0 is hidden in DV tables
    table.compact()
    assert ours() == _canon(pypaimon.read(wh, DB, NAME)) == _expected(1)

    for upto in (2, 3):
        _peer_write(pypaimon, wh, COMMITS[upto - 1])
        table.compact()  # level 0 on top of upper levels: replaced rows become deletion vectors
        kinds = _deletion_vector_kinds(wh)
        assert kinds and set(kinds) == {MAGIC_64}, kinds
        assert ours() == _expected(upto)
        with pytest.raises(PyPaimonError, match=f"Invalid magic number: .*expected: {MAGIC_32}"):
            pypaimon.read(wh, DB, NAME)
        table.compact(full=True)  # nothing left to delete: no vector, readable by pypaimon 2.1
        assert _deletion_vector_kinds(wh) == []
        assert _canon(pypaimon.read(wh, DB, NAME)) == ours() == _expected(upto)
