"""polars and polars-avro, imported in one place so that Ctrl-C stays prompt after they load.

Importing polars hooks SIGINT with ``SA_RESTART`` (see ``interrupt.interruptible``): from then
on a Ctrl-C at a confirmation prompt, or while the main thread waits for workers, would wait
for the read or the wait to end by itself. Every module of the library takes them from here.
"""

from __future__ import annotations

import polars as pl
import polars_avro

from . import interrupt

interrupt.interruptible()

__all__ = ["pl", "polars_avro"]
