"""``clone`` of tables Java Paimon 0.9 wrote, into another warehouse, read back by Java 0.9 and
pypaimon 2.1.

Why: clone copies files byte for byte but writes the target's manifests, index manifest and
snapshot itself; a clone that Java reads differently from its source (a lost deletion vector,
a wrong bucket, a file under the wrong schema) is a silent wrong answer. Proof: Java writes a
partitioned primary-key table with deletion vectors (updates and deletes, compacted so the
vectors are live) and a partitioned append table; after ``clone`` (whole table, and one
partition with ``--where``) Java 0.9 reads the clone row for row equal to the source, and so
does pypaimon 2.1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .cli_runner import cli, cli_json
from .java_harness import JavaPaimon
from .pypaimon_peer import PyPaimon

DB = "db"


def _key(r: dict[str, Any]) -> tuple[Any, ...]:
    return (r["dt"], r["id"])


def _rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return sorted(({k: v for k, v in r.items() if k != "_row_kind"} for r in rows), key=_key)


@pytest.fixture(scope="module")
def source(java_paimon: JavaPaimon, tmp_path_factory: pytest.TempPathFactory) -> str:
    wh = str(tmp_path_factory.mktemp("clone-src"))
    j = java_paimon
    j.create_table(wh, DB, "pk", [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
                   primary_keys=["id", "dt"], partition_keys=["dt"],
                   options={"bucket": "2", "deletion-vectors.enabled": "true"})
    j.write(wh, DB, "pk", [{"id": i, "v": f"v{i}", "dt": d} for d in ("a", "b") for i in range(40)])
    j.write(wh, DB, "pk", [{"id": i, "v": f"u{i}", "dt": "a"} for i in range(0, 40, 3)])
    j.write(wh, DB, "pk", [{"id": i, "v": None, "dt": "b"} for i in range(0, 40, 5)],
            row_kinds=["-D"] * 8)
    j.create_table(wh, DB, "ap", [("id", "BIGINT"), ("v", "STRING"), ("dt", "STRING")], partition_keys=["dt"])
    j.write(wh, DB, "ap", [{"id": i, "v": f"x{i}", "dt": "a" if i % 2 else "b"} for i in range(30)])
    j.write(wh, DB, "ap", [{"id": 100 + i, "v": None, "dt": "c"} for i in range(5)])
    return wh


def test_java_reads_a_clone_of_its_tables_row_for_row(java_paimon: JavaPaimon, source: str,
                                                      tmp_path: Path) -> None:
    j = java_paimon
    target = str(tmp_path / "wh2")
    kinds = {r["kind"] for r in cli_json(source, "clone", DB, "--target", "bak", "--target-warehouse", target,
                                         "--dry-run")}
    assert "index" in kinds  # the deletion vectors are copied too
    cli(source, "clone", DB, "--target", "bak", "--target-warehouse", target)
    for name in ("pk", "ap"):
        want = _rows(j.read(source, DB, name))
        assert want
        assert _rows(j.read(target, "bak", name)) == want, name
    pk = _rows(j.read(source, DB, "pk"))
    assert len(pk) == 80 - 8 and any(r["v"].startswith("u") for r in pk)


def test_java_reads_a_partition_clone(java_paimon: JavaPaimon, source: str, tmp_path: Path) -> None:
    j = java_paimon
    target = str(tmp_path / "wh2")
    cli(source, "clone", f"{DB}.pk", "--target", "bak.pk_b", "--target-warehouse", target, "--where", "dt = 'b'")
    want = [r for r in _rows(j.read(source, DB, "pk")) if r["dt"] == "b"]
    assert _rows(j.read(target, "bak", "pk_b")) == want


def test_pypaimon_reads_the_clone(java_paimon: JavaPaimon, pypaimon: PyPaimon, source: str,
                                  tmp_path: Path) -> None:
    target = str(tmp_path / "wh2")
    cli(source, "clone", DB, "--target", "bak", "--target-warehouse", target)
    for name in ("pk", "ap"):
        want = _rows(java_paimon.read(source, DB, name))
        got = sorted(pypaimon.read(target, "bak", name), key=_key)
        assert got == want, name


def test_java_reads_a_clone_of_an_evolved_table(java_paimon: JavaPaimon, pypaimon: PyPaimon,
                                                tmp_path: Path) -> None:
    j = java_paimon
    wh, target = str(tmp_path / "wh"), str(tmp_path / "wh2")
    j.create_table(wh, DB, "ev", [("id", "BIGINT NOT NULL"), ("v", "STRING"), ("dt", "STRING NOT NULL")],
                   primary_keys=["id", "dt"], partition_keys=["dt"], options={"bucket": "1"})
    j.write(wh, DB, "ev", [{"id": i, "v": f"v{i}", "dt": "a"} for i in range(10)])
    j.alter_table(wh, DB, "ev", [{"add": ["w", "INT"]}])
    j.write(wh, DB, "ev", [{"id": i, "v": f"n{i}", "dt": "a", "w": i} for i in range(5, 15)])
    cli(wh, "clone", f"{DB}.ev", "--target", "bak.ev", "--target-warehouse", target)
    want = _rows(j.read(wh, DB, "ev"))
    assert len(want) == 15 and {r["w"] for r in want} >= {None, 14}
    assert _rows(j.read(target, "bak", "ev")) == want
    assert sorted(pypaimon.read(target, "bak", "ev"), key=_key) == want


def test_java_keeps_writing_into_a_clone(java_paimon: JavaPaimon, source: str, tmp_path: Path) -> None:
    """The clone is a table, not a snapshot of one: Java's next update of a key wins over the
    copied rows (sequence numbers and levels kept), and its compaction keeps the rows."""
    j = java_paimon
    target = str(tmp_path / "wh2")
    cli(source, "clone", f"{DB}.pk", "--target", "bak.pk", "--target-warehouse", target)
    j.write(target, "bak", "pk", [{"id": 1, "v": "new", "dt": "a"}, {"id": 2, "v": "new", "dt": "b"}])
    j.compact(target, "bak", "pk")
    want = {(r["dt"], r["id"]): r["v"] for r in _rows(j.read(source, DB, "pk"))}
    want[("a", 1)] = want[("b", 2)] = "new"
    assert {(r["dt"], r["id"]): r["v"] for r in _rows(j.read(target, "bak", "pk"))} == want


def test_java_reads_a_clone_with_target_table_conf_and_a_whole_catalog_clone(java_paimon: JavaPaimon, source: str,
                                                                              tmp_path: Path) -> None:
    """Options set with --target-table-conf land in the target's schema and leave it readable
    by Java row for row; a whole-catalog clone gives Java every table under its own name."""
    j = java_paimon
    one, whole = str(tmp_path / "one"), str(tmp_path / "whole")
    cli(source, "clone", f"{DB}.pk", "--target", "bak.pk", "--target-warehouse", one,
        "--target-table-conf", "snapshot.num-retained.max=20", "--target-table-conf", "target-file-size=64 mb")
    options = json.loads((Path(one) / "bak.db" / "pk" / "schema" / "schema-0").read_text())["options"]
    assert options["snapshot.num-retained.max"] == "20" and options["target-file-size"] == "64 mb"
    assert _rows(j.read(one, "bak", "pk")) == _rows(j.read(source, DB, "pk"))
    cli(source, "clone", "--target-warehouse", whole)
    for name in ("pk", "ap"):
        assert _rows(j.read(whole, DB, name)) == _rows(j.read(source, DB, name)), name
