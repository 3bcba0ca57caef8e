"""Which external data roots a table may clean: only the ones no other table of the warehouse uses.

Java and pypaimon write a table's external data files to
``<root>[/<data-file.path-directory>]/<partition>/bucket-N/<file>``: there is no table
directory, so when two tables configure the same ``data-file.external-paths`` root their
files sit side by side and each table's used-name set calls the other's files orphans
(Java's OrphanFilesClean lists configured roots as if they were the table's own).

The rule here: a root is scanned only if every other table of the warehouse (every
database, every branch, every schema file, not just the current schema, since older data
files stay where the schema of their time put them) claims no location overlapping it:
neither its table directory nor any root it configures (``data-file.external-paths``,
``global-index.external-path``, ``blob-external-storage-path``). Two locations overlap when
they are equal or one contains the other. Anything that cannot be listed, read or
normalised refuses. Tables outside the warehouse (other warehouses, other catalogs) and
roots given only as dynamic write options cannot be seen; the README says so.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..errors import CorruptMetadata, NotFound, NotYetSupported, UnsafeRefused
from ..io.fileio import FileIO, basename, join, parent
from ..io.paths import BRANCH_PREFIX, branch_dir, escape_path_name, schema_dir
from ..schema.schema_manager import SCHEMA_FILE_NAME as _SCHEMA_FILE
from ..utils.json_util import loads_metadata
from .used_files import DirLister

if TYPE_CHECKING:
    from ..schema.table_schema import TableSchema

EXTERNAL_PATHS = "data-file.external-paths"
# options naming locations where a table writes files outside its own directory
_ROOT_OPTIONS = (EXTERNAL_PATHS, "global-index.external-path", "blob-external-storage-path")
_DB_SUFFIX = ".db"
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]+):(.*)$")  # 2+ chars: "C:" is not a scheme
# schemes that name the same storage namespace
_SCHEME_ALIASES = {"": "file", "local": "file", "s3a": "s3", "s3n": "s3", "gcs": "gs", "abfss": "abfs"}
_BUCKET_DIR = re.compile(r"bucket-(?:\d+|postpone)")
_UUID = r"[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}"


@dataclass(frozen=True)
class ExternalLayout:
    """What may be deleted inside an external root: files directly in ``bucket-N`` under the
    table's own partition directories (``key=`` level by level), named
    ``<data|changelog|index prefix><uuid>-<n>`` with any extension (``.parquet``,
    ``.parquet.index``, ...). Deeper directories (entropy-inject) are never entered."""

    partition_prefixes: tuple[str, ...]
    file_name: re.Pattern[str]

    @staticmethod
    def of(schema: TableSchema) -> ExternalLayout:
        opts = schema.core_options
        prefixes = "|".join(re.escape(p) for p in (opts.data_file_prefix, opts.changelog_file_prefix, "index-"))
        return ExternalLayout(
            tuple(escape_path_name(k) + "=" for k in schema.partition_keys),
            re.compile(rf"(?:{prefixes}){_UUID}-\d+(?:\..+)?"),
        )

    def is_partition_dir(self, depth: int, name: str) -> bool:
        return name.startswith(self.partition_prefixes[depth])

    @staticmethod
    def is_bucket_dir(name: str) -> bool:
        return _BUCKET_DIR.fullmatch(name) is not None

    def is_data_file(self, name: str) -> bool:
        return self.file_name.fullmatch(name) is not None


@dataclass(frozen=True)
class Claim:
    """A location another table writes files under."""

    location: str
    owner: str  # db.table
    source: str  # what says so, e.g. "its table directory" or "data-file.external-paths in schema-2"


def configured_roots(options: Mapping[str, str], key: str = EXTERNAL_PATHS) -> list[str]:
    """The comma-separated roots of a table option (empty entries dropped)."""
    value = options.get(key)
    return [p.strip() for p in str(value).split(",") if p.strip()] if value else []


def location_key(path: str) -> tuple[str, str] | None:
    """``(storage, absolute path)`` to compare locations, or None if it is relative.

    ``/x``, ``file:/x`` (Java's form) and ``file:///x`` are the same place; object-store
    keys keep their bucket as the first path segment. Symbolic links are not resolved.
    """
    m = _SCHEME.match(path)
    scheme, rest = (m.group(1).lower(), m.group(2)) if m else ("", path)
    scheme = _SCHEME_ALIASES.get(scheme, scheme)
    if scheme == "file":
        if rest.startswith("//"):
            authority, _, tail = rest[2:].partition("/")
            if authority not in ("", "localhost"):
                return None
            rest = "/" + tail
        if not rest.startswith("/"):
            return None
    else:
        if not rest.startswith("//"):
            return None
        rest = "/" + rest[2:]
    norm = posixpath.normpath(rest)
    if norm.startswith("//"):
        norm = "/" + norm.lstrip("/")
    return scheme, norm


def overlaps(a: tuple[str, str], b: tuple[str, str]) -> bool:
    if a[0] != b[0]:
        return False
    x, y = a[1].rstrip("/") + "/", b[1].rstrip("/") + "/"
    return x.startswith(y) or y.startswith(x)


def scan_location(file_io: FileIO, root: str) -> str:
    """The root as this FileIO lists it; refuses roots it cannot place or reach."""
    key = location_key(root)
    if key is None:
        raise UnsafeRefused(
            f"{EXTERNAL_PATHS} root {root!r} is not an absolute location; cannot tell whose files are "
            "there, refusing (nothing deleted)"
        )
    if key[0] != _SCHEME_ALIASES.get(file_io.scheme, file_io.scheme):
        raise NotYetSupported(
            f"{EXTERNAL_PATHS} root {root} is on another filesystem than the warehouse ({file_io.scheme}); "
            "cleaning it is not supported"
        )
    return key[1] if key[0] == "file" else f"{file_io.scheme}:/{key[1]}"


def warehouse_claims(file_io: FileIO, table_path: str, lister: DirLister) -> tuple[list[Claim], int]:
    """Every location the other tables of ``table_path``'s warehouse write under, and how many
    tables that is. Any listing or schema file that cannot be read refuses."""
    db_path = parent(table_path)
    if not basename(db_path).endswith(_DB_SUFFIX):
        raise UnsafeRefused(
            f"{table_path} is not laid out as <warehouse>/<db>.db/<table>; cannot find the other tables "
            "that may share its external roots, refusing"
        )
    warehouse = file_io.absolute(parent(db_path))
    own = location_key(file_io.absolute(table_path))
    claims: list[Claim] = []
    tables = 0
    for db in lister.list(warehouse):
        if not db.is_dir or not db.name.endswith(_DB_SUFFIX) or len(db.name) == len(_DB_SUFFIX):
            continue
        for t in lister.list(db.path):
            if not t.is_dir or location_key(t.path) == own:
                continue
            owner = f"{db.name[: -len(_DB_SUFFIX)]}.{t.name}"
            tables += 1
            # a directory without schema (half-created, or not a table) still claims its space
            claims.append(Claim(t.path, owner, "its table directory"))
            claims.extend(_schema_claims(file_io, t.path, owner, lister))
    return claims, tables


def _schema_claims(file_io: FileIO, path: str, owner: str, lister: DirLister) -> list[Claim]:
    dirs = [("", schema_dir(path))]
    for b in lister.list(branch_dir(path)):
        if b.is_dir and b.name.startswith(BRANCH_PREFIX):
            dirs.append((f" of branch {b.name[len(BRANCH_PREFIX):]}", join(b.path, "schema")))
    out: list[Claim] = []
    for where, sdir in dirs:
        for s in lister.list(sdir):
            if s.is_dir or not _SCHEMA_FILE.match(s.name):
                continue
            for key, root in _schema_roots(file_io, s.path):
                out.append(Claim(root, owner, f"{key} in {s.name}{where}"))
    return out


def _schema_roots(file_io: FileIO, path: str) -> list[tuple[str, str]]:
    problem = None
    try:
        obj = loads_metadata(file_io.read_text(path), path)
        options = obj.get("options") if isinstance(obj, dict) else None
        if options is not None and not isinstance(options, dict):
            problem = "'options' is not an object"
    except NotFound:
        problem = "vanished while reading"
        options = None
    except CorruptMetadata as e:
        problem = e.problem
        options = None
    if problem is not None:
        raise UnsafeRefused(
            f"{path}: {problem}; cannot tell which external roots that table uses, refusing (nothing deleted)"
        )
    opts = {str(k): str(v) for k, v in (options or {}).items() if v is not None}
    return [(key, root) for key in _ROOT_OPTIONS for root in configured_roots(opts, key)]


def check_unshared(roots: list[str], claims: list[Claim], owner: str) -> None:
    """Refuse if any root overlaps a location another table claims (or one that cannot be placed)."""
    for root in roots:
        key = location_key(root)
        for c in claims:
            other = location_key(c.location)
            if key is None or other is None:
                raise UnsafeRefused(
                    f"{c.owner} has {c.source} = {c.location!r}, which is not an absolute location; cannot "
                    f"tell whether it shares {owner}'s external root {root}, refusing (nothing deleted)"
                )
            if overlaps(key, other):
                raise UnsafeRefused(
                    f"{EXTERNAL_PATHS} root {root} of {owner} overlaps {c.location} ({c.owner}: {c.source}); "
                    f"that table's files there would look like orphans of {owner}, refusing (nothing deleted)"
                )
