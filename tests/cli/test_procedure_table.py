"""README's "Java procedures" table covers every procedure of Java Paimon's Flink and Spark
procedure lists, with no blank cell, and names only commands, actions and options that exist."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import typer

from paimon_cli.app import app

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The procedure lists of the upstream documentation (paimon-docs/docs/docs/{flink,spark}/
# procedures.md, in their order). Kept here so the test needs nothing outside the clone;
# where those docs are at hand (PAIMON_DOCS_DIR, or the workplace's reference copy), the
# test also checks these lists are still theirs.
FLINK_PROCEDURES = (
    "compact", "materialize_deletion_vectors", "compact_database", "compact_chain_table",
    "create_tag", "create_tag_from_timestamp", "create_tag_from_watermark", "delete_tag",
    "replace_tag", "expire_tags", "trigger_tag_automatic_creation", "merge_into",
    "data_evolution_merge_into", "remove_orphan_files", "remove_unexisting_files",
    "remove_unexisting_manifests", "reset_consumer", "clear_consumers", "rollback_to",
    "rollback_to_as_latest", "rollback_to_timestamp", "rollback_to_watermark", "purge_files",
    "migrate_database", "migrate_table", "expire_snapshots", "expire_changelogs",
    "expire_partitions", "repair", "repair_earliest_snapshot", "rewrite_file_index",
    "reassign_row_id", "create_branch", "delete_branch", "rename_branch", "fast_forward",
    "merge_branch", "compact_manifest", "rescale", "alter_view_dialect", "create_function",
    "alter_function", "drop_function", "create_global_index", "drop_global_index",
    "full_text_search", "vector_search", "alter_column_default_value", "clone", "copy_files",
    "drop_partition", "mark_partition_done", "query_service", "rename_tag",
)
SPARK_PROCEDURES = (
    "compact", "materialize_deletion_vectors", "compact_database", "compact_chain_table",
    "expire_snapshots", "expire_partitions", "create_tag", "create_tag_from_timestamp",
    "rename_tag", "replace_tag", "delete_tag", "expire_tags", "trigger_tag_automatic_creation",
    "rollback", "rollback_to_timestamp", "rollback_to_watermark", "purge_files",
    "migrate_database", "migrate_table", "remove_orphan_files", "remove_unexisting_files",
    "repair", "repair_earliest_snapshot", "create_branch", "delete_branch", "rename_branch",
    "fast_forward", "merge_branch", "reset_consumer", "clear_consumers", "mark_partition_done",
    "compact_manifest", "alter_view_dialect", "create_function", "alter_function",
    "drop_function", "rewrite_file_index", "create_global_index", "drop_global_index",
    "reassign_row_id", "copy", "rescale",
)
DOCS = Path(os.environ.get("PAIMON_DOCS_DIR", str(ROOT.parent / "shared/reference/paimon-docs/docs/docs")))
ENGINES = {"Flink": FLINK_PROCEDURES, "Spark": SPARK_PROCEDURES}
CLICK_GROUP: Any = typer.main.get_command(app)
NOT_A_COMMAND = ("not applicable", "not supported yet")


def docs_procedures(engine: str) -> list[str] | None:
    """The procedure names of ``<engine>/procedures.md`` (the first cell of each table row), or
    None when the upstream docs are not at hand."""
    path = DOCS / engine.lower() / "procedures.md"
    if not path.is_file():
        return None
    text = path.read_text(encoding="utf-8")
    body = text[text.index("<tbody"):]
    rows = re.findall(r"<tr>(.*?)</tr>", body, re.S)
    names = [m.group(1) for m in (re.match(r"\s*<td>\s*([a-z0-9_]+)\s*</td>", r) for r in rows) if m]
    assert len(names) == len(rows), "a procedure row whose first cell is not a plain name"
    return names


def test_procedure_lists_are_the_upstream_docs() -> None:
    """Checked where the docs are at hand (a developer's workplace); CI clones hold the lists."""
    for engine, names in ENGINES.items():
        found = docs_procedures(engine)
        assert found is None or tuple(found) == names, engine


def readme_table() -> dict[str, list[str]]:
    """procedure -> [listed by, command, notes] of the README's table."""
    section = README.split("\n## Java procedures\n", 1)
    assert len(section) == 2, "README lacks a '## Java procedures' section"
    body = section[1].split("\n## ", 1)[0]
    rows: dict[str, list[str]] = {}
    for line in body.splitlines():
        if not line.startswith("| `"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        assert len(cells) == 4, line
        name = cells[0].strip("`")
        assert name not in rows, f"{name} listed twice"
        rows[name] = cells[1:]
    return rows


def test_every_upstream_procedure_has_a_row_with_its_engines() -> None:
    table = readme_table()
    listed: dict[str, list[str]] = {}
    for engine, names in ENGINES.items():
        for name in names:
            listed.setdefault(name, []).append(engine)
    assert len(listed) > 50
    assert sorted(table) == sorted(listed)
    for name, engines in listed.items():
        assert table[name][0] == ", ".join(engines), name


def test_no_blank_cell() -> None:
    for name, (engines, command, notes) in readme_table().items():
        assert engines and command and notes, name
        assert command in NOT_A_COMMAND or command.startswith("`paimon-cli "), (name, command)


def _options(cmd: Any) -> set[str]:
    return {o for p in cmd.params for o in getattr(p, "opts", []) if o.startswith("--")}


def _actions(cmd: Any) -> set[str] | None:
    """The values of a command's ACTION argument (tag, branch, consumer), else None."""
    for p in cmd.params:
        if p.name == "action" and p.param_type_name == "argument":
            return {a.strip() for a in (p.help or "").split("|")}
    return None


def test_every_named_command_action_and_option_exists() -> None:
    checked = 0
    for name, (_, command, notes) in readme_table().items():
        if command in NOT_A_COMMAND:
            continue
        words = command.strip("`").split()
        assert words[0] == "paimon-cli"
        cmd = CLICK_GROUP.commands.get(words[1])
        assert cmd is not None, f"{name}: no command {words[1]!r}"
        actions = _actions(cmd)
        if actions is not None:
            assert words[2] in actions, f"{name}: {words[1]} has no action {words[2]!r}"
        options = _options(cmd)
        named = [w for w in words if w.startswith("--")]
        named += re.findall(r"`(--[a-z][a-z0-9-]*)`", notes)
        for opt in named:
            assert opt in options, f"{name}: {words[1]} has no option {opt}"
        checked += 1
    assert checked > 30
