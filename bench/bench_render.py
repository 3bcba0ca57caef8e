"""Rendering A/B in one process: this tree's renderers against a baseline commit's, loaded
from git beside them (same process, same data, interleaved rounds), for ``read``'s record
batches (``-o csv`` / ``-o jsonl`` of a generated 1,000,000-row table held in memory: the read
itself is not timed) and ``inspect files -o csv|jsonl`` of a table (``make_tables.py --only
files``; its manifests are read in every round, by both).

Usage::

    .venv/bin/python bench/bench_render.py --before a918442 --warehouse /tmp/i28insp-wh100k

Each case is checked first to print the same bytes both ways. CPU seconds are the process's
(``time.process_time``) per call; medians over ``--repeat`` rounds; Markdown on stdout.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

ROOT = Path(__file__).resolve().parent.parent


def _load_before(rev: str) -> tuple[Any, Any]:
    """The baseline's output and record_batches modules, as ``paimon_cli._before_*``."""
    import paimon_cli

    mods = []
    for name in ("output", "record_batches"):
        src = subprocess.run(["git", "show", f"{rev}:paimon_cli/{name}.py"], cwd=ROOT, check=True,
                             capture_output=True, text=True).stdout
        src = src.replace("from .output import", "from ._before_output import")
        full = f"paimon_cli._before_{name}"
        spec = importlib.util.spec_from_loader(full, loader=None)
        assert spec is not None
        mod = importlib.util.module_from_spec(spec)
        mod.__package__ = "paimon_cli"
        sys.modules[full] = mod
        exec(compile(src, f"{rev}:{name}.py", "exec"), mod.__dict__)
        mods.append(mod)
    assert paimon_cli
    return mods[0], mods[1]


def _table(n: int) -> pa.Table:
    rng = np.random.default_rng(0)
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "qty": pa.array(rng.integers(0, 1000, n).astype(np.int32)),
        "price": pa.array(np.round(rng.random(n) * 1000, 2)),
        "ratio": pa.array(rng.random(n)),
        "name": pa.array([f"item {i % 9973}, \"x\"" if i % 50 == 0 else f"item-{i % 9973}" for i in range(n)]),
        "ts": pa.array(rng.integers(1_600_000_000_000_000, 1_700_000_000_000_000, n)).cast(pa.timestamp("us")),
        "digest": pa.array([bytes(r) for r in rng.integers(0, 256, (n, 8), dtype=np.uint8)], pa.binary()),
    })


def _sink(check: bool) -> Any:
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", newline="\n") if check else open(os.devnull, "w")


def _text(out: Any) -> bytes:
    out.flush()
    return bytes(out.buffer.getvalue())


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="baseline commit")
    ap.add_argument("--warehouse", required=True)
    ap.add_argument("--table", default="bench.files")
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()

    from paimon_cli import output, record_batches
    from paimon_cli.core.api import Warehouse

    old_out, old_rb = _load_before(args.before)
    t = _table(args.rows)
    batches = t.to_batches(max_chunksize=65_536)
    stream_table = Warehouse(args.warehouse).table(args.table)

    def read_case(mod: Any, fmt: str) -> Any:
        def run(out: Any) -> None:
            if fmt == "csv":
                mod.write_csv_batches(iter(batches), t.schema, out)
            else:
                mod.write_json_batches(iter(batches), out, lines=True)
        return run

    def files_case(mod: Any, fmt: str) -> Any:
        def run(out: Any) -> None:
            saved = sys.stdout
            sys.stdout = out
            try:
                mod.render_stream(stream_table.inspect_stream("files"), fmt, wide=True)
            finally:
                sys.stdout = saved
        return run

    cases = [(f"`read -o {f}` rendering, {args.rows:,} rows (in process)", read_case(old_rb, f), read_case(record_batches, f))
             for f in ("csv", "jsonl")]
    cases += [(f"`inspect files -o {f}`, {args.table} (in process)", files_case(old_out, f), files_case(output, f))
              for f in ("csv", "jsonl")]
    load0 = os.getloadavg()
    results = []
    for label, before, after in cases:
        texts = []
        for fn in (before, after):
            out = _sink(True)
            fn(out)
            texts.append(_text(out))
        same = texts[0] == texts[1]
        digest = hashlib.sha256(texts[1]).hexdigest()[:12]
        times: dict[str, list[tuple[float, float]]] = {"before": [], "after": []}
        for _ in range(args.repeat):
            for key, fn in (("before", before), ("after", after)):
                out = _sink(False)
                c0, w0 = time.process_time(), time.perf_counter()
                fn(out)
                out.flush()
                times[key].append((time.process_time() - c0, time.perf_counter() - w0))
                out.close()
        results.append((label, same, len(texts[1]), digest, times))
    load1 = os.getloadavg()
    print(f"load average before {' '.join(f'{x:.2f}' for x in load0)}, after {' '.join(f'{x:.2f}' for x in load1)}")
    print()
    print("| case | same bytes | MB | CPU before (s) | CPU after (s) | CPU ratio | wall before | wall after | CPU runs before / after |")
    print("|---|---|---:|---:|---:|---:|---:|---:|---|")
    for label, same, size, digest, times in results:
        cb = statistics.median(c for c, _ in times["before"])
        ca = statistics.median(c for c, _ in times["after"])
        wb = statistics.median(w for _, w in times["before"])
        wa = statistics.median(w for _, w in times["after"])
        runs = " ".join(f"{c:.2f}" for c, _ in times["before"]) + " / " + " ".join(f"{c:.2f}" for c, _ in times["after"])
        print(f"| {label} | {'yes' if same else 'NO'} ({digest}) | {size / 1e6:.1f} | {cb:.3f} | {ca:.3f} | "
              f"{cb / ca:.2f}x | {wb:.3f} | {wa:.3f} | {runs} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
