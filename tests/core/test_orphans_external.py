"""remove-orphan-files and ``data-file.external-paths``: a root another table uses is never cleaned.

Java and pypaimon put external data files at ``<root>/<partition>/bucket-N/<file>`` with no
table directory, so a root shared by two tables holds both tables' live files. These tests
plant stand-ins for another table's files (our writer does not write external files; the
pypaimon interop test writes real ones) and check the rule of core/operation/external_roots.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.errors import NotYetSupported, UnsafeRefused
from paimon_cli.core.operation.external_roots import location_key, overlaps
from paimon_cli.core.operation.orphans import plan_remove_orphans, remove_orphans
from paimon_cli.core.schema.schema_change import SetOption
from tests.core.test_orphans_support import age_all, file_bytes, make_table, plant, read_rows, reload, write_rows

ORPHAN = "data-0a0a0a0a-1111-2222-3333-444444444444-0.parquet"
FOREIGN = "data-0b0b0b0b-1111-2222-3333-444444444444-0.parquet"  # "another table's live file"
EXT_OPT = "data-file.external-paths"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, Any]:
    """Table db.a (root <tmp>/ext/a, two commits) and db.b (root <tmp>/ext/b); all two days old."""
    wh, ext = tmp_path / "wh", tmp_path / "ext"
    a = make_table(wh, "a", **{EXT_OPT: f"file://{ext}/a"})
    b = make_table(wh, "b", pk=False, **{EXT_OPT: f"{ext}/b"})
    write_rows(a, [(1, "a", "x"), (2, "b", "y")], tmp_path)
    write_rows(a, [(3, "a", "z")], tmp_path)
    write_rows(b, [(7, "a", "q")], tmp_path)
    orphan = Path(plant(ext / "a" / "dt=a" / "bucket-0" / ORPHAN))
    foreign = Path(plant(ext / "b" / "dt=a" / "bucket-0" / FOREIGN))
    age_all(wh)
    age_all(ext)
    return {"wh": wh, "ext": ext, "a": a, "b": b, "orphan": orphan, "foreign": foreign, "tmp": tmp_path}


def alter(table: Any, key: str, value: str) -> Any:
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog

    FileSystemCatalog(str(Path(table.path).parent.parent)).alter_table(
        table.identifier.full_name, [SetOption(key, value)])
    return reload(table)


def test_default_run_leaves_external_roots_alone(env: dict[str, Any]) -> None:
    a = env["a"]
    plan = plan_remove_orphans(a)
    assert plan.files == [] and plan.dirs == []
    assert plan.unscanned_external_roots == [f"file://{env['ext']}/a"] and plan.external_roots == []
    remove_orphans(a, plan)
    assert env["orphan"].exists()


def test_unique_root_deletes_only_paimon_files_in_the_table_layout(env: dict[str, Any]) -> None:
    a, ext = env["a"], env["ext"]
    bucket = ext / "a" / "dt=a" / "bucket-0"
    kept = [
        plant(bucket / "notes.txt"),                                        # not a Paimon file name
        plant(ext / "a" / "other=1" / "bucket-0" / ORPHAN.replace("0a", "0c")),  # not a's partition key
        plant(ext / "a" / "dt=a" / "bucket-x" / ORPHAN.replace("0a", "0d")),     # not a bucket directory
        plant(bucket / "e1" / "e2" / ORPHAN.replace("0a", "0e")),           # entropy-inject depth: never listed
    ]
    index = plant(bucket / (ORPHAN + ".index"))                             # a lost file index: an orphan too
    age_all(ext)
    young = plant(bucket / ORPHAN.replace("0a", "0f"))
    before_rows = read_rows(a)
    plan = plan_remove_orphans(a, external_paths=True)
    assert plan.external_roots == [f"{ext}/a"] and plan.tables_checked == 1
    assert sorted(f.path for f in plan.files) == sorted([str(env["orphan"]), index])
    result = remove_orphans(a, plan)
    assert sorted(f.path for f in result.deleted) == sorted([str(env["orphan"]), index])
    assert all(Path(p).exists() for p in [*kept, young]) and env["foreign"].exists()
    assert read_rows(reload(a)) == before_rows
    assert read_rows(reload(env["b"])) == [{"id": 7, "dt": "a", "v": "q"}]


def test_root_that_is_the_table_directory_is_walked_once(env: dict[str, Any]) -> None:
    a = alter(env["a"], EXT_OPT, f"file://{env['a'].path}/")
    orphan = plant(Path(a.path) / "dt=a" / "bucket-0" / ORPHAN)
    age_all(a.path)
    plan = plan_remove_orphans(a, external_paths=True)
    assert [f.path for f in plan.files] == [orphan]


def _share_current(env: dict[str, Any]) -> None:
    alter(env["b"], EXT_OPT, f"{env['ext']}/a/")  # same root, other spelling


def _share_parent(env: dict[str, Any]) -> None:
    alter(env["b"], EXT_OPT, f"{env['ext']}/b,file:{env['ext']}")  # Java's file:/ form, a parent of a's root


def _share_child(env: dict[str, Any]) -> None:
    alter(env["b"], EXT_OPT, f"file://{env['ext']}/a/dt=a")


def _share_old_schema(env: dict[str, Any]) -> None:
    b = alter(env["b"], EXT_OPT, f"{env['ext']}/a")
    alter(b, EXT_OPT, f"{env['ext']}/b2")  # b's older data files still live under ext/a


def _share_branch(env: dict[str, Any]) -> None:
    b = Path(env["b"].path)
    schema = json.loads((b / "schema" / "schema-0").read_text())
    schema["options"][EXT_OPT] = f"{env['ext']}/a"
    plant(b / "branch" / "branch-dev" / "schema" / "schema-0", json.dumps(schema).encode())


def _share_other_database(env: dict[str, Any]) -> None:
    make_table(env["wh"], "c", **{"global-index.external-path": f"{env['ext']}/a/idx"})
    (env["wh"] / "other.db").mkdir()
    (env["wh"] / "db.db" / "c").rename(env["wh"] / "other.db" / "c")


def _root_in_other_table(env: dict[str, Any]) -> None:
    alter(env["a"], EXT_OPT, env["b"].path)


def _root_is_warehouse(env: dict[str, Any]) -> None:
    alter(env["a"], EXT_OPT, str(env["wh"]))


def _table_without_schema(env: dict[str, Any]) -> None:
    (env["wh"] / "db.db" / "half").mkdir()
    alter(env["a"], EXT_OPT, str(env["wh"] / "db.db" / "half" / "ext"))


@pytest.mark.parametrize("share, who", [
    (_share_current, "db.b: data-file.external-paths in schema-1"),
    (_share_parent, "db.b: data-file.external-paths in schema-1"),
    (_share_child, "db.b: data-file.external-paths in schema-1"),
    (_share_old_schema, "db.b: data-file.external-paths in schema-1"),
    (_share_branch, "db.b: data-file.external-paths in schema-0 of branch dev"),
    (_share_other_database, "other.c: global-index.external-path in schema-0"),
    (_root_in_other_table, "db.b: its table directory"),
    (_root_is_warehouse, "db.b: its table directory"),
    (_table_without_schema, "db.half: its table directory"),
])
def test_overlapping_location_of_another_table_refuses(env: dict[str, Any], share: Any, who: str) -> None:
    share(env)
    a = reload(env["a"])
    before = file_bytes(env["wh"], env["ext"])
    with pytest.raises(UnsafeRefused, match="refusing") as e:
        plan_remove_orphans(a, external_paths=True)
    assert who in str(e.value)
    assert file_bytes(env["wh"], env["ext"]) == before
    # the default run still works and stays inside the table directory
    assert plan_remove_orphans(a).files == []


@pytest.mark.parametrize("damage", ["unparsable", "relative-root"])
def test_unreadable_or_unplaceable_warehouse_refuses(env: dict[str, Any], damage: str) -> None:
    schema = Path(env["b"].path) / "schema" / "schema-0"
    if damage == "unparsable":
        schema.write_text("{ not json")
        match = "schema-0: invalid JSON"
    else:
        obj = json.loads(schema.read_text())
        obj["options"][EXT_OPT] = "relative/ext"
        schema.write_text(json.dumps(obj))
        match = "'relative/ext', which is not an absolute location"
    with pytest.raises(UnsafeRefused, match=match):
        plan_remove_orphans(env["a"], external_paths=True)
    assert env["orphan"].exists()


def test_own_root_that_cannot_be_placed_or_reached_refuses(env: dict[str, Any]) -> None:
    a = alter(env["a"], EXT_OPT, "relative/ext")
    with pytest.raises(UnsafeRefused, match="not an absolute location"):
        plan_remove_orphans(a, external_paths=True)
    a = alter(a, EXT_OPT, "s3://bucket/ext")
    with pytest.raises(NotYetSupported, match="another filesystem"):
        plan_remove_orphans(a, external_paths=True)


def test_location_keys() -> None:
    assert location_key("/x/y/") == location_key("file:/x/y") == location_key("file:///x//y") == ("file", "/x/y")
    assert location_key("file://localhost/x/y") == ("file", "/x/y")
    assert location_key("s3a://b/k/") == location_key("s3://b/k") == ("s3", "/b/k")
    assert location_key("x/y") is None and location_key("file:x") is None and location_key("file://host/x") is None
    assert overlaps(("file", "/x"), ("file", "/x/y")) and overlaps(("file", "/x/y"), ("file", "/x"))
    assert not overlaps(("file", "/x/a"), ("file", "/x/ab")) and not overlaps(("s3", "/x"), ("file", "/x"))


def _cli(*args: str) -> Any:
    return CliRunner().invoke(app, list(args))


def test_cli_external_paths(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        monkeypatch.delenv(var, raising=False)
    wh = str(env["wh"])
    res = _cli("remove-orphan-files", "db.a", "-w", wh, "-o", "json")
    assert res.exit_code == 0 and json.loads(res.stdout) == []
    assert f"not scanned: data-file.external-paths file://{env['ext']}/a" in res.stderr

    dry = _cli("remove-orphan-files", "db.a", "-w", wh, "--external-paths", "--dry-run", "-o", "json")
    assert dry.exit_code == 0, dry.output
    bucket = env["orphan"].parent
    assert json.loads(dry.stdout) == [  # the emptied bucket and partition directories go too
        {"path": str(env["orphan"]), "kind": "data", "bytes": 6},
        {"path": str(bucket), "kind": "directory", "bytes": 0},
        {"path": str(bucket.parent), "kind": "directory", "bytes": 0},
    ]
    assert "no location of the 1 other tables of the warehouse overlaps them" in dry.stderr

    _share_current(env)
    before = file_bytes(env["wh"], env["ext"])
    res = _cli("remove-orphan-files", "db.a", "-w", wh, "--external-paths")
    assert res.exit_code == 6 and "overlaps" in res.stderr and "db.b" in res.stderr
    assert file_bytes(env["wh"], env["ext"]) == before
