"""Progress of long operations as a callback: the CLI draws a bar, the library never prints.

A callback gets ``(done, total, detail)``: units finished so far (files deleted, files
indexed, input files read), their number, and a short note (``"1.2M rows"``) or ``""``.
It may be called from worker threads; :class:`Ticker` counts under a lock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

StepProgress = Callable[[int, int, str], None]


class Ticker:
    """Counts finished units and reports each to ``progress`` (nothing when it is None)."""

    def __init__(self, progress: StepProgress | None, total: int) -> None:
        self.progress = progress
        self.total = total
        self.done = 0
        self._lock = threading.Lock()
        if progress is not None and total:
            progress(0, total, "")

    def tick(self, *_: object) -> None:
        """One more unit finished (takes and ignores the item, to serve as an ``on_delete``)."""
        if self.progress is None:
            return
        with self._lock:
            self.done += 1
            self.progress(self.done, self.total, "")
