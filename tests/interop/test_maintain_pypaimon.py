"""pypaimon 2.1 reads every table row for row after ``maintain``, also while a lease is held."""

from __future__ import annotations

from pathlib import Path

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.maintain.lease import Lease
from tests.interop.pypaimon_peer import PyPaimon, decode_value
from tests.maintain_fixtures import DB, build_bad_warehouse

pytestmark = pytest.mark.pypaimon


def test_pypaimon_reads_every_table_after_maintain_and_under_a_lease(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    expect = build_bad_warehouse(wh)
    assert Warehouse(str(wh)).maintain().exit_code == 4  # the corrupt table
    leases = []
    for name in expect:
        t = Warehouse(str(wh)).table(f"{DB}.{name}").open()
        leases.append(Lease.acquire(t.file_io, t.path, "running", 60_000))
    try:
        names = list(expect)
        results = pypaimon.run([{"op": "read", "warehouse": str(wh), "db": DB, "table": n} for n in names])
        for name, res in zip(names, results, strict=True):
            got = [{c: decode_value(r[c], res["types"][c]) for c in res["columns"]} for r in res["rows"]]
            assert sorted(tuple(r[c] for c in ("id", "v", "dt") if c in r) for r in got) == expect[name], name
    finally:
        for lease in leases:
            lease.release()
