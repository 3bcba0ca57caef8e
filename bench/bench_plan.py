"""Time planning the live files of a big table: today's object path, the columnar path and
pypaimon 2.1's ``$files``, in one run.

Run by hand (not part of pytest), after ``bench/make_tables.py --only files1m``::

    .venv/bin/python bench/bench_plan.py --warehouse /tmp/benchwh [--table bench.files1m]

Every method runs in its own process, one after the other (never two at once: the 1M-file
plans take gigabytes); the parent measures the process's wall time and peak RSS
(``os.wait4``), the worker its in-process plan time (after imports). Methods:

``objects_main``  the planning path before the columnar one (``FileStoreScan.plan`` on main):
    fastavro ``ManifestFile.read`` of every manifest into ``ManifestEntry`` objects, then
    ``merge_entries``.
``plan_table``  ``FileStoreScan.plan_table``: polars-avro into Arrow, vectorised merge.
``plan_objects``  ``FileStoreScan.plan`` now: ``plan_table`` then ``entries_from_table``.
``pypaimon_files``  pypaimon 2.1 ``catalog.get_table("db.t$files")`` -> read builder -> Arrow.

Every worker reports the live-file count and a digest of the sorted file names, so the
methods are checked to agree. Prints a Markdown report on stdout (progress on stderr).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
CACHE = Path(os.environ.get("PAIMON_CLI_TEST_CACHE", Path.home() / ".cache" / "paimon-cli-tests"))
PYPAIMON_PYTHON = CACHE / "pypaimon-2.1.0-venv" / "bin" / "python"  # the interop tests' pypaimon 2.1 venv
METHODS = ("objects_main", "plan_table", "plan_objects", "pypaimon_files")


def _digest(names: list[str]) -> str:
    return hashlib.sha1("\n".join(sorted(names)).encode()).hexdigest()[:12]


# ---------------------------------------------------------------------------------------
# workers (each prints one JSON line)
# ---------------------------------------------------------------------------------------


def _ours(method: str, warehouse: str, ident: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.manifest.expire_file_entry import merge_entries
    from paimon_cli.core.manifest.manifest import ManifestFile
    from paimon_cli.core.operation.scan import FileStoreScan

    table = FileSystemCatalog(warehouse).get_table(ident)
    scan = FileStoreScan(table)
    snapshot = table.snapshot_manager.latest_snapshot()
    t1, c1 = time.perf_counter(), time.process_time()
    if method == "objects_main":  # FileStoreScan.plan as main has it
        mf = ManifestFile(scan.file_io, scan.manifest_dir, table.schema.logical_partition_type)
        live = merge_entries([e for m in scan.data_manifests(snapshot) for e in mf.read(m.file_name)])
        names = [e.file.file_name for e in live]
    elif method == "plan_table":
        arrow = scan.plan_table(snapshot)
        names = arrow.column("_FILE_NAME").to_pylist()
    else:
        names = [e.file.file_name for e in scan.plan(snapshot)]
    t2, c2 = time.perf_counter(), time.process_time()
    return {"rows": len(names), "digest": _digest(names), "import_s": t1 - t0, "plan_s": t2 - t1,
            "plan_cpu_s": c2 - c1}


def _pypaimon(warehouse: str, ident: str) -> dict[str, Any]:
    t0 = time.perf_counter()
    from pypaimon import CatalogFactory

    t1, c1 = time.perf_counter(), time.process_time()
    table = CatalogFactory.create({"warehouse": warehouse}).get_table(f"{ident}$files")
    rb = table.new_read_builder()
    arrow = rb.new_read().to_arrow(rb.new_scan().plan().splits())
    t2, c2 = time.perf_counter(), time.process_time()
    names = [p.rsplit("/", 1)[-1] for p in arrow.column("file_path").to_pylist()]
    return {"rows": arrow.num_rows, "digest": _digest(names), "import_s": t1 - t0, "plan_s": t2 - t1,
            "plan_cpu_s": c2 - c1}


# ---------------------------------------------------------------------------------------
# parent
# ---------------------------------------------------------------------------------------


def _run(method: str, args: argparse.Namespace) -> dict[str, Any]:
    python = args.pypaimon_python if method == "pypaimon_files" else sys.executable
    argv = [str(python), str(Path(__file__).resolve()), "--worker", method, "--warehouse", args.warehouse,
            "--table", args.table]
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, cwd=BENCH_DIR.parent)
    assert proc.stdout is not None
    out = proc.stdout.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{method} failed (exit {proc.returncode})")
    res: dict[str, Any] = json.loads(out.decode().strip().splitlines()[-1])
    res.update(method=method, wall_s=wall, cpu_s=usage.ru_utime + usage.ru_stime, rss_mib=usage.ru_maxrss / 1024)
    return res


def _report(results: list[dict[str, Any]], args: argparse.Namespace) -> str:
    by = {r["method"]: r for r in results}
    lines = [f"Table `{args.table}` in `{args.warehouse}`; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, "
             f"{os.cpu_count()} cores, one run, methods run one after the other. `plan` = the planning call "
             "after imports (wall and CPU seconds of the process); `process` = the whole worker process.", "",
             "| method | live files | name digest | plan wall s | plan CPU s | process wall s | process CPU s "
             "| peak RSS MiB |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        lines.append(f"| {r['method']} | {r['rows']:,} | {r['digest']} | {r['plan_s']:.2f} | {r['plan_cpu_s']:.2f} "
                     f"| {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['rss_mib']:.0f} |")
    if "plan_table" in by:
        lines.append("")
        new = by["plan_table"]
        for peer in ("objects_main", "pypaimon_files", "plan_objects"):
            if peer in by:
                p = by[peer]
                lines.append(f"- {peer} / plan_table: plan wall {p['plan_s'] / new['plan_s']:.1f}x, plan CPU "
                             f"{p['plan_cpu_s'] / new['plan_cpu_s']:.1f}x, process wall {p['wall_s'] / new['wall_s']:.1f}x,"
                             f" process CPU {p['cpu_s'] / new['cpu_s']:.1f}x")
    digests = {r["digest"] for r in results}
    lines.append(f"- all methods agree on the live files: {'yes' if len(digests) == 1 else 'NO'}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", default="bench.files1m")
    ap.add_argument("--methods", nargs="+", choices=METHODS, default=list(METHODS))
    ap.add_argument("--pypaimon-python", default=str(PYPAIMON_PYTHON))
    ap.add_argument("--worker", choices=METHODS, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        res = (_pypaimon(args.warehouse, args.table) if args.worker == "pypaimon_files"
               else _ours(args.worker, args.warehouse, args.table))
        print(json.dumps(res))
        return 0
    args.warehouse = str(Path(args.warehouse).resolve())
    results = []
    for method in args.methods:
        print(f"running {method} ...", file=sys.stderr, flush=True)
        results.append(_run(method, args))
        print(f"  {json.dumps(results[-1])}", file=sys.stderr, flush=True)
    print(_report(results, args))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
