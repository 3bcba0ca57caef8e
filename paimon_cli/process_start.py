"""How the console script starts its process: defaults for the native libraries it loads,
set before they load (their settings are read from the environment once, at load).

- ``MIMALLOC_ARENA_EAGER_COMMIT=0``: Arrow's default memory pool is mimalloc, which by default
  commits whole arenas up front. On Linux with transparent huge pages the kernel then backs
  them with 2 MiB pages, zeroing each one on first touch: 0.2-0.7 s of kernel CPU
  (``clear_page_erms``) in a 4M-row compaction that needs ~2 s of CPU in all, more the busier
  the machine. Committed on demand, the same run clears ~10x fewer bytes and peaks lower.
- ``OPENBLAS_NUM_THREADS=1``: importing numpy (pyarrow imports it) starts one OpenBLAS worker
  per core, which busy-waits before it sleeps (~50-100 ms of CPU taken from the command's own
  threads on a 2-core machine). Nothing here calls BLAS.

Only defaults: a value the user exported wins. The library (``paimon_cli.core``) sets
nothing; a process that embeds it owns its environment.
"""

from __future__ import annotations

import os
from collections.abc import MutableMapping

NATIVE_DEFAULTS = {
    "MIMALLOC_ARENA_EAGER_COMMIT": "0",
    "OPENBLAS_NUM_THREADS": "1",
}


def set_native_defaults(environ: MutableMapping[str, str] = os.environ) -> None:
    """Add :data:`NATIVE_DEFAULTS` to ``environ`` where it does not set them already."""
    for key, value in NATIVE_DEFAULTS.items():
        environ.setdefault(key, value)
