"""Append-table reads of this checkout against an earlier commit, interleaved, with pypaimon-rust.

Usage (after ``bench_write_read.py --only append --tmp DIR`` built the table)::

    .venv/bin/python bench/ab_append_read.py DIR/wh/append ROUNDS OUT.json [BEFORE_COMMIT]

The earlier commit (default ``ef506ad``, main before issue 28's read work) is exported with
``git archive`` into a temp dir and run by a small loader that drops the editable install's
finder, so both trees run in this venv. Per round: full, ``id < 30000`` and ``qty = 5`` (a
needle: 3 rows) reads in process
(worker ``wr_ours.py`` / ``wr_pypaimon.py``) and ``read --to x.parquet`` (wall); the two
trees' exports must be byte-identical and every reader's rows and id sum equal.
"""
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

W = sys.argv[1]; R = int(sys.argv[2]); OUT = sys.argv[3]
LOADER = 'import runpy, sys\nsys.meta_path = [f for f in sys.meta_path if "editable" not in (getattr(f, "__module__", "") + repr(f)).lower()]\nsys.path.insert(0, "/tmp/i28-before/view")\nfor k in [m for m in sys.modules if m.startswith("paimon_cli")]:\n    del sys.modules[k]\nscript = sys.argv[1]\nsys.argv = sys.argv[1:]\nif script == "cli":\n    from paimon_cli.__main__ import main\n    sys.argv[0] = "paimon-cli"\n    sys.exit(main())\nelse:\n    runpy.run_path(script, run_name="__main__")\n'

_before = sys.argv[4] if len(sys.argv) > 4 else "ef506ad"
_root = pathlib.Path(tempfile.mkdtemp(prefix="ab-before-"))
_repo = pathlib.Path(__file__).resolve().parent.parent
subprocess.run(f"git -C {_repo} archive {_before} core commands paimon_cli | tar -x -C {_root}", shell=True, check=True)
(_root / "view" / "paimon_cli").mkdir(parents=True)
for f in (_root / "paimon_cli").glob("*.py"):
    (_root / "view" / "paimon_cli" / f.name).symlink_to(f)
(_root / "view" / "paimon_cli" / "core").symlink_to(_root / "core")
(_root / "view" / "paimon_cli" / "commands").symlink_to(_root / "commands")
(_root / "run.py").write_text(LOADER.replace("/tmp/i28-before", str(_root)))
BEF = str(_root / "run.py")
PY = str(pathlib.Path(__file__).resolve().parent.parent / ".venv/bin/python"); RUST = os.path.expanduser("~/.cache/paimon-cli-tests/pypaimon-2.1.0-rust-venv/bin/python")
B = str(pathlib.Path(__file__).resolve().parent)
SEL = "id < 30000"
NEEDLE = "qty = 5"  # 3 rows; qty's min/max span every row group, so only the probe can skip
cases = {
 "after full":  [PY, f"{B}/wr_ours.py", "read-append", W, "bench.t"],
 "before full": [PY, BEF, f"{B}/wr_ours.py", "read-append", W, "bench.t"],
 "rust full":   [RUST, f"{B}/wr_pypaimon.py", "read-append", W, "bench.t", "--native"],
 "after sel":   [PY, f"{B}/wr_ours.py", "read-append", W, "bench.t", SEL],
 "before sel":  [PY, BEF, f"{B}/wr_ours.py", "read-append", W, "bench.t", SEL],
 "rust sel":    [RUST, f"{B}/wr_pypaimon.py", "read-append", W, "bench.t", SEL, "--native"],
 "after needle":  [PY, f"{B}/wr_ours.py", "read-append", W, "bench.t", NEEDLE],
 "before needle": [PY, BEF, f"{B}/wr_ours.py", "read-append", W, "bench.t", NEEDLE],
 "rust needle":   [RUST, f"{B}/wr_pypaimon.py", "read-append", W, "bench.t", NEEDLE, "--native"],
 "after --to":  [PY.replace("python", "paimon-cli"), "read", "bench.t", "-w", W, "--to", "/tmp/i28cmp-a.parquet"],
 "before --to": [PY, BEF, "cli", "read", "bench.t", "-w", W, "--to", "/tmp/i28cmp-b.parquet"],
 "after --to sel":  [PY.replace("python", "paimon-cli"), "read", "bench.t", "-w", W, "--where", SEL, "--to", "/tmp/i28cmp-a2.parquet"],
 "before --to sel": [PY, BEF, "cli", "read", "bench.t", "-w", W, "--where", SEL, "--to", "/tmp/i28cmp-b2.parquet"],
}
res = {k: {"in": [], "wall": [], "load": [], "check": set()} for k in cases}
for r in range(R):
    for k, argv in cases.items():
        load = os.getloadavg()[0]
        t = time.perf_counter(); p = subprocess.run(argv, capture_output=True, text=True, cwd="/tmp"); wall = time.perf_counter() - t
        assert p.returncode == 0, (k, p.stderr[-2000:])
        res[k]["wall"].append(wall); res[k]["load"].append(load)
        if p.stdout.startswith("{"):
            info = json.loads(p.stdout); res[k]["in"].append(info["read_s"]); res[k]["check"].add((info["rows"], info["id_sum"]))
    print(f"round {r+1} done, load {os.getloadavg()[0]:.2f}", file=sys.stderr, flush=True)
import pyarrow.parquet as pq

for a, b in (("/tmp/i28cmp-a.parquet", "/tmp/i28cmp-b.parquet"), ("/tmp/i28cmp-a2.parquet", "/tmp/i28cmp-b2.parquet")):
    ta, tb = pq.read_table(a), pq.read_table(b)
    res.setdefault("_checks", []).append({"files": [a, b], "rows_equal_in_order": ta.equals(tb), "bytes_equal": open(a, "rb").read() == open(b, "rb").read(), "rows": ta.num_rows})
out = {k: ({kk: (sorted(vv) if kk == "check" else vv) for kk, vv in v.items()} if isinstance(v, dict) else v) for k, v in res.items()}
json.dump(out, open(OUT, "w"), indent=1, default=list)
med = lambda xs: statistics.median(xs) if xs else None
for k, v in res.items():
    if k.startswith("_"): print(k, v); continue
    print(f"{k:16s} in-process median {med(v['in']) or 0:.3f} runs {[round(x,2) for x in v['in']]} | wall median {med(v['wall']):.3f} runs {[round(x,2) for x in v['wall']]} | load {[round(x,2) for x in v['load']]} | {sorted(v['check'])}")
