"""An oracle for the manifest-list stats 1.1+ readers prune on, independent of our reader.

``_MIN/_MAX_BUCKET``, ``_MIN/_MAX_LEVEL`` and ``_MIN/_MAX_ROW_ID`` of every manifest-list record
of a table, read with plain fastavro, next to what Java's ``ManifestAvroWriter`` computes from
the entries of the manifest it names (also read with fastavro): min/max bucket and level over
every entry (ADD and DELETE); row ids null as soon as one entry has no ``_FIRST_ROW_ID``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

STAT_FIELDS = ("_MIN_BUCKET", "_MAX_BUCKET", "_MIN_LEVEL", "_MAX_LEVEL", "_MIN_ROW_ID", "_MAX_ROW_ID")


def read_avro(path: Path) -> list[dict[str, Any]]:
    import fastavro

    with path.open("rb") as f:
        return list(fastavro.reader(f))


def expected_stats(entries: list[dict[str, Any]]) -> dict[str, int | None]:
    """Java's computation over the raw manifest entries."""
    buckets = [e["_BUCKET"] for e in entries]
    levels = [e["_FILE"]["_LEVEL"] for e in entries]
    firsts = [e["_FILE"].get("_FIRST_ROW_ID") for e in entries]
    row_ids = None not in firsts
    return {
        "_MIN_BUCKET": min(buckets), "_MAX_BUCKET": max(buckets),
        "_MIN_LEVEL": min(levels), "_MAX_LEVEL": max(levels),
        "_MIN_ROW_ID": min(firsts) if row_ids else None,
        "_MAX_ROW_ID": max(f + e["_FILE"]["_ROW_COUNT"] - 1 for f, e in zip(firsts, entries, strict=True))
        if row_ids else None,
    }


@dataclass(frozen=True)
class ListedManifest:
    """One manifest-list record: which list (snapshot id, kind) names which manifest."""

    snapshot_id: int
    manifest_list: str
    record: dict[str, Any]
    expected: dict[str, int | None]

    @property
    def stats(self) -> dict[str, int | None]:
        return {k: self.record.get(k) for k in STAT_FIELDS}


def listed_manifests(table_path: Path, snapshot_ids: list[int] | None = None) -> list[ListedManifest]:
    """Every record of the base/delta/changelog manifest lists of the table's snapshots."""
    out = []
    snap_dir = table_path / "snapshot"
    ids = snapshot_ids or sorted(int(p.name.split("-", 1)[1]) for p in snap_dir.glob("snapshot-*"))
    for sid in ids:
        snap = json.loads((snap_dir / f"snapshot-{sid}").read_text())
        for key in ("baseManifestList", "deltaManifestList", "changelogManifestList"):
            name = snap.get(key)
            if not name:
                continue
            for rec in read_avro(table_path / "manifest" / name):
                entries = read_avro(table_path / "manifest" / rec["_FILE_NAME"])
                out.append(ListedManifest(sid, name, rec, expected_stats(entries)))
    return out
