"""A tabular result: what a system table, a dry-run plan or a command report returns.

A leaf, so every room can return one; rendering (table, JSON, CSV) is the CLI's business.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Rows:
    """Ordered column names and one dict per row."""

    columns: list[str]
    rows: list[dict[str, Any]] = field(default_factory=list)


__all__ = ["Rows"]
