"""The commit's manifest writer rolls big writes at ``manifest.target-file-size`` without
encoding everything twice, and keeps every entry in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from paimon_cli.core.data.binary_row import EMPTY_ROW, serialize
from paimon_cli.core.data.types import DataField, RowType, parse_data_type
from paimon_cli.core.io.fileio import FileIO
from paimon_cli.core.manifest.manifest import EMPTY_STATS, DataFileMeta, FileKind, ManifestEntry, ManifestFile
from paimon_cli.core.operation import manifest_merge
from paimon_cli.core.operation.manifest_merge import ManifestFileMerger
from paimon_cli.core.schema.options import CoreOptions

PART_TYPES = [parse_data_type("STRING NOT NULL")]


def _entries(n: int) -> list[ManifestEntry]:
    return [ManifestEntry(FileKind.ADD, serialize([f"2024-05-{1 + i % 28:02d}"], PART_TYPES), i % 4, 4,
                          DataFileMeta(f"data-{i:08d}-{'x' * 24}-0.parquet", 1000 + i, 10, EMPTY_ROW, EMPTY_ROW,
                                       EMPTY_STATS, EMPTY_STATS, i, i + 9, 0, 0, (), 1_700_000_000_000 + i))
            for i in range(n)]


def _merger(tmp_path: Path, target: str) -> tuple[ManifestFileMerger, ManifestFile, list[int]]:
    fio = FileIO(str(tmp_path))
    mf = ManifestFile(fio, str(tmp_path), RowType([DataField(0, "dt", PART_TYPES[0])]))
    writes: list[int] = []
    real = mf.write

    def counting(entries: list[ManifestEntry], schema_id: int):  # type: ignore[no-untyped-def]
        writes.append(len(entries))
        return real(entries, schema_id)

    mf.write = counting  # type: ignore[method-assign]
    opts = CoreOptions({"manifest.target-file-size": target})
    return ManifestFileMerger(mf, str(tmp_path), opts, PART_TYPES, fio.delete), mf, writes


@pytest.mark.parametrize("n", [10, manifest_merge.ROLL_SAMPLE + 1, 12_000])
def test_big_writes_roll_once_and_keep_every_entry(tmp_path: Path, n: int) -> None:
    merger, mf, writes = _merger(tmp_path, "16kb")
    entries = _entries(n)
    written: list[str] = []
    metas = merger.write(entries, written, 0)
    assert written == [m.file_name for m in metas]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(written)  # nothing written twice and deleted
    assert sum(writes) == n  # each entry encoded into one file only
    read = [e for m in metas for e in mf.read(m.file_name)]
    assert read == entries
    if n > 10:
        assert len(metas) > 1
        assert max(m.file_size for m in metas) < 1.5 * (16 << 10)
        counts = [m.num_added_files for m in metas]
        assert max(counts) - min(counts) <= 1  # evenly cut


def test_a_small_write_is_one_file(tmp_path: Path) -> None:
    merger, _, writes = _merger(tmp_path, "8mb")
    written: list[str] = []
    assert len(merger.write(_entries(manifest_merge.ROLL_SAMPLE * 3), written, 0)) == 1
    assert writes == [manifest_merge.ROLL_SAMPLE * 3] and len(written) == 1
