"""pypaimon 2.1 writes ORC data files with pyarrow (< 20), whose ORC reader wraps a timestamp
outside 1677-09-21..2262-04-11: a file holding one is refused by our reads (one line naming the
file, the column and the value, exit 1), never read wrapped; values inside read exactly."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from tests.interop.pypaimon_peer import PyPaimon

from .cli_runner import CLI_ENV

IN_RANGE = [dt.datetime(2024, 3, 1, 12, 0, 0, 123456), dt.datetime(1960, 1, 1, 0, 0, 0, 500000),
            dt.datetime(1677, 9, 22, 0, 12, 44), dt.datetime(2262, 4, 10)]


@pytest.fixture(autouse=True)
def clean_cli_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in CLI_ENV:
        monkeypatch.delenv(var, raising=False)


def _table(peer: PyPaimon, wh: Path, name: str, values: list[dt.datetime]) -> None:
    peer.create_table(str(wh), "db", name, [("id", "int32"), ("ts", "timestamp[us]")],
                      options={"file.format": "orc", "bucket": "-1"})
    for i, v in enumerate(values):  # one file each
        peer.write(str(wh), "db", name, [{"id": i, "ts": v}])


def test_pypaimon_orc_timestamps(pypaimon: PyPaimon, tmp_path: Path) -> None:
    wh = tmp_path / "wh"
    _table(pypaimon, wh, "ok", IN_RANGE)
    assert list((wh / "db.db" / "ok").rglob("*.orc"))
    res = CliRunner().invoke(app, ["read", "db.ok", "-w", str(wh), "-o", "jsonl"])
    assert res.exit_code == 0, res.stdout + res.stderr
    got = sorted(res.stdout.splitlines())
    assert got == [f'{{"id":{i},"ts":"{v.isoformat(" ", "microseconds")}"}}' for i, v in enumerate(IN_RANGE)]
    assert sorted(r["ts"] for r in pypaimon.read(str(wh), "db", "ok")) == sorted(IN_RANGE)

    _table(pypaimon, wh, "far", [IN_RANGE[0], dt.datetime(1500, 6, 1, 8, 30)])
    for args in (["read", "db.far"], ["compact", "db.far", "--full"]):
        res = CliRunner().invoke(app, [*args, "-w", str(wh)])
        out = res.stdout + res.stderr
        assert res.exit_code == 1 and "Traceback" not in out, out
        lines = res.stderr.splitlines()
        assert len(lines) == 1 and ".orc: column ts holds 1500-06-01T08:30:00.000000000 (ORC timestamp)" in lines[0], out
