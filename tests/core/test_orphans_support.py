"""Shared builders for the orphan-file and rollback tests (no tests here): tables, ageing, listings."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path
from typing import Any

from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.compact.write_job import write_table
from paimon_cli.core.data.types import parse_columns
from paimon_cli.core.operation.read import TableRead
from paimon_cli.core.schema.table_schema import Schema
from paimon_cli.core.table.file_store_table import TimeTravel

DAY = 86_400


def make_table(wh: Path, name: str = "t", pk: bool = True, **options: str) -> Any:
    cat = FileSystemCatalog(str(wh))
    # write-only: these tests are about files, not about auto-compaction after each write
    opts = {"bucket": "2", "write-only": "true"} if pk else {"bucket": "-1", "write-only": "true"}
    opts.update(options)
    cat.create_table(
        f"db.{name}",
        Schema.of(
            parse_columns("id INT NOT NULL, dt STRING NOT NULL, v STRING"),
            partition_keys=("dt",),
            primary_keys=("id", "dt") if pk else (),
            options=opts,
        ),
    )
    return cat.get_table(f"db.{name}")


def reload(table: Any, branch: str | None = None) -> Any:
    wh = str(Path(table.path).parent.parent)
    return FileSystemCatalog(wh).get_table(table.identifier.full_name, branch)


def write_rows(table: Any, rows: list[tuple[int, str, str]], tmp: Path) -> Any:
    p = tmp / f"in-{time.monotonic_ns()}.csv"
    p.write_text("id,dt,v\n" + "".join(f"{i},{d},{v}\n" for i, d, v in rows))
    return write_table(table, [str(p)])


def read_rows(table: Any, snapshot_id: int | None = None, tag: str | None = None) -> list[dict[str, Any]]:
    at = TimeTravel(snapshot_id=snapshot_id, tag=tag) if (snapshot_id or tag) else None
    rows = TableRead(table, at=at).to_arrow().to_pylist()
    return sorted(rows, key=lambda r: (r["dt"], r["id"], r["v"] or ""))


def age_all(root: str | Path, seconds: float = 2 * DAY) -> None:
    """Make every file and directory under ``root`` look ``seconds`` old."""
    t = time.time() - seconds
    for dirpath, dirnames, filenames in os.walk(root, topdown=False):
        for n in filenames + dirnames:
            os.utime(os.path.join(dirpath, n), (t, t), follow_symlinks=False)
    os.utime(root, (t, t))


def files_under(root: str | Path) -> set[str]:
    """Relative paths of every file under ``root``."""
    out = set()
    for dirpath, _, filenames in os.walk(root):
        for n in filenames:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def file_bytes(*roots: str | Path) -> dict[str, bytes]:
    """Every file under the roots with its content (to assert a tree is byte-identical)."""
    out = {}
    for root in roots:
        for dirpath, _, filenames in os.walk(root):
            for n in filenames:
                p = os.path.join(dirpath, n)
                out[p] = Path(p).read_bytes()
    return out


def dirs_under(root: str | Path) -> set[str]:
    out = set()
    for dirpath, dirnames, _ in os.walk(root):
        for n in dirnames:
            out.add(os.path.relpath(os.path.join(dirpath, n), root))
    return out


def plant(path: str | Path, data: bytes = b"orphan") -> str:
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    return str(p)


def copy_file(src: str | Path, dst: str | Path) -> str:
    Path(dst).parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return str(dst)
