"""External data paths: where a new data file goes when ``data-file.external-paths`` is set.

Java (1.1+) and pypaimon write a table's new data, changelog and file-index files under
``<root>[/<data-file.path-directory>]/<partition>/bucket-N/<file>`` (no database or table
name) and record the full path in the file's ``_EXTERNAL_PATH``. One provider serves one
(partition, bucket) writer and is asked once per new file (Java ``ExternalPathProvider``,
``FileStorePathFactory.createExternalPathProvider``):

* ``round-robin`` (and ``specific-fs``, over the roots of that scheme only): a random start,
  then the next root for every file;
* ``weight-robin`` (1.4+; ``data-file.external-paths.weights``): each file draws a root at
  random in proportion to its weight; with fewer than 2 roots or no weights, round-robin;
* ``entropy-inject`` (1.4+): the next root, starting at the second, plus three hash
  directories of the file name (murmur3_32 of its UTF-8 bytes), as Java spreads object-store
  prefixes.

Options Java would reject (unknown strategy, a root without a scheme, ``specific-fs`` without
a matching root, bad weights) are refused here, before anything is written.
"""

from __future__ import annotations

import bisect
import random
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import InvalidInput, NotYetSupported

EXTERNAL_PATHS = "data-file.external-paths"
STRATEGY = "data-file.external-paths.strategy"
SPECIFIC_FS = "data-file.external-paths.specific-fs"
WEIGHTS = "data-file.external-paths.weights"

NONE = "none"
ROUND_ROBIN = "round-robin"
SPECIFIC = "specific-fs"
WEIGHTED = "weight-robin"
ENTROPY_INJECT = "entropy-inject"
STRATEGIES = (NONE, SPECIFIC, ROUND_ROBIN, ENTROPY_INJECT, WEIGHTED)

_URI = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):(.*)$")
# schemes naming the same storage as a FileIO opened for another spelling
_SAME_STORAGE = {"local": "file", "s3a": "s3", "s3n": "s3", "gcs": "gs", "abfss": "abfs"}


def java_path(path: str) -> str:
    """``path`` as Java's ``Path(String).toString()`` prints it: ``file:///x//y/`` -> ``file:/x/y``
    (an empty authority disappears, repeated and trailing slashes go)."""
    m = _URI.match(path)
    if m is None:
        return _clean(path)
    scheme, rest = m.group(1), m.group(2)
    authority = ""
    if rest.startswith("//"):
        authority, slash, tail = rest[2:].partition("/")
        rest = slash + tail
    return f"{scheme}:" + (f"//{authority}" if authority else "") + _clean(rest)


def _clean(path: str) -> str:
    out = re.sub(r"/+", "/", path)
    return out[:-1] if len(out) > 1 and out.endswith("/") else out


def scheme_of(path: str) -> str | None:
    m = _URI.match(path)
    return m.group(1) if m else None


def _join(base: str, *parts: str) -> str:
    return "/".join([base.rstrip("/"), *(p.strip("/") for p in parts if p.strip("/"))])


@dataclass(frozen=True)
class ExternalPaths:
    """The active external roots of a table (None from :meth:`of` when external paths are off)."""

    strategy: str
    roots: tuple[str, ...]  # Java-normalised, scheme included
    weights: tuple[int, ...] | None

    @staticmethod
    def of(options: Mapping[str, str]) -> ExternalPaths | None:
        """The table's external paths as Java's ``AbstractFileStore.createExternalPaths`` reads
        them: off unless the strategy is not ``none`` and the list is non-empty."""
        raw_strategy = str(options.get(STRATEGY) or NONE).strip()
        strategy = raw_strategy.lower()
        if strategy not in STRATEGIES:
            raise InvalidInput(
                f"{STRATEGY}={raw_strategy!r} is not a strategy Paimon knows ({', '.join(STRATEGIES)})"
            )
        weights = _weights(options.get(WEIGHTS))
        value = options.get(EXTERNAL_PATHS)
        if not value or strategy == NONE:
            return None
        specific = options.get(SPECIFIC_FS)
        if strategy == SPECIFIC and not specific:
            raise InvalidInput(f"{STRATEGY}=specific-fs needs {SPECIFIC_FS} (the scheme to write to)")
        roots = []
        for entry in str(value).split(","):
            root = entry.strip()
            scheme = scheme_of(root)
            if not scheme:
                raise InvalidInput(f"{EXTERNAL_PATHS}: {root!r} has no scheme (write file:///..., s3://..., ...)")
            if strategy != SPECIFIC or scheme.lower() == str(specific).strip().lower():
                roots.append(java_path(root))
        if not roots:
            raise InvalidInput(f"{EXTERNAL_PATHS} has no root on {SPECIFIC_FS}={specific!r}")
        ext = ExternalPaths(strategy, tuple(roots), weights)
        ext.provider("")  # weight/root count mismatch fails now, not at the first file
        return ext

    def provider(self, relative_bucket_path: str) -> ExternalPathProvider:
        """A provider for one (partition, bucket) writer; ``relative_bucket_path`` is
        ``[<path-directory>/]<partition>/bucket-N``."""
        if self.strategy == ENTROPY_INJECT:
            return EntropyInjectProvider(self.roots, relative_bucket_path)
        if self.strategy == WEIGHTED and len(self.roots) >= 2 and self.weights:
            return WeightedProvider(self.roots, relative_bucket_path, self.weights)
        return RoundRobinProvider(self.roots, relative_bucket_path)



def external_paths_for(options: Mapping[str, str], file_io_scheme: str) -> ExternalPaths | None:
    """The external paths new files of a table go to (None when off), refused when Java would
    reject the options or a root is on another filesystem than the table's. Call it before
    writing anything."""
    external = ExternalPaths.of(options)
    for root in external.roots if external is not None else ():
        check_same_storage(EXTERNAL_PATHS, root, file_io_scheme)
    return external


def check_same_storage(option: str, root: str, file_io_scheme: str) -> None:
    """Refuse a root on another filesystem than the table's: a table's FileIO opens one only."""
    own = _SAME_STORAGE.get(file_io_scheme.lower(), file_io_scheme.lower())
    scheme = str(scheme_of(root)).lower()
    if _SAME_STORAGE.get(scheme, scheme) != own:
        raise NotYetSupported(
            f"{option} root {root} is on another filesystem than the table ({file_io_scheme}); "
            "writing there is not supported"
        )


def _weights(value: str | None) -> tuple[int, ...] | None:
    """Java ``externalPathWeights``: comma-separated positive integers."""
    if value is None:
        return None
    out = []
    for part in str(value).split(","):
        try:
            w = int(part.strip())
        except ValueError:
            raise InvalidInput(f"{WEIGHTS}={value!r}: {part.strip()!r} is not an integer") from None
        if w <= 0:
            raise InvalidInput(f"{WEIGHTS}={value!r}: weights must be positive, got {w}")
        out.append(w)
    return tuple(out)


class ExternalPathProvider:
    """Chooses the full path of each new file of one (partition, bucket)."""

    def __init__(self, roots: Sequence[str], relative_bucket_path: str) -> None:
        if not roots:
            raise InvalidInput(f"{EXTERNAL_PATHS}: no root to write to")
        self.roots = list(roots)
        self.relative = relative_bucket_path

    def next_path(self, file_name: str) -> str:
        raise NotImplementedError


class RoundRobinProvider(ExternalPathProvider):
    def __init__(self, roots: Sequence[str], relative_bucket_path: str) -> None:
        super().__init__(roots, relative_bucket_path)
        self.position = random.randrange(len(self.roots))

    def next_path(self, file_name: str) -> str:
        self.position = (self.position + 1) % len(self.roots)
        return _join(self.roots[self.position], self.relative, file_name)


class WeightedProvider(ExternalPathProvider):
    def __init__(self, roots: Sequence[str], relative_bucket_path: str, weights: Sequence[int]) -> None:
        super().__init__(roots, relative_bucket_path)
        if len(weights) != len(self.roots):
            raise InvalidInput(
                f"{WEIGHTS} has {len(weights)} weights for {len(self.roots)} {EXTERNAL_PATHS} roots"
            )
        self.cumulative: list[int] = []
        total = 0
        for w in weights:
            total += w
            self.cumulative.append(total)
        self.total = total

    def next_path(self, file_name: str) -> str:
        # the first root whose cumulative weight exceeds the draw (Java's higherEntry)
        i = bisect.bisect_right(self.cumulative, random.random() * self.total)
        return _join(self.roots[min(i, len(self.roots) - 1)], self.relative, file_name)


class EntropyInjectProvider(ExternalPathProvider):
    def __init__(self, roots: Sequence[str], relative_bucket_path: str) -> None:
        super().__init__(roots, relative_bucket_path)
        self.position = 0

    def next_path(self, file_name: str) -> str:
        self.position = (self.position + 1) % len(self.roots)
        return _join(self.roots[self.position], self.relative, entropy_dirs(file_name), file_name)


def entropy_dirs(file_name: str) -> str:
    """Java ``computeHash``: the low 20 bits of murmur3_32(name) as binary, cut 4/4/4/8."""
    import mmh3

    bits = format((mmh3.hash(file_name.encode("utf-8"), 0, signed=False) | 0x80000000), "032b")[-20:]
    return "/".join((bits[0:4], bits[4:8], bits[8:12], bits[12:]))


__all__ = ["ExternalPathProvider", "ExternalPaths", "check_same_storage", "entropy_dirs", "external_paths_for",
           "java_path", "scheme_of"]
