"""Whole-process time of small reads: paimon-cli against pypaimon-rust (issue 28).

Run by hand (not part of pytest)::

    .venv/bin/python bench/bench_startup.py [--repeat 7] [--baseline-cli /old/.venv/bin/paimon-cli]

Makes a 10-row primary-key table (``paimon-cli create`` + ``write``, one bucket, one commit)
in a temp warehouse, then times, in interleaved rounds, whole processes with stdout to
/dev/null:

- ``paimon-cli read db.t -o jsonl``, ``paimon-cli inspect snapshots db.t -o jsonl``,
  ``paimon-cli list -o jsonl`` (this tree; with ``--baseline-cli`` another build too);
- ``rust_read.py read|snapshots|list`` with the interpreter of a venv holding pypaimon 2.1 and
  pypaimon-rust 0.4 (their PyPI names; ``--create-venv`` makes it with pip when missing):
  the same work through pypaimon-rust's ``PaimonCatalog``, rows printed as JSON lines;
- ``python -c pass`` of both interpreters (the floor).

One untimed warm-up per case checks what it prints (10 rows, 1 snapshot, the table listed)
and writes the builds' byte-code (``PYTHONDONTWRITEBYTECODE`` is dropped for the children).
Prints a Markdown report (medians of wall and CPU seconds, ratios to pypaimon-rust, the goal
of at most 2.5x, load average before and after) on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_write_read import (  # noqa: E402
    PP_RUST_VENVS,
    PYPAIMON_RUST_VERSION,
    PYPAIMON_VERSION,
    find_venv,
    log,
    machine_info,
)

GOAL = 2.5  # paimon-cli may take at most this many times pypaimon-rust's whole-process time
IDENT = "db.t"
ROWS = 10
# Byte-code is written (by the warm-up) and used, as a pip-installed package's is: with
# PYTHONDONTWRITEBYTECODE set (these machines set it) an editable build compiles every one of
# its modules from source on each run, ~0.25 s of a small read.
CHILD_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
MODES = {"read": ["read", IDENT], "snapshots": ["inspect", "snapshots", IDENT], "list": ["list"]}


def make_table(cli: str, wh: str, tmp: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    data = tmp / "in.parquet"
    pq.write_table(pa.table({"id": pa.array(range(ROWS), pa.int64()),
                             "name": [f"name-{i}" for i in range(ROWS)]}), data)
    subprocess.run([cli, "-q", "-w", wh, "create", IDENT, "--schema", "id BIGINT NOT NULL, name STRING",
                    "--primary-key", "id", "--option", "bucket=1"], check=True)
    subprocess.run([cli, "-q", "-w", wh, "write", IDENT, str(data)], check=True)


def run(argv: list[str], capture: bool = False) -> tuple[float, float, str]:
    """(wall s, CPU s of the child, stdout if captured)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE if capture else subprocess.DEVNULL,
                          stderr=subprocess.PIPE, text=True, env=CHILD_ENV)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if proc.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout or ""


def check(key: str, mode: str, out: str) -> None:
    """The warm-up's output holds what the mode must show (else the timing means nothing)."""
    lines = [json.loads(ln) for ln in out.splitlines() if ln.strip()]
    want = {"read": ROWS, "snapshots": 1, "list": 1}[mode]
    if len(lines) != want:
        raise SystemExit(f"{key}: {len(lines)} lines, expected {want}: {out[:500]!r}")
    if mode == "read" and sorted(r["id"] for r in lines) != list(range(ROWS)):
        raise SystemExit(f"{key}: wrong rows {lines}")
    if mode == "snapshots" and lines[0]["snapshot_id"] != 1:
        raise SystemExit(f"{key}: wrong snapshot {lines}")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=7, help="interleaved timed rounds (default 7)")
    ap.add_argument("--cli", default=str(Path(sys.executable).with_name("paimon-cli")),
                    help="paimon-cli of this tree (default: beside this interpreter)")
    ap.add_argument("--baseline-cli", help="paimon-cli of another build, timed alongside")
    ap.add_argument("--pypaimon-rust-python", help="python of a venv with pypaimon 2.1 + pypaimon-rust 0.4")
    ap.add_argument("--create-venv", action="store_true", help="create the pypaimon-rust venv with pip if missing")
    args = ap.parse_args()

    rust_py = find_venv(args.pypaimon_rust_python, PP_RUST_VENVS,
                        {"pypaimon": PYPAIMON_VERSION, "pypaimon-rust": PYPAIMON_RUST_VERSION}, args.create_venv)
    if rust_py is None:
        raise SystemExit("no venv with pypaimon-rust (pass --pypaimon-rust-python or --create-venv)")
    tmp = Path(tempfile.mkdtemp(prefix="bench-startup-"))
    try:
        wh = str(tmp / "wh")
        make_table(args.cli, wh, tmp)
        clis = {"ours": args.cli, **({"base": args.baseline_cli} if args.baseline_cli else {})}
        cases: dict[str, tuple[str, list[str]]] = {}
        for mode, cmd in MODES.items():
            for name, cli in clis.items():
                cases[f"{name}_{mode}"] = (mode, [cli, "-w", wh, *cmd, "-o", "jsonl"])
            cases[f"rust_{mode}"] = (mode, [str(rust_py), str(BENCH_DIR / "rust_read.py"), wh, mode,
                                            *([IDENT] if mode != "list" else [])])
        cases["ours_help"] = ("", [args.cli, "--help"])
        cases["py_floor_ours"] = ("", [sys.executable, "-c", "pass"])
        cases["py_floor_rust"] = ("", [str(rust_py), "-c", "pass"])

        load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
        for key, (mode, argv) in cases.items():  # warm-up: caches, and what each prints
            _, _, out = run(argv, capture=True)
            if mode:
                check(key, mode, out)
        times: dict[str, list[tuple[float, float]]] = {k: [] for k in cases}
        for r in range(args.repeat):
            for key, (_, argv) in cases.items():
                wall, cpu, _ = run(argv)
                times[key].append((wall, cpu))
            log(f"round {r + 1}/{args.repeat} done")
        load_after = " ".join(f"{x:.2f}" for x in os.getloadavg())
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = {k: (statistics.median(w for w, _ in v), statistics.median(c for _, c in v)) for k, v in times.items()}
    info = machine_info()
    print(f"{info['date']}; {info['cpu']}, {info['cores']} cores; Python {info['python']}; "
          f"pypaimon {PYPAIMON_VERSION} + pypaimon-rust {PYPAIMON_RUST_VERSION} ({rust_py}); "
          f"{ROWS}-row primary-key table, 1 bucket, 1 commit; medians of {args.repeat} interleaved rounds; "
          f"load average before {load_before}, after {load_after}.\n")
    print("| case | wall s | CPU s |\n|---|---:|---:|")
    for key, (wall, cpu) in med.items():
        print(f"| `{key}` | {wall:.3f} | {cpu:.3f} |")
    print(f"\n| command | build | wall / pypaimon-rust | CPU / pypaimon-rust | goal <= {GOAL} |\n|---|---|---:|---:|---|")
    for mode in MODES:
        rw, rc = med[f"rust_{mode}"]
        for name in clis:
            w, c = med[f"{name}_{mode}"]
            print(f"| {mode} | {name} | {w / rw:.2f} | {c / rc:.2f} | {'met' if w / rw <= GOAL else 'missed'} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
