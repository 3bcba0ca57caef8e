"""Bad input and damaged tables: one stderr line, the documented exit code, nothing written.

Why: the CLI is pointed at production warehouses by people in a hurry. A missing table, a
snapshot id that does not exist, or a metadata file cut short by a failed upload must end
in a single line that names the file or the value and says what is wrong -- never a
traceback (unless ``--debug`` asks for one), and never a write that could make things worse.

The table is built with our own core: ``create`` through the CLI, then three tiny commits
made by hand with the manifest/manifest-list writers and SnapshotManager, the way Java lays
them out (base list = everything before, delta list = this commit's manifest).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.data import binary_row
from paimon_cli.core.data.types import BigIntType
from paimon_cli.core.io.paths import manifest_dir
from paimon_cli.core.manifest.manifest import (
    DataFileMeta,
    FileKind,
    FileSource,
    ManifestEntry,
    ManifestFile,
    ManifestList,
    SimpleStats,
)
from paimon_cli.core.refs.snapshot import Snapshot

README = Path(__file__).resolve().parents[2] / "README.md"
SCHEMA = "id BIGINT NOT NULL, name STRING"


def invoke(runner: CliRunner, *args: str) -> Any:
    return runner.invoke(app, list(args))


def one_error_line(result: Any) -> str:
    """The single ``error:`` line; also: no traceback anywhere, nothing on stdout."""
    assert "Traceback" not in result.stderr and "Traceback" not in result.stdout, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: "), lines[0]
    assert result.stdout == ""
    return lines[0]


def tree(root: Path) -> dict[str, str]:
    """Every file under root with a content hash (and every directory), to prove nothing was written."""
    if not root.exists():
        return {}
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        out[rel] = "<dir>" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def documented_exit_codes() -> dict[str, int]:
    """README's "Exit codes" table: first word of the meaning -> code."""
    text = README.read_text("utf-8")
    section = text.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    codes = {}
    for code, meaning in re.findall(r"^\| (\d) \| ([^|]+) \|$", section, flags=re.M):
        codes[meaning.split(":")[0].strip()] = int(code)
    return codes


DOC = documented_exit_codes()
NOT_FOUND = DOC["not found"]
INVALID = DOC["invalid input"]
USAGE = DOC["usage error"]


def test_readme_documents_the_codes_asserted_here() -> None:
    assert (NOT_FOUND, INVALID, USAGE) == (3, 4, 2)
    section = README.read_text("utf-8").split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    assert "corrupt metadata" in section and "snapshot" in section and "warehouse" in section


# ---------------------------------------------------------------------------- a table with 3 snapshots


@dataclass
class Table:
    warehouse: str
    path: Path
    manifests: list[str]  # one per commit, in commit order
    manifest_lists: list[tuple[str, str]]  # (base, delta) per snapshot

    def snapshot_file(self, sid: int) -> Path:
        return self.path / "snapshot" / f"snapshot-{sid}"

    def schema_file(self, sid: int) -> Path:
        return self.path / "schema" / f"schema-{sid}"

    def manifest_file(self, name: str) -> Path:
        return self.path / "manifest" / name


def _key(i: int) -> bytes:
    return binary_row.serialize([i], [BigIntType(nullable=False)])


def _data_file(n: int, first_id: int, rows: int, schema_id: int) -> DataFileMeta:
    lo, hi = _key(first_id), _key(first_id + rows - 1)
    return DataFileMeta(
        file_name=f"data-{n:04d}-0.parquet",
        file_size=1000 + n,
        row_count=rows,
        min_key=lo,
        max_key=hi,
        key_stats=SimpleStats(lo, hi, [0]),
        value_stats=SimpleStats.empty(),
        min_sequence_number=first_id,
        max_sequence_number=first_id + rows - 1,
        schema_id=schema_id,
        level=0,
        creation_time=1_714_550_400_000 + n,
        delete_row_count=0,
        file_source=int(FileSource.APPEND),
        value_stats_cols=(),
    )


def build_table(runner: CliRunner, warehouse: str, commits: int = 3) -> Table:
    result = invoke(runner, "create", "db.t", "--schema", SCHEMA, "--primary-key", "id",
                    "--option", "bucket=1", "-w", warehouse)
    assert result.exit_code == 0, result.output
    table = FileSystemCatalog(warehouse).get_table("db.t")
    fio, sm = table.file_io, table.snapshot_manager
    mdir = manifest_dir(table.path)
    mfile = ManifestFile(fio, mdir, table.schema.logical_partition_type)
    mlist = ManifestList(fio, mdir)
    metas: list[Any] = []
    manifests: list[str] = []
    lists: list[tuple[str, str]] = []
    total = 0
    for sid in range(1, commits + 1):
        f = _data_file(sid, first_id=sid * 10, rows=sid + 1, schema_id=0)
        meta = mfile.write([ManifestEntry(FileKind.ADD, binary_row.EMPTY_ROW, 0, 1, f)], schema_id=0)
        base, base_size = mlist.write(metas)
        delta, delta_size = mlist.write([meta])
        metas.append(meta)
        manifests.append(meta.file_name)
        lists.append((base, delta))
        total += f.row_count
        snap = Snapshot(
            id=sid, schema_id=0, base_manifest_list=base, base_manifest_list_size=base_size,
            delta_manifest_list=delta, delta_manifest_list_size=delta_size, commit_user="test-user",
            commit_kind="APPEND", time_millis=1_714_550_400_000 + sid * 1000,
            total_record_count=total, delta_record_count=f.row_count, changelog_record_count=0,
        )
        assert fio.try_write_atomic(sm.snapshot_path(sid), snap.to_json().encode("utf-8"))
        sm.commit_latest_hint(sid)
    sm.commit_earliest_hint(1)
    return Table(warehouse, Path(table.path), manifests, lists)


@pytest.fixture
def table(runner: CliRunner, warehouse: str) -> Table:
    return build_table(runner, warehouse)


def ok_json(runner: CliRunner, *args: str) -> Any:
    result = invoke(runner, *args, "-o", "json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def test_built_table_reads_back(runner: CliRunner, table: Table) -> None:
    """The baseline the damage tests start from: 3 snapshots, 3 live files."""
    snaps = ok_json(runner, "inspect", "snapshots", "db.t", "-w", table.warehouse)
    assert [s["snapshot_id"] for s in snaps] == [1, 2, 3]
    assert [s["total_record_count"] for s in snaps] == [2, 5, 9]
    files = ok_json(runner, "inspect", "files", "db.t", "-w", table.warehouse)
    assert sorted(f["record_count"] for f in files) == [2, 3, 4]
    files = ok_json(runner, "inspect", "files", "db.t", "--snapshot", "1", "-w", table.warehouse)
    assert [f["min_key"] for f in files] == [[10]]  # -o json: keys are arrays of values


# ---------------------------------------------------------------------------- damage, one case each


def run_damaged(runner: CliRunner, table: Table, *args: str) -> tuple[Any, Any]:
    """Run a failing command twice (plain and --debug) and check it wrote nothing."""
    before = tree(Path(table.warehouse))
    plain = invoke(runner, *args, "-w", table.warehouse)
    debug = invoke(runner, *args, "-w", table.warehouse, "--debug")
    assert tree(Path(table.warehouse)) == before, "a failing command changed the warehouse"
    return plain, debug


def assert_debug_traceback(debug: Any, code: int, line: str) -> None:
    assert debug.exit_code == code, debug.output
    assert "Traceback (most recent call last)" in debug.stderr
    assert debug.stderr.rstrip().splitlines()[-1] == line


def test_truncated_snapshot(runner: CliRunner, table: Table) -> None:
    path = table.snapshot_file(2)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    plain, debug = run_damaged(runner, table, "inspect", "snapshots", "db.t")
    assert plain.exit_code == INVALID, plain.output
    line = one_error_line(plain)
    assert str(path) in line
    assert_debug_traceback(debug, INVALID, line)
    # time travel to it fails the same way; the latest snapshot is still readable
    result = invoke(runner, "inspect", "files", "db.t", "--snapshot", "2", "-w", table.warehouse)
    assert result.exit_code == INVALID and str(path) in one_error_line(result)
    assert len(ok_json(runner, "inspect", "files", "db.t", "-w", table.warehouse)) == 3


def test_empty_snapshot_file(runner: CliRunner, table: Table) -> None:
    path = table.snapshot_file(3)
    path.write_bytes(b"")
    plain, debug = run_damaged(runner, table, "inspect", "files", "db.t")
    assert plain.exit_code == INVALID, plain.output
    line = one_error_line(plain)
    assert str(path) in line
    assert_debug_traceback(debug, INVALID, line)


def test_snapshot_with_wrong_types(runner: CliRunner, table: Table) -> None:
    path = table.snapshot_file(2)
    path.write_text(path.read_text().replace('"schemaId" : 0', '"schemaId" : "zero"'))
    plain, _ = run_damaged(runner, table, "inspect", "snapshots", "db.t")
    assert plain.exit_code == INVALID, plain.output
    line = one_error_line(plain)
    assert str(path) in line and "schemaId" in line


@pytest.mark.parametrize("garbage", [b"not avro at all", b"Obj\x01" + b"\x00" * 40, b""])
def test_garbage_manifest(runner: CliRunner, table: Table, garbage: bytes) -> None:
    path = table.manifest_file(table.manifests[0])  # in every later snapshot's base list
    path.write_bytes(garbage)
    plain, debug = run_damaged(runner, table, "inspect", "files", "db.t")
    assert plain.exit_code == INVALID, plain.output
    line = one_error_line(plain)
    assert str(path) in line
    assert_debug_traceback(debug, INVALID, line)


def test_truncated_manifest(runner: CliRunner, table: Table) -> None:
    path = table.manifest_file(table.manifests[2])
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    plain, _ = run_damaged(runner, table, "inspect", "files", "db.t")
    assert plain.exit_code == INVALID, plain.output
    assert str(path) in one_error_line(plain)


def test_truncated_manifest_list(runner: CliRunner, table: Table) -> None:
    path = table.manifest_file(table.manifest_lists[2][1])  # delta list of snapshot 3
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    plain, _ = run_damaged(runner, table, "inspect", "manifests", "db.t")
    assert plain.exit_code == INVALID, plain.output
    assert str(path) in one_error_line(plain)


def test_missing_manifest_is_invalid_not_not_found(runner: CliRunner, table: Table) -> None:
    """Issue 27: a manifest or manifest list a snapshot names is broken metadata (4), as
    health and maintain say; 3 (not found) would tell a cron script the table is gone."""
    path = table.manifest_file(table.manifests[1])
    path.unlink()
    for args in (("inspect", "files", "db.t"), ("read", "db.t")):
        plain, _ = run_damaged(runner, table, *args)
        assert plain.exit_code == INVALID, (args, plain.output)
        assert table.manifests[1] in one_error_line(plain)
    path = table.manifest_file(table.manifest_lists[2][1])  # delta list of snapshot 3
    path.unlink()
    for args in (("inspect", "files", "db.t"), ("read", "db.t"), ("inspect", "manifests", "db.t"),
                 ("compact", "db.t")):
        plain, _ = run_damaged(runner, table, *args)
        assert plain.exit_code == INVALID, (args, plain.output)
        assert str(path) in one_error_line(plain)
    health = invoke(runner, "health", "db.t", "-w", table.warehouse)
    assert health.exit_code == INVALID and str(path) in health.stderr


def test_truncated_only_schema(runner: CliRunner, table: Table) -> None:
    path = table.schema_file(0)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    for args in (("inspect", "snapshots", "db.t"), ("inspect", "schemas", "db.t"), ("alter", "db.t", "--set", "a=1")):
        plain, debug = run_damaged(runner, table, *args)
        assert plain.exit_code == INVALID, (args, plain.output)
        line = one_error_line(plain)
        assert str(path) in line, line
        assert_debug_traceback(debug, INVALID, line)
    assert not table.schema_file(1).exists()


def test_truncated_old_schema(runner: CliRunner, table: Table) -> None:
    """Only commands that need schema-0 fail; the table itself still opens at schema-1."""
    result = invoke(runner, "alter", "db.t", "--add-column", "note STRING", "-w", table.warehouse)
    assert result.exit_code == 0, result.output
    path = table.schema_file(0)
    path.write_text(path.read_text()[:40])
    plain, _ = run_damaged(runner, table, "inspect", "schemas", "db.t")
    assert plain.exit_code == INVALID, plain.output
    assert str(path) in one_error_line(plain)
    assert len(ok_json(runner, "inspect", "snapshots", "db.t", "-w", table.warehouse)) == 3


@pytest.mark.parametrize("hint", [b"abc", b"", b"\xff\xfe", b"-5", b"2x"])
def test_bad_latest_hint_falls_back_to_listing(runner: CliRunner, table: Table, hint: bytes) -> None:
    (table.path / "snapshot" / "LATEST").write_bytes(hint)
    (table.path / "snapshot" / "EARLIEST").write_bytes(hint)
    before = tree(Path(table.warehouse))
    files = ok_json(runner, "inspect", "files", "db.t", "-w", table.warehouse)
    assert sorted(f["record_count"] for f in files) == [2, 3, 4]  # latest = 3, found by listing
    assert [s["snapshot_id"] for s in ok_json(runner, "inspect", "snapshots", "db.t", "-w", table.warehouse)] == [1, 2, 3]
    assert tree(Path(table.warehouse)) == before  # reading does not repair the hint


def test_stale_latest_hint_falls_back_to_listing(runner: CliRunner, table: Table) -> None:
    (table.path / "snapshot" / "LATEST").write_text("1")
    files = ok_json(runner, "inspect", "files", "db.t", "-w", table.warehouse)
    assert len(files) == 3


@pytest.mark.parametrize("sid", ["999", "4"])
def test_snapshot_out_of_range(runner: CliRunner, table: Table, sid: str) -> None:
    plain, debug = run_damaged(runner, table, "inspect", "files", "db.t", "--snapshot", sid)
    assert plain.exit_code == NOT_FOUND, plain.output
    line = one_error_line(plain)
    assert sid in line and "1..3" in line, line
    assert_debug_traceback(debug, NOT_FOUND, line)


@pytest.mark.parametrize("sid", ["0", "-1", "abc"])
def test_snapshot_not_a_positive_number_is_usage(runner: CliRunner, table: Table, sid: str) -> None:
    result = invoke(runner, "inspect", "files", "db.t", "--snapshot", sid, "-w", table.warehouse)
    assert result.exit_code == USAGE, result.output
    assert "Traceback" not in result.output and result.stdout == ""


# ---------------------------------------------------------------------------- missing things (3)


def test_missing_table_and_database(runner: CliRunner, table: Table) -> None:
    for ident, word in (("db.nope", "nope"), ("nodb.t", "nodb")):
        plain, debug = run_damaged(runner, table, "inspect", "snapshots", ident)
        assert plain.exit_code == NOT_FOUND, plain.output
        line = one_error_line(plain)
        assert word in line
        assert_debug_traceback(debug, NOT_FOUND, line)
    result = invoke(runner, "alter", "db.nope", "--set", "a=1", "-w", table.warehouse)
    assert result.exit_code == NOT_FOUND and "nope" in one_error_line(result)
    result = invoke(runner, "list", "nodb", "-w", table.warehouse)
    assert result.exit_code == NOT_FOUND and "nodb" in one_error_line(result)


@pytest.mark.parametrize(
    "args",
    [("list",), ("list", "db"), ("inspect", "snapshots", "db.t"), ("inspect", "all-table-options"),
     ("alter", "db.t", "--set", "a=1")],
)
def test_missing_warehouse(runner: CliRunner, tmp_path: Path, args: tuple[str, ...]) -> None:
    missing = tmp_path / "nonexistent"
    result = invoke(runner, *args, "-w", str(missing))
    assert result.exit_code == NOT_FOUND, (args, result.output)
    line = one_error_line(result)
    assert str(missing) in line or "db" in line, line
    assert not missing.exists()


def test_missing_warehouse_only_read_by_catalog_options_and_made_by_create(runner: CliRunner, tmp_path: Path) -> None:
    """catalog-options shows configuration without touching storage; create makes the warehouse as Java does."""
    missing = tmp_path / "nonexistent"
    result = invoke(runner, "inspect", "catalog-options", "-w", str(missing), "-o", "csv")
    assert result.exit_code == 0 and f"warehouse,{missing}" in result.stdout
    assert not missing.exists()
    result = invoke(runner, "create", "db.t", "--schema", SCHEMA, "-w", str(missing))
    assert result.exit_code == 0, result.output
    assert (missing / "db.db" / "t" / "schema" / "schema-0").is_file()


def test_missing_warehouse_absolute_root(runner: CliRunner) -> None:
    result = invoke(runner, "list", "-w", "/nonexistent")
    assert result.exit_code == NOT_FOUND
    assert "/nonexistent" in one_error_line(result)


# ---------------------------------------------------------------------------- invalid input (4)


def test_option_typo_did_you_mean(runner: CliRunner, warehouse: str) -> None:
    before = tree(Path(warehouse))
    result = invoke(runner, "create", "db.t", "--schema", SCHEMA, "--primary-key", "id",
                    "--option", "buket=4", "-w", warehouse)
    assert result.exit_code == INVALID, result.output
    line = one_error_line(result)
    assert "buket" in line and "did you mean 'bucket'" in line
    assert tree(Path(warehouse)) == before


def test_option_typo_on_alter(runner: CliRunner, table: Table) -> None:
    plain, _ = run_damaged(runner, table, "alter", "db.t", "--set", "snapshot.num-retained.mx=5")
    assert plain.exit_code == INVALID, plain.output
    assert "did you mean 'snapshot.num-retained.max'" in one_error_line(plain)


def test_deliberate_unknown_option_is_accepted(runner: CliRunner, warehouse: str) -> None:
    """Paimon keeps arbitrary user keys; only near-misses of real keys are refused."""
    result = invoke(runner, "create", "db.t", "--schema", SCHEMA, "--option", "my.team.owner=data", "-w", warehouse)
    assert result.exit_code == 0, result.output


def test_bad_option_value_names_it(runner: CliRunner, warehouse: str) -> None:
    result = invoke(runner, "create", "db.t", "--schema", SCHEMA, "--primary-key", "id",
                    "--option", "bucket=four", "-w", warehouse)
    assert result.exit_code == INVALID, result.output
    line = one_error_line(result)
    assert "bucket" in line and "four" in line
    assert not (Path(warehouse) / "db.db").exists()


@pytest.mark.parametrize(
    "ident",
    ["../x", "../x.t", "db/../x.t", "a/b.c", "db.a/b", "db.t\x00", "d\nb.t", "db.t\x1b[2J", "db.\x7ft", " db.t",
     "db..t", "..", "db.t$snapshots", "db.a.b"],
)
@pytest.mark.parametrize("command", ["create", "inspect", "alter"])
def test_bad_identifiers(runner: CliRunner, warehouse: str, ident: str, command: str) -> None:
    args = {"create": ["create", ident, "--schema", SCHEMA],
            "inspect": ["inspect", "snapshots", ident],
            "alter": ["alter", ident, "--set", "a=1"]}[command]
    before = tree(Path(warehouse))
    result = invoke(runner, *args, "-w", warehouse)
    assert result.exit_code == INVALID, (ident, result.output)
    line = one_error_line(result)
    assert "\x1b" not in line and "\x00" not in line
    assert tree(Path(warehouse)) == before
    assert not (Path(warehouse).parent / "x").exists()


def test_bad_file_reference_for_schema(runner: CliRunner, warehouse: str, tmp_path: Path) -> None:
    missing = tmp_path / "nope.json"
    result = invoke(runner, "create", "db.t", "--schema", f"@{missing}", "-w", warehouse)
    assert result.exit_code == NOT_FOUND, result.output
    assert str(missing) in one_error_line(result)
    broken = tmp_path / "broken.json"
    broken.write_text('{"fields": [{"name": "a", "type": "INT"}')
    result = invoke(runner, "create", "db.t", "--schema", f"@{broken}", "-w", warehouse)
    assert result.exit_code == INVALID, result.output
    assert str(broken) in one_error_line(result)
    assert tree(Path(warehouse)) == {}
