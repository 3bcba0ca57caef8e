"""A writer and two compaction jobs racing on one table (separate processes) never lose data.

Why: the production set-up is writers plus a cron ``paimon-cli compact`` -- and cron jobs
overlap. A compaction that lost the race must end with exit 5 and leave nothing behind (its
input files were rewritten by the winner); appends committed meanwhile are simply rebased.
Whatever the interleaving, every snapshot stays readable (no job deleted a file a published
snapshot references) and the final table holds exactly the last version of every key.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from paimon_cli.core.operation.scan import FileStoreScan

TIMEOUT = 300
ROUNDS = 12
KEYS = 300

WRITER = textwrap.dedent("""
    import sys, time, pyarrow as pa, pyarrow.parquet as pq
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.compact.write_job import write_table_result
    wh, tmp, rounds, keys, write_only = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    warnings = 0
    for r in range(rounds):
        t = FileSystemCatalog(wh).get_table("db.t")
        # round r rewrites every key divisible by (r % 3 + 1) and adds a block of new keys
        ids = [i for i in range(keys) if i % (r % 3 + 1) == 0] + list(range(keys + r * 10, keys + r * 10 + 10))
        p = f"{tmp}/w{write_only}-{r}.parquet"
        pq.write_table(pa.Table.from_pylist([{"id": i, "v": f"r{r}"} for i in ids]), p)
        res = write_table_result(t, [p], options={"write-only": write_only})
        warnings += res.warning is not None
        time.sleep(0.4)  # let the compactions overlap with several writes
    open(f"{tmp}/writer-done", "w").close()
    print(warnings)
""")


def _env() -> dict[str, str]:
    env = dict(os.environ)
    for var in ("PAIMON_WAREHOUSE", "PAIMON_OUTPUT", "PAIMON_FS_OPTIONS", "PAIMON_DEBUG"):
        env.pop(var, None)
    return env


def expected(rounds: int = ROUNDS, keys: int = KEYS) -> dict[int, str]:
    state: dict[int, str] = {}
    for r in range(rounds):
        for i in range(keys):
            if i % (r % 3 + 1) == 0:
                state[i] = f"r{r}"
        for i in range(keys + r * 10, keys + r * 10 + 10):
            state[i] = f"r{r}"
    return state


def compactor(tmp: Path, full: bool) -> str:
    """A shell loop of CLI compactions while the writer runs; prints one exit code per run."""
    args = " ".join([sys.executable, "-m", "paimon_cli", "compact", "db.t", "-w", str(tmp / "wh"), "-o", "json",
                     "--no-expire", *(["--full"] if full else [])])
    err = tmp / f"compact-{int(full)}.err"
    return (f"while [ ! -f {tmp}/writer-done ]; do {args} >/dev/null 2>>{err}; echo $?; done; "
            f"{args} >/dev/null 2>>{err}; echo $?")


@pytest.mark.slow
@pytest.mark.parametrize("options", [
    {"bucket": "2", "num-sorted-run.compaction-trigger": "3"},
    {"bucket": "2", "deletion-vectors.enabled": "true"},
], ids=["universal", "deletion-vectors"])
def test_writer_and_two_compactions_race(tmp_path: Path, options: dict[str, str]) -> None:
    from paimon_cli.core.catalog.filesystem import FileSystemCatalog
    from paimon_cli.core.data.types import parse_columns
    from paimon_cli.core.operation.read import TableRead
    from paimon_cli.core.schema.table_schema import Schema
    from paimon_cli.core.table.file_store_table import TimeTravel

    wh = str(tmp_path / "wh")
    cat = FileSystemCatalog(wh)
    cat.create_table("db.t", Schema.of(parse_columns("id INT NOT NULL, v STRING"), primary_keys=["id"],
                                       options=options))
    write_only = "false" if "deletion-vectors.enabled" in options else "true"
    procs = [
        subprocess.Popen([sys.executable, "-c", WRITER, wh, str(tmp_path), str(ROUNDS), str(KEYS), write_only],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_env()),
        subprocess.Popen(["bash", "-c", compactor(tmp_path, False)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=_env()),
        subprocess.Popen(["bash", "-c", compactor(tmp_path, True)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True, env=_env()),
    ]
    outs = [p.communicate(timeout=TIMEOUT) for p in procs]
    assert procs[0].returncode == 0, outs[0][1]
    codes = [int(c) for out, _ in outs[1:] for c in out.split()]
    errors = "".join((tmp_path / f"compact-{k}.err").read_text() for k in (0, 1))
    assert set(codes) <= {0, 5}, errors  # success, or a lost race (exit 5) -- never anything else
    for line in errors.splitlines():
        assert line.startswith("compact: ") or "give up committing" in line or "changed since snapshot" in line, line

    table = cat.get_table("db.t")
    snaps = table.snapshot_manager.snapshots()
    kinds = [s.commit_kind for s in snaps]
    assert kinds.count("COMPACT") >= 2 and kinds.count("APPEND") == ROUNDS
    # every snapshot is readable: no job deleted a file a published snapshot references
    for s in snaps:
        TableRead(table, TimeTravel(snapshot_id=s.id)).to_arrow()
    got = {r["id"]: r["v"] for r in TableRead(table).to_arrow().to_pylist()}
    assert got == expected()
    # and a final full compaction still agrees
    final = subprocess.run([sys.executable, "-m", "paimon_cli", "compact", "db.t", "--full", "-w", wh, "-o", "json"],
                           capture_output=True, text=True, timeout=TIMEOUT, env=_env())
    assert final.returncode == 0, final.stderr
    table = FileSystemCatalog(wh).get_table("db.t")
    assert {r["id"]: r["v"] for r in TableRead(table).to_arrow().to_pylist()} == expected()
    assert all(e.file.level == table.options.num_levels - 1
               for e in FileStoreScan(table).plan(table.snapshot_manager.latest_snapshot()))
    assert json.loads(final.stdout)[0]["commit_kind"] in ("COMPACT", None)
