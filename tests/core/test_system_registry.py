"""The inspect registry: every kind resolves, and metadata-only kinds stay light."""

from __future__ import annotations

import subprocess
import sys

import pytest

from paimon_cli.core.errors import NotFound
from paimon_cli.core.system.registry import SYSTEM_TABLES, system_table


@pytest.mark.parametrize("kind", list(SYSTEM_TABLES))
def test_every_kind_resolves_to_a_system_function(kind: str) -> None:
    fn = SYSTEM_TABLES[kind]
    assert callable(fn) and fn.__module__.startswith("paimon_cli.core.system.")


def test_unknown_kind_is_not_found() -> None:
    assert SYSTEM_TABLES.get("nope") is None
    with pytest.raises(NotFound, match="unknown system table 'nope'"):
        system_table("nope")


def test_metadata_kinds_do_not_import_pyarrow() -> None:
    """``inspect snapshots`` / ``tag list`` read JSON metadata only: no pyarrow at start-up."""
    code = ("import sys; from paimon_cli.core.system.registry import SYSTEM_TABLES; "
            "[SYSTEM_TABLES[k] for k in ('snapshots', 'schemas', 'options', 'tags', 'branches', 'consumers')]; "
            "print('pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert out.stdout.strip() == "False"
