"""Merged primary-key read in process: this checkout against an earlier commit and pypaimon-rust,
interleaved (issue 28, "merged read >= 1.2x pypaimon-rust, in process").

Usage (the table of ``bench_pk_rust.py --only read --tmp DIR``: 3 commits of ``--rows``
rows, 50 % key overlap, PK ``(dt, id)``, 4 partitions x 4 buckets, ``write-only``)::

    .venv/bin/python bench/ab_pk_read.py DIR/wh/cli-after [--rounds 9] [--before main] [--rows 1000000] [--save out.json]

The earlier commit is exported with ``git archive`` and run by the loader of
``bench_pk_rust.py`` in this venv. Each round runs, in turn, ``wr_ours.py read`` (after, before)
and ``wr_pypaimon.py read --native`` (pypaimon-rust), each a fresh process, as
``bench_pk_rust.py`` does, the order rotated every round (a process right after pypaimon-rust's
660 MiB one reads slower: the kernel is still handing back and compacting pages); per case the in-process read seconds, the process's CPU seconds
(user + system, children included) and peak RSS, and the 1-minute load average before it.
Checks first: both trees return the same table (``Table.equals``: rows, columns, types and
row order), and every timed run holds the expected merge (``wr_data.check_merged``), with
one digest across all readers. Markdown on stdout.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

from bench_pk_rust import IDENT, OURS_PY, RUST_PY, before_tree  # noqa: E402

# spawns argv, passes its stdout through, reports peak RSS (KiB), user and system CPU s on stderr's last line
_LAUNCHER = (
    "import os, sys\n"
    "pid = os.posix_spawn(sys.argv[1], sys.argv[1:], os.environ)\n"
    "_, status, ru = os.wait4(pid, 0)\n"
    "print(ru.ru_maxrss, ru.ru_utime, ru.ru_stime, file=sys.stderr)\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)

# the whole result of TableRead.to_arrow, in its order, as Arrow IPC (for the equality check)
_DUMP = (
    "import sys, pyarrow as pa\n"
    "from paimon_cli.core.catalog.filesystem import FileSystemCatalog\n"
    "from paimon_cli.core.operation.read import TableRead\n"
    "t = TableRead(FileSystemCatalog(sys.argv[1]).get_table(sys.argv[2])).to_arrow()\n"
    "with pa.OSFile(sys.argv[3], 'wb') as f, pa.ipc.new_file(f, t.schema) as w:\n"
    "    w.write_table(t)\n"
)


def run(argv: list[str]) -> tuple[dict[str, object], float, float, float]:
    r = subprocess.run([sys.executable, "-S", "-c", _LAUNCHER, *argv], capture_output=True, text=True, cwd="/tmp")
    if r.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} ...: exit {r.returncode}\n{r.stderr[-3000:]}")
    rss, user, system = r.stderr.strip().splitlines()[-1].split()
    return json.loads(r.stdout), int(rss) / 1024, float(user), float(system)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("warehouse")
    ap.add_argument("--rounds", type=int, default=9)
    ap.add_argument("--before", default="main")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--save")
    args = ap.parse_args()
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    bef = before_tree(args.before)
    wh, n = args.warehouse, str(args.rows)
    worker = str(BENCH_DIR / "wr_ours.py")
    cases = {
        "after": [str(OURS_PY), worker, "read", wh, IDENT, n, "3"],
        "before": [str(OURS_PY), str(bef / "run.py"), worker, "read", wh, IDENT, n, "3"],
        "rust": [str(RUST_PY), str(BENCH_DIR / "wr_pypaimon.py"), "read", wh, IDENT, n, "3", "--native"],
    }
    import pyarrow as pa

    dumps = {}
    for who, argv in (("after", [str(OURS_PY)]), ("before", [str(OURS_PY), str(bef / "run.py")])):
        out = str(bef / f"{who}.arrow")
        script = bef / "dump.py"
        script.write_text(_DUMP)
        subprocess.run([*argv, str(script), wh, IDENT, out], check=True, cwd="/tmp")
        with pa.memory_map(out) as f:
            dumps[who] = pa.ipc.open_file(f).read_all()
    if not dumps["after"].equals(dumps["before"], check_metadata=True):
        raise SystemExit("after and before return different tables (rows, columns, types or order)")
    print(f"check: after == before ({dumps['after'].num_rows} rows, same order and schema)", file=sys.stderr)
    del dumps

    res: dict[str, dict[str, list[float]]] = {
        k: {"read_s": [], "cpu_s": [], "user_s": [], "sys_s": [], "rss_mib": [], "load": []} for k in cases}
    digests = set()
    names = list(cases)
    for r in range(args.rounds):
        for who in names[r % 3:] + names[:r % 3]:
            argv = cases[who]
            load = os.getloadavg()[0]
            info, rss, user, system = run(argv)
            if info["mismatches"] or info["rows"] != 2 * args.rows:
                raise SystemExit(f"{who}: wrong result {info}")
            digests.add(info["digest"])
            for k, v in (("read_s", info["read_s"]), ("cpu_s", user + system), ("user_s", user), ("sys_s", system),
                         ("rss_mib", rss), ("load", load)):
                res[who][k].append(float(v))  # type: ignore[arg-type]
        print(f"round {r + 1}: " + ", ".join(f"{w} {res[w]['read_s'][-1]:.3f} s" for w in cases), file=sys.stderr)
    if len(digests) != 1:
        raise SystemExit(f"readers disagree: digests {digests}")
    med = {w: {k: statistics.median(v) for k, v in d.items()} for w, d in res.items()}
    print(f"| case ({args.rounds} rounds, interleaved) | read s (median) | min | process CPU s (user + sys) "
          "| peak RSS MiB | load |")
    print("|---|---:|---:|---:|---:|---:|")
    for w in cases:
        m = med[w]
        print(f"| {w} | {m['read_s']:.3f} | {min(res[w]['read_s']):.3f} | {m['cpu_s']:.2f} ({m['user_s']:.2f} + "
              f"{m['sys_s']:.2f}) | {m['rss_mib']:.0f} "
              f"| {m['load']:.2f} |")
    print()
    print(f"- rust / after: {med['rust']['read_s'] / med['after']['read_s']:.2f}x "
          f"(before: {med['rust']['read_s'] / med['before']['read_s']:.2f}x); "
          f"before / after: {med['before']['read_s'] / med['after']['read_s']:.2f}x read, "
          f"{med['before']['cpu_s'] / med['after']['cpu_s']:.2f}x process CPU")
    ratios = [b / a for a, b in zip(res["after"]["read_s"], res["before"]["read_s"], strict=True)]
    print(f"- per-round before / after read: median {statistics.median(ratios):.2f}x")
    if args.save:
        Path(args.save).write_text(json.dumps(res, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
