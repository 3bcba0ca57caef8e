"""PK write of this checkout against an earlier commit and pypaimon-rust, interleaved (issue 28).

Usage (inputs: the ``bench_pk_rust.py`` batches, 3 x 1M rows, 50 % key overlap)::

    .venv/bin/python bench/ab_pk_write.py WORKDIR ROUNDS OUT.json [BEFORE_COMMIT]

WORKDIR holds ``batch-{0,1,2}.parquet`` (made here with ``wr_data`` when missing) and the
warehouses. The earlier commit (default ``main``) is exported with ``git archive`` and run by
``bench_pk_rust``'s loader, so both trees run in this venv. Per round, each in a fresh table
(created untimed): ``wr_ours.py write`` (after, before: ``write_table`` x3 in process), the
pypaimon-rust script (``wr_pypaimon.py write --native``), and three ``paimon-cli write``
processes (after, before). Reported per case: the in-process seconds, the process's wall, CPU
seconds (user + system) and peak RSS, with the 1-minute load average before each run. The
first round checks every table it wrote in full (``wr_data.check_merged``).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR))

import bench_pk_rust as B  # noqa: E402
import wr_data  # noqa: E402

ROWS, BATCHES = 1_000_000, 3


def main() -> int:
    work, rounds, out_path = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    before = sys.argv[4] if len(sys.argv) > 4 else "main"
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    work.mkdir(parents=True, exist_ok=True)
    inputs = [str(work / f"batch-{k}.parquet") for k in range(BATCHES)]
    for k, p in enumerate(inputs):
        if not os.path.exists(p):
            wr_data.write_parquet(wr_data.batch_table(k, ROWS), p)
    bef = B.before_tree(before)
    ours = {"after": [str(B.OURS_PY)], "before": [str(B.OURS_PY), str(bef / "run.py")]}
    cli = {"after": [str(B.REPO / ".venv/bin/paimon-cli")], "before": [str(B.OURS_PY), str(bef / "run.py"), "cli"]}
    expect = wr_data.expected_keys(ROWS, BATCHES)
    res: dict[str, dict[str, list[float]]] = {}

    def add(key: str, **kv: float) -> None:
        for k, v in kv.items():
            res.setdefault(key, {}).setdefault(k, []).append(v)

    def fresh(name: str, create: bool = True) -> str:
        wh = work / "wh" / name
        shutil.rmtree(wh, ignore_errors=True)
        wh.mkdir(parents=True)
        if create:
            B.run(cli["after"] + ["create", B.IDENT, "-w", str(wh), "--schema", wr_data.COLUMNS, "--primary-key",
                                  ",".join(wr_data.PRIMARY_KEYS), "--partition-by", ",".join(wr_data.PARTITION_KEYS),
                                  "--option", "bucket=4", "--option", "write-only=true"])
        return str(wh)

    def check(who: str, wh: str) -> None:
        _, _, out, _ = B.run([str(B.OURS_PY), str(BENCH_DIR / "wr_ours.py"), "read", wh, B.IDENT, str(ROWS),
                              str(BATCHES)])
        info = json.loads(out)
        if info["rows"] != expect or info["mismatches"]:
            raise SystemExit(f"{who}: wrong table {info}")
        res.setdefault("_checks", {})[who] = [info["rows"], info["mismatches"], info["digest"]]

    for r in range(rounds):
        for who in ("after", "before"):
            wh = fresh(f"in-{who}")
            load = B.load1()
            w, rss, out, cpu = B.run([*ours[who], str(BENCH_DIR / "wr_ours.py"), "write", wh, B.IDENT, *inputs])
            add(f"in {who}", write_s=json.loads(out)["write_s"], wall=w, cpu=cpu, rss=rss, load=load)
            if r == 0:
                check(f"in {who}", wh)
        wh = fresh("rust", create=False)
        load = B.load1()
        w, rss, out, cpu = B.run([str(B.RUST_PY), str(BENCH_DIR / "wr_pypaimon.py"), "write", wh, B.IDENT, *inputs,
                                  "--native"])
        add("in rust", write_s=json.loads(out)["write_s"], wall=w, cpu=cpu, rss=rss, load=load)
        if r == 0:
            check("in rust", wh)
        for who in ("after", "before"):
            wh = fresh(f"cli-{who}")
            load = B.load1()
            walls, cpus, rsss = [], [], []
            for f in inputs:
                w, rss, _, cpu = B.run(cli[who] + ["write", B.IDENT, f, "-w", wh])
                walls.append(w)
                cpus.append(cpu)
                rsss.append(rss)
            add(f"cli {who}", wall=sum(walls), cpu=sum(cpus), rss=max(rsss), load=load)
            if r == 0:
                check(f"cli {who}", wh)
        B.log(f"round {r + 1}/{rounds}: " + ", ".join(
            f"{k} {v.get('write_s', v['wall'])[-1]:.2f}" for k, v in res.items() if not k.startswith("_")))
    shutil.rmtree(bef, ignore_errors=True)
    Path(out_path).write_text(json.dumps(res, indent=1))
    med = statistics.median
    print(f"{rounds} interleaved rounds, before = {before}, load at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print("| case | in-process median (s) | wall median (s) | CPU median (s) | peak RSS max (MiB) | loads |")
    print("|---|---:|---:|---:|---:|---|")
    for k, v in res.items():
        if k.startswith("_"):
            continue
        ip = f"{med(v['write_s']):.2f}" if "write_s" in v else "-"
        print(f"| {k} | {ip} | {med(v['wall']):.2f} | {med(v['cpu']):.2f} | {max(v['rss']):.0f} | "
              f"{' '.join(f'{x:.1f}' for x in v['load'])} |")
    rust = med(res["in rust"]["write_s"])
    for who in ("after", "before"):
        pairs = zip(res["in rust"]["write_s"], res[f"in {who}"]["write_s"], strict=True)
        print(f"in process rust / ours ({who}): {rust / med(res[f'in {who}']['write_s']):.2f}x; "
              f"per round: {' '.join(f'{a / b:.2f}' for a, b in pairs)}")
    print(f"before / after in process: {med(res['in before']['write_s']) / med(res['in after']['write_s']):.2f}x; "
          f"CLI x3 wall: {med(res['cli before']['wall']) / med(res['cli after']['wall']):.2f}x, "
          f"CPU: {med(res['cli before']['cpu']) / med(res['cli after']['cpu']):.2f}x")
    print("checks:", res.get("_checks"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
