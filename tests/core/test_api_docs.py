"""README's "Library" section: its examples run, in order, on a fresh warehouse."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def library_examples() -> list[str]:
    section = README.split("\n## Library\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, flags=re.S)


def test_readme_library_examples_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAIMON_FS_OPTIONS", raising=False)
    blocks = library_examples()
    assert len(blocks) >= 4
    scope: dict[str, object] = {}
    for i, code in enumerate(blocks):
        exec(compile(code, f"README.md Library example {i + 1}", "exec"), scope)
    assert (tmp_path / "warehouse" / "shop.db" / "orders" / "schema" / "schema-0").exists()
