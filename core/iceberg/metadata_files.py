"""The Iceberg metadata directory of one table: ``vN.metadata.json`` versions, ``version-hint.text``,
and the names of new manifests and manifest lists.

Where it is follows ``metadata.iceberg.storage-location`` (``<table>/metadata``, or
``<warehouse>/iceberg/<db>/<table>/metadata`` for the catalog location). Making a version the
head moves the hint and then the Iceberg catalog's pointer (Java's ``IcebergMetadataCommitter``).
What goes into a version is the commit callback's (:mod:`.callback`).
"""

from __future__ import annotations

import logging
import re
import uuid
from typing import TYPE_CHECKING

from ..errors import CorruptMetadata, MissingMetadata, NotFound, PaimonError
from ..io import paths
from ..io.fileio import join
from ..schema.iceberg_options import CATALOG_LOCATION, IcebergOptions, iceberg_options
from .manifest import IcebergManifests
from .metadata import IcebergMetadata

if TYPE_CHECKING:
    from ..table.file_store_table import FileStoreTable

log = logging.getLogger(__name__)

VERSION_HINT = "version-hint.text"  # org.apache.iceberg.hadoop.Util
_VERSION = re.compile(r"^v(\d+)\.metadata\.json$")


def metadata_dir(table: FileStoreTable, opts: IcebergOptions | None = None) -> str:
    opts = opts or iceberg_options(table.schema.options)
    return paths.iceberg_metadata_dir(table.file_io.absolute(table.path), opts.storage_location == CATALOG_LOCATION)



class IcebergMetadataFiles:
    """The metadata directory of one table: versions, the hint, manifests and manifest lists."""

    def __init__(self, table: FileStoreTable, opts: IcebergOptions | None = None) -> None:
        self.table = table
        self.file_io = table.file_io
        self.opts = opts or iceberg_options(table.schema.options)
        self.dir = metadata_dir(table, self.opts)
        self.location = table.file_io.absolute(table.path)
        self._uuid = str(uuid.uuid4())
        self._manifests = 0
        self._lists = 0
        self.manifests = IcebergManifests(self.file_io, list(table.schema.logical_partition_type.fields),
                                          self.opts.avro_codec, self.opts.manifest_legacy_version)

    def metadata_path(self, version: int) -> str:
        return join(self.dir, f"v{version}.metadata.json")

    @property
    def hint_path(self) -> str:
        return join(self.dir, VERSION_HINT)

    def new_manifest_path(self) -> str:
        self._manifests += 1
        return join(self.dir, f"{self._uuid}-m{self._manifests}.avro")

    def new_list_path(self) -> str:
        self._lists += 1
        return join(self.dir, f"snap-{self._lists}-{self._uuid}.avro")

    def versions(self) -> list[int]:
        """Metadata versions present, ascending."""
        out = []
        for name in self.file_io.list_names(self.dir):
            m = _VERSION.match(name)
            if m:
                out.append(int(m.group(1)))
        return sorted(out)

    def read(self, version: int) -> IcebergMetadata | None:
        """Version ``version``, None when absent; CorruptMetadata when unreadable."""
        path = self.metadata_path(version)
        try:
            text = self.file_io.read_text(path)
        except NotFound:
            return None
        return IcebergMetadata.from_json(text, path)

    def try_read(self, version: int) -> IcebergMetadata | None:
        """As :meth:`read`, but an unreadable file counts as absent (it is rebuilt, never extended)."""
        try:
            return self.read(version)
        except (CorruptMetadata, PaimonError) as e:
            log.warning("Iceberg metadata %s is unreadable and will be rebuilt: %s", self.metadata_path(version), e)
            return None

    def rewrite(self, version: int, metadata: IcebergMetadata) -> None:
        """Replace version ``version`` in place (its refs or snapshots changed); the hint and the
        Iceberg catalog's pointer are left as they are."""
        self.file_io.write_bytes(self.metadata_path(version), metadata.to_json().encode("utf-8"))

    def hint(self) -> int | None:
        try:
            return int(self.file_io.read_text(self.hint_path).strip())
        except (NotFound, ValueError, PaimonError):
            return None

    def write_hint(self, version: int) -> None:
        """Make ``version`` the head: the hint Hadoop-catalog readers follow, then the Iceberg
        catalog's pointer (``hive-catalog``: the Hive Metastore table's ``metadata_location``)."""
        self.file_io.write_bytes(self.hint_path, str(version).encode())
        self.register(version)

    def register(self, version: int) -> None:
        """Point the Iceberg catalog (if the table has one) at ``version`` (Java calls its
        ``IcebergMetadataCommitter`` after each metadata file it writes)."""
        committer = self.table.catalog_environment.iceberg_committer
        if committer is not None:
            committer.commit_metadata(self.metadata_path(version))

    def referenced(self, metadata: IcebergMetadata) -> set[str]:
        """Every manifest list and manifest a metadata version names (lists that are gone skipped)."""
        out: set[str] = set()
        for s in metadata.snapshots:
            if s.manifest_list in out:
                continue
            out.add(s.manifest_list)
            try:
                out.update(m.manifest_path for m in self.manifests.read_list(s.manifest_list))
            except MissingMetadata:
                continue
        return out

    def delete(self, path: str) -> None:
        try:
            self.file_io.delete(path)
        except Exception as e:  # noqa: BLE001 - as Java's deleteQuietly: a leftover is harmless
            log.warning("could not delete %s: %s", path, e)
