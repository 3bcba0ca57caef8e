"""How the console script ends its process: exit handlers and flushed streams, then
``os._exit`` -- no interpreter finalization.

Why: Arrow's thread pools (CSV/JSON read-ahead, Parquet decoding, Acero filters) can still be
dropping their last reference to a Python object -- an input buffer, a row callback, numpy-owned
memory -- after the call that started them returned or raised. A thread that takes the GIL while
the interpreter finalizes kills the process ("terminate called without an active exception",
exit 134), about one run in tens on an error path. Each such hand-over is closed where it is
found (``core.format.input_files.native_reader``, filters on the calling thread); this is the
guard for those not yet found. A finished command has nothing left for finalization to do:
its files are closed by their ``with`` blocks, temporary directories and loggers are cleaned
up by the exit handlers run here.
"""

from __future__ import annotations

import atexit
import os
import sys
from typing import NoReturn


def exit_code_of(stop: SystemExit) -> int:
    """The status ``sys.exit`` would give the process for ``stop``."""
    code = stop.code
    if code is None:
        return 0
    if isinstance(code, int):
        return code
    print(code, file=sys.stderr)
    return 1


def end_process(status: int) -> NoReturn:
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe or stream: nothing more can reach it
            pass
    os._exit(status)
