"""Rendering A/B of nested columns in one process: ``read -o csv|jsonl|json`` of a
generated table with list / map / row columns (NULLs at every level; the read itself is not
timed), this tree's renderers against a baseline commit's loaded from git beside them
(:func:`bench_render._load_before`), interleaved rounds.

Usage::

    .venv/bin/python bench/bench_render_nested.py --before d6c00c9 --rows 200000 --repeat 7

Each case is checked first to print the same bytes both ways. CPU seconds are the process's
(``time.process_time``) per call; medians over ``--repeat`` rounds; Markdown on stdout.
"""

from __future__ import annotations

import argparse
import datetime as dt
import hashlib
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_render import _load_before, _sink, _text  # noqa: E402


def _table(n: int) -> pa.Table:
    rng = np.random.default_rng(0)
    words = ["alpha", "beta", 'q"x', "line\nbreak", "\u00e9t\u00e9", "k,v", ""]

    def maybe(v: Any) -> Any:
        return None if rng.random() < 0.05 else v

    sizes = rng.integers(0, 5, n)
    floats = (rng.random(int(sizes.sum())) * 1000).tolist()
    pos = 0
    tags, scores, attrs, info, events = [], [], [], [], []
    base = dt.datetime(2024, 1, 1)
    for i, k in enumerate(sizes.tolist()):
        tags.append(maybe([maybe(words[(i + j) % len(words)]) for j in range(k)]))
        scores.append(maybe([maybe(x) for x in floats[pos: pos + k]]))
        attrs.append(maybe([(words[j % len(words)] + str(j), maybe(list(range(j)))) for j in range(k % 3)]))
        info.append(maybe({"a": i % 100, "b": maybe({"c": words[i % len(words)], "d": floats[pos: pos + 1]})}))
        events.append(maybe([base + dt.timedelta(microseconds=int(x * 1e9)) for x in floats[pos: pos + k]]))
        pos += k
    return pa.table({
        "id": pa.array(np.arange(n, dtype=np.int64)),
        "tags": pa.array(tags, pa.list_(pa.string())),
        "scores": pa.array(scores, pa.list_(pa.float64())),
        "attrs": pa.array(attrs, pa.map_(pa.string(), pa.list_(pa.int32()))),
        "info": pa.array(info, pa.struct([("a", pa.int32()), ("b", pa.struct([("c", pa.string()),
                                                                              ("d", pa.list_(pa.float64()))]))])),
        "events": pa.array(events, pa.list_(pa.timestamp("us"))),
    })


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", required=True, help="baseline commit")
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--repeat", type=int, default=7)
    args = ap.parse_args()

    from paimon_cli import record_batches

    _, old_rb = _load_before(args.before)
    t = _table(args.rows)
    batches = t.to_batches(max_chunksize=65_536)

    def read_case(mod: Any, fmt: str) -> Any:
        def run(out: Any) -> None:
            if fmt == "csv":
                mod.write_csv_batches(iter(batches), t.schema, out)
            else:
                mod.write_json_batches(iter(batches), out, lines=fmt == "jsonl")
        return run

    cases = [(f"`read -o {f}`, {args.rows:,} rows, 5 nested columns (in process)", read_case(old_rb, f),
              read_case(record_batches, f)) for f in ("csv", "jsonl", "json")]
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
    return 0 if all(r[1] for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
