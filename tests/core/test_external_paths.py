"""``data-file.external-paths``: which root each new file goes to, and which options are refused.

Java's providers (``RoundRobinExternalPathProvider``, ``WeightedExternalPathProvider``,
``EntropyInjectExternalPathProvider``): round-robin starts at a random root and moves on one
root per file; weight-robin draws each file's root in proportion to the weights; both put the
file at ``<root>/<partition>/bucket-N/<name>``. Every write and compaction output, changelog
and file-index file goes there, the manifest records the full path in ``_EXTERNAL_PATH``, and
nothing lands in the table's own bucket directories.
"""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.compact.job import compact_table
from paimon_cli.core.errors import InvalidInput
from paimon_cli.core.io.external_paths import ExternalPaths, entropy_dirs, java_path
from paimon_cli.core.operation.scan import FileStoreScan
from tests.core.test_orphans_support import files_under, make_table, read_rows, reload, write_rows

EXT = "data-file.external-paths"
STRATEGY = "data-file.external-paths.strategy"
WEIGHTS = "data-file.external-paths.weights"
SPECIFIC = "data-file.external-paths.specific-fs"


def _roots(tmp: Path, n: int) -> list[str]:
    return [f"file://{tmp}/ext{i}" for i in range(n)]


def _root_index(path: str, roots: list[str]) -> int:
    return next(i for i, r in enumerate(roots) if path.startswith(java_path(r) + "/"))


def test_java_path_form() -> None:
    assert java_path("file:///tmp/x/") == "file:/tmp/x"
    assert java_path("file:/tmp//x") == "file:/tmp/x"
    assert java_path("s3://bucket/a//b/") == "s3://bucket/a/b"
    assert java_path("oss://bucket") == "oss://bucket"


def test_round_robin_cycles_from_a_random_start(tmp_path: Path) -> None:
    roots = _roots(tmp_path, 3)
    ext = ExternalPaths.of({EXT: ",".join(roots), STRATEGY: "round-robin"})
    assert ext is not None
    starts = Counter()
    for _ in range(60):
        p = ext.provider("dt=a/bucket-0")
        picks = [_root_index(p.next_path(f"f{i}"), roots) for i in range(9)]
        # one root after the other, each used equally
        assert all(picks[i + 1] == (picks[i] + 1) % 3 for i in range(8))
        starts[picks[0]] += 1
    assert set(starts) == {0, 1, 2}  # the start point is random, as Java's ThreadLocalRandom
    p = ext.provider("dt=a/bucket-0")
    assert re.fullmatch(rf"file:{tmp_path}/ext\d/dt=a/bucket-0/data-1\.parquet", p.next_path("data-1.parquet"))


def test_weight_robin_draws_in_proportion(tmp_path: Path) -> None:
    roots = _roots(tmp_path, 3)
    ext = ExternalPaths.of({EXT: ",".join(roots), STRATEGY: "weight-robin", WEIGHTS: "1, 3,6"})
    assert ext is not None
    random.seed(7)
    p = ext.provider("bucket-0")
    counts = Counter(_root_index(p.next_path(f"f{i}"), roots) for i in range(20000))
    for i, share in enumerate((0.1, 0.3, 0.6)):
        assert abs(counts[i] / 20000 - share) < 0.02
    # one root, or no weights: round-robin (Java)
    one = ExternalPaths.of({EXT: roots[0], STRATEGY: "WEIGHT-ROBIN", WEIGHTS: "5"})
    assert one is not None and type(one.provider("bucket-0")).__name__ == "RoundRobinProvider"
    plain = ExternalPaths.of({EXT: ",".join(roots), STRATEGY: "weight-robin"})
    assert plain is not None and type(plain.provider("bucket-0")).__name__ == "RoundRobinProvider"


def test_specific_fs_keeps_only_that_scheme(tmp_path: Path) -> None:
    ext = ExternalPaths.of({EXT: f"s3://b/x, file://{tmp_path}/e, oss://c/y", STRATEGY: "specific-fs",
                            SPECIFIC: "FILE"})
    assert ext is not None and ext.roots == (f"file:{tmp_path}/e",)


def test_entropy_inject_adds_hash_dirs(tmp_path: Path) -> None:
    roots = _roots(tmp_path, 2)
    ext = ExternalPaths.of({EXT: ",".join(roots), STRATEGY: "entropy-inject"})
    assert ext is not None
    p = ext.provider("bucket-0")
    first, second = p.next_path("data-a-0.parquet"), p.next_path("data-a-1.parquet")
    # Java increments before use: the first file goes to the second root
    assert first == f"file:{tmp_path}/ext1/bucket-0/{entropy_dirs('data-a-0.parquet')}/data-a-0.parquet"
    assert second.startswith(f"file:{tmp_path}/ext0/bucket-0/")
    assert re.fullmatch(r"[01]{4}/[01]{4}/[01]{4}/[01]{8}", entropy_dirs("x"))


def test_off_unless_strategy_and_paths() -> None:
    assert ExternalPaths.of({}) is None
    assert ExternalPaths.of({EXT: "file:///x"}) is None  # strategy defaults to none
    assert ExternalPaths.of({STRATEGY: "round-robin"}) is None
    assert ExternalPaths.of({EXT: "relative/x", STRATEGY: "none"}) is None


@pytest.mark.parametrize("options, message", [
    ({EXT: "file:///x", STRATEGY: "random"}, "not a strategy"),
    ({EXT: "/no/scheme", STRATEGY: "round-robin"}, "has no scheme"),
    ({EXT: "file:///x", STRATEGY: "specific-fs"}, "needs data-file.external-paths.specific-fs"),
    ({EXT: "file:///x", STRATEGY: "specific-fs", SPECIFIC: "s3"}, "has no root on"),
    ({EXT: "file:///x,file:///y", STRATEGY: "weight-robin", WEIGHTS: "1,0"}, "must be positive"),
    ({EXT: "file:///x,file:///y", STRATEGY: "weight-robin", WEIGHTS: "1,a"}, "not an integer"),
    ({EXT: "file:///x,file:///y", STRATEGY: "weight-robin", WEIGHTS: "1,2,3"}, "3 weights for 2"),
])
def test_invalid_options_refused(options: dict[str, str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        ExternalPaths.of(options)


def _bucket_files(wh: Path) -> set[str]:
    return {f for f in files_under(wh) if "/bucket-" in f}


def _live_paths(table: Any) -> list[tuple[str, str | None, tuple[str, ...]]]:
    t = reload(table)
    return [(e.file.file_name, e.file.external_path, e.file.extra_files)
            for e in FileStoreScan(t).plan(t.snapshot_manager.latest_snapshot())]


@pytest.mark.parametrize("pk", [True, False])
def test_write_and_compact_spread_files_over_roots(tmp_path: Path, pk: bool) -> None:
    """Round-robin write + full compaction: every file (data, changelog, .index) is external,
    spread over both roots; reads see every row; the warehouse bucket dirs stay empty."""
    roots = _roots(tmp_path, 2)
    extra = {"changelog-producer": "input"} if pk else {}
    t = make_table(tmp_path / "wh", "t", pk=pk, **{EXT: ",".join(roots), STRATEGY: "round-robin",
                                                    "file-index.bloom-filter.columns": "v",
                                                    "file-index.in-manifest-threshold": "1b", **extra})
    rows = [(i, "ab"[i % 2], f"v{i}") for i in range(40)]
    for chunk in range(4):
        write_rows(t, rows[chunk * 10:(chunk + 1) * 10], tmp_path)
    compact_table(reload(t), full=True)
    live = _live_paths(t)
    prefixes = tuple(java_path(r) + "/" for r in roots)
    assert live and all(ext and ext.startswith(prefixes) for _, ext, _ in live)
    assert all(ext.endswith("/" + name) for name, ext, _ in live)
    assert all(x for _, _, x in live)  # each file has its .index extra file ...
    for _, ext, extras in live:  # ... next to it, on the same root
        assert all(Path(ext[len("file:"):]).with_name(x).is_file() for x in extras)
    assert _bucket_files(tmp_path / "wh") == set()
    written = [f for r in range(2) for f in files_under(tmp_path / f"ext{r}")]
    assert {f.split("/")[0] for f in written} == {"dt=a", "dt=b"}
    assert all(files_under(tmp_path / f"ext{r}") for r in range(2))
    if pk:
        assert any("changelog-" in f for f in written)
    assert [(r["id"], r["dt"], r["v"]) for r in read_rows(reload(t))] == sorted(rows, key=lambda r: (r[1], r[0]))
    res = CliRunner().invoke(app, ["read", "db.t", "--where", "v = 'v7'", "-w", str(tmp_path / "wh"), "-o", "json"])
    assert res.exit_code == 0 and '"v7"' in res.output and '"v8"' not in res.output


def test_weighted_write_distribution(tmp_path: Path) -> None:
    """One file in each of 300 partitions: weight-robin 1:4 puts about a fifth on the first root."""
    roots = _roots(tmp_path, 2)
    t = make_table(tmp_path / "wh", "t", pk=False, **{EXT: ",".join(roots), STRATEGY: "weight-robin",
                                                      WEIGHTS: "1,4"})
    random.seed(3)
    write_rows(t, [(i, f"p{i}", f"v{i}") for i in range(300)], tmp_path)
    live = _live_paths(t)
    counts = Counter(_root_index(ext or "", roots) for _, ext, _ in live)
    assert sum(counts.values()) == len(live) == 300
    assert 0.12 < counts[0] / 300 < 0.28
    assert len(read_rows(reload(t))) == 300
    assert _bucket_files(tmp_path / "wh") == set()


def test_refusals_write_nothing(tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    cli = CliRunner()
    res = cli.invoke(app, ["create", "db.bad", "-w", str(wh), "--schema", "id INT", "--option",
                           f"{EXT}=file:///x", "--option", f"{STRATEGY}=fastest"])
    assert res.exit_code == 4 and "data-file.external-paths.strategy" in res.output
    assert not (wh / "db.db" / "bad").exists()
    # valid for Java (an S3 root), but this table's filesystem is local: refused, nothing written
    t = make_table(wh, "s3", pk=False, **{EXT: "s3://bucket/ext", STRATEGY: "round-robin"})
    before = files_under(wh)
    src = tmp_path / "in.csv"
    src.write_text("id,dt,v\n1,a,x\n")
    res = cli.invoke(app, ["write", "db.s3", str(src), "-w", str(wh)])
    assert res.exit_code == 1 and "another filesystem" in res.output
    res = cli.invoke(app, ["compact", "db.s3", "--full", "-w", str(wh)])
    assert res.exit_code == 1 and "another filesystem" in res.output
    # a dynamic option of one write is checked the same way
    res = cli.invoke(app, ["write", "db.s3", str(src), "-w", str(wh), "--option", f"{STRATEGY}=specific-fs",
                           "--option", f"{SPECIFIC}=oss"])
    assert res.exit_code == 4 and "has no root on" in res.output
    assert files_under(wh) == before
    assert reload(t).snapshot_manager.latest_snapshot() is None


def _index_files(table: Any) -> list[Any]:
    t = reload(table)
    return [e.index_file for e in FileStoreScan(t).index_entries(t.snapshot_manager.latest_snapshot())]


@pytest.mark.parametrize("layout", ["in-data-file-dir", "global-index-root", "default"])
def test_deletion_vector_files_follow_java_index_paths(tmp_path: Path, layout: str) -> None:
    """DV index files: ``<table>/index`` by default even with external data paths; with
    ``index-file-in-data-file-dir`` on an external root like a data file; else under
    ``global-index.external-path``; ``_EXTERNAL_PATH`` recorded whenever outside the table."""
    roots = _roots(tmp_path, 2)
    opts = {EXT: ",".join(roots), STRATEGY: "round-robin", "deletion-vectors.enabled": "true",
            "write-only": "false"}
    if layout == "in-data-file-dir":
        opts["index-file-in-data-file-dir"] = "true"
    elif layout == "global-index-root":
        opts["global-index.external-path"] = f"file://{tmp_path}/gidx"
    t = make_table(tmp_path / "wh", "t", **opts)
    write_rows(t, [(i, "a", f"v{i}") for i in range(10)], tmp_path)
    write_rows(t, [(i, "a", f"w{i}") for i in range(0, 10, 3)], tmp_path)
    write_rows(t, [(i, "a", f"x{i}") for i in range(0, 10, 2)], tmp_path)
    dv = [f for f in _index_files(t) if f.index_type == "DELETION_VECTORS"]
    assert dv, "the writes produced no deletion vector file"
    for f in dv:
        if layout == "default":
            assert f.external_path is None and (tmp_path / "wh" / "db.db" / "t" / "index" / f.file_name).is_file()
        else:
            base = (tuple(java_path(r) + "/dt=a/bucket-" for r in roots) if layout == "in-data-file-dir"
                    else (f"file:{tmp_path}/gidx/index-",))
            assert f.external_path and f.external_path.startswith(base), f.external_path
            assert Path(f.external_path[len("file:"):]).is_file()
    assert _bucket_files(tmp_path / "wh") == set()
    want = {i: f"v{i}" for i in range(10)} | {i: f"w{i}" for i in range(0, 10, 3)} | {i: f"x{i}" for i in range(0, 10, 2)}
    assert {r["id"]: r["v"] for r in read_rows(reload(t))} == want
