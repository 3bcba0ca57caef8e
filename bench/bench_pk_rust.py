"""Primary-key write, merged read to Parquet and ``inspect files``: this tree, an earlier
commit and pypaimon-rust, whole process and in process, interleaved (issue 28).

Usage (``--files-warehouse`` from ``make_tables.py --only files``, 100,000 files)::

    .venv/bin/python bench/bench_pk_rust.py --files-warehouse /tmp/benchwh [--before COMMIT] \\
        [--rows 1000000] [--repeat 5] [--save run.json]

Inputs are the ``bench_write_read.py`` batches (3 x ``--rows`` rows, 50 % key overlap, PK
``(dt, id)``, 4 partitions x 4 buckets, ``write-only``). Every round runs every case once,
in this order, and prints the 1-minute load average before each case:

- write: three ``paimon-cli write`` processes (one per batch, one commit each; the table is
  created untimed first) for this tree ("after") and ``--before`` (a ``git archive`` of it,
  run by a loader in this venv); one ``wr_pypaimon.py write --native`` process (pypaimon 2.1
  with the pypaimon-rust writer, table creation and Parquet reads included: the script the
  issue compares with); ``wr_ours.py write`` for the in-process figure of this tree;
- merged read: ``paimon-cli read --to out.parquet`` (after, before) of the table this tree
  wrote; ``rust_pk.py read-to`` (pypaimon-rust ``read_arrow`` -> ``ParquetWriter``, zstd);
  in process ``wr_ours.py read`` vs ``wr_pypaimon.py read --native``;
- ``paimon-cli inspect files -o jsonl > /dev/null`` (after, before) vs ``rust_pk.py files``
  (pypaimon-rust's SQL ``$files`` -> Arrow).

Whole-process figures are wall seconds of the process(es), with their CPU seconds (user +
system, the steadier figure when other jobs share the cores); peak RSS is ``ru_maxrss`` of each
process (a ``python -S`` launcher spawns it, so this driver's pages are not counted). Checks
(before timing): the three written tables and the three Parquet outputs hold exactly the
expected merge (``wr_data.check_merged``, in subprocesses), and both trees' ``inspect files``
print the same bytes, with the same rows, file paths and record counts as pypaimon-rust.
Markdown on stdout, progress on stderr.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))

import wr_data  # noqa: E402

IDENT = "bench.t"
BATCHES = 3
RUST_PY = Path.home() / ".cache/paimon-cli-tests/pypaimon-2.1.0-rust-venv/bin/python"
OURS_PY = REPO / ".venv/bin/python"

_LOADER = '''import runpy, sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in (getattr(f, "__module__", "") + repr(f)).lower()]
sys.path.insert(0, VIEW)
for k in [m for m in sys.modules if m.startswith("paimon_cli")]:
    del sys.modules[k]
script = sys.argv[1]
sys.argv = sys.argv[1:]
if script == "cli":
    from paimon_cli.__main__ import main
    sys.argv[0] = "paimon-cli"
    sys.exit(main())
runpy.run_path(script, run_name="__main__")
'''

# spawns argv, passes its stdout through, reports wall and peak RSS (KiB) on stderr's last line
_LAUNCHER = (
    "import os, sys, time\n"
    "t = time.perf_counter()\n"
    "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)\n"
    "_, status, ru = os.wait4(pid, 0)\n"
    "print(time.perf_counter() - t, ru.ru_maxrss, ru.ru_utime + ru.ru_stime, file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def load1() -> float:
    return os.getloadavg()[0]


def run(argv: list[str], stdout: Any = subprocess.PIPE) -> tuple[float, float, str, float]:
    """(wall s, peak RSS MiB, stdout, CPU s: user + system) of one process; fails loudly on a non-zero exit."""
    r = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *argv], stdout=stdout, stderr=subprocess.PIPE,
                       text=True, cwd="/tmp")
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:5])} ...: exit {r.returncode}\n{r.stderr[-3000:]}")
    wall, rss, cpu = r.stderr.strip().splitlines()[-1].split()
    return float(wall), int(rss) / 1024, r.stdout or "", float(cpu)


def before_tree(commit: str) -> Path:
    root = Path(tempfile.mkdtemp(prefix="pk-before-"))
    subprocess.run(f"git -C {REPO} archive {commit} core commands paimon_cli | tar -x -C {root}", shell=True,
                   check=True)
    view = root / "view" / "paimon_cli"
    view.mkdir(parents=True)
    for f in (root / "paimon_cli").glob("*.py"):
        (view / f.name).symlink_to(f)
    (view / "core").symlink_to(root / "core")
    (view / "commands").symlink_to(root / "commands")
    (root / "run.py").write_text(f"VIEW = {str(root / 'view')!r}\n" + _LOADER)
    return root


class Case:
    def __init__(self, key: str, label: str) -> None:
        self.key, self.label = key, label
        self.walls: list[float] = []
        self.inproc: list[float] = []
        self.rss: list[float] = []
        self.loads: list[float] = []
        self.cpus: list[float] = []

    def add(self, wall: float, rss: float, load: float, inproc: float | None = None, cpu: float = 0.0) -> None:
        self.walls.append(wall)
        self.cpus.append(cpu)
        self.rss.append(rss)
        self.loads.append(load)
        if inproc is not None:
            self.inproc.append(inproc)


def med(xs: list[float]) -> float | None:
    return statistics.median(xs) if xs else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files-warehouse", required=True, help="warehouse with bench.files (make_tables.py)")
    ap.add_argument("--files", type=int, default=100_000, help="expected live files of bench.files")
    ap.add_argument("--before", default="5c43e22", help="earlier commit to compare with (default: main at "
                    "the branch point of issue 28's pk slice)")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", nargs="*", choices=["write", "read", "files"], default=["write", "read", "files"])
    ap.add_argument("--tmp", help="work dir (default: a new temp dir, deleted at the end)")
    ap.add_argument("--save", help="raw timings as JSON")
    args = ap.parse_args(argv)
    # these machines set it; a pip-installed paimon-cli (and pypaimon) run from byte-code
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)

    tmp = Path(args.tmp) if args.tmp else Path(tempfile.mkdtemp(prefix="bench-pk-"))
    tmp.mkdir(parents=True, exist_ok=True)
    bef = before_tree(args.before)
    cli = {"after": [str(REPO / ".venv/bin/paimon-cli")],
           "before": [str(OURS_PY), str(bef / "run.py"), "cli"]}
    inputs = [str(tmp / f"batch-{k}.parquet") for k in range(BATCHES)]
    for k, p in enumerate(inputs):
        if {"write", "read"} & set(args.only) and not os.path.exists(p):  # `--only files` needs no batches
            wr_data.write_parquet(wr_data.batch_table(k, args.rows), p)
    n = args.rows
    expect = wr_data.expected_keys(n, BATCHES)
    cases: dict[str, Case] = {}
    checks: dict[str, Any] = {}
    load_start = " ".join(f"{x:.2f}" for x in os.getloadavg())

    def case(key: str, label: str) -> Case:
        return cases.setdefault(key, Case(key, label))

    def fresh(name: str) -> str:
        wh = tmp / "wh" / name
        shutil.rmtree(wh, ignore_errors=True)
        wh.mkdir(parents=True)
        return str(wh)

    def create(wh: str) -> None:
        run(cli["after"] + ["create", IDENT, "-w", wh, "--schema", wr_data.COLUMNS, "--primary-key",
                            ",".join(wr_data.PRIMARY_KEYS), "--partition-by", ",".join(wr_data.PARTITION_KEYS),
                            "--option", "bucket=4", "--option", "write-only=true"])

    def check_table(who: str, wh: str) -> None:
        _, _, out, _ = run([str(OURS_PY), str(BENCH_DIR / "wr_ours.py"), "read", wh, IDENT, str(n), str(BATCHES)])
        info = json.loads(out)
        checks[who] = {k: info.get(k) for k in ("rows", "mismatches")}
        if info["rows"] != expect or info["mismatches"]:
            raise SystemExit(f"{who}: wrong table {info}")

    def check_parquet(who: str, path: str) -> None:
        code = ("import sys, json, pyarrow.parquet as pq; sys.path.insert(0, sys.argv[1]); import wr_data; "
                "t = pq.read_table(sys.argv[2]); "
                "print(json.dumps(wr_data.check_merged(t, int(sys.argv[3]), int(sys.argv[4]))))")
        r = subprocess.run([str(OURS_PY), "-c", code, str(BENCH_DIR), path, str(n), str(BATCHES)],
                           capture_output=True, text=True, check=True)
        info = json.loads(r.stdout)
        checks[who] = {k: info.get(k) for k in ("rows", "mismatches")}
        if info["rows"] != expect or info["mismatches"]:
            raise SystemExit(f"{who}: wrong Parquet output {info}")

    read_wh = None
    for r in range(args.repeat):
        log(f"round {r + 1}/{args.repeat}, load {load1():.2f}")
        if "write" in args.only or ("read" in args.only and read_wh is None):  # reads need a written table
            for who in ("after", "before"):
                wh = fresh(f"cli-{who}")
                create(wh)
                load = load1()
                walls, rsss, cpus = [], [], []
                for f in inputs:
                    w, rss, _, cpu = run(cli[who] + ["write", IDENT, f, "-w", wh])
                    walls.append(w)
                    cpus.append(cpu)
                    rsss.append(rss)
                case(f"w_{who}", f"`paimon-cli write` x3 ({who})").add(sum(walls), max(rsss), load, cpu=sum(cpus))
                if r == 0:
                    check_table(f"write ({who})", wh)
                if who == "after":
                    read_wh = wh
                log(f"  write {who:<6} {sum(walls):6.2f} s  {max(rsss):5.0f} MiB  load {load:.2f}")
        if "write" in args.only:
            wh = fresh("rust")
            load = load1()
            w, rss, out, cpu = run([str(RUST_PY), str(BENCH_DIR / "wr_pypaimon.py"), "write", wh, IDENT, *inputs,
                               "--native"])
            info = json.loads(out)
            case("w_rust", f"pypaimon-rust write script ({'/'.join(info['writer'])})").add(
                w, rss, load, info["write_s"], cpu)
            if r == 0:
                check_table("write (pypaimon-rust)", wh)
            log(f"  write rust   {w:6.2f} s  {rss:5.0f} MiB  in process {info['write_s']:.2f} s")
            wh = fresh("inproc")
            create(wh)
            load = load1()
            w, rss, out, cpu = run([str(OURS_PY), str(BENCH_DIR / "wr_ours.py"), "write", wh, IDENT, *inputs])
            info = json.loads(out)
            case("w_after_in", "ours in process `write_table` x3 (after)").add(w, rss, load, info["write_s"], cpu)
            log(f"  write ours in process {info['write_s']:6.2f} s")
        if "read" in args.only:
            assert read_wh is not None
            for who in ("after", "before"):
                out_pq = str(tmp / f"out-{who}.parquet")
                load = load1()
                w, rss, _, cpu = run(cli[who] + ["read", IDENT, "-w", read_wh, "--to", out_pq])
                case(f"r_{who}", f"`paimon-cli read --to out.parquet` ({who})").add(w, rss, load, cpu=cpu)
                if r == 0:
                    check_parquet(f"read --to ({who})", out_pq)
                log(f"  read --to {who:<6} {w:6.2f} s  {rss:5.0f} MiB")
            out_pq = str(tmp / "out-rust.parquet")
            load = load1()
            w, rss, out, cpu = run([str(RUST_PY), str(BENCH_DIR / "rust_pk.py"), "read-to", read_wh, IDENT, out_pq])
            case("r_rust", "pypaimon-rust `read_arrow` -> ParquetWriter (zstd)").add(
                w, rss, load, json.loads(out)["read_s"], cpu)
            if r == 0:
                check_parquet("read to parquet (pypaimon-rust)", out_pq)
            log(f"  read --to rust   {w:6.2f} s  {rss:5.0f} MiB")
            for key, argv_ in (("r_after_in", [str(OURS_PY), str(BENCH_DIR / "wr_ours.py")]),
                               ("r_rust_in", [str(RUST_PY), str(BENCH_DIR / "wr_pypaimon.py")])):
                load = load1()
                extra = ["--native"] if key == "r_rust_in" else []
                w, rss, out, cpu = run([*argv_, "read", read_wh, IDENT, str(n), str(BATCHES), *extra])
                info = json.loads(out)
                if info["rows"] != expect or info["mismatches"]:
                    raise SystemExit(f"{key}: wrong result {info}")
                label = ("ours in process `TableRead.to_arrow` (after)" if key == "r_after_in"
                         else f"pypaimon 2.1 native read in process ({info.get('reader')})")
                case(key, label).add(w, rss, load, info["read_s"], cpu)
            log(f"  read in process ours {cases['r_after_in'].inproc[-1]:.2f} s, rust "
                f"{cases['r_rust_in'].inproc[-1]:.2f} s")
        if "files" in args.only:
            fw = args.files_warehouse
            if r == 0:
                got = {}
                for who in ("after", "before"):
                    p = subprocess.run(cli[who] + ["inspect", "files", "bench.files", "-w", fw, "-o", "jsonl"],
                                       capture_output=True, check=True)
                    got[who] = hashlib.sha256(p.stdout).hexdigest()
                    if who == "after":
                        import pyarrow as pa
                        import pyarrow.compute as pc
                        import pyarrow.json as pj

                        t = pj.read_json(pa.BufferReader(p.stdout),
                                         parse_options=pj.ParseOptions(newlines_in_values=False))
                        paths = sorted(t.column("file_path").to_pylist())
                        ours = {"rows": t.num_rows,
                                "paths_sha": hashlib.sha256("\n".join(paths).encode()).hexdigest(),
                                "record_count": pc.sum(t.column("record_count")).as_py()}
                        del t, paths
                    del p
                _, _, out, _ = run([str(RUST_PY), str(BENCH_DIR / "rust_pk.py"), "files", fw, "bench.files", "--check"])
                rust = json.loads(out)
                rust.pop("read_s")
                checks["inspect files"] = {"after == before (bytes)": got["after"] == got["before"],
                                           "ours": ours, "pypaimon-rust": rust}
                if got["after"] != got["before"] or ours != rust or ours["rows"] != args.files:
                    raise SystemExit(f"inspect files differ: {checks['inspect files']}")
            for who in ("after", "before"):
                load = load1()
                w, rss, _, cpu = run(cli[who] + ["inspect", "files", "bench.files", "-w", fw, "-o", "jsonl"],
                                stdout=subprocess.DEVNULL)
                case(f"f_{who}", f"`paimon-cli inspect files -o jsonl > /dev/null` ({who})").add(w, rss, load, cpu=cpu)
            load = load1()
            w, rss, out, cpu = run([str(RUST_PY), str(BENCH_DIR / "rust_pk.py"), "files", fw, "bench.files"])
            case("f_rust", "pypaimon-rust SQL `$files` -> Arrow").add(w, rss, load, json.loads(out)["read_s"], cpu)
            log(f"  files after {cases['f_after'].walls[-1]:.2f} s, before {cases['f_before'].walls[-1]:.2f} s, "
                f"rust {w:.2f} s")
    load_end = " ".join(f"{x:.2f}" for x in os.getloadavg())

    L = [f"{args.repeat} interleaved rounds; {os.cpu_count()} cores; load average at start {load_start}, at end "
         f"{load_end}; before = `{args.before}`; {BATCHES} x {n:,} rows; `inspect files` on {args.files:,} files.",
         "", "| case | wall median (s) | CPU median (s) | in-process median (s) | peak RSS max (MiB) | walls (s) | "
         "load (1 min) |", "|---|---:|---:|---:|---:|---|---|"]
    for c in cases.values():
        ip = med(c.inproc)
        L.append(f"| {c.label} | {med(c.walls):.2f} | {med(c.cpus):.2f} | {'-' if ip is None else f'{ip:.2f}'} | "
                 f"{max(c.rss):.0f} | "
                 f"{' '.join(f'{x:.2f}' for x in c.walls)} | {' '.join(f'{x:.1f}' for x in c.loads)} |")
    L += ["", "| comparison (peer / ours, medians) | ratio | CPU ratio | goal (on the first ratio) |",
          "|---|---:|---:|---|"]

    def ratio(label: str, ours: str, peer: str, goal: float | None, inproc: bool = False) -> None:
        if ours in cases and peer in cases:
            o = med(cases[ours].inproc if inproc else cases[ours].walls)
            p = med(cases[peer].inproc if inproc else cases[peer].walls)
            oc, pc_ = med(cases[ours].cpus), med(cases[peer].cpus)
            cpu = "-" if inproc or not oc or not pc_ else f"{pc_ / oc:.2f}x"
            if o and p:
                g = "-" if goal is None else f">= {goal:g}x: **{'met' if p / o >= goal else 'missed'}**"
                L.append(f"| {label} | {p / o:.2f}x | {cpu} | {g} |")

    ratio("write, whole process: rust script / 3 CLI runs (after)", "w_after", "w_rust", 1.0)
    ratio("write, whole process: rust script / 3 CLI runs (before)", "w_before", "w_rust", 1.0)
    ratio("write, in process: rust / ours (after)", "w_after_in", "w_rust", 1.5, inproc=True)
    ratio("write: before / after (CLI)", "w_after", "w_before", None)
    ratio("merged read to Parquet, whole process: rust / `read --to` (after)", "r_after", "r_rust", 1.0)
    ratio("merged read to Parquet, whole process: rust / `read --to` (before)", "r_before", "r_rust", 1.0)
    ratio("merged read, in process: rust / ours (after)", "r_after_in", "r_rust_in", 1.2, inproc=True)
    ratio("`read --to`: before / after", "r_after", "r_before", None)
    ratio("inspect files: rust `$files` / ours -o jsonl (after)", "f_after", "f_rust", 1.0)
    ratio("inspect files: rust `$files` / ours -o jsonl (before)", "f_before", "f_rust", 1.0)
    ratio("inspect files: before / after", "f_after", "f_before", None)
    L += ["", "Checks:", ""] + [f"- {k}: {v}" for k, v in checks.items()]
    print("\n".join(L))
    if args.save:
        Path(args.save).write_text(json.dumps({k: vars(c) for k, c in cases.items()} | {"checks": checks},
                                              indent=1, default=str))
    shutil.rmtree(bef, ignore_errors=True)
    if not args.tmp:
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
