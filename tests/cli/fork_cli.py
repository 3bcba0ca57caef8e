"""Run many ``paimon-cli`` commands cheaply: forked children of one process that imported the
CLI once (``python tests/cli/fork_cli.py JOBS.json OUTDIR PARALLEL``).

Each child runs ``paimon_cli.__main__.main`` with its arguments and leaves through the
SystemExit that ends every command -- the interpreter shutdown of ``python -m paimon_cli``,
where an abort of a native thread shows -- at about half the cost of a new interpreter
(no imports). Job ``i`` writes ``OUTDIR/i.out`` and ``OUTDIR/i.err``; the exit codes are
printed as a JSON list (a signal as its negative number: -6 is SIGABRT, a shell's 134).

The parent imports but runs nothing, so it has no threads of its own to fork besides
numpy's and pyarrow's allocator threads, which both libraries re-create in a child.
"""

from __future__ import annotations

import json
import os
import sys

import numpy  # noqa: F401
import pyarrow  # noqa: F401
import pyarrow.acero  # noqa: F401
import pyarrow.compute  # noqa: F401
import pyarrow.parquet  # noqa: F401

import paimon_cli.core.api  # noqa: F401
import paimon_cli.output  # noqa: F401
from paimon_cli.__main__ import main

jobs: list[list[str]] = json.loads(open(sys.argv[1]).read())
outdir, parallel = sys.argv[2], int(sys.argv[3])
codes: dict[int, int] = {}
running: dict[int, int] = {}  # pid -> job
job = None
for i, args in enumerate(jobs):
    while len(running) >= parallel:
        pid, status = os.wait()
        codes[running.pop(pid)] = os.waitstatus_to_exitcode(status)
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:
        for fd, suffix in ((1, "out"), (2, "err")):
            f = os.open(os.path.join(outdir, f"{i}.{suffix}"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(f, fd)
            os.close(f)
        job = args
        break
    running[pid] = i
if job is not None:
    sys.argv = ["paimon-cli", *job]
    main()  # ends in SystemExit, which ends this child as it ends `python -m paimon_cli`
else:
    while running:
        pid, status = os.wait()
        codes[running.pop(pid)] = os.waitstatus_to_exitcode(status)
    print(json.dumps([codes[i] for i in range(len(jobs))]))
