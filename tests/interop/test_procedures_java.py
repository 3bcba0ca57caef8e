"""Issue 25's procedures against the real Java Paimon 0.9: consumers, rollback by time /
watermark / as latest, tags from a time or watermark, replace, trigger.

Where 0.9 has the procedure (reset_consumer, create_tag_from_timestamp / _watermark) or the
core call a 2.x procedure makes (ConsumerManager.expire of consumer.expiration-time, rollbackTo
after earlierOrEqualTimeMills, TagAutoManager.run of trigger_tag_automatic_creation), both run
on identical copies of a Java-written table and must leave the same files, snapshots and tags.
Everywhere, Java must read the table we leave row for row and keep writing and expiring it.
Java side: PaimonTestHelper + ProceduresHelper.java.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.api import Warehouse
from paimon_cli.core.utils.json_util import dumps_jackson

from .conftest import sort_rows
from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
COLS = [("id", "INT"), ("dt", "STRING"), ("v", "STRING")]


def _h(jp: JavaPaimon) -> Any:
    return jp._gateway.jvm.ProceduresHelper


def _rows(jp: JavaPaimon, wh: Path, snapshot_id: int | None = None) -> list[dict[str, Any]]:
    return sort_rows(jp.read(wh, DB, "t", snapshot_id=snapshot_id, row_kind=False))


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _table_dir(wh: Path) -> Path:
    return wh / f"{DB}.db" / "t"


def _history(jp: JavaPaimon, wh: Path, pk: bool = True, options: dict[str, str] | None = None,
             compact_after: int | None = None) -> None:
    """Java writes 5 commits (a full compaction after commit ``compact_after``, if given)."""
    opts = {"bucket": "1" if pk else "-1", "file.format": "parquet", "write-only": "true", **(options or {})}
    jp.create_table(wh, DB, "t", COLS, ["id", "dt"] if pk else [], ["dt"], opts)
    batches = [[{"id": 1, "dt": "a", "v": "x1"}, {"id": 2, "dt": "b", "v": "y1"}],
               [{"id": 1, "dt": "a", "v": "x2"}, {"id": 3, "dt": "a", "v": "z"}],
               [{"id": 4, "dt": "c", "v": "w"}],
               [{"id": 2, "dt": "b", "v": "y4"}],
               [{"id": 5, "dt": "d", "v": "v5"}]]
    for i, rows in enumerate(batches, 1):
        jp.write(wh, DB, "t", rows)
        if compact_after == i:
            jp.compact(wh, DB, "t", full=True)
        time.sleep(0.005)  # distinct commit times


def _copies(src: Path, tmp: Path) -> tuple[Path, Path]:
    java, ours = tmp / "java", tmp / "ours"
    shutil.copytree(src, java)
    shutil.copytree(src, ours)
    return java, ours


def _snapshot_ids(wh: Path) -> list[int]:
    return sorted(int(p.name.split("-")[1]) for p in (_table_dir(wh) / "snapshot").glob("snapshot-*"))


def _snapshot_json(wh: Path, sid: int) -> dict[str, Any]:
    return json.loads((_table_dir(wh) / "snapshot" / f"snapshot-{sid}").read_text())


def _ours(wh: Path) -> Any:
    return Warehouse(str(wh)).table(f"{DB}.t")


# ------------------------------------------------------------------------------------ consumers


def test_reset_consumer_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    jp = java_paimon
    src = tmp_path / "src"
    _history(jp, src)
    java, ours = _copies(src, tmp_path)
    for wh in (java, ours):
        assert _snapshot_ids(wh) == [1, 2, 3, 4, 5]
    jp.reset_consumer(java, DB, "t", "job-a", 2)
    jp.reset_consumer(java, DB, "t", "job-b", 4)
    _h(jp).deleteConsumer(str(java), DB, "t", "job-b")
    t = _ours(ours)
    t.reset_consumer("job-a", snapshot=2)
    t.reset_consumer("job-b", snapshot=4)
    t.reset_consumer("job-b")
    consumer_dir = "consumer"
    assert {k: v for k, v in _files(_table_dir(ours)).items() if k.startswith(consumer_dir)} == \
        {k: v for k, v in _files(_table_dir(java)).items() if k.startswith(consumer_dir)}
    assert json.loads(_h(jp).listConsumers(str(ours), DB, "t")) == {"job-a": 2}
    assert jp.system_table(ours, DB, "t", "consumers")["rows"] == [["job-a", 2]]
    # Java's expiration keeps what our consumer will read
    assert jp.expire(ours, DB, "t", retain_max=100, retain_min=1, older_than_ms=0) == 1
    assert _snapshot_ids(ours) == [2, 3, 4, 5]
    assert _rows(jp, ours) == _rows(jp, java)


def test_clear_consumers_java_reads(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """0.9 has no clearConsumers: what Java sees after ours is what 2.x's regex rules leave."""
    jp = java_paimon
    wh = tmp_path / "wh"
    _history(jp, wh)
    for cid, sid in (("etl-1", 1), ("etl-2", 2), ("etl-prod", 3), ("adhoc-etl-9", 1)):
        jp.reset_consumer(wh, DB, "t", cid, sid)
    plan = _ours(wh).clear_consumers(including="etl-.*", excluding="etl-prod")
    assert [c.consumer_id for c in plan.changes] == ["etl-1", "etl-2"]
    assert json.loads(_h(jp).listConsumers(str(wh), DB, "t")) == {"adhoc-etl-9": 1, "etl-prod": 3}
    _ours(wh).clear_consumers(including="adhoc-.*")
    assert jp.expire(wh, DB, "t", retain_max=100, retain_min=1, older_than_ms=0) == 2  # held by etl-prod at 3
    assert _snapshot_ids(wh) == [3, 4, 5]


def test_consumer_expiration_time_matches_a_java_writer(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """consumer.expiration-time: a Java committer deletes stale consumers, then expires the
    snapshots they held; our writer does the same on an identical copy."""
    jp = java_paimon
    src = tmp_path / "src"
    _history(jp, src)
    jp.reset_consumer(src, DB, "t", "dead", 1)
    jp.reset_consumer(src, DB, "t", "live", 4)
    old = time.time() - 2 * 3600
    os.utime(_table_dir(src) / "consumer" / "consumer-dead", (old, old))
    jp.alter_table(src, DB, "t", [{"set": {"write-only": "false", "consumer.expiration-time": "1 h",
                                           "snapshot.num-retained.min": "1", "snapshot.time-retained": "1 ms"}}])
    java, ours = _copies(src, tmp_path)
    old_mtime = os.stat(_table_dir(src) / "consumer" / "consumer-dead").st_mtime
    for wh in (java, ours):
        os.utime(_table_dir(wh) / "consumer" / "consumer-dead", (old_mtime, old_mtime))
    time.sleep(0.01)
    row = {"id": 9, "dt": "a", "v": "after"}
    jp.write(java, DB, "t", [row])
    import pyarrow as pa

    _ours(ours).write(pa.Table.from_pylist([row], schema=pa.schema([("id", pa.int32()), ("dt", pa.string()),
                                                                   ("v", pa.string())])))
    assert json.loads(_h(jp).listConsumers(str(ours), DB, "t")) == \
        json.loads(_h(jp).listConsumers(str(java), DB, "t")) == {"live": 4}
    assert _snapshot_ids(ours) == _snapshot_ids(java) == [4, 5, 6]
    assert _rows(jp, ours) == _rows(jp, java)


# ------------------------------------------------------------------------------------- rollback


def test_rollback_to_timestamp_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """Append table (Java 0.9 and we then leave the same files): the snapshot chosen, the files,
    snapshots and tags left are Java's."""
    jp = java_paimon
    src = tmp_path / "src"
    _history(jp, src, pk=False)
    jp.create_tag(src, DB, "t", "t2", 2)
    jp.create_tag(src, DB, "t", "t4", 4)
    ts = _snapshot_json(src, 3)["timeMillis"] + 1
    want = _rows(jp, src, 3)
    java, ours = _copies(src, tmp_path)
    assert _h(jp).rollbackToTimestamp(str(java), DB, "t", ts) == 3
    report = _ours(ours).rollback(to_timestamp=ts)
    assert report.plan.target_id == 3
    assert _files(_table_dir(ours)) == _files(_table_dir(java))
    assert _rows(jp, ours) == want
    assert jp.system_table(ours, DB, "t", "tags")["rows"] == jp.system_table(java, DB, "t", "tags")["rows"]


def test_rollback_to_watermark_java_reads(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """0.9 has no earlierOrEqualWatermark: Java must read what 2.x's choice leaves."""
    jp = java_paimon
    wh = tmp_path / "wh"
    _history(jp, wh)
    for sid, wm in ((1, 10), (2, 20), (3, None), (4, 40), (5, 50)):
        p = _table_dir(wh) / "snapshot" / f"snapshot-{sid}"
        snap = json.loads(p.read_text())
        snap["watermark"] = wm
        p.write_text(json.dumps(snap, indent=2))
    want = _rows(jp, wh, 3)
    report = _ours(wh).rollback(to_watermark=39)  # 3 has none: it sits where 2 does; 3 is the latest <= 39
    assert report.plan.target_id in (2, 3)
    assert _rows(jp, wh) == (want if report.plan.target_id == 3 else _rows(jp, wh, 2))
    jp.write(wh, DB, "t", [{"id": 7, "dt": "a", "v": "after"}])
    assert {"id": 7, "dt": "a", "v": "after"} in _rows(jp, wh)


@pytest.mark.parametrize("options", [{}, {"deletion-vectors.enabled": "true"}], ids=["pk", "pk-dv"])
def test_rollback_as_latest_java_reads_writes_and_expires(java_paimon: JavaPaimon, tmp_path: Path,
                                                          options: dict[str, str]) -> None:
    """rollback_to_as_latest (2.x only): Java reads the new latest snapshot as the target, every
    older snapshot as before, writes on top, and its own expiration keeps the restored files
    (our protection tag, as 2.x's)."""
    jp = java_paimon
    wh = tmp_path / "wh"
    # writers that compact (a DV table reads no level-0 file); snapshot.num-retained.min keeps all
    _history(jp, wh, options={"write-only": "false", **options}, compact_after=3)
    kinds = {_snapshot_json(wh, sid)["commitKind"] for sid in _snapshot_ids(wh)}
    assert "COMPACT" in kinds
    history = {sid: _rows(jp, wh, sid) for sid in _snapshot_ids(wh)}
    assert history[2] and history[2] != history[max(history)]
    latest = max(history)
    plan = _ours(wh).rollback_as_latest(snapshot=2)
    assert plan.snapshot is not None and plan.snapshot.id == latest + 1 and plan.protection_tag
    assert _rows(jp, wh) == history[2]
    for sid, rows in history.items():
        assert _rows(jp, wh, sid) == rows
    tags = [r[0] for r in jp.system_table(wh, DB, "t", "tags")["rows"]]
    assert tags == [plan.protection_tag]
    row = {"id": 8, "dt": "a", "v": "after"}
    jp.write(wh, DB, "t", [row])
    want = sort_rows([*history[2], row])
    assert _rows(jp, wh) == want
    assert jp.expire(wh, DB, "t", retain_max=1, retain_min=1, older_than_ms=0) > 0
    assert _rows(jp, wh) == want


# ------------------------------------------------------------------------------------------- tags


def _strip_create_time(text: str) -> str:
    return re.sub(r'"tagCreateTime" : \[[^\]]*\]', "", text)


@pytest.mark.parametrize("retained", [None, "1 d"])
def test_create_tag_from_timestamp_matches_java(java_paimon: JavaPaimon, tmp_path: Path,
                                                retained: str | None) -> None:
    jp = java_paimon
    src = tmp_path / "src"
    _history(jp, src)
    jp.create_tag(src, DB, "t", "keep1", 1)
    t1, t3 = _snapshot_json(src, 1)["timeMillis"], _snapshot_json(src, 3)["timeMillis"]
    jp.expire(src, DB, "t", retain_min=3, older_than_ms=0)
    assert _snapshot_ids(src) == [3, 4, 5]  # 1 lives in keep1 only
    java, ours = _copies(src, tmp_path)
    for name, ts in (("at3", t3), ("after2", _snapshot_json(src, 3)["timeMillis"] - 1), ("from-tag", t1)):
        sid = _h(jp).createTagFromTimestamp(str(java), DB, "t", name, ts, retained)
        tag = _ours(ours).create_tag(name, from_timestamp=ts, time_retained="1d" if retained else None)
        assert tag.snapshot.id == sid
    for name in ("at3", "after2", "from-tag"):
        mine = (_table_dir(ours) / "tag" / f"tag-{name}").read_text()
        theirs = (_table_dir(java) / "tag" / f"tag-{name}").read_text()
        assert _strip_create_time(mine) == _strip_create_time(theirs)
    assert json.loads(_h(jp).tags(str(ours), DB, "t")) == json.loads(_h(jp).tags(str(java), DB, "t"))
    assert sort_rows(json.loads(jp._gateway.jvm.RefsHelper.readTag(str(ours), DB, "t", None, "from-tag"))) == \
        sort_rows(json.loads(jp._gateway.jvm.RefsHelper.readTag(str(java), DB, "t", None, "keep1")))


def test_create_tag_from_watermark_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    jp = java_paimon
    src = tmp_path / "src"
    _history(jp, src)
    for sid, wm in ((1, 10), (2, 20), (3, 30), (4, 40), (5, 50)):  # every snapshot watermarked (0.9's search)
        p = _table_dir(src) / "snapshot" / f"snapshot-{sid}"
        snap = json.loads(p.read_text())
        snap["watermark"] = wm
        p.write_text(dumps_jackson(snap))  # as a Flink writer's Java would have written it
    java, ours = _copies(src, tmp_path)
    for name, wm in (("w25", 25), ("w30", 30), ("w0", 0)):
        sid = _h(jp).createTagFromWatermark(str(java), DB, "t", name, wm, None)
        assert _ours(ours).create_tag(name, from_watermark=wm).snapshot.id == sid
    assert _files(_table_dir(ours) / "tag") == _files(_table_dir(java) / "tag")


def test_replace_tag_java_reads(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """0.9 has no replaceTag: Java must read the moved tag, and the files only its old (expired)
    snapshot held are gone (Java would leave them as orphans)."""
    jp = java_paimon
    wh = tmp_path / "wh"
    _history(jp, wh, compact_after=3)
    jp.create_tag(wh, DB, "t", "rel", 1)
    jp.expire(wh, DB, "t", retain_max=1, retain_min=1, older_than_ms=0)
    plan = _ours(wh).replace_tag("rel", snapshot=max(_snapshot_ids(wh)))
    assert plan.freed.files
    assert all(not Path(f.path).exists() for f in plan.freed.files)
    helper = jp._gateway.jvm.RefsHelper
    assert json.loads(helper.readTag(str(wh), DB, "t", None, "rel")) == json.loads(helper.readLatest(str(wh), DB,
                                                                                                       "t", None))
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.operation.orphans import plan_remove_orphans

    t = FileSystemCatalog(str(wh)).get_table(f"{DB}.t")
    assert plan_remove_orphans(t, "P0D", force=True, now_millis=int(time.time() * 1000) + 2000).files == []


def test_trigger_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """trigger_tag_automatic_creation = TagAutoManager.run() (0.9: newTagCreationManager):
    hourly process-time tags with a retention and tag.num-retained-max, on a table whose writers
    made none (write-only)."""
    jp = java_paimon
    src = tmp_path / "src"
    _history(jp, src, options={"tag.automatic-creation": "process-time", "tag.creation-period": "hourly",
                               "tag.default-time-retained": "1 d", "tag.num-retained-max": "3"})
    assert not (_table_dir(src) / "tag").exists()
    java, ours = _copies(src, tmp_path)
    _h(jp).triggerTagAutomaticCreation(str(java), DB, "t")
    plan = _ours(ours).trigger_tags()
    assert plan.names("create")
    assert json.loads(_h(jp).tags(str(ours), DB, "t")) == json.loads(_h(jp).tags(str(java), DB, "t"))
    mine, theirs = _files(_table_dir(ours) / "tag"), _files(_table_dir(java) / "tag")
    assert {k: _strip_create_time(v.decode()) for k, v in mine.items()} == \
        {k: _strip_create_time(v.decode()) for k, v in theirs.items()}
    for name in json.loads(_h(jp).tags(str(ours), DB, "t")):
        helper = jp._gateway.jvm.RefsHelper
        assert helper.readTag(str(ours), DB, "t", None, name) == helper.readTag(str(java), DB, "t", None, name)
