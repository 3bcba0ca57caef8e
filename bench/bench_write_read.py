"""Time paimon-cli's primary-key write and merged read against pypaimon 2.1 and Java Paimon 0.9.

Run by hand (not part of pytest)::

    .venv/bin/python bench/bench_write_read.py [--rows 1000000] [--repeat 3] [--save run.json]

One run does three things and prints a Markdown report on stdout (progress on stderr):

1. **Write**: 3 batches of ``--rows`` rows (50 % key overlap between consecutive batches) into
   a fresh PK table ``(dt, id)`` partitioned by ``dt`` (4 partitions), 4 buckets,
   ``write-only=true``; each batch is one commit. Peers: ours in-process (``write_table`` per
   Parquet file, worker ``wr_ours.py``), ours CLI (``paimon-cli write`` per batch, wall),
   pypaimon 2.1's Python writer and its ``pypaimon-rust`` writer (``write.native.enabled``;
   worker ``wr_pypaimon.py``, Parquet read included), and Java Paimon 0.9 through the test
   harness (rows cross py4j as JSON, so Arrow -> dicts -> JSON -> Java rows is included).
2. **Read**: the merged rows of the table paimon-cli wrote: ours in-process
   (``TableRead.to_arrow``), ``paimon-cli read -o jsonl > /dev/null`` (wall), pypaimon's
   Python and native readers, and Java 0.9 (rows come back as JSON). Every reader's result is
   checked in full against the expected merge (``wr_data.check_merged``).
3. **Peak RSS** of ``paimon-cli write`` (a subprocess; ``ru_maxrss`` from ``os.wait4``) for
   inputs of 1, 3 and 6 x ``--rows`` rows with ``--option write-buffer-size=64mb``.

Inputs are generated at start (numpy/pyarrow, fixed seeds) into a temp dir that is deleted at
the end (``--keep`` keeps it).
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
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent
sys.path.insert(0, str(BENCH_DIR))
sys.path.insert(0, str(REPO))

import wr_data  # noqa: E402

PYPAIMON_VERSION = "2.1.0"
CACHE = Path.home() / ".cache" / "paimon-cli-tests"
PP_VENVS = [CACHE / "pypaimon-2.1.0-venv", CACHE / "pypaimon-2.1-venv", Path("/tmp/pp/venv21")]
PP_RUST_VENVS = [CACHE / "pypaimon-2.1.0-rust-venv", Path("/tmp/pp/venv21rust")]
PYPAIMON_RUST_VERSION = "0.4.0"
IDENT = "bench.t"
APPEND_WHERE = "id < 30000"
BATCHES = 3
GOALS = {"write_vs_pp": 20.0, "write_vs_native": 1.0, "read_vs_pp": 10.0}  # speed-up (peer / ours)


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------
# environment
# ---------------------------------------------------------------------------------------


def _version(py: Path, dist: str) -> str | None:
    r = subprocess.run([str(py), "-c", f"import importlib.metadata as m; print(m.version({dist!r}))"],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def find_venv(explicit: str | None, candidates: list[Path], need: dict[str, str], create: bool) -> Path | None:
    """A venv's python holding the ``need`` distributions (name -> version), or a new one."""
    if explicit:
        return Path(explicit)
    for venv in candidates:
        py = venv / "bin" / "python"
        if py.exists() and all(_version(py, d) == v for d, v in need.items()):
            return py
    if not create:
        return None
    venv = candidates[0]
    log(f"creating {venv} with {need} ...")
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    subprocess.run([str(py), "-m", "pip", "install", "-q", *(f"{d}=={v}" for d, v in need.items())], check=True)
    return py


def machine_info() -> dict[str, Any]:
    cpu, mem = "unknown", None
    try:
        cpu = next(ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text().splitlines()
                   if ln.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        mem = next(f"{int(ln.split()[1]) // 1024} MiB" for ln in Path("/proc/meminfo").read_text().splitlines()
                   if ln.startswith("MemTotal"))
    except (OSError, StopIteration):
        pass
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "cpu": cpu, "cores": os.cpu_count(), "memory": mem, "os": platform.platform(),
        "python": platform.python_version(),
        "loadavg": " ".join(f"{x:.2f}" for x in os.getloadavg()),
    }


# ---------------------------------------------------------------------------------------
# timing helpers
# ---------------------------------------------------------------------------------------


class Result:
    """Timed runs of one case: wall seconds plus whatever the worker reported."""

    def __init__(self, key: str, label: str) -> None:
        self.key, self.label = key, label
        self.walls: list[float] = []
        self.infos: list[dict[str, Any]] = []

    def add(self, wall: float, info: dict[str, Any] | None = None) -> None:
        self.walls.append(wall)
        self.infos.append(info or {})

    @property
    def best(self) -> float:
        return min(self.walls)

    @property
    def median(self) -> float:
        return statistics.median(self.walls)

    def field(self, name: str) -> list[Any]:
        return [i[name] for i in self.infos if i.get(name) is not None]

    def stat(self, name: str) -> tuple[float, float] | None:
        v = self.field(name)
        return (min(v), statistics.median(v)) if v else None


def run(argv: list[str], cwd: str, stdout: Any = subprocess.PIPE) -> tuple[float, str]:
    """Run ``argv``; (wall seconds, stdout). Fails loudly on a non-zero exit."""
    t0 = time.perf_counter()
    r = subprocess.run(argv, stdout=stdout, stderr=subprocess.PIPE, text=True, cwd=cwd)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ...: exit {r.returncode}\n{r.stderr[-3000:]}")
    return wall, r.stdout or ""


_LAUNCHER = (
    "import os, sys\n"
    "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)\n"
    "_, status, ru = os.wait4(pid, 0)\n"
    "print(ru.ru_maxrss, file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def run_rss(argv: list[str], cwd: str) -> tuple[float, int]:
    """Run ``argv``; (wall seconds, peak RSS in bytes of that process).

    ``ru_maxrss`` of a child forked from THIS process would include our own pages (Linux
    carries the pre-exec high-water mark across exec), so a tiny ``python -S`` launcher
    spawns the command and reports the ``wait4`` figure of its own child instead.
    """
    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *argv], stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, text=True, cwd=cwd)
    wall = time.perf_counter() - t0
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ...: exit {r.returncode}\n{r.stderr[-3000:]}")
    return wall, int(r.stderr.strip().splitlines()[-1]) * 1024  # KiB on Linux


# ---------------------------------------------------------------------------------------
# the benchmark
# ---------------------------------------------------------------------------------------


class Bench:
    def __init__(self, args: argparse.Namespace, tmp: Path, cli: Path, pp_py: Path | None,
                 rust_py: Path | None) -> None:
        self.args, self.tmp, self.cli = args, tmp, cli
        self.ours_py = cli.parent / "python"
        self.pp_py, self.rust_py = pp_py, rust_py
        self.cwd = str(tmp / "cwd")
        os.makedirs(self.cwd, exist_ok=True)
        self.results: dict[str, Result] = {}
        self.notes: list[str] = []
        self.inputs = [str(tmp / f"batch-{k}.parquet") for k in range(BATCHES)]
        self.read_wh: str | None = None  # the table the read cases use (written by paimon-cli)
        self.native_wh: str | None = None  # the last table pypaimon-rust wrote (interop check)
        self.checks: dict[str, dict[str, Any]] = {}
        self.rss: list[dict[str, Any]] = []
        self.jp: Any = None

    def res(self, key: str, label: str) -> Result:
        return self.results.setdefault(key, Result(key, label))

    def _wh(self, name: str) -> str:
        wh = self.tmp / "wh" / name
        if wh.exists():
            shutil.rmtree(wh)
        wh.mkdir(parents=True)
        return str(wh)

    def _create_ours(self, wh: str, extra: list[str] = ()) -> None:  # type: ignore[assignment]
        run([str(self.cli), "create", IDENT, "-w", wh, "--schema", wr_data.COLUMNS,
             "--primary-key", ",".join(wr_data.PRIMARY_KEYS), "--partition-by", ",".join(wr_data.PARTITION_KEYS),
             "--option", "bucket=4", "--option", "write-only=true", *extra], self.cwd)

    # -- inputs ---------------------------------------------------------------------------

    def generate(self) -> None:
        n = self.args.rows
        t0 = time.perf_counter()
        for k, path in enumerate(self.inputs):
            wr_data.write_parquet(wr_data.batch_table(k, n), path)
        log(f"generated {BATCHES} x {n:,} rows in {time.perf_counter() - t0:.1f} s "
            f"({sum(os.path.getsize(p) for p in self.inputs) / 1e6:.0f} MB Parquet)")

    # -- write ----------------------------------------------------------------------------

    def write_cases(self) -> None:
        R = self.args.repeat
        for i in range(R):
            log(f"write round {i + 1}/{R}")
            self._w_ours_inproc(i)
            self._w_ours_cli(i)
            if self.pp_py:
                self._w_pypaimon(i, native=False)
            if self.rust_py:
                self._w_pypaimon(i, native=True)
            if self.jp:
                self._w_java(i)

    def _w_ours_inproc(self, i: int) -> None:
        wh = self._wh("ours-inproc")
        self._create_ours(wh)
        wall, out = run([str(self.ours_py), str(BENCH_DIR / "wr_ours.py"), "write", wh, IDENT, *self.inputs], self.cwd)
        info = json.loads(out)
        self.res("w_ours_in", "ours in-process `write_table` x3 (worker)").add(info["write_s"], info)
        log(f"  ours in-process  {info['write_s']:7.2f} s  batches {_fmt_list(info['batches_s'])}")

    def _w_ours_cli(self, i: int) -> None:
        wh = self._wh("ours-cli")
        self._create_ours(wh)
        walls = []
        for f in self.inputs:
            w, _ = run([str(self.cli), "write", IDENT, f, "-w", wh], self.cwd)
            walls.append(w)
        self.res("w_ours_cli", "`paimon-cli write` x3 (wall, sum)").add(sum(walls), {"batches_s": walls})
        self.read_wh = wh
        log(f"  ours CLI         {sum(walls):7.2f} s  batches {_fmt_list(walls)}")

    def _w_pypaimon(self, i: int, native: bool) -> None:
        wh = self._wh("pp-native" if native else "pp")
        py = self.rust_py if native else self.pp_py
        argv = [str(py), str(BENCH_DIR / "wr_pypaimon.py"), "write", wh, IDENT, *self.inputs]
        if native:
            argv.append("--native")
        wall, out = run(argv, self.cwd)
        info = json.loads(out)
        key = "w_pp_native" if native else "w_pp"
        label = ("pypaimon 2.1 + pypaimon-rust writer x3 (worker)" if native
                 else "pypaimon 2.1 Python writer x3 (worker)")
        self.res(key, label).add(info["write_s"], info)
        log(f"  {key:<16} {info['write_s']:7.2f} s  batches {_fmt_list(info['batches_s'])}  {info['writer']}")
        if native:
            self.native_wh = wh

    def _w_java(self, i: int) -> None:
        import pyarrow.parquet as pq

        wh = self._wh("java")
        self.jp.create_table(wh, "bench", "t", [tuple(c.strip().split(" ", 1)) for c in wr_data.COLUMNS.split(",")],
                             primary_keys=wr_data.PRIMARY_KEYS, partition_keys=wr_data.PARTITION_KEYS,
                             options={"bucket": "4", "write-only": "true"})
        walls, convs, dumps = [], [], []
        for f in self.inputs:
            t0 = time.perf_counter()
            rows = pq.read_table(f).to_pylist()
            t1 = time.perf_counter()
            self.jp.write(wh, "bench", "t", rows)
            t2 = time.perf_counter()
            walls.append(t2 - t0)
            convs.append(t1 - t0)
            if i == 0:  # how much of the call is Python's json.dumps (measured once per batch)
                s = time.perf_counter()
                json.dumps(rows)
                dumps.append(time.perf_counter() - s)
            del rows
        info = {"batches_s": walls, "to_pylist_s": sum(convs)}
        if dumps:
            info["json_dumps_s"] = sum(dumps)
        self.res("w_java", "Java Paimon 0.9 via harness x3 (JSON rows)").add(sum(walls), info)
        log(f"  java             {sum(walls):7.2f} s  batches {_fmt_list(walls)}  to_pylist {sum(convs):.2f} s")

    # -- read -----------------------------------------------------------------------------

    def read_cases(self) -> None:
        assert self.read_wh is not None
        wh, n, R = self.read_wh, self.args.rows, self.args.repeat
        expect = wr_data.expected_keys(n, BATCHES)
        # warm-up: page cache, and one checked CLI run
        run([str(self.cli), "read", IDENT, "-w", wh, "-o", "jsonl", "--to", str(self.tmp / "out.jsonl")], self.cwd)
        lines = sum(1 for _ in open(self.tmp / "out.jsonl", "rb"))
        os.remove(self.tmp / "out.jsonl")
        self.checks["paimon-cli read -o jsonl"] = {"rows": lines, "mismatches": None if lines == expect else "count"}
        for i in range(R):
            log(f"read round {i + 1}/{R}")
            wall, out = run([str(self.ours_py), str(BENCH_DIR / "wr_ours.py"), "read", wh, IDENT, str(n),
                             str(BATCHES)], self.cwd)
            info = json.loads(out)
            self.res("r_ours_in", "ours in-process `TableRead.to_arrow` (worker)").add(info["read_s"], info)
            self._check("ours TableRead", info)
            with open(os.devnull, "w") as devnull:
                wall, _ = run([str(self.cli), "read", IDENT, "-w", wh, "-o", "jsonl"], self.cwd, stdout=devnull)
            self.res("r_ours_cli", "`paimon-cli read -o jsonl > /dev/null` (wall)").add(wall)
            wall, _ = run([str(self.cli), "read", IDENT, "-w", wh, "--to", str(self.tmp / "out.parquet")], self.cwd)
            self.res("r_ours_cli_pq", "`paimon-cli read --to out.parquet` (wall)").add(wall)
            log(f"  ours in-process {info['read_s']:.2f} s, CLI jsonl {self.results['r_ours_cli'].walls[-1]:.2f} s")
            for key, py, native in (("r_pp", self.pp_py, False), ("r_pp_native", self.rust_py, True)):
                if py is None:
                    continue
                argv = [str(py), str(BENCH_DIR / "wr_pypaimon.py"), "read", wh, IDENT, str(n), str(BATCHES)]
                if native:
                    argv.append("--native")
                wall, out = run(argv, self.cwd)
                info = json.loads(out)
                label = ("pypaimon 2.1 + pypaimon-rust reader `to_arrow` (worker)" if native
                         else "pypaimon 2.1 Python reader `to_arrow` (worker)")
                self.res(key, label).add(info["read_s"], info)
                self._check(label, info)
                log(f"  {key:<12} {info['read_s']:.2f} s")
            if self.jp:
                self._r_java(wh, n)
        self._r_ours_of_native(n)

    # -- append table reads (issue 28) -----------------------------------------------------

    def append_cases(self) -> None:
        """An append table (the same inputs, partitioned by ``dt``, ``bucket`` -1) written by
        ``paimon-cli write``; full and selective reads in process (ours, pypaimon-rust) and
        ``paimon-cli read --to x.parquet`` (wall), interleaved round by round; every reader's
        rows and id sum are compared."""
        wh = self._wh("append")
        run([str(self.cli), "create", IDENT, "-w", wh, "--schema", wr_data.COLUMNS,
             "--partition-by", ",".join(wr_data.PARTITION_KEYS), "--option", "bucket=-1"], self.cwd)
        for f in self.inputs:
            run([str(self.cli), "write", IDENT, f, "-w", wh], self.cwd)
        R = self.args.repeat
        for i in range(R):
            load = os.getloadavg()[0]
            log(f"append read round {i + 1}/{R} (load {load:.2f})")
            for name, where in (("full", []), ("sel", [APPEND_WHERE])):
                wall, out = run([str(self.ours_py), str(BENCH_DIR / "wr_ours.py"), "read-append", wh, IDENT, *where],
                                self.cwd)
                info = dict(json.loads(out), load=load)
                self.res(f"a_{name}_ours", f"ours in-process `TableRead.to_arrow`{' ' + where[0] if where else ''}"
                         ).add(info["read_s"], info)
                self.res(f"a_{name}_ours_wall", f"ours whole process{' ' + where[0] if where else ''} (wall)"
                         ).add(wall, info)
                self._check_same(f"append {name}: ours", info, name)
                if self.rust_py:
                    wall, out = run([str(self.rust_py), str(BENCH_DIR / "wr_pypaimon.py"), "read-append", wh, IDENT,
                                     *where, "--native"], self.cwd)
                    info = dict(json.loads(out), load=load)
                    self.res(f"a_{name}_rust", f"pypaimon-rust reader `to_arrow`{' ' + where[0] if where else ''}"
                             ).add(info["read_s"], info)
                    self.res(f"a_{name}_rust_wall", f"pypaimon-rust whole process{' ' + where[0] if where else ''} "
                             "(wall)").add(wall, info)
                    self._check_same(f"append {name}: pypaimon-rust", info, name)
                wall, _ = run([str(self.cli), "read", IDENT, "-w", wh, *(["--where", *where] if where else []),
                               "--to", str(self.tmp / "append-out.parquet")], self.cwd)
                self.res(f"a_{name}_cli_pq", f"`paimon-cli read{' --where ' + repr(where[0]) if where else ''} "
                         "--to out.parquet` (wall)").add(wall, {"load": load})
            log(f"  full ours {self.results['a_full_ours'].walls[-1]:.2f} s, selective ours "
                f"{self.results['a_sel_ours'].walls[-1]:.2f} s")

    def _check_same(self, who: str, info: dict[str, Any], case: str) -> None:
        """Every append reader must return the same rows (count and id sum) as the first one."""
        key = f"append {case}"
        got = {"rows": info["rows"], "id_sum": info["id_sum"]}
        first = self.checks.setdefault(key, dict(got, first=who))
        if {"rows": first["rows"], "id_sum": first["id_sum"]} != got:
            first.setdefault("mismatches", []).append(who)

    def _r_ours_of_native(self, n: int) -> None:
        """Interop: paimon-cli reads the table pypaimon-rust 0.4 wrote (its primary-key files
        have no ``_KEY_`` columns). Checked in full like every reader; timed once, not rated."""
        if self.native_wh is None:
            return
        wall, out = run([str(self.ours_py), str(BENCH_DIR / "wr_ours.py"), "read", self.native_wh, IDENT, str(n),
                         str(BATCHES)], self.cwd)
        info = json.loads(out)
        self._check("ours TableRead of the pypaimon-rust table", info)
        self.notes.append(f"paimon-cli read the table pypaimon-rust wrote in {info['read_s']:.2f} s "
                          f"({info['rows']:,} rows, {info['mismatches']} mismatches)")
        log(f"  ours reading the pypaimon-rust table {info['read_s']:.2f} s")

    def _r_java(self, wh: str, n: int) -> None:
        import pyarrow as pa

        t0 = time.perf_counter()
        raw = self.jp.read_raw(wh, "bench", "t")
        wall = time.perf_counter() - t0
        cols = raw["columns"]
        rows = raw["rows"]
        table = pa.Table.from_arrays([pa.array(list(c)) for c in zip(*rows, strict=True)], names=cols) if rows else None
        info = {"rows": len(rows)}
        if table is not None:
            info.update(wr_data.check_merged(table, n, BATCHES))
        del raw, rows, table
        self.res("r_java", "Java Paimon 0.9 read via harness (JSON rows)").add(wall, info)
        self._check("Java 0.9 read", info)
        log(f"  java         {wall:.2f} s")

    def _check(self, who: str, info: dict[str, Any]) -> None:
        expect = wr_data.expected_keys(self.args.rows, BATCHES)
        self.checks[who] = {k: info.get(k) for k in ("rows", "mismatches", "digest")}
        if info.get("rows") != expect or info.get("mismatches"):
            raise SystemExit(f"{who}: wrong result {info} (expected {expect} rows, 0 mismatches)")

    # -- memory ---------------------------------------------------------------------------

    def rss_cases(self) -> None:
        n = self.args.rows
        for mult in self.args.rss_multiples:
            rows = mult * n
            path = str(self.tmp / f"rss-{mult}.parquet")
            wr_data.write_big_parquet(path, rows)
            for buf in self.args.rss_buffers:
                wh = self._wh(f"rss-{mult}-{buf}")
                self._create_ours(wh)
                wall, rss = run_rss([str(self.cli), "write", IDENT, path, "-w", wh, "--option",
                                     f"write-buffer-size={buf}"], self.cwd)
                files = sum(1 for _ in Path(wh).rglob("data-*"))
                self.rss.append({"rows": rows, "buffer": buf, "rss_mb": rss / 2**20, "wall_s": wall,
                                 "files": files, "input_mb": os.path.getsize(path) / 1e6})
                log(f"  rss {rows:>10,} rows  buffer {buf:<6} peak {rss / 2**20:7.0f} MiB  {wall:6.2f} s  "
                    f"{files} files")
            os.remove(path)
        # the floor: interpreter + imports of the CLI with nothing to write
        _, floor = run_rss([str(self.cli), "--version"], self.cwd)
        self.rss_floor = floor / 2**20


def _fmt_list(xs: list[float]) -> str:
    return " ".join(f"{x:.2f}" for x in xs)


# ---------------------------------------------------------------------------------------
# report
# ---------------------------------------------------------------------------------------


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.2f}"


def report(b: Bench, info: dict[str, Any]) -> str:
    a, R = b.args, b.results
    L: list[str] = []
    L.append(f"Date: {info['date']}  ")
    L.append(f"Machine: {info['cpu']}, {info['cores']} cores, {info['memory']} RAM, {info['os']}  ")
    L.append(f"Python {info['python']}; pypaimon {PYPAIMON_VERSION} ({b.pp_py}); pypaimon-rust "
             f"{PYPAIMON_RUST_VERSION if b.rust_py else 'not used'} ({b.rust_py}); Java Paimon 0.9 "
             f"{'via tests/interop/java_harness.py' if b.jp else 'not used'}  ")
    L.append(f"Load average at start: {info['loadavg']}; at end: {info['loadavg_end']}  ")
    L.append(f"Data: {BATCHES} batches x {a.rows:,} rows, 50 % key overlap, PK (dt, id), 4 partitions x "
             f"4 buckets, write-only=true; {wr_data.expected_keys(a.rows, BATCHES):,} keys after merge. "
             f"{a.repeat} timed rounds per case.")
    L.append("")
    L.append("### Write (3 commits; seconds for all three)")
    L.append("")
    L.append("| case | best (s) | median (s) | per batch, median run (s) |")
    L.append("|---|---:|---:|---|")
    for key in ("w_ours_in", "w_ours_cli", "w_pp", "w_pp_native", "w_java"):
        if key in R:
            r = R[key]
            mid = sorted(range(len(r.walls)), key=lambda j: r.walls[j])[len(r.walls) // 2]
            L.append(f"| {r.label} | {_s(r.best)} | {_s(r.median)} | {_fmt_list(r.infos[mid].get('batches_s', []))} |")
    if "w_java" in R:
        j = R["w_java"]
        L.append("")
        L.append(f"Java: `to_pylist` of the Parquet batches {_s(j.stat('to_pylist_s')[1])} s (median) and "
                 f"`json.dumps` of the rows {_s(j.stat('json_dumps_s')[1]) if j.stat('json_dumps_s') else '-'} s "
                 "(measured once) are inside the Java figure; the helper has no in-JVM timer, so "
                 "Java-side JSON parsing cannot be separated.")
    L.append("")
    L.append("### Read (merged, the table `paimon-cli write` produced)")
    L.append("")
    L.append("| case | best (s) | median (s) |")
    L.append("|---|---:|---:|")
    for key in ("r_ours_in", "r_ours_cli", "r_ours_cli_pq", "r_pp", "r_pp_native", "r_java"):
        if key in R:
            r = R[key]
            L.append(f"| {r.label} | {_s(r.best)} | {_s(r.median)} |")
    L.append("")
    L.append("Result checks (every reader, full comparison against the expected merge):")
    L.append("")
    for who, c in b.checks.items():
        L.append(f"- {who}: {c}")
    L.append("")
    L.append("### Ratios (peer / ours, medians; > 1 means paimon-cli is faster)")
    L.append("")
    L.append("| comparison | ours (s) | peer (s) | speed-up | goal |")
    L.append("|---|---:|---:|---:|---|")

    def ratio(ours_key: str, peer_key: str, label: str, goal: float | None) -> None:
        if ours_key in R and peer_key in R:
            o, p = R[ours_key].median, R[peer_key].median
            g = "-" if goal is None else f">= {goal:g}x: **{'MET' if p / o >= goal else 'MISSED'}**"
            L.append(f"| {label} | {_s(o)} | {_s(p)} | {p / o:.2f}x | {g} |")

    ratio("w_ours_in", "w_pp", "write, in-process vs pypaimon Python writer", GOALS["write_vs_pp"])
    ratio("w_ours_cli", "w_pp", "write, CLI wall vs pypaimon Python writer", None)
    ratio("w_ours_in", "w_pp_native", "write, in-process vs pypaimon-rust writer", GOALS["write_vs_native"])
    ratio("w_ours_cli", "w_pp_native", "write, CLI wall vs pypaimon-rust writer", None)
    ratio("w_ours_in", "w_java", "write, in-process vs Java 0.9 (JSON incl.)", None)
    ratio("r_ours_in", "r_pp", "read, in-process vs pypaimon Python reader", GOALS["read_vs_pp"])
    ratio("r_ours_cli", "r_pp", "read, CLI jsonl wall vs pypaimon Python reader", None)
    ratio("r_ours_in", "r_pp_native", "read, in-process vs pypaimon-rust reader", None)
    ratio("r_ours_in", "r_java", "read, in-process vs Java 0.9 (JSON incl.)", None)
    if "a_full_ours" in R:
        L.append("")
        L.append(f"### Append table reads ({BATCHES} x {a.rows:,} rows, partitioned by dt, bucket -1; medians "
                 f"of {a.repeat} interleaved rounds)")
        L.append("")
        L.append("| case | median (s) | runs (s) | load avg (1 min) per run |")
        L.append("|---|---:|---|---|")
        for key in ("a_full_ours", "a_full_rust", "a_full_ours_wall", "a_full_rust_wall", "a_full_cli_pq",
                    "a_sel_ours", "a_sel_rust", "a_sel_ours_wall", "a_sel_rust_wall", "a_sel_cli_pq"):
            if key in R:
                r = R[key]
                L.append(f"| {r.label} | {_s(r.median)} | {_fmt_list(r.walls)} | "
                         f"{', '.join(f'{x:.2f}' for x in r.field('load'))} |")
        L.append("")
        L.append("| comparison (peer / ours, medians) | ours (s) | peer (s) | speed-up | goal |")
        L.append("|---|---:|---:|---:|---|")
        ratio("a_full_ours", "a_full_rust", "append full read, in-process vs pypaimon-rust", 1.0)
        ratio("a_full_ours_wall", "a_full_rust_wall", "append full read, whole process vs pypaimon-rust", 1.0)
        ratio("a_sel_ours", "a_sel_rust", f"append `{APPEND_WHERE}`, in-process vs pypaimon-rust", 1.0)
        ratio("a_sel_ours_wall", "a_sel_rust_wall", f"append `{APPEND_WHERE}`, whole process vs pypaimon-rust", 1.0)
    if b.rss:
        L.append("")
        L.append("### Peak RSS of `paimon-cli write` (one input file, one commit)")
        L.append("")
        L.append(f"`paimon-cli --version` alone: {b.rss_floor:.0f} MiB.")
        L.append("")
        L.append("| input rows | Parquet (MB) | write-buffer-size | peak RSS (MiB) | wall (s) | data files |")
        L.append("|---:|---:|---|---:|---:|---:|")
        for r in b.rss:
            L.append(f"| {r['rows']:,} | {r['input_mb']:.0f} | {r['buffer']} | {r['rss_mb']:.0f} | "
                     f"{r['wall_s']:.2f} | {r['files']} |")
    if b.notes:
        L.append("")
        L.extend(f"- {n}" for n in b.notes)
    return "\n".join(L) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=1_000_000, help="rows per batch (default 1,000,000)")
    ap.add_argument("--repeat", type=int, default=3, help="timed rounds per case (default 3)")
    ap.add_argument("--only", nargs="*", choices=["write", "read", "rss", "append"],
                    default=["write", "read", "rss"])
    ap.add_argument("--no-java", action="store_true", help="skip Java Paimon 0.9")
    ap.add_argument("--no-native", action="store_true", help="skip pypaimon-rust")
    ap.add_argument("--rss-multiples", type=int, nargs="*", default=[1, 3, 6],
                    help="RSS inputs as multiples of --rows (default 1 3 6)")
    ap.add_argument("--rss-buffers", nargs="*", default=["64mb"], help="write-buffer-size values (default 64mb)")
    ap.add_argument("--java-opts", default="-Xmx6g", help="JVM options for the harness (default -Xmx6g)")
    ap.add_argument("--cli", help="paimon-cli executable (default: .venv/bin/paimon-cli of this checkout)")
    ap.add_argument("--pypaimon-python", help="python of a venv with pypaimon 2.1")
    ap.add_argument("--pypaimon-rust-python", help="python of a venv with pypaimon 2.1 + pypaimon-rust")
    ap.add_argument("--create-venv", action="store_true", help="create missing pypaimon venvs under ~/.cache")
    ap.add_argument("--tmp", help="work dir (default: a new temp dir, deleted at the end)")
    ap.add_argument("--keep", action="store_true", help="keep the work dir")
    ap.add_argument("--save", help="write raw timings as JSON to this file")
    args = ap.parse_args(argv)

    cli = Path(args.cli) if args.cli else REPO / ".venv" / "bin" / "paimon-cli"
    if not cli.exists():
        found = shutil.which("paimon-cli")
        if not found:
            raise SystemExit("paimon-cli not found; pass --cli")
        cli = Path(found)
    pp_py = find_venv(args.pypaimon_python, PP_VENVS, {"pypaimon": PYPAIMON_VERSION}, args.create_venv)
    if pp_py is None:
        log("pypaimon 2.1 venv not found (pass --pypaimon-python or --create-venv): skipping pypaimon")
    rust_py = None if args.no_native else find_venv(
        args.pypaimon_rust_python, PP_RUST_VENVS,
        {"pypaimon": PYPAIMON_VERSION, "pypaimon-rust": PYPAIMON_RUST_VERSION}, args.create_venv)
    if rust_py is None and not args.no_native:
        log("pypaimon-rust venv not found (pass --pypaimon-rust-python or --create-venv): skipping native")

    tmp = Path(args.tmp) if args.tmp else Path(tempfile.mkdtemp(prefix="paimon-bench-wr-"))
    tmp.mkdir(parents=True, exist_ok=True)
    info = machine_info()
    b = Bench(args, tmp, cli, pp_py, rust_py)
    try:
        if not args.no_java and ("write" in args.only or "read" in args.only):
            from tests.interop.java_harness import JavaPaimon

            t0 = time.perf_counter()
            b.jp = JavaPaimon.start(log_path=tmp / "jvm.log", temp_dir=tmp / "java-io",
                                    java_opts=args.java_opts.split())
            log(f"JVM up in {time.perf_counter() - t0:.1f} s")
        b.generate()
        if "write" in args.only or "read" in args.only:
            b.write_cases() if "write" in args.only else b._w_ours_cli(0)
        if "read" in args.only:
            b.read_cases()
        if "append" in args.only:
            b.append_cases()
        if "rss" in args.only:
            log("peak RSS")
            b.rss_cases()
    finally:
        if b.jp:
            b.jp.close()
        if not args.keep and not args.tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    info["loadavg_end"] = " ".join(f"{x:.2f}" for x in os.getloadavg())
    if args.save:
        Path(args.save).write_text(json.dumps({
            "machine": info, "args": vars(args),
            "results": {k: {"label": r.label, "walls": r.walls, "infos": r.infos} for k, r in b.results.items()},
            "checks": b.checks, "rss": b.rss,
        }, indent=2, default=str))
    print(report(b, info))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
