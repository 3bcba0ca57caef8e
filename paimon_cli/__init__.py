"""paimon-cli: maintain and inspect Apache Paimon lake tables from the shell, or from Python.

``from paimon_cli import Warehouse`` is the library API (``paimon_cli.core.api``); it loads on
first use, so ``import paimon_cli`` and the CLI's start-up stay light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = ["Table", "Warehouse", "__version__"]

if TYPE_CHECKING:
    from .core.api import Table, Warehouse


def __getattr__(name: str) -> Any:
    if name in ("Warehouse", "Table"):
        from .core import api

        return getattr(api, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
