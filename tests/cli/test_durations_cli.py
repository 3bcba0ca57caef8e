"""Durations and times on the command line: a unit-less number is refused (exit 4, nothing
changed, the units named), every ``--older-than`` takes the same forms, every duration/time
option's help states the grammar, and table option values keep Java's bare-millis meaning."""

from __future__ import annotations

import datetime
import json
import time
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.utils.durations import DURATION_GRAMMAR, TIME_GRAMMAR, UNITS
from tests.cli.test_branch_cli import fails, ok, tree


@pytest.fixture
def table(runner: CliRunner, warehouse: str, tmp_path: Path) -> tuple[list[str], Path]:
    """db.t partitioned by dt: an old partition and today's, three snapshots, tag t1."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.t", "--schema", "id INT, dt STRING", "--partition-by", "dt", *w)
    today = datetime.date.today().isoformat()
    for i, rows in enumerate(("1,2020-01-01\n", f"2,{today}\n", f"3,{today}\n")):
        f = tmp_path / f"in{i}.csv"
        f.write_text("id,dt\n" + rows)
        ok(runner, "write", "db.t", str(f), "--no-expire", *w)
    ok(runner, "tag", "create", "db.t", "t1", "--snapshot", "1", *w)
    time.sleep(0.05)  # every unit-less value below (read as milliseconds) would now reach them all
    return w, Path(warehouse) / "db.db" / "t"


@pytest.mark.parametrize("args", [
    ("expire-partitions", "db.t", "--expiration-time", "30"),
    ("tag", "create", "db.t", "t2", "--time-retained", "30"),
    ("expire", "db.t", "--older-than", "30", "--retain-min", "1"),
    ("tag", "expire", "db.t", "--older-than", "30"),
    ("remove-orphan-files", "db.t", "--older-than", "30", "--force"),
])
def test_unit_less_values_are_refused(runner: CliRunner, table: tuple[list[str], Path], args: tuple[str, ...]) -> None:
    w, root = table
    before = tree(root)
    err = fails(runner, 4, *args, *w)
    assert UNITS in err, err
    assert tree(root) == before


ACCEPTED = ["2h", "90 min", "1.5h", "2 HOURS", "PT2H", "P1D", "1w",
            "2024-05-01", "2024-05-01T12:00:00", "2024-05-01 12:00:00", "2024-05-01T12:00:00+02:00",
            "2024-05-01T10:00:00Z"]
REFUSED = ["30", "1714521600000", "2 m", "-2h", "0.5 ms", "2999-01-01T00:00:00", "1969-01-01T00:00:00Z",
           "yesterday", "1h30m"]
OLDER_THAN = [
    ("expire", "db.t", "--dry-run"),
    ("tag", "expire", "db.t", "--dry-run"),
    ("remove-orphan-files", "db.t", "--dry-run"),
]


def test_every_older_than_takes_the_same_forms(runner: CliRunner, table: tuple[list[str], Path]) -> None:
    w, root = table
    before = tree(root)
    for value in ACCEPTED:
        for cmd in OLDER_THAN:
            ok(runner, *cmd, "--older-than", value, *w)
    for value in REFUSED:
        errors = {fails(runner, 4, *cmd, "--older-than", value, *w).strip() for cmd in OLDER_THAN}
        assert len(errors) == 1, errors  # one grammar, one message
    assert tree(root) == before


def test_accepted_durations(runner: CliRunner, table: tuple[list[str], Path]) -> None:
    w, root = table
    ok(runner, "tag", "create", "db.t", "t2", "--time-retained", "PT36H", *w)
    ok(runner, "tag", "create", "db.t", "t3", "--time-retained", "1.5 d", *w)
    rows = {x["tag_name"]: x["time_retained"] for x in
            json.loads(ok(runner, "tag", "list", "db.t", "-o", "json", *w).stdout)}
    assert rows == {"t1": None, "t2": "PT36H", "t3": "PT36H"}
    dry = json.loads(ok(runner, "expire-partitions", "db.t", "--expiration-time", "P30D", "--dry-run",
                        "-o", "json", *w).stdout)
    assert [x["partition"] for x in dry] == ["dt=2020-01-01"]
    assert "positive" in fails(runner, 4, "expire-partitions", "db.t", "--expiration-time", "0 s", *w)


DURATION_OPTIONS = [("expire-partitions", "--expiration-time"), ("tag", "--time-retained")]
TIME_OPTIONS = [("expire", "--older-than"), ("tag", "--older-than"), ("remove-orphan-files", "--older-than")]


def test_help_states_the_grammar() -> None:
    group = typer.main.get_command(app)
    for (name, flag), grammar in [*((o, DURATION_GRAMMAR) for o in DURATION_OPTIONS),
                                  *((o, TIME_GRAMMAR) for o in TIME_OPTIONS)]:
        param = next(p for p in group.commands[name].params if flag in p.opts)  # type: ignore[attr-defined]
        assert grammar in param.help and DURATION_GRAMMAR in param.help, (name, flag, param.help)
        assert param.metavar == ("DURATION" if grammar is DURATION_GRAMMAR else "DURATION|ISO")


def test_table_option_bare_numbers_keep_java_meaning(runner: CliRunner, warehouse: str, tmp_path: Path) -> None:
    """Java's TimeUtils reads a unit-less table option value as milliseconds; so do we."""
    w = ["-w", warehouse]
    ok(runner, "create", "db.j", "--schema", "id INT", "--option", "tag.default-time-retained=60000",
       "--option", "snapshot.time-retained=1", "--option", "snapshot.num-retained.min=1", *w)
    for i in range(3):
        f = tmp_path / f"j{i}.csv"
        f.write_text(f"id\n{i}\n")
        ok(runner, "write", "db.j", str(f), "--no-expire", *w)
    ok(runner, "tag", "create", "db.j", "t", *w)
    rows = json.loads(ok(runner, "tag", "list", "db.j", "-o", "json", *w).stdout)
    assert rows[0]["time_retained"] == "PT1M"
    time.sleep(0.01)
    out = json.loads(ok(runner, "expire", "db.j", "-o", "json", *w).stdout)  # 1 ms retained: all but the latest
    assert out[0]["expired"] == 2
