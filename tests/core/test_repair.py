"""core/operation/repair.py: EARLIEST / LATEST hints, and Java's repair_earliest_snapshot rules."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from paimon_cli.core.errors import CommitConflict, CorruptMetadata, InvalidInput, NotFound, UnsafeRefused
from paimon_cli.core.operation.repair import apply_repair, plan_repair
from tests.core.test_orphans_support import files_under, make_table, read_rows, reload, write_rows


@pytest.fixture
def table(tmp_path: Path) -> Any:
    t = make_table(tmp_path / "wh", pk=False)
    for i in range(1, 7):
        write_rows(t, [(i, "a", f"v{i}")], tmp_path)
    return reload(t)


def _dir(t: Any) -> Path:
    return Path(t.path) / "snapshot"


def _hints(t: Any) -> tuple[str | None, str | None]:
    d = _dir(t)
    return tuple((d / n).read_text() if (d / n).exists() else None for n in ("EARLIEST", "LATEST"))  # type: ignore[return-value]


def _repair(t: Any, earliest: int | None = None) -> list[tuple[str, str]]:
    plan = plan_repair(t, earliest)
    return [(f.hint, f.action) for f in apply_repair(t, plan)]


def test_right_hints_are_kept(table: Any) -> None:
    (_dir(table) / "EARLIEST").write_text("1")
    plan = plan_repair(table)
    assert [(r["hint"], r["action"]) for r in plan.rows().rows] == [("EARLIEST", "keep"), ("LATEST", "keep")]
    assert apply_repair(table, plan) == []


@pytest.mark.parametrize(("earliest", "latest"), [
    (None, None),        # both absent: readers list the directory, repair writes them
    ("abc", "99"),       # unreadable, and past the last snapshot (Java would read snapshot 99)
    ("1\n", "6\n"),      # Java's Long.parseLong refuses the newline
    ("0", "3"),          # a snapshot that never existed; a stale latest
])
def test_wrong_hints_are_rewritten(table: Any, earliest: str | None, latest: str | None) -> None:
    rows = read_rows(table)
    for name, text in (("EARLIEST", earliest), ("LATEST", latest)):
        p = _dir(table) / name
        if text is None:
            p.unlink(missing_ok=True)
        else:
            p.write_text(text)
    if latest == "99":  # names a snapshot that is gone: readers say so (issue 27) until repaired
        with pytest.raises(CorruptMetadata, match="the LATEST hint names snapshot 99 but its file is missing"):
            read_rows(reload(table))
    else:
        assert read_rows(reload(table)) == rows
    dry = plan_repair(table)
    assert _hints(table) == (earliest, latest)  # planning writes nothing
    assert {r["hint"]: r["repaired"] for r in dry.rows().rows} == {"EARLIEST": 1, "LATEST": 6}
    apply_repair(table, dry)
    assert _hints(table) == ("1", "6")
    assert read_rows(reload(table)) == rows


def test_earliest_hint_on_an_existing_snapshot_is_trusted(table: Any) -> None:
    """As Java's readers: expiration may have left snapshots below EARLIEST whose files are gone."""
    (_dir(table) / "EARLIEST").write_text("4")
    (_dir(table) / "LATEST").write_text("6")
    assert _repair(table) == []


def test_gap_is_refused_without_earliest(table: Any) -> None:
    (_dir(table) / "snapshot-3").unlink()
    (_dir(table) / "EARLIEST").write_text("1")
    (_dir(table) / "LATEST").write_text("2")  # stale below the gap: readers see snapshot 2
    files = files_under(table.path)
    with pytest.raises(UnsafeRefused, match=r"snapshot 3 between the earliest snapshot 1 and the latest 6 is "
                                            r"missing; `repair --earliest 4`"):
        plan_repair(table)
    assert files_under(table.path) == files
    assert _repair(table, 4) == [("EARLIEST", "write"), ("LATEST", "write")]
    assert _hints(table) == ("4", "6")
    assert [r["id"] for r in read_rows(reload(table))] == [1, 2, 3, 4, 5, 6]
    assert _repair(table) == []  # a gap below EARLIEST is what the user chose


@pytest.mark.parametrize(("ids", "hint", "target", "error"), [
    # Java's SnapshotManagerTest cases
    ([1, 5], 5, 1, "must not be earlier than the current earliest snapshot 5"),
    ([1, 5], 1, 4, "snapshot 4 does not exist"),
    ([1, 3, 5, 6], 1, 3, "snapshot 4 does not exist"),
    ([1, 5, 10], 1, 11, "must not be later than the latest snapshot 10"),
    ([1, 4, 5], 1, 5, "does not immediately follow a snapshot gap"),
])
def test_earliest_preconditions(table: Any, ids: list[int], hint: int, target: int, error: str) -> None:
    d = _dir(table)
    content = (d / "snapshot-6").read_text()
    for p in d.glob("snapshot-*"):
        p.unlink()
    for i in ids:
        (d / f"snapshot-{i}").write_text(content.replace('"id" : 6', f'"id" : {i}'))
    (d / "EARLIEST").write_text(str(hint))
    with pytest.raises(InvalidInput, match=error):
        plan_repair(table, target)


def test_earliest_as_java_accepts(table: Any) -> None:
    d = _dir(table)
    for i in (2, 3, 4):
        (d / f"snapshot-{i}").unlink()
    assert _repair(table, 5) == [("EARLIEST", "write")]
    assert _hints(table)[0] == "5"
    assert _repair(table, 5) == []  # the current earliest is accepted again (no-op)


def test_no_snapshot_deletes_the_hints(tmp_path: Path) -> None:
    t = make_table(tmp_path / "wh")
    d = _dir(t)
    d.mkdir(parents=True, exist_ok=True)
    (d / "LATEST").write_text("3")
    with pytest.raises(NotFound):
        plan_repair(t, 1)
    assert _repair(t) == [("LATEST", "delete")]
    assert _hints(t) == (None, None)


def test_corrupt_latest_snapshot_is_not_hinted(table: Any) -> None:
    (_dir(table) / "snapshot-6").write_text("{not json")
    with pytest.raises(CorruptMetadata):
        plan_repair(table)


def test_snapshots_changing_after_planning_abort(table: Any, tmp_path: Path) -> None:
    (_dir(table) / "LATEST").unlink()
    plan = plan_repair(table)
    write_rows(reload(table), [(7, "a", "late")], tmp_path)
    with pytest.raises(CommitConflict):
        apply_repair(table, plan)
    assert _hints(table)[1] == "7"
