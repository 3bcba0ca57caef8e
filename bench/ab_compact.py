"""Interleaved A/B of ``paimon-cli compact --full`` against an older commit (run by hand).

    .venv/bin/python bench/ab_compact.py WH ROUNDS OUT.json [BEFORE_COMMIT]

``WH`` is a warehouse holding ``bench.t`` (e.g. ``bench_compact.py --keep`` leaves one in
``WORK/speed-base/wh``). The BEFORE tree is ``git archive``d into a temp dir and run in this
venv by a loader that drops the editable install's finder (as ``ab_append_read.py``). Per
round each side compacts a fresh ``cp -r`` copy; wall seconds, the child's CPU seconds
(user + sys from ``os.wait4``, so a shared machine's load shows less), its peak RSS and the
1-minute load are recorded. Check: the data files each side wrote are byte-identical (sorted SHA-256 of
the new files; names differ by uuid only), so not a single output row or encoding changed.
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

LOADER = '''import sys
sys.meta_path = [f for f in sys.meta_path if "editable" not in (getattr(f, "__module__", "") + repr(f)).lower()]
sys.path.insert(0, "@VIEW@")
for k in [m for m in sys.modules if m.startswith("paimon_cli")]:
    del sys.modules[k]
sys.argv = ["paimon-cli", *sys.argv[1:]]
from paimon_cli.__main__ import main
sys.exit(main())
'''


def data_files(wh: pathlib.Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in (wh / "bench.db" / "t").rglob("data-*")}


def main() -> None:
    src = pathlib.Path(sys.argv[1])
    rounds = int(sys.argv[2])
    out = sys.argv[3]
    before = sys.argv[4] if len(sys.argv) > 4 else "main"
    repo = pathlib.Path(__file__).resolve().parent.parent
    root = pathlib.Path(tempfile.mkdtemp(prefix="ab-compact-"))
    subprocess.run(f"git -C {repo} archive {before} core commands paimon_cli | tar -x -C {root}",
                   shell=True, check=True)
    view = root / "view" / "paimon_cli"
    view.mkdir(parents=True)
    for f in (root / "paimon_cli").glob("*.py"):
        (view / f.name).symlink_to(f)
    (view / "core").symlink_to(root / "core")
    (view / "commands").symlink_to(root / "commands")
    (root / "run.py").write_text(LOADER.replace("@VIEW@", str(root / "view")))
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(root)], check=True)  # both sides start from .pyc
    py = sys.executable
    sides = {"after": [py, "-m", "paimon_cli"], "before": [py, str(root / "run.py")]}
    base = data_files(src)
    res: dict[str, dict[str, list]] = {k: {"wall": [], "cpu": [], "rss_mib": [], "load": []} for k in sides}
    new_files: dict[str, list[str]] = {}
    work = pathlib.Path(tempfile.mkdtemp(prefix="ab-compact-wh-"))
    try:
        for r in range(rounds):
            order = list(sides) if r % 2 == 0 else list(reversed(sides))
            for k in order:
                wh = work / k
                if wh.exists():
                    shutil.rmtree(wh)
                subprocess.run(["cp", "-r", str(src), str(wh)], check=True)
                load = os.getloadavg()[0]
                argv = [*sides[k], "compact", "bench.t", "--full", "-w", str(wh), "-o", "json"]
                t = time.perf_counter()
                proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd="/tmp")
                _, status, ru = os.wait4(proc.pid, 0)
                wall = time.perf_counter() - t
                stdout = proc.stdout.read().decode() if proc.stdout else ""
                proc.returncode = os.waitstatus_to_exitcode(status)
                assert proc.returncode == 0, (k, proc.stderr.read().decode()[-2000:] if proc.stderr else "")
                assert json.loads(stdout)[0]["commit_kind"] == "COMPACT"
                res[k]["wall"].append(wall)
                res[k]["cpu"].append(ru.ru_utime + ru.ru_stime)
                res[k]["rss_mib"].append(ru.ru_maxrss / 1024)  # this parent is small: no shared pages
                res[k]["load"].append(load)
                files = data_files(wh)
                new_files[k] = sorted(h for n, h in files.items() if n not in base)
            assert new_files["after"] == new_files["before"], "compacted data files differ"
            print(f"round {r + 1}: " + ", ".join(f"{k} {res[k]['wall'][-1]:.2f} s (cpu {res[k]['cpu'][-1]:.2f})"
                                                 for k in sides) + f", load {os.getloadavg()[0]:.2f}",
                  file=sys.stderr, flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
        shutil.rmtree(root, ignore_errors=True)
    med = statistics.median
    summary = {k: {"wall_median": med(v["wall"]), "cpu_median": med(v["cpu"]), **v} for k, v in res.items()}
    summary["_check"] = {"new_data_files_identical": True, "files": len(new_files["after"]), "before": before}
    json.dump(summary, open(out, "w"), indent=1)
    for k in sides:
        print(f"{k:7s} wall median {summary[k]['wall_median']:.3f} cpu median {summary[k]['cpu_median']:.3f} "
              f"peak RSS median {med(res[k]['rss_mib']):.0f} MiB load {[round(x, 2) for x in res[k]['load']]}")
    print(f"after/before: wall {summary['after']['wall_median'] / summary['before']['wall_median']:.3f}, "
          f"cpu {summary['after']['cpu_median'] / summary['before']['cpu_median']:.3f}")


if __name__ == "__main__":
    main()
