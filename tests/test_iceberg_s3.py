"""Iceberg metadata on an S3-compatible store (moto on loopback): the versions are published
with the conditional put, paths keep their ``s3://`` scheme, and pyiceberg reads the table
through the store's own API."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

from paimon_cli.core.api import Warehouse
from tests.s3_fixtures import ACCESS_KEY, SECRET_KEY

pytestmark = pytest.mark.s3


def _rows(s3_server: Any, location: str) -> list[int]:
    props = {"s3.endpoint": s3_server.endpoint, "s3.access-key-id": ACCESS_KEY,
             "s3.secret-access-key": SECRET_KEY, "s3.region": s3_server.region}
    st = StaticTable.from_metadata(location, properties=props)
    return sorted(r["id"] for r in st.scan().to_arrow().to_pylist())


def test_hadoop_catalog_metadata_on_s3(s3_server: Any, s3_warehouse: str) -> None:
    wh = Warehouse(s3_warehouse, s3_server.fs_option_pairs())
    t = wh.create_table("db.t", "id INT, dt STRING", partition_by="dt",
                        options={"bucket": "-1", "metadata.iceberg.storage": "hadoop-catalog"})
    for i, part in enumerate(("a", "b", "a"), start=1):
        t.write(pa.table({"id": pa.array([i], pa.int32()), "dt": [part]}))
    location = f"{s3_warehouse}/iceberg/db/t"
    assert _rows(s3_server, location) == [1, 2, 3]
    t.compact(full=True)
    t.rollback(snapshot=2)
    assert _rows(s3_server, location) == [1, 2] == sorted(r["id"] for r in t.read().to_pylist())
    t.write(pa.table({"id": pa.array([9], pa.int32()), "dt": ["c"]}))
    t.expire(retain_max=1, retain_min=1)
    assert _rows(s3_server, location) == [1, 2, 9]
    rows = t.inspect("iceberg").rows
    assert [(r["snapshot_id"], r["paimon_snapshot"]) for r in rows] == [(3, True)]
    assert rows[0]["manifest_list"].startswith(f"{s3_warehouse}/iceberg/db/t/metadata/snap-")
