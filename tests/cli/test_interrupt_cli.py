"""SIGINT / SIGTERM: the command's own cleanup runs, one line says so, exit 130 / 143.

Issue: Ctrl-C during `compact --full` exited 130 leaving 64 files no snapshot referenced
(data and `.index` files), interrupted writes left files too, and SIGTERM skipped cleanup.
The moments are chosen by the ``PAIMON_CLI_TEST_SIGNAL`` hook (the process signals itself
when it creates its nth data file, or starts a commit attempt: exact on any machine), and by
a plain ``kill`` from outside once files appear.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.operation.used_files import collect_used_files

LINE = re.compile(r"interrupted \((SIGINT|SIGTERM)\): (snapshots? ([\d, ]+) had been committed; )?"
                  r"removed (\d+) uncommitted file\(s\)\n")
SIGNALS = [signal.SIGINT, signal.SIGTERM]


def _cli(*args: str) -> None:
    res = CliRunner().invoke(app, list(args))
    assert res.exit_code == 0, res.output


def _env(hook: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    if hook:
        env["PAIMON_CLI_TEST_SIGNAL"] = hook
    return env


def _default_signals() -> None:
    """In the child: SIGINT / SIGTERM as a shell's foreground command has them. A runner that
    started the tests in the background ignores SIGINT, and the CLI rightly keeps an inherited
    ignore (as `nohup` / `cmd &` users expect)."""
    for s in SIGNALS:
        signal.signal(s, signal.SIG_DFL)


def _run(args: list[str], hook: str) -> tuple[int, str]:
    proc = subprocess.run([sys.executable, "-m", "paimon_cli", *args], capture_output=True, env=_env(hook),
                          timeout=300, preexec_fn=_default_signals)
    return proc.returncode, proc.stderr.decode(errors="replace")


def _table(wh: str, ident: str) -> object:
    return FileSystemCatalog(wh).get_table(ident)


def _unreferenced(wh: str, ident: str) -> list[str]:
    """Files under the table directory that no snapshot, tag or changelog references
    (schema and snapshot metadata aside), by core's used-files reader."""
    table = _table(wh, ident)
    used = collect_used_files(table.file_io, table.path).names  # type: ignore[attr-defined]
    root = Path(table.path)  # type: ignore[attr-defined]
    out = []
    for p in root.rglob("*"):
        rel = p.relative_to(root).parts
        if p.is_file() and rel[0] not in ("schema", "snapshot") and p.name not in used:
            out.append(str(p.relative_to(root)))
    return sorted(out)


def _content(wh: str, ident: str) -> tuple[int | None, list[tuple[object, ...]]]:
    table = _table(wh, ident)
    reader = TableRead(table)  # type: ignore[arg-type]
    t = reader.to_arrow()
    rows = sorted(zip(*[t.column(c).to_pylist() for c in t.column_names], strict=True))
    return (reader.snapshot.id if reader.snapshot else None), rows


def _check_line(err: str, sig: signal.Signals) -> re.Match[str]:
    m = LINE.fullmatch(err)
    assert m is not None, f"stderr is not the one interrupt line: {err!r}"
    assert m.group(1) == sig.name
    return m


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(warehouse, big input): ``shop.orders`` (key table, 4 partitions x 4 buckets, one
    commit) written to by the tests; ``shop.events`` (key table, 8 buckets, three files per
    bucket each with an ``.index`` file) for `compact --full`."""
    root = tmp_path_factory.mktemp("interrupt")
    wh = str(root / "wh")
    n = 300_000
    rng = np.random.default_rng(3)
    data = pa.table({
        "id": pa.array(rng.permutation(n), pa.int64()),
        "v": pa.array(rng.integers(0, 10**9, n).astype(str)),
        "dt": pa.array([f"2024-05-0{1 + i % 4}" for i in range(n)]),
    })
    big = str(root / "big.parquet")
    pq.write_table(data, big, row_group_size=50_000)
    small = str(root / "small.parquet")
    pq.write_table(data.slice(0, 20_000), small)
    _cli("create", "shop.orders", "-w", wh, "-s", "id BIGINT NOT NULL, v STRING, dt STRING",
         "--primary-key", "id,dt", "--partition-by", "dt", "--option", "bucket=4",
         "--option", "write-buffer-size=1mb", "--option", "target-file-size=256kb")
    _cli("write", "shop.orders", small, "-w", wh)
    _cli("create", "shop.events", "-w", wh, "-s", "id BIGINT NOT NULL, v STRING, dt STRING",
         "--primary-key", "id", "--option", "bucket=8", "--option", "target-file-size=256kb",
         "--option", "file-index.bloom-filter.columns=v", "--option", "file-index.in-manifest-threshold=1b")
    for i in range(3):
        part = str(root / f"events-{i}.parquet")
        pq.write_table(data.slice(i * 60_000, 60_000), part)
        _cli("write", "shop.events", part, "-w", wh, "--write-only")
    _cli("create", "shop.dv", "-w", wh, "-s", "id BIGINT NOT NULL, v STRING, dt STRING", "--primary-key", "id",
         "--option", "bucket=2", "--option", "deletion-vectors.enabled=true")
    _cli("write", "shop.dv", small, "-w", wh)
    return wh, big


@pytest.fixture
def warehouse(template: tuple[str, str], tmp_path: Path) -> str:
    wh = str(tmp_path / "wh")
    shutil.copytree(template[0], wh)
    return wh


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("point", ["file:1", "file:8", "commit:1"])
def test_interrupted_write(template: tuple[str, str], warehouse: str, sig: signal.Signals, point: str) -> None:
    before = _content(warehouse, "shop.orders")
    code, err = _run(["write", "shop.orders", template[1], "-w", warehouse], f"{sig.name[3:]}:{point}")
    assert code == 128 + sig, err
    m = _check_line(err, sig)
    assert _unreferenced(warehouse, "shop.orders") == []
    after = _content(warehouse, "shop.orders")
    if point.startswith("commit"):  # held back until the snapshots were published: they stand
        assert m.group(3) == ", ".join(str(i) for i in range(before[0] + 1, after[0] + 1))  # type: ignore[operator]
        assert len(after[1]) == 300_000
    else:
        assert m.group(2) is None and int(m.group(4)) >= 1
        assert after == before


def test_write_interrupted_while_committing_keeps_its_compaction(template: tuple[str, str], warehouse: str) -> None:
    """A deletion-vector table shows written rows only once compacted: a signal during the
    APPEND commit waits for the COMPACT snapshot too, so the rows are visible."""
    before = _content(warehouse, "shop.dv")
    code, err = _run(["write", "shop.dv", template[1], "-w", warehouse], "INT:commit:1")
    assert code == 130, err
    m = _check_line(err, signal.SIGINT)
    after = _content(warehouse, "shop.dv")
    assert m.group(3) == f"{before[0] + 1}, {before[0] + 2}" and after[0] == before[0] + 2  # type: ignore[operator]
    assert len(after[1]) == 300_000
    assert _unreferenced(warehouse, "shop.dv") == []


@pytest.mark.parametrize("sig", SIGNALS, ids=lambda s: s.name)
@pytest.mark.parametrize("point", ["file:1", "file:10", "commit:1"])
def test_interrupted_full_compaction(warehouse: str, sig: signal.Signals, point: str) -> None:
    before = _content(warehouse, "shop.events")
    code, err = _run(["compact", "shop.events", "--full", "-w", warehouse], f"{sig.name[3:]}:{point}")
    assert code == 128 + sig, err
    m = _check_line(err, sig)
    assert _unreferenced(warehouse, "shop.events") == []
    after = _content(warehouse, "shop.events")
    assert after[1] == before[1]
    if point.startswith("commit"):
        assert after[0] == (before[0] or 0) + 1 and m.group(3) == str(after[0])
    else:
        assert after[0] == before[0] and m.group(2) is None and int(m.group(4)) >= 1


def _signal_when_files_appear(args: list[str], table_dir: Path, sig: signal.Signals, more_than: int) -> tuple[int, str]:
    """Start the command, send ``sig`` from outside once the table holds ``more_than`` data files."""
    proc = subprocess.Popen([sys.executable, "-m", "paimon_cli", *args], stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, env=_env(), preexec_fn=_default_signals)
    deadline = time.monotonic() + 120
    while len(list(table_dir.rglob("data-*"))) <= more_than:
        assert proc.poll() is None, "the command ended before any file appeared"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err.decode(errors="replace")


@pytest.mark.parametrize(("command", "sig"), [("write", signal.SIGTERM), ("compact", signal.SIGINT)])
def test_signal_from_outside(template: tuple[str, str], warehouse: str, command: str, sig: signal.Signals) -> None:
    ident, args = (("shop.orders", [template[1]]) if command == "write" else ("shop.events", ["--full"]))
    before = _content(warehouse, ident)
    table_dir = Path(warehouse, "shop.db", ident.split(".")[1])
    existing = len(list(table_dir.rglob("data-*")))
    code, err = _signal_when_files_appear([command, ident, *args, "-w", warehouse], table_dir, sig, existing + 2)
    assert code == 128 + sig, err
    _check_line(err, sig)
    assert _unreferenced(warehouse, ident) == []
    assert _content(warehouse, ident) == before


def test_interrupted_read_stops_cleanly(warehouse: str) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "paimon_cli", "read", "shop.events", "-w", warehouse, "-o", "jsonl"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env(), preexec_fn=_default_signals)
    assert proc.stdout is not None
    assert proc.stdout.readline().startswith(b'{"id":')
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 130, err
    assert err.decode() == "interrupted (SIGINT): removed 0 uncommitted file(s)\n"
