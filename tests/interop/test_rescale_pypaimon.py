"""pypaimon 2.1 reads a table we rescaled row for row and keeps writing into it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.rescale import rescale
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.schema.table_schema import Schema

pytestmark = pytest.mark.pypaimon

DB = "db"


def _sorted(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return sorted((r["dt"], r["id"], r["v"]) for r in rows)


@pytest.mark.parametrize("pk", [True, False])
def test_pypaimon_reads_and_writes_a_rescaled_table(pypaimon: Any, tmp_path: Path, pk: bool) -> None:
    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_database(DB, True)
    options = {"bucket": "2"} if pk else {"bucket": "2", "bucket-key": "id"}
    cat.create_table(f"{DB}.t", Schema.of(parse_columns("id BIGINT NOT NULL, v STRING, dt STRING NOT NULL"),
                                          partition_keys=("dt",), primary_keys=("id", "dt") if pk else (),
                                          options=options))
    t = cat.get_table(f"{DB}.t")
    for n in range(2):
        p = tmp_path / f"in{n}.csv"
        p.write_text("id,v,dt\n" + "".join(f"{i},v{n}-{i},{'x' if i % 2 else 'y'}\n" for i in range(n * 5, 30)))
        write_table(t, [str(p)])
    before = _sorted(TableRead(t).to_arrow().to_pylist())
    rescale(t, bucket_num=5)
    assert _sorted(pypaimon.read(wh, DB, "t")) == before
    pypaimon.write(wh, DB, "t", [{"id": 7, "v": "peer", "dt": "x"}, {"id": 40, "v": "peer", "dt": "y"}])
    got = _sorted(pypaimon.read(wh, DB, "t"))
    ours = _sorted(TableRead(cat.get_table(f"{DB}.t")).to_arrow().to_pylist())
    assert got == ours
    if pk:
        expected = sorted([r for r in before if r[1] != 7] + [("x", 7, "peer"), ("y", 40, "peer")])
    else:
        expected = sorted(before + [("x", 7, "peer"), ("y", 40, "peer")])
    assert got == expected
