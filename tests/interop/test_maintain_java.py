"""After ``maintain`` fixed a warehouse of bad tables, Java Paimon 0.9 reads every table row for row;
a live lease at a table's root is invisible to it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paimon_cli.core.api import Warehouse
from paimon_cli.core.maintain.lease import Lease
from tests.interop.java_harness import JavaPaimon
from tests.maintain_fixtures import CORRUPT, DB, build_bad_warehouse, table_rows, tree_digest


def _java_rows(jp: JavaPaimon, wh: Path, name: str) -> list[tuple[Any, ...]]:
    rows = jp.read(str(wh), DB, name, row_kind=False)
    return sorted(tuple(r[c] for c in ("id", "v", "dt") if c in r) for r in rows)


def test_java_reads_every_table_after_maintain(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    expect = build_bad_warehouse(wh)
    corrupt = tree_digest(wh / f"{DB}.db" / CORRUPT)
    report = Warehouse(str(wh)).maintain()
    assert report.exit_code == 4
    outcomes = {t.identifier: t.outcome for t in report.run.tables}
    assert outcomes.pop(f"{DB}.{CORRUPT}") == "corrupt" and set(outcomes.values()) == {"ok"}
    assert tree_digest(wh / f"{DB}.db" / CORRUPT) == corrupt
    for name, rows in expect.items():
        assert _java_rows(java_paimon, wh, name) == rows, name
        assert table_rows(Warehouse(str(wh)), name) == rows, name
    # a lease held by a running maintain: Java still reads the table, row for row
    t = Warehouse(str(wh)).table(f"{DB}.l0").open()
    lease = Lease.acquire(t.file_io, t.path, "running", 60_000)
    try:
        assert _java_rows(java_paimon, wh, "l0") == expect["l0"]
    finally:
        lease.release()
