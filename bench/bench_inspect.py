"""Time paimon-cli's start-up and ``inspect`` against pypaimon 2.1, in one run.

Run by hand (not part of pytest), after ``bench/make_tables.py``::

    .venv/bin/python bench/bench_inspect.py --warehouse /tmp/benchwh [--repeat 5]

Every case runs once untimed (warm-up, exit code and row count checked), then ``--repeat``
times; wall time is measured around ``subprocess.run`` with stdout sent to /dev/null, so
interpreter start and imports are included (as a user sees it). Two worker scripts also
report in-process phases: ``ours_inprocess.py`` (core + JSON rendering, no typer) and
``pypaimon_read.py`` (pypaimon's catalog API: ``get_table('db.t$snapshots')`` ->
``new_read_builder`` -> ``to_arrow``). Results: a Markdown report on stdout and, with
``--save``, the raw numbers as JSON.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
CACHE_VENV = Path.home() / ".cache" / "paimon-cli-tests" / "pypaimon-2.1-venv"
KNOWN_VENVS = [CACHE_VENV, Path("/tmp/pp/venv21")]
PYPAIMON_VERSION = "2.1.0"

GOALS = {"help": 0.3, "snapshots": 2.0}  # seconds, from the issue (median wall time)


@dataclass
class Case:
    key: str
    label: str
    argv: list[str]
    expect_rows: int | None = None  # check the warm-up's output has this many rows
    worker: bool = False  # stdout is one JSON line with in-process phases
    walls: list[float] = field(default_factory=list)
    phases: list[dict[str, Any]] = field(default_factory=list)
    note: str = ""

    @property
    def best(self) -> float:
        return min(self.walls)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    def phase(self, name: str) -> tuple[float, float] | None:
        vals = [p[name] for p in self.phases if p.get(name) is not None]
        return (min(vals), statistics.median(vals)) if vals else None


# ---------------------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------------------


def find_pypaimon_python(explicit: str | None, create: bool) -> Path:
    """pypaimon 2.1's interpreter: --pypaimon-python, a known venv, or a new cache venv."""
    if explicit:
        return Path(explicit)
    for venv in KNOWN_VENVS:
        py = venv / "bin" / "python"
        if py.exists() and _pypaimon_version(py) == PYPAIMON_VERSION:
            return py
    if not create:
        raise SystemExit(f"no pypaimon {PYPAIMON_VERSION} venv found in {KNOWN_VENVS}; "
                         "pass --pypaimon-python or --create-venv")
    print(f"creating {CACHE_VENV} with pypaimon=={PYPAIMON_VERSION} ...", file=sys.stderr)
    CACHE_VENV.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(CACHE_VENV)], check=True)
    py = CACHE_VENV / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", f"pypaimon=={PYPAIMON_VERSION}"], check=True)
    return py


def _pypaimon_version(py: Path) -> str | None:
    r = subprocess.run(
        [str(py), "-c", "import importlib.metadata as m; print(m.version('pypaimon'))"],
        capture_output=True, text=True,
    )
    return r.stdout.strip() if r.returncode == 0 else None


def machine_info() -> dict[str, Any]:
    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f"{int(line.split()[1]) // 1024} MiB"
    except OSError:
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "memory": mem,
        "os": platform.platform(),
        "python": platform.python_version(),
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


# ---------------------------------------------------------------------------------------
# running
# ---------------------------------------------------------------------------------------


def _count_rows(stdout: str) -> int:
    data = json.loads(stdout)
    return data["rows"] if isinstance(data, dict) else len(data)


def run_case(case: Case, repeat: int, cwd: str) -> None:
    """Warm-up (checked), then ``repeat`` timed runs."""
    with tempfile.TemporaryFile("w+") as out:
        r = subprocess.run(case.argv, stdout=out, stderr=subprocess.PIPE, text=True, cwd=cwd)
        if r.returncode != 0:
            raise SystemExit(f"{case.label}: exit {r.returncode}\n{r.stderr[-2000:]}")
        if case.expect_rows is not None or case.worker:
            out.seek(0)
            n = _count_rows(out.read())
            if case.expect_rows is not None and n != case.expect_rows:
                raise SystemExit(f"{case.label}: expected {case.expect_rows} rows, got {n}")
    for _ in range(repeat):
        if case.worker:
            t0 = time.perf_counter()
            r = subprocess.run(case.argv, capture_output=True, text=True, cwd=cwd)
            case.walls.append(time.perf_counter() - t0)
            case.phases.append(json.loads(r.stdout))
        else:
            t0 = time.perf_counter()
            subprocess.run(case.argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=cwd)
            case.walls.append(time.perf_counter() - t0)
    print(f"  {case.label:<58} best {case.best:7.3f} s  median {case.median:7.3f} s", file=sys.stderr)


def build_cases(args: argparse.Namespace, ours_py: Path, cli: Path, pp_py: Path, snaps: int, files: int) -> list[Case]:
    W = args.warehouse
    pp_cli = pp_py.parent / "paimon"
    ours_in = str(BENCH_DIR / "ours_inprocess.py")
    pp_read = str(BENCH_DIR / "pypaimon_read.py")
    cases = [
        Case("py_floor_ours", "python -c pass (paimon-cli venv)", [str(ours_py), "-c", "pass"]),
        Case("py_floor_pp", "python -c pass (pypaimon venv)", [str(pp_py), "-c", "pass"]),
        Case("help", "paimon-cli --help", [str(cli), "--help"]),
        Case("version", "paimon-cli --version", [str(cli), "--version"]),
    ]
    if pp_cli.exists():
        cases.append(Case("pp_help", "paimon --help (pypaimon CLI)", [str(pp_cli), "--help"]))
    cases.append(Case("pp_import", "python -c 'from pypaimon import CatalogFactory'",
                       [str(pp_py), "-c", "from pypaimon import CatalogFactory"]))
    for kind, ident, n in (("snapshots", "bench.snaps", snaps), ("files", "bench.files", files)):
        cases += [
            Case(kind, f"paimon-cli inspect {kind} {ident} -o json", [
                str(cli), "inspect", kind, ident, "-w", W, "-o", "json"], expect_rows=n),
            Case(f"ours_in_{kind}", f"ours in-process {kind} (worker)",
                 [str(ours_py), ours_in, W, ident, kind], expect_rows=n, worker=True),
            Case(f"pp_{kind}", f"pypaimon {ident}${kind} to_arrow (worker)",
                 [str(pp_py), pp_read, W, f"{ident}${kind}"], expect_rows=n, worker=True),
            Case(f"pp_json_{kind}", f"pypaimon {ident}${kind} to_arrow + JSON (worker)",
                 [str(pp_py), pp_read, W, f"{ident}${kind}", "--json"], expect_rows=n, worker=True),
        ]
    return cases


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}"


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x"


def report(cases: dict[str, Case], info: dict[str, Any], args: argparse.Namespace, pp_py: Path) -> str:
    L: list[str] = []
    L.append(f"Date: {info['date']}  ")
    L.append(f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM, {info['os']}  ")
    L.append(f"Python {info['python']}; pypaimon {PYPAIMON_VERSION} at {pp_py}  ")
    L.append(f"Load average at start: {info['loadavg']}; at end: {info['loadavg_end']}  ")
    L.append(f"Repetitions: {args.repeat} timed runs per case after one untimed warm-up; warehouse {args.warehouse}")
    L.append("")
    L.append("### Wall time (subprocess, includes interpreter start; stdout to /dev/null)")
    L.append("")
    L.append("| case | best (s) | median (s) |")
    L.append("|---|---:|---:|")
    for c in cases.values():
        L.append(f"| `{c.label}` | {_s(c.best)} | {_s(c.median)} |")
    L.append("")
    L.append("### In-process phases (worker scripts; best / median, seconds)")
    L.append("")
    L.append("| case | import | read (catalog -> rows/arrow) | to JSON text |")
    L.append("|---|---:|---:|---:|")
    for c in cases.values():
        if not c.worker:
            continue
        cells = []
        for ph in ("import_s", "read_s", "json_s"):
            v = c.phase(ph)
            cells.append("-" if v is None else f"{v[0]:.3f} / {v[1]:.3f}")
        L.append(f"| `{c.label}` | " + " | ".join(cells) + " |")
    L.append("")
    L.append("### Ratios (ours / pypaimon, medians; < 1 means paimon-cli is faster)")
    L.append("")
    L.append("| comparison | ours (s) | pypaimon (s) | ratio |")
    L.append("|---|---:|---:|---:|")
    if "pp_help" in cases:
        a, b = cases["help"].median, cases["pp_help"].median
        L.append(f"| `--help` wall | {_s(a)} | {_s(b)} | {_ratio(a, b)} |")
    for kind in ("snapshots", "files"):
        a, b = cases[kind].median, cases[f"pp_{kind}"].median
        L.append(f"| {kind}: CLI -o json vs pypaimon to_arrow, wall | {_s(a)} | {_s(b)} | {_ratio(a, b)} |")
        b2 = cases[f"pp_json_{kind}"].median
        L.append(f"| {kind}: CLI -o json vs pypaimon to_arrow + JSON, wall | {_s(a)} | {_s(b2)} | {_ratio(a, b2)} |")
        ra, rb = cases[f"ours_in_{kind}"].phase("read_s"), cases[f"pp_{kind}"].phase("read_s")
        if ra and rb:
            L.append(f"| {kind}: in-process read only (no import, no JSON) | {_s(ra[1])} | {_s(rb[1])} | "
                     f"{_ratio(ra[1], rb[1])} |")
    L.append("")
    L.append("### Goals (median wall time)")
    L.append("")
    for key, label in (("help", "`paimon-cli --help`"), ("snapshots", "`inspect snapshots` of 10,000 snapshots")):
        m = cases[key].median
        ok = "MET" if m <= GOALS[key] else "MISSED"
        L.append(f"- {label}: {m:.3f} s vs goal <= {GOALS[key]} s: **{ok}**")
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--repeat", type=int, default=5, help="timed runs per case (default 5)")
    ap.add_argument("--snapshots", type=int, default=10_000, help="expected rows of bench.snaps$snapshots")
    ap.add_argument("--files", type=int, default=100_000, help="expected rows of bench.files$files")
    ap.add_argument("--cli", help="paimon-cli executable (default: .venv/bin/paimon-cli of this checkout)")
    ap.add_argument("--pypaimon-python", help="python of a venv with pypaimon 2.1")
    ap.add_argument("--create-venv", action="store_true",
                    help=f"create {CACHE_VENV} (pip install pypaimon=={PYPAIMON_VERSION}) if none is found")
    ap.add_argument("--only", nargs="*", help="run only these case keys (e.g. help snapshots pp_snapshots)")
    ap.add_argument("--save", help="write raw timings as JSON to this file")
    args = ap.parse_args(argv)
    args.warehouse = str(Path(args.warehouse).resolve())

    cli = Path(args.cli) if args.cli else REPO / ".venv" / "bin" / "paimon-cli"
    if not cli.exists():
        found = shutil.which("paimon-cli")
        if not found:
            raise SystemExit("paimon-cli not found; pass --cli")
        cli = Path(found)
    ours_py = cli.parent / "python"
    pp_py = find_pypaimon_python(args.pypaimon_python, args.create_venv)
    for ident in ("bench.snaps", "bench.files"):
        db, t = ident.split(".")
        if not (Path(args.warehouse) / f"{db}.db" / t / "snapshot").is_dir():
            raise SystemExit(f"{ident} missing in {args.warehouse}; run bench/make_tables.py first")

    info = machine_info()
    cases = build_cases(args, ours_py, cli, pp_py, args.snapshots, args.files)
    if args.only:
        cases = [c for c in cases if c.key in args.only]
    print(f"benchmarking ({args.repeat} runs per case) ...", file=sys.stderr)
    with tempfile.TemporaryDirectory() as cwd:  # no paimon.yaml / ./warehouse around
        for c in cases:
            run_case(c, args.repeat, cwd)
    info["loadavg_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    by_key = {c.key: c for c in cases}
    if args.save:
        Path(args.save).write_text(json.dumps({
            "machine": info,
            "cases": {c.key: {"label": c.label, "argv": c.argv, "walls": c.walls, "phases": c.phases}
                      for c in cases},
        }, indent=2))
    if not args.only:
        print(report(by_key, info, args, pp_py))
    else:
        for c in cases:
            print(f"{c.label}: best {c.best:.3f} s, median {c.median:.3f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
