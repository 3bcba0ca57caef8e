"""purge-files and expire-changelogs on tables pypaimon 2.1 wrote, read back by pypaimon.

pypaimon 2.1 neither purges nor expires, so the long-lived changelogs of its table are made
by our snapshot expiry under its table's decoupled ``changelog.num-retained.*`` options.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from tests.interop.pypaimon_fixtures import PyPaimonTables
from tests.interop.pypaimon_peer import PyPaimon

pytestmark = [pytest.mark.pypaimon, pytest.mark.slow]  # each peer call starts an interpreter


def canon(rows: list[dict[str, Any]]) -> list[str]:
    return sorted(json.dumps(r, sort_keys=True, default=str) for r in rows)


def test_purge_pypaimon_reads_empty_and_writes_again(pypaimon: PyPaimon, pypaimon_tables: PyPaimonTables,
                                                     tmp_path: Path) -> None:
    """The PK table has a tag, a consumer and a branch: all go, pypaimon reads nothing and
    commits on top of the purge's OVERWRITE snapshot."""
    t = pypaimon_tables
    wh = str(tmp_path / "wh")
    shutil.copytree(t.warehouse, wh)
    table = Warehouse(wh).table(f"{t.db}.{t.pk_table}")
    report = table.purge_files()
    assert report.result is not None and (len(report.plan.branches), len(report.plan.tags)) == (1, 1)
    assert pypaimon.read(wh, t.db, t.pk_table) == []
    row = t.pk_rows()[0]
    pypaimon.write(wh, t.db, t.pk_table, [row])
    assert canon(pypaimon.read(wh, t.db, t.pk_table)) == canon([row])
    # the append table of the same warehouse is untouched
    assert canon(pypaimon.read(wh, t.db, t.append_table)) == canon(t.append_rows())


def test_expire_changelogs_pypaimon_reads(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = str(tmp_path / "wh")
    pypaimon.create_table(wh, "db", "cl", [("id", "int64"), ("v", "string")], primary_keys=["id"],
                          options={"bucket": "1", "snapshot.num-retained.min": "2", "snapshot.num-retained.max": "2",
                                   "snapshot.time-retained": "1 ms", "changelog.num-retained.max": "50",
                                   "changelog.time-retained": "1 h"})
    latest: dict[int, dict[str, Any]] = {}
    expected: dict[int, list[dict[str, Any]]] = {}
    for i in range(5):
        batch = [{"id": i, "v": f"v{i}"}, {"id": 100, "v": f"x{i}"}]
        sid = pypaimon.write(wh, "db", "cl", batch)
        latest.update({r["id"]: r for r in batch})
        expected[sid] = list(latest.values())
    table = Warehouse(wh).table("db.cl")
    table.expire()  # the table's options: snapshots 1..3 move to changelog/
    cl_dir = Path(table.open().path, "changelog")
    assert sorted(p.name for p in cl_dir.glob("changelog-*")) == ["changelog-1", "changelog-2", "changelog-3"]
    dry = table.expire_changelogs(retain_max=3, dry_run=True)  # latest 5: changelogs from 3 stay
    report = table.expire_changelogs(retain_max=3)
    assert report.result is not None and report.result.expired == 2
    assert [f.path for f in report.plan.files] == [f.path for f in dry.plan.files]
    assert sorted(p.name for p in cl_dir.glob("changelog-*")) == ["changelog-3"]
    for sid in (4, 5):
        assert canon(pypaimon.read(wh, "db", "cl", snapshot_id=sid)) == canon(expected[sid])
    row = {"id": 7, "v": "v7"}
    pypaimon.write(wh, "db", "cl", [row])
    assert canon(pypaimon.read(wh, "db", "cl")) == canon([*expected[5], row])
