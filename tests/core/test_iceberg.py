"""Iceberg-compatible metadata (core/iceberg): pyiceberg, a real Iceberg reader, is the judge.

Every table we write, compact, rescale, expire and roll back with ``metadata.iceberg.storage``
on must read in pyiceberg exactly as our own ``read`` returns it, through the table's
``version-hint.text`` as an Iceberg Hadoop table is found; the snapshot list and operations
must be the ones Java's callback writes for the same commits.
"""

from __future__ import annotations

import datetime as dt
import decimal
import json
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from pyiceberg.table import StaticTable

from paimon_cli.core.api import Warehouse
from paimon_cli.core.errors import PaimonError

ICEBERG = {"metadata.iceberg.storage": "table-location"}


def _rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(rows, key=lambda r: json.dumps(r, sort_keys=True, default=str))


def iceberg(location: Path, snapshot_id: int | None = None) -> list[dict[str, Any]]:
    """Rows pyiceberg reads from the Iceberg table at ``location`` (found by its version hint)."""
    st = StaticTable.from_metadata(str(location))
    return _rows(st.scan(snapshot_id=snapshot_id).to_arrow().to_pylist())


def metadata(location: Path) -> dict[str, Any]:
    hint = (location / "metadata" / "version-hint.text").read_text()
    return json.loads((location / "metadata" / f"v{hint}.metadata.json").read_text())


def ours(t: Any) -> list[dict[str, Any]]:
    return _rows(t.read().to_pylist())


def batch(ids: list[int], dt_: str, tag: str = "v") -> pa.Table:
    return pa.table({
        "id": pa.array(ids, pa.int32()),
        "dt": [dt_] * len(ids),
        "v": [f"{tag}{i}" for i in ids],
        "d": [i * 1.5 for i in ids],
        "day": [dt.date(2024, 1, 1 + i % 28) for i in ids],
        "ts": [dt.datetime(2024, 1, 1, 0, 0, i % 60) for i in ids],
        "amt": [decimal.Decimal(f"{i}.25") for i in ids],
    })


COLUMNS = "id INT NOT NULL, dt STRING NOT NULL, v STRING, d DOUBLE, day DATE, ts TIMESTAMP(6), amt DECIMAL(10, 2)"


@pytest.fixture
def wh(tmp_path: Path) -> Warehouse:
    return Warehouse(str(tmp_path / "wh"))


def _append(wh: Warehouse, name: str = "a", **options: str) -> Any:
    return wh.create_table(f"db.{name}", COLUMNS, partition_by="dt",
                           options={"bucket": "-1", **ICEBERG, **options})


def _pk(wh: Warehouse, name: str = "p", **options: str) -> Any:
    return wh.create_table(f"db.{name}", COLUMNS, primary_key="id,dt", partition_by="dt",
                           options={"bucket": "2", **ICEBERG, **options})


def _loc(wh: Warehouse, name: str) -> Path:
    return Path(wh.path) / "db.db" / name


def test_append_table_reads_the_same_in_iceberg_after_every_commit(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    for ids, part in (([1, 2, 3], "a"), ([4, 5], "b"), ([6], "a")):
        t.write(batch(ids, part))
        assert iceberg(loc) == ours(t)
    t.compact(full=True)
    assert iceberg(loc) == ours(t) and len(ours(t)) == 6
    md = metadata(loc)
    snaps = md["snapshots"]
    assert [(s["snapshot-id"], s.get("parent-snapshot-id"), s["summary"]["operation"]) for s in snaps] == [
        (1, None, "append"), (2, 1, "append"), (3, 2, "append"), (4, 3, "replace")]
    assert md["current-snapshot-id"] == 4 and md["last-sequence-number"] == 4
    assert snaps[-1]["summary"]["total-records"] == "6" and snaps[-1]["summary"]["deleted-data-files"] == "2"
    assert md["partition-specs"] == [{"spec-id": 0, "fields": [
        {"name": "dt", "transform": "identity", "source-id": 1, "field-id": 1000}]}]
    assert md["last-partition-id"] == 1000
    # time travel: every Iceberg snapshot reads as the Paimon snapshot of the same id
    for sid in (1, 2, 3):
        assert iceberg(loc, sid) == _rows(t.read(snapshot=sid).to_pylist())
    names = sorted(p.name for p in (loc / "metadata").iterdir())
    assert [n for n in names if n.endswith(".json")] == ["v4.metadata.json"]  # delete-after-commit, 0 kept
    assert (loc / "metadata" / "version-hint.text").read_text() == "4"


def test_manifests_carry_iceberg_field_ids_and_java_record_names(wh: Warehouse) -> None:
    t = _append(wh)
    t.write(batch([1], "a"))
    md = metadata(_loc(wh, "a"))
    with open(md["snapshots"][0]["manifest-list"], "rb") as f:
        r = fastavro.reader(f)
        schema = json.loads(r.metadata["avro.schema"])
        assert r.metadata["avro.codec"] == "snappy"  # metadata.iceberg.manifest-compression's default
        metas = list(r)
    assert schema["name"] == "manifest_file" and isinstance(schema, dict)  # no ["null", record] union
    assert {f["name"]: f["field-id"] for f in schema["fields"]}["added_files_count"] == 504
    with open(metas[0]["manifest_path"], "rb") as f:
        r = fastavro.reader(f)
        schema = json.loads(r.metadata["avro.schema"])
        entries = list(r)
    data_file = next(f for f in schema["fields"] if f["name"] == "data_file")
    assert data_file["field-id"] == 2 and data_file["type"]["name"] == "r2"
    part = next(f for f in data_file["type"]["fields"] if f["name"] == "partition")
    assert part["type"]["name"] == "r102" and part["type"]["fields"][0]["field-id"] == 1000
    e = entries[0]
    assert (e["status"], e["snapshot_id"], e["sequence_number"]) == (1, 1, 1)
    df = e["data_file"]
    assert df["file_format"] == "parquet" and df["partition"] == {"dt": "a"} and df["record_count"] == 1
    lower = {kv["key"]: kv["value"] for kv in df["lower_bounds"]}
    assert lower[0] == (1).to_bytes(4, "little") and lower[1] == b"a"
    assert lower[6] == (125).to_bytes(1, "big")  # DECIMAL(10, 2) 1.25: unscaled, big-endian, minimal


def test_unchanged_partitions_keep_their_manifests(wh: Warehouse) -> None:
    """Incremental as Java: a commit to partition b rewrites nothing of partition a."""
    t = _append(wh)
    loc = _loc(wh, "a")
    t.write(batch([1, 2], "a"))
    t.write(batch([3], "b"))
    before = {m["manifest_path"] for m in _manifest_list(loc)}
    t.write(batch([4], "b"), overwrite=True, partition={"dt": "b"})
    after = {m["manifest_path"] for m in _manifest_list(loc)}
    md = metadata(loc)
    assert md["snapshots"][-1]["summary"]["operation"] == "overwrite"
    kept = before & after
    assert len(kept) == 1  # partition a's manifest is reused; b's was rewritten with a DELETED entry
    assert iceberg(loc) == ours(t) and sorted(r["id"] for r in ours(t)) == [1, 2, 4]


def _manifest_list(loc: Path) -> list[dict[str, Any]]:
    md = metadata(loc)
    cur = next(s for s in md["snapshots"] if s["snapshot-id"] == md["current-snapshot-id"])
    with open(cur["manifest-list"], "rb") as f:
        return list(fastavro.reader(f))


def test_primary_key_table_publishes_fully_compacted_files(wh: Warehouse) -> None:
    t = _pk(wh)
    loc = _loc(wh, "p")
    t.write(batch([1, 2, 3], "a", "x"))
    t.write(batch([2, 4], "a", "y"))
    t.compact(full=True)
    assert iceberg(loc) == ours(t)
    assert {r["id"]: r["v"] for r in iceberg(loc)} == {1: "x1", 2: "y2", 3: "x3", 4: "y4"}
    t.write(batch([5], "b", "z"))  # level 0: not in Iceberg until compacted, as Java
    assert sorted(r["id"] for r in iceberg(loc)) == [1, 2, 3, 4]
    t.compact(full=True)
    assert iceberg(loc) == ours(t)


def test_hadoop_catalog_writes_the_iceberg_warehouse(wh: Warehouse) -> None:
    t = _append(wh, "h", **{"metadata.iceberg.storage": "hadoop-catalog"})
    t.write(batch([1, 2], "a"))
    t.write(batch([3], "b"))
    loc = Path(wh.path) / "iceberg" / "db" / "h"
    assert iceberg(loc) == ours(t)
    assert not (_loc(wh, "h") / "metadata").exists()
    assert metadata(loc)["location"] == str(_loc(wh, "h"))
    t2 = _append(wh, "h2", **{"metadata.iceberg.storage": "hadoop-catalog",
                              "metadata.iceberg.storage-location": "table-location"})
    t2.write(batch([7], "a"))
    assert iceberg(_loc(wh, "h2")) == ours(t2)


def test_the_09_option_name_writes_beside_the_table(wh: Warehouse) -> None:
    t = wh.create_table("db.o", COLUMNS, partition_by="dt",
                        options={"bucket": "-1", "metadata.iceberg-compatible": "true"})
    t.write(batch([1, 2], "a"))
    assert iceberg(_loc(wh, "o")) == ours(t)


def test_a_failed_callback_names_the_committed_snapshot_and_the_next_commit_rebuilds(
        wh: Warehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.iceberg import callback

    t = _append(wh)
    loc = _loc(wh, "a")
    t.write(batch([1], "a"))

    def broken(*_a: Any, **_k: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(callback.IcebergCommitCallback, "_with_base", broken)
    with pytest.raises(PaimonError, match=r"snapshot 2 was committed, but its Iceberg metadata could not be "
                                          r"written or registered \(disk full\)"):
        t.write(batch([2], "b"), expire=False)
    monkeypatch.undo()
    assert metadata(loc)["current-snapshot-id"] == 1
    t.write(batch([3], "a"))
    md = metadata(loc)
    assert md["current-snapshot-id"] == 3 and [s["snapshot-id"] for s in md["snapshots"]] == [3]
    assert iceberg(loc) == ours(t) and len(ours(t)) == 3


def test_a_version_left_by_another_timeline_is_rebuilt(wh: Warehouse) -> None:
    """A vN whose summary does not name our snapshot N (Java 2.0 leaves them after a rollback)
    is replaced, never trusted, and the table uuid is kept for readers that know it."""
    t = _append(wh)
    loc = _loc(wh, "a")
    t.write(batch([1], "a"))
    stale = metadata(loc)
    uuid = stale["table-uuid"]
    stale["current-snapshot-id"] = 2
    stale["snapshots"][0]["snapshot-id"] = 2
    del stale["snapshots"][0]["summary"]["paimon-commit-identity"]
    (loc / "metadata" / "v2.metadata.json").write_text(json.dumps(stale))
    t.write(batch([2], "b"))
    md = metadata(loc)
    assert md["current-snapshot-id"] == 2 and md["table-uuid"] == uuid
    assert iceberg(loc) == ours(t) and len(ours(t)) == 2


# -- expire, rollback, tags, fast-forward ------------------------------------------------------


def _five(t: Any) -> None:
    for i, part in enumerate(("a", "b", "a", "c", "b"), start=1):
        t.write(batch([i * 10, i * 10 + 1], part))


def _metadata_files(loc: Path) -> set[str]:
    return {p.name for p in (loc / "metadata").iterdir()}


def _referenced(loc: Path) -> set[str]:
    """Every file the current version names: its manifest lists and their manifests."""
    out = {f"v{(loc / 'metadata' / 'version-hint.text').read_text()}.metadata.json", "version-hint.text"}
    for s in metadata(loc)["snapshots"]:
        out.add(Path(s["manifest-list"]).name)
        with open(s["manifest-list"], "rb") as f:
            out.update(Path(m["manifest_path"]).name for m in fastavro.reader(f))
    return out


def test_expire_drops_the_expired_iceberg_snapshots_and_their_files(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    _five(t)
    t.compact(full=True)  # snapshot 6: partitions a and b rewritten
    dry = t.expire(retain_max=2, retain_min=1, dry_run=True)
    assert any("Iceberg metadata: v6.metadata.json drops snapshots 1, 2, 3, 4" in n for n in dry.plan.notes)
    assert [s["snapshot-id"] for s in metadata(loc)["snapshots"]] == [1, 2, 3, 4, 5, 6]  # a dry run changes nothing
    t.expire(retain_max=2, retain_min=1)
    md = metadata(loc)
    assert [s["snapshot-id"] for s in md["snapshots"]] == [5, 6]
    assert _metadata_files(loc) == _referenced(loc)  # nothing left that no version names
    assert iceberg(loc) == ours(t)
    assert iceberg(loc, 5) == _rows(t.read(snapshot=5).to_pylist())


def test_commit_time_iceberg_expiry_follows_paimon_retention(wh: Warehouse) -> None:
    """Java expires Iceberg snapshots in the callback with snapshot.num-retained.*."""
    t = _append(wh, **{"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3"})
    loc = _loc(wh, "a")
    _five(t)
    md = metadata(loc)
    assert [s["snapshot-id"] for s in md["snapshots"]] == [3, 4, 5]
    assert _metadata_files(loc) == _referenced(loc)
    assert iceberg(loc) == ours(t)


def test_rollback_moves_iceberg_readers_to_the_target_at_once(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    _five(t)
    t.rollback(snapshot=3)
    md = metadata(loc)
    assert md["current-snapshot-id"] == 3 and (loc / "metadata" / "version-hint.text").read_text() == "3"
    assert not [n for n in _metadata_files(loc) if n.startswith(("v4.", "v5."))]
    assert _metadata_files(loc) == _referenced(loc)
    assert iceberg(loc) == ours(t) and len(ours(t)) == 6
    t.write(batch([99], "z"))  # snapshot 4 again: a new timeline, built on v3
    md = metadata(loc)
    assert [s["snapshot-id"] for s in md["snapshots"]][-2:] == [3, 4]
    assert iceberg(loc) == ours(t) and len(ours(t)) == 7


def test_rollback_keeps_an_existing_target_version(wh: Warehouse) -> None:
    t = _append(wh, **{"metadata.iceberg.previous-versions-max": "5"})
    loc = _loc(wh, "a")
    _five(t)
    uuid = metadata(loc)["table-uuid"]
    v3 = (loc / "metadata" / "v3.metadata.json").read_text()
    t.rollback(snapshot=3)
    assert (loc / "metadata" / "v3.metadata.json").read_text() == v3
    assert sorted(n for n in _metadata_files(loc) if n.endswith(".json")) == [
        "v1.metadata.json", "v2.metadata.json", "v3.metadata.json"]
    assert metadata(loc)["table-uuid"] == uuid
    assert iceberg(loc) == ours(t)


def test_tags_become_iceberg_refs(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    _five(t)
    t.create_tag("t2", snapshot=2)
    t.create_tag("t5")
    refs = metadata(loc)["refs"]
    assert refs == {"t2": {"snapshot-id": 2, "type": "tag", "max-ref-age-ms": 9223372036854775807},
                    "t5": {"snapshot-id": 5, "type": "tag", "max-ref-age-ms": 9223372036854775807}}
    st = StaticTable.from_metadata(str(loc))
    assert _rows(st.scan(snapshot_id=st.metadata.refs["t2"].snapshot_id).to_arrow().to_pylist()) == \
        _rows(t.read(tag="t2").to_pylist())
    t.rename_tag("t5", "latest")
    assert set(metadata(loc)["refs"]) == {"t2", "latest"}
    t.delete_tags("t2")
    assert set(metadata(loc)["refs"]) == {"latest"}
    t.write(batch([7], "a"))
    assert set(metadata(loc)["refs"]) == {"latest"}  # carried into the next version
    t.expire(retain_max=1, retain_min=1)
    assert metadata(loc)["refs"] == {}  # its Iceberg snapshot expired: a dangling ref breaks every reader
    assert iceberg(loc) == ours(t)


def test_rollback_to_a_tag_of_an_expired_snapshot(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    _five(t)
    t.create_tag("t2", snapshot=2)
    t.expire(retain_max=2, retain_min=1)
    t.rollback(tag="t2")
    md = metadata(loc)
    assert md["current-snapshot-id"] == 2 and list(md["refs"]) == ["t2"]
    assert _metadata_files(loc) == _referenced(loc)
    assert iceberg(loc) == ours(t) and len(ours(t)) == 4


def test_fast_forward_moves_the_iceberg_metadata(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    _five(t)
    t.create_tag("t2", snapshot=2)
    t.create_branch("b", tag="t2")
    t.fast_forward("b")
    assert metadata(loc)["current-snapshot-id"] == 2
    assert iceberg(loc) == ours(t) and len(ours(t)) == 4


def test_purge_leaves_an_empty_iceberg_table(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    _five(t)
    t.purge_files()
    assert iceberg(loc) == ours(t) == []
    assert _metadata_files(loc) == _referenced(loc)


# -- compact, rescale, overwrite, schema evolution, compact-manifest -----------------------------


def test_rescale_and_compact_manifest(wh: Warehouse) -> None:
    t = _pk(wh)
    loc = _loc(wh, "p")
    t.write(batch(list(range(20)), "a"))
    t.write(batch(list(range(10, 30)), "b", "w"))
    t.compact(full=True)
    t.rescale(bucket_num=4)
    assert iceberg(loc) == ours(t) and len(ours(t)) == 40
    t.compact_manifest()
    assert metadata(loc)["snapshots"][-1]["summary"]["operation"] == "append"
    assert iceberg(loc) == ours(t)


def test_schema_evolution_publishes_every_schema(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    t.write(batch([1], "a"))
    t.alter(add_columns="note STRING")
    t.write(pa.table({**{c: batch([2], "b").column(c) for c in batch([2], "b").column_names},
                      "note": ["hello"]}))
    md = metadata(loc)
    assert [s["schema-id"] for s in md["schemas"]] == [0, 1] and md["current-schema-id"] == 1
    assert md["last-column-id"] == 7
    assert iceberg(loc) == ours(t) and {r["id"]: r["note"] for r in ours(t)} == {1: None, 2: "hello"}


# -- options --------------------------------------------------------------------------------------


def test_previous_versions_and_delete_after_commit(wh: Warehouse) -> None:
    t = _append(wh, "k", **{"metadata.iceberg.previous-versions-max": "2"})
    _five(t)
    assert sorted(n for n in _metadata_files(_loc(wh, "k")) if n.endswith(".json")) == [
        "v3.metadata.json", "v4.metadata.json", "v5.metadata.json"]
    t = _append(wh, "n", **{"metadata.iceberg.delete-after-commit.enabled": "false"})
    _five(t)
    assert len([n for n in _metadata_files(_loc(wh, "n")) if n.endswith(".json")]) == 5


def test_iceberg_manifest_compaction(wh: Warehouse) -> None:
    t = _append(wh, **{"metadata.iceberg.compaction.min.file-num": "3", "manifest.target-file-size": "4kb"})
    loc = _loc(wh, "a")
    t.write(batch([1], "a"))
    t.write(batch([2], "a"))
    assert len(_manifest_list(loc)) == 2
    t.write(batch([3], "b"))  # three small manifests totalling the target: merged into one
    metas = _manifest_list(loc)
    assert len(metas) == 1 and (metas[0]["added_files_count"], metas[0]["existing_files_count"]) == (1, 2)
    assert iceberg(loc) == ours(t)


def test_manifest_codec_and_legacy_list_layout(wh: Warehouse) -> None:
    t = _append(wh, **{"metadata.iceberg.manifest-compression": "zstd",
                       "metadata.iceberg.manifest-legacy-version": "true"})
    loc = _loc(wh, "a")
    t.write(batch([1], "a"))
    cur = metadata(loc)["snapshots"][-1]["manifest-list"]
    with open(cur, "rb") as f:
        r = fastavro.reader(f)
        assert r.metadata["avro.codec"] == "zstandard"
        assert "added_data_files_count" in list(r)[0]
    assert iceberg(loc) == ours(t)


# -- more commit kinds and layouts -------------------------------------------------------------


def test_deletion_vector_table_after_full_compaction(wh: Warehouse) -> None:
    """Format version 2: Java publishes no deletion vectors, only highest-level files."""
    t = _pk(wh, "dv", **{"deletion-vectors.enabled": "true"})
    loc = _loc(wh, "dv")
    t.write(batch([1, 2, 3], "a", "x"))
    t.write(batch([2, 3], "a", "y"))
    t.compact(full=True)
    assert iceberg(loc) == ours(t) and {r["id"]: r["v"] for r in iceberg(loc)} == {1: "x1", 2: "y2", 3: "y3"}


def test_overwrite_and_partition_expiry(wh: Warehouse) -> None:
    t = _append(wh)
    loc = _loc(wh, "a")
    t.write(batch([1], "2020-01-01"))
    t.write(batch([2], "2999-01-01"))
    t.write(batch([3, 4], "2999-01-01"), overwrite=True)  # dynamic: only that partition
    assert metadata(loc)["snapshots"][-1]["summary"]["operation"] == "overwrite"
    assert iceberg(loc) == ours(t) and sorted(r["id"] for r in ours(t)) == [1, 3, 4]
    t.write(batch([5], "2020-01-01"))
    t.expire_partitions(expiration_time="1 d", timestamp_formatter="yyyy-MM-dd")
    assert metadata(loc)["snapshots"][-1]["summary"]["deleted-data-files"] == "2"
    assert iceberg(loc) == ours(t) and sorted(r["id"] for r in ours(t)) == [3, 4]


def test_a_table_created_again_starts_new_iceberg_metadata(wh: Warehouse) -> None:
    """hadoop-catalog metadata lives outside the table, so a drop leaves it; the new table's
    first commit clears it (Java's rule for snapshot 1)."""
    opts = {"metadata.iceberg.storage": "hadoop-catalog"}
    t = _append(wh, "h", **opts)
    loc = Path(wh.path) / "iceberg" / "db" / "h"
    _five(t)
    old_uuid = metadata(loc)["table-uuid"]
    wh.drop_table("db.h")
    t = _append(wh, "h", **opts)
    t.write(batch([100], "z"))
    md = metadata(loc)
    assert md["table-uuid"] != old_uuid and [s["snapshot-id"] for s in md["snapshots"]] == [1]
    assert _metadata_files(loc) == _referenced(loc)
    assert iceberg(loc) == ours(t) == _rows(batch([100], "z").to_pylist())


def test_rollback_dry_run_names_the_iceberg_move_and_a_failed_move_keeps_the_files(
        wh: Warehouse, monkeypatch: pytest.MonkeyPatch) -> None:
    from paimon_cli.core.iceberg import callback

    t = _append(wh)
    loc = _loc(wh, "a")
    _five(t)
    report = t.rollback(snapshot=3, dry_run=True)
    assert any("Iceberg metadata moves to snapshot 3 before any file goes" in n for n in report.notes())
    assert metadata(loc)["current-snapshot-id"] == 5
    files_before = {p for p in (Path(wh.path) / "db.db" / "a").rglob("*.parquet")}

    def broken(*_a: Any, **_k: Any) -> None:
        raise OSError("read-only file system")

    monkeypatch.setattr(callback.IcebergCommitCallback, "_without_base", broken)
    monkeypatch.setattr(callback.IcebergCommitCallback, "_describes", staticmethod(lambda *a, **k: False))
    with pytest.raises(PaimonError, match=r"rolled back to snapshot 3, but the Iceberg metadata could not be moved "
                                          r"\(read-only file system\); the files of the removed snapshots were kept"):
        t.rollback(snapshot=3)
    monkeypatch.undo()
    assert {p for p in (Path(wh.path) / "db.db" / "a").rglob("*.parquet")} == files_before
    assert metadata(loc)["current-snapshot-id"] == 5  # still readable: its files were kept
    assert len(iceberg(loc)) == 10
    t.write(batch([77], "q"))  # the next commit rebuilds
    assert iceberg(loc) == ours(t) and len(ours(t)) == 7


def test_null_partitions_and_pruning_on_our_bounds(wh: Warehouse) -> None:
    """Partition summaries and column bounds are what Iceberg readers prune on: a filter must
    plan only the files that can match, and null partition values must round-trip."""
    t = wh.create_table("db.n", "id INT, dt STRING, k INT", partition_by="dt,k",
                        options={"bucket": "-1", **ICEBERG})
    t.write(pa.table({"id": pa.array([1, 2, 3], pa.int32()), "dt": ["a", None, "b"],
                      "k": pa.array([None, 1, 2], pa.int32())}))
    t.write(pa.table({"id": pa.array([4, 40], pa.int32()), "dt": [None, None], "k": pa.array([None, None], pa.int32())}))
    t.write(pa.table({"id": pa.array([5], pa.int32()), "dt": ["a"], "k": pa.array([None], pa.int32())}), overwrite=True)
    loc = _loc(wh, "n")
    assert iceberg(loc) == ours(t)
    st = StaticTable.from_metadata(str(loc))
    assert [r["id"] for r in st.scan(row_filter="dt = 'a'").to_arrow().to_pylist()] == [5]
    assert sorted(r["id"] for r in st.scan(row_filter="dt is null").to_arrow().to_pylist()) == [2, 4, 40]
    assert len(list(st.scan(row_filter="dt = 'b'").plan_files())) == 1
    assert len(list(st.scan(row_filter="id > 10").plan_files())) == 1  # only the file holding 4..40
