"""Progress bars on a terminal: one bar per operation, one tick per unit (a compaction unit,
a file deleted or indexed, an input file read). Drawn on stderr, and only when stderr is a
terminal and not under ``--quiet`` (:func:`paimon_cli.terminal.show_progress`), so stdout stays
data and logs stay clean; colours follow NO_COLOR (:func:`paimon_cli.terminal.console`). The bar
is erased when the command ends. rich is imported only once a bar is drawn.
"""

from __future__ import annotations

import threading
from typing import Any

from . import terminal


class ProgressBar:
    """A callable ``(done, total, detail)`` drawing a rich bar labelled ``label``; a context
    manager that removes the bar on exit. Silent unless stderr is a terminal (and not --quiet)."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None
        self.task: Any = None
        self._lock = threading.Lock()
        self.enabled = terminal.show_progress()

    def __enter__(self) -> ProgressBar:
        return self

    def __call__(self, done: int, total: int, detail: str = "") -> None:
        if not self.enabled:
            return
        with self._lock:  # deletions report from worker threads
            if self.bar is None:
                from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

                self.bar = Progress(TextColumn(self.label), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                                    TextColumn("{task.description}"), console=terminal.console(stderr=True), transient=True)
                self.bar.start()
                self.task = self.bar.add_task("", total=total)
            self.bar.update(self.task, completed=done, total=total, description=detail)

    def units(self, event: str, unit: Any, done: int, total: int) -> None:
        """The compaction jobs' callback (``core.compact.local.Progress``): one tick per unit."""
        self(done, total, f"bucket {unit.bucket}" if event == "start" and unit is not None else "")

    def __exit__(self, *exc: object) -> None:
        if self.bar is not None:
            self.bar.stop()
