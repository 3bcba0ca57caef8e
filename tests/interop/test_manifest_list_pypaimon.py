"""The manifest-list stats fields (``_MIN/_MAX_BUCKET``, ``_MIN/_MAX_LEVEL``, ``_MIN/_MAX_ROW_ID``)
between us and pypaimon 2.1, in both directions.

* Lists pypaimon writes (with its two extra fields ``_TOTAL_BUCKETS`` and ``_EXTRA_FILES``):
  we read the six stats exactly as fastavro sees them, and they are what Java computes.
* Lists we write: exact stats (fastavro oracle), and pypaimon reads our tables with partition
  and bucket-key filters row for row. pypaimon prunes manifests on our partition stats (proven
  by hiding the manifests its filter must skip); its bucket pruning of manifests needs its own
  ``_TOTAL_BUCKETS``, which Java does not write and neither do we, so there it falls back to
  entry-level bucket pruning, as it does on Java's lists.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.data import binary_row
from tests.interop.manifest_list_oracle import STAT_FIELDS, listed_manifests
from tests.interop.pypaimon_peer import PyPaimon, decode_value, encode_value

pytestmark = pytest.mark.pypaimon

DB = "ml"
INSPECT = {"_MIN_BUCKET": "min_bucket", "_MAX_BUCKET": "max_bucket", "_MIN_LEVEL": "min_level",
           "_MAX_LEVEL": "max_level", "_MIN_ROW_ID": "min_row_id", "_MAX_ROW_ID": "max_row_id"}
DAYS = ("2024-06-01", "2024-06-02", "2024-06-03")
ARROW = pa.schema([("dt", pa.string()), ("id", pa.int64()), ("v", pa.string())])


def _rows(days: tuple[str, ...], ids: range | list[int], tag: str) -> list[dict[str, Any]]:
    return [{"dt": d, "id": i, "v": f"{tag}{i}"} for d in days for i in ids]


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(sorted((k, str(v)) for k, v in r.items()))


def _write_op(wh: str, table: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {"op": "write", "warehouse": wh, "db": DB, "table": table,
            "rows": [{k: encode_value(v) for k, v in r.items()} for r in rows]}


def _check_inspect_matches_lists(wh: str, table: str) -> list[Any]:
    """Our ``inspect manifests`` (latest snapshot) shows what fastavro reads from the list."""
    path = Path(wh, f"{DB}.db", table)
    latest = max(int(p.name.split("-", 1)[1]) for p in (path / "snapshot").glob("snapshot-*"))
    raw = [m for m in listed_manifests(path, [latest]) if m.manifest_list != _changelog_list(path, latest)]
    ours = Warehouse(wh).table(f"{DB}.{table}").inspect("manifests").to_arrow().to_pylist()
    by_name = {r["file_name"]: r for r in ours}
    assert sorted(by_name) == sorted(m.record["_FILE_NAME"] for m in raw)
    for m in raw:
        assert {k: by_name[m.record["_FILE_NAME"]][INSPECT[k]] for k in STAT_FIELDS} == m.stats
    return raw


def _changelog_list(path: Path, sid: int) -> str | None:
    import json

    return json.loads((path / "snapshot" / f"snapshot-{sid}").read_text()).get("changelogManifestList")


def test_we_read_the_stats_of_pypaimon_lists(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    common = {"warehouse": wh, "db": DB}
    ops = [
        {"op": "create_table", **common, "table": "pk", "columns": [["dt", "string"], ["id", "int64"], ["v", "string"]],
         "primary_keys": ["dt", "id"], "partition_keys": ["dt"], "options": {"bucket": "3"}},
        _write_op(wh, "pk", _rows(DAYS[:2], range(12), "a")),
        _write_op(wh, "pk", _rows(DAYS[2:], range(4), "b")),
        {"op": "create_table", **common, "table": "rt", "columns": [["id", "int64"], ["v", "string"]],
         "primary_keys": [], "partition_keys": [], "options": {"row-tracking.enabled": "true"}},
        _write_op(wh, "rt", [{"id": i, "v": f"r{i}"} for i in range(3)]),
        _write_op(wh, "rt", [{"id": i, "v": f"s{i}"} for i in range(3, 5)]),
    ]
    results = pypaimon.batch(ops)
    assert all(r["ok"] for r in results), [r.get("traceback") for r in results if not r["ok"]]

    for table in ("pk", "rt"):
        listed = listed_manifests(Path(wh, f"{DB}.db", table))
        assert {"_TOTAL_BUCKETS", "_EXTRA_FILES"} <= set(listed[0].record)  # pypaimon's extras
        for m in listed:
            assert m.stats == m.expected, (table, m.record["_FILE_NAME"])
        raw = _check_inspect_matches_lists(wh, table)
        assert raw
    pk = [m.stats for m in listed_manifests(Path(wh, f"{DB}.db", "pk"))]
    assert any(s["_MIN_BUCKET"] != s["_MAX_BUCKET"] for s in pk)
    rt = sorted((m.stats["_MIN_ROW_ID"], m.stats["_MAX_ROW_ID"])
                for m in listed_manifests(Path(wh, f"{DB}.db", "rt"), [2]))
    assert rt == [(0, 2), (3, 4)]


def _peer_filtered(peer: PyPaimon, wh: str, table: str, filter_sets: list[list[list[Any]]]) -> list[list[dict]]:
    """One pypaimon ``read_filtered`` per filter set, all in one peer process."""
    ops = [{"op": "read_filtered", "warehouse": wh, "db": DB, "table": table,
            "filters": [[m, f, [encode_value(v) for v in lits]] for m, f, lits in filters]} for filters in filter_sets]
    out = []
    for res in peer.batch(ops):
        assert res["ok"], res.get("traceback")
        types = res["result"]["types"]
        out.append([{c: decode_value(r[c], types[c]) for c in res["result"]["columns"]} for r in res["result"]["rows"]])
    return out


@pytest.mark.slow
def test_pypaimon_reads_and_prunes_our_lists(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    table = Warehouse(wh).create_table(f"{DB}.ours", "dt STRING NOT NULL, id BIGINT NOT NULL, v STRING",
                                       primary_key=["dt", "id"], partition_by=["dt"], options={"bucket": "3"})
    ref: dict[tuple[str, int], dict[str, Any]] = {}
    for days, ids, tag in [(DAYS[:1], range(20), "a"), (DAYS[1:2], range(20), "b"), (DAYS[2:], range(20), "c"),
                           (DAYS[:1], range(0, 20, 4), "d"), (DAYS[1:2], range(5), "e")]:
        rows = _rows(days, ids, tag)
        table.write(pa.Table.from_pylist(rows, schema=ARROW))
        ref.update({(r["dt"], r["id"]): r for r in rows})
    path = Path(wh, f"{DB}.db", "ours")
    listed = listed_manifests(path)
    assert all(m.stats == m.expected and m.stats["_MIN_BUCKET"] is not None for m in listed)
    latest = _check_inspect_matches_lists(wh, "ours")
    assert any(m.stats["_MIN_BUCKET"] < m.stats["_MAX_BUCKET"] for m in latest)

    def expect(pred: Any) -> list[tuple[Any, ...]]:
        return sorted(_key(r) for r in ref.values() if pred(r))

    cases: list[tuple[list[list[Any]], str, Any]] = [
        ([["equal", "dt", [DAYS[0]]]], f"dt = '{DAYS[0]}'", lambda r: r["dt"] == DAYS[0]),
        ([["equal", "dt", [DAYS[1]]], ["equal", "id", [3]]], f"dt = '{DAYS[1]}' AND id = 3",
         lambda r: r["dt"] == DAYS[1] and r["id"] == 3),
        ([["is_in", "id", [4, 5, 19]]], "id IN (4, 5, 19)", lambda r: r["id"] in (4, 5, 19)),
    ]
    peer = _peer_filtered(pypaimon, wh, "ours", [filters for filters, _, _ in cases])
    for (_, where, pred), got in zip(cases, peer, strict=True):
        want = expect(pred)
        assert want, where
        assert sorted(_key(r) for r in got) == want, where
        ours = Warehouse(wh).table(f"{DB}.ours").read(where=where).to_pylist()
        assert sorted(_key(r) for r in ours) == want, where

    # pruning matters: hide every manifest whose stats exclude DAYS[0]; a reader that prunes
    # on our lists never opens them
    types = table.open().schema.partition_types

    def admits_day0(rec: dict[str, Any]) -> bool:
        stats = rec["_PARTITION_STATS"]
        (lo,), (hi,) = (binary_row.deserialize(bytes(stats[k]), types) for k in ("_MIN_VALUES", "_MAX_VALUES"))
        return bool(lo <= DAYS[0] <= hi)

    day0_parts = {m.record["_FILE_NAME"] for m in latest if admits_day0(m.record)}
    hidden = tmp_path / "hidden"
    hidden.mkdir()
    for m in latest:
        if m.record["_FILE_NAME"] not in day0_parts:
            shutil.move(path / "manifest" / m.record["_FILE_NAME"], hidden / m.record["_FILE_NAME"])
    assert len(list(hidden.iterdir())) >= 2
    (got,) = _peer_filtered(pypaimon, wh, "ours", [[["equal", "dt", [DAYS[0]]]]])
    assert sorted(_key(r) for r in got) == expect(lambda r: r["dt"] == DAYS[0])
