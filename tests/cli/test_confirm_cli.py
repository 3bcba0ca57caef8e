"""Destructive commands ask on a terminal (pseudo-terminal), never without one, never with --yes;
`n` changes no byte; dry-run listings share one path form; `alter --dry-run`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paimon_cli.confirm import Declined
from tests.cli.pty_session import ANSI, PROMPT, ctrl_c_at_prompt, run_on_tty, run_piped, tree_bytes

EXPIRE = ["expire", "demo.orders", "--older-than", "0s", "--retain-min", "1"]
DESTRUCTIVE = {
    "expire": EXPIRE,
    "rollback": ["rollback", "demo.orders", "--snapshot", "1"],
    "tag delete": ["tag", "delete", "demo.orders", "t1"],
    "branch delete": ["branch", "delete", "demo.orders", "b1"],
    "alter --drop-column": ["alter", "demo.orders", "--drop-column", "customer"],
    "expire-partitions": ["expire-partitions", "demo.orders", "--expiration-time", "1d"],
    "branch fast-forward": ["branch", "fast-forward", "demo.orders", "b1"],
    "purge-files": ["purge-files", "demo.orders"],
}


@pytest.mark.parametrize("name", sorted(DESTRUCTIVE))
def test_no_on_a_terminal_changes_no_byte(demo_wh: str, name: str) -> None:
    before = tree_bytes(demo_wh)
    run = run_on_tty([*DESTRUCTIVE[name], "-w", demo_wh], answer="n")
    assert run.prompted, run.output
    assert run.rc == Declined.exit_code == 7, run.output
    assert "declined at the prompt; nothing was changed" in run.output
    assert tree_bytes(demo_wh) == before


def test_orphan_removal_asks_too(demo_wh: str) -> None:
    (Path(demo_wh) / "demo.db/orders/dt=2024-05-01/bucket-0/data-orphan-0.parquet").write_bytes(b"x")
    args = ["remove-orphan-files", "demo.orders", "--older-than", "0s", "--force", "-w", demo_wh]
    before = tree_bytes(demo_wh)
    run = run_on_tty(args, answer="n")
    assert run.prompted and "dt=2024-05-01/bucket-0/data-orphan-0.parquet" in run.output, run.output
    assert run.rc == 7 and tree_bytes(demo_wh) == before
    run = run_on_tty(args, answer="yes")
    assert run.rc == 0 and not (Path(demo_wh) / "demo.db/orders/dt=2024-05-01/bucket-0/data-orphan-0.parquet").exists()


def test_yes_on_a_terminal_proceeds_after_showing_the_files(demo_wh: str) -> None:
    dry = json.loads(run_piped([*EXPIRE, "--dry-run", "-o", "json", "-w", demo_wh]).stdout)
    run = run_on_tty([*EXPIRE, "-w", demo_wh], answer="y")
    assert run.prompted and run.rc == 0, run.output
    shown = run.output.split("? [y/N]")[0]
    assert all(f["path"] in shown for f in dry)  # the dry run's own listing, same paths
    assert not (Path(demo_wh) / "demo.db/orders/snapshot/snapshot-1").exists()


def test_end_of_input_declines(demo_wh: str) -> None:
    before = tree_bytes(demo_wh)
    run = run_on_tty([*EXPIRE, "-w", demo_wh], answer="\x04")  # Ctrl-D at the prompt
    assert run.rc == 7 and tree_bytes(demo_wh) == before


def test_no_terminal_never_asks(demo_wh: str) -> None:
    res = run_piped([*EXPIRE, "-w", demo_wh], stdin="n\n")  # cron: stdin is not a terminal
    assert res.returncode == 0, res.stderr
    assert "[y/N]" not in res.stderr + res.stdout
    assert not (Path(demo_wh) / "demo.db/orders/snapshot/snapshot-1").exists()


@pytest.mark.parametrize("flag", ["--yes", "-y"])
def test_yes_flag_never_asks(demo_wh: str, flag: str) -> None:
    run = run_on_tty([*DESTRUCTIVE["tag delete"], flag, "-w", demo_wh])
    assert not run.prompted and run.rc == 0, run.output
    assert not (Path(demo_wh) / "demo.db/orders/tag/tag-t1").exists()


def test_dry_run_never_asks(demo_wh: str) -> None:
    before = tree_bytes(demo_wh)
    run = run_on_tty([*DESTRUCTIVE["rollback"], "--dry-run", "-w", demo_wh])
    assert not run.prompted and run.rc == 0, run.output
    assert tree_bytes(demo_wh) == before


def test_nothing_to_do_asks_nothing(demo_wh: str) -> None:
    run = run_on_tty(["expire", "demo.events", "-w", demo_wh])  # default retention keeps every snapshot
    assert not run.prompted and run.rc == 0, run.output


def test_long_plan_is_summarised(demo_wh: str) -> None:
    run = run_on_tty([*DESTRUCTIVE["rollback"], "-w", demo_wh], answer="n")
    assert run.prompted and run.rc == 7
    assert "row(s)" in run.output and "bytes" in run.output


def test_write_overwrite_asks_with_the_partitions(demo_wh: str, tmp_path: Path) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"order_id": 9, "customer": "z", "amount": "1.00", "dt": "2024-05-01"}) + "\n")
    before = tree_bytes(demo_wh)
    run = run_on_tty(["write", "demo.orders", str(src), "--overwrite", "-w", demo_wh], answer="n")
    assert run.prompted and run.rc == 7, run.output
    assert "dt=2024-05-01/bucket-0/data-" in run.output and "write" in run.output  # the dry run is shown
    assert tree_bytes(demo_wh) == before
    assert run_on_tty(["write", "demo.orders", str(src), "--overwrite", "-y", "-w", demo_wh]).rc == 0


def test_alter_dry_run_lists_changes_and_writes_nothing(demo_wh: str) -> None:
    before = tree_bytes(demo_wh)
    res = run_piped(["alter", "demo.orders", "--drop-column", "customer", "--set", "snapshot.num-retained.max=5",
                     "--rename-column", "amount:amt", "--add-column", "note STRING", "--comment", "c",
                     "--dry-run", "-o", "json", "-w", demo_wh])
    assert res.returncode == 0, res.stderr
    changes = [(r["change"], r["name"], r["after"]) for r in json.loads(res.stdout)]
    assert changes == [("drop column", "customer", None), ("rename column", "amount", "amt"),
                       ("add column", "note", "`note` STRING"), ("set option", "snapshot.num-retained.max", "5"),
                       ("comment", None, "c")]
    assert "would commit schema 1" in res.stderr
    assert tree_bytes(demo_wh) == before
    bad = run_piped(["alter", "demo.orders", "--drop-column", "nope", "--dry-run", "-w", demo_wh])
    assert bad.returncode == 3 and tree_bytes(demo_wh) == before  # the same checks as a real run (column not found)


def test_dry_run_paths_are_table_relative_everywhere(demo_wh: str) -> None:
    root = str(Path(demo_wh) / "demo.db" / "orders")
    listings = {
        "expire": [*EXPIRE, "--dry-run"],
        "tag delete": [*DESTRUCTIVE["tag delete"], "--dry-run"],
        "branch delete": [*DESTRUCTIVE["branch delete"], "--dry-run"],
        "rollback": [*DESTRUCTIVE["rollback"], "--dry-run"],
        "compact-manifest": ["compact-manifest", "demo.orders", "--dry-run"],
    }
    for name, args in listings.items():
        res = run_piped([*args, "-o", "json", "-w", demo_wh])
        rows = json.loads(res.stdout)
        assert rows, name
        paths = [r.get("path") or r.get("manifest") for r in rows]
        assert all(not p.startswith("/") and root not in p for p in paths), (name, paths)
        assert all((Path(root) / p).is_file() for p in paths), (name, paths)


def test_expire_verbose_lists_what_it_deleted(demo_wh: str) -> None:
    dry = json.loads(run_piped([*EXPIRE, "--dry-run", "-o", "json", "-w", demo_wh]).stdout)
    real = run_piped([*EXPIRE, "--verbose", "-o", "json", "-w", demo_wh])
    assert real.returncode == 0, real.stderr
    assert json.loads(real.stdout) == dry
    assert "expired 2" in real.stderr


@pytest.mark.parametrize("extra", [[], ["--partition", "dt=2024-05-01"],
                                   ["--option", "dynamic-partition-overwrite=false"]])
def test_write_overwrite_dry_run_lists_what_the_real_run_replaces(demo_wh: str, tmp_path: Path,
                                                                   extra: list[str]) -> None:
    src = tmp_path / "in.jsonl"
    src.write_text("".join(json.dumps({"order_id": i, "customer": "z", "amount": "1.00", "dt": "2024-05-01"}) + "\n"
                           for i in (7, 8, 9)))
    args = ["write", "demo.orders", str(src), "--overwrite", *extra, "-w", demo_wh]
    before = tree_bytes(demo_wh)
    dry = run_piped([*args, "--dry-run", "-o", "json"])
    assert dry.returncode == 0, dry.stderr
    assert tree_bytes(demo_wh) == before  # nothing written
    planned = json.loads(dry.stdout)
    assert [(r["partition"], r["rows"]) for r in planned if r["action"] == "write"] == [("dt=2024-05-01", 3)]
    deleted = {r["path"] for r in planned if r["action"] == "delete"}
    live = "files", "demo.orders", "-o", "json", "-w", demo_wh
    live_before = {r["file_path"] for r in json.loads(run_piped(["inspect", *live]).stdout)}
    assert deleted and deleted <= {str(Path(p).relative_to(Path(demo_wh) / "demo.db/orders")) for p in live_before}
    assert run_piped([*args, "--write-only"]).returncode == 0
    live_after = {r["file_path"] for r in json.loads(run_piped(["inspect", *live]).stdout)}
    gone = {str(Path(p).relative_to(Path(demo_wh) / "demo.db/orders")) for p in live_before - live_after}
    assert gone == deleted


def test_write_dry_run_needs_overwrite(demo_wh: str) -> None:
    res = run_piped(["write", "demo.orders", "x.jsonl", "--dry-run", "-w", demo_wh])
    assert res.returncode == 2 and "--dry-run applies to --overwrite" in res.stderr


def test_purge_files_asks_on_a_terminal_and_needs_yes_without_one(demo_wh: str) -> None:
    """purge-files empties the table: a terminal gets the prompt; cron must say --yes."""
    before = tree_bytes(demo_wh)
    res = run_piped(["purge-files", "demo.orders", "-w", demo_wh], stdin="y\n")
    assert res.returncode == 2 and "--yes" in res.stderr and tree_bytes(demo_wh) == before
    run = run_on_tty(["purge-files", "demo.orders", "-w", demo_wh], answer="y")
    assert run.prompted and run.rc == 0, run.output
    assert json.loads(run_piped(["read", "demo.orders", "-o", "json", "-w", demo_wh]).stdout) == []


# what a prompt needs beyond the demo warehouse, run before it (each test has its own copy)
SETUP = {
    "tag replace": [["branch", "delete", "demo.orders", "b1", "--yes"],  # tag old and the branch hold snapshot 1
                    ["tag", "delete", "demo.orders", "old", "--yes"],
                    ["expire", "demo.orders", "--retain-max", "1", "--retain-min", "1", "--older-than", "0s",
                     "--yes"]],
    "tag trigger": [["alter", "demo.orders", "--set", "tag.automatic-creation=process-time", "--set",
                     "tag.creation-period=hourly"]],
    "consumer reset": [["consumer", "reset", "demo.orders", "c1", "--snapshot", "1", "--yes"]],
}
PROMPTING = sorted([*DESTRUCTIVE, "tag expire", "remove-orphan-files", "remove-orphan-files DB.*", "write --overwrite --partition", *SETUP,
                    "drop", "drop-partition"])


def _every_prompt(wh: str, tmp_path: Path, name: str) -> list[str]:
    """The arguments of command ``name`` of every command that asks (each call of
    ``paimon_cli.confirm.confirm``), made ready to prompt in ``wh``."""
    (Path(wh) / "demo.db/orders/dt=2024-05-01/bucket-0/data-orphan-0.parquet").write_bytes(b"x")
    assert run_piped(["tag", "create", "demo.orders", "old", "--snapshot", "1", "--time-retained", "1ms",
                      "-w", wh]).returncode == 0  # a tag past its retention: `tag expire` has work
    for args in SETUP.get(name, []):
        assert run_piped([*args, "-w", wh]).returncode == 0, args
    src = tmp_path / "in.jsonl"
    src.write_text(json.dumps({"order_id": 9, "customer": "z", "amount": "1.00", "dt": "2024-05-01"}) + "\n")
    return {**DESTRUCTIVE,
            "tag replace": ["tag", "replace", "demo.orders", "t1"],
            "tag trigger": ["tag", "trigger", "demo.orders"],
            "consumer reset": ["consumer", "reset", "demo.orders", "c1"],
            "drop": ["drop", "demo.events"],
            "drop-partition": ["drop-partition", "demo.orders", "--partition", "dt=2024-05-01"],
            "tag expire": ["tag", "expire", "demo.orders"],
            "remove-orphan-files": ["remove-orphan-files", "demo.orders", "--older-than", "0s", "--force"],
            "remove-orphan-files DB.*": ["remove-orphan-files", "demo.*", "--older-than", "0s", "--force"],
            "write --overwrite --partition": ["write", "demo.orders", str(src), "--overwrite", "--partition",
                                              "dt=2024-05-01"]}[name]


def test_every_prompt_is_covered() -> None:
    """A new call of the confirm helper must join :func:`_every_prompt` (and so the Ctrl-C test)."""
    commands = Path(__file__).resolve().parents[2] / "commands"
    assert sum(p.read_text().count("confirm(") for p in commands.glob("*.py")) == len(PROMPTING)


@pytest.mark.parametrize("name", PROMPTING)
def test_ctrl_c_at_the_prompt_stops_at_once(demo_wh: str, tmp_path: Path, name: str) -> None:
    """Issue 27 #5: Ctrl-C at `[y/N]` ends the command at once (exit 130), changes nothing and
    leaves the next line typed to the shell. It used to wait for Enter once polars was loaded
    (its SIGINT hook makes the kernel restart the read)."""
    args = _every_prompt(demo_wh, tmp_path, name)
    before = tree_bytes(demo_wh)
    run = ctrl_c_at_prompt([*args, "-w", demo_wh])
    assert "? [y/N] " in run.output, run.output
    assert run.rc == 130 and run.seconds < 2, (run.rc, run.seconds, run.output)
    assert "interrupted (SIGINT)" in run.output
    assert run.next_line == "next-line", run.output  # not swallowed by the prompt
    assert tree_bytes(demo_wh) == before


@pytest.mark.parametrize("name", PROMPTING)
def test_previews_fit_80_columns(demo_wh: str, tmp_path: Path, name: str) -> None:
    """Issue 27 #6: a preview fits the terminal as `inspect` does (records when its table does
    not fit, human byte counts), so no row wraps and no number splits across lines."""
    args = _every_prompt(demo_wh, tmp_path, name)
    run = run_on_tty([*args, "-w", demo_wh], answer="n", columns=80)
    assert run.prompted and run.rc == 7, run.output
    preview = ANSI.sub("", run.output.split(PROMPT)[0]).replace("\r\n", "\n").splitlines()[:-1]
    assert preview, run.output
    assert all(len(line) <= 80 for line in preview), "\n".join(line for line in preview if len(line) > 80)
    assert any(line.endswith(("row(s)", "bytes", "bytes in all")) for line in preview[-1:]), preview
