"""Progress bars: drawn on a terminal's stderr for expire, remove-orphan-files,
rewrite-file-index and write (as compact draws them); never on a non-terminal, never on stdout."""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli.pty_session import run_on_tty, run_piped

EXPIRE = ["expire", "demo.orders", "--older-than", "0s", "--retain-min", "1", "-y"]


def _orphans(demo_wh: str) -> list[str]:
    bucket = Path(demo_wh) / "demo.db/orders/dt=2024-05-01/bucket-0"
    for i in range(3):
        (bucket / f"data-orphan-{i}.parquet").write_bytes(b"x" * 10)
    return ["remove-orphan-files", "demo.orders", "--older-than", "0s", "--force", "-y"]


def _inputs(tmp_path: Path) -> list[str]:
    paths = []
    for i in range(3):
        p = tmp_path / f"in-{i}.jsonl"
        p.write_text("".join(json.dumps({"event_time": "2024-05-01 10:00:00", "user_id": i * 100 + j,
                                         "action": "click", "dt": "2024-05-01"}) + "\n" for j in range(50)))
        paths.append(str(p))
    return paths


def test_expire_draws_a_bar_on_a_terminal(demo_wh: str) -> None:
    run = run_on_tty([*EXPIRE, "-w", demo_wh])
    assert run.rc == 0 and "expiring" in run.output, run.output


def test_orphan_removal_draws_a_bar_on_a_terminal(demo_wh: str) -> None:
    run = run_on_tty([*_orphans(demo_wh), "-w", demo_wh])
    assert run.rc == 0 and "deleting orphans" in run.output, run.output


def test_rewrite_file_index_draws_a_bar_on_a_terminal(demo_wh: str) -> None:
    alter = run_piped(["alter", "demo.orders", "--set", "file-index.bloom-filter.columns=customer", "-w", demo_wh])
    assert alter.returncode == 0, alter.stderr
    run = run_on_tty(["rewrite-file-index", "demo.orders", "-w", demo_wh])
    assert run.rc == 0 and "indexing" in run.output and "3/3" in run.output, run.output


def test_write_draws_a_bar_per_input_file(demo_wh: str, tmp_path: Path) -> None:
    run = run_on_tty(["write", "demo.events", *_inputs(tmp_path), "-w", demo_wh])
    assert run.rc == 0 and "writing" in run.output and "150 rows" in run.output, run.output


def test_no_bar_without_a_terminal(demo_wh: str, tmp_path: Path) -> None:
    for args in (EXPIRE, _orphans(demo_wh), ["write", "demo.events", *_inputs(tmp_path)]):
        res = run_piped([*args, "-w", demo_wh])
        assert res.returncode == 0, res.stderr
        for label in ("expiring", "deleting orphans", "writing", "\x1b["):
            assert label not in res.stderr


def test_bar_never_on_stdout(demo_wh: str, tmp_path: Path) -> None:
    run = run_on_tty(["write", "demo.events", *_inputs(tmp_path), "-o", "json", "-w", demo_wh], stdout_pipe=True)
    assert run.rc == 0 and "writing" in run.output  # the bar on the terminal (stderr) ...
    assert json.loads(run.stdout)[0]["rows"] == 150  # ... stdout holds the data alone
    run = run_on_tty([*EXPIRE, "--verbose", "-o", "json", "-w", demo_wh], stdout_pipe=True)
    assert run.rc == 0 and "expiring" in run.output
    assert all("path" in f for f in json.loads(run.stdout))
