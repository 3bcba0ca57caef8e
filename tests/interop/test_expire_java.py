"""`expire` leaves exactly the files Java Paimon 0.9 leaves, and Java still reads what is retained.

Why: expiration deletes files; the only trustworthy reference for "which files may go" is
Java's own ExpireSnapshotsImpl. Each test builds a random history WITH JAVA (writes,
full compactions, partition overwrites, tags, consumers, statistics, branches), copies the
table directory twice, expires one copy with Java and the other with ours using the same
settings, and asserts (1) the sets of files left (relative path + size) are equal, the
EARLIEST hint too, and (2) Java reads every retained snapshot and every tag of OUR copy with
the same rows it read before expiry.
"""

from __future__ import annotations

import json
import os
import random
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.expire import expire, plan_expire
from paimon_cli.core.operation.expire_plan import ExpirePolicy

from .java_harness import JavaPaimon

pytestmark = pytest.mark.java

DB = "db"
DTS = ["2024-01-01", "2024-01-02", "2024-01-03"]
COLS = [("id", "INT"), ("dt", "STRING"), ("v", "BIGINT")]


def helper(jp: JavaPaimon) -> Any:
    return jp._gateway.jvm.ExpireHelper


def java_rows(jp: JavaPaimon, wh: str, table: str, snapshot_id: int | None = None,
              tag: str | None = None) -> list[str]:
    return json.loads(helper(jp).readRows(wh, DB, table, snapshot_id, tag))


def file_set(table_dir: Path) -> dict[str, int]:
    """Relative path -> size of every file (hints included; LATEST/EARLIEST compared by content)."""
    out = {}
    for root, _, files in os.walk(table_dir):
        for f in files:
            p = Path(root) / f
            out[str(p.relative_to(table_dir))] = p.stat().st_size
    return out


def hint(table_dir: Path, name: str = "EARLIEST", sub: str = "snapshot") -> str | None:
    p = table_dir / sub / name
    return p.read_text().strip() if p.exists() else None


def build_history(jp: JavaPaimon, wh: str, name: str, rng: random.Random, *, pk: bool,
                  n_ops: int, options: dict[str, str] | None = None) -> dict[str, Any]:
    """A random Java-written history; returns what was created (tags, consumers, branches)."""
    opts = {"bucket": "2", "write-only": "true"} if pk else {"bucket": "-1", "write-only": "true"}
    opts.update(options or {})
    jp.create_table(wh, DB, name, COLS, primary_keys=["id", "dt"] if pk else [], partition_keys=["dt"],
                    options=opts)
    made: dict[str, Any] = {"tags": [], "consumers": {}, "branches": []}
    latest = 0
    for i in range(n_ops):
        op = rng.choices(
            ["write", "compact", "overwrite", "tag", "consumer", "analyze", "branch"],
            weights=[10, 3 if pk else 2, 2, 2, 0.5, 1, 1],
        )[0]
        if latest == 0:
            op = "write"
        if op == "write":
            rows = [{"id": rng.randrange(40), "dt": rng.choice(DTS), "v": rng.randrange(1000)}
                    for _ in range(rng.randint(1, 12))]
            latest = jp.write(wh, DB, name, rows)
        elif op == "compact":
            copts = None if pk else {"compaction.min.file-num": "2"}
            latest = jp.compact(wh, DB, name, full=rng.random() < 0.6 or not pk, options=copts)
        elif op == "overwrite":
            dt = rng.choice(DTS)
            rows = [{"id": rng.randrange(40), "dt": dt, "v": rng.randrange(1000)} for _ in range(3)]
            latest = jp.write(wh, DB, name, rows, overwrite={"dt": dt})
        elif op == "tag":
            tname = f"tag{i}"
            jp.create_tag(wh, DB, name, tname, rng.randint(1, latest))
            made["tags"].append(tname)
        elif op == "consumer":
            cid = f"c{len(made['consumers'])}"
            nxt = rng.randint(1, latest)
            jp.reset_consumer(wh, DB, name, cid, nxt)
            made["consumers"][cid] = nxt
        elif op == "analyze":
            latest = jp.analyze(wh, DB, name)
        elif op == "branch" and made["tags"] and not made["branches"]:
            bname = f"b{i}"
            jp.create_branch(wh, DB, name, bname, from_tag=rng.choice(made["tags"]))
            made["branches"].append(bname)
    made["latest"] = latest
    return made


def snapshot_ids(table_dir: Path) -> list[int]:
    return sorted(int(p.name[len("snapshot-"):]) for p in (table_dir / "snapshot").glob("snapshot-*"))


def compare_expire(jp: JavaPaimon, tmp: Path, name: str, made: dict[str, Any], *,
                   retain_min: int | None, retain_max: int | None, max_deletes: int | None,
                   engine: Callable[[Any, ExpirePolicy], Any] = expire) -> dict[str, Any]:
    """Expire a Java copy and our copy of ``tmp/orig`` (with ``engine``) with the same
    settings and compare."""
    # 0.9's default snapshot.expire.limit is 10, 1.x's (ours) 50: always pass it explicitly
    max_deletes = 50 if max_deletes is None else max_deletes
    orig = tmp / "orig"
    src = orig / f"{DB}.db" / name
    ids_before = snapshot_ids(src)
    before = {sid: java_rows(jp, str(orig), name, snapshot_id=sid) for sid in ids_before}
    tags_before = {t: java_rows(jp, str(orig), name, tag=t) for t in made["tags"]}
    for side in ("java", "ours"):
        shutil.copytree(orig, tmp / side)
    time.sleep(0.02)  # every snapshot is older than the 1 ms retention below
    n_java = jp.expire(str(tmp / "java"), DB, name, retain_max=retain_max, retain_min=retain_min,
                       older_than_ms=1, max_deletes=max_deletes)
    table = FileSystemCatalog(str(tmp / "ours")).get_table(f"{DB}.{name}")
    policy = ExpirePolicy(retain_max=retain_max, retain_min=retain_min, time_retained_millis=1,
                          max_deletes=max_deletes)
    plan = plan_expire(table, policy)
    res = engine(table, policy)
    assert res.expired == len(plan.expired_ids) == n_java
    java_dir = tmp / "java" / f"{DB}.db" / name
    our_dir = tmp / "ours" / f"{DB}.db" / name
    left_java, left_ours = file_set(java_dir), file_set(our_dir)
    assert set(left_ours) - set(left_java) == set(), "files we kept that Java deleted"
    assert set(left_java) - set(left_ours) == set(), "files we deleted that Java kept"
    assert left_ours == left_java
    assert hint(our_dir) == hint(java_dir)
    # the dry-run list was exactly what disappeared
    gone = set(file_set(src)) - set(left_ours)
    planned = {str(Path(f.path).relative_to(our_dir)) for f in plan.files}
    assert gone == planned
    # Java reads every retained snapshot and every tag of OUR copy as before
    for sid in snapshot_ids(our_dir):
        assert java_rows(jp, str(tmp / "ours"), name, snapshot_id=sid) == before[sid], f"snapshot {sid}"
    for t, rows in tags_before.items():
        assert java_rows(jp, str(tmp / "ours"), name, tag=t) == rows, f"tag {t}"
    for b in made["branches"]:
        assert jp.read(str(tmp / "ours"), DB, name, branch=b) is not None
    return {"expired": n_java, "deleted": len(gone)}


PK_VARIANTS = {
    1: {},
    2: {},
    3: {"changelog-producer": "input"},  # changelog files, deleted with their snapshots
    # Java's writer compacts (and writes DV index files) when not write-only; its own expiry
    # after those commits keeps everything (10 snapshots / 1 h)
    4: {"deletion-vectors.enabled": "true", "write-only": "false"},
    5: {"bucket": "-1"},  # dynamic bucket: HASH index files
    6: {"changelog-producer": "lookup"},  # changelog written by compaction
    7: {"deletion-vectors.enabled": "true", "changelog-producer": "lookup", "write-only": "false"},
    8: {"file.format": "orc"},
}


@pytest.mark.parametrize("seed", sorted(PK_VARIANTS))
def test_random_pk_histories_match_java(java_paimon: JavaPaimon, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    name = f"pk{seed}"
    made = build_history(java_paimon, str(tmp_path / "orig"), name, rng, pk=True, n_ops=rng.randint(14, 24),
                         options=PK_VARIANTS[seed])
    retain_min = rng.randint(1, 3)
    retain_max = rng.choice([None, retain_min + rng.randint(0, 6)])
    max_deletes = rng.choice([None, rng.randint(1, 12)])
    out = compare_expire(java_paimon, tmp_path, name, made, retain_min=retain_min, retain_max=retain_max,
                         max_deletes=max_deletes)
    assert out["expired"] >= 0


@pytest.mark.parametrize("seed", [11, 12, 13])
def test_random_append_histories_match_java(java_paimon: JavaPaimon, tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    name = f"ap{seed}"
    made = build_history(java_paimon, str(tmp_path / "orig"), name, rng, pk=False, n_ops=rng.randint(12, 20))
    compare_expire(java_paimon, tmp_path, name, made, retain_min=rng.randint(1, 4), retain_max=None,
                   max_deletes=None)


def test_expires_something_and_respects_tags_and_consumers(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """A fixed history where the range is non-trivial: tags inside it, a consumer clamping it."""
    wh = str(tmp_path / "orig")
    jp = java_paimon
    jp.create_table(wh, DB, "t", COLS, primary_keys=["id", "dt"], partition_keys=["dt"],
                    options={"bucket": "2", "write-only": "true"})
    for i in range(12):
        jp.write(wh, DB, "t", [{"id": i % 5, "dt": DTS[i % 3], "v": i}, {"id": 20 + i, "dt": DTS[0], "v": i}])
        if i in (3, 8):
            jp.compact(wh, DB, "t", full=True)
    jp.create_tag(wh, DB, "t", "keep2", 2)
    jp.create_tag(wh, DB, "t", "keep6", 6)
    jp.reset_consumer(wh, DB, "t", "reader", 11)
    made = {"tags": ["keep2", "keep6"], "consumers": {"reader": 11}, "branches": []}
    out = compare_expire(jp, tmp_path, "t", made, retain_min=2, retain_max=None, max_deletes=None)
    assert out["expired"] == 10  # clamped by the consumer at 11
    assert out["deleted"] > 10


@pytest.mark.parametrize("producer", ["input", "none"])
def test_decoupled_changelog_matches_java(java_paimon: JavaPaimon, tmp_path: Path, producer: str) -> None:
    """changelog.num-retained.* above the snapshot settings: snapshots move to changelog/ and a
    later changelog expiry removes them, leaving what Java leaves."""
    jp = java_paimon
    orig = tmp_path / "orig"
    opts = {"changelog-producer": producer, "changelog.num-retained.min": "6", "changelog.num-retained.max": "8",
            "snapshot.expire.limit": "50"}
    jp.create_table(str(orig), DB, "c", COLS, primary_keys=["id", "dt"], partition_keys=["dt"],
                    options={"bucket": "1", "write-only": "true", **opts})
    for i in range(14):
        jp.write(str(orig), DB, "c", [{"id": i % 4, "dt": DTS[i % 2], "v": i}])
        if i == 6:
            jp.compact(str(orig), DB, "c", full=True)
    for side in ("java", "ours"):
        shutil.copytree(orig, tmp_path / side)
    time.sleep(0.02)
    dyn = {"snapshot.num-retained.min": "2", "snapshot.num-retained.max": "3", "snapshot.time-retained": "1 ms",
           "changelog.time-retained": "2 ms"}
    n_java = helper(jp).expireWithOptions(str(tmp_path / "java"), DB, "c", json.dumps(dyn))
    table = FileSystemCatalog(str(tmp_path / "ours")).get_table(f"{DB}.c")
    from paimon_cli.core.operation.expire import expire_after_commit

    res = expire_after_commit(table, {**dyn, "write-only": "false"})
    assert res is not None and res.error is None
    assert res.plan is not None and res.plan.policy.changelog_decoupled
    n_ours = res.expired + (res.changelog.expired if res.changelog else 0)
    assert n_ours == n_java
    java_dir = tmp_path / "java" / f"{DB}.db" / "c"
    our_dir = tmp_path / "ours" / f"{DB}.db" / "c"
    assert file_set(our_dir) == file_set(java_dir)
    assert (our_dir / "changelog").is_dir()
    for sub in ("snapshot", "changelog"):
        assert hint(our_dir, "EARLIEST", sub) == hint(java_dir, "EARLIEST", sub)
        assert hint(our_dir, "LATEST", sub) == hint(java_dir, "LATEST", sub)
    for sid in snapshot_ids(our_dir):
        assert java_rows(jp, str(tmp_path / "ours"), "c", snapshot_id=sid) == java_rows(
            jp, str(orig), "c", snapshot_id=sid)


@pytest.mark.parametrize("opts", [
    {"deletion-vectors.enabled": "true"},
    {"deletion-vectors.enabled": "true", "changelog-producer": "lookup"},
    {"bucket": "-1", "dynamic-bucket.target-row-num": "5"},
])
def test_index_files_match_java(java_paimon: JavaPaimon, tmp_path: Path, opts: dict[str, str]) -> None:
    """DV and HASH index files (index manifests) are expired exactly as Java expires them."""
    jp = java_paimon
    wh = str(tmp_path / "orig")
    jp.create_table(wh, DB, "ix", COLS, primary_keys=["id", "dt"], partition_keys=["dt"],
                    options={"bucket": "2", **opts})  # not write-only: Java's writer compacts
    rng = random.Random(len(opts))
    for i in range(9):
        jp.write(wh, DB, "ix", [{"id": rng.randrange(20), "dt": DTS[i % 2], "v": i} for _ in range(6)])
    jp.create_tag(wh, DB, "ix", "mid", 6)
    src = tmp_path / "orig" / f"{DB}.db" / "ix"
    assert list((src / "index").iterdir()), "the history has index files"
    made = {"tags": ["mid"], "consumers": {}, "branches": []}
    out = compare_expire(jp, tmp_path, "ix", made, retain_min=2, retain_max=None, max_deletes=None)
    assert out["expired"] >= 7
    assert any("index" in p for p in set(file_set(src)) - set(file_set(tmp_path / "ours" / f"{DB}.db" / "ix")))


def dir_set(table_dir: Path) -> set[str]:
    return {str(Path(root).relative_to(table_dir)) for root, _, _ in os.walk(table_dir)}


def test_clean_empty_directories_matches_java(java_paimon: JavaPaimon, tmp_path: Path) -> None:
    """snapshot.clean-empty-directories: emptied bucket and partition directories go, as in Java."""
    jp = java_paimon
    orig = tmp_path / "orig"
    jp.create_table(str(orig), DB, "e", COLS, partition_keys=["dt"],
                    options={"bucket": "-1", "write-only": "true", "snapshot.clean-empty-directories": "true"})
    for i in range(6):
        jp.write(str(orig), DB, "e", [{"id": i, "dt": DTS[i % 3], "v": i}])
    from paimon_cli.core.operation.commit import FileStoreCommit

    # an OVERWRITE snapshot deleting every file of the first partition (Java's dropPartitions)
    FileStoreCommit(FileSystemCatalog(str(orig)).get_table(f"{DB}.e")).drop_partitions([{"dt": DTS[0]}])
    for i in range(3):
        jp.write(str(orig), DB, "e", [{"id": 50 + i, "dt": DTS[2], "v": i}])
    made = {"tags": [], "consumers": {}, "branches": []}
    compare_expire(jp, tmp_path, "e", made, retain_min=1, retain_max=None, max_deletes=None)
    java_dir = tmp_path / "java" / f"{DB}.db" / "e"
    our_dir = tmp_path / "ours" / f"{DB}.db" / "e"
    assert not (java_dir / f"dt={DTS[0]}").exists()  # Java removed the emptied partition
    assert dir_set(our_dir) == dir_set(java_dir)
