"""Expiring a table whose changelog files pypaimon 2.1 wrote to ``data-file.external-paths``.

pypaimon (like Java) writes ``changelog-producer = input`` changelog files next to the data
files, in the external root, and records their ``_EXTERNAL_PATH``. Expiry used to rebuild a
changelog file's path from the table's bucket directory, so it deleted a file that did not
exist and the real one stayed behind forever (a leak, never a wrong deletion). Here every
file an expired snapshot alone referenced, data and changelog, must be gone from the external
root, the retained snapshot's files must all stay, and pypaimon must read the table row for
row afterwards.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from paimon_cli.app import app
from paimon_cli.core.catalog.filesystem import FileSystemCatalog
from paimon_cli.core.io.paths import manifest_dir
from paimon_cli.core.manifest.manifest import FileKind, ManifestFile, ManifestList
from tests.interop.pypaimon_peer import PyPaimon, decode_value, encode_value

pytestmark = pytest.mark.pypaimon

DB = "peer"
COLUMNS = [["id", "int64"], ["dt", "string"], ["v", "string"]]


def _rows(commit: int) -> list[dict[str, Any]]:
    return [{"id": i, "dt": "2024-01-01", "v": f"c{commit}-{i}"} for i in range(commit, commit + 3)]


def _run(peer: PyPaimon, ops: list[dict[str, Any]]) -> list[Any]:
    results = peer.batch(ops)
    failed = [r for r in results if not r["ok"]]
    assert not failed and len(results) == len(ops), failed[0]["traceback"] if failed else "driver stopped"
    return [r["result"] for r in results]


def _cli(wh: str, *args: str) -> Any:
    return CliRunner().invoke(app, [*args, "-w", wh])


def _files_of(wh: str, name: str, snapshot_id: int) -> dict[str, set[str]]:
    """Local paths of the data files (live) and changelog files of one snapshot."""
    table = FileSystemCatalog(wh).get_table(f"{DB}.{name}")
    snap = table.snapshot_manager.snapshot(snapshot_id)
    mdir = manifest_dir(table.path)
    lists = ManifestList(table.file_io, mdir)
    manifests = ManifestFile(table.file_io, mdir)

    def paths(list_names: list[str | None]) -> set[str]:
        live: dict[str, str] = {}
        for ln in list_names:
            for meta in lists.read(ln) if ln else []:
                for e in manifests.read(meta.file_name):
                    assert e.file.external_path, f"pypaimon wrote {e.file.file_name} inside the table directory"
                    path = e.file.external_path.removeprefix("file:")
                    if e.kind == FileKind.ADD:
                        live[e.file.file_name] = path
                    else:
                        live.pop(e.file.file_name, None)
        return set(live.values())

    return {"data": paths([snap.base_manifest_list, snap.delta_manifest_list]),
            "changelog": paths([snap.changelog_manifest_list])}


def _external_files(ext: Path) -> set[str]:
    return {str(p) for p in ext.rglob("*") if p.is_file()}


def _peer_rows(pypaimon: PyPaimon, wh: str) -> list[str]:
    res = pypaimon.batch([{"op": "read", "warehouse": wh, "db": DB, "table": "t"}])[0]
    assert res["ok"], res.get("traceback")
    types = res["result"]["types"]
    return sorted(json.dumps({c: decode_value(r[c], types[c]) for c in r}, sort_keys=True)
                  for r in res["result"]["rows"])


def _expected_rows() -> list[str]:
    latest = {(r["dt"], r["id"]): r for c in (1, 2, 3, 4) for r in _rows(c)}
    return sorted(json.dumps(r, sort_keys=True) for r in latest.values())


@pytest.fixture(params=["coupled", "decoupled"])
def peer_table(request: pytest.FixtureRequest, pypaimon: PyPaimon, tmp_path: Path) -> dict[str, Any]:
    """pypaimon writes four commits of a primary-key table producing changelog files, all in
    an external root; every file there belongs to one of the four snapshots. ``decoupled``
    keeps two changelogs beyond the snapshots (changelog/changelog-<id>)."""
    wh, ext = tmp_path / "wh", tmp_path / "ext"
    options = {"bucket": "1", "changelog-producer": "input", "data-file.external-paths": f"file://{ext}",
               "data-file.external-paths.strategy": "round-robin"}
    if request.param == "decoupled":
        options |= {"changelog.num-retained.min": "2", "changelog.num-retained.max": "2"}
    ops: list[dict[str, Any]] = [{
        "op": "create_table", "warehouse": str(wh), "db": DB, "table": "t", "columns": COLUMNS,
        "primary_keys": ["dt", "id"], "partition_keys": ["dt"], "options": options,
    }]
    for commit in range(1, 5):
        ops.append({"op": "write", "warehouse": str(wh), "db": DB, "table": "t", "overwrite": False,
                    "rows": [{k: encode_value(v) for k, v in r.items()} for r in _rows(commit)]})
    _run(pypaimon, ops)
    snaps = {i: _files_of(str(wh), "t", i) for i in range(1, 5)}
    assert all(s["changelog"] for s in snaps.values()), "pypaimon wrote no changelog files"
    assert not any(Path(wh).rglob("changelog-*.parquet")), "pypaimon wrote changelog files inside the table"
    return {"wh": str(wh), "ext": ext, "snaps": snaps, "mode": request.param}


EXPIRE = ["--retain-min", "1", "--retain-max", "1", "--older-than", "0 ms"]


def test_expire_deletes_external_changelog_files(pypaimon: PyPaimon, peer_table: dict[str, Any]) -> None:
    """Coupled: expire deletes the changelog files of snapshots 1..3. Decoupled: expire moves
    the snapshots to changelog/ and keeps their files; ``expire --changelog`` then deletes the
    changelog files of changelogs 1 and 2 (two changelogs stay)."""
    wh, ext, snaps = peer_table["wh"], peer_table["ext"], peer_table["snaps"]
    decoupled = peer_table["mode"] == "decoupled"
    before = _external_files(ext)
    runs = [["expire", f"{DB}.t", *EXPIRE]] + ([["expire", f"{DB}.t", "--changelog", *EXPIRE]] if decoupled else [])
    for args in runs:
        dry = _cli(wh, *args, "--dry-run", "-o", "json")
        assert dry.exit_code == 0, dry.output
        real = _cli(wh, *args, "-o", "json")
        assert real.exit_code == 0, real.output
        if args is runs[0] and decoupled:
            assert _external_files(ext) == before  # moved to changelog/, nothing deleted yet
    gone = set().union(*(snaps[i]["changelog"] for i in ((1, 2) if decoupled else (1, 2, 3))))
    planned = {x["path"].removeprefix("file:") for x in json.loads(dry.stdout) if x["kind"] == "changelog-file"}
    assert planned == gone
    # pypaimon does not compact: snapshot 4 still lists every data file
    assert before - _external_files(ext) == gone
    assert snaps[4]["data"] | snaps[4]["changelog"] <= _external_files(ext)
    assert _peer_rows(pypaimon, wh) == _expected_rows()
