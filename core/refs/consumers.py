"""Consumers: ``<branch root>/consumer/consumer-<id>`` = ``{"nextSnapshot" : N}``.

A consumer pins snapshots from ``nextSnapshot`` on against expiration, so expiring or
cleaning code must read them all; Java's ``$consumers`` shows (consumer_id,
next_snapshot_id) in both 0.9 and master.
"""

from __future__ import annotations

from ..errors import CorruptMetadata, InvalidInput, NotFound
from ..io.commit_lock import NO_LOCK, CommitLock
from ..io.fileio import FileIO, join
from ..io.paths import branch_path
from ..utils.json_util import dumps_jackson, loads_metadata

CONSUMER_PREFIX = "consumer-"


def parse_consumer(text: str, path: str) -> int:
    obj = loads_metadata(text, path)
    if not isinstance(obj, dict):
        raise CorruptMetadata(path, "consumer JSON must be an object")
    v = obj.get("nextSnapshot")
    if v is None:
        raise CorruptMetadata(path, "missing required field 'nextSnapshot'")
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, str) and v.strip().lstrip("-").isdigit():
            return int(v)
        raise CorruptMetadata(path, f"field 'nextSnapshot' must be an integer, got {v!r}")
    return v


class ConsumerManager:
    """Consumers of one branch (main when ``branch`` is None); files are written and deleted
    under the catalog's commit lock, as every other metadata publish."""

    def __init__(self, file_io: FileIO, table_path: str, branch: str | None = None,
                 lock: CommitLock = NO_LOCK) -> None:
        self.file_io = file_io
        self.table_path = table_path
        self.branch = branch
        self.lock = lock

    @property
    def consumer_dir(self) -> str:
        return join(branch_path(self.table_path, self.branch), "consumer")

    def consumer_path(self, consumer_id: str) -> str:
        return join(self.consumer_dir, CONSUMER_PREFIX + consumer_id)

    def consumer_ids(self) -> list[str]:
        return sorted(
            n[len(CONSUMER_PREFIX) :]
            for n in self.file_io.list_names(self.consumer_dir)
            if n.startswith(CONSUMER_PREFIX) and len(n) > len(CONSUMER_PREFIX)
        )

    def consumer(self, consumer_id: str) -> int | None:
        """Next snapshot id of the consumer, or None if it does not exist."""
        path = self.consumer_path(consumer_id)
        try:
            text = self.file_io.read_text(path)
        except NotFound:
            return None
        return parse_consumer(text, path)

    def consumers(self) -> dict[str, int]:
        """consumer id -> next snapshot id, sorted by id."""
        out: dict[str, int] = {}
        for cid in self.consumer_ids():
            nxt = self.consumer(cid)
            if nxt is not None:
                out[cid] = nxt
        return out

    def consumer_mtimes(self) -> dict[str, int | None]:
        """consumer id -> file mtime (``consumer.expiration-time`` expires by mtime)."""
        return {
            s.name[len(CONSUMER_PREFIX) :]: s.mtime_millis
            for s in self.file_io.list_status(self.consumer_dir)
            if s.name.startswith(CONSUMER_PREFIX) and len(s.name) > len(CONSUMER_PREFIX)
        }

    def reset_consumer(self, consumer_id: str, next_snapshot: int) -> None:
        """Write (overwrite) a consumer file, as Java's ``resetConsumer``."""
        if not consumer_id or "/" in consumer_id:
            raise InvalidInput(f"consumer id {consumer_id!r} is empty or contains '/'")
        data = dumps_jackson({"nextSnapshot": int(next_snapshot)}).encode("utf-8")
        path = self.consumer_path(consumer_id)
        self.lock.run_with_lock(lambda: self.file_io.write_bytes(path, data, overwrite=True))

    def delete_consumer(self, consumer_id: str) -> None:
        if self.consumer(consumer_id) is None:
            raise NotFound(f"consumer {consumer_id!r} not found in {self.table_path}")
        self.delete_quietly(consumer_id)

    def delete_quietly(self, consumer_id: str) -> None:
        """Delete the consumer file if it is there (Java's ``deleteQuietly``)."""
        path = self.consumer_path(consumer_id)
        self.lock.run_with_lock(lambda: self.file_io.delete(path))
