"""Hostile input: one ``error:`` line, exit 4, nothing written -- never a raw Python error
(issue 16: names of 300 or 5,000 characters gave ``OSError: File name too long``, 5,000 nested
parentheses or a long NOT chain in ``--where`` a ``RecursionError``, a deeply nested JSON input
a ``RecursionError`` or a crash, a file that is not UTF-8 a ``UnicodeDecodeError`` naming
nothing); and damaged LATEST / EARLIEST hints fall back to listing as Java does, without
aborting the process.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from paimon_cli.app import app

TABLE = "db.t"


def _cli(wh: str, *args: str, stdin: bytes | None = None) -> Any:
    return CliRunner().invoke(app, [*args, "-w", wh], input=stdin)


def _tree(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file()}


def _one_error(res: Any, code: int = 4) -> str:
    out = res.stdout + res.stderr
    assert "Traceback" not in out, out
    assert res.exit_code == code, out
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), res.stderr
    return lines[0]


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``db.t``: id, v (string), dt (partition), two commits, a tag ``t1``."""
    root = tmp_path_factory.mktemp("hostile")
    wh = str(root / "wh")
    assert _cli(wh, "create", TABLE, "-s", "id BIGINT NOT NULL, v STRING, dt STRING", "--primary-key", "id,dt",
                "--partition-by", "dt").exit_code == 0
    for i in (1, 2):
        src = root / f"in{i}.csv"
        src.write_text(f"id,v,dt\n{i},v{i},2024-01-0{i}\n")
        assert _cli(wh, "write", TABLE, str(src)).exit_code == 0
    assert _cli(wh, "tag", "create", TABLE, "t1").exit_code == 0
    return root / "wh"


@pytest.fixture
def wh(base: Path, tmp_path: Path) -> Path:
    import shutil

    dst = tmp_path / "wh"
    shutil.copytree(base, dst)
    return dst


# ---------------------------------------------------------------------------------------
# names longer than the file system allows
# ---------------------------------------------------------------------------------------

# (kind, its limit, the command that takes the name)
NAMED = [
    ("table", 255, lambda n: ("create", f"db.{n}", "-s", "id INT")),
    ("database", 252, lambda n: ("create", f"{n}.t", "-s", "id INT")),
    ("table", 255, lambda n: ("read", f"db.{n}")),
    ("tag", 209, lambda n: ("tag", "create", TABLE, n)),
    ("tag", 209, lambda n: ("tag", "rename", TABLE, "t1", n)),
    ("tag", 209, lambda n: ("read", TABLE, "--tag", n)),
    ("tag", 209, lambda n: ("rollback", TABLE, "--tag", n)),
    ("tag", 209, lambda n: ("tag", "delete", TABLE, n)),
    ("branch", 248, lambda n: ("branch", "create", TABLE, n)),
    ("branch", 248, lambda n: ("read", TABLE, "--branch", n)),
    ("branch", 248, lambda n: ("branch", "delete", TABLE, n)),
]


@pytest.mark.parametrize("length", [300, 5000])
@pytest.mark.parametrize("kind, limit, args", NAMED)
def test_name_too_long_for_the_file_system(wh: Path, kind: str, limit: int, args: Any, length: int) -> None:
    before = _tree(wh)
    line = _one_error(_cli(str(wh), *args("n" * length)))
    assert f"{kind} name 'nnn" in line and f"is {length} bytes long" in line and f"at most {limit} bytes" in line
    assert "255-byte" in line and len(line) < 300
    assert _tree(wh) == before


def test_names_at_the_limit_work(wh: Path) -> None:
    """The limits are exact: the longest allowed names create, list and read (their temporary
    files included), one byte more is refused."""
    w = str(wh)
    tag, branch, table, db = "t" * 209, "b" * 248, "x" * 255, "d" * 252
    for args in (("tag", "create", TABLE, tag), ("branch", "create", TABLE, branch),
                 ("create", f"db.{table}", "-s", "id INT"), ("create", f"{db}.t", "-s", "id INT")):
        res = _cli(w, *args)
        assert res.exit_code == 0, res.output
    assert _cli(w, "read", TABLE, "--tag", tag).exit_code == 0
    assert _cli(w, "read", TABLE, "--branch", branch).exit_code == 0
    assert _cli(w, "tag", "delete", TABLE, tag).exit_code == 0
    # multi-byte characters count in UTF-8 bytes
    assert "is 210 bytes long" in _one_error(_cli(w, "tag", "create", TABLE, "é" * 105))


def test_warehouse_path_too_long(tmp_path: Path) -> None:
    line = _one_error(_cli(str(tmp_path / ("w" * 300)), "create", TABLE, "-s", "id INT"))
    assert "longer than the file system allows (255 bytes)" in line


def test_partition_value_too_long_for_a_directory(wh: Path, tmp_path: Path) -> None:
    src = tmp_path / "long.csv"
    src.write_text("id,v,dt\n7,a," + "d" * 300 + "\n")
    before = _tree(wh)
    line = _one_error(_cli(str(wh), "write", TABLE, str(src)))
    assert "partition value of column 'dt' is too long" in line and "303 bytes, at most 255" in line
    assert _tree(wh) == before


@pytest.mark.parametrize("option", ["data-file.prefix", "changelog-file.prefix"])
def test_file_prefix_option_that_cannot_be_a_file_name(wh: Path, tmp_path: Path, option: str) -> None:
    src = tmp_path / "a.csv"
    src.write_text("id,v,dt\n7,a,x\n")
    before = _tree(wh)
    for bad, why in (("p" * 300, "at most 128 bytes"), ("../../x-", "cannot hold '/'")):
        line = _one_error(_cli(str(wh), "write", TABLE, str(src), "--option", f"{option}={bad}",
                               "--option", "changelog-producer=input"))
        assert f"option {option}=" in line and why in line
    assert _tree(wh) == before


def test_export_file_name_too_long(wh: Path, tmp_path: Path) -> None:
    line = _one_error(_cli(str(wh), "read", TABLE, "--to", str(tmp_path / ("o" * 300 + ".csv"))))
    assert "cannot create the file" in line and "255 bytes" in line


def test_other_values_out_of_range(wh: Path) -> None:
    line = _one_error(_cli(str(wh), "inspect", "files", TABLE, "--timestamp", "9" * 5000))
    assert "epoch milliseconds out of range" in line and len(line) < 200
    line = _one_error(_cli(str(wh), "expire-partitions", TABLE, "--expiration-time", "1d",
                           "--timestamp-formatter", "y" * 5000))
    assert "too many pattern letters 'y' (5000)" in line and len(line) < 200


# ---------------------------------------------------------------------------------------
# recursive parsers
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("command", [("read", TABLE), ("compact", TABLE), ("rewrite-file-index", TABLE)])
def test_where_nested_too_deep(wh: Path, command: tuple[str, ...]) -> None:
    before = _tree(wh)
    line = _one_error(_cli(str(wh), *command, "--where", "(" * 5000 + "dt = 'x'" + ")" * 5000))
    assert "--where: parentheses nest more than 100 levels deep" in line
    assert _tree(wh) == before


def test_where_nesting_up_to_the_limit_and_not_chains_work(wh: Path) -> None:
    def ids(where: str) -> list[int]:
        res = _cli(str(wh), "read", TABLE, "--where", where, "-o", "json")
        assert res.exit_code == 0, res.output
        return sorted(r["id"] for r in json.loads(res.stdout))

    assert ids("(" * 100 + "id = 1" + ")" * 100) == [1]
    assert ids("NOT " * 5000 + "id = 1") == [1]  # an even chain cancels out
    assert ids("NOT " * 5001 + "id = 1") == [2]
    assert ids("NOT (" * 51 + "id = 1" + ")" * 51) == [2]


@pytest.mark.parametrize("schema", [
    "a " + "ARRAY<" * 3000 + "INT" + ">" * 3000,
    "a " + "ROW<x " * 100 + "INT" + ">" * 100,
    '{"fields": [{"id": 0, "name": "a", "type": ' + '{"type": "ARRAY", "element": ' * 200 + '"INT"' + "}" * 200 + "}]}",
    '{"fields": [{"id": 0, "name": "a", "type": ' + '{"type": "ARRAY", "element": ' * 5000 + '"INT"' + "}" * 5000 + "}]}",
])
def test_schema_nested_too_deep(wh: Path, schema: str) -> None:
    before = _tree(wh)
    line = _one_error(_cli(str(wh), "create", "db.deep", "-s", schema))
    assert "nest more than 64 levels deep" in line or "JSON nested too deeply" in line
    assert len(line) < 300
    assert _tree(wh) == before


def test_metadata_json_nested_too_deep(wh: Path) -> None:
    snap = wh / "db.db" / "t" / "snapshot" / "snapshot-1"
    snap.write_text('{"id": 1, "x": ' + "[" * 100_000 + "]" * 100_000 + "}")
    line = _one_error(_cli(str(wh), "inspect", "snapshots", TABLE))
    assert line == f"error: {snap}: JSON nested too deeply to be Paimon metadata"
    before = _tree(wh)
    _one_error(_cli(str(wh), "remove-orphan-files", TABLE, "--older-than", "1ms", "--force"), code=6)
    assert _tree(wh) == before


def _paimon(*args: str) -> tuple[int, str, str]:
    """A subprocess run: an abort (SIGABRT, SIGSEGV) shows as such instead of killing pytest."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PAIMON_")}
    proc = subprocess.run([sys.executable, "-m", "paimon_cli", *args], capture_output=True, env=env, timeout=300)
    return proc.returncode, proc.stdout.decode(errors="replace"), proc.stderr.decode(errors="replace")


@pytest.mark.parametrize("name, content, where", [
    # a value of a table column, and of a column the table lacks (pyarrow infers its type: it
    # crashed the process with SIGSEGV past some 50,000 levels)
    ("deep.jsonl", '{"id": 1, "v": "a", "dt": "x"}\n{"id": 2, "v": ' + "[" * 100_000 + "]" * 100_000 + ', "dt": "x"}\n',
     "line 2"),
    ("deep2.jsonl", '{"id": 1, "v": "a", "dt": "x"}\n{"id": 2, "v": "b", "dt": "x", "zz": ' + "[" * 100_000
     + "]" * 100_000 + "}\n", "line 2"),
    ("deep.json", '[{"id": 1, "v": "a", "dt": "x"},\n{"id": 2, "v": "b", "dt": "x", "zz": ' + '{"a": ' * 5000 + "1"
     + "}" * 5000 + "}]", "row 2"),
])
def test_deeply_nested_json_input(wh: Path, tmp_path: Path, name: str, content: str, where: str) -> None:
    src = tmp_path / name
    src.write_text(content)
    before = _tree(wh)
    code, out, err = _paimon("write", TABLE, str(src), "-w", str(wh))
    assert code == 4, err
    assert err == f"error: {src}: {where}: JSON nested too deeply to be a row of a Paimon table\n"
    assert _tree(wh) == before


def test_json_lines_with_many_brackets_but_shallow_are_fine(wh: Path, tmp_path: Path) -> None:
    """The depth check parses only lines with many brackets, and only refuses real depth."""
    src = tmp_path / "wide.jsonl"
    src.write_text('{"id": 9, "v": "' + "[" * 2000 + '", "dt": "x"}\n')
    res = _cli(str(wh), "write", TABLE, str(src))
    assert res.exit_code == 0, res.output
    out = _cli(str(wh), "read", TABLE, "--where", "id = 9", "-o", "json")
    assert json.loads(out.stdout)[0]["v"] == "[" * 2000


# ---------------------------------------------------------------------------------------
# input that is not UTF-8
# ---------------------------------------------------------------------------------------


def _bad_parquet(path: Path) -> None:
    good = pa.array(["ok", "ab"])
    offsets, data = good.buffers()[1], bytearray(good.buffers()[2].to_pybytes())
    data[2] = 0xFF
    bad = pa.Array.from_buffers(pa.string(), 2, [None, offsets, pa.py_buffer(bytes(data))])
    pq.write_table(pa.table({"id": pa.array([1, 2], pa.int64()), "v": bad, "dt": ["x", "x"]}), path)


@pytest.mark.parametrize("name, content, message", [
    ("bad.csv", b"id,v,dt\n1,a,x\n2,ab\xff\xfecd,x\n",
     "row 2, column 'v': value is not valid UTF-8 at byte 3 (invalid start byte: b'ab\\xff\\xfecd')"),
    ("bad.tsv", b"id\tv\tdt\n1\ta\tx\n2\tb\tx\n3\tc\t\xc3\n",
     "row 3, column 'dt': value is not valid UTF-8 at byte 1 (unexpected end of data: b'\\xc3')"),
    ("bad.jsonl", b'{"id": 1, "v": "a", "dt": "x"}\n{"id": 2, "v": "q\xff", "dt": "x"}\n',
     "row 2, column 'v': value is not valid UTF-8 at byte 2 (invalid start byte: b'q\\xff')"),
    ("bad.json", b'[{"id": 1, "v": "a", "dt": "x"},\n {"id": 2, "v": "\xff", "dt": "x"}]',
     "line 2, byte 18 is not valid UTF-8 (invalid start byte)"),
    ("badhead.csv", b"id,v\xff,dt\n1,a,x\n", "line 1 (the header) is not valid UTF-8 (invalid start byte)"),
    ("bad.parquet", None, "row 2, column 'v': value is not valid UTF-8 at byte 1 (invalid start byte: b'\\xffb')"),
])
def test_input_that_is_not_utf8(wh: Path, tmp_path: Path, name: str, content: bytes | None, message: str) -> None:
    src = tmp_path / name
    if content is None:
        _bad_parquet(src)
    else:
        src.write_bytes(content)
    before = _tree(wh)
    line = _one_error(_cli(str(wh), "write", TABLE, str(src)))
    assert line == f"error: {src}: {message}"
    assert _tree(wh) == before


def test_stdin_that_is_not_utf8(wh: Path) -> None:
    line = _one_error(_cli(str(wh), "write", TABLE, "-", "--format", "csv", stdin=b"id,v,dt\n1,\xff,x\n"))
    assert line == "error: -: row 1, column 'v': value is not valid UTF-8 at byte 1 (invalid start byte: b'\\xff')"


# ---------------------------------------------------------------------------------------
# damaged hints: Java's SnapshotManager lists the directory instead (HintFileUtils.findLatest /
# findEarliest); in a subprocess, since the issue saw `read` abort with exit 134 here
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize("hint, content", [("LATEST", b"-5"), ("LATEST", b"garbage\xff"),
                                           ("LATEST", b"1"), ("EARLIEST", b"-5"), ("EARLIEST", b"424242")])
def test_damaged_hint_falls_back_to_listing(base: Path, wh: Path, hint: str, content: bytes) -> None:
    healthy = _paimon("read", TABLE, "-w", str(base), "-o", "csv")
    (wh / "db.db" / "t" / "snapshot" / hint).write_bytes(content)
    before = _tree(wh)
    assert _paimon("read", TABLE, "-w", str(wh), "-o", "csv") == healthy
    code, out, err = _paimon("inspect", "snapshots", TABLE, "-w", str(wh), "-o", "json")
    assert (code, err) == (0, "") and [s["snapshot_id"] for s in json.loads(out)] == [1, 2]
    assert _tree(wh) == before  # a reader does not repair the hint


def test_latest_hint_naming_a_missing_snapshot_is_not_guessed_over(base: Path, wh: Path) -> None:
    """Issue 27: ``LATEST`` = 424242 names a snapshot that is gone (Java reads it and fails);
    the newest file left is not the table's latest, so a reader says what is missing (exit 4)
    instead of reading snapshot 2, and repairs nothing."""
    latest = wh / "db.db" / "t" / "snapshot" / "LATEST"
    latest.write_bytes(b"424242")
    before = _tree(wh)
    code, out, err = _paimon("read", TABLE, "-w", str(wh), "-o", "csv")
    assert (code, out) == (4, "")
    assert err == (f"error: {latest.parent / 'snapshot-424242'}: the LATEST hint names snapshot 424242 but its file "
                   "is missing (the newest snapshot file is 2; restore the file, or make 2 the latest with "
                   "`paimon-cli repair`)\n")
    code, out, err = _paimon("inspect", "snapshots", TABLE, "-w", str(wh), "-o", "json")
    assert (code, err) == (0, "") and [s["snapshot_id"] for s in json.loads(out)] == [1, 2]  # what there is
    assert _tree(wh) == before
