"""pypaimon 2.1 reads every table paimon-cli writes exactly as Java 0.9 does (same scenarios)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest

from tests.interop.test_write_java import DB, TABLES, Written, build_written_tables, sort_rows

pytestmark = pytest.mark.pypaimon


def peer_form(row: dict[str, Any]) -> dict[str, Any]:
    """A row as the peer decodes it: MAP as sorted [k, v] pairs, TIME as time, others as given."""
    out = {}
    for k, v in row.items():
        if k.startswith("c_map") and v is not None:
            pairs = [[mk, mv] for mk, mv in v.items()] if isinstance(v, dict) else [list(p) for p in v]
            v = sorted(pairs, key=lambda p: str(p[0]))
        if isinstance(v, dt.datetime) and v.tzinfo is not None:
            v = v.astimezone(dt.timezone.utc)
        out[k] = v
    return out


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, dict[str, Written]]:
    wh = tmp_path_factory.mktemp("written-wh-peer")
    return str(wh), build_written_tables(str(wh), tmp_path_factory.mktemp("write-inputs-peer"))


@pytest.mark.parametrize("name", TABLES)
def test_pypaimon_reads_what_we_wrote(pypaimon: Any, written: tuple[str, dict[str, Written]], name: str) -> None:
    wh, tables = written
    w = tables[name]
    got = sort_rows([peer_form(r) for r in pypaimon.read(wh, DB, name)], w.keys)
    assert got == sort_rows([peer_form(r) for r in w.expected], w.keys)


def test_pypaimon_writes_into_our_table_and_we_keep_merging(
    pypaimon: Any, written: tuple[str, dict[str, Written]], tmp_path: Path
) -> None:
    """pypaimon appends to our fixed-bucket table; its rows land in our buckets (one row per key)."""
    wh, tables = written
    w = tables["ow_whole"]
    pypaimon.write(wh, DB, "ow_whole", [{"id": 3, "v": "peer3"}, {"id": 4, "v": "peer4"}])
    got = sort_rows(pypaimon.read(wh, DB, "ow_whole"), w.keys)
    assert got == [{"id": 3, "v": "peer3"}, {"id": 4, "v": "peer4"}, {"id": 9, "v": "y9"}]
